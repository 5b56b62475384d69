/*
 * h52.c - the instances of the horizontal Montgomery multiply (h52.h): one
 * noinline copy per size (nn numbers of k digits), so that every loop over
 * numbers and registers unrolls with constants, and the conversions between
 * vertical rows and sets. AVX-512 IFMA only (built into the _ifma kernel
 * object with its flags).
 */
#include "h52.h"

#define H_AMM_INSTANCE(NN, K)                                                                      \
    _Static_assert((NN) <= H_MAX_N && H52_V(K) <= H_MAX_V &&                                       \
                       8 * H52_V(K) * (NN) <= H_MAX_DIGITS && (K) >= 3,                            \
                   "h_amm instance exceeds the operand arrays");                                   \
    static __attribute__((noinline)) void h_amm_##NN##_##K(                                        \
        uint64_t *r, const uint64_t *a, const uint64_t *b, const struct h52_mod *md)               \
    {                                                                                              \
        h_amm(r, a, b, md, NN, H52_V(K), K);                                                       \
    }
#define H_LOOKUP_INSTANCE(NN, K)                                                                   \
    static void h_lookup_##NN##_##K(uint64_t *r, const uint64_t *table, unsigned nt, __m512i idx)  \
    {                                                                                              \
        h_lookup(r, table, nt, idx, NN, H52_V(K));                                                 \
    }
/* 2 x 20, 30, 40: the CRT halves of RSA-2048, 3072, 4096 side by side */
H_AMM_INSTANCE(2, 20)
H_AMM_INSTANCE(2, 30)
H_AMM_INSTANCE(2, 40)
H_LOOKUP_INSTANCE(2, 20)
H_LOOKUP_INSTANCE(2, 30)
H_LOOKUP_INSTANCE(2, 40)
/* 1 x 40, 60, 80: the moduli of RSA-2048, 3072, 4096 */
H_AMM_INSTANCE(1, 40)
H_AMM_INSTANCE(1, 60)
H_AMM_INSTANCE(1, 80)

#define H_SIZE(NN, K, LOOKUP)                                                                      \
    {                                                                                              \
        NN, H52_V(K), K, h_amm_##NN##_##K, LOOKUP                                                  \
    }
static const struct h52_size h_sizes[] = {
    H_SIZE(2, 20, h_lookup_2_20), H_SIZE(2, 30, h_lookup_2_30), H_SIZE(2, 40, h_lookup_2_40),
    H_SIZE(1, 40, NULL),          H_SIZE(1, 60, NULL),          H_SIZE(1, 80, NULL),
};
#undef H_SIZE

const struct h52_size *mbc_h52_size(unsigned nn, unsigned k)
{
    for (size_t i = 0; i < sizeof(h_sizes) / sizeof(h_sizes[0]); i++) {
        if (h_sizes[i].nn == nn && h_sizes[i].k == k) {
            return &h_sizes[i];
        }
    }
    return NULL;
}

void mbc_h52_from_rows(uint64_t *h, const mb52_row *v, const struct h52_size *z)
{
    const unsigned sl = 8 * z->nv;
    for (unsigned n = 0; n < z->nn; n++) {
        for (unsigned j = 0; j < sl; j++) {
            h[n * sl + j] = j < z->k ? v[j][n] : 0;
        }
    }
}

void mbc_h52_to_rows(mb52_row *v, const uint64_t *h, const struct h52_size *z)
{
    const unsigned sl = 8 * z->nv;
    for (unsigned j = 0; j < z->k; j++) {
        for (unsigned l = 0; l < 8; l++) {
            v[j][l] = l < z->nn ? h[l * sl + j] : 0;
        }
    }
}

void mbc_h52_mod_init(struct h52_mod *hm, const struct mb52_mod *md, const struct h52_size *z)
{
    const unsigned sl = 8 * z->nv;
    mbc_h52_from_rows(hm->m, md->m, z);
    for (unsigned n = 0; n < z->nn; n++) {
        for (unsigned j = 0; j < sl; j++) {
            hm->mdown[n * sl + j] = j + 1 < sl ? hm->m[n * sl + j + 1] : 0;
        }
        hm->k0[n] = (*md->m0inv)[n];
        hm->m0s[n] = md->m[0][n] << 12;
        hm->m1[n] = md->m[1][n];
        hm->m1s[n] = md->m[1][n] << 12;
        hm->m2[n] = md->m[2][n];
    }
}
