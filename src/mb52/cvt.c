/*
 * cvt.c - big-endian byte strings <-> radix 2^52 digits. Baseline x86-64
 * code; addresses depend only on lengths, never on values.
 */
#include <string.h>

#include "../internal.h"
#include "mb52.h"

uint64_t mb52_from_be(uint64_t *d, unsigned k, const uint8_t *in, size_t len,
                      unsigned cap_bits)
{
    uint64_t over = 0;
    memset(d, 0, (size_t)k * sizeof(uint64_t));
    for (size_t i = 0; i < len; i++) {
        uint64_t byte = in[len - 1 - i];
        size_t bit = 8 * i;
        if (bit >= cap_bits) {
            over |= byte;
            continue;
        }
        if (bit + 8 > cap_bits) {
            over |= byte >> (cap_bits - bit);
            byte &= (1u << (cap_bits - bit)) - 1;
        }
        size_t j = bit / MB52_BITS;
        unsigned s = (unsigned)(bit % MB52_BITS);
        d[j] |= (byte << s) & MB52_MASK;
        if (s > MB52_BITS - 8) {
            d[j + 1] |= byte >> (MB52_BITS - s);
        }
    }
    /* all-ones if any excess bit was set */
    return 0 - ((over | (0 - over)) >> 63);
}

void mb52_to_be(uint8_t *out, size_t len, const uint64_t *d, unsigned k)
{
    for (size_t i = 0; i < len; i++) {
        size_t bit = 8 * i;
        size_t j = bit / MB52_BITS;
        unsigned s = (unsigned)(bit % MB52_BITS);
        uint64_t v = 0;
        if (j < k) {
            v = d[j] >> s;
            if (s > MB52_BITS - 8 && j + 1 < k) {
                v |= d[j + 1] << (MB52_BITS - s);
            }
        }
        out[len - 1 - i] = (uint8_t)v;
    }
}

void mb52_from_be8(mb52_row *r, unsigned k, const uint8_t *const in[8], size_t len,
                   unsigned lane_mask)
{
    uint64_t col[MB52_MAX_DIGITS + 1];
    memset(r, 0, (size_t)k * sizeof(mb52_row));
    for (unsigned l = 0; l < 8; l++) {
        if (!((lane_mask >> l) & 1u)) {
            continue;
        }
        (void)mb52_from_be(col, k, in[l], len, k * MB52_BITS);
        for (unsigned j = 0; j < k; j++) {
            r[j][l] = col[j];
        }
    }
    mbc_memzero(col, sizeof(col));
}

void mb52_to_be8(uint8_t *const out[8], size_t len, const mb52_row *a, unsigned k,
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
        mb52_to_be(out[l], len, col, k);
    }
    mbc_memzero(col, sizeof(col));
}

void mb52_gather(mb52_row *r, unsigned k, const uint64_t *const col[8], unsigned lane_mask)
{
    for (unsigned j = 0; j < k; j++) {
        for (unsigned l = 0; l < 8; l++) {
            r[j][l] = ((lane_mask >> l) & 1u) ? col[l][j] : 0;
        }
    }
}
