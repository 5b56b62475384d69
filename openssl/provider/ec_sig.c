/*
 * ec_sig.c - ECDSA on P-256 and P-384 ("ECDSA" signatures on our "EC"
 * keys): sign and verify a digest, or a message digested here (EVP digests
 * of the child library context), as OpenSSL does: signatures are the DER
 * ECDSA-Sig-Value (SEQUENCE of INTEGER r, s); mbcrypto computes r || s
 * through mbo_ecdsa_sign / mbo_ecdsa_verify (the thread's lane manager:
 * batched inside an ASYNC job). Verification accepts only the DER encoding
 * itself (no trailing bytes, no other BER form), as OpenSSL's. A digest
 * longer than 64 bytes is cut to its first 64: ECDSA uses only the
 * leftmost bits of the order's length (at most 384 here). Keys of other
 * curves (held by another provider, ec_kmgmt.c) sign and verify there
 * (other.c: the whole operation, its parameters included).
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/params.h>

#include "prov.h"

#define MAX_DGST 64 /* what mbcrypto takes */

struct ecsig {
    struct mbp_sigctx b;          /* first: md NULL means no digest set (any digest length) */
    const struct mbp_ec_key *key; /* not owned */
    int signing;
    int fed; /* digest-and-sign: data digested by us */
};

/* The nonce-type parameter (OSSL_SIGNATURE_PARAM_NONCE_TYPE of OpenSSL
 * 3.2's headers): 0 random nonces, 1 RFC 6979's deterministic ones. The
 * default provider takes it from 3.2 on; mbcrypto draws random nonces, so
 * a deterministic signature is the default provider's (go_other). */
#define NONCE_TYPE "nonce-type"
static int have_nonce_type(void)
{
    return OpenSSL_version_num() >= 0x30200000UL;
}

static void *es_newctx(void *provctx, const char *propq)
{
    return mbp_sigctx_new(provctx, propq, sizeof(struct ecsig));
}

static void es_freectx(void *ctx)
{
    mbp_sigctx_free(ctx);
}

static void *es_dupctx(void *ctx)
{
    return mbp_sigctx_dup(ctx, sizeof(struct ecsig), NULL, es_freectx);
}

static int es_set_ctx_params(void *ctx, const OSSL_PARAM params[]);

/* es_init: s for signing or verifying with keydata; digest: for a
 * digest-and-sign (params are then the caller's to set). A key of another
 * provider's signs there (mbp_other_sig_init). */
static int es_init(struct ecsig *s, void *keydata, const OSSL_PARAM params[], int signing,
                   int digest)
{
    const struct mbp_ec_key *k = keydata;
    if (k == NULL || (k->other == NULL && (k->pub == NULL || (signing && k->priv == NULL)))) {
        mbp_err(s->b.pc, MBP_R_BAD_KEY, signing ? "no private key" : "no public key");
        return 0;
    }
    s->key = k;
    s->signing = signing;
    s->fed = 0;
    EVP_MD_free(s->b.md);
    s->b.md = NULL;
    EVP_MD_CTX_free(s->b.mdctx);
    s->b.mdctx = NULL;
    mbp_other_sig_reset(&s->b);
    if (k->other != NULL && !digest) {
        return mbp_other_sig_init(&s->b, k->other, signing, 0, NULL, params);
    }
    return es_set_ctx_params(s, params);
}

static int es_sign_init(void *ctx, void *keydata, const OSSL_PARAM params[])
{
    return es_init(ctx, keydata, params, 1, 0);
}

static int es_verify_init(void *ctx, void *keydata, const OSSL_PARAM params[])
{
    return es_init(ctx, keydata, params, 0, 0);
}

/* check_dgst: with a digest set, tbs must be one of its length (a digest
 * without a size, 3.0's NULL, checks none: as the default provider). */
static int check_dgst(struct ecsig *s, size_t tbslen)
{
    const int size = s->b.md != NULL ? EVP_MD_get_size(s->b.md) : 0;
    if (size > 0 && tbslen != (size_t)size) {
        mbp_err(s->b.pc, MBP_R_BAD_LENGTH, "digest of %zu bytes", tbslen);
        return 0;
    }
    return 1;
}

/* hand_off: whether a request of op (sign, verify) with s's key goes to
 * the default provider (mbo_hand_off); handed: the default provider's
 * operation on our key for s (made at the first handed-off request after
 * init), NULL when there is none (no other provider: ours runs then). */
static int hand_off(const struct ecsig *s, mbc_job_op op)
{
    return mbo_hand_off(MBC_ALG_EC, op, 8 * (unsigned)mbc_ec_scalar_len(s->key->curve));
}

static EVP_PKEY_CTX *handed(struct ecsig *s)
{
    return mbp_sync_op(s->b.pc, &s->b.sync, mbp_ec_sync(s->key),
                       s->signing ? MBP_SYNC_SIGN : MBP_SYNC_VERIFY, NULL);
}

static int es_sign(void *ctx, unsigned char *sig, size_t *siglen, size_t sigsize,
                   const unsigned char *tbs, size_t tbslen)
{
    struct ecsig *s = ctx;
    if (s->key == NULL || !s->signing) {
        mbp_err(s->b.pc, MBP_R_INIT, "sign");
        return 0;
    }
    if (s->b.other != NULL) {
        return mbp_other_sig_sign(&s->b, sig, siglen, sigsize, tbs, tbslen);
    }
    if (sig == NULL) {
        *siglen = mbp_ec_sig_max(s->key->curve);
        return 1;
    }
    if (!check_dgst(s, tbslen)) {
        return 0;
    }
    EVP_PKEY_CTX *h = hand_off(s, MBC_OP_ECDSA_SIGN) ? handed(s) : NULL;
    if (h != NULL) {
        *siglen = sigsize;
        if (EVP_PKEY_sign(h, sig, siglen, tbs, tbslen) == 1) {
            return 1;
        }
        *siglen = 0;
        return 0; /* the default provider's error */
    }
    const size_t slen = mbc_ec_scalar_len(s->key->curve);
    uint8_t rs[2 * MBP_EC_SCALAR_MAX];
    const mbc_err err =
        mbo_ecdsa_sign(s->key->priv, rs, tbs, tbslen < MAX_DGST ? tbslen : MAX_DGST);
    if (err != MBC_OK) {
        mbp_err(s->b.pc, MBP_R_MBCRYPTO, "%s", mbc_err_str(err));
        return 0;
    }
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(rs, (int)slen, NULL), *sv = BN_bin2bn(rs + slen, (int)slen, NULL);
    int ok = es != NULL && r != NULL && sv != NULL && ECDSA_SIG_set0(es, r, sv);
    if (!ok) {
        BN_free(r);
        BN_free(sv);
    }
    const int len = ok ? i2d_ECDSA_SIG(es, NULL) : -1;
    ok = len > 0 && (size_t)len <= sigsize;
    if (ok) {
        unsigned char *p = sig;
        ok = i2d_ECDSA_SIG(es, &p) == len;
    } else if (len > 0) {
        mbp_err(s->b.pc, MBP_R_BAD_LENGTH, "signature buffer of %zu bytes", sigsize);
    }
    ECDSA_SIG_free(es);
    *siglen = ok ? (size_t)len : 0;
    return ok;
}

/* der_to_rs: r || s (slen bytes each) of the DER signature; 0 when it is
 * not exactly the DER encoding of two integers in range. */
static int der_to_rs(const unsigned char *sig, size_t siglen, size_t slen, uint8_t *rs)
{
    const unsigned char *p = sig;
    ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)siglen);
    unsigned char *der = NULL;
    int ok = es != NULL && (size_t)(p - sig) == siglen;
    if (ok) {
        const int len = i2d_ECDSA_SIG(es, &der);
        ok = len > 0 && (size_t)len == siglen && memcmp(der, sig, siglen) == 0;
    }
    if (ok) {
        const BIGNUM *r, *s;
        ECDSA_SIG_get0(es, &r, &s);
        ok = !BN_is_negative(r) && !BN_is_negative(s) &&
             BN_bn2binpad(r, rs, (int)slen) == (int)slen &&
             BN_bn2binpad(s, rs + slen, (int)slen) == (int)slen;
    }
    OPENSSL_free(der);
    ECDSA_SIG_free(es);
    return ok;
}

static int es_verify(void *ctx, const unsigned char *sig, size_t siglen, const unsigned char *tbs,
                     size_t tbslen)
{
    struct ecsig *s = ctx;
    if (s->key == NULL || s->signing) {
        mbp_err(s->b.pc, MBP_R_INIT, "verify");
        return 0;
    }
    if (s->b.other != NULL) {
        return mbp_other_sig_verify(&s->b, sig, siglen, tbs, tbslen);
    }
    if (!check_dgst(s, tbslen)) {
        return 0;
    }
    uint8_t rs[2 * MBP_EC_SCALAR_MAX];
    EVP_PKEY_CTX *h = hand_off(s, MBC_OP_ECDSA_VERIFY) ? handed(s) : NULL;
    const int ok = h != NULL
                       ? EVP_PKEY_verify(h, sig, siglen, tbs, tbslen) == 1
                       : der_to_rs(sig, siglen, mbc_ec_scalar_len(s->key->curve), rs) &&
                             mbo_ecdsa_verify(s->key->pub, rs, tbs,
                                              tbslen < MAX_DGST ? tbslen : MAX_DGST) == MBC_OK;
    if (!ok) {
        mbp_err(s->b.pc, MBP_R_BAD_SIGNATURE, NULL);
    }
    return ok;
}

/* fetch_md: s's digest = name, if the default provider signs with it
 * (mbp_ecdsa_md_ok: 3.5 refuses SHAKE, and so do we). */
static int fetch_md(struct ecsig *s, const char *name, const char *props)
{
    EVP_MD *m = NULL;
    if (!mbp_fetch_md(s->b.pc, &m, name, props, s->b.propq)) {
        return 0;
    }
    if (!mbp_ecdsa_md_ok(m)) {
        mbp_err(s->b.pc, MBP_R_BAD_DIGEST, "digest=%s not allowed", name);
        EVP_MD_free(m);
        return 0;
    }
    EVP_MD_free(s->b.md);
    s->b.md = m;
    return 1;
}

/* ------------------------------------------------ digest and sign/verify */

static int digest_init(void *ctx, const char *mdname, void *keydata, const OSSL_PARAM params[],
                       int signing)
{
    struct ecsig *s = ctx;
    if (!es_init(s, keydata, NULL, signing, 1)) {
        return 0;
    }
    if (s->key->other != NULL) {
        return mbp_other_sig_init(&s->b, s->key->other, signing, 1, mdname, params);
    }
    if (!fetch_md(s, mdname != NULL ? mdname : "SHA256", NULL) ||
        (s->b.mdctx = EVP_MD_CTX_new()) == NULL || !EVP_DigestInit_ex2(s->b.mdctx, s->b.md, NULL)) {
        return 0;
    }
    return es_set_ctx_params(s, params);
}

static int es_digest_sign_init(void *ctx, const char *mdname, void *keydata,
                               const OSSL_PARAM params[])
{
    return digest_init(ctx, mdname, keydata, params, 1);
}

static int es_digest_verify_init(void *ctx, const char *mdname, void *keydata,
                                 const OSSL_PARAM params[])
{
    return digest_init(ctx, mdname, keydata, params, 0);
}

static int es_digest_update(void *ctx, const unsigned char *data, size_t len)
{
    struct ecsig *s = ctx;
    if (s->b.other != NULL) {
        return mbp_other_sig_update(&s->b, data, len);
    }
    s->fed = 1;
    return s->b.mdctx != NULL && EVP_DigestUpdate(s->b.mdctx, data, len);
}

static int es_digest_sign_final(void *ctx, unsigned char *sig, size_t *siglen, size_t sigsize)
{
    struct ecsig *s = ctx;
    if (s->b.other != NULL) {
        return mbp_other_sig_sign_final(&s->b, sig, siglen, sigsize);
    }
    return mbp_digest_sign_final(s, s->b.mdctx, es_sign, sig, siglen, sigsize);
}

static int es_digest_verify_final(void *ctx, const unsigned char *sig, size_t siglen)
{
    struct ecsig *s = ctx;
    if (s->b.other != NULL) {
        return mbp_other_sig_verify_final(&s->b, sig, siglen);
    }
    return mbp_digest_verify_final(s, s->b.mdctx, es_verify, sig, siglen);
}

/* ------------------------------------------------------------ parameters */

/* go_other: s's operation from here on is the default provider's on a copy
 * of our key (with s's digest), then params; before any data only. */
static int go_other(struct ecsig *s, const OSSL_PARAM params[])
{
    if (s->fed) {
        mbp_err(s->b.pc, MBP_R_BAD_PARAM, "nonce-type set after the data");
        return 0;
    }
    const int digest = s->b.mdctx != NULL;
    const char *mdname = s->b.md != NULL ? EVP_MD_get0_name(s->b.md) : NULL;
    OSSL_PARAM mdp[] = {OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, (char *)mdname,
                                               mdname != NULL ? strlen(mdname) : 0),
                        OSSL_PARAM_END};
    EVP_PKEY *o = mbp_ec_other(s->key);
    const int ok = o != NULL && mbp_other_sig_init(&s->b, o, s->signing, digest, mdname, NULL) &&
                   (digest || mdname == NULL || mbp_other_sig_set_params(&s->b, mdp)) &&
                   mbp_other_sig_set_params(&s->b, params);
    EVP_PKEY_free(o);
    if (!ok) {
        mbp_other_sig_reset(&s->b);
    }
    return ok;
}

static int es_set_ctx_params(void *ctx, const OSSL_PARAM params[])
{
    struct ecsig *s = ctx;
    if (s->b.other != NULL) {
        return mbp_other_sig_set_params(&s->b, params);
    }
    const OSSL_PARAM *np = have_nonce_type() ? OSSL_PARAM_locate_const(params, NONCE_TYPE) : NULL;
    unsigned nonce_type = 0;
    if (np != NULL && !OSSL_PARAM_get_uint(np, &nonce_type)) {
        return 0;
    }
    if (nonce_type != 0) {
        return go_other(s, params);
    }
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, OSSL_SIGNATURE_PARAM_DIGEST);
    if (p == NULL) {
        return 1;
    }
    const char *name = NULL, *props = NULL;
    const OSSL_PARAM *pp = OSSL_PARAM_locate_const(params, OSSL_SIGNATURE_PARAM_PROPERTIES);
    if (s->b.mdctx != NULL || !OSSL_PARAM_get_utf8_string_ptr(p, &name) ||
        (pp != NULL && !OSSL_PARAM_get_utf8_string_ptr(pp, &props))) {
        return 0;
    }
    return fetch_md(s, name, props);
}

static int es_get_ctx_params(void *ctx, OSSL_PARAM params[])
{
    struct ecsig *s = ctx;
    OSSL_PARAM *p;
    if (s->b.other != NULL) {
        return mbp_other_sig_get_params(&s->b, params);
    }
    if (have_nonce_type() && (p = OSSL_PARAM_locate(params, NONCE_TYPE)) != NULL &&
        !OSSL_PARAM_set_uint(p, 0)) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_DIGEST)) != NULL &&
        !OSSL_PARAM_set_utf8_string(p, s->b.md != NULL ? EVP_MD_get0_name(s->b.md) : "")) {
        return 0;
    }
    /* ecdsa-with-SHA256 and the like (SHA-3 too, which OpenSSL 3.0's own
     * tables lack), without parameters. */
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_ALGORITHM_ID)) != NULL) {
        const struct mbp_md_row *row = mbp_md_row_of(s->b.md);
        if (!mbp_algorithm_id(s->b.pc, p, row != NULL ? row->ecdsa_sig : NID_undef, V_ASN1_UNDEF,
                              NULL)) {
            return 0;
        }
    }
    return 1;
}

/* The parameter lists, nonce-type first: it is left out before OpenSSL 3.2
 * by starting one further. A delegated operation's are the other
 * provider's. */
static const OSSL_PARAM settable[] = {
    OSSL_PARAM_uint(NONCE_TYPE, NULL),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PROPERTIES, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM gettable[] = {
    OSSL_PARAM_uint(NONCE_TYPE, NULL),
    OSSL_PARAM_octet_string(OSSL_SIGNATURE_PARAM_ALGORITHM_ID, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *es_settable_ctx_params(void *ctx, void *provctx)
{
    (void)provctx;
    const struct ecsig *s = ctx;
    return mbp_other_sig_settable(s != NULL ? &s->b : NULL, settable + !have_nonce_type());
}

static const OSSL_PARAM *es_gettable_ctx_params(void *ctx, void *provctx)
{
    (void)provctx;
    const struct ecsig *s = ctx;
    return mbp_other_sig_gettable(s != NULL ? &s->b : NULL, gettable + !have_nonce_type());
}

const OSSL_DISPATCH mbp_ecdsa_signature[] = {
    {OSSL_FUNC_SIGNATURE_NEWCTX, (void (*)(void))es_newctx},
    {OSSL_FUNC_SIGNATURE_FREECTX, (void (*)(void))es_freectx},
    {OSSL_FUNC_SIGNATURE_DUPCTX, (void (*)(void))es_dupctx},
    {OSSL_FUNC_SIGNATURE_SIGN_INIT, (void (*)(void))es_sign_init},
    {OSSL_FUNC_SIGNATURE_SIGN, (void (*)(void))es_sign},
    {OSSL_FUNC_SIGNATURE_VERIFY_INIT, (void (*)(void))es_verify_init},
    {OSSL_FUNC_SIGNATURE_VERIFY, (void (*)(void))es_verify},
    {OSSL_FUNC_SIGNATURE_DIGEST_SIGN_INIT, (void (*)(void))es_digest_sign_init},
    {OSSL_FUNC_SIGNATURE_DIGEST_SIGN_UPDATE, (void (*)(void))es_digest_update},
    {OSSL_FUNC_SIGNATURE_DIGEST_SIGN_FINAL, (void (*)(void))es_digest_sign_final},
    {OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_INIT, (void (*)(void))es_digest_verify_init},
    {OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_UPDATE, (void (*)(void))es_digest_update},
    {OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_FINAL, (void (*)(void))es_digest_verify_final},
    {OSSL_FUNC_SIGNATURE_GET_CTX_PARAMS, (void (*)(void))es_get_ctx_params},
    {OSSL_FUNC_SIGNATURE_GETTABLE_CTX_PARAMS, (void (*)(void))es_gettable_ctx_params},
    {OSSL_FUNC_SIGNATURE_SET_CTX_PARAMS, (void (*)(void))es_set_ctx_params},
    {OSSL_FUNC_SIGNATURE_SETTABLE_CTX_PARAMS, (void (*)(void))es_settable_ctx_params},
    {0, NULL},
};
