/*
 * gcm_internal.h - the AES-GCM key object and the interface between the GCM
 * glue (gcm.c, baseline code) and its three implementations: _c (portable,
 * bitsliced AES, constant-time GHASH), _aesni (AES-NI + PCLMULQDQ intrinsics)
 * and _vaes512 (nasm, VAES + VPCLMULQDQ on zmm).
 *
 * GHASH state convention shared by every implementation: the 16-byte
 * accumulator xi holds Y byte-reversed (xi[i] = Y[15 - i]), i.e. the
 * little-endian 128-bit integer bswap(Y). The fast paths compute GHASH as
 * POLYVAL on byte-reversed blocks (RFC 8452, appendix A):
 *   Y' <- dot(Y' ^ bswap(X), H'),  dot(a, b) = a * b * x^-128 mod
 *   x^128 + x^127 + x^126 + x^121 + 1,  H' = mulX_POLYVAL(bswap(H)),
 * and htab holds the dot-powers of H' (equal to mulX_POLYVAL(bswap(H^n))).
 */
#ifndef MBC_SRC_GCM_GCM_INTERNAL_H
#define MBC_SRC_GCM_GCM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../impl.h"
#include "../internal.h"

/* GCM_NPOW: hash-key powers kept in htab (H'^36 .. H'^1): the nasm kernels
 * aggregate up to 32 data blocks with the length block and the AAD blocks
 * under one reduction. */
#define GCM_NPOW 36

struct mbc_gcm_key;

/*
 * gcm_seal12_fn / gcm_open12_fn: a whole one-shot operation with a 12-byte
 * IV in one call (J0, AAD, data, length block, tag), with the arguments of
 * mbc_gcm_seal / mbc_gcm_open, so that those can tail-call it once they have
 * checked them. iv_len must be 12. seal: tag_len must be 16 (16 bytes are
 * written); returns MBC_OK. open: compares the first tag_len (1..16) bytes of
 * the tag in constant time; returns MBC_OK, or MBC_ERR_AUTH with out zeroed.
 */
typedef mbc_err (*gcm_seal12_fn)(const struct mbc_gcm_key *key, uint8_t *out, uint8_t *tag,
                                 size_t tag_len, const uint8_t *iv, size_t iv_len,
                                 const uint8_t *aad, size_t aad_len, const uint8_t *in,
                                 size_t in_len);
typedef mbc_err (*gcm_open12_fn)(const struct mbc_gcm_key *key, uint8_t *out, const uint8_t *tag,
                                 size_t tag_len, const uint8_t *iv, size_t iv_len,
                                 const uint8_t *aad, size_t aad_len, const uint8_t *in,
                                 size_t in_len);

/*
 * mbc_gcm_impl: one implementation. Every function takes the key it was
 * built for; lengths are public.
 *  block: out = AES_K(in), one block.
 *  ghash: xi <- GHASH update over in[0..len), any len; a partial last block
 *         is zero-padded.
 *  enc:   CTR-encrypts len bytes (any len) with the 32-bit big-endian counter
 *         of ctr (incremented per block, modulo 2^32; ctr is advanced by
 *         ceil(len/16)) and GHASHes the ciphertext into xi (zero-padded).
 *  dec:   the same, GHASHing the input. out may equal in.
 *  seal12, open12 (optional, NULL if absent): see gcm_seal12_fn.
 *  scrub_always: 1 if the implementation's frames may hold secrets after
 *         any call (so every call scrubs its dead stack, gcm.c's
 *         gcm_scrub_len), 0 if they hold none once a call with a 12-byte
 *         IV returns (tests/test_wipe.c checks both).
 */
struct mbc_gcm_impl {
    struct mbc_impl_base base;
    /* Key setup: subword is AES's SubWord for the shared key schedule
     * (mbc_gcm_expand_key); powers fills key->htab from key->h as
     * mbc_gcm_hash_powers says. Every implementation gives the same bytes. */
    void (*subword)(uint8_t t[4]);
    void (*powers)(struct mbc_gcm_key *key);
    void (*block)(const struct mbc_gcm_key *key, const uint8_t in[16], uint8_t out[16]);
    void (*ghash)(const struct mbc_gcm_key *key, uint8_t xi[16], const uint8_t *in, size_t len);
    void (*enc)(const struct mbc_gcm_key *key, uint8_t ctr[16], uint8_t xi[16], const uint8_t *in,
                uint8_t *out, size_t len);
    void (*dec)(const struct mbc_gcm_key *key, uint8_t ctr[16], uint8_t xi[16], const uint8_t *in,
                uint8_t *out, size_t len);
    gcm_seal12_fn seal12;
    gcm_open12_fn open12;
    int scrub_always;
};

/*
 * mbc_gcm_key: offsets of rk, htab, rounds, rk512 and htabk are read by the
 * nasm kernels (the %defines RK, HTAB, ROUNDS, RK512, HTABK of
 * src/asm/gcm_vaes512.asm, GCM_KEY_* here, checked in gcm.c); keep them in
 * sync. rk and htab are 16-byte aligned (aesni memory operands), rk512 and
 * htab 64-byte aligned (zmm).
 */
struct mbc_gcm_key {
    struct mbc_key_tag tag; /* 0: MBC_KEY_GCM, info = AES key bytes (16, 24, 32) */
    uint8_t pad0[8];
    uint8_t rk[16 * 15];               /* 16: AES round keys, FIPS-197 byte order */
    uint8_t htab[16 * (GCM_NPOW + 4)]; /* 256: htab[i] = H'^(36 - i), then 4 zero blocks */
    uint8_t h[16];                     /* 896: H = AES_K(0), for the _c path */
    uint32_t rounds;                   /* 912: 10, 12 or 14 */
    struct mbc_gcm_impl impl;          /* copied at creation: one key, one implementation */
    /* 1024: the round keys right-aligned in 15 slots of 64 bytes, each key 4
     * times (zmm memory operands): slot 14 - rounds + r holds round key r,
     * so the last round is always slot 14 and one unrolled round sequence
     * serves every key size (entered at slot 0, 2 or 4). */
    _Alignas(64) uint8_t rk512[64 * 15];
    uint8_t htabk[16 * (GCM_NPOW + 4)]; /* 1984: lo ^ hi qwords of htab[i] (Karatsuba), 0 */
};

#define GCM_KEY_RK 16
#define GCM_KEY_HTAB 256
#define GCM_KEY_H 896
#define GCM_KEY_ROUNDS 912
#define GCM_KEY_RK512 1024
#define GCM_KEY_HTABK 1984

/* The implementations, and the CPU features each runs on. */
#define MBC_GCM_AESNI_NEEDS (MBC_CPU_AESNI | MBC_CPU_PCLMULQDQ | MBC_CPU_SSE41 | MBC_CPU_SSSE3)
#define MBC_GCM_VAES512_NEEDS                                                                      \
    (MBC_GCM_AESNI_NEEDS | MBC_CPU_VAES | MBC_CPU_VPCLMULQDQ | MBC_CPU_AVX512F |                   \
     MBC_CPU_AVX512BW | MBC_CPU_AVX512VL | MBC_CPU_BMI2)
extern const struct mbc_gcm_impl mbc_gcm_impl_c;
#if MBC_HAVE_AESNI
extern const struct mbc_gcm_impl mbc_gcm_impl_aesni;
#endif
#if MBC_HAVE_VAES
extern const struct mbc_gcm_impl mbc_gcm_impl_vaes512;

/* The nasm kernels of src/asm/gcm_vaes512.asm (math and register use are
 * documented there), and the AES-NI single block they pair with. */
void mbc_gcm_block_aesni(const struct mbc_gcm_key *key, const uint8_t in[16], uint8_t out[16]);
void mbc_gcm_ghash_vaes512(const struct mbc_gcm_key *key, uint8_t xi[16], const uint8_t *in,
                           size_t len);
void mbc_gcm_enc_vaes512(const struct mbc_gcm_key *key, uint8_t ctr[16], uint8_t xi[16],
                         const uint8_t *in, uint8_t *out, size_t len);
void mbc_gcm_dec_vaes512(const struct mbc_gcm_key *key, uint8_t ctr[16], uint8_t xi[16],
                         const uint8_t *in, uint8_t *out, size_t len);
mbc_err mbc_gcm_seal12_vaes512(const struct mbc_gcm_key *key, uint8_t *out, uint8_t *tag,
                               size_t tag_len, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                               size_t aad_len, const uint8_t *in, size_t in_len);
mbc_err mbc_gcm_open12_vaes512(const struct mbc_gcm_key *key, uint8_t *out, const uint8_t *tag,
                               size_t tag_len, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                               size_t aad_len, const uint8_t *in, size_t in_len);
#endif

/* gcm_ctr_inc: increments the 32-bit big-endian counter of a counter block. */
static inline void gcm_ctr_inc(uint8_t ctr[16])
{
    uint32_t c =
        ((uint32_t)ctr[12] << 24) | ((uint32_t)ctr[13] << 16) | ((uint32_t)ctr[14] << 8) | ctr[15];
    c++;
    ctr[12] = (uint8_t)(c >> 24);
    ctr[13] = (uint8_t)(c >> 16);
    ctr[14] = (uint8_t)(c >> 8);
    ctr[15] = (uint8_t)c;
}

/* mbc_gcm_expand_key: the AES key schedule (constant time, no tables) into
 * key->rk and key->rounds, with the implementation's SubWord; k_len is 16,
 * 24 or 32. */
void mbc_gcm_expand_key(struct mbc_gcm_key *key, const uint8_t *k, size_t k_len,
                        void (*subword)(uint8_t t[4]));

/* mbc_gcm_hash_powers: what an implementation's powers does: from key->h,
 * htab[GCM_NPOW - n] = mulX_POLYVAL(bswap(H^n)) for n = 1..GCM_NPOW, then
 * 4 zero blocks (constant time). In POLYVAL terms that is H'^n with
 * H' = mulX_POLYVAL(bswap(H)) and the product dot(a, b) = a * b * x^-128:
 * H'^n = dot(H'^(n-1), H'), which the carry-less implementations compute. */

#if MBC_HAVE_AESNI
/* The AES-NI key setup, shared by the _aesni and _vaes512 tables. */
void mbc_gcm_subword_aesni(uint8_t t[4]);
void mbc_gcm_hash_powers_aesni(struct mbc_gcm_key *key);
#endif

/* mbc_gcm_impl_for: the implementation the feature word selects, each
 * falling back on the next one on its own. */
const struct mbc_gcm_impl *mbc_gcm_impl_for(uint64_t features);

/* mbc_gcm_impl_table: the implementations mbc_gcm_impl_for picks from. */
extern const struct mbc_impl_table mbc_gcm_impl_table;

#endif /* MBC_SRC_GCM_GCM_INTERNAL_H */
