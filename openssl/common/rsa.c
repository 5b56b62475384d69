/*
 * rsa.c - mbcrypto RSA key objects from OpenSSL BIGNUMs, and the raw RSA
 * operations through mbo_run.
 */
#include <openssl/crypto.h>

#include "mbo_local.h"

/* A component as big-endian bytes in a buffer of its own length (at most
 * 4096 bits); secret ones are wiped by the caller. */
struct bytes {
    uint8_t b[512];
    size_t len;
};

static int to_bytes(struct bytes *out, const BIGNUM *bn)
{
    if (bn == NULL) {
        out->len = 0;
        return 0;
    }
    const int n = BN_num_bytes(bn);
    if (n <= 0 || (size_t)n > sizeof(out->b)) {
        out->len = 0;
        return 0;
    }
    out->len = (size_t)n;
    return BN_bn2binpad(bn, out->b, n) == n;
}

mbc_err mbo_rsa_pub_new(mbc_rsa_pub_key **key, const BIGNUM *n, const BIGNUM *e)
{
    struct bytes bn, be;
    *key = NULL;
    if (n == NULL || e == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    if (!to_bytes(&bn, n) || !to_bytes(&be, e)) {
        return MBC_ERR_KEY_SIZE;
    }
    return mbc_rsa_pub_key_new(key, bn.b, bn.len, be.b, be.len);
}

mbc_err mbo_rsa_priv_new(mbc_rsa_priv_key **key, const BIGNUM *n, const BIGNUM *e, const BIGNUM *p,
                         const BIGNUM *q, const BIGNUM *dp, const BIGNUM *dq, const BIGNUM *qinv)
{
    *key = NULL;
    if (n == NULL || e == NULL || p == NULL || q == NULL || dp == NULL || dq == NULL ||
        qinv == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    /* v[0], v[1] public; v[2..6] secret. */
    struct bytes v[7];
    const BIGNUM *src[7] = {n, e, p, q, dp, dq, qinv};
    mbc_err err = MBC_OK;
    for (unsigned i = 0; i < 7; i++) {
        if (!to_bytes(&v[i], src[i])) {
            err = MBC_ERR_KEY_SIZE;
        }
    }
    if (err == MBC_OK) {
        const mbc_rsa_priv_components c = {
            v[0].b,   v[0].len, v[1].b,   v[1].len, v[2].b,   v[2].len, v[3].b,
            v[3].len, v[4].b,   v[4].len, v[5].b,   v[5].len, v[6].b,   v[6].len,
        };
        err = mbc_rsa_priv_key_new(key, &c);
    }
    OPENSSL_cleanse(v, sizeof(v));
    return err;
}

/* rsa_op: out = in^(d or e) through the thread's manager. */
static mbc_err rsa_op(mbc_job_op op, const void *key, unsigned bits, uint8_t *out,
                      const uint8_t *in)
{
    mbc_job job = {
        .op = op, .key = key, .in = in, .in_len = bits / 8, .out = out, .out_len = bits / 8};
    return mbo_run(&job);
}

mbc_err mbo_rsa_private(const mbc_rsa_priv_key *key, uint8_t *out, const uint8_t *in)
{
    mbo_count(MBO_CTR_RSA_SIGN, 1);
    return rsa_op(MBC_OP_RSA_PRIVATE, key, mbc_rsa_priv_key_bits(key), out, in);
}

mbc_err mbo_rsa_public(const mbc_rsa_pub_key *key, uint8_t *out, const uint8_t *in)
{
    mbo_count(MBO_CTR_RSA_VERIFY, 1);
    return rsa_op(MBC_OP_RSA_PUBLIC, key, mbc_rsa_pub_key_bits(key), out, in);
}
