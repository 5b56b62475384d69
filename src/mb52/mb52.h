/*
 * mb52.h - the shared radix-2^52, 8-lane number layout.
 *
 * A number of k digits for 8 lanes is uint64_t d[k][8]: digit-major,
 * lane-minor, so one row (one digit of all 8 lanes) is one zmm register.
 * Digit j of lane l holds bits 52j..52j+51 of that lane's number. "Normalised"
 * means every digit < 2^52. Rows are 64-byte aligned: the type says so, so
 * every row the compiler places (locals, statics, struct members) is, and
 * a row allocated elsewhere must be (mbc_aligned_alloc); the IFMA backend
 * loads and stores rows with aligned instructions.
 *
 * Digit counts used: RSA CRT halves 20/30/40, RSA moduli 40/60/80, P-256 and
 * X25519 5, P-384 8. Kernel sources written against vec.h are compiled once
 * per backend they need (meson.build: _c, _c1, _c2, _ifma, _ifma4) and
 * define mbc_name_<backend> (MBC_KFN).
 */
#ifndef MBC_SRC_MB52_MB52_H
#define MBC_SRC_MB52_MB52_H

#include <stddef.h>
#include <stdint.h>

#define MB52_BITS 52
#define MB52_MASK ((1ull << 52) - 1)
/* MB52_MAX_DIGITS: the longest number any class uses (RSA-4096 modulus). */
#define MB52_MAX_DIGITS 80

/* H52_V: zmm registers per number of k digits in the horizontal layout of
 * h52.h (8 digit slots each). */
#define H52_V(k) (((k) + 7u) / 8u)

/* mb52_row: one digit of all 8 lanes, one zmm register: 64 bytes, 64-byte
 * aligned. */
typedef uint64_t mb52_row[8] __attribute__((aligned(64)));

/* mb52_digits: the number of 52-bit digits that hold nbits bits. */
static inline unsigned mb52_digits(unsigned nbits)
{
    return (nbits + MB52_BITS - 1) / MB52_BITS;
}

/*
 * mb52_mod: one odd modulus per lane with its Montgomery constants for
 * R = 2^(52 k), as rows (4 m < R for every size used). to_mont brings a value
 * into the Montgomery domain with one multiply: R^2 mod m, or R^3 mod m for
 * users whose inputs arrive through a REDC first (the RSA CRT halves).
 */
struct mb52_mod {
    unsigned k;              /* digits */
    const mb52_row *m;       /* k rows: the modulus */
    const mb52_row *m0inv;   /* 1 row: -m^-1 mod 2^52 */
    const mb52_row *r1;      /* k rows: R mod m (Montgomery one) */
    const mb52_row *to_mont; /* k rows: R^2 or R^3 mod m */
};

/*
 * mbc_mb52_from_be8: converts the 8 big-endian byte strings in[l] of len bytes
 * (lanes in lane_mask) into r[0..k) normalised. Lanes outside lane_mask get
 * zero. Bits beyond 52k must be zero (the caller checks sizes).
 */
void mbc_mb52_from_be8(mb52_row *r, unsigned k, const uint8_t *const in[8], size_t len,
                       unsigned lane_mask);

/*
 * mbc_mb52_to_be8: writes the low len bytes of each lane of a[0..k) (normalised)
 * to out[l], big-endian, for lanes in lane_mask.
 */
void mbc_mb52_to_be8(uint8_t *const out[8], size_t len, const mb52_row *a, unsigned k,
                     unsigned lane_mask);

/*
 * mbc_mb52_from_be: one lane of conversion into a plain digit array d[0..k).
 * Returns an all-ones mask if the value needed more than cap_bits bits
 * (cap_bits <= 52k), 0 otherwise; constant time in the value.
 */
uint64_t mbc_mb52_from_be(uint64_t *d, unsigned k, const uint8_t *in, size_t len,
                          unsigned cap_bits);

/* mbc_mb52_to_be: writes the low len bytes of the k-digit number d, big-endian. */
void mbc_mb52_to_be(uint8_t *out, size_t len, const uint64_t *d, unsigned k);

/* mbc_mb52_gather: r[j][lane] = col[lane][j] for j < k, for the lanes in
 * lane_mask (others get zero); col[lane] is a plain k-digit array. */
void mbc_mb52_gather(mb52_row *r, unsigned k, const uint64_t *const col[8], unsigned lane_mask);

#if MBC_TEST_HOOKS
/* The Montgomery kernels for any k (src/mb52/mont_test.c: the instances of
 * mont.c for its sizes, rolled kernels for the others), by backend, for the
 * _c/_ifma equality tests (the tests' build only): r = a * b / R mod m
 * (< 2m) for a, b < 2m; r = a^2 / R mod m, the same digits as
 * mbc_mb52_amm_test(r, a, a); and r = t / R mod m (< 2m) for t (2k rows)
 * < R m. */
void mbc_mb52_amm_test_c(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *m,
                         const mb52_row *m0inv, unsigned k);
void mbc_mb52_amm_test_ifma(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *m,
                            const mb52_row *m0inv, unsigned k);
void mbc_mb52_ams_test_c(mb52_row *r, const mb52_row *a, const mb52_row *m, const mb52_row *m0inv,
                         unsigned k);
void mbc_mb52_ams_test_ifma(mb52_row *r, const mb52_row *a, const mb52_row *m,
                            const mb52_row *m0inv, unsigned k);
void mbc_mb52_redc_test_c(mb52_row *r, const mb52_row *t, const mb52_row *m, const mb52_row *m0inv,
                          unsigned k);
void mbc_mb52_redc_test_ifma(mb52_row *r, const mb52_row *t, const mb52_row *m,
                             const mb52_row *m0inv, unsigned k);
#endif

#endif /* MBC_SRC_MB52_MB52_H */
