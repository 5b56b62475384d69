/*
 * fe64.h - Montgomery arithmetic on N 64-bit limbs (little-endian), for a
 * compile-time N: the leaves of the scalar EC tier (ec_adx_curve.h). Built
 * with -mbmi2 -madx, the 64 x 64 -> 128-bit products are MULX and the
 * carry chains ADC/ADCX. Every value is fully reduced (< m) in and out;
 * R = 2^(64 N). Nothing here branches on or indexes by a value.
 */
#ifndef MBC_SRC_EC_FE64_H
#define MBC_SRC_EC_FE64_H

#include <immintrin.h>
#include <stdint.h>

#include "../ct.h"

typedef unsigned __int128 fe64_u128;

#define FE64_INLINE static inline __attribute__((always_inline))

/* fe64_spread: under MemorySanitizer, mask becomes secret when any of the
 * n words at ops is (MSan drops carries: a borrow of secret words reads
 * public otherwise); nothing elsewhere. */
FE64_INLINE uint64_t fe64_spread(uint64_t mask, const uint64_t *ops, unsigned n)
{
#if defined(MBC_MSAN)
    mbc_msan_spread_all(&mask, sizeof(mask), ops, n * sizeof(uint64_t));
#else
    (void)ops;
    (void)n;
#endif
    return mbc_value_barrier(mask);
}

/* fe64_sub_borrow: r = a - b (N limbs), the borrow out (0 or 1).
 * fe64_add_carry: r = a + b (N limbs), the carry out (0 or 1).
 * SBB / ADC chains through the intrinsics; under MemorySanitizer, which
 * checks the carry operand of those intrinsics as a branch condition,
 * plain 128-bit arithmetic (the same values). */
#if !defined(MBC_MSAN)
FE64_INLINE uint64_t fe64_sub_borrow(uint64_t *r, const uint64_t *a, const uint64_t *b, unsigned N)
{
    unsigned char c = 0;
    for (unsigned j = 0; j < N; j++) {
        unsigned long long t;
        c = _subborrow_u64(c, a[j], b[j], &t);
        r[j] = t;
    }
    return c;
}

FE64_INLINE uint64_t fe64_add_carry(uint64_t *r, const uint64_t *a, const uint64_t *b, unsigned N)
{
    unsigned char c = 0;
    for (unsigned j = 0; j < N; j++) {
        unsigned long long t;
        c = _addcarry_u64(c, a[j], b[j], &t);
        r[j] = t;
    }
    return c;
}
#else
FE64_INLINE uint64_t fe64_sub_borrow(uint64_t *r, const uint64_t *a, const uint64_t *b, unsigned N)
{
    uint64_t c = 0;
    for (unsigned j = 0; j < N; j++) {
        const fe64_u128 d = (fe64_u128)a[j] - b[j] - c;
        r[j] = (uint64_t)d;
        c = (uint64_t)(d >> 64) & 1;
    }
    return c;
}

FE64_INLINE uint64_t fe64_add_carry(uint64_t *r, const uint64_t *a, const uint64_t *b, unsigned N)
{
    uint64_t c = 0;
    for (unsigned j = 0; j < N; j++) {
        const fe64_u128 t = (fe64_u128)a[j] + b[j] + c;
        r[j] = (uint64_t)t;
        c = (uint64_t)(t >> 64);
    }
    return c;
}
#endif

/* fe64_select: r = mask ? a : b (mask all-ones or zero). */
FE64_INLINE void fe64_select(uint64_t *r, uint64_t mask, const uint64_t *a, const uint64_t *b,
                             unsigned N)
{
    for (unsigned j = 0; j < N; j++) {
        r[j] = (a[j] & mask) | (b[j] & ~mask);
    }
}

/* fe64_reduce_once: r = (hi:t) - m if that is >= 0, else t (t < 2m). */
FE64_INLINE void fe64_reduce_once(uint64_t *r, const uint64_t *t, uint64_t hi, const uint64_t *m,
                                  unsigned N)
{
    uint64_t d[EC64_MAX_N];
    const uint64_t borrow = fe64_sub_borrow(d, t, m, N);
    /* negative when the borrow is not covered by hi */
    const uint64_t keep = fe64_spread(0 - (borrow & ~hi & 1), t, N);
    fe64_select(r, keep, t, d, N);
}

/* fe64_add: r = a + b mod m. */
FE64_INLINE void fe64_add(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *m,
                          unsigned N)
{
    uint64_t s[EC64_MAX_N];
    const uint64_t c = fe64_add_carry(s, a, b, N);
    fe64_reduce_once(r, s, c, m, N);
}

/* fe64_sub: r = a - b mod m. */
FE64_INLINE void fe64_sub(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *m,
                          unsigned N)
{
    uint64_t d[EC64_MAX_N], t[EC64_MAX_N];
    const uint64_t borrow = fe64_sub_borrow(d, a, b, N);
    const uint64_t mask = fe64_spread(0 - borrow, d, N);
    for (unsigned j = 0; j < N; j++) {
        t[j] = m[j] & mask;
    }
    (void)fe64_add_carry(r, d, t, N);
}

/* fe64_half: r = a / 2 mod m (m odd, a < m): a + m when a is odd, shifted
 * right one bit with the carry on top. */
FE64_INLINE void fe64_half(uint64_t *r, const uint64_t *a, const uint64_t *m, unsigned N)
{
    uint64_t t[EC64_MAX_N], s[EC64_MAX_N];
    const uint64_t mask = fe64_spread(0 - (a[0] & 1), a, N);
    for (unsigned j = 0; j < N; j++) {
        t[j] = m[j] & mask;
    }
    const uint64_t c = fe64_add_carry(s, a, t, N);
    for (unsigned j = 0; j + 1 < N; j++) {
        r[j] = s[j] >> 1 | s[j + 1] << 63;
    }
    r[N - 1] = s[N - 1] >> 1 | c << 63;
}

/*
 * fe64_redc: r = t / R mod m (< m) for the 2N-limb t < m R (Montgomery
 * reduction, operand scanning: N steps of t += q m 2^(64 i) with
 * q = t_i m0). t is overwritten.
 */
FE64_INLINE void fe64_redc(uint64_t *r, uint64_t *t, const uint64_t *m, uint64_t m0, unsigned N)
{
    uint64_t top = 0;
    for (unsigned i = 0; i < N; i++) {
        const uint64_t q = t[i] * m0;
        fe64_u128 c = (fe64_u128)q * m[0] + t[i];
        for (unsigned j = 1; j < N; j++) {
            c = (fe64_u128)q * m[j] + t[i + j] + (uint64_t)(c >> 64);
            t[i + j] = (uint64_t)c;
        }
        c = (fe64_u128)t[i + N] + (uint64_t)(c >> 64) + top;
        t[i + N] = (uint64_t)c;
        top = (uint64_t)(c >> 64);
    }
    fe64_reduce_once(r, t + N, top, m, N);
}

/* fe64_mul_wide: t = a b (2N limbs). */
FE64_INLINE void fe64_mul_wide(uint64_t *t, const uint64_t *a, const uint64_t *b, unsigned N)
{
    for (unsigned j = 0; j < 2 * N; j++) {
        t[j] = 0;
    }
    for (unsigned i = 0; i < N; i++) {
        uint64_t carry = 0;
        for (unsigned j = 0; j < N; j++) {
            const fe64_u128 c = (fe64_u128)a[j] * b[i] + t[i + j] + carry;
            t[i + j] = (uint64_t)c;
            carry = (uint64_t)(c >> 64);
        }
        t[i + N] = carry;
    }
}

/* fe64_sqr_wide: t = a^2 (2N limbs): the products a_i a_j (i < j) once,
 * doubled, plus the squares. */
FE64_INLINE void fe64_sqr_wide(uint64_t *t, const uint64_t *a, unsigned N)
{
    for (unsigned j = 0; j < 2 * N; j++) {
        t[j] = 0;
    }
    for (unsigned i = 0; i + 1 < N; i++) {
        uint64_t carry = 0;
        for (unsigned j = i + 1; j < N; j++) {
            const fe64_u128 c = (fe64_u128)a[j] * a[i] + t[i + j] + carry;
            t[i + j] = (uint64_t)c;
            carry = (uint64_t)(c >> 64);
        }
        t[i + N] = carry;
    }
    t[2 * N - 1] = t[2 * N - 2] >> 63;
    for (unsigned j = 2 * N - 2; j > 0; j--) {
        t[j] = t[j] << 1 | t[j - 1] >> 63;
    }
    uint64_t carry = 0;
    for (unsigned i = 0; i < N; i++) {
        const fe64_u128 sq = (fe64_u128)a[i] * a[i];
        fe64_u128 c = (fe64_u128)t[2 * i] + (uint64_t)sq + carry;
        t[2 * i] = (uint64_t)c;
        c = (fe64_u128)t[2 * i + 1] + (uint64_t)(sq >> 64) + (uint64_t)(c >> 64);
        t[2 * i + 1] = (uint64_t)c;
        carry = (uint64_t)(c >> 64);
    }
}

/* fe64_mont_mul: r = a b / R mod m. */
FE64_INLINE void fe64_mont_mul(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *m,
                               uint64_t m0, unsigned N)
{
    uint64_t t[2 * EC64_MAX_N];
    fe64_mul_wide(t, a, b, N);
    fe64_redc(r, t, m, m0, N);
}

/* fe64_mont_sqr: r = a^2 / R mod m. */
FE64_INLINE void fe64_mont_sqr(uint64_t *r, const uint64_t *a, const uint64_t *m, uint64_t m0,
                               unsigned N)
{
    uint64_t t[2 * EC64_MAX_N];
    fe64_sqr_wide(t, a, N);
    fe64_redc(r, t, m, m0, N);
}

/* fe64_is_zero: all-ones if a == 0. */
FE64_INLINE uint64_t fe64_is_zero(const uint64_t *a, unsigned N)
{
    uint64_t acc = 0;
    for (unsigned j = 0; j < N; j++) {
        acc |= a[j];
    }
    return mbc_ct_is_zero_mask(acc);
}

/* fe64_eq: all-ones if a == b. */
FE64_INLINE uint64_t fe64_eq(const uint64_t *a, const uint64_t *b, unsigned N)
{
    uint64_t acc = 0;
    for (unsigned j = 0; j < N; j++) {
        acc |= a[j] ^ b[j];
    }
    return mbc_ct_is_zero_mask(acc);
}

#endif /* MBC_SRC_EC_FE64_H */
