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
static const unsigned sizes[] = {5, 8, 20, 30, 40, 60, 80, 1, 3, 13, 16, 17, 24, 25, 33, 47, 48, 49, 79};

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
        mb52_from_be8(r, k, ip, len, mask);
        for (unsigned j = 0; j < k; j++) {
            for (unsigned l = 0; l < 8; l++) {
                assert_true(r[j][l] <= MB52_MASK);
                if (!((mask >> l) & 1u)) {
                    assert_int_equal(r[j][l], 0);
                }
            }
        }
        mb52_to_be8(op, len, r, k, mask);
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
    assert_true(mb52_from_be(d, 2, v, sizeof(v), 104) == 0);
    assert_true(mb52_from_be(d, 2, v, sizeof(v), 97) == 0);
    assert_true(mb52_from_be(d, 2, v, sizeof(v), 96) == ~0ull);
    /* leading zero bytes beyond the cap are fine */
    uint8_t w[20] = {0};
    w[19] = 0x7f;
    assert_true(mb52_from_be(d, 1, w, sizeof(w), 8) == 0);
    assert_int_equal(d[0], 0x7f);
    assert_true(mb52_from_be(d, 1, w, sizeof(w), 6) == ~0ull);
    uint8_t out[20];
    d[0] = 0x7f;
    mb52_to_be(out, sizeof(out), d, 1);
    assert_memory_equal(out, w, sizeof(w));
}

/* ref_from_be: bit by bit, the definition mb52_from_be must match. */
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
                assert_true(mb52_from_be(d, k, in, len, cap) == ref_from_be(ref, k, in, len, cap));
                assert_memory_equal(d, ref, k * sizeof(*d));
                /* to_be writes the low len bytes, zero-extended or truncated */
                mb52_to_be(out, len, d, k);
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

static BIGNUM *lane_bn(const mb52_row *a, unsigned k, unsigned lane)
{
    BIGNUM *r = BN_new();
    BN_zero(r);
    for (unsigned j = k; j-- > 0;) {
        BN_lshift(r, r, 52);
        BN_add_word(r, a[j][lane]);
    }
    return r;
}

static void bn_to_lane(mb52_row *a, unsigned k, unsigned lane, const BIGNUM *v)
{
    BIGNUM *t = BN_new();
    for (unsigned j = 0; j < k; j++) {
        BN_rshift(t, v, (int)(52 * j));
        BN_mask_bits(t, 52);
        a[j][lane] = BN_get_word(t);
    }
    BN_free(t);
}

/* x < 2m per lane, from a mix of random values and carry-stress cases. */
static void operand(mb52_row *x, const mb52_row *m, unsigned k, unsigned kind)
{
    BN_CTX *ctx = BN_CTX_new();
    for (unsigned l = 0; l < 8; l++) {
        BIGNUM *mb = lane_bn(m, k, l), *v = BN_new();
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
        bn_to_lane(x, k, l, v);
        BN_free(mb);
        BN_free(v);
    }
    BN_CTX_free(ctx);
}

/* Checks r == a b R^-1 mod m (or t R^-1 for redc) with r < 2m, per lane. */
static void check_mont(const mb52_row *r, const mb52_row *a, const mb52_row *b,
                       const mb52_row *m, unsigned k, unsigned ka)
{
    BN_CTX *ctx = BN_CTX_new();
    for (unsigned l = 0; l < 8; l++) {
        BIGNUM *rb = lane_bn(r, k, l), *ab = lane_bn(a, ka, l), *mb = lane_bn(m, k, l);
        BIGNUM *lhs = BN_new(), *rhs = BN_new(), *two_m = BN_new();
        if (b != NULL) {
            BIGNUM *bb = lane_bn(b, k, l);
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
        return mb52_amm_ifma;
    }
#endif
    (void)impl;
    return mb52_amm_c;
}

static ams_fn *ams_of(const char *impl)
{
#if MBC_HAVE_IFMA
    if (strcmp(impl, "ifma") == 0) {
        return mb52_ams_ifma;
    }
#endif
    (void)impl;
    return mb52_ams_c;
}

static redc_fn *redc_of(const char *impl)
{
#if MBC_HAVE_IFMA
    if (strcmp(impl, "ifma") == 0) {
        return mb52_redc_ifma;
    }
#endif
    (void)impl;
    return mb52_redc_c;
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
            mb52_amm_c(rc, a, b, m, m0, k);
            assert_memory_equal(r, rc, (size_t)k * sizeof(mb52_row));
            /* r may alias an operand, as the kernels use it */
            amm(a, a, b, m, m0, k);
            assert_memory_equal(a, rc, (size_t)k * sizeof(mb52_row));
            ams(r, b, m, m0, k);
            mb52_amm_c(rc, b, b, m, m0, k);
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
                BIGNUM *mb = lane_bn(m, k, l), *hi = lane_bn(t + k, k, l);
                if (iter % 4 == 1) {
                    BN_copy(hi, mb);
                    BN_sub_word(hi, 1);
                } else {
                    if (BN_cmp(hi, mb) >= 0) { /* operand is below 2m */
                        BN_sub(hi, hi, mb);
                    }
                }
                bn_to_lane(t + k, k, l, hi);
                for (unsigned j = 0; j < k; j++) {
                    t[j][l] = (iter % 4 == 1) ? MB52_MASK : mbt_rand() & MB52_MASK;
                }
                BN_free(mb);
                BN_free(hi);
            }
            redc(r, t, m, m0, k);
            check_mont(r, t, NULL, m, k, 2 * k);
            mb52_redc_c(rc, t, m, m0, k);
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

/* h2_exponent: a 1024-bit CRT exponent of the given kind: random, all ones
 * (every window 31), zero (every window 0), windows alternately 31 and 0,
 * one, or only the top (partial) window set. */
static BIGNUM *h2_exponent(unsigned kind)
{
    BIGNUM *d = BN_new();
    BN_zero(d);
    switch (kind % 6) {
    case 0:
        BN_rand(d, 1024, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
        break;
    case 1:
        BN_set_bit(d, 1024);
        BN_sub_word(d, 1);
        break;
    case 2:
        break;
    case 3:
        for (int b = 0; b < 1024; b++) {
            if ((b / RSA_WIN) % 2 == 0) {
                BN_set_bit(d, b);
            }
        }
        break;
    case 4:
        BN_one(d);
        break;
    default:
        for (int b = 1020; b < 1024; b++) {
            BN_set_bit(d, b);
        }
    }
    return d;
}

/*
 * The horizontal CRT halves of a lone RSA-2048 request (rsa_h2.c, the
 * single-request IFMA kernel) give exactly the digits of the vertical
 * crt_half of the 8-lane kernel, and those are in^d mod m (BIGNUM). Random
 * odd 1024-bit moduli with the top bit set (the arithmetic does not need
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
    const unsigned kh = 20, kn = 40, iters = 60;
    mb52_row *m = alloc_rows(kh), *m0 = alloc_rows(1), *r1 = alloc_rows(kh);
    mb52_row *tm = alloc_rows(kh), *d = alloc_rows(kh), *in = alloc_rows(kn);
    mb52_row *hp = alloc_rows(kh), *hq = alloc_rows(kh), *vp = alloc_rows(kh);
    mb52_row *vq = alloc_rows(kh), *scratch = alloc_rows(rsa_crt_scratch_rows(kh));
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *r52 = BN_new();
    BN_zero(r52);
    BN_set_bit(r52, 52);
    for (unsigned iter = 0; iter < iters; iter++) {
        BIGNUM *mb[2], *db[2];
        for (unsigned n = 0; n < 2; n++) {
            mb[n] = BN_new();
            BN_rand(mb[n], 1024, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ODD);
            db[n] = h2_exponent(iter + 3 * n);
            BIGNUM *inv = BN_mod_inverse(NULL, mb[n], r52, ctx);
            BN_sub(inv, r52, inv); /* -m^-1 mod 2^52 */
            BIGNUM *rr = bn_mod_pow2(52 * 20, mb[n], ctx), *r3 = bn_mod_pow2(3 * 52 * 20, mb[n], ctx);
            bn_to_lane(m, kh, n, mb[n]);
            bn_to_lane(m0, 1, n, inv);
            bn_to_lane(r1, kh, n, rr);
            bn_to_lane(tm, kh, n, r3);
            bn_to_lane(d, kh, n, db[n]);
            BN_free(inv);
            BN_free(rr);
            BN_free(r3);
        }
        BIGNUM *nb = BN_new(), *x = BN_new();
        BN_mul(nb, mb[0], mb[1], ctx);
        switch (iter % 5) {
        case 0:
            BN_zero(x);
            break;
        case 1:
            BN_one(x);
            break;
        case 2:
            BN_sub(x, nb, BN_value_one());
            break;
        case 3: /* all-ones digits, reduced below n */
            BN_set_bit(x, 52 * 40);
            BN_sub_word(x, 1);
            BN_mod(x, x, nb, ctx);
            break;
        default:
            BN_rand_range(x, nb);
        }
        memset(in, 0, (size_t)kn * sizeof(mb52_row));
        bn_to_lane(in, kn, 0, x);
        bn_to_lane(in, kn, 1, x);

        struct rsa_crt_args a = {0};
        a.paired = 1;
        a.p = (struct rsa_mod){kh, m, m0, r1, tm};
        a.q = a.p;
        a.dp = a.dq = d;
        a.half_bits = 1024;
        a.in = in;
        a.scratch = scratch;
        /* 1: the horizontal exponentiation ran; 0: the vertical one */
        assert_int_equal(rsa_crt_halves_test_ifma(hp, hq, &a, 1), 1);
        assert_int_equal(rsa_crt_halves_test_ifma(vp, vq, &a, 0), 0);
        for (unsigned n = 0; n < 2; n++) {
            const mb52_row *h = n == 0 ? hp : hq, *v = n == 0 ? vp : vq;
            BIGNUM *want = BN_new(), *got = lane_bn(h, kh, 0);
            BN_mod_exp(want, x, db[n], mb[n], ctx);
            for (unsigned j = 0; j < kh; j++) {
                if (h[j][0] != v[j][0]) {
                    fail_msg("iter %u half %u digit %u: horizontal 0x%llx, vertical 0x%llx", iter,
                             n, j, (unsigned long long)h[j][0], (unsigned long long)v[j][0]);
                }
            }
            if (BN_cmp(got, want) != 0) {
                fail_msg("iter %u half %u: the result is not in^d mod m", iter, n);
            }
            BN_free(want);
            BN_free(got);
            BN_free(mb[n]);
            BN_free(db[n]);
        }
        BN_free(nb);
        BN_free(x);
    }
    print_message("ifma: %u lone RSA-2048 CRT half pairs, horizontal == vertical == BIGNUM\n",
                  iters);
    BN_free(r52);
    BN_CTX_free(ctx);
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
    };
    return mbt_run("mb52", tests);
}
