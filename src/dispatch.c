/* dispatch.c - fills the implementation table once from the feature word. */
#include <pthread.h>
#include <stdlib.h>

#include "dispatch.h"

void mbc_dispatch_fill(struct mbc_dispatch *t, uint64_t features)
{
    t->rsa_name = "c";
    t->rsa_crt = rsa_crt_kern_c;
    t->rsa_pub = rsa_pub_kern_c;
    t->rsa_crt_one = rsa_crt_kern_c2;
    t->rsa_pub_one = rsa_pub_kern_c2;
    t->gcm = mbc_gcm_impl_for(features);
#if MBC_HAVE_IFMA
    /* A lone request on IFMA runs horizontally (rsa_h2.c): RSA-4096
     * private 0.95 ms, public 13.7 us, where the 8-lane kernel with 2 or 1
     * busy lanes took 2.6 ms and 73 us (OpenSSL 3.0: 3.7 ms, 54 us);
     * RSA-2048 private 151 us, public 4.6 us (OpenSSL: 239 us, 14.3 us).
     * The 2-lane portable kernel takes several ms for RSA-2048. */
    if ((features & MBC_CPU_IFMA_PATH) == MBC_CPU_IFMA_PATH) {
        t->rsa_name = "ifma";
        t->rsa_crt = rsa_crt_kern_ifma;
        t->rsa_crt_one = rsa_crt_kern_h2_ifma;
        t->rsa_pub = rsa_pub_kern_ifma;
        t->rsa_pub_one = rsa_pub_kern_h1_ifma;
    }
#else
    (void)features;
#endif
}

uint64_t mbc_cpu_parse_mask(const char *s)
{
    if (s == NULL || *s == '\0') {
        return ~0ull;
    }
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s || *end != '\0') {
        return ~0ull;
    }
    return (uint64_t)v;
}

static struct mbc_dispatch g_table = {"c",           rsa_crt_kern_c, rsa_pub_kern_c,
                                       rsa_crt_kern_c2, rsa_pub_kern_c2, &mbc_gcm_impl_c};
static uint64_t g_detected;
static uint64_t g_env_mask = ~0ull;
static uint64_t g_features;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void dispatch_init(void)
{
    g_detected = mbc_cpu_detect();
    g_env_mask = mbc_cpu_parse_mask(getenv("MBCRYPTO_CPU_MASK"));
    g_features = g_detected & g_env_mask;
    mbc_dispatch_fill(&g_table, g_features);
}

const struct mbc_dispatch *mbc_dispatch_get(void)
{
    pthread_once(&g_once, dispatch_init);
    return &g_table;
}

MBC_API uint64_t mbc_cpu_features(void)
{
    pthread_once(&g_once, dispatch_init);
    return g_features;
}

MBC_API uint64_t mbc_cpu_restrict(uint64_t allowed)
{
    pthread_once(&g_once, dispatch_init);
    g_features = g_detected & g_env_mask & allowed;
    mbc_dispatch_fill(&g_table, g_features);
    return g_features;
}

MBC_API const char *mbc_impl_name(mbc_alg alg)
{
    const struct mbc_dispatch *t = mbc_dispatch_get();
    switch (alg) {
    case MBC_ALG_RSA:
        return t->rsa_name;
    case MBC_ALG_GCM:
        return t->gcm->name;
    }
    return NULL;
}
