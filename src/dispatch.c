/* dispatch.c - fills the implementation table once from the feature word. */
#include <pthread.h>
#include <stdlib.h>

#include "dispatch.h"

void mbc_dispatch_fill(struct mbc_dispatch *t, uint64_t features)
{
    t->rsa = mbc_rsa_impl_for(features);
    t->gcm = mbc_gcm_impl_for(features);
    t->ec = mbc_ec_impl_for(features);
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

/* Portable until the first use fills it. */
static struct mbc_dispatch g_table = {&mbc_rsa_impl_c, &mbc_gcm_impl_c, &mbc_ec_impl_c};
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

/* The families of mbc_impl_name, each with the name of its selected
 * implementation (the first member of every implementation struct). */
static const char *rsa_name(const struct mbc_dispatch *t)
{
    return t->rsa->name;
}

static const char *gcm_name(const struct mbc_dispatch *t)
{
    return t->gcm->name;
}

static const char *ec_name(const struct mbc_dispatch *t)
{
    return t->ec->name;
}

static const char *(*const family_name[])(const struct mbc_dispatch *t) = {
    [MBC_ALG_RSA] = rsa_name,
    [MBC_ALG_GCM] = gcm_name,
    [MBC_ALG_EC] = ec_name,
};

MBC_API const char *mbc_impl_name(mbc_alg alg)
{
    const struct mbc_dispatch *t = mbc_dispatch_get();
    if ((unsigned)alg >= sizeof(family_name) / sizeof(family_name[0]) || family_name[alg] == NULL) {
        return NULL;
    }
    return family_name[alg](t);
}
