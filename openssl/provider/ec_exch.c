/*
 * ec_exch.c - ECDH on P-256 and P-384 ("ECDH" key exchange on our "EC"
 * keys): the shared secret x(d Q) of our private key and the peer's
 * public key, through mbo_ecdh (the thread's lane manager: batched inside
 * an ASYNC job). As OpenSSL's plain ECDH, a shorter output buffer gets the
 * secret's first bytes. The cofactor mode is accepted and changes nothing
 * (both curves have cofactor 1). Keys of other curves (generated through
 * us, held by another provider: ec_kmgmt.c) derive in that provider.
 *
 * With the X9.63 KDF set (kdf-type "X963KDF", kdf-digest, kdf-outlen,
 * kdf-ukm: what CMS and S/MIME ask for an EC recipient), the output is the
 * KDF of the whole shared secret, the ukm as its shared info, by the
 * X963KDF of our child library context (the default provider's): the
 * same bytes as the default provider's ECDH with those settings.
 */
#include <string.h>
#include <strings.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "prov.h"

struct ecdh {
    struct mbp_ctx *pc;
    const struct mbp_ec_key *key, *peer; /* not owned: the EVP_PKEY_CTX
                                          * holds them */
    int cofactor_mode;                   /* as set; -1: the key's default */
    int kdf;                             /* 1: X9.63 KDF on the secret */
    EVP_MD *kdf_md;                      /* the KDF's digest, NULL: none set */
    char *kdf_props;                     /* its properties, NULL: none */
    size_t kdf_outlen;                   /* the KDF's output length */
    uint8_t *kdf_ukm;                    /* the KDF's shared info, NULL: none */
    size_t kdf_ukm_len;
    EVP_PKEY_CTX *sync; /* handed-off requests: the default provider's
                         * exchange of our keys (mbp_sync_op), until the next
                         * init or peer */
};

/* kdf_reset: no KDF, and nothing of one kept. */
static void kdf_reset(struct ecdh *e)
{
    EVP_MD_free(e->kdf_md);
    OPENSSL_free(e->kdf_props);
    OPENSSL_free(e->kdf_ukm);
    e->kdf = 0;
    e->kdf_md = NULL;
    e->kdf_props = NULL;
    e->kdf_outlen = 0;
    e->kdf_ukm = NULL;
    e->kdf_ukm_len = 0;
}

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
    if (ctx != NULL) {
        kdf_reset(ctx);
        mbp_sync_reset(&((struct ecdh *)ctx)->sync);
        OPENSSL_free(ctx);
    }
}

static void *ecdh_dupctx(void *ctx)
{
    const struct ecdh *src = ctx;
    struct ecdh *e = OPENSSL_memdup(src, sizeof(*src));
    if (e == NULL) {
        return NULL;
    }
    e->kdf_md = NULL;
    e->kdf_props = NULL;
    e->kdf_ukm = NULL;
    e->sync = NULL;
    if ((src->kdf_md != NULL && !EVP_MD_up_ref(src->kdf_md)) ||
        (src->kdf_props != NULL && (e->kdf_props = OPENSSL_strdup(src->kdf_props)) == NULL) ||
        (src->kdf_ukm != NULL &&
         (e->kdf_ukm = OPENSSL_memdup(src->kdf_ukm, src->kdf_ukm_len)) == NULL)) {
        ecdh_freectx(e);
        return NULL;
    }
    e->kdf_md = src->kdf_md;
    return e;
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
    mbp_sync_reset(&e->sync);
    e->cofactor_mode = -1;
    kdf_reset(e);
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
    mbp_sync_reset(&e->sync);
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

/* plain_derive: the shared secret itself (a shorter buffer gets its first
 * bytes; secret NULL: its length). */
static int plain_derive(struct ecdh *e, unsigned char *secret, size_t *secretlen, size_t outlen)
{
    if (e->key->other != NULL || e->peer->other != NULL) {
        return other_derive(e, secret, secretlen, outlen);
    }
    const mbc_curve c = e->key->curve;
    const size_t slen = mbc_ec_scalar_len(c);
    if (secret == NULL) {
        *secretlen = slen;
        return 1;
    }
    EVP_PKEY_CTX *h = mbp_derived_before(&e->key->derived) &&
                              mbo_hand_off(MBC_ALG_EC, MBC_OP_ECDH, 8 * (unsigned)slen)
                          ? mbp_sync_op(e->pc, &e->sync, mbp_ec_sync(e->key), MBP_SYNC_DERIVE,
                                        mbp_ec_sync(e->peer))
                          : NULL;
    if (h != NULL) {
        *secretlen = outlen;
        return EVP_PKEY_derive(h, secret, secretlen) == 1;
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

/* x963_kdf: out (outlen bytes) = the X9.63 KDF of z with e's digest and
 * shared info, by the child library context's X963KDF. */
static int x963_kdf(const struct ecdh *e, unsigned char *out, size_t outlen, uint8_t *z,
                    size_t zlen)
{
    EVP_KDF *kdf = EVP_KDF_fetch(e->pc->libctx, OSSL_KDF_NAME_X963KDF, MBP_NOT_OURS);
    EVP_KDF_CTX *kc = kdf != NULL ? EVP_KDF_CTX_new(kdf) : NULL;
    OSSL_PARAM p[5];
    size_t n = 0;
    p[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
                                              (char *)EVP_MD_get0_name(e->kdf_md), 0);
    if (e->kdf_props != NULL) {
        p[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_PROPERTIES, e->kdf_props, 0);
    }
    p[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, z, zlen);
    if (e->kdf_ukm != NULL) {
        p[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, e->kdf_ukm, e->kdf_ukm_len);
    }
    p[n] = OSSL_PARAM_construct_end();
    const int ok = kc != NULL && EVP_KDF_derive(kc, out, outlen, p) == 1;
    EVP_KDF_CTX_free(kc);
    EVP_KDF_free(kdf);
    if (!ok) {
        mbp_err(e->pc, MBP_R_BAD_PARAM, "X9.63 KDF");
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
    if (!e->kdf) {
        return plain_derive(e, secret, secretlen, outlen);
    }
    if (secret == NULL) {
        *secretlen = e->kdf_outlen;
        return 1;
    }
    if (e->kdf_md == NULL || outlen < e->kdf_outlen) {
        mbp_err(e->pc, e->kdf_md == NULL ? MBP_R_BAD_DIGEST : MBP_R_BAD_LENGTH, "X9.63 KDF: %s",
                e->kdf_md == NULL ? "no digest" : "output buffer too small");
        return 0;
    }
    uint8_t z[128]; /* x(d Q) on any curve OpenSSL has (sect571: 72 bytes) */
    size_t zlen = 0;
    int ok = plain_derive(e, NULL, &zlen, 0) && zlen <= sizeof(z) &&
             plain_derive(e, z, &zlen, zlen) && x963_kdf(e, secret, e->kdf_outlen, z, zlen);
    OPENSSL_cleanse(z, sizeof(z));
    if (ok) {
        *secretlen = e->kdf_outlen;
    }
    return ok;
}

/* set_kdf_params: the KDF settings of params. */
static int set_kdf_params(struct ecdh *e, const OSSL_PARAM params[])
{
    const OSSL_PARAM *p;
    const char *s = NULL;
    if ((p = OSSL_PARAM_locate_const(params, OSSL_EXCHANGE_PARAM_KDF_TYPE)) != NULL) {
        if (!OSSL_PARAM_get_utf8_string_ptr(p, &s) ||
            (s[0] != '\0' && strcasecmp(s, OSSL_KDF_NAME_X963KDF) != 0)) {
            mbp_err(e->pc, MBP_R_BAD_PARAM, "KDF type (none or %s)", OSSL_KDF_NAME_X963KDF);
            return 0;
        }
        e->kdf = s[0] != '\0';
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_EXCHANGE_PARAM_KDF_DIGEST)) != NULL) {
        const OSSL_PARAM *pp =
            OSSL_PARAM_locate_const(params, OSSL_EXCHANGE_PARAM_KDF_DIGEST_PROPS);
        const char *props = NULL;
        char *copy = NULL;
        if (!OSSL_PARAM_get_utf8_string_ptr(p, &s) ||
            (pp != NULL && !OSSL_PARAM_get_utf8_string_ptr(pp, &props)) ||
            (props != NULL && (copy = OPENSSL_strdup(props)) == NULL) ||
            !mbp_fetch_md(e->pc, &e->kdf_md, s, props, NULL)) {
            OPENSSL_free(copy);
            return 0;
        }
        OPENSSL_free(e->kdf_props);
        e->kdf_props = copy;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_EXCHANGE_PARAM_KDF_OUTLEN)) != NULL &&
        !OSSL_PARAM_get_size_t(p, &e->kdf_outlen)) {
        mbp_err(e->pc, MBP_R_BAD_PARAM, "KDF output length");
        return 0;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_EXCHANGE_PARAM_KDF_UKM)) != NULL) {
        void *ukm = NULL;
        size_t len = 0;
        if (!OSSL_PARAM_get_octet_string(p, &ukm, 0, &len)) {
            mbp_err(e->pc, MBP_R_BAD_PARAM, "KDF ukm");
            return 0;
        }
        OPENSSL_free(e->kdf_ukm);
        e->kdf_ukm = ukm;
        e->kdf_ukm_len = len;
    }
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
    return set_kdf_params(e, params);
}

static int ecdh_get_ctx_params(void *ctx, OSSL_PARAM params[])
{
    const struct ecdh *e = ctx;
    OSSL_PARAM *p;
    if ((p = OSSL_PARAM_locate(params, OSSL_EXCHANGE_PARAM_EC_ECDH_COFACTOR_MODE)) != NULL &&
        !OSSL_PARAM_set_int(p, e->cofactor_mode < 0 ? 0 : e->cofactor_mode)) {
        return 0;
    }
    if (!mbp_set_str(params, OSSL_EXCHANGE_PARAM_KDF_TYPE, e->kdf ? OSSL_KDF_NAME_X963KDF : "") ||
        !mbp_set_str(params, OSSL_EXCHANGE_PARAM_KDF_DIGEST,
                     e->kdf_md != NULL ? EVP_MD_get0_name(e->kdf_md) : "")) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_EXCHANGE_PARAM_KDF_OUTLEN)) != NULL &&
        !OSSL_PARAM_set_size_t(p, e->kdf_outlen)) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_EXCHANGE_PARAM_KDF_UKM)) != NULL &&
        !OSSL_PARAM_set_octet_ptr(p, e->kdf_ukm, e->kdf_ukm_len)) {
        return 0;
    }
    return 1;
}

static const OSSL_PARAM settable[] = {
    OSSL_PARAM_int(OSSL_EXCHANGE_PARAM_EC_ECDH_COFACTOR_MODE, NULL),
    OSSL_PARAM_utf8_string(OSSL_EXCHANGE_PARAM_KDF_TYPE, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_EXCHANGE_PARAM_KDF_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_EXCHANGE_PARAM_KDF_DIGEST_PROPS, NULL, 0),
    OSSL_PARAM_size_t(OSSL_EXCHANGE_PARAM_KDF_OUTLEN, NULL),
    OSSL_PARAM_octet_string(OSSL_EXCHANGE_PARAM_KDF_UKM, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM gettable[] = {
    OSSL_PARAM_int(OSSL_EXCHANGE_PARAM_EC_ECDH_COFACTOR_MODE, NULL),
    OSSL_PARAM_utf8_string(OSSL_EXCHANGE_PARAM_KDF_TYPE, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_EXCHANGE_PARAM_KDF_DIGEST, NULL, 0),
    OSSL_PARAM_size_t(OSSL_EXCHANGE_PARAM_KDF_OUTLEN, NULL),
    OSSL_PARAM_DEFN(OSSL_EXCHANGE_PARAM_KDF_UKM, OSSL_PARAM_OCTET_PTR, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *ecdh_settable(void *ctx, void *provctx)
{
    (void)ctx;
    (void)provctx;
    return settable;
}

static const OSSL_PARAM *ecdh_gettable(void *ctx, void *provctx)
{
    (void)ctx;
    (void)provctx;
    return gettable;
}

const OSSL_DISPATCH mbp_ecdh_keyexch[] = {
    {OSSL_FUNC_KEYEXCH_NEWCTX, (void (*)(void))ecdh_newctx},
    {OSSL_FUNC_KEYEXCH_FREECTX, (void (*)(void))ecdh_freectx},
    {OSSL_FUNC_KEYEXCH_DUPCTX, (void (*)(void))ecdh_dupctx},
    {OSSL_FUNC_KEYEXCH_INIT, (void (*)(void))ecdh_init},
    {OSSL_FUNC_KEYEXCH_SET_PEER, (void (*)(void))ecdh_set_peer},
    {OSSL_FUNC_KEYEXCH_DERIVE, (void (*)(void))ecdh_derive},
    {OSSL_FUNC_KEYEXCH_SET_CTX_PARAMS, (void (*)(void))ecdh_set_ctx_params},
    {OSSL_FUNC_KEYEXCH_SETTABLE_CTX_PARAMS, (void (*)(void))ecdh_settable},
    {OSSL_FUNC_KEYEXCH_GET_CTX_PARAMS, (void (*)(void))ecdh_get_ctx_params},
    {OSSL_FUNC_KEYEXCH_GETTABLE_CTX_PARAMS, (void (*)(void))ecdh_gettable},
    {0, NULL},
};
