/*
 * arith.h - big-number arithmetic on mb52 rows, written once against the
 * vec.h API and instantiated in each kernel object (every backend). All loops
 * run a public number of times; lane values only flow through arithmetic,
 * masks and blends, never into a branch or an address.
 *
 * R = 2^(52k) for a k-digit modulus m (odd, 4m < R). "< 2m" below means the
 * almost-Montgomery range: results are not fully reduced until
 * mb52_cond_sub() is applied.
 */
#ifndef MBC_SRC_MB52_ARITH_H
#define MBC_SRC_MB52_ARITH_H

#include "vec.h"

#define MB52_INLINE static inline __attribute__((always_inline))
/* MB52_ALIGN_ROWS: rows' alignment for arrays of another type (h52.h);
 * mb52_row has it by its type. */
#define MB52_ALIGN_ROWS __attribute__((aligned(64)))

/* The IFMA backend keeps accumulators in zmm registers only when the digit
 * loops are unrolled; the portable backend gains nothing from it and would
 * only grow (and compile, under sanitizers, for minutes). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define MB52_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MB52_SANITIZED 1
#endif
/* Sanitizer builds check correctness, not speed: unrolled and instrumented,
 * the kernels took clang over ten minutes to compile. */
#if defined(MBC_VEC_IFMA) && MBC_VEC_IFMA && !defined(MB52_SANITIZED) && !defined(MB52_NO_UNROLL)
#define MB52_PRAGMA(x) _Pragma(#x)
#define MB52_UNROLL MB52_PRAGMA(GCC unroll 80)
#else
#define MB52_UNROLL
#endif

/* mb52_normalise_s: propagates carries through acc[0..k) and stores k
 * normalised rows in r. Any carry out of the top digit is dropped: callers
 * guarantee the value fits. Unsigned digits (< 2^63), or with sign set (a
 * compile-time constant) signed digits (|acc[j]| < 2^62) of a non-negative
 * value: the carries are then arithmetic shifts, and the digits are the
 * same where both apply. */
MB52_INLINE void mb52_normalise_s(mb52_row *r, vec *acc, unsigned k, int sign)
{
    const vec mask = v_set1(MB52_MASK);
    vec carry = v_zero();
    MB52_UNROLL
    for (unsigned j = 0; j < k; j++) {
        vec t = v_add(acc[j], carry);
        carry = sign ? v_sra52(t) : v_srl52(t);
        v_store(r[j], v_and(t, mask));
    }
}

/* mb52_normalise: mb52_normalise_s for unsigned digits. */
MB52_INLINE void mb52_normalise(mb52_row *r, vec *acc, unsigned k)
{
    mb52_normalise_s(r, acc, k, 0);
}

/* The moduli with a reduction of their own (the last argument of
 * mb52_amm_q_k / mb52_ams_q_k, a compile-time constant). */
enum { MB52_GENERIC = 0, MB52_P256 = 1, MB52_P384 = 2 };

/*
 * mb52_quot: the Montgomery quotient digit of a column c, c m0inv mod 2^52.
 * p256 (a compile-time constant) says that m is P-256's p, whose m0inv is 1
 * (-p^-1 is 1 mod 2^52): the digit is then c mod 2^52, a mask instead of a
 * multiply: the same value, one cycle instead of a multiply's latency.
 */
MB52_INLINE vec mb52_quot(vec c, vec m0inv, int p256)
{
    return p256 ? v_and(c, v_set1(MB52_MASK)) : v_madd52lo(v_zero(), c, m0inv);
}

/*
 * P-256's p = 2^256 - 2^224 + 2^192 + 2^96 - 1 has the 52-bit digits
 * 2^52 - 1, 2^44 - 1, 0, 2^36 and 2^48 - 2^16. A Montgomery step that adds
 * y p (y < 2^52) needs multiply-adds for digits 1, 3 and 4 only: digit 2
 * adds nothing, and digit 0 is folded by the callers: y (2^52 - 1) =
 * y 2^52 - y, where y is the column mod 2^52, so the column minus y is its
 * own carry times 2^52, and the next column gets that carry plus y (2
 * other operations instead of 2 multiply-adds). The columns hold exactly
 * the sums of the generic step, so the digits are the same; 6 multiply-adds
 * per step instead of 10. (Digit 3 as shifts, lo52(2^36 y) = (y << 36) mod
 * 2^52 and hi52(2^36 y) = y >> 16, would trade 2 multiply-adds for 5 other
 * operations: more instructions in all, and the other operations, about
 * twice the multiply-adds in the point formulas, already bound a pass.)
 * mb52_p256_lo / mb52_p256_hi add the low / high halves of y m_j, j = 1..4,
 * to col[j].
 */
#define MB52_P256_D1 ((1ull << 44) - 1)
#define MB52_P256_D3 (1ull << 36)
#define MB52_P256_D4 ((1ull << 48) - (1ull << 16))
MB52_INLINE void mb52_p256_lo(vec *col, vec y)
{
    col[1] = v_madd52lo(col[1], v_set1(MB52_P256_D1), y);
    col[3] = v_madd52lo(col[3], v_set1(MB52_P256_D3), y);
    col[4] = v_madd52lo(col[4], v_set1(MB52_P256_D4), y);
}
MB52_INLINE void mb52_p256_hi(vec *col, vec y)
{
    col[1] = v_madd52hi(col[1], v_set1(MB52_P256_D1), y);
    col[3] = v_madd52hi(col[3], v_set1(MB52_P256_D3), y);
    col[4] = v_madd52hi(col[4], v_set1(MB52_P256_D4), y);
}

/*
 * P-384's p = 2^384 - 2^128 - 2^96 + 2^32 - 1 has the 52-bit digits 2^32 -
 * 1, 0xff00000000000, 0xffffffeffffff, four times 2^52 - 1 (digits 3..6),
 * and 2^20 - 1; m0inv is 2^32 + 1. For the four all-ones digits a step's y
 * (2^52 - 1) (2^156 + 2^208 + 2^260 + 2^312) telescopes to y 2^364 - y
 * 2^156: + y at column 7 and - y at column 3 instead of 8 multiply-adds.
 * mb52_p384_step adds y m_j, j = 1..7, to col[] that way (the multiply-adds
 * for digits 1, 2 and 7). The columns are then signed: each takes - y (<
 * 2^52) once in its life, so they stay in (-2^52, 2^61), and the carries
 * are arithmetic shifts (v_sra52; a column's low 52 bits are still its
 * residue, so the quotients are those of the generic step). The integer
 * the columns hold after each step is the generic one, hence the same
 * quotients and, normalised, the same digits. 8 multiply-adds per step
 * (quotient and m_0's high half included) instead of 16.
 */
MB52_INLINE void mb52_p384_step(vec *col, const mb52_row *m, vec y)
{
    MB52_UNROLL
    for (unsigned j = 1; j < 3; j++) {
        col[j] = v_madd52lo(col[j], v_load(m[j]), y);
        col[j + 1] = v_madd52hi(col[j + 1], v_load(m[j]), y);
    }
    col[3] = v_sub(col[3], y);
    col[7] = v_add(v_madd52lo(col[7], v_load(m[7]), y), y);
    col[8] = v_madd52hi(col[8], v_load(m[7]), y);
}

/*
 * mb52_amm_q_k: almost-Montgomery multiplication r = a * b / R mod m.
 * Pre:  a, b normalised, a, b < 2m, 4m < R, m0inv = -m^-1 mod 2^52; special:
 *       MB52_GENERIC, or MB52_P256: m is P-256's p (k = 5; see mb52_quot
 *       and mb52_p256_lo), or MB52_P384: m is P-384's p (k = 8; mb52_p384_step). More
 *       generally r < a b / R + m, so a, b < 4m give r < 2m too when
 *       16m <= R.
 * Post: r normalised, r < 2m, r == a b R^-1 (mod m). r may alias a or b.
 * Each accumulator digit takes at most 4k products of < 2^52 plus carries,
 * < 2^61 for k <= 80.
 * The chain from one quotient digit to the next is kept short (it bounds
 * a multiply: the rest has room beside it): the high halves of a b_i go in
 * before the quotient, the carry out of column 0 is (column + 2^52 - 1) >>
 * 52 without the low half of m_0 y (column plus it is a multiple of 2^52:
 * that is what y is for; P-256 folds digit 0 as mb52_p256_lo says), and
 * the high half of m_0 y joins that carry. The same sums as the row by
 * row algorithm, so the same quotients and digits.
 */
MB52_INLINE void mb52_amm_q_k(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *m,
                              vec m0inv, unsigned k, int special)
{
    vec acc[MB52_MAX_DIGITS + 2];
    const vec zero = v_zero();
    MB52_UNROLL
    for (unsigned j = 0; j < k + 2; j++) {
        acc[j] = zero;
    }
    for (unsigned i = 0; i < k; i++) {
        const vec bi = v_load(b[i]);
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            acc[j] = v_madd52lo(acc[j], v_load(a[j]), bi);
        }
        acc[k] = zero;
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            acc[j + 1] = v_madd52hi(acc[j + 1], v_load(a[j]), bi);
        }
        const vec y = mb52_quot(acc[0], m0inv, special == MB52_P256);
        vec carry;
        if (special == MB52_P384) {
            carry = v_madd52hi(v_sra52(v_add(acc[0], v_set1(MB52_MASK))), v_load(m[0]), y);
            mb52_p384_step(acc, m, y);
        } else if (special == MB52_P256) {
            mb52_p256_lo(acc, y);
            mb52_p256_hi(acc + 1, y);
            carry = v_add(v_srl52(acc[0]), y);
        } else {
            carry = v_madd52hi(v_srl52(v_add(acc[0], v_set1(MB52_MASK))), v_load(m[0]), y);
            MB52_UNROLL
            for (unsigned j = 1; j < k; j++) {
                acc[j] = v_madd52lo(acc[j], v_load(m[j]), y);
                acc[j + 1] = v_madd52hi(acc[j + 1], v_load(m[j]), y);
            }
        }
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            acc[j] = acc[j + 1];
        }
        acc[0] = v_add(acc[0], carry);
    }
    mb52_normalise_s(r, acc, k, special == MB52_P384);
}

/* mb52_amm_k: mb52_amm_q_k for any m0inv. */
MB52_INLINE void mb52_amm_k(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *m,
                            vec m0inv, unsigned k)
{
    mb52_amm_q_k(r, a, b, m, m0inv, k, MB52_GENERIC);
}

/*
 * mb52_ams_q_k: almost-Montgomery squaring r = a^2 / R mod m: the same
 * result, digit for digit, as mb52_amm_q_k(r, a, a, ...), with the cross
 * products computed once and doubled (3k^2 instead of 4k^2 multiplies).
 * Pre/post as mb52_amm_q_k. Column sums stay below 2 (2k + 2) 2^52 < 2^61.
 */
MB52_INLINE void mb52_ams_q_k(mb52_row *r, const mb52_row *a, const mb52_row *m, vec m0inv,
                              unsigned k, int special)
{
    vec t[2 * MB52_MAX_DIGITS];
    mb52_row hi[MB52_MAX_DIGITS];
    const vec zero = v_zero();
    MB52_UNROLL
    for (unsigned j = 0; j < 2 * k; j++) {
        t[j] = zero;
    }
    /* cross products a_i a_j, i < j: low half to column i + j, high to i + j + 1 */
    MB52_UNROLL
    for (unsigned i = 0; i + 1 < k; i++) {
        const vec ai = v_load(a[i]);
        MB52_UNROLL
        for (unsigned j = i + 1; j < k; j++) {
            t[i + j] = v_madd52lo(t[i + j], ai, v_load(a[j]));
            t[i + j + 1] = v_madd52hi(t[i + j + 1], ai, v_load(a[j]));
        }
    }
    /* double, then add the squares a_i^2 (columns 0 and 2k - 1 have no
     * cross products: nothing to double) */
    MB52_UNROLL
    for (unsigned i = 0; i < k; i++) {
        const vec ai = v_load(a[i]);
        const vec lo = i == 0 ? t[0] : v_add(t[2 * i], t[2 * i]);
        const vec hi = i == k - 1 ? t[2 * i + 1] : v_add(t[2 * i + 1], t[2 * i + 1]);
        t[2 * i] = v_madd52lo(lo, ai, ai);
        t[2 * i + 1] = v_madd52hi(hi, ai, ai);
    }
    MB52_UNROLL
    for (unsigned j = 0; j < k; j++) {
        v_store(hi[j], t[k + j]);
    }
    /* Montgomery reduction of the 2k columns, one quotient digit per step */
    for (unsigned i = 0; i < k; i++) {
        const vec y = mb52_quot(t[0], m0inv, special == MB52_P256);
        t[k] = v_load(hi[i]);
        if (special == MB52_P384) {
            const vec cy = v_madd52hi(v_sra52(v_add(t[0], v_set1(MB52_MASK))), v_load(m[0]), y);
            mb52_p384_step(t, m, y);
            t[1] = v_add(t[1], cy);
        } else if (special == MB52_P256) {
            t[1] = v_add(t[1], v_add(v_srl52(t[0]), y));
            mb52_p256_lo(t, y);
            mb52_p256_hi(t + 1, y);
        } else {
            /* the carry out of column 0 without the low half of m_0 y
             * (see mb52_amm_q_k), the high half beside it, off the chain
             * from y to the next quotient through column 1 */
            const vec cy = v_madd52hi(v_srl52(v_add(t[0], v_set1(MB52_MASK))), v_load(m[0]), y);
            MB52_UNROLL
            for (unsigned j = 1; j < k; j++) {
                const vec mj = v_load(m[j]);
                t[j] = v_madd52lo(t[j], mj, y);
                t[j + 1] = v_madd52hi(t[j + 1], mj, y);
            }
            t[1] = v_add(t[1], cy);
        }
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            t[j] = t[j + 1];
        }
    }
    mb52_normalise_s(r, t, k, special == MB52_P384);
}

/* mb52_ams_k: mb52_ams_q_k for any m0inv. */
MB52_INLINE void mb52_ams_k(mb52_row *r, const mb52_row *a, const mb52_row *m, vec m0inv,
                            unsigned k)
{
    mb52_ams_q_k(r, a, m, m0inv, k, MB52_GENERIC);
}

/*
 * mb52_wide_k: r = (a b + t) / R mod m, the multiply for k > 16 and the
 * reduction of mb52_ams_wide_k and mb52_redc_k. From about k = 24 the k + 2
 * column accumulators of mb52_amm_k no longer fit the 32 vector registers
 * (every multiply-add became a load and a store of a spilled column); at
 * k = 20 the parts below still made RSA-2048 private 8% faster. a and b may
 * be NULL (no product), t NULL (no addend; else 2k rows of column sums).
 * m is cut into parts of g <= 16 digits: step i takes the quotient y_i from
 * column i once part 0 of a b_i is in, and adds part 0 of m y_i; part s of
 * a b_(i - s g) and m y_(i - s g) lags s g steps behind. Column i gets its
 * last term of every part at step i itself, so y_i is exact, and only
 * columns i..i+g are live. The quotients are those of the one-row-at-a-time
 * algorithm (each is fixed by the exact column value mod 2^52), and so is
 * the result. Pre/post as mb52_amm_k (a b + t < R m for the addend).
 */
#define MB52_WIDE_GROUP(k) (((k) + ((k) + 15) / 16 - 1) / (((k) + 15) / 16))
MB52_INLINE void mb52_wide_k(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *t,
                             const mb52_row *m, vec m0inv, unsigned k)
{
    mb52_row ys[MB52_MAX_DIGITS];
    vec res[MB52_MAX_DIGITS];
    const vec zero = v_zero();
    const unsigned g = MB52_WIDE_GROUP(k);
    const unsigned parts = (k + g - 1) / g;
    const unsigned w = g + 1;
    vec acc[MB52_MAX_DIGITS / 2 + 1] = {0}; /* acc[p]: column i + p at step i */
    MB52_UNROLL
    for (unsigned p = 0; p < w; p++) {
        acc[p] = t != NULL ? v_load(t[p]) : zero;
    }
    const unsigned steps = k + (parts - 1) * g;
    for (unsigned i = 0; i < steps; i++) {
        MB52_UNROLL
        for (unsigned s = 1; s < parts; s++) {
            if (i >= s * g && i - s * g < k) {
                const unsigned i0 = i - s * g;
                const vec yl = v_load(ys[i0]);
                const vec bl = a != NULL ? v_load(b[i0]) : zero;
                const unsigned jend = (s + 1) * g < k ? (s + 1) * g : k;
                MB52_UNROLL
                for (unsigned j = s * g; j < jend; j++) {
                    const vec mj = v_load(m[j]);
                    vec lo = v_madd52lo(acc[j - s * g], mj, yl);
                    vec hi = v_madd52hi(acc[j - s * g + 1], mj, yl);
                    if (a != NULL) {
                        const vec aj = v_load(a[j]);
                        lo = v_madd52lo(lo, aj, bl);
                        hi = v_madd52hi(hi, aj, bl);
                    }
                    acc[j - s * g] = lo;
                    acc[j - s * g + 1] = hi;
                }
            }
        }
        vec carry = zero;
        if (i < k) {
            if (a != NULL) {
                const vec bi = v_load(b[i]);
                MB52_UNROLL
                for (unsigned j = 0; j < g; j++) {
                    const vec aj = v_load(a[j]);
                    acc[j] = v_madd52lo(acc[j], aj, bi);
                    acc[j + 1] = v_madd52hi(acc[j + 1], aj, bi);
                }
            }
            /* column i is complete: its quotient, then part 0 of m. The
             * low half of m_0 y is not computed: column i plus it is a
             * multiple of 2^52 (that is what y is for), so its carry is
             * (column + 2^52 - 1) >> 52, an add instead of a multiply-add
             * on the chain from y_i to y_(i+1). */
            const vec y = v_madd52lo(zero, acc[0], m0inv);
            v_store(ys[i], y);
            carry = v_srl52(v_add(acc[0], v_set1(MB52_MASK)));
            MB52_UNROLL
            for (unsigned j = 0; j < g; j++) {
                const vec mj = v_load(m[j]);
                if (j >= 1) {
                    acc[j] = v_madd52lo(acc[j], mj, y);
                }
                acc[j + 1] = v_madd52hi(acc[j + 1], mj, y);
            }
        } else {
            res[i - k] = acc[0]; /* result column, complete */
        }
        MB52_UNROLL
        for (unsigned p = 0; p + 1 < w; p++) {
            acc[p] = acc[p + 1];
        }
        acc[0] = v_add(acc[0], carry);
        acc[w - 1] = t != NULL && i + w < 2 * k ? v_load(t[i + w]) : zero;
    }
    /* the last columns, complete since the last step */
    MB52_UNROLL
    for (unsigned p = 0; steps + p < 2 * k; p++) {
        res[steps - k + p] = acc[p];
    }
    mb52_normalise(r, res, k);
}

/*
 * mb52_ams_wide_k: the same squaring (same digits) for 16 < k <= 48, where
 * the 2k column accumulators of mb52_ams_k no longer fit the 32 vector
 * registers and every multiply-add became a load and a store of a spilled
 * column.
 * Here no more than 17 columns are live at a time:
 *  1. the square, MB52_SQ_BLOCK (16) output columns at a time (each block's
 *     columns in registers, the whole of a streaming past), stored as plain
 *     column sums t[0..2k);
 *  2. the Montgomery reduction of mb52_wide_k (t its addend, no product),
 *     with m cut into parts of g <= 16 digits: step i takes the quotient y_i
 *     from column i and adds part 0 of m y_i at once, while part s of
 *     m y_(i - s g) lags s g steps behind. Column i gets its last term of
 *     every part at step i itself, so y_i is still exact, and only columns
 *     i..i+g are live.
 * The quotients are those of mb52_ams_k (each is fixed by the exact column
 * value mod 2^52), and so is the result.
 */
#define MB52_SQ_BLOCK 16
MB52_INLINE void mb52_ams_wide_k(mb52_row *r, const mb52_row *a, const mb52_row *m, vec m0inv,
                                 unsigned k)
{
    mb52_row t[2 * MB52_MAX_DIGITS];
    const vec zero = v_zero();

    /* 1. t = a^2, column sums below 2 (2k + 1) 2^52. */
    MB52_UNROLL
    for (unsigned c0 = 0; c0 < 2 * k; c0 += MB52_SQ_BLOCK) {
        vec acc[MB52_SQ_BLOCK];
        MB52_UNROLL
        for (unsigned p = 0; p < MB52_SQ_BLOCK; p++) {
            acc[p] = zero;
        }
        /* cross products a_i a_j, i < j, whose low half (column i + j) or
         * high half (column i + j + 1) lands in this block: rows i up to
         * iend (2i + 1 < c0 + MB52_SQ_BLOCK), j from jlo to jhi */
        const unsigned iend = (c0 + MB52_SQ_BLOCK) / 2 < k - 1 ? (c0 + MB52_SQ_BLOCK) / 2 : k - 1;
        MB52_UNROLL
        for (unsigned i = 0; i < iend; i++) {
            const unsigned jlo = c0 > 2 * i + 2 ? c0 - 1 - i : i + 1;
            const unsigned jend = c0 + MB52_SQ_BLOCK - i < k ? c0 + MB52_SQ_BLOCK - i : k;
            const vec ai = v_load(a[i]);
            MB52_UNROLL
            for (unsigned j = jlo; j < jend; j++) {
                const unsigned p = i + j - c0 + 1; /* column of the high half, in the block */
                const vec aj = v_load(a[j]);
                if (p >= 1 && p - 1 < MB52_SQ_BLOCK) {
                    acc[p - 1] = v_madd52lo(acc[p - 1], ai, aj);
                }
                if (p < MB52_SQ_BLOCK) {
                    acc[p] = v_madd52hi(acc[p], ai, aj);
                }
            }
        }
        /* double, add the square a_(c/2)^2 (low half in even columns, high
         * half in odd ones) and store */
        const unsigned pend = 2 * k - c0 < MB52_SQ_BLOCK ? 2 * k - c0 : MB52_SQ_BLOCK;
        MB52_UNROLL
        for (unsigned p = 0; p < pend; p++) {
            const unsigned c = c0 + p;
            const vec ah = v_load(a[c / 2]);
            const vec d = v_add(acc[p], acc[p]);
            v_store(t[c], c % 2 == 0 ? v_madd52lo(d, ah, ah) : v_madd52hi(d, ah, ah));
        }
    }

    /* 2. reduction */
    mb52_wide_k(r, NULL, NULL, t, m, m0inv, k);
}

/* mb52_ams_any_k / mb52_amm_any_k: the squaring and multiply that suit k. */
MB52_INLINE void mb52_ams_any_k(mb52_row *r, const mb52_row *a, const mb52_row *m, vec m0inv,
                                unsigned k)
{
    if (k > 48) {
        mb52_wide_k(r, a, a, NULL, m, m0inv, k);
    } else if (k > 16) {
        mb52_ams_wide_k(r, a, m, m0inv, k);
    } else {
        mb52_ams_k(r, a, m, m0inv, k);
    }
}

MB52_INLINE void mb52_amm_any_k(mb52_row *r, const mb52_row *a, const mb52_row *b,
                                const mb52_row *m, vec m0inv, unsigned k)
{
    if (k > 16) {
        mb52_wide_k(r, a, b, NULL, m, m0inv, k);
    } else {
        mb52_amm_k(r, a, b, m, m0inv, k);
    }
}

/*
 * mb52_redc_k: Montgomery reduction r = t / R mod m.
 * Pre:  t is 2k normalised rows with t < R m.  Post: r normalised, r < 2m.
 */
MB52_INLINE void mb52_redc_k(mb52_row *r, const mb52_row *t, const mb52_row *m, vec m0inv,
                             unsigned k)
{
    mb52_wide_k(r, NULL, NULL, t, m, m0inv, k);
}

/* mb52_sub_borrow: t = a - b per lane, digits masked; returns the borrow out
 * of the top digit (0 or 1 per lane). Pre: a, b normalised. */
MB52_INLINE vec mb52_sub_borrow(vec *t, const mb52_row *a, const mb52_row *b, unsigned k)
{
    const vec mask = v_set1(MB52_MASK);
    vec borrow = v_zero();
    for (unsigned j = 0; j < k; j++) {
        vec d = v_sub(v_sub(v_load(a[j]), v_load(b[j])), borrow);
        borrow = v_srl(d, 63);
        t[j] = v_and(d, mask);
    }
    return borrow;
}

/* mb52_cond_sub: r = r >= m ? r - m : r per lane. Pre: r, m normalised. */
MB52_INLINE void mb52_cond_sub(mb52_row *r, const mb52_row *m, unsigned k)
{
    vec t[MB52_MAX_DIGITS];
    const vec borrow = mb52_sub_borrow(t, r, m, k);
    const vmask ge = v_eq(borrow, v_zero());
    for (unsigned j = 0; j < k; j++) {
        v_store(r[j], v_blend(ge, v_load(r[j]), t[j]));
    }
}

/* mb52_mod_sub: r = a - b mod m per lane. Pre: a, b < m, normalised. */
MB52_INLINE void mb52_mod_sub(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *m,
                              unsigned k)
{
    vec t[MB52_MAX_DIGITS];
    const vec mask = v_set1(MB52_MASK);
    const vec borrow = mb52_sub_borrow(t, a, b, k);
    /* where a < b, add m back; the carry out of the top digit is dropped */
    const vmask neg = v_nonzero(borrow);
    vec carry = v_zero();
    for (unsigned j = 0; j < k; j++) {
        vec s = v_add(v_add(t[j], v_load(m[j])), carry);
        carry = v_srl52(s);
        v_store(r[j], v_blend(neg, t[j], v_and(s, mask)));
    }
}

/* mb52_mul_add: r (2k rows) = a * b + c, plain product. Pre: a, b, c are k
 * normalised rows. Post: r normalised (the value must fit 2k digits). */
MB52_INLINE void mb52_mul_add(mb52_row *r, const mb52_row *a, const mb52_row *b, const mb52_row *c,
                              unsigned k)
{
    vec acc[2 * MB52_MAX_DIGITS];
    for (unsigned j = 0; j < k; j++) {
        acc[j] = v_load(c[j]);
        acc[k + j] = v_zero();
    }
    for (unsigned i = 0; i < k; i++) {
        const vec bi = v_load(b[i]);
        for (unsigned j = 0; j < k; j++) {
            const vec aj = v_load(a[j]);
            acc[i + j] = v_madd52lo(acc[i + j], aj, bi);
            acc[i + j + 1] = v_madd52hi(acc[i + j + 1], aj, bi);
        }
    }
    mb52_normalise(r, acc, 2 * k);
}

/* mb52_window: bits pos..pos+width-1 of the exponent e (ke rows), per lane.
 * pos and width are public; bits at or above 52 ke read as zero. */
MB52_INLINE vec mb52_window(const mb52_row *e, unsigned ke, unsigned pos, unsigned width)
{
    const unsigned j = pos / MB52_BITS;
    const unsigned s = pos % MB52_BITS;
    vec w = v_srl(v_load(e[j]), s);
    if (s + width > MB52_BITS && j + 1 < ke) {
        w = v_or(w, v_sll(v_load(e[j + 1]), MB52_BITS - s));
    }
    return v_and(w, v_set1((1ull << width) - 1));
}

/*
 * Lookup tables of n entries of k rows each (n <= MB52_LOOKUP_MAX), stored
 * in blocks of rows: the rows j0..j0+nb-1 of every entry (nb =
 * mb52_lookup_block(k), the last block shorter when nb does not divide k)
 * lie together, entry after entry, at table + j0 n. mb52_lookup scans one
 * block of all entries at a time, its nb accumulators in registers (with k
 * unknown at compile time, one pass of k accumulators kept them on the
 * stack: a load and a store per row and entry besides the entry's load),
 * and reads the table in address order, as the prefetchers like when it
 * does not fit the L1 cache. RSA-2048's 32 entries of 20 rows on Zen 5:
 * 448 TSC cycles a lookup before, 305 in one block of 20.
 */
#define MB52_LOOKUP_MAX 64
#define MB52_LOOKUP_BLOCK 20

/* mb52_lookup_block: the rows per block of a table of k-row entries. */
MB52_INLINE unsigned mb52_lookup_block(unsigned k)
{
    return k % MB52_LOOKUP_BLOCK == 0 ? MB52_LOOKUP_BLOCK : MB52_LOOKUP_BLOCK / 2;
}

/* mb52_table_put / mb52_table_get: entry t (public) of a table of n
 * entries of k rows, from / into the k rows a. */
MB52_INLINE void mb52_table_put(mb52_row *table, unsigned n, unsigned t, const mb52_row *a,
                                unsigned k)
{
    const unsigned nb = mb52_lookup_block(k);
    for (unsigned j0 = 0; j0 < k; j0 += nb) {
        const unsigned len = k - j0 < nb ? k - j0 : nb;
        mb52_row *dst = table + (size_t)j0 * n + (size_t)t * len;
        for (unsigned j = 0; j < len; j++) {
            v_store(dst[j], v_load(a[j0 + j]));
        }
    }
}

MB52_INLINE void mb52_table_get(mb52_row *a, const mb52_row *table, unsigned n, unsigned t,
                                unsigned k)
{
    const unsigned nb = mb52_lookup_block(k);
    for (unsigned j0 = 0; j0 < k; j0 += nb) {
        const unsigned len = k - j0 < nb ? k - j0 : nb;
        const mb52_row *src = table + (size_t)j0 * n + (size_t)t * len;
        for (unsigned j = 0; j < len; j++) {
            v_store(a[j0 + j], v_load(src[j]));
        }
    }
}

/* mb52_lookup_span: nb <= MB52_LOOKUP_BLOCK rows, r[j] = base[t stride + j]
 * for the entry t whose mask hit[t] is set, per lane, reading the nb rows of
 * every one of the n entries. */
MB52_INLINE void mb52_lookup_span(mb52_row *r, const mb52_row *base, size_t stride, unsigned n,
                                  const vmask *hit, unsigned nb)
{
    vec acc[MB52_LOOKUP_BLOCK];
    MB52_UNROLL
    for (unsigned j = 0; j < MB52_LOOKUP_BLOCK; j++) {
        acc[j] = v_zero();
    }
    for (unsigned t = 0; t < n; t++) {
        const mb52_row *entry = base + (size_t)t * stride;
        MB52_UNROLL
        for (unsigned j = 0; j < nb; j++) {
            acc[j] = v_blend(hit[t], acc[j], v_load(entry[j]));
        }
    }
    MB52_UNROLL
    for (unsigned j = 0; j < nb; j++) {
        v_store(r[j], acc[j]);
    }
}

/* mb52_lookup_rows: one block of nb <= MB52_LOOKUP_BLOCK rows: r[j] =
 * block[t nb + j] for the entry t whose mask hit[t] is set, per lane. */
MB52_INLINE void mb52_lookup_rows(mb52_row *r, const mb52_row *block, unsigned n, const vmask *hit,
                                  unsigned nb)
{
    mb52_lookup_span(r, block, nb, n, hit, nb);
}

/* mb52_lookup_hits: hit[t] = the lanes where idx == t, t < n. */
MB52_INLINE void mb52_lookup_hits(vmask *hit, vec idx, unsigned n)
{
    for (unsigned t = 0; t < n; t++) {
        hit[t] = v_eq(idx, v_set1(t));
    }
}

/*
 * mb52_lookup_piece: rows MB52_LOOKUP_PIECE p .. MB52_LOOKUP_PIECE (p + 1) - 1
 * of r = table[idx] (hit from mb52_lookup_hits), reading those rows of every
 * entry: a lookup done in k / MB52_LOOKUP_PIECE pieces (k a multiple of it)
 * that a caller spreads between other work, whose serial tails (carry
 * ripples) leave issue slots the blends fill. MB52_LOOKUP_PIECE divides both
 * block lengths, so a piece never straddles a block. p is public.
 */
#define MB52_LOOKUP_PIECE 5
MB52_INLINE void mb52_lookup_piece(mb52_row *r, const mb52_row *table, unsigned n, const vmask *hit,
                                   unsigned k, unsigned p)
{
    const unsigned nb = mb52_lookup_block(k);
    const unsigned row = p * MB52_LOOKUP_PIECE;
    /* nb is one of two constants: a constant divisor, no division */
    const unsigned j0 = nb == MB52_LOOKUP_BLOCK ? row - row % MB52_LOOKUP_BLOCK
                                                : row - row % (MB52_LOOKUP_BLOCK / 2);
    const unsigned len = k - j0 < nb ? k - j0 : nb;
    mb52_lookup_span(r + row, table + (size_t)j0 * n + (row - j0), len, n, hit, MB52_LOOKUP_PIECE);
}

/* mb52_lookup: r = table[idx] per lane (a table of mb52_table_put),
 * reading every entry. idx is secret; no address depends on it. */
MB52_INLINE void mb52_lookup(mb52_row *r, const mb52_row *table, unsigned n, vec idx, unsigned k)
{
    vmask hit[MB52_LOOKUP_MAX];
    mb52_lookup_hits(hit, idx, n);
    const unsigned nb = mb52_lookup_block(k);
    for (unsigned j0 = 0; j0 < k; j0 += nb) {
        const mb52_row *block = table + (size_t)j0 * n;
        if (nb == MB52_LOOKUP_BLOCK) {
            mb52_lookup_rows(r + j0, block, n, hit, MB52_LOOKUP_BLOCK);
        } else if (k - j0 >= MB52_LOOKUP_BLOCK / 2) {
            mb52_lookup_rows(r + j0, block, n, hit, MB52_LOOKUP_BLOCK / 2);
        } else {
            mb52_lookup_rows(r + j0, block, n, hit, k - j0);
        }
    }
}

/* mb52_copy / mb52_set_small: helpers on whole numbers. */
MB52_INLINE void mb52_copy(mb52_row *r, const mb52_row *a, unsigned k)
{
    for (unsigned j = 0; j < k; j++) {
        v_store(r[j], v_load(a[j]));
    }
}

MB52_INLINE void mb52_set_small(mb52_row *r, uint64_t x, unsigned k)
{
    v_store(r[0], v_set1(x));
    for (unsigned j = 1; j < k; j++) {
        v_store(r[j], v_zero());
    }
}

#endif /* MBC_SRC_MB52_ARITH_H */
