/*
 * mont.c - the Montgomery kernels of every family, one unrolled instance per
 * digit count (see mont.h), compiled once per backend (_ifma, _c, _c2), and
 * the row-pointer forms for any k that the tests compare across backends
 * (mb52.h: mbc_mb52_amm_c ...).
 */
#include "mont.h"
#include "var.h"

#define MONT_INSTANCE(K)                                                                           \
    static void amm_##K(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *m,      \
                        vec m0inv)                                                                 \
    {                                                                                              \
        mb52_amm_any_k(r, a, b, m, m0inv, K);                                                      \
    }                                                                                              \
    static void ams_##K(mb52_row *r, const mb52_row *a, const mb52_row *m, vec m0inv)              \
    {                                                                                              \
        mb52_ams_any_k(r, a, m, m0inv, K);                                                         \
    }                                                                                              \
    static void redc_##K(mb52_row *r, const mb52_row *t, const mb52_row *m, vec m0inv)             \
    {                                                                                              \
        mb52_redc_k(r, t, m, m0inv, K);                                                            \
    }
MONT_INSTANCE(5)
MONT_INSTANCE(8)
MONT_INSTANCE(20)
MONT_INSTANCE(30)
MONT_INSTANCE(40)
MONT_INSTANCE(60)
MONT_INSTANCE(80)
#undef MONT_INSTANCE

#define MONT_ROW(K)                                                                                \
    {                                                                                              \
        K, amm_##K, ams_##K, redc_##K                                                              \
    }
static const struct mb52_mont_ops mont_table[] = {
    MONT_ROW(5), MONT_ROW(8), MONT_ROW(20), MONT_ROW(30), MONT_ROW(40), MONT_ROW(60), MONT_ROW(80),
};
#undef MONT_ROW

const struct mb52_mont_ops *MBC_KFN(mb52_mont_for)(unsigned k)
{
    for (size_t i = 0; i < sizeof(mont_table) / sizeof(mont_table[0]); i++) {
        if (mont_table[i].k == k) {
            return &mont_table[i];
        }
    }
    return NULL;
}

void MBC_KFN(mb52_from_mont)(mb52_row *r, const mb52_row *a, const struct mb52_mod *md,
                             mb52_row *one)
{
    /* the unrolled multiply by 1 beats the (rolled) mb52_redc_k here */
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(md->k);
    mb52_set_small(one, 1, md->k);
    if (ops != NULL) {
        ops->mul(r, a, one, md->m, v_load(*md->m0inv));
    } else {
        MBC_KFN(mb52_amm_var)(r, a, one, md->m, md->m0inv, md->k);
    }
    mb52_cond_sub(r, md->m, md->k);
}

void MBC_KFN(mb52_amm)(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *m,
                       const mb52_row *m0inv, unsigned k)
{
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(k);
    if (ops != NULL) {
        ops->mul(r, a, b, m, v_load(*m0inv));
    } else {
        MBC_KFN(mb52_amm_var)(r, a, b, m, m0inv, k);
    }
}

void MBC_KFN(mb52_ams)(mb52_row *r, const mb52_row *a, const mb52_row *m, const mb52_row *m0inv,
                       unsigned k)
{
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(k);
    if (ops != NULL) {
        ops->sqr(r, a, m, v_load(*m0inv));
    } else {
        MBC_KFN(mb52_ams_var)(r, a, m, m0inv, k);
    }
}

void MBC_KFN(mb52_redc)(mb52_row *r, const mb52_row *t, const mb52_row *m, const mb52_row *m0inv,
                        unsigned k)
{
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(k);
    if (ops != NULL) {
        ops->redc(r, t, m, v_load(*m0inv));
    } else {
        MBC_KFN(mb52_redc_var)(r, t, m, m0inv, k);
    }
}
