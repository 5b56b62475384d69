/*
 * mb52.h - the shared radix-2^52, 8-lane number layout.
 *
 * A number of k digits for 8 lanes is uint64_t d[k][8]: digit-major,
 * lane-minor, so one row (one digit of all 8 lanes) is one zmm register.
 * Digit j of lane l holds bits 52j..52j+51 of that lane's number. "Normalised"
 * means every digit < 2^52. Rows are 64-byte aligned.
 *
 * Digit counts used: RSA CRT halves 20/30/40, RSA moduli 40/60/80, P-256 and
 * X25519 5, P-384 8. Kernel sources written against vec.h are compiled twice
 * (MBC_VEC_IFMA set or not) and export name_ifma / name_c (MBC_KFN).
 */
#ifndef MBC_SRC_MB52_MB52_H
#define MBC_SRC_MB52_MB52_H

#include <stddef.h>
#include <stdint.h>

#define MB52_BITS 52
#define MB52_MASK ((1ull << 52) - 1)
/* MB52_MAX_DIGITS: the longest number any class uses (RSA-4096 modulus). */
#define MB52_MAX_DIGITS 80

/* mb52_row: one digit of all 8 lanes. */
typedef uint64_t mb52_row[8];

/* mb52_digits: the number of 52-bit digits that hold nbits bits. */
static inline unsigned mb52_digits(unsigned nbits)
{
    return (nbits + MB52_BITS - 1) / MB52_BITS;
}

/*
 * mb52_from_be8: converts the 8 big-endian byte strings in[l] of len bytes
 * (lanes in lane_mask) into r[0..k) normalised. Lanes outside lane_mask get
 * zero. Bits beyond 52k must be zero (the caller checks sizes).
 */
void mb52_from_be8(mb52_row *r, unsigned k, const uint8_t *const in[8], size_t len,
                   unsigned lane_mask);

/*
 * mb52_to_be8: writes the low len bytes of each lane of a[0..k) (normalised)
 * to out[l], big-endian, for lanes in lane_mask.
 */
void mb52_to_be8(uint8_t *const out[8], size_t len, const mb52_row *a, unsigned k,
                 unsigned lane_mask);

/*
 * mb52_from_be: one lane of conversion into a plain digit array d[0..k).
 * Returns an all-ones mask if the value needed more than cap_bits bits
 * (cap_bits <= 52k), 0 otherwise; constant time in the value.
 */
uint64_t mb52_from_be(uint64_t *d, unsigned k, const uint8_t *in, size_t len,
                      unsigned cap_bits);

/* mb52_to_be: writes the low len bytes of the k-digit number d, big-endian. */
void mb52_to_be(uint8_t *out, size_t len, const uint64_t *d, unsigned k);

/* mb52_gather: r[j][lane] = col[lane][j] for j < k, for the lanes in
 * lane_mask (others get zero); col[lane] is a plain k-digit array. */
void mb52_gather(mb52_row *r, unsigned k, const uint64_t *const col[8], unsigned lane_mask);

#endif /* MBC_SRC_MB52_MB52_H */
