/*
 * h52.h - the horizontal Montgomery multiply on AVX-512 IFMA (kernel objects
 * built with the IFMA flags only; instances and helpers in h52.c): a lone
 * number of k digits of 52 bits is spread over the lanes of V = ceil(k / 8)
 * zmm registers (8 V digit slots, slots k and up zero), and nn <= 2 such
 * numbers, each with its own modulus, form one operand ("set") whose
 * independent dependency chains the core overlaps. Used where a lone request
 * would otherwise get 1 or 2 busy lanes of an 8-lane kernel (rsa_h2.c). The
 * result is the almost-Montgomery product of mb52_amm_k (R = 2^(52 k)),
 * digit for digit.
 *
 * h_amm, one digit b_i of B per step, for each number:
 *   u   = s + lo(a_0 b_i)                  s: digit 0 of the accumulator, exact, in a GPR
 *   y   = u k0 mod 2^52
 *   Z   = (Z >> one digit) + x,  x = lo(A' b_i) + hi(A b_i) + lo(M' y) + hi(M y)
 *   s'  = (u + lo(m_0 y)) / 2^52 + hi(a_0 b_i) + hi(m_0 y) + Z[1] + lo(a_1 b_i) + lo(m_1 y)
 * lo/hi: bits 0..51 / 52..103 of a product; A', M': A and M one digit down
 * (digit j holds digit j + 1), so x comes from four multiply-adds off the
 * accumulator's chain, which only shifts (valignq over the V registers) and
 * adds. (u + lo(m_0 y)) / 2^52 = (u + 2^52 - 1) >> 52 because the sum is a
 * multiple of 2^52; hi(x y) = the high 64 bits of (x 2^12) y. Z[1] is kept
 * in a GPR as well (from Z[2] one step earlier and the products of digit 1),
 * so the chain of s never waits for the vector unit; the b_i terms of the
 * scalar digits are computed for all i before the steps. The vector lane 0
 * of Z is never read: s holds that digit with its carries.
 * Digits of Z stay below 4 k 2^52 <= 320 2^52 < 2^61, s below 2^62; after the
 * k steps s goes into lane 0 and one carry pass plus a masked carry ripple
 * (generate/propagate bits added as integers, see h_norm) normalises the
 * result.
 *
 * One generic implementation (always-inline functions of the number count
 * nn and the register count nv), instantiated per size by H_AMM_INSTANCE
 * with constants, so every loop over numbers and registers unrolls.
 *
 * Under MemorySanitizer (MBC_MSAN) every add, multiply-add and lane shift
 * makes its whole result secret when any lane of an operand is secret
 * (mbc_msan_spread_all): MSan propagates shadow through additions without
 * their carries, and the lane shifts and carry ripples mix lanes.
 */
#ifndef MBC_SRC_MB52_H52_H
#define MBC_SRC_MB52_H52_H

#include "arith.h"

#define H_MAX_N 2       /* numbers per operand (x2) */
#define H_MAX_V 10      /* zmm registers per number (k = 80) */
#define H_MAX_DIGITS 80 /* digit slots per operand, nn 8 nv, over every instance */

/*
 * An operand ("set") is nn numbers of 8 nv digit slots each, number n at
 * digit n 8 nv, 64-byte aligned: nn nv mb52 rows. Slots k and up are zero.
 */

/* h52_mod: the moduli of a set and the scalar constants of the multiply. */
struct h52_mod {
    MB52_ALIGN_ROWS uint64_t m[H_MAX_DIGITS];
    MB52_ALIGN_ROWS uint64_t mdown[H_MAX_DIGITS]; /* m one digit down: slot j holds m_(j+1) */
    uint64_t k0[H_MAX_N];                         /* -m^-1 mod 2^52 */
    uint64_t m0s[H_MAX_N];                        /* m_0 2^12 */
    uint64_t m1[H_MAX_N];                         /* m_1 */
    uint64_t m1s[H_MAX_N];                        /* m_1 2^12 */
    uint64_t m2[H_MAX_N];                         /* m_2 */
};

/* h_lanes: one bit per digit slot of one number (up to 80 slots). */
typedef unsigned __int128 h_lanes;


/* h_spread2: under MSan, the len bytes at r become secret when any byte at
 * a or at b (len bytes each) is; nothing otherwise. */
static inline void h_spread2(void *r, const void *a, const void *b, size_t len)
{
#if defined(MBC_MSAN)
    mbc_msan_spread_all(r, len, a, len);
    mbc_msan_spread_all(r, len, b, len);
#else
    (void)r;
    (void)a;
    (void)b;
    (void)len;
#endif
}

/* h_msan64 / h_msan_lanes: v_msan_all for a scalar / a lane mask r computed
 * from a and b. */
static inline uint64_t h_msan64(uint64_t r, uint64_t a, uint64_t b)
{
    h_spread2(&r, &a, &b, sizeof(r));
    return r;
}

static inline h_lanes h_msan_lanes(h_lanes r, h_lanes a, h_lanes b)
{
    h_spread2(&r, &a, &b, sizeof(r));
    return r;
}

static inline __m512i h_madd52lo(__m512i acc, __m512i a, __m512i b)
{
    return v_msan_all(_mm512_madd52lo_epu64(acc, a, b), acc, a, b);
}

static inline __m512i h_madd52hi(__m512i acc, __m512i a, __m512i b)
{
    return v_msan_all(_mm512_madd52hi_epu64(acc, a, b), acc, a, b);
}

static inline __m512i h_add(__m512i a, __m512i b)
{
    return v_msan_all(_mm512_add_epi64(a, b), a, b, b);
}

/* h_down: lanes 1..7 of lo, then lane 0 of hi (one digit towards slot 0). */
static inline __m512i h_down(__m512i hi, __m512i lo)
{
    return v_msan_all(_mm512_alignr_epi64(hi, lo, 1), hi, lo, lo);
}

/* h_up: lane 7 of lo, then lanes 0..6 of hi (one digit away from slot 0). */
static inline __m512i h_up(__m512i hi, __m512i lo)
{
    return v_msan_all(_mm512_alignr_epi64(hi, lo, 7), hi, lo, lo);
}

/* h_mulhi: bits 64..127 of a b. */
static inline uint64_t h_mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

#define H_INLINE static inline __attribute__((always_inline))

/*
 * h_norm: normalises the nn numbers z[n] (nv registers each, digits < 2^63)
 * whose values fit their k digits: the carry out of each digit goes one slot
 * up, then the remaining carries of one (digits 2^52 and up "generate",
 * digits 2^52 - 1 "propagate") ripple in one integer addition over the
 * number's slot masks: one h_lanes word per number (8 nv <= 80 bits), so a
 * carry crosses the 64-bit halves by the compiler's add-with-carry. Nothing
 * carries out of slot k - 1.
 */
H_INLINE void h_norm(__m512i z[H_MAX_N][H_MAX_V], const unsigned nn, const unsigned nv)
{
    const __m512i mask = _mm512_set1_epi64((long long)MB52_MASK);
    const __m512i zero = _mm512_setzero_si512();
    const __m512i one = _mm512_set1_epi64(1);
    for (unsigned n = 0; n < nn; n++) {
        __m512i c[H_MAX_V];
        for (unsigned j = 0; j < nv; j++) {
            c[j] = _mm512_srli_epi64(z[n][j], MB52_BITS);
            z[n][j] = _mm512_and_si512(z[n][j], mask);
        }
        z[n][0] = h_add(z[n][0], h_up(c[0], zero));
        for (unsigned j = 1; j < nv; j++) {
            z[n][j] = h_add(z[n][j], h_up(c[j], c[j - 1]));
        }
        h_lanes gen = 0, prop = 0;
        for (unsigned j = 0; j < nv; j++) {
            gen |= (h_lanes)_mm512_cmpgt_epu64_mask(z[n][j], mask) << (8 * j);
            prop |= (h_lanes)_mm512_cmpeq_epu64_mask(z[n][j], mask) << (8 * j);
        }
        /* slots that receive a carry: generated one slot below, or
         * propagated through a run of 2^52 - 1 digits */
        const h_lanes g2 = gen << 1;
        const h_lanes cin = h_msan_lanes(g2 + prop, g2, prop) ^ prop;
        for (unsigned j = 0; j < nv; j++) {
            const __mmask8 k = (__mmask8)(cin >> (8 * j));
            const __m512i t = _mm512_mask_add_epi64(z[n][j], k, z[n][j], one);
            z[n][j] = _mm512_and_si512(v_msan_all(t, z[n][j], t, t), mask);
        }
    }
}

/*
 * h_amm: r = a b / R mod m for each of the nn numbers (almost Montgomery:
 * r < 2m), k digits in nv registers per number. Pre: a, b < 2m, normalised;
 * r may alias a or b.
 */
H_INLINE void h_amm(uint64_t *r, const uint64_t *a, const uint64_t *b, const struct h52_mod *md,
                    const unsigned nn, const unsigned nv, const unsigned k)
{
    const unsigned sl = 8 * nv; /* slots per number */
    const __m512i zero = _mm512_setzero_si512();
    __m512i av[H_MAX_N][H_MAX_V], ad[H_MAX_N][H_MAX_V], z[H_MAX_N][H_MAX_V];
    uint64_t s[H_MAX_N], d1[H_MAX_N]; /* digits 0 and 1 of the accumulator, in GPRs */
    /* the b_i terms of the scalar digits, for all i at once (vector):
     * lo(a_0 b_i); hi(a_0 b_i) + lo(a_1 b_i); hi(a_1 b_i) + lo(a_2 b_i) */
    MB52_ALIGN_ROWS uint64_t l0[H_MAX_DIGITS], pr[H_MAX_DIGITS], q1[H_MAX_DIGITS];
    for (unsigned n = 0; n < nn; n++) {
        const uint64_t *an = a + n * sl;
        for (unsigned j = 0; j < nv; j++) {
            av[n][j] = _mm512_load_si512((const void *)(an + 8 * j));
            z[n][j] = zero;
        }
        for (unsigned j = 0; j < nv; j++) {
            ad[n][j] = h_down(j + 1 < nv ? av[n][j + 1] : zero, av[n][j]);
        }
        s[n] = 0;
        d1[n] = 0;
        const __m512i a0v = _mm512_set1_epi64((long long)an[0]);
        const __m512i a1v = _mm512_set1_epi64((long long)an[1]);
        const __m512i a2v = _mm512_set1_epi64((long long)an[2]);
        for (unsigned j = 0; j < nv; j++) {
            const __m512i bj = _mm512_load_si512((const void *)(b + n * sl + 8 * j));
            const unsigned o = n * sl + 8 * j;
            _mm512_store_si512((void *)(l0 + o), h_madd52lo(zero, a0v, bj));
            _mm512_store_si512((void *)(pr + o), h_madd52hi(h_madd52lo(zero, a1v, bj), a0v, bj));
            _mm512_store_si512((void *)(q1 + o), h_madd52hi(h_madd52lo(zero, a2v, bj), a1v, bj));
        }
    }
    /* kept rolled: unrolled, gcc spilled the accumulator to the stack */
#pragma GCC unroll 1
    for (unsigned i = 0; i < k; i++) {
        for (unsigned n = 0; n < nn; n++) {
            const unsigned o = n * sl + i;
            /* the scalar digits 0 and 1 of the next step (digit 1 from the
             * vector's digit 2 of two steps back: off the chain of s) */
            const uint64_t z2 = (uint64_t)_mm_cvtsi128_si64(_mm512_extracti32x4_epi32(z[n][0], 1));
            const uint64_t pre = h_msan64(d1[n] + pr[o], d1[n], pr[o]);
            const uint64_t u = h_msan64(s[n] + l0[o], s[n], l0[o]);
            const uint64_t y = (u * md->k0[n]) & MB52_MASK;
            const uint64_t sn = ((u + MB52_MASK) >> MB52_BITS) + h_mulhi(md->m0s[n], y) +
                                (((md->m1[n] * y) & MB52_MASK) + pre);
            s[n] = h_msan64(sn, u, pre);
            const uint64_t dn = z2 + q1[o] + h_mulhi(md->m1s[n], y) + ((md->m2[n] * y) & MB52_MASK);
            d1[n] = h_msan64(dn, z2, y);
            /* the vector digits 1..k-1: x = lo(A b_i) + lo(M y) one digit
             * down (from the shifted copies) + hi(A b_i) + hi(M y), off the
             * accumulator's chain, which only shifts and adds */
            const __m512i bv = _mm512_set1_epi64((long long)b[o]);
            const __m512i yv = _mm512_set1_epi64((long long)y);
            for (unsigned j = 0; j < nv; j++) {
                const __m512i mv = _mm512_load_si512((const void *)(md->m + n * sl + 8 * j));
                const __m512i mdv = _mm512_load_si512((const void *)(md->mdown + n * sl + 8 * j));
                __m512i x = h_madd52hi(h_madd52lo(zero, ad[n][j], bv), av[n][j], bv);
                x = h_madd52hi(h_madd52lo(x, mdv, yv), mv, yv);
                z[n][j] = h_add(h_down(j + 1 < nv ? z[n][j + 1] : zero, z[n][j]), x);
            }
        }
    }
    for (unsigned n = 0; n < nn; n++) {
        const __m512i sv = _mm512_set1_epi64((long long)s[n]);
        z[n][0] = v_msan_all(_mm512_mask_mov_epi64(z[n][0], 1, sv), z[n][0], sv, sv);
    }
    h_norm(z, nn, nv);
    for (unsigned n = 0; n < nn; n++) {
        for (unsigned j = 0; j < nv; j++) {
            _mm512_store_si512((void *)(r + n * sl + 8 * j), z[n][j]);
        }
    }
}

/* h_lookup: r = table[idx_n] for each number n, reading every entry; idx
 * (lane n: the window of number n) is secret, no address depends on it. */
H_INLINE void h_lookup(uint64_t *r, const uint64_t *table, unsigned nt, __m512i idx,
                       const unsigned nn, const unsigned nv)
{
    const unsigned sz = nn * 8 * nv; /* digits per entry */
    __m512i iv[H_MAX_N], acc[H_MAX_N][H_MAX_V];
    for (unsigned n = 0; n < nn; n++) {
        iv[n] = _mm512_permutexvar_epi64(_mm512_set1_epi64(n), idx);
        for (unsigned j = 0; j < nv; j++) {
            acc[n][j] = _mm512_setzero_si512();
        }
    }
    for (unsigned t = 0; t < nt; t++) {
        for (unsigned n = 0; n < nn; n++) {
            const __mmask8 hit = _mm512_cmpeq_epi64_mask(iv[n], _mm512_set1_epi64(t));
            for (unsigned j = 0; j < nv; j++) {
                acc[n][j] = _mm512_mask_mov_epi64(
                    acc[n][j], hit,
                    _mm512_load_si512((const void *)(table + t * sz + (n * nv + j) * 8)));
            }
        }
    }
    for (unsigned n = 0; n < nn; n++) {
        for (unsigned j = 0; j < nv; j++) {
            _mm512_store_si512((void *)(r + (n * nv + j) * 8), acc[n][j]);
        }
    }
}

typedef void h52_amm_fn(uint64_t *r, const uint64_t *a, const uint64_t *b,
                        const struct h52_mod *md);
typedef void h52_lookup_fn(uint64_t *r, const uint64_t *table, unsigned nt, __m512i idx);

/* h52_size: one instance: nn numbers of k digits in nv = H52_V(k) registers
 * each; amm is h_amm, lookup h_lookup (NULL where no user needs it). */
struct h52_size {
    unsigned nn, nv, k;
    h52_amm_fn *amm;
    h52_lookup_fn *lookup;
};

/* mbc_h52_size: the instance of nn numbers of k digits, NULL when there is
 * none (h52.c lists them: 2 x 20, 30, 40 and 1 x 40, 60, 80). */
const struct h52_size *mbc_h52_size(unsigned nn, unsigned k);

/* mbc_h52_from_rows / mbc_h52_to_rows: lanes 0..nn-1 of k vertical rows <->
 * a set (to_rows zeroes lanes nn..7). */
void mbc_h52_from_rows(uint64_t *h, const mb52_row *v, const struct h52_size *z);
void mbc_h52_to_rows(mb52_row *v, const uint64_t *h, const struct h52_size *z);

/* mbc_h52_mod_init: hm gets the moduli of lanes 0..nn-1 of md and their
 * constants (the caller wipes hm when the moduli are secret). */
void mbc_h52_mod_init(struct h52_mod *hm, const struct mb52_mod *md, const struct h52_size *z);

#endif /* MBC_SRC_MB52_H52_H */
