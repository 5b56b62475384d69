/*
 * test_mb52.c - the radix-2^52 8-lane layer: byte-string conversions, and
 * the arithmetic kernels of the two backends against each other digit for
 * digit (random and carry-stress operands) and against OpenSSL's BIGNUM for
 * the mathematical result.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>

#include "mb52/mb52.h"
#include "rsa/rsa_kern.h"
#include "test_util.h"

/* The digit counts every class uses, plus odd ones to catch unrolling bugs. */
static const unsigned sizes[] = {5,  8,  20, 30, 40, 60, 80, 1,  3, 13,
                                 16, 17, 24, 25, 33, 47, 48, 49, 79};

static mb52_row *alloc_rows(unsigned k)
{
    mb52_row *r = aligned_alloc(64, (size_t)k * sizeof(mb52_row) + 64);
    assert_non_null(r);
    memset(r, 0, (size_t)k * sizeof(mb52_row));
    return r;
}

static void test_cvt_roundtrip(void **state)
{
    (void)state;
    for (size_t len = 1; len <= 520; len += (len < 70 ? 1 : 37)) {
        unsigned k = mb52_digits((unsigned)(8 * len));
        uint8_t in[8][520], out[8][520];
        const uint8_t *ip[8];
        uint8_t *op[8];
        for (unsigned l = 0; l < 8; l++) {
            mbt_rand_bytes(in[l], len);
            memset(out[l], 0xA5, sizeof(out[l]));
            ip[l] = in[l];
            op[l] = out[l];
        }
        mb52_row *r = alloc_rows(k);
        unsigned mask = (unsigned)(mbt_rand() & 0xFF);
        mbc_mb52_from_be8(r, k, ip, len, mask);
        for (unsigned j = 0; j < k; j++) {
            for (unsigned l = 0; l < 8; l++) {
                assert_true(r[j][l] <= MB52_MASK);
                if (!((mask >> l) & 1u)) {
                    assert_int_equal(r[j][l], 0);
                }
            }
        }
        mbc_mb52_to_be8(op, len, r, k, mask);
        for (unsigned l = 0; l < 8; l++) {
            if ((mask >> l) & 1u) {
                assert_memory_equal(in[l], out[l], len);
            } else {
                assert_int_equal(out[l][0], 0xA5); /* never written */
            }
        }
        free(r);
    }
}

static void test_cvt_cap(void **state)
{
    (void)state;
    uint64_t d[3];
    uint8_t v[13] = {0};
    /* 0x01 followed by 12 zero bytes is 2^96: fits 97 bits, not 96. */
    v[0] = 0x01;
    assert_true(mbc_mb52_from_be(d, 2, v, sizeof(v), 104) == 0);
    assert_true(mbc_mb52_from_be(d, 2, v, sizeof(v), 97) == 0);
    assert_true(mbc_mb52_from_be(d, 2, v, sizeof(v), 96) == ~0ull);
    /* leading zero bytes beyond the cap are fine */
    uint8_t w[20] = {0};
    w[19] = 0x7f;
    assert_true(mbc_mb52_from_be(d, 1, w, sizeof(w), 8) == 0);
    assert_int_equal(d[0], 0x7f);
    assert_true(mbc_mb52_from_be(d, 1, w, sizeof(w), 6) == ~0ull);
    uint8_t out[20];
    d[0] = 0x7f;
    mbc_mb52_to_be(out, sizeof(out), d, 1);
    assert_memory_equal(out, w, sizeof(w));
}

/* ref_from_be: bit by bit, the definition mbc_mb52_from_be must match. */
static uint64_t ref_from_be(uint64_t *d, unsigned k, const uint8_t *in, size_t len,
                            unsigned cap_bits)
{
    uint64_t over = 0;
    memset(d, 0, k * sizeof(*d));
    for (size_t bit = 0; bit < 8 * len; bit++) {
        uint64_t b = (in[len - 1 - bit / 8] >> (bit % 8)) & 1u;
        if (bit >= cap_bits) {
            over |= b;
        } else if (bit / MB52_BITS < k) {
            d[bit / MB52_BITS] |= b << (bit % MB52_BITS);
        }
    }
    return over ? ~0ull : 0;
}

/* The word-at-a-time conversions against the bit-by-bit definition, for
 * every alignment of length, digit count and cap. */
static void test_cvt_reference(void **state)
{
    (void)state;
    uint8_t in[80], out[80], ref_out[80];
    uint64_t d[14], ref[14];
    for (size_t len = 0; len <= sizeof(in); len++) {
        for (unsigned k = 1; k <= 13; k++) {
            for (unsigned t = 0; t < 4; t++) {
                mbt_rand_bytes(in, len);
                if (t & 1) {
                    memset(in, 0, len / 2); /* leading zeros */
                }
                unsigned cap = (unsigned)(mbt_rand() % (MB52_BITS * k + 1));
                if (t == 3) {
                    cap = MB52_BITS * k;
                }
                assert_true(mbc_mb52_from_be(d, k, in, len, cap) ==
                            ref_from_be(ref, k, in, len, cap));
                assert_memory_equal(d, ref, k * sizeof(*d));
                /* to_be writes the low len bytes, zero-extended or truncated */
                mbc_mb52_to_be(out, len, d, k);
                memset(ref_out, 0, len);
                for (size_t bit = 0; bit < 8 * len && bit < MB52_BITS * k; bit++) {
                    uint8_t b = (uint8_t)((d[bit / MB52_BITS] >> (bit % MB52_BITS)) & 1u);
                    ref_out[len - 1 - bit / 8] |= (uint8_t)(b << (bit % 8));
                }
                assert_memory_equal(out, ref_out, len);
            }
        }
    }
}

/* A random odd modulus of k digits with 4m < R, set per lane. */
static void random_modulus(mb52_row *m, mb52_row *m0inv, unsigned k)
{
    for (unsigned l = 0; l < 8; l++) {
        for (unsigned j = 0; j < k; j++) {
            m[j][l] = mbt_rand() & MB52_MASK;
        }
        /* top digit: at most 50 bits, often exactly 50 (the tightest case) */
        m[k - 1][l] = (mbt_rand() & 1) ? (m[k - 1][l] >> 2) | (1ull << 49) : m[k - 1][l] >> 20;
        if (k == 1 && m[0][l] < 3) {
            m[0][l] = 3;
        }
        m[0][l] |= 1;
        uint64_t x = m[0][l];
        for (int i = 0; i < 5; i++) {
            x *= 2 - m[0][l] * x;
        }
        (*m0inv)[l] = (0 - x) & MB52_MASK;
    }
}

/* x < 2m per lane, from a mix of random values and carry-stress cases. */
static void operand(mb52_row *x, const mb52_row *m, unsigned k, unsigned kind)
{
    BN_CTX *ctx = BN_CTX_new();
    for (unsigned l = 0; l < 8; l++) {
        BIGNUM *mb = mbt_lane_bn(m, k, l), *v = BN_new();
        switch ((kind + l) % 8) {
        case 0: /* 2m - 1, the largest legal operand */
            BN_lshift1(v, mb);
            BN_sub_word(v, 1);
            break;
        case 1:
            BN_copy(v, mb);
            BN_sub_word(v, 1);
            break;
        case 2:
            BN_copy(v, mb);
            BN_sub_word(v, 2);
            break;
        case 3:
            BN_zero(v);
            break;
        case 4:
            BN_one(v);
            break;
        case 5: /* all-ones digits, reduced below 2m */
            BN_set_bit(v, (int)(52 * k));
            BN_sub_word(v, 1);
            BN_lshift1(mb, mb);
            BN_mod(v, v, mb, ctx);
            break;
        default: { /* random below 2m */
            BIGNUM *two_m = BN_new();
            BN_lshift1(two_m, mb);
            BN_rand_range(v, two_m);
            BN_free(two_m);
        }
        }
        mbt_bn_to_lane(x, k, l, v);
        BN_free(mb);
        BN_free(v);
    }
    BN_CTX_free(ctx);
}

/* Checks r == a b R^-1 mod m (or t R^-1 for redc) with r < 2m, per lane. */
static void check_mont(const mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *m,
                       unsigned k, unsigned ka)
{
    BN_CTX *ctx = BN_CTX_new();
    for (unsigned l = 0; l < 8; l++) {
        BIGNUM *rb = mbt_lane_bn(r, k, l), *ab = mbt_lane_bn(a, ka, l), *mb = mbt_lane_bn(m, k, l);
        BIGNUM *lhs = BN_new(), *rhs = BN_new(), *two_m = BN_new();
        if (b != NULL) {
            BIGNUM *bb = mbt_lane_bn(b, k, l);
            BN_mul(ab, ab, bb, ctx);
            BN_free(bb);
        }
        /* r R == a b (mod m) */
        BN_lshift(lhs, rb, (int)(52 * k));
        BN_mod(lhs, lhs, mb, ctx);
        BN_mod(rhs, ab, mb, ctx);
        assert_int_equal(BN_cmp(lhs, rhs), 0);
        BN_lshift1(two_m, mb);
        assert_true(BN_cmp(rb, two_m) < 0);
        for (unsigned j = 0; j < k; j++) {
            assert_true(r[j][l] <= MB52_MASK);
        }
        BN_free(rb);
        BN_free(ab);
        BN_free(mb);
        BN_free(lhs);
        BN_free(rhs);
        BN_free(two_m);
    }
    BN_CTX_free(ctx);
}

typedef void amm_fn(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *m,
                    const mb52_row *m0inv, unsigned k);
typedef void ams_fn(mb52_row *r, const mb52_row *a, const mb52_row *m, const mb52_row *m0inv,
                    unsigned k);
typedef void redc_fn(mb52_row *r, const mb52_row *t, const mb52_row *m, const mb52_row *m0inv,
                     unsigned k);

/* The kernels of the implementation under test (the IFMA ones only exist
 * in builds that have them; mbt_use_impl skipped otherwise). */
static amm_fn *amm_of(const char *impl)
{
#if MBC_HAVE_IFMA
    if (strcmp(impl, "ifma") == 0) {
        return mbc_mb52_amm_test_ifma;
    }
#endif
    (void)impl;
    return mbc_mb52_amm_test_c;
}

static ams_fn *ams_of(const char *impl)
{
#if MBC_HAVE_IFMA
    if (strcmp(impl, "ifma") == 0) {
        return mbc_mb52_ams_test_ifma;
    }
#endif
    (void)impl;
    return mbc_mb52_ams_test_c;
}

static redc_fn *redc_of(const char *impl)
{
#if MBC_HAVE_IFMA
    if (strcmp(impl, "ifma") == 0) {
        return mbc_mb52_redc_test_ifma;
    }
#endif
    (void)impl;
    return mbc_mb52_redc_test_c;
}

/* Each implementation's result is checked against BIGNUM; the IFMA one is
 * also compared with the portable one digit for digit, and the dedicated
 * squaring with the multiplication of a number by itself. */
static void test_amm(void **state)
{
    const char *impl = mbt_use_impl(state);
    amm_fn *amm = amm_of(impl);
    ams_fn *ams = ams_of(impl);
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        const unsigned k = sizes[si];
        mb52_row *m = alloc_rows(k), *a = alloc_rows(k), *b = alloc_rows(k);
        mb52_row *r = alloc_rows(k), *rc = alloc_rows(k), *m0 = alloc_rows(1);
        for (unsigned iter = 0; iter < 24; iter++) {
            random_modulus(m, m0, k);
            operand(a, m, k, iter);
            operand(b, m, k, iter / 3 + 5);
            amm(r, a, b, m, m0, k);
            check_mont(r, a, b, m, k, k);
            mbc_mb52_amm_test_c(rc, a, b, m, m0, k);
            assert_memory_equal(r, rc, (size_t)k * sizeof(mb52_row));
            /* r may alias an operand, as the kernels use it */
            amm(a, a, b, m, m0, k);
            assert_memory_equal(a, rc, (size_t)k * sizeof(mb52_row));
            ams(r, b, m, m0, k);
            mbc_mb52_amm_test_c(rc, b, b, m, m0, k);
            assert_memory_equal(r, rc, (size_t)k * sizeof(mb52_row));
            ams(b, b, m, m0, k); /* in place */
            assert_memory_equal(b, rc, (size_t)k * sizeof(mb52_row));
        }
        free(m);
        free(a);
        free(b);
        free(r);
        free(rc);
        free(m0);
    }
}

static void test_redc(void **state)
{
    const char *impl = mbt_use_impl(state);
    redc_fn *redc = redc_of(impl);
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        const unsigned k = sizes[si];
        mb52_row *m = alloc_rows(k), *t = alloc_rows(2 * k), *r = alloc_rows(k);
        mb52_row *rc = alloc_rows(k), *m0 = alloc_rows(1);
        for (unsigned iter = 0; iter < 16; iter++) {
            random_modulus(m, m0, k);
            /* t < R m: any low half; a high half below m (m - 1 for the
             * carry-stress rounds, with all-ones low digits). */
            operand(t + k, m, k, iter);
            for (unsigned l = 0; l < 8; l++) {
                BIGNUM *mb = mbt_lane_bn(m, k, l), *hi = mbt_lane_bn(t + k, k, l);
                if (iter % 4 == 1) {
                    BN_copy(hi, mb);
                    BN_sub_word(hi, 1);
                } else {
                    if (BN_cmp(hi, mb) >= 0) { /* operand is below 2m */
                        BN_sub(hi, hi, mb);
                    }
                }
                mbt_bn_to_lane(t + k, k, l, hi);
                for (unsigned j = 0; j < k; j++) {
                    t[j][l] = (iter % 4 == 1) ? MB52_MASK : mbt_rand() & MB52_MASK;
                }
                BN_free(mb);
                BN_free(hi);
            }
            redc(r, t, m, m0, k);
            check_mont(r, t, NULL, m, k, 2 * k);
            mbc_mb52_redc_test_c(rc, t, m, m0, k);
            assert_memory_equal(r, rc, (size_t)k * sizeof(mb52_row));
        }
        free(m);
        free(t);
        free(r);
        free(rc);
        free(m0);
    }
}

/* bn_mod_pow2: 2^e mod m. */
static BIGNUM *bn_mod_pow2(int e, const BIGNUM *m, BN_CTX *ctx)
{
    BIGNUM *r = BN_new();
    BN_zero(r);
    BN_set_bit(r, e);
    BN_mod(r, r, m, ctx);
    return r;
}

/* h2_exponent: a CRT exponent of hb bits of the given kind: random, all ones
 * (every window 31), zero (every window 0), windows alternately 31 and 0,
 * one, or only the top (partial) window set. */
static BIGNUM *h2_exponent(unsigned kind, int hb)
{
    BIGNUM *d = BN_new();
    BN_zero(d);
    switch (kind % 6) {
    case 0:
        BN_rand(d, hb, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
        break;
    case 1:
        BN_set_bit(d, hb);
        BN_sub_word(d, 1);
        break;
    case 2:
        break;
    case 3:
        for (int b = 0; b < hb; b++) {
            if ((b / RSA_WIN) % 2 == 0) {
                BN_set_bit(d, b);
            }
        }
        break;
    case 4:
        BN_one(d);
        break;
    default:
        for (int b = (hb - 1) / RSA_WIN * RSA_WIN; b < hb; b++) {
            BN_set_bit(d, b);
        }
    }
    return d;
}

/* h_input: an input below nb of the given kind: 0, 1, nb - 1, all-ones
 * digits (k of them) reduced below nb, random. */
static BIGNUM *h_input(unsigned kind, const BIGNUM *nb, unsigned k, BN_CTX *ctx)
{
    BIGNUM *x = BN_new();
    BN_zero(x);
    switch (kind % 5) {
    case 0:
        break;
    case 1:
        BN_one(x);
        break;
    case 2:
        BN_sub(x, nb, BN_value_one());
        break;
    case 3:
        BN_set_bit(x, (int)(52 * k));
        BN_sub_word(x, 1);
        BN_mod(x, x, nb, ctx);
        break;
    default:
        BN_rand_range(x, nb);
    }
    return x;
}

/* h_mod_lane: lane `lane` of a Montgomery modulus at k digits: m, -m^-1 mod
 * 2^52, R mod m and R^tpow mod m (R = 2^(52 k)). */
static void h_mod_lane(const struct mb52_mod *md, unsigned lane, const BIGNUM *mb, int tpow,
                       BN_CTX *ctx)
{
    const unsigned k = md->k;
    BIGNUM *r52 = BN_new();
    BN_zero(r52);
    BN_set_bit(r52, 52);
    BIGNUM *inv = BN_mod_inverse(NULL, mb, r52, ctx);
    BN_sub(inv, r52, inv); /* -m^-1 mod 2^52 */
    BIGNUM *rr = bn_mod_pow2((int)(52 * k), mb, ctx);
    BIGNUM *rt = bn_mod_pow2((int)(tpow * 52 * k), mb, ctx);
    mbt_bn_to_lane((mb52_row *)md->m, k, lane, mb);
    mbt_bn_to_lane((mb52_row *)md->m0inv, 1, lane, inv);
    mbt_bn_to_lane((mb52_row *)md->r1, k, lane, rr);
    mbt_bn_to_lane((mb52_row *)md->to_mont, k, lane, rt);
    BN_free(r52);
    BN_free(inv);
    BN_free(rr);
    BN_free(rt);
}

/*
 * The horizontal CRT halves of a lone private request (rsa_h2.c, the
 * single-request IFMA kernel) give exactly the digits of the vertical
 * crt_half of the 8-lane kernel, and those are in^d mod m (BIGNUM), for the
 * halves of RSA-2048, 3072 and 4096 (k = 20, 30, 40). Random odd moduli of
 * half_bits bits with the top bit set (the arithmetic does not need
 * primes), inputs 0, 1, n - 1 (n = m_p m_q), all-ones digits below n and
 * random ones; exponents with all-ones and all-zero windows.
 */
static void test_crt_halves_h2(void **state)
{
    (void)state;
    if (!mbt_impl_available("ifma")) {
        print_message("SKIP horizontal CRT halves: this CPU (or build) lacks AVX-512 IFMA\n");
        skip();
    }
#if MBC_HAVE_IFMA
    static const unsigned half_bits[] = {1024, 1536, 2048};
    const unsigned iters = 36;
    BN_CTX *ctx = BN_CTX_new();
    for (size_t sz = 0; sz < sizeof(half_bits) / sizeof(half_bits[0]); sz++) {
        const unsigned hb = half_bits[sz], kh = mb52_digits(hb), kn = 2 * kh;
        mb52_row *m = alloc_rows(kh), *m0 = alloc_rows(1), *r1 = alloc_rows(kh);
        mb52_row *tm = alloc_rows(kh), *d = alloc_rows(kh), *in = alloc_rows(kn);
        mb52_row *hp = alloc_rows(kh), *hq = alloc_rows(kh), *vp = alloc_rows(kh);
        mb52_row *vq = alloc_rows(kh), *scratch = alloc_rows(rsa_crt_scratch_rows(kh));
        const struct mb52_mod md = {kh, m, m0, r1, tm};
        for (unsigned iter = 0; iter < iters; iter++) {
            BIGNUM *mb[2], *db[2];
            for (unsigned n = 0; n < 2; n++) {
                mb[n] = BN_new();
                BN_rand(mb[n], (int)hb, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ODD);
                db[n] = h2_exponent(iter + 3 * n, (int)hb);
                h_mod_lane(&md, n, mb[n], 3, ctx);
                mbt_bn_to_lane(d, kh, n, db[n]);
            }
            BIGNUM *nb = BN_new();
            BN_mul(nb, mb[0], mb[1], ctx);
            BIGNUM *x = h_input(iter, nb, kn, ctx);
            memset(in, 0, (size_t)kn * sizeof(mb52_row));
            mbt_bn_to_lane(in, kn, 0, x);
            mbt_bn_to_lane(in, kn, 1, x);

            struct rsa_crt_args a = {0};
            a.paired = 1;
            a.p = md;
            a.q = a.p;
            a.dp = a.dq = d;
            a.half_bits = hb;
            a.in = in;
            a.scratch = scratch;
            /* 1: the horizontal exponentiation ran; 0: the vertical one */
            assert_int_equal(mbc_rsa_crt_halves_test_ifma(hp, hq, &a, 1), 1);
            assert_int_equal(mbc_rsa_crt_halves_test_ifma(vp, vq, &a, 0), 0);
            for (unsigned n = 0; n < 2; n++) {
                const mb52_row *h = n == 0 ? hp : hq, *v = n == 0 ? vp : vq;
                BIGNUM *want = BN_new(), *got = mbt_lane_bn(h, kh, 0);
                BN_mod_exp(want, x, db[n], mb[n], ctx);
                for (unsigned j = 0; j < kh; j++) {
                    if (h[j][0] != v[j][0]) {
                        fail_msg("k %u iter %u half %u digit %u: horizontal 0x%llx, vertical "
                                 "0x%llx",
                                 kh, iter, n, j, (unsigned long long)h[j][0],
                                 (unsigned long long)v[j][0]);
                    }
                }
                if (BN_cmp(got, want) != 0) {
                    fail_msg("k %u iter %u half %u: the result is not in^d mod m", kh, iter, n);
                }
                BN_free(want);
                BN_free(got);
                BN_free(mb[n]);
                BN_free(db[n]);
            }
            BN_free(nb);
            BN_free(x);
        }
        print_message("ifma: %u lone RSA-%u CRT half pairs, horizontal == vertical == BIGNUM\n",
                      iters, 2 * hb);
        free(m);
        free(m0);
        free(r1);
        free(tm);
        free(d);
        free(in);
        free(hp);
        free(hq);
        free(vp);
        free(vq);
        free(scratch);
    }
    BN_CTX_free(ctx);
#endif
}

/* pub_exponent: a public exponent of the given kind: 3, 65537, a large odd
 * one (random, up to bits - 1 bits), 1, all ones over 100 bits. */
static BIGNUM *pub_exponent(unsigned kind, int bits)
{
    BIGNUM *e = BN_new();
    switch (kind % 5) {
    case 0:
        BN_set_word(e, 3);
        break;
    case 1:
        BN_set_word(e, 65537);
        break;
    case 2:
        BN_rand(e, bits - 1 - (int)(mbt_rand() % 64), BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ODD);
        break;
    case 3:
        BN_one(e);
        break;
    default:
        BN_zero(e);
        BN_set_bit(e, 100);
        BN_sub_word(e, 1);
    }
    return e;
}

/*
 * The horizontal public exponentiation of a lone public request
 * (mbc_rsa_pub_kern_h1_ifma, rsa_h2.c) gives exactly the digits of the 8-lane
 * mbc_rsa_pub_kern_ifma, and those are in^e mod n (BIGNUM), for RSA-2048, 3072
 * and 4096 (k = 40, 60, 80): random odd moduli, inputs 0, 1, n - 1, all-ones
 * digits below n and random ones, e = 3, 65537, large odd ones. With a
 * second active lane it must fall back to the vertical kernel.
 */
static void test_pub_h1(void **state)
{
    (void)state;
    if (!mbt_impl_available("ifma")) {
        print_message("SKIP horizontal public exponentiation: this CPU (or build) lacks "
                      "AVX-512 IFMA\n");
        skip();
    }
#if MBC_HAVE_IFMA
    static const unsigned mod_bits[] = {2048, 3072, 4096};
    const unsigned iters = 30;
    BN_CTX *ctx = BN_CTX_new();
    for (size_t sz = 0; sz < sizeof(mod_bits) / sizeof(mod_bits[0]); sz++) {
        const unsigned bits = mod_bits[sz], kn = 2 * mb52_digits(bits / 2);
        mb52_row *m = alloc_rows(kn), *m0 = alloc_rows(1), *r1 = alloc_rows(kn);
        mb52_row *tm = alloc_rows(kn), *e = alloc_rows(kn), *in = alloc_rows(kn);
        mb52_row *ho = alloc_rows(kn), *vo = alloc_rows(kn);
        mb52_row *scratch = alloc_rows(rsa_pub_scratch_rows(kn));
        const struct mb52_mod md = {kn, m, m0, r1, tm};
        for (unsigned iter = 0; iter < iters; iter++) {
            BIGNUM *nb = BN_new();
            BN_rand(nb, (int)bits, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ODD);
            BIGNUM *eb = pub_exponent(iter, (int)bits);
            BIGNUM *x = h_input(iter / 5 + iter, nb, kn, ctx);
            h_mod_lane(&md, 0, nb, 2, ctx);
            memset(e, 0, (size_t)kn * sizeof(mb52_row));
            mbt_bn_to_lane(e, kn, 0, eb);
            memset(in, 0, (size_t)kn * sizeof(mb52_row));
            mbt_bn_to_lane(in, kn, 0, x);

            struct rsa_pub_args a = {0};
            a.n = md;
            a.e = e;
            a.e_bits = (unsigned)BN_num_bits(eb);
            a.lanes = 1;
            a.in = in;
            a.scratch = scratch;
            a.out = ho;
            const unsigned long h1 = mbc_rsa_kern_hits_h1;
            mbc_rsa_pub_kern_h1_ifma(&a);
            assert_int_equal(mbc_rsa_kern_hits_h1 - h1, 1);
            a.out = vo;
            mbc_rsa_pub_kern_ifma(&a);
            assert_int_equal(mbc_rsa_kern_hits_h1 - h1, 1);
            BIGNUM *want = BN_new(), *got = mbt_lane_bn(ho, kn, 0);
            BN_mod_exp(want, x, eb, nb, ctx);
            for (unsigned j = 0; j < kn; j++) {
                if (ho[j][0] != vo[j][0]) {
                    fail_msg("k %u iter %u digit %u: horizontal 0x%llx, vertical 0x%llx", kn, iter,
                             j, (unsigned long long)ho[j][0], (unsigned long long)vo[j][0]);
                }
            }
            if (BN_cmp(got, want) != 0) {
                fail_msg("k %u iter %u: the result is not in^e mod n", kn, iter);
            }
            if (iter == 0) {
                /* two active lanes: the vertical kernel, the same lane 0 */
                a.lanes = 3;
                a.out = ho;
                mbc_rsa_pub_kern_h1_ifma(&a);
                assert_int_equal(mbc_rsa_kern_hits_h1 - h1, 1);
                assert_memory_equal(ho, vo, (size_t)kn * sizeof(mb52_row));
            }
            BN_free(want);
            BN_free(got);
            BN_free(nb);
            BN_free(eb);
            BN_free(x);
        }
        print_message("ifma: %u lone RSA-%u public exponentiations, horizontal == vertical == "
                      "BIGNUM\n",
                      iters, bits);
        free(m);
        free(m0);
        free(r1);
        free(tm);
        free(e);
        free(in);
        free(ho);
        free(vo);
        free(scratch);
    }
    BN_CTX_free(ctx);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cvt_roundtrip),
        cmocka_unit_test(test_cvt_cap),
        cmocka_unit_test(test_cvt_reference),
        MBT_IMPL_TESTS(test_amm),
        MBT_IMPL_TESTS(test_redc),
        cmocka_unit_test(test_crt_halves_h2),
        cmocka_unit_test(test_pub_h1),
    };
    return mbt_run("mb52", tests);
}
