/*
 * keccak8_avx512.c - eight Keccak-f[1600] states side by side on AVX-512F:
 * state lane j of sponge i is 64-bit element i of zmm j (struct
 * mbc_keccak8), so every step of keccak.c's permutation is one zmm
 * operation for eight sponges (vprolq for rho and theta's rotation,
 * vpternlogq for chi and the five-way xor of theta). The same rounds as
 * keccak.c, digit for digit. The bytes go in and out of the transposed
 * state by 8x8 transposes of 64-bit words.
 *
 * Compiled with -mavx512f -mavx512vl (this object only), called only on
 * CPUs with MBC_CPU_AVX512F and VL. Under MemorySanitizer, which does not
 * follow secrets through vprolq and vpternlogq, the permutation runs as two
 * 4-way permutations of keccak4_avx2.c's MSan build (the same values): the
 * check still sees every branch and address of this file.
 */
#include <immintrin.h>
#include <string.h>

#include "keccak.h"

#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define K8_MSAN 1
#endif
#endif

#ifndef K8_MSAN
/* rol8: each 64-bit element rotated left by n (a constant after
 * unrolling). */
static inline __m512i rol8(__m512i x, unsigned n)
{
    if (n == 0) {
        return x;
    }
    static const uint64_t counts[64][8] __attribute__((aligned(64))) = {
#define K8_C(n) {n, n, n, n, n, n, n, n}
#define K8_C8(n)                                                                                   \
    K8_C(n), K8_C(n + 1), K8_C(n + 2), K8_C(n + 3), K8_C(n + 4), K8_C(n + 5), K8_C(n + 6),         \
        K8_C(n + 7)
        K8_C8(0), K8_C8(8), K8_C8(16), K8_C8(24), K8_C8(32), K8_C8(40), K8_C8(48), K8_C8(56),
#undef K8_C8
#undef K8_C
    };
    return _mm512_rolv_epi64(x, _mm512_load_si512((const void *)counts[n]));
}
#endif

void mbc_keccak8_f1600_avx512(uint64_t st[25][8])
{
#ifdef K8_MSAN
    uint64_t h[2][25][4];
    for (unsigned i = 0; i < 25; i++) {
        memcpy(h[0][i], st[i], 32);
        memcpy(h[1][i], st[i] + 4, 32);
    }
    mbc_keccak4_f1600_avx512(h[0]);
    mbc_keccak4_f1600_avx512(h[1]);
    for (unsigned i = 0; i < 25; i++) {
        memcpy(st[i], h[0][i], 32);
        memcpy(st[i] + 4, h[1][i], 32);
    }
    memset(h, 0, sizeof(h));
    __asm__ __volatile__("" : : "r"(h) : "memory");
#else
    __m512i s[25];
#pragma GCC unroll 25
    for (unsigned i = 0; i < 25; i++) {
        s[i] = _mm512_loadu_si512((const void *)st[i]);
    }
    for (unsigned round = 0; round < 24; round++) {
        __m512i c[5], b[25];
        /* 0x96: a ^ b ^ c */
#pragma GCC unroll 5
        for (unsigned x = 0; x < 5; x++) {
            c[x] = _mm512_ternarylogic_epi64(
                _mm512_ternarylogic_epi64(s[x], s[x + 5], s[x + 10], 0x96), s[x + 15], s[x + 20],
                0x96);
        }
#pragma GCC unroll 5
        for (unsigned x = 0; x < 5; x++) {
            const __m512i d = _mm512_xor_si512(c[(x + 4) % 5], rol8(c[(x + 1) % 5], 1));
#pragma GCC unroll 5
            for (unsigned y = 0; y < 25; y += 5) {
                s[x + y] = _mm512_xor_si512(s[x + y], d);
            }
        }
#pragma GCC unroll 25
        for (unsigned i = 0; i < 25; i++) {
            b[mbc_keccak_pi[i]] = rol8(s[i], mbc_keccak_rho[i]);
        }
#pragma GCC unroll 5
        for (unsigned y = 0; y < 25; y += 5) {
#pragma GCC unroll 5
            for (unsigned x = 0; x < 5; x++) {
                /* 0xD2: a ^ (~b & c) */
                s[x + y] = _mm512_ternarylogic_epi64(b[x + y], b[(x + 1) % 5 + y],
                                                     b[(x + 2) % 5 + y], 0xD2);
            }
        }
        s[0] = _mm512_xor_si512(s[0], _mm512_set1_epi64((long long)mbc_keccak_rc[round]));
    }
#pragma GCC unroll 25
    for (unsigned i = 0; i < 25; i++) {
        _mm512_storeu_si512((void *)st[i], s[i]);
    }
#endif
}

/* transpose8: the 8x8 matrix of 64-bit words r[0..7] (row i in r[i])
 * transposed in place. */
static inline void transpose8(__m512i r[8])
{
    __m512i t[8], u[8];
    for (unsigned i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_epi64(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi64(r[i], r[i + 1]);
    }
    /* 128-bit blocks: rows (0,2), (1,3), (4,6), (5,7) */
    for (unsigned i = 0; i < 8; i += 4) {
        for (unsigned j = 0; j < 2; j++) {
            u[i + j] = _mm512_shuffle_i64x2(t[i + j], t[i + j + 2], 0x88);
            u[i + j + 2] = _mm512_shuffle_i64x2(t[i + j], t[i + j + 2], 0xDD);
        }
    }
    for (unsigned j = 0; j < 4; j++) {
        r[j] = _mm512_shuffle_i64x2(u[j], u[j + 4], 0x88);
        r[j + 4] = _mm512_shuffle_i64x2(u[j], u[j + 4], 0xDD);
    }
}

/* extract: words w0 .. w0 + nw - 1 of every sponge into out[i] + 8 (j -
 * w0) bytes, by 8x8 transposes (a last partial group word by word). */
static void extract(const uint64_t s[25][8], unsigned w0, unsigned nw, uint8_t *const out[8])
{
    unsigned j = 0;
    for (; j + 8 <= nw; j += 8) {
        __m512i r[8];
        for (unsigned k = 0; k < 8; k++) {
            r[k] = _mm512_loadu_si512((const void *)s[w0 + j + k]);
        }
        transpose8(r);
        for (unsigned i = 0; i < 8; i++) {
            _mm512_storeu_si512((void *)(out[i] + 8 * j), r[i]);
        }
    }
    for (; j < nw; j++) {
        for (unsigned i = 0; i < 8; i++) {
            memcpy(out[i] + 8 * j, &s[w0 + j][i], 8);
        }
    }
}

void mbc_shake8_absorb_avx512(struct mbc_keccak8 *k, unsigned rate, const uint8_t *const in[8],
                              size_t len, uint8_t dom)
{
    k->rate = rate;
    mbc_keccak_absorb_lanes(&k->s[0][0], 8, rate, in, len, dom);
}

void mbc_shake8_squeeze_avx512(struct mbc_keccak8 *k, uint8_t *const out[8], size_t nblocks)
{
    const unsigned words = k->rate / 8;
    for (size_t b = 0; b < nblocks; b++) {
        mbc_keccak8_f1600_avx512(k->s);
        uint8_t *o[8];
        for (unsigned i = 0; i < 8; i++) {
            o[i] = out[i] + b * k->rate;
        }
        extract((const uint64_t(*)[8])k->s, 0, words, o);
    }
}

/* the 8-way kernel of mbc_keccak_hash_ways: state word j of sponge i at
 * state[8 j + i]; the blocks go in eight words at a time, transposed */
static void absorb8(uint64_t *state, const uint8_t (*block)[200], unsigned rate)
{
    uint64_t(*s)[8] = (uint64_t(*)[8])state;
    for (unsigned j = 0; j < rate / 8; j += 8) {
        __m512i r[8];
        for (unsigned i = 0; i < 8; i++) {
            r[i] = _mm512_loadu_si512((const void *)(block[i] + 8 * j));
        }
        transpose8(r);
        const unsigned nw = rate / 8 - j < 8 ? rate / 8 - j : 8;
        for (unsigned w = 0; w < nw; w++) {
            _mm512_storeu_si512((void *)s[j + w],
                                _mm512_xor_si512(_mm512_loadu_si512((const void *)s[j + w]), r[w]));
        }
    }
    mbc_keccak8_f1600_avx512(s);
}

static void read8(const uint64_t *state, uint8_t (*out)[200], unsigned rate)
{
    uint8_t *o[8];
    for (unsigned i = 0; i < 8; i++) {
        o[i] = out[i];
    }
    extract((const uint64_t(*)[8])state, 0, rate / 8, o);
}

void mbc_keccak8_hash_avx512(const struct mbc_hash_task *t, unsigned n, unsigned rate)
{
    /* groups of eight while more than four are left; a rest of four or
     * fewer on the 4-way kernel (a half-empty zmm permutation costs more
     * than a full ymm one) */
    static const struct mbc_keccak_ways w = {8, absorb8, read8};
    unsigned n8 = 0;
    while (n8 < n && n - n8 > 4) {
        n8 += 8;
    }
    n8 = n8 < n ? n8 : n;
    mbc_keccak_hash_ways(&w, t, n8, rate);
    if (n8 < n) {
        mbc_keccak4_hash_avx512(t + n8, n - n8, rate);
    }
}
