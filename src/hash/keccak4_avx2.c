/*
 * keccak4_avx2.c - four Keccak-f[1600] states side by side on AVX2: state
 * lane j of sponge i is 64-bit element i of ymm j (struct mbc_keccak4), so
 * every step of keccak.c's permutation is one ymm operation for four
 * sponges. The same rounds as keccak.c, digit for digit.
 *
 * Compiled twice (ISA flags on these objects only): with -mavx2 (symbols
 * _avx2, called only when the CPU has MBC_CPU_AVX2), and with MBC_AVX512=1
 * and -mavx512f -mavx512vl (symbols _avx512, only on MBC_CPU_AVX512F and
 * VL), where the rotations are one vprolq and chi and theta's five-way
 * xor are vpternlogq: the same values in about half the instructions, still
 * on ymm registers.
 */
#include <immintrin.h>
#include <string.h>

#include "keccak.h"

#if MBC_AVX512
#define K4(name) name##_avx512
#else
#define K4(name) name##_avx2
#endif

/* K4_TERNLOG: vprolq and vpternlogq. Not under MemorySanitizer, which
 * does not follow secrets through them (it reports their every use): its
 * build of the avx512 row computes the same values with the AVX2
 * instructions, so the check still sees every branch and address. */
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define K4_MSAN 1
#endif
#endif
#if MBC_AVX512 && !defined(K4_MSAN)
#define K4_TERNLOG 1
#else
#define K4_TERNLOG 0
#endif

/* rol4: each 64-bit element rotated left by n (a constant after
 * unrolling); 8 and 56 are byte shuffles. */
static inline __m256i rol4(__m256i x, unsigned n)
{
    if (n == 0) {
        return x;
    }
#if K4_TERNLOG
    /* the counts from a table in memory (vprolvq takes them as a memory
     * operand), not broadcast afresh in every round */
    static const uint64_t counts[64][4] __attribute__((aligned(32))) = {
#define K4_C(n) {n, n, n, n}
#define K4_C8(n)                                                                                   \
    K4_C(n), K4_C(n + 1), K4_C(n + 2), K4_C(n + 3), K4_C(n + 4), K4_C(n + 5), K4_C(n + 6),         \
        K4_C(n + 7)
        K4_C8(0), K4_C8(8), K4_C8(16), K4_C8(24), K4_C8(32), K4_C8(40), K4_C8(48), K4_C8(56),
#undef K4_C8
#undef K4_C
    };
    return _mm256_rolv_epi64(x, _mm256_load_si256((const __m256i *)counts[n]));
#endif
    if (n == 8) {
        const __m256i r8 = _mm256_setr_epi8(7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14, 7,
                                            0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14);
        return _mm256_shuffle_epi8(x, r8);
    }
    if (n == 56) {
        const __m256i r56 = _mm256_setr_epi8(1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8,
                                             1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8);
        return _mm256_shuffle_epi8(x, r56);
    }
    return _mm256_or_si256(_mm256_slli_epi64(x, (int)n), _mm256_srli_epi64(x, (int)(64 - n)));
}

void K4(mbc_keccak4_f1600)(uint64_t st[25][4])
{
    __m256i s[25];
#pragma GCC unroll 25
    for (unsigned i = 0; i < 25; i++) {
        s[i] = _mm256_loadu_si256((const __m256i *)st[i]);
    }
    for (unsigned round = 0; round < 24; round++) {
        __m256i c[5], b[25];
#pragma GCC unroll 5
        for (unsigned x = 0; x < 5; x++) {
            c[x] = _mm256_xor_si256(
                _mm256_xor_si256(s[x], s[x + 5]),
                _mm256_xor_si256(_mm256_xor_si256(s[x + 10], s[x + 15]), s[x + 20]));
        }
#pragma GCC unroll 5
        for (unsigned x = 0; x < 5; x++) {
            const __m256i d = _mm256_xor_si256(c[(x + 4) % 5], rol4(c[(x + 1) % 5], 1));
#pragma GCC unroll 5
            for (unsigned y = 0; y < 25; y += 5) {
                s[x + y] = _mm256_xor_si256(s[x + y], d);
            }
        }
#pragma GCC unroll 25
        for (unsigned i = 0; i < 25; i++) {
            b[mbc_keccak_pi[i]] = rol4(s[i], mbc_keccak_rho[i]);
        }
#pragma GCC unroll 5
        for (unsigned y = 0; y < 25; y += 5) {
#pragma GCC unroll 5
            for (unsigned x = 0; x < 5; x++) {
#if K4_TERNLOG
                /* 0xD2: a ^ (~b & c) */
                s[x + y] = _mm256_ternarylogic_epi64(b[x + y], b[(x + 1) % 5 + y],
                                                     b[(x + 2) % 5 + y], 0xD2);
#else
                s[x + y] = _mm256_xor_si256(
                    b[x + y], _mm256_andnot_si256(b[(x + 1) % 5 + y], b[(x + 2) % 5 + y]));
#endif
            }
        }
        s[0] = _mm256_xor_si256(s[0], _mm256_set1_epi64x((long long)mbc_keccak_rc[round]));
    }
#pragma GCC unroll 25
    for (unsigned i = 0; i < 25; i++) {
        _mm256_storeu_si256((__m256i *)st[i], s[i]);
    }
}

void K4(mbc_shake4_absorb)(struct mbc_keccak4 *k, unsigned rate, const uint8_t *const in[4],
                           size_t len, uint8_t dom)
{
    k->rate = rate;
    mbc_keccak_absorb_lanes(&k->s[0][0], 4, rate, in, len, dom);
}

/* extract4: words w .. w + 3 of the four sponges into out[i] (32 bytes
 * each), by a 4x4 transpose of 64-bit words. */
static inline void extract4(const uint64_t s[][4], unsigned w, uint8_t *const out[4])
{
    const __m256i r0 = _mm256_loadu_si256((const __m256i *)s[w]);
    const __m256i r1 = _mm256_loadu_si256((const __m256i *)s[w + 1]);
    const __m256i r2 = _mm256_loadu_si256((const __m256i *)s[w + 2]);
    const __m256i r3 = _mm256_loadu_si256((const __m256i *)s[w + 3]);
    const __m256i t0 = _mm256_unpacklo_epi64(r0, r1), t1 = _mm256_unpackhi_epi64(r0, r1);
    const __m256i t2 = _mm256_unpacklo_epi64(r2, r3), t3 = _mm256_unpackhi_epi64(r2, r3);
    _mm256_storeu_si256((__m256i *)out[0], _mm256_permute2x128_si256(t0, t2, 0x20));
    _mm256_storeu_si256((__m256i *)out[1], _mm256_permute2x128_si256(t1, t3, 0x20));
    _mm256_storeu_si256((__m256i *)out[2], _mm256_permute2x128_si256(t0, t2, 0x31));
    _mm256_storeu_si256((__m256i *)out[3], _mm256_permute2x128_si256(t1, t3, 0x31));
}

/* read_words4: the first words words of each sponge into out[i]. */
static void read_words4(const uint64_t s[25][4], unsigned words, uint8_t *const out[4])
{
    unsigned j = 0;
    for (; j + 4 <= words; j += 4) {
        uint8_t *const o[4] = {out[0] + 8 * j, out[1] + 8 * j, out[2] + 8 * j, out[3] + 8 * j};
        extract4(s, j, o);
    }
    for (; j < words; j++) {
        for (unsigned i = 0; i < 4; i++) {
            memcpy(out[i] + 8 * j, &s[j][i], 8);
        }
    }
}

void K4(mbc_shake4_squeeze)(struct mbc_keccak4 *k, uint8_t *const out[4], size_t nblocks)
{
    for (size_t b = 0; b < nblocks; b++) {
        K4(mbc_keccak4_f1600)(k->s);
        uint8_t *const o[4] = {out[0] + b * k->rate, out[1] + b * k->rate, out[2] + b * k->rate,
                               out[3] + b * k->rate};
        read_words4((const uint64_t(*)[4])k->s, k->rate / 8, o);
    }
}

/* the 4-way kernel of mbc_keccak_hash_ways: state word j of sponge i at
 * state[4 j + i] */
static void absorb4(uint64_t *state, const uint8_t (*block)[200], unsigned rate)
{
    uint64_t(*s)[4] = (uint64_t(*)[4])state;
    for (unsigned j = 0; j < rate / 8; j++) {
        uint64_t w[4];
        for (unsigned i = 0; i < 4; i++) {
            memcpy(&w[i], block[i] + 8 * j, 8);
        }
        const __m256i x = _mm256_loadu_si256((const __m256i *)w);
        const __m256i v = _mm256_loadu_si256((const __m256i *)s[j]);
        _mm256_storeu_si256((__m256i *)s[j], _mm256_xor_si256(v, x));
    }
    K4(mbc_keccak4_f1600)(s);
}

static void read4(const uint64_t *state, uint8_t (*out)[200], unsigned rate)
{
    uint8_t *const o[4] = {out[0], out[1], out[2], out[3]};
    read_words4((const uint64_t(*)[4])state, rate / 8, o);
}

void K4(mbc_keccak4_hash)(const struct mbc_hash_task *t, unsigned n, unsigned rate)
{
    static const struct mbc_keccak_ways w = {4, absorb4, read4};
#if MBC_AVX512
    mbc_keccak_hash_ways(&w, t, n, rate);
#else
    /* a last lone task on the portable permutation: the AVX2 4-way one
     * costs 1.7 times as much for it (mlkem_avx2.c's kway_for) */
    const unsigned lone = (n & 3u) == 1u;
    mbc_keccak_hash_ways(&w, t, n - lone, rate);
    if (lone) {
        mbc_keccak_hash_c(t + n - 1, 1, rate);
    }
#endif
}
