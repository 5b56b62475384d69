/*
 * fe.h - arithmetic mod p = 2^255 - 19 on 8-lane mb52 vectors, written once
 * against vec.h and instantiated in each X25519 kernel object (_ifma, _c,
 * _c1). One field element per lane: fe.d[j] holds digit j (bits 52j..52j+51)
 * of the 8 lanes' values. Everything is lane-wise: no branch or address ever
 * depends on a value.
 *
 * Radix 2^52, 5 digits (260 bits): the radix IFMA multiplies in. The 5 bits
 * of headroom above 2^255 absorb carries, and 2^260 = 32 * 2^255 = 32 * 19
 * = 608 (mod p) folds the high half of a product back with a multiply-add by
 * 608. vpmadd52luq/huq use only the low 52 bits of each operand, so every
 * digit entering a multiply must be below 2^52; there is no headroom inside
 * a digit, and every add and subtract ends with a carry.
 *
 * Two forms, by their bounds:
 *   L ("loose"):   every digit < 2^52, so the value is < 2^260. What the
 *                  multiply by a small constant accepts.
 *   F ("carried"): digits 0..3 < 2^52 and digit 4 <= 2^47 + 2^11, so the
 *                  value is < 2^256. What every function here returns (F is
 *                  inside L), except the _u forms, and what the multiplies
 *                  and squares take (digit 4 small keeps the top column of
 *                  a product below 2^43). Values are congruent mod
 *                  p, not reduced; only fe_canon gives the unique
 *                  representative below p.
 *   M ("masked by the multiplies"): digit 4 as in F, and digits 0..3 whose
 *                  bits 0..51 are F's digits, with carried-out bits left
 *                  above them (fe_carry_m). Only a multiply or square may
 *                  take it (their multiply-adds read bits 0..51 alone);
 *                  no add, subtract, blend into a sum or store.
 *   U ("uncarried"): every digit < 2^56. What the _u forms of the multiply,
 *                  square and times-a-constant return: their products before
 *                  the carry (fe_carry of a U value is in F). fe_add and
 *                  fe_sub take U operands and carry, so a product whose only
 *                  use is an add or subtract skips one carry chain (17
 *                  operations and a multiply-add); a product that is
 *                  multiplied again must be carried (F) first.
 */
#ifndef MBC_SRC_X25519_FE_H
#define MBC_SRC_X25519_FE_H

#include "../internal.h"
#include "../mb52/arith.h"
#include "x25519_kern.h"

#define FE_DIGITS 5
#define FE_M47 ((1ull << 47) - 1)

/* FE_OP: the linkage of the operations that carry. Sanitizer builds check
 * correctness, not speed: there they stay calls (inlined into every ladder
 * step and instrumented, they took clang over 4 minutes per object). */
#if defined(MB52_SANITIZED)
#define FE_OP static __attribute__((noinline))
#else
#define FE_OP MB52_INLINE
#endif

typedef struct {
    vec d[FE_DIGITS];
} fe;

MB52_INLINE fe fe_load(const mb52_row *r)
{
    fe a;
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        a.d[j] = v_load(r[j]);
    }
    return a;
}

MB52_INLINE void fe_store(mb52_row *r, fe a)
{
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        v_store(r[j], a.d[j]);
    }
}

/* fe_small: the constant x < 2^52 in every lane (F). */
MB52_INLINE fe fe_small(uint64_t x)
{
    fe a;
    a.d[0] = v_set1(x);
    for (unsigned j = 1; j < FE_DIGITS; j++) {
        a.d[j] = v_zero();
    }
    return a;
}

/* fe_const: the single-lane constant c (5 digits < 2^52) in every lane. */
MB52_INLINE fe fe_const(const uint64_t c[FE_DIGITS])
{
    fe a;
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        a.d[j] = v_set1(c[j]);
    }
    return a;
}

/* fe_blend: lanes of m take b, the others a. */
MB52_INLINE fe fe_blend(vmask m, fe a, fe b)
{
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        a.d[j] = v_blend(m, a.d[j], b.d[j]);
    }
    return a;
}

/*
 * fe_carry: r with its carries propagated, into F. Pre: every digit < 2^63.
 * Order: bits 255 and up of digit 4 (c < 2^16) come back as 19 c into digit
 * 0 (< 2^64); then 0 -> 1 -> 2 -> 3 -> 4. Digit 4 is then below 2^47 and
 * takes the carry out of digit 3, at most 2^11: so it ends <= 2^47 + 2^11
 * (F), with no second pass. 1 multiply-add (19 c, exact: 19 c < 2^21), 14
 * other ops.
 */
MB52_INLINE fe fe_carry_any(fe r, int lazy)
{
    const vec m52 = v_set1(MB52_MASK);
    r.d[0] = v_madd52lo(r.d[0], v_srl(r.d[4], 47), v_set1(19));
    r.d[4] = v_and(r.d[4], v_set1(FE_M47));
    for (unsigned j = 0; j < FE_DIGITS - 1; j++) {
        r.d[j + 1] = v_add(r.d[j + 1], v_srl52(r.d[j]));
        if (!lazy) {
            r.d[j] = v_and(r.d[j], m52);
        }
    }
    return r;
}

MB52_INLINE fe fe_carry(fe r)
{
    return fe_carry_any(r, 0);
}

/*
 * fe_carry_m: r with its carries propagated, into M: as fe_carry, without
 * clearing bits 52 and up of digits 0..3 once they are carried out. The
 * multiply-adds read only bits 0..51 of an operand, so a multiply or square
 * of an M value gives the digits it gives of the F value (and costs 4
 * operations fewer per carry). Pre: every digit < 2^63. Post: M.
 */
MB52_INLINE fe fe_carry_m(fe r)
{
    return fe_carry_any(r, 1);
}

/*
 * fe_reduce_u: the 10 product columns t of two F values (t[c] < 2^56, and
 * t[9] = hi52(a4 b4) <= 2^42 + 2^8 as a4, b4 <= 2^47 + 2^11) folded to 5
 * digits, not carried (U).
 *  1. Columns 5..9 are normalised (h5..h8 < 2^52 in their bits 0..51,
 *     the bits above carried into the next column; h9 < 2^42 + 2^9): the
 *     multiply-adds read bits 0..51 of an operand, so bits 52 and up need
 *     no clearing once carried.
 *  2. 2^260 = 608: digit j gets lo52(608 h_(j+5)), digit j+1 gets
 *     hi52(608 h_(j+5)); 608 h9 < 2^52, so digit 4 gets all of it.
 *  Digits: < 9 * 2^52 + 2 * 2^52 < 2^56 (U).
 * 9 multiply-adds, 8 other ops.
 */
FE_OP fe fe_reduce_u(vec t[10])
{
    const vec c608 = v_set1(608);
    for (unsigned c = 5; c < 9; c++) {
        t[c + 1] = v_add(t[c + 1], v_srl52(t[c]));
    }
    fe r;
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        r.d[j] = v_madd52lo(t[j], t[j + 5], c608);
    }
    for (unsigned j = 0; j + 1 < FE_DIGITS; j++) {
        r.d[j + 1] = v_madd52hi(r.d[j + 1], t[j + 5], c608);
    }
    return r;
}

/*
 * fe_mul_init_u: init + a b mod p, the products added to columns 0..4 that
 * start at init's digits (0 for fe_mul_u). Pre: a, b in F, init's digits
 * < 2^62. Post: digit j < init_j + 2^56 (U when init is 0).
 * Schoolbook columns: column c sums at most 9 halves of 52 bits (< 2^56).
 * 50 + 9 = 59 multiply-adds.
 */
MB52_INLINE fe fe_mul_init_u(fe init, fe a, fe b)
{
    vec t[10];
    for (unsigned c = 0; c < 10; c++) {
        t[c] = c < FE_DIGITS ? init.d[c] : v_zero();
    }
    for (unsigned i = 0; i < FE_DIGITS; i++) {
        for (unsigned j = 0; j < FE_DIGITS; j++) {
            v_madd52lohi(&t[i + j], &t[i + j + 1], a.d[i], b.d[j]);
        }
    }
    return fe_reduce_u(t);
}

/* fe_mul_u: a b mod p. Pre: a, b in F. Post: U. 59 multiply-adds. */
FE_OP fe fe_mul_u(fe a, fe b)
{
    return fe_mul_init_u(fe_small(0), a, b);
}

/*
 * The bias: 1024 p = 2^265 - 19456, written in digits that are each at
 * least a U digit (2^56): 2^62 - 19456, 2^62 - 1024 (three times), 2^57 -
 * 1024. A minuend carrying it (a "biased" U value, digit j < bias_j +
 * 2^56) takes any U subtrahend with one subtraction per digit, the digits
 * staying non-negative and below 2^63 (fe_sub_biased). The products the
 * ladder subtracts from start their columns at it (fe_mul_biased_u,
 * fe_sqr_biased_u), which costs no operation: 5 fewer per subtraction.
 */
#define FE_BIAS_0 ((1ull << 62) - 19456)
#define FE_BIAS_J ((1ull << 62) - 1024) /* digits 1..3 */
#define FE_BIAS_4 ((1ull << 57) - 1024)
MB52_INLINE fe fe_bias(void)
{
    static const uint64_t p1024[FE_DIGITS] = {FE_BIAS_0, FE_BIAS_J, FE_BIAS_J, FE_BIAS_J,
                                              FE_BIAS_4};
    return fe_const(p1024);
}

/* fe_add_bias: a + 1024 p, digit by digit. Pre: U. Post: biased U. */
MB52_INLINE fe fe_add_bias(fe a)
{
    const fe k = fe_bias();
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        a.d[j] = v_add(a.d[j], k.d[j]);
    }
    return a;
}

/* fe_mul_biased_u: a b + 1024 p. Pre: a, b in F. Post: biased U. */
FE_OP fe fe_mul_biased_u(fe a, fe b)
{
    return fe_mul_init_u(fe_bias(), a, b);
}

/* fe_mul: a b mod p, carried. Pre: a, b in F. Post: F. 60 multiply-adds. */
MB52_INLINE fe fe_mul(fe a, fe b)
{
    return fe_carry(fe_mul_u(a, b));
}

/* fe_mul_m: a b mod p, carried into M. Pre: a, b in F or M. Post: M. */
MB52_INLINE fe fe_mul_m(fe a, fe b)
{
    return fe_carry_m(fe_mul_u(a, b));
}

/*
 * fe_sqr_init_u: s + a^2 mod p, where s has digit 0 h_0 and digits 1..4
 * 2 h_j: the same digits as fe_mul_init_u(s, a, a). The 10 cross products
 * once, doubled, then the 5 squares; columns 1..4 start at h_j and are
 * doubled with the cross products, column 0 starts at h_0. Pre: a in F,
 * s's digits < 2^62. Post: digit j < s_j + 2^56.
 * Columns as in fe_mul_u (< 2^56). 30 + 9 = 39 multiply-adds.
 */
MB52_INLINE fe fe_sqr_init_u(fe h, fe a)
{
    vec t[10];
    for (unsigned c = 0; c < 10; c++) {
        t[c] = c < FE_DIGITS ? h.d[c] : v_zero();
    }
    for (unsigned i = 0; i < FE_DIGITS; i++) {
        for (unsigned j = i + 1; j < FE_DIGITS; j++) {
            v_madd52lohi(&t[i + j], &t[i + j + 1], a.d[i], a.d[j]);
        }
    }
    for (unsigned c = 1; c < 9; c++) {
        t[c] = v_add(t[c], t[c]);
    }
    for (unsigned i = 0; i < FE_DIGITS; i++) {
        v_madd52lohi(&t[2 * i], &t[2 * i + 1], a.d[i], a.d[i]);
    }
    return fe_reduce_u(t);
}

/* fe_sqr_u: a^2 mod p. Pre: F. Post: U. 39 multiply-adds. */
FE_OP fe fe_sqr_u(fe a)
{
    return fe_sqr_init_u(fe_small(0), a);
}

/* fe_sqr_biased_u: a^2 + 1024 p. Pre: F. Post: biased U. */
FE_OP fe fe_sqr_biased_u(fe a)
{
    /* the bias with digits 1..4 halved (all even) */
    static const uint64_t h[FE_DIGITS] = {FE_BIAS_0, FE_BIAS_J / 2, FE_BIAS_J / 2, FE_BIAS_J / 2,
                                          FE_BIAS_4 / 2};
    return fe_sqr_init_u(fe_const(h), a);
}

/* fe_sqr: a^2 mod p, carried. Pre: F. Post: F. 40 multiply-adds. */
MB52_INLINE fe fe_sqr(fe a)
{
    return fe_carry(fe_sqr_u(a));
}

/* fe_sqr_m: a^2 mod p, carried into M. Pre: F or M. Post: M. */
MB52_INLINE fe fe_sqr_m(fe a)
{
    return fe_carry_m(fe_sqr_u(a));
}

/*
 * fe_mul_small_add_u: acc + a c mod p for a constant 0 < c < 2^40, the
 * products added to acc's digits (0 for fe_mul_small_u). Pre: a in L,
 * acc's digits < 2^62. Post: digit j < acc_j + 2^53 + 2^52 (U for acc 0).
 * Digits: lo52(a_j c) + hi52(a_(j-1) c) < 2^53; hi52(a4 c) (< c) belongs to
 * 2^260 and comes back as 608 times itself into digit 0 (608 c < 2^52, so
 * the multiply-add is exact).
 * 5 + 4 + 1 + 1 = 11 multiply-adds.
 */
MB52_INLINE fe fe_mul_small_add_u(fe acc, fe a, uint64_t c)
{
    const vec cv = v_set1(c);
    fe r;
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        r.d[j] = v_madd52lo(acc.d[j], a.d[j], cv);
    }
    for (unsigned j = 0; j + 1 < FE_DIGITS; j++) {
        r.d[j + 1] = v_madd52hi(r.d[j + 1], a.d[j], cv);
    }
    r.d[0] = v_madd52lo(r.d[0], v_madd52hi(v_zero(), a.d[4], cv), v_set1(608));
    return r;
}

/* fe_mul_small_u: a c mod p. Pre: a in L. Post: U (digits < 2^53 + 2^52). */
FE_OP fe fe_mul_small_u(fe a, uint64_t c)
{
    return fe_mul_small_add_u(fe_small(0), a, c);
}

/* fe_mul_small: a c mod p, carried. Pre: a in L. Post: F. 12 multiply-adds. */
MB52_INLINE fe fe_mul_small(fe a, uint64_t c)
{
    return fe_carry(fe_mul_small_u(a, c));
}

/* fe_add: a + b mod p. Pre: a, b in U, or one of them biased U (fe_bias):
 * digits sum < 2^63. Post: F. */
FE_OP fe fe_add(fe a, fe b)
{
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        a.d[j] = v_add(a.d[j], b.d[j]);
    }
    return fe_carry(a);
}

/* fe_add_m: a + b mod p, carried into M. Pre: as fe_add. Post: M. */
FE_OP fe fe_add_m(fe a, fe b)
{
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        a.d[j] = v_add(a.d[j], b.d[j]);
    }
    return fe_carry_m(a);
}

/*
 * fe_sub: a - b mod p, computed as a + 1024 p - b (fe_bias: digits each at
 * least b's). Pre: a, b in U. The digits stay non-negative and < 2^63.
 * Post: F.
 */
FE_OP fe fe_sub(fe a, fe b)
{
    const fe k = fe_bias();
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        a.d[j] = v_sub(v_add(a.d[j], k.d[j]), b.d[j]);
    }
    return fe_carry(a);
}

/*
 * fe_sub_biased_m: a - b mod p for a biased minuend (a U value plus 1024 p,
 * see fe_bias): the bias keeps every digit non-negative. Pre: a biased U,
 * b in U. Post: M.
 */
FE_OP fe fe_sub_biased_m(fe a, fe b)
{
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        a.d[j] = v_sub(a.d[j], b.d[j]);
    }
    return fe_carry_m(a);
}

/*
 * fe_canon: the representative of a below p. Pre: F. Bits 255 and up of a
 * (0 or 1: digit 4 < 2^48) come back as 19, which leaves a value below
 * 2^255 + 19 < 2p;
 * then a >= p exactly when a + 19 reaches 2^255, and a - p is a + 19 with
 * bit 255 cleared. 1 multiply-add.
 */
MB52_INLINE fe fe_canon(fe a)
{
    const vec m52 = v_set1(MB52_MASK);
    a.d[0] = v_madd52lo(a.d[0], v_srl(a.d[4], 47), v_set1(19));
    a.d[4] = v_and(a.d[4], v_set1(FE_M47));
    fe t = a;
    t.d[0] = v_add(t.d[0], v_set1(19));
    for (unsigned j = 0; j < FE_DIGITS - 1; j++) {
        a.d[j + 1] = v_add(a.d[j + 1], v_srl52(a.d[j]));
        a.d[j] = v_and(a.d[j], m52);
        t.d[j + 1] = v_add(t.d[j + 1], v_srl52(t.d[j]));
        t.d[j] = v_and(t.d[j], m52);
    }
    const vmask ge = v_nonzero(v_srl(t.d[4], 47));
    t.d[4] = v_and(t.d[4], v_set1(FE_M47));
    return fe_blend(ge, a, t);
}

/* fe_nonzero: lanes whose a (canonical) is not 0. */
MB52_INLINE vmask fe_nonzero(fe a)
{
    vec acc = a.d[0];
    for (unsigned j = 1; j < FE_DIGITS; j++) {
        acc = v_or(acc, a.d[j]);
    }
    return v_nonzero(acc);
}

/*
 * fe_inv: a^-1 mod p per lane (0 for a = 0 mod p). Pre: F. Post: F.
 * Montgomery's trick across the lanes, as ec_kern.c's fe_inv: with x_l the
 * lanes' canonical values (a zero replaced by 1), lo_l and hi_l the
 * products of the lanes up to and from lane l (two scans of log2 L
 * multiplies, lanes moved by v_lanes_up / _down), one inversion of the
 * product X of all the lanes (the top lane of lo) on its plain digits
 * (mbc_x25519_inv1: the scalar tier's constant-time divsteps), and x_l^-1 =
 * lo_(l-1) hi_(l+1) X^-1: 2 log2 L + 2 multiplies and one scalar inversion
 * where Fermat's chain took 254 squarings and 11 multiplies of every lane,
 * one after another: latency-bound, and without it the 8-lane derive ran
 * 12% and the public key 27% faster on the Intel part (family 6 model 167,
 * mbc_bench medians). Lanes meet only in products, where a zero lane
 * counts as 1, and every lane's inverse is unique: no lane's value changes
 * another's result after fe_canon. On one lane (_c1) both scans are empty
 * and the product of the other lanes is 1.
 */
MB52_INLINE fe fe_inv(fe a)
{
    MBC_ALIGN64 mb52_row t[FE_DIGITS];
    uint64_t v[FE_DIGITS], w[FE_DIGITS];
    const fe one = fe_small(1);
    fe x = fe_canon(a);
    const vmask zero = vm_not(fe_nonzero(x));
    x = fe_blend(zero, x, one);
    fe lo = x, hi = x, s, u;
    for (unsigned h = 1; h < MBC_VEC_LANES; h *= 2) {
        for (unsigned j = 0; j < FE_DIGITS; j++) {
            s.d[j] = v_lanes_up(lo.d[j], one.d[j], h);
            u.d[j] = v_lanes_down(hi.d[j], one.d[j], h);
        }
        lo = fe_mul(lo, s);
        hi = fe_mul(hi, u);
    }
    /* x = lo_(l-1) hi_(l+1): the product of the other lanes */
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        s.d[j] = v_lanes_up(lo.d[j], one.d[j], 1);
        u.d[j] = v_lanes_down(hi.d[j], one.d[j], 1);
    }
    x = fe_mul(s, u);
    /* the top lane of lo is X (F: below 2^256, what mbc_x25519_inv1 takes) */
    fe_store(t, lo);
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        v[j] = t[j][MBC_VEC_LANES - 1];
    }
    mbc_x25519_inv1(w, v);
#if defined(MBC_VEC_COUNT)
    mbc_vec_count_scalar_inv(255);
#endif
    for (unsigned j = 0; j < FE_DIGITS; j++) {
        s.d[j] = v_set1(w[j]);
    }
    x = fe_blend(zero, fe_mul(x, s), fe_small(0));
    mbc_memzero(t, sizeof(t));
    mbc_memzero(v, sizeof(v));
    mbc_memzero(w, sizeof(w));
    mbc_memzero(&lo, sizeof(lo));
    mbc_memzero(&hi, sizeof(hi));
    mbc_memzero(&s, sizeof(s));
    mbc_memzero(&u, sizeof(u));
    return x;
}

#endif /* MBC_SRC_X25519_FE_H */
