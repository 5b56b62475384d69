/*
 * mlkem_avx2.c - the AVX2 hashing kernels of ML-KEM: SampleNTT and the
 * noise PRF four streams at a time on the 4-way Keccak (keccak4_avx2.c).
 * A last group of fewer than four streams hashes copies of its first
 * stream in the idle slots, into scratch. Compiled with -mavx2 (this object
 * only); selected only when the CPU has MBC_CPU_AVX2.
 */
#include <string.h>

#include "../hash/keccak.h"
#include "mlkem_internal.h"

#define SAMPLE_BLOCKS 3

void mbc_mlkem_sample_ntt_avx2(int16_t *const out[], const uint8_t (*seed)[34], unsigned n)
{
    uint8_t buf[4][SAMPLE_BLOCKS * MBC_SHAKE128_RATE];
    int16_t spare[MLKEM_N];
    uint8_t *bp[4] = {buf[0], buf[1], buf[2], buf[3]};
    for (unsigned g = 0; g < n; g += 4) {
        const uint8_t *in[4];
        int16_t *dst[4];
        for (unsigned i = 0; i < 4; i++) {
            const int live = g + i < n;
            in[i] = seed[live ? g + i : g];
            dst[i] = live ? out[g + i] : spare;
        }
        struct mbc_keccak4 k;
        mbc_shake4_absorb_avx2(&k, MBC_SHAKE128_RATE, in, 34, 0x1F);
        mbc_shake4_squeeze_avx2(&k, bp, SAMPLE_BLOCKS);
        unsigned done[4], all = 1;
        for (unsigned i = 0; i < 4; i++) {
            done[i] = mbc_mlkem_rej(dst[i], 0, buf[i], sizeof(buf[i]));
            all &= done[i] == MLKEM_N;
        }
        while (!all) {
            mbc_shake4_squeeze_avx2(&k, bp, 1);
            all = 1;
            for (unsigned i = 0; i < 4; i++) {
                done[i] = mbc_mlkem_rej(dst[i], done[i], buf[i], MBC_SHAKE128_RATE);
                all &= done[i] == MLKEM_N;
            }
        }
    }
}

void mbc_mlkem_sample_cbd_avx2(int16_t *const out[], const uint8_t (*seed)[33], unsigned n,
                               unsigned eta)
{
    /* 64 eta bytes: one block of SHAKE256 for eta 2, two for eta 3 */
    uint8_t buf[4][2 * MBC_SHAKE256_RATE];
    int16_t spare[MLKEM_N];
    uint8_t *bp[4] = {buf[0], buf[1], buf[2], buf[3]};
    const size_t blocks = (64 * eta + MBC_SHAKE256_RATE - 1) / MBC_SHAKE256_RATE;
    for (unsigned g = 0; g < n; g += 4) {
        const uint8_t *in[4];
        for (unsigned i = 0; i < 4; i++) {
            in[i] = seed[g + i < n ? g + i : g];
        }
        struct mbc_keccak4 k;
        mbc_shake4_absorb_avx2(&k, MBC_SHAKE256_RATE, in, 33, 0x1F);
        mbc_shake4_squeeze_avx2(&k, bp, blocks);
        mbc_memzero(&k, sizeof(k));
        for (unsigned i = 0; i < 4; i++) {
            mbc_mlkem_cbd(g + i < n ? out[g + i] : spare, buf[i], eta);
        }
    }
    mbc_memzero(buf, sizeof(buf));
    mbc_memzero(spare, sizeof(spare));
}
