/*
 * fuzz_gcm.c - AES-GCM seal and open, one-shot (mbc_gcm_seal/open and their
 * _short_tag forms) and streaming with fuzzed piece boundaries, against
 * OpenSSL's EVP AES-GCM: ciphertext, plaintext and tag must be equal, open
 * must accept exactly when OpenSSL accepts, and every error must be one the
 * header documents for the arguments, with nothing written on error. Key
 * sizes 16/24/32 (others must be refused), IVs of 1..1023 bytes (OpenSSL 3.0
 * takes at most 128: longer ones are checked against a small reference GCM
 * built on OpenSSL's AES, itself checked against OpenSSL at start), every tag
 * length byte, and each implementation the CPU runs.
 *
 * Input:
 *   0      implementation: bits 0-3 pick it; bit 4 set: once the key exists,
 *          select implementation bits 5-7 (the key must keep its own)
 *   1      mode: bits 0-2: 0 seal, 1 open, 2 seal_short_tag, 3 open_short_tag,
 *          4 streaming seal, 5 streaming open (6, 7 as 4, 5); bit 3: in
 *          place; bit 4: (open) tag = the correct tag XOR the 16 tag bytes,
 *          else the tag bytes; bits 5-7: a NULL argument: 1 key, 2 tag, 3 iv,
 *          4 aad, 5 in, 6 out, 7 the AES key given to mbc_gcm_key_new
 *   2      AES key length: bits 0-1: 16, 24, 32, or (3) bits 2-7 as the length
 *   3      tag_len
 *   4      streaming: bits 0-1 mbc_gcm_init flags; bits 2-3 a misuse: 1 a call
 *          of the other direction after a data call (of any length), 2 the
 *          other final call after one, 3 one more call after the final one
 *          (all MBC_ERR_STATE); bit 4 (any mode): counter wrap: the IV is
 *          replaced by the 16-byte one whose J0 is iv[0..11] || 2^32 - s,
 *          s = 1 + iv[12] % 48, so that the 32-bit counter wraps in the data
 *   5..6   iv_len (little-endian, mod 1024)
 *   7..8   aad_len (mod 4096)
 *   9      number of streaming pieces (mod 64)
 *   then   32 key bytes, 16 tag bytes, 2 bytes per piece (a: bit 0 data, else
 *          AAD; length a >> 1 << 8 | b, mod 2048), iv, aad, data (the rest)
 * Streaming feeds the pieces in order, each taking what is left of its buffer,
 * then the rest of the AAD (if no data went in yet) and of the data. AAD after
 * a zero-length data piece is allowed (issue 9, promise 3), after a non-empty
 * one it is MBC_ERR_STATE.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "fuzz_util.h"
#include "gcm_ref.h"

#define IV_MAX 1024
#define OSSL_IV_MAX 128 /* OpenSSL 3.0's GCM refuses longer IVs */
#define CANARY 0xA5

enum mode { SEAL, OPEN, SEAL_SHORT, OPEN_SHORT, STREAM_SEAL, STREAM_OPEN };
enum null_arg { NULL_NONE, NULL_KEY, NULL_TAG, NULL_IV, NULL_AAD, NULL_IN, NULL_OUT, NULL_K };
enum misuse { MISUSE_NONE, MISUSE_OTHER_DIRECTION, MISUSE_OTHER_FINAL, MISUSE_AFTER_FINAL };

/* ---------------------------------------------------------------- references */

static const EVP_CIPHER *aes_gcm(size_t k_len)
{
    return k_len == 16 ? EVP_aes_128_gcm() : k_len == 24 ? EVP_aes_192_gcm() : EVP_aes_256_gcm();
}

static const EVP_CIPHER *aes_ecb(size_t k_len)
{
    return k_len == 16 ? EVP_aes_128_ecb() : k_len == 24 ? EVP_aes_192_ecb() : EVP_aes_256_ecb();
}

struct gcm_args {
    const uint8_t *k;
    size_t k_len;
    const uint8_t *iv;
    size_t iv_len;
    const uint8_t *aad;
    size_t aad_len;
    const uint8_t *in;
    size_t len;
};

/*
 * ossl_gcm: OpenSSL's encryption (enc = 1: out = ciphertext, full = the 16-byte
 * tag) or decryption (out = plaintext; the tag_len bytes of tag are checked).
 * Returns 1 (sealed, or the tag verified), 0 (the tag did not verify), -1
 * (OpenSSL refused the arguments).
 */
static int ossl_gcm(int enc, const struct gcm_args *a, uint8_t *out, uint8_t full[16],
                    const uint8_t *tag, size_t tag_len)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int n = 0, rc = -1;
    if (c != NULL && EVP_CipherInit_ex(c, aes_gcm(a->k_len), NULL, NULL, NULL, enc) == 1 &&
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, (int)a->iv_len, NULL) == 1 &&
        EVP_CipherInit_ex(c, NULL, NULL, a->k, a->iv, enc) == 1 &&
        (a->aad_len == 0 || EVP_CipherUpdate(c, NULL, &n, a->aad, (int)a->aad_len) == 1) &&
        (a->len == 0 || EVP_CipherUpdate(c, out, &n, a->in, (int)a->len) == 1)) {
        if (enc) {
            rc = EVP_CipherFinal_ex(c, out + a->len, &n) == 1 &&
                         EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, full) == 1
                     ? 1
                     : -1;
        } else if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, (int)tag_len, (void *)tag) == 1) {
            rc = EVP_CipherFinal_ex(c, out + a->len, &n) == 1;
        }
    }
    EVP_CIPHER_CTX_free(c);
    return rc;
}

/* The reference GCM for IVs OpenSSL does not take (SP 800-38D, bit by bit). */

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static void aes_block(EVP_CIPHER_CTX *ecb, const uint8_t in[16], uint8_t out[16])
{
    int n = 0;
    if (EVP_EncryptUpdate(ecb, out, &n, in, 16) != 1 || n != 16) {
        abort();
    }
}

/* ref_gcm: as ossl_gcm for any IV length; full gets the tag of the
 * ciphertext in both directions. */
static void ref_gcm(int enc, const struct gcm_args *a, uint8_t *out, uint8_t full[16])
{
    EVP_CIPHER_CTX *ecb = EVP_CIPHER_CTX_new();
    if (ecb == NULL || EVP_EncryptInit_ex(ecb, aes_ecb(a->k_len), NULL, a->k, NULL) != 1) {
        abort();
    }
    EVP_CIPHER_CTX_set_padding(ecb, 0);
    uint8_t h[16] = {0}, j0[16] = {0}, ctr[16], ks[16], y[16] = {0}, lens[16] = {0};
    aes_block(ecb, h, h);
    if (a->iv_len == 12) {
        memcpy(j0, a->iv, 12);
        j0[15] = 1;
    } else {
        mbt_ghash(j0, h, a->iv, a->iv_len);
        put_be64(lens + 8, (uint64_t)a->iv_len * 8);
        mbt_ghash(j0, h, lens, 16);
    }
    memcpy(ctr, j0, 16);
    for (size_t off = 0; off < a->len; off += 16) {
        for (int i = 15; i >= 12 && ++ctr[i] == 0; i--) {
        }
        aes_block(ecb, ctr, ks);
        for (size_t j = 0; j < 16 && off + j < a->len; j++) {
            out[off + j] = a->in[off + j] ^ ks[j];
        }
    }
    mbt_ghash(y, h, a->aad, a->aad_len);
    mbt_ghash(y, h, enc ? out : a->in, a->len);
    put_be64(lens, (uint64_t)a->aad_len * 8);
    put_be64(lens + 8, (uint64_t)a->len * 8);
    mbt_ghash(y, h, lens, 16);
    aes_block(ecb, j0, ks);
    for (int j = 0; j < 16; j++) {
        full[j] = y[j] ^ ks[j];
    }
    EVP_CIPHER_CTX_free(ecb);
}

/* expected: what a correct GCM gives for a: out (a->len bytes: the
 * ciphertext when enc = 1, else the plaintext) and full, the 16-byte tag of
 * the ciphertext. OpenSSL where it takes the IV, else the reference. */
static void expected(int enc, const struct gcm_args *a, uint8_t *out, uint8_t full[16])
{
    if (a->iv_len > OSSL_IV_MAX) {
        fz_count("IV beyond OpenSSL's 128 bytes");
        ref_gcm(enc, a, out, full);
        return;
    }
    if (enc) {
        FZ_CHECK(ossl_gcm(1, a, out, full, NULL, 0) == 1, "OpenSSL refused to seal");
        return;
    }
    /* OpenSSL does not reveal the tag it computes when opening: seal the
     * plaintext again for it. */
    const uint8_t any_tag[16] = {0};
    FZ_CHECK(ossl_gcm(0, a, out, NULL, any_tag, 16) >= 0, "OpenSSL refused to open");
    uint8_t *again = fz_alloc(a->len);
    struct gcm_args b = *a;
    b.in = out;
    FZ_CHECK(ossl_gcm(1, &b, again, full, NULL, 0) == 1, "OpenSSL refused to seal");
    fz_expect_same("OpenSSL round trip", again, a->in, a->len);
    free(again);
}

/* accepts: 1 if opening a (a ciphertext whose full tag is full) with the
 * tag_len bytes of tag succeeds: OpenSSL's verdict where it takes the IV. */
static int accepts(const struct gcm_args *a, const uint8_t full[16], const uint8_t *tag,
                   size_t tag_len)
{
    if (tag_len < 1 || tag_len > 16) {
        return 0; /* OpenSSL refuses such tags */
    }
    if (a->iv_len > OSSL_IV_MAX) {
        return memcmp(tag, full, tag_len) == 0;
    }
    uint8_t *scratch = fz_alloc(a->len);
    const int rc = ossl_gcm(0, a, scratch, NULL, tag, tag_len);
    free(scratch);
    FZ_CHECK(rc >= 0, "OpenSSL refused to open");
    return rc;
}

/* self_test: the reference GCM agrees with OpenSSL on every IV length
 * OpenSSL takes, with and without AAD and data. */
static void self_test(void)
{
    uint8_t k[32], iv[OSSL_IV_MAX], aad[40], in[70], out[70], full[16], want[70], want_tag[16];
    fz_seed_rand(k, sizeof(k));
    fz_seed_rand(iv, sizeof(iv));
    fz_seed_rand(aad, sizeof(aad));
    fz_seed_rand(in, sizeof(in));
    for (size_t iv_len = 1; iv_len <= OSSL_IV_MAX; iv_len++) {
        const size_t len = iv_len % sizeof(in);
        const struct gcm_args a = {k,   16 + 8 * (iv_len % 3), iv, iv_len,
                                   aad, iv_len % sizeof(aad),  in, len};
        ref_gcm(1, &a, out, full);
        FZ_CHECK(ossl_gcm(1, &a, want, want_tag, NULL, 0) == 1, "OpenSSL refused to seal");
        fz_expect_same("reference GCM ciphertext", out, want, len);
        fz_expect_same("reference GCM tag", full, want_tag, 16);
    }
}

/* --------------------------------------------------------------- one input */

struct input {
    unsigned impl_sel;
    const char *impl;
    enum mode mode;
    int in_place, tag_from_ref, other_impl;
    unsigned other_sel;
    enum null_arg null;
    size_t k_len, tag_len;
    unsigned flags;
    enum misuse misuse;
    int wrap;
    uint8_t k[32], tag_bytes[16];
    size_t num_pieces;
    uint8_t pieces[2 * 64];
    struct gcm_args a; /* k, iv, aad, data (in, len) of the input */
};

static int tag_len_ok(size_t tag_len, int short_ok)
{
    return (tag_len >= 12 && tag_len <= 16) || (short_ok && (tag_len == 4 || tag_len == 8));
}

/* the_tag: a tag buffer of exactly tag_len bytes for an open: the input's tag
 * bytes, XORed with the correct tag if asked (zero past 16 bytes). */
static uint8_t *the_tag(const struct input *x, const uint8_t full[16])
{
    uint8_t *tag = fz_alloc(x->tag_len);
    for (size_t i = 0; i < x->tag_len; i++) {
        tag[i] = i < 16 ? (uint8_t)(x->tag_bytes[i] ^ (x->tag_from_ref ? full[i] : 0)) : 0;
    }
    return tag;
}

static void one_shot(const struct input *x, const mbc_gcm_key *key)
{
    const int seal = x->mode == SEAL || x->mode == SEAL_SHORT;
    const int short_ok = x->mode == SEAL_SHORT || x->mode == OPEN_SHORT;
    const struct gcm_args *a = &x->a;
    uint8_t *out = fz_alloc(a->len), *want = fz_alloc(a->len), full[16];
    uint8_t *before = fz_alloc(a->len);
    int accept = 0;

    /* The correct result first: an open's tag may be derived from it. No
     * IV: there is none, and the call must fail. */
    memset(full, 0, sizeof(full));
    if (a->iv_len != 0) {
        expected(seal, a, want, full);
    }
    uint8_t *tag = NULL;
    if (seal) {
        tag = fz_alloc(x->tag_len);
        memset(tag, CANARY, x->tag_len);
    } else {
        tag = the_tag(x, full);
        accept = a->iv_len != 0 && accepts(a, full, tag, x->tag_len);
    }
    if (x->in_place) {
        memcpy(out, a->in, a->len);
    } else {
        memset(out, CANARY, a->len);
    }
    memcpy(before, out, a->len);
    const uint8_t *in = x->in_place ? out : a->in;

    fz_errs errs = 0;
    const mbc_gcm_key *k = x->null == NULL_KEY ? NULL : key;
    uint8_t *t = x->null == NULL_TAG ? NULL : tag;
    const uint8_t *iv = x->null == NULL_IV ? NULL : a->iv;
    const uint8_t *aad = x->null == NULL_AAD ? NULL : a->aad;
    if (x->null == NULL_IN) {
        in = NULL;
    }
    uint8_t *o = x->null == NULL_OUT ? NULL : out;
    if (k == NULL || t == NULL || (iv == NULL && a->iv_len != 0) ||
        (aad == NULL && a->aad_len != 0) || ((in == NULL || o == NULL) && a->len != 0)) {
        errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
    }
    if (!tag_len_ok(x->tag_len, short_ok)) {
        errs |= FZ_ERR(MBC_ERR_TAG_LEN);
    }
    if (a->iv_len == 0) {
        errs |= FZ_ERR(MBC_ERR_IV_LEN);
    }

    mbc_err err;
    const char *what;
    switch (x->mode) {
    case SEAL:
        what = "mbc_gcm_seal";
        err = mbc_gcm_seal(k, o, t, x->tag_len, iv, a->iv_len, aad, a->aad_len, in, a->len);
        break;
    case SEAL_SHORT:
        what = "mbc_gcm_seal_short_tag";
        err =
            mbc_gcm_seal_short_tag(k, o, t, x->tag_len, iv, a->iv_len, aad, a->aad_len, in, a->len);
        break;
    case OPEN:
        what = "mbc_gcm_open";
        err = mbc_gcm_open(k, o, t, x->tag_len, iv, a->iv_len, aad, a->aad_len, in, a->len);
        break;
    default:
        what = "mbc_gcm_open_short_tag";
        err =
            mbc_gcm_open_short_tag(k, o, t, x->tag_len, iv, a->iv_len, aad, a->aad_len, in, a->len);
        break;
    }

    if (errs == 0 && !seal && !accept) {
        errs = FZ_ERR(MBC_ERR_AUTH);
    }
    fz_expect(what, err, errs);
    fz_count(err == MBC_OK         ? "one-shot OK"
             : err == MBC_ERR_AUTH ? "one-shot MBC_ERR_AUTH"
                                   : "one-shot refused");
    if (err == MBC_ERR_AUTH) {
        FZ_CHECK(fz_all(out, a->len, 0), "%s: MBC_ERR_AUTH left plaintext in out", what);
    } else if (err != MBC_OK) {
        fz_expect_same("out after an error (must be untouched)", out, before, a->len);
        if (seal) {
            FZ_CHECK(fz_all(tag, x->tag_len, CANARY), "%s: tag written on error", what);
        }
    } else {
        fz_expect_same(seal ? "ciphertext" : "plaintext", out, want, a->len);
        if (seal) {
            fz_expect_same("tag", tag, full, x->tag_len);
        }
    }
    free(tag);
    free(out);
    free(want);
    free(before);
}

/* stream: one streaming operation, pieces as the input says. */
static void stream(const struct input *x, const mbc_gcm_key *key)
{
    const int seal = x->mode == STREAM_SEAL;
    const struct gcm_args *a = &x->a;
    uint8_t *out = fz_alloc(a->len);
    if (x->in_place) {
        memcpy(out, a->in, a->len);
    } else {
        memset(out, CANARY, a->len);
    }
    const uint8_t *in = x->in_place ? out : a->in;
    mbc_gcm_ctx ctx;
    mbc_err (*update)(mbc_gcm_ctx *, uint8_t *, const uint8_t *, size_t) =
        seal ? mbc_gcm_encrypt : mbc_gcm_decrypt;
    mbc_err (*other)(mbc_gcm_ctx *, uint8_t *, const uint8_t *, size_t) =
        seal ? mbc_gcm_decrypt : mbc_gcm_encrypt;

    fz_errs errs = 0;
    const uint8_t *iv = x->null == NULL_IV ? NULL : a->iv;
    if (x->null == NULL_KEY || (iv == NULL && a->iv_len != 0)) {
        errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
    }
    if (a->iv_len == 0) {
        errs |= FZ_ERR(MBC_ERR_IV_LEN);
    }
    if ((x->flags & ~MBC_GCM_SHORT_TAGS) != 0) {
        errs |= FZ_ERR(MBC_ERR_BAD_PARAM);
    }
    mbc_err err = mbc_gcm_init(&ctx, x->null == NULL_KEY ? NULL : key, iv, a->iv_len, x->flags);
    fz_expect("mbc_gcm_init", err, errs);
    if (err != MBC_OK) {
        free(out);
        return;
    }

    size_t aad_off = 0, off = 0;
    /* data_in: a non-empty data piece went in (no AAD after it); data_call: a
     * data call of any length was made (it fixed the direction) */
    int data_in = 0, data_call = 0;
    for (size_t i = 0; i <= x->num_pieces + 1; i++) {
        /* the pieces, then the rest of the AAD, then the rest of the data */
        int data;
        size_t len;
        if (i < x->num_pieces) {
            data = x->pieces[2 * i] & 1;
            len = ((size_t)(x->pieces[2 * i] >> 1) << 8 | x->pieces[2 * i + 1]) % 2048;
        } else {
            data = i == x->num_pieces + 1;
            len = data ? a->len - off : a->aad_len - aad_off;
            if (!data && data_in) {
                continue;
            }
        }
        if (!data) {
            len = len < a->aad_len - aad_off ? len : a->aad_len - aad_off;
            const uint8_t *p = x->null == NULL_AAD ? NULL : a->aad + aad_off;
            errs = (data_in ? FZ_ERR(MBC_ERR_STATE) : 0) |
                   (p == NULL && len != 0 ? FZ_ERR(MBC_ERR_NULL_PARAM) : 0);
            fz_expect("mbc_gcm_aad", mbc_gcm_aad(&ctx, p, len), errs);
            if (errs != 0) {
                free(out);
                return; /* the header does not say what the context is then */
            }
            aad_off += len;
            continue;
        }
        len = len < a->len - off ? len : a->len - off;
        if (i == x->num_pieces + 1 && len == 0) {
            break;
        }
        const uint8_t *pi = x->null == NULL_IN ? NULL : in + off;
        uint8_t *po = x->null == NULL_OUT ? NULL : out + off;
        errs = (pi == NULL || po == NULL) && len != 0 ? FZ_ERR(MBC_ERR_NULL_PARAM) : 0;
        fz_expect(seal ? "mbc_gcm_encrypt" : "mbc_gcm_decrypt", update(&ctx, po, pi, len), errs);
        if (errs != 0) {
            free(out);
            return;
        }
        off += len;
        data_in |= len != 0;
        data_call = 1;
    }

    if (data_call && x->misuse == MISUSE_OTHER_DIRECTION) {
        uint8_t byte = 0;
        fz_expect("data in the other direction", other(&ctx, &byte, &byte, 1),
                  FZ_ERR(MBC_ERR_STATE));
        free(out);
        return;
    }
    uint8_t tag16[16] = {0};
    if (data_call && x->misuse == MISUSE_OTHER_FINAL) {
        fz_expect("the other final call",
                  seal ? mbc_gcm_verify(&ctx, tag16, 16) : mbc_gcm_finish(&ctx, tag16, 16),
                  FZ_ERR(MBC_ERR_STATE));
        free(out);
        return;
    }

    /* What went in is what the result must match. */
    const struct gcm_args fed = {a->k, a->k_len, a->iv, a->iv_len, a->aad, aad_off, a->in, off};
    uint8_t *want = fz_alloc(off), full[16];
    expected(seal, &fed, want, full);
    uint8_t *tag;
    int accept = 0;
    if (seal) {
        tag = fz_alloc(x->tag_len);
        memset(tag, CANARY, x->tag_len);
    } else {
        tag = the_tag(x, full);
        accept = accepts(&fed, full, tag, x->tag_len);
    }
    fz_expect_same(seal ? "streamed ciphertext" : "streamed plaintext", out, want, off);

    errs = 0;
    uint8_t *t = x->null == NULL_TAG ? NULL : tag;
    if (t == NULL) {
        errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
    }
    if (!tag_len_ok(x->tag_len, (x->flags & MBC_GCM_SHORT_TAGS) != 0)) {
        errs |= FZ_ERR(MBC_ERR_TAG_LEN);
    }
    if (seal) {
        err = mbc_gcm_finish(&ctx, t, x->tag_len);
        fz_expect("mbc_gcm_finish", err, errs);
        if (err == MBC_OK) {
            fz_expect_same("streamed tag", tag, full, x->tag_len);
        } else if (t != NULL) {
            FZ_CHECK(fz_all(tag, x->tag_len, CANARY), "mbc_gcm_finish: tag written on error");
        }
    } else {
        if (errs == 0 && !accept) {
            errs = FZ_ERR(MBC_ERR_AUTH);
        }
        err = mbc_gcm_verify(&ctx, t, x->tag_len);
        fz_expect("mbc_gcm_verify", err, errs);
    }
    fz_count(err == MBC_OK         ? "stream OK"
             : err == MBC_ERR_AUTH ? "stream MBC_ERR_AUTH"
                                   : "stream final refused");
    if (err == MBC_OK || err == MBC_ERR_AUTH) {
        FZ_CHECK(fz_all((const uint8_t *)&ctx, sizeof(ctx), 0), "context not wiped");
        if (x->misuse == MISUSE_AFTER_FINAL) {
            fz_expect("a call on a finished context", mbc_gcm_aad(&ctx, tag16, 1),
                      FZ_ERR(MBC_ERR_STATE));
            fz_expect("a call on a finished context", mbc_gcm_finish(&ctx, tag16, 16),
                      FZ_ERR(MBC_ERR_STATE));
        }
    }
    free(tag);
    free(want);
    free(out);
}

/* wrap_iv: x's IV becomes the 16-byte one whose J0 ends in the counter
 * 2^32 - s (see the input format). */
static void wrap_iv(struct input *x)
{
    uint8_t h[16] = {0}, j0[16] = {0}, *iv = fz_alloc(16);
    EVP_CIPHER_CTX *ecb = EVP_CIPHER_CTX_new();
    FZ_CHECK(ecb != NULL && EVP_EncryptInit_ex(ecb, aes_ecb(x->k_len), NULL, x->k, NULL) == 1,
             "AES-ECB");
    aes_block(ecb, h, h);
    EVP_CIPHER_CTX_free(ecb);
    memcpy(j0, x->a.iv, x->a.iv_len < 12 ? x->a.iv_len : 12);
    const uint32_t ctr = 0u - (1u + (x->a.iv_len > 12 ? x->a.iv[12] % 48u : 0u));
    for (int i = 0; i < 4; i++) {
        j0[12 + i] = (uint8_t)(ctr >> (24 - 8 * i));
    }
    mbt_gcm_iv_for_j0(iv, j0, h);
    free((void *)x->a.iv);
    x->a.iv = iv;
    x->a.iv_len = 16;
}

static void parse(struct input *x, const uint8_t *data, size_t size)
{
    struct fz_in in = {data, size};
    const unsigned b0 = fz_u8(&in), b1 = fz_u8(&in), b2 = fz_u8(&in);
    x->impl_sel = b0 & 15;
    x->impl = fz_impl(MBC_ALG_GCM, x->impl_sel);
    x->other_impl = (b0 >> 4) & 1;
    x->other_sel = b0 >> 5;
    x->mode = (enum mode)((b1 & 7) < 6 ? (b1 & 7) : (b1 & 7) - 2);
    x->in_place = (b1 >> 3) & 1;
    x->tag_from_ref = (b1 >> 4) & 1;
    x->null = (enum null_arg)(b1 >> 5);
    static const size_t k_lens[3] = {16, 24, 32};
    x->k_len = (b2 & 3) < 3 ? k_lens[b2 & 3] : b2 >> 2;
    x->tag_len = fz_u8(&in);
    const unsigned b4 = fz_u8(&in);
    x->flags = b4 & 3;
    x->misuse = (enum misuse)((b4 >> 2) & 3);
    x->wrap = (b4 >> 4) & 1;
    x->a.iv_len = fz_u16(&in) % IV_MAX;
    x->a.aad_len = fz_u16(&in) % 4096;
    x->num_pieces = fz_u8(&in) % 64;
    for (size_t i = 0; i < sizeof(x->k); i++) {
        x->k[i] = fz_u8(&in);
    }
    for (size_t i = 0; i < sizeof(x->tag_bytes); i++) {
        x->tag_bytes[i] = fz_u8(&in);
    }
    for (size_t i = 0; i < 2 * x->num_pieces; i++) {
        x->pieces[i] = fz_u8(&in);
    }
    x->a.k = x->k;
    x->a.k_len = x->k_len;
    x->a.iv = fz_dup(&in, x->a.iv_len);
    x->a.aad = fz_dup(&in, x->a.aad_len);
    size_t len;
    const uint8_t *rest = fz_rest(&in, &len);
    uint8_t *d = fz_alloc(len);
    memcpy(d, rest, len);
    x->a.in = d;
    x->a.len = len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct input x;
    parse(&x, data, size);
    fz_use_impl(MBC_ALG_GCM, x.impl_sel);

    mbc_gcm_key *key = (mbc_gcm_key *)&x; /* any non-NULL value: must become NULL on error */
    const mbc_err err = mbc_gcm_key_new(&key, x.null == NULL_K ? NULL : x.k, x.k_len);
    const int k_ok = x.k_len == 16 || x.k_len == 24 || x.k_len == 32;
    fz_expect("mbc_gcm_key_new", err,
              (x.null == NULL_K ? FZ_ERR(MBC_ERR_NULL_PARAM) : 0) |
                  (k_ok ? 0 : FZ_ERR(MBC_ERR_KEY_SIZE)));
    if (err != MBC_OK) {
        FZ_CHECK(key == NULL, "mbc_gcm_key_new: *key not NULL on error");
    } else {
        FZ_CHECK(strcmp(mbc_gcm_key_impl(key), x.impl) == 0, "key made under %s uses %s", x.impl,
                 mbc_gcm_key_impl(key));
        if (x.wrap) {
            fz_count("counter wrap");
            wrap_iv(&x);
        }
        if (x.other_impl) {
            fz_use_impl(MBC_ALG_GCM, x.other_sel);
        }
        if (x.mode == STREAM_SEAL || x.mode == STREAM_OPEN) {
            stream(&x, key);
        } else {
            one_shot(&x, key);
        }
        FZ_CHECK(strcmp(mbc_gcm_key_impl(key), x.impl) == 0, "key changed implementation");
        mbc_gcm_key_free(key);
    }
    free((void *)x.a.iv);
    free((void *)x.a.aad);
    free((void *)x.a.in);
    return 0;
}

/* ------------------------------------------------------------------- seeds */

static void write_seeds(const char *dir)
{
    static const size_t iv_lens[] = {12, 1, 16, 60, 128, 129, 300};
    static const size_t data_lens[] = {0, 1, 15, 16, 17, 64, 255, 256, 512, 1000};
    unsigned count = 0;
    for (unsigned impl = 0; impl < fz_num_impls(MBC_ALG_GCM); impl++) {
        for (unsigned mode = 0; mode < 6; mode++) {
            for (unsigned v = 0; v < 6; v++) {
                struct fz_out o = {.len = 0};
                const size_t iv_len = iv_lens[(mode + v) % 7];
                const size_t aad_len = (v * 13 + mode) % 40;
                const size_t len = data_lens[(v + 3 * mode) % 10];
                const unsigned short_tag = mode == 2 || mode == 3 ? (v & 1 ? 4 : 8) : 16 - v % 5;
                fz_put_u8(&o, impl);
                fz_put_u8(&o, mode | (v & 1) << 3 | 1u << 4); /* open: the correct tag */
                fz_put_u8(&o, v % 3);
                fz_put_u8(&o, mode >= 4 && (v & 1) ? (v & 2 ? 4 : 8) : short_tag);
                /* streaming flags; v = 4: the counter wraps in the data */
                fz_put_u8(&o, (mode >= 4 && (v & 1) ? MBC_GCM_SHORT_TAGS : 0) | (v == 4) << 4);
                fz_put_u16(&o, (unsigned)iv_len);
                fz_put_u16(&o, (unsigned)aad_len);
                const unsigned pieces = mode >= 4 ? 2 + v : 0;
                fz_put_u8(&o, pieces);
                uint8_t rnd[32];
                fz_seed_rand(rnd, 32);
                fz_put(&o, rnd, 32);
                uint8_t delta[16] = {0};
                delta[15] = v == 5; /* a wrong tag, or the correct one */
                fz_put(&o, delta, 16);
                for (unsigned i = 0; i < pieces; i++) {
                    /* alternate AAD and data pieces of a few sizes, some empty */
                    fz_put_u8(&o, i < pieces / 2 ? 0 : 1);
                    fz_put_u8(&o, (unsigned)((i * 7 + v) % 20));
                }
                uint8_t buf[2048];
                fz_seed_rand(buf, iv_len + aad_len + len);
                fz_put(&o, buf, iv_len + aad_len + len);
                char name[64];
                snprintf(name, sizeof(name), "seed-%03u", count++);
                fz_seed_write(dir, name, &o);
            }
        }
    }
}

const struct fz_target fz_target = {"fuzz_gcm", self_test, write_seeds};
