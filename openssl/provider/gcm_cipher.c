/*
 * gcm_cipher.c - AES-128/192/256-GCM ciphers: the OSSL_PARAM and dispatch
 * face of openssl/common/gcm.c. What libssl asks of a record cipher:
 * TLS 1.3 (and any EVP caller) the plain AEAD interface (IV, AAD through
 * update with out == NULL, data, final, the tag); TLS 1.2 the fixed IV
 * ("tlsivfixed"), the 13-byte record AAD ("tlsaad", answered by
 * "tlsaadpad") and one EVP_Cipher call per record in place; "tlsivgen" and
 * "tlsivinv" for callers that handle the explicit IV themselves.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "prov.h"

struct gcm {
    struct mbp_ctx *pc;
    size_t key_len;
    size_t tls_pad; /* "tlsaadpad": the answer to the last "tlsaad" */
    struct mbo_gcm g;
};

static void *gcm_newctx(void *provctx, size_t key_len)
{
    struct gcm *c = OPENSSL_zalloc(sizeof(*c));
    if (c != NULL) {
        c->pc = provctx;
        c->key_len = key_len;
        mbo_gcm_init(&c->g, 1);
        c->g.rand_iv = 1; /* as OpenSSL 3.0's GCM (mbo.h) */
    }
    return c;
}

static void gcm_freectx(void *ctx)
{
    struct gcm *c = ctx;
    if (c != NULL) {
        mbo_gcm_cleanup(&c->g);
        OPENSSL_clear_free(c, sizeof(*c));
    }
}

static void *gcm_dupctx(void *ctx)
{
    const struct gcm *src = ctx;
    struct gcm *c = OPENSSL_malloc(sizeof(*c));
    if (c != NULL) {
        memcpy(c, src, sizeof(*c));
        mbo_gcm_dup(&c->g, &src->g);
    }
    return c;
}

static int gcm_set_ctx_params(void *ctx, const OSSL_PARAM params[]);

static int gcm_init(struct gcm *c, const unsigned char *key, size_t keylen, const unsigned char *iv,
                    size_t ivlen, const OSSL_PARAM params[], int enc)
{
    mbo_gcm_set_enc(&c->g, enc);
    if (iv != NULL && !mbo_gcm_set_iv_len(&c->g, ivlen)) {
        mbp_err(c->pc, MBP_R_CIPHER, "IV length %zu", ivlen);
        return 0;
    }
    if (key != NULL && (keylen != c->key_len || !mbo_gcm_set_key(&c->g, key, keylen))) {
        mbp_err(c->pc, MBP_R_CIPHER, "key length %zu", keylen);
        return 0;
    }
    if (iv != NULL && !mbo_gcm_set_iv(&c->g, iv, ivlen)) {
        mbp_err(c->pc, MBP_R_CIPHER, "IV");
        return 0;
    }
    return gcm_set_ctx_params(c, params);
}

static int gcm_einit(void *ctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                     size_t ivlen, const OSSL_PARAM params[])
{
    return gcm_init(ctx, key, keylen, iv, ivlen, params, 1);
}

static int gcm_dinit(void *ctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                     size_t ivlen, const OSSL_PARAM params[])
{
    return gcm_init(ctx, key, keylen, iv, ivlen, params, 0);
}

/* process: one call's worth: a TLS 1.2 record after "tlsaad", else AAD
 * (out NULL) or data. */
static int process(struct gcm *c, unsigned char *out, size_t *outl, size_t outsize,
                   const unsigned char *in, size_t inl)
{
    if (c->g.tls_aad_len >= 0) {
        if (out != in || outsize < inl) {
            c->g.tls_aad_len = -1; /* the record is over */
            mbp_err(c->pc, MBP_R_CIPHER, "TLS record not in place");
            return 0;
        }
        if (!mbo_gcm_tls_record(&c->g, out, inl, outl)) {
            mbp_err(c->pc, MBP_R_CIPHER, c->g.enc ? "TLS record seal" : "TLS record open");
            return 0;
        }
        return 1;
    }
    if (out != NULL && outsize < inl) {
        mbp_err(c->pc, MBP_R_BAD_LENGTH, "output buffer");
        return 0;
    }
    if (!mbo_gcm_update(&c->g, out, in, inl)) {
        mbp_err(c->pc, MBP_R_CIPHER, "update without key and IV, or too long");
        return 0;
    }
    *outl = inl;
    return 1;
}

static int gcm_update(void *ctx, unsigned char *out, size_t *outl, size_t outsize,
                      const unsigned char *in, size_t inl)
{
    return process(ctx, out, outl, outsize, in, inl);
}

static int gcm_final(void *ctx, unsigned char *out, size_t *outl, size_t outsize)
{
    struct gcm *c = ctx;
    (void)out;
    (void)outsize;
    *outl = 0;
    if (c->g.tls_aad_len >= 0) {
        return 1; /* the TLS record was done by the cipher call */
    }
    /* A tag that does not verify (or none set), or a message never started,
     * fails without an error, as in the default provider. */
    const int r = mbo_gcm_final(&c->g);
    if (r < 0) {
        mbp_err(c->pc, MBP_R_CIPHER, "a tag of %zu bytes set after the data started", c->g.tag_len);
    }
    return r == 1;
}

/* gcm_cipher: EVP_Cipher; in == NULL means final. A TLS record reports
 * its whole length here (libssl reads the plaintext's from update), as
 * OpenSSL's own GCM does. */
static int gcm_cipher(void *ctx, unsigned char *out, size_t *outl, size_t outsize,
                      const unsigned char *in, size_t inl)
{
    if (in == NULL) {
        return gcm_final(ctx, out, outl, outsize);
    }
    if (!process(ctx, out, outl, outsize, in, inl)) {
        return 0;
    }
    *outl = inl;
    return 1;
}

/* ------------------------------------------------------------ parameters */

static int gcm_get_params_for(OSSL_PARAM params[], size_t key_len)
{
    OSSL_PARAM *p;
    const struct {
        const char *name;
        size_t v;
        int is_uint;
    } vals[] = {
        {OSSL_CIPHER_PARAM_MODE, EVP_CIPH_GCM_MODE, 1},
        {OSSL_CIPHER_PARAM_KEYLEN, key_len, 0},
        {OSSL_CIPHER_PARAM_IVLEN, 12, 0},
        {OSSL_CIPHER_PARAM_BLOCK_SIZE, 1, 0},
        {OSSL_CIPHER_PARAM_AEAD, 1, 2},
        {OSSL_CIPHER_PARAM_CUSTOM_IV, 1, 2},
        {OSSL_CIPHER_PARAM_CTS, 0, 2},
        {OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, 0, 2},
        {OSSL_CIPHER_PARAM_HAS_RAND_KEY, 0, 2},
    };
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        if ((p = OSSL_PARAM_locate(params, vals[i].name)) == NULL) {
            continue;
        }
        const int ok = vals[i].is_uint == 1   ? OSSL_PARAM_set_uint(p, (unsigned)vals[i].v)
                       : vals[i].is_uint == 2 ? OSSL_PARAM_set_int(p, (int)vals[i].v)
                                              : OSSL_PARAM_set_size_t(p, vals[i].v);
        if (!ok) {
            return 0;
        }
    }
    return 1;
}

static const OSSL_PARAM gettable[] = {
    OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, NULL),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *gcm_gettable_params(void *provctx)
{
    (void)provctx;
    return gettable;
}

/* The context parameters, found in one pass over the caller's array: the
 * EVP layer asks for one or two at a time, several times per message (IV
 * length, tag), and locating each known name separately cost a strcmp per
 * name per call, a fifth of a 64-byte TLS record's time. ctx_index keeps, as
 * OSSL_PARAM_locate would, the first parameter of each name; the handlers
 * then run in their fixed order. */
enum ctx_param {
    CP_KEYLEN,
    CP_IVLEN, /* OSSL_CIPHER_PARAM_IVLEN and _AEAD_IVLEN are one name */
    CP_TAGLEN,
    CP_IV,
    CP_UPDATED_IV,
    CP_TLS_AAD_PAD,
    CP_TAG,
    CP_TLS_IV_GEN,
    CP_TLS_AAD,
    CP_TLS_IV_FIXED,
    CP_TLS_IV_INV,
    CP_N
};

static const struct {
    const char *name;
    enum ctx_param id;
} ctx_names[] = {
    {OSSL_CIPHER_PARAM_KEYLEN, CP_KEYLEN},
    {OSSL_CIPHER_PARAM_IVLEN, CP_IVLEN},
    {OSSL_CIPHER_PARAM_AEAD_TAGLEN, CP_TAGLEN},
    {OSSL_CIPHER_PARAM_IV, CP_IV},
    {OSSL_CIPHER_PARAM_UPDATED_IV, CP_UPDATED_IV},
    {OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, CP_TLS_AAD_PAD},
    {OSSL_CIPHER_PARAM_AEAD_TAG, CP_TAG},
    {OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, CP_TLS_IV_GEN},
    {OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, CP_TLS_AAD},
    {OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, CP_TLS_IV_FIXED},
    {OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV, CP_TLS_IV_INV},
};
_Static_assert(sizeof(OSSL_CIPHER_PARAM_IVLEN) == sizeof(OSSL_CIPHER_PARAM_AEAD_IVLEN) &&
                   sizeof(ctx_names) / sizeof(ctx_names[0]) == CP_N,
               "one row per context parameter");

/* name_eq: a == b, for the short names here: inline, without the setup of
 * the library's vectorised strcmp (which, with strlen, was a tenth of a
 * 64-byte message: the EVP layer makes three one-parameter calls each). */
static int name_eq(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* ctx_found: what ctx_index found: p[id] is the first parameter named id's
 * name when bit id of mask is set (a mask, not a cleared array: gcc cleared
 * the array with rep stos, whose start-up was 40% of ctx_index). */
struct ctx_found {
    unsigned mask;
    const OSSL_PARAM *p[CP_N];
};
_Static_assert(CP_N <= 32, "one mask bit per parameter");

static OSSL_PARAM *found(const struct ctx_found *f, enum ctx_param id)
{
    return (f->mask >> id & 1) != 0 ? (OSSL_PARAM *)f->p[id] : NULL;
}

/* ctx_index: indexes params into *f; a name is compared whole only with
 * the rows that share its first two characters. */
static void ctx_index(const OSSL_PARAM *params, struct ctx_found *f)
{
    f->mask = 0;
    for (const OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        const char *k = p->key;
        if (k[0] == '\0') {
            continue;
        }
        for (size_t i = 0; i < sizeof(ctx_names) / sizeof(ctx_names[0]); i++) {
            const char *n = ctx_names[i].name;
            if (n[0] == k[0] && n[1] == k[1] && name_eq(n, k)) {
                const unsigned bit = 1u << ctx_names[i].id;
                if ((f->mask & bit) == 0) {
                    f->mask |= bit;
                    f->p[ctx_names[i].id] = p;
                }
                break;
            }
        }
    }
}

static int gcm_get_ctx_params(void *ctx, OSSL_PARAM params[])
{
    struct gcm *c = ctx;
    struct ctx_found f;
    ctx_index(params, &f);
    OSSL_PARAM *p;
    if ((p = found(&f, CP_KEYLEN)) != NULL && !OSSL_PARAM_set_size_t(p, c->key_len)) {
        return 0;
    }
    if ((p = found(&f, CP_IVLEN)) != NULL && !OSSL_PARAM_set_size_t(p, c->g.iv_len)) {
        return 0;
    }
    if ((p = found(&f, CP_TAGLEN)) != NULL &&
        !OSSL_PARAM_set_size_t(p, c->g.tag_len != 0 ? c->g.tag_len : MBC_GCM_TAG_LEN)) {
        return 0;
    }
    if ((p = found(&f, CP_IV)) != NULL || (p = found(&f, CP_UPDATED_IV)) != NULL) {
        if (!c->g.iv_set || p->data_size < c->g.iv_len ||
            !OSSL_PARAM_set_octet_string(p, c->g.iv, c->g.iv_len)) {
            return 0;
        }
    }
    if ((p = found(&f, CP_TLS_AAD_PAD)) != NULL && !OSSL_PARAM_set_size_t(p, c->tls_pad)) {
        return 0;
    }
    if ((p = found(&f, CP_TAG)) != NULL) {
        if (p->data_type != OSSL_PARAM_OCTET_STRING ||
            !mbo_gcm_get_tag(&c->g, p->data, p->data_size)) {
            mbp_err(c->pc, MBP_R_CIPHER, "no tag to get");
            return 0;
        }
        p->return_size = p->data_size;
    }
    if ((p = found(&f, CP_TLS_IV_GEN)) != NULL) {
        if (p->data_type != OSSL_PARAM_OCTET_STRING ||
            !mbo_gcm_iv_gen(&c->g, p->data, p->data_size)) {
            mbp_err(c->pc, MBP_R_CIPHER, "IV generation");
            return 0;
        }
        p->return_size =
            p->data_size == 0 || p->data_size > c->g.iv_len ? c->g.iv_len : p->data_size;
    }
    return 1;
}

static int gcm_set_ctx_params(void *ctx, const OSSL_PARAM params[])
{
    struct gcm *c = ctx;
    const OSSL_PARAM *p;
    if (params == NULL) {
        return 1;
    }
    struct ctx_found f;
    ctx_index(params, &f);
    if (f.mask == 0) {
        return 1; /* none of ours (libssl and speed set "padding" at every init) */
    }
    if ((p = found(&f, CP_TAG)) != NULL) {
        if (p->data_type != OSSL_PARAM_OCTET_STRING ||
            !mbo_gcm_set_tag(&c->g, p->data, p->data_size)) {
            mbp_err(c->pc, MBP_R_CIPHER, "tag of %zu bytes", p->data_size);
            return 0;
        }
    }
    if ((p = found(&f, CP_IVLEN)) != NULL) {
        size_t n;
        if (!OSSL_PARAM_get_size_t(p, &n) || !mbo_gcm_set_iv_len(&c->g, n)) {
            mbp_err(c->pc, MBP_R_CIPHER, "IV length");
            return 0;
        }
    }
    if ((p = found(&f, CP_TLS_AAD)) != NULL) {
        const int pad = p->data_type == OSSL_PARAM_OCTET_STRING
                            ? mbo_gcm_tls_aad(&c->g, p->data, p->data_size)
                            : 0;
        if (pad <= 0) {
            mbp_err(c->pc, MBP_R_CIPHER, "TLS AAD");
            return 0;
        }
        c->tls_pad = (size_t)pad;
    }
    if ((p = found(&f, CP_TLS_IV_FIXED)) != NULL) {
        if (p->data_type != OSSL_PARAM_OCTET_STRING ||
            !mbo_gcm_set_iv_fixed(&c->g, p->data, p->data_size)) {
            mbp_err(c->pc, MBP_R_CIPHER, "TLS fixed IV");
            return 0;
        }
    }
    if ((p = found(&f, CP_TLS_IV_INV)) != NULL) {
        if (p->data_type != OSSL_PARAM_OCTET_STRING ||
            !mbo_gcm_set_iv_inv(&c->g, p->data, p->data_size)) {
            mbp_err(c->pc, MBP_R_CIPHER, "TLS explicit IV");
            return 0;
        }
    }
    if ((p = found(&f, CP_KEYLEN)) != NULL) {
        size_t n;
        if (!OSSL_PARAM_get_size_t(p, &n) || n != c->key_len) {
            mbp_err(c->pc, MBP_R_CIPHER, "key length");
            return 0;
        }
    }
    return 1;
}

static const OSSL_PARAM ctx_gettable[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, NULL),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM ctx_settable[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, NULL),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *gcm_gettable_ctx_params(void *ctx, void *provctx)
{
    (void)ctx;
    (void)provctx;
    return ctx_gettable;
}

static const OSSL_PARAM *gcm_settable_ctx_params(void *ctx, void *provctx)
{
    (void)ctx;
    (void)provctx;
    return ctx_settable;
}

/* One dispatch table per key size. */
#define GCM_CIPHER(bits)                                                                           \
    static void *gcm##bits##_newctx(void *provctx)                                                 \
    {                                                                                              \
        return gcm_newctx(provctx, bits / 8);                                                      \
    }                                                                                              \
    static int gcm##bits##_get_params(OSSL_PARAM params[])                                         \
    {                                                                                              \
        return gcm_get_params_for(params, bits / 8);                                               \
    }                                                                                              \
    const OSSL_DISPATCH mbp_aes##bits##gcm[] = {                                                   \
        {OSSL_FUNC_CIPHER_NEWCTX, (void (*)(void))gcm##bits##_newctx},                             \
        {OSSL_FUNC_CIPHER_FREECTX, (void (*)(void))gcm_freectx},                                   \
        {OSSL_FUNC_CIPHER_DUPCTX, (void (*)(void))gcm_dupctx},                                     \
        {OSSL_FUNC_CIPHER_ENCRYPT_INIT, (void (*)(void))gcm_einit},                                \
        {OSSL_FUNC_CIPHER_DECRYPT_INIT, (void (*)(void))gcm_dinit},                                \
        {OSSL_FUNC_CIPHER_UPDATE, (void (*)(void))gcm_update},                                     \
        {OSSL_FUNC_CIPHER_FINAL, (void (*)(void))gcm_final},                                       \
        {OSSL_FUNC_CIPHER_CIPHER, (void (*)(void))gcm_cipher},                                     \
        {OSSL_FUNC_CIPHER_GET_PARAMS, (void (*)(void))gcm##bits##_get_params},                     \
        {OSSL_FUNC_CIPHER_GETTABLE_PARAMS, (void (*)(void))gcm_gettable_params},                   \
        {OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (void (*)(void))gcm_get_ctx_params},                     \
        {OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (void (*)(void))gcm_set_ctx_params},                     \
        {OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, (void (*)(void))gcm_gettable_ctx_params},           \
        {OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, (void (*)(void))gcm_settable_ctx_params},           \
        {0, NULL},                                                                                 \
    };

GCM_CIPHER(128)
GCM_CIPHER(192)
GCM_CIPHER(256)
