/*
 * gcm_ref.h - GCM's arithmetic for the tests, bit by bit (slow, obviously
 * right): GF(2^128) in GCM's convention on 16-byte strings, GHASH, and the
 * 16-byte IV that gives a chosen pre-counter block J0. No cmocka: shared by
 * test_gcm.c and the fuzz targets (tests/fuzz).
 */
#ifndef MBC_TESTS_GCM_REF_H
#define MBC_TESTS_GCM_REF_H

#include <stddef.h>
#include <stdint.h>

/* mbt_gf128_mul: r = a b in GCM's GF(2^128) (bit-reflected, SP 800-38D
 * 6.3) on 16-byte strings; r may alias a or b. */
void mbt_gf128_mul(uint8_t r[16], const uint8_t a[16], const uint8_t b[16]);

/* mbt_ghash: y = GHASH_h(y; p), p zero-padded to whole blocks. */
void mbt_ghash(uint8_t y[16], const uint8_t h[16], const uint8_t *p, size_t len);

/* mbt_gcm_iv_for_j0: the 16-byte IV whose J0 = GHASH_h(IV || 0^64 || [128]_64)
 * is j0, for the hash key h = AES_K(0^128), h != 0: IV = (j0 h^-1 ^ L) h^-1. */
void mbt_gcm_iv_for_j0(uint8_t iv[16], const uint8_t j0[16], const uint8_t h[16]);

#endif /* MBC_TESTS_GCM_REF_H */
