/*
 * x25519.c - X25519 (RFC 7748) key management and key exchange: what a TLS
 * 1.3 key share needs. Keys are raw 32-byte strings (OpenSSL's
 * OSSL_PKEY_PARAM_PUB_KEY / PRIV_KEY and encoded-pub-key); key pairs come
 * from mbo_x25519_keygen and shared secrets from mbo_x25519_derive, both
 * through the thread's lane manager (batched inside an ASYNC job). An
 * all-zero shared secret (a low-order peer point) is an error, as in
 * OpenSSL.
 */
#include <string.h>
#include <strings.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/params.h>

#include "prov.h"

#define LEN MBC_X25519_LEN

struct xkey {
    struct mbp_ctx *pc;
    int has_pub, has_priv;
    uint8_t pub[LEN];
    uint8_t priv[LEN]; /* as given (OpenSSL keeps it unclamped) */
    EVP_PKEY *sync;    /* the default provider's copy, for handed-off
                        * requests (mbp_sync_keep); NULL: none yet */
    int derived;       /* mbp_derived_before's flag */
};

/* drop_sync: forgets k's copy (its value is about to change). */
static void drop_sync(struct xkey *k)
{
    EVP_PKEY_free(k->sync);
    k->sync = NULL;
}

static void *x_new(void *provctx)
{
    struct xkey *k = OPENSSL_zalloc(sizeof(*k));
    if (k != NULL) {
        k->pc = provctx;
    }
    return k;
}

static void x_free(void *keydata)
{
    if (keydata != NULL) {
        drop_sync(keydata);
        OPENSSL_clear_free(keydata, sizeof(struct xkey));
    }
}

static int x_has(const void *keydata, int selection)
{
    const struct xkey *k = keydata;
    if (k == NULL) {
        return 0;
    }
    return ((selection & MBP_SEL_PUB) == 0 || k->has_pub) &&
           ((selection & MBP_SEL_PRIV) == 0 || k->has_priv);
}

static int x_match(const void *a, const void *b, int selection)
{
    const struct xkey *x = a, *y = b;
    if ((selection & MBP_SEL_KEYPAIR) == 0) {
        return 1; /* no domain parameters */
    }
    if ((selection & MBP_SEL_PUB) != 0 || (x->has_pub && y->has_pub)) {
        return x->has_pub && y->has_pub && memcmp(x->pub, y->pub, LEN) == 0;
    }
    return x->has_priv && y->has_priv && CRYPTO_memcmp(x->priv, y->priv, LEN) == 0;
}

/* get_raw: the 32-byte octet string of param name in params into out; 1
 * found and valid, 0 absent, -1 present and invalid. */
static int get_raw(const OSSL_PARAM params[], const char *name, uint8_t out[LEN])
{
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, name);
    if (p == NULL) {
        return 0;
    }
    void *buf = out;
    size_t len = 0;
    return OSSL_PARAM_get_octet_string(p, &buf, LEN, &len) && len == LEN ? 1 : -1;
}

static int x_import(void *keydata, int selection, const OSSL_PARAM params[])
{
    struct xkey *k = keydata;
    if (k == NULL || (selection & MBP_SEL_KEYPAIR) == 0) {
        return 0;
    }
    struct xkey n = {.pc = k->pc};
    const int pub = get_raw(params, OSSL_PKEY_PARAM_PUB_KEY, n.pub);
    const int priv =
        (selection & MBP_SEL_PRIV) != 0 ? get_raw(params, OSSL_PKEY_PARAM_PRIV_KEY, n.priv) : 0;
    int ok = pub >= 0 && priv >= 0 && (pub > 0 || priv > 0);
    if (ok && pub == 0) {
        ok = mbo_x25519_public_key(n.pub, n.priv) == MBC_OK;
    }
    if (ok) {
        n.has_pub = 1;
        n.has_priv = priv > 0;
        drop_sync(k);
        *k = n;
    }
    OPENSSL_cleanse(&n, sizeof(n));
    return ok;
}

/* to_params: k's pub key (and priv, if with_priv and k has it) as params;
 * the caller frees with mbp_params_clear_free. */
static OSSL_PARAM *to_params(const struct xkey *k, int with_priv)
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    if (bld == NULL) {
        return NULL;
    }
    int ok =
        !k->has_pub || OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, k->pub, LEN);
    if (ok && with_priv && k->has_priv) {
        ok = OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PRIV_KEY, k->priv, LEN);
    }
    OSSL_PARAM *params = ok ? OSSL_PARAM_BLD_to_param(bld) : NULL;
    OSSL_PARAM_BLD_free(bld);
    return params;
}

/* sync_key: k's copy in the default provider (k->sync, made at the first
 * call), NULL on failure; not a new reference. */
static EVP_PKEY *sync_key(const struct xkey *k)
{
    EVP_PKEY **slot = (EVP_PKEY **)&k->sync; /* a cache: the key's value stays */
    EVP_PKEY *o = mbp_sync_keep(slot, NULL);
    if (o != NULL) {
        return o;
    }
    OSSL_PARAM *params = to_params(k, 1);
    o = params != NULL ? mbp_other_import(k->pc, "X25519", MBP_SEL_KEYPAIR, params) : NULL;
    mbp_params_clear_free(params);
    return mbp_sync_keep(slot, o);
}

static int x_export(void *keydata, int selection, OSSL_CALLBACK *cb, void *cbarg)
{
    const struct xkey *k = keydata;
    if (k == NULL || !k->has_pub || (selection & MBP_SEL_KEYPAIR) == 0) {
        return 0;
    }
    OSSL_PARAM *params = to_params(k, (selection & MBP_SEL_PRIV) != 0);
    const int ok = params != NULL && cb(params, cbarg);
    mbp_params_clear_free(params);
    return ok;
}

static const OSSL_PARAM key_types[] = {
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PRIV_KEY, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *x_key_types(int selection)
{
    return (selection & MBP_SEL_KEYPAIR) != 0 ? key_types : NULL;
}

static int x_get_params(void *keydata, OSSL_PARAM params[])
{
    const struct xkey *k = keydata;
    OSSL_PARAM *p;
    if (!mbp_key_sizes(params, 253, 128, LEN)) {
        return 0;
    }
    const char *pubs[] = {OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, OSSL_PKEY_PARAM_PUB_KEY};
    for (size_t i = 0; i < 2; i++) {
        if ((p = OSSL_PARAM_locate(params, pubs[i])) != NULL &&
            (!k->has_pub || !OSSL_PARAM_set_octet_string(p, k->pub, LEN))) {
            return 0;
        }
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_PRIV_KEY)) != NULL &&
        (!k->has_priv || !OSSL_PARAM_set_octet_string(p, k->priv, LEN))) {
        return 0;
    }
    return 1;
}

static const OSSL_PARAM gettable[] = {
    OSSL_PARAM_int(OSSL_PKEY_PARAM_BITS, NULL),
    OSSL_PARAM_int(OSSL_PKEY_PARAM_SECURITY_BITS, NULL),
    OSSL_PARAM_int(OSSL_PKEY_PARAM_MAX_SIZE, NULL),
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PRIV_KEY, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *x_gettable_params(void *provctx)
{
    (void)provctx;
    return gettable;
}

/* x_set_params: encoded-pub-key (a peer's key share) makes k that public
 * key alone. */
static int x_set_params(void *keydata, const OSSL_PARAM params[])
{
    struct xkey *k = keydata;
    uint8_t pub[LEN];
    const int r = get_raw(params, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pub);
    if (r < 0) {
        mbp_err(k->pc, MBP_R_BAD_LENGTH, "X25519 public key");
        return 0;
    }
    if (r > 0) {
        drop_sync(k);
        OPENSSL_cleanse(k->priv, LEN);
        memcpy(k->pub, pub, LEN);
        k->has_pub = 1;
        k->has_priv = 0;
    }
    return 1;
}

static const OSSL_PARAM settable[] = {
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *x_settable_params(void *provctx)
{
    (void)provctx;
    return settable;
}

/* x_validate: a public key is any 32 bytes (RFC 7748); a pair must agree. */
static int x_validate(const void *keydata, int selection, int checktype)
{
    (void)checktype;
    const struct xkey *k = keydata;
    if (!x_has(k, selection)) {
        return 0;
    }
    if ((selection & MBP_SEL_KEYPAIR) != MBP_SEL_KEYPAIR) {
        return 1;
    }
    uint8_t pub[LEN];
    return mbo_x25519_public_key(pub, k->priv) == MBC_OK && memcmp(pub, k->pub, LEN) == 0;
}

static void *x_dup(const void *keydata, int selection)
{
    const struct xkey *src = keydata;
    struct xkey *k = x_new(src->pc);
    if (k == NULL) {
        return NULL;
    }
    if (selection & MBP_SEL_PUB) {
        k->has_pub = src->has_pub;
        memcpy(k->pub, src->pub, LEN);
    }
    if (selection & MBP_SEL_PRIV) {
        k->has_priv = src->has_priv;
        memcpy(k->priv, src->priv, LEN);
    }
    return k;
}

/* ------------------------------------------------------------ generation */

struct xgen {
    struct mbp_ctx *pc;
    int selection;
};

static int x_gen_set_params(void *genctx, const OSSL_PARAM params[])
{
    struct xgen *g = genctx;
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_GROUP_NAME);
    const char *name = NULL;
    if (p != NULL &&
        (!OSSL_PARAM_get_utf8_string_ptr(p, &name) || strcasecmp(name, "x25519") != 0)) {
        mbp_err(g->pc, MBP_R_BAD_PARAM, "group %s", name != NULL ? name : "?");
        return 0;
    }
    return 1;
}

static void *x_gen_init(void *provctx, int selection, const OSSL_PARAM params[])
{
    struct xgen *g = OPENSSL_zalloc(sizeof(*g));
    if (g == NULL) {
        return NULL;
    }
    g->pc = provctx;
    g->selection = selection;
    if (!x_gen_set_params(g, params)) {
        OPENSSL_free(g);
        return NULL;
    }
    return g;
}

static const OSSL_PARAM gen_settable[] = {
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *x_gen_settable_params(void *genctx, void *provctx)
{
    (void)genctx;
    (void)provctx;
    return gen_settable;
}

/* x_gen: a key pair from mbcrypto; an empty key when only parameters were
 * asked for (libssl then sets a peer's encoded key on it). */
static void *x_gen(void *genctx, OSSL_CALLBACK *cb, void *cbarg)
{
    (void)cb;
    (void)cbarg;
    struct xgen *g = genctx;
    struct xkey *k = x_new(g->pc);
    if (k == NULL || (g->selection & MBP_SEL_KEYPAIR) == 0) {
        return k;
    }
    const mbc_err err = mbo_x25519_keygen(k->priv, k->pub);
    if (err != MBC_OK) {
        mbp_err(g->pc, MBP_R_MBCRYPTO, "%s", mbc_err_str(err));
        x_free(k);
        return NULL;
    }
    k->has_pub = k->has_priv = 1;
    return k;
}

static void x_gen_cleanup(void *genctx)
{
    OPENSSL_free(genctx);
}

const OSSL_DISPATCH mbp_x25519_keymgmt[] = {
    {OSSL_FUNC_KEYMGMT_NEW, (void (*)(void))x_new},
    {OSSL_FUNC_KEYMGMT_FREE, (void (*)(void))x_free},
    {OSSL_FUNC_KEYMGMT_HAS, (void (*)(void))x_has},
    {OSSL_FUNC_KEYMGMT_MATCH, (void (*)(void))x_match},
    {OSSL_FUNC_KEYMGMT_VALIDATE, (void (*)(void))x_validate},
    {OSSL_FUNC_KEYMGMT_IMPORT, (void (*)(void))x_import},
    {OSSL_FUNC_KEYMGMT_IMPORT_TYPES, (void (*)(void))x_key_types},
    {OSSL_FUNC_KEYMGMT_EXPORT, (void (*)(void))x_export},
    {OSSL_FUNC_KEYMGMT_EXPORT_TYPES, (void (*)(void))x_key_types},
    {OSSL_FUNC_KEYMGMT_GET_PARAMS, (void (*)(void))x_get_params},
    {OSSL_FUNC_KEYMGMT_GETTABLE_PARAMS, (void (*)(void))x_gettable_params},
    {OSSL_FUNC_KEYMGMT_SET_PARAMS, (void (*)(void))x_set_params},
    {OSSL_FUNC_KEYMGMT_SETTABLE_PARAMS, (void (*)(void))x_settable_params},
    {OSSL_FUNC_KEYMGMT_GEN_INIT, (void (*)(void))x_gen_init},
    {OSSL_FUNC_KEYMGMT_GEN_SET_PARAMS, (void (*)(void))x_gen_set_params},
    {OSSL_FUNC_KEYMGMT_GEN_SETTABLE_PARAMS, (void (*)(void))x_gen_settable_params},
    {OSSL_FUNC_KEYMGMT_GEN, (void (*)(void))x_gen},
    {OSSL_FUNC_KEYMGMT_GEN_CLEANUP, (void (*)(void))x_gen_cleanup},
    {OSSL_FUNC_KEYMGMT_DUP, (void (*)(void))x_dup},
    {0, NULL},
};

/* ---------------------------------------------------------- key exchange */

struct xexch {
    struct mbp_ctx *pc;
    const struct xkey *key, *peer; /* not owned: the EVP_PKEY_CTX holds them */
    EVP_PKEY_CTX *sync;            /* handed-off requests: the default provider's
                                    * exchange of our keys (mbp_sync_op), until
                                    * the next init or peer */
};

static void *xe_newctx(void *provctx)
{
    struct xexch *e = OPENSSL_zalloc(sizeof(*e));
    if (e != NULL) {
        e->pc = provctx;
    }
    return e;
}

static void xe_freectx(void *ctx)
{
    if (ctx != NULL) {
        mbp_sync_reset(&((struct xexch *)ctx)->sync);
        OPENSSL_free(ctx);
    }
}

static void *xe_dupctx(void *ctx)
{
    struct xexch *e = OPENSSL_memdup(ctx, sizeof(struct xexch));
    if (e != NULL) {
        e->sync = NULL;
    }
    return e;
}

static int xe_init(void *ctx, void *provkey, const OSSL_PARAM params[])
{
    (void)params;
    struct xexch *e = ctx;
    const struct xkey *k = provkey;
    if (k == NULL || !k->has_priv) {
        mbp_err(e->pc, MBP_R_BAD_KEY, "no private key");
        return 0;
    }
    e->key = k;
    e->peer = NULL;
    mbp_sync_reset(&e->sync);
    return 1;
}

static int xe_set_peer(void *ctx, void *provkey)
{
    struct xexch *e = ctx;
    const struct xkey *k = provkey;
    if (k == NULL || !k->has_pub) {
        mbp_err(e->pc, MBP_R_BAD_KEY, "peer without a public key");
        return 0;
    }
    e->peer = k;
    mbp_sync_reset(&e->sync);
    return 1;
}

static int xe_derive(void *ctx, unsigned char *secret, size_t *secretlen, size_t outlen)
{
    struct xexch *e = ctx;
    if (e->key == NULL || e->peer == NULL) {
        mbp_err(e->pc, MBP_R_INIT, "derive");
        return 0;
    }
    if (secret == NULL) {
        *secretlen = LEN;
        return 1;
    }
    if (outlen < LEN) {
        mbp_err(e->pc, MBP_R_BAD_LENGTH, "secret buffer of %zu bytes", outlen);
        return 0;
    }
    EVP_PKEY_CTX *h =
        mbp_derived_before(&e->key->derived) &&
                mbo_hand_off(MBC_ALG_X25519, MBC_OP_X25519_DERIVE, 255)
            ? mbp_sync_op(e->pc, &e->sync, sync_key(e->key), MBP_SYNC_DERIVE, sync_key(e->peer))
            : NULL;
    if (h != NULL) {
        *secretlen = outlen;
        return EVP_PKEY_derive(h, secret, secretlen) == 1;
    }
    const mbc_err err = mbo_x25519_derive(secret, e->key->priv, e->peer->pub);
    if (err != MBC_OK) {
        mbp_err(e->pc, err == MBC_ERR_LOW_ORDER ? MBP_R_BAD_KEY : MBP_R_MBCRYPTO, "%s",
                err == MBC_ERR_LOW_ORDER ? "low-order peer point" : mbc_err_str(err));
        return 0;
    }
    *secretlen = LEN;
    return 1;
}

static int xe_set_ctx_params(void *ctx, const OSSL_PARAM params[])
{
    (void)ctx;
    (void)params;
    return 1; /* X25519 has no parameters */
}

static const OSSL_PARAM xe_settable[] = {OSSL_PARAM_END};

static const OSSL_PARAM *xe_settable_ctx_params(void *ctx, void *provctx)
{
    (void)ctx;
    (void)provctx;
    return xe_settable;
}

const OSSL_DISPATCH mbp_x25519_keyexch[] = {
    {OSSL_FUNC_KEYEXCH_NEWCTX, (void (*)(void))xe_newctx},
    {OSSL_FUNC_KEYEXCH_FREECTX, (void (*)(void))xe_freectx},
    {OSSL_FUNC_KEYEXCH_DUPCTX, (void (*)(void))xe_dupctx},
    {OSSL_FUNC_KEYEXCH_INIT, (void (*)(void))xe_init},
    {OSSL_FUNC_KEYEXCH_SET_PEER, (void (*)(void))xe_set_peer},
    {OSSL_FUNC_KEYEXCH_DERIVE, (void (*)(void))xe_derive},
    {OSSL_FUNC_KEYEXCH_SET_CTX_PARAMS, (void (*)(void))xe_set_ctx_params},
    {OSSL_FUNC_KEYEXCH_SETTABLE_CTX_PARAMS, (void (*)(void))xe_settable_ctx_params},
    {0, NULL},
};
