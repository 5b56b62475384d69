/*
 * mont.h - the Montgomery kernels of src/mb52/mont.c, one unrolled instance
 * per digit count that RSA uses, for kernel objects (the functions take the
 * backend's vec, so this header is included only by code built against
 * vec.h, and its symbols carry the backend's suffix through MBC_KFN).
 *
 * Sizes: 20/30/40 (RSA CRT halves), 40/60/80 (RSA moduli). The curves have
 * field leaves of their own (ec_kern.c, x25519/fe.h). The kernels' loops
 * unroll only when k is a constant; a variable k would grow them into
 * megabytes of code, so the library has no kernel for any other size (the
 * tests' build runs rolled ones there: mont_test.c).
 */
#ifndef MBC_SRC_MB52_MONT_H
#define MBC_SRC_MB52_MONT_H

#include "arith.h"

/* r = a b / R mod m (< 2m; a, b < 2m); see mb52_amm_k. */
typedef void mb52_amm_fn(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *m,
                         vec m0inv);
/* r = a^2 / R mod m, the digits of mb52_amm_fn(r, a, a); see mb52_ams_k. */
typedef void mb52_ams_fn(mb52_row *r, const mb52_row *a, const mb52_row *m, vec m0inv);
/* r = t / R mod m (< 2m) for t (2k rows) < R m; see mb52_redc_k. */
typedef void mb52_redc_fn(mb52_row *r, const mb52_row *t, const mb52_row *m, vec m0inv);

/* mb52_mont_ops: the kernels of one digit count. */
struct mb52_mont_ops {
    unsigned k;
    mb52_amm_fn *mul;
    mb52_ams_fn *sqr;
    mb52_redc_fn *redc;
};

/* MBC_KFN(mb52_mont_for): the instance for k digits, NULL when k has none. */
const struct mb52_mont_ops *MBC_KFN(mb52_mont_for)(unsigned k);

/* MBC_KFN(mb52_from_mont): r = a / R mod m, fully reduced (< m), for a < 2m:
 * a multiply by 1 (one: k rows of scratch), then one subtraction. md->k must
 * be a size of mb52_mont_for. */
void MBC_KFN(mb52_from_mont)(mb52_row *r, const mb52_row *a, const struct mb52_mod *md,
                             mb52_row *one);

#endif /* MBC_SRC_MB52_MONT_H */
