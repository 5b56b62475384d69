/* gcm_ref.c - see gcm_ref.h. */
#include <string.h>

#include "gcm_ref.h"

void mbt_gf128_mul(uint8_t r[16], const uint8_t a[16], const uint8_t b[16])
{
    uint8_t z[16] = {0}, v[16];
    memcpy(v, b, 16);
    for (int i = 0; i < 128; i++) {
        if ((a[i / 8] >> (7 - i % 8)) & 1) {
            for (int j = 0; j < 16; j++) {
                z[j] ^= v[j];
            }
        }
        const int lsb = v[15] & 1;
        for (int j = 15; j > 0; j--) {
            v[j] = (uint8_t)((v[j] >> 1) | (v[j - 1] << 7));
        }
        v[0] >>= 1;
        if (lsb) {
            v[0] ^= 0xE1;
        }
    }
    memcpy(r, z, 16);
}

void mbt_ghash(uint8_t y[16], const uint8_t h[16], const uint8_t *p, size_t len)
{
    for (size_t off = 0; off < len; off += 16) {
        for (size_t j = 0; j < 16 && off + j < len; j++) {
            y[j] ^= p[off + j];
        }
        mbt_gf128_mul(y, y, h);
    }
}

/* gf_inv: a^(2^128 - 2). */
static void gf_inv(uint8_t r[16], const uint8_t a[16])
{
    uint8_t acc[16] = {0x80}, sq[16];
    memcpy(sq, a, 16);
    for (int i = 1; i < 128; i++) {
        mbt_gf128_mul(sq, sq, sq); /* sq = a^(2^i) */
        mbt_gf128_mul(acc, acc, sq);
    }
    memcpy(r, acc, 16);
}

void mbt_gcm_iv_for_j0(uint8_t iv[16], const uint8_t j0[16], const uint8_t h[16])
{
    /* J0 = (IV h ^ L) h for a one-block IV, L = 0^64 || [128]_64 */
    uint8_t hinv[16], t[16];
    gf_inv(hinv, h);
    mbt_gf128_mul(t, j0, hinv);
    t[15] ^= 128;
    mbt_gf128_mul(iv, t, hinv);
}
