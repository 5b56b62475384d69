/*
 * rsa_h2.c - the two CRT half exponentiations of a lone RSA-2048 private
 * request in a horizontal layout, interleaved (AVX-512 IFMA only: built into
 * the _ifma kernel object with its flags).
 *
 * The 8-lane vertical kernels give a lone request 2 busy lanes out of 8. Here
 * each 1024-bit number is 20 digits of 52 bits spread over the lanes of 3
 * zmm registers (24 digit slots, slots 20..23 zero), and the half mod p and
 * the half mod q run side by side ("x2"): two independent dependency chains
 * that the core overlaps. The mathematics is that of rsa_kern.c: the same
 * almost-Montgomery multiply (R = 2^1040, hence the same digits), the same
 * fixed windows and full table scans.
 *
 * h2_amm, one digit b_i of B per step, for each of the two numbers:
 *   u   = s + lo(a_0 b_i)                  s: digit 0 of the accumulator, exact, in a GPR
 *   y   = u k0 mod 2^52
 *   Z   = (Z >> one digit) + x,  x = lo(A' b_i) + hi(A b_i) + lo(M' y) + hi(M y)
 *   s'  = (u + lo(m_0 y)) / 2^52 + hi(a_0 b_i) + hi(m_0 y) + Z[1] + lo(a_1 b_i) + lo(m_1 y)
 * lo/hi: bits 0..51 / 52..103 of a product; A', M': A and M one digit down
 * (digit j holds digit j + 1), so x comes from four multiply-adds off the
 * accumulator's chain, which only shifts (valignq over the 3 registers) and
 * adds. (u + lo(m_0 y)) / 2^52 = (u + 2^52 - 1) >> 52 because the sum is a
 * multiple of 2^52; hi(x y) = the high 64 bits of (x 2^12) y. Z[1] is kept
 * in a GPR as well (from Z[2] one step earlier and the products of digit 1),
 * so the chain of s never waits for the vector unit; the b_i terms of the
 * scalar digits are computed for all i before the steps. The vector lane 0
 * of Z is never read: s holds that digit with its carries.
 * Digits of Z stay below 4 * 20 * 2^52 < 2^59, s below 2^61; after the 20
 * steps s goes into lane 0 and one carry pass plus a masked carry ripple
 * (generate/propagate bits added as integers) normalises the result.
 *
 * Under MemorySanitizer (MBC_MSAN) every add, multiply-add and lane shift
 * makes its whole result secret when any lane of an operand is secret
 * (mbc_msan_spread_all): MSan propagates shadow through additions without
 * their carries, and the lane shifts and carry ripples mix lanes.
 */
#include "../internal.h"
#include "../mb52/arith.h"
#include "rsa_h2.h"

#define H2_V 3      /* zmm registers per number */
#define H2_SLOTS 24 /* digit slots per number */

/* h2_pair: the two numbers of one x2 operand (0: mod p, 1: mod q), each
 * H2_SLOTS digits, slots RSA_H2_K and up zero; 6 mb52 rows. */
struct h2_pair {
    MB52_ALIGN_ROWS uint64_t d[2][H2_SLOTS];
};

/* h2_mod: the two moduli and the scalar constants of the x2 multiply. */
struct h2_mod {
    struct h2_pair m;
    struct {
        __m512i v[2][H2_V];
    } mdown;         /* m one digit down: digit j holds m_(j+1) */
    uint64_t k0[2];  /* -m^-1 mod 2^52 */
    uint64_t m0s[2]; /* m_0 2^12 */
    uint64_t m1[2];  /* m_1 */
    uint64_t m1s[2]; /* m_1 2^12 */
    uint64_t m2[2];  /* m_2 */
};

/* h_msan: r, wholly secret under MSan when any lane of a, b or c is. */
static inline __m512i h_msan(__m512i r, __m512i a, __m512i b, __m512i c)
{
#if defined(MBC_MSAN)
    uint64_t rv[8], ov[24];
    _mm512_storeu_si512((void *)rv, r);
    _mm512_storeu_si512((void *)ov, a);
    _mm512_storeu_si512((void *)(ov + 8), b);
    _mm512_storeu_si512((void *)(ov + 16), c);
    mbc_msan_spread_all(rv, sizeof(rv), ov, sizeof(ov));
    return _mm512_loadu_si512((const void *)rv);
#else
    (void)a;
    (void)b;
    (void)c;
    return r;
#endif
}

/* h_msan64: the same for a scalar r computed from a and b. */
static inline uint64_t h_msan64(uint64_t r, uint64_t a, uint64_t b)
{
#if defined(MBC_MSAN)
    const uint64_t ov[2] = {a, b};
    mbc_msan_spread_all(&r, sizeof(r), ov, sizeof(ov));
#else
    (void)a;
    (void)b;
#endif
    return r;
}

static inline __m512i h_madd52lo(__m512i acc, __m512i a, __m512i b)
{
    return h_msan(_mm512_madd52lo_epu64(acc, a, b), acc, a, b);
}

static inline __m512i h_madd52hi(__m512i acc, __m512i a, __m512i b)
{
    return h_msan(_mm512_madd52hi_epu64(acc, a, b), acc, a, b);
}

static inline __m512i h_add(__m512i a, __m512i b)
{
    return h_msan(_mm512_add_epi64(a, b), a, b, b);
}

/* h_down: lanes 1..7 of lo, then lane 0 of hi (one digit towards slot 0). */
static inline __m512i h_down(__m512i hi, __m512i lo)
{
    return h_msan(_mm512_alignr_epi64(hi, lo, 1), hi, lo, lo);
}

/* h_up: lane 7 of lo, then lanes 0..6 of hi (one digit away from slot 0). */
static inline __m512i h_up(__m512i hi, __m512i lo)
{
    return h_msan(_mm512_alignr_epi64(hi, lo, 7), hi, lo, lo);
}

/* h_mulhi: bits 64..127 of a b. */
static inline uint64_t h_mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

/*
 * h2_norm: normalises the two numbers z[0], z[1] (digits < 2^63) whose values
 * fit RSA_H2_K digits: the carry out of each digit goes one slot up, then the
 * remaining carries of one (digits 2^52 and up "generate", digits 2^52 - 1
 * "propagate") ripple in one integer addition over 24-bit lane masks, the
 * two numbers side by side in one 64-bit word.
 */
static inline void h2_norm(__m512i z[2][H2_V])
{
    const __m512i mask = _mm512_set1_epi64((long long)MB52_MASK);
    const __m512i zero = _mm512_setzero_si512();
    const __m512i one = _mm512_set1_epi64(1);
    uint64_t gen = 0, prop = 0;
    for (unsigned n = 0; n < 2; n++) {
        __m512i c[H2_V];
        for (unsigned j = 0; j < H2_V; j++) {
            c[j] = _mm512_srli_epi64(z[n][j], MB52_BITS);
            z[n][j] = _mm512_and_si512(z[n][j], mask);
        }
        z[n][0] = h_add(z[n][0], h_up(c[0], zero));
        z[n][1] = h_add(z[n][1], h_up(c[1], c[0]));
        z[n][2] = h_add(z[n][2], h_up(c[2], c[1]));
        for (unsigned j = 0; j < H2_V; j++) {
            const unsigned sh = 32 * n + 8 * j;
            gen |= (uint64_t)_mm512_cmpgt_epu64_mask(z[n][j], mask) << sh;
            prop |= (uint64_t)_mm512_cmpeq_epu64_mask(z[n][j], mask) << sh;
        }
    }
    /* lanes that receive a carry: generated one lane below, or propagated
     * through a run of 2^52 - 1 digits; nothing carries out of slot 19 */
    const uint64_t g2 = gen << 1;
    const uint64_t cin = h_msan64(g2 + prop, g2, prop) ^ prop;
    for (unsigned n = 0; n < 2; n++) {
        for (unsigned j = 0; j < H2_V; j++) {
            const __mmask8 k = (__mmask8)(cin >> (32 * n + 8 * j));
            const __m512i t = _mm512_mask_add_epi64(z[n][j], k, z[n][j], one);
            z[n][j] = _mm512_and_si512(h_msan(t, z[n][j], t, t), mask);
        }
    }
}

/*
 * h2_amm: r = a b / R mod m for both numbers (almost Montgomery: r < 2m).
 * Pre: a, b < 2m, normalised; r may alias a or b.
 */
/* One copy, called from the table and the window loop. */
static __attribute__((noinline)) void h2_amm(struct h2_pair *r, const struct h2_pair *a,
                                             const struct h2_pair *b, const struct h2_mod *md)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i av[2][H2_V], ad[2][H2_V], mv[2][H2_V], z[2][H2_V];
    uint64_t s[2];
    /* the b_i terms of the scalar digits, for all i at once (vector):
     * lo(a_0 b_i); hi(a_0 b_i) + lo(a_1 b_i); hi(a_1 b_i) + lo(a_2 b_i) */
    MB52_ALIGN_ROWS uint64_t l0[2][H2_SLOTS], pr[2][H2_SLOTS], q1[2][H2_SLOTS];
    uint64_t d1[2] = {0, 0}; /* digit 1 of the accumulator, kept in a GPR too */
    for (unsigned n = 0; n < 2; n++) {
        for (unsigned j = 0; j < H2_V; j++) {
            av[n][j] = _mm512_load_si512((const void *)(a->d[n] + 8 * j));
            mv[n][j] = _mm512_load_si512((const void *)(md->m.d[n] + 8 * j));
            z[n][j] = zero;
        }
        ad[n][0] = h_down(av[n][1], av[n][0]);
        ad[n][1] = h_down(av[n][2], av[n][1]);
        ad[n][2] = h_down(zero, av[n][2]);
        s[n] = 0;
        const __m512i a0v = _mm512_set1_epi64((long long)a->d[n][0]);
        const __m512i a1v = _mm512_set1_epi64((long long)a->d[n][1]);
        const __m512i a2v = _mm512_set1_epi64((long long)a->d[n][2]);
        for (unsigned j = 0; j < H2_V; j++) {
            const __m512i bj = _mm512_load_si512((const void *)(b->d[n] + 8 * j));
            _mm512_store_si512((void *)(l0[n] + 8 * j), h_madd52lo(zero, a0v, bj));
            _mm512_store_si512((void *)(pr[n] + 8 * j),
                               h_madd52hi(h_madd52lo(zero, a1v, bj), a0v, bj));
            _mm512_store_si512((void *)(q1[n] + 8 * j),
                               h_madd52hi(h_madd52lo(zero, a2v, bj), a1v, bj));
        }
    }
    /* kept rolled: unrolled, gcc spilled the accumulator to the stack */
#pragma GCC unroll 1
    for (unsigned i = 0; i < RSA_H2_K; i++) {
        for (unsigned n = 0; n < 2; n++) {
            /* the scalar digits 0 and 1 of the next step (digit 1 from the
             * vector's digit 2 of two steps back: off the chain of s) */
            const uint64_t z2 = (uint64_t)_mm_cvtsi128_si64(_mm512_extracti32x4_epi32(z[n][0], 1));
            const uint64_t pre = h_msan64(d1[n] + pr[n][i], d1[n], pr[n][i]);
            const uint64_t u = h_msan64(s[n] + l0[n][i], s[n], l0[n][i]);
            const uint64_t y = (u * md->k0[n]) & MB52_MASK;
            const uint64_t sn = ((u + MB52_MASK) >> MB52_BITS) + h_mulhi(md->m0s[n], y) +
                                (((md->m1[n] * y) & MB52_MASK) + pre);
            s[n] = h_msan64(sn, u, pre);
            const uint64_t dn =
                z2 + q1[n][i] + h_mulhi(md->m1s[n], y) + ((md->m2[n] * y) & MB52_MASK);
            d1[n] = h_msan64(dn, z2, y);
            /* the vector digits 1..19: x = lo(A b_i) + lo(M y) one digit
             * down (from the shifted copies) + hi(A b_i) + hi(M y), off the
             * accumulator's chain, which only shifts and adds */
            const __m512i bv = _mm512_set1_epi64((long long)b->d[n][i]);
            const __m512i yv = _mm512_set1_epi64((long long)y);
            __m512i x[H2_V];
            for (unsigned j = 0; j < H2_V; j++) {
                x[j] = h_madd52hi(h_madd52lo(zero, ad[n][j], bv), av[n][j], bv);
                x[j] = h_madd52hi(h_madd52lo(x[j], md->mdown.v[n][j], yv), mv[n][j], yv);
            }
            z[n][0] = h_add(h_down(z[n][1], z[n][0]), x[0]);
            z[n][1] = h_add(h_down(z[n][2], z[n][1]), x[1]);
            z[n][2] = h_add(h_down(zero, z[n][2]), x[2]);
        }
    }
    for (unsigned n = 0; n < 2; n++) {
        const __m512i sv = _mm512_set1_epi64((long long)s[n]);
        z[n][0] = h_msan(_mm512_mask_mov_epi64(z[n][0], 1, sv), z[n][0], sv, sv);
    }
    h2_norm(z);
    for (unsigned n = 0; n < 2; n++) {
        for (unsigned j = 0; j < H2_V; j++) {
            _mm512_store_si512((void *)(r->d[n] + 8 * j), z[n][j]);
        }
    }
}

/* h2_lookup: r = table[idx_n] for each number n, reading every entry; idx
 * (lanes 0 and 1: the two windows) is secret, no address depends on it. */
static void h2_lookup(struct h2_pair *r, const struct h2_pair *table, unsigned nt, __m512i idx)
{
    __m512i iv[2], acc[2][H2_V];
    for (unsigned n = 0; n < 2; n++) {
        iv[n] = _mm512_permutexvar_epi64(_mm512_set1_epi64(n), idx);
        for (unsigned j = 0; j < H2_V; j++) {
            acc[n][j] = _mm512_setzero_si512();
        }
    }
    for (unsigned t = 0; t < nt; t++) {
        for (unsigned n = 0; n < 2; n++) {
            const __mmask8 hit = _mm512_cmpeq_epi64_mask(iv[n], _mm512_set1_epi64(t));
            for (unsigned j = 0; j < H2_V; j++) {
                acc[n][j] = _mm512_mask_mov_epi64(
                    acc[n][j], hit, _mm512_load_si512((const void *)(table[t].d[n] + 8 * j)));
            }
        }
    }
    for (unsigned n = 0; n < 2; n++) {
        for (unsigned j = 0; j < H2_V; j++) {
            _mm512_store_si512((void *)(r->d[n] + 8 * j), acc[n][j]);
        }
    }
}

/* h2_from_rows / h2_to_rows: lanes 0 and 1 of k vertical rows <-> a pair. */
static void h2_from_rows(struct h2_pair *h, const mb52_row *v)
{
    for (unsigned n = 0; n < 2; n++) {
        for (unsigned j = 0; j < H2_SLOTS; j++) {
            h->d[n][j] = j < RSA_H2_K ? v[j][n] : 0;
        }
    }
}

static void h2_to_rows(mb52_row *v, const struct h2_pair *h)
{
    for (unsigned j = 0; j < RSA_H2_K; j++) {
        for (unsigned l = 0; l < 8; l++) {
            v[j][l] = l < 2 ? h->d[l][j] : 0;
        }
    }
}

void rsa_h2_exp_ifma(mb52_row *r, const mb52_row *x, const struct rsa_mod *md, const mb52_row *d,
                     unsigned d_bits, mb52_row *scratch)
{
    const unsigned k = RSA_H2_K;
    const unsigned nt = 1u << RSA_WIN;
    struct h2_pair *table = (struct h2_pair *)(void *)scratch;
    struct h2_pair *acc = table + nt;
    struct h2_pair *w = acc + 1;
    struct h2_mod hm;
    h2_from_rows(&hm.m, md->m);
    for (unsigned n = 0; n < 2; n++) {
        for (unsigned j = 0; j < H2_V; j++) {
            const __m512i lo = _mm512_load_si512((const void *)(hm.m.d[n] + 8 * j));
            const __m512i hi = j + 1 < H2_V
                                   ? _mm512_load_si512((const void *)(hm.m.d[n] + 8 * j + 8))
                                   : _mm512_setzero_si512();
            hm.mdown.v[n][j] = _mm512_alignr_epi64(hi, lo, 1);
        }
        hm.k0[n] = (*md->m0inv)[n];
        hm.m0s[n] = md->m[0][n] << 12;
        hm.m1[n] = md->m[1][n];
        hm.m1s[n] = md->m[1][n] << 12;
        hm.m2[n] = md->m[2][n];
    }

    h2_from_rows(&table[0], md->r1);
    h2_from_rows(&table[1], x);
    for (unsigned i = 2; i < nt; i++) {
        if (i % 2 == 0) {
            h2_amm(&table[i], &table[i / 2], &table[i / 2], &hm);
        } else {
            h2_amm(&table[i], &table[i - 1], &table[1], &hm);
        }
    }

    const unsigned nwin = (d_bits + RSA_WIN - 1) / RSA_WIN;
    const unsigned top = d_bits - (nwin - 1) * RSA_WIN;
    h2_lookup(acc, table, nt, mb52_window(d, k, (nwin - 1) * RSA_WIN, top));
    for (unsigned wi = nwin - 1; wi-- > 0;) {
        for (unsigned s = 0; s < RSA_WIN; s++) {
            h2_amm(acc, acc, acc, &hm);
        }
        h2_lookup(w, table, nt, mb52_window(d, k, wi * RSA_WIN, RSA_WIN));
        h2_amm(acc, acc, w, &hm);
    }
    h2_to_rows(r, acc);
    mbc_memzero(&hm, sizeof(hm)); /* the primes (scratch is wiped by the glue) */
}
