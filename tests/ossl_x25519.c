/* ossl_x25519.c - see ossl_x25519.h. */
#include <string.h>

#include <openssl/evp.h>

#include "ossl_x25519.h"

int mbt_ossl_x25519(uint8_t out[32], const uint8_t priv[32], const uint8_t pub[32])
{
    EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv, 32);
    EVP_PKEY *p = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, pub, 32);
    EVP_PKEY_CTX *ctx = k != NULL ? EVP_PKEY_CTX_new(k, NULL) : NULL;
    int rc = -1;
    size_t len = 32;
    memset(out, 0, 32);
    if (ctx != NULL && p != NULL && EVP_PKEY_derive_init(ctx) > 0 &&
        EVP_PKEY_derive_set_peer(ctx, p) > 0) {
        rc = EVP_PKEY_derive(ctx, out, &len) > 0 && len == 32 ? 0 : 1;
        if (rc != 0) {
            memset(out, 0, 32);
        }
    }
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(p);
    EVP_PKEY_free(k);
    return rc;
}

int mbt_ossl_x25519_public(uint8_t out[32], const uint8_t priv[32])
{
    EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv, 32);
    size_t len = 32;
    const int ok = k != NULL && EVP_PKEY_get_raw_public_key(k, out, &len) > 0 && len == 32;
    EVP_PKEY_free(k);
    return ok ? 0 : -1;
}
