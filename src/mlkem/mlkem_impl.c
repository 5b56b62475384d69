/*
 * mlkem_impl.c - the ML-KEM implementations, their selection, and the
 * portable hashing kernels (one SHAKE stream at a time).
 */
#include "../hash/keccak.h"
#include "mlkem_internal.h"

/* SAMPLE_BLOCKS: the SHAKE128 blocks squeezed before the first rejection
 * pass: 504 bytes give 336 candidates, of which 256 pass (each with
 * probability q / 4096) almost always; more blocks follow when not. */
#define SAMPLE_BLOCKS 3

void mbc_mlkem_sample_ntt_c(int16_t *const out[], const uint8_t (*seed)[34], unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint8_t buf[SAMPLE_BLOCKS * MBC_SHAKE128_RATE];
        struct mbc_keccak k;
        mbc_keccak_init(&k, MBC_SHAKE128_RATE);
        mbc_keccak_absorb(&k, seed[i], 34);
        mbc_keccak_finish(&k, 0x1F);
        mbc_keccak_squeeze(&k, buf, sizeof(buf));
        unsigned done = mbc_mlkem_rej(out[i], 0, buf, sizeof(buf));
        while (done < MLKEM_N) {
            mbc_keccak_squeeze(&k, buf, MBC_SHAKE128_RATE);
            done = mbc_mlkem_rej(out[i], done, buf, MBC_SHAKE128_RATE);
        }
    }
}

void mbc_mlkem_sample_cbd_c(int16_t *const out[], const uint8_t (*seed)[33], unsigned n,
                            unsigned eta)
{
    uint8_t buf[64 * 3];
    for (unsigned i = 0; i < n; i++) {
        mbc_shake256(buf, 64 * eta, seed[i], 33);
        mbc_mlkem_cbd(out[i], buf, eta);
    }
    mbc_memzero(buf, sizeof(buf));
}

/* MLKEM_FAST_OPS: what the vector tiers were measured to run faster than
 * OpenSSL 3.5 (README: 8-lane calls 3.4x to 11x, single calls 2.8x to
 * 4.9x, every operation). The portable tier claims none (its encaps and
 * decaps measured 0.7x to 0.9x). */
#define MLKEM_FAST_OPS                                                                             \
    (1u << MBC_OP_MLKEM768_KEYGEN | 1u << MBC_OP_MLKEM768_KEYGEN_SEED |                            \
     1u << MBC_OP_MLKEM768_ENCAPS | 1u << MBC_OP_MLKEM768_DECAPS)

/* The portable implementation: every CPU. */
const struct mbc_mlkem_impl mbc_mlkem_impl_c = {
    .base = {.info = {.name = "c", .tier = MBC_TIER_PORTABLE, .lanes = MBC_LANES, .fast_ops = 0},
             .needs = 0},
    .sample_ntt = mbc_mlkem_sample_ntt_c,
    .sample_cbd = mbc_mlkem_sample_cbd_c,
    .hash = mbc_keccak_hash_c,
    .ntt = mbc_mlkem_ntt,
    .invntt = mbc_mlkem_invntt,
    .basemul_acc = mbc_mlkem_basemul_acc,
    .compress_encode = mbc_mlkem_compress_encode,
    .reduce = mbc_mlkem_reduce,
    .tomont = mbc_mlkem_tomont,
    .encode12 = mbc_mlkem_encode12,
    .decode12 = mbc_mlkem_decode12,
    .decode_decompress = mbc_mlkem_decode_decompress,
};

#if MBC_HAVE_AVX2
/* AVX2: the matrix entries and the noise of every request of a batch four
 * streams at a time on the 4-way Keccak (a lone one on the portable
 * permutation), the NTTs, base multiplications, reductions and byte codings
 * on 16 coefficients at a time (mlkem_avx2.c). */
static const struct mbc_mlkem_impl mlkem_avx2 = {
    .base = {.info = {.name = "avx2",
                      .tier = MBC_TIER_VECTOR,
                      .lanes = MBC_LANES,
                      .fast_ops = MLKEM_FAST_OPS},
             .needs = MBC_CPU_AVX2},
    .sample_ntt = mbc_mlkem_sample_ntt_avx2,
    .sample_cbd = mbc_mlkem_sample_cbd_avx2,
    .hash = mbc_keccak4_hash_avx2,
    .ntt = mbc_mlkem_ntt_avx2,
    .invntt = mbc_mlkem_invntt_avx2,
    .basemul_acc = mbc_mlkem_basemul_acc_avx2,
    .compress_encode = mbc_mlkem_compress_encode_avx2,
    .reduce = mbc_mlkem_reduce_avx2,
    .tomont = mbc_mlkem_tomont_avx2,
    .encode12 = mbc_mlkem_encode12_avx2,
    .decode12 = mbc_mlkem_decode12_avx2,
    .decode_decompress = mbc_mlkem_decode_decompress_avx2,
};
#endif

#if MBC_HAVE_AVX512
/* AVX-512 (F, VL): the AVX2 tier's arithmetic, with the 8-way zmm Keccak
 * (keccak8_avx512.c) for groups of more than four streams and the 4-way one
 * on vprolq and vpternlogq (ymm) for the others; Zen 4, which splits zmm
 * operations, runs the 8-way one at the 4-way one's rate per state. */
static const struct mbc_mlkem_impl mlkem_avx512 = {
    .base = {.info = {.name = "avx512",
                      .tier = MBC_TIER_VECTOR,
                      .lanes = MBC_LANES,
                      .fast_ops = MLKEM_FAST_OPS},
             .needs = MBC_CPU_AVX2 | MBC_CPU_AVX512F | MBC_CPU_AVX512VL},
    .sample_ntt = mbc_mlkem_sample_ntt_avx512,
    .sample_cbd = mbc_mlkem_sample_cbd_avx512,
    .hash = mbc_keccak8_hash_avx512,
    .ntt = mbc_mlkem_ntt_avx512,
    .invntt = mbc_mlkem_invntt_avx512,
    .basemul_acc = mbc_mlkem_basemul_acc_avx512,
    .compress_encode = mbc_mlkem_compress_encode_avx512,
    .reduce = mbc_mlkem_reduce_avx512,
    .tomont = mbc_mlkem_tomont_avx512,
    .encode12 = mbc_mlkem_encode12_avx512,
    .decode12 = mbc_mlkem_decode12_avx512,
    .decode_decompress = mbc_mlkem_decode_decompress_avx512,
};
#endif

/* The implementations, fastest first. */
static const struct mbc_mlkem_impl *const mlkem_impls[] = {
#if MBC_HAVE_AVX512
    &mlkem_avx512,
#endif
#if MBC_HAVE_AVX2
    &mlkem_avx2,
#endif
    &mbc_mlkem_impl_c,
};
MBC_IMPL_TABLE(mbc_mlkem_impl_table, mlkem_impls);

const struct mbc_mlkem_impl *mbc_mlkem_impl_for(uint64_t features)
{
    return mbc_impl_pick(&mbc_mlkem_impl_table, features);
}
