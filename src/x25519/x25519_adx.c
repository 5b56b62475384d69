/*
 * x25519_adx.c - the scalar X25519 kernels (tier MBC_TIER_SCALAR): one
 * request, in slot (lane) 0 of the mb52 rows of struct x25519_args, on the
 * radix-2^64 field of fe25519_x64.h. Compiled with -mbmi2 -madx (meson.build)
 * and selected only where the CPU has BMI2 and ADX (x25519_impl.c); the
 * rest of the library stays baseline x86-64.
 *
 * They compute what the vector kernels of x25519_kern.c compute, by the same
 * methods, so the results are the same digit for digit: the Montgomery
 * ladder of RFC 7748 for a derive, and for a public key the signed 4-bit
 * windows on edwards25519 over the same table (mbc_x25519_table), whose
 * entries are read in their 52-bit digits by a scan of the whole row and
 * converted to 4 limbs after the scan. As there, the scalar flows only into
 * masks (the ladder's selections, the scans' selections), never into a branch or
 * an address.
 *
 * Cost: a ladder step is 5 multiplies, 4 squares, 1 times a24 plus a
 * value, and 7 adds or subtracts (255 steps), then an inversion (590
 * constant-time divsteps, fe25519_inv.h); the public key is 64 mixed
 * additions (7 multiplies) and 4 doublings (4 squares, 4 multiplies), each
 * addition after a scan of 8 table entries, and the same inversion.
 */
#include "../internal.h"
#include "../test_hooks.h"
#include "fe25519_inv.h"
#include "x25519_kern.h"

#if MBC_TEST_HOOKS
/* Kernel calls: lets a test prove the scalar kernel ran. */
_Atomic unsigned long mbc_x25519_kern_hits_adx;
#endif

#define A24 121665 /* (486662 - 2) / 4 */
#define M52 ((1ull << 52) - 1)

/* from52: a value of 5 digits of 52 bits d[0..4] (below 2^256) as 4 limbs. */
static inline void from52(fe64 r, const uint64_t d0, const uint64_t d1, const uint64_t d2,
                          const uint64_t d3, const uint64_t d4)
{
    r[0] = d0 | d1 << 52;
    r[1] = d1 >> 12 | d2 << 40;
    r[2] = d2 >> 24 | d3 << 28;
    r[3] = d3 >> 36 | d4 << 16;
}

/* load_lane0: slot 0 of 5 mb52 rows as 4 limbs. */
static inline void load_lane0(fe64 r, const mb52_row *rows)
{
    from52(r, rows[0][0], rows[1][0], rows[2][0], rows[3][0], rows[4][0]);
}

/* finish: slot 0 of a->out = canonical x / z, nonzero bit 0 when it is not
 * 0 (the ladder's low-order verdict). */
static void finish(struct x25519_args *a, const fe64 x, const fe64 z)
{
    fe64 r;
    fe64_inv(r, z);
    fe64_mul(r, r, x);
    fe64_canon(r, r);
    a->out[0][0] = r[0] & M52;
    a->out[1][0] = (r[0] >> 52 | r[1] << 12) & M52;
    a->out[2][0] = (r[1] >> 40 | r[2] << 24) & M52;
    a->out[3][0] = (r[2] >> 28 | r[3] << 36) & M52;
    a->out[4][0] = r[3] >> 16;
    a->nonzero = (unsigned)(1 & ~mbc_ct_is_zero_mask(r[0] | r[1] | r[2] | r[3]));
    mbc_memzero(r, sizeof(r));
}

/* ------------------------------------------------------------------------ */
/* The Montgomery ladder (RFC 7748 section 5)                                */
/* ------------------------------------------------------------------------ */

/*
 * ladder_step: one step of the ladder on the state (x2 : z2), (x3 : z3)
 * (the two points, whose difference has u = x1), doubling the one that m
 * names (0: (x2 : z2), all-ones: (x3 : z3)) and adding the two; the double
 * goes to (x2 : z2) and the sum to (x3 : z3) either way. The formulas of
 * x25519_kern.c, with a = x2 + z2, b = x2 - z2, c = x3 + z3, d = x3 - z3:
 * the sum needs da + cb and (da - cb)^2, which do not change when the two
 * points trade places (da and cb trade places, da - cb changes sign), so
 * only the doubling's inputs are selected: (a, b) or (c, d), 8 limbs, where
 * a conditional swap of both points before the step moved 16.
 */
static inline void ladder_step(fe64 x2, fe64 z2, fe64 x3, fe64 z3, const fe64 x1, uint64_t m)
{
    fe64 a, b, c, d, aa, bb, da, cb, e;
    /* in the order of the longest chain first: da, cb, (da -+ cb)^2, x1 */
    fe64_add(a, x2, z2);
    fe64_sub(d, x3, z3);
    fe64_sub(b, x2, z2);
    fe64_add(c, x3, z3);
    fe64_mul2(da, d, a, cb, c, b);
    fe64_cmov(m, a, c);
    fe64_cmov(m, b, d);
    fe64_sqr(aa, a);
    fe64_sqr(bb, b);
    fe64_sub(z3, da, cb);
    fe64_add(x3, da, cb);
    fe64_sqr(z3, z3);
    fe64_sqr(x3, x3);
    fe64_sub(e, aa, bb);
    fe64_mul_small_add(z2, e, A24, aa);
    fe64_mul2(x2, aa, bb, z3, z3, x1);
    fe64_mul(z2, z2, e);
}

void mbc_x25519_ladder_adx(struct x25519_args *a)
{
    mbc_test_count(mbc_x25519_kern_hits_adx);
    fe64 k, x1, x2 = {1, 0, 0, 0}, z2 = {0}, x3, z3 = {1, 0, 0, 0};
    load_lane0(k, a->scalar);
    load_lane0(x1, a->u);
    for (int i = 0; i < 4; i++) {
        x3[i] = x1[i];
    }
    /* (x2 : z2) is the point of the previous bit (k_(t+1), 0 at the start),
     * (x3 : z3) the other one; 255 steps over bits 254..0 of the clamped
     * scalar, each doubling the point of its bit: the other one where the
     * bit differs from the previous one */
    uint64_t prev = 0;
    for (unsigned t = 255; t-- > 0;) {
        const uint64_t bit = (k[t / 64] >> (t % 64)) & 1;
        const uint64_t m = mbc_value_barrier(0 - (prev ^ bit));
        prev = bit;
        ladder_step(x2, z2, x3, z3, x1, m);
    }
    /* the result is the point of bit 0's side: (x3 : z3) where bit 0 is 1 */
    const uint64_t m = mbc_value_barrier(0 - prev);
    fe64_cmov(m, x2, x3);
    fe64_cmov(m, z2, z3);
    finish(a, x2, z2);
    mbc_memzero(k, sizeof(k));
    mbc_memzero(x2, sizeof(x2));
    mbc_memzero(z2, sizeof(z2));
    mbc_memzero(x3, sizeof(x3));
    mbc_memzero(z3, sizeof(z3));
    mbc_memzero(&prev, sizeof(prev));
}

/* ------------------------------------------------------------------------ */
/* Fixed base: edwards25519, signed 4-bit digits, mbc_x25519_table            */
/* ------------------------------------------------------------------------ */

/* ge: extended coordinates, x = X / Z, y = Y / Z, x y = T / Z. */
struct ge {
    fe64 x, y, z, t;
};

/* niels: an affine point as (y + x, y - x, 2 d x y). */
struct niels {
    fe64 ypx, ymx, xy2d;
};

/*
 * select_niels: e (-8..8) times row m's point: a scan of all 8 entries in
 * their 52-bit digits, keeping the one |e| names (the identity (1, 1, 0)
 * for 0), converted to limbs, then negated where e < 0 (y + x and y - x
 * trade places, 2 d x y changes sign).
 */
static inline void select_niels(struct niels *q, unsigned m, uint64_t e)
{
    const uint64_t sign = mbc_ct_msb_mask(e);
    const uint64_t mag = (e ^ sign) - sign;
    uint64_t d[3][5] = {{1, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {0, 0, 0, 0, 0}};
    for (unsigned j = 0; j < 8; j++) {
        const uint64_t hit = mbc_ct_eq_mask(mag, j + 1);
        for (unsigned c = 0; c < 3; c++) {
            for (unsigned i = 0; i < 5; i++) {
                d[c][i] = mbc_ct_select(hit, mbc_x25519_table[m][j][c][i], d[c][i]);
            }
        }
    }
    from52(q->ypx, d[0][0], d[0][1], d[0][2], d[0][3], d[0][4]);
    from52(q->ymx, d[1][0], d[1][1], d[1][2], d[1][3], d[1][4]);
    from52(q->xy2d, d[2][0], d[2][1], d[2][2], d[2][3], d[2][4]);
    fe64_cswap(sign, q->ypx, q->ymx);
    fe64 neg;
    const fe64 zero = {0};
    fe64_sub(neg, zero, q->xy2d);
    fe64_cmov(sign, q->xy2d, neg);
    mbc_memzero(d, sizeof(d));
    mbc_memzero(neg, sizeof(neg));
}

/* ge_add: p = p + q (mixed addition, "madd-2008-hwcd-3"): 7 multiplies. */
static inline void ge_add(struct ge *p, const struct niels *q)
{
    fe64 a, b, c, d, e, f, g, h;
    fe64_sub(a, p->y, p->x);
    fe64_mul(a, a, q->ymx);
    fe64_add(b, p->y, p->x);
    fe64_mul(b, b, q->ypx);
    fe64_mul(c, p->t, q->xy2d);
    fe64_add(d, p->z, p->z);
    fe64_sub(e, b, a);
    fe64_sub(f, d, c);
    fe64_add(g, d, c);
    fe64_add(h, b, a);
    fe64_mul(p->x, e, f);
    fe64_mul(p->y, g, h);
    fe64_mul(p->z, f, g);
    fe64_mul(p->t, e, h);
}

/* ge_dbl: p = 2 p ("dbl-2008-hwcd" with a = -1): 4 squares, 4 multiplies. */
static inline void ge_dbl(struct ge *p)
{
    fe64 a, b, c, e, f, g, h;
    const fe64 zero = {0};
    fe64_sqr(a, p->x);
    fe64_sqr(b, p->y);
    fe64_sqr(c, p->z);
    fe64_add(c, c, c);
    fe64_add(h, a, b);
    fe64_add(e, p->x, p->y);
    fe64_sqr(e, e);
    fe64_sub(e, e, h); /* 2 x y */
    fe64_sub(g, b, a); /* y^2 - x^2 */
    fe64_sub(f, g, c);
    fe64_sub(h, zero, h);
    fe64_mul(p->x, e, f);
    fe64_mul(p->y, g, h);
    fe64_mul(p->z, f, g);
    fe64_mul(p->t, e, h);
}

void mbc_x25519_base_adx(struct x25519_args *a)
{
    mbc_test_count(mbc_x25519_kern_hits_adx);
    fe64 k;
    load_lane0(k, a->scalar);
    /* signed digits: e = nibble + carry; a digit of 8 or more borrows 16
     * from the next one (two's complement in a word) */
    uint64_t e[64];
    uint64_t carry = 0;
    for (unsigned i = 0; i < 63; i++) {
        const uint64_t x = ((k[i / 16] >> (4 * (i % 16))) & 15) + carry;
        carry = (x + 8) >> 4;
        e[i] = x - (carry << 4);
    }
    e[63] = (k[3] >> 60) + carry;

    struct ge p = {{0}, {1, 0, 0, 0}, {1, 0, 0, 0}, {0}};
    struct niels q;
    for (unsigned i = 1; i < 64; i += 2) {
        select_niels(&q, i / 2, e[i]);
        ge_add(&p, &q);
    }
    for (unsigned i = 0; i < 4; i++) {
        ge_dbl(&p);
    }
    for (unsigned i = 0; i < 64; i += 2) {
        select_niels(&q, i / 2, e[i]);
        ge_add(&p, &q);
    }
    /* u = (1 + y) / (1 - y) = (Z + Y) / (Z - Y) */
    fe64 num, den;
    fe64_add(num, p.z, p.y);
    fe64_sub(den, p.z, p.y);
    finish(a, num, den);
    mbc_memzero(k, sizeof(k));
    mbc_memzero(e, sizeof(e));
    mbc_memzero(&carry, sizeof(carry));
    mbc_memzero(&p, sizeof(p));
    mbc_memzero(&q, sizeof(q));
    mbc_memzero(num, sizeof(num));
    mbc_memzero(den, sizeof(den));
}

#if MBC_TEST_HOOKS
/* ------------------------------------------------------------------------ */
/* The field operations, for the tests                                       */
/* ------------------------------------------------------------------------ */

void mbc_x25519_fe64_test(enum x25519_fe_op op, int portable, uint64_t r[4], const uint64_t a[4],
                          const uint64_t b[4])
{
    fe64 x, y, z;
    for (int i = 0; i < 4; i++) {
        x[i] = a[i];
        y[i] = b[i];
    }
    switch (op) {
    case X25519_FE_MUL:
        portable ? fe64_mul_c(z, x, y) : fe64_mul(z, x, y);
        break;
    case X25519_FE_SQR:
        portable ? fe64_sqr_c(z, x) : fe64_sqr(z, x);
        break;
    case X25519_FE_MUL_A24: /* a24 a + b */
        portable ? fe64_mul_small_add_c(z, x, A24, y) : fe64_mul_small_add(z, x, A24, y);
        break;
    case X25519_FE_ADD:
        portable ? fe64_add_c(z, x, y) : fe64_add(z, x, y);
        break;
    case X25519_FE_SUB:
        portable ? fe64_sub_c(z, x, y) : fe64_sub(z, x, y);
        break;
    case X25519_FE_CANON:
        fe64_canon(z, x);
        break;
    case X25519_FE_INV:
        fe64_inv(z, x);
        break;
    default: /* no carry form in radix 2^64 */
        for (int i = 0; i < 4; i++) {
            z[i] = x[i];
        }
        break;
    }
    for (int i = 0; i < 4; i++) {
        r[i] = z[i];
    }
}

void mbc_x25519_fe64_test2(enum x25519_fe_op op, int second, uint64_t r[4], const uint64_t a[4],
                           const uint64_t b[4])
{
    /* u: this product's first operand (and result), v: the other one's */
    fe64 u, v, y, w;
    for (int i = 0; i < 4; i++) {
        u[i] = a[i];
        v[i] = b[i];
        y[i] = b[i];
        w[i] = b[i];
    }
    (void)op;
    second ? fe64_mul2(v, v, w, u, u, y) : fe64_mul2(u, u, y, v, v, w);
    for (int i = 0; i < 4; i++) {
        r[i] = u[i];
    }
}
#endif
