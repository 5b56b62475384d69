/*
 * mont_test.c - the Montgomery kernels for any digit count, for the tests
 * alone (built only into the tests' library, never shipped): r = a b / R,
 * a^2 / R and t / R mod m by row pointers (mb52.h: mbc_mb52_amm_test_c ...),
 * compiled for the backends the tests compare (_c, _ifma). A size with an
 * instance in mont.c runs that instance, the code RSA runs; any other k
 * runs the kernels of arith.h with k a run-time value, so that the tests
 * check them at sizes no family uses.
 *
 * Those are compiled with the kernels' unroll hints off: "unroll 80" on a
 * loop whose trip count is unknown copies its body 80 times, and the nested
 * loops of the wide kernels grew the IFMA object from 0.4 to 2.8 MB that way.
 */
#define MB52_NO_UNROLL 1
#include "mont.h"

void MBC_KFN(mb52_amm_test)(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *m,
                            const mb52_row *m0inv, unsigned k)
{
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(k);
    if (ops != NULL) {
        ops->mul(r, a, b, m, v_load(*m0inv));
    } else {
        mb52_amm_any_k(r, a, b, m, v_load(*m0inv), k);
    }
}

void MBC_KFN(mb52_ams_test)(mb52_row *r, const mb52_row *a, const mb52_row *m,
                            const mb52_row *m0inv, unsigned k)
{
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(k);
    if (ops != NULL) {
        ops->sqr(r, a, m, v_load(*m0inv));
    } else {
        mb52_ams_any_k(r, a, m, v_load(*m0inv), k);
    }
}

void MBC_KFN(mb52_redc_test)(mb52_row *r, const mb52_row *t, const mb52_row *m,
                             const mb52_row *m0inv, unsigned k)
{
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(k);
    if (ops != NULL) {
        ops->redc(r, t, m, v_load(*m0inv));
    } else {
        mb52_redc_k(r, t, m, v_load(*m0inv), k);
    }
}
