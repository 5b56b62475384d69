/*
 * arith.h - big-number arithmetic on mb52 rows, written once against the
 * vec.h API and instantiated in each kernel object (_ifma and _c). All loops
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
#if defined(MBC_VEC_IFMA) && MBC_VEC_IFMA && !defined(MB52_SANITIZED)
#define MB52_PRAGMA(x) _Pragma(#x)
#define MB52_UNROLL MB52_PRAGMA(GCC unroll 80)
#else
#define MB52_UNROLL
#endif

/* mb52_normalise: propagates carries through acc[0..k) (digits < 2^63) and
 * stores k normalised rows in r. Any carry out of the top digit is dropped:
 * callers guarantee the value fits. */
MB52_INLINE void mb52_normalise(mb52_row *r, vec *acc, unsigned k)
{
    const vec mask = v_set1(MB52_MASK);
    vec carry = v_zero();
    MB52_UNROLL
    for (unsigned j = 0; j < k; j++) {
        vec t = v_add(acc[j], carry);
        carry = v_srl52(t);
        v_store(r[j], v_and(t, mask));
    }
}

/*
 * mb52_amm_k: almost-Montgomery multiplication r = a * b / R mod m.
 * Pre:  a, b normalised, a, b < 2m, 4m < R, m0inv = -m^-1 mod 2^52.
 * Post: r normalised, r < 2m, r == a b R^-1 (mod m). r may alias a or b.
 * Each accumulator digit takes at most 4k products of < 2^52 plus carries,
 * < 2^61 for k <= 80.
 */
MB52_INLINE void mb52_amm_k(mb52_row *r, const mb52_row *a, const mb52_row *b,
                            const mb52_row *m, vec m0inv, unsigned k)
{
    vec acc[MB52_MAX_DIGITS + 2];
    const vec zero = v_zero();
    MB52_UNROLL
    for (unsigned j = 0; j < k + 2; j++) {
        acc[j] = zero;
    }
    /* From 25 digits on, two rows of b per step: each row of a and m is then
     * loaded once for four multiplies (see the reduction in mb52_ams_k). */
    const unsigned pair = k > 24 ? 1 : 0;
    unsigned i0 = 0;
    for (; pair && i0 + 1 < k; i0 += 2) {
        const vec b0 = v_load(b[i0]), b1 = v_load(b[i0 + 1]);
        const vec a0 = v_load(a[0]), m0 = v_load(m[0]);
        acc[0] = v_madd52lo(acc[0], a0, b0);
        const vec y0 = v_madd52lo(zero, acc[0], m0inv);
        acc[1] = v_add(acc[1], v_srl52(v_madd52lo(acc[0], m0, y0))); /* column 0 is 0 */
        acc[1] = v_madd52hi(acc[1], a0, b0);
        acc[1] = v_madd52hi(acc[1], m0, y0);
        acc[1] = v_madd52lo(acc[1], a0, b1);
        acc[1] = v_madd52lo(acc[1], v_load(a[1]), b0);
        acc[1] = v_madd52lo(acc[1], v_load(m[1]), y0);
        const vec y1 = v_madd52lo(zero, acc[1], m0inv);
        acc[2] = v_add(acc[2], v_srl52(v_madd52lo(acc[1], m0, y1))); /* column 1 is 0 */
        acc[2] = v_madd52hi(acc[2], a0, b1);
        acc[2] = v_madd52hi(acc[2], m0, y1);
        MB52_UNROLL
        for (unsigned j = 1; j < k; j++) {
            const vec aj = v_load(a[j]), mj = v_load(m[j]);
            if (j >= 2) {
                acc[j] = v_madd52lo(v_madd52lo(acc[j], aj, b0), mj, y0);
            }
            acc[j + 1] = v_madd52hi(v_madd52hi(acc[j + 1], aj, b0), mj, y0);
            acc[j + 1] = v_madd52lo(v_madd52lo(acc[j + 1], aj, b1), mj, y1);
            acc[j + 2] = v_madd52hi(v_madd52hi(acc[j + 2], aj, b1), mj, y1);
        }
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            acc[j] = acc[j + 2];
        }
        acc[k] = zero;
        acc[k + 1] = zero;
    }
    for (unsigned i = i0; i < k; i++) {
        const vec bi = v_load(b[i]);
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            acc[j] = v_madd52lo(acc[j], v_load(a[j]), bi);
        }
        const vec y = v_madd52lo(zero, acc[0], m0inv);
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            acc[j] = v_madd52lo(acc[j], v_load(m[j]), y);
        }
        /* acc[0] is now 0 mod 2^52: divide by 2^52. */
        const vec carry = v_srl52(acc[0]);
        MB52_UNROLL
        for (unsigned j = 0; j + 1 < k; j++) {
            acc[j] = acc[j + 1];
        }
        acc[k - 1] = zero;
        acc[0] = v_add(acc[0], carry);
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            acc[j] = v_madd52hi(acc[j], v_load(a[j]), bi);
        }
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            acc[j] = v_madd52hi(acc[j], v_load(m[j]), y);
        }
    }
    mb52_normalise(r, acc, k);
}

/*
 * mb52_ams_k: almost-Montgomery squaring r = a^2 / R mod m: the same result,
 * digit for digit, as mb52_amm_k(r, a, a, ...), with the cross products
 * computed once and doubled (3k^2 instead of 4k^2 multiplies).
 * Pre/post as mb52_amm_k. Column sums stay below 2 (2k + 2) 2^52 < 2^61.
 */
MB52_INLINE void mb52_ams_k(mb52_row *r, const mb52_row *a, const mb52_row *m, vec m0inv,
                            unsigned k)
{
    vec t[2 * MB52_MAX_DIGITS];
    MB52_ALIGN_ROWS mb52_row hi[MB52_MAX_DIGITS];
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
    /* double, then add the squares a_i^2 */
    MB52_UNROLL
    for (unsigned i = 0; i < k; i++) {
        const vec ai = v_load(a[i]);
        t[2 * i] = v_madd52lo(v_add(t[2 * i], t[2 * i]), ai, ai);
        t[2 * i + 1] = v_madd52hi(v_add(t[2 * i + 1], t[2 * i + 1]), ai, ai);
    }
    MB52_UNROLL
    for (unsigned j = 0; j < k; j++) {
        v_store(hi[j], t[k + j]);
    }
    /* Montgomery reduction of the 2k columns. From 25 digits on, two
     * quotient digits per step, so each row of m is loaded once for four
     * multiplies (measured: RSA-4096 private +20%, public +30%); below, the
     * accumulators of one-digit steps fit the registers better (RSA-2048
     * private 5% faster). The quotients are the same either way, and so is
     * the result. An odd k ends with one single step. */
    const unsigned pair = k > 24 ? 1 : 0;
    unsigned i = 0;
    for (; pair && i + 1 < k; i += 2) {
        t[k] = v_load(hi[i]);
        t[k + 1] = v_load(hi[i + 1]);
        const vec m0 = v_load(m[0]);
        const vec y0 = v_madd52lo(zero, t[0], m0inv);
        t[1] = v_add(t[1], v_srl52(v_madd52lo(t[0], m0, y0))); /* column 0 is now 0 */
        t[1] = v_madd52hi(t[1], m0, y0);
        t[1] = v_madd52lo(t[1], v_load(m[1]), y0);
        const vec y1 = v_madd52lo(zero, t[1], m0inv);
        t[2] = v_add(t[2], v_srl52(v_madd52lo(t[1], m0, y1))); /* column 1 is now 0 */
        t[2] = v_madd52hi(t[2], m0, y1);
        MB52_UNROLL
        for (unsigned j = 1; j < k; j++) {
            const vec mj = v_load(m[j]);
            if (j >= 2) {
                t[j] = v_madd52lo(t[j], mj, y0);
            }
            t[j + 1] = v_madd52hi(t[j + 1], mj, y0);
            t[j + 1] = v_madd52lo(t[j + 1], mj, y1);
            t[j + 2] = v_madd52hi(t[j + 2], mj, y1);
        }
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            t[j] = t[j + 2];
        }
    }
    for (; i < k; i++) {
        const vec y = v_madd52lo(zero, t[0], m0inv);
        t[k] = v_load(hi[i]);
        t[1] = v_add(t[1], v_srl52(v_madd52lo(t[0], v_load(m[0]), y)));
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            const vec mj = v_load(m[j]);
            if (j >= 1) {
                t[j] = v_madd52lo(t[j], mj, y);
            }
            t[j + 1] = v_madd52hi(t[j + 1], mj, y);
        }
        MB52_UNROLL
        for (unsigned j = 0; j < k; j++) {
            t[j] = t[j + 1];
        }
    }
    mb52_normalise(r, t, k);
}

/*
 * mb52_redc_k: Montgomery reduction r = t / R mod m.
 * Pre:  t is 2k normalised rows with t < R m.  Post: r normalised, r < 2m.
 */
MB52_INLINE void mb52_redc_k(mb52_row *r, const mb52_row *t, const mb52_row *m, vec m0inv,
                             unsigned k)
{
    vec acc[MB52_MAX_DIGITS];
    const vec zero = v_zero();
    for (unsigned j = 0; j < k; j++) {
        acc[j] = v_load(t[j]);
    }
    for (unsigned i = 0; i < k; i++) {
        const vec y = v_madd52lo(zero, acc[0], m0inv);
        for (unsigned j = 0; j < k; j++) {
            acc[j] = v_madd52lo(acc[j], v_load(m[j]), y);
        }
        const vec carry = v_srl52(acc[0]);
        for (unsigned j = 0; j + 1 < k; j++) {
            acc[j] = acc[j + 1];
        }
        acc[k - 1] = v_load(t[k + i]);
        acc[0] = v_add(acc[0], carry);
        for (unsigned j = 0; j < k; j++) {
            acc[j] = v_madd52hi(acc[j], v_load(m[j]), y);
        }
    }
    mb52_normalise(r, acc, k);
}

/* mb52_cond_sub: r = r >= m ? r - m : r per lane. Pre: r, m normalised. */
MB52_INLINE void mb52_cond_sub(mb52_row *r, const mb52_row *m, unsigned k)
{
    vec t[MB52_MAX_DIGITS];
    const vec mask = v_set1(MB52_MASK);
    vec borrow = v_zero();
    for (unsigned j = 0; j < k; j++) {
        vec d = v_sub(v_sub(v_load(r[j]), v_load(m[j])), borrow);
        borrow = v_srl(d, 63);
        t[j] = v_and(d, mask);
    }
    const vmask ge = v_eq(borrow, v_zero());
    for (unsigned j = 0; j < k; j++) {
        v_store(r[j], v_blend(ge, v_load(r[j]), t[j]));
    }
}

/* mb52_mod_sub: r = a - b mod m per lane. Pre: a, b < m, normalised. */
MB52_INLINE void mb52_mod_sub(mb52_row *r, const mb52_row *a, const mb52_row *b,
                              const mb52_row *m, unsigned k)
{
    vec t[MB52_MAX_DIGITS];
    const vec mask = v_set1(MB52_MASK);
    vec borrow = v_zero();
    for (unsigned j = 0; j < k; j++) {
        vec d = v_sub(v_sub(v_load(a[j]), v_load(b[j])), borrow);
        borrow = v_srl(d, 63);
        t[j] = v_and(d, mask);
    }
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
MB52_INLINE void mb52_mul_add(mb52_row *r, const mb52_row *a, const mb52_row *b,
                              const mb52_row *c, unsigned k)
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

/* mb52_lookup: r = table[idx] per lane, reading every entry (entries are k
 * rows each, n entries). idx is secret; no address depends on it. */
MB52_INLINE void mb52_lookup(mb52_row *r, const mb52_row *table, unsigned n, vec idx,
                             unsigned k)
{
    vec acc[MB52_MAX_DIGITS];
    for (unsigned j = 0; j < k; j++) {
        acc[j] = v_zero();
    }
    for (unsigned t = 0; t < n; t++) {
        const vmask hit = v_eq(idx, v_set1(t));
        const mb52_row *entry = table + (size_t)t * k;
        for (unsigned j = 0; j < k; j++) {
            acc[j] = v_blend(hit, acc[j], v_load(entry[j]));
        }
    }
    for (unsigned j = 0; j < k; j++) {
        v_store(r[j], acc[j]);
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
