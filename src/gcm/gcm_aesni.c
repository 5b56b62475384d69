/*
 * gcm_aesni.c - AES-GCM with AES-NI and PCLMULQDQ (_aesni), for x86-64 CPUs
 * without VAES. Built with -maes -mpclmul -msse4.1 -mssse3 on this object
 * only; selected by dispatch when CPUID reports them.
 *
 * 8 blocks in flight, AES and GHASH stitched: each 128-byte step of the main
 * loop runs the AES rounds of 8 counter blocks with the GHASH multiplies of
 * 8 other blocks slotted between them (one block per round for rounds 1-8,
 * which every key size has; the reduction goes with the rounds after), so
 * the AES unit and the carry-less multiplier work side by side. Encryption
 * hashes the previous step's 8 ciphertext blocks (the last ones after the
 * loop, together with the tail); decryption hashes the step's own 8 input
 * blocks.
 *
 * GHASH runs as POLYVAL on byte-reversed blocks (see gcm_internal.h):
 * dot(a, b) = a * b * x^-128. Aggregated reduction: n blocks (n <= 16 here)
 * are multiplied by H'^n..H'^1, summed unreduced and reduced once. Each
 * product is Karatsuba (3 carry-less multiplies; the lo ^ hi halves of the
 * powers come precomputed in key->htabk). The reduction is two Montgomery
 * folds by x^64 with the constant 0xC2 << 56:
 *   fold(t) = swap64(t) ^ clmul(t.lo, 0xC200000000000000).
 *
 * Constant time: no branch or table index depends on key, data or counter
 * (only on lengths); stack buffers that held data or keystream are wiped.
 */
#include <immintrin.h>
#include <string.h>

#include "../ct.h"
#include "gcm_internal.h"

#define AESNI_INLINE static inline __attribute__((always_inline))

/* PIN(x): x is computed here, in a register: a scheduling hint for the
 * compiler, nothing more. Empty under MemorySanitizer, which treats the
 * outputs of inline asm as initialised (it would launder secrets). */
#if defined(MBC_MSAN)
#define PIN(x) ((void)0)
#else
#define PIN(x) __asm__("" : "+x"(x))
#endif

AESNI_INLINE __m128i bswap128(__m128i x)
{
    const __m128i m = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm_shuffle_epi8(x, m);
}

AESNI_INLINE __m128i ldu(const uint8_t *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}

AESNI_INLINE void stu(uint8_t *p, __m128i x)
{
    _mm_storeu_si128((__m128i *)(void *)p, x);
}

/* lda: a 16-byte aligned field of the key (struct mbc_gcm_key is 64-byte
 * aligned), so that it can be a memory operand of aesenc / pclmulqdq. */
AESNI_INLINE __m128i lda(const uint8_t *p)
{
    return _mm_load_si128((const __m128i *)(const void *)p);
}

/* rkey: round key r. */
AESNI_INLINE __m128i rkey(const struct mbc_gcm_key *key, unsigned r)
{
    return lda(key->rk + 16 * r);
}

/* ------------------------------------------------------------------------ */
/* GHASH                                                                     */
/* ------------------------------------------------------------------------ */

/* acc: an unreduced sum of Karatsuba products: lo, hi, and the middle
 * products (a.lo ^ a.hi)(b.lo ^ b.hi), from which lo and hi are removed
 * once, at the reduction. */
struct acc {
    __m128i lo, hi, mid;
};

/* acc_mul: a <- a + x * H'^p (first product: a is set, not added to). */
AESNI_INLINE void acc_mul(struct acc *a, __m128i x, const struct mbc_gcm_key *key, unsigned p,
                          int first)
{
    const __m128i h = lda(key->htab + 16 * (GCM_NPOW - p));
    const __m128i hk = lda(key->htabk + 16 * (GCM_NPOW - p)); /* low qword: h.lo ^ h.hi */
    const __m128i xk = _mm_xor_si128(x, _mm_shuffle_epi32(x, 0x4E));
    const __m128i lo = _mm_clmulepi64_si128(x, h, 0x00);
    const __m128i hi = _mm_clmulepi64_si128(x, h, 0x11);
    const __m128i mid = _mm_clmulepi64_si128(xk, hk, 0x00);
    if (first) {
        a->lo = lo;
        a->hi = hi;
        a->mid = mid;
    } else {
        a->lo = _mm_xor_si128(a->lo, lo);
        a->hi = _mm_xor_si128(a->hi, hi);
        a->mid = _mm_xor_si128(a->mid, mid);
    }
    /* Keeps the sums in order: otherwise the compiler re-associates them,
     * holding products in flight (spilled) to add them up later. */
    PIN(a->lo);
    PIN(a->hi);
    PIN(a->mid);
}

/* acc_reduce: (hi:lo + mid << 64) * x^-128 mod P. */
AESNI_INLINE __m128i acc_reduce(const struct acc *a)
{
    const __m128i poly = _mm_set_epi64x((long long)0xC200000000000000ull, 1);
    const __m128i mid = _mm_xor_si128(a->mid, _mm_xor_si128(a->lo, a->hi));
    __m128i lo = _mm_xor_si128(a->lo, _mm_slli_si128(mid, 8));
    __m128i hi = _mm_xor_si128(a->hi, _mm_srli_si128(mid, 8));
    __m128i t = _mm_clmulepi64_si128(lo, poly, 0x10);
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4E), t);
    t = _mm_clmulepi64_si128(lo, poly, 0x10);
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4E), t);
    return _mm_xor_si128(lo, hi);
}

/* dot: a * b * x^-128 mod P, POLYVAL's product. */
AESNI_INLINE __m128i dot(__m128i a, __m128i b)
{
    const struct acc t = {
        .lo = _mm_clmulepi64_si128(a, b, 0x00),
        .hi = _mm_clmulepi64_si128(a, b, 0x11),
        .mid = _mm_clmulepi64_si128(_mm_xor_si128(a, _mm_shuffle_epi32(a, 0x4E)),
                                    _mm_xor_si128(b, _mm_shuffle_epi32(b, 0x4E)), 0x00),
    };
    return acc_reduce(&t);
}

/* mbc_gcm_hash_powers_aesni: H' = mulX_POLYVAL(bswap(H)) (a 128-bit shift
 * left by one, and P's low terms added when the top bit falls out, by mask),
 * then H'^n = dot(H'^(n-1), H'): 35 products where the bitwise portable
 * code takes 35 x 128 steps. */
void mbc_gcm_hash_powers_aesni(struct mbc_gcm_key *key)
{
    const __m128i poly = _mm_set_epi64x((long long)0xC200000000000000ull, 1);
    const __m128i v = bswap128(lda(key->h));
    const __m128i top = _mm_shuffle_epi32(_mm_srai_epi32(v, 31), 0xFF);
    const __m128i shl =
        _mm_or_si128(_mm_slli_epi64(v, 1), _mm_srli_epi64(_mm_slli_si128(v, 8), 63));
    const __m128i h1 = _mm_xor_si128(shl, _mm_and_si128(poly, top));
    __m128i p = h1;
    for (unsigned n = 1; n <= GCM_NPOW; n++) {
        if (n > 1) {
            p = dot(p, h1);
        }
        _mm_store_si128((__m128i *)(void *)(key->htab + 16 * (GCM_NPOW - n)), p);
    }
    memset(key->htab + 16 * GCM_NPOW, 0, 64);
}

/* mbc_gcm_subword_aesni: SubWord(t) with AESENCLAST on t in all four
 * columns, where ShiftRows moves nothing and the zero round key adds
 * nothing. */
void mbc_gcm_subword_aesni(uint8_t t[4])
{
    uint32_t w;
    memcpy(&w, t, 4);
    const __m128i x = _mm_aesenclast_si128(_mm_set1_epi32((int)w), _mm_setzero_si128());
    w = (uint32_t)_mm_cvtsi128_si32(x);
    memcpy(t, &w, 4);
}

/* ghash_mem: adds n (1..GCM_NPOW) full blocks at p to the sum a, as the
 * first n of pw blocks hashed under one reduction (block j is multiplied by
 * H'^(pw - j)); y, if x0 is set, is added to the first block. */
AESNI_INLINE void ghash_mem(struct acc *a, const struct mbc_gcm_key *key, const uint8_t *p,
                            unsigned n, unsigned pw, int first, __m128i y, int x0)
{
    for (unsigned j = 0; j < n; j++) {
        __m128i x = bswap128(ldu(p + 16 * j));
        if (j == 0 && x0) {
            x = _mm_xor_si128(x, y);
        }
        acc_mul(a, x, key, pw - j, first && j == 0);
    }
}

/* ghash_any: y <- GHASH over len bytes (zero-padded tail). */
static __m128i ghash_any(const struct mbc_gcm_key *key, __m128i y, const uint8_t *in, size_t len)
{
    struct acc a;
    while (len >= 128) {
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++) {
            __m128i x = bswap128(ldu(in + 16 * j));
            acc_mul(&a, j == 0 ? _mm_xor_si128(x, y) : x, key, 8 - j, j == 0);
        }
        y = acc_reduce(&a);
        in += 128;
        len -= 128;
    }
    if (len > 0) {
        unsigned nb = (unsigned)((len + 15) / 16), full = (unsigned)(len / 16);
        for (unsigned j = 0; j < full; j++) {
            __m128i x = bswap128(ldu(in + 16 * j));
            acc_mul(&a, j == 0 ? _mm_xor_si128(x, y) : x, key, nb - j, j == 0);
        }
        if (full < nb) {
            uint8_t buf[16] = {0};
            memcpy(buf, in + 16 * full, len - 16 * full);
            __m128i x = bswap128(ldu(buf));
            acc_mul(&a, full == 0 ? _mm_xor_si128(x, y) : x, key, 1, full == 0);
            mbc_memzero(buf, sizeof(buf));
        }
        y = acc_reduce(&a);
    }
    return y;
}

static void ghash_aesni(const struct mbc_gcm_key *key, uint8_t xi[16], const uint8_t *in,
                        size_t len)
{
    __m128i y = ldu(xi);
    y = ghash_any(key, y, in, len);
    stu(xi, y);
}

/* ------------------------------------------------------------------------ */
/* AES, counters                                                             */
/* ------------------------------------------------------------------------ */

/* aes_n: b[0..n) <- AES_K(b[i]); n is a constant at every call (blocks in
 * registers), the round count is not. */
AESNI_INLINE void aes_n(const struct mbc_gcm_key *key, __m128i *b, unsigned n)
{
    const unsigned nr = key->rounds;
    __m128i k = rkey(key, 0);
#pragma GCC unroll 8
    for (unsigned j = 0; j < n; j++) {
        b[j] = _mm_xor_si128(b[j], k);
    }
    for (unsigned r = 1; r < nr; r++) {
        k = rkey(key, r);
#pragma GCC unroll 8
        for (unsigned j = 0; j < n; j++) {
            b[j] = _mm_aesenc_si128(b[j], k);
        }
    }
    k = rkey(key, nr);
#pragma GCC unroll 8
    for (unsigned j = 0; j < n; j++) {
        b[j] = _mm_aesenclast_si128(b[j], k);
    }
}

static void block_aesni(const struct mbc_gcm_key *key, const uint8_t in[16], uint8_t out[16])
{
    __m128i b[1] = {ldu(in)};
    aes_n(key, b, 1);
    stu(out, b[0]);
}

/* ctr_n: n counter blocks from the byte-reversed counter c (the 32-bit
 * counter is its low dword); returns c advanced by n. */
AESNI_INLINE __m128i ctr_n(__m128i *b, __m128i c, unsigned n)
{
    const __m128i one = _mm_set_epi32(0, 0, 0, 1);
#pragma GCC unroll 8
    for (unsigned j = 0; j < n; j++) {
        b[j] = bswap128(c);
        c = _mm_add_epi32(c, one);
        /* One add at a time, not c + j from 8 more constants (registers). */
        PIN(c);
    }
    return c;
}

/* ------------------------------------------------------------------------ */
/* The stitched step                                                         */
/* ------------------------------------------------------------------------ */

/*
 * stitch8: b[0..8) <- AES_K(b[i]) (the 8 counter blocks, round key 0 not yet
 * added), while y <- GHASH(y, the 8 blocks at g): one GHASH block per round
 * for rounds 1-8, then the reduction with the remaining rounds. Returns y.
 */
AESNI_INLINE __m128i stitch8(const struct mbc_gcm_key *key, __m128i b[8], __m128i y,
                             const uint8_t *g)
{
    const unsigned nr = key->rounds;
    struct acc a;
    __m128i k = rkey(key, 0);
#pragma GCC unroll 8
    for (unsigned j = 0; j < 8; j++) {
        b[j] = _mm_xor_si128(b[j], k);
    }
#pragma GCC unroll 8
    for (unsigned r = 1; r <= 8; r++) {
        __m128i x = bswap128(ldu(g + 16 * (r - 1)));
        if (r == 1) {
            x = _mm_xor_si128(x, y);
        }
        k = rkey(key, r);
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++) {
            b[j] = _mm_aesenc_si128(b[j], k);
        }
        acc_mul(&a, x, key, 9 - r, r == 1);
    }
    y = acc_reduce(&a);
    for (unsigned r = 9; r < nr; r++) {
        k = rkey(key, r);
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; j++) {
            b[j] = _mm_aesenc_si128(b[j], k);
        }
    }
    k = rkey(key, nr);
#pragma GCC unroll 8
    for (unsigned j = 0; j < 8; j++) {
        b[j] = _mm_aesenclast_si128(b[j], k);
    }
    return y;
}

/* xor8: out[0..128) = in ^ b. */
AESNI_INLINE void xor8(uint8_t *out, const uint8_t *in, const __m128i b[8])
{
#pragma GCC unroll 8
    for (unsigned j = 0; j < 8; j++) {
        stu(out + 16 * j, _mm_xor_si128(ldu(in + 16 * j), b[j]));
    }
}

/* ------------------------------------------------------------------------ */
/* Tail                                                                      */
/* ------------------------------------------------------------------------ */

/* keystream_n: ks[0..n) <- AES_K(counter blocks), n = 1..8 (a public
 * length), computed as 1, 2, 4 or 8 blocks; returns c advanced by n. */
AESNI_INLINE __m128i keystream_n(const struct mbc_gcm_key *key, __m128i ks[8], __m128i c,
                                 unsigned n)
{
    if (n > 4) {
        ctr_n(ks, c, 8);
        aes_n(key, ks, 8);
    } else if (n > 2) {
        ctr_n(ks, c, 4);
        aes_n(key, ks, 4);
    } else if (n > 1) {
        ctr_n(ks, c, 2);
        aes_n(key, ks, 2);
    } else {
        ctr_n(ks, c, 1);
        aes_n(key, ks, 1);
    }
    return _mm_add_epi32(c, _mm_set_epi32(0, 0, 0, (int)n));
}

/* mask_ff: 16 bytes 0xff then 16 zero bytes; loadu(mask_ff + 16 - r) keeps
 * the first r bytes of a block (r public). */
static const uint8_t mask_ff[32] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* load_part: the first r (1..15) bytes at p, zero-padded. */
AESNI_INLINE __m128i load_part(const uint8_t *p, size_t r)
{
    uint8_t buf[16] = {0};
    memcpy(buf, p, r);
    __m128i x = ldu(buf);
    mbc_memzero(buf, sizeof(buf));
    return x;
}

/* store_part: writes the first r (1..15) bytes of x to p. */
AESNI_INLINE void store_part(uint8_t *p, __m128i x, size_t r)
{
    uint8_t buf[16];
    stu(buf, x);
    memcpy(p, buf, r);
    mbc_memzero(buf, sizeof(buf));
}

/*
 * hash_tail: y <- GHASH(y, blocks) under one reduction, the blocks being:
 * npend (0 or 8) full blocks at pend, nfull full blocks at p, the block part
 * (already byte-reversed) if has_part. At most 16 blocks.
 */
AESNI_INLINE __m128i hash_tail(const struct mbc_gcm_key *key, __m128i y, const uint8_t *pend,
                               unsigned npend, const uint8_t *p, unsigned nfull, __m128i part,
                               int has_part)
{
    unsigned pw = npend + nfull + (has_part != 0);
    if (pw == 0) {
        return y;
    }
    struct acc a = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
    int first = 1; /* y not yet added */
    if (npend > 0) {
        ghash_mem(&a, key, pend, npend, pw, 0, y, 1);
        pw -= npend;
        first = 0;
    }
    if (nfull > 0) {
        ghash_mem(&a, key, p, nfull, pw, 0, y, first);
        pw -= nfull;
        first = 0;
    }
    if (has_part) {
        acc_mul(&a, first ? _mm_xor_si128(part, y) : part, key, 1, 0);
    }
    return acc_reduce(&a);
}

/*
 * crypt_tail: the last len (0..127) bytes, with *cp the byte-reversed
 * counter (advanced). Hashes, under one reduction: pend (0 or 8 full blocks
 * at pend: encryption's last step, still unhashed) and the tail's
 * ciphertext zero-padded. Returns y.
 */
AESNI_INLINE __m128i crypt_tail(const struct mbc_gcm_key *key, __m128i *cp, __m128i y,
                                const uint8_t *pend, unsigned npend, const uint8_t *in,
                                uint8_t *out, size_t len, int enc)
{
    const unsigned full = (unsigned)(len / 16);
    const size_t r = len % 16;
    __m128i ks[8];
    __m128i part = _mm_setzero_si128();
    if (len > 0) {
        *cp = keystream_n(key, ks, *cp, full + (r != 0));
    }
    /* Encryption hashes the output, decryption the input (out may equal in):
     * the full blocks are written before, respectively after, hashing. */
    if (enc) {
        for (unsigned j = 0; j < full; j++) {
            stu(out + 16 * j, _mm_xor_si128(ldu(in + 16 * j), ks[j]));
        }
    }
    if (r != 0) {
        __m128i x = load_part(in + 16 * full, r);
        __m128i o = _mm_and_si128(_mm_xor_si128(x, ks[full]), ldu(mask_ff + 16 - r));
        store_part(out + 16 * full, o, r);
        part = bswap128(enc ? o : x);
    }
    y = hash_tail(key, y, pend, npend, enc ? out : in, full, part, r != 0);
    if (!enc) {
        for (unsigned j = 0; j < full; j++) {
            stu(out + 16 * j, _mm_xor_si128(ldu(in + 16 * j), ks[j]));
        }
    }
    for (unsigned j = 0; j < 8; j++) {
        ks[j] = _mm_setzero_si128();
    }
    __asm__ __volatile__("" : : "r"(ks) : "memory");
    return y;
}

/* ------------------------------------------------------------------------ */
/* Bulk                                                                      */
/* ------------------------------------------------------------------------ */

/*
 * crypt_bulk: CTR over len bytes from the byte-reversed counter *cp, GHASH
 * of the ciphertext into y, reduced. enc: the ciphertext is the output.
 */
AESNI_INLINE __m128i crypt_bulk(const struct mbc_gcm_key *key, __m128i *cp, __m128i y,
                                const uint8_t *in, uint8_t *out, size_t len, int enc)
{
    __m128i c = *cp;
    __m128i b[8];
    const uint8_t *pend = NULL;
    unsigned npend = 0;
    if (enc) {
        if (len >= 128) {
            c = ctr_n(b, c, 8);
            aes_n(key, b, 8);
            xor8(out, in, b);
            pend = out;
            npend = 8;
            in += 128;
            out += 128;
            len -= 128;
        }
        while (len >= 128) {
            c = ctr_n(b, c, 8);
            y = stitch8(key, b, y, pend);
            xor8(out, in, b);
            pend = out;
            in += 128;
            out += 128;
            len -= 128;
        }
    } else {
        while (len >= 128) {
            c = ctr_n(b, c, 8);
            y = stitch8(key, b, y, in);
            xor8(out, in, b);
            in += 128;
            out += 128;
            len -= 128;
        }
    }
    y = crypt_tail(key, &c, y, pend, npend, in, out, len, enc);
    *cp = c;
    return y;
}

static void crypt_aesni(const struct mbc_gcm_key *key, uint8_t ctr[16], uint8_t xi[16],
                        const uint8_t *in, uint8_t *out, size_t len, int enc)
{
    __m128i y = ldu(xi);
    __m128i c = bswap128(ldu(ctr));
    y = enc ? crypt_bulk(key, &c, y, in, out, len, 1) : crypt_bulk(key, &c, y, in, out, len, 0);
    stu(xi, y);
    stu(ctr, bswap128(c));
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

/* OpenSSL's own AES-NI code is as fast: "auto" leaves GCM to it here. */
const struct mbc_gcm_impl mbc_gcm_impl_aesni = {
    .base = {.info = {.name = "aesni", .tier = MBC_TIER_VECTOR, .lanes = 1, .fast_ops = 0},
             .needs = MBC_GCM_AESNI_NEEDS},
    .subword = mbc_gcm_subword_aesni,
    .powers = mbc_gcm_hash_powers_aesni,
    .block = block_aesni,
    .ghash = ghash_aesni,
    .enc = enc_aesni,
    .dec = dec_aesni,
};

/* mbc_gcm_block_aesni: exported for the _vaes512 table (single blocks). */
void mbc_gcm_block_aesni(const struct mbc_gcm_key *key, const uint8_t in[16], uint8_t out[16])
{
    block_aesni(key, in, out);
}
