/*
 * ec_exch.c - ECDH on P-256 and P-384 ("ECDH" key exchange on our "EC"
 * keys): the shared secret x(d Q) of our private key and the peer's
 * public key, through mbo_ecdh (the thread's lane manager: batched inside
 * an ASYNC job). As OpenSSL's plain ECDH, a shorter output buffer gets the
 * secret's first bytes. No KDF (X9.63 KDF settings are refused); the
 * cofactor mode is accepted and changes nothing (both curves have
 * cofactor 1). Keys of other curves (generated through us, held by
 * another provider: ec_kmgmt.c) derive in that provider.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "prov.h"

struct ecdh {
    struct mbp_ctx *pc;
    const struct mbp_ec_key *key, *peer; /* not owned: the EVP_PKEY_CTX
                                          * holds them */
    int cofactor_mode;                   /* as set; -1: the key's default */
};

static void *ecdh_newctx(void *provctx)
{
    struct ecdh *e = OPENSSL_zalloc(sizeof(*e));
    if (e != NULL) {
        e->pc = provctx;
        e->cofactor_mode = -1;
    }
    return e;
}

static void ecdh_freectx(void *ctx)
{
    OPENSSL_free(ctx);
}

static void *ecdh_dupctx(void *ctx)
{
    return OPENSSL_memdup(ctx, sizeof(struct ecdh));
}

static int ecdh_set_ctx_params(void *ctx, const OSSL_PARAM params[]);

static int ecdh_init(void *ctx, void *provkey, const OSSL_PARAM params[])
{
    struct ecdh *e = ctx;
    const struct mbp_ec_key *k = provkey;
    if (k == NULL || (k->priv == NULL && k->other == NULL)) {
        mbp_err(e->pc, MBP_R_BAD_KEY, "no private key");
        return 0;
    }
    e->key = k;
    e->peer = NULL;
    e->cofactor_mode = -1;
    return ecdh_set_ctx_params(e, params);
}

static int ecdh_set_peer(void *ctx, void *provkey)
{
    struct ecdh *e = ctx;
    const struct mbp_ec_key *k = provkey;
    if (k == NULL || e->key == NULL ||
        (k->other == NULL &&
         (k->pub == NULL || (e->key->other == NULL && k->curve != e->key->curve)))) {
        mbp_err(e->pc, MBP_R_BAD_KEY, "peer without a public key of the same curve");
        return 0;
    }
    e->peer = k;
    return 1;
}

/* other_derive: the secret when a key is another provider's (its curve,
 * or its format, is not ours), by that provider, with both keys as its. */
static int other_derive(struct ecdh *e, unsigned char *secret, size_t *secretlen, size_t outlen)
{
    EVP_PKEY *key = mbp_ec_other(e->key), *peer = mbp_ec_other(e->peer);
    EVP_PKEY_CTX *c = key != NULL && peer != NULL
                          ? EVP_PKEY_CTX_new_from_pkey(e->pc->libctx, key, MBP_NOT_OURS)
                          : NULL;
    *secretlen = outlen;
    const int ok = c != NULL && EVP_PKEY_derive_init(c) == 1 &&
                   EVP_PKEY_derive_set_peer_ex(c, peer, 0) == 1 &&
                   EVP_PKEY_derive(c, secret, secretlen) == 1;
    EVP_PKEY_CTX_free(c);
    EVP_PKEY_free(key);
    EVP_PKEY_free(peer);
    if (!ok) {
        mbp_err(e->pc, MBP_R_BAD_KEY, "the other provider's ECDH failed");
    }
    return ok;
}

static int ecdh_derive(void *ctx, unsigned char *secret, size_t *secretlen, size_t outlen)
{
    struct ecdh *e = ctx;
    if (e->key == NULL || e->peer == NULL) {
        mbp_err(e->pc, MBP_R_INIT, "derive");
        return 0;
    }
    if (e->key->other != NULL || e->peer->other != NULL) {
        return other_derive(e, secret, secretlen, outlen);
    }
    const mbc_curve c = e->key->curve;
    const size_t slen = mbc_ec_scalar_len(c);
    if (secret == NULL) {
        *secretlen = slen;
        return 1;
    }
    uint8_t s[MBP_EC_SCALAR_MAX];
    const mbc_err err = mbo_ecdh(e->key->priv, s, e->peer->point, mbc_ec_point_len(c));
    if (err != MBC_OK) {
        mbp_err(e->pc, MBP_R_MBCRYPTO, "%s", mbc_err_str(err));
        return 0;
    }
    const size_t n = outlen < slen ? outlen : slen;
    memcpy(secret, s, n);
    OPENSSL_cleanse(s, sizeof(s));
    *secretlen = n;
    return 1;
}

static int ecdh_set_ctx_params(void *ctx, const OSSL_PARAM params[])
{
    struct ecdh *e = ctx;
    const OSSL_PARAM *p;
    if (params == NULL) {
        return 1;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_EXCHANGE_PARAM_EC_ECDH_COFACTOR_MODE)) != NULL) {
        int mode;
        if (!OSSL_PARAM_get_int(p, &mode) || mode < -1 || mode > 1) {
            mbp_err(e->pc, MBP_R_BAD_PARAM, "cofactor mode");
            return 0;
        }
        e->cofactor_mode = mode;
    }
    const char *kdf = NULL;
    if ((p = OSSL_PARAM_locate_const(params, OSSL_EXCHANGE_PARAM_KDF_TYPE)) != NULL &&
        (!OSSL_PARAM_get_utf8_string_ptr(p, &kdf) || kdf[0] != '\0')) {
        mbp_err(e->pc, MBP_R_BAD_PARAM, "no KDF with mbcrypto's ECDH");
        return 0;
    }
    return 1;
}

static int ecdh_get_ctx_params(void *ctx, OSSL_PARAM params[])
{
    const struct ecdh *e = ctx;
    OSSL_PARAM *p;
    if ((p = OSSL_PARAM_locate(params, OSSL_EXCHANGE_PARAM_EC_ECDH_COFACTOR_MODE)) != NULL &&
        !OSSL_PARAM_set_int(p, e->cofactor_mode < 0 ? 0 : e->cofactor_mode)) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_EXCHANGE_PARAM_KDF_TYPE)) != NULL &&
        !OSSL_PARAM_set_utf8_string(p, "")) {
        return 0;
    }
    return 1;
}

static const OSSL_PARAM ctx_params[] = {
    OSSL_PARAM_int(OSSL_EXCHANGE_PARAM_EC_ECDH_COFACTOR_MODE, NULL),
    OSSL_PARAM_utf8_string(OSSL_EXCHANGE_PARAM_KDF_TYPE, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *ecdh_ctx_params(void *ctx, void *provctx)
{
    (void)ctx;
    (void)provctx;
    return ctx_params;
}

const OSSL_DISPATCH mbp_ecdh_keyexch[] = {
    {OSSL_FUNC_KEYEXCH_NEWCTX, (void (*)(void))ecdh_newctx},
    {OSSL_FUNC_KEYEXCH_FREECTX, (void (*)(void))ecdh_freectx},
    {OSSL_FUNC_KEYEXCH_DUPCTX, (void (*)(void))ecdh_dupctx},
    {OSSL_FUNC_KEYEXCH_INIT, (void (*)(void))ecdh_init},
    {OSSL_FUNC_KEYEXCH_SET_PEER, (void (*)(void))ecdh_set_peer},
    {OSSL_FUNC_KEYEXCH_DERIVE, (void (*)(void))ecdh_derive},
    {OSSL_FUNC_KEYEXCH_SET_CTX_PARAMS, (void (*)(void))ecdh_set_ctx_params},
    {OSSL_FUNC_KEYEXCH_SETTABLE_CTX_PARAMS, (void (*)(void))ecdh_ctx_params},
    {OSSL_FUNC_KEYEXCH_GET_CTX_PARAMS, (void (*)(void))ecdh_get_ctx_params},
    {OSSL_FUNC_KEYEXCH_GETTABLE_CTX_PARAMS, (void (*)(void))ecdh_ctx_params},
    {0, NULL},
};
