/*
 * ossl_gcm.c - OpenSSL's AES-GCM as the tests drive it (see ossl_gcm.h).
 */
#include "ossl_gcm.h"

const EVP_CIPHER *mbt_ossl_gcm(size_t key_len)
{
    switch (key_len) {
    case 16:
        return EVP_aes_128_gcm();
    case 24:
        return EVP_aes_192_gcm();
    case 32:
        return EVP_aes_256_gcm();
    default:
        return NULL;
    }
}

int mbt_ossl_gcm_tls_record(ENGINE *impl, size_t key_len, const uint8_t *key, const uint8_t *fixed,
                            int fixed_len, int enc, uint8_t aad[13], uint8_t *rec, size_t len)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int r = -1;
    if (c != NULL && EVP_CipherInit_ex(c, mbt_ossl_gcm(key_len), impl, key, NULL, enc) &&
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IV_FIXED, fixed_len, (void *)fixed) &&
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) == 16) {
        r = EVP_Cipher(c, rec, rec, (unsigned)len);
    }
    EVP_CIPHER_CTX_free(c);
    return r;
}
