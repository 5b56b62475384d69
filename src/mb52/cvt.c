/*
 * cvt.c - big-endian byte strings <-> radix 2^52 digits. Baseline x86-64
 * code; addresses depend only on lengths, never on values.
 */
#include <string.h>

#include "../ct.h"
#include "../internal.h"
#include "mb52.h"

/* be_limb: 64-bit limb w (bits 64w..64w+63) of the big-endian number in. */
static inline uint64_t be_limb(const uint8_t *in, size_t len, size_t w)
{
    const size_t lo = 8 * w; /* bytes below this limb */
    if (lo >= len) {
        return 0;
    }
    if (len - lo >= 8) {
        uint64_t v;
        memcpy(&v, in + len - lo - 8, 8);
        return __builtin_bswap64(v);
    }
    uint64_t v = 0;
    for (size_t b = 0; b < len - lo; b++) {
        v |= (uint64_t)in[len - lo - 1 - b] << (8 * b);
    }
    return v;
}

/* low_bits: a mask of the n low bits, n <= 64. */
static inline uint64_t low_bits(unsigned n)
{
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

uint64_t mbc_mb52_from_be(uint64_t *d, unsigned k, const uint8_t *in, size_t len,
                      unsigned cap_bits)
{
    for (unsigned j = 0; j < k; j++) {
        const size_t bit = (size_t)MB52_BITS * j;
        const size_t w = bit / 64;
        const unsigned s = (unsigned)(bit % 64);
        uint64_t v = be_limb(in, len, w) >> s;
        if (s > 64 - MB52_BITS) {
            v |= be_limb(in, len, w + 1) << (64 - s);
        }
        /* keep only the bits below cap_bits */
        const size_t keep = bit >= cap_bits ? 0 : cap_bits - bit;
        d[j] = v & MB52_MASK & low_bits(keep > 64 ? 64 : (unsigned)keep);
    }
    /* every bit at or above cap_bits must be zero */
    uint64_t over = 0;
    for (size_t w = cap_bits / 64; 8 * w < len; w++) {
        const size_t below = 64 * w >= cap_bits ? 0 : cap_bits - 64 * w;
        over |= be_limb(in, len, w) & ~low_bits((unsigned)below);
    }
    /* all-ones if any excess bit was set */
    return ~mbc_ct_is_zero_mask(over);
}

/* digit_limb: 64-bit limb w of the k-digit number d. */
static inline uint64_t digit_limb(const uint64_t *d, unsigned k, size_t w)
{
    const size_t bit = 64 * w;
    const size_t j = bit / MB52_BITS;
    const unsigned s = (unsigned)(bit % MB52_BITS);
    uint64_t v = 0;
    for (size_t i = 0; i < 3 && j + i < k; i++) {
        const size_t at = MB52_BITS * i; /* position of digit j + i above digit j */
        if (i == 0) {
            v |= d[j] >> s;
        } else if (at - s < 64) {
            v |= d[j + i] << (at - s);
        }
    }
    return v;
}

void mbc_mb52_to_be(uint8_t *out, size_t len, const uint64_t *d, unsigned k)
{
    for (size_t w = 0; 8 * w < len; w++) {
        const uint64_t v = digit_limb(d, k, w);
        const size_t lo = 8 * w;
        if (len - lo >= 8) {
            const uint64_t be = __builtin_bswap64(v);
            memcpy(out + len - lo - 8, &be, 8);
        } else {
            for (size_t b = 0; b < len - lo; b++) {
                out[len - lo - 1 - b] = (uint8_t)(v >> (8 * b));
            }
        }
    }
}

void mbc_mb52_from_be8(mb52_row *r, unsigned k, const uint8_t *const in[8], size_t len,
                   unsigned lane_mask)
{
    uint64_t col[MB52_MAX_DIGITS + 1];
    memset(r, 0, (size_t)k * sizeof(mb52_row));
    for (unsigned l = 0; l < 8; l++) {
        if (!((lane_mask >> l) & 1u)) {
            continue;
        }
        (void)mbc_mb52_from_be(col, k, in[l], len, k * MB52_BITS);
        for (unsigned j = 0; j < k; j++) {
            r[j][l] = col[j];
        }
    }
    mbc_memzero(col, sizeof(col));
}

void mbc_mb52_to_be8(uint8_t *const out[8], size_t len, const mb52_row *a, unsigned k,
                 unsigned lane_mask)
{
    uint64_t col[MB52_MAX_DIGITS + 1];
    for (unsigned l = 0; l < 8; l++) {
        if (!((lane_mask >> l) & 1u)) {
            continue;
        }
        for (unsigned j = 0; j < k; j++) {
            col[j] = a[j][l];
        }
        mbc_mb52_to_be(out[l], len, col, k);
    }
    mbc_memzero(col, sizeof(col));
}

void mbc_mb52_gather(mb52_row *r, unsigned k, const uint64_t *const col[8], unsigned lane_mask)
{
    for (unsigned j = 0; j < k; j++) {
        for (unsigned l = 0; l < 8; l++) {
            r[j][l] = ((lane_mask >> l) & 1u) ? col[l][j] : 0;
        }
    }
}
