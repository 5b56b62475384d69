/*
 * test_mlkem.c - ML-KEM (FIPS 203): every ML-KEM-768 Wycheproof file
 * (key generation from seeds, decapsulation of seed-made keys, encapsulation
 * with a fixed m including the modulus check, decapsulation with malformed
 * keys and ciphertexts), the compression against division, round trips of
 * ML-KEM-512 and -1024, lane semantics of the _mb8 calls (a bad lane does
 * not spoil others; a batch gives the bytes of single calls), and the
 * manager's ML-KEM classes. Each test runs once per implementation ("c",
 * "avx2", "avx512"), selected with mbc_cpu_restrict.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mlkem/mlkem_internal.h"
#include "test_hooks.h"
#include "test_util.h"

#define EK MBC_MLKEM768_EK_LEN
#define DK MBC_MLKEM768_DK_LEN
#define CT MBC_MLKEM768_CT_LEN
#define SS MBC_MLKEM_SS_LEN
#define SEED MBC_MLKEM_SEED_LEN

static void begin(void **state)
{
    mbc_test_hooks.random_fail = 0;
    mbt_use_alg_impl(MBC_ALG_MLKEM, *state);
    assert_string_equal(mbc_impl_name(MBC_ALG_MLKEM), (const char *)*state);
}

/* clang-format off */
#define IMPL_TESTS(fn)                                                                             \
    {#fn "/c", fn, NULL, NULL, (void *)"c"},                                                       \
    {#fn "/avx2", fn, NULL, NULL, (void *)"avx2"},                                                 \
    {#fn "/avx512", fn, NULL, NULL, (void *)"avx512"}
/* clang-format on */

/* Compress_d by multiplication equals round(2^d x / q) by division. */
static void test_compress(void **state)
{
    (void)state;
    static const unsigned ds[] = {1, 4, 5, 10, 11};
    for (size_t i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) {
        const unsigned d = ds[i];
        for (unsigned x = 0; x < MLKEM_Q; x++) {
            const unsigned want = (((x << d) * 2 + MLKEM_Q) / (2 * MLKEM_Q)) & ((1u << d) - 1);
            assert_int_equal(mbc_mlkem_compress1((uint16_t)x, d), want);
        }
    }
}

#if MBC_HAVE_AVX2
/* vec_tier: the coefficient passes and byte codings of one vector tier. */
struct vec_tier {
    uint64_t needs;
    void (*reduce)(int16_t a[MLKEM_N]);
    void (*tomont)(int16_t a[MLKEM_N]);
    void (*encode12)(uint8_t out[384], const int16_t a[MLKEM_N]);
    int (*decode12)(int16_t a[MLKEM_N], const uint8_t in[384]);
    void (*decode_decompress)(int16_t a[MLKEM_N], const uint8_t *in, unsigned d);
    void (*compress_encode)(uint8_t *out, const int16_t a[MLKEM_N], unsigned d);
};
#define VEC_TIER(needs, sfx)                                                                       \
    {                                                                                              \
        needs, mbc_mlkem_reduce_##sfx, mbc_mlkem_tomont_##sfx, mbc_mlkem_encode12_##sfx,           \
            mbc_mlkem_decode12_##sfx, mbc_mlkem_decode_decompress_##sfx,                           \
            mbc_mlkem_compress_encode_##sfx                                                        \
    }
static const struct vec_tier vec_tiers[] = {
    VEC_TIER(MBC_CPU_AVX2, avx2),
#if MBC_HAVE_AVX512
    VEC_TIER(MBC_CPU_AVX2 | MBC_CPU_AVX512F | MBC_CPU_AVX512VL, avx512),
#endif
};

/* vec_poly_check: tier v's passes and codings give poly.c's bits: on a
 * (|a| < 2^12) and c (any |c| < 2^14), on the random bytes buf (504) as
 * encodings of every d, and on 12-bit encodings with one value at or above
 * q (the modulus check) or all of them just below. */
static void vec_poly_check(const struct vec_tier *v, const int16_t a[MLKEM_N],
                           const int16_t c[MLKEM_N], const uint8_t buf[504])
{
    int16_t x[MLKEM_N], y[MLKEM_N];
    uint8_t ox[384], oy[384];
    const int16_t *src[2] = {a, c};
    for (unsigned i = 0; i < 2; i++) {
        memcpy(x, src[i], sizeof(x));
        memcpy(y, src[i], sizeof(y));
        mbc_mlkem_reduce(x);
        v->reduce(y);
        assert_memory_equal(x, y, sizeof(x));
        memcpy(x, src[i], sizeof(x));
        memcpy(y, src[i], sizeof(y));
        mbc_mlkem_tomont(x);
        v->tomont(y);
        assert_memory_equal(x, y, sizeof(x));
        mbc_mlkem_encode12(ox, src[i]);
        v->encode12(oy, src[i]);
        assert_memory_equal(ox, oy, sizeof(ox));
    }
    static const unsigned ds[] = {1, 4, 5, 10, 11};
    for (unsigned i = 0; i < 5; i++) {
        mbc_mlkem_decode_decompress(x, buf, ds[i]);
        v->decode_decompress(y, buf, ds[i]);
        assert_memory_equal(x, y, sizeof(x));
        mbc_mlkem_compress_encode(ox, c, ds[i]);
        v->compress_encode(oy, c, ds[i]);
        assert_memory_equal(ox, oy, 32 * ds[i]);
    }
    /* 12-bit decoding: random bytes (mostly some value >= q), then the
     * encoding of reduced values, with at most one raised to q..4095 */
    uint8_t enc[384];
    memcpy(enc, buf, sizeof(enc));
    assert_int_equal(mbc_mlkem_decode12(x, enc), v->decode12(y, enc));
    assert_memory_equal(x, y, sizeof(x));
    for (unsigned j = 0; j < MLKEM_N; j++) {
        x[j] = (int16_t)(c[j] % MLKEM_Q);
    }
    x[buf[0]] = (int16_t)(MLKEM_Q - 1);
    mbc_mlkem_encode12(enc, x);
    if (buf[1] & 1) {
        /* value buf[2] becomes q + buf[3] * 3 (at most 4094) */
        const unsigned j = buf[2], val = MLKEM_Q + buf[3] * 3u;
        uint8_t *p = enc + 3 * (j / 2);
        if (j % 2 == 0) {
            p[0] = (uint8_t)val;
            p[1] = (uint8_t)((p[1] & 0xF0) | (val >> 8));
        } else {
            p[1] = (uint8_t)((p[1] & 0x0F) | ((val & 0x0F) << 4));
            p[2] = (uint8_t)(val >> 4);
        }
    }
    const int rx = mbc_mlkem_decode12(x, enc);
    assert_int_equal(rx, (buf[1] & 1) ? 0 : 1);
    assert_int_equal(v->decode12(y, enc), rx);
    assert_memory_equal(x, y, sizeof(x));
}
#endif

/* The AVX2 polynomial kernels give poly.c's bits, on random inputs at the
 * bounds of their contracts. */
static void test_poly_avx2(void **state)
{
    (void)state;
#if MBC_HAVE_AVX2
    if ((mbc_cpu_features() & MBC_CPU_AVX2) == 0) {
        skip();
    }
    for (size_t iter = 0; iter < mbt_scale(2000); iter++) {
        int16_t a[MLKEM_N], b[MLKEM_N], c[MLKEM_N], x[MLKEM_N], y[MLKEM_N];
        for (unsigned j = 0; j < MLKEM_N; j++) {
            const uint64_t r = mbt_rand();
            /* NTT and basemul inputs |a| < 2^12; invNTT < 2^14 */
            a[j] = (int16_t)((int)(r % 8191) - 4095);
            b[j] = (int16_t)((int)((r >> 16) % 8191) - 4095);
            c[j] = (int16_t)((int)((r >> 32) % 32767) - 16383);
        }
        memcpy(x, a, sizeof(a));
        memcpy(y, a, sizeof(a));
        mbc_mlkem_ntt(x);
        mbc_mlkem_ntt_avx2(y);
        assert_memory_equal(x, y, sizeof(x));
#if MBC_HAVE_AVX512
        if ((mbc_cpu_features() & (MBC_CPU_AVX512F | MBC_CPU_AVX512VL)) ==
            (MBC_CPU_AVX512F | MBC_CPU_AVX512VL)) {
            memcpy(y, a, sizeof(a));
            mbc_mlkem_ntt_avx512(y);
            assert_memory_equal(x, y, sizeof(x));
        }
#endif
        memcpy(x, c, sizeof(c));
        memcpy(y, c, sizeof(c));
        mbc_mlkem_invntt(x);
        mbc_mlkem_invntt_avx2(y);
        assert_memory_equal(x, y, sizeof(x));
        for (unsigned j = 0; j < MLKEM_N; j++) {
            x[j] = y[j] = (int16_t)(c[j] / 4);
        }
        mbc_mlkem_basemul_acc(x, a, b);
        mbc_mlkem_basemul_acc_avx2(y, a, b);
        assert_memory_equal(x, y, sizeof(x));
        /* rejection sampling: from any count, on streams of every length
         * to 3 blocks, some with most candidates >= q */
        uint8_t buf[504];
        mbt_rand_bytes(buf, sizeof(buf));
        if (iter % 3 == 0) {
            for (size_t j = 1; j < sizeof(buf); j += 3) {
                buf[j] |= 0xD0; /* most second candidates >= q */
            }
        }
        const unsigned from = (unsigned)(mbt_rand() % 257);
        const size_t len = mbt_rand() % (sizeof(buf) + 1);
        memcpy(x, c, sizeof(c));
        memcpy(y, c, sizeof(c));
        const unsigned nx = mbc_mlkem_rej(x, from, buf, len);
        const unsigned ny = mbc_mlkem_rej_avx2(y, from, buf, len);
        assert_int_equal(nx, ny);
        assert_memory_equal(x, y, nx * sizeof(int16_t));
        /* compression of any int16, every d */
        static const unsigned ds[] = {1, 4, 5, 10, 11};
        uint8_t ox[32 * 11], oy[32 * 11];
        const unsigned d = ds[iter % 5];
        mbc_mlkem_compress_encode(ox, c, d);
        mbc_mlkem_compress_encode_avx2(oy, c, d);
        assert_memory_equal(ox, oy, 32 * d);
        /* the noise of 5 streams (a whole group of four and one alone), eta
         * 2 and 3 */
        uint8_t seeds[5][33];
        int16_t cx[5][MLKEM_N], cy[5][MLKEM_N];
        int16_t *px[5], *py[5];
        mbt_rand_bytes((uint8_t *)seeds, sizeof(seeds));
        for (unsigned i = 0; i < 5; i++) {
            px[i] = cx[i];
            py[i] = cy[i];
        }
        const unsigned eta = 2 + (unsigned)(iter & 1);
        mbc_mlkem_sample_cbd_c(px, (const uint8_t(*)[33])seeds, 5, eta);
        mbc_mlkem_sample_cbd_avx2(py, (const uint8_t(*)[33])seeds, 5, eta);
        assert_memory_equal(cx, cy, sizeof(cx));
#if MBC_HAVE_AVX512
        if ((mbc_cpu_features() & (MBC_CPU_AVX512F | MBC_CPU_AVX512VL)) ==
            (MBC_CPU_AVX512F | MBC_CPU_AVX512VL)) {
            memset(cy, 0, sizeof(cy));
            mbc_mlkem_sample_cbd_avx512(py, (const uint8_t(*)[33])seeds, 5, eta);
            assert_memory_equal(cx, cy, sizeof(cx));
        }
#endif
        for (size_t t = 0; t < sizeof(vec_tiers) / sizeof(vec_tiers[0]); t++) {
            if ((mbc_cpu_features() & vec_tiers[t].needs) == vec_tiers[t].needs) {
                vec_poly_check(&vec_tiers[t], a, c, buf);
            }
        }
    }
#else
    skip();
#endif
}

static void keygen_seed_case(const json_t *t, int valid)
{
    size_t sl, el, dl;
    uint8_t *seed = mbt_json_hex(t, "seed", &sl), *ek = mbt_json_hex(t, "ek", &el),
            *dk = mbt_json_hex(t, "dk", &dl);
    assert_true(valid);
    uint8_t oek[EK], odk[DK];
    assert_int_equal(mbc_mlkem_keygen_seed(MBC_MLKEM_768, oek, odk, seed, sl), MBC_OK);
    assert_int_equal(el, EK);
    assert_int_equal(dl, DK);
    assert_memory_equal(oek, ek, EK);
    assert_memory_equal(odk, dk, DK);
    free(seed);
    free(ek);
    free(dk);
}

/* mlkem_768_test.json: key pair from the seed (ek checked), then the
 * decapsulation of c; wrong seed or ciphertext lengths are refused. */
static void decaps_seed_case(const json_t *t, int valid)
{
    size_t sl, el = 0, cl, kl;
    uint8_t *seed = mbt_json_hex(t, "seed", &sl), *c = mbt_json_hex(t, "c", &cl),
            *k = mbt_json_hex(t, "K", &kl);
    uint8_t *ek = json_object_get(t, "ek") ? mbt_json_hex(t, "ek", &el) : NULL;
    uint8_t oek[EK], odk[DK], ss[SS];
    const mbc_err e = mbc_mlkem_keygen_seed(MBC_MLKEM_768, oek, odk, seed, sl);
    if (sl != MBC_MLKEM_SEED_LEN) {
        assert_false(valid);
        assert_int_equal(e, MBC_ERR_BAD_PARAM);
    } else {
        assert_int_equal(e, MBC_OK);
        if (ek != NULL) {
            assert_int_equal(el, EK);
            assert_memory_equal(oek, ek, EK);
        }
        const mbc_err d = mbc_mlkem_decaps(MBC_MLKEM_768, ss, c, cl, odk, DK);
        if (valid) {
            assert_int_equal(d, MBC_OK);
            assert_int_equal(kl, SS);
            assert_memory_equal(ss, k, SS);
        } else {
            assert_int_not_equal(cl, CT);
            assert_int_equal(d, MBC_ERR_BAD_PARAM);
        }
    }
    free(seed);
    free(c);
    free(k);
    free(ek);
}

static void encaps_case(const json_t *t, int valid)
{
    size_t el, ml, cl, kl;
    uint8_t *ek = mbt_json_hex(t, "ek", &el), *m = mbt_json_hex(t, "m", &ml),
            *c = mbt_json_hex(t, "c", &cl), *k = mbt_json_hex(t, "K", &kl);
    assert_int_equal(ml, MBC_MLKEM_MSG_LEN);
    uint8_t oct[CT], ss[SS];
    memset(oct, 0x5A, sizeof(oct));
    memset(ss, 0x5A, sizeof(ss));
    const mbc_err e = mbc_mlkem_encaps_m(MBC_MLKEM_768, oct, ss, ek, el, m);
    if (valid) {
        assert_int_equal(e, MBC_OK);
        assert_int_equal(cl, CT);
        assert_memory_equal(oct, c, CT);
        assert_memory_equal(ss, k, SS);
    } else {
        assert_int_equal(e, MBC_ERR_BAD_PARAM);
        if (el == EK) {
            /* the modulus check failed: outputs zeroed */
            static const uint8_t zero[CT];
            assert_memory_equal(oct, zero, CT);
            assert_memory_equal(ss, zero, SS);
        }
    }
    free(ek);
    free(m);
    free(c);
    free(k);
}

static void decaps_dk_case(const json_t *t, int valid)
{
    size_t dl, cl, kl = 0;
    uint8_t *dk = mbt_json_hex(t, "dk", &dl), *c = mbt_json_hex(t, "c", &cl);
    uint8_t *k = json_object_get(t, "K") ? mbt_json_hex(t, "K", &kl) : NULL;
    uint8_t ss[SS];
    const mbc_err e = mbc_mlkem_decaps(MBC_MLKEM_768, ss, c, cl, dk, dl);
    if (valid) {
        assert_int_equal(e, MBC_OK);
        assert_int_equal(kl, SS);
        assert_memory_equal(ss, k, SS);
    } else {
        assert_int_equal(e, MBC_ERR_BAD_PARAM);
    }
    free(dk);
    free(c);
    free(k);
}

/* The ML-KEM-768 Wycheproof files, each with its case function (t, and
 * whether the file says it is valid) and its number of cases. */
struct wp_file {
    const char *file;
    void (*fn)(const json_t *t, int valid);
    size_t count;
};
static const struct wp_file wp_files[] = {
    {"mlkem_768_keygen_seed_test.json", keygen_seed_case, 100},
    {"mlkem_768_test.json", decaps_seed_case, 193},
    {"mlkem_768_encaps_test.json", encaps_case, 265},
    {"mlkem_768_semi_expanded_decaps_test.json", decaps_dk_case, 9},
};

/* wp_run: one Wycheproof test of cmocka: a file on an implementation. */
struct wp_run {
    const char *impl;
    const struct wp_file *f;
};

/* test_wycheproof: every case of the file on the implementation. */
static void test_wycheproof(void **state)
{
    const struct wp_run *r = *state;
    void *impl = (void *)r->impl;
    begin(&impl);
    json_t *root = mbt_load_json(r->f->file);
    size_t gi, n = 0;
    const json_t *g;
    json_array_foreach(json_object_get(root, "testGroups"), gi, g)
    {
        assert_string_equal(json_string_value(json_object_get(g, "parameterSet")), "ML-KEM-768");
        size_t ti;
        const json_t *t;
        json_array_foreach(json_object_get(g, "tests"), ti, t)
        {
            const char *res = json_string_value(json_object_get(t, "result"));
            r->f->fn(t, strcmp(res, "valid") == 0);
            n++;
        }
    }
    json_decref(root);
    assert_int_equal(n, r->f->count);
}

/* clang-format off */
#define WP_RUNS(i) {"c", &wp_files[i]}, {"avx2", &wp_files[i]}, {"avx512", &wp_files[i]}
static const struct wp_run wp_runs[] = {WP_RUNS(0), WP_RUNS(1), WP_RUNS(2), WP_RUNS(3)};
#define WP_TEST(i, what)                                                                           \
    {"test_wycheproof_" what "/c", test_wycheproof, NULL, NULL, (void *)&wp_runs[3 * (i)]},        \
    {"test_wycheproof_" what "/avx2", test_wycheproof, NULL, NULL, (void *)&wp_runs[3 * (i) + 1]}, \
    {"test_wycheproof_" what "/avx512", test_wycheproof, NULL, NULL, (void *)&wp_runs[3 * (i) + 2]}
/* clang-format on */

/* ---- lanes -------------------------------------------------------------- */

/* A batch of 8 gives the bytes of 8 single calls; bad lanes (a NULL, an ek
 * failing the modulus check, an empty lane) leave the others as they are,
 * get their own codes and have their outputs zeroed (the empty one is not
 * touched). */
static void test_lanes(void **state)
{
    begin(state);
    static uint8_t seed[8][64], ek[8][EK], dk[8][DK], ct[8][CT], ss[8][SS], ss2[8][SS], m[8][32];
    static uint8_t ref_ek[EK], ref_dk[DK], ref_ct[CT], ref_ss[SS];
    mbt_rand_bytes(&seed[0][0], sizeof(seed));
    mbt_rand_bytes(&m[0][0], sizeof(m));
    uint8_t *e[8], *d[8], *c[8], *s[8], *s2[8];
    const uint8_t *sd[8], *ce[8], *cm[8], *cc[8], *cd[8];
    for (int i = 0; i < 8; i++) {
        e[i] = ek[i];
        d[i] = dk[i];
        c[i] = ct[i];
        s[i] = ss[i];
        s2[i] = ss2[i];
        sd[i] = seed[i];
        ce[i] = ek[i];
        cm[i] = m[i];
        cc[i] = ct[i];
        cd[i] = dk[i];
    }
    for (unsigned mask = 1; mask <= 0xFF; mask = mask * 3 + 1) {
        const unsigned mk = mask & 0xFF;
        memset(ek, 0xEE, sizeof(ek));
        mbc_status st = mbc_mlkem_keygen_seed_mb8(MBC_MLKEM_768, e, d, sd, mk);
        st = mbc_mlkem_encaps_m_mb8(MBC_MLKEM_768, c, s, ce, cm, mk);
        for (unsigned l = 0; l < 8; l++) {
            if (!((mk >> l) & 1u)) {
                assert_int_equal(mbc_lane_code(st, l), MBC_LANE_EMPTY);
                continue;
            }
            assert_int_equal(mbc_lane_code(st, l), MBC_LANE_OK);
            assert_int_equal(mbc_mlkem_keygen_seed(MBC_MLKEM_768, ref_ek, ref_dk, seed[l], 64),
                             MBC_OK);
            assert_memory_equal(ek[l], ref_ek, EK);
            assert_memory_equal(dk[l], ref_dk, DK);
            assert_int_equal(mbc_mlkem_encaps_m(MBC_MLKEM_768, ref_ct, ref_ss, ek[l], EK, m[l]),
                             MBC_OK);
            assert_memory_equal(ct[l], ref_ct, CT);
            assert_memory_equal(ss[l], ref_ss, SS);
        }
        st = mbc_mlkem_decaps_mb8(MBC_MLKEM_768, s2, cc, cd, mk);
        for (unsigned l = 0; l < 8; l++) {
            if ((mk >> l) & 1u) {
                assert_int_equal(mbc_lane_code(st, l), MBC_LANE_OK);
                assert_memory_equal(ss2[l], ss[l], SS);
            }
        }
    }
    /* bad lanes: 1 NULL m, 3 ek not reduced, 5 dk with a wrong H(ek), 6
     * empty, 7 a ciphertext of another key (implicit rejection: OK) */
    mbc_status st = mbc_mlkem_keygen_seed_mb8(MBC_MLKEM_768, e, d, sd, 0xFF);
    assert_int_equal(st, 0);
    static uint8_t bad_ek[EK];
    memcpy(bad_ek, ek[3], EK);
    bad_ek[0] = 0xFF;
    bad_ek[1] |= 0x0F; /* the first coefficient 4095 */
    const uint8_t *ce2[8];
    const uint8_t *cm2[8];
    memcpy(ce2, ce, sizeof(ce2));
    memcpy(cm2, cm, sizeof(cm2));
    ce2[3] = bad_ek;
    cm2[1] = NULL;
    memset(ss[6], 0x66, SS);
    st = mbc_mlkem_encaps_m_mb8(MBC_MLKEM_768, c, s, ce2, cm2, 0xBF);
    static const uint8_t zero[CT];
    for (unsigned l = 0; l < 8; l++) {
        const unsigned want = l == 1   ? MBC_LANE_NULL_PARAM
                              : l == 3 ? MBC_LANE_BAD_PARAM
                              : l == 6 ? MBC_LANE_EMPTY
                                       : MBC_LANE_OK;
        assert_int_equal(mbc_lane_code(st, l), want);
        if (want == MBC_LANE_OK) {
            assert_int_equal(mbc_mlkem_encaps_m(MBC_MLKEM_768, ref_ct, ref_ss, ek[l], EK, m[l]),
                             MBC_OK);
            assert_memory_equal(ct[l], ref_ct, CT);
            assert_memory_equal(ss[l], ref_ss, SS);
        } else if (want == MBC_LANE_BAD_PARAM) {
            assert_memory_equal(ct[l], zero, CT);
            assert_memory_equal(ss[l], zero, SS);
        }
    }
    assert_int_equal(ss[6][0], 0x66);
    static uint8_t bad_dk[DK], ct7[CT];
    memcpy(bad_dk, dk[5], DK);
    bad_dk[DK - 40] ^= 1; /* in H(ek) */
    memcpy(ct7, ct[0], CT);
    const uint8_t *cd2[8], *cc2[8];
    memcpy(cd2, cd, sizeof(cd2));
    memcpy(cc2, cc, sizeof(cc2));
    cd2[5] = bad_dk;
    cc2[7] = ct7;
    st = mbc_mlkem_decaps_mb8(MBC_MLKEM_768, s2, cc2, cd2, 0xBF & ~0x0Au);
    for (unsigned l = 0; l < 8; l++) {
        const unsigned want = (l == 1 || l == 3 || l == 6) ? MBC_LANE_EMPTY
                              : l == 5                     ? MBC_LANE_BAD_PARAM
                                                           : MBC_LANE_OK;
        assert_int_equal(mbc_lane_code(st, l), want);
        if (want == MBC_LANE_OK) {
            assert_int_equal(mbc_mlkem_decaps(MBC_MLKEM_768, ref_ss, cc2[l], CT, dk[l], DK),
                             MBC_OK);
            assert_memory_equal(ss2[l], ref_ss, SS);
        }
        if (l == 5) {
            assert_memory_equal(ss2[l], zero, SS);
        }
    }
    /* lane 7's ciphertext is lane 0's: rejected implicitly, not lane 0's secret */
    assert_memory_not_equal(ss2[7], ss[0], SS);
    /* malformed calls: nothing written */
    memset(ss2, 0x77, sizeof(ss2));
    st = mbc_mlkem_decaps_mb8((mbc_mlkem_param)5, s2, cc, cd, 0xFF);
    assert_int_equal(st, 0x33333333u);
    st = mbc_mlkem_decaps_mb8(MBC_MLKEM_768, s2, cc, cd, 0x1FF);
    assert_int_equal(st, 0x33333333u);
    assert_int_equal(ss2[0][0], 0x77);
    /* aliasing: two lanes with one output */
    uint8_t *s3[8];
    memcpy(s3, s2, sizeof(s3));
    s3[4] = s3[2];
    st = mbc_mlkem_decaps_mb8(MBC_MLKEM_768, s3, cc, cd, 0xFF);
    assert_int_equal(mbc_lane_code(st, 2), MBC_LANE_BAD_PARAM);
    assert_int_equal(mbc_lane_code(st, 4), MBC_LANE_BAD_PARAM);
    assert_int_equal(mbc_lane_code(st, 0), MBC_LANE_OK);
}

/* Round trips of every parameter set with the OS's randomness, and the
 * implicit rejection of a changed ciphertext; the random forms fail
 * cleanly when the OS gives no randomness. */
/* mbc_mlkem_sample_mixed on the implementation's lanes: hash tasks of
 * every block count to 12 (the lengths around each block edge, both SHA3
 * rates), with matrix entries beside them, give the portable sponge's
 * bytes and SampleNTT's entries, in any mix of counts. */
static void test_sample_mixed(void **state)
{
    begin(state);
    const struct mbc_mlkem_impl *impl = mbc_mlkem_impl_for(mbc_cpu_features());
    static uint8_t in[10][1700];
    uint8_t out[10][64], want[10][64], seed[MLKEM_MAT_PRE][34];
    int16_t got[MLKEM_MAT_PRE][MLKEM_N], ref[MLKEM_MAT_PRE][MLKEM_N];
    int16_t *gp[MLKEM_MAT_PRE], *rp[MLKEM_MAT_PRE];
    for (unsigned i = 0; i < MLKEM_MAT_PRE; i++) {
        gp[i] = got[i];
        rp[i] = ref[i];
    }
    for (size_t iter = 0; iter < mbt_scale(300); iter++) {
        const unsigned rate = iter & 1 ? MBC_SHA3_512_RATE : MBC_SHA3_256_RATE;
        const unsigned n = (unsigned)(mbt_rand() % 11), m = (unsigned)(mbt_rand() % 17);
        struct mbc_hash_task t[10], tr[10];
        mbt_rand_bytes((uint8_t *)in, sizeof(in));
        mbt_rand_bytes((uint8_t *)seed, sizeof(seed));
        for (unsigned i = 0; i < n; i++) {
            /* a block count to 12, and a length at or near its edge */
            const size_t blocks = mbt_rand() % 12, edge = mbt_rand() % 3;
            size_t len = blocks * rate + (edge == 0 ? 0 : edge == 1 ? rate - 1 : mbt_rand() % rate);
            len = len > sizeof(in[i]) ? sizeof(in[i]) : len;
            const size_t out_len = i & 1 ? 64 : 32;
            const uint8_t dom = i % 3 == 0 ? 0x1F : 0x06;
            t[i] = (struct mbc_hash_task){in[i], len, out[i], out_len, dom};
            tr[i] = (struct mbc_hash_task){in[i], len, want[i], out_len, dom};
        }
        memset(got, 0, sizeof(got));
        mbc_mlkem_sample_mixed(impl, t, n, rate, gp, (const uint8_t(*)[34])seed, m);
        mbc_keccak_hash_c(tr, n, rate);
        mbc_mlkem_sample_ntt_c(rp, (const uint8_t(*)[34])seed, m);
        for (unsigned i = 0; i < n; i++) {
            assert_memory_equal(out[i], want[i], t[i].out_len);
        }
        assert_memory_equal(got, ref, m * sizeof(got[0]));
    }
}

static void test_round_trip(void **state)
{
    begin(state);
    static const struct {
        mbc_mlkem_param p;
        size_t ek, dk, ct;
    } sets[] = {
        {MBC_MLKEM_512, MBC_MLKEM512_EK_LEN, MBC_MLKEM512_DK_LEN, MBC_MLKEM512_CT_LEN},
        {MBC_MLKEM_768, EK, DK, CT},
        {MBC_MLKEM_1024, MBC_MLKEM1024_EK_LEN, MBC_MLKEM1024_DK_LEN, MBC_MLKEM1024_CT_LEN},
    };
    static uint8_t ek[8][MBC_MLKEM1024_EK_LEN], dk[8][MBC_MLKEM1024_DK_LEN],
        ct[8][MBC_MLKEM1024_CT_LEN], ss[8][SS], ss2[8][SS];
    uint8_t *e[8], *d[8], *c[8], *s[8], *s2[8];
    const uint8_t *ce[8], *cc[8], *cd[8];
    for (int i = 0; i < 8; i++) {
        e[i] = ek[i];
        d[i] = dk[i];
        c[i] = ct[i];
        s[i] = ss[i];
        s2[i] = ss2[i];
        ce[i] = ek[i];
        cc[i] = ct[i];
        cd[i] = dk[i];
    }
    for (size_t i = 0; i < 3; i++) {
        for (size_t iter = 0; iter < mbt_scale(8); iter++) {
            assert_int_equal(mbc_mlkem_keygen_mb8(sets[i].p, e, d, 0xFF), 0);
            assert_int_equal(mbc_mlkem_encaps_mb8(sets[i].p, c, s, ce, 0xFF), 0);
            ct[3][iter % sets[i].ct] ^= 0x10;
            assert_int_equal(mbc_mlkem_decaps_mb8(sets[i].p, s2, cc, cd, 0xFF), 0);
            for (unsigned l = 0; l < 8; l++) {
                if (l == 3) {
                    assert_memory_not_equal(ss2[l], ss[l], SS);
                } else {
                    assert_memory_equal(ss2[l], ss[l], SS);
                }
                uint8_t one[SS];
                assert_int_equal(
                    mbc_mlkem_decaps(sets[i].p, one, ct[l], sets[i].ct, dk[l], sets[i].dk), MBC_OK);
                assert_memory_equal(one, ss2[l], SS);
            }
            assert_int_equal(mbc_mlkem_encaps(sets[i].p, ct[0], ss[0], ek[0], sets[i].ek), MBC_OK);
            assert_int_equal(mbc_mlkem_keygen(sets[i].p, ek[1], dk[1]), MBC_OK);
        }
    }
    mbc_test_hooks.random_fail = 1;
    memset(ek[0], 0x11, EK);
    assert_int_equal(mbc_mlkem_keygen(MBC_MLKEM_768, ek[0], dk[0]), MBC_ERR_UNSUPPORTED);
    assert_int_equal(ek[0][0], 0);
    assert_int_equal(mbc_mlkem_encaps_mb8(MBC_MLKEM_768, c, s, ce, 0x0F), 0x11118888u);
    mbc_test_hooks.random_fail = 0;
    assert_int_equal(mbc_mlkem_keygen(MBC_MLKEM_768, NULL, dk[0]), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_mlkem_decaps(MBC_MLKEM_768, ss[0], ct[0], CT, dk[0], DK - 1),
                     MBC_ERR_BAD_PARAM);
    assert_int_equal(mbc_mlkem_encaps(MBC_MLKEM_768, ct[0], ss[0], ek[0], EK + 1),
                     MBC_ERR_BAD_PARAM);
}

/* The manager's ML-KEM-768 classes: 8 key generations, 8 encapsulations
 * and 8 decapsulations batched, a lone job, a bad job alone; 8 key pairs
 * of given seeds batched and a lone one, each the single call's. */
static void test_mgr(void **state)
{
    begin(state);
    mbc_mgr *mgr;
    assert_int_equal(mbc_mgr_new(&mgr, NULL), MBC_OK);
    static uint8_t ek[9][EK], dk[9][DK], ct[9][CT], ss[9][SS], ss2[9][SS];
    mbc_job jobs[9];
    for (int phase = 0; phase < 3; phase++) {
        for (int i = 0; i < 9; i++) {
            mbc_job *j = &jobs[i];
            memset(j, 0, sizeof(*j));
            if (phase == 0) {
                *j = (mbc_job){.op = MBC_OP_MLKEM768_KEYGEN,
                               .out = ek[i],
                               .out_len = EK,
                               .out2 = dk[i],
                               .out2_len = DK};
            } else if (phase == 1) {
                *j = (mbc_job){.op = MBC_OP_MLKEM768_ENCAPS,
                               .in = ek[i],
                               .in_len = EK,
                               .out = ct[i],
                               .out_len = CT,
                               .out2 = ss[i],
                               .out2_len = SS};
            } else {
                *j = (mbc_job){.op = MBC_OP_MLKEM768_DECAPS,
                               .in = ct[i],
                               .in_len = CT,
                               .in2 = dk[i],
                               .in2_len = DK,
                               .out = ss2[i],
                               .out_len = SS};
            }
            assert_int_equal(mbc_mgr_submit(mgr, j), MBC_OK);
        }
        mbc_mgr_flush(mgr);
        for (int i = 0; i < 9; i++) {
            mbc_job *j = mbc_mgr_get_completed(mgr);
            assert_non_null(j);
            assert_int_equal(j->status, MBC_OK);
        }
        assert_null(mbc_mgr_get_completed(mgr));
    }
    for (int i = 0; i < 9; i++) {
        assert_memory_equal(ss[i], ss2[i], SS);
    }
    static uint8_t seed[9][SEED];
    for (int i = 0; i < 9; i++) {
        for (int b = 0; b < SEED; b++) {
            seed[i][b] = (uint8_t)(i * 31 + b * 7);
        }
        jobs[i] = (mbc_job){.op = MBC_OP_MLKEM768_KEYGEN_SEED,
                            .in = seed[i],
                            .in_len = SEED,
                            .out = ek[i],
                            .out_len = EK,
                            .out2 = dk[i],
                            .out2_len = DK};
        assert_int_equal(mbc_mgr_submit(mgr, &jobs[i]), MBC_OK);
        assert_int_equal(mbc_mgr_pending(mgr), i < 8 ? (size_t)(i + 1) % 8 : 1);
    }
    mbc_mgr_flush(mgr);
    for (int i = 0; i < 9; i++) {
        assert_ptr_equal(mbc_mgr_get_completed(mgr), &jobs[i]);
        assert_int_equal(jobs[i].status, MBC_OK);
        uint8_t e1[EK], d1[DK];
        assert_int_equal(mbc_mlkem_keygen_seed(MBC_MLKEM_768, e1, d1, seed[i], SEED), MBC_OK);
        assert_memory_equal(ek[i], e1, EK);
        assert_memory_equal(dk[i], d1, DK);
    }
    jobs[0].in_len = SEED - 1;
    assert_int_equal(mbc_mgr_submit(mgr, &jobs[0]), MBC_OK);
    assert_ptr_equal(mbc_mgr_get_completed(mgr), &jobs[0]);
    assert_int_equal(jobs[0].status, MBC_ERR_BAD_PARAM);
    mbc_job bad = {.op = MBC_OP_MLKEM768_DECAPS,
                   .in = ct[0],
                   .in_len = CT - 1,
                   .in2 = dk[0],
                   .in2_len = DK,
                   .out = ss2[0],
                   .out_len = SS};
    assert_int_equal(mbc_mgr_submit(mgr, &bad), MBC_OK);
    assert_ptr_equal(mbc_mgr_get_completed(mgr), &bad);
    assert_int_equal(bad.status, MBC_ERR_BAD_PARAM);
    mbc_mgr_free(mgr);
}

/* ---- against OpenSSL 3.5 (its openssl command) --------------------------- */

static char osl_dir[256], osl_tmp[256];

/* osl: runs OpenSSL 3.5's openssl with args (a shell fragment) in the
 * temporary directory; 1 on success. */
static int osl(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && '%s/root/usr/lib64/ld-linux-x86-64.so.2' --library-path "
             "'%s/root/usr/lib/x86_64-linux-gnu' '%s/root/usr/bin/openssl' %s 2>/dev/null",
             osl_tmp, osl_dir, osl_dir, osl_dir, args);
    return system(cmd) == 0;
}

static void write_file(const char *name, const uint8_t *b, size_t len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", osl_tmp, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, len, f), len);
    fclose(f);
}

/* read_file: the bytes of name (malloc'ed, *len). */
static uint8_t *read_file(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", osl_tmp, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *b = malloc(8192);
    assert_non_null(b);
    *len = fread(b, 1, 8192, f);
    fclose(f);
    return b;
}

/* Keys from the same seeds, and each side decapsulating the other's
 * ciphertexts (a changed one too: the implicit rejection), for every
 * parameter set. Skipped when OpenSSL 3.5 is not unpacked
 * (MBC_OPENSSL35_DIR, tools/openssl35.sh). */
static void test_openssl35(void **state)
{
    begin(state);
    const char *dir = getenv("MBC_OPENSSL35_DIR");
    char probe[512];
    snprintf(probe, sizeof(probe), "%s/root/usr/bin/openssl", dir != NULL ? dir : "");
    FILE *pf = dir != NULL ? fopen(probe, "rb") : NULL;
    if (pf == NULL) {
        print_message("OpenSSL 3.5 not unpacked (MBC_OPENSSL35_DIR): skipped\n");
        skip();
    }
    fclose(pf);
    snprintf(osl_dir, sizeof(osl_dir), "%s", dir);
    const char *tmpdir = getenv("TMPDIR");
    snprintf(osl_tmp, sizeof(osl_tmp), "%s/mbc_mlkem_XXXXXX", tmpdir != NULL ? tmpdir : P_tmpdir);
    assert_non_null(mkdtemp(osl_tmp));
    static const struct {
        mbc_mlkem_param p;
        const char *name;
        size_t ek, dk, ct;
    } sets[] = {
        {MBC_MLKEM_512, "ML-KEM-512", MBC_MLKEM512_EK_LEN, MBC_MLKEM512_DK_LEN,
         MBC_MLKEM512_CT_LEN},
        {MBC_MLKEM_768, "ML-KEM-768", EK, DK, CT},
        {MBC_MLKEM_1024, "ML-KEM-1024", MBC_MLKEM1024_EK_LEN, MBC_MLKEM1024_DK_LEN,
         MBC_MLKEM1024_CT_LEN},
    };
    for (size_t i = 0; i < 3; i++) {
        for (size_t iter = 0; iter < mbt_scale(4); iter++) {
            uint8_t seed[64], ek[MBC_MLKEM1024_EK_LEN], dk[MBC_MLKEM1024_DK_LEN],
                ct[MBC_MLKEM1024_CT_LEN], ss[SS];
            mbt_rand_bytes(seed, sizeof(seed));
            assert_int_equal(mbc_mlkem_keygen_seed(sets[i].p, ek, dk, seed, 64), MBC_OK);
            char args[512], hex[129];
            for (int b = 0; b < 64; b++) {
                snprintf(hex + 2 * b, 3, "%02x", seed[b]);
            }
            snprintf(args, sizeof(args), "genpkey -algorithm %s -pkeyopt hexseed:%s -out k.pem",
                     sets[i].name, hex);
            assert_true(osl(args));
            assert_true(osl("pkey -in k.pem -pubout -out pub.pem"));
            assert_true(osl("pkey -in k.pem -pubout -outform DER -out pub.der"));
            assert_true(osl("pkey -in k.pem -outform DER -out priv.der"));
            size_t len;
            uint8_t *b = read_file("pub.der", &len);
            assert_true(len >= sets[i].ek);
            assert_memory_equal(b + len - sets[i].ek, ek, sets[i].ek);
            free(b);
            b = read_file("priv.der", &len);
            assert_non_null(memmem(b, len, dk, sets[i].dk));
            free(b);
            /* ours to theirs, then a changed ciphertext */
            for (int tamper = 0; tamper < 2; tamper++) {
                assert_int_equal(mbc_mlkem_encaps(sets[i].p, ct, ss, ek, sets[i].ek), MBC_OK);
                if (tamper) {
                    ct[mbt_rand() % sets[i].ct] ^= (uint8_t)(1u << (mbt_rand() % 8));
                    assert_int_equal(
                        mbc_mlkem_decaps(sets[i].p, ss, ct, sets[i].ct, dk, sets[i].dk), MBC_OK);
                }
                write_file("ct.bin", ct, sets[i].ct);
                assert_true(osl("pkeyutl -decap -inkey k.pem -in ct.bin -secret ss.bin"));
                b = read_file("ss.bin", &len);
                assert_int_equal(len, SS);
                assert_memory_equal(b, ss, SS);
                free(b);
            }
            /* theirs to ours */
            assert_true(osl("pkeyutl -encap -pubin -inkey pub.pem -out ct2.bin -secret ss2.bin"));
            uint8_t *c2 = read_file("ct2.bin", &len);
            assert_int_equal(len, sets[i].ct);
            assert_int_equal(mbc_mlkem_decaps(sets[i].p, ss, c2, len, dk, sets[i].dk), MBC_OK);
            free(c2);
            b = read_file("ss2.bin", &len);
            assert_memory_equal(b, ss, SS);
            free(b);
        }
    }
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", osl_tmp);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compress),
        cmocka_unit_test(test_poly_avx2),
        WP_TEST(0, "keygen"),
        WP_TEST(1, "decaps_seed"),
        WP_TEST(2, "encaps"),
        WP_TEST(3, "decaps_dk"),
        IMPL_TESTS(test_lanes),
        IMPL_TESTS(test_sample_mixed),
        IMPL_TESTS(test_round_trip),
        IMPL_TESTS(test_mgr),
        IMPL_TESTS(test_openssl35),
    };
    return mbt_run("mlkem", tests);
}
