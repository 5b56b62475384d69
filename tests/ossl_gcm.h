/*
 * ossl_gcm.h - OpenSSL's AES-GCM as the tests drive it: the EVP cipher of a
 * key length, and the call libssl makes for a TLS 1.2 record. Shared by
 * test_mbo (the default provider is its reference) and test_engine (the
 * ENGINE's ciphers, and the default provider's next to them). No cmocka:
 * results are returned.
 */
#ifndef MBC_TESTS_OSSL_GCM_H
#define MBC_TESTS_OSSL_GCM_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

/* mbt_ossl_gcm: EVP_aes_128_gcm(), _192_ or _256_ for key_len 16, 24, 32;
 * NULL otherwise. */
const EVP_CIPHER *mbt_ossl_gcm(size_t key_len);

/*
 * mbt_ossl_gcm_tls_record: libssl's TLS 1.2 record call on rec[0..len), in
 * place, with the AES-GCM cipher of impl (an ENGINE; NULL: the providers'):
 * the cipher initialised with key and the direction enc, the fixed IV
 * (EVP_CTRL_GCM_SET_IV_FIXED: fixed_len bytes, or -1 for the whole 12),
 * the 13-byte record AAD (which must answer 16), then one EVP_Cipher.
 * Returns EVP_Cipher's result, or -1 when a step before it failed.
 */
int mbt_ossl_gcm_tls_record(ENGINE *impl, size_t key_len, const uint8_t *key, const uint8_t *fixed,
                            int fixed_len, int enc, uint8_t aad[13], uint8_t *rec, size_t len);

#endif /* MBC_TESTS_OSSL_GCM_H */
