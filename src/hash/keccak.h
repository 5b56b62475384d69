/*
 * keccak.h - Keccak-f[1600] and the FIPS 202 functions ML-KEM needs
 * (src/hash/keccak.c, portable C): SHA3-256, SHA3-512, SHAKE128 and SHAKE256
 * with incremental absorb and squeeze; the 4-way permutation
 * (keccak4_avx2.c, AVX2: four states side by side, one per 64-bit lane of a
 * ymm register) and the 8-way one (keccak8_avx512.c, a zmm register per
 * state word), with the SHAKE calls of equal-length inputs and the
 * fixed-output tasks built on them (one driver, mbc_keccak_hash_ways).
 * Little-endian hosts only (x86-64). Nothing here branches on or indexes by
 * the data: only lengths decide.
 *
 * States may hold secrets (the PRF of ML-KEM, SHA3-512 of its seed): the
 * caller wipes a struct mbc_keccak it no longer needs (mbc_memzero); the
 * one-shot functions wipe their own.
 */
#ifndef MBC_SRC_HASH_KECCAK_H
#define MBC_SRC_HASH_KECCAK_H

#include <stddef.h>
#include <stdint.h>

#define MBC_SHAKE128_RATE 168
#define MBC_SHAKE256_RATE 136
#define MBC_SHA3_256_RATE 136
#define MBC_SHA3_512_RATE 72

/* mbc_keccak: one sponge: the state, its rate in bytes, the position in the
 * current block (absorbing, then squeezing after mbc_keccak_finish). */
struct mbc_keccak {
    uint64_t s[25];
    unsigned rate;
    unsigned pos;
};

/* The step constants of both permutations, here so that the unrolled
 * rounds see them as constants: iota's round constants (FIPS 202 section
 * 3.2.5), rho's rotation of lane x + 5 y (section 3.2.2) and pi's
 * destination of lane x + 5 y, y + 5 ((2 x + 3 y) mod 5). */
static const uint64_t mbc_keccak_rc[24] = {
    0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808aull, 0x8000000080008000ull,
    0x000000000000808bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull,
    0x000000000000008aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000aull,
    0x000000008000808bull, 0x800000000000008bull, 0x8000000000008089ull, 0x8000000000008003ull,
    0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800aull, 0x800000008000000aull,
    0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull,
};

static const unsigned mbc_keccak_rho[25] = {
    0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14,
};

static const unsigned mbc_keccak_pi[25] = {
    0, 10, 20, 5, 15, 16, 1, 11, 21, 6, 7, 17, 2, 12, 22, 23, 8, 18, 3, 13, 14, 24, 9, 19, 4,
};

/* mbc_keccak_f1600: the permutation (24 rounds) on s, lane x + 5 y in
 * s[x + 5 y]. */
void mbc_keccak_f1600(uint64_t s[25]);

/* mbc_keccak_init: an empty sponge of rate bytes (168 SHAKE128, 136
 * SHAKE256 and SHA3-256, 72 SHA3-512). */
void mbc_keccak_init(struct mbc_keccak *k, unsigned rate);

/* mbc_keccak_absorb: absorbs len bytes of in (any number of calls). */
void mbc_keccak_absorb(struct mbc_keccak *k, const uint8_t *in, size_t len);

/* mbc_keccak_finish: pads (domain byte dom: 0x06 SHA-3, 0x1F SHAKE, then
 * the final 0x80) and permutes: the sponge is ready to squeeze. */
void mbc_keccak_finish(struct mbc_keccak *k, uint8_t dom);

/* mbc_keccak_squeeze: the next len bytes of output (any number of calls). */
void mbc_keccak_squeeze(struct mbc_keccak *k, uint8_t *out, size_t len);

/* The FIPS 202 functions, one shot. */
void mbc_sha3_256(uint8_t out[32], const uint8_t *in, size_t len);
void mbc_sha3_512(uint8_t out[64], const uint8_t *in, size_t len);
void mbc_shake128(uint8_t *out, size_t out_len, const uint8_t *in, size_t len);
void mbc_shake256(uint8_t *out, size_t out_len, const uint8_t *in, size_t len);

/*
 * mbc_hash_task: one fixed-output sponge: out = the first out_len bytes
 * (out_len <= the rate) of the sponge of the call's rate over the len bytes
 * at in, with domain byte dom (0x06 SHA-3, 0x1F SHAKE).
 * mbc_keccak_hash_c: the n tasks one by one; mbc_keccak4_hash_avx2: four
 * at a time on the 4-way permutation (a task may have fewer blocks than its
 * group's others: its output is taken after its own last block).
 */
struct mbc_hash_task {
    const uint8_t *in;
    size_t len;
    uint8_t *out;
    size_t out_len;
    uint8_t dom;
};
void mbc_keccak_hash_c(const struct mbc_hash_task *t, unsigned n, unsigned rate);

/*
 * mbc_keccak_absorb_lanes: the start of ways sponges of one rate in a
 * transposed state s (word j of sponge i at s[ways j + i], 25 ways words,
 * zeroed first): in[i] (len bytes each, len < rate) padded with dom and
 * rate's final bit, not yet permuted (the multi-way absorb calls).
 */
void mbc_keccak_absorb_lanes(uint64_t *s, unsigned ways, unsigned rate, const uint8_t *const in[],
                             size_t len, uint8_t dom);

/*
 * mbc_keccak_hash_ways: the tasks ways at a time on a multi-way kernel w
 * (keccak.c; the kernels' files give w): absorb xors block i (rate bytes
 * of it) into sponge i of the transposed state (25 ways words, zeroed
 * first) and permutes; read writes the first rate bytes of every sponge
 * into out[i]. A task may have fewer blocks than its group's others: its
 * output is read after its own last block.
 */
#define MBC_KECCAK_MAX_WAYS 8
struct mbc_keccak_ways {
    unsigned ways;
    void (*absorb)(uint64_t *state, const uint8_t (*block)[200], unsigned rate);
    void (*read)(const uint64_t *state, uint8_t (*out)[200], unsigned rate);
};
void mbc_keccak_hash_ways(const struct mbc_keccak_ways *w, const struct mbc_hash_task *t,
                          unsigned n, unsigned rate);
void mbc_keccak4_hash_avx2(const struct mbc_hash_task *t, unsigned n, unsigned rate);
void mbc_keccak4_hash_avx512(const struct mbc_hash_task *t, unsigned n, unsigned rate);

/*
 * The 4-way functions (keccak4_avx2.c, only with MBC_HAVE_AVX2; the caller
 * checks MBC_CPU_AVX2). mbc_keccak4: four sponges, sponge i in 64-bit lane
 * i of s[j] (j = x + 5 y), all of one rate.
 *  mbc_keccak4_f1600_avx2   the permutation of the four states
 *  mbc_shake4_absorb_avx2   resets k to rate and absorbs in[i] (len bytes
 *                           each, len < rate) into sponge i, padded with
 *                           dom (0x1F SHAKE): the last block, not yet
 *                           permuted
 *  mbc_shake4_squeeze_avx2  nblocks whole blocks of each sponge into
 *                           out[i] (nblocks * rate bytes each), each block
 *                           one permutation and then its bytes; more
 *                           calls continue the output
 */
struct mbc_keccak4 {
    uint64_t s[25][4];
    unsigned rate;
};
void mbc_keccak4_f1600_avx2(uint64_t s[25][4]);
void mbc_shake4_absorb_avx2(struct mbc_keccak4 *k, unsigned rate, const uint8_t *const in[4],
                            size_t len, uint8_t dom);
void mbc_shake4_squeeze_avx2(struct mbc_keccak4 *k, uint8_t *const out[4], size_t nblocks);
/* The same on AVX-512VL instructions (keccak4_avx2.c built with
 * MBC_AVX512=1; only with MBC_HAVE_AVX512, on CPUs with AVX512F and VL). */
void mbc_keccak4_f1600_avx512(uint64_t s[25][4]);
void mbc_shake4_absorb_avx512(struct mbc_keccak4 *k, unsigned rate, const uint8_t *const in[4],
                              size_t len, uint8_t dom);
void mbc_shake4_squeeze_avx512(struct mbc_keccak4 *k, uint8_t *const out[4], size_t nblocks);

/*
 * The 8-way functions (keccak8_avx512.c, only with MBC_HAVE_AVX512; the
 * caller checks MBC_CPU_AVX512F and VL): eight sponges, sponge i in 64-bit
 * lane i of s[j], one zmm register per state word; the same contracts as
 * the 4-way functions above. mbc_keccak8_hash_avx512 hashes groups of
 * eight, and a last group of four or fewer on the 4-way kernel.
 */
struct mbc_keccak8 {
    uint64_t s[25][8];
    unsigned rate;
};
void mbc_keccak8_f1600_avx512(uint64_t s[25][8]);
void mbc_shake8_absorb_avx512(struct mbc_keccak8 *k, unsigned rate, const uint8_t *const in[8],
                              size_t len, uint8_t dom);
void mbc_shake8_squeeze_avx512(struct mbc_keccak8 *k, uint8_t *const out[8], size_t nblocks);
void mbc_keccak8_hash_avx512(const struct mbc_hash_task *t, unsigned n, unsigned rate);

#endif /* MBC_SRC_HASH_KECCAK_H */
