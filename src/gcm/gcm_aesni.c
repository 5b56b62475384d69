/*
 * gcm_aesni.c - AES-GCM with AES-NI and PCLMULQDQ (_aesni), for x86-64 CPUs
 * without VAES. Built with -maes -mpclmul -msse4.1 -mssse3 on this object
 * only; selected by dispatch when CPUID reports them.
 *
 * 8 blocks in flight; GHASH with aggregated reduction: 8 blocks are
 * multiplied by H'^8..H'^1 (schoolbook, 4 carry-less products each), summed
 * unreduced, and reduced once. GHASH runs as POLYVAL on byte-reversed blocks
 * (see gcm_internal.h): dot(a, b) = a * b * x^-128, the reduction being two
 * Montgomery folds by x^64 with the constant 0xC2 << 56:
 *   fold(t) = swap64(t) ^ clmul(t.lo, 0xC200000000000000).
 */
#include <immintrin.h>
#include <string.h>

#include "gcm_internal.h"

static inline __m128i bswap128(__m128i x)
{
    const __m128i m = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm_shuffle_epi8(x, m);
}

/* hpow: H'^p, 1 <= p <= GCM_NPOW. */
static inline __m128i hpow(const struct mbc_gcm_key *key, unsigned p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)(key->htab + 16 * (GCM_NPOW - p)));
}

struct acc {
    __m128i lo, mid, hi;
};

static inline void acc_init(struct acc *a)
{
    a->lo = a->mid = a->hi = _mm_setzero_si128();
}

static inline void acc_mul(struct acc *a, __m128i x, __m128i h)
{
    a->lo = _mm_xor_si128(a->lo, _mm_clmulepi64_si128(x, h, 0x00));
    a->hi = _mm_xor_si128(a->hi, _mm_clmulepi64_si128(x, h, 0x11));
    a->mid = _mm_xor_si128(a->mid, _mm_clmulepi64_si128(x, h, 0x01));
    a->mid = _mm_xor_si128(a->mid, _mm_clmulepi64_si128(x, h, 0x10));
}

/* acc_reduce: (hi:lo + mid << 64) * x^-128 mod P. */
static inline __m128i acc_reduce(const struct acc *a)
{
    const __m128i poly = _mm_set_epi64x((long long)0xC200000000000000ull, 1);
    __m128i lo = _mm_xor_si128(a->lo, _mm_slli_si128(a->mid, 8));
    __m128i hi = _mm_xor_si128(a->hi, _mm_srli_si128(a->mid, 8));
    __m128i t = _mm_clmulepi64_si128(lo, poly, 0x10);
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4E), t);
    t = _mm_clmulepi64_si128(lo, poly, 0x10);
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4E), t);
    return _mm_xor_si128(lo, hi);
}

/* ghash_blocks: y <- GHASH over nb (1..8) full blocks at p. */
static inline __m128i ghash_blocks(const struct mbc_gcm_key *key, __m128i y, const uint8_t *p,
                                   unsigned nb)
{
    struct acc a;
    acc_init(&a);
    for (unsigned j = 0; j < nb; j++) {
        __m128i x = bswap128(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * j)));
        if (j == 0) {
            x = _mm_xor_si128(x, y);
        }
        acc_mul(&a, x, hpow(key, nb - j));
    }
    return acc_reduce(&a);
}

/* ghash_any: y <- GHASH over len bytes (zero-padded tail). */
static __m128i ghash_any(const struct mbc_gcm_key *key, __m128i y, const uint8_t *in, size_t len)
{
    while (len >= 128) {
        y = ghash_blocks(key, y, in, 8);
        in += 128;
        len -= 128;
    }
    if (len > 0) {
        uint8_t buf[128] = {0};
        memcpy(buf, in, len);
        y = ghash_blocks(key, y, buf, (unsigned)((len + 15) / 16));
    }
    return y;
}

static void ghash_aesni(const struct mbc_gcm_key *key, uint8_t xi[16], const uint8_t *in,
                        size_t len)
{
    __m128i y = _mm_loadu_si128((const __m128i *)(void *)xi);
    y = ghash_any(key, y, in, len);
    _mm_storeu_si128((__m128i *)(void *)xi, y);
}

/* aes8: b[0..nb) <- AES_K(b[i]). */
static inline void aes8(const struct mbc_gcm_key *key, __m128i b[8], unsigned nb)
{
    const __m128i *rk = (const __m128i *)(const void *)key->rk;
    __m128i k = _mm_loadu_si128(rk);
    for (unsigned j = 0; j < nb; j++) {
        b[j] = _mm_xor_si128(b[j], k);
    }
    for (unsigned r = 1; r < key->rounds; r++) {
        k = _mm_loadu_si128(rk + r);
        for (unsigned j = 0; j < nb; j++) {
            b[j] = _mm_aesenc_si128(b[j], k);
        }
    }
    k = _mm_loadu_si128(rk + key->rounds);
    for (unsigned j = 0; j < nb; j++) {
        b[j] = _mm_aesenclast_si128(b[j], k);
    }
}

static void block_aesni(const struct mbc_gcm_key *key, const uint8_t in[16], uint8_t out[16])
{
    __m128i b[8];
    b[0] = _mm_loadu_si128((const __m128i *)(const void *)in);
    aes8(key, b, 1);
    _mm_storeu_si128((__m128i *)(void *)out, b[0]);
}

/* ctr_blocks: nb counter blocks from the byte-reversed counter c. */
static inline __m128i ctr_blocks(__m128i b[8], __m128i c, unsigned nb)
{
    for (unsigned j = 0; j < nb; j++) {
        b[j] = bswap128(_mm_add_epi32(c, _mm_set_epi32(0, 0, 0, (int)j)));
    }
    return _mm_add_epi32(c, _mm_set_epi32(0, 0, 0, (int)nb));
}

static void crypt_aesni(const struct mbc_gcm_key *key, uint8_t ctr[16], uint8_t xi[16],
                        const uint8_t *in, uint8_t *out, size_t len, int enc)
{
    __m128i y = _mm_loadu_si128((const __m128i *)(void *)xi);
    __m128i c = bswap128(_mm_loadu_si128((const __m128i *)(void *)ctr));
    __m128i b[8];
    while (len >= 128) {
        if (!enc) {
            y = ghash_blocks(key, y, in, 8);
        }
        c = ctr_blocks(b, c, 8);
        aes8(key, b, 8);
        for (unsigned j = 0; j < 8; j++) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(in + 16 * j));
            _mm_storeu_si128((__m128i *)(void *)(out + 16 * j), _mm_xor_si128(x, b[j]));
        }
        if (enc) {
            y = ghash_blocks(key, y, out, 8);
        }
        in += 128;
        out += 128;
        len -= 128;
    }
    if (len > 0) {
        uint8_t buf[128] = {0};
        unsigned nb = (unsigned)((len + 15) / 16);
        memcpy(buf, in, len);
        if (!enc) {
            y = ghash_blocks(key, y, buf, nb);
        }
        c = ctr_blocks(b, c, nb);
        aes8(key, b, nb);
        for (unsigned j = 0; j < nb; j++) {
            __m128i x = _mm_loadu_si128((const __m128i *)(void *)(buf + 16 * j));
            _mm_storeu_si128((__m128i *)(void *)(buf + 16 * j), _mm_xor_si128(x, b[j]));
        }
        memset(buf + len, 0, 128 - len);
        memcpy(out, buf, len);
        if (enc) {
            y = ghash_blocks(key, y, buf, nb);
        }
        memset(buf, 0, sizeof(buf));
        __asm__ __volatile__("" : : "r"(buf) : "memory");
    }
    _mm_storeu_si128((__m128i *)(void *)xi, y);
    _mm_storeu_si128((__m128i *)(void *)ctr, bswap128(c));
}

static void enc_aesni(const struct mbc_gcm_key *key, uint8_t ctr[16], uint8_t xi[16],
                      const uint8_t *in, uint8_t *out, size_t len)
{
    crypt_aesni(key, ctr, xi, in, out, len, 1);
}

static void dec_aesni(const struct mbc_gcm_key *key, uint8_t ctr[16], uint8_t xi[16],
                      const uint8_t *in, uint8_t *out, size_t len)
{
    crypt_aesni(key, ctr, xi, in, out, len, 0);
}

const struct mbc_gcm_impl mbc_gcm_impl_aesni = {"aesni",   block_aesni, ghash_aesni, enc_aesni,
                                                dec_aesni, NULL,        NULL};

/* mbc_gcm_block_aesni: exported for the _vaes512 table (single blocks). */
void mbc_gcm_block_aesni(const struct mbc_gcm_key *key, const uint8_t in[16], uint8_t out[16])
{
    block_aesni(key, in, out);
}
