/*
 * ossl_ec.h - P-256 / P-384 with OpenSSL as the reference, shared by the
 * tests and mbc_bench: keys, their scalar and point as mbcrypto's byte
 * strings, ECDSA (a given nonce computed with BIGNUM and EC_POINT, since
 * EVP takes none; a random nonce through EVP), ECDH and d G.
 *
 * No cmocka here: every function reports failure through its return value
 * and leaves OpenSSL's error queue as it is. Byte strings are mbcrypto's:
 * scalars scalar_len bytes, points 04 || X || Y, signatures r || s.
 */
#ifndef MBC_TESTS_OSSL_EC_H
#define MBC_TESTS_OSSL_EC_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "mbcrypto.h"

/* mbt_ossl_ec_group_name: OpenSSL's name of curve ("prime256v1",
 * "secp384r1"), NULL for another value. */
const char *mbt_ossl_ec_group_name(mbc_curve curve);

/* mbt_ossl_ec_keygen: a new OpenSSL key pair on curve, or NULL. */
EVP_PKEY *mbt_ossl_ec_keygen(mbc_curve curve);

/* mbt_ossl_ec_get: the scalar (to d, when not NULL) and the point (to
 * point, when not NULL) of pkey. 0, or -1. */
int mbt_ossl_ec_get(const EVP_PKEY *pkey, mbc_curve curve, uint8_t *d, uint8_t *point);

/* mbt_ossl_ec_from_point: a public key of curve from the encoded point, or
 * NULL when OpenSSL refuses the point. */
EVP_PKEY *mbt_ossl_ec_from_point(mbc_curve curve, const uint8_t *point, size_t len);

/* mbt_ossl_ec_from_d: a private key of curve (with its public point) from
 * the big-endian d of len bytes, or NULL. */
EVP_PKEY *mbt_ossl_ec_from_d(mbc_curve curve, const uint8_t *d, size_t len);

/* mbt_ossl_ec_mul_g: point = d G (d: len bytes big-endian). 0, or -1 (also
 * for d G at infinity). */
int mbt_ossl_ec_mul_g(mbc_curve curve, const uint8_t *d, size_t len, uint8_t *point);

/* mbt_ossl_ecdsa_sign_k: sig = the ECDSA signature of digest (digest_len
 * bytes, truncated as FIPS 186-5 says) with the scalar d and nonce k
 * (scalar_len bytes each), computed with BIGNUM and EC_POINT. 0, or -1
 * (also when k is 0 or >= n, or r or s comes out 0). */
int mbt_ossl_ecdsa_sign_k(mbc_curve curve, const uint8_t *d, const uint8_t *k,
                          const uint8_t *digest, size_t digest_len, uint8_t *sig);

/* mbt_ossl_ecdsa_sign: OpenSSL's own signature (EVP_PKEY_sign, random
 * nonce) of digest, as r || s. 0, or -1. */
int mbt_ossl_ecdsa_sign(EVP_PKEY *pkey, mbc_curve curve, const uint8_t *digest, size_t digest_len,
                        uint8_t *sig);

/* mbt_ossl_ecdsa_verify: 1 if sig (r || s) is valid for digest under pkey
 * (EVP_PKEY_verify), 0 if not, -1 on an error. */
int mbt_ossl_ecdsa_verify(EVP_PKEY *pkey, mbc_curve curve, const uint8_t *sig,
                          const uint8_t *digest, size_t digest_len);

/* mbt_ossl_ecdh: secret (scalar_len bytes) = x(d Q) of priv and peer
 * (EVP_PKEY_derive). 0, or -1. */
int mbt_ossl_ecdh(EVP_PKEY *priv, EVP_PKEY *peer, uint8_t *secret, size_t secret_len);

/* mbt_ecdsa_der_to_raw / mbt_ecdsa_raw_to_der: a DER ECDSA-Sig-Value
 * SEQUENCE { INTEGER r, INTEGER s } <-> r || s of 2 len bytes, with
 * OpenSSL's d2i_ECDSA_SIG / i2d_ECDSA_SIG (not strict: for OpenSSL's own
 * output). der_to_raw returns 0, or -1 (also when r or s does not fit len
 * bytes); raw_to_der returns the DER length (out: at least 2 len + 9
 * bytes), or 0. */
int mbt_ecdsa_der_to_raw(const uint8_t *der, size_t der_len, size_t len, uint8_t *raw);
size_t mbt_ecdsa_raw_to_der(const uint8_t *raw, size_t len, uint8_t *out);

#endif /* MBC_TESTS_OSSL_EC_H */
