/*
 * rsa_kmgmt.c - RSA key management: import and export of the standard
 * parameters (n, e, d, the two primes, the CRT exponents and coefficient),
 * so that a key loaded by the default provider (from PEM) is exported to us
 * once, when an operation of ours first uses it; OpenSSL keeps our key data
 * with the EVP_PKEY, so the mbcrypto key objects built here are reused by
 * every later operation on that key.
 *
 * A key mbcrypto does not serve (other sizes, multi-prime keys, private
 * keys without the CRT components, unbalanced primes) is not refused at
 * import: EVP_PKEY_fromdata with our key management has no fallback, so
 * such a key is imported by the other provider in our child library
 * context and held in our key data (mbp_rsa_key.other), as a generated
 * one is below. Signatures with it are that provider's (rsa_sig.c,
 * other.c); encryption, which we do not have, exports it there.
 *
 * Key generation (OpenSSL has no fallback for it: with mbcrypto preferred,
 * every RSA generation comes here) is the default provider's, in our child
 * library context, with the caller's parameters and progress callback. A
 * key of a size we serve becomes our key data (components and key
 * objects) as an import would make it; any other key (1024 or 8192 bits,
 * multi-prime) stays the other provider's, held in our key data
 * (mbp_rsa_key.other), and every key management call on it (parameters,
 * export, match, dup) goes there.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/params.h>

#include "prov.h"

#define SEL_PUB MBP_SEL_PUB
#define SEL_PRIV MBP_SEL_PRIV
#define SEL_KEYPAIR MBP_SEL_KEYPAIR

/* The components and their parameter names; the first two are public. */
#define NUM_COMPONENTS 8
static const char *const component_names[NUM_COMPONENTS] = {
    OSSL_PKEY_PARAM_RSA_N,         OSSL_PKEY_PARAM_RSA_E,
    OSSL_PKEY_PARAM_RSA_D,         OSSL_PKEY_PARAM_RSA_FACTOR1,
    OSSL_PKEY_PARAM_RSA_FACTOR2,   OSSL_PKEY_PARAM_RSA_EXPONENT1,
    OSSL_PKEY_PARAM_RSA_EXPONENT2, OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
};

/* components: the key's BIGNUM slots in component_names' order. */
static void components(struct mbp_rsa_key *k, BIGNUM **slot[NUM_COMPONENTS])
{
    slot[0] = &k->n;
    slot[1] = &k->e;
    slot[2] = &k->d;
    slot[3] = &k->p;
    slot[4] = &k->q;
    slot[5] = &k->dp;
    slot[6] = &k->dq;
    slot[7] = &k->qinv;
}

static void *rsa_new(void *provctx)
{
    struct mbp_rsa_key *k = OPENSSL_zalloc(sizeof(*k));
    if (k != NULL) {
        k->pc = provctx;
    }
    return k;
}

/* clear: frees everything the key holds (it stays allocated, empty). */
static void clear(struct mbp_rsa_key *k)
{
    BIGNUM **slot[NUM_COMPONENTS];
    components(k, slot);
    for (unsigned i = 0; i < NUM_COMPONENTS; i++) {
        BN_clear_free(*slot[i]);
        *slot[i] = NULL;
    }
    mbc_rsa_pub_key_free(k->pub);
    mbc_rsa_priv_key_free(k->priv);
    k->pub = NULL;
    k->priv = NULL;
    k->bits = 0;
    EVP_PKEY_free(k->sync);
    k->sync = NULL;
}

static void rsa_free(void *keydata)
{
    struct mbp_rsa_key *k = keydata;
    if (k != NULL) {
        clear(k);
        EVP_PKEY_free(k->other);
        OPENSSL_free(k);
    }
}

/* build: the mbcrypto key objects of k's components (private if with_priv).
 * Returns 1, or 0 when mbcrypto does not serve this key. */
static int build(struct mbp_rsa_key *k, int with_priv)
{
    if (mbo_rsa_pub_new(&k->pub, k->n, k->e) != MBC_OK) {
        return 0;
    }
    k->bits = mbc_rsa_pub_key_bits(k->pub);
    if (with_priv &&
        mbo_rsa_priv_new(&k->priv, k->n, k->e, k->p, k->q, k->dp, k->dq, k->qinv) != MBC_OK) {
        return 0;
    }
    return 1;
}

/* from_params: k's components from params; 1 when the key (public, or
 * private if with_priv) was built. Nothing is kept on failure. */
static int from_params(struct mbp_rsa_key *k, const OSSL_PARAM params[], int with_priv)
{
    clear(k);
    /* Multi-prime keys: not for mbcrypto. */
    if (OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_RSA_FACTOR3) != NULL) {
        return 0;
    }
    BIGNUM **slot[NUM_COMPONENTS];
    components(k, slot);
    const unsigned num = with_priv ? NUM_COMPONENTS : 2;
    int ok = 1;
    for (unsigned i = 0; i < num && ok; i++) {
        const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, component_names[i]);
        /* d is kept for export; the CRT components are what mbcrypto uses. */
        ok = p != NULL && OSSL_PARAM_get_BN(p, slot[i]);
    }
    ok = ok && build(k, with_priv);
    if (!ok) {
        clear(k);
    }
    return ok;
}

static int rsa_import(void *keydata, int selection, const OSSL_PARAM params[])
{
    struct mbp_rsa_key *k = keydata;
    if (k == NULL || k->other != NULL || (selection & SEL_KEYPAIR) == 0) {
        return 0;
    }
    /* A private selection of a public key's parameters imports the public
     * key (as OpenSSL's own key management does); a private key without
     * its CRT components is refused by from_params. */
    const int priv = (selection & SEL_PRIV) != 0 &&
                     (OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_RSA_D) != NULL ||
                      OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_RSA_FACTOR1) != NULL);
    if (from_params(k, params, priv)) {
        mbo_count(MBO_CTR_RSA_KEYS, 1);
        return 1;
    }
    mbo_count(MBO_CTR_RSA_REFUSED, 1);
    k->other = mbp_other_import(k->pc, "RSA", selection, params);
    return k->other != NULL;
}

/* to_params: k's components (private ones if with_priv) as params, through
 * OSSL_PARAM_BLD; the caller frees with OSSL_PARAM_free. */
static OSSL_PARAM *to_params(struct mbp_rsa_key *k, int with_priv)
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    if (bld == NULL) {
        return NULL;
    }
    BIGNUM **slot[NUM_COMPONENTS];
    components(k, slot);
    const unsigned num = with_priv && k->priv != NULL ? NUM_COMPONENTS : 2;
    int ok = 1;
    for (unsigned i = 0; i < num && ok; i++) {
        ok = *slot[i] == NULL || OSSL_PARAM_BLD_push_BN(bld, component_names[i], *slot[i]);
    }
    OSSL_PARAM *params = ok ? OSSL_PARAM_BLD_to_param(bld) : NULL;
    OSSL_PARAM_BLD_free(bld);
    return params;
}

static int rsa_export(void *keydata, int selection, OSSL_CALLBACK *cb, void *cbarg)
{
    struct mbp_rsa_key *k = keydata;
    if (k != NULL && k->other != NULL) {
        return EVP_PKEY_export(k->other, selection, cb, cbarg);
    }
    if (k == NULL || k->pub == NULL || (selection & SEL_KEYPAIR) == 0) {
        return 0;
    }
    OSSL_PARAM *params = to_params(k, (selection & SEL_PRIV) != 0);
    if (params == NULL) {
        return 0;
    }
    const int ok = cb(params, cbarg);
    mbp_params_clear_free(params);
    return ok;
}

/* The components as parameters: public, then private. */
#define PUB_PARAMS                                                                                 \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_N, NULL, 0), OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_E, NULL, 0)
#define PRIV_PARAMS                                                                                \
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_D, NULL, 0),                                                 \
        OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_FACTOR1, NULL, 0),                                       \
        OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_FACTOR2, NULL, 0),                                       \
        OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_EXPONENT1, NULL, 0),                                     \
        OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_EXPONENT2, NULL, 0),                                     \
        OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_COEFFICIENT1, NULL, 0)

static const OSSL_PARAM key_types[] = {PUB_PARAMS, PRIV_PARAMS, OSSL_PARAM_END};
static const OSSL_PARAM pub_key_types[] = {PUB_PARAMS, OSSL_PARAM_END};

static const OSSL_PARAM *rsa_key_types(int selection)
{
    if (selection & SEL_PRIV) {
        return key_types;
    }
    return (selection & SEL_PUB) ? pub_key_types : NULL;
}

/* other_has: whether k->other has the component key. */
static int other_has(const struct mbp_rsa_key *k, const char *key)
{
    BIGNUM *bn = NULL;
    const int ok = EVP_PKEY_get_bn_param(k->other, key, &bn);
    BN_clear_free(bn);
    return ok;
}

static int rsa_has(const void *keydata, int selection)
{
    const struct mbp_rsa_key *k = keydata;
    if (k == NULL) {
        return 0;
    }
    if (k->other != NULL) {
        return ((selection & SEL_PUB) == 0 || other_has(k, OSSL_PKEY_PARAM_RSA_N)) &&
               ((selection & SEL_PRIV) == 0 || other_has(k, OSSL_PKEY_PARAM_RSA_D));
    }
    int ok = 1;
    if (selection & SEL_PUB) {
        ok = ok && k->pub != NULL;
    }
    if (selection & SEL_PRIV) {
        ok = ok && k->priv != NULL;
    }
    return ok;
}

EVP_PKEY *mbp_rsa_other(const struct mbp_rsa_key *k)
{
    if (k->other != NULL) {
        return EVP_PKEY_up_ref(k->other) ? k->other : NULL;
    }
    OSSL_PARAM *params = k->pub != NULL ? to_params((struct mbp_rsa_key *)k, 1) : NULL;
    EVP_PKEY *o = params != NULL ? mbp_other_import(k->pc, "RSA", SEL_KEYPAIR, params) : NULL;
    mbp_params_clear_free(params);
    return o;
}

EVP_PKEY *mbp_rsa_sync(const struct mbp_rsa_key *k)
{
    EVP_PKEY **slot = (EVP_PKEY **)&k->sync; /* a cache: the key's value stays */
    EVP_PKEY *o = mbp_sync_keep(slot, NULL);
    return o != NULL ? o : mbp_sync_keep(slot, mbp_rsa_other(k));
}

static int rsa_match(const void *a, const void *b, int selection)
{
    const struct mbp_rsa_key *x = a, *y = b;
    if ((selection & SEL_KEYPAIR) == 0) {
        return 1; /* RSA has no domain parameters */
    }
    if (x->other != NULL || y->other != NULL) {
        /* One of ours against another provider's: compared there. */
        EVP_PKEY *ox = mbp_rsa_other(x), *oy = mbp_rsa_other(y);
        const int ok = ox != NULL && oy != NULL && EVP_PKEY_eq(ox, oy) == 1;
        EVP_PKEY_free(ox);
        EVP_PKEY_free(oy);
        return ok;
    }
    if (x->n == NULL || y->n == NULL || BN_cmp(x->n, y->n) != 0 || BN_cmp(x->e, y->e) != 0) {
        return 0;
    }
    if ((selection & SEL_PUB) == 0 && (x->d == NULL || y->d == NULL || BN_cmp(x->d, y->d) != 0)) {
        return 0;
    }
    return 1;
}

/* rsa_validate: the other provider's checks (OpenSSL's RSA key checks),
 * on a key it holds or on a copy of ours. */
static int rsa_validate(const void *keydata, int selection, int checktype)
{
    (void)checktype;
    const struct mbp_rsa_key *k = keydata;
    if (!rsa_has(k, selection)) {
        return 0;
    }
    if ((selection & SEL_KEYPAIR) == 0) {
        return 1; /* no domain parameters */
    }
    EVP_PKEY *o = mbp_rsa_other(k);
    const int ok = o != NULL && mbp_other_validate(k->pc, o, selection & SEL_KEYPAIR);
    EVP_PKEY_free(o);
    return ok;
}

static int rsa_get_params(void *keydata, OSSL_PARAM params[])
{
    struct mbp_rsa_key *k = keydata;
    if (k != NULL && k->other != NULL) {
        return EVP_PKEY_get_params(k->other, params);
    }
    if (k == NULL || k->pub == NULL) {
        return 0;
    }
    OSSL_PARAM *p;
    if (!mbp_key_sizes(params, (int)k->bits, BN_security_bits((int)k->bits, -1),
                       (int)k->bits / 8) ||
        !mbp_set_str(params, OSSL_PKEY_PARAM_DEFAULT_DIGEST, "SHA256")) {
        return 0;
    }
    BIGNUM **slot[NUM_COMPONENTS];
    components(k, slot);
    for (unsigned i = 0; i < NUM_COMPONENTS; i++) {
        if ((p = OSSL_PARAM_locate(params, component_names[i])) != NULL && *slot[i] != NULL &&
            !OSSL_PARAM_set_BN(p, *slot[i])) {
            return 0;
        }
    }
    return 1;
}

static const OSSL_PARAM gettable[] = {
    OSSL_PARAM_int(OSSL_PKEY_PARAM_BITS, NULL),
    OSSL_PARAM_int(OSSL_PKEY_PARAM_SECURITY_BITS, NULL),
    OSSL_PARAM_int(OSSL_PKEY_PARAM_MAX_SIZE, NULL),
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_DEFAULT_DIGEST, NULL, 0),
    PUB_PARAMS,
    PRIV_PARAMS,
    OSSL_PARAM_END,
};

static const OSSL_PARAM *rsa_gettable_params(void *provctx)
{
    (void)provctx;
    return gettable;
}

static const char *rsa_query_operation_name(int operation_id)
{
    return operation_id == OSSL_OP_SIGNATURE ? "RSA" : NULL;
}

static void *rsa_dup(const void *keydata, int selection)
{
    const struct mbp_rsa_key *src = keydata;
    struct mbp_rsa_key *k = rsa_new(src->pc);
    if (k == NULL) {
        return NULL;
    }
    if (src->other != NULL) {
        if ((k->other = EVP_PKEY_dup(src->other)) == NULL) {
            rsa_free(k);
            return NULL;
        }
        return k;
    }
    const int with_priv = (selection & SEL_PRIV) != 0 && src->priv != NULL;
    OSSL_PARAM *params = to_params((struct mbp_rsa_key *)src, with_priv);
    if (params == NULL || !from_params(k, params, with_priv)) {
        rsa_free(k);
        k = NULL;
    }
    mbp_params_clear_free(params);
    return k;
}

/* ------------------------------------------------------------ generation */

struct rsagen {
    struct mbp_ctx *pc;
    OSSL_PARAM *params; /* every parameter set (a copy), NULL for none */
};

static int rsa_gen_set_params(void *genctx, const OSSL_PARAM params[])
{
    struct rsagen *g = genctx;
    return mbp_params_merge(&g->params, params);
}

static void rsa_gen_cleanup(void *genctx)
{
    struct rsagen *g = genctx;
    if (g != NULL) {
        mbp_params_clear_free(g->params);
        OPENSSL_free(g);
    }
}

static void *rsa_gen_init(void *provctx, int selection, const OSSL_PARAM params[])
{
    if ((selection & SEL_KEYPAIR) == 0) {
        return NULL; /* RSA has no domain parameters to generate */
    }
    struct rsagen *g = OPENSSL_zalloc(sizeof(*g));
    if (g == NULL) {
        return NULL;
    }
    g->pc = provctx;
    if (!rsa_gen_set_params(g, params)) {
        rsa_gen_cleanup(g);
        return NULL;
    }
    return g;
}

/* What the default provider's RSA generation takes (EVP_PKEY-RSA(7)). */
static const OSSL_PARAM gen_settable[] = {
    OSSL_PARAM_size_t(OSSL_PKEY_PARAM_RSA_BITS, NULL),
    OSSL_PARAM_size_t(OSSL_PKEY_PARAM_RSA_PRIMES, NULL),
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_RSA_E, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *rsa_gen_settable_params(void *genctx, void *provctx)
{
    (void)genctx;
    (void)provctx;
    return gen_settable;
}

/* rsa_gen: a key pair from the other provider; ours when we serve it. */
static void *rsa_gen(void *genctx, OSSL_CALLBACK *cb, void *cbarg)
{
    struct rsagen *g = genctx;
    EVP_PKEY *pkey = mbp_other_gen(g->pc, "RSA", SEL_KEYPAIR, g->params, NULL, cb, cbarg);
    struct mbp_rsa_key *k = pkey != NULL ? rsa_new(g->pc) : NULL;
    OSSL_PARAM *params = NULL;
    if (k == NULL) {
        mbp_err(g->pc, MBP_R_BAD_PARAM, "the other provider could not generate this key");
        EVP_PKEY_free(pkey);
        return NULL;
    }
    if (EVP_PKEY_todata(pkey, EVP_PKEY_KEYPAIR, &params) == 1 && from_params(k, params, 1)) {
        mbo_count(MBO_CTR_RSA_KEYS, 1);
        EVP_PKEY_free(pkey);
    } else {
        mbo_count(MBO_CTR_RSA_REFUSED, 1);
        k->other = pkey;
    }
    mbp_params_clear_free(params);
    return k;
}

const OSSL_DISPATCH mbp_rsa_keymgmt[] = {
    {OSSL_FUNC_KEYMGMT_NEW, (void (*)(void))rsa_new},
    {OSSL_FUNC_KEYMGMT_FREE, (void (*)(void))rsa_free},
    {OSSL_FUNC_KEYMGMT_HAS, (void (*)(void))rsa_has},
    {OSSL_FUNC_KEYMGMT_MATCH, (void (*)(void))rsa_match},
    {OSSL_FUNC_KEYMGMT_VALIDATE, (void (*)(void))rsa_validate},
    {OSSL_FUNC_KEYMGMT_IMPORT, (void (*)(void))rsa_import},
    {OSSL_FUNC_KEYMGMT_IMPORT_TYPES, (void (*)(void))rsa_key_types},
    {OSSL_FUNC_KEYMGMT_EXPORT, (void (*)(void))rsa_export},
    {OSSL_FUNC_KEYMGMT_EXPORT_TYPES, (void (*)(void))rsa_key_types},
    {OSSL_FUNC_KEYMGMT_GET_PARAMS, (void (*)(void))rsa_get_params},
    {OSSL_FUNC_KEYMGMT_GETTABLE_PARAMS, (void (*)(void))rsa_gettable_params},
    {OSSL_FUNC_KEYMGMT_QUERY_OPERATION_NAME, (void (*)(void))rsa_query_operation_name},
    {OSSL_FUNC_KEYMGMT_DUP, (void (*)(void))rsa_dup},
    {OSSL_FUNC_KEYMGMT_GEN_INIT, (void (*)(void))rsa_gen_init},
    {OSSL_FUNC_KEYMGMT_GEN_SET_PARAMS, (void (*)(void))rsa_gen_set_params},
    {OSSL_FUNC_KEYMGMT_GEN_SETTABLE_PARAMS, (void (*)(void))rsa_gen_settable_params},
    {OSSL_FUNC_KEYMGMT_GEN, (void (*)(void))rsa_gen},
    {OSSL_FUNC_KEYMGMT_GEN_CLEANUP, (void (*)(void))rsa_gen_cleanup},
    {0, NULL},
};
