/*
 * rsa_h2.h - the horizontal two-modulus exponentiation of a lone RSA-2048
 * private request (rsa_h2.c; AVX-512 IFMA builds only).
 */
#ifndef MBC_SRC_RSA_RSA_H2_H
#define MBC_SRC_RSA_RSA_H2_H

#include "rsa_kern.h"

/* RSA_H2_K: the only digit count rsa_h2 handles (a 1024-bit CRT half). */
#define RSA_H2_K 20

/* rsa_h2_scratch_rows: scratch of rsa_h2_exp_ifma, in mb52 rows. */
#define RSA_H2_SCRATCH_ROWS (((1u << RSA_WIN) + 2) * 6)

/*
 * rsa_h2_exp_ifma: r = x^d R^(1-d) mod m (Montgomery form, < 2m) in lanes 0
 * and 1 of the vertical rows, each lane with its own modulus: the same
 * digits as the vertical fixed-window exponentiation of rsa_kern.c (RSA_WIN
 * bits, exactly d_bits exponent bits, full masked table scans).
 * Pre: md->k == RSA_H2_K; lanes 0 and 1 of md hold two odd moduli with
 * 4m < R = 2^1040 and their constants, x (k rows) < 2m in the Montgomery
 * domain, d (k rows) below 2^d_bits, 1 <= d_bits <= 52 k. Lanes 2..7 of r
 * get zero. scratch: RSA_H2_SCRATCH_ROWS rows, 64-byte aligned.
 * Constant time: the operations depend on d_bits only.
 */
void rsa_h2_exp_ifma(mb52_row *r, const mb52_row *x, const struct rsa_mod *md, const mb52_row *d,
                     unsigned d_bits, mb52_row *scratch);

#endif /* MBC_SRC_RSA_RSA_H2_H */
