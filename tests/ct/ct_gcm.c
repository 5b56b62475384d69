/*
 * ct_gcm.c - the constant-time check of AES-GCM, for a MemorySanitizer build
 * (meson -Dct_check=true; see tests/ct/meson.build).
 *
 * For AES-128, -192 and -256 it poisons the key bytes before mbc_gcm_key_new,
 * so the key schedule, H = AES_K(0) and the table of hash-key powers are
 * checked too (and must come out poisoned: the check is not vacuous). With a
 * public IV and public AAD (0, 20 and 145 bytes) it seals a poisoned
 * plaintext of 0 to 4099 bytes (lens[] below: block boundaries, 128
 * and 512 with tails) one-shot and streaming (pieces of 1 to 100 bytes),
 * then opens the poisoned ciphertext one-shot and streaming with the right
 * tag (the plaintext must come back) and with a wrong one (MBC_ERR_AUTH, the
 * one-shot output zeroed). The IV is 12 bytes, or 60: J0 = GHASH_H(IV) is
 * then secret, and so are all the counter blocks. MemorySanitizer reports
 * every branch and memory address that depends on a poisoned byte. The
 * library declassifies (mbc_declassify) only what it releases: ciphertext,
 * tag, plaintext and the verdict of the tag comparison; the test checks that
 * these come out public and correct: against the first Wycheproof vectors
 * with 96-bit IVs (aes_gcm_test.json), and every implementation against the
 * first one. For those vectors it also checks that what is released was
 * secret just before its release (recorded through mbc_msan_release_hook).
 *
 * Implementations, forced with mbc_cpu_restrict: c (bitsliced) and aesni
 * (intrinsics, instrumented like any C: MSan propagates the secret through
 * aesenc and pclmulqdq, which the case checks). vaes512 is always a "# SKIP"
 * case: its kernels are nasm, and MSan does not see inside them. They neither
 * check what they read nor set the shadow of what they write, so their
 * output keeps the shadow the buffer had: an uninitialised or in-place
 * (poisoned) output buffer reads as secret afterwards. In a build with them
 * (-Dvaes=enabled) that gave false reports: the first Wycheproof seal and
 * open came out "not public". tools/run.sh's MSan build has -Dvaes=disabled
 * anyway. The C around those kernels is the code the other cases run (key
 * setup, J0, streaming, tag, verdict); the nasm itself is not covered here.
 * An implementation this CPU lacks is a "# SKIP" case too.
 *
 * Controls, which show that the check can fail, on a poisoned AES-128 key of
 * the c implementation: --leaky (textbook GHASH that branches on the bits of
 * H) and --leaky-index (a first-round S-box lookup indexed by plaintext ^
 * round key, as table-based AES does). MSan must stop the process with a
 * report; if it does not, the program exits 0 and the should_fail test fails.
 *
 * Output: TAP, one case per key size and implementation. Links nothing but
 * the library and libc: uninstrumented libraries would give MSan false
 * reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbcrypto.h"
#include "gcm/gcm_internal.h"

#include "ct_util.h"

#define NUM_KAT 6   /* Wycheproof vectors per key size */
#define KAT_MAX 256 /* their longest field */
#define MAX_LEN 4099
#define MAX_AAD 145
#define REF_BYTES (64 * 1024) /* the outputs of one case: about 37 KiB */
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* plaintext, AAD and IV lengths: every combination is checked */
static const size_t lens[] = {0,  1,   15,  16,  17,  31,  32,  33,
                              64, 127, 128, 129, 141, 512, 513, MAX_LEN};
static const size_t aad_lens[] = {0, 20, MAX_AAD};
static const size_t iv_lens[] = {12, 60};
/* streaming piece sizes, cycled */
static const size_t pieces[] = {1, 15, 16, 17, 31, 64, 7, 100};

struct impl {
    const char *name;
    uint64_t allowed; /* the feature word that selects it */
    uint64_t needs;   /* the CPU features it needs, for the SKIP message */
    int nasm;         /* its kernels are nasm: invisible to MSan, skipped */
};

#define AESNI_NEEDS (MBC_CPU_AESNI | MBC_CPU_PCLMULQDQ | MBC_CPU_SSE41 | MBC_CPU_SSSE3)
static const struct impl impls[] = {
    {"c", 0, 0, 0},
    {"aesni", ~(MBC_CPU_VAES | MBC_CPU_VPCLMULQDQ), AESNI_NEEDS, 0},
    {"vaes512", ~(uint64_t)0,
     AESNI_NEEDS | MBC_CPU_VAES | MBC_CPU_VPCLMULQDQ | MBC_CPU_AVX512F | MBC_CPU_AVX512BW |
         MBC_CPU_AVX512VL | MBC_CPU_BMI2,
     1},
};

/* One Wycheproof vector. */
struct kat {
    uint8_t key[32], iv[12], aad[KAT_MAX], msg[KAT_MAX], ct[KAT_MAX], tag[16];
    size_t key_len, iv_len, aad_len, msg_len, ct_len, tag_len;
};

/* The data of one key size; ref holds the outputs of the first
 * implementation run, which the others must reproduce. */
struct ctx {
    size_t k_len;
    struct kat kat[NUM_KAT];
    unsigned num_kat;
    uint8_t k[32], iv[60], aad[MAX_AAD];
    uint8_t pt[MAX_LEN];    /* public reference plaintext */
    uint8_t ref[REF_BYTES]; /* ciphertext || tag of every check, in order */
    size_t ref_pos;
    int have_ref;
    const char *ref_name; /* the implementation that wrote ref */
};

/* ------------------------------------------------------------------------ */
/* Vectors                                                                   */
/* ------------------------------------------------------------------------ */

static long int_field(const char *s, const char *name)
{
    char pat[32];
    snprintf(pat, sizeof(pat), "\"%s\"", name);
    s = strstr(s, pat);
    if (s == NULL) {
        return -1;
    }
    s = ct_skip_space(s + strlen(pat));
    return *s == ':' ? strtol(s + 1, NULL, 10) : -1;
}

static int is_valid(const char *test)
{
    const char *s = strstr(test, "\"result\"");
    if (s == NULL) {
        return 0;
    }
    s = ct_skip_space(s + strlen("\"result\""));
    return *s == ':' && strncmp(ct_skip_space(s + 1), "\"valid\"", 7) == 0;
}

static int parse_kat(const char *t, struct kat *v)
{
    int rc = ct_parse_hex_field(t, "key", v->key, sizeof(v->key), &v->key_len);
    rc |= ct_parse_hex_field(t, "iv", v->iv, sizeof(v->iv), &v->iv_len);
    rc |= ct_parse_hex_field(t, "aad", v->aad, sizeof(v->aad), &v->aad_len);
    rc |= ct_parse_hex_field(t, "msg", v->msg, sizeof(v->msg), &v->msg_len);
    rc |= ct_parse_hex_field(t, "ct", v->ct, sizeof(v->ct), &v->ct_len);
    rc |= ct_parse_hex_field(t, "tag", v->tag, sizeof(v->tag), &v->tag_len);
    return rc;
}

/* load_kats: the first NUM_KAT valid tests (fields within KAT_MAX bytes) of
 * the first group with 96-bit IVs, 128-bit tags and c->k_len-byte keys. */
static int load_kats(struct ctx *c, const char *text)
{
    const char *g = text;
    c->num_kat = 0;
    while ((g = strstr(g, "\"ivSize\"")) != NULL) {
        const char *next = strstr(g + 1, "\"ivSize\"");
        if (int_field(g, "ivSize") == 96 && int_field(g, "keySize") == (long)c->k_len * 8 &&
            int_field(g, "tagSize") == 128) {
            for (const char *t = strstr(g, "\"tcId\"");
                 t != NULL && (next == NULL || t < next) && c->num_kat < NUM_KAT;
                 t = strstr(t + 1, "\"tcId\"")) {
                struct kat *v = &c->kat[c->num_kat];
                if (is_valid(t) && parse_kat(t, v) == 0 && v->key_len == c->k_len &&
                    v->iv_len == 12 && v->ct_len == v->msg_len && v->tag_len == 16) {
                    c->num_kat++;
                }
            }
            break;
        }
        g += 1;
    }
    if (c->num_kat == 0) {
        fprintf(stderr, "ct_gcm: no AES-%zu vectors with 96-bit IVs\n", c->k_len * 8);
        return -1;
    }
    return 0;
}

/* ctx_init: the public test data of one key size (no vectors yet). */
static void ctx_init(struct ctx *c, size_t k_len)
{
    memset(c, 0, sizeof(*c));
    c->k_len = k_len;
    ct_rng_seed(0x243F6A8885A308D3ull ^ k_len);
    for (size_t i = 0; i < k_len; i++) {
        c->k[i] = ct_rng_byte();
    }
    for (size_t i = 0; i < sizeof(c->iv); i++) {
        c->iv[i] = ct_rng_byte();
    }
    for (size_t i = 0; i < MAX_AAD; i++) {
        c->aad[i] = ct_rng_byte();
    }
    for (size_t i = 0; i < MAX_LEN; i++) {
        c->pt[i] = ct_rng_byte();
    }
}

/* ------------------------------------------------------------------------ */
/* The checks                                                                */
/* ------------------------------------------------------------------------ */

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        printf("# " __VA_ARGS__);                                                                  \
        printf("\n");                                                                              \
        return -1;                                                                                 \
    } while (0)

/* poisoned_key: the key object of k built from a poisoned copy of k, on the
 * selected implementation impl; NULL after a message if that fails. */
static mbc_gcm_key *poisoned_key(const uint8_t *k, size_t k_len, const char *impl)
{
    uint8_t sk[32];
    mbc_gcm_key *key = NULL;
    memcpy(sk, k, k_len);
    __msan_poison(sk, k_len);
    mbc_err err = mbc_gcm_key_new(&key, sk, k_len);
    memset(sk, 0, sizeof(sk));
    if (err != MBC_OK || strcmp(mbc_gcm_key_impl(key), impl) != 0) {
        printf("# %s: key: %s, implementation %s\n", impl, mbc_err_str(err),
               key == NULL ? "none" : mbc_gcm_key_impl(key));
        mbc_gcm_key_free(key);
        return NULL;
    }
    return key;
}

/*
 * secret_propagates: the check is not vacuous. Every round key, H and every
 * hash-key power still hold poisoned bits after the key setup, and the
 * implementation's AES block and GHASH of public data give poisoned results
 * (MSan follows the secret through them, through aesenc and pclmulqdq on
 * aesni), so an output the library did not declassify would be seen.
 */
static int secret_propagates(const mbc_gcm_key *key, const uint8_t pub[64])
{
    uint8_t out[16], xi[16] = {0};
    int ok = !ct_is_public(key->h, 16);
    for (unsigned r = 0; r <= key->rounds; r++) {
        ok &= !ct_is_public(key->rk + 16 * r, 16);
    }
    for (unsigned i = 0; i < GCM_NPOW; i++) {
        ok &= !ct_is_public(key->htab + 16 * i, 16);
    }
    key->impl.block(key, pub, out);
    ok &= !ct_is_public(out, 16);
    key->impl.ghash(key, xi, pub, 64);
    ok &= !ct_is_public(xi, 16);
    return ok;
}

/* releases_secret: what the last recorded call declassified (at least min
 * releases) was secret just before: every byte of the buffers at out and tag,
 * bit 0 of anything else (the tag verdict). */
static int releases_secret(const void *out, const void *tag, size_t min)
{
    size_t count;
    const struct ct_release *rel = ct_releases(&count);
    int ok = rel != NULL && count >= min;
    for (size_t i = 0; ok && i < count; i++) {
        if (rel[i].at == out || rel[i].at == tag) {
            ok = rel[i].len == 0 || ct_all_bytes_secret(rel[i].copy, rel[i].len);
        } else {
            ok = rel[i].len > 0 && ct_bit_is_secret(rel[i].copy, 0);
        }
    }
    return ok;
}

/* check_kats: seals and opens the Wycheproof vectors with poisoned keys and
 * poisoned inputs on impl; what the library releases (ciphertext and tag,
 * tag verdict and plaintext) must have been secret until then. */
static int check_kats(const struct ctx *c, const char *impl)
{
    for (unsigned i = 0; i < c->num_kat; i++) {
        const struct kat *v = &c->kat[i];
        uint8_t in[KAT_MAX], out[KAT_MAX], tag[16];
        mbc_gcm_key *key = poisoned_key(v->key, v->key_len, impl);
        if (key == NULL) {
            return -1;
        }
        memcpy(in, v->msg, v->msg_len);
        __msan_poison(in, v->msg_len);
        ct_record(1);
        mbc_err e1 = mbc_gcm_seal(key, out, tag, 16, v->iv, 12, v->aad, v->aad_len, in, v->msg_len);
        ct_record(0);
        int seal_ok = e1 == MBC_OK && ct_is_public(out, v->msg_len) && ct_is_public(tag, 16) &&
                      memcmp(out, v->ct, v->msg_len) == 0 && memcmp(tag, v->tag, 16) == 0 &&
                      releases_secret(out, tag, 2);
        memcpy(in, v->ct, v->ct_len);
        __msan_poison(in, v->ct_len);
        ct_record(1);
        mbc_err e2 =
            mbc_gcm_open(key, out, v->tag, 16, v->iv, 12, v->aad, v->aad_len, in, v->ct_len);
        ct_record(0);
        int open_ok = e2 == MBC_OK && ct_is_public(out, v->ct_len) &&
                      memcmp(out, v->msg, v->msg_len) == 0 && releases_secret(out, NULL, 2);
        mbc_gcm_key_free(key);
        if (!seal_ok || !open_ok) {
            FAIL("%s AES-%zu: Wycheproof vector %u: seal %s, open %s", impl, v->key_len * 8, i,
                 seal_ok ? "ok" : "wrong, not declassified or public before its release",
                 open_ok ? "ok" : "wrong, not declassified or public before its release");
        }
    }
    return 0;
}

/* The public parameters of one check. */
struct params {
    const uint8_t *iv, *aad;
    size_t iv_len, aad_len, len;
};

/* stream: one streaming operation over in (p->len bytes, pieces cycled),
 * the AAD in two pieces; enc selects mbc_gcm_encrypt + finish (tag written)
 * or mbc_gcm_decrypt + verify (tag read). Returns the last call's result. */
static mbc_err stream(const mbc_gcm_key *key, const struct params *p, int enc, uint8_t *out,
                      uint8_t tag[16], const uint8_t *in)
{
    mbc_gcm_ctx ctx;
    const size_t cut = p->aad_len / 3;
    mbc_err err = mbc_gcm_init(&ctx, key, p->iv, p->iv_len, 0);
    if (err == MBC_OK) {
        err = mbc_gcm_aad(&ctx, p->aad, cut);
    }
    if (err == MBC_OK) {
        err = mbc_gcm_aad(&ctx, p->aad + cut, p->aad_len - cut);
    }
    for (size_t off = 0, i = 0; err == MBC_OK && off < p->len; i++) {
        size_t n = pieces[i % COUNT(pieces)];
        n = n < p->len - off ? n : p->len - off;
        err = (enc ? mbc_gcm_encrypt : mbc_gcm_decrypt)(&ctx, out + off, in + off, n);
        off += n;
    }
    if (err != MBC_OK) {
        return err;
    }
    return enc ? mbc_gcm_finish(&ctx, tag, 16) : mbc_gcm_verify(&ctx, tag, 16);
}

static int all_zero(const uint8_t *p, size_t len)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < len; i++) {
        acc |= p[i];
    }
    return acc == 0;
}

/* check_one: every operation on the first p->len bytes of the poisoned
 * plaintext; the outputs must equal the next ciphertext || tag of c->ref
 * (written there by the first implementation). */
static int check_one(struct ctx *c, const mbc_gcm_key *key, const char *impl,
                     const struct params *p)
{
    static uint8_t sec[MAX_LEN], ct[MAX_LEN], out[MAX_LEN];
    const size_t len = p->len;
    uint8_t tag[16], tag2[16], bad[16];
    const char *what = NULL;
    if (c->ref_pos + len + 16 > sizeof(c->ref)) {
        FAIL("REF_BYTES is too small");
    }
    uint8_t *ref = c->ref + c->ref_pos;
    c->ref_pos += len + 16;
#define CHECK(cond, msg)                                                                           \
    if (what == NULL && !(cond)) {                                                                 \
        what = msg;                                                                                \
    }

    /* one-shot seal, then streaming seal of the same plaintext */
    memcpy(sec, c->pt, len);
    __msan_poison(sec, len);
    memset(ct, 0xA5, sizeof(ct));
    memset(tag, 0xA5, sizeof(tag));
    CHECK(mbc_gcm_seal(key, ct, tag, 16, p->iv, p->iv_len, p->aad, p->aad_len, sec, len) == MBC_OK,
          "seal failed");
    CHECK(ct_is_public(ct, len) && ct_is_public(tag, 16), "seal output not declassified");
    if (what == NULL && c->have_ref) {
        CHECK(memcmp(ct, ref, len) == 0 && memcmp(tag, ref + len, 16) == 0,
              "seal differs from the first implementation");
    }
    memset(out, 0xA5, sizeof(out));
    memset(tag2, 0xA5, sizeof(tag2));
    CHECK(stream(key, p, 1, out, tag2, sec) == MBC_OK, "streaming seal failed");
    CHECK(ct_is_public(out, len) && ct_is_public(tag2, 16), "streaming output not declassified");
    CHECK(what != NULL || (memcmp(out, ct, len) == 0 && memcmp(tag2, tag, 16) == 0),
          "streaming seal differs from one-shot");
    if (what == NULL && !c->have_ref) {
        memcpy(ref, ct, len);
        memcpy(ref + len, tag, 16);
    }

    /* open the poisoned ciphertext: right tag, then a wrong one */
    memcpy(sec, ct, len);
    __msan_poison(sec, len);
    memcpy(bad, tag, 16);
    bad[len % 16] ^= 0x80;
    memset(out, 0xA5, sizeof(out));
    CHECK(mbc_gcm_open(key, out, tag, 16, p->iv, p->iv_len, p->aad, p->aad_len, sec, len) == MBC_OK,
          "open rejected the right tag");
    CHECK(ct_is_public(out, len), "opened plaintext not declassified");
    CHECK(what != NULL || memcmp(out, c->pt, len) == 0, "open gave a wrong plaintext");
    memset(out, 0xA5, sizeof(out));
    CHECK(mbc_gcm_open(key, out, bad, 16, p->iv, p->iv_len, p->aad, p->aad_len, sec, len) ==
              MBC_ERR_AUTH,
          "open accepted a wrong tag");
    CHECK(ct_is_public(out, len) && all_zero(out, len), "rejected output not zeroed");

    /* streaming decrypt + verify, right tag then wrong tag */
    memset(out, 0xA5, sizeof(out));
    CHECK(stream(key, p, 0, out, tag, sec) == MBC_OK, "streaming verify rejected the right tag");
    CHECK(ct_is_public(out, len), "streaming plaintext not declassified");
    CHECK(what != NULL || memcmp(out, c->pt, len) == 0, "streaming decrypt wrong");
    CHECK(stream(key, p, 0, out, bad, sec) == MBC_ERR_AUTH,
          "streaming verify accepted a wrong tag");
#undef CHECK
    if (what != NULL) {
        FAIL("%s AES-%zu, %zu-byte IV, %zu-byte AAD, %zu bytes: %s", impl, c->k_len * 8, p->iv_len,
             p->aad_len, len, what);
    }
    return 0;
}

/* run_case: the checks of one key size on the selected implementation.
 * Returns 0 when every check passed (MSan stops the process on any report
 * before that). */
static int run_case(struct ctx *c, const char *impl)
{
    if (check_kats(c, impl) != 0) {
        return -1;
    }
    mbc_gcm_key *key = poisoned_key(c->k, c->k_len, impl);
    if (key == NULL) {
        return -1;
    }
    int rc = 0;
    if (!secret_propagates(key, c->pt)) {
        printf("# %s AES-%zu: public key material or kernel results: poison did not propagate\n",
               impl, c->k_len * 8);
        rc = -1;
    }
    c->ref_pos = 0;
    for (size_t v = 0; v < COUNT(iv_lens) && rc == 0; v++) {
        for (size_t a = 0; a < COUNT(aad_lens) && rc == 0; a++) {
            for (size_t l = 0; l < COUNT(lens) && rc == 0; l++) {
                const struct params p = {c->iv, c->aad, iv_lens[v], aad_lens[a], lens[l]};
                rc = check_one(c, key, impl, &p);
            }
        }
    }
    mbc_gcm_key_free(key);
    if (rc == 0 && !c->have_ref) {
        c->have_ref = 1;
        c->ref_name = impl;
    }
    return rc;
}

/* skip_reason: NULL if im runs here (it is then selected), else why not. */
static const char *skip_reason(const struct impl *im)
{
    if (ct_select_impl(MBC_ALG_GCM, im->name, im->allowed)) {
        return im->nasm ? "nasm kernels, invisible to MSan: their outputs keep the shadow the "
                          "buffer had, which gives false reports (see the file header)"
                        : NULL;
    }
    mbc_cpu_restrict(~(uint64_t)0);
    if ((mbc_cpu_features() & im->needs) != im->needs) {
        return "the CPU lacks it";
    }
    return im->nasm ? "not built (-Dvaes=disabled), and invisible to MSan anyway" : "not built";
}

static int run_checks(void)
{
    static const size_t k_lens[] = {16, 24, 32};
    static struct ctx c;
    char *vectors = ct_read_vectors("aes_gcm_test.json");
    int failed = 0;
    unsigned tap = 0;
    printf("1..%zu\n", COUNT(k_lens) * COUNT(impls));
    printf("# poisoned under MemorySanitizer: the AES key bytes, the plaintext (seal) and the "
           "ciphertext (open)\n");
    for (size_t s = 0; s < COUNT(k_lens); s++) {
        ctx_init(&c, k_lens[s]);
        int init_ok = vectors != NULL && load_kats(&c, vectors) == 0;
        for (size_t i = 0; i < COUNT(impls); i++) {
            const char *name = impls[i].name;
            tap++;
            if (!init_ok) {
                printf("not ok %u - %s AES-%zu: vectors\n", tap, name, k_lens[s] * 8);
                failed++;
                continue;
            }
            const char *skip = skip_reason(&impls[i]);
            if (skip != NULL) {
                printf("ok %u # SKIP %s AES-%zu: %s (CPU features 0x%llx)\n", tap, name,
                       k_lens[s] * 8, skip, (unsigned long long)mbc_cpu_features());
                continue;
            }
            const char *ref = c.have_ref ? c.ref_name : NULL;
            if (run_case(&c, name) == 0) {
                printf("ok %u - %s AES-%zu: %u Wycheproof vectors, %zu lengths x %zu AAD x %zu "
                       "IV lengths, one-shot and streaming, no MSan report, outputs %s%s\n",
                       tap, name, k_lens[s] * 8, c.num_kat, COUNT(lens), COUNT(aad_lens),
                       COUNT(iv_lens), ref != NULL ? "equal to " : "round-trip (the reference)",
                       ref != NULL ? ref : "");
            } else {
                printf("not ok %u - %s AES-%zu\n", tap, name, k_lens[s] * 8);
                failed++;
            }
        }
    }
    free(vectors);
    mbc_cpu_restrict(~(uint64_t)0);
    return failed ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Controls: deliberately leaky code on the poisoned data                    */
/* ------------------------------------------------------------------------ */

static volatile unsigned sink;

/* leaky_ghash: Y * H in GF(2^128) by SP 800-38D algorithm 1 with the secret
 * H as the operand whose bits decide "if x_i = 1 then Z ^= V": a branch on
 * the secret. The volatile count keeps the compiler from turning the branch
 * into a select (which clang does otherwise, and which is constant time). */
static volatile unsigned leaky_adds;

__attribute__((noinline)) static unsigned leaky_ghash(const mbc_gcm_key *key, const uint8_t y[16])
{
    uint64_t z0 = 0, z1 = 0, v0 = 0, v1 = 0;
    for (int i = 0; i < 8; i++) {
        v0 = v0 << 8 | y[i];
        v1 = v1 << 8 | y[8 + i];
    }
    for (unsigned i = 0; i < 128; i++) {
        if ((key->h[i / 8] >> (7 - i % 8)) & 1) {
            leaky_adds++;
            z0 ^= v0;
            z1 ^= v1;
        }
        uint64_t lsb = v1 & 1;
        v1 = v1 >> 1 | v0 << 63;
        v0 = (v0 >> 1) ^ (lsb ? 0xE1ull << 56 : 0);
    }
    return (unsigned)(z0 ^ z1);
}

/* leaky_sbox: the first-round lookup of table-based AES, S[pt ^ rk], whose
 * address depends on the key and the plaintext. */
__attribute__((noinline)) static unsigned leaky_sbox(const mbc_gcm_key *key, const uint8_t *pt)
{
    static uint8_t sbox[256];
    for (unsigned i = 0; i < 256; i++) {
        sbox[i] = (uint8_t)(i * 167u + 13u);
    }
    return sbox[pt[0] ^ key->rk[0]];
}

static int run_control(int index)
{
    static struct ctx c;
    ctx_init(&c, 16);
    if (!ct_select_impl(MBC_ALG_GCM, "c", 0)) {
        return 2;
    }
    mbc_gcm_key *key = poisoned_key(c.k, 16, "c");
    if (key == NULL) {
        return 2;
    }
    uint8_t pt[16];
    memcpy(pt, c.pt, 16);
    __msan_poison(pt, 16);
    printf("# control: %s; MSan must report it\n",
           index ? "an S-box lookup indexed by plaintext ^ round key"
                 : "GHASH branching on the bits of H (from the poisoned AES-128 key)");
    fflush(stdout);
    sink = index ? leaky_sbox(key, pt) : leaky_ghash(key, c.iv);
    printf("# control NOT caught: MemorySanitizer reported nothing\n");
    mbc_gcm_key_free(key);
    return 0;
}

int main(int argc, char **argv)
{
    return ct_main(argc, argv, run_checks, run_control);
}
