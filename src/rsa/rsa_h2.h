/*
 * rsa_h2.h - the horizontal exponentiations of a lone RSA request (rsa_h2.c;
 * AVX-512 IFMA builds only): the two CRT halves of a private request side by
 * side ("x2"), and the public exponentiation mod n ("x1").
 */
#ifndef MBC_SRC_RSA_RSA_H2_H
#define MBC_SRC_RSA_RSA_H2_H

#include "rsa_kern.h"

/* RSA_H2_SCRATCH_ROWS: scratch of mbc_rsa_h2_exp_ifma at k digits, in mb52 rows
 * (a table of 2^RSA_WIN pairs, the accumulator and a window's entry). */
#define RSA_H2_SCRATCH_ROWS(k) (((1u << RSA_WIN) + 2) * 2 * H52_V(k))

/* RSA_H1_SCRATCH_ROWS: scratch of mbc_rsa_h1_pub_ifma at k digits, in mb52 rows. */
#define RSA_H1_SCRATCH_ROWS(k) (3 * H52_V(k))

/* mbc_rsa_h2_fits / mbc_rsa_h1_fits: 1 if mbc_rsa_h2_exp_ifma (k = 20, 30, 40: the CRT
 * halves of RSA-2048, 3072, 4096) / mbc_rsa_h1_pub_ifma (k = 40, 60, 80) handle
 * k digits. */
int mbc_rsa_h2_fits(unsigned k);
int mbc_rsa_h1_fits(unsigned k);

/*
 * mbc_rsa_h2_exp_ifma: r = x^d R^(1-d) mod m (Montgomery form, < 2m) in lanes 0
 * and 1 of the vertical rows, each lane with its own modulus: the same
 * digits as the vertical fixed-window exponentiation of rsa_kern.c (RSA_WIN
 * bits, exactly d_bits exponent bits, full masked table scans).
 * Pre: mbc_rsa_h2_fits(md->k); lanes 0 and 1 of md hold two odd moduli with
 * 4m < R = 2^(52 k) and their constants, x (k rows) < 2m in the Montgomery
 * domain, d (k rows) below 2^d_bits, 1 <= d_bits <= 52 k. Lanes 2..7 of r
 * get zero. scratch: RSA_H2_SCRATCH_ROWS(k) rows, 64-byte aligned.
 * Constant time: the operations depend on k and d_bits only.
 */
void mbc_rsa_h2_exp_ifma(mb52_row *r, const mb52_row *x, const struct mb52_mod *md, const mb52_row *d,
                     unsigned d_bits, mb52_row *scratch);

/*
 * mbc_rsa_h1_pub_ifma: out = in^e mod n in lane 0, fully reduced (< n): the same
 * digits as rsa_kern.c's pub_exp (left-to-right binary over e_bits bits of
 * lane 0's e, public). Pre: mbc_rsa_h1_fits(n->k); lane 0 of n holds an odd
 * modulus with 4n < R and its constants; in (k rows) < n; e (at least
 * mb52_digits(e_bits) rows) has bit e_bits - 1 set or clear, 1 <= e_bits.
 * Lanes 1..7 of out get zero. scratch: RSA_H1_SCRATCH_ROWS(k) rows.
 * Time depends on k and e only.
 */
void mbc_rsa_h1_pub_ifma(mb52_row *out, const mb52_row *in, const struct mb52_mod *n, const mb52_row *e,
                     unsigned e_bits, mb52_row *scratch);

#endif /* MBC_SRC_RSA_RSA_H2_H */
