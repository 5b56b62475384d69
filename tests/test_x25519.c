/*
 * test_x25519.c - X25519 (RFC 7748): Wycheproof's x25519_test.json, the RFC
 * 7748 vectors and iterated test, a differential test against OpenSSL
 * (EVP_PKEY X25519), the field arithmetic and the kernels of the backends
 * against each other and BIGNUM, lane semantics, errors, and the manager's
 * X25519 classes. Each test runs once per implementation ("c", "adx",
 * "ifma"; X25519_IMPL_TESTS).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>

#include "internal.h"
#include "ossl_x25519.h"
#include "sched/sched.h"
#include "test_hooks.h"
#include "test_util.h"
#include "x25519/x25519_kern.h"

#define LEN MBC_X25519_LEN
#define OUT_MAX 48 /* output buffers: 32 bytes and a canary tail */
#define CANARY 0xA5

/* X25519_IMPL_TESTS(fn): the cmocka entries of fn on every X25519
 * implementation: "c", "ifma" (MBT_IMPL_TESTS) and "adx" (the scalar tier,
 * which runs wherever the CPU has BMI2 and ADX but not the IFMA path, so it
 * is selected by removing the AVX-512 features). */
#define X25519_IMPL_TESTS(fn)                                                                      \
    MBT_IMPL_TESTS(fn),                                                                            \
    {                                                                                              \
#fn "/adx", fn, NULL, NULL, (void *)"adx"                                                  \
    }

static const char *begin(void **state)
{
    mbc_test_hooks.random_fail = 0;
    const char *impl = mbt_use_alg_impl(MBC_ALG_X25519, (const char *)*state);
    assert_string_equal(mbc_impl_name(MBC_ALG_X25519), impl);
    return impl;
}

static int all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] != v) {
            return 0;
        }
    }
    return 1;
}

static void hex32(uint8_t out[LEN], const char *s)
{
    size_t len;
    uint8_t *b = mbt_hex(s, &len);
    assert_int_equal(len, LEN);
    memcpy(out, b, LEN);
    free(b);
}

static const char *hexstr(const uint8_t *b)
{
    static char s[2 * LEN + 1];
    for (int i = 0; i < LEN; i++) {
        snprintf(s + 2 * i, 3, "%02x", b[i]);
    }
    return s;
}

/* ossl_ref: OpenSSL's X25519(k, u), its verdict (0 OK, 1 low order) asserted
 * to be one of those. */
static int ossl_ref(uint8_t out[LEN], const uint8_t k[LEN], const uint8_t u[LEN])
{
    const int rc = mbt_ossl_x25519(out, k, u);
    assert_true(rc == 0 || rc == 1);
    return rc;
}

/* clamp: RFC 7748's decodeScalar25519 on a copy. */
static void clamp(uint8_t out[LEN], const uint8_t k[LEN])
{
    memcpy(out, k, LEN);
    out[0] &= 248;
    out[31] = (uint8_t)((out[31] & 127) | 64);
}

/* ------------------------------------------------------------------------ */
/* 1. Wycheproof                                                             */
/* ------------------------------------------------------------------------ */

struct wp_rec {
    unsigned tc;
    uint8_t priv[LEN], pub[LEN], shared[LEN];
    int zero; /* the expected shared secret is all zeros: MBC_LANE_LOW_ORDER */
};

static struct wp_rec *wp_load(size_t *num)
{
    json_t *root = mbt_load_json("x25519_test.json");
    size_t n = 0, cap = 0, low = 0, noncanon = 0, twist = 0;
    struct wp_rec *recs = NULL;
    json_t *groups = json_object_get(root, "testGroups"), *g;
    size_t gi;
    json_array_foreach(groups, gi, g)
    {
        assert_string_equal(json_string_value(json_object_get(g, "curve")), "curve25519");
        json_t *t;
        size_t ti;
        json_array_foreach(json_object_get(g, "tests"), ti, t)
        {
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                recs = realloc(recs, cap * sizeof(*recs));
                assert_non_null(recs);
            }
            struct wp_rec *r = &recs[n++];
            r->tc = (unsigned)json_integer_value(json_object_get(t, "tcId"));
            hex32(r->priv, json_string_value(json_object_get(t, "private")));
            hex32(r->pub, json_string_value(json_object_get(t, "public")));
            hex32(r->shared, json_string_value(json_object_get(t, "shared")));
            const char *result = json_string_value(json_object_get(t, "result"));
            int zero_flag = 0;
            json_t *f;
            size_t fi;
            json_array_foreach(json_object_get(t, "flags"), fi, f)
            {
                const char *name = json_string_value(f);
                zero_flag |= strcmp(name, "ZeroSharedSecret") == 0;
                noncanon += strcmp(name, "NonCanonicalPublic") == 0;
                twist += strcmp(name, "Twist") == 0;
            }
            r->zero = all_bytes(r->shared, LEN, 0);
            /* The file has no "invalid" records: "valid" ones must give
             * their shared secret; "acceptable" ones too, except the all-zero
             * secrets (flag ZeroSharedSecret), which RFC 7748 section 6.1
             * lets (and this library makes) fail. */
            if (strcmp(result, "valid") != 0 && strcmp(result, "acceptable") != 0) {
                fail_msg("tcId %u: unexpected result '%s'", r->tc, result);
            }
            if (r->zero != zero_flag) {
                fail_msg("tcId %u: all-zero shared secret and ZeroSharedSecret disagree", r->tc);
            }
            if (r->zero && strcmp(result, "valid") == 0) {
                fail_msg("tcId %u: a valid record with a zero shared secret", r->tc);
            }
            low += r->zero;
        }
    }
    assert_int_equal(n, json_integer_value(json_object_get(root, "numberOfTests")));
    print_message("wycheproof x25519: %zu records, %zu with a zero shared secret, %zu "
                  "non-canonical u, %zu on the twist\n",
                  n, low, noncanon, twist);
    json_decref(root);
    *num = n;
    return recs;
}

/* wp_expect: lane code and output of record r checked. */
static void wp_expect(const struct wp_rec *r, unsigned code, const uint8_t *out, const char *how)
{
    if (r->zero) {
        if (code != MBC_LANE_LOW_ORDER || !all_bytes(out, LEN, 0)) {
            fail_msg("tcId %u (%s): %s, want MBC_LANE_LOW_ORDER with a zeroed output", r->tc, how,
                     mbc_lane_code_str(code));
        }
    } else if (code != MBC_LANE_OK || memcmp(out, r->shared, LEN) != 0) {
        fail_msg("tcId %u (%s): %s, output %s", r->tc, how, mbc_lane_code_str(code), hexstr(out));
    }
}

/* Every record through the single call, then in 8-lane calls at every lane
 * position (rotation rot puts record b*8+i in lane (i + rot) % 8). */
static void test_wycheproof(void **state)
{
    begin(state);
    size_t n;
    struct wp_rec *recs = wp_load(&n);
    uint8_t out[LEN];
    for (size_t i = 0; i < n; i++) {
        memset(out, CANARY, LEN);
        const mbc_err err = mbc_x25519(out, recs[i].priv, recs[i].pub);
        wp_expect(&recs[i],
                  err == MBC_OK              ? MBC_LANE_OK
                  : err == MBC_ERR_LOW_ORDER ? MBC_LANE_LOW_ORDER
                                             : MBC_LANE_FAULT,
                  out, "single call");
    }
    uint8_t buf[MBC_LANES][LEN];
    for (unsigned rot = 0; rot < MBC_LANES; rot++) {
        for (size_t b = 0; b < n; b += MBC_LANES) {
            uint8_t *o[MBC_LANES];
            const uint8_t *k[MBC_LANES], *u[MBC_LANES];
            const struct wp_rec *at[MBC_LANES] = {NULL};
            unsigned mask = 0;
            for (unsigned i = 0; i < MBC_LANES; i++) {
                const unsigned l = (i + rot) % MBC_LANES;
                o[l] = buf[l];
                memset(buf[l], CANARY, LEN);
                if (b + i < n) {
                    at[l] = &recs[b + i];
                    k[l] = at[l]->priv;
                    u[l] = at[l]->pub;
                    mask |= 1u << l;
                } else {
                    k[l] = u[l] = NULL;
                }
            }
            const mbc_status st = mbc_x25519_mb8(o, k, u, mask);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if (at[l] != NULL) {
                    wp_expect(at[l], mbc_lane_code(st, l), buf[l], "8-lane call");
                } else {
                    assert_int_equal(mbc_lane_code(st, l), MBC_LANE_EMPTY);
                    assert_true(all_bytes(buf[l], LEN, CANARY));
                }
            }
        }
    }
    free(recs);
}

/* ------------------------------------------------------------------------ */
/* 2. RFC 7748                                                               */
/* ------------------------------------------------------------------------ */

static void test_rfc7748_vectors(void **state)
{
    begin(state);
    /* section 5.2 */
    static const char *const v[2][3] = {
        {"a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
         "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
         "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"},
        {"4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
         "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
         "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"},
    };
    uint8_t k[LEN], u[LEN], want[LEN], out[LEN], ref[LEN];
    for (int i = 0; i < 2; i++) {
        hex32(k, v[i][0]);
        hex32(u, v[i][1]);
        hex32(want, v[i][2]);
        assert_int_equal(ossl_ref(ref, k, u), 0);
        assert_memory_equal(ref, want, LEN);
        assert_int_equal(mbc_x25519(out, k, u), MBC_OK);
        assert_memory_equal(out, want, LEN);
    }
    /* section 6.1: both public keys and the shared secret, both ways */
    uint8_t ka[LEN], kb[LEN], pa[LEN], pb[LEN], sa[LEN], sb[LEN];
    hex32(ka, "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
    hex32(kb, "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
    assert_int_equal(mbc_x25519_public_key(pa, ka), MBC_OK);
    assert_int_equal(mbc_x25519_public_key(pb, kb), MBC_OK);
    hex32(want, "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
    assert_memory_equal(pa, want, LEN);
    hex32(want, "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
    assert_memory_equal(pb, want, LEN);
    assert_int_equal(mbc_x25519(sa, ka, pb), MBC_OK);
    assert_int_equal(mbc_x25519(sb, kb, pa), MBC_OK);
    hex32(want, "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
    assert_memory_equal(sa, want, LEN);
    assert_memory_equal(sb, want, LEN);
}

/* iterate: RFC 7748 section 5.2's loop: k = u = 9, then n times
 * (k, u) = (X25519(k, u), k). */
static void iterate(unsigned long n, const char *want_hex)
{
    uint8_t k[LEN] = {9}, u[LEN] = {9}, r[LEN], want[LEN];
    for (unsigned long i = 0; i < n; i++) {
        assert_int_equal(mbc_x25519(r, k, u), MBC_OK);
        memcpy(u, k, LEN);
        memcpy(k, r, LEN);
    }
    hex32(want, want_hex);
    if (memcmp(k, want, LEN) != 0) {
        fail_msg("after %lu iterations: %s", n, hexstr(k));
    }
    print_message("iterated X25519: %lu iterations OK\n", n);
}

static void test_rfc7748_iterated(void **state)
{
    begin(state);
    iterate(1, "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079");
    iterate(1000, "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51");
    if (mbt_soak()) {
        iterate(1000000, "7c3911e0ab2586fd864497297e575e6f3bc601c0883c30df5f4dd2d24f665424");
    } else {
        print_message("(1,000,000 iterations with MBC_TEST_SOAK=1)\n");
    }
}

/* ------------------------------------------------------------------------ */
/* 3. Against OpenSSL                                                        */
/* ------------------------------------------------------------------------ */

/* rand_u: a random peer u of kind kind % 5: any 32 bytes; top bit set; in
 * [p, 2^255) (non-canonical); p + small with the top bit set; small. */
static void rand_u(uint8_t u[LEN], unsigned kind)
{
    mbt_rand_bytes(u, LEN);
    switch (kind % 5) {
    case 1:
        u[31] |= 0x80;
        break;
    case 2:
    case 3:
        memset(u + 1, 0xFF, LEN - 1);
        u[0] = (uint8_t)(0xED + mbt_rand() % 19); /* p = 2^255 - 19 ... 2^255 - 1 */
        u[31] = kind % 5 == 2 ? 0x7F : 0xFF;
        break;
    case 4:
        memset(u + 1, 0, LEN - 1);
        break;
    default:
        break;
    }
}

static void test_differential(void **state)
{
    begin(state);
    const size_t batches = mbt_scale(500);
    uint8_t k[MBC_LANES][LEN], u[MBC_LANES][LEN], ref[MBC_LANES][LEN], out[MBC_LANES][LEN];
    uint8_t kcopy[LEN];
    size_t low = 0;
    for (size_t b = 0; b < batches; b++) {
        uint8_t *o[MBC_LANES];
        const uint8_t *kp[MBC_LANES], *up[MBC_LANES];
        int rc[MBC_LANES];
        for (unsigned l = 0; l < MBC_LANES; l++) {
            mbt_rand_bytes(k[l], LEN);
            rand_u(u[l], (unsigned)(b * MBC_LANES + l));
            rc[l] = ossl_ref(ref[l], k[l], u[l]);
            low += rc[l] != 0;
            o[l] = out[l];
            kp[l] = k[l];
            up[l] = u[l];
        }
        const mbc_status st = mbc_x25519_mb8(o, kp, up, MBC_LANE_MASK_ALL);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            const unsigned want = rc[l] == 0 ? MBC_LANE_OK : MBC_LANE_LOW_ORDER;
            if (mbc_lane_code(st, l) != want || memcmp(out[l], ref[l], LEN) != 0) {
                fail_msg("batch %zu lane %u: %s, scalar %s", b, l,
                         mbc_lane_code_str(mbc_lane_code(st, l)), hexstr(k[l]));
            }
        }
        /* the single call of lane b % 8, and the public keys of the batch */
        const unsigned l = (unsigned)(b % MBC_LANES);
        memcpy(kcopy, k[l], LEN);
        assert_int_equal(mbc_x25519(out[l], k[l], u[l]), rc[l] == 0 ? MBC_OK : MBC_ERR_LOW_ORDER);
        assert_memory_equal(out[l], ref[l], LEN);
        assert_memory_equal(kcopy, k[l], LEN); /* the caller's scalar is not clamped */
        for (unsigned i = 0; i < MBC_LANES; i++) {
            assert_int_equal(mbt_ossl_x25519_public(ref[i], k[i]), 0);
        }
        assert_int_equal(mbc_x25519_public_key_mb8(o, kp, MBC_LANE_MASK_ALL), 0);
        for (unsigned i = 0; i < MBC_LANES; i++) {
            if (memcmp(out[i], ref[i], LEN) != 0) {
                fail_msg("public key, batch %zu lane %u: scalar %s", b, i, hexstr(k[i]));
            }
        }
        assert_int_equal(mbc_x25519_public_key(out[l], k[l]), MBC_OK);
        assert_memory_equal(out[l], ref[l], LEN);
    }
    print_message("%zu derives (%zu low order) and %zu public keys equal OpenSSL's\n",
                  batches * MBC_LANES, low, batches * MBC_LANES);
}

/* Key pairs: the private keys are clamped random bytes, the public keys
 * OpenSSL's, and no two private keys of a run are equal. */
static void test_keygen(void **state)
{
    begin(state);
    const size_t batches = mbt_scale(64);
    uint8_t priv[MBC_LANES][LEN], pub[MBC_LANES][LEN], ref[LEN], first[LEN], c[LEN];
    uint8_t *sp[MBC_LANES], *pp[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        sp[l] = priv[l];
        pp[l] = pub[l];
    }
    for (size_t b = 0; b < batches; b++) {
        assert_int_equal(mbc_x25519_keygen_mb8(sp, pp, MBC_LANE_MASK_ALL), 0);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            clamp(c, priv[l]);
            assert_memory_equal(c, priv[l], LEN);
            assert_int_equal(mbt_ossl_x25519_public(ref, priv[l]), 0);
            assert_memory_equal(ref, pub[l], LEN);
            if (b == 0 && l == 0) {
                memcpy(first, priv[l], LEN);
            } else {
                assert_memory_not_equal(first, priv[l], LEN);
            }
        }
        assert_int_equal(mbc_x25519_keygen(priv[0], pub[0]), MBC_OK);
        assert_int_equal(mbt_ossl_x25519_public(ref, priv[0]), 0);
        assert_memory_equal(ref, pub[0], LEN);
    }
}

/* ------------------------------------------------------------------------ */
/* 4. Field arithmetic and kernels, backend against backend and BIGNUM       */
/* ------------------------------------------------------------------------ */

typedef void fe_op_fn(enum x25519_fe_op op, mb52_row *r, const mb52_row *a, const mb52_row *b);

static fe_op_fn *fe_op_of(const char *impl)
{
#if MBC_HAVE_IFMA
    if (strcmp(impl, "ifma") == 0) {
        return mbc_x25519_fe_test_ifma;
    }
#endif
    (void)impl;
    return mbc_x25519_fe_test_c;
}

static const char *const fe_op_names[X25519_FE_NUM_OPS] = {
    "mul", "sqr", "mul_a24", "add", "sub", "carry", "canon", "inv", "mul_u", "sqr_u", "mul_a24_u",
};

#define M52 ((1ull << 52) - 1)

/* set_lane: digits d of lane l of the 5 rows r. */
static void set_lane(mb52_row *r, unsigned l, const uint64_t d[5])
{
    for (unsigned j = 0; j < 5; j++) {
        r[j][l] = d[j];
    }
}

static BIGNUM *lane_bn(const mb52_row *r, unsigned l)
{
    BIGNUM *x = BN_new(), *t = BN_new();
    BN_zero(x);
    for (unsigned j = 5; j-- > 0;) {
        BN_lshift(x, x, 52);
        BN_set_word(t, r[j][l]);
        BN_add(x, x, t);
    }
    BN_free(t);
    return x;
}

/*
 * fe_edge: operand i (lane-wise a mix) of the domain dom: 'L' (digits below
 * 2^52), 'F' (digits 0..3 below 2^52, digit 4 at most 2^47 + 2^11), 'U' (digits
 * below 2^56, the uncarried products) or 'W' (digits below 2^63, for the
 * carry): 0, 1, p - 1, p, p + 1, 2^255 - 1, the largest value of the domain
 * (all-ones digits for L), 2p, then random digits.
 */
static void fe_edge(uint64_t d[5], unsigned i, char dom)
{
    static const uint64_t p[5] = {M52 - 18, M52, M52, M52, (1ull << 47) - 1};
    const uint64_t top = dom == 'L'   ? M52
                         : dom == 'F' ? (1ull << 47) + (1ull << 11)
                         : dom == 'U' ? (1ull << 56) - 1
                                      : (1ull << 63) - 1;
    const int wide = dom == 'U' || dom == 'W';
    memset(d, 0, 5 * sizeof(*d));
    switch (i) {
    case 0:
        break;
    case 1:
        d[0] = 1;
        break;
    case 2:
    case 3:
    case 4:
        memcpy(d, p, sizeof(p));
        d[0] = d[0] + i - 3; /* p - 1, p, p + 1 */
        break;
    case 5:
        for (int j = 0; j < 4; j++) {
            d[j] = M52;
        }
        d[4] = (1ull << 47) - 1;
        break;
    case 6:
        for (int j = 0; j < 4; j++) {
            d[j] = wide ? top : M52;
        }
        d[4] = top;
        break;
    case 7:
        d[0] = M52 - 37; /* 2p = 2^256 - 38 */
        d[1] = d[2] = d[3] = M52;
        d[4] = (dom == 'F' ? 1ull << 47 : (1ull << 48) - 1);
        if (dom == 'F') {
            d[0] = 0; /* 2^255 + 0: the F form of 38 more than p */
        }
        break;
    default:
        for (int j = 0; j < 5; j++) {
            d[j] = mbt_rand() & (wide ? top : M52);
        }
        if (dom == 'F') {
            d[4] &= (1ull << 47) - 1;
            if (mbt_rand() % 8 == 0) {
                d[4] = top - mbt_rand() % 4096; /* above 2^47 - 2^11 */
            }
        }
        break;
    }
}

/* bn_op: want = op(x, y) mod p with BIGNUM (CARRY and CANON: x mod p;
 * INV: 0 for x = 0 mod p). */
static void bn_op(enum x25519_fe_op op, BIGNUM *want, const BIGNUM *x, const BIGNUM *y,
                  const BIGNUM *p, BN_CTX *ctx)
{
    BIGNUM *t = BN_new();
    switch (op) {
    case X25519_FE_MUL:
    case X25519_FE_MUL_U:
        BN_mod_mul(want, x, y, p, ctx);
        break;
    case X25519_FE_SQR:
    case X25519_FE_SQR_U:
        BN_mod_sqr(want, x, p, ctx);
        break;
    case X25519_FE_MUL_A24:
    case X25519_FE_MUL_A24_U:
        BN_set_word(t, 121665);
        BN_mod_mul(want, x, t, p, ctx);
        break;
    case X25519_FE_ADD:
        BN_mod_add(want, x, y, p, ctx);
        break;
    case X25519_FE_SUB:
        BN_mod_sub(want, x, y, p, ctx);
        break;
    case X25519_FE_CARRY:
    case X25519_FE_CANON:
        BN_nnmod(want, x, p, ctx);
        break;
    default:
        BN_nnmod(t, x, p, ctx);
        if (BN_is_zero(t)) {
            BN_zero(want);
        } else {
            assert_non_null(BN_mod_inverse(want, t, p, ctx));
        }
        break;
    }
    BN_free(t);
}

/* fe_check: lane l of r = op(a, b) mod p, with r in F (canonical for CANON;
 * in U, digits below 2^56, for the uncarried forms). */
static void fe_check(enum x25519_fe_op op, const mb52_row *r, const mb52_row *a, const mb52_row *b,
                     unsigned l, BN_CTX *ctx)
{
    BIGNUM *p = BN_new(), *x = lane_bn(a, l), *y = lane_bn(b, l), *got = lane_bn(r, l);
    BIGNUM *want = BN_new(), *t = BN_new();
    BN_set_bit(p, 255);
    BN_sub_word(p, 19);
    bn_op(op, want, x, y, p, ctx);
    BN_nnmod(t, got, p, ctx);
    if (BN_cmp(t, want) != 0) {
        char *ha = BN_bn2hex(x), *hb = BN_bn2hex(y), *hg = BN_bn2hex(t), *hw = BN_bn2hex(want);
        fail_msg("fe %s lane %u: wrong value: a %s b %s got %s want %s", fe_op_names[op], l, ha, hb,
                 hg, hw);
    }
    if (op == X25519_FE_MUL_U || op == X25519_FE_SQR_U || op == X25519_FE_MUL_A24_U) {
        for (unsigned j = 0; j < 5; j++) {
            assert_true(r[j][l] < (1ull << 56));
        }
    } else {
        for (unsigned j = 0; j < 4; j++) {
            assert_true(r[j][l] <= M52);
        }
        assert_true(r[4][l] <= (1ull << 47) + (1ull << 11));
    }
    if (op == X25519_FE_CANON) {
        assert_true(BN_cmp(got, p) < 0);
    }
    BN_free(p);
    BN_free(x);
    BN_free(y);
    BN_free(got);
    BN_free(want);
    BN_free(t);
}

#if MBC_HAVE_ADX
/*
 * The scalar field of the "adx" kernels (src/x25519/fe25519_x64.h: 4 limbs,
 * any value below 2^256). fe64_edge: operand i: 0, 1, p - 1, p, p + 1,
 * 2^255 - 1, 2^255, 2p - 1, 2p, 2^256 - 20, 2^256 - 2, 2^256 - 1, then
 * random limbs (every fourth operand with all-ones limbs mixed in).
 */
#define FE64_EDGES 12
static void fe64_edge(uint64_t v[4], unsigned i)
{
    static const uint64_t edges[FE64_EDGES][4] = {
        {0, 0, 0, 0},
        {1, 0, 0, 0},
        {~0ull - 19, ~0ull, ~0ull, ~0ull >> 1},
        {~0ull - 18, ~0ull, ~0ull, ~0ull >> 1},
        {~0ull - 17, ~0ull, ~0ull, ~0ull >> 1},
        {~0ull, ~0ull, ~0ull, ~0ull >> 1},
        {0, 0, 0, 1ull << 63},
        {~0ull - 38, ~0ull, ~0ull, ~0ull},
        {~0ull - 37, ~0ull, ~0ull, ~0ull},
        {~0ull - 19, ~0ull, ~0ull, ~0ull},
        {~0ull - 1, ~0ull, ~0ull, ~0ull},
        {~0ull, ~0ull, ~0ull, ~0ull},
    };
    if (i < FE64_EDGES) {
        memcpy(v, edges[i], sizeof(edges[i]));
        return;
    }
    for (int j = 0; j < 4; j++) {
        v[j] = (i % 4 == 0 && mbt_rand() % 2) ? ~0ull : mbt_rand();
    }
}

static BIGNUM *limbs_bn(const uint64_t v[4])
{
    BIGNUM *x = BN_new(), *t = BN_new();
    BN_zero(x);
    for (int j = 4; j-- > 0;) {
        BN_lshift(x, x, 64);
        BN_set_word(t, v[j]);
        BN_add(x, x, t);
    }
    BN_free(t);
    return x;
}

#endif

/* field_adx: every scalar field operation, assembly (the two-product form
 * too) and C forms, against each other and BIGNUM on the edges paired and on
 * random operands. */
static void field_adx(BN_CTX *ctx)
{
#if MBC_HAVE_ADX
    static const enum x25519_fe_op ops[] = {X25519_FE_MUL, X25519_FE_SQR, X25519_FE_MUL_A24,
                                            X25519_FE_ADD, X25519_FE_SUB, X25519_FE_CANON,
                                            X25519_FE_INV};
    BIGNUM *p = BN_new(), *want = BN_new(), *t = BN_new();
    BN_set_bit(p, 255);
    BN_sub_word(p, 19);
    for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        const enum x25519_fe_op op = ops[o];
        const unsigned n = op == X25519_FE_INV ? 4000 : FE64_EDGES * FE64_EDGES + 2000;
        for (unsigned it = 0; it < n; it++) {
            uint64_t a[4], b[4], r[4], rc[4];
            const unsigned ia = it < FE64_EDGES * FE64_EDGES ? it / FE64_EDGES : FE64_EDGES + it;
            const unsigned ib = it < FE64_EDGES * FE64_EDGES ? it % FE64_EDGES : FE64_EDGES + it;
            fe64_edge(a, op == X25519_FE_INV ? (it < FE64_EDGES ? it : FE64_EDGES + it) : ia);
            fe64_edge(b, ib);
            mbc_x25519_fe64_test(op, 0, r, a, b);
            mbc_x25519_fe64_test(op, 1, rc, a, b);
            assert_memory_equal(r, rc, sizeof(r));
            if (op == X25519_FE_MUL) { /* the two-product form */
                for (int second = 0; second < 2; second++) {
                    uint64_t r2[4];
                    mbc_x25519_fe64_test2(op, second, r2, a, b);
                    assert_memory_equal(r2, rc, sizeof(r2));
                }
            }
            BIGNUM *x = limbs_bn(a), *y = limbs_bn(b), *got = limbs_bn(r);
            bn_op(op, want, x, y, p, ctx);
            if (op == X25519_FE_MUL_A24) { /* the scalar form adds b */
                BN_mod_add(want, want, y, p, ctx);
            }
            if (op == X25519_FE_CANON) {
                assert_true(BN_cmp(got, p) < 0);
            }
            BN_nnmod(t, got, p, ctx);
            if (BN_cmp(t, want) != 0) {
                fail_msg("fe64 %s: a %016llx..%016llx b %016llx..%016llx: wrong value",
                         fe_op_names[op], (unsigned long long)a[3], (unsigned long long)a[0],
                         (unsigned long long)b[3], (unsigned long long)b[0]);
            }
            BN_free(x);
            BN_free(y);
            BN_free(got);
        }
    }
    BN_free(p);
    BN_free(want);
    BN_free(t);
#else
    (void)ctx;
    fail_msg("adx selected in a build without the scalar kernels");
#endif
}

static void test_field(void **state)
{
    const char *impl = begin(state);
    if (strcmp(impl, "adx") == 0) {
        BN_CTX *bctx = BN_CTX_new();
        field_adx(bctx);
        BN_CTX_free(bctx);
        print_message("adx: every scalar field operation on edge and random operands matches "
                      "its C form and BIGNUM\n");
        return;
    }
    fe_op_fn *op_fn = fe_op_of(impl);
    BN_CTX *ctx = BN_CTX_new();
    _Alignas(64) mb52_row a[5], b[5], r[5], rc[5];
    uint64_t d[5];
    for (unsigned op = 0; op < X25519_FE_NUM_OPS; op++) {
        const int addsub = op == X25519_FE_ADD || op == X25519_FE_SUB;
        const int small = op == X25519_FE_MUL_A24 || op == X25519_FE_MUL_A24_U;
        const char dom_a = op == X25519_FE_CARRY ? 'W' : addsub ? 'U' : small ? 'L' : 'F';
        const char dom_b = addsub ? 'U' : 'F';
        const unsigned iters = op == X25519_FE_INV ? 16 : 96;
        for (unsigned it = 0; it < iters; it++) {
            for (unsigned l = 0; l < MBC_LANES; l++) {
                /* the first rounds pair every edge of a with every one of b */
                const unsigned ia = it < 8 ? it : 8 + l, ib = it < 8 ? l : 8 + it;
                fe_edge(d, ia, dom_a);
                set_lane(a, l, d);
                fe_edge(d, ib, dom_b);
                set_lane(b, l, d);
            }
            op_fn((enum x25519_fe_op)op, r, a, b);
            mbc_x25519_fe_test_c((enum x25519_fe_op)op, rc, a, b);
            assert_memory_equal(r, rc, sizeof(r));
            for (unsigned l = 0; l < MBC_LANES; l++) {
                fe_check((enum x25519_fe_op)op, r, a, b, l, ctx);
            }
        }
    }
    print_message("%s: every field operation on edge and random operands %s\n", impl,
                  strcmp(impl, "c") == 0 ? "matches BIGNUM"
                                         : "gives the digits of c, which match BIGNUM");
    BN_CTX_free(ctx);
}

/* le_lane: the 32-byte little-endian value x into lane l of 5 rows. */
static void le_lane(mb52_row *r, unsigned l, const uint8_t x[LEN])
{
    uint64_t d[5] = {0};
    for (unsigned bit = 0; bit < 256; bit++) {
        d[bit / 52] |= (uint64_t)((x[bit / 8] >> (bit % 8)) & 1u) << (bit % 52);
    }
    set_lane(r, l, d);
}

static void lane_le(uint8_t x[LEN], const mb52_row *r, unsigned l)
{
    memset(x, 0, LEN);
    for (unsigned bit = 0; bit < 256; bit++) {
        x[bit / 8] |= (uint8_t)(((r[bit / 52][l] >> (bit % 52)) & 1u) << (bit % 8));
    }
}

typedef void kern_fn(struct x25519_args *a);

/* run_kern: fn on the 8 lanes of (k, u); results into out. */
static void run_kern(kern_fn *fn, uint8_t out[MBC_LANES][LEN], const uint8_t k[MBC_LANES][LEN],
                     const uint8_t u[MBC_LANES][LEN], unsigned *nonzero)
{
    _Alignas(64) mb52_row kr[5], ur[5], r[5];
    memset(r, 0, sizeof(r)); /* lanes a narrow kernel leaves */
    for (unsigned l = 0; l < MBC_LANES; l++) {
        le_lane(kr, l, k[l]);
        le_lane(ur, l, u[l]);
    }
    struct x25519_args a = {kr, ur, r, 0};
    fn(&a);
    for (unsigned l = 0; l < MBC_LANES; l++) {
        lane_le(out[l], r, l);
    }
    *nonzero = a.nonzero;
}

/* run_kern_c1: the 1-lane kernel fn on each lane in turn (lane 0). */
static void run_kern_c1(kern_fn *fn, uint8_t out[MBC_LANES][LEN], const uint8_t k[MBC_LANES][LEN],
                        const uint8_t u[MBC_LANES][LEN], unsigned *nonzero)
{
    uint8_t k1[MBC_LANES][LEN] = {{0}}, u1[MBC_LANES][LEN] = {{0}}, o1[MBC_LANES][LEN];
    *nonzero = 0;
    for (unsigned l = 0; l < MBC_LANES; l++) {
        unsigned nz;
        memcpy(k1[0], k[l], LEN);
        memcpy(u1[0], u[l], LEN);
        run_kern(fn, o1, k1, u1, &nz);
        memcpy(out[l], o1[0], LEN);
        *nonzero |= (nz & 1u) << l;
    }
}

typedef void run_fn(kern_fn *fn, uint8_t out[MBC_LANES][LEN], const uint8_t k[MBC_LANES][LEN],
                    const uint8_t u[MBC_LANES][LEN], unsigned *nonzero);

/* check_ifma4: the ymm ladder (or fixed-base) kernel gives want and
 * want_nz on lanes 0..3. */
static void check_ifma4(int ladder, const uint8_t want[MBC_LANES][LEN],
                        const uint8_t k[MBC_LANES][LEN], const uint8_t u[MBC_LANES][LEN],
                        unsigned want_nz)
{
#if MBC_HAVE_IFMA
    uint8_t o[MBC_LANES][LEN];
    unsigned nz;
    run_kern(ladder ? mbc_x25519_ladder_ifma4 : mbc_x25519_base_ifma4, o, k, u, &nz);
    assert_memory_equal(o, want, 4 * LEN);
    assert_int_equal(nz, want_nz & 0x0Fu);
#else
    (void)ladder, (void)want, (void)k, (void)u, (void)want_nz;
#endif
}

/*
 * The kernels below the glue, on clamped and unclamped scalars:
 *  - the 8-lane portable kernels (which the glue leaves to the 1-lane one on
 *    this path) equal the 1-lane ones and OpenSSL; on adx, the scalar
 *    kernels (one lane at a time) equal the 1-lane ones; on ifma, the IFMA
 *    kernels equal the portable ones digit for digit, and so do the ymm
 *    ones (_ifma4, the few-request path) on lanes 0..3;
 *  - the fixed-base kernel equals the ladder on u = 9 for the scalars
 *    j 16^(2i) (i < 32, j < 16), which use every table entry as it is and
 *    negated, and for 0 (u = 0 both ways).
 */
static void test_kernels(void **state)
{
    const char *impl = begin(state);
    const int ifma = strcmp(impl, "ifma") == 0;
    kern_fn *ladder = mbc_x25519_ladder_c, *base = mbc_x25519_base_c;
#if MBC_HAVE_IFMA
    if (ifma) {
        ladder = mbc_x25519_ladder_ifma;
        base = mbc_x25519_base_ifma;
    }
#endif
#if MBC_HAVE_ADX
    if (strcmp(impl, "adx") == 0) {
        ladder = mbc_x25519_ladder_adx;
        base = mbc_x25519_base_adx;
    }
#endif
    /* the scalar kernels compute slot 0: one lane at a time, as _c1 */
    run_fn *run = strcmp(impl, "adx") == 0 ? run_kern_c1 : run_kern;
    uint8_t k[MBC_LANES][LEN], u[MBC_LANES][LEN], o[MBC_LANES][LEN], oc[MBC_LANES][LEN];
    uint8_t nine[MBC_LANES][LEN] = {{0}};
    unsigned nz, nzc;
    for (unsigned l = 0; l < MBC_LANES; l++) {
        nine[l][0] = 9;
    }
    const size_t rounds = mbt_scale(32);
    for (size_t it = 0; it < rounds; it++) {
        for (unsigned l = 0; l < MBC_LANES; l++) {
            mbt_rand_bytes(k[l], LEN);
            clamp(k[l], k[l]);
            rand_u(u[l], (unsigned)(it + l));
            u[l][31] &= 0x7F; /* the glue's job */
        }
        run(ladder, o, k, u, &nz);
        if (ifma) {
            run_kern(mbc_x25519_ladder_c, oc, k, u, &nzc);
            check_ifma4(1, oc, k, u, nzc);
        } else {
            run_kern_c1(mbc_x25519_ladder_c1, oc, k, u, &nzc);
        }
        assert_memory_equal(o, oc, sizeof(o));
        assert_int_equal(nz, nzc);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            uint8_t ref[LEN];
            assert_int_equal(ossl_ref(ref, k[l], u[l]) == 0, (nz >> l) & 1u);
            assert_memory_equal(ref, o[l], LEN);
        }
        run(base, o, k, nine, &nz);
        if (ifma) {
            run_kern(mbc_x25519_base_c, oc, k, nine, &nzc);
            check_ifma4(0, oc, k, nine, nzc);
        } else {
            run_kern_c1(mbc_x25519_base_c1, oc, k, nine, &nzc);
        }
        assert_memory_equal(o, oc, sizeof(o));
        assert_int_equal(nz, MBC_LANE_MASK_ALL);
        run(ladder, oc, k, nine, &nzc);
        assert_memory_equal(o, oc, sizeof(o));
    }
    /* every table entry: s = j 16^(2i), plus s = 0 */
    unsigned count = 0;
    for (unsigned s = 0; s <= 32 * 15; s += MBC_LANES) {
        memset(k, 0, sizeof(k));
        for (unsigned l = 0; l < MBC_LANES; l++) {
            const unsigned idx = s + l; /* 0: the scalar 0 */
            if (idx > 0 && idx <= 32 * 15) {
                const unsigned i = (idx - 1) / 15, j = (idx - 1) % 15 + 1;
                k[l][i] = (uint8_t)j; /* byte i holds digit 2i */
                count++;
            }
        }
        run(base, o, k, nine, &nz);
        run(ladder, oc, k, nine, &nzc);
        assert_memory_equal(o, oc, sizeof(o));
        assert_int_equal(nz, nzc);
        if (s == 0) {
            assert_true(all_bytes(o[0], LEN, 0));
            assert_int_equal(nz & 1u, 0);
        }
    }
    print_message("%s: ladder and fixed-base kernels agree (%zu random batches, %u table "
                  "scalars)\n",
                  impl, rounds, count);
}

/* ------------------------------------------------------------------------ */
/* 5. Lanes                                                                  */
/* ------------------------------------------------------------------------ */

#define POOL 16
#define NLOW 4

/* The request pool: random scalars, peers of every kind of rand_u, and in
 * the last NLOW entries low-order peers (u = 0, 1, and the order-8 points). */
static struct pool {
    int ready;
    uint8_t k[POOL][LEN], u[POOL][LEN];
    uint8_t shared[POOL][LEN], pub[POOL][LEN];
    unsigned code[POOL];
} g_pool;

static const struct pool *pool(void)
{
    static const char *const low[NLOW] = {
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
        "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
    };
    if (g_pool.ready) {
        return &g_pool;
    }
    for (unsigned i = 0; i < POOL; i++) {
        mbt_rand_bytes(g_pool.k[i], LEN);
        if (i >= POOL - NLOW) {
            hex32(g_pool.u[i], low[i - (POOL - NLOW)]);
        } else {
            rand_u(g_pool.u[i], i);
        }
        /* random peers may be low order too (u = 0, 1, p, p + 1) */
        const int rc = ossl_ref(g_pool.shared[i], g_pool.k[i], g_pool.u[i]);
        if (i >= POOL - NLOW) {
            assert_int_equal(rc, 1);
        }
        g_pool.code[i] = rc == 0 ? MBC_LANE_OK : MBC_LANE_LOW_ORDER;
        assert_int_equal(mbt_ossl_x25519_public(g_pool.pub[i], g_pool.k[i]), 0);
    }
    g_pool.ready = 1;
    return &g_pool;
}

enum lop { L_DERIVE, L_PUBLIC, L_KEYGEN };
static const char *const lop_names[] = {"x25519_mb8", "public_key_mb8", "keygen_mb8"};

struct batch {
    uint8_t *out[MBC_LANES], *out2[MBC_LANES];
    const uint8_t *k[MBC_LANES], *u[MBC_LANES];
    int req[MBC_LANES]; /* pool entry of an active lane */
    unsigned want[MBC_LANES];
    uint8_t buf[MBC_LANES][OUT_MAX], buf2[MBC_LANES][OUT_MAX];
};

static mbc_status run(enum lop op, const struct batch *b, unsigned mask)
{
    if (op == L_DERIVE) {
        return mbc_x25519_mb8(b->out, b->k, b->u, mask);
    }
    if (op == L_PUBLIC) {
        return mbc_x25519_public_key_mb8(b->out, b->k, mask);
    }
    return mbc_x25519_keygen_mb8(b->out, b->out2, mask);
}

/* set_req: lane l runs pool entry i with fresh canary buffers. */
static void set_req(struct batch *b, enum lop op, unsigned l, int i)
{
    const struct pool *p = pool();
    memset(b->buf[l], CANARY, OUT_MAX);
    memset(b->buf2[l], CANARY, OUT_MAX);
    b->out[l] = b->buf[l];
    b->out2[l] = b->buf2[l];
    b->k[l] = p->k[i];
    b->u[l] = p->u[i];
    b->req[l] = i;
    b->want[l] = op == L_DERIVE ? p->code[i] : MBC_LANE_OK;
}

/*
 * check: every lane has code want[l]; an OK lane holds its result (derive:
 * the pool's shared secret; public key: the pool's public key; keygen: a
 * clamped private key and OpenSSL's public key for it); another active lane
 * zeros where it has a buffer; an EMPTY lane's buffers are untouched; and
 * nothing is written past 32 bytes.
 */
static void check(enum lop op, const struct batch *b, mbc_status st, const char *what)
{
    const struct pool *p = pool();
    for (unsigned l = 0; l < MBC_LANES; l++) {
        const unsigned got = mbc_lane_code(st, l);
        if (got != b->want[l]) {
            fail_msg("%s: lane %u is %s, want %s (status 0x%08x)", what, l, mbc_lane_code_str(got),
                     mbc_lane_code_str(b->want[l]), st);
        }
        for (int w = 0; w < (op == L_KEYGEN ? 2 : 1); w++) {
            const uint8_t *o = w == 0 ? b->out[l] : b->out2[l];
            const uint8_t *own = w == 0 ? b->buf[l] : b->buf2[l];
            if (o != own) {
                continue; /* NULL, or not the test's buffer */
            }
            if (b->want[l] == MBC_LANE_EMPTY) {
                if (!all_bytes(o, OUT_MAX, CANARY)) {
                    fail_msg("%s: empty lane %u was written", what, l);
                }
                continue;
            }
            if (!all_bytes(o + LEN, OUT_MAX - LEN, CANARY)) {
                fail_msg("%s: lane %u written past 32 bytes", what, l);
            }
            if (b->want[l] != MBC_LANE_OK) {
                if (!all_bytes(o, LEN, 0)) {
                    fail_msg("%s: failed lane %u is not zeroed", what, l);
                }
            } else if (op == L_DERIVE) {
                if (memcmp(o, p->shared[b->req[l]], LEN) != 0) {
                    fail_msg("%s: lane %u differs from OpenSSL", what, l);
                }
            } else if (op == L_PUBLIC) {
                if (memcmp(o, p->pub[b->req[l]], LEN) != 0) {
                    fail_msg("%s: lane %u differs from OpenSSL", what, l);
                }
            } else if (w == 1) {
                uint8_t ref[LEN], c[LEN];
                clamp(c, b->out[l]);
                assert_memory_equal(c, b->out[l], LEN);
                assert_int_equal(mbt_ossl_x25519_public(ref, b->out[l]), 0);
                if (memcmp(o, ref, LEN) != 0) {
                    fail_msg("%s: lane %u's public key is not its private key's", what, l);
                }
            }
        }
    }
}

/*
 * Every mask 0..255 for each call, requests drawn from the pool (low-order
 * peers included). Inactive lanes take turns: NULL pointers; real pointers
 * with canary buffers.
 */
static void test_all_masks(void **state)
{
    begin(state);
    struct batch *b = malloc(sizeof(*b));
    assert_non_null(b);
    char what[96];
    for (int op = L_DERIVE; op <= L_KEYGEN; op++) {
        for (unsigned mask = 0; mask <= MBC_LANE_MASK_ALL; mask++) {
            for (unsigned l = 0; l < MBC_LANES; l++) {
                set_req(b, (enum lop)op, l, (int)(mbt_rand() % POOL));
                if (!((mask >> l) & 1u)) {
                    b->want[l] = MBC_LANE_EMPTY;
                    if (mask % 2 == 0) {
                        b->k[l] = b->u[l] = NULL;
                        b->out2[l] = NULL;
                    }
                }
            }
            snprintf(what, sizeof(what), "%s mask 0x%02x", lop_names[op], mask);
            check((enum lop)op, b, run((enum lop)op, b, mask), what);
        }
    }
    free(b);
}

/* One low-order peer (each of the pool's) in each lane among 7 good ones:
 * that lane alone is MBC_LANE_LOW_ORDER, the others byte for byte as in the
 * clean batch. */
static void test_low_order_lane(void **state)
{
    begin(state);
    struct batch *clean = malloc(sizeof(*clean)), *b = malloc(sizeof(*b));
    assert_non_null(clean);
    assert_non_null(b);
    char what[96];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        set_req(clean, L_DERIVE, l, (int)l);
    }
    check(L_DERIVE, clean, run(L_DERIVE, clean, MBC_LANE_MASK_ALL), "clean batch");
    for (unsigned pos = 0; pos < MBC_LANES; pos++) {
        for (int i = POOL - NLOW; i < POOL; i++) {
            for (unsigned l = 0; l < MBC_LANES; l++) {
                set_req(b, L_DERIVE, l, l == pos ? i : (int)l);
            }
            snprintf(what, sizeof(what), "low-order peer %d in lane %u", i, pos);
            check(L_DERIVE, b, run(L_DERIVE, b, MBC_LANE_MASK_ALL), what);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if (l != pos && memcmp(b->buf[l], clean->buf[l], OUT_MAX) != 0) {
                    fail_msg("%s: good lane %u differs from the clean batch", what, l);
                }
            }
        }
    }
    free(b);
    free(clean);
}

/* NULL pointers per lane, NULL arrays, a lane mask above 0xFF, keygen's
 * priv == pub, and a failing random generator. */
static void test_bad_lanes(void **state)
{
    begin(state);
    struct batch *b = malloc(sizeof(*b));
    assert_non_null(b);
    char what[96];
    for (int op = L_DERIVE; op <= L_KEYGEN; op++) {
        for (unsigned pos = 0; pos < MBC_LANES; pos++) {
            for (unsigned which = 0; which < 3; which++) {
                if ((op == L_PUBLIC && which == 2) || (op == L_KEYGEN && which == 1)) {
                    continue; /* no u; keygen's second pointer is out2 (which 2) */
                }
                for (unsigned l = 0; l < MBC_LANES; l++) {
                    set_req(b, (enum lop)op, l, (int)(l % (POOL - NLOW)));
                }
                if (which == 0) {
                    b->out[pos] = NULL;
                } else if (which == 1) {
                    b->k[pos] = NULL;
                } else if (op == L_DERIVE) {
                    b->u[pos] = NULL;
                } else {
                    b->out2[pos] = NULL;
                }
                b->want[pos] = MBC_LANE_NULL_PARAM;
                snprintf(what, sizeof(what), "%s, NULL pointer %u in lane %u", lop_names[op], which,
                         pos);
                check((enum lop)op, b, run((enum lop)op, b, MBC_LANE_MASK_ALL), what);
            }
        }
        /* lane mask above 0xFF: every lane BAD_PARAM, nothing written */
        for (unsigned l = 0; l < MBC_LANES; l++) {
            set_req(b, (enum lop)op, l, (int)l);
        }
        mbc_status st = run((enum lop)op, b, 0x1FF);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            assert_int_equal(mbc_lane_code(st, l), MBC_LANE_BAD_PARAM);
            assert_true(all_bytes(b->buf[l], OUT_MAX, CANARY));
            assert_true(all_bytes(b->buf2[l], OUT_MAX, CANARY));
        }
    }
    /* NULL arrays: every active lane NULL_PARAM */
    uint8_t *o[MBC_LANES];
    const uint8_t *k[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        o[l] = b->buf[l];
        k[l] = pool()->k[l];
    }
    const mbc_status all_null = mbc_status_all(MBC_LANE_NULL_PARAM);
    assert_int_equal(mbc_x25519_mb8(o, k, NULL, MBC_LANE_MASK_ALL), all_null);
    assert_int_equal(mbc_x25519_mb8(o, NULL, k, MBC_LANE_MASK_ALL), all_null);
    assert_int_equal(mbc_x25519_mb8(NULL, k, k, MBC_LANE_MASK_ALL), all_null);
    assert_int_equal(mbc_x25519_public_key_mb8(NULL, k, MBC_LANE_MASK_ALL), all_null);
    assert_int_equal(mbc_x25519_keygen_mb8(o, NULL, MBC_LANE_MASK_ALL), all_null);
    assert_int_equal(mbc_x25519_mb8(o, k, NULL, 0), mbc_status_all(MBC_LANE_EMPTY));

    /* keygen: priv == pub in one lane */
    for (unsigned pos = 0; pos < MBC_LANES; pos += 3) {
        for (unsigned l = 0; l < MBC_LANES; l++) {
            set_req(b, L_KEYGEN, l, 0);
        }
        b->out2[pos] = b->out[pos];
        b->want[pos] = MBC_LANE_BAD_PARAM;
        snprintf(what, sizeof(what), "keygen, priv == pub in lane %u", pos);
        check(L_KEYGEN, b, run(L_KEYGEN, b, MBC_LANE_MASK_ALL), what);
    }
    /* keygen: no randomness from the OS */
    mbc_test_hooks.random_fail = 1;
    for (unsigned l = 0; l < MBC_LANES; l++) {
        set_req(b, L_KEYGEN, l, 0);
        b->want[l] = (0x5Bu >> l) & 1u ? MBC_LANE_UNSUPPORTED : MBC_LANE_EMPTY;
    }
    check(L_KEYGEN, b, run(L_KEYGEN, b, 0x5B), "keygen, random generator failing");
    memset(b->buf[0], CANARY, LEN);
    assert_int_equal(mbc_x25519_keygen(b->buf[0], b->buf2[0]), MBC_ERR_UNSUPPORTED);
    assert_true(all_bytes(b->buf[0], LEN, 0));
    mbc_test_hooks.random_fail = 0;
    free(b);
}

/* The single calls: NULL pointers, low order, aliasing, the caller's scalar
 * left as it is. */
static void test_single_calls(void **state)
{
    begin(state);
    const struct pool *p = pool();
    uint8_t out[LEN], k[LEN], u[LEN];
    assert_int_equal(mbc_x25519(NULL, p->k[0], p->u[0]), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_x25519(out, NULL, p->u[0]), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_x25519(out, p->k[0], NULL), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_x25519_public_key(NULL, p->k[0]), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_x25519_public_key(out, NULL), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_x25519_keygen(NULL, out), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_x25519_keygen(out, NULL), MBC_ERR_NULL_PARAM);
    memset(out, CANARY, LEN);
    assert_int_equal(mbc_x25519_keygen(out, out), MBC_ERR_BAD_PARAM);
    assert_true(all_bytes(out, LEN, 0));
    for (int i = POOL - NLOW; i < POOL; i++) {
        memset(out, CANARY, LEN);
        assert_int_equal(mbc_x25519(out, p->k[i], p->u[i]), MBC_ERR_LOW_ORDER);
        assert_true(all_bytes(out, LEN, 0));
    }
    /* out == scalar, out == u */
    for (int i = 0; i < POOL; i++) {
        const mbc_err want = p->code[i] == MBC_LANE_OK ? MBC_OK : MBC_ERR_LOW_ORDER;
        memcpy(k, p->k[i], LEN);
        assert_int_equal(mbc_x25519(k, k, p->u[i]), want);
        assert_memory_equal(k, p->shared[i], LEN);
        memcpy(u, p->u[i], LEN);
        assert_int_equal(mbc_x25519(u, p->k[i], u), want);
        assert_memory_equal(u, p->shared[i], LEN);
        memcpy(k, p->k[i], LEN);
        assert_int_equal(mbc_x25519_public_key(k, k), MBC_OK);
        assert_memory_equal(k, p->pub[i], LEN);
    }
    assert_string_equal(mbc_err_str(MBC_ERR_LOW_ORDER), "MBC_ERR_LOW_ORDER");
}

/*
 * Which kernels the calls of this implementation run (the tests' build
 * counts kernel calls): c every request alone on _c1; adx every request
 * alone on the scalar kernels; ifma a lone request on the scalar kernels
 * (built with them), 2..4 on _ifma4, 5..8 on the zmm batch.
 */
static void test_dispatch_hit(void **state)
{
    const char *impl = begin(state);
    const struct pool *p = pool();
    uint8_t buf[MBC_LANES][LEN];
    uint8_t *o[MBC_LANES];
    const uint8_t *k[MBC_LANES], *u[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        o[l] = buf[l];
        k[l] = p->k[l];
        u[l] = p->u[l];
    }
    static const unsigned counts[] = {1, 2, 3, 5, 8};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        const unsigned n = counts[i], mask = (1u << n) - 1;
        for (int op = 0; op < 2; op++) {
            const unsigned long c1 = mbc_x25519_kern_hits_c1, c8 = mbc_x25519_kern_hits_c;
#if MBC_HAVE_ADX
            const unsigned long sx = mbc_x25519_kern_hits_adx;
#endif
#if MBC_HAVE_IFMA
            const unsigned long i4 = mbc_x25519_kern_hits_ifma4, i8 = mbc_x25519_kern_hits_ifma;
#endif
            const mbc_status st =
                op == 0 ? mbc_x25519_mb8(o, k, u, mask) : mbc_x25519_public_key_mb8(o, k, mask);
            unsigned want_ok = mask;
            for (unsigned l = 0; l < n && op == 0; l++) {
                want_ok &= p->code[l] == MBC_LANE_OK ? ~0u : ~(1u << l);
            }
            assert_int_equal(mbc_status_ok_mask(st), want_ok);
            unsigned long want_c1 = 0, want_sx = 0, want_i4 = 0, want_i8 = 0;
            if (strcmp(impl, "c") == 0) {
                want_c1 = n;
            } else if (strcmp(impl, "adx") == 0) {
                want_sx = n;
            } else if (n == 1) {
                want_sx = MBC_HAVE_ADX ? 1 : 0;
                want_i4 = MBC_HAVE_ADX ? 0 : 1;
            } else if (n <= 4) {
                want_i4 = 1;
            } else {
                want_i8 = 1;
            }
            assert_int_equal(mbc_x25519_kern_hits_c1 - c1, want_c1);
            assert_int_equal(mbc_x25519_kern_hits_c - c8, 0);
#if MBC_HAVE_ADX
            assert_int_equal(mbc_x25519_kern_hits_adx - sx, want_sx);
#else
            assert_int_equal(want_sx, 0);
#endif
#if MBC_HAVE_IFMA
            assert_int_equal(mbc_x25519_kern_hits_ifma4 - i4, want_i4);
            assert_int_equal(mbc_x25519_kern_hits_ifma - i8, want_i8);
#else
            assert_int_equal(want_i4 + want_i8, 0);
#endif
        }
    }
    print_message("%s: each request count ran the kernels the plan names\n", impl);
}

/* ------------------------------------------------------------------------ */
/* 6. The manager's X25519 classes                                           */
/* ------------------------------------------------------------------------ */

struct xjob {
    mbc_job job;
    uint8_t out[OUT_MAX], out2[OUT_MAX];
    int req;
};

static void set_job(struct xjob *x, mbc_job_op op, int req)
{
    const struct pool *p = pool();
    const mbc_job keep = x->job;
    memset(&x->job, 0, sizeof(x->job));
    x->job.mgr_next_ = keep.mgr_next_;
    x->job.mgr_t_submit_ = keep.mgr_t_submit_;
    x->job.mgr_state_ = keep.mgr_state_;
    memset(x->out, CANARY, OUT_MAX);
    memset(x->out2, CANARY, OUT_MAX);
    x->job.op = op;
    x->req = req;
    x->job.user_data = x;
    if (op == MBC_OP_X25519_DERIVE) {
        x->job.in = p->k[req];
        x->job.in_len = LEN;
        x->job.in2 = p->u[req];
        x->job.in2_len = LEN;
    } else if (op == MBC_OP_X25519_PUBLIC_KEY) {
        x->job.in = p->k[req];
        x->job.in_len = LEN;
    } else {
        x->job.out2 = x->out2;
        x->job.out2_len = LEN;
    }
    x->job.out = x->out;
    x->job.out_len = LEN;
}

/* check_job: a completed job equals the direct call's result. */
static void check_job(const struct xjob *x, const char *what)
{
    const struct pool *p = pool();
    if (x->job.op == MBC_OP_X25519_DERIVE) {
        const mbc_err want = p->code[x->req] == MBC_LANE_OK ? MBC_OK : MBC_ERR_LOW_ORDER;
        uint8_t direct[LEN];
        assert_int_equal(mbc_x25519(direct, p->k[x->req], p->u[x->req]), want);
        if (x->job.status != want || memcmp(x->out, direct, LEN) != 0) {
            fail_msg("%s: derive job %s", what, mbc_err_str(x->job.status));
        }
    } else if (x->job.op == MBC_OP_X25519_PUBLIC_KEY) {
        uint8_t pub[LEN];
        assert_int_equal(mbc_x25519_public_key(pub, p->k[x->req]), MBC_OK);
        if (x->job.status != MBC_OK || memcmp(x->out, pub, LEN) != 0) {
            fail_msg("%s: public key job %s", what, mbc_err_str(x->job.status));
        }
    } else {
        uint8_t pub[LEN];
        if (x->job.status != MBC_OK) {
            fail_msg("%s: keygen job %s", what, mbc_err_str(x->job.status));
        }
        assert_int_equal(mbc_x25519_public_key(pub, x->out), MBC_OK);
        assert_memory_equal(pub, x->out2, LEN);
    }
    assert_true(all_bytes(x->out + LEN, OUT_MAX - LEN, CANARY));
    assert_true(all_bytes(x->out2 + LEN, OUT_MAX - LEN, CANARY));
}

static void test_manager(void **state)
{
    begin(state);
    mbc_mgr *mgr = NULL;
    assert_int_equal(mbc_mgr_new(&mgr, NULL), MBC_OK);
    struct xjob *x = calloc(2 * MBC_LANES, sizeof(*x));
    assert_non_null(x);
    char what[96];
    enum { NOPS = 3 };
    const mbc_job_op ops[NOPS] = {MBC_OP_X25519_DERIVE, MBC_OP_X25519_KEYGEN,
                                  MBC_OP_X25519_PUBLIC_KEY};
    for (int o = 0; o < NOPS; o++) {
        const int ci = mbc_class_find(ops[o], NULL);
        assert_true(ci >= 0);
        assert_int_equal(mbc_classes[ci].lanes, MBC_LANES);
        /* every batch size: n jobs, flushed (8: run by the last submit) */
        for (unsigned n = 1; n <= MBC_LANES; n++) {
            for (unsigned i = 0; i < n; i++) {
                set_job(&x[i], ops[o], (int)((n + i) % POOL));
                assert_int_equal(mbc_mgr_submit(mgr, &x[i].job), MBC_OK);
            }
            assert_int_equal(mbc_mgr_pending(mgr), n == MBC_LANES ? 0 : n);
            assert_int_equal(mbc_mgr_flush(mgr), n == MBC_LANES ? 0 : n);
            for (unsigned i = 0; i < n; i++) {
                mbc_job *j = mbc_mgr_get_completed(mgr);
                assert_ptr_equal(j, &x[i].job);
                snprintf(what, sizeof(what), "class %s, batch of %u, job %u", mbc_classes[ci].name,
                         n, i);
                check_job(&x[i], what);
            }
            assert_null(mbc_mgr_get_completed(mgr));
        }
    }
    /* every class at once, interleaved with bad jobs that complete at once */
    enum { NBAD = 9 };
    for (unsigned i = 0; i < 2 * MBC_LANES; i++) {
        set_job(&x[i], ops[i % NOPS], (int)(i % POOL));
    }
    struct xjob bad[NBAD];
    memset(bad, 0, sizeof(bad));
    const mbc_err bad_err[NBAD] = {MBC_ERR_BAD_PARAM,  MBC_ERR_BAD_PARAM,  MBC_ERR_NULL_PARAM,
                                   MBC_ERR_NULL_PARAM, MBC_ERR_BAD_PARAM,  MBC_ERR_NULL_PARAM,
                                   MBC_ERR_BAD_PARAM,  MBC_ERR_NULL_PARAM, MBC_ERR_BAD_PARAM};
    for (unsigned i = 0; i < NBAD; i++) {
        set_job(&bad[i], i < 6 ? MBC_OP_X25519_DERIVE : MBC_OP_X25519_KEYGEN, 0);
    }
    bad[0].job.in_len = LEN - 1;
    bad[1].job.in2_len = LEN + 1;
    bad[2].job.in = NULL;
    bad[3].job.in2 = NULL;
    bad[4].job.out_len = LEN - 1;
    bad[5].job.out = NULL;
    bad[6].job.out2_len = LEN - 1;
    bad[7].job.out2 = NULL;
    bad[8].job.out2 = bad[8].job.out; /* found when it runs: BAD_PARAM, zeroed */
    unsigned next = 0;
    for (unsigned i = 0; i < 2 * MBC_LANES; i++) {
        assert_int_equal(mbc_mgr_submit(mgr, &x[i].job), MBC_OK);
        if (i % 2 == 1 && next < NBAD) {
            assert_int_equal(mbc_mgr_submit(mgr, &bad[next++].job), MBC_OK);
        }
    }
    while (next < NBAD) {
        assert_int_equal(mbc_mgr_submit(mgr, &bad[next++].job), MBC_OK);
    }
    mbc_mgr_flush(mgr);
    unsigned seen_good = 0, seen_bad = 0;
    for (mbc_job *j; (j = mbc_mgr_get_completed(mgr)) != NULL;) {
        struct xjob *xj = j->user_data;
        if (xj >= bad && xj < bad + NBAD) {
            const unsigned i = (unsigned)(xj - bad);
            if (j->status != bad_err[i]) {
                fail_msg("bad job %u: %s, want %s", i, mbc_err_str(j->status),
                         mbc_err_str(bad_err[i]));
            }
            if (i == 8) {
                assert_true(all_bytes(xj->out, LEN, 0));
            }
            seen_bad++;
        } else {
            snprintf(what, sizeof(what), "mixed classes, job %ld", (long)(xj - x));
            check_job(xj, what);
            seen_good++;
        }
    }
    assert_int_equal(seen_good, 2 * MBC_LANES);
    assert_int_equal(seen_bad, NBAD);
    mbc_mgr_free(mgr);

    /* sync mode: each job runs at once on the single-request path */
    const mbc_mgr_config sync = {0, MBC_MGR_SYNC};
    assert_int_equal(mbc_mgr_new(&mgr, &sync), MBC_OK);
    for (unsigned i = 0; i < 4; i++) {
        set_job(&x[i], ops[i % NOPS], POOL - 1 - (int)i);
        assert_int_equal(mbc_mgr_submit(mgr, &x[i].job), MBC_OK);
        assert_true(x[i].job.status != MBC_ERR_PENDING);
        assert_ptr_equal(mbc_mgr_get_completed(mgr), &x[i].job);
        check_job(&x[i], "sync mode");
    }
    mbc_mgr_free(mgr);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        X25519_IMPL_TESTS(test_field),
        X25519_IMPL_TESTS(test_kernels),
        X25519_IMPL_TESTS(test_dispatch_hit),
        X25519_IMPL_TESTS(test_rfc7748_vectors),
        X25519_IMPL_TESTS(test_rfc7748_iterated),
        X25519_IMPL_TESTS(test_wycheproof),
        X25519_IMPL_TESTS(test_differential),
        X25519_IMPL_TESTS(test_keygen),
        X25519_IMPL_TESTS(test_all_masks),
        X25519_IMPL_TESTS(test_low_order_lane),
        X25519_IMPL_TESTS(test_bad_lanes),
        X25519_IMPL_TESTS(test_single_calls),
        X25519_IMPL_TESTS(test_manager),
    };
    return mbt_run("x25519", tests);
}
