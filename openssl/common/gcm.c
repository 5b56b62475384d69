/*
 * gcm.c - AES-GCM the way OpenSSL drives a cipher context: key and IV set
 * in any order, AAD and data in pieces, the tag set or read around final,
 * and libssl's TLS 1.2 record mode (fixed IV, counting explicit IV, the
 * 13-byte record AAD, one call per record). The semantics follow the
 * documented behaviour of OpenSSL's own GCM (the default provider's
 * parameters); the crypto is mbcrypto's.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "mbo_local.h"

/* The key object, shared by duplicated contexts; with the key bytes, so
 * that setting the same key again (EVP callers re-initialise with the key
 * for every message) reuses it: mbcrypto's key setup costs microseconds. */
struct mbo_gcm_key {
    int refs;
    mbc_gcm_key *key;
    size_t len;
    uint8_t bytes[32];
};

/* TLS 1.2: explicit IV (the invocation field carried in each record), tag,
 * fixed part of the IV. */
#define TLS_EXPLICIT_IV 8
#define TLS_TAG 16
#define TLS_FIXED_IV 4
#define TLS_AAD 13

static void key_release(struct mbo_gcm_key *k)
{
    if (k != NULL && __atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        mbc_gcm_key_free(k->key);
        OPENSSL_clear_free(k, sizeof(*k));
    }
}

/* end_message: forgets any message in progress (a lazy or one-shot one
 * left nothing secret: its AAD, IV, ciphertext and tag are public). */
static void end_message(struct mbo_gcm *g)
{
    if (g->started && !g->lazy && !g->oneshot) {
        OPENSSL_cleanse(&g->ctx, sizeof(g->ctx));
    }
    g->started = 0;
    g->lazy = 0;
    g->oneshot = 0;
    if (g->shadow_on) {
        OPENSSL_cleanse(&g->shadow, sizeof(g->shadow));
        g->shadow_on = 0;
    }
}

/* checkable: a tag length mbc_gcm_verify takes (with MBC_GCM_SHORT_TAGS). */
static int checkable(size_t len)
{
    return len == 4 || len == 8 || (len >= 12 && len <= MBC_GCM_TAG_LEN);
}

/* copy_iv: an IV copy, inline for the usual 12 bytes (every message makes
 * two: the caller's, and the message's own). */
static void copy_iv(uint8_t *dst, const uint8_t *src, size_t len)
{
    if (len == 12) {
        memcpy(dst, src, 12);
    } else {
        memcpy(dst, src, len);
    }
}

/* try_start: starts a message when both a key and an unused IV are there:
 * a lazy one (mbo.h), with its own copy of the IV (TLS IV generation counts
 * g->iv on at once). */
static int try_start(struct mbo_gcm *g)
{
    if (g->key == NULL || !g->iv_pending) {
        return 1;
    }
    end_message(g);
    copy_iv(g->miv, g->iv, g->iv_len);
    g->started = 1;
    g->lazy = 1;
    g->aad_len = 0;
    g->iv_pending = 0;
    g->data_seen = 0;
    g->touched = 0;
    return 1;
}

/* stream_start: gives a lazy message its streaming context, fed the AAD
 * held. Opening, unless the tag is already known and checkable, the shadow
 * starts too (mbo.h); the first data piece may still drop it. */
static int stream_start(struct mbo_gcm *g)
{
    const mbc_gcm_key *k = g->key->key;
    g->lazy = 0;
    int ok = mbc_gcm_init(&g->ctx, k, g->miv, g->iv_len, MBC_GCM_SHORT_TAGS) == MBC_OK &&
             mbc_gcm_aad(&g->ctx, g->aad, g->aad_len) == MBC_OK;
    if (ok && !g->enc && !(g->tag_fresh && checkable(g->tag_len))) {
        g->shadow_on = 1;
        ok = mbc_gcm_init(&g->shadow, k, g->miv, g->iv_len, 0) == MBC_OK &&
             mbc_gcm_aad(&g->shadow, g->aad, g->aad_len) == MBC_OK;
    }
    if (!ok) {
        end_message(g);
    }
    return ok;
}

/* oneshot: the first data piece of a lazy message in one call (mbo.h).
 * 1: done; 0: failed; -1: an opening whose tag did not match, now a
 * streaming message: the caller decrypts the held ciphertext into out. */
static int oneshot(struct mbo_gcm *g, uint8_t *out, const uint8_t *in, size_t len)
{
    const mbc_gcm_key *k = g->key->key;
    g->lazy = 0;
    g->data_seen = 1;
    g->verdict = 0;
    if (g->enc) {
        if (mbc_gcm_seal(k, out, g->otag, sizeof(g->otag), g->miv, g->iv_len, g->aad, g->aad_len,
                         in, len) != MBC_OK) {
            end_message(g);
            return 0;
        }
        memcpy(g->held, out, len);
    } else {
        /* From the copy: out may be in, and is wiped when the tag fails. */
        memcpy(g->held, in, len);
        const mbc_err err = mbc_gcm_open(k, out, g->tag, MBC_GCM_TAG_LEN, g->miv, g->iv_len, g->aad,
                                         g->aad_len, g->held, len);
        if (err == MBC_ERR_AUTH) {
            g->held_len = len;
            return stream_start(g) ? -1 : 0;
        }
        if (err != MBC_OK) {
            end_message(g);
            return 0;
        }
        g->verdict = 1;
    }
    g->held_len = len;
    g->oneshot = 1;
    return 1;
}

/* replay: turns a one-shot message into a streaming one that has had its
 * data: the held ciphertext through the streaming context again (sealing,
 * its plaintext recovered first by an opening context beside it). */
static int replay(struct mbo_gcm *g)
{
    uint8_t buf[MBO_GCM_ONESHOT_MAX];
    const size_t n = g->held_len;
    g->oneshot = 0;
    if (!stream_start(g)) {
        return 0;
    }
    int ok;
    if (g->enc) {
        mbc_gcm_ctx d;
        ok = mbc_gcm_init(&d, g->key->key, g->miv, g->iv_len, 0) == MBC_OK &&
             mbc_gcm_aad(&d, g->aad, g->aad_len) == MBC_OK &&
             mbc_gcm_decrypt(&d, buf, g->held, n) == MBC_OK &&
             mbc_gcm_encrypt(&g->ctx, buf, buf, n) == MBC_OK;
        OPENSSL_cleanse(&d, sizeof(d));
    } else {
        ok = mbc_gcm_decrypt(&g->ctx, buf, g->held, n) == MBC_OK;
    }
    OPENSSL_cleanse(buf, n);
    if (!ok) {
        end_message(g);
    }
    return ok;
}

/* start_rand_iv: sealing with no IV ever given, as OpenSSL 3.0's GCM: a
 * random IV of iv_len (>= 12) bytes, readable through the IV parameters. */
static int start_rand_iv(struct mbo_gcm *g)
{
    if (g->started || !g->enc || !g->rand_iv || g->iv_set || g->key == NULL || g->iv_len < 12 ||
        RAND_bytes(g->iv, (int)g->iv_len) <= 0) {
        return g->started;
    }
    g->iv_set = 1;
    g->iv_pending = 1;
    return try_start(g);
}

void mbo_gcm_init(struct mbo_gcm *g, int enc)
{
    memset(g, 0, sizeof(*g));
    g->enc = enc;
    g->iv_len = 12;
    g->tls_aad_len = -1;
}

void mbo_gcm_set_enc(struct mbo_gcm *g, int enc)
{
    if (g->enc != enc) {
        end_message(g);
        g->enc = enc;
    }
}

/* same_key: whether the n bytes at a and b are equal (n a multiple of 8, at
 * most 32), in a time that depends on n only: 64-bit words XORed and ORed
 * together, one branch on the result. EVP callers re-initialise with the
 * key for every message, and CRYPTO_memcmp's byte loop was 6.6% of a
 * 64-byte AEAD message. */
static int same_key(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint64_t d = 0;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        d |= x ^ y;
    }
    return d == 0;
}

/* mbo_gcm_set_key: a message started by its IV and not yet fed (the key
 * given after the IV, as OpenSSL's GCM allows) keeps that IV and goes on
 * with the key given. */
int mbo_gcm_set_key(struct mbo_gcm *g, const uint8_t *key, size_t key_len)
{
    const int untouched = g->started && !g->touched;
    if (g->key != NULL && g->key->len == key_len && key_len % 8 == 0 &&
        same_key(g->key->bytes, key, key_len)) {
        g->tls_records = 0;
        if (untouched) {
            return 1;
        }
        end_message(g);
        return try_start(g);
    }
    /* An untouched message is lazy, with nothing of the key yet: it goes
     * on with the new one. */
    if (!untouched) {
        end_message(g);
    }
    struct mbo_gcm_key *k = OPENSSL_zalloc(sizeof(*k));
    if (k == NULL || key_len > sizeof(k->bytes)) {
        OPENSSL_free(k);
        return 0;
    }
    if (mbc_gcm_key_new(&k->key, key, key_len) != MBC_OK) {
        OPENSSL_free(k);
        return 0;
    }
    k->refs = 1;
    k->len = key_len;
    memcpy(k->bytes, key, key_len);
    key_release(g->key);
    g->key = k;
    g->tls_records = 0;
    return try_start(g);
}

int mbo_gcm_set_iv_len(struct mbo_gcm *g, size_t iv_len)
{
    if (iv_len == 0 || iv_len > MBO_GCM_IV_MAX) {
        return 0;
    }
    if (iv_len != g->iv_len) {
        end_message(g);
        g->iv_len = iv_len;
        g->iv_set = 0;
        g->iv_pending = 0;
        g->iv_gen = 0;
    }
    return 1;
}

int mbo_gcm_set_iv(struct mbo_gcm *g, const uint8_t *iv, size_t len)
{
    if (len != g->iv_len) {
        return 0;
    }
    copy_iv(g->iv, iv, len);
    g->iv_set = 1;
    g->iv_pending = 1;
    return try_start(g);
}

int mbo_gcm_set_tag(struct mbo_gcm *g, const uint8_t *tag, size_t len)
{
    if (g->enc || tag == NULL || len == 0 || len > MBC_GCM_TAG_LEN) {
        return 0;
    }
    /* A one-shot opening checked the tag it had: the new one is checked at
     * final, by the streaming context. */
    if (g->oneshot && !replay(g)) {
        return 0;
    }
    memcpy(g->tag, tag, len);
    g->tag_len = len;
    g->tag_fresh = 1;
    return 1;
}

int mbo_gcm_get_tag(const struct mbo_gcm *g, uint8_t *tag, size_t len)
{
    if (!g->enc || g->tag_len == 0 || len == 0 || len > MBC_GCM_TAG_LEN) {
        return 0;
    }
    memcpy(tag, g->tag, len);
    return 1;
}

/* shadow_seal: the shadow seals len bytes of plaintext (giving back the
 * ciphertext, which is dropped), in pieces through a stack buffer. */
static mbc_err shadow_seal(struct mbo_gcm *g, const uint8_t *pt, size_t len)
{
    uint8_t buf[1024];
    mbc_err err = MBC_OK;
    for (size_t at = 0; at < len && err == MBC_OK;) {
        const size_t n = len - at < sizeof(buf) ? len - at : sizeof(buf);
        err = mbc_gcm_encrypt(&g->shadow, buf, pt + at, n);
        at += n;
    }
    OPENSSL_cleanse(buf, sizeof(buf));
    return err;
}

/* lazy_update: mbo_gcm_update's work while the message is lazy or one-shot:
 * 1 done, 0 failed, -1 the streaming code goes on (in *in: with the held
 * ciphertext after a one-shot opening whose tag did not match). */
static int lazy_update(struct mbo_gcm *g, uint8_t *out, const uint8_t **in, size_t len)
{
    if (g->oneshot) {
        if (out == NULL) {
            return 0; /* no AAD after the data */
        }
        return len == 0 ? 1 : replay(g) ? -1 : 0;
    }
    if (out == NULL && len <= sizeof(g->aad) - g->aad_len) {
        memcpy(g->aad + g->aad_len, *in, len);
        g->aad_len += len;
        return 1;
    }
    if (out != NULL && len == 0) {
        return 1; /* the AAD may go on */
    }
    if (out != NULL && len <= sizeof(g->held) &&
        (g->enc || (g->tag_fresh && g->tag_len == MBC_GCM_TAG_LEN))) {
        const int r = oneshot(g, out, *in, len);
        if (r < 0) {
            *in = g->held;
        }
        return r;
    }
    return stream_start(g) ? -1 : 0;
}

int mbo_gcm_update(struct mbo_gcm *g, uint8_t *out, const uint8_t *in, size_t len)
{
    if (!start_rand_iv(g) || (in == NULL && len != 0)) {
        return 0;
    }
    g->touched = 1;
    if (g->lazy || g->oneshot) {
        const int r = lazy_update(g, out, &in, len);
        if (r >= 0) {
            return r;
        }
    }
    mbc_err err;
    if (out == NULL) {
        err = mbc_gcm_aad(&g->ctx, in, len);
        if (err == MBC_OK && g->shadow_on) {
            err = mbc_gcm_aad(&g->shadow, in, len);
        }
        return err == MBC_OK;
    }
    if (g->enc) {
        return mbc_gcm_encrypt(&g->ctx, out, in, len) == MBC_OK;
    }
    if (len > 0 && !g->data_seen) {
        g->data_seen = 1;
        if (g->shadow_on && g->tag_fresh && checkable(g->tag_len)) {
            OPENSSL_cleanse(&g->shadow, sizeof(g->shadow));
            g->shadow_on = 0;
        }
    }
    err = mbc_gcm_decrypt(&g->ctx, out, in, len);
    if (err == MBC_OK && g->shadow_on) {
        err = shadow_seal(g, out, len);
    }
    return err == MBC_OK;
}

/* open_final: checks the tag: through mbcrypto's check, or against the
 * shadow's full tag (the context is wiped either way). */
static int open_final(struct mbo_gcm *g)
{
    mbo_count(MBO_CTR_GCM_DECRYPT, 1);
    if (!g->shadow_on) {
        if (!checkable(g->tag_len)) {
            OPENSSL_cleanse(&g->ctx, sizeof(g->ctx));
            return -1;
        }
        return mbc_gcm_verify(&g->ctx, g->tag, g->tag_len) == MBC_OK;
    }
    uint8_t full[MBC_GCM_TAG_LEN];
    OPENSSL_cleanse(&g->ctx, sizeof(g->ctx));
    g->shadow_on = 0; /* finish wipes it */
    const int ok = mbc_gcm_finish(&g->shadow, full, sizeof(full)) == MBC_OK &&
                   CRYPTO_memcmp(full, g->tag, g->tag_len) == 0;
    OPENSSL_cleanse(full, sizeof(full));
    return ok;
}

int mbo_gcm_final(struct mbo_gcm *g)
{
    if (!start_rand_iv(g) || (!g->enc && g->tag_len == 0) || (g->lazy && !stream_start(g))) {
        end_message(g);
        return 0;
    }
    g->tag_fresh = 0;
    if (g->oneshot) {
        end_message(g);
        mbo_count(g->enc ? MBO_CTR_GCM_ENCRYPT : MBO_CTR_GCM_DECRYPT, 1);
        if (!g->enc) {
            return g->verdict;
        }
        memcpy(g->tag, g->otag, sizeof(g->otag));
        g->tag_len = MBC_GCM_TAG_LEN;
        return 1;
    }
    g->started = 0; /* finish and verify wipe the context */
    if (g->enc) {
        mbo_count(MBO_CTR_GCM_ENCRYPT, 1);
        const int ok = mbc_gcm_finish(&g->ctx, g->tag, MBC_GCM_TAG_LEN) == MBC_OK;
        g->tag_len = ok ? MBC_GCM_TAG_LEN : 0;
        return ok;
    }
    return open_final(g);
}

int mbo_gcm_set_iv_fixed(struct mbo_gcm *g, const uint8_t *iv, size_t len)
{
    if (len == (size_t)-1) {
        memcpy(g->iv, iv, g->iv_len);
    } else {
        /* At least 4 fixed bytes and 8 of invocation field. */
        if (len < TLS_FIXED_IV || g->iv_len < len + TLS_EXPLICIT_IV) {
            return 0;
        }
        memcpy(g->iv, iv, len);
        if (g->enc && RAND_bytes(g->iv + len, (int)(g->iv_len - len)) <= 0) {
            return 0;
        }
    }
    g->iv_set = 1;
    g->iv_gen = 1;
    g->iv_pending = 1;
    return try_start(g);
}

/* ctr64_inc: the last 8 bytes of the IV, big endian, plus one. */
static void ctr64_inc(uint8_t *c)
{
    for (int i = 7; i >= 0; i--) {
        if (++c[i] != 0) {
            break;
        }
    }
}

int mbo_gcm_iv_gen(struct mbo_gcm *g, uint8_t *out, size_t len)
{
    if (!g->iv_gen || g->key == NULL) {
        return 0;
    }
    if (len == 0 || len > g->iv_len) {
        len = g->iv_len;
    }
    g->iv_pending = 1;
    if (!try_start(g)) {
        return 0;
    }
    memcpy(out, g->iv + g->iv_len - len, len);
    ctr64_inc(g->iv + g->iv_len - 8);
    return 1;
}

int mbo_gcm_set_iv_inv(struct mbo_gcm *g, const uint8_t *in, size_t len)
{
    if (!g->iv_gen || g->key == NULL || g->enc || len == 0 || len > g->iv_len) {
        return 0;
    }
    memcpy(g->iv + g->iv_len - len, in, len);
    g->iv_pending = 1;
    return try_start(g);
}

int mbo_gcm_tls_aad(struct mbo_gcm *g, const uint8_t *aad, size_t len)
{
    if (len != TLS_AAD) {
        return 0;
    }
    /* The record length in the AAD counts the explicit IV (and, opening,
     * the tag): the AAD GCM authenticates has the plaintext length. */
    size_t n = (size_t)aad[TLS_AAD - 2] << 8 | aad[TLS_AAD - 1];
    const size_t extra = TLS_EXPLICIT_IV + (g->enc ? 0 : TLS_TAG);
    if (n < extra) {
        return 0;
    }
    n -= extra;
    memcpy(g->tls_aad, aad, TLS_AAD);
    g->tls_aad[TLS_AAD - 2] = (uint8_t)(n >> 8);
    g->tls_aad[TLS_AAD - 1] = (uint8_t)n;
    g->tls_aad_len = TLS_AAD;
    return TLS_TAG;
}

int mbo_gcm_tls_record(struct mbo_gcm *g, uint8_t *buf, size_t len, size_t *out_len)
{
    int ok = 0;
    *out_len = 0;
    if (g->tls_aad_len != TLS_AAD || g->key == NULL || !g->iv_gen || g->iv_len < TLS_EXPLICIT_IV ||
        len < TLS_EXPLICIT_IV + TLS_TAG) {
        goto out;
    }
    const size_t n = len - TLS_EXPLICIT_IV - TLS_TAG;
    uint8_t *data = buf + TLS_EXPLICIT_IV;
    uint8_t *tag = data + n;
    /* The AAD's length must be this record's. */
    if (((size_t)g->tls_aad[TLS_AAD - 2] << 8 | g->tls_aad[TLS_AAD - 1]) != n) {
        goto out;
    }
    end_message(g);
    uint8_t iv[MBO_GCM_IV_MAX];
    if (g->enc) {
        /* Never reuse an IV: stop before the record counter wraps. */
        if (++g->tls_records == 0) {
            goto out;
        }
        memcpy(buf, g->iv + g->iv_len - TLS_EXPLICIT_IV, TLS_EXPLICIT_IV);
        memcpy(iv, g->iv, g->iv_len);
        ctr64_inc(g->iv + g->iv_len - 8);
        mbo_count(MBO_CTR_GCM_ENCRYPT, 1);
        ok = mbc_gcm_seal(g->key->key, data, tag, TLS_TAG, iv, g->iv_len, g->tls_aad, TLS_AAD, data,
                          n) == MBC_OK;
        *out_len = ok ? len : 0;
    } else {
        memcpy(g->iv + g->iv_len - TLS_EXPLICIT_IV, buf, TLS_EXPLICIT_IV);
        memcpy(iv, g->iv, g->iv_len);
        mbo_count(MBO_CTR_GCM_DECRYPT, 1);
        ok = mbc_gcm_open(g->key->key, data, tag, TLS_TAG, iv, g->iv_len, g->tls_aad, TLS_AAD, data,
                          n) == MBC_OK;
        if (!ok) {
            OPENSSL_cleanse(data, n);
        }
        *out_len = ok ? n : 0;
    }
    g->iv_pending = 0;
out:
    g->tls_aad_len = -1;
    return ok;
}

void mbo_gcm_dup(struct mbo_gcm *dst, const struct mbo_gcm *src)
{
    memcpy(dst, src, sizeof(*dst));
    if (dst->key != NULL) {
        __atomic_add_fetch(&dst->key->refs, 1, __ATOMIC_RELAXED);
    }
}

void mbo_gcm_cleanup(struct mbo_gcm *g)
{
    key_release(g->key);
    OPENSSL_cleanse(g, sizeof(*g));
}
