/*
 * mlkem_avx2.c - the AVX2 kernels of ML-KEM: SampleNTT and the noise PRF
 * several streams at a time on a multi-way Keccak (kway_for: 4-way,
 * keccak4_avx2.c; in the avx512 build 8-way, keccak8_avx512.c; a group
 * with idle slots hashes copies of its first stream there, into scratch),
 * and on 16 coefficients at a time the NTT, its inverse, the base
 * multiplication, the reductions and the byte codings: poly.c's
 * multiplications, reductions and bit layouts, lane by lane, so the
 * results are its bits. Compiled with -mavx2 (this object only); selected
 * only when the CPU has MBC_CPU_AVX2.
 */
#include <immintrin.h>
#include <string.h>

#include "../hash/keccak.h"
#include "mlkem_internal.h"

/* Built twice, as keccak4_avx2.c: _avx2 on the AVX2 Keccak, _avx512 (with
 * MBC_AVX512=1) on its AVX-512VL form; the arithmetic is the same. */
#if MBC_AVX512
#define K4(name) name##_avx512
#else
#define K4(name) name##_avx2
#endif

#include "zetas_avx2.h"

/* load24: bytes p[0..11] in the low 128-bit half, p[12..23] in the high
 * one (each at the bottom of its half), reading exactly 24 bytes. */
static inline __m256i load24(const uint8_t *p)
{
    const __m128i lo = _mm_loadu_si128((const __m128i *)p);
    const __m128i tail = _mm_loadl_epi64((const __m128i *)(p + 16));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), _mm_alignr_epi8(tail, lo, 12), 1);
}

/*
 * rej16: mbc_mlkem_rej on 16 candidates (24 bytes) at a time: the bytes
 * spread into 16-bit lanes by a shuffle, the 12-bit values masked or
 * shifted out, compared with q, and the accepted ones moved to the front
 * of each half by a shuffle from rej_idx (the stream is public: its
 * acceptance mask may pick table rows). The tail, and the last few values,
 * go through mbc_mlkem_rej. Same values as mbc_mlkem_rej, in the same
 * order.
 */
unsigned K4(mbc_mlkem_rej)(int16_t a[MLKEM_N], unsigned done, const uint8_t *buf, size_t len)
{
    const __m256i bound = _mm256_set1_epi16(MLKEM_Q);
    const __m256i low12 = _mm256_set1_epi16(0x0FFF);
    /* 16-bit lane 2p: bytes 3p, 3p + 1; lane 2p + 1: bytes 3p + 1, 3p + 2
     * (the upper half reads 4 bytes further: its 12 bytes start at 4) */
    const __m256i spread = _mm256_setr_epi8(0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11, 4, 5,
                                            5, 6, 7, 8, 8, 9, 10, 11, 11, 12, 13, 14, 14, 15);
    size_t i = 0;
    for (; i + 32 <= len && done + 16 <= MLKEM_N; i += 24) {
        __m256i f = _mm256_loadu_si256((const __m256i *)(buf + i));
        f = _mm256_permute4x64_epi64(f, 0x94); /* qwords 0 1 | 1 2 */
        f = _mm256_shuffle_epi8(f, spread);
        const __m256i d =
            _mm256_blend_epi16(_mm256_and_si256(f, low12), _mm256_srli_epi16(f, 4), 0xAA);
        const __m256i good = _mm256_cmpgt_epi16(bound, d);
        const unsigned m =
            (unsigned)_mm256_movemask_epi8(_mm256_packs_epi16(good, _mm256_setzero_si256()));
        const unsigned m0 = m & 0xFF, m1 = (m >> 16) & 0xFF;
        const __m128i lo = _mm_shuffle_epi8(_mm256_castsi256_si128(d),
                                            _mm_load_si128((const __m128i *)rej_idx[m0]));
        const __m128i hi = _mm_shuffle_epi8(_mm256_extracti128_si256(d, 1),
                                            _mm_load_si128((const __m128i *)rej_idx[m1]));
        _mm_storeu_si128((__m128i *)(a + done), lo);
        done += rej_count[m0];
        _mm_storeu_si128((__m128i *)(a + done), hi);
        done += rej_count[m1];
    }
    return mbc_mlkem_rej(a, done, buf + i, len - i);
}

/*
 * kway: a multi-way SHAKE kernel: ways sponges side by side, absorb and
 * squeeze with keccak.h's contracts on a state of union kstate (kway_for
 * picks one per group).
 */
union kstate {
    struct mbc_keccak k1;
    struct mbc_keccak4 k4;
#if MBC_AVX512
    struct mbc_keccak8 k8;
#endif
};
struct kway {
    unsigned ways;
    void (*absorb)(union kstate *k, unsigned rate, const uint8_t *const in[], size_t len,
                   uint8_t dom);
    void (*squeeze)(union kstate *k, uint8_t *const out[], size_t nblocks);
};

static void absorb4(union kstate *k, unsigned rate, const uint8_t *const in[], size_t len,
                    uint8_t dom)
{
    K4(mbc_shake4_absorb)(&k->k4, rate, in, len, dom);
}
static void squeeze4(union kstate *k, uint8_t *const out[], size_t nblocks)
{
    K4(mbc_shake4_squeeze)(&k->k4, out, nblocks);
}
static const struct kway way4 = {4, absorb4, squeeze4};
#if MBC_AVX512
static void absorb8(union kstate *k, unsigned rate, const uint8_t *const in[], size_t len,
                    uint8_t dom)
{
    mbc_shake8_absorb_avx512(&k->k8, rate, in, len, dom);
}
static void squeeze8(union kstate *k, uint8_t *const out[], size_t nblocks)
{
    mbc_shake8_squeeze_avx512(&k->k8, out, nblocks);
}
static const struct kway way8 = {8, absorb8, squeeze8};
#endif

#if !MBC_AVX512
/* The portable sponge as a 1-way kernel: absorb pads and permutes
 * (mbc_keccak_finish), squeeze reads on from there, the same bytes. */
static void absorb1(union kstate *k, unsigned rate, const uint8_t *const in[], size_t len,
                    uint8_t dom)
{
    mbc_keccak_init(&k->k1, rate);
    mbc_keccak_absorb(&k->k1, in[0], len);
    mbc_keccak_finish(&k->k1, dom);
}
static void squeeze1(union kstate *k, uint8_t *const out[], size_t nblocks)
{
    mbc_keccak_squeeze(&k->k1, out[0], nblocks * k->k1.rate);
}
static const struct kway way1 = {1, absorb1, squeeze1};
#endif

/*
 * kway_for: the kernel for a group of the m streams left. Measured on Intel
 * family 6 model 207 (cycles per permutation): the 8-way zmm kernel 1200
 * (150 a state), the AVX-512VL 4-way 1020, the AVX2 4-way 1810 (no vector
 * rotation: three operations each), the portable one 1050. So the avx512
 * build takes the 8-way one for more than four streams, the avx2 build the
 * portable one for a lone stream (a lone request's ninth matrix entry).
 */
static inline const struct kway *kway_for(unsigned m)
{
#if MBC_AVX512
    if (m > 4) {
        return &way8;
    }
#else
    if (m == 1) {
        return &way1;
    }
#endif
    (void)m;
    return &way4;
}

#define MAX_WAYS 8

void K4(mbc_mlkem_sample_ntt)(int16_t *const out[], const uint8_t (*seed)[34], unsigned n)
{
    uint8_t buf[MAX_WAYS][MLKEM_SAMPLE_BLOCKS * MBC_SHAKE128_RATE];
    int16_t spare[MLKEM_N];
    uint8_t *bp[MAX_WAYS];
    for (unsigned i = 0; i < MAX_WAYS; i++) {
        bp[i] = buf[i];
    }
    for (unsigned g = 0; g < n;) {
        const struct kway *kw = kway_for(n - g);
        const unsigned w = kw->ways;
        const uint8_t *in[MAX_WAYS];
        int16_t *dst[MAX_WAYS];
        for (unsigned i = 0; i < w; i++) {
            const int live = g + i < n;
            in[i] = seed[live ? g + i : g];
            dst[i] = live ? out[g + i] : spare;
        }
        union kstate k;
        kw->absorb(&k, MBC_SHAKE128_RATE, in, 34, 0x1F);
        kw->squeeze(&k, bp, MLKEM_SAMPLE_BLOCKS);
        unsigned done[MAX_WAYS], all = 1;
        for (unsigned i = 0; i < w; i++) {
            done[i] = K4(mbc_mlkem_rej)(dst[i], 0, buf[i], sizeof(buf[i]));
            all &= done[i] == MLKEM_N;
        }
        while (!all) {
            kw->squeeze(&k, bp, 1);
            all = 1;
            for (unsigned i = 0; i < w; i++) {
                done[i] = K4(mbc_mlkem_rej)(dst[i], done[i], buf[i], MBC_SHAKE128_RATE);
                all &= done[i] == MLKEM_N;
            }
        }
        g += w;
    }
}

/*
 * cbd: poly.c's mbc_mlkem_cbd on vectors. eta 2: per byte, the bit-pair
 * sums d of its two nibbles give (d & 3) - (d >> 2 & 3) (value 2j, low
 * nibble of byte j) and the same of the high nibble (value 2j + 1): bytes,
 * interleaved, widened. eta 3: each 3-byte group in a 32-bit lane, the
 * 3-bit sums d, then its four values ((d >> 6t) & 7) - ((d >> 6t + 3) &
 * 7), paired into 16-bit halves and interleaved in order.
 */
static void cbd(int16_t a[MLKEM_N], const uint8_t *buf, unsigned eta)
{
    if (eta == 2) {
        const __m128i m55 = _mm_set1_epi8(0x55), m03 = _mm_set1_epi8(0x03);
        for (unsigned i = 0; i < MLKEM_N; i += 32, buf += 16) {
            const __m128i t = _mm_loadu_si128((const __m128i *)buf);
            const __m128i d =
                _mm_add_epi8(_mm_and_si128(t, m55), _mm_and_si128(_mm_srli_epi16(t, 1), m55));
            const __m128i lo =
                _mm_sub_epi8(_mm_and_si128(d, m03), _mm_and_si128(_mm_srli_epi16(d, 2), m03));
            const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(d, 4), m03),
                                            _mm_and_si128(_mm_srli_epi16(d, 6), m03));
            _mm256_storeu_si256((__m256i *)(a + i),
                                _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(lo, hi)));
            _mm256_storeu_si256((__m256i *)(a + i + 16),
                                _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(lo, hi)));
        }
        return;
    }
    const __m256i spread = _mm256_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1, 0,
                                            1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    const __m256i m249 = _mm256_set1_epi32(0x249249), m7 = _mm256_set1_epi32(7);
    const __m256i low16 = _mm256_set1_epi32(0xFFFF);
    for (unsigned i = 0; i < MLKEM_N; i += 32, buf += 24) {
        const __m256i t = _mm256_shuffle_epi8(load24(buf), spread);
        const __m256i d =
            _mm256_add_epi32(_mm256_add_epi32(_mm256_and_si256(t, m249),
                                              _mm256_and_si256(_mm256_srli_epi32(t, 1), m249)),
                             _mm256_and_si256(_mm256_srli_epi32(t, 2), m249));
        __m256i c[4];
        for (unsigned j = 0; j < 4; j++) {
            c[j] = _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(d, (int)(6 * j)), m7),
                                    _mm256_and_si256(_mm256_srli_epi32(d, (int)(6 * j + 3)), m7));
        }
        const __m256i e =
            _mm256_or_si256(_mm256_and_si256(c[0], low16), _mm256_slli_epi32(c[1], 16));
        const __m256i f =
            _mm256_or_si256(_mm256_and_si256(c[2], low16), _mm256_slli_epi32(c[3], 16));
        const __m256i l = _mm256_unpacklo_epi32(e, f), h = _mm256_unpackhi_epi32(e, f);
        _mm256_storeu_si256((__m256i *)(a + i), _mm256_permute2x128_si256(l, h, 0x20));
        _mm256_storeu_si256((__m256i *)(a + i + 16), _mm256_permute2x128_si256(l, h, 0x31));
    }
}

void K4(mbc_mlkem_sample_cbd)(int16_t *const out[], const uint8_t (*seed)[33], unsigned n,
                              unsigned eta)
{
    /* 64 eta bytes: one block of SHAKE256 for eta 2, two for eta 3 */
    uint8_t buf[MAX_WAYS][2 * MBC_SHAKE256_RATE];
    int16_t spare[MLKEM_N];
    uint8_t *bp[MAX_WAYS];
    for (unsigned i = 0; i < MAX_WAYS; i++) {
        bp[i] = buf[i];
    }
    const size_t blocks = eta == 2 ? 1 : 2;
    for (unsigned g = 0; g < n;) {
        const struct kway *kw = kway_for(n - g);
        const unsigned w = kw->ways;
        const uint8_t *in[MAX_WAYS];
        for (unsigned i = 0; i < w; i++) {
            in[i] = seed[g + i < n ? g + i : g];
        }
        union kstate k;
        kw->absorb(&k, MBC_SHAKE256_RATE, in, 33, 0x1F);
        kw->squeeze(&k, bp, blocks);
        mbc_memzero(&k, sizeof(k));
        for (unsigned i = 0; i < w; i++) {
            cbd(g + i < n ? out[g + i] : spare, buf[i], eta);
        }
        g += w;
    }
    mbc_memzero(buf, sizeof(buf));
    mbc_memzero(spare, sizeof(spare));
}

/* ---- polynomial arithmetic ------------------------------------------------ */

/* fqmul16: a b R^-1 mod q per lane, in (-q, q): poly.c's fqmul (the low
 * halves of a b and t q are equal, so the high halves' difference is the
 * exact shift). */
static inline __m256i fqmul16(__m256i a, __m256i b)
{
    const __m256i q = _mm256_set1_epi16(MLKEM_Q);
    const __m256i qinv = _mm256_set1_epi16((short)62209);
    const __m256i lo = _mm256_mullo_epi16(a, b);
    const __m256i hi = _mm256_mulhi_epi16(a, b);
    const __m256i t = _mm256_mulhi_epi16(_mm256_mullo_epi16(lo, qinv), q);
    return _mm256_sub_epi16(hi, t);
}

/* barrett16: poly.c's barrett per lane: a - q ((20159 a + 2^25) >> 26),
 * the shift taken as ((20159 a) >> 16 + 2^9) >> 10 (the same floor). */
static inline __m256i barrett16(__m256i a)
{
    const __m256i v = _mm256_set1_epi16(20159);
    const __m256i r = _mm256_set1_epi16(1 << 9);
    const __m256i q = _mm256_set1_epi16(MLKEM_Q);
    const __m256i t = _mm256_srai_epi16(_mm256_add_epi16(_mm256_mulhi_epi16(a, v), r), 10);
    return _mm256_sub_epi16(a, _mm256_mullo_epi16(t, q));
}

/* fwd: the forward butterfly of tops x and bottoms y with zetas z. */
static inline void fwd(__m256i *x, __m256i *y, __m256i z)
{
    const __m256i t = fqmul16(z, *y);
    *y = _mm256_sub_epi16(*x, t);
    *x = _mm256_add_epi16(*x, t);
}

/* inv: the inverse butterfly. */
static inline void inv(__m256i *x, __m256i *y, __m256i z)
{
    const __m256i t = *x;
    *x = barrett16(_mm256_add_epi16(t, *y));
    *y = fqmul16(z, _mm256_sub_epi16(*y, t));
}

#define ZV(tab, b) _mm256_load_si256((const __m256i *)(tab)[b])
#define ZB(i) _mm256_set1_epi16(mbc_mlkem_zetas[i])
#define SWAP_UNITS _MM_SHUFFLE(3, 1, 2, 0)

void K4(mbc_mlkem_ntt)(int16_t a[MLKEM_N])
{
    __m256i v[16];
    for (unsigned i = 0; i < 16; i++) {
        v[i] = _mm256_loadu_si256((const __m256i *)(a + 16 * i));
    }
    /* len 128, 64, 32, 16: whole vectors, one zeta per group */
    for (unsigned len = 8, k = 1; len >= 1; len >>= 1) {
        for (unsigned start = 0; start < 16; start += 2 * len, k++) {
            const __m256i z = ZB(k);
            for (unsigned j = start; j < start + len; j++) {
                fwd(&v[j], &v[j + len], z);
            }
        }
    }
    /* len 8, 4, 2: per block of 32 coefficients (v[2b], v[2b+1]) */
    for (unsigned b = 0; b < 8; b++) {
        __m256i A = v[2 * b], B = v[2 * b + 1];
        __m256i x = _mm256_permute2x128_si256(A, B, 0x20),
                y = _mm256_permute2x128_si256(A, B, 0x31);
        fwd(&x, &y, ZV(zeta_fwd8, b));
        A = _mm256_permute2x128_si256(x, y, 0x20);
        B = _mm256_permute2x128_si256(x, y, 0x31);
        x = _mm256_unpacklo_epi64(A, B);
        y = _mm256_unpackhi_epi64(A, B);
        fwd(&x, &y, ZV(zeta_fwd4, b));
        A = _mm256_shuffle_epi32(_mm256_unpacklo_epi64(x, y), SWAP_UNITS);
        B = _mm256_shuffle_epi32(_mm256_unpackhi_epi64(x, y), SWAP_UNITS);
        x = _mm256_unpacklo_epi64(A, B);
        y = _mm256_unpackhi_epi64(A, B);
        fwd(&x, &y, ZV(zeta_fwd2, b));
        A = _mm256_shuffle_epi32(_mm256_unpacklo_epi64(x, y), SWAP_UNITS);
        B = _mm256_shuffle_epi32(_mm256_unpackhi_epi64(x, y), SWAP_UNITS);
        _mm256_storeu_si256((__m256i *)(a + 32 * b), barrett16(A));
        _mm256_storeu_si256((__m256i *)(a + 32 * b + 16), barrett16(B));
    }
}

void K4(mbc_mlkem_invntt)(int16_t a[MLKEM_N])
{
    __m256i v[16];
    /* len 2, 4, 8: per block of 32 coefficients */
    for (unsigned b = 0; b < 8; b++) {
        __m256i A =
            _mm256_shuffle_epi32(_mm256_loadu_si256((const __m256i *)(a + 32 * b)), SWAP_UNITS);
        __m256i B = _mm256_shuffle_epi32(_mm256_loadu_si256((const __m256i *)(a + 32 * b + 16)),
                                         SWAP_UNITS);
        __m256i x = _mm256_unpacklo_epi64(A, B), y = _mm256_unpackhi_epi64(A, B);
        inv(&x, &y, ZV(zeta_inv2, b));
        A = _mm256_shuffle_epi32(_mm256_unpacklo_epi64(x, y), SWAP_UNITS);
        B = _mm256_shuffle_epi32(_mm256_unpackhi_epi64(x, y), SWAP_UNITS);
        x = _mm256_unpacklo_epi64(A, B);
        y = _mm256_unpackhi_epi64(A, B);
        inv(&x, &y, ZV(zeta_inv4, b));
        A = _mm256_unpacklo_epi64(x, y);
        B = _mm256_unpackhi_epi64(x, y);
        x = _mm256_permute2x128_si256(A, B, 0x20);
        y = _mm256_permute2x128_si256(A, B, 0x31);
        inv(&x, &y, ZV(zeta_inv8, b));
        v[2 * b] = _mm256_permute2x128_si256(x, y, 0x20);
        v[2 * b + 1] = _mm256_permute2x128_si256(x, y, 0x31);
    }
    /* len 16, 32, 64, 128: whole vectors; group g of len uses zetas[256 /
     * len - 1 - g] */
    for (unsigned len = 1, top = 15; len <= 8; len <<= 1, top >>= 1) {
        unsigned g = 0;
        for (unsigned start = 0; start < 16; start += 2 * len, g++) {
            const __m256i z = ZB(top - g); /* top = 16 / len - 1, no division */
            for (unsigned j = start; j < start + len; j++) {
                inv(&v[j], &v[j + len], z);
            }
        }
    }
    const __m256i f = _mm256_set1_epi16(1441);
    for (unsigned i = 0; i < 16; i++) {
        _mm256_storeu_si256((__m256i *)(a + 16 * i), fqmul16(v[i], f));
    }
}

void K4(mbc_mlkem_basemul_acc)(int16_t r[MLKEM_N], const int16_t a[MLKEM_N],
                               const int16_t b[MLKEM_N])
{
    /* swap the two int16 of each 32-bit unit */
    const __m256i swap = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2,
                                          3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    for (unsigned i = 0; i < 16; i++) {
        const __m256i va = _mm256_loadu_si256((const __m256i *)(a + 16 * i));
        const __m256i vb = _mm256_loadu_si256((const __m256i *)(b + 16 * i));
        const __m256i vr = _mm256_loadu_si256((const __m256i *)(r + 16 * i));
        const __m256i z = _mm256_load_si256((const __m256i *)zeta_basemul[i]);
        /* p = (a0 b0, a1 b1), s = (a0 b1, a1 b0) per pair */
        const __m256i p = fqmul16(va, vb);
        const __m256i s = fqmul16(va, _mm256_shuffle_epi8(vb, swap));
        /* even: fqmul(a1 b1, zeta) + a0 b0; odd: a0 b1 + a1 b0 */
        const __m256i even = _mm256_add_epi16(fqmul16(_mm256_srli_epi32(p, 16), z), p);
        const __m256i odd = _mm256_add_epi16(s, _mm256_slli_epi32(s, 16));
        _mm256_storeu_si256((__m256i *)(r + 16 * i),
                            _mm256_add_epi16(vr, _mm256_blend_epi16(even, odd, 0xAA)));
    }
}

/*
 * pack16: ByteEncode_d of the 16 values of p (each below 2^d), 2 d bytes at
 * out, for d = 10, 4, 1. d 10: pairs to 20-bit units (madd), pairs of those
 * to 40-bit units in each 64-bit lane, whose five low bytes a shuffle
 * gathers; d 4: pairs to bytes (madd), four per 128-bit half gathered; d 1:
 * the values as bytes, their low bits moved to the top and collected.
 */
static inline void pack16(uint8_t *out, __m256i p, unsigned d)
{
    if (d == 10) {
        const __m256i x = _mm256_madd_epi16(p, _mm256_set1_epi32(1 | (1024 << 16)));
        const __m256i lo = _mm256_and_si256(x, _mm256_set1_epi64x(0xFFFFF));
        const __m256i hi =
            _mm256_srli_epi64(_mm256_andnot_si256(_mm256_set1_epi64x(0xFFFFFFFF), x), 12);
        const __m256i g = _mm256_shuffle_epi8(
            _mm256_or_si256(lo, hi),
            _mm256_setr_epi8(0, 1, 2, 3, 4, 8, 9, 10, 11, 12, -1, -1, -1, -1, -1, -1, 0, 1, 2, 3, 4,
                             8, 9, 10, 11, 12, -1, -1, -1, -1, -1, -1));
        const __m128i g0 = _mm256_castsi256_si128(g), g1 = _mm256_extracti128_si256(g, 1);
        const uint16_t t0 = (uint16_t)_mm_extract_epi16(g0, 4),
                       t1 = (uint16_t)_mm_extract_epi16(g1, 4);
        _mm_storel_epi64((__m128i *)out, g0);
        memcpy(out + 8, &t0, 2);
        _mm_storel_epi64((__m128i *)(out + 10), g1);
        memcpy(out + 18, &t1, 2);
    } else if (d == 4) {
        const __m256i x = _mm256_madd_epi16(p, _mm256_set1_epi32(1 | (16 << 16)));
        const __m256i g = _mm256_shuffle_epi8(
            x, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4,
                                8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
        const uint32_t w0 = (uint32_t)_mm256_extract_epi32(g, 0),
                       w1 = (uint32_t)_mm256_extract_epi32(g, 4);
        memcpy(out, &w0, 4);
        memcpy(out + 4, &w1, 4);
    } else {
        const __m256i b =
            _mm256_permute4x64_epi64(_mm256_packs_epi16(p, _mm256_setzero_si256()), 0xD8);
        const uint16_t m =
            (uint16_t)_mm_movemask_epi8(_mm_slli_epi64(_mm256_castsi256_si128(b), 7));
        memcpy(out, &m, 2);
    }
}

void K4(mbc_mlkem_compress_encode)(uint8_t *out, const int16_t a[MLKEM_N], unsigned d)
{
    /* poly.c's compression lane by lane: x = a mod q in [0, q) (Barrett,
     * then + q where negative), then ((x << d) + (q - 1) / 2) * 1290168 >>
     * 32 in 64-bit products (even and odd 32-bit lanes apart), masked to d
     * bits */
    uint16_t v[MLKEM_N];
    const __m256i q = _mm256_set1_epi16(MLKEM_Q);
    const __m256i half = _mm256_set1_epi32((MLKEM_Q - 1) / 2);
    const __m256i recip = _mm256_set1_epi32(1290168);
    const __m256i dmask = _mm256_set1_epi32((int)((1u << d) - 1u));
    const __m128i shift = _mm_cvtsi32_si128((int)d);
    for (unsigned i = 0; i < MLKEM_N; i += 16) {
        __m256i x = barrett16(_mm256_loadu_si256((const __m256i *)(a + i)));
        x = _mm256_add_epi16(x, _mm256_and_si256(_mm256_srai_epi16(x, 15), q));
        __m256i r[2];
        for (unsigned h = 0; h < 2; h++) {
            const __m256i x32 = _mm256_cvtepu16_epi32(h == 0 ? _mm256_castsi256_si128(x)
                                                             : _mm256_extracti128_si256(x, 1));
            const __m256i n = _mm256_add_epi32(_mm256_sll_epi32(x32, shift), half);
            const __m256i even = _mm256_srli_epi64(_mm256_mul_epu32(n, recip), 32);
            const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(n, 32), recip);
            r[h] = _mm256_and_si256(_mm256_blend_epi32(even, odd, 0xAA), dmask);
        }
        /* 16 results of 32 bits back to 16 (packus works per 128-bit half) */
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(r[0], r[1]), 0xD8);
        if (d == 10 || d == 4 || d == 1) {
            pack16(out + 2 * d * (i / 16), p, d);
        } else {
            _mm256_storeu_si256((__m256i *)(v + i), p);
        }
    }
    if (d != 10 && d != 4 && d != 1) {
        mbc_mlkem_pack(out, v, d);
        memset(v, 0, sizeof(v));
        __asm__ __volatile__("" : : "r"(v) : "memory");
    }
}

/* ---- coefficient-wise passes and the byte encodings ------------------------ */

void K4(mbc_mlkem_reduce)(int16_t a[MLKEM_N])
{
    for (unsigned i = 0; i < MLKEM_N; i += 16) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(a + i));
        _mm256_storeu_si256((__m256i *)(a + i), barrett16(x));
    }
}

void K4(mbc_mlkem_tomont)(int16_t a[MLKEM_N])
{
    const __m256i f = _mm256_set1_epi16((short)((1ull << 32) % MLKEM_Q)); /* R^2 mod q */
    for (unsigned i = 0; i < MLKEM_N; i += 16) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(a + i));
        _mm256_storeu_si256((__m256i *)(a + i), fqmul16(x, f));
    }
}

/* unpack12: the 16 values of 12 bits in the 24 bytes of load24's layout. */
static inline __m256i unpack12(__m256i f)
{
    const __m256i low12 = _mm256_set1_epi16(0x0FFF);
    const __m256i spread = _mm256_setr_epi8(0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11, 0, 1,
                                            1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11);
    f = _mm256_shuffle_epi8(f, spread);
    return _mm256_blend_epi16(_mm256_and_si256(f, low12), _mm256_srli_epi16(f, 4), 0xAA);
}

/* store12: 12 bytes of each 128-bit half of x, at p and p + 12. */
static inline void store12(uint8_t *p, __m256i x)
{
    const __m128i lo = _mm256_castsi256_si128(x), hi = _mm256_extracti128_si256(x, 1);
    _mm_storel_epi64((__m128i *)p, lo);
    const uint32_t l2 = (uint32_t)_mm_extract_epi32(lo, 2);
    memcpy(p + 8, &l2, 4);
    _mm_storel_epi64((__m128i *)(p + 12), hi);
    const uint32_t h2 = (uint32_t)_mm_extract_epi32(hi, 2);
    memcpy(p + 20, &h2, 4);
}

void K4(mbc_mlkem_encode12)(uint8_t out[384], const int16_t a[MLKEM_N])
{
    /* x = a mod q in [0, q), as poly.c: barrett, then + q where negative;
     * each pair (x0, x1) as the 24 bits x0 + x1 2^12 of a 32-bit unit (one
     * madd), whose three low bytes a shuffle gathers */
    const __m256i q = _mm256_set1_epi16(MLKEM_Q);
    const __m256i pair = _mm256_set1_epi32(1 | (1 << 28));
    const __m256i gather = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                            0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    for (unsigned i = 0; i < MLKEM_N; i += 16, out += 24) {
        __m256i x = barrett16(_mm256_loadu_si256((const __m256i *)(a + i)));
        x = _mm256_add_epi16(x, _mm256_and_si256(_mm256_srai_epi16(x, 15), q));
        store12(out, _mm256_shuffle_epi8(_mm256_madd_epi16(x, pair), gather));
    }
}

int K4(mbc_mlkem_decode12)(int16_t a[MLKEM_N], const uint8_t in[384])
{
    /* the values, and a lane mask of those >= q (public only as the
     * verdict: no branch on it) */
    const __m256i qm1 = _mm256_set1_epi16(MLKEM_Q - 1);
    __m256i over = _mm256_setzero_si256();
    for (unsigned i = 0; i < MLKEM_N; i += 16, in += 24) {
        const __m256i v = unpack12(load24(in));
        _mm256_storeu_si256((__m256i *)(a + i), v);
        over = _mm256_or_si256(over, _mm256_cmpgt_epi16(v, qm1));
    }
    /* the verdict by arithmetic, as poly.c's (vptest would set flags from
     * a secret dk's values, which MSan counts as a branch) */
    uint64_t w[4];
    _mm256_storeu_si256((__m256i *)w, over);
    const uint64_t any = w[0] | w[1] | w[2] | w[3];
    return (int)(1u ^ (unsigned)((any | (0 - any)) >> 63));
}

/* decompress16: round(q v / 2^d) of 16 values v < 2^d (d <= 11): the
 * rounding high product of v 2^(15 - d) and q, (v q 2^(15-d) + 2^14) >>
 * 15, the same floor as poly.c's (v q + 2^(d-1)) >> d. */
static inline __m256i decompress16(__m256i v, unsigned d)
{
    const __m128i sh = _mm_cvtsi32_si128((int)(15 - d));
    return _mm256_mulhrs_epi16(_mm256_sll_epi16(v, sh), _mm256_set1_epi16(MLKEM_Q));
}

void K4(mbc_mlkem_decode_decompress)(int16_t a[MLKEM_N], const uint8_t *in, unsigned d)
{
    if (d == 10) {
        /* 8 values from 10 bytes per half: value t of a group of 4 (5
         * bytes) is 16 bits at byte t, shifted right by 2 t: the multiply
         * by 2^(6 - 2t) moves it to the top, a shift by 6 brings it down */
        const __m256i spread = _mm256_setr_epi8(0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 6, 7, 7, 8, 8, 9, 0,
                                                1, 1, 2, 2, 3, 3, 4, 5, 6, 6, 7, 7, 8, 8, 9);
        const __m256i mul =
            _mm256_setr_epi16(64, 16, 4, 1, 64, 16, 4, 1, 64, 16, 4, 1, 64, 16, 4, 1);
        for (unsigned i = 0; i < MLKEM_N; i += 16, in += 20) {
            uint16_t t0, t1;
            memcpy(&t0, in + 8, 2);
            memcpy(&t1, in + 18, 2);
            const __m128i lo = _mm_insert_epi16(_mm_loadl_epi64((const __m128i *)in), t0, 4);
            const __m128i hi = _mm_insert_epi16(_mm_loadl_epi64((const __m128i *)(in + 10)), t1, 4);
            __m256i f = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
            f = _mm256_srli_epi16(_mm256_mullo_epi16(_mm256_shuffle_epi8(f, spread), mul), 6);
            _mm256_storeu_si256((__m256i *)(a + i), decompress16(f, 10));
        }
        return;
    }
    if (d == 4) {
        /* 16 bytes, 32 values: byte j gives values 2j (low nibble) and
         * 2j + 1 (high); unpack interleaves them per 128-bit half */
        const __m256i low4 = _mm256_set1_epi16(0x0F);
        for (unsigned i = 0; i < MLKEM_N; i += 32, in += 16) {
            const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)in));
            const __m256i lo = _mm256_and_si256(b, low4), hi = _mm256_srli_epi16(b, 4);
            const __m256i l = _mm256_unpacklo_epi16(lo, hi), h = _mm256_unpackhi_epi16(lo, hi);
            _mm256_storeu_si256((__m256i *)(a + i),
                                decompress16(_mm256_permute2x128_si256(l, h, 0x20), 4));
            _mm256_storeu_si256((__m256i *)(a + i + 16),
                                decompress16(_mm256_permute2x128_si256(l, h, 0x31), 4));
        }
        return;
    }
    if (d == 1) {
        /* bit t of the 16 bits at in: lane t's mask test; Decompress_1 is
         * 0 or (q + 1) / 2 */
        const __m256i bits = _mm256_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048,
                                               4096, 8192, 16384, (short)0x8000);
        const __m256i half = _mm256_set1_epi16((MLKEM_Q + 1) / 2);
        for (unsigned i = 0; i < MLKEM_N; i += 16, in += 2) {
            uint16_t w;
            memcpy(&w, in, 2);
            const __m256i b = _mm256_set1_epi16((short)w);
            const __m256i set = _mm256_cmpeq_epi16(_mm256_and_si256(b, bits), bits);
            _mm256_storeu_si256((__m256i *)(a + i), _mm256_and_si256(set, half));
        }
        return;
    }
    mbc_mlkem_decode_decompress(a, in, d);
}
