/* ossl_rsa.c - see ossl_rsa.h. */
#include <stdlib.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/rsa.h>

#include "ossl_rsa.h"

static const char *const part_names[MBT_RSA_NUM_PARTS] = {
    OSSL_PKEY_PARAM_RSA_N,
    OSSL_PKEY_PARAM_RSA_E,
    OSSL_PKEY_PARAM_RSA_FACTOR1,
    OSSL_PKEY_PARAM_RSA_FACTOR2,
    OSSL_PKEY_PARAM_RSA_EXPONENT1,
    OSSL_PKEY_PARAM_RSA_EXPONENT2,
    OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
};

EVP_PKEY *mbt_ossl_rsa_keygen(unsigned bits, uint64_t e)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    BIGNUM *bn = BN_new();
    EVP_PKEY *pkey = NULL;
    if (ctx == NULL || bn == NULL || BN_set_word(bn, (BN_ULONG)e) != 1 ||
        EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, (int)bits) != 1 ||
        EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx, bn) != 1 || EVP_PKEY_keygen(ctx, &pkey) != 1) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
    }
    /* set1: ctx took its own copy of the exponent */
    BN_free(bn);
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

const char *mbt_ossl_rsa_part_name(enum mbt_rsa_part part)
{
    return part < MBT_RSA_NUM_PARTS ? part_names[part] : "?";
}

/* get_part: one component of pkey into a new buffer (see get_parts). */
static uint8_t *get_part(size_t *len, const EVP_PKEY *pkey, const char *name, size_t pad_len)
{
    BIGNUM *bn = NULL;
    uint8_t *buf = NULL;
    *len = 0;
    if (EVP_PKEY_get_bn_param(pkey, name, &bn) == 1) {
        const size_t n = pad_len != 0 ? pad_len : (size_t)BN_num_bytes(bn);
        buf = malloc(n + 1); /* + 1: never malloc(0) */
        int written = -1;
        if (buf != NULL) {
            written = pad_len != 0 ? BN_bn2binpad(bn, buf, (int)n) : BN_bn2bin(bn, buf);
        }
        if (written == (int)n) {
            *len = n;
        } else {
            free(buf);
            buf = NULL;
        }
    }
    BN_clear_free(bn);
    return buf;
}

int mbt_ossl_rsa_get_parts(mbt_rsa_parts *parts, const EVP_PKEY *pkey, size_t pad_len)
{
    int rc = 0;
    for (int i = 0; i < MBT_RSA_NUM_PARTS; i++) {
        parts->c[i] = get_part(&parts->len[i], pkey, part_names[i], pad_len);
        if (parts->c[i] == NULL) {
            rc = -1;
        }
    }
    return rc;
}

void mbt_rsa_parts_free(mbt_rsa_parts *parts)
{
    for (int i = 0; i < MBT_RSA_NUM_PARTS; i++) {
        if (parts->c[i] != NULL) {
            OPENSSL_cleanse(parts->c[i], parts->len[i]);
            free(parts->c[i]);
        }
        parts->c[i] = NULL;
        parts->len[i] = 0;
    }
}

mbc_rsa_priv_components mbt_rsa_components(const mbt_rsa_parts *parts)
{
    return (mbc_rsa_priv_components){
        .n = parts->c[MBT_RSA_N],
        .n_len = parts->len[MBT_RSA_N],
        .e = parts->c[MBT_RSA_E],
        .e_len = parts->len[MBT_RSA_E],
        .p = parts->c[MBT_RSA_P],
        .p_len = parts->len[MBT_RSA_P],
        .q = parts->c[MBT_RSA_Q],
        .q_len = parts->len[MBT_RSA_Q],
        .dp = parts->c[MBT_RSA_DP],
        .dp_len = parts->len[MBT_RSA_DP],
        .dq = parts->c[MBT_RSA_DQ],
        .dq_len = parts->len[MBT_RSA_DQ],
        .qinv = parts->c[MBT_RSA_QINV],
        .qinv_len = parts->len[MBT_RSA_QINV],
    };
}

mbc_err mbt_rsa_keys_new(mbc_rsa_priv_key **priv, mbc_rsa_pub_key **pub, const mbt_rsa_parts *parts)
{
    const mbc_rsa_priv_components c = mbt_rsa_components(parts);
    *pub = NULL;
    mbc_err err = mbc_rsa_priv_key_new(priv, &c);
    if (err == MBC_OK) {
        err = mbc_rsa_pub_key_new(pub, c.n, c.n_len, c.e, c.e_len);
    }
    if (err != MBC_OK) {
        mbc_rsa_priv_key_free(*priv);
        mbc_rsa_pub_key_free(*pub);
        *priv = NULL;
        *pub = NULL;
    }
    return err;
}

EVP_PKEY_CTX *mbt_ossl_rsa_raw_ctx(EVP_PKEY *pkey, int priv)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    if (ctx == NULL || (priv ? EVP_PKEY_decrypt_init(ctx) : EVP_PKEY_encrypt_init(ctx)) != 1 ||
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) != 1) {
        EVP_PKEY_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

int mbt_ossl_rsa_raw_op(EVP_PKEY_CTX *ctx, int priv, uint8_t *out, const uint8_t *in, size_t len)
{
    size_t out_len = len;
    const int ok = priv ? EVP_PKEY_decrypt(ctx, out, &out_len, in, len)
                        : EVP_PKEY_encrypt(ctx, out, &out_len, in, len);
    return ok == 1 && out_len == len ? 0 : -1;
}

int mbt_ossl_rsa_raw(EVP_PKEY *pkey, int priv, uint8_t *out, const uint8_t *in, size_t len)
{
    EVP_PKEY_CTX *ctx = mbt_ossl_rsa_raw_ctx(pkey, priv);
    const int rc = ctx != NULL ? mbt_ossl_rsa_raw_op(ctx, priv, out, in, len) : -1;
    EVP_PKEY_CTX_free(ctx);
    return rc;
}
