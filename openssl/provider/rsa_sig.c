/*
 * rsa_sig.c - RSA signatures: PKCS#1 v1.5 (with a digest's DigestInfo, or
 * raw data without one) and PSS with MGF1, sign and verify, plain (the caller
 * gives the digest) and with the message digested here (EVP digests of the
 * child library context). The RSA operation runs through openssl/common's
 * mbo_rsa_private / mbo_rsa_public: batched and paused inside an ASYNC job,
 * at once outside one. Keys mbcrypto does not serve, held by another
 * provider (rsa_kmgmt.c), sign and verify there: the whole operation, its
 * parameters included (other.c).
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/params.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "prov.h"
#include "rsa_pad.h"

#define MAX_K 512 /* 4096-bit modulus */

struct sig {
    struct mbp_sigctx b;     /* first: md NULL means PKCS#1 v1.5 on raw data */
    struct mbp_rsa_key *key; /* the operation's key (not owned) */
    int signing;
    int pad;        /* RSA_PKCS1_PADDING, RSA_NO_PADDING, RSA_PKCS1_PSS_PADDING */
    uint8_t di[32]; /* the DigestInfo header of md (PKCS#1 v1.5) */
    size_t di_len;
    EVP_MD *mgf1; /* PSS; NULL: md */
    int saltlen;  /* PSS, OpenSSL's convention (RSA_PSS_SALTLEN_*) */
};

static void *sig_newctx(void *provctx, const char *propq)
{
    return mbp_sigctx_new(provctx, propq, sizeof(struct sig));
}

static void sig_freectx(void *ctx)
{
    struct sig *s = ctx;
    if (s != NULL) {
        EVP_MD_free(s->mgf1);
        mbp_sigctx_free(&s->b);
    }
}

/* sig_own: the copy's reference to mgf1 (mbp_sigctx_dup's extra). */
static int sig_own(void *copy)
{
    struct sig *s = copy;
    if (s->mgf1 != NULL && !EVP_MD_up_ref(s->mgf1)) {
        s->mgf1 = NULL;
        return 0;
    }
    return 1;
}

static void *sig_dupctx(void *ctx)
{
    return mbp_sigctx_dup(ctx, sizeof(struct sig), sig_own, sig_freectx);
}

/* digest_info: the DER header of DigestInfo { md's OID, NULL } followed by
 * md's digest: what precedes the digest in EMSA-PKCS1-v1_5. MD5-SHA1 (TLS
 * 1.0/1.1) has none. */
static int digest_info(struct sig *s)
{
    s->di_len = 0;
    const int nid = EVP_MD_get_type(s->b.md);
    const int h = EVP_MD_get_size(s->b.md);
    if (nid == NID_md5_sha1) {
        return 1;
    }
    X509_SIG *xs = X509_SIG_new();
    X509_ALGOR *alg;
    ASN1_OCTET_STRING *dig;
    uint8_t zero[EVP_MAX_MD_SIZE] = {0};
    int ok = 0;
    if (xs != NULL && nid != NID_undef && h > 0) {
        X509_SIG_getm(xs, &alg, &dig);
        /* OpenSSL 3.5's default provider writes SM3's DigestInfo with the
         * OID of sm3WithRSAEncryption (and verifies only that): so do we. */
        ok = X509_ALGOR_set0(alg, OBJ_nid2obj(nid == NID_sm3 ? NID_sm3WithRSAEncryption : nid),
                             V_ASN1_NULL, NULL) &&
             ASN1_OCTET_STRING_set(dig, zero, h);
    }
    unsigned char *der = NULL;
    const int len = ok ? i2d_X509_SIG(xs, &der) : -1;
    ok = len > h && (size_t)(len - h) <= sizeof(s->di);
    if (ok) {
        s->di_len = (size_t)(len - h);
        memcpy(s->di, der, s->di_len);
    }
    OPENSSL_free(der);
    X509_SIG_free(xs);
    return ok;
}

/* fetch_md: *md = name, if the default provider signs with it (mbp_md_row_of:
 * it refuses SHAKE, BLAKE2... for RSA, and so do we). */
static int fetch_md(struct sig *s, EVP_MD **md, const char *name, const char *props)
{
    EVP_MD *m = NULL;
    if (!mbp_fetch_md(s->b.pc, &m, name, props, s->b.propq)) {
        return 0;
    }
    if (mbp_md_row_of(m) == NULL) {
        mbp_err(s->b.pc, MBP_R_BAD_DIGEST, "digest=%s not allowed", name);
        EVP_MD_free(m);
        return 0;
    }
    EVP_MD_free(*md);
    *md = m;
    return 1;
}

/* OpenSSL 3.1 added RSA_PSS_SALTLEN_AUTO_DIGEST_MAX ("auto-digestmax") and
 * made it the default when signing; 3.0 signs with the longest salt. */
static int have_auto_digest_max(void)
{
    return OpenSSL_version_num() >= 0x30100000UL;
}

static int set_md(struct sig *s, const char *name, const char *props)
{
    if (!fetch_md(s, &s->b.md, name, props)) {
        return 0;
    }
    if (!digest_info(s)) {
        mbp_err(s->b.pc, MBP_R_BAD_DIGEST, "%s has no DigestInfo", name);
        EVP_MD_free(s->b.md);
        s->b.md = NULL;
        return 0;
    }
    return 1;
}

static int sig_set_ctx_params(void *ctx, const OSSL_PARAM params[]);

/* sig_init: s for signing or verifying with keydata; digest: for a
 * digest-and-sign (params are then the caller's to set). */
static int sig_init(struct sig *s, void *keydata, const OSSL_PARAM params[], int signing,
                    int digest)
{
    struct mbp_rsa_key *k = keydata;
    if (k == NULL || (k->other == NULL && (k->pub == NULL || (signing && k->priv == NULL)))) {
        mbp_err(s->b.pc, MBP_R_BAD_KEY, signing ? "no private key" : "no public key");
        return 0;
    }
    s->key = k;
    s->signing = signing;
    s->pad = RSA_PKCS1_PADDING;
    s->saltlen =
        signing && have_auto_digest_max() ? MBP_PSS_SALTLEN_AUTO_DIGEST_MAX : RSA_PSS_SALTLEN_AUTO;
    EVP_MD_free(s->b.md);
    EVP_MD_free(s->mgf1);
    s->b.md = s->mgf1 = NULL;
    s->di_len = 0;
    EVP_MD_CTX_free(s->b.mdctx);
    s->b.mdctx = NULL;
    mbp_other_sig_reset(&s->b);
    if (k->other != NULL && !digest) {
        return mbp_other_sig_init(&s->b, k->other, signing, 0, NULL, params);
    }
    return sig_set_ctx_params(s, params);
}

static int sig_sign_init(void *ctx, void *keydata, const OSSL_PARAM params[])
{
    return sig_init(ctx, keydata, params, 1, 0);
}

static int sig_verify_init(void *ctx, void *keydata, const OSSL_PARAM params[])
{
    return sig_init(ctx, keydata, params, 0, 0);
}

/* pss_md: the digest PSS uses (SHA-1, PKCS#1's default, if none was set). */
static const EVP_MD *pss_md(struct sig *s)
{
    if (s->b.md == NULL && !set_md(s, "SHA1", NULL)) {
        return NULL;
    }
    return s->b.md;
}

/* encode: em[0..k) for tbs (the digest, or the data without a digest). */
static int encode(struct sig *s, uint8_t *em, size_t k, const uint8_t *tbs, size_t tbslen)
{
    if (s->pad == RSA_NO_PADDING) {
        if (tbslen != k) {
            mbp_err(s->b.pc, MBP_R_BAD_LENGTH, "raw RSA input of %zu bytes", tbslen);
            return 0;
        }
        memcpy(em, tbs, k);
        return 1;
    }
    const EVP_MD *md = s->pad == RSA_PKCS1_PSS_PADDING ? pss_md(s) : s->b.md;
    if (s->pad == RSA_PKCS1_PSS_PADDING && md == NULL) {
        return 0;
    }
    if (md != NULL && tbslen != (size_t)EVP_MD_get_size(md)) {
        mbp_err(s->b.pc, MBP_R_BAD_LENGTH, "digest of %zu bytes", tbslen);
        return 0;
    }
    if (s->pad == RSA_PKCS1_PADDING) {
        if (!mbp_pkcs1_encode(em, k, s->di, s->di_len, tbs, tbslen)) {
            mbp_err(s->b.pc, MBP_R_BAD_LENGTH, "%zu bytes do not fit", tbslen);
            return 0;
        }
        return 1;
    }
    int salt;
    if (!mbp_pss_salt_len(s->saltlen, k, md, 1, &salt)) {
        mbp_err(s->b.pc, MBP_R_BAD_SALT, "%d", s->saltlen);
        return 0;
    }
    return mbp_pss_encode(em, k, md, s->mgf1 != NULL ? s->mgf1 : md, tbs, salt, s->b.pc->libctx);
}

/* private_op: sig = em^d (k bytes each) by mbcrypto, or by the default
 * provider when the request is handed off (mbo_hand_off) and there is one. */
static int private_op(struct sig *s, unsigned char *sig, const uint8_t *em, size_t k)
{
    EVP_PKEY_CTX *h =
        mbo_hand_off(MBC_ALG_RSA, MBC_OP_RSA_PRIVATE, s->key->bits)
            ? mbp_sync_op(s->b.pc, &s->b.sync, mbp_rsa_sync(s->key), MBP_SYNC_RSA_RAW, NULL)
            : NULL;
    if (h != NULL) {
        size_t n = k;
        return EVP_PKEY_sign(h, sig, &n, em, k) == 1 && n == k;
    }
    const mbc_err err = mbo_rsa_private(s->key->priv, sig, em);
    if (err != MBC_OK) {
        mbp_err(s->b.pc, MBP_R_MBCRYPTO, "%s", mbc_err_str(err));
        return 0;
    }
    return 1;
}

static int sig_sign(void *ctx, unsigned char *sig, size_t *siglen, size_t sigsize,
                    const unsigned char *tbs, size_t tbslen)
{
    struct sig *s = ctx;
    if (s->key == NULL || !s->signing) {
        mbp_err(s->b.pc, MBP_R_INIT, "sign");
        return 0;
    }
    if (s->b.other != NULL) {
        return mbp_other_sig_sign(&s->b, sig, siglen, sigsize, tbs, tbslen);
    }
    const size_t k = s->key->bits / 8;
    if (sig == NULL) {
        *siglen = k;
        return 1;
    }
    if (sigsize < k) {
        mbp_err(s->b.pc, MBP_R_BAD_LENGTH, "signature buffer of %zu bytes", sigsize);
        return 0;
    }
    uint8_t em[MAX_K];
    const int ok = encode(s, em, k, tbs, tbslen) && private_op(s, sig, em, k);
    OPENSSL_cleanse(em, sizeof(em));
    *siglen = ok ? k : 0;
    return ok;
}

/* check: 1 if em (the public operation on a signature) encodes tbs. */
static int check(struct sig *s, const uint8_t *em, size_t k, const uint8_t *tbs, size_t tbslen)
{
    if (s->pad == RSA_NO_PADDING) {
        return tbslen == k && CRYPTO_memcmp(em, tbs, k) == 0;
    }
    if (s->pad == RSA_PKCS1_PADDING) {
        uint8_t want[MAX_K];
        if (s->b.md != NULL && tbslen != (size_t)EVP_MD_get_size(s->b.md)) {
            return 0;
        }
        return mbp_pkcs1_encode(want, k, s->di, s->di_len, tbs, tbslen) &&
               CRYPTO_memcmp(want, em, k) == 0;
    }
    const EVP_MD *md = pss_md(s);
    int salt;
    if (md == NULL || tbslen != (size_t)EVP_MD_get_size(md) ||
        !mbp_pss_salt_len(s->saltlen, k, md, 0, &salt)) {
        return 0;
    }
    return mbp_pss_verify(em, k, md, s->mgf1 != NULL ? s->mgf1 : md, tbs, salt);
}

static int sig_verify(void *ctx, const unsigned char *sig, size_t siglen, const unsigned char *tbs,
                      size_t tbslen)
{
    struct sig *s = ctx;
    if (s->key == NULL || s->signing) {
        mbp_err(s->b.pc, MBP_R_INIT, "verify");
        return 0;
    }
    if (s->b.other != NULL) {
        return mbp_other_sig_verify(&s->b, sig, siglen, tbs, tbslen);
    }
    const size_t k = s->key->bits / 8;
    uint8_t em[MAX_K];
    if (siglen != k || mbo_rsa_public(s->key->pub, em, sig) != MBC_OK ||
        !check(s, em, k, tbs, tbslen)) {
        mbp_err(s->b.pc, MBP_R_BAD_SIGNATURE, NULL);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------ digest and sign/verify */

static int digest_init(void *ctx, const char *mdname, void *keydata, const OSSL_PARAM params[],
                       int signing)
{
    struct sig *s = ctx;
    if (!sig_init(s, keydata, NULL, signing, 1)) {
        return 0;
    }
    if (s->key->other != NULL) {
        return mbp_other_sig_init(&s->b, s->key->other, signing, 1, mdname, params);
    }
    if (!set_md(s, mdname != NULL ? mdname : "SHA256", NULL) ||
        (s->b.mdctx = EVP_MD_CTX_new()) == NULL || !EVP_DigestInit_ex2(s->b.mdctx, s->b.md, NULL)) {
        return 0;
    }
    return sig_set_ctx_params(s, params);
}

static int sig_digest_sign_init(void *ctx, const char *mdname, void *keydata,
                                const OSSL_PARAM params[])
{
    return digest_init(ctx, mdname, keydata, params, 1);
}

static int sig_digest_verify_init(void *ctx, const char *mdname, void *keydata,
                                  const OSSL_PARAM params[])
{
    return digest_init(ctx, mdname, keydata, params, 0);
}

static int sig_digest_update(void *ctx, const unsigned char *data, size_t len)
{
    struct sig *s = ctx;
    if (s->b.other != NULL) {
        return mbp_other_sig_update(&s->b, data, len);
    }
    return s->b.mdctx != NULL && EVP_DigestUpdate(s->b.mdctx, data, len);
}

static int sig_digest_sign_final(void *ctx, unsigned char *sig, size_t *siglen, size_t sigsize)
{
    struct sig *s = ctx;
    if (s->b.other != NULL) {
        return mbp_other_sig_sign_final(&s->b, sig, siglen, sigsize);
    }
    return mbp_digest_sign_final(s, s->b.mdctx, sig_sign, sig, siglen, sigsize);
}

static int sig_digest_verify_final(void *ctx, const unsigned char *sig, size_t siglen)
{
    struct sig *s = ctx;
    if (s->b.other != NULL) {
        return mbp_other_sig_verify_final(&s->b, sig, siglen);
    }
    return mbp_digest_verify_final(s, s->b.mdctx, sig_verify, sig, siglen);
}

/* ------------------------------------------------------------ parameters */

static const OSSL_ITEM pad_names[] = {
    {RSA_PKCS1_PADDING, OSSL_PKEY_RSA_PAD_MODE_PKCSV15},
    {RSA_NO_PADDING, OSSL_PKEY_RSA_PAD_MODE_NONE},
    {RSA_PKCS1_PSS_PADDING, OSSL_PKEY_RSA_PAD_MODE_PSS},
};
#define NUM_PADS (sizeof(pad_names) / sizeof(pad_names[0]))

static const OSSL_ITEM salt_names[] = {
    {(unsigned)RSA_PSS_SALTLEN_DIGEST, OSSL_PKEY_RSA_PSS_SALT_LEN_DIGEST},
    {(unsigned)RSA_PSS_SALTLEN_MAX, OSSL_PKEY_RSA_PSS_SALT_LEN_MAX},
    {(unsigned)RSA_PSS_SALTLEN_AUTO, OSSL_PKEY_RSA_PSS_SALT_LEN_AUTO},
    {(unsigned)MBP_PSS_SALTLEN_AUTO_DIGEST_MAX, "auto-digestmax"},
};
#define NUM_SALTS (sizeof(salt_names) / sizeof(salt_names[0]))

/* item_get: an int param given as a number or as one of items' names. */
static int item_get(const OSSL_PARAM *p, const OSSL_ITEM *items, size_t n, int *v)
{
    if (p->data_type != OSSL_PARAM_UTF8_STRING) {
        return OSSL_PARAM_get_int(p, v);
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(p->data, items[i].ptr) == 0) {
            *v = (int)items[i].id;
            return 1;
        }
    }
    return 0;
}

/* item_set: p gets v as a number, or as its name for a string param. */
static int item_set(OSSL_PARAM *p, const OSSL_ITEM *items, size_t n, int v)
{
    if (p->data_type != OSSL_PARAM_UTF8_STRING) {
        return OSSL_PARAM_set_int(p, v);
    }
    for (size_t i = 0; i < n; i++) {
        if ((int)items[i].id == v) {
            return OSSL_PARAM_set_utf8_string(p, items[i].ptr);
        }
    }
    return OSSL_PARAM_set_utf8_string(p, ""); /* a length: asked as a string */
}

static int sig_set_ctx_params(void *ctx, const OSSL_PARAM params[])
{
    struct sig *s = ctx;
    const OSSL_PARAM *p;
    if (params == NULL) {
        return 1;
    }
    if (s->b.other != NULL) {
        return mbp_other_sig_set_params(&s->b, params);
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_SIGNATURE_PARAM_PAD_MODE)) != NULL) {
        int pad;
        if (!item_get(p, pad_names, NUM_PADS, &pad) ||
            (pad != RSA_PKCS1_PADDING && pad != RSA_NO_PADDING && pad != RSA_PKCS1_PSS_PADDING) ||
            (pad == RSA_NO_PADDING && s->b.md != NULL)) {
            mbp_err(s->b.pc, MBP_R_BAD_PADDING, NULL);
            return 0;
        }
        s->pad = pad;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_SIGNATURE_PARAM_DIGEST)) != NULL) {
        const char *name = NULL, *props = NULL;
        const OSSL_PARAM *pp = OSSL_PARAM_locate_const(params, OSSL_SIGNATURE_PARAM_PROPERTIES);
        if (s->b.mdctx != NULL || !OSSL_PARAM_get_utf8_string_ptr(p, &name) ||
            (pp != NULL && !OSSL_PARAM_get_utf8_string_ptr(pp, &props)) ||
            !set_md(s, name, props)) {
            return 0;
        }
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_SIGNATURE_PARAM_MGF1_DIGEST)) != NULL) {
        const char *name = NULL, *props = NULL;
        const OSSL_PARAM *pp =
            OSSL_PARAM_locate_const(params, OSSL_SIGNATURE_PARAM_MGF1_PROPERTIES);
        if (!OSSL_PARAM_get_utf8_string_ptr(p, &name) ||
            (pp != NULL && !OSSL_PARAM_get_utf8_string_ptr(pp, &props)) ||
            !fetch_md(s, &s->mgf1, name, props)) {
            return 0;
        }
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_SIGNATURE_PARAM_PSS_SALTLEN)) != NULL) {
        /* As the default provider: a name ("auto-digestmax" from 3.1 on),
         * else the string's leading number the way atoi reads it ("-1",
         * " 20", "20x", and 0 for no number), or an int; then from
         * RSA_PSS_SALTLEN_MAX (or _AUTO_DIGEST_MAX) up, any value (a length
         * too long for the key fails when signing). */
        const size_t num_salts = have_auto_digest_max() ? NUM_SALTS : NUM_SALTS - 1;
        int salt;
        if (p->data_type == OSSL_PARAM_UTF8_STRING && !item_get(p, salt_names, num_salts, &salt)) {
            salt = (int)strtol(p->data, NULL, 10);
        } else if (p->data_type != OSSL_PARAM_UTF8_STRING && !OSSL_PARAM_get_int(p, &salt)) {
            return 0;
        }
        if (salt <
            (have_auto_digest_max() ? MBP_PSS_SALTLEN_AUTO_DIGEST_MAX : RSA_PSS_SALTLEN_MAX)) {
            mbp_err(s->b.pc, MBP_R_BAD_SALT, "%d", salt);
            return 0;
        }
        s->saltlen = salt;
    }
    return 1;
}

/* hash_algor: a new AlgorithmIdentifier of md with NULL parameters, as the
 * default provider writes them into RSASSA-PSS parameters. */
static X509_ALGOR *hash_algor(const EVP_MD *md)
{
    X509_ALGOR *a = X509_ALGOR_new();
    if (a != NULL && !X509_ALGOR_set0(a, OBJ_nid2obj(EVP_MD_get_type(md)), V_ASN1_NULL, NULL)) {
        X509_ALGOR_free(a);
        a = NULL;
    }
    return a;
}

/* pss_params: the DER of RSASSA-PSS-params (RFC 8017 A.2.3) for s, as
 * the default provider encodes them: hash and MGF1 unless SHA-1, the salt
 * length unless 20 (the one signing uses; a length given is written as
 * given), the trailer never (always 1); NULL (an error raised) for digests
 * it does not name there (SHA-3, MD5...). */
static ASN1_STRING *pss_params(struct sig *s)
{
    const EVP_MD *md = pss_md(s);
    const EVP_MD *mgf1 = s->mgf1 != NULL ? s->mgf1 : md;
    const struct mbp_md_row *mr = mbp_md_row_of(md), *gr = mbp_md_row_of(mgf1);
    int salt = s->saltlen;
    if (s->key == NULL || md == NULL || mr == NULL || !mr->pss || gr == NULL || !gr->pss ||
        (salt < 0 && !mbp_pss_salt_len(salt, s->key->bits / 8, md, 1, &salt))) {
        mbp_err(s->b.pc, MBP_R_BAD_DIGEST, "no RSASSA-PSS parameters for these digests");
        return NULL;
    }
    RSA_PSS_PARAMS *pss = RSA_PSS_PARAMS_new();
    X509_ALGOR *mh = NULL;
    ASN1_STRING *der = NULL, *mh_der = NULL;
    int ok = pss != NULL;
    if (ok && mr->md != NID_sha1) {
        ok = (pss->hashAlgorithm = hash_algor(md)) != NULL;
    }
    if (ok && gr->md != NID_sha1) {
        ok = (mh = hash_algor(mgf1)) != NULL &&
             (mh_der = ASN1_item_pack(mh, ASN1_ITEM_rptr(X509_ALGOR), NULL)) != NULL &&
             (pss->maskGenAlgorithm = X509_ALGOR_new()) != NULL &&
             X509_ALGOR_set0(pss->maskGenAlgorithm, OBJ_nid2obj(NID_mgf1), V_ASN1_SEQUENCE, mh_der);
        if (ok) {
            mh_der = NULL;
        }
    }
    if (ok && salt != 20) {
        ok = (pss->saltLength = ASN1_INTEGER_new()) != NULL &&
             ASN1_INTEGER_set(pss->saltLength, salt);
    }
    if (ok) {
        der = ASN1_item_pack(pss, ASN1_ITEM_rptr(RSA_PSS_PARAMS), NULL);
    }
    ASN1_STRING_free(mh_der);
    X509_ALGOR_free(mh);
    RSA_PSS_PARAMS_free(pss);
    if (der == NULL) {
        mbp_err(s->b.pc, MBP_R_BAD_PARAM, "RSASSA-PSS parameters");
    }
    return der;
}

/* algorithm_id: the signature's AlgorithmIdentifier: sha256WithRSAEncryption
 * and the like for PKCS#1 v1.5, RSASSA-PSS with its parameters; none for
 * raw RSA or PKCS#1 v1.5 without a digest (an error raised: OpenSSL's
 * certificate signing then says why it fails). */
static int algorithm_id(struct sig *s, OSSL_PARAM *p)
{
    if (s->pad == RSA_PKCS1_PSS_PADDING) {
        ASN1_STRING *params = pss_params(s);
        return params != NULL &&
               mbp_algorithm_id(s->b.pc, p, NID_rsassaPss, V_ASN1_SEQUENCE, params);
    }
    const struct mbp_md_row *row = s->pad == RSA_PKCS1_PADDING ? mbp_md_row_of(s->b.md) : NULL;
    return mbp_algorithm_id(s->b.pc, p, row != NULL ? row->rsa_sig : NID_undef, V_ASN1_NULL, NULL);
}

static int sig_get_ctx_params(void *ctx, OSSL_PARAM params[])
{
    struct sig *s = ctx;
    OSSL_PARAM *p;
    if (s->b.other != NULL) {
        return mbp_other_sig_get_params(&s->b, params);
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_PAD_MODE)) != NULL &&
        !item_set(p, pad_names, NUM_PADS, s->pad)) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_DIGEST)) != NULL &&
        !OSSL_PARAM_set_utf8_string(p, s->b.md != NULL ? EVP_MD_get0_name(s->b.md) : "")) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_MGF1_DIGEST)) != NULL) {
        const EVP_MD *m = s->mgf1 != NULL ? s->mgf1 : s->b.md;
        if (!OSSL_PARAM_set_utf8_string(p, m != NULL ? EVP_MD_get0_name(m) : "")) {
            return 0;
        }
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_PSS_SALTLEN)) != NULL) {
        if (p->data_type == OSSL_PARAM_UTF8_STRING && s->saltlen >= 0) {
            char buf[16];
            snprintf(buf, sizeof(buf), "%d", s->saltlen);
            if (!OSSL_PARAM_set_utf8_string(p, buf)) {
                return 0;
            }
        } else if (!item_set(p, salt_names, have_auto_digest_max() ? NUM_SALTS : NUM_SALTS - 1,
                             s->saltlen)) {
            return 0;
        }
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_SIGNATURE_PARAM_ALGORITHM_ID)) != NULL &&
        !algorithm_id(s, p)) {
        return 0;
    }
    return 1;
}

static const OSSL_PARAM settable[] = {
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PROPERTIES, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_PROPERTIES, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM gettable[] = {
    OSSL_PARAM_octet_string(OSSL_SIGNATURE_PARAM_ALGORITHM_ID, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST, NULL, 0),
    OSSL_PARAM_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *sig_settable_ctx_params(void *ctx, void *provctx)
{
    (void)provctx;
    const struct sig *s = ctx;
    return mbp_other_sig_settable(s != NULL ? &s->b : NULL, settable);
}

static const OSSL_PARAM *sig_gettable_ctx_params(void *ctx, void *provctx)
{
    (void)provctx;
    const struct sig *s = ctx;
    return mbp_other_sig_gettable(s != NULL ? &s->b : NULL, gettable);
}

const OSSL_DISPATCH mbp_rsa_signature[] = {
    {OSSL_FUNC_SIGNATURE_NEWCTX, (void (*)(void))sig_newctx},
    {OSSL_FUNC_SIGNATURE_FREECTX, (void (*)(void))sig_freectx},
    {OSSL_FUNC_SIGNATURE_DUPCTX, (void (*)(void))sig_dupctx},
    {OSSL_FUNC_SIGNATURE_SIGN_INIT, (void (*)(void))sig_sign_init},
    {OSSL_FUNC_SIGNATURE_SIGN, (void (*)(void))sig_sign},
    {OSSL_FUNC_SIGNATURE_VERIFY_INIT, (void (*)(void))sig_verify_init},
    {OSSL_FUNC_SIGNATURE_VERIFY, (void (*)(void))sig_verify},
    {OSSL_FUNC_SIGNATURE_DIGEST_SIGN_INIT, (void (*)(void))sig_digest_sign_init},
    {OSSL_FUNC_SIGNATURE_DIGEST_SIGN_UPDATE, (void (*)(void))sig_digest_update},
    {OSSL_FUNC_SIGNATURE_DIGEST_SIGN_FINAL, (void (*)(void))sig_digest_sign_final},
    {OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_INIT, (void (*)(void))sig_digest_verify_init},
    {OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_UPDATE, (void (*)(void))sig_digest_update},
    {OSSL_FUNC_SIGNATURE_DIGEST_VERIFY_FINAL, (void (*)(void))sig_digest_verify_final},
    {OSSL_FUNC_SIGNATURE_GET_CTX_PARAMS, (void (*)(void))sig_get_ctx_params},
    {OSSL_FUNC_SIGNATURE_GETTABLE_CTX_PARAMS, (void (*)(void))sig_gettable_ctx_params},
    {OSSL_FUNC_SIGNATURE_SET_CTX_PARAMS, (void (*)(void))sig_set_ctx_params},
    {OSSL_FUNC_SIGNATURE_SETTABLE_CTX_PARAMS, (void (*)(void))sig_settable_ctx_params},
    {0, NULL},
};
