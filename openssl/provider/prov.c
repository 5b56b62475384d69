/*
 * prov.c - the mbcrypto OpenSSL 3 provider: entry point, provider
 * parameters (counters included), the algorithms it offers.
 *
 * Only what the serve policy (openssl/common/policy.c) says this CPU does
 * better is offered; everything else is left to the other providers loaded
 * beside it (the default provider). Configuration: the "serve" and
 * "max-wait-us" keys of the provider's openssl.cnf section, or
 * MBCRYPTO_SERVE and MBCRYPTO_MAX_WAIT_US (which win).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/params.h>
#include <openssl/x509.h>

#include "prov.h"

/* Core functions, from the dispatch table given at init. */
static OSSL_FUNC_core_get_params_fn *c_get_params;
static OSSL_FUNC_core_new_error_fn *c_new_error;
static OSSL_FUNC_core_set_error_debug_fn *c_set_error_debug;
static OSSL_FUNC_core_vset_error_fn *c_vset_error;

void mbp_err(const struct mbp_ctx *pc, enum mbp_reason reason, const char *fmt, ...)
{
    if (c_new_error == NULL || c_vset_error == NULL || pc == NULL) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    c_new_error(pc->handle);
    if (c_set_error_debug != NULL) {
        c_set_error_debug(pc->handle, NULL, 0, NULL);
    }
    c_vset_error(pc->handle, (uint32_t)reason, fmt, ap);
    va_end(ap);
}

void mbp_params_clear_free(OSSL_PARAM *params)
{
    for (OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        OPENSSL_cleanse(p->data, p->data_size);
    }
    OSSL_PARAM_free(params);
}

/* mbp_fetch_md: *md = the digest name from the child library context: with
 * the given properties, else the operation's (when some provider of the
 * digest matches them: "provider=mbcrypto" matches none), else none. */
int mbp_fetch_md(const struct mbp_ctx *pc, EVP_MD **md, const char *name, const char *props,
                 const char *op_props)
{
    /* A fetch that fails before one that works leaves no error behind. */
    ERR_set_mark();
    EVP_MD *m = EVP_MD_fetch(pc->libctx, name, props != NULL ? props : op_props);
    if (m == NULL && props == NULL && op_props != NULL) {
        ERR_pop_to_mark();
        ERR_set_mark();
        m = EVP_MD_fetch(pc->libctx, name, NULL);
    }
    if (m != NULL) {
        ERR_pop_to_mark();
    } else {
        ERR_clear_last_mark();
    }
    if (m == NULL) {
        mbp_err(pc, MBP_R_BAD_DIGEST, "%s", name);
        return 0;
    }
    EVP_MD_free(*md);
    *md = m;
    return 1;
}

static int set_int(OSSL_PARAM params[], const char *key, int v)
{
    OSSL_PARAM *p = OSSL_PARAM_locate(params, key);
    return p == NULL || OSSL_PARAM_set_int(p, v);
}

int mbp_set_str(OSSL_PARAM params[], const char *key, const char *v)
{
    OSSL_PARAM *p = OSSL_PARAM_locate(params, key);
    return p == NULL || OSSL_PARAM_set_utf8_string(p, v);
}

int mbp_key_sizes(OSSL_PARAM params[], int bits, int secbits, int max_size)
{
    return set_int(params, OSSL_PKEY_PARAM_BITS, bits) &&
           set_int(params, OSSL_PKEY_PARAM_SECURITY_BITS, secbits) &&
           set_int(params, OSSL_PKEY_PARAM_MAX_SIZE, max_size);
}

int mbp_digest_sign_final(void *ctx, EVP_MD_CTX *mdctx, OSSL_FUNC_signature_sign_fn *sign,
                          unsigned char *sig, size_t *siglen, size_t sigsize)
{
    uint8_t d[EVP_MAX_MD_SIZE];
    unsigned int dlen = 0;
    if (mdctx == NULL) {
        return 0;
    }
    if (sig == NULL) {
        return sign(ctx, NULL, siglen, 0, NULL, 0);
    }
    return EVP_DigestFinal_ex(mdctx, d, &dlen) && sign(ctx, sig, siglen, sigsize, d, dlen);
}

int mbp_digest_verify_final(void *ctx, EVP_MD_CTX *mdctx, OSSL_FUNC_signature_verify_fn *verify,
                            const unsigned char *sig, size_t siglen)
{
    uint8_t d[EVP_MAX_MD_SIZE];
    unsigned int dlen = 0;
    return mdctx != NULL && EVP_DigestFinal_ex(mdctx, d, &dlen) &&
           verify(ctx, sig, siglen, d, dlen);
}

int mbp_algorithm_id(const struct mbp_ctx *pc, OSSL_PARAM *p, int sig_nid, int param_type,
                     ASN1_STRING *param)
{
    X509_ALGOR *alg = NULL;
    unsigned char *der = NULL;
    int len = -1;
    if (sig_nid != NID_undef && (alg = X509_ALGOR_new()) != NULL &&
        X509_ALGOR_set0(alg, OBJ_nid2obj(sig_nid), param_type, param)) {
        param = NULL; /* alg's now */
        len = i2d_X509_ALGOR(alg, &der);
    }
    const int ok = len > 0 && OSSL_PARAM_set_octet_string(p, der, (size_t)len);
    if (!ok) {
        mbp_err(pc, MBP_R_BAD_DIGEST, "no signature algorithm identifier for this digest");
    }
    ASN1_STRING_free(param);
    OPENSSL_free(der);
    X509_ALGOR_free(alg);
    return ok;
}

static const struct mbp_md_row md_rows[] = {
    {NID_sha1, NID_sha1WithRSAEncryption, NID_ecdsa_with_SHA1, 1, 0},
    {NID_sha224, NID_sha224WithRSAEncryption, NID_ecdsa_with_SHA224, 1, 0},
    {NID_sha256, NID_sha256WithRSAEncryption, NID_ecdsa_with_SHA256, 1, 0},
    {NID_sha384, NID_sha384WithRSAEncryption, NID_ecdsa_with_SHA384, 1, 0},
    {NID_sha512, NID_sha512WithRSAEncryption, NID_ecdsa_with_SHA512, 1, 0},
    {NID_sha512_224, NID_sha512_224WithRSAEncryption, NID_undef, 1, 0},
    {NID_sha512_256, NID_sha512_256WithRSAEncryption, NID_undef, 1, 0},
    {NID_sha3_224, NID_RSA_SHA3_224, NID_ecdsa_with_SHA3_224, 0, 0},
    {NID_sha3_256, NID_RSA_SHA3_256, NID_ecdsa_with_SHA3_256, 0, 0},
    {NID_sha3_384, NID_RSA_SHA3_384, NID_ecdsa_with_SHA3_384, 0, 0},
    {NID_sha3_512, NID_RSA_SHA3_512, NID_ecdsa_with_SHA3_512, 0, 0},
    {NID_md5, NID_md5WithRSAEncryption, NID_undef, 0, 0},
    {NID_md4, NID_md4WithRSAEncryption, NID_undef, 0, 0},
    {NID_ripemd160, NID_ripemd160WithRSA, NID_undef, 0, 0},
    {NID_md5_sha1, NID_undef, NID_undef, 0, 0},
    {NID_sm3, NID_undef, NID_undef, 0, 0x30500000UL}, /* refused by 3.0; 3.1-3.4 not seen */
};

const struct mbp_md_row *mbp_md_row_of(const EVP_MD *md)
{
    const int nid = md != NULL ? EVP_MD_get_type(md) : NID_undef;
    for (size_t i = 0; i < sizeof(md_rows) / sizeof(md_rows[0]); i++) {
        if (md_rows[i].md == nid && nid != NID_undef) {
            return OpenSSL_version_num() >= md_rows[i].since ? &md_rows[i] : NULL;
        }
    }
    return NULL;
}

int mbp_ecdsa_md_ok(const EVP_MD *md)
{
    if (OpenSSL_version_num() < 0x30500000UL) {
        return 1; /* 3.0: any digest it can fetch, SHAKE and NULL included */
    }
    return EVP_MD_get_size(md) > 0 && (EVP_MD_get_flags(md) & EVP_MD_FLAG_XOF) == 0;
}

void *mbp_sigctx_new(void *provctx, const char *propq, size_t size)
{
    struct mbp_sigctx *b = OPENSSL_zalloc(size);
    if (b == NULL) {
        return NULL;
    }
    b->pc = provctx;
    if (propq != NULL && (b->propq = OPENSSL_strdup(propq)) == NULL) {
        OPENSSL_free(b);
        return NULL;
    }
    return b;
}

void mbp_sigctx_free(struct mbp_sigctx *b)
{
    if (b != NULL) {
        EVP_MD_free(b->md);
        EVP_MD_CTX_free(b->mdctx);
        mbp_other_sig_reset(b);
        OPENSSL_free(b->propq);
        OPENSSL_free(b);
    }
}

void *mbp_sigctx_dup(const struct mbp_sigctx *src, size_t size, int (*extra)(void *copy),
                     void (*free_fn)(void *ctx))
{
    struct mbp_sigctx *b = OPENSSL_memdup(src, size);
    if (b == NULL) {
        return NULL;
    }
    b->propq = NULL;
    b->mdctx = NULL;
    const int other = mbp_other_sig_dup(b, src);
    /* extra runs first and always: afterwards every field of the copy is
     * its own (or NULL), so free_fn may free them whatever fails next */
    const int own = extra == NULL || extra(b);
    if (b->md != NULL && !EVP_MD_up_ref(b->md)) {
        b->md = NULL; /* cannot fail in practice; never freed twice */
    }
    const int ok = own && other && (b->md != NULL || src->md == NULL) &&
                   (src->propq == NULL || (b->propq = OPENSSL_strdup(src->propq)) != NULL) &&
                   (src->mdctx == NULL || ((b->mdctx = EVP_MD_CTX_new()) != NULL &&
                                           EVP_MD_CTX_copy_ex(b->mdctx, src->mdctx)));
    if (!ok) {
        free_fn(b);
        return NULL;
    }
    return b;
}

static const OSSL_ITEM reason_strings[] = {
    {MBP_R_INIT, "mbcrypto: operation not initialised"},
    {MBP_R_BAD_KEY, "mbcrypto: key cannot do this operation"},
    {MBP_R_BAD_PADDING, "mbcrypto: padding mode not supported"},
    {MBP_R_BAD_DIGEST, "mbcrypto: digest not supported"},
    {MBP_R_BAD_SALT, "mbcrypto: invalid PSS salt length"},
    {MBP_R_BAD_LENGTH, "mbcrypto: invalid length"},
    {MBP_R_BAD_SIGNATURE, "mbcrypto: bad signature"},
    {MBP_R_MBCRYPTO, "mbcrypto: operation failed"},
    {MBP_R_BAD_PARAM, "mbcrypto: invalid parameter"},
    {MBP_R_CIPHER, "mbcrypto: cipher operation refused"},
    {0, NULL},
};

/* ------------------------------------------ keys left to another provider */

int mbp_params_merge(OSSL_PARAM **dst, const OSSL_PARAM params[])
{
    if (params == NULL || params[0].key == NULL) {
        return 1;
    }
    OSSL_PARAM *m = OSSL_PARAM_merge(*dst, params);
    OSSL_PARAM *d = m != NULL ? OSSL_PARAM_dup(m) : NULL;
    OSSL_PARAM_free(m);
    if (d == NULL) {
        return 0;
    }
    mbp_params_clear_free(*dst);
    *dst = d;
    return 1;
}

static const OSSL_ITEM *get_reason_strings(void *provctx)
{
    (void)provctx;
    return reason_strings;
}

/* ------------------------------------------------------------ parameters */

#define PARAM_PREFIX "mbcrypto-"
#define PARAM_SERVE PARAM_PREFIX "serve"
#define PARAM_MAX_WAIT PARAM_PREFIX "max-wait-us"
#define PARAM_MAX (4 + 2 + MBO_NUM_COUNTERS + 1)

static OSSL_PARAM gettable[PARAM_MAX];
static char counter_param[MBO_NUM_COUNTERS][64];
static CRYPTO_ONCE gettable_once = CRYPTO_ONCE_STATIC_INIT;

/* make_gettable: the table, with one "mbcrypto-<counter>" per counter. */
static void make_gettable(void)
{
    size_t i = 0;
    gettable[i++] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_NAME, NULL, 0);
    gettable[i++] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_VERSION, NULL, 0);
    gettable[i++] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, NULL, 0);
    gettable[i++] = OSSL_PARAM_construct_int(OSSL_PROV_PARAM_STATUS, NULL);
    gettable[i++] = OSSL_PARAM_construct_utf8_string(PARAM_SERVE, NULL, 0);
    gettable[i++] = OSSL_PARAM_construct_uint32(PARAM_MAX_WAIT, NULL);
    for (unsigned c = 0; c < MBO_NUM_COUNTERS; c++) {
        snprintf(counter_param[c], sizeof(counter_param[c]), PARAM_PREFIX "%s",
                 mbo_counter_name(c));
        gettable[i++] = OSSL_PARAM_construct_uint64(counter_param[c], NULL);
    }
    gettable[i] = OSSL_PARAM_construct_end();
}

static const OSSL_PARAM *gettable_params(void *provctx)
{
    (void)provctx;
    CRYPTO_THREAD_run_once(&gettable_once, make_gettable);
    return gettable;
}

static int get_params(void *provctx, OSSL_PARAM params[])
{
    (void)provctx;
    CRYPTO_THREAD_run_once(&gettable_once, make_gettable);
    OSSL_PARAM *p;
    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_NAME)) != NULL &&
        !OSSL_PARAM_set_utf8_ptr(p, "mbcrypto multi-buffer provider")) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_VERSION)) != NULL &&
        !OSSL_PARAM_set_utf8_ptr(p, mbc_version_string())) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_BUILDINFO)) != NULL &&
        !OSSL_PARAM_set_utf8_ptr(p, mbc_version_string())) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_STATUS)) != NULL &&
        !OSSL_PARAM_set_int(p, 1)) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, PARAM_SERVE)) != NULL) {
        char s[MBO_POLICY_STR_LEN];
        mbo_policy_str(mbo_policy(), s, sizeof(s));
        if (!OSSL_PARAM_set_utf8_string(p, s)) {
            return 0;
        }
    }
    if ((p = OSSL_PARAM_locate(params, PARAM_MAX_WAIT)) != NULL &&
        !OSSL_PARAM_set_uint32(p, mbo_max_wait_us())) {
        return 0;
    }
    for (unsigned c = 0; c < MBO_NUM_COUNTERS; c++) {
        if ((p = OSSL_PARAM_locate(params, counter_param[c])) != NULL &&
            !OSSL_PARAM_set_uint64(p, mbo_counter_get(c))) {
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------ algorithms */

/* The provider implements every family of the serve policy. */
const unsigned mbo_offered = MBO_FAM_ALL | MBO_FAM_MLKEM;

/* Our EC keys serve both ECDH and ECDSA. */
#define EC_KEY_FAMS (MBO_FAM_ECDH | MBO_FAM_ECDSA)

#define RSA_NAMES "RSA:rsaEncryption:1.2.840.113549.1.1.1"
#define X25519_NAMES "X25519:1.3.101.110"
#define EC_NAMES "EC:id-ecPublicKey:1.2.840.10045.2.1"

/* Every algorithm, with its operation and the families that offer it (any
 * one of them served). */
static const struct {
    int operation_id;
    unsigned fams;
    OSSL_ALGORITHM alg;
} algorithms[] = {
    {OSSL_OP_KEYMGMT,
     MBO_FAM_RSA,
     {RSA_NAMES, MBP_PROPS, mbp_rsa_keymgmt, "mbcrypto RSA 2048/3072/4096 keys"}},
    {OSSL_OP_SIGNATURE,
     MBO_FAM_RSA,
     {RSA_NAMES, MBP_PROPS, mbp_rsa_signature, "mbcrypto RSA PKCS#1 v1.5 and PSS"}},
    {OSSL_OP_CIPHER,
     MBO_FAM_GCM,
     {"AES-128-GCM:id-aes128-GCM:2.16.840.1.101.3.4.1.6", MBP_PROPS, mbp_aes128gcm, NULL}},
    {OSSL_OP_CIPHER,
     MBO_FAM_GCM,
     {"AES-192-GCM:id-aes192-GCM:2.16.840.1.101.3.4.1.26", MBP_PROPS, mbp_aes192gcm, NULL}},
    {OSSL_OP_CIPHER,
     MBO_FAM_GCM,
     {"AES-256-GCM:id-aes256-GCM:2.16.840.1.101.3.4.1.46", MBP_PROPS, mbp_aes256gcm, NULL}},
    {OSSL_OP_KEYMGMT,
     MBO_FAM_X25519,
     {X25519_NAMES, MBP_PROPS, mbp_x25519_keymgmt, "mbcrypto X25519 keys"}},
    {OSSL_OP_KEYEXCH,
     MBO_FAM_X25519,
     {X25519_NAMES, MBP_PROPS, mbp_x25519_keyexch, "mbcrypto X25519 key exchange"}},
    {OSSL_OP_KEYMGMT,
     EC_KEY_FAMS,
     {EC_NAMES, MBP_PROPS, mbp_ec_keymgmt, "mbcrypto P-256/P-384 keys"}},
    {OSSL_OP_KEYEXCH,
     MBO_FAM_ECDH,
     {"ECDH", MBP_PROPS, mbp_ecdh_keyexch, "mbcrypto ECDH on P-256/P-384"}},
    {OSSL_OP_SIGNATURE,
     MBO_FAM_ECDSA,
     {"ECDSA", MBP_PROPS, mbp_ecdsa_signature, "mbcrypto ECDSA on P-256/P-384"}},
};
#define NUM_ALGORITHMS (sizeof(algorithms) / sizeof(algorithms[0]))

/* OpenSSL 3.5's names of ML-KEM-768 and of the hybrid. */
#define MLKEM768_NAMES "ML-KEM-768:MLKEM768:id-alg-ml-kem-768:2.16.840.1.101.3.4.4.2"
#define X25519MLKEM768_NAMES "X25519MLKEM768"
#define HYBRID_FAMS (MBO_FAM_MLKEM | MBO_FAM_X25519)
#define P256MLKEM768_NAMES "SecP256r1MLKEM768"
#define P256_HYBRID_FAMS (MBO_FAM_MLKEM | MBO_FAM_ECDH)

/* The algorithms offered only when the core is OpenSSL 3.5 or later (which
 * has ML-KEM: 3.0's libssl and EVP know no KEM groups), each when every
 * one of its families is served. */
static const struct {
    int operation_id;
    unsigned fams;
    OSSL_ALGORITHM alg;
} algorithms35[] = {
    {OSSL_OP_KEYMGMT,
     MBO_FAM_MLKEM,
     {MLKEM768_NAMES, MBP_PROPS, mbp_mlkem768_keymgmt, "mbcrypto ML-KEM-768 keys"}},
    {OSSL_OP_KEM, MBO_FAM_MLKEM, {MLKEM768_NAMES, MBP_PROPS, mbp_mlkem_kem, "mbcrypto ML-KEM-768"}},
    {OSSL_OP_KEYMGMT,
     HYBRID_FAMS,
     {X25519MLKEM768_NAMES, MBP_PROPS, mbp_x25519mlkem768_keymgmt, "mbcrypto X25519MLKEM768 keys"}},
    {OSSL_OP_KEM,
     HYBRID_FAMS,
     {X25519MLKEM768_NAMES, MBP_PROPS, mbp_mlkem_kem, "mbcrypto X25519MLKEM768"}},
    {OSSL_OP_KEYMGMT,
     P256_HYBRID_FAMS,
     {P256MLKEM768_NAMES, MBP_PROPS, mbp_secp256r1mlkem768_keymgmt,
      "mbcrypto SecP256r1MLKEM768 keys"}},
    {OSSL_OP_KEM,
     P256_HYBRID_FAMS,
     {P256MLKEM768_NAMES, MBP_PROPS, mbp_mlkem_kem, "mbcrypto SecP256r1MLKEM768"}},
};
#define NUM_ALGORITHMS35 (sizeof(algorithms35) / sizeof(algorithms35[0]))

/* served35: whether a row of algorithms35 (or kem_groups) of families fams
 * is served by pc. */
static int served35(const struct mbp_ctx *pc, unsigned fams)
{
    return pc->core35 && (mbo_policy() & fams) == fams;
}

/* The operations we have. Per operation, each loading (provider context)
 * keeps the algorithms the policy served at its init, NULL terminated. */
static const int operations[] = {OSSL_OP_KEYMGMT, OSSL_OP_SIGNATURE, OSSL_OP_KEYEXCH,
                                 OSSL_OP_CIPHER, OSSL_OP_KEM};
#define NUM_OPERATIONS (sizeof(operations) / sizeof(operations[0]))
#define ROW (NUM_ALGORITHMS + NUM_ALGORITHMS35 + 1)

/* make_served: the table of pc (NUM_OPERATIONS rows of ROW entries). */
static OSSL_ALGORITHM *make_served(const struct mbp_ctx *pc)
{
    OSSL_ALGORITHM *t = OPENSSL_zalloc(sizeof(*t) * NUM_OPERATIONS * ROW);
    if (t == NULL) {
        return NULL;
    }
    const unsigned served = mbo_policy();
    for (size_t o = 0; o < NUM_OPERATIONS; o++) {
        size_t n = 0;
        for (size_t i = 0; i < NUM_ALGORITHMS; i++) {
            if (algorithms[i].operation_id == operations[o] && (algorithms[i].fams & served) != 0) {
                t[o * ROW + n++] = algorithms[i].alg;
            }
        }
        for (size_t i = 0; i < NUM_ALGORITHMS35; i++) {
            if (algorithms35[i].operation_id == operations[o] &&
                served35(pc, algorithms35[i].fams)) {
                t[o * ROW + n++] = algorithms35[i].alg;
            }
        }
    }
    return t;
}

static const OSSL_ALGORITHM *query_operation(void *provctx, int operation_id, int *no_cache)
{
    const struct mbp_ctx *pc = provctx;
    *no_cache = 0;
    for (size_t o = 0; o < NUM_OPERATIONS; o++) {
        const OSSL_ALGORITHM *row = pc->served + o * ROW;
        if (operations[o] == operation_id) {
            return row[0].algorithm_names != NULL ? row : NULL;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ TLS groups */

/*
 * The TLS groups whose key exchange we serve, as the TLS-GROUP capability
 * (what libssl reads to know the groups it may offer). libssl 3.0 uses a
 * provider's group only when the key management it fetches for the group's
 * algorithm (with its property query) comes from that same provider; with
 * mbcrypto preferred that is ours, so we announce the groups we serve.
 * Fields: the TLS name, OpenSSL's name of the group, the key management's
 * name, the IANA group id, security bits; every TLS and DTLS version from
 * 1.0 on. Our "EC" key management generates P-521 keys through the
 * default provider, so P-521 stays available; the other EC groups of the
 * default provider (brainpool, the legacy TLS 1.2 curves) are not offered
 * by libssl 3.0 while our EC key management is served.
 */
struct tls_group {
    unsigned fam;
    const char *name, *internal, *alg;
    unsigned id, secbits;
};
static const struct tls_group tls_groups[] = {
    {MBO_FAM_X25519, "x25519", "X25519", "X25519", 29, 128},
    {EC_KEY_FAMS, "secp256r1", "prime256v1", "EC", 23, 128},
    {EC_KEY_FAMS, "P-256", "prime256v1", "EC", 23, 128},
    {EC_KEY_FAMS, "secp384r1", "secp384r1", "EC", 24, 192},
    {EC_KEY_FAMS, "P-384", "secp384r1", "EC", 24, 192},
    /* Generated by the default provider through our key management. */
    {EC_KEY_FAMS, "secp521r1", "secp521r1", "EC", 25, 256},
    {EC_KEY_FAMS, "P-521", "secp521r1", "EC", 25, 256},
};

#define TLS1_0 0x0301
#define TLS1_3 0x0304
#define DTLS1_0 0xFEFF

/* announce: g to cb as a TLS-GROUP capability; kem: a KEM group of
 * OpenSSL 3.5, announced as its default provider does (TLS 1.3 only, no
 * DTLS, is-kem set), else every TLS and DTLS version from 1.0 on. */
static int announce(const struct tls_group *g, int kem, OSSL_CALLBACK *cb, void *arg)
{
    unsigned id = g->id, secbits = g->secbits, is_kem = (unsigned)kem;
    int min_tls = kem ? TLS1_3 : TLS1_0, max_tls = 0;
    int min_dtls = kem ? -1 : DTLS1_0, max_dtls = kem ? -1 : 0;
    OSSL_PARAM p[] = {
        OSSL_PARAM_utf8_string(OSSL_CAPABILITY_TLS_GROUP_NAME, (char *)g->name, strlen(g->name)),
        OSSL_PARAM_utf8_string(OSSL_CAPABILITY_TLS_GROUP_NAME_INTERNAL, (char *)g->internal,
                               strlen(g->internal)),
        OSSL_PARAM_utf8_string(OSSL_CAPABILITY_TLS_GROUP_ALG, (char *)g->alg, strlen(g->alg)),
        OSSL_PARAM_uint(OSSL_CAPABILITY_TLS_GROUP_ID, &id),
        OSSL_PARAM_uint(OSSL_CAPABILITY_TLS_GROUP_SECURITY_BITS, &secbits),
        OSSL_PARAM_int(OSSL_CAPABILITY_TLS_GROUP_MIN_TLS, &min_tls),
        OSSL_PARAM_int(OSSL_CAPABILITY_TLS_GROUP_MAX_TLS, &max_tls),
        OSSL_PARAM_int(OSSL_CAPABILITY_TLS_GROUP_MIN_DTLS, &min_dtls),
        OSSL_PARAM_int(OSSL_CAPABILITY_TLS_GROUP_MAX_DTLS, &max_dtls),
        OSSL_PARAM_uint(OSSL_CAPABILITY_TLS_GROUP_IS_KEM, &is_kem),
        OSSL_PARAM_END,
    };
    return cb(p, arg);
}

/* The KEM groups of OpenSSL 3.5 whose algorithms we serve (algorithms35:
 * fam is every family they need). */
static const struct tls_group kem_groups[] = {
    {HYBRID_FAMS, "X25519MLKEM768", "", X25519MLKEM768_NAMES, 4588, 192},
    {MBO_FAM_MLKEM, "MLKEM768", "", "ML-KEM-768", 513, 192},
    {P256_HYBRID_FAMS, "SecP256r1MLKEM768", "", P256MLKEM768_NAMES, 4587, 192},
};

static int get_capabilities(void *provctx, const char *capability, OSSL_CALLBACK *cb, void *arg)
{
    if (strcasecmp(capability, "TLS-GROUP") != 0) {
        return 0;
    }
    const unsigned served = mbo_policy();
    for (size_t i = 0; i < sizeof(tls_groups) / sizeof(tls_groups[0]); i++) {
        if ((tls_groups[i].fam & served) != 0 && !announce(&tls_groups[i], 0, cb, arg)) {
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof(kem_groups) / sizeof(kem_groups[0]); i++) {
        if (served35(provctx, kem_groups[i].fam) && !announce(&kem_groups[i], 1, cb, arg)) {
            return 0;
        }
    }
    return 1;
}

static void teardown(void *provctx)
{
    struct mbp_ctx *pc = provctx;
    OSSL_LIB_CTX_free(pc->libctx);
    OPENSSL_free(pc->served);
    OPENSSL_free(pc);
    mbo_fini();
}

static const OSSL_DISPATCH provider_functions[] = {
    {OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))teardown},
    {OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, (void (*)(void))gettable_params},
    {OSSL_FUNC_PROVIDER_GET_PARAMS, (void (*)(void))get_params},
    {OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))query_operation},
    {OSSL_FUNC_PROVIDER_GET_REASON_STRINGS, (void (*)(void))get_reason_strings},
    {OSSL_FUNC_PROVIDER_GET_CAPABILITIES, (void (*)(void))get_capabilities},
    {0, NULL},
};

/* core_is_35: whether the core's OpenSSL version (OSSL_PROV_PARAM_CORE_VERSION,
 * "3.5.9") is 3.5 or later. */
static int core_is_35(const OSSL_CORE_HANDLE *handle)
{
    const char *v = NULL;
    OSSL_PARAM p[] = {OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_CORE_VERSION, (char **)&v, 0),
                      OSSL_PARAM_END};
    unsigned major = 0, minor = 0;
    if (c_get_params == NULL || !c_get_params(handle, p) || !OSSL_PARAM_modified(&p[0]) ||
        v == NULL || sscanf(v, "%u.%u", &major, &minor) != 2) {
        return 0;
    }
    return major > 3 || (major == 3 && minor >= 5);
}

/* setting: the key of our openssl.cnf section ("serve", "max-wait-us"), or
 * NULL. */
static const char *setting(const OSSL_CORE_HANDLE *handle, const char *key)
{
    if (c_get_params == NULL) {
        return NULL;
    }
    const char *v = NULL;
    OSSL_PARAM p[] = {OSSL_PARAM_utf8_ptr(key, (char **)&v, 0), OSSL_PARAM_END};
    if (!c_get_params(handle, p) || !OSSL_PARAM_modified(&p[0])) {
        return NULL;
    }
    return v;
}

__attribute__((visibility("default"))) int OSSL_provider_init(const OSSL_CORE_HANDLE *handle,
                                                              const OSSL_DISPATCH *in,
                                                              const OSSL_DISPATCH **out,
                                                              void **provctx)
{
    for (const OSSL_DISPATCH *f = in; f->function_id != 0; f++) {
        switch (f->function_id) {
        case OSSL_FUNC_CORE_GET_PARAMS:
            c_get_params = OSSL_FUNC_core_get_params(f);
            break;
        case OSSL_FUNC_CORE_NEW_ERROR:
            c_new_error = OSSL_FUNC_core_new_error(f);
            break;
        case OSSL_FUNC_CORE_SET_ERROR_DEBUG:
            c_set_error_debug = OSSL_FUNC_core_set_error_debug(f);
            break;
        case OSSL_FUNC_CORE_VSET_ERROR:
            c_vset_error = OSSL_FUNC_core_vset_error(f);
            break;
        default:
            break;
        }
    }
    /* A serve setting that does not parse fails the loading, with an error
     * saying why (openssl.cnf's activation, OSSL_PROVIDER_load). */
    const char *serve = setting(handle, "serve"), *wait = setting(handle, "max-wait-us");
    char why[256];
    if (!mbo_policy_check(serve, why, sizeof(why)) || !mbo_max_wait_check(wait, why, sizeof(why))) {
        const struct mbp_ctx at_init = {.handle = handle};
        mbp_err(&at_init, MBP_R_BAD_PARAM, "%s", why);
        mbo_policy_report(why);
        return 0;
    }
    struct mbp_ctx *pc = OPENSSL_zalloc(sizeof(*pc));
    if (pc == NULL) {
        return 0;
    }
    pc->handle = handle;
    pc->core35 = core_is_35(handle);
    pc->libctx = OSSL_LIB_CTX_new_child(handle, in);
    if (pc->libctx == NULL || !mbo_init(serve)) {
        OSSL_LIB_CTX_free(pc->libctx);
        OPENSSL_free(pc);
        return 0;
    }
    mbo_max_wait_setup(wait);
    if ((pc->served = make_served(pc)) == NULL) {
        teardown(pc);
        return 0;
    }
    *out = provider_functions;
    *provctx = pc;
    return 1;
}
