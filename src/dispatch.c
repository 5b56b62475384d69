/* dispatch.c - fills the implementation table once from the feature word. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "impl.h"

void mbc_dispatch_fill(struct mbc_dispatch *t, uint64_t features)
{
    t->rsa = mbc_rsa_impl_for(features);
    t->gcm = mbc_gcm_impl_for(features);
    t->ec = mbc_ec_impl_for(features);
    t->x25519 = mbc_x25519_impl_for(features);
    t->mlkem = mbc_mlkem_impl_for(features);
}

uint64_t mbc_cpu_parse_mask(const char *s, int *malformed)
{
    *malformed = 0;
    if (s == NULL || *s == '\0') {
        return ~0ull;
    }
    const int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const char *p = hex ? s + 2 : s;
    const uint64_t base = hex ? 16 : 10;
    uint64_t v = 0;
    /* A decimal number has no leading zero, so that 010 is not silently
     * decimal 10 where strtoull (and a C reader) see octal 8. */
    int ok = *p != '\0' && (hex || p[0] != '0' || p[1] == '\0');
    for (; ok && *p != '\0'; p++) {
        const char c = *p;
        uint64_t d = 16;
        if (c >= '0' && c <= '9') {
            d = (uint64_t)(c - '0');
        } else if (hex && c >= 'a' && c <= 'f') {
            d = (uint64_t)(c - 'a' + 10);
        } else if (hex && c >= 'A' && c <= 'F') {
            d = (uint64_t)(c - 'A' + 10);
        }
        ok = d < base && v <= (UINT64_MAX - d) / base;
        v = v * base + d;
    }
    if (!ok) {
        *malformed = 1;
        return 0;
    }
    return v;
}

/* Portable until the first use fills it. */
static struct mbc_dispatch g_table = {&mbc_rsa_impl_c, &mbc_gcm_impl_c, &mbc_ec_impl_c,
                                      &mbc_x25519_impl_c, &mbc_mlkem_impl_c};
static uint64_t g_detected;
static uint64_t g_env_mask = ~0ull;
static uint64_t g_features;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void dispatch_init(void)
{
    g_detected = mbc_cpu_detect();
    const char *env = getenv("MBCRYPTO_CPU_MASK");
    int malformed;
    g_env_mask = mbc_cpu_parse_mask(env, &malformed);
    if (malformed) {
        fprintf(stderr,
                "mbcrypto: MBCRYPTO_CPU_MASK=\"%s\" is not a hex (0x...) or decimal number; "
                "using portable code only\n",
                env);
    }
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

/* family_base: the head of alg's selected implementation (every
 * implementation struct starts with a struct mbc_impl_base), NULL for an
 * unknown alg. */
static const struct mbc_impl_base *family_base(const struct mbc_dispatch *t, mbc_alg alg)
{
    switch (alg) {
    case MBC_ALG_RSA:
        return &t->rsa->base;
    case MBC_ALG_GCM:
        return &t->gcm->base;
    case MBC_ALG_EC:
        return &t->ec->base;
    case MBC_ALG_X25519:
        return &t->x25519->base;
    case MBC_ALG_MLKEM:
        return &t->mlkem->base;
    }
    return NULL;
}

MBC_API const mbc_impl_info *mbc_impl_get_info(mbc_alg alg)
{
    const struct mbc_impl_base *b = family_base(mbc_dispatch_get(), alg);
    return b != NULL ? &b->info : NULL;
}

int mbc_op_sizes_have(const struct mbc_op_size *rows, unsigned op, unsigned bits)
{
    for (const struct mbc_op_size *r = rows; r != NULL && r->op != 0; r++) {
        if (r->op == op && (r->bits == 0 || r->bits == bits)) {
            return 1;
        }
    }
    return 0;
}

MBC_API int mbc_impl_lone(mbc_alg alg, unsigned op, unsigned bits)
{
    const struct mbc_dispatch *t = mbc_dispatch_get();
    const struct mbc_op_size *rows = alg == MBC_ALG_RSA      ? t->rsa->lone
                                     : alg == MBC_ALG_EC     ? t->ec->lone
                                     : alg == MBC_ALG_X25519 ? t->x25519->lone
                                                             : NULL;
    return mbc_op_sizes_have(rows, op, bits);
}

MBC_API const char *mbc_impl_name(mbc_alg alg)
{
    const mbc_impl_info *info = mbc_impl_get_info(alg);
    return info != NULL ? info->name : NULL;
}

const void *mbc_impl_pick(const struct mbc_impl_table *t, uint64_t features)
{
    for (size_t i = 0; i + 1 < t->n; i++) {
        const struct mbc_impl_base *b = t->rows[i];
        if ((features & b->needs) == b->needs) {
            return t->rows[i];
        }
    }
    return t->rows[t->n - 1];
}

const struct mbc_impl_table *mbc_impl_table_of(mbc_alg alg)
{
    switch (alg) {
    case MBC_ALG_RSA:
        return &mbc_rsa_impl_table;
    case MBC_ALG_GCM:
        return &mbc_gcm_impl_table;
    case MBC_ALG_EC:
        return &mbc_ec_impl_table;
    case MBC_ALG_X25519:
        return &mbc_x25519_impl_table;
    case MBC_ALG_MLKEM:
        return &mbc_mlkem_impl_table;
    }
    return NULL;
}
