/*
 * ct_valgrind.c - the constant-time check of the shipped objects: the gcc
 * release build of libmbcrypto.so, run under valgrind memcheck (meson test
 * ct_valgrind, which wraps this program in valgrind; see tests/meson.build).
 *
 * Memcheck tracks which bits are undefined. The secrets are marked undefined
 * (VALGRIND_MAKE_MEM_UNDEFINED) before the library sees them, so memcheck
 * reports every conditional jump and every memory address computed from
 * them, in the machine code gcc produced (unroll pragmas, barriers and all):
 * the MemorySanitizer check (tests/ct) instruments a clang build instead.
 * The library marks what it releases as defined (mbc_declassify is
 * VALGRIND_MAKE_MEM_DEFINED when the build found <valgrind/memcheck.h>).
 *
 * Cases (the error count of memcheck, VALGRIND_COUNT_ERRORS, must not grow
 * during any of them):
 * - rsa/c: the Wycheproof rsa_pkcs1_2048 key (the portable kernels take
 *   their digit count at run time, so one size runs the code of all; 4096
 *   bits would add two minutes) with p, q, dp, dq, qinv undefined (with
 *   undefined leading zero bytes, tests/ct/ct_rsa_keys.c) goes
 *   through mbc_rsa_priv_key_new, and so do five bad keys built from it (dp
 *   = 0, dq = 0, qinv = 1, e + 2, p and q swapped), which must get their
 *   error; then 8 undefined inputs through mbc_rsa_private_crt_mb8 on the
 *   portable kernels with 8, 3 (one paired pass) and 1 (the 2-lane kernels)
 *   requests, and with lane 7's input equal to n (MBC_LANE_BAD_PARAM). The
 *   outputs must come out defined and give the inputs back through
 *   mbc_rsa_public_mb8.
 * - gcm/c, gcm/aesni: AES-128/192/256 keys undefined before
 *   mbc_gcm_key_new; undefined plaintext sealed one-shot and streaming,
 *   undefined ciphertext opened with the right and a wrong tag, 12- and
 *   60-byte IVs, 0/20/145 bytes of AAD, the 16 lengths of tests/ct/ct_gcm.c;
 *   outputs defined, streaming equal to one-shot, aesni equal to c, and the
 *   streaming context holding undefined bits (the key reached it through
 *   the implementation). (vaes512 needs AVX-512, which valgrind 3.19 cannot
 *   run.)
 * - x25519/c: 8 scalars undefined through mbc_x25519_mb8 (one peer of low
 *   order, u = 1) and mbc_x25519_public_key_mb8 with 8, 3 and 1 requests
 *   (every request runs alone on the 1-lane portable kernels); the outputs
 *   must come out defined and equal the same calls on defined scalars, lane
 *   0's derive RFC 7748's vector. (The IFMA kernels need AVX-512; the scalar
 *   ones, which valgrind runs but whose ADX its CPUID hides, are checked by
 *   tests/ct_valgrind_x25519.c; the scalar EC kernels, for the same reason,
 *   by tests/ct_valgrind_ec.c.)
 * With --controls it runs the controls instead (a separate meson test), each
 * of which memcheck must catch (its error count must grow): a branch on an
 * undefined key byte, a table lookup indexed by one, and the library's
 * public operation fed an undefined input (it branches on its in < n
 * verdict, as it may for public data): a report from inside libmbcrypto.so.
 *
 * Not under valgrind, every case fails: it checks nothing there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <valgrind/memcheck.h>

#include "ct/ct_rsa_keys.h"
#include "test_util.h"

#define MAX_BYTES CTK_MAX_BYTES
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* secret: marks len bytes at p as undefined for memcheck. */
static void secret(const void *p, size_t len)
{
    (void)VALGRIND_MAKE_MEM_UNDEFINED(p, len);
}

/* undefined_bits: how many of the bits of the len bytes at p memcheck
 * considers undefined (derived from a secret), read without a report. */
static size_t undefined_bits(const void *p, size_t len)
{
    static uint8_t vbits[8192];
    size_t n = 0;
    for (size_t off = 0; off < len; off += sizeof(vbits)) {
        const size_t chunk = len - off < sizeof(vbits) ? len - off : sizeof(vbits);
        assert_int_equal(VALGRIND_GET_VBITS((const uint8_t *)p + off, vbits, chunk), 1);
        for (size_t i = 0; i < chunk; i++) {
            n += (size_t)__builtin_popcount(vbits[i]);
        }
    }
    return n;
}

/* is_defined: 1 if memcheck considers the len bytes at p defined. */
static int is_defined(const void *p, size_t len)
{
    return undefined_bits(p, len) == 0;
}

/* begin: the memcheck error count before a case; fails off valgrind. */
static unsigned long begin(void)
{
    if (!RUNNING_ON_VALGRIND) {
        fail_msg("not under valgrind: this check runs through meson test (valgrind ...)");
    }
    return (unsigned long)VALGRIND_COUNT_ERRORS;
}

/* no_reports: fails if memcheck reported anything since before. */
static void no_reports(unsigned long before, const char *what)
{
    const unsigned long n = (unsigned long)VALGRIND_COUNT_ERRORS - before;
    if (n != 0) {
        fail_msg("%s: memcheck reported %lu error(s), see its report on stderr: a branch or "
                 "address depends on a secret",
                 what, n);
    }
}

/* ------------------------------------------------------------------------ */
/* RSA                                                                       */
/* ------------------------------------------------------------------------ */

/* load_key: the privateKey of the first test group of rsa_pkcs1_<bits>. */
static void load_key(unsigned bits, struct ctk_material *km)
{
    char file[64];
    snprintf(file, sizeof(file), "rsa_pkcs1_%u_test.json", bits);
    json_t *root = mbt_load_json(file);
    const json_t *key =
        json_object_get(json_array_get(json_object_get(root, "testGroups"), 0), "privateKey");
    assert_non_null(key);
    for (int f = 0; f < CTK_COUNT; f++) {
        size_t len;
        uint8_t *v = mbt_json_hex(key, ctk_field_names[f], &len);
        assert_true(len <= sizeof(km->v[f]));
        memcpy(km->v[f], v, len);
        km->len[f] = len;
        free(v);
    }
    json_decref(root);
}

/* check_bad_keys: the inconsistent keys built from km get their errors. */
static void check_bad_keys(const struct ctk_material *km)
{
    static struct ctk_material bad;
    for (unsigned kind = 0; kind < CTK_NUM_BAD; kind++) {
        mbc_err want;
        size_t verdicts;
        const char *name = ctk_bad(&bad, km, kind, &want, &verdicts);
        mbc_rsa_priv_key *key = NULL;
        const mbc_err got = ctk_key_new(&key, &bad, secret);
        mbc_rsa_priv_key_free(key);
        if (got != want) {
            fail_msg("bad key (%s): %s, want %s", name, mbc_err_str(got), mbc_err_str(want));
        }
    }
}

/* The keys, inputs and buffers of one modulus size. */
struct rsa_ctx {
    unsigned bits;
    size_t len;
    struct ctk_material km;
    mbc_rsa_priv_key *priv;
    mbc_rsa_pub_key *pub;
    uint8_t ref[MBC_LANES][MAX_BYTES]; /* the inputs, defined */
    uint8_t in[MBC_LANES][MAX_BYTES];  /* undefined copies of ref */
    uint8_t out[MBC_LANES][MAX_BYTES];
};

static void rsa_ctx_init(struct rsa_ctx *c, unsigned bits)
{
    memset(c, 0, sizeof(*c));
    c->bits = bits;
    c->len = bits / 8;
    load_key(bits, &c->km);
    const uint8_t *n = c->km.v[CTK_N] + (c->km.len[CTK_N] - c->len); /* without a leading zero */
    assert_int_equal(ctk_key_new(&c->priv, &c->km, secret), MBC_OK);
    assert_int_equal(mbc_rsa_pub_key_new(&c->pub, n, c->len, c->km.v[CTK_E], c->km.len[CTK_E]),
                     MBC_OK);
    /* lane 0: 0, lane 1: 1, lane 2: n - 1, the others random below n */
    for (unsigned l = 0; l < MBC_LANES; l++) {
        uint8_t *r = c->ref[l];
        memset(r, 0, c->len);
        if (l == 1) {
            r[c->len - 1] = 1;
        } else if (l == 2) {
            memcpy(r, n, c->len);
            r[c->len - 1] -= 1; /* n is odd */
        } else if (l > 2) {
            mbt_rand_bytes(r, c->len);
            r[0] = (uint8_t)(r[0] % n[0]);
        }
        memcpy(c->in[l], r, c->len);
        secret(c->in[l], c->len);
    }
}

/* rsa_batch: the private operation on the lanes of mask, then checks: each
 * lane of mask OK, its output defined and equal to ref[l]^d (back through
 * the public operation). */
static void rsa_batch(struct rsa_ctx *c, unsigned mask)
{
    uint8_t *out[MBC_LANES], *back_p[MBC_LANES];
    const uint8_t *in[MBC_LANES];
    const mbc_rsa_priv_key *priv[MBC_LANES];
    const mbc_rsa_pub_key *pub[MBC_LANES];
    static uint8_t back[MBC_LANES][MAX_BYTES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        out[l] = c->out[l];
        in[l] = c->in[l];
        priv[l] = c->priv;
        pub[l] = c->pub;
        back_p[l] = back[l];
    }
    const mbc_status st = mbc_rsa_private_crt_mb8(out, in, priv, c->bits, mask);
    assert_int_equal(mbc_status_ok_mask(st), mask);
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if ((mask >> l) & 1u) {
            assert_true(is_defined(c->out[l], c->len));
        }
    }
    const mbc_status pst =
        mbc_rsa_public_mb8(back_p, (const uint8_t *const *)out, pub, c->bits, mask);
    assert_int_equal(mbc_status_ok_mask(pst), mask);
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if ((mask >> l) & 1u) {
            assert_memory_equal(back[l], c->ref[l], c->len);
        }
    }
}

static void test_rsa(void **state)
{
    (void)state;
    static const unsigned sizes[] = {2048};
    static struct rsa_ctx c;
    const unsigned long before = begin();
    mbc_cpu_restrict(0);
    assert_string_equal(mbc_impl_name(MBC_ALG_RSA), "c");
    for (size_t s = 0; s < COUNT(sizes); s++) {
        rsa_ctx_init(&c, sizes[s]);
        check_bad_keys(&c.km);
        rsa_batch(&c, MBC_LANE_MASK_ALL);
        rsa_batch(&c, 0x0B); /* 3 requests: one paired pass */
        rsa_batch(&c, 0x04); /* 1 request: the 2-lane kernels */

        /* lane 7's input is n (undefined too): a bad lane, the others OK */
        uint8_t *out[MBC_LANES];
        const uint8_t *in[MBC_LANES];
        const mbc_rsa_priv_key *priv[MBC_LANES];
        uint8_t bad[MAX_BYTES];
        memcpy(bad, c.km.v[CTK_N] + (c.km.len[CTK_N] - c.len), c.len);
        secret(bad, c.len);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            out[l] = c.out[l];
            in[l] = l == 7 ? bad : c.in[l];
            priv[l] = c.priv;
        }
        const mbc_status st = mbc_rsa_private_crt_mb8(out, in, priv, c.bits, MBC_LANE_MASK_ALL);
        assert_int_equal(st, (mbc_status)MBC_LANE_BAD_PARAM << 28);
        mbc_rsa_priv_key_free(c.priv);
        mbc_rsa_pub_key_free(c.pub);
        print_message("# rsa/c %u: key creation (good key, 5 bad keys) and 8, 3 and 1 "
                      "requests with undefined secrets (%.1f s CPU so far)\n",
                      sizes[s], (double)clock() / CLOCKS_PER_SEC);
    }
    mbc_cpu_restrict(~(uint64_t)0);
    no_reports(before, "rsa/c");
}

/* ------------------------------------------------------------------------ */
/* AES-GCM                                                                   */
/* ------------------------------------------------------------------------ */

#define GCM_MAX 4099
#define GCM_MAX_AAD 145
/* the lengths of tests/ct/ct_gcm.c: block boundaries, 128 and 512 with tails */
static const size_t gcm_lens[] = {0,  1,   15,  16,  17,  31,  32,  33,
                                  64, 127, 128, 129, 141, 512, 513, GCM_MAX};
static const size_t gcm_aad_lens[] = {0, 20, GCM_MAX_AAD};
static const size_t gcm_iv_lens[] = {12, 60};
static const size_t gcm_k_lens[] = {16, 24, 32};
#define GCM_REF_BYTES                                                                              \
    (COUNT(gcm_k_lens) * COUNT(gcm_iv_lens) * COUNT(gcm_aad_lens) * COUNT(gcm_lens) *              \
     (GCM_MAX + 16))

/* The outputs (ciphertext || tag of each check) of the first implementation
 * run, which the others must reproduce. */
static uint8_t gcm_ref[GCM_REF_BYTES];
static int gcm_have_ref;

/* gcm_stream: a streaming seal (enc) or open of in, in pieces of 1 to 100
 * bytes; returns the error of finish (tag written) or verify (tag read). */
static mbc_err gcm_stream(const mbc_gcm_key *key, int enc, const uint8_t *iv, size_t iv_len,
                          const uint8_t *aad, size_t aad_len, uint8_t *out, uint8_t tag[16],
                          const uint8_t *in, size_t len)
{
    static const size_t pieces[] = {1, 15, 16, 17, 100};
    mbc_gcm_ctx ctx;
    assert_int_equal(mbc_gcm_init(&ctx, key, iv, iv_len, 0), MBC_OK);
    assert_int_equal(mbc_gcm_aad(&ctx, aad, aad_len), MBC_OK);
    /* not vacuous: the GHASH state of the context (the AAD under the
     * secret H, or J0 of a long IV) is undefined, as memcheck follows the
     * key through the implementation (aesenc, pclmulqdq on aesni) */
    if (aad_len > 0 || iv_len != 12) {
        assert_true(undefined_bits(&ctx, sizeof(ctx)) > 0);
    }
    for (size_t off = 0, i = 0; off < len; i++) {
        size_t n = pieces[i % COUNT(pieces)];
        n = n < len - off ? n : len - off;
        assert_int_equal((enc ? mbc_gcm_encrypt : mbc_gcm_decrypt)(&ctx, out + off, in + off, n),
                         MBC_OK);
        off += n;
        /* the keystream of a partial block, buffered in the context */
        if (i == 0 && n % 16 != 0) {
            assert_true(undefined_bits(&ctx, sizeof(ctx)) > 0);
        }
    }
    return enc ? mbc_gcm_finish(&ctx, tag, 16) : mbc_gcm_verify(&ctx, tag, 16);
}

/* The public test data, the same for every implementation. */
static struct {
    uint8_t pt[GCM_MAX], keys[COUNT(gcm_k_lens)][32], iv[60], aad[GCM_MAX_AAD];
} gd;

/* gcm_check_one: seal (one-shot, streaming) the first len bytes of gd.pt,
 * undefined, then open the undefined ciphertext with the right and a wrong
 * tag (one-shot, streaming). The outputs must be defined, consistent, and
 * equal to those of the first implementation (at gcm_ref + *pos). */
static void gcm_check_one(const mbc_gcm_key *key, size_t iv_len, size_t aad_len, size_t len,
                          size_t *pos)
{
    static uint8_t sec[GCM_MAX], ct[GCM_MAX], out[GCM_MAX];
    uint8_t tag[16], tag2[16], bad[16];
    const uint8_t *iv = gd.iv, *aad = gd.aad;
    memcpy(sec, gd.pt, len);
    secret(sec, len);
    assert_int_equal(mbc_gcm_seal(key, ct, tag, 16, iv, iv_len, aad, aad_len, sec, len), MBC_OK);
    assert_true(is_defined(ct, len) && is_defined(tag, 16));
    assert_int_equal(gcm_stream(key, 1, iv, iv_len, aad, aad_len, out, tag2, sec, len), MBC_OK);
    assert_true(is_defined(out, len) && is_defined(tag2, 16));
    assert_memory_equal(out, ct, len);
    assert_memory_equal(tag2, tag, 16);
    uint8_t *ref = gcm_ref + *pos;
    *pos += len + 16;
    if (gcm_have_ref) {
        assert_memory_equal(ct, ref, len);
        assert_memory_equal(tag, ref + len, 16);
    } else {
        memcpy(ref, ct, len);
        memcpy(ref + len, tag, 16);
    }

    memcpy(sec, ct, len);
    secret(sec, len);
    assert_int_equal(mbc_gcm_open(key, out, tag, 16, iv, iv_len, aad, aad_len, sec, len), MBC_OK);
    assert_true(is_defined(out, len));
    assert_memory_equal(out, gd.pt, len);
    assert_int_equal(gcm_stream(key, 0, iv, iv_len, aad, aad_len, out, tag, sec, len), MBC_OK);
    assert_memory_equal(out, gd.pt, len);
    memcpy(bad, tag, 16);
    bad[len % 16] ^= 0x80;
    assert_int_equal(mbc_gcm_open(key, out, bad, 16, iv, iv_len, aad, aad_len, sec, len),
                     MBC_ERR_AUTH);
    for (size_t i = 0; i < len; i++) {
        assert_int_equal(out[i], 0);
    }
    assert_int_equal(gcm_stream(key, 0, iv, iv_len, aad, aad_len, out, bad, sec, len),
                     MBC_ERR_AUTH);
}

static void test_gcm(void **state)
{
    const char *impl = (const char *)*state;
    const unsigned long before = begin();
    mbt_use_alg_impl(MBC_ALG_GCM, impl);
    if (!gcm_have_ref) {
        mbt_rand_bytes((uint8_t *)&gd, sizeof(gd));
    }
    size_t pos = 0;
    for (size_t kl = 0; kl < COUNT(gcm_k_lens); kl++) {
        uint8_t k[32];
        mbc_gcm_key *key = NULL;
        memcpy(k, gd.keys[kl], gcm_k_lens[kl]);
        secret(k, gcm_k_lens[kl]);
        assert_int_equal(mbc_gcm_key_new(&key, k, gcm_k_lens[kl]), MBC_OK);
        assert_string_equal(mbc_gcm_key_impl(key), impl);
        for (size_t v = 0; v < COUNT(gcm_iv_lens); v++) {
            for (size_t a = 0; a < COUNT(gcm_aad_lens); a++) {
                for (size_t l = 0; l < COUNT(gcm_lens); l++) {
                    gcm_check_one(key, gcm_iv_lens[v], gcm_aad_lens[a], gcm_lens[l], &pos);
                }
            }
        }
        mbc_gcm_key_free(key);
    }
    gcm_have_ref = 1;
    mbc_cpu_restrict(~(uint64_t)0);
    print_message("# gcm/%s: AES-128/192/256 keys, %zu lengths x %zu AAD x %zu IV lengths, "
                  "one-shot and streaming, right and wrong tags, with undefined secrets (%.1f s "
                  "CPU so far)\n",
                  impl, COUNT(gcm_lens), COUNT(gcm_aad_lens), COUNT(gcm_iv_lens),
                  (double)clock() / CLOCKS_PER_SEC);
    no_reports(before, impl);
}

/* ------------------------------------------------------------------------ */
/* X25519                                                                    */
/* ------------------------------------------------------------------------ */

#define XLEN MBC_X25519_LEN

/* x25519_unhex: 32 bytes from 64 hex digits. */
static void x25519_unhex(uint8_t out[XLEN], const char *s)
{
    for (int i = 0; i < XLEN; i++) {
        unsigned v;
        assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
}

static void test_x25519(void **state)
{
    const char *impl = (const char *)*state;
    static const unsigned masks[] = {0xFF, 0x07, 0x01};
    uint8_t k[MBC_LANES][XLEN], ks[MBC_LANES][XLEN], u[MBC_LANES][XLEN];
    uint8_t ref[2][MBC_LANES][XLEN], out[MBC_LANES][XLEN], want[XLEN];
    uint8_t *o[MBC_LANES];
    const uint8_t *kp[MBC_LANES], *ksp[MBC_LANES], *up[MBC_LANES];
    mbt_rand_bytes((uint8_t *)k, sizeof(k));
    mbt_rand_bytes((uint8_t *)u, sizeof(u));
    x25519_unhex(k[0], "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4");
    x25519_unhex(u[0], "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c");
    x25519_unhex(want, "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552");
    memset(u[5], 0, XLEN);
    u[5][0] = 1; /* low order: MBC_LANE_LOW_ORDER */
    for (unsigned l = 0; l < MBC_LANES; l++) {
        o[l] = out[l];
        kp[l] = k[l];
        ksp[l] = ks[l];
        up[l] = u[l];
    }
    mbt_use_alg_impl(MBC_ALG_X25519, impl);
    /* the results on defined scalars */
    const mbc_status st_ref = mbc_x25519_mb8(o, kp, up, MBC_LANE_MASK_ALL);
    memcpy(ref[0], out, sizeof(out));
    assert_int_equal(mbc_x25519_public_key_mb8(o, kp, MBC_LANE_MASK_ALL), 0);
    memcpy(ref[1], out, sizeof(out));
    assert_memory_equal(ref[0][0], want, XLEN);
    assert_int_equal(mbc_lane_code(st_ref, 5), MBC_LANE_LOW_ORDER);
    const unsigned long before = begin();
    for (size_t m = 0; m < COUNT(masks); m++) {
        for (int pub = 0; pub < 2; pub++) {
            memcpy(ks, k, sizeof(k));
            secret(ks, sizeof(ks));
            memset(out, 0xA5, sizeof(out));
            const mbc_status st = pub ? mbc_x25519_public_key_mb8(o, ksp, masks[m])
                                      : mbc_x25519_mb8(o, ksp, up, masks[m]);
            assert_true(is_defined(&st, sizeof(st)));
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if (!((masks[m] >> l) & 1u)) {
                    continue;
                }
                assert_true(is_defined(out[l], XLEN));
                assert_int_equal(mbc_lane_code(st, l),
                                 pub ? MBC_LANE_OK : mbc_lane_code(st_ref, l));
                assert_memory_equal(out[l], ref[pub][l], XLEN);
            }
        }
    }
    assert_string_equal(mbc_impl_name(MBC_ALG_X25519), impl);
    mbc_cpu_restrict(~(uint64_t)0);
    print_message("# x25519/%s: derive and public key with undefined scalars, 8, 3 and 1 "
                  "requests (%.1f s CPU so far)\n",
                  impl, (double)clock() / CLOCKS_PER_SEC);
    no_reports(before, impl);
}

/* ------------------------------------------------------------------------ */
/* ML-KEM                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * test_mlkem: ML-KEM-768 with its secrets undefined: the seeds of key
 * generation (8 lanes and a lone request), the m of encapsulation, the
 * secret parts of dk (dk_PKE and z; its ek and H(ek) are public) for
 * decapsulation of a valid and of a changed ciphertext (implicit
 * rejection). The outputs must come out defined and consistent.
 */
static void test_mlkem(void **state)
{
    const char *impl = (const char *)*state;
    const unsigned long before = begin();
    mbt_use_alg_impl(MBC_ALG_MLKEM, impl);
    enum { EK = MBC_MLKEM768_EK_LEN, DK = MBC_MLKEM768_DK_LEN, CT = MBC_MLKEM768_CT_LEN };
    static uint8_t seed[8][64], m[8][32], ek[8][EK], dk[8][DK], ct[8][CT], ss[8][32], ss2[8][32];
    uint8_t *e[8], *d[8], *c[8], *s[8], *s2[8];
    const uint8_t *sd[8], *mm[8], *ce[8], *cc[8], *cd[8];
    for (int i = 0; i < 8; i++) {
        e[i] = ek[i];
        d[i] = dk[i];
        c[i] = ct[i];
        s[i] = ss[i];
        s2[i] = ss2[i];
        sd[i] = seed[i];
        mm[i] = m[i];
        ce[i] = ek[i];
        cc[i] = ct[i];
        cd[i] = dk[i];
    }
    for (unsigned mask = 0x01; mask <= 0xFF; mask = mask == 1 ? 0xFF : 0x100) {
        mbt_rand_bytes(&seed[0][0], sizeof(seed));
        mbt_rand_bytes(&m[0][0], sizeof(m));
        secret(seed, sizeof(seed));
        secret(m, sizeof(m));
        assert_int_equal(
            mbc_status_ok_mask(mbc_mlkem_keygen_seed_mb8(MBC_MLKEM_768, e, d, sd, mask)), mask);
        for (unsigned l = 0; l < 8; l++) {
            if ((mask >> l) & 1u) {
                assert_true(is_defined(ek[l], EK));
                assert_true(is_defined(dk[l], DK));
                /* the secret parts of dk undefined again for decaps */
                secret(dk[l], 384 * 3);
                secret(dk[l] + DK - 32, 32);
            }
        }
        assert_int_equal(
            mbc_status_ok_mask(mbc_mlkem_encaps_m_mb8(MBC_MLKEM_768, c, s, ce, mm, mask)), mask);
        ct[0][5] ^= (uint8_t)(mask == 0xFF ? 0 : 1); /* the lone request: rejected */
        ct[3][100] ^= 1;                             /* in the batch: rejected */
        assert_int_equal(mbc_status_ok_mask(mbc_mlkem_decaps_mb8(MBC_MLKEM_768, s2, cc, cd, mask)),
                         mask);
        for (unsigned l = 0; l < 8; l++) {
            if ((mask >> l) & 1u) {
                assert_true(is_defined(ct[l], CT));
                assert_true(is_defined(ss[l], 32));
                assert_true(is_defined(ss2[l], 32));
                const int rejected = l == 3 || (l == 0 && mask != 0xFF);
                assert_int_equal(memcmp(ss[l], ss2[l], 32) == 0, !rejected);
            }
        }
    }
    mbc_cpu_restrict(~(uint64_t)0);
    print_message("# mlkem/%s: ML-KEM-768 keygen, encaps, decaps (valid and rejected), 8 lanes and "
                  "1, with undefined seeds, m and dk\n",
                  impl);
    no_reports(before, impl);
}

/* ------------------------------------------------------------------------ */
/* Controls: memcheck must report each                                       */
/* ------------------------------------------------------------------------ */

static volatile unsigned sink;

/* caught: fails unless memcheck reported something since before. */
static void caught(unsigned long before, const char *what)
{
    const unsigned long n = (unsigned long)VALGRIND_COUNT_ERRORS - before;
    if (n == 0) {
        fail_msg("control NOT caught: %s, and memcheck reported nothing", what);
    }
    print_message("# control caught: %s (%lu memcheck report(s) on stderr)\n", what, n);
}

/* leaky_bits: the bit length of a secret byte string found by skipping its
 * zero bytes: a branch on each secret byte. The volatile count keeps gcc
 * from turning the loop into branch-free code. */
static volatile unsigned leaky_steps;

__attribute__((noinline)) static unsigned leaky_bits(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len && s[i] == 0) {
        leaky_steps++;
        i++;
    }
    return (unsigned)(8 * (len - i));
}

/* leaky_sbox: a table lookup whose address is a secret byte. */
__attribute__((noinline)) static unsigned leaky_sbox(const uint8_t *s)
{
    static uint8_t sbox[256];
    for (unsigned i = 0; i < 256; i++) {
        sbox[i] = (uint8_t)(i * 167u + 13u);
    }
    return sbox[s[1]];
}

static void test_control_branch(void **state)
{
    (void)state;
    struct ctk_material km;
    load_key(2048, &km);
    const unsigned long before = begin();
    secret(km.v[CTK_DP], km.len[CTK_DP]);
    sink = leaky_bits(km.v[CTK_DP], km.len[CTK_DP]);
    caught(before, "a loop branching on the bytes of an undefined dp");
}

static void test_control_index(void **state)
{
    (void)state;
    uint8_t s[16];
    mbt_rand_bytes(s, sizeof(s));
    const unsigned long before = begin();
    secret(s, sizeof(s));
    sink = leaky_sbox(s);
    caught(before, "an S-box lookup indexed by an undefined byte");
}

static void test_control_library(void **state)
{
    (void)state;
    struct ctk_material km;
    load_key(2048, &km);
    const uint8_t *n = km.v[CTK_N] + (km.len[CTK_N] - 256);
    mbc_rsa_pub_key *pub = NULL;
    uint8_t in[256], out[256];
    assert_int_equal(mbc_rsa_pub_key_new(&pub, n, 256, km.v[CTK_E], km.len[CTK_E]), MBC_OK);
    mbt_rand_bytes(in, sizeof(in));
    in[0] = (uint8_t)(in[0] % n[0]);
    mbc_cpu_restrict(0);
    const unsigned long before = begin();
    secret(in, sizeof(in));
    sink = (unsigned)mbc_rsa_public(out, in, pub);
    mbc_cpu_restrict(~(uint64_t)0);
    mbc_rsa_pub_key_free(pub);
    caught(before, "mbc_rsa_public (c) on an undefined input: libmbcrypto.so branches on its "
                   "in < n verdict, as it may for a public input");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest checks[] = {
        cmocka_unit_test(test_rsa),
        {"test_gcm/c", test_gcm, NULL, NULL, (void *)"c"},
        {"test_gcm/aesni", test_gcm, NULL, NULL, (void *)"aesni"},
        {"test_x25519/c", test_x25519, NULL, NULL, (void *)"c"},
        {"test_mlkem/c", test_mlkem, NULL, NULL, (void *)"c"},
        {"test_mlkem/avx2", test_mlkem, NULL, NULL, (void *)"avx2"},
    };
    const struct CMUnitTest controls[] = {
        cmocka_unit_test(test_control_branch),
        cmocka_unit_test(test_control_index),
        cmocka_unit_test(test_control_library),
    };
    if (argc == 2 && strcmp(argv[1], "--controls") == 0) {
        return mbt_run("ct_valgrind_controls", controls);
    }
    if (argc != 1) {
        fprintf(stderr, "usage: valgrind %s [--controls]\n", argv[0]);
        return 2;
    }
    return mbt_run("ct_valgrind", checks);
}
