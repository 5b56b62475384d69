/*
 * ossl_x25519.h - X25519 with OpenSSL (EVP_PKEY X25519) as the reference,
 * shared by the tests and mbc_bench. No cmocka: failures come back as return
 * values, OpenSSL's error queue left as it is.
 */
#ifndef MBC_TESTS_OSSL_X25519_H
#define MBC_TESTS_OSSL_X25519_H

#include <stdint.h>

/*
 * mbt_ossl_x25519: out = X25519(priv, pub) by EVP_PKEY_derive. Returns 0;
 * 1 when OpenSSL refuses the result (an all-zero shared secret, a low-order
 * pub: out zeroed); -1 when a call fails otherwise.
 */
int mbt_ossl_x25519(uint8_t out[32], const uint8_t priv[32], const uint8_t pub[32]);

/* mbt_ossl_x25519_public: out = the public key of priv (X25519(priv, 9)).
 * 0, or -1 on failure. */
int mbt_ossl_x25519_public(uint8_t out[32], const uint8_t priv[32]);

#endif /* MBC_TESTS_OSSL_X25519_H */
