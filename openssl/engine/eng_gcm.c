/*
 * eng_gcm.c - AES-128/192/256-GCM as ENGINE ciphers: the legacy EVP_CIPHER
 * face of openssl/common/gcm.c, with the controls OpenSSL's own GCM has and
 * libssl uses: IV length, tag set and get, and for TLS 1.2 records the
 * fixed IV (EVP_CTRL_GCM_SET_IV_FIXED), the 13-byte record AAD
 * (EVP_CTRL_AEAD_TLS1_AAD, answered with the tag length) followed by one
 * EVP_Cipher call per record in place, and the explicit IV handled by the
 * caller (EVP_CTRL_GCM_IV_GEN, EVP_CTRL_GCM_SET_IV_INV).
 *
 * The cipher selector gives these ciphers while the serve policy has
 * AES-GCM, and OpenSSL's built-in ones (EVP_aes_*_gcm()) otherwise; a
 * context keeps the cipher it was initialised with.
 */
#include <limits.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/objects.h>

#include "eng.h"

#define NUM_CIPHERS 3
static const int nids[NUM_CIPHERS] = {NID_aes_128_gcm, NID_aes_192_gcm, NID_aes_256_gcm};
static EVP_CIPHER *ciphers[NUM_CIPHERS];

/* The cipher data: the context, and the key length read once at
 * EVP_CTRL_INIT (EVP_CIPHER_CTX_get_key_length builds a parameter array
 * each call: 7% of a 64-byte message when callers re-key every message). */
struct eng_gcm {
    struct mbo_gcm g;
    size_t key_len;
};

static struct eng_gcm *eng_of(EVP_CIPHER_CTX *ctx)
{
    return EVP_CIPHER_CTX_get_cipher_data(ctx);
}

static struct mbo_gcm *gcm_of(EVP_CIPHER_CTX *ctx)
{
    return &eng_of(ctx)->g;
}

/* init: EVP_CipherInit with a key and/or an IV (either may be NULL: the
 * other is kept); always called (EVP_CIPH_ALWAYS_CALL_INIT), so the
 * direction follows every init. */
static int gcm_init(EVP_CIPHER_CTX *ctx, const unsigned char *key, const unsigned char *iv, int enc)
{
    struct mbo_gcm *g = gcm_of(ctx);
    mbo_gcm_set_enc(g, enc != 0);
    if (key != NULL && !mbo_gcm_set_key(g, key, eng_of(ctx)->key_len)) {
        return 0;
    }
    return iv == NULL || mbo_gcm_set_iv(g, iv, g->iv_len);
}

/* do_cipher: a TLS 1.2 record after EVP_CTRL_AEAD_TLS1_AAD (its length, or
 * -1); otherwise AAD (out NULL) or data (len), or final (in NULL: 0, or -1
 * when the tag does not verify). */
static int gcm_do_cipher(EVP_CIPHER_CTX *ctx, unsigned char *out, const unsigned char *in,
                         size_t len)
{
    struct mbo_gcm *g = gcm_of(ctx);
    if (len > INT_MAX) {
        return -1;
    }
    if (g->tls_aad_len >= 0) {
        size_t n;
        if (out != in) {
            g->tls_aad_len = -1; /* the record is over */
            return -1;
        }
        return mbo_gcm_tls_record(g, out, len, &n) ? (int)n : -1;
    }
    if (in == NULL) {
        return mbo_gcm_final(g) == 1 ? 0 : -1;
    }
    return mbo_gcm_update(g, out, in, len) ? (int)len : -1;
}

static int gcm_ctrl(EVP_CIPHER_CTX *ctx, int type, int arg, void *ptr)
{
    struct mbo_gcm *g = gcm_of(ctx);
    switch (type) {
    case EVP_CTRL_INIT:
        mbo_gcm_init(g, EVP_CIPHER_CTX_is_encrypting(ctx));
        eng_of(ctx)->key_len = (size_t)EVP_CIPHER_CTX_get_key_length(ctx);
        return 1;
    case EVP_CTRL_GET_IVLEN:
        *(int *)ptr = (int)g->iv_len;
        return 1;
    case EVP_CTRL_AEAD_SET_IVLEN:
        return arg > 0 && mbo_gcm_set_iv_len(g, (size_t)arg);
    case EVP_CTRL_AEAD_SET_TAG:
        return arg > 0 && mbo_gcm_set_tag(g, ptr, (size_t)arg);
    case EVP_CTRL_AEAD_GET_TAG:
        return arg > 0 && mbo_gcm_get_tag(g, ptr, (size_t)arg);
    case EVP_CTRL_GCM_SET_IV_FIXED:
        return (arg == -1 || arg > 0) &&
               mbo_gcm_set_iv_fixed(g, ptr, arg == -1 ? (size_t)-1 : (size_t)arg);
    case EVP_CTRL_GCM_IV_GEN:
        return mbo_gcm_iv_gen(g, ptr, arg > 0 ? (size_t)arg : 0);
    case EVP_CTRL_GCM_SET_IV_INV:
        return arg > 0 && mbo_gcm_set_iv_inv(g, ptr, (size_t)arg);
    case EVP_CTRL_AEAD_TLS1_AAD:
        return arg > 0 ? mbo_gcm_tls_aad(g, ptr, (size_t)arg) : 0;
    case EVP_CTRL_COPY: {
        /* EVP copied the cipher data into the new context (key_len too):
         * share the key. */
        struct mbo_gcm *dst = gcm_of(ptr);
        mbo_gcm_dup(dst, g);
        return 1;
    }
    default:
        return -1;
    }
}

static int gcm_cleanup(EVP_CIPHER_CTX *ctx)
{
    struct eng_gcm *e = eng_of(ctx);
    if (e != NULL) {
        mbo_gcm_cleanup(&e->g);
    }
    return 1;
}

/* The flags of OpenSSL's own GCM ciphers. */
#define GCM_FLAGS                                                                                  \
    (EVP_CIPH_GCM_MODE | EVP_CIPH_FLAG_AEAD_CIPHER | EVP_CIPH_FLAG_CUSTOM_CIPHER |                 \
     EVP_CIPH_CUSTOM_IV | EVP_CIPH_CUSTOM_IV_LENGTH | EVP_CIPH_ALWAYS_CALL_INIT |                  \
     EVP_CIPH_CTRL_INIT | EVP_CIPH_CUSTOM_COPY | EVP_CIPH_FLAG_DEFAULT_ASN1)

static EVP_CIPHER *make(int nid, int key_len)
{
    EVP_CIPHER *c = EVP_CIPHER_meth_new(nid, 1, key_len);
    if (c == NULL || !EVP_CIPHER_meth_set_iv_length(c, 12) ||
        !EVP_CIPHER_meth_set_flags(c, GCM_FLAGS) || !EVP_CIPHER_meth_set_init(c, gcm_init) ||
        !EVP_CIPHER_meth_set_do_cipher(c, gcm_do_cipher) ||
        !EVP_CIPHER_meth_set_ctrl(c, gcm_ctrl) || !EVP_CIPHER_meth_set_cleanup(c, gcm_cleanup) ||
        !EVP_CIPHER_meth_set_impl_ctx_size(c, sizeof(struct eng_gcm))) {
        EVP_CIPHER_meth_free(c);
        return NULL;
    }
    return c;
}

int mbe_gcm_setup(void)
{
    for (int i = 0; i < NUM_CIPHERS; i++) {
        if ((ciphers[i] = make(nids[i], 16 + 8 * i)) == NULL) {
            return 0;
        }
    }
    return 1;
}

/* builtin: OpenSSL's own cipher for nids[i]. */
static const EVP_CIPHER *builtin(int i)
{
    return i == 0 ? EVP_aes_128_gcm() : i == 1 ? EVP_aes_192_gcm() : EVP_aes_256_gcm();
}

int mbe_ciphers(ENGINE *e, const EVP_CIPHER **cipher, const int **nid_list, int nid)
{
    (void)e;
    if (cipher == NULL) {
        *nid_list = nids;
        return NUM_CIPHERS;
    }
    for (int i = 0; i < NUM_CIPHERS; i++) {
        if (nids[i] == nid) {
            *cipher = (mbo_policy() & MBO_FAM_GCM) != 0 ? ciphers[i] : builtin(i);
            return 1;
        }
    }
    *cipher = NULL;
    return 0;
}
