/*
 * gcm.c - the AES-GCM glue: validation, key objects, J0, one-shot seal and
 * open, streaming. Baseline code; the work is done by the implementation the
 * key copied at creation (see gcm_internal.h).
 */
#include <stddef.h>
#include <string.h>

#include "../ct.h"
#include "../dispatch.h"
#include "../wipe.h"
#include "gcm_internal.h"

#define GCM_MAX_AAD_LEN ((uint64_t)1 << 61) /* bytes; exclusive */

_Static_assert(offsetof(struct mbc_gcm_key, tag) == 0, "the tag comes first");
_Static_assert(offsetof(struct mbc_gcm_key, rk) == GCM_KEY_RK, "asm offset");
_Static_assert(offsetof(struct mbc_gcm_key, htab) == GCM_KEY_HTAB, "asm offset");
_Static_assert(offsetof(struct mbc_gcm_key, h) == GCM_KEY_H, "asm offset");
_Static_assert(offsetof(struct mbc_gcm_key, rounds) == GCM_KEY_ROUNDS, "asm offset");
_Static_assert(offsetof(struct mbc_gcm_key, rk512) == GCM_KEY_RK512, "asm offset");
_Static_assert(offsetof(struct mbc_gcm_key, htabk) == GCM_KEY_HTABK, "asm offset");
_Static_assert(MBC_OK == 0 && MBC_ERR_AUTH == 12, "asm return codes");

/* ------------------------------------------------------------------------ */
/* Keys                                                                      */
/* ------------------------------------------------------------------------ */

/* gcm_key_new: mbc_gcm_key_new's work, in frames of its own that the
 * caller then scrubs (wipe.h). */
__attribute__((noinline)) static mbc_err gcm_key_new(mbc_gcm_key **key, const uint8_t *k,
                                                     size_t k_len)
{
    if (key == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    *key = NULL;
    if (k == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    if (k_len != 16 && k_len != 24 && k_len != 32) {
        return MBC_ERR_KEY_SIZE;
    }
    struct mbc_gcm_key *g = mbc_aligned_alloc(sizeof(*g));
    if (g == NULL) {
        return MBC_ERR_NO_MEMORY;
    }
    g->impl = *mbc_dispatch_get()->gcm;
    mbc_gcm_expand_key(g, k, k_len, g->impl.subword);
    for (unsigned r = 0; r <= g->rounds; r++) {
        for (unsigned l = 0; l < 4; l++) {
            memcpy(g->rk512 + 64 * (14 - g->rounds + r) + 16 * l, g->rk + 16 * r, 16);
        }
    }
    static const uint8_t zero[16] = {0};
    g->impl.block(g, zero, g->h);
    g->impl.powers(g);
    for (unsigned i = 0; i < GCM_NPOW + 4; i++) {
        for (unsigned b = 0; b < 8; b++) {
            g->htabk[16 * i + b] = g->htab[16 * i + b] ^ g->htab[16 * i + 8 + b];
        }
    }
    g->tag = (struct mbc_key_tag){MBC_KEY_GCM, (uint32_t)k_len};
    *key = g;
    return MBC_OK;
}

MBC_API mbc_err mbc_gcm_key_new(mbc_gcm_key **key, const uint8_t *k, size_t k_len)
{
    const mbc_err err = gcm_key_new(key, k, k_len);
    mbc_wipe_secrets(MBC_WIPE_GCM);
    return err;
}

/* is_gcm_key: 1 if key is a GCM key object (0 for NULL): the check every
 * call makes on its key, one compare of the tag before anything else of
 * the object is read. The streaming calls rely on mbc_gcm_init's. */
static int is_gcm_key(const mbc_gcm_key *key)
{
    return mbc_key_info(key, MBC_KEY_GCM) != 0;
}

/*
 * gcm_scrub_len: the stack bytes a call on key with an IV of iv_len bytes
 * scrubs when it returns (wipe.h). Every GCM entry point that ran an
 * implementation ends with mbc_wipe_secrets(this) once its noinline worker
 * has returned, so its registers are always cleared. Its dead frames are
 * scrubbed too when the IV is not 12 bytes (J0 and every counter block are
 * then secret, derived from H, and the implementations spill their counter)
 * and for an implementation whose frames hold secrets whatever the IV
 * (scrub_always: the portable one's AES state lives in C arrays). With a
 * 12-byte IV on aesni and vaes512, the hot path, no stack is scrubbed: their
 * secret locals are wiped by name, their kernels keep the rest in registers,
 * and tests/test_wipe.c proves that nothing else is left.
 */
static size_t gcm_scrub_len(const mbc_gcm_key *key, size_t iv_len)
{
    if (!is_gcm_key(key)) {
        return 0;
    }
    return (iv_len != 12 || key->impl.scrub_always) ? MBC_WIPE_GCM : 0;
}

MBC_API void mbc_gcm_key_free(mbc_gcm_key *key)
{
    if (is_gcm_key(key)) {
        mbc_aligned_free(key, sizeof(*key));
    }
}

MBC_API const char *mbc_gcm_key_impl(const mbc_gcm_key *key)
{
    return is_gcm_key(key) ? key->impl.base.info.name : NULL;
}

/* ------------------------------------------------------------------------ */
/* Shared steps                                                              */
/* ------------------------------------------------------------------------ */

static void store_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

/* gcm_j0: the pre-counter block of iv (SP 800-38D 7.1 step 2). */
static void gcm_j0(const struct mbc_gcm_key *key, uint8_t j0[16], const uint8_t *iv, size_t iv_len)
{
    if (iv_len == 12) {
        memcpy(j0, iv, 12);
        j0[12] = j0[13] = j0[14] = 0;
        j0[15] = 1;
        return;
    }
    uint8_t xi[16] = {0}, len_block[16] = {0};
    key->impl.ghash(key, xi, iv, iv_len);
    store_be64(len_block + 8, (uint64_t)iv_len * 8);
    key->impl.ghash(key, xi, len_block, 16);
    for (int i = 0; i < 16; i++) {
        j0[i] = xi[15 - i];
    }
}

/* gcm_tag: folds the length block into xi and writes the full tag. */
static void gcm_tag(const struct mbc_gcm_key *key, uint8_t tag[16], uint8_t xi[16],
                    const uint8_t j0[16], uint64_t aad_len, uint64_t ct_len)
{
    uint8_t len_block[16], ek[16];
    store_be64(len_block, aad_len * 8);
    store_be64(len_block + 8, ct_len * 8);
    key->impl.ghash(key, xi, len_block, 16);
    key->impl.block(key, j0, ek);
    for (int i = 0; i < 16; i++) {
        tag[i] = ek[i] ^ xi[15 - i];
    }
    mbc_memzero(ek, sizeof(ek));
}

/* release_tag: writes the first tag_len bytes of the full tag to tag, the
 * caller's output (declassified there), and wipes full. */
static void release_tag(uint8_t *tag, uint8_t full[16], size_t tag_len)
{
    memcpy(tag, full, tag_len);
    mbc_declassify(tag, tag_len);
    mbc_memzero(full, 16);
}

/* tag_matches: 1 if the first tag_len bytes of full equal tag (constant
 * time), else 0; wipes full. The verdict is declassified here, the one
 * secret-derived value the callers branch on. */
static int tag_matches(uint8_t full[16], const uint8_t *tag, size_t tag_len)
{
    int ok = mbc_ct_memeq(full, tag, tag_len);
    mbc_memzero(full, 16);
    mbc_declassify(&ok, sizeof(ok));
    return ok;
}

static int tag_len_ok(size_t tag_len, int short_ok)
{
    return (tag_len >= 12 && tag_len <= 16) || (short_ok && (tag_len == 4 || tag_len == 8));
}

/* check_common: the validation shared by the one-shot calls. */
static mbc_err check_common(const mbc_gcm_key *key, const void *out, const void *tag,
                            size_t tag_len, int short_ok, const uint8_t *iv, size_t iv_len,
                            const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t in_len)
{
    if (key == NULL || tag == NULL || (iv == NULL && iv_len != 0) ||
        (aad == NULL && aad_len != 0) || ((in == NULL || out == NULL) && in_len != 0)) {
        return MBC_ERR_NULL_PARAM;
    }
    if (!is_gcm_key(key)) {
        return MBC_ERR_BAD_PARAM;
    }
    if (!tag_len_ok(tag_len, short_ok)) {
        return MBC_ERR_TAG_LEN;
    }
    if (iv_len == 0 || (uint64_t)iv_len >= GCM_MAX_AAD_LEN) {
        return MBC_ERR_IV_LEN;
    }
    if ((uint64_t)in_len > MBC_GCM_MAX_DATA_LEN || (uint64_t)aad_len >= GCM_MAX_AAD_LEN) {
        return MBC_ERR_TOO_LONG;
    }
    return MBC_OK;
}

/* ------------------------------------------------------------------------ */
/* One-shot                                                                  */
/* ------------------------------------------------------------------------ */

/* gcm_crypt_any_iv: the one-shot path for any IV: encrypts (encrypt = 1) or
 * decrypts in to out and writes the full 16-byte tag of the ciphertext. */
static void gcm_crypt_any_iv(const mbc_gcm_key *key, int encrypt, uint8_t full[16],
                             const uint8_t *iv, size_t iv_len, const uint8_t *aad, size_t aad_len,
                             const uint8_t *in, uint8_t *out, size_t in_len)
{
    uint8_t j0[16], ctr[16], xi[16] = {0};
    gcm_j0(key, j0, iv, iv_len);
    if (aad_len != 0) {
        key->impl.ghash(key, xi, aad, aad_len);
    }
    memcpy(ctr, j0, 16);
    gcm_ctr_inc(ctr);
    if (in_len != 0) {
        (encrypt ? key->impl.enc : key->impl.dec)(key, ctr, xi, in, out, in_len);
    }
    gcm_tag(key, full, xi, j0, aad_len, in_len);
    mbc_memzero(xi, sizeof(xi));
}

__attribute__((noinline)) static mbc_err gcm_seal(const mbc_gcm_key *key, uint8_t *out,
                                                  uint8_t *tag, size_t tag_len, int short_ok,
                                                  const uint8_t *iv, size_t iv_len,
                                                  const uint8_t *aad, size_t aad_len,
                                                  const uint8_t *in, size_t in_len)
{
    mbc_err err =
        check_common(key, out, tag, tag_len, short_ok, iv, iv_len, aad, aad_len, in, in_len);
    if (err != MBC_OK) {
        return err;
    }
    uint8_t full[16];
    if (iv_len == 12 && key->impl.seal12 != NULL) {
        key->impl.seal12(key, out, full, 16, iv, 12, aad, aad_len, in, in_len);
    } else {
        gcm_crypt_any_iv(key, 1, full, iv, iv_len, aad, aad_len, in, out, in_len);
    }
    mbc_declassify(out, in_len);
    release_tag(tag, full, tag_len);
    return MBC_OK;
}

__attribute__((noinline)) static mbc_err gcm_open(const mbc_gcm_key *key, uint8_t *out,
                                                  const uint8_t *tag, size_t tag_len, int short_ok,
                                                  const uint8_t *iv, size_t iv_len,
                                                  const uint8_t *aad, size_t aad_len,
                                                  const uint8_t *in, size_t in_len)
{
    mbc_err err =
        check_common(key, out, tag, tag_len, short_ok, iv, iv_len, aad, aad_len, in, in_len);
    if (err != MBC_OK) {
        return err;
    }
    uint8_t full[16];
    if (iv_len == 12 && key->impl.open12 != NULL) {
        /* The kernel compares the tag itself (constant time, never stored). */
        return key->impl.open12(key, out, tag, tag_len, iv, 12, aad, aad_len, in, in_len);
    }
    gcm_crypt_any_iv(key, 0, full, iv, iv_len, aad, aad_len, in, out, in_len);
    const int ok = tag_matches(full, tag, tag_len);
    if (!ok) {
        mbc_memzero(out, in_len);
    } else {
        mbc_declassify(out, in_len);
    }
    return ok ? MBC_OK : MBC_ERR_AUTH;
}

/*
 * ONESHOT_FAST(fn): the common one-shot call (every pointer present, a 12-byte
 * IV, a 16-byte tag, lengths in range, a kernel that does whole one-shot
 * operations), tested with a few predictable branches so that
 * mbc_gcm_seal / mbc_gcm_open can tail-call the kernel with their own
 * arguments; anything else goes to gcm_seal / gcm_open, which say what is
 * wrong.
 */
#define ONESHOT_FAST(fn)                                                                           \
    (is_gcm_key(key) && tag_len == 16 && iv_len == 12 && tag != NULL && iv != NULL &&              \
     ((uint64_t)in_len <= MBC_GCM_MAX_DATA_LEN) && ((uint64_t)aad_len < GCM_MAX_AAD_LEN) &&        \
     (aad != NULL || aad_len == 0) && ((in != NULL && out != NULL) || in_len == 0) &&              \
     key->impl.fn != NULL)

/* gcm_seal_std, gcm_open_std: the slow paths of mbc_gcm_seal / mbc_gcm_open,
 * with their signature (so that both branches there are tail calls); like
 * the short-tag entry points they scrub after their worker (gcm_scrub_len).
 * The fast path needs no scrub: the nasm kernels clear their registers and
 * keep nothing on the stack. */
__attribute__((noinline)) static mbc_err
gcm_seal_std(const mbc_gcm_key *key, uint8_t *out, uint8_t *tag, size_t tag_len, const uint8_t *iv,
             size_t iv_len, const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t in_len)
{
    const mbc_err err = gcm_seal(key, out, tag, tag_len, 0, iv, iv_len, aad, aad_len, in, in_len);
    mbc_wipe_secrets(gcm_scrub_len(key, iv_len));
    return err;
}

__attribute__((noinline)) static mbc_err gcm_open_std(const mbc_gcm_key *key, uint8_t *out,
                                                      const uint8_t *tag, size_t tag_len,
                                                      const uint8_t *iv, size_t iv_len,
                                                      const uint8_t *aad, size_t aad_len,
                                                      const uint8_t *in, size_t in_len)
{
    const mbc_err err = gcm_open(key, out, tag, tag_len, 0, iv, iv_len, aad, aad_len, in, in_len);
    mbc_wipe_secrets(gcm_scrub_len(key, iv_len));
    return err;
}

MBC_API mbc_err mbc_gcm_seal(const mbc_gcm_key *key, uint8_t *out, uint8_t *tag, size_t tag_len,
                             const uint8_t *iv, size_t iv_len, const uint8_t *aad, size_t aad_len,
                             const uint8_t *in, size_t in_len)
{
    if (ONESHOT_FAST(seal12)) {
        return key->impl.seal12(key, out, tag, tag_len, iv, iv_len, aad, aad_len, in, in_len);
    }
    return gcm_seal_std(key, out, tag, tag_len, iv, iv_len, aad, aad_len, in, in_len);
}

MBC_API mbc_err mbc_gcm_open(const mbc_gcm_key *key, uint8_t *out, const uint8_t *tag,
                             size_t tag_len, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                             size_t aad_len, const uint8_t *in, size_t in_len)
{
    if (ONESHOT_FAST(open12)) {
        return key->impl.open12(key, out, tag, tag_len, iv, iv_len, aad, aad_len, in, in_len);
    }
    return gcm_open_std(key, out, tag, tag_len, iv, iv_len, aad, aad_len, in, in_len);
}

MBC_API mbc_err mbc_gcm_seal_short_tag(const mbc_gcm_key *key, uint8_t *out, uint8_t *tag,
                                       size_t tag_len, const uint8_t *iv, size_t iv_len,
                                       const uint8_t *aad, size_t aad_len, const uint8_t *in,
                                       size_t in_len)
{
    const mbc_err err = gcm_seal(key, out, tag, tag_len, 1, iv, iv_len, aad, aad_len, in, in_len);
    mbc_wipe_secrets(gcm_scrub_len(key, iv_len));
    return err;
}

MBC_API mbc_err mbc_gcm_open_short_tag(const mbc_gcm_key *key, uint8_t *out, const uint8_t *tag,
                                       size_t tag_len, const uint8_t *iv, size_t iv_len,
                                       const uint8_t *aad, size_t aad_len, const uint8_t *in,
                                       size_t in_len)
{
    const mbc_err err = gcm_open(key, out, tag, tag_len, 1, iv, iv_len, aad, aad_len, in, in_len);
    mbc_wipe_secrets(gcm_scrub_len(key, iv_len));
    return err;
}

/* ------------------------------------------------------------------------ */
/* Streaming                                                                 */
/* ------------------------------------------------------------------------ */

/* phase: PHASE_AAD from init until the first non-empty data piece, then
 * PHASE_DATA. dir: DIR_NONE until the first data call of any length, which
 * fixes it, so that whether a sequence of calls is accepted never depends on
 * the lengths of its data pieces (a zero-length decrypt then an encrypt is
 * MBC_ERR_STATE, as it is with data). */
enum gcm_phase { PHASE_NONE = 0, PHASE_AAD = 1, PHASE_DATA = 2 };
enum gcm_dir { DIR_NONE = 0, DIR_ENC = 1, DIR_DEC = 2 };

#define GCM_CTX_MAGIC 0x6d624743u

/* gcm_state: the inside of mbc_gcm_ctx (may_alias: the caller's storage is
 * declared as the public uint64_t array). buf holds a partial block of AAD or
 * ciphertext waiting for GHASH (buf_len bytes); during data, ks holds the
 * keystream of the current partial block, of which buf_len bytes are used. */
struct __attribute__((may_alias)) gcm_state {
    const struct mbc_gcm_key *key;
    uint8_t j0[16], ctr[16], xi[16], ks[16], buf[16];
    uint64_t aad_len, ct_len;
    uint32_t buf_len, phase, dir, flags, magic;
    uint32_t scrub; /* gcm_scrub_len of the key and IV */
};

_Static_assert(sizeof(struct gcm_state) <= sizeof(mbc_gcm_ctx), "mbc_gcm_ctx too small");
_Static_assert(_Alignof(struct gcm_state) <= _Alignof(mbc_gcm_ctx), "mbc_gcm_ctx alignment");

static struct gcm_state *state_of(mbc_gcm_ctx *ctx)
{
    return (struct gcm_state *)(void *)ctx;
}

/* The streaming entry points run a noinline worker, then scrub what it
 * left (gcm_scrub_len, kept in the context by mbc_gcm_init; read before the
 * worker, which may wipe the context). */

__attribute__((noinline)) static mbc_err gcm_init(mbc_gcm_ctx *ctx, const mbc_gcm_key *key,
                                                  const uint8_t *iv, size_t iv_len, unsigned flags)
{
    if (ctx == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    struct gcm_state *s = state_of(ctx);
    mbc_memzero(ctx, sizeof(*ctx));
    if (key == NULL || (iv == NULL && iv_len != 0)) {
        return MBC_ERR_NULL_PARAM;
    }
    if (!is_gcm_key(key)) {
        return MBC_ERR_BAD_PARAM;
    }
    if (iv_len == 0 || (uint64_t)iv_len >= GCM_MAX_AAD_LEN) {
        return MBC_ERR_IV_LEN;
    }
    if ((flags & ~MBC_GCM_SHORT_TAGS) != 0) {
        return MBC_ERR_BAD_PARAM;
    }
    s->key = key;
    gcm_j0(key, s->j0, iv, iv_len);
    memcpy(s->ctr, s->j0, 16);
    gcm_ctr_inc(s->ctr);
    s->phase = PHASE_AAD;
    s->flags = flags;
    s->scrub = (uint32_t)gcm_scrub_len(key, iv_len);
    s->magic = GCM_CTX_MAGIC;
    return MBC_OK;
}

MBC_API mbc_err mbc_gcm_init(mbc_gcm_ctx *ctx, const mbc_gcm_key *key, const uint8_t *iv,
                             size_t iv_len, unsigned flags)
{
    const mbc_err err = gcm_init(ctx, key, iv, iv_len, flags);
    mbc_wipe_secrets(gcm_scrub_len(key, iv_len));
    return err;
}

static int state_live(const struct gcm_state *s)
{
    return s->magic == GCM_CTX_MAGIC && s->phase != PHASE_NONE;
}

/* ctx_scrub: the scrub of the calls on ctx (0 when it is not live). */
static size_t ctx_scrub(mbc_gcm_ctx *ctx)
{
    return ctx != NULL && state_live(state_of(ctx)) ? state_of(ctx)->scrub : 0;
}

__attribute__((noinline)) static mbc_err gcm_aad(mbc_gcm_ctx *ctx, const uint8_t *aad,
                                                 size_t aad_len)
{
    if (ctx == NULL || (aad == NULL && aad_len != 0)) {
        return MBC_ERR_NULL_PARAM;
    }
    struct gcm_state *s = state_of(ctx);
    if (!state_live(s) || s->phase != PHASE_AAD) {
        return MBC_ERR_STATE;
    }
    if ((uint64_t)aad_len >= GCM_MAX_AAD_LEN - s->aad_len) {
        return MBC_ERR_TOO_LONG;
    }
    if (aad_len == 0) {
        return MBC_OK; /* aad may be NULL: no arithmetic on it */
    }
    const struct mbc_gcm_key *key = s->key;
    s->aad_len += aad_len;
    if (s->buf_len > 0) {
        size_t n = 16 - s->buf_len;
        n = n < aad_len ? n : aad_len;
        memcpy(s->buf + s->buf_len, aad, n);
        s->buf_len += (uint32_t)n;
        aad += n;
        aad_len -= n;
        if (s->buf_len < 16) {
            return MBC_OK;
        }
        key->impl.ghash(key, s->xi, s->buf, 16);
        s->buf_len = 0;
    }
    size_t bulk = aad_len & ~(size_t)15;
    if (bulk != 0) {
        key->impl.ghash(key, s->xi, aad, bulk);
    }
    memcpy(s->buf, aad + bulk, aad_len - bulk);
    s->buf_len = (uint32_t)(aad_len - bulk);
    return MBC_OK;
}

MBC_API mbc_err mbc_gcm_aad(mbc_gcm_ctx *ctx, const uint8_t *aad, size_t aad_len)
{
    const size_t scrub = ctx_scrub(ctx);
    const mbc_err err = gcm_aad(ctx, aad, aad_len);
    mbc_wipe_secrets(scrub);
    return err;
}

__attribute__((noinline)) static mbc_err gcm_update(mbc_gcm_ctx *ctx, uint8_t *out,
                                                    const uint8_t *in, size_t len, uint32_t dir)
{
    if (ctx == NULL || ((out == NULL || in == NULL) && len != 0)) {
        return MBC_ERR_NULL_PARAM;
    }
    struct gcm_state *s = state_of(ctx);
    if (!state_live(s) || (s->dir != DIR_NONE && s->dir != dir)) {
        return MBC_ERR_STATE;
    }
    if ((uint64_t)len > MBC_GCM_MAX_DATA_LEN - s->ct_len) {
        return MBC_ERR_TOO_LONG;
    }
    s->dir = dir;
    if (len == 0) {
        return MBC_OK; /* the AAD may go on */
    }
    const struct mbc_gcm_key *key = s->key;
    uint8_t *const released = out;
    const size_t released_len = len;
    if (s->phase == PHASE_AAD) {
        if (s->buf_len > 0) {
            key->impl.ghash(key, s->xi, s->buf, s->buf_len);
        }
        s->buf_len = 0;
        s->phase = PHASE_DATA;
    }
    s->ct_len += len;
    const int enc = dir == DIR_ENC;
    /* Finish the partial block of the previous call. */
    if (s->buf_len > 0) {
        while (len > 0 && s->buf_len < 16) {
            uint8_t c = *in;
            uint8_t o = (uint8_t)(c ^ s->ks[s->buf_len]);
            s->buf[s->buf_len++] = enc ? o : c;
            *out++ = o;
            in++;
            len--;
        }
        /* len is 0 here unless the block is complete */
        if (s->buf_len == 16) {
            key->impl.ghash(key, s->xi, s->buf, 16);
            s->buf_len = 0;
        }
    }
    size_t bulk = len & ~(size_t)15;
    if (bulk != 0) {
        if (enc) {
            key->impl.enc(key, s->ctr, s->xi, in, out, bulk);
        } else {
            key->impl.dec(key, s->ctr, s->xi, in, out, bulk);
        }
        in += bulk;
        out += bulk;
        len -= bulk;
    }
    if (len > 0) {
        key->impl.block(key, s->ctr, s->ks);
        gcm_ctr_inc(s->ctr);
        for (size_t i = 0; i < len; i++) {
            uint8_t c = in[i];
            uint8_t o = (uint8_t)(c ^ s->ks[i]);
            s->buf[i] = enc ? o : c;
            out[i] = o;
        }
        s->buf_len = (uint32_t)len;
    }
    /* Both directions hand their output to the caller at once. */
    mbc_declassify(released, released_len);
    return MBC_OK;
}

MBC_API mbc_err mbc_gcm_encrypt(mbc_gcm_ctx *ctx, uint8_t *out, const uint8_t *in, size_t len)
{
    const size_t scrub = ctx_scrub(ctx);
    const mbc_err err = gcm_update(ctx, out, in, len, DIR_ENC);
    mbc_wipe_secrets(scrub);
    return err;
}

MBC_API mbc_err mbc_gcm_decrypt(mbc_gcm_ctx *ctx, uint8_t *out, const uint8_t *in, size_t len)
{
    const size_t scrub = ctx_scrub(ctx);
    const mbc_err err = gcm_update(ctx, out, in, len, DIR_DEC);
    mbc_wipe_secrets(scrub);
    return err;
}

/* gcm_final: the full tag of s into tag; wipes nothing. */
static void gcm_final(struct gcm_state *s, uint8_t tag[16])
{
    const struct mbc_gcm_key *key = s->key;
    if (s->buf_len > 0) {
        key->impl.ghash(key, s->xi, s->buf, s->buf_len);
        s->buf_len = 0;
    }
    gcm_tag(key, tag, s->xi, s->j0, s->aad_len, s->ct_len);
}

/* final_tag: the checks shared by finish and verify (NULL, a live context
 * not in the direction that excludes the call, tag length), then the full tag. */
static mbc_err final_tag(mbc_gcm_ctx *ctx, const uint8_t *tag, size_t tag_len,
                         uint32_t excluded_dir, uint8_t full[16])
{
    if (ctx == NULL || tag == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    struct gcm_state *s = state_of(ctx);
    if (!state_live(s) || s->dir == excluded_dir) {
        return MBC_ERR_STATE;
    }
    if (!tag_len_ok(tag_len, (s->flags & MBC_GCM_SHORT_TAGS) != 0)) {
        return MBC_ERR_TAG_LEN;
    }
    gcm_final(s, full);
    return MBC_OK;
}

__attribute__((noinline)) static mbc_err gcm_finish(mbc_gcm_ctx *ctx, uint8_t *tag, size_t tag_len)
{
    uint8_t full[16];
    const mbc_err err = final_tag(ctx, tag, tag_len, DIR_DEC, full);
    if (err != MBC_OK) {
        return err;
    }
    release_tag(tag, full, tag_len);
    mbc_memzero(ctx, sizeof(*ctx));
    return MBC_OK;
}

MBC_API mbc_err mbc_gcm_finish(mbc_gcm_ctx *ctx, uint8_t *tag, size_t tag_len)
{
    const size_t scrub = ctx_scrub(ctx);
    const mbc_err err = gcm_finish(ctx, tag, tag_len);
    mbc_wipe_secrets(scrub);
    return err;
}

__attribute__((noinline)) static mbc_err gcm_verify(mbc_gcm_ctx *ctx, const uint8_t *tag,
                                                    size_t tag_len)
{
    uint8_t full[16];
    const mbc_err err = final_tag(ctx, tag, tag_len, DIR_ENC, full);
    if (err != MBC_OK) {
        return err;
    }
    const int ok = tag_matches(full, tag, tag_len);
    mbc_memzero(ctx, sizeof(*ctx));
    return ok ? MBC_OK : MBC_ERR_AUTH;
}

MBC_API mbc_err mbc_gcm_verify(mbc_gcm_ctx *ctx, const uint8_t *tag, size_t tag_len)
{
    const size_t scrub = ctx_scrub(ctx);
    const mbc_err err = gcm_verify(ctx, tag, tag_len);
    mbc_wipe_secrets(scrub);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Selection                                                                 */
/* ------------------------------------------------------------------------ */

/* The implementations, fastest first: the first the CPU can run is used. */
static const struct mbc_gcm_impl *const gcm_impls[] = {
#if MBC_HAVE_VAES
    &mbc_gcm_impl_vaes512,
#endif
#if MBC_HAVE_AESNI
    &mbc_gcm_impl_aesni,
#endif
    &mbc_gcm_impl_c,
};
MBC_IMPL_TABLE(mbc_gcm_impl_table, gcm_impls);

const struct mbc_gcm_impl *mbc_gcm_impl_for(uint64_t features)
{
    return mbc_impl_pick(&mbc_gcm_impl_table, features);
}
