/*
 * ec_adx.h - the scalar 64-bit tier of the curves (MBC_TIER_SCALAR): one
 * request at a time in radix 2^64 with MULX, ADCX and ADOX (BMI2 + ADX).
 * The kernels take the argument structs of ec_kern.h and compute the
 * request in slot 0 (lane 0 of the mb52 rows); the other slots are
 * ignored. They compute the same results as the 52-bit kernels (the same
 * affine coordinates, signatures and verdicts).
 *
 * ec_adx.c holds the curve-independent part (conversions, the kernels'
 * entry points) and instantiates ec_adx_curve.h once per curve (N = 4
 * limbs for P-256, 6 for P-384) on the field leaves of fe64.h (generic
 * Montgomery arithmetic over N limbs), fe_p256_x64.h (P-256's p,
 * whose Montgomery digit is 1) and fe_p384_x64.h (MULX/ADX multiply on 6
 * limbs, P-384's p and n); inversions by divsteps (ec_adx_inv.h). The
 * constants and the comb tables are generated at build time by tools/gen_ec_adx.py from the curve
 * definitions of tools/gen_ec_consts.py, as ec_adx_tab.h (static
 * objects that only ec_adx.c includes: the compiler sees every constant).
 */
#ifndef MBC_SRC_EC_EC_ADX_H
#define MBC_SRC_EC_EC_ADX_H

#include <stdint.h>

#include "ec_kern.h"

#define EC64_MAX_N 6                                  /* limbs of P-384 */
#define EC64_COMB_WIN 7                               /* bits of a signed window of the comb */
#define EC64_COMB_ENTRIES (1u << (EC64_COMB_WIN - 1)) /* 1..64 times each window's base */
#define EC64_SG_LIMBS                                                                              \
    EC_SG_LIMBS /* 62-bit limbs of the inversion's numbers for P-384 (ec_adx_inv.h) */

/*
 * ec64_curve: one curve for the 64-bit kernels: p and n (N limbs,
 * little-endian), their Montgomery constants for R = 2^(64 N) (m0 =
 * -m^-1 mod 2^64, one = R mod m, rr = R^2 mod m, r3 = R^3 mod m), m in
 * sg_limbs signed 62-bit limbs (s62) with minv62 = m^-1 mod 2^62 and the
 * sg_batches of 62 divsteps its inversion needs (ec_adx_inv.h), and b, G
 * in Montgomery form mod p. comb: nwin_comb windows of
 * EC64_COMB_ENTRIES affine points of 2 N limbs (x, then y; Montgomery
 * form, fully reduced): entry j of window i is (j + 1) 2^(7 i) G.
 */
struct ec64_curve {
    unsigned n_limbs;
    unsigned nwin_comb;
    unsigned sg_limbs, sg_batches;
    uint64_t p[EC64_MAX_N], p_m0, p_one[EC64_MAX_N], p_rr[EC64_MAX_N], p_r3[EC64_MAX_N];
    uint64_t n[EC64_MAX_N], n_m0, n_one[EC64_MAX_N], n_rr[EC64_MAX_N], n_r3[EC64_MAX_N];
    int64_t p_s62[EC64_SG_LIMBS], n_s62[EC64_SG_LIMBS];
    uint64_t p_minv62, n_minv62;
    uint64_t b[EC64_MAX_N], gx[EC64_MAX_N], gy[EC64_MAX_N];
    const uint64_t *comb;
};

/* The kernels (slot 0 of each args struct). */
void mbc_ec_base_kern_adx(struct ec_base_args *a);
void mbc_ec_sign_kern_adx(struct ec_sign_args *a);
void mbc_ec_verify_kern_adx(struct ec_verify_args *a);
void mbc_ec_ecdh_kern_adx(struct ec_ecdh_args *a);

#if MBC_TEST_HOOKS
/* Requests the scalar kernels ran (relaxed counter, for the dispatch-hit
 * tests). */
extern _Atomic unsigned long mbc_ec_kern_hits_adx;

/* mbc_ec_adx_inv: r = a^-1 mod p of the curve (MBC_CURVE_*), mod n when
 * mod_n, for a < m (plain, 4 or 6 limbs; 0 -> 0): the kernels' inversion
 * (ec_adx_inv.h), for test_ec_field. */
void mbc_ec_adx_inv(unsigned curve, int mod_n, uint64_t *r, const uint64_t *a);

/* mbc_ec_adx_mul: r = a b / R of the curve's kernels for op 0 (mod p), a^2
 * / R for op 1 (mod p, b unused) and a b / R for op 2 (mod n), a, b < m
 * (4 or 6 limbs, R = 2^(64 limbs)), for test_ec_field. */
void mbc_ec_adx_mul(unsigned curve, int op, uint64_t *r, const uint64_t *a, const uint64_t *b);
#endif

#endif /* MBC_SRC_EC_EC_ADX_H */
