/*
 * test_ec_field.c - the EC kernels below the API: the generated curve
 * constants against OpenSSL's EC_GROUP; the field and scalar operations
 * (mod p and mod n) of each backend against BIGNUM, and the IFMA backend
 * against the portable one digit for digit, on edge inputs (0, 1, m - 1,
 * values up to the stated bounds, all-ones digits) and random ones; the
 * point formulas against OpenSSL's point arithmetic with every special
 * case (doubling inside an addition, P + (-P), the identity); the
 * fixed-base table; the lone-request (spread, ymm) kernels against the
 * batch ones.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/obj_mac.h>

#include "ec/ec_adx.h"
#include "ec/ec_internal.h"
#include "ec_impls.h"
#include "test_util.h"

static const struct ec_curve *const curves[] = {&mbc_ec_p256, &mbc_ec_p384};
#define NCURVES 2

/* ------------------------------------------------------------------------ */
/* BIGNUM <-> rows                                                           */
/* ------------------------------------------------------------------------ */

static BIGNUM *digits_bn(const uint64_t *d, unsigned k)
{
    BIGNUM *r = BN_new();
    BN_zero(r);
    for (unsigned j = k; j-- > 0;) {
        BN_lshift(r, r, 52);
        BN_add_word(r, d[j]);
    }
    return r;
}

static BIGNUM *mod_bn(const struct ec_mod *md, unsigned k)
{
    return mbt_lane_bn(md->m, k, 0);
}

/* group_of: OpenSSL's group of c. */
static EC_GROUP *group_of(const struct ec_curve *c)
{
    EC_GROUP *g =
        EC_GROUP_new_by_curve_name(c->id == MBC_CURVE_P256 ? NID_X9_62_prime256v1 : NID_secp384r1);
    assert_non_null(g);
    return g;
}

/* from_mont_bn: a R^-1 mod m. */
static BIGNUM *from_mont_bn(const BIGNUM *a, const BIGNUM *m, unsigned k, BN_CTX *ctx)
{
    BIGNUM *rinv = BN_new(), *r = BN_new(), *out = BN_new();
    BN_one(r);
    BN_lshift(r, r, (int)(52 * k));
    assert_non_null(BN_mod_inverse(rinv, r, m, ctx));
    BN_mod_mul(out, a, rinv, m, ctx);
    BN_free(rinv);
    BN_free(r);
    return out;
}

/* to_mont_bn: a R mod m. */
static BIGNUM *to_mont_bn(const BIGNUM *a, const BIGNUM *m, unsigned k, BN_CTX *ctx)
{
    BIGNUM *out = BN_new();
    BN_lshift(out, a, (int)(52 * k));
    BN_mod(out, out, m, ctx);
    return out;
}

/* ------------------------------------------------------------------------ */
/* 1. The constants                                                          */
/* ------------------------------------------------------------------------ */

static void check_mod(const struct ec_mod *md, const BIGNUM *want, unsigned k, BN_CTX *ctx)
{
    BIGNUM *m = mod_bn(md, k), *t = BN_new(), *r = BN_new();
    assert_int_equal(BN_cmp(m, want), 0);
    for (unsigned l = 0; l < 8; l++) {
        for (unsigned j = 0; j < k; j++) {
            /* every lane of every row the same */
            assert_true(md->m[j][l] == md->m[j][0] && md->one[j][l] == md->one[j][0] &&
                        md->rr[j][l] == md->rr[j][0] && md->m2[j][l] == md->m2[j][0]);
        }
        assert_true(md->m0inv[l] == md->m0inv[0]);
    }
    BN_lshift1(t, m);
    BIGNUM *m2 = mbt_lane_bn(md->m2, k, 0);
    assert_int_equal(BN_cmp(m2, t), 0);
    BN_one(r);
    BN_lshift(r, r, (int)(52 * k)); /* R */
    BIGNUM *one = mbt_lane_bn(md->one, k, 0), *rr = mbt_lane_bn(md->rr, k, 0);
    BN_mod(t, r, m, ctx);
    assert_int_equal(BN_cmp(one, t), 0);
    BN_mod_mul(t, t, t, m, ctx);
    assert_int_equal(BN_cmp(rr, t), 0);
    /* m0inv m == -1 mod 2^52 */
    assert_int_equal((md->m0inv[0] * md->m[0][0]) & MB52_MASK, MB52_MASK);
    if (md->p256) { /* the digits mb52_p256_lo relies on */
        static const uint64_t p256[5] = {MB52_MASK, (1ull << 44) - 1, 0, 1ull << 36,
                                         0xffffffff0000ull};
        assert_int_equal(k, 5);
        assert_int_equal(md->m0inv[0], 1);
        for (unsigned j = 0; j < 5; j++) {
            for (unsigned l = 0; l < 8; l++) {
                assert_int_equal(md->m[j][l], p256[j]);
            }
        }
    }
    BIGNUM *e = mbt_lane_bn(md->r3, k, 0); /* R^3 mod m */
    BN_mod(t, r, m, ctx);
    BN_mod_mul(t, t, rr, m, ctx);
    assert_int_equal(BN_cmp(e, t), 0);
    /* the divsteps constants: m in signed 62-bit limbs, m^-1 mod 2^62 */
    BN_zero(t);
    for (unsigned i = md->sg_limbs; i-- > 0;) {
        assert_true(md->sg_m[i] >= 0 && (uint64_t)md->sg_m[i] < (1ull << 62));
        BN_lshift(t, t, 62);
        BN_add_word(t, (BN_ULONG)md->sg_m[i]);
    }
    assert_int_equal(BN_cmp(t, m), 0);
    assert_int_equal((md->sg_minv * (uint64_t)md->sg_m[0]) & ((1ull << 62) - 1), 1);
    /* enough steps: up to 256 bits 590 half-delta divsteps, above the
     * divsteps of Bernstein-Yang's theorem 11.2 (ec_adx_inv.h) */
    const unsigned bits = (unsigned)BN_num_bits(m);
    assert_true(md->sg_batches * 62 >= (bits <= 256 ? 590 : (49 * bits + 57) / 17));
    BIGNUM *plain = digits_bn(md->digits, k); /* the glue's one-lane copy */
    assert_int_equal(BN_cmp(plain, m), 0);
    BN_free(plain);
    /* 16 m < R: the multiply takes inputs up to 4m */
    BN_lshift(t, m, 4);
    assert_true(BN_cmp(t, r) < 0);
    BN_free(m);
    BN_free(m2);
    BN_free(t);
    BN_free(r);
    BN_free(one);
    BN_free(rr);
    BN_free(e);
}

static void test_constants(void **state)
{
    (void)state;
    BN_CTX *ctx = BN_CTX_new();
    for (unsigned ci = 0; ci < NCURVES; ci++) {
        const struct ec_curve *c = curves[ci];
        EC_GROUP *g = group_of(c);
        BIGNUM *p = BN_new(), *a = BN_new(), *b = BN_new(), *gx = BN_new(), *gy = BN_new();
        assert_true(EC_GROUP_get_curve(g, p, a, b, ctx) == 1);
        assert_true(EC_POINT_get_affine_coordinates(g, EC_GROUP_get0_generator(g), gx, gy, ctx) ==
                    1);
        const unsigned k = c->k;
        assert_int_equal(k, mb52_digits(c->bits));
        assert_int_equal(c->bits, BN_num_bits(p));
        assert_int_equal(c->len, c->bits / 8);
        assert_int_equal(c->nwin, (c->bits + 1 + EC_WIN - 1) / EC_WIN);
        assert_int_equal(c->gnwin, (c->bits + 1 + c->gwin - 1) / c->gwin);
        assert_int_equal(8 * c->gblocks, 1u << (c->gwin - 1));
        assert_true(c->gblocks >= 2 && c->gblocks <= EC_GT_MAX_BLOCKS);
        assert_int_equal(c->gsteps, (c->gnwin + 7) / 8);
        assert_int_equal(ec_gtab_rows(c),
                         c->id == MBC_CURVE_P256 ? EC_P256_GTAB_ROWS : EC_P384_GTAB_ROWS);
        assert_true(k <= EC_MAX_K && c->len <= EC_MAX_LEN);
        check_mod(&c->p, p, k, ctx);
        check_mod(&c->n, EC_GROUP_get0_order(g), k, ctx);
        assert_int_equal(c->p.p256, c->id == MBC_CURVE_P256);
        /* a = -3 */
        BIGNUM *t = BN_new();
        BN_sub(t, p, a);
        assert_true(BN_is_word(t, 3));
        BIGNUM *bm = mbt_lane_bn(c->b, k, 0), *gxm = mbt_lane_bn(c->gx, k, 0),
               *gym = mbt_lane_bn(c->gy, k, 0);
        BIGNUM *bb = from_mont_bn(bm, p, k, ctx), *xx = from_mont_bn(gxm, p, k, ctx),
               *yy = from_mont_bn(gym, p, k, ctx);
        assert_int_equal(BN_cmp(bb, b), 0);
        assert_int_equal(BN_cmp(xx, gx), 0);
        assert_int_equal(BN_cmp(yy, gy), 0);
        uint8_t be[EC_MAX_LEN];
        BN_bn2binpad(p, be, (int)c->len);
        assert_memory_equal(be, c->def->p, c->len);
        BN_bn2binpad(EC_GROUP_get0_order(g), be, (int)c->len);
        assert_memory_equal(be, c->def->n, c->len);
        /* the radix-free definition: the same curve, the same sizes */
        const BIGNUM *const def_vals[] = {b, gx, gy};
        const uint8_t *const def_bytes[] = {c->def->b, c->def->gx, c->def->gy};
        for (size_t i = 0; i < 3; i++) {
            BN_bn2binpad(def_vals[i], be, (int)c->len);
            assert_memory_equal(be, def_bytes[i], c->len);
        }
        assert_int_equal(c->def->id, c->id);
        assert_int_equal(c->def->bits, c->bits);
        assert_int_equal(c->def->len, c->len);
        assert_ptr_equal(mbc_ec_curve(c->id), c);
        BN_free(t);
        BN_free(bm);
        BN_free(gxm);
        BN_free(gym);
        BN_free(bb);
        BN_free(xx);
        BN_free(yy);
        BN_free(p);
        BN_free(a);
        BN_free(b);
        BN_free(gx);
        BN_free(gy);
        EC_GROUP_free(g);
    }
    assert_null(mbc_ec_curve((mbc_curve)0));
    assert_null(mbc_ec_curve((mbc_curve)3));
    BN_CTX_free(ctx);
}

/* ------------------------------------------------------------------------ */
/* 2. Field and scalar operations                                            */
/* ------------------------------------------------------------------------ */

typedef void fe_test_fn(const struct ec_curve *c, const struct ec_mod *md, enum ec_fe_op op,
                        mb52_row *r, const mb52_row *a, const mb52_row *b);
typedef void pt_test_fn(const struct ec_curve *c, enum ec_pt_op op, struct ec_pt *r,
                        const struct ec_pt *p, const struct ec_pt *q);

static fe_test_fn *fe_of(const char *impl)
{
#if MBC_HAVE_IFMA
    if (strcmp(impl, "ifma") == 0) {
        return mbc_ec_fe_test_ifma;
    }
#endif
    (void)impl;
    return mbc_ec_fe_test_c;
}

static pt_test_fn *pt_of(const char *impl)
{
#if MBC_HAVE_IFMA
    if (strcmp(impl, "ifma") == 0) {
        return mbc_ec_pt_test_ifma;
    }
#endif
    (void)impl;
    return mbc_ec_pt_test_c;
}

static const char *ec_begin(void **state)
{
    const char *impl = mbt_use_impl(state);
    assert_string_equal(mbc_impl_name(MBC_ALG_EC), impl);
    return impl;
}

/*
 * operand: lane values of kind kind + l, all below bound * m (bound 2 or 4):
 * 0, 1, m - 1, m, m + 1, bound m - 1, all-ones digits (the largest value
 * of 52 j bits below the bound), 2^52 - 1 in every digit reduced below the
 * bound, and random values below the bound.
 */
static void operand(mb52_row *x, const BIGNUM *m, unsigned k, unsigned kind, unsigned bound,
                    BN_CTX *ctx)
{
    BIGNUM *v = BN_new(), *lim = BN_new();
    BN_copy(lim, m);
    BN_mul_word(lim, bound);
    for (unsigned l = 0; l < 8; l++) {
        switch ((kind + l) % 11) {
        case 0:
            BN_zero(v);
            break;
        case 1:
            BN_one(v);
            break;
        case 2:
            BN_copy(v, m);
            BN_sub_word(v, 1);
            break;
        case 3:
            BN_copy(v, m);
            break;
        case 4:
            BN_copy(v, m);
            BN_add_word(v, 1);
            break;
        case 5:
            BN_copy(v, lim);
            BN_sub_word(v, 1);
            break;
        case 6: { /* all-ones digits: 2^(52 j) - 1 for the largest j below the bound */
            unsigned j = k;
            do {
                BN_zero(v);
                BN_set_bit(v, (int)(52 * j));
                BN_sub_word(v, 1);
                j--;
            } while (BN_cmp(v, lim) >= 0);
            break;
        }
        case 7: /* 2^(52k) - 1 reduced below the bound */
            BN_zero(v);
            BN_set_bit(v, (int)(52 * k));
            BN_sub_word(v, 1);
            BN_mod(v, v, lim, ctx);
            break;
        case 8: /* m + small, with low digits all ones */
            BN_copy(v, m);
            BN_add_word(v, 0xFFFFFFFFull);
            break;
        default:
            BN_rand_range(v, lim);
            break;
        }
        mbt_bn_to_lane(x, k, l, v);
    }
    BN_free(v);
    BN_free(lim);
}

/* check_lane: lane l of r (k rows) is normalised, below 2m, and equals
 * want mod m. */
static void check_lane(const mb52_row *r, unsigned k, unsigned l, const BIGNUM *m,
                       const BIGNUM *want, BN_CTX *ctx, const char *what)
{
    BIGNUM *rb = mbt_lane_bn(r, k, l), *t = BN_new(), *w = BN_new();
    for (unsigned j = 0; j < k; j++) {
        if (r[j][l] > MB52_MASK) {
            fail_msg("%s lane %u: digit %u not normalised", what, l, j);
        }
    }
    BN_lshift1(t, m);
    if (BN_cmp(rb, t) >= 0) {
        fail_msg("%s lane %u: result not below 2m", what, l);
    }
    BN_nnmod(w, want, m, ctx);
    BN_nnmod(t, rb, m, ctx);
    if (BN_cmp(t, w) != 0) {
        fail_msg("%s lane %u: wrong value", what, l);
    }
    BN_free(rb);
    BN_free(t);
    BN_free(w);
}

static void test_fe_ops(void **state)
{
    const char *impl = ec_begin(state);
    fe_test_fn *fe = fe_of(impl);
    BN_CTX *ctx = BN_CTX_new();
    static const char *const op_names[] = {"mul", "sqr", "add", "sub", "neg", "inv", "canon"};
    mb52_row *a = aligned_alloc(64, EC_MAX_K * sizeof(mb52_row));
    mb52_row *b = aligned_alloc(64, EC_MAX_K * sizeof(mb52_row));
    mb52_row *r = aligned_alloc(64, EC_MAX_K * sizeof(mb52_row));
    mb52_row *rc = aligned_alloc(64, EC_MAX_K * sizeof(mb52_row));
    assert_true(a && b && r && rc);
    const size_t iters = mbt_scale(40);
    char what[96];
    for (unsigned ci = 0; ci < NCURVES; ci++) {
        const struct ec_curve *c = curves[ci];
        const unsigned k = c->k;
        for (unsigned mi = 0; mi < 2; mi++) {
            const struct ec_mod *md = mi == 0 ? &c->p : &c->n;
            BIGNUM *m = mod_bn(md, k);
            BIGNUM *R = BN_new(), *want = BN_new(), *t = BN_new();
            BN_one(R);
            BN_lshift(R, R, (int)(52 * k));
            BIGNUM *rinv = BN_mod_inverse(NULL, R, m, ctx);
            for (unsigned op = EC_FE_MUL; op <= EC_FE_CANON; op++) {
                const unsigned bound = op == EC_FE_MUL || op == EC_FE_SQR ? 4 : 2;
                for (size_t it = 0; it < iters; it++) {
                    memset(a, 0, EC_MAX_K * sizeof(mb52_row));
                    memset(b, 0, EC_MAX_K * sizeof(mb52_row));
                    operand(a, m, k, (unsigned)it, bound, ctx);
                    operand(b, m, k, (unsigned)(it * 7 + 3), bound, ctx);
                    fe(c, md, (enum ec_fe_op)op, r, a, b);
                    snprintf(what, sizeof(what), "%s %s mod %s, %s", impl,
                             c->id == MBC_CURVE_P256 ? "P-256" : "P-384", mi == 0 ? "p" : "n",
                             op_names[op]);
                    for (unsigned l = 0; l < 8; l++) {
                        BIGNUM *ab = mbt_lane_bn(a, k, l), *bb = mbt_lane_bn(b, k, l);
                        switch (op) {
                        case EC_FE_MUL:
                            BN_mod_mul(want, ab, bb, m, ctx);
                            BN_mod_mul(want, want, rinv, m, ctx);
                            break;
                        case EC_FE_SQR:
                            BN_mod_mul(want, ab, ab, m, ctx);
                            BN_mod_mul(want, want, rinv, m, ctx);
                            break;
                        case EC_FE_ADD:
                            BN_add(want, ab, bb);
                            break;
                        case EC_FE_SUB:
                            BN_sub(want, ab, bb);
                            break;
                        case EC_FE_NEG:
                            BN_sub(want, m, ab);
                            break;
                        case EC_FE_INV: /* (a/R)^-1 R = R^2 / a; 0 for 0 */
                            BN_nnmod(t, ab, m, ctx);
                            if (BN_is_zero(t)) {
                                BN_zero(want);
                            } else {
                                BN_mod_inverse(want, t, m, ctx);
                                BN_mod_mul(want, want, R, m, ctx);
                                BN_mod_mul(want, want, R, m, ctx);
                            }
                            break;
                        default:
                            BN_copy(want, ab);
                            break;
                        }
                        check_lane(r, k, l, m, want, ctx, what);
                        if (op == EC_FE_CANON) {
                            BIGNUM *rb = mbt_lane_bn(r, k, l);
                            assert_true(BN_cmp(rb, m) < 0);
                            BN_free(rb);
                        }
                        BN_free(ab);
                        BN_free(bb);
                    }
                    /* the dedicated squaring: the multiply's digits */
                    if (op == EC_FE_SQR) {
                        fe(c, md, EC_FE_MUL, rc, a, a);
                        assert_memory_equal(r, rc, k * sizeof(mb52_row));
                    }
                    /* in place, and digit for digit the portable backend */
                    mbc_ec_fe_test_c(c, md, (enum ec_fe_op)op, rc, a, b);
                    assert_memory_equal(r, rc, k * sizeof(mb52_row));
                    fe(c, md, (enum ec_fe_op)op, a, a, b);
                    assert_memory_equal(a, rc, k * sizeof(mb52_row));
                }
            }
            BN_free(m);
            BN_free(R);
            BN_free(want);
            BN_free(t);
            BN_free(rinv);
        }
    }
    free(a);
    free(b);
    free(r);
    free(rc);
    BN_CTX_free(ctx);
}

/* ------------------------------------------------------------------------ */
/* 3. Point formulas                                                         */
/* ------------------------------------------------------------------------ */

/* set_point: lane l of p = the OpenSSL point q (NULL or infinity: the
 * identity), projective with a random Z (Montgomery form), or Z = R when
 * affine is set. */
static void set_point(const struct ec_curve *c, struct ec_pt *p, unsigned l, const EC_GROUP *g,
                      const EC_POINT *q, int affine, BN_CTX *ctx)
{
    BIGNUM *pm = mod_bn(&c->p, c->k), *x = BN_new(), *y = BN_new(), *z = BN_new();
    if (q == NULL || EC_POINT_is_at_infinity(g, q)) {
        BN_zero(x);
        BN_one(y);
        BN_zero(z);
    } else {
        assert_true(EC_POINT_get_affine_coordinates(g, q, x, y, ctx) == 1);
        if (affine) {
            BN_one(z);
        } else {
            BN_rand_range(z, pm);
            if (BN_is_zero(z)) {
                BN_one(z);
            }
        }
        BN_mod_mul(x, x, z, pm, ctx);
        BN_mod_mul(y, y, z, pm, ctx);
    }
    BIGNUM *xm = to_mont_bn(x, pm, c->k, ctx), *ym = to_mont_bn(y, pm, c->k, ctx),
           *zm = to_mont_bn(z, pm, c->k, ctx);
    mbt_bn_to_lane(p->x, c->k, l, xm);
    mbt_bn_to_lane(p->y, c->k, l, ym);
    mbt_bn_to_lane(p->z, c->k, l, zm);
    BN_free(pm);
    BN_free(x);
    BN_free(y);
    BN_free(z);
    BN_free(xm);
    BN_free(ym);
    BN_free(zm);
}

/* check_point: lane l of p (projective, Montgomery) is the OpenSSL point
 * want (infinity: Z = 0 and X = 0, Y != 0). */
static void check_point(const struct ec_curve *c, const struct ec_pt *p, unsigned l,
                        const EC_GROUP *g, const EC_POINT *want, BN_CTX *ctx, const char *what)
{
    const unsigned k = c->k;
    BIGNUM *pm = mod_bn(&c->p, k);
    BIGNUM *xr = mbt_lane_bn(p->x, k, l), *yr = mbt_lane_bn(p->y, k, l),
           *zr = mbt_lane_bn(p->z, k, l);
    BIGNUM *x = from_mont_bn(xr, pm, k, ctx), *y = from_mont_bn(yr, pm, k, ctx),
           *z = from_mont_bn(zr, pm, k, ctx);
    BIGNUM *two_p = BN_new();
    BN_lshift1(two_p, pm);
    if (BN_cmp(xr, two_p) >= 0 || BN_cmp(yr, two_p) >= 0 || BN_cmp(zr, two_p) >= 0) {
        fail_msg("%s lane %u: a coordinate is not below 2p", what, l);
    }
    if (EC_POINT_is_at_infinity(g, want)) {
        if (!BN_is_zero(z) || !BN_is_zero(x) || BN_is_zero(y)) {
            fail_msg("%s lane %u: expected the identity", what, l);
        }
    } else {
        BIGNUM *wx = BN_new(), *wy = BN_new(), *zi = BN_new();
        assert_true(EC_POINT_get_affine_coordinates(g, want, wx, wy, ctx) == 1);
        if (BN_is_zero(z)) {
            fail_msg("%s lane %u: got the identity", what, l);
        }
        BN_mod_inverse(zi, z, pm, ctx);
        BN_mod_mul(x, x, zi, pm, ctx);
        BN_mod_mul(y, y, zi, pm, ctx);
        if (BN_cmp(x, wx) != 0 || BN_cmp(y, wy) != 0) {
            fail_msg("%s lane %u: wrong point", what, l);
        }
        BN_free(wx);
        BN_free(wy);
        BN_free(zi);
    }
    BN_free(pm);
    BN_free(xr);
    BN_free(yr);
    BN_free(zr);
    BN_free(x);
    BN_free(y);
    BN_free(z);
    BN_free(two_p);
}

static void test_pt_ops(void **state)
{
    const char *impl = ec_begin(state);
    pt_test_fn *pt = pt_of(impl);
    BN_CTX *ctx = BN_CTX_new();
    struct ec_pt *p = aligned_alloc(64, 4 * sizeof(struct ec_pt));
    assert_non_null(p);
    struct ec_pt *q = p + 1, *r = p + 2, *rc = p + 3;
    char what[96];
    const size_t iters = mbt_scale(16);
    for (unsigned ci = 0; ci < NCURVES; ci++) {
        const struct ec_curve *c = curves[ci];
        EC_GROUP *g = group_of(c);
        EC_POINT *a[8], *b[8], *want[8];
        BIGNUM *s = BN_new();
        for (unsigned l = 0; l < 8; l++) {
            a[l] = EC_POINT_new(g);
            b[l] = EC_POINT_new(g);
            want[l] = EC_POINT_new(g);
        }
        for (size_t it = 0; it < iters; it++) {
            memset(p, 0, 4 * sizeof(struct ec_pt));
            /* lane kinds: random + random, P + P (doubling inside the
             * addition), P + (-P), O + P, P + O, O + O, small multiples,
             * G + 2G */
            for (unsigned l = 0; l < 8; l++) {
                BN_rand_range(s, EC_GROUP_get0_order(g));
                EC_POINT_mul(g, a[l], s, NULL, NULL, ctx);
                BN_rand_range(s, EC_GROUP_get0_order(g));
                EC_POINT_mul(g, b[l], s, NULL, NULL, ctx);
                switch ((l + it) % 8) {
                case 1:
                    EC_POINT_copy(b[l], a[l]);
                    break;
                case 2:
                    EC_POINT_copy(b[l], a[l]);
                    EC_POINT_invert(g, b[l], ctx);
                    break;
                case 3:
                    EC_POINT_set_to_infinity(g, a[l]);
                    break;
                case 4:
                    EC_POINT_set_to_infinity(g, b[l]);
                    break;
                case 5:
                    EC_POINT_set_to_infinity(g, a[l]);
                    EC_POINT_set_to_infinity(g, b[l]);
                    break;
                case 6:
                    BN_set_word(s, 1 + it % 5);
                    EC_POINT_mul(g, a[l], s, NULL, NULL, ctx);
                    BN_set_word(s, 1 + it % 3);
                    EC_POINT_mul(g, b[l], s, NULL, NULL, ctx);
                    break;
                default:
                    break;
                }
            }
            for (unsigned op = EC_PT_ADD; op <= EC_PT_DBL; op++) {
                for (unsigned l = 0; l < 8; l++) {
                    /* the mixed addition takes an affine point that is not
                     * the identity */
                    if (op == EC_PT_MADD && EC_POINT_is_at_infinity(g, b[l])) {
                        EC_POINT_copy(b[l], EC_GROUP_get0_generator(g));
                    }
                    set_point(c, p, l, g, a[l], 0, ctx);
                    set_point(c, q, l, g, b[l], op == EC_PT_MADD, ctx);
                    if (op == EC_PT_DBL) {
                        EC_POINT_dbl(g, want[l], a[l], ctx);
                    } else {
                        EC_POINT_add(g, want[l], a[l], b[l], ctx);
                    }
                }
                pt(c, (enum ec_pt_op)op, r, p, q);
                mbc_ec_pt_test_c(c, (enum ec_pt_op)op, rc, p, q);
                snprintf(what, sizeof(what), "%s %s %s", impl,
                         c->id == MBC_CURVE_P256 ? "P-256" : "P-384",
                         (const char *const[]){"add", "madd", "dbl"}[op]);
                for (unsigned l = 0; l < 8; l++) {
                    check_point(c, r, l, g, want[l], ctx, what);
                }
                for (unsigned j = 0; j < c->k; j++) {
                    assert_memory_equal(r->x[j], rc->x[j], sizeof(mb52_row));
                    assert_memory_equal(r->y[j], rc->y[j], sizeof(mb52_row));
                    assert_memory_equal(r->z[j], rc->z[j], sizeof(mb52_row));
                }
                /* in place */
                pt(c, (enum ec_pt_op)op, p, p, q);
                for (unsigned l = 0; l < 8; l++) {
                    check_point(c, p, l, g, want[l], ctx, what);
                }
            }
        }
        for (unsigned l = 0; l < 8; l++) {
            EC_POINT_free(a[l]);
            EC_POINT_free(b[l]);
            EC_POINT_free(want[l]);
        }
        BN_free(s);
        EC_GROUP_free(g);
    }
    free(p);
    BN_CTX_free(ctx);
}

/* ------------------------------------------------------------------------ */
/* 4. The fixed-base table                                                   */
/* ------------------------------------------------------------------------ */

static void test_gtab(void **state)
{
    (void)state;
    BN_CTX *ctx = BN_CTX_new();
    for (unsigned ci = 0; ci < NCURVES; ci++) {
        const struct ec_curve *c = curves[ci];
        const unsigned k = c->k;
        const mb52_row *tab = mbc_ec_gtab(c);
        assert_ptr_equal(mbc_ec_gtab(c), tab); /* built once */
        EC_GROUP *g = group_of(c);
        EC_POINT *q = EC_POINT_new(g);
        BIGNUM *s = BN_new(), *pm = mod_bn(&c->p, k), *x = BN_new(), *y = BN_new();
        const unsigned nb = c->gblocks;
        for (unsigned i = 0; i < c->gnwin; i++) {
            for (unsigned j = 0; j < 8 * nb; j++) {
                /* every entry of the first and last windows, a few of the others */
                if (i >= 1 && i + 1 < c->gnwin && (i * 64 + j) % 13 != 0) {
                    continue;
                }
                BN_set_word(s, j + 1);
                BN_lshift(s, s, (int)(c->gwin * i));
                EC_POINT_mul(g, q, s, NULL, NULL, ctx);
                EC_POINT_get_affine_coordinates(g, q, x, y, ctx);
                /* digit r of entry j: lane j mod 8 of row j / 8 of digit row r */
                EC_ALIGN mb52_row e[2 * EC_MAX_K];
                for (unsigned r = 0; r < 2 * k; r++) {
                    e[r][0] = tab[((size_t)i * 2 * k + r) * nb + j / 8][j % 8];
                }
                BIGNUM *ex = mbt_lane_bn(e, k, 0), *ey = mbt_lane_bn(e + k, k, 0);
                BIGNUM *wx = to_mont_bn(x, pm, k, ctx), *wy = to_mont_bn(y, pm, k, ctx);
                if (BN_cmp(ex, wx) != 0 || BN_cmp(ey, wy) != 0) {
                    fail_msg("P-%u table: window %u, entry %u differs", c->bits, i, j);
                }
                BN_free(ex);
                BN_free(ey);
                BN_free(wx);
                BN_free(wy);
            }
        }
        BN_free(s);
        BN_free(pm);
        BN_free(x);
        BN_free(y);
        EC_POINT_free(q);
        EC_GROUP_free(g);
    }
    BN_CTX_free(ctx);
}

/* ------------------------------------------------------------------------ */
/* 5. The lone-request (spread) kernels against the batch kernels            */
/* ------------------------------------------------------------------------ */

typedef void base_fn(struct ec_base_args *a);
typedef void sign_fn(struct ec_sign_args *a);

/* random_scalar: lane l of r gets a scalar in [1, n-1]: random, or one of
 * 1, 2, n - 1, n - 2, 31, 32, 33 (window edges). */
static void random_scalar(const struct ec_curve *c, mb52_row *r, unsigned l, unsigned kind)
{
    BIGNUM *n = mod_bn(&c->n, c->k), *v = BN_new();
    static const unsigned small[] = {1, 2, 31, 32, 33, 16, 17};
    switch (kind % 10) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
        BN_set_word(v, small[kind % 10]);
        break;
    case 7:
        BN_copy(v, n);
        BN_sub_word(v, 1);
        break;
    case 8:
        BN_copy(v, n);
        BN_sub_word(v, 2);
        break;
    default:
        do {
            BN_rand_range(v, n);
        } while (BN_is_zero(v));
    }
    mbt_bn_to_lane(r, c->k, l, v);
    BN_free(n);
    BN_free(v);
}

static void test_spread(void **state)
{
    const char *impl = ec_begin(state);
    base_fn *batch = mbc_ec_base_kern_c, *spread = mbc_ec_base_spread_kern_c;
    sign_fn *sbatch = mbc_ec_sign_kern_c, *sspread = mbc_ec_sign_spread_kern_c;
#if MBC_HAVE_IFMA
    if (strcmp(impl, "ifma") == 0) {
        batch = mbc_ec_base_kern_ifma;
        spread = mbc_ec_base_spread_kern_ifma;
        sbatch = mbc_ec_sign_kern_ifma;
        sspread = mbc_ec_sign_spread_kern_ifma;
    }
#else
    (void)impl;
#endif
    EC_ALIGN mb52_row d[EC_MAX_K], k[EC_MAX_K], z[EC_MAX_K];
    EC_ALIGN mb52_row x[2][EC_MAX_K], y[2][EC_MAX_K], r[2][EC_MAX_K], s[2][EC_MAX_K];
    const size_t iters = mbt_scale(24);
    for (unsigned ci = 0; ci < NCURVES; ci++) {
        const struct ec_curve *c = curves[ci];
        const size_t bytes = c->k * sizeof(mb52_row);
        for (size_t it = 0; it < iters; it++) {
            memset(d, 0, sizeof(d));
            memset(k, 0, sizeof(k));
            memset(z, 0, sizeof(z));
            for (unsigned l = 0; l < 8; l++) {
                random_scalar(c, d, l, (unsigned)(it + l));
                random_scalar(c, k, l, (unsigned)(it * 3 + l + 5));
                random_scalar(c, z, l, 9);
            }
            for (int v = 0; v < 2; v++) {
                struct ec_base_args a = {c, mbc_ec_gtab(c), d, x[v], y[v], v ? 1u : 0xFFu, 0, 0};
                (v ? spread : batch)(&a);
                assert_int_equal(a.ok_lanes, v ? 1u : 0xFFu);
                struct ec_sign_args sa = {c,    mbc_ec_gtab(c), k, d, z, r[v],
                                          s[v], v ? 1u : 0xFFu, 0, 0, 0};
                (v ? sspread : sbatch)(&sa);
                assert_int_equal(sa.ok_lanes, v ? 1u : 0xFFu);
                assert_int_equal(sa.zero_lanes, 0);
            }
            /* lane 0 of the spread run is lane 0 of the batch */
            for (unsigned j = 0; j < c->k; j++) {
                assert_true(x[0][j][0] == x[1][j][0] && y[0][j][0] == y[1][j][0]);
                assert_true(r[0][j][0] == r[1][j][0] && s[0][j][0] == s[1][j][0]);
            }
            /* and the portable batch kernel gives every lane's digits */
            EC_ALIGN mb52_row xc[EC_MAX_K], yc[EC_MAX_K];
            struct ec_base_args a = {c, mbc_ec_gtab(c), d, xc, yc, 0xFF, 0, 0};
            mbc_ec_base_kern_c(&a);
            assert_memory_equal(xc, x[0], bytes);
            assert_memory_equal(yc, y[0], bytes);
        }
    }
}

/*
 * The ymm build (_ifma4, lanes 0..3) against the zmm batch kernels, digit
 * for digit, on every kernel: key generation, signing, verification (lane 1
 * with another lane's s: invalid) and ECDH (lane 2 with a peer point off
 * the curve), random and edge scalars.
 */
static void test_ifma4(void **state)
{
#if MBC_HAVE_IFMA
    ec_begin(state);
    static EC_ALIGN struct ec_pt vt[EC_VT_ENTRIES];
    EC_ALIGN mb52_row d[EC_MAX_K], k[EC_MAX_K], z[EC_MAX_K], d2[EC_MAX_K];
    EC_ALIGN mb52_row x[2][EC_MAX_K], y[2][EC_MAX_K], r[2][EC_MAX_K], s[2][EC_MAX_K];
    EC_ALIGN mb52_row sv[EC_MAX_K], py[EC_MAX_K], sx[2][EC_MAX_K];
    const size_t iters = mbt_scale(4);
    for (unsigned ci = 0; ci < NCURVES; ci++) {
        const struct ec_curve *c = curves[ci];
        for (size_t it = 0; it < iters; it++) {
            memset(d, 0, sizeof(d));
            memset(k, 0, sizeof(k));
            memset(z, 0, sizeof(z));
            memset(d2, 0, sizeof(d2));
            for (unsigned l = 0; l < 8; l++) {
                random_scalar(c, d, l, (unsigned)(it * 4 + l));
                random_scalar(c, k, l, (unsigned)(it * 3 + l + 5));
                random_scalar(c, z, l, 9);
                random_scalar(c, d2, l, (unsigned)(it + 2 * l));
            }
            memset(x, 0, sizeof(x));
            memset(y, 0, sizeof(y));
            memset(r, 0, sizeof(r));
            memset(s, 0, sizeof(s));
            memset(sx, 0, sizeof(sx));
            for (int v = 0; v < 2; v++) {
                const unsigned lanes = v ? 0x0Fu : 0xFFu;
                struct ec_base_args a = {c, mbc_ec_gtab(c), d, x[v], y[v], lanes, 0, 0};
                (v ? mbc_ec_base_kern_ifma4 : mbc_ec_base_kern_ifma)(&a);
                assert_int_equal(a.ok_lanes, lanes);
                struct ec_sign_args sa = {c, mbc_ec_gtab(c), k, d, z, r[v], s[v], lanes, 0, 0, 0};
                (v ? mbc_ec_sign_kern_ifma4 : mbc_ec_sign_kern_ifma)(&sa);
                assert_int_equal(sa.ok_lanes, lanes);
                assert_int_equal(sa.zero_lanes, 0);
            }
            for (unsigned j = 0; j < c->k; j++) {
                for (unsigned l = 0; l < 4; l++) {
                    assert_true(x[0][j][l] == x[1][j][l] && y[0][j][l] == y[1][j][l]);
                    assert_true(r[0][j][l] == r[1][j][l] && s[0][j][l] == s[1][j][l]);
                }
                sv[j][0] = s[0][j][0]; /* lane 1 gets lane 0's s: invalid */
                sv[j][1] = s[0][j][0];
                for (unsigned l = 2; l < 8; l++) {
                    sv[j][l] = s[0][j][l];
                }
                memcpy(py[j], y[0][j], sizeof(py[j]));
            }
            py[0][2] ^= 1; /* lane 2's peer point leaves the curve */
            unsigned vok[2], pok[2], eok[2];
            for (int v = 0; v < 2; v++) {
                const unsigned lanes = v ? 0x0Fu : 0xFFu;
                struct ec_verify_args va = {c,    mbc_ec_gtab(c), r[0], sv,    z,
                                            x[0], y[0],           vt,   lanes, 0};
                (v ? mbc_ec_verify_kern_ifma4 : mbc_ec_verify_kern_ifma)(&va);
                vok[v] = va.ok_lanes;
                struct ec_ecdh_args ea = {c, d2, x[0], py, sx[v], vt, lanes, 0, 0, 0};
                (v ? mbc_ec_ecdh_kern_ifma4 : mbc_ec_ecdh_kern_ifma)(&ea);
                pok[v] = ea.peer_ok;
                eok[v] = ea.ok_lanes;
            }
            assert_int_equal(vok[0], 0xFFu & ~2u);
            assert_int_equal(vok[1], 0x0Fu & ~2u);
            assert_int_equal(pok[0], 0xFFu & ~4u);
            assert_int_equal(pok[1], 0x0Fu & ~4u);
            assert_int_equal(eok[1], eok[0] & 0x0Fu);
            for (unsigned j = 0; j < c->k; j++) {
                for (unsigned l = 0; l < 4; l++) {
                    if (l != 2) {
                        assert_true(sx[0][j][l] == sx[1][j][l]);
                    }
                }
            }
        }
    }
    print_message("ifma4: every kernel equals the zmm batch on lanes 0..3 (%zu rounds per "
                  "curve)\n",
                  iters);
#else
    mbt_use_impl(state); /* skips: no IFMA kernels in this build */
#endif
}

/* The dispatched kernel really runs (and counts its batches). */
static void test_dispatch_hits(void **state)
{
    const char *impl = mbt_use_ec_impl(state);
    assert_string_equal(mbc_impl_name(MBC_ALG_EC), impl);
    const int c = strcmp(impl, "c") == 0, adx = strcmp(impl, "adx") == 0;
    uint8_t d[48], point[97];
    /* a lone key generation of each curve: _c1 on c, the scalar kernel on
     * adx, the spread kernel on ifma (ec_impl.c) */
    const int ifma = strcmp(impl, "ifma") == 0;
    for (int cv = MBC_CURVE_P256; cv <= MBC_CURVE_P384; cv++) {
        const unsigned long k8 = mbc_ec_kern_hits_c, k1 = mbc_ec_kern_hits_c1;
#if MBC_HAVE_IFMA
        const unsigned long kh = mbc_ec_kern_hits_ifma;
#endif
#if MBC_HAVE_ADX
        const unsigned long kx = mbc_ec_kern_hits_adx;
#endif
        assert_int_equal(mbc_ec_keygen(d, point, (mbc_curve)cv), MBC_OK);
        assert_int_equal(mbc_ec_kern_hits_c1 - k1, c ? 1 : 0);
        assert_int_equal(mbc_ec_kern_hits_c - k8, 0);
#if MBC_HAVE_IFMA
        assert_int_equal(mbc_ec_kern_hits_ifma - kh, ifma ? 1 : 0);
#endif
#if MBC_HAVE_ADX
        assert_int_equal(mbc_ec_kern_hits_adx - kx, adx ? 1 : 0);
#endif
    }
    /* the P-256 key the tests below use */
    assert_int_equal(mbc_ec_keygen(d, point, MBC_CURVE_P256), MBC_OK);
    mbc_ec_priv_key *key = NULL;
    assert_int_equal(mbc_ec_priv_key_new(&key, MBC_CURVE_P256, d, 32), MBC_OK);
    uint8_t sec[MBC_LANES][32];
    uint8_t *so[MBC_LANES];
    const uint8_t *peer[MBC_LANES];
    const mbc_ec_priv_key *keys[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        so[l] = sec[l];
        peer[l] = point;
        keys[l] = key;
    }
    static const unsigned masks[3] = {0x10, 0x92, 0x1F};
    /* P-256 signing (op 0) and ECDH (op 1) of 1, 3 and 5 requests: one by
     * one on _c1 (c) or on the scalar kernel (adx); on IFMA a lone signature
     * spread, a lone ECDH on the scalar kernel, 2 to 4 on the ymm kernel, 5
     * on the zmm batch */
    uint8_t sig[MBC_LANES][64], dg[32] = {5};
    uint8_t *sg[MBC_LANES];
    const uint8_t *dgs[MBC_LANES];
    size_t dlens[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        sg[l] = sig[l];
        dgs[l] = dg;
        dlens[l] = sizeof(dg);
    }
    for (unsigned op = 0; op < 2; op++) {
        for (unsigned i = 0; i < 3; i++) {
            const unsigned long e1 = mbc_ec_kern_hits_c1;
#if MBC_HAVE_IFMA
            const unsigned long e8 = mbc_ec_kern_hits_ifma, e4 = mbc_ec_kern_hits_ifma4;
#endif
#if MBC_HAVE_ADX
            const unsigned long ex = mbc_ec_kern_hits_adx;
#endif
            const mbc_status st =
                op == 0 ? mbc_ecdsa_sign_mb8(sg, dgs, dlens, keys, MBC_CURVE_P256, masks[i])
                        : mbc_ecdh_mb8(so, peer, keys, MBC_CURVE_P256, masks[i]);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                assert_int_equal(mbc_lane_code(st, l),
                                 (masks[i] >> l) & 1u ? MBC_LANE_OK : MBC_LANE_EMPTY);
            }
            const unsigned n = (unsigned)__builtin_popcount(masks[i]);
            if (c) {
                assert_int_equal(mbc_ec_kern_hits_c1 - e1, n);
            } else if (adx) {
#if MBC_HAVE_ADX
                assert_int_equal(mbc_ec_kern_hits_adx - ex, n);
#endif
                assert_int_equal(mbc_ec_kern_hits_c1 - e1, 0);
            } else {
#if MBC_HAVE_IFMA && MBC_HAVE_ADX
                const unsigned ymm = n >= 2 && n <= 4;
                assert_int_equal(mbc_ec_kern_hits_ifma4 - e4, ymm);
                assert_int_equal(mbc_ec_kern_hits_ifma - e8, n > 4 || (n == 1 && op == 0));
#elif MBC_HAVE_IFMA /* no scalar tier: a lone ECDH is ymm */
                const unsigned ymm = n <= 4 && (n >= 2 || op == 1);
                assert_int_equal(mbc_ec_kern_hits_ifma4 - e4, ymm);
                assert_int_equal(mbc_ec_kern_hits_ifma - e8, 1 - ymm);
#endif
#if MBC_HAVE_ADX
                assert_int_equal(mbc_ec_kern_hits_adx - ex, n == 1 && op == 1);
#endif
                assert_int_equal(mbc_ec_kern_hits_c1 - e1, 0);
            }
        }
    }
    mbc_ec_priv_key_free(key);
}

#if MBC_HAVE_ADX
/* bn_words: r (n 64-bit limbs) = a. */
static void bn_words(uint64_t *r, const BIGNUM *a, unsigned n)
{
    uint8_t be[48];
    assert_true(BN_bn2binpad(a, be, (int)(8 * n)) == (int)(8 * n));
    for (unsigned j = 0; j < n; j++) {
        r[j] = 0;
        for (unsigned b = 0; b < 8; b++) {
            r[j] |= (uint64_t)be[8 * (n - 1 - j) + 7 - b] << (8 * b);
        }
    }
}

/* edge_value: the i-th input below m (n limbs) of the scalar kernels'
 * tests: 0, 1, 2, m - 1, m - 2, values near m / 2, powers of two,
 * all-ones limbs below m, and random ones from i = 12 on. */
static void edge_value(BIGNUM *a, const BIGNUM *m, unsigned i, unsigned n)
{
    BN_zero(a);
    switch (i) {
    case 0:
        break;
    case 1:
        BN_one(a);
        break;
    case 2:
        BN_set_word(a, 2);
        break;
    case 3:
        BN_sub(a, m, BN_value_one());
        break;
    case 4:
        BN_sub(a, m, BN_value_one());
        BN_sub_word(a, 1);
        break;
    case 5:
        BN_rshift1(a, m);
        break;
    case 6:
        BN_rshift1(a, m);
        BN_add_word(a, 1);
        break;
    case 7:
        BN_set_bit(a, 64 * n - 2);
        break;
    case 8:
        BN_set_bit(a, 61);
        break;
    case 9:
        BN_set_bit(a, 62);
        break;
    case 10:
        BN_set_bit(a, 124);
        BN_sub_word(a, 1);
        break;
    case 11:
        BN_lshift(a, BN_value_one(), 64 * n - 64);
        BN_sub_word(a, 1);
        break;
    default:
        assert_true(BN_rand_range(a, m));
    }
}

static int have_adx(const char *what)
{
    const uint64_t need = MBC_CPU_BMI2 | MBC_CPU_ADX;
    if ((mbc_cpu_restrict(~0ull) & need) != need) {
        print_message("no BMI2/ADX on this CPU: the scalar kernels' %s is not run\n", what);
        return 0;
    }
    return 1;
}

/* modulus of curve group g: its order (mod_n) or p */
static BIGNUM *modulus_of(EC_GROUP *g, int mod_n, BN_CTX *ctx)
{
    BIGNUM *m = BN_new();
    if (mod_n) {
        BN_copy(m, EC_GROUP_get0_order(g));
    } else {
        assert_true(EC_GROUP_get_curve(g, m, NULL, NULL, ctx));
    }
    return m;
}

/* test_adx_inv: the scalar kernels' divsteps inversion mod p and mod n of
 * each curve against BN_mod_inverse, on the inputs of edge_value. */
static void test_adx_inv(void **state)
{
    (void)state;
    if (!have_adx("inversion")) {
        skip();
    }
    BN_CTX *ctx = BN_CTX_new();
    for (unsigned ci = 0; ci < NCURVES; ci++) {
        const struct ec_curve *c = curves[ci];
        const unsigned n = c->id == MBC_CURVE_P256 ? 4 : 6;
        EC_GROUP *g = group_of(c);
        for (int mod_n = 0; mod_n < 2; mod_n++) {
            BIGNUM *m = modulus_of(g, mod_n, ctx);
            const unsigned count = mbt_scale(300);
            for (unsigned i = 0; i < count + 12; i++) {
                BIGNUM *a = BN_new();
                edge_value(a, m, i, n);
                uint64_t aw[6], rw[6], ew[6] = {0};
                bn_words(aw, a, n);
                mbc_ec_adx_inv(c->id, mod_n, rw, aw);
                if (!BN_is_zero(a)) {
                    BIGNUM *e = BN_mod_inverse(NULL, a, m, ctx);
                    assert_non_null(e);
                    bn_words(ew, e, n);
                    BN_free(e);
                }
                if (memcmp(rw, ew, 8 * n) != 0) {
                    char *ah = BN_bn2hex(a);
                    print_error("P-%u inverse mod %s of %s wrong\n", c->bits, mod_n ? "n" : "p",
                                ah);
                    OPENSSL_free(ah);
                    fail();
                }
                BN_free(a);
            }
            BN_free(m);
        }
        EC_GROUP_free(g);
    }
    BN_CTX_free(ctx);
}

/* test_adx_mul: the scalar kernels' Montgomery multiply and square mod p
 * (each curve's own assembly: P-256's and P-384's special reductions,
 * P-384's separate square) and multiply mod n against BN_mod_mul by
 * R^-1 = 2^(-64 n), on every pair of edge_value's edge inputs and on
 * random pairs. */
static void test_adx_mul(void **state)
{
    (void)state;
    if (!have_adx("multiplication")) {
        skip();
    }
    BN_CTX *ctx = BN_CTX_new();
    for (unsigned ci = 0; ci < NCURVES; ci++) {
        const struct ec_curve *c = curves[ci];
        const unsigned n = c->id == MBC_CURVE_P256 ? 4 : 6;
        EC_GROUP *g = group_of(c);
        for (int op = 0; op < 3; op++) { /* p multiply, p square, n multiply */
            BIGNUM *m = modulus_of(g, op == 2, ctx), *rinv = BN_new(), *a = BN_new(), *b = BN_new(),
                   *e = BN_new();
            BN_lshift(rinv, BN_value_one(), 64 * n);
            assert_non_null(BN_mod_inverse(rinv, rinv, m, ctx));
            const unsigned count = mbt_scale(2000);
            for (unsigned i = 0; i < 12 * 12 + count; i++) {
                edge_value(a, m, i < 144 ? i / 12 : 12, n);
                if (op == 1) {
                    BN_copy(b, a);
                } else {
                    edge_value(b, m, i < 144 ? i % 12 : 12, n);
                }
                uint64_t aw[6], bw[6], rw[6], ew[6];
                bn_words(aw, a, n);
                bn_words(bw, b, n);
                mbc_ec_adx_mul(c->id, op, rw, aw, bw);
                assert_true(BN_mod_mul(e, a, b, m, ctx));
                assert_true(BN_mod_mul(e, e, rinv, m, ctx));
                bn_words(ew, e, n);
                if (memcmp(rw, ew, 8 * n) != 0) {
                    char *ah = BN_bn2hex(a), *bh = BN_bn2hex(b);
                    print_error("P-%u %s of %s and %s wrong\n", c->bits,
                                op == 0   ? "multiply mod p"
                                : op == 1 ? "square mod p"
                                          : "multiply mod n",
                                ah, bh);
                    OPENSSL_free(ah);
                    OPENSSL_free(bh);
                    fail();
                }
            }
            BN_free(m);
            BN_free(rinv);
            BN_free(a);
            BN_free(b);
            BN_free(e);
        }
        EC_GROUP_free(g);
    }
    BN_CTX_free(ctx);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constants),
        MBT_IMPL_TESTS(test_fe_ops),
        MBT_IMPL_TESTS(test_pt_ops),
        cmocka_unit_test(test_gtab),
        MBT_IMPL_TESTS(test_spread),
        MBT_EC_IMPL_TESTS(test_dispatch_hits),
        {"test_ifma4/ifma", test_ifma4, NULL, NULL, (void *)"ifma"},
#if MBC_HAVE_ADX
        cmocka_unit_test(test_adx_inv),
        cmocka_unit_test(test_adx_mul),
#endif
    };
    return mbt_run("ec_field", tests);
}
