/*
 * ec_kmgmt.c - "EC" key management for the two named curves mbcrypto has,
 * P-256 and P-384: the group name, the public key (OSSL_PKEY_PARAM_PUB_KEY
 * and encoded-pub-key), the private scalar, the point format, and key
 * generation by group name (through the thread's lane manager,
 * mbo_ec_keygen). ECDH (ec_exch.c) and ECDSA (ec_sig.c) use these keys.
 *
 * Public keys come as uncompressed, compressed or hybrid points (a
 * compressed one is decompressed by libcrypto's EC_POINT: a public value);
 * the key keeps the uncompressed point. The point format is kept as the
 * default provider keeps it, so that the same calls give the same
 * encodings: the key's format (that of pub) and the one its parameters
 * give out (point-format) are both set by a point-format parameter at
 * import or by set_params; set1_encoded_public_key sets the key's alone
 * (to the encoding given); a generated key gets the asked format in its
 * parameters alone; encoded-pub-key is always uncompressed.
 *
 * Keys of our curves that mbcrypto rejects are refused at import (points
 * off the curve, coordinates or scalars out of range, a public key that is
 * not the private key's): OpenSSL then tries the key's own provider.
 *
 * Everything else is left to another provider (the default one): other
 * curves, explicit parameters, an encoding other than named curves. OpenSSL has no fallback for key
 * generation (with mbcrypto preferred every "EC" generation, libssl's P-521 key shares too, comes
 * to us) nor for a peer key that our ECDH must import, so such keys are not refused: they are made
 * (generated or imported) by the other provider in our child library context, and our key data only
 * holds that key (mbp_ec_key.other): every call on it (parameters, export,
 * checks, ECDH) goes to that provider through EVP.
 */
#include <string.h>
#include <strings.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/params.h>

#include "prov.h"

/* The curves, their names (the first one is what we give out). */
static const struct {
    mbc_curve curve;
    const char *names[3];
    int bits, secbits, nid;
} curves[] = {
    {MBC_CURVE_P256, {"prime256v1", "P-256", "secp256r1"}, 256, 128, NID_X9_62_prime256v1},
    {MBC_CURVE_P384, {"secp384r1", "P-384", NULL}, 384, 192, NID_secp384r1},
};

/* The point formats' names, in enum mbp_ec_form's order. */
static const char *const form_names[] = {
    OSSL_PKEY_EC_POINT_CONVERSION_FORMAT_UNCOMPRESSED,
    OSSL_PKEY_EC_POINT_CONVERSION_FORMAT_COMPRESSED,
    OSSL_PKEY_EC_POINT_CONVERSION_FORMAT_HYBRID,
};

/* get_form: the point-format of params: 1 and *form set, 0 absent, -1
 * present and not a format. */
static int get_form(const OSSL_PARAM params[], uint8_t *form)
{
    const OSSL_PARAM *p =
        OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT);
    const char *v = NULL;
    if (p == NULL) {
        return 0;
    }
    if (!OSSL_PARAM_get_utf8_string_ptr(p, &v)) {
        return -1;
    }
    for (uint8_t i = 0; i < 3; i++) {
        if (strcasecmp(v, form_names[i]) == 0) {
            *form = i;
            return 1;
        }
    }
    return -1;
}
#define NUM_CURVES (sizeof(curves) / sizeof(curves[0]))

/* curve_index: the row of curve c in curves (c must be one of them). */
static size_t curve_index(mbc_curve c)
{
    return c == MBC_CURVE_P256 ? 0 : 1;
}

/* curve_of_name: the curve called name, 0 if none of ours. */
static mbc_curve curve_of_name(const char *name)
{
    for (size_t i = 0; i < NUM_CURVES; i++) {
        for (size_t j = 0; j < 3 && curves[i].names[j] != NULL; j++) {
            if (strcasecmp(name, curves[i].names[j]) == 0) {
                return curves[i].curve;
            }
        }
    }
    return 0;
}

/* get_curve: the curve of the group name in params: 1 and *c set, 0
 * absent, -1 present and not ours. */
static int get_curve(const OSSL_PARAM params[], mbc_curve *c)
{
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_GROUP_NAME);
    const char *name = NULL;
    if (p == NULL) {
        return 0;
    }
    if (!OSSL_PARAM_get_utf8_string_ptr(p, &name) || (*c = curve_of_name(name)) == 0) {
        return -1;
    }
    return 1;
}

/* formats_ok: 0 when params ask for what our keys do not do: explicit
 * parameters, an encoding other than named_curve, an unknown point
 * format. */
static int formats_ok(const OSSL_PARAM params[])
{
    static const char *const explicit_names[] = {
        OSSL_PKEY_PARAM_EC_FIELD_TYPE, OSSL_PKEY_PARAM_EC_P,         OSSL_PKEY_PARAM_EC_A,
        OSSL_PKEY_PARAM_EC_B,          OSSL_PKEY_PARAM_EC_GENERATOR, OSSL_PKEY_PARAM_EC_ORDER,
        OSSL_PKEY_PARAM_EC_SEED,
    };
    for (size_t i = 0; i < sizeof(explicit_names) / sizeof(explicit_names[0]); i++) {
        if (OSSL_PARAM_locate_const(params, explicit_names[i]) != NULL) {
            return 0;
        }
    }
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_EC_ENCODING);
    const char *s = NULL;
    uint8_t form;
    if ((p != NULL && (!OSSL_PARAM_get_utf8_string_ptr(p, &s) ||
                       strcasecmp(s, OSSL_PKEY_EC_ENCODING_GROUP) != 0)) ||
        get_form(params, &form) < 0) {
        return 0;
    }
    p = OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_EC_DECODED_FROM_EXPLICIT_PARAMS);
    int v = 0;
    return p == NULL || (OSSL_PARAM_get_int(p, &v) && v == 0);
}

static void *ec_new(void *provctx)
{
    struct mbp_ec_key *k = OPENSSL_zalloc(sizeof(*k));
    if (k != NULL) {
        k->pc = provctx;
    }
    return k;
}

/* clear_keys: drops k's public and private key (the curve stays). */
static void clear_keys(struct mbp_ec_key *k)
{
    mbc_ec_pub_key_free(k->pub);
    mbc_ec_priv_key_free(k->priv);
    k->pub = NULL;
    k->priv = NULL;
    EVP_PKEY_free(k->sync);
    k->sync = NULL;
    OPENSSL_cleanse(k->d, sizeof(k->d));
    memset(k->point, 0, sizeof(k->point));
}

static void ec_free(void *keydata)
{
    struct mbp_ec_key *k = keydata;
    if (k != NULL) {
        clear_keys(k);
        EVP_PKEY_free(k->other);
        OPENSSL_free(k);
    }
}

/* decode_point: out (mbc_ec_point_len bytes) = the uncompressed form of
 * the point in (len bytes, any format) of k's curve, *form its format;
 * 0 when it is not a point of the curve. Public values: libcrypto's
 * EC_POINT decompresses. */
static int decode_point(const struct mbp_ec_key *k, uint8_t *out, uint8_t *form, const uint8_t *in,
                        size_t len)
{
    if (len == 0 || k->curve == 0) {
        return 0;
    }
    const size_t plen = mbc_ec_point_len(k->curve);
    if (in[0] == 4) {
        *form = MBP_EC_UNCOMPRESSED;
        if (len != plen) {
            return 0;
        }
        memcpy(out, in, plen);
        return 1;
    }
    *form = (in[0] & ~1) == 2 ? MBP_EC_COMPRESSED : MBP_EC_HYBRID;
    EC_GROUP *g =
        EC_GROUP_new_by_curve_name_ex(k->pc->libctx, NULL, curves[curve_index(k->curve)].nid);
    EC_POINT *pt = g != NULL ? EC_POINT_new(g) : NULL;
    const int ok =
        pt != NULL && EC_POINT_oct2point(g, pt, in, len, NULL) == 1 &&
        EC_POINT_point2oct(g, pt, POINT_CONVERSION_UNCOMPRESSED, out, plen, NULL) == plen;
    EC_POINT_free(pt);
    EC_GROUP_free(g);
    return ok;
}

/* encode_point: out = k's public point in format form; its length. */
static size_t encode_point(const struct mbp_ec_key *k, uint8_t out[MBP_EC_POINT_MAX], uint8_t form)
{
    const size_t plen = mbc_ec_point_len(k->curve), flen = (plen - 1) / 2;
    const uint8_t odd = k->point[plen - 1] & 1;
    memcpy(out, k->point, plen);
    switch (form) {
    case MBP_EC_COMPRESSED:
        out[0] = (uint8_t)(2 | odd);
        return 1 + flen;
    case MBP_EC_HYBRID:
        out[0] = (uint8_t)(6 | odd);
        return plen;
    default:
        return plen;
    }
}

/* set_pub: k (of its curve) gets the public key point (len bytes),
 * validated; 1 on success (nothing changed on failure). */
static int set_pub(struct mbp_ec_key *k, const uint8_t *point, size_t len)
{
    mbc_ec_pub_key *pub;
    if (k->curve == 0 || mbo_ec_pub_key_new(&pub, k->curve, point, len) != MBC_OK) {
        return 0;
    }
    clear_keys(k);
    k->pub = pub;
    memcpy(k->point, point, len);
    return 1;
}

/* set_pair: k (of its curve) gets the private scalar d (scalar_len bytes,
 * big-endian) and its public key; with want_point, that must be it. With
 * known, want_point is known to be d's (mbcrypto's key generation gave it,
 * or a key of ours is copied) and d G is not computed again
 * (mbc_ec_priv_key_new_pair). */
static int set_pair(struct mbp_ec_key *k, const uint8_t *d, const uint8_t *want_point,
                    size_t want_len, int known)
{
    const size_t slen = mbc_ec_scalar_len(k->curve), plen = mbc_ec_point_len(k->curve);
    mbc_ec_priv_key *priv;
    uint8_t point[MBP_EC_POINT_MAX];
    if ((known ? mbo_ec_priv_key_new_pair(&priv, k->curve, d, slen, want_point, want_len)
               : mbo_ec_priv_key_new(&priv, k->curve, d, slen)) != MBC_OK) {
        return 0;
    }
    if (mbc_ec_priv_key_public(priv, point, sizeof(point)) != MBC_OK ||
        (want_point != NULL && (want_len != plen || memcmp(want_point, point, plen) != 0)) ||
        !set_pub(k, point, plen)) {
        mbc_ec_priv_key_free(priv);
        return 0;
    }
    k->priv = priv;
    memcpy(k->d, d, slen);
    return 1;
}

/* ---------------------------------------------- keys of other curves */

/* other_has: whether k->other has the parameter key (a BIGNUM for the
 * private key, a string for the public key). */
static int other_has(const struct mbp_ec_key *k, const char *key)
{
    if (strcmp(key, OSSL_PKEY_PARAM_PRIV_KEY) == 0) {
        BIGNUM *bn = NULL;
        const int ok = EVP_PKEY_get_bn_param(k->other, key, &bn);
        BN_clear_free(bn);
        return ok;
    }
    size_t len = 0;
    return EVP_PKEY_get_octet_string_param(k->other, key, NULL, 0, &len) && len > 0;
}

static int other_has_sel(const struct mbp_ec_key *k, int selection)
{
    return ((selection & MBP_SEL_PUB) == 0 || other_has(k, OSSL_PKEY_PARAM_PUB_KEY)) &&
           ((selection & MBP_SEL_PRIV) == 0 || other_has(k, OSSL_PKEY_PARAM_PRIV_KEY));
}

static int other_validate(const struct mbp_ec_key *k, int selection)
{
    return other_has_sel(k, selection) && mbp_other_validate(k->pc, k->other, selection);
}

/* ------------------------------------------------------------ key data */

static int ec_has(const void *keydata, int selection)
{
    const struct mbp_ec_key *k = keydata;
    if (k == NULL) {
        return 0;
    }
    if (k->other != NULL) {
        return other_has_sel(k, selection);
    }
    return ((selection & MBP_SEL_DOMAIN) == 0 || k->curve != 0) &&
           ((selection & MBP_SEL_PUB) == 0 || k->pub != NULL) &&
           ((selection & MBP_SEL_PRIV) == 0 || k->priv != NULL);
}

static int ec_match(const void *a, const void *b, int selection)
{
    const struct mbp_ec_key *x = a, *y = b;
    if (x->other != NULL || y->other != NULL) {
        if (x->other == NULL || y->other == NULL) {
            return 0;
        }
        return ((selection & MBP_SEL_KEYPAIR) != 0
                    ? EVP_PKEY_eq(x->other, y->other)
                    : EVP_PKEY_parameters_eq(x->other, y->other)) == 1;
    }
    if (x->curve != y->curve) {
        return 0;
    }
    if ((selection & MBP_SEL_KEYPAIR) == 0) {
        return 1;
    }
    if ((selection & MBP_SEL_PUB) != 0 || (x->pub != NULL && y->pub != NULL)) {
        return x->pub != NULL && y->pub != NULL &&
               memcmp(x->point, y->point, mbc_ec_point_len(x->curve)) == 0;
    }
    return x->priv != NULL && y->priv != NULL &&
           CRYPTO_memcmp(x->d, y->d, mbc_ec_scalar_len(x->curve)) == 0;
}

/* from_params: k from params (selection as import's); 1 when the key was
 * built. Nothing is kept on failure. */
static int from_params(struct mbp_ec_key *k, int selection, const OSSL_PARAM params[])
{
    mbc_curve c = 0;
    clear_keys(k);
    k->curve = 0;
    if (!formats_ok(params) || get_curve(params, &c) != 1) {
        return 0;
    }
    k->curve = c;
    const OSSL_PARAM *pp = OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_PUB_KEY);
    const OSSL_PARAM *dp = (selection & MBP_SEL_PRIV) != 0
                               ? OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_PRIV_KEY)
                               : NULL;
    const void *enc = NULL;
    size_t enc_len = 0;
    uint8_t ubuf[MBP_EC_POINT_MAX], form = MBP_EC_UNCOMPRESSED, enc_form;
    const uint8_t *point = NULL;
    const size_t point_len = mbc_ec_point_len(c);
    if (pp != NULL && (!OSSL_PARAM_get_octet_string_ptr(pp, &enc, &enc_len) ||
                       !decode_point(k, ubuf, &enc_form, enc, enc_len))) {
        k->curve = 0;
        return 0;
    }
    point = pp != NULL ? ubuf : NULL;
    get_form(params, &form);
    k->form = k->gform = form;
    int ok = 1;
    if (dp != NULL) {
        BIGNUM *bn = NULL;
        uint8_t d[MBP_EC_SCALAR_MAX];
        const size_t slen = mbc_ec_scalar_len(c);
        ok = OSSL_PARAM_get_BN(dp, &bn) && BN_bn2binpad(bn, d, (int)slen) == (int)slen &&
             set_pair(k, d, point, point_len, 0);
        BN_clear_free(bn);
        OPENSSL_cleanse(d, sizeof(d));
    } else if (point != NULL && (selection & MBP_SEL_KEYPAIR) != 0) {
        ok = set_pub(k, point, point_len);
    } else if ((selection & MBP_SEL_KEYPAIR) != 0 && (selection & MBP_SEL_DOMAIN) == 0) {
        ok = 0; /* a key was asked for and none is there */
    }
    if (!ok) {
        clear_keys(k);
        k->curve = 0;
    }
    return ok;
}

/* ours: 1 when params are of our curves, in our formats. */
static int ours(const OSSL_PARAM params[])
{
    mbc_curve c;
    return get_curve(params, &c) >= 0 && formats_ok(params);
}

static int ec_import(void *keydata, int selection, const OSSL_PARAM params[])
{
    struct mbp_ec_key *k = keydata;
    if (k == NULL || k->other != NULL || (selection & (MBP_SEL_KEYPAIR | MBP_SEL_DOMAIN)) == 0) {
        return 0;
    }
    if (!ours(params)) {
        clear_keys(k);
        k->curve = 0;
        k->other = mbp_other_import(k->pc, "EC", selection, params);
        mbo_count(MBO_CTR_EC_OTHER, 1);
        return k->other != NULL;
    }
    const int ok = from_params(k, selection, params);
    if (!ok) {
        mbo_count(MBO_CTR_EC_REFUSED, 1);
    } else if (k->pub != NULL) {
        mbo_count(MBO_CTR_EC_KEYS, 1);
    }
    return ok;
}

/* to_params: k's group, public key and (with_priv) private key. */
static OSSL_PARAM *to_params(const struct mbp_ec_key *k, int with_priv)
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    BIGNUM *d = NULL;
    if (bld == NULL) {
        return NULL;
    }
    const size_t slen = mbc_ec_scalar_len(k->curve);
    uint8_t enc[MBP_EC_POINT_MAX];
    int ok = OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
                                             curves[curve_index(k->curve)].names[0], 0) &&
             OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                             form_names[k->gform], 0);
    if (ok && k->pub != NULL) {
        ok = OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, enc,
                                              encode_point(k, enc, k->form));
    }
    if (ok && with_priv && k->priv != NULL) {
        ok = (d = BN_secure_new()) != NULL && BN_bin2bn(k->d, (int)slen, d) != NULL &&
             OSSL_PARAM_BLD_push_BN_pad(bld, OSSL_PKEY_PARAM_PRIV_KEY, d, slen);
    }
    OSSL_PARAM *params = ok ? OSSL_PARAM_BLD_to_param(bld) : NULL;
    BN_clear_free(d);
    OSSL_PARAM_BLD_free(bld);
    return params;
}

EVP_PKEY *mbp_ec_other(const struct mbp_ec_key *k)
{
    if (k->other != NULL) {
        return EVP_PKEY_up_ref(k->other) ? k->other : NULL;
    }
    OSSL_PARAM *params = k->curve != 0 ? to_params(k, 1) : NULL;
    EVP_PKEY *o =
        params != NULL ? mbp_other_import(k->pc, "EC", OSSL_KEYMGMT_SELECT_ALL, params) : NULL;
    mbp_params_clear_free(params);
    return o;
}

EVP_PKEY *mbp_ec_sync(const struct mbp_ec_key *k)
{
    EVP_PKEY **slot = (EVP_PKEY **)&k->sync; /* a cache: the key's value stays */
    EVP_PKEY *o = mbp_sync_keep(slot, NULL);
    return o != NULL ? o : mbp_sync_keep(slot, mbp_ec_other(k));
}

static int ec_export(void *keydata, int selection, OSSL_CALLBACK *cb, void *cbarg)
{
    const struct mbp_ec_key *k = keydata;
    if (k != NULL && k->other != NULL) {
        return EVP_PKEY_export(k->other, selection, cb, cbarg);
    }
    if (k == NULL || k->curve == 0 || (selection & (MBP_SEL_KEYPAIR | MBP_SEL_DOMAIN)) == 0) {
        return 0;
    }
    OSSL_PARAM *params = to_params(k, (selection & MBP_SEL_PRIV) != 0);
    const int ok = params != NULL && cb(params, cbarg);
    mbp_params_clear_free(params);
    return ok;
}

static const OSSL_PARAM key_types[] = {
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, NULL, 0),
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_PRIV_KEY, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *ec_key_types(int selection)
{
    return (selection & (MBP_SEL_KEYPAIR | MBP_SEL_DOMAIN)) != 0 ? key_types : NULL;
}

size_t mbp_ec_sig_max(mbc_curve curve)
{
    return 2 + 2 * (2 + mbc_ec_scalar_len(curve) + 1);
}

static int ec_get_params(void *keydata, OSSL_PARAM params[])
{
    const struct mbp_ec_key *k = keydata;
    if (k != NULL && k->other != NULL) {
        return EVP_PKEY_get_params(k->other, params);
    }
    if (k == NULL || k->curve == 0) {
        return 0;
    }
    const size_t i = curve_index(k->curve), slen = mbc_ec_scalar_len(k->curve);
    if (!mbp_key_sizes(params, curves[i].bits, curves[i].secbits, (int)mbp_ec_sig_max(k->curve)) ||
        !mbp_set_str(params, OSSL_PKEY_PARAM_DEFAULT_DIGEST, "SHA256") ||
        !mbp_set_str(params, OSSL_PKEY_PARAM_GROUP_NAME, curves[i].names[0]) ||
        !mbp_set_str(params, OSSL_PKEY_PARAM_EC_ENCODING, OSSL_PKEY_EC_ENCODING_GROUP) ||
        !mbp_set_str(params, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, form_names[k->form])) {
        return 0;
    }
    /* encoded-pub-key: uncompressed, whatever the format (as OpenSSL's). */
    const char *pubs[] = {OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, OSSL_PKEY_PARAM_PUB_KEY};
    OSSL_PARAM *p;
    uint8_t enc[MBP_EC_POINT_MAX];
    for (size_t j = 0; j < 2 && k->pub != NULL; j++) {
        if ((p = OSSL_PARAM_locate(params, pubs[j])) != NULL &&
            !OSSL_PARAM_set_octet_string(
                p, enc, encode_point(k, enc, j == 0 ? MBP_EC_UNCOMPRESSED : k->form))) {
            return 0;
        }
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_PKEY_PARAM_PRIV_KEY)) != NULL && k->priv != NULL) {
        BIGNUM *d = BN_secure_new();
        const int ok =
            d != NULL && BN_bin2bn(k->d, (int)slen, d) != NULL && OSSL_PARAM_set_BN(p, d);
        BN_clear_free(d);
        if (!ok) {
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
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_EC_ENCODING, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, NULL, 0),
    OSSL_PARAM_BN(OSSL_PKEY_PARAM_PRIV_KEY, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *ec_gettable_params(void *provctx)
{
    (void)provctx;
    return gettable;
}

/* ec_set_params: encoded-pub-key (a peer's key share, in any point
 * format) makes k that public key alone, with its format as the key's;
 * point-format sets both formats; another encoding is refused. */
static int ec_set_params(void *keydata, const OSSL_PARAM params[])
{
    struct mbp_ec_key *k = keydata;
    if (k->other != NULL) {
        return EVP_PKEY_set_params(k->other, (OSSL_PARAM *)params);
    }
    if (!formats_ok(params)) {
        mbp_err(k->pc, MBP_R_BAD_PARAM, "only named curves and known point formats");
        return 0;
    }
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY);
    const void *enc;
    size_t len;
    uint8_t point[MBP_EC_POINT_MAX], form;
    if (p != NULL) {
        if (!OSSL_PARAM_get_octet_string_ptr(p, &enc, &len) ||
            !decode_point(k, point, &form, enc, len) ||
            !set_pub(k, point, mbc_ec_point_len(k->curve))) {
            mbp_err(k->pc, MBP_R_BAD_KEY, "public key not a point of the curve");
            return 0;
        }
        k->form = form;
    }
    if (get_form(params, &form) > 0) {
        k->form = k->gform = form;
    }
    return 1;
}

static const OSSL_PARAM settable[] = {
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_EC_ENCODING, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *ec_settable_params(void *provctx)
{
    (void)provctx;
    return settable;
}

/* ec_validate: public keys were validated when set; a pair must agree. */
static int ec_validate(const void *keydata, int selection, int checktype)
{
    (void)checktype;
    const struct mbp_ec_key *k = keydata;
    if (k != NULL && k->other != NULL) {
        return other_validate(k, selection);
    }
    if (!ec_has(k, selection) || k->curve == 0) {
        return 0;
    }
    if ((selection & MBP_SEL_KEYPAIR) != MBP_SEL_KEYPAIR) {
        return 1;
    }
    uint8_t point[MBP_EC_POINT_MAX];
    const size_t plen = mbc_ec_point_len(k->curve);
    return mbc_ec_priv_key_public(k->priv, point, sizeof(point)) == MBC_OK &&
           memcmp(point, k->point, plen) == 0;
}

static void *ec_dup(const void *keydata, int selection)
{
    const struct mbp_ec_key *src = keydata;
    struct mbp_ec_key *k = ec_new(src->pc);
    if (k == NULL) {
        return NULL;
    }
    k->curve = src->curve;
    k->form = src->form;
    k->gform = src->gform;
    int ok = 1;
    if (src->other != NULL) {
        ok = (k->other = EVP_PKEY_dup(src->other)) != NULL;
    } else if ((selection & MBP_SEL_PRIV) != 0 && src->priv != NULL) {
        ok = set_pair(k, src->d, src->point, mbc_ec_point_len(src->curve), 1);
    } else if ((selection & MBP_SEL_PUB) != 0 && src->pub != NULL) {
        ok = set_pub(k, src->point, mbc_ec_point_len(src->curve));
    }
    if (!ok) {
        ec_free(k);
        return NULL;
    }
    return k;
}

static const char *ec_query_operation_name(int operation_id)
{
    switch (operation_id) {
    case OSSL_OP_KEYEXCH:
        return "ECDH";
    case OSSL_OP_SIGNATURE:
        return "ECDSA";
    default:
        return NULL;
    }
}

/* ------------------------------------------------------------ generation */

struct ecgen {
    struct mbp_ctx *pc;
    int selection;
    OSSL_PARAM *params; /* every parameter set (a copy), NULL for none */
    mbc_curve tcurve;   /* the template's curve, when it is ours */
    EVP_PKEY *template; /* the template's key, when it is another curve's */
};

/* ec_gen_set_params: keeps every parameter; ec_gen decides. */
static int ec_gen_set_params(void *genctx, const OSSL_PARAM params[])
{
    struct ecgen *g = genctx;
    return mbp_params_merge(&g->params, params);
}

static void ec_gen_cleanup(void *genctx)
{
    struct ecgen *g = genctx;
    if (g != NULL) {
        mbp_params_clear_free(g->params);
        EVP_PKEY_free(g->template);
        OPENSSL_free(g);
    }
}

static void *ec_gen_init(void *provctx, int selection, const OSSL_PARAM params[])
{
    struct ecgen *g = OPENSSL_zalloc(sizeof(*g));
    if (g == NULL) {
        return NULL;
    }
    g->pc = provctx;
    g->selection = selection;
    if (!ec_gen_set_params(g, params)) {
        ec_gen_cleanup(g);
        return NULL;
    }
    return g;
}

/* ec_gen_set_template: the group of templ (libssl's key share for a peer's
 * group is made from the peer's key). */
static int ec_gen_set_template(void *genctx, void *templ)
{
    struct ecgen *g = genctx;
    const struct mbp_ec_key *t = templ;
    if (t == NULL || (t->other == NULL && t->curve == 0) ||
        (t->other != NULL && !EVP_PKEY_up_ref(t->other))) {
        return 0;
    }
    EVP_PKEY_free(g->template);
    g->template = t->other;
    g->tcurve = t->curve;
    return 1;
}

static const OSSL_PARAM gen_settable[] = {
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_EC_ENCODING, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *ec_gen_settable_params(void *genctx, void *provctx)
{
    (void)genctx;
    (void)provctx;
    return gen_settable;
}

/* ec_gen: a key pair of the group from mbcrypto, or the group alone when
 * only parameters were asked for; for anything but our named curves (the
 * group set, else the template's), another provider's key. */
static void *ec_gen(void *genctx, OSSL_CALLBACK *cb, void *cbarg)
{
    struct ecgen *g = genctx;
    mbc_curve curve = 0;
    const int r = get_curve(g->params, &curve);
    const int mine = formats_ok(g->params) && (r > 0 || (r == 0 && g->tcurve != 0));
    if (r == 0) {
        curve = g->tcurve;
    }
    if (r == 0 && g->tcurve == 0 && g->template == NULL) {
        mbp_err(g->pc, MBP_R_BAD_PARAM, "no group");
        return NULL;
    }
    struct mbp_ec_key *k = ec_new(g->pc);
    if (k == NULL) {
        return NULL;
    }
    if (!mine) {
        if ((k->other = mbp_other_gen(g->pc, "EC", g->selection, g->params,
                                      r == 0 ? g->template : NULL, cb, cbarg)) == NULL) {
            mbp_err(g->pc, MBP_R_BAD_PARAM, "the other provider could not generate this key");
            ec_free(k);
            return NULL;
        }
        mbo_count(MBO_CTR_EC_OTHER, 1);
        return k;
    }
    k->curve = curve;
    /* The asked point format is the parameters' (OpenSSL's group's); the
     * key's own stays uncompressed, as the default provider's. */
    get_form(g->params, &k->gform);
    if ((g->selection & MBP_SEL_KEYPAIR) == 0) {
        return k;
    }
    uint8_t d[MBP_EC_SCALAR_MAX], point[MBP_EC_POINT_MAX];
    const mbc_err err = mbo_ec_keygen(curve, d, point);
    const int ok = err == MBC_OK && set_pair(k, d, point, mbc_ec_point_len(curve), 1);
    OPENSSL_cleanse(d, sizeof(d));
    if (!ok) {
        mbp_err(g->pc, MBP_R_MBCRYPTO, "%s", mbc_err_str(err != MBC_OK ? err : MBC_ERR_FAULT));
        ec_free(k);
        return NULL;
    }
    return k;
}

const OSSL_DISPATCH mbp_ec_keymgmt[] = {
    {OSSL_FUNC_KEYMGMT_NEW, (void (*)(void))ec_new},
    {OSSL_FUNC_KEYMGMT_FREE, (void (*)(void))ec_free},
    {OSSL_FUNC_KEYMGMT_HAS, (void (*)(void))ec_has},
    {OSSL_FUNC_KEYMGMT_MATCH, (void (*)(void))ec_match},
    {OSSL_FUNC_KEYMGMT_VALIDATE, (void (*)(void))ec_validate},
    {OSSL_FUNC_KEYMGMT_IMPORT, (void (*)(void))ec_import},
    {OSSL_FUNC_KEYMGMT_IMPORT_TYPES, (void (*)(void))ec_key_types},
    {OSSL_FUNC_KEYMGMT_EXPORT, (void (*)(void))ec_export},
    {OSSL_FUNC_KEYMGMT_EXPORT_TYPES, (void (*)(void))ec_key_types},
    {OSSL_FUNC_KEYMGMT_GET_PARAMS, (void (*)(void))ec_get_params},
    {OSSL_FUNC_KEYMGMT_GETTABLE_PARAMS, (void (*)(void))ec_gettable_params},
    {OSSL_FUNC_KEYMGMT_SET_PARAMS, (void (*)(void))ec_set_params},
    {OSSL_FUNC_KEYMGMT_SETTABLE_PARAMS, (void (*)(void))ec_settable_params},
    {OSSL_FUNC_KEYMGMT_GEN_INIT, (void (*)(void))ec_gen_init},
    {OSSL_FUNC_KEYMGMT_GEN_SET_TEMPLATE, (void (*)(void))ec_gen_set_template},
    {OSSL_FUNC_KEYMGMT_GEN_SET_PARAMS, (void (*)(void))ec_gen_set_params},
    {OSSL_FUNC_KEYMGMT_GEN_SETTABLE_PARAMS, (void (*)(void))ec_gen_settable_params},
    {OSSL_FUNC_KEYMGMT_GEN, (void (*)(void))ec_gen},
    {OSSL_FUNC_KEYMGMT_GEN_CLEANUP, (void (*)(void))ec_gen_cleanup},
    {OSSL_FUNC_KEYMGMT_QUERY_OPERATION_NAME, (void (*)(void))ec_query_operation_name},
    {OSSL_FUNC_KEYMGMT_DUP, (void (*)(void))ec_dup},
    {0, NULL},
};
