/*
 * mont.c - the Montgomery kernels of the RSA sizes, one unrolled instance
 * per digit count (see mont.h), compiled once per backend (_ifma, _c, _c2).
 */
#include "mont.h"

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
    MONT_ROW(20), MONT_ROW(30), MONT_ROW(40), MONT_ROW(60), MONT_ROW(80),
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
    /* a times 1 by a multiply: ops->redc would need a copied into 2k rows */
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(md->k);
    mb52_set_small(one, 1, md->k);
    ops->mul(r, a, one, md->m, v_load(*md->m0inv));
    mb52_cond_sub(r, md->m, md->k);
}
