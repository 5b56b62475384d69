/*
 * ec_kern.c - the P-256 and P-384 kernels on mb52 rows, written once
 * against vec.h and compiled per backend: _ifma (AVX-512 IFMA), _ifma4
 * (IFMA on 4 lanes of ymm, lone and few requests), _c (8 portable lanes)
 * and _c1 (lane 0 only, the portable single-request path). Every backend
 * computes the same digits. Each is built again for the tests
 * (MBC_TEST_HOOKS=1, src/test_hooks.h) with the hit counters, the fault
 * injection, the entry points of the field and point tests and, on the
 * 8-lane portable backend, the spread kernels (the oracle of the IFMA ones).
 *
 * Field elements (fe): k normalised rows (digits < 2^52), value < 2m, in
 * Montgomery form for R = 2^(52 k) (k = 5 for P-256, 8 for P-384; 16 m < R
 * in both, so the multiply takes inputs up to 4m). Every operation below
 * takes inputs < 2m (< 4m for the multiply) and returns < 2m, so any
 * sequence of them keeps that bound; fe_canon gives the unique value < m.
 * The leaves (multiply, square, add, subtract) are instantiated with a
 * constant digit count (the Montgomery loops of arith.h unrolled, every
 * digit in registers), and chosen by k at run time: one well-predicted
 * branch per field operation, no function pointer.
 *
 * Points: projective (X : Y : Z) (ec_pt), the complete formulas of Renes,
 * Costello and Batina (Eurocrypt 2016) for a = -3: no exceptional case at
 * all (doubling inside an addition, the identity, P + (-P) all give the
 * right point), so no branch or mask depends on which points meet.
 *   pt_add  (algorithm 4)  12 M + 2 M_b
 *   pt_madd (algorithm 5)  11 M + 2 M_b, the second point affine and not
 *                          the identity
 * (M_b, a multiply by b, is a full multiply here: b has all its digits).
 * Doubling uses the cheaper projective doubling for a = -3 (pt_dbl,
 * 7 M + 3 S), whose one exceptional input, the identity, is handled by a
 * mask: doublings are most of d P. Their additions and subtractions are
 * lazy sums (lz_*): the terms added digit by digit, one reduction at the
 * end (a fold of the top bits and a carry chain), or only the carry chain
 * for a sum that only multiplies read, which accept inputs below 4p.
 *
 * Scalars: signed (Booth) windows, one bit more than the order.
 *  - Fixed base (k G): windows of gwin bits (7 for P-256: 37 windows,
 *    digits -64..64; 6 for P-384: 65 windows, -32..32) and a precomputed
 *    table of every window's multiples (ec_kern.h: ec_gtab_rows): one
 *    lookup (all the window's rows loaded, the index picking lanes within
 *    registers: g_lookup) and one mixed addition per window, no doubling;
 *    a zero digit keeps the sum (mask).
 *  - Variable base (d P): windows of 5 bits (nwin: 52 for P-256, 77 for
 *    P-384), a table of 0..16 P (15 point operations), then per window 5
 *    doublings, a masked scan of the 17 entries and one addition.
 * The sign of a digit is applied by a masked negation of y. Every lookup
 * reads every entry, per lane; lane values reach no branch and no
 * address. Inversions (mod p and mod n) take one scalar constant-time
 * inversion for all the lanes (fe_inv: Montgomery's trick across lanes).
 */
#include "../internal.h"
#include "../mb52/arith.h"
#include "../test_hooks.h"
#include "ec_kern.h"

#if MBC_TEST_HOOKS
/* Batches this backend ran: lets a test prove the dispatched kernel ran. */
_Atomic unsigned long MBC_KFN(ec_kern_hits);
#endif

/* EC_SPREAD: this build has the spread kernels (lane 0's fixed-base windows
 * over the 8 lanes): the IFMA one, the lone-request path, and the portable
 * 8-lane one in the tests' builds, its oracle. */
#define EC_SPREAD (MBC_VEC_LANES == 8 && (MBC_VEC_IFMA || MBC_TEST_HOOKS))

typedef mb52_row fe[EC_MAX_K];

/* ec_k: the digits of c, at most EC_MAX_K (said so to the compiler, which
 * otherwise warns about the rows of an fe written past EC_MAX_K). */
static inline unsigned ec_k(const struct ec_curve *c)
{
    if (c->k > EC_MAX_K) {
        __builtin_unreachable();
    }
    return c->k;
}

/* ------------------------------------------------------------------------ */
/* Field leaves, one instance per digit count                               */
/* ------------------------------------------------------------------------ */

/*
 * mul_K: r = a b / R mod m, r < 2m (a, b < 4m; see mb52_amm_q_k).
 * sqr_K: r = a^2 / R mod m, the digits of mul_K(r, a, a).
 * add_K: r = a + b, reduced once by 2m: a, b < 2m -> r < 2m.
 * addm_K: r = a + b, not reduced: a, b < 2m -> r < 4m, an input of mul_K
 *   and sqr_K only.
 * sub_K: r = a - b, plus 2m when negative: a, b < 2m -> r < 2m.
 * canon_K: r = a mod m, for a < 2m.
 * r may alias a or b in all of them.
 */
#define FE_LEAVES(K)                                                                               \
    static void mul_##K(mb52_row *r, const mb52_row *a, const mb52_row *b,                         \
                        const struct ec_mod *md)                                                   \
    {                                                                                              \
        mb52_amm_q_k(r, a, b, md->m, v_load(md->m0inv), K, MB52_GENERIC);                          \
    }                                                                                              \
    static void sqr_##K(mb52_row *r, const mb52_row *a, const struct ec_mod *md)                   \
    {                                                                                              \
        mb52_ams_q_k(r, a, md->m, v_load(md->m0inv), K, MB52_GENERIC);                             \
    }                                                                                              \
    static void addm_##K(mb52_row *r, const mb52_row *a, const mb52_row *b)                        \
    {                                                                                              \
        vec acc[K];                                                                                \
        for (unsigned j = 0; j < K; j++) {                                                         \
            acc[j] = v_add(v_load(a[j]), v_load(b[j]));                                            \
        }                                                                                          \
        mb52_normalise(r, acc, K);                                                                 \
    }                                                                                              \
    static void add_##K(mb52_row *r, const mb52_row *a, const mb52_row *b,                         \
                        const struct ec_mod *md)                                                   \
    {                                                                                              \
        addm_##K(r, a, b);                                                                         \
        mb52_cond_sub(r, md->m2, K);                                                               \
    }                                                                                              \
    static void sub_##K(mb52_row *r, const mb52_row *a, const mb52_row *b,                         \
                        const struct ec_mod *md)                                                   \
    {                                                                                              \
        mb52_mod_sub(r, a, b, md->m2, K);                                                          \
    }                                                                                              \
    static void canon_##K(mb52_row *r, const mb52_row *a, const struct ec_mod *md)                 \
    {                                                                                              \
        mb52_copy(r, a, K);                                                                        \
        mb52_cond_sub(r, md->m, K);                                                                \
    }
FE_LEAVES(5)
FE_LEAVES(8)
#undef FE_LEAVES

/* The P-256 p instances: the quotient digit a mask instead of a multiply,
 * 6 multiply-adds per reduction step instead of 10 (arith.h, mb52_p256_lo):
 * a multiply is 80 multiply-adds instead of 105, a square 60 instead of 85
 * (the generic counts with the 5 quotient multiplies). On IFMA inlined
 * into the point formulas (FP1_INLINE), their operands in registers: an
 * out-of-line call went through memory for each, 15% of a key generation;
 * the portable backend keeps the calls (its inlined copies each took
 * their own stack, past the scrub of wipe.h). */
#if MBC_VEC_IFMA
#define FP1_INLINE MB52_INLINE
#else
#define FP1_INLINE static
#endif
FP1_INLINE void mul1_5(mb52_row *r, const mb52_row *a, const mb52_row *b, const struct ec_mod *md)
{
    mb52_amm_q_k(r, a, b, md->m, v_load(md->m0inv), 5, MB52_P256);
}

FP1_INLINE void sqr1_5(mb52_row *r, const mb52_row *a, const struct ec_mod *md)
{
    mb52_ams_q_k(r, a, md->m, v_load(md->m0inv), 5, MB52_P256);
}

/* The P-384 p instances: 8 multiply-adds per reduction step instead of 16
 * (arith.h, mb52_p384_step): a multiply is 192 multiply-adds instead of
 * 256, a square 136 instead of 200. The same digits as mul_8 and sqr_8. */
static void mul1_8(mb52_row *r, const mb52_row *a, const mb52_row *b, const struct ec_mod *md)
{
    mb52_amm_q_k(r, a, b, md->m, v_load(md->m0inv), 8, MB52_P384);
}

static void sqr1_8(mb52_row *r, const mb52_row *a, const struct ec_mod *md)
{
    mb52_ams_q_k(r, a, md->m, v_load(md->m0inv), 8, MB52_P384);
}

/* The field operations of curve c modulo md (&c->p or &c->n): the leaves
 * of c->k digits. Bounds as the leaves. */
static inline void fe_mul(const struct ec_curve *c, const struct ec_mod *md, mb52_row *r,
                          const mb52_row *a, const mb52_row *b)
{
    if (c->k == 5) {
        (md->p256 ? mul1_5 : mul_5)(r, a, b, md);
    } else {
        (md->p384 ? mul1_8 : mul_8)(r, a, b, md);
    }
}

static inline void fe_sqr(const struct ec_curve *c, const struct ec_mod *md, mb52_row *r,
                          const mb52_row *a)
{
    if (c->k == 5) {
        (md->p256 ? sqr1_5 : sqr_5)(r, a, md);
    } else {
        (md->p384 ? sqr1_8 : sqr_8)(r, a, md);
    }
}

static inline void fe_add(const struct ec_curve *c, const struct ec_mod *md, mb52_row *r,
                          const mb52_row *a, const mb52_row *b)
{
    (c->k == 5 ? add_5 : add_8)(r, a, b, md);
}

/* fe_addm: r = a + b < 4m for a, b < 2m, not reduced: for a result whose
 * only uses are multiplies and squares (which take inputs below 4m), one
 * conditional subtraction fewer than fe_add. */
static inline void fe_addm(const struct ec_curve *c, mb52_row *r, const mb52_row *a,
                           const mb52_row *b)
{
    (c->k == 5 ? addm_5 : addm_8)(r, a, b);
}

static inline void fe_sub(const struct ec_curve *c, const struct ec_mod *md, mb52_row *r,
                          const mb52_row *a, const mb52_row *b)
{
    (c->k == 5 ? sub_5 : sub_8)(r, a, b, md);
}

static inline void fe_canon(const struct ec_curve *c, const struct ec_mod *md, mb52_row *r,
                            const mb52_row *a)
{
    (c->k == 5 ? canon_5 : canon_8)(r, a, md);
}

#if MBC_TEST_HOOKS && MBC_VEC_LANES == 8
/* fe_neg: r = -a mod m (< 2m; 0 for 0), a < 2m (the tests' EC_FE_NEG; the
 * kernels negate a point's y with fp_neg). */
static void fe_neg(const struct ec_curve *c, const struct ec_mod *md, mb52_row *r,
                   const mb52_row *a)
{
    EC_ALIGN fe zero = {{0}};
    fe_sub(c, md, r, zero, a);
}
#endif

/* fe_blend: r = a where m is clear, b where it is set, per lane. */
static void fe_blend(unsigned k, mb52_row *r, vmask m, const mb52_row *a, const mb52_row *b)
{
    for (unsigned j = 0; j < k; j++) {
        v_store(r[j], v_blend(m, v_load(a[j]), v_load(b[j])));
    }
}

/* fe_is_zero: lanes where the k digits of a are all zero. */
static vmask fe_is_zero(unsigned k, const mb52_row *a)
{
    vec acc = v_zero();
    for (unsigned j = 0; j < k; j++) {
        acc = v_or(acc, v_load(a[j]));
    }
    return vm_not(v_nonzero(acc));
}

/* fe_eq: lanes where a and b (k digits each) are equal. */
static vmask fe_eq(unsigned k, const mb52_row *a, const mb52_row *b)
{
    vec acc = v_zero();
    for (unsigned j = 0; j < k; j++) {
        acc = v_or(acc, v_xor(v_load(a[j]), v_load(b[j])));
    }
    return vm_not(v_nonzero(acc));
}

/*
 * fe_inv: r = a^-1 mod m per lane (md = &c->p or &c->n), Montgomery form in
 * and out (a R gives a^-1 R, < 2m; 0 gives 0), for a < 2m. Montgomery's
 * trick across the lanes: with x_l the lanes' values (a zero replaced by
 * 1), lo_l and hi_l the products of the lanes up to and from lane l (two
 * scans of log2 L multiplies, lanes moved by v_lanes_up / _down), one
 * inversion of the product X of all the lanes, on the plain digits of the
 * top lane (mbc_ec_inv1: the scalar constant-time divsteps), and
 * x_l^-1 = lo_(l-1) hi_(l+1) X^-1: 2 log2 L + 3 multiplies and one scalar
 * inversion, where Fermat's chain took 255 (P-256) or 383 (P-384) squarings
 * and a dozen multiplies of every lane. Lanes meet only in products, where a
 * zero lane counts as 1, and every lane's inverse is unique: no lane's
 * value changes another's result, and the digits are those of any other
 * correct inversion after fe_canon.
 */
static void fe_inv(const struct ec_curve *c, const struct ec_mod *md, mb52_row *r,
                   const mb52_row *a)
{
    const unsigned k = ec_k(c);
    EC_ALIGN fe x, lo, hi, t;
    uint64_t v[EC_MAX_K] = {0}, w[EC_MAX_K];
    fe_canon(c, md, x, a);
    const vmask zero = fe_is_zero(k, x);
    fe_blend(k, x, zero, x, md->one);
    mb52_copy(lo, x, k);
    mb52_copy(hi, x, k);
    for (unsigned h = 1; h < MBC_VEC_LANES; h *= 2) {
        for (unsigned j = 0; j < k; j++) {
            v_store(t[j], v_lanes_up(v_load(lo[j]), v_load(md->one[j]), h));
        }
        fe_mul(c, md, lo, lo, t);
        for (unsigned j = 0; j < k; j++) {
            v_store(t[j], v_lanes_down(v_load(hi[j]), v_load(md->one[j]), h));
        }
        fe_mul(c, md, hi, hi, t);
    }
    /* x = lo_(l-1) hi_(l+1): the product of the other lanes */
    for (unsigned j = 0; j < k; j++) {
        v_store(x[j], v_lanes_up(v_load(lo[j]), v_load(md->one[j]), 1));
        v_store(t[j], v_lanes_down(v_load(hi[j]), v_load(md->one[j]), 1));
    }
    fe_mul(c, md, x, x, t);
    /* the top lane of lo is X R: its plain inverse X^-1 R^-1, times R^3 / R */
    fe_canon(c, md, t, lo);
    for (unsigned j = 0; j < k; j++) {
        v[j] = t[j][MBC_VEC_LANES - 1];
    }
    mbc_ec_inv1(md, k, c->bits, w, v);
#if defined(MBC_VEC_COUNT)
    mbc_vec_count_scalar_inv(c->bits);
#endif
    for (unsigned j = 0; j < k; j++) {
        v_store(t[j], v_set1(w[j]));
    }
    fe_mul(c, md, t, t, md->r3);
    fe_mul(c, md, x, x, t);
    for (unsigned j = 0; j < k; j++) {
        v_store(r[j], v_blend(zero, v_load(x[j]), v_zero()));
    }
    mbc_memzero(x, sizeof(x));
    mbc_memzero(lo, sizeof(lo));
    mbc_memzero(hi, sizeof(hi));
    mbc_memzero(t, sizeof(t));
    mbc_memzero(v, sizeof(v));
    mbc_memzero(w, sizeof(w));
}

/* fe_to_mont: r = a R mod m (< 2m) for a plain a < 4m. */
static void fe_to_mont(const struct ec_curve *c, const struct ec_mod *md, mb52_row *r,
                       const mb52_row *a)
{
    fe_mul(c, md, r, a, md->rr);
}

/* fe_from_mont: r = a / R mod m, fully reduced (< m), for a < 2m: the
 * plain value of a Montgomery form. */
static void fe_from_mont(const struct ec_curve *c, const struct ec_mod *md, mb52_row *r,
                         const mb52_row *a)
{
    EC_ALIGN fe one = {{0}};
    v_store(one[0], v_set1(1));
    fe_mul(c, md, r, a, one);
    fe_canon(c, md, r, r);
}

/* ------------------------------------------------------------------------ */
/* Lazy linear combinations mod p                                           */
/* ------------------------------------------------------------------------ */

/*
 * The additions and subtractions of the point formulas, as sums of field
 * elements (b < 2p, normalised) with small coefficients, carried once at the
 * end instead of a carry chain and a conditional subtraction for every
 * term. An lz value is K digits of signed 64-bit accumulators, not
 * normalised: lz_set / lz_add / lz_sub add a b 2^sh (sh <= 3) digit by digit
 * (one operation a digit, two with a shift), lz_off adds O = 64 p written
 * with every low digit at least 16 (2^52 - 1), so that up to 16 b (sum of
 * the coefficients subtracted) leave every digit and the value
 * non-negative. Then:
 *  lz_red:  r = the value mod p, < 2p, normalised. The bits from 2^f of the
 *           top digit (2^256 or 2^384: P-256 f = 48 of digit 4, P-384 f = 20
 *           of digit 7) are h; h 2^f is replaced by h c, c = 2^bits mod p
 *           (P-256: 2^224 - 2^192 - 2^96 + 1; P-384: 2^128 + 2^96 - 2^32 + 1),
 *           a few shifts and additions into digits 0..4; then one signed
 *           carry chain. The value stays the same mod p. The sums used here
 *           (O plus at most 4 positive terms) keep the top digit below
 *           2^(f + 7) and the low digits below 2^58, so h < 2^7 and the
 *           result is below 2^bits + 2^(bits - 25) + 2^(bits - 42) < 2p.
 *  lz_norm: the signed carry chain alone: r normalised, for a value known
 *           to lie in [0, 2^(52 K)) (used below 6p: a - b + 2p with
 *           lz_off2, or a + b, for multiply inputs only).
 * lz_off2 adds 2p with every low digit at least 2^52 - 1 (one subtracted
 * b): a - b + 2p in (0, 4p).
 */
static const uint64_t lz_o64_5[5] = {0x10fffffffffffc0ull, 0x103ffffffffffefull,
                                     0xfffffffffffff0ull, 0x10003fffffffff0ull,
                                     0x3fffffffbffff0ull};
static const uint64_t lz_o2_5[5] = {0x1ffffffffffffeull, 0x101ffffffffffeull, 0xfffffffffffffull,
                                    0x10001fffffffffull, 0x1fffffffdffffull};
static const uint64_t lz_o64_8[8] = {
    0x100003fffffffc0ull, 0x10bfffffffffff0ull, 0x10fffffbfffffefull, 0x10fffffffffffefull,
    0x10fffffffffffefull, 0x10fffffffffffefull, 0x10fffffffffffefull, 0x3ffffefull};
static const uint64_t lz_o2_8[8] = {0x100001fffffffeull, 0x1fdfffffffffffull, 0x1ffffffdfffffeull,
                                    0x1ffffffffffffeull, 0x1ffffffffffffeull, 0x1ffffffffffffeull,
                                    0x1ffffffffffffeull, 0x1ffffeull};

MB52_INLINE void lz_set(unsigned K, vec *acc, const mb52_row *a, unsigned sh)
{
    for (unsigned j = 0; j < K; j++) {
        acc[j] = sh ? v_sll(v_load(a[j]), sh) : v_load(a[j]);
    }
}

MB52_INLINE void lz_add(unsigned K, vec *acc, const mb52_row *a, unsigned sh)
{
    for (unsigned j = 0; j < K; j++) {
        acc[j] = v_add(acc[j], sh ? v_sll(v_load(a[j]), sh) : v_load(a[j]));
    }
}

MB52_INLINE void lz_sub(unsigned K, vec *acc, const mb52_row *a, unsigned sh)
{
    for (unsigned j = 0; j < K; j++) {
        acc[j] = v_sub(acc[j], sh ? v_sll(v_load(a[j]), sh) : v_load(a[j]));
    }
}

MB52_INLINE void lz_off(unsigned K, vec *acc)
{
    for (unsigned j = 0; j < K; j++) {
        acc[j] = v_add(acc[j], v_set1(K == 5 ? lz_o64_5[j] : lz_o64_8[j]));
    }
}

MB52_INLINE void lz_off2(unsigned K, vec *acc)
{
    for (unsigned j = 0; j < K; j++) {
        acc[j] = v_add(acc[j], v_set1(K == 5 ? lz_o2_5[j] : lz_o2_8[j]));
    }
}

MB52_INLINE void lz_norm(unsigned K, mb52_row *r, vec *acc)
{
    const vec mask = v_set1(MB52_MASK);
    for (unsigned j = 0; j + 1 < K; j++) {
        acc[j + 1] = v_add(acc[j + 1], v_sra52(acc[j]));
        v_store(r[j], v_and(acc[j], mask));
    }
    v_store(r[K - 1], acc[K - 1]);
}

/* fp_neg: r = 2p - a mod p, normalised, for 0 < a < 2p (a point's y, never
 * 0): in (0, 2p), one carry chain instead of fe_neg's subtraction and
 * correction. */
static void fp_neg(const struct ec_curve *c, mb52_row *r, const mb52_row *a)
{
    vec acc[EC_MAX_K];
    if (c->k == 5) {
        for (unsigned j = 0; j < 5; j++) {
            acc[j] = v_sub(v_set1(lz_o2_5[j]), v_load(a[j]));
        }
        lz_norm(5, r, acc);
    } else {
        for (unsigned j = 0; j < 8; j++) {
            acc[j] = v_sub(v_set1(lz_o2_8[j]), v_load(a[j]));
        }
        lz_norm(8, r, acc);
    }
}

MB52_INLINE void lz_red(unsigned K, mb52_row *r, vec *acc)
{
    if (K == 5) {
        const vec h = v_srl(acc[4], 48);
        acc[4] = v_add(v_and(acc[4], v_set1((1ull << 48) - 1)), v_sll(h, 16));
        acc[3] = v_sub(acc[3], v_sll(h, 36));
        acc[1] = v_sub(acc[1], v_sll(h, 44));
        acc[0] = v_add(acc[0], h);
    } else {
        const vec h = v_srl(acc[7], 20);
        acc[7] = v_and(acc[7], v_set1((1ull << 20) - 1));
        acc[2] = v_add(acc[2], v_sll(h, 24));
        acc[1] = v_add(acc[1], v_sll(h, 44));
        acc[0] = v_sub(v_add(acc[0], h), v_sll(h, 32));
    }
    lz_norm(K, r, acc);
}

/* ------------------------------------------------------------------------ */
/* Points                                                                    */
/* ------------------------------------------------------------------------ */

#define FP_MUL(r, a, b) fe_mul(c, &c->p, r, a, b)
#define FP_SQR(r, a) fe_sqr(c, &c->p, r, a)
#define FP_ADD(r, a, b) fe_add(c, &c->p, r, a, b)
#define FP_ADDM(r, a, b) fe_addm(c, r, a, b) /* r < 4p: multiply inputs only */
#define FP_SUB(r, a, b) fe_sub(c, &c->p, r, a, b)

static void pt_copy(unsigned k, struct ec_pt *r, const struct ec_pt *p)
{
    mb52_copy(r->x, p->x, k);
    mb52_copy(r->y, p->y, k);
    mb52_copy(r->z, p->z, k);
}

/* pt_identity: r = (0 : 1 : 0) in every lane. */
static void pt_identity(const struct ec_curve *c, struct ec_pt *r)
{
    mb52_set_small(r->x, 0, c->k);
    mb52_copy(r->y, c->p.one, c->k);
    mb52_set_small(r->z, 0, c->k);
}

/* pt_blend: r = a where m is clear, b where it is set. */
static void pt_blend(unsigned k, struct ec_pt *r, vmask m, const struct ec_pt *a,
                     const struct ec_pt *b)
{
    fe_blend(k, r->x, m, a->x, b->x);
    fe_blend(k, r->y, m, a->y, b->y);
    fe_blend(k, r->z, m, a->z, b->z);
}

/*
 * The point formulas, instantiated per digit count K (5: P-256, 8: P-384)
 * so that the lazy sums stay in registers. FK_MUL: the multiply mod p of
 * K digits (the special reductions of mul1_5 and mul1_8). Bounds: every
 * multiply takes two inputs whose product is below 16 p^2 (both < 4p, or
 * one < 2p and the other < 8p) and returns < 2p; the lazy sums are
 * reduced by lz_red (< 2p) or, where only multiplies read them, carried by
 * lz_norm (below 4p, or below 6p beside a partner < 2p). The coordinates
 * of every result are < 2p.
 */
#define FK_MUL(r, a, b) (K == 5 ? mul1_5 : mul1_8)(r, a, b, &c->p)
#define FK_SQR(r, a) (K == 5 ? sqr1_5 : sqr1_8)(r, a, &c->p)
#define FK_ADDM(r, a, b) (K == 5 ? addm_5 : addm_8)(r, a, b) /* < 4p: multiply inputs only */

/*
 * add_tail: the common end of RCB algorithms 4 and 5 (from step 19 of 4,
 * step 12 of 5): r = P + Q from t0 = X1 X2, t1 = Y1 Y2, t2 = Z1 Z2,
 * t3 = X1 Y2 + X2 Y1, t4 = Y1 Z2 + Y2 Z1, y3 = X1 Z2 + X2 Z1, all < 2p
 * (t4 < 4p): 6 M + 2 M_b and 7 lazy sums (RCB's 17 additions):
 *   x3 = 3 (y3 - b t2), z3 = t1 - x3, x3' = t1 + x3,
 *   y = 3 (b y3 - 3 t2 - t0), t0' = 3 (t0 - t2),
 *   X3 = t3 x3' - t4 y, Y3 = x3' z3 + t0' y, Z3 = t4 z3 + t3 t0'.
 * r may alias P or Q (read only through the arguments).
 */
MB52_INLINE void add_tail_k(const struct ec_curve *c, struct ec_pt *r, const mb52_row *t0,
                            const mb52_row *t1, const mb52_row *t2, const mb52_row *t3,
                            const mb52_row *t4, const mb52_row *y3, unsigned K)
{
    EC_ALIGN fe bt, x3, z3, y, t0p, u, v;
    vec acc[EC_MAX_K];
    FK_MUL(bt, c->b, t2);
    lz_set(K, acc, y3, 0); /* x3 = 3 y3 - 3 b t2 */
    lz_add(K, acc, y3, 1);
    lz_off(K, acc);
    lz_sub(K, acc, bt, 0);
    lz_sub(K, acc, bt, 1);
    lz_red(K, x3, acc);
    lz_set(K, acc, t1, 0); /* z3 = t1 - x3 */
    lz_off(K, acc);
    lz_sub(K, acc, x3, 0);
    lz_red(K, z3, acc);
    FK_ADDM(x3, t1, x3); /* x3' = t1 + x3 < 4p */
    FK_MUL(bt, c->b, y3);
    lz_set(K, acc, bt, 0); /* y = 3 b y3 - 9 t2 - 3 t0 */
    lz_add(K, acc, bt, 1);
    lz_off(K, acc);
    lz_sub(K, acc, t2, 3);
    lz_sub(K, acc, t2, 0);
    lz_sub(K, acc, t0, 1);
    lz_sub(K, acc, t0, 0);
    lz_red(K, y, acc);
    lz_set(K, acc, t0, 0); /* t0' = 3 t0 - 3 t2 */
    lz_add(K, acc, t0, 1);
    lz_off(K, acc);
    lz_sub(K, acc, t2, 0);
    lz_sub(K, acc, t2, 1);
    lz_red(K, t0p, acc);
    FK_MUL(u, t3, x3); /* X3 = t3 x3' - t4 y */
    FK_MUL(v, t4, y);
    lz_set(K, acc, u, 0);
    lz_off(K, acc);
    lz_sub(K, acc, v, 0);
    FK_MUL(u, x3, z3); /* Y3 = x3' z3 + t0' y */
    FK_MUL(v, t0p, y);
    lz_red(K, r->x, acc);
    lz_set(K, acc, u, 0);
    lz_add(K, acc, v, 0);
    FK_MUL(u, t4, z3); /* Z3 = t4 z3 + t3 t0' */
    FK_MUL(v, t3, t0p);
    lz_red(K, r->y, acc);
    lz_set(K, acc, u, 0);
    lz_add(K, acc, v, 0);
    lz_red(K, r->z, acc);
}

/* lz_prod_sum: r = (a + b)(d + e) - f - g (< 2p): the cross terms of RCB's
 * products, e.g. X1 Y2 + X2 Y1 = (X1 + Y1)(X2 + Y2) - X1 X2 - Y1 Y2. */
MB52_INLINE void lz_prod_sum(const struct ec_curve *c, mb52_row *r, const mb52_row *a,
                             const mb52_row *b, const mb52_row *d, const mb52_row *e,
                             const mb52_row *f, const mb52_row *g, unsigned K)
{
    EC_ALIGN fe u, v;
    vec acc[EC_MAX_K];
    FK_ADDM(u, a, b);
    FK_ADDM(v, d, e);
    FK_MUL(u, u, v);
    lz_set(K, acc, u, 0);
    lz_off(K, acc);
    lz_sub(K, acc, f, 0);
    lz_sub(K, acc, g, 0);
    lz_red(K, r, acc);
}

/* pt_add: r = p + q for any points (RCB algorithm 4: 12 M + 2 M_b). r may
 * alias p or q. */
MB52_INLINE void pt_add_k(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p,
                          const struct ec_pt *q, unsigned K)
{
    EC_ALIGN fe t0, t1, t2, t3, t4, y3;
    FK_MUL(t0, p->x, q->x);
    FK_MUL(t1, p->y, q->y);
    FK_MUL(t2, p->z, q->z);
    lz_prod_sum(c, t3, p->x, p->y, q->x, q->y, t0, t1, K);
    lz_prod_sum(c, t4, p->y, p->z, q->y, q->z, t1, t2, K);
    lz_prod_sum(c, y3, p->x, p->z, q->x, q->z, t0, t2, K);
    add_tail_k(c, r, t0, t1, t2, t3, t4, y3, K);
}

static void pt_add(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p,
                   const struct ec_pt *q)
{
    if (c->k == 5) {
        pt_add_k(c, r, p, q, 5);
    } else {
        pt_add_k(c, r, p, q, 8);
    }
}

/* pt_madd: r = p + (qx, qy) for any p and an affine q that is not the
 * identity (RCB algorithm 5: 11 M + 2 M_b). r may alias p. */
MB52_INLINE void pt_madd_k(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p,
                           const mb52_row *qx, const mb52_row *qy, unsigned K)
{
    EC_ALIGN fe t0, t1, t2, t3, t4, y3;
    vec acc[EC_MAX_K];
    FK_MUL(t0, p->x, qx);
    FK_MUL(t1, p->y, qy);
    lz_prod_sum(c, t3, qx, qy, p->x, p->y, t0, t1, K);
    FK_MUL(t4, qy, p->z); /* t4 = Y2 Z1 + Y1 < 4p (multiplied only) */
    lz_set(K, acc, t4, 0);
    lz_add(K, acc, p->y, 0);
    lz_norm(K, t4, acc);
    FK_MUL(y3, qx, p->z); /* y3 = X2 Z1 + X1 */
    lz_set(K, acc, y3, 0);
    lz_add(K, acc, p->x, 0);
    lz_red(K, y3, acc);
    mb52_copy(t2, p->z, K); /* Z1 Z2 with Z2 = 1 */
    add_tail_k(c, r, t0, t1, t2, t3, t4, y3, K);
}

static void pt_madd(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p,
                    const mb52_row *qx, const mb52_row *qy)
{
    if (c->k == 5) {
        pt_madd_k(c, r, p, qx, qy, 5);
    } else {
        pt_madd_k(c, r, p, qx, qy, 8);
    }
}

/*
 * pt_dbl: r = 2 p for a point p of the curve or the identity, in 7 M + 3 S
 * and 5 lazy sums: the doubling of homogeneous projective coordinates for
 * a = -3 (Cohen, Miyaji and Ono, 1998): w = 3 (X - Z)(X + Z), s = 2 Y Z,
 * R = Y s, B = 2 X R, h = w^2 - 2 B; X3 = h s, Y3 = w (B - h) - 2 R^2,
 * Z3 = s^3. Its one exceptional input is the identity (Z = 0: it would
 * give (0 : 0 : 0)); a point with y = 0 would be another, but a curve of
 * prime order has none. A mask keeps the identity the identity, so the
 * doubling of a secret accumulator that is still the identity (leading
 * zero windows) needs no branch. RCB's complete doubling (algorithm 6,
 * 8 M + 3 S + 2 M_b) costs a third more and doubles dominate d P.
 * r may alias p.
 */
MB52_INLINE void pt_dbl_k(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p,
                          unsigned K)
{
    EC_ALIGN fe w, t, s, ss, rr, b, h;
    vec acc[EC_MAX_K];
    lz_set(K, acc, p->x, 0); /* X - Z + 2p < 4p */
    lz_off2(K, acc);
    lz_sub(K, acc, p->z, 0);
    lz_norm(K, w, acc);
    FK_ADDM(t, p->x, p->z);
    FK_MUL(w, w, t);
    lz_set(K, acc, w, 0); /* w = 3 (X - Z)(X + Z) */
    lz_add(K, acc, w, 1);
    lz_red(K, w, acc);
    FK_MUL(s, p->y, p->z);
    FK_ADDM(s, s, s); /* s = 2 Y Z < 4p: multiplied only */
    FK_SQR(ss, s);
    FK_MUL(t, p->y, s); /* R */
    FK_SQR(rr, t);
    FK_MUL(b, p->x, t); /* X R; B = 2 X R */
    FK_SQR(h, w);
    lz_set(K, acc, h, 0); /* h = w^2 - 4 X R */
    lz_off(K, acc);
    lz_sub(K, acc, b, 2);
    lz_red(K, h, acc);
    fe_canon(c, &c->p, t, p->z);
    const vmask inf = fe_is_zero(K, t);
    FK_MUL(r->x, h, s);
    FK_MUL(r->z, s, ss);
    lz_set(K, acc, b, 1); /* B - h + 2p < 6p: multiplied by w < 2p only */
    lz_off2(K, acc);
    lz_sub(K, acc, h, 0);
    lz_norm(K, t, acc);
    FK_MUL(t, w, t);
    lz_set(K, acc, t, 0); /* Y3 = w (B - h) - 2 R^2 */
    lz_off(K, acc);
    lz_sub(K, acc, rr, 1);
    lz_red(K, r->y, acc);
    fe_blend(K, r->y, inf, r->y, c->p.one);
}

static void pt_dbl(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p)
{
    if (c->k == 5) {
        pt_dbl_k(c, r, p, 5);
    } else {
        pt_dbl_k(c, r, p, 8);
    }
}

/*
 * The doublings of d P in Jacobian coordinates (x = X / Z^2, y = Y / Z^3),
 * whose doubling for a = -3 costs 4 M + 4 S against the projective 7 M +
 * 3 S; the additions stay RCB's complete projective ones. A run of EC_WIN
 * doublings is entered by pt_to_jac (X Z : Y Z^2 : Z, 2 M + 1 S) and left
 * by pt_from_jac (X Z : Y : Z^3, 2 M + 1 S).
 *
 * pt_jdbl: r = 2 p in Jacobian coordinates (Bernstein and Lange's
 * dbl-2001-b with Z3 = 2 Y Z): d = Z^2, g = Y^2, b = X g,
 * a = 3 (X - d)(X + d); X3 = a^2 - 8 b, Z3 = 2 Y Z,
 * Y3 = a (4 b - X3) - 8 g^2. The identity is Z = 0 (the projective one
 * enters as (0 : 0 : 0)) and stays Z = 0: no exceptional input and no mask
 * (y = 0 has no point on a curve of prime order). r may alias p.
 */
MB52_INLINE void pt_jdbl_k(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p,
                           unsigned K)
{
    EC_ALIGN fe d, g, b, a, t;
    vec acc[EC_MAX_K];
    FK_SQR(d, p->z);
    FK_SQR(g, p->y);
    FK_MUL(b, p->x, g);
    lz_set(K, acc, p->x, 0); /* X - d + 2p < 4p */
    lz_off2(K, acc);
    lz_sub(K, acc, d, 0);
    lz_norm(K, a, acc);
    FK_ADDM(t, p->x, d);
    FK_MUL(a, a, t);
    lz_set(K, acc, a, 0); /* a = 3 (X - d)(X + d) */
    lz_add(K, acc, a, 1);
    lz_red(K, a, acc);
    FK_MUL(t, p->y, p->z); /* Z3 = 2 Y Z */
    lz_set(K, acc, t, 1);
    lz_red(K, r->z, acc);
    FK_SQR(t, a); /* X3 = a^2 - 8 b */
    lz_set(K, acc, t, 0);
    lz_off(K, acc);
    lz_sub(K, acc, b, 3);
    lz_red(K, r->x, acc);
    lz_set(K, acc, b, 2); /* 4 b - X3 */
    lz_off(K, acc);
    lz_sub(K, acc, r->x, 0);
    lz_red(K, b, acc);
    FK_MUL(a, a, b);
    FK_SQR(g, g); /* Y3 = a (4 b - X3) - 8 g^2 */
    lz_set(K, acc, a, 0);
    lz_off(K, acc);
    lz_sub(K, acc, g, 3);
    lz_red(K, r->y, acc);
}

/*
 * pt_jmadd: r = p + (qx, qy), p Jacobian, q affine and not the identity,
 * in 8 M + 3 S (the mixed addition of Jacobian coordinates):
 * U2 = x2 Z1^2, S2 = y2 Z1^3, H = U2 - X1, R = S2 - Y1; Z3 = Z1 H,
 * X3 = R^2 - H^3 - 2 X1 H^2, Y3 = R (X1 H^2 - X3) - Y1 H^3. Where p is the
 * identity (Z1 = 0) the result is q, by a mask. p = -q (H = 0, R != 0)
 * gives Z3 = 0, the identity, rightly; p = q would give it wrongly, and
 * never occurs where this is used, the windows of the fixed base (w =
 * gwin bits, digits |d| <= 2^(w-1) = h): the sum S of the windows below i
 * that a lane holds (all of them in mul_base, every eighth in
 * mul_base_spread) has |S| <= h (2^(w i) - 1) / (2^w - 1), so
 * S - d 2^(w i) for a digit d != 0 is non-zero and smaller than n in size,
 * except at the top window. There p = q needs S = d 2^(w i) - j n within
 * that bound for some j != 0 (the few j near d 2^(w i) / n); every such S
 * makes the scalar e = S + d 2^(w i) of mul_base at least n, and is no sum
 * of digits |d'| <= h at the windows of its lane in mul_base_spread (its
 * residue mod 2^(8 w) above the lane's bits is not a digit): a search of
 * every (d, j) at the top window of both curves, for 5, 6 and 7 bits,
 * finds no other S. A zero
 * digit's addition (of the last entry) may meet p = q: its result is
 * dropped by a mask. r may alias p.
 */
MB52_INLINE void pt_jmadd_k(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p,
                            const mb52_row *qx, const mb52_row *qy, unsigned K)
{
    EC_ALIGN fe zz, u, sv, h, rr, hh, hhh, t;
    vec acc[EC_MAX_K];
    fe_canon(c, &c->p, t, p->z);
    const vmask inf = fe_is_zero(K, t);
    FK_SQR(zz, p->z);
    FK_MUL(u, qx, zz);
    FK_MUL(sv, qy, p->z);
    FK_MUL(sv, sv, zz);
    lz_set(K, acc, u, 0); /* H = U2 - X1 + 2p < 4p: multiplied only */
    lz_off2(K, acc);
    lz_sub(K, acc, p->x, 0);
    lz_norm(K, h, acc);
    lz_set(K, acc, sv, 0); /* R = S2 - Y1 + 2p < 4p: multiplied only */
    lz_off2(K, acc);
    lz_sub(K, acc, p->y, 0);
    lz_norm(K, rr, acc);
    FK_MUL(r->z, p->z, h);
    FK_SQR(hh, h);
    FK_MUL(hhh, h, hh);
    FK_MUL(u, p->x, hh); /* V = X1 H^2 */
    FK_MUL(sv, p->y, hhh);
    FK_SQR(t, rr); /* X3 = R^2 - H^3 - 2 V */
    lz_set(K, acc, t, 0);
    lz_off(K, acc);
    lz_sub(K, acc, hhh, 0);
    lz_sub(K, acc, u, 1);
    lz_red(K, r->x, acc);
    lz_set(K, acc, u, 0); /* V - X3 + 2p < 4p */
    lz_off2(K, acc);
    lz_sub(K, acc, r->x, 0);
    lz_norm(K, u, acc);
    FK_MUL(t, rr, u); /* Y3 = R (V - X3) - Y1 H^3 */
    lz_set(K, acc, t, 0);
    lz_off(K, acc);
    lz_sub(K, acc, sv, 0);
    lz_red(K, r->y, acc);
    fe_blend(K, r->x, inf, r->x, qx);
    fe_blend(K, r->y, inf, r->y, qy);
    fe_blend(K, r->z, inf, r->z, c->p.one);
}

static void pt_jmadd(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p,
                     const mb52_row *qx, const mb52_row *qy)
{
    if (c->k == 5) {
        pt_jmadd_k(c, r, p, qx, qy, 5);
    } else {
        pt_jmadd_k(c, r, p, qx, qy, 8);
    }
}

/* pt_from_jac: r = p (Jacobian) in projective coordinates (X Z : Y : Z^3),
 * 2 M + 1 S; the identity (Z = 0) becomes (0 : 1 : 0) (X Z = 0, Y set to
 * one by a mask). r may alias p. */
MB52_INLINE void pt_from_jac_k(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p,
                               unsigned K)
{
    EC_ALIGN fe zz;
    FK_SQR(zz, p->z);
    FK_MUL(r->x, p->x, p->z);
    FK_MUL(r->z, p->z, zz);
    mb52_copy(r->y, p->y, K);
    fe_canon(c, &c->p, zz, r->z);
    fe_blend(K, r->y, fe_is_zero(K, zz), r->y, c->p.one);
}

/* pt_dbl_run: r = 2^EC_WIN p (projective in and out) by Jacobian doublings;
 * the identity, (0 : 0 : 0) on leaving, is set back to (0 : 1 : 0). */
MB52_INLINE void pt_dbl_run_k(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p,
                              unsigned K)
{
    EC_ALIGN fe zz;
    FK_SQR(zz, p->z); /* to Jacobian: (X Z : Y Z^2 : Z) */
    FK_MUL(r->y, p->y, zz);
    FK_MUL(r->x, p->x, p->z);
    mb52_copy(r->z, p->z, K);
    for (unsigned s = 0; s < EC_WIN; s++) {
        pt_jdbl_k(c, r, r, K);
    }
    pt_from_jac_k(c, r, r, K);
}

static void pt_dbl_run(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p)
{
    if (c->k == 5) {
        pt_dbl_run_k(c, r, p, 5);
    } else {
        pt_dbl_run_k(c, r, p, 8);
    }
}

/* pt_from_jac: pt_from_jac_k for c. */
static void pt_from_jac(const struct ec_curve *c, struct ec_pt *r, const struct ec_pt *p)
{
    if (c->k == 5) {
        pt_from_jac_k(c, r, p, 5);
    } else {
        pt_from_jac_k(c, r, p, 8);
    }
}

#undef FK_MUL
#undef FK_SQR
#undef FK_ADDM

/* on_curve: lanes where the affine (x, y) (Montgomery, < 2p) satisfies
 * y^2 = x^3 - 3x + b. */
static vmask on_curve(const struct ec_curve *c, const mb52_row *x, const mb52_row *y)
{
    EC_ALIGN fe lhs, rhs;
    FP_SQR(lhs, y);
    FP_SQR(rhs, x);
    FP_MUL(rhs, rhs, x);
    FP_SUB(rhs, rhs, x);
    FP_SUB(rhs, rhs, x);
    FP_SUB(rhs, rhs, x);
    FP_ADD(rhs, rhs, c->b);
    fe_canon(c, &c->p, lhs, lhs);
    fe_canon(c, &c->p, rhs, rhs);
    return fe_eq(c->k, lhs, rhs);
}

/* to_affine_n: (x, y) = (X / Z, Y / Z), Montgomery form, < 2p; (0, 0) for
 * the identity; and, when rn is not NULL, rn = an^-1 mod n. */
static void to_affine_n(const struct ec_curve *c, mb52_row *x, mb52_row *y, const struct ec_pt *p,
                        mb52_row *rn, const mb52_row *an)
{
    EC_ALIGN fe zi;
    fe_inv(c, &c->p, zi, p->z);
    if (rn != NULL) {
        fe_inv(c, &c->n, rn, an);
    }
    FP_MUL(x, p->x, zi);
    FP_MUL(y, p->y, zi);
}

/* to_affine: to_affine_n without the inversion mod n. */
static void to_affine(const struct ec_curve *c, mb52_row *x, mb52_row *y, const struct ec_pt *p)
{
    to_affine_n(c, x, y, p, NULL, NULL);
}

/* fault: the test hook: one bit of X flipped in the lanes of mask (X stays
 * normalised and < 2p: bit 0 moves it by one, towards an even value). The
 * shipped build has none (its glue passes no fault lanes). */
static void fault(struct ec_pt *p, unsigned mask)
{
#if MBC_TEST_HOOKS
    const vec flip = v_blend(vm_from_bits(mask), v_zero(), v_set1(1));
    v_store(p->x[0], v_xor(v_load(p->x[0]), flip));
#else
    (void)p;
    (void)mask;
#endif
}

#undef FP_MUL
#undef FP_SQR
#undef FP_ADD
#undef FP_SUB

/* ------------------------------------------------------------------------ */
/* Scalar multiplication                                                     */
/* ------------------------------------------------------------------------ */

/* win_bits: the w + 1 bits of signed window i of w bits of the scalar e
 * (k rows, plain): bits w i - 1 .. w i + w - 1 (bit -1 is 0), per lane. */
static vec win_bits(const mb52_row *e, unsigned k, unsigned w, unsigned i)
{
    return i == 0 ? v_sll(mb52_window(e, k, 0, w), 1) : mb52_window(e, k, w * i - 1, w + 1);
}

/* booth: the signed digit of the w + 1 window bits b (0..2^(w+1) - 1): its
 * absolute value 0..2^(w-1) is returned, its sign (set: negative) in *neg.
 * The digits of a scalar e < 2^(w nwin - 1) sum to e: sum d_i 2^(w i). */
static vec booth(vec b, unsigned w, vmask *neg)
{
    *neg = v_nonzero(v_srl(b, w));
    const vec d = v_blend(*neg, b, v_sub(v_set1(2 * (1u << w) - 1), b));
    return v_add(v_srl(d, 1), v_and(d, v_set1(1)));
}

/* pt_lookup: r = tab[idx] per lane (idx < n), scanning all n entries. */
static void pt_lookup(unsigned k, struct ec_pt *r, const struct ec_pt *tab, unsigned n, vec idx)
{
    vec acc[3 * EC_MAX_K];
    for (unsigned j = 0; j < k; j++) { /* entry 0 unless another one hits */
        acc[j] = v_load(tab[0].x[j]);
        acc[k + j] = v_load(tab[0].y[j]);
        acc[2 * k + j] = v_load(tab[0].z[j]);
    }
    for (unsigned t = 1; t < n; t++) {
        const vmask hit = v_eq(idx, v_set1(t));
        for (unsigned j = 0; j < k; j++) {
            acc[j] = v_blend(hit, acc[j], v_load(tab[t].x[j]));
            acc[k + j] = v_blend(hit, acc[k + j], v_load(tab[t].y[j]));
            acc[2 * k + j] = v_blend(hit, acc[2 * k + j], v_load(tab[t].z[j]));
        }
    }
    for (unsigned j = 0; j < k; j++) {
        v_store(r->x[j], acc[j]);
        v_store(r->y[j], acc[k + j]);
        v_store(r->z[j], acc[2 * k + j]);
    }
}

/* g_masks: bits 4 and 5 of each lane's index (which pair of rows holds its
 * entry), for g_merge; b5 only where a digit has 8 rows. */
static void g_masks(vec idx, unsigned nb, vmask *b4, vmask *b5)
{
    *b4 = v_nonzero(v_and(idx, v_set1(16)));
    *b5 = nb == 8 ? v_nonzero(v_and(idx, v_set1(32))) : *b4;
}

/* g_merge: each lane's entry from the nb / 2 permutes v[q] of the pairs of
 * rows of a digit (q: bits 4 and 5 of its index, masks of g_masks). */
static vec g_merge(const vec *v, unsigned nb, vmask b4, vmask b5)
{
    if (nb < 4) {
        return v[0];
    }
    const vec lo = v_blend(b4, v[0], v[1]);
    return nb == 8 ? v_blend(b5, lo, v_blend(b4, v[2], v[3])) : lo;
}

/*
 * g_lookup: (x, y) = entry idx mod 8 nb of the fixed-base window at tab
 * (ec_kern.h: 2k digit rows of nb = gblocks rows of 8 entries), per lane:
 * every row of the window is loaded, the index picks lanes within the
 * registers (v_perm2_rows over pairs of rows, then blends by bits 4 and 5
 * of the index). Per digit nb / 2 permutes and nb / 2 - 1 blends, where a
 * compare-and-blend scan took one blend per entry.
 */
static void g_lookup(unsigned k, unsigned nb, mb52_row *x, mb52_row *y, const mb52_row *tab,
                     vec idx)
{
    vmask b4, b5;
    g_masks(idx, nb, &b4, &b5);
    for (unsigned r = 0; r < 2 * k; r++) {
        const mb52_row *t = tab + (size_t)r * nb;
        vec v[EC_GT_MAX_BLOCKS / 2];
        for (unsigned q = 0; q < nb / 2; q++) {
            v[q] = v_perm2_rows(t[2 * q], t[2 * q + 1], idx);
        }
        v_store(r < k ? x[r] : y[r - k], g_merge(v, nb, b4, b5));
    }
}

/* add_window: r += the signed digit (absd, neg) whose entry absd - 1 is
 * (tx, ty), r Jacobian (pt_jmadd); a zero digit leaves r as it is (its
 * entry, the last one, is computed on and dropped). */
static void add_window(const struct ec_curve *c, struct ec_pt *r, mb52_row *tx, mb52_row *ty,
                       vec absd, vmask neg)
{
    const unsigned k = ec_k(c);
    EC_ALIGN fe ny;
    EC_ALIGN struct ec_pt t;
    fp_neg(c, ny, ty); /* an entry's y is never 0 */
    fe_blend(k, ty, neg, ty, ny);
    pt_jmadd(c, &t, r, tx, ty);
    pt_blend(k, r, v_nonzero(absd), r, &t);
}

/* mul_base: r = e G per lane (e plain, k rows, < n), with the fixed-base
 * table gtab: gnwin mixed additions into a Jacobian sum (the identity
 * (0 : 1 : 0) is one too), projective at the end. */
static void mul_base(const struct ec_curve *c, struct ec_pt *r, const mb52_row *e,
                     const mb52_row *gtab)
{
    const unsigned k = ec_k(c), nb = c->gblocks;
    const size_t wrows = (size_t)2 * k * nb;
    EC_ALIGN fe tx, ty;
    pt_identity(c, r);
    for (unsigned i = 0; i < c->gnwin; i++) {
        vmask neg;
        const vec absd = booth(win_bits(e, k, c->gwin, i), c->gwin, &neg);
        g_lookup(k, nb, tx, ty, gtab + i * wrows, v_sub(absd, v_set1(1)));
        add_window(c, r, tx, ty, absd, neg);
    }
    pt_from_jac(c, r, r);
}

/*
 * mul_var: r = e P per lane (e plain, k rows, < n; P = (px, py) affine,
 * Montgomery form, on the curve). tab: EC_VT_ENTRIES points of scratch,
 * 0..16 P. 5 (nwin - 1) doublings (Jacobian: pt_dbl_run) and nwin - 1
 * additions after the table.
 */
static void mul_var(const struct ec_curve *c, struct ec_pt *r, const mb52_row *e,
                    const mb52_row *px, const mb52_row *py, struct ec_pt *tab)
{
    const unsigned k = ec_k(c);
    pt_identity(c, &tab[0]);
    mb52_copy(tab[1].x, px, k);
    mb52_copy(tab[1].y, py, k);
    mb52_copy(tab[1].z, c->p.one, k);
    for (unsigned i = 2; i < EC_VT_ENTRIES; i++) {
        if (i % 2 == 0) {
            pt_dbl(c, &tab[i], &tab[i / 2]);
        } else {
            pt_madd(c, &tab[i], &tab[i - 1], px, py);
        }
    }
    EC_ALIGN struct ec_pt t;
    EC_ALIGN fe ny;
    for (unsigned i = c->nwin; i-- > 0;) {
        vmask neg;
        const vec absd = booth(win_bits(e, k, EC_WIN, i), EC_WIN, &neg);
        pt_lookup(k, &t, tab, EC_VT_ENTRIES, absd);
        fp_neg(c, ny, t.y);
        fe_blend(k, t.y, neg, t.y, ny);
        if (i == c->nwin - 1) {
            pt_copy(k, r, &t);
            continue;
        }
        pt_dbl_run(c, r, r);
        pt_add(c, r, r, &t);
    }
    mbc_memzero(&t, sizeof(t));
}

#if EC_SPREAD
/* lane0_bits: bits pos..pos+width-1 of lane 0 of the scalar e (k rows). */
static uint64_t lane0_bits(const mb52_row *e, unsigned k, unsigned pos, unsigned width)
{
    const unsigned j = pos / MB52_BITS, s = pos % MB52_BITS;
    uint64_t w = j < k ? e[j][0] >> s : 0;
    if (s + width > MB52_BITS && j + 1 < k) {
        w |= e[j + 1][0] << (MB52_BITS - s);
    }
    return w & ((1ull << width) - 1);
}

/*
 * g_lookup_spread: g_lookup with lane l reading the window at tl[l] (its
 * own index in lane l of idx): per pair of rows, 8 masked permutes into
 * one register (v_perm2m: lane l permuted by the rows of its window, its
 * index still in that lane until then), then the blends of g_lookup.
 */
static void g_lookup_spread(unsigned k, unsigned nb, mb52_row *x, mb52_row *y,
                            const mb52_row *const tl[8], vec idx)
{
    vmask b4, b5;
    g_masks(idx, nb, &b4, &b5);
    for (unsigned r = 0; r < 2 * k; r++) {
        vec v[EC_GT_MAX_BLOCKS / 2] = {idx, idx, idx, idx};
        for (unsigned q = 0; q < nb / 2; q++) {
            for (unsigned l = 0; l < 8; l++) {
                const mb52_row *t = tl[l] + (size_t)r * nb + 2 * q;
                v[q] = v_perm2m(v[q], vm_from_bits(1u << l), t[0], t[1]);
            }
        }
        v_store(r < k ? x[r] : y[r - k], g_merge(v, nb, b4, b5));
    }
}

/*
 * mul_base_spread: r = e G for lane 0's scalar, in lane 0: lane l adds the
 * windows 8 s + l (gsteps mixed additions, every lane its own window of the
 * table; lanes past the last window read the last one, with a zero digit),
 * then the 8 partial sums are added in a tree (3 additions: lanes l + 4,
 * l + 2, l + 1 moved under lane l through memory). Other lanes of r end up
 * with partial sums; only lane 0 is the result.
 */
static void mul_base_spread(const struct ec_curve *c, struct ec_pt *r, const mb52_row *e,
                            const mb52_row *gtab)
{
    const unsigned k = ec_k(c), w = c->gwin, nb = c->gblocks;
    const size_t wrows = (size_t)2 * k * nb;
    EC_ALIGN fe tx, ty;
    pt_identity(c, r);
    for (unsigned s = 0; s < c->gsteps; s++) {
        EC_ALIGN mb52_row b;
        const mb52_row *tl[8];
        for (unsigned l = 0; l < 8; l++) {
            const unsigned i = 8 * s + l;
            b[l] = i >= c->gnwin ? 0
                   : i == 0      ? lane0_bits(e, k, 0, w) << 1
                                 : lane0_bits(e, k, w * i - 1, w + 1);
            tl[l] = gtab + (i < c->gnwin ? i : c->gnwin - 1) * wrows;
        }
        vmask neg;
        const vec absd = booth(v_load(b), w, &neg);
        g_lookup_spread(k, nb, tx, ty, tl, v_sub(absd, v_set1(1)));
        add_window(c, r, tx, ty, absd, neg);
        mbc_memzero(b, sizeof(b));
    }
    pt_from_jac(c, r, r);
    EC_ALIGN struct ec_pt q;
    for (unsigned h = 4; h >= 1; h /= 2) {
        for (unsigned j = 0; j < k; j++) {
            for (unsigned l = 0; l < 8; l++) {
                q.x[j][l] = l < h ? r->x[j][l + h] : 0;
                q.y[j][l] = l < h ? r->y[j][l + h] : c->p.one[j][l];
                q.z[j][l] = l < h ? r->z[j][l + h] : 0;
            }
        }
        pt_add(c, r, r, &q);
    }
    mbc_memzero(&q, sizeof(q));
}
#endif

/* ------------------------------------------------------------------------ */
/* Operations                                                                */
/* ------------------------------------------------------------------------ */

/* point_mul_g: r = e G, by the batch windows or (spread) lane 0's windows
 * over the 8 lanes. */
static void point_mul_g(const struct ec_curve *c, struct ec_pt *r, const mb52_row *e,
                        const mb52_row *gtab, int spread)
{
#if EC_SPREAD
    if (spread) {
        mul_base_spread(c, r, e, gtab);
        return;
    }
#else
    (void)spread;
#endif
    mul_base(c, r, e, gtab);
}

static void base_kern(struct ec_base_args *a, int spread)
{
    const struct ec_curve *c = a->c;
    EC_ALIGN struct ec_pt q;
    EC_ALIGN fe x, y;
    mbc_test_count(MBC_KFN(ec_kern_hits));
    point_mul_g(c, &q, a->d, a->gtab, spread);
    fault(&q, a->fault_lanes);
    to_affine(c, x, y, &q);
    const vmask ok = on_curve(c, x, y);
    fe_from_mont(c, &c->p, a->x, x);
    fe_from_mont(c, &c->p, a->y, y);
    a->ok_lanes = vm_bits(ok) & a->lanes;
    mbc_memzero(&q, sizeof(q));
}

/*
 * sign_kern: R = k G; r = x(R) mod n (x(R) < p < 2n: one subtraction);
 * s = k^-1 (z + r d) mod n, all mod n in Montgomery form: k^-1 R by
 * fe_inv, r d and (z + r d) k^-1 by multiplies that leave plain values.
 */
static void sign_kern(struct ec_sign_args *a, int spread)
{
    const struct ec_curve *c = a->c;
    const struct ec_mod *n = &c->n;
    const unsigned k = ec_k(c);
    EC_ALIGN struct ec_pt pr;
    EC_ALIGN fe x, y, r, t, u, kinv;
    mbc_test_count(MBC_KFN(ec_kern_hits));
    point_mul_g(c, &pr, a->k, a->gtab, spread);
    fault(&pr, a->fault_lanes);
    fe_to_mont(c, n, u, a->k);          /* k R */
    to_affine_n(c, x, y, &pr, kinv, u); /* and k^-1 R */
    const vmask ok = on_curve(c, x, y);
    fe_from_mont(c, &c->p, t, x);
    fe_canon(c, n, r, t); /* r = x mod n */

    fe_to_mont(c, n, t, a->d); /* d R */
    fe_mul(c, n, u, r, t);     /* r d */
    fe_canon(c, n, t, a->z);   /* z mod n: z < 2^bits < 2n */
    fe_add(c, n, u, t, u);     /* z + r d */
    fe_mul(c, n, u, u, kinv);  /* (z + r d) k^-1 */
    fe_canon(c, n, u, u);

    const vmask zero = vm_or(fe_is_zero(k, r), fe_is_zero(k, u));
    mb52_copy(a->r, r, k);
    mb52_copy(a->s, u, k);
    a->ok_lanes = vm_bits(ok) & a->lanes;
    a->zero_lanes = vm_bits(zero) & a->lanes;
    mbc_memzero(&pr, sizeof(pr));
    mbc_memzero(kinv, sizeof(kinv));
    mbc_memzero(t, sizeof(t));
    mbc_memzero(u, sizeof(u));
}

void MBC_KFN(ec_base_kern)(struct ec_base_args *a)
{
    base_kern(a, 0);
}

void MBC_KFN(ec_sign_kern)(struct ec_sign_args *a)
{
    sign_kern(a, 0);
}

#if EC_SPREAD
void MBC_KFN(ec_base_spread_kern)(struct ec_base_args *a)
{
    base_kern(a, 1);
}

void MBC_KFN(ec_sign_spread_kern)(struct ec_sign_args *a)
{
    sign_kern(a, 1);
}
#endif

/*
 * verify: w = s^-1 (mod n), u1 = z w, u2 = r w; R = u1 G + u2 Q. Valid
 * when R is not the identity and x(R) mod n = r, tested without an
 * inversion: X = r Z, or X = (r + n) Z when r + n < p (mod p). Public data
 * only; the same constant-time code as the secret operations.
 */
void MBC_KFN(ec_verify_kern)(struct ec_verify_args *a)
{
    const struct ec_curve *c = a->c;
    const struct ec_mod *n = &c->n, *p = &c->p;
    const unsigned k = ec_k(c);
    EC_ALIGN struct ec_pt r1, r2;
    EC_ALIGN fe w, u1, u2, qx, qy, xc, t;
    mbc_test_count(MBC_KFN(ec_kern_hits));
    fe_to_mont(c, n, t, a->s);
    fe_inv(c, n, w, t); /* s^-1 R */
    fe_canon(c, n, t, a->z);
    fe_mul(c, n, u1, t, w);
    fe_canon(c, n, u1, u1);
    fe_mul(c, n, u2, a->r, w);
    fe_canon(c, n, u2, u2);
    mul_base(c, &r1, u1, a->gtab);
    fe_to_mont(c, p, qx, a->qx);
    fe_to_mont(c, p, qy, a->qy);
    mul_var(c, &r2, u2, qx, qy, a->scratch);
    pt_add(c, &r1, &r1, &r2);

    fe_canon(c, p, xc, r1.x);
    fe_canon(c, p, t, r1.z);
    const vmask finite = vm_not(fe_is_zero(k, t));
    fe_to_mont(c, p, t, a->r);
    fe_mul(c, p, t, t, r1.z); /* r Z */
    fe_canon(c, p, t, t);
    const vmask eq1 = fe_eq(k, t, xc);
    /* r + n, below p? */
    vec acc[EC_MAX_K], diff[EC_MAX_K];
    for (unsigned j = 0; j < k; j++) {
        acc[j] = v_add(v_load(a->r[j]), v_load(n->m[j]));
    }
    mb52_normalise(u1, acc, k);
    const vmask below_p = v_nonzero(mb52_sub_borrow(diff, u1, p->m, k));
    fe_to_mont(c, p, t, u1);
    fe_mul(c, p, t, t, r1.z); /* (r + n) Z */
    fe_canon(c, p, t, t);
    const vmask eq2 = vm_and(below_p, fe_eq(k, t, xc));
    a->ok_lanes = vm_bits(vm_and(finite, vm_or(eq1, eq2))) & a->lanes;
}

/* ecdh: x(d P) for the peer P, checked on the curve first (lanes that are
 * not compute on G instead), the result checked on the curve after. */
void MBC_KFN(ec_ecdh_kern)(struct ec_ecdh_args *a)
{
    const struct ec_curve *c = a->c;
    const unsigned k = ec_k(c);
    EC_ALIGN struct ec_pt q;
    EC_ALIGN fe px, py, x, y;
    mbc_test_count(MBC_KFN(ec_kern_hits));
    fe_to_mont(c, &c->p, px, a->px);
    fe_to_mont(c, &c->p, py, a->py);
    const vmask peer = on_curve(c, px, py);
    fe_blend(k, px, peer, c->gx, px);
    fe_blend(k, py, peer, c->gy, py);
    mul_var(c, &q, a->d, px, py, a->scratch);
    fault(&q, a->fault_lanes);
    to_affine(c, x, y, &q);
    const vmask ok = vm_and(peer, on_curve(c, x, y));
    fe_from_mont(c, &c->p, a->x, x);
    a->peer_ok = vm_bits(peer) & a->lanes;
    a->ok_lanes = vm_bits(ok) & a->lanes;
    mbc_memzero(&q, sizeof(q));
    mbc_memzero(x, sizeof(x));
    mbc_memzero(y, sizeof(y));
}

void MBC_KFN(ec_point_check)(struct ec_point_args *a)
{
    const struct ec_curve *c = a->c;
    EC_ALIGN fe x, y;
    fe_to_mont(c, &c->p, x, a->x);
    fe_to_mont(c, &c->p, y, a->y);
    a->on_curve = vm_bits(on_curve(c, x, y)) & a->lanes;
}

#if MBC_TEST_HOOKS && MBC_VEC_LANES == 8
/* ------------------------------------------------------------------------ */
/* The field and point operations, for the tests                             */
/* ------------------------------------------------------------------------ */

void MBC_KFN(ec_fe_test)(const struct ec_curve *c, const struct ec_mod *md, enum ec_fe_op op,
                         mb52_row *r, const mb52_row *a, const mb52_row *b)
{
    switch (op) {
    case EC_FE_MUL:
        fe_mul(c, md, r, a, b);
        break;
    case EC_FE_SQR:
        fe_sqr(c, md, r, a);
        break;
    case EC_FE_ADD:
        fe_add(c, md, r, a, b);
        break;
    case EC_FE_SUB:
        fe_sub(c, md, r, a, b);
        break;
    case EC_FE_NEG:
        fe_neg(c, md, r, a);
        break;
    case EC_FE_INV:
        fe_inv(c, md, r, a);
        break;
    case EC_FE_CANON:
        fe_canon(c, md, r, a);
        break;
    }
}

void MBC_KFN(ec_pt_test)(const struct ec_curve *c, enum ec_pt_op op, struct ec_pt *r,
                         const struct ec_pt *p, const struct ec_pt *q)
{
    switch (op) {
    case EC_PT_ADD:
        pt_add(c, r, p, q);
        break;
    case EC_PT_MADD:
        pt_madd(c, r, p, q->x, q->y);
        break;
    case EC_PT_DBL:
        pt_dbl(c, r, p);
        break;
    }
}
#endif

#if MBC_VEC_LANES == 1
/* ------------------------------------------------------------------------ */
/* The fixed-base table                                                      */
/* ------------------------------------------------------------------------ */

/*
 * The fixed-base table (ec_kern.h), on the one-lane build, window by
 * window: B = 2^(gwin i) G (gwin doublings of one running point per
 * window), 1..E B (E = 8 gblocks) by E - 1 point operations, 16 at a time
 * (EC_GTAB_BUILD_SCRATCH), their affine coordinates with one inversion per
 * 16 (Montgomery's simultaneous inversion: 3 multiplies per entry), fully
 * reduced, entry j in lane j mod 8 of row j / 8 of each digit row.
 */
void mbc_ec_gtab_build_c1(const struct ec_curve *c, mb52_row *tab, struct ec_pt *t)
{
    const unsigned k = ec_k(c), nb = c->gblocks, n = EC_GTAB_BUILD_SCRATCH;
    EC_ALIGN struct ec_pt g;
    EC_ALIGN fe prefix[EC_GTAB_BUILD_SCRATCH], inv, zi, v;
    mb52_copy(g.x, c->gx, k);
    mb52_copy(g.y, c->gy, k);
    mb52_copy(g.z, c->p.one, k);
    for (unsigned i = 0; i < c->gnwin; i++) {
        mb52_row *w = tab + (size_t)i * 2 * k * nb;
        for (unsigned j0 = 0; j0 < 8 * nb; j0 += n) {
            for (unsigned j = 0; j < n; j++) { /* t[j] = (j0 + j + 1) B */
                if (j0 + j == 0) {
                    pt_copy(k, &t[0], &g);
                } else if (j0 + j == 1) {
                    pt_dbl(c, &t[1], &g);
                } else {
                    pt_add(c, &t[j], &t[j > 0 ? j - 1 : n - 1], &g);
                }
            }
            mb52_copy(prefix[0], t[0].z, k);
            for (unsigned j = 1; j < n; j++) {
                fe_mul(c, &c->p, prefix[j], prefix[j - 1], t[j].z);
            }
            fe_inv(c, &c->p, inv, prefix[n - 1]);
            for (unsigned j = n; j-- > 0;) {
                if (j > 0) {
                    fe_mul(c, &c->p, zi, inv, prefix[j - 1]); /* 1 / Z_j */
                    fe_mul(c, &c->p, inv, inv, t[j].z);       /* 1 / (Z_0 .. Z_(j-1)) */
                } else {
                    mb52_copy(zi, inv, k);
                }
                const unsigned m = j0 + j;
                for (unsigned h = 0; h < 2; h++) {
                    fe_mul(c, &c->p, v, h == 0 ? t[j].x : t[j].y, zi);
                    fe_canon(c, &c->p, v, v);
                    for (unsigned d = 0; d < k; d++) {
                        w[(size_t)(h * k + d) * nb + m / 8][m % 8] = v[d][0];
                    }
                }
            }
        }
        for (unsigned d = 0; d < c->gwin; d++) {
            pt_dbl(c, &g, &g);
        }
    }
}
#endif
