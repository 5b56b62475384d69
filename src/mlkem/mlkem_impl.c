/*
 * mlkem_impl.c - the ML-KEM implementations, their selection, and the
 * portable hashing kernels (one SHAKE stream at a time).
 */
#include <string.h>

#include "../hash/keccak.h"
#include "mlkem_internal.h"

void mbc_mlkem_sample_ntt_c(int16_t *const out[], const uint8_t (*seed)[34], unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint8_t buf[MLKEM_SAMPLE_BLOCKS * MBC_SHAKE128_RATE];
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

/*
 * The lane engine of mbc_mlkem_sample_mixed: the impl's permutation of
 * ways states (transposed: word j of lane i at s[ways j + i]), each lane
 * one sponge at a time. A hash task's blocks are xored into its lane one a
 * permutation, its output read after its last; a matrix entry absorbs its
 * seed in one block, then collects MLKEM_SAMPLE_BLOCKS squeezed blocks before
 * its first rejection pass and one block a pass after (the stream cut at
 * block edges, which hold whole 3-byte groups, gives mbc_mlkem_rej's
 * values). A lane that finishes takes the next task, else the next entry.
 * Only lengths and the entries' public streams decide the flow.
 */
enum { LANE_IDLE, LANE_TASK, LANE_ENTRY };
struct mixed_lane {
    unsigned kind, idx, got, done;
    size_t blk, nblk;
};

/* lane_word: word j of lane i of the ways states at s. */
#define LANE_WORD(s, ways, i, j) ((s)[(size_t)(ways) * (j) + (i)])

/* task_block: block l->blk of task t's padded input xored into lane i:
 * whole words from the input, the last partial block through a padded
 * copy. */
static void task_block(uint64_t *s, unsigned ways, unsigned i, unsigned rate,
                       const struct mbc_hash_task *t, const struct mixed_lane *l)
{
    const size_t off = l->blk * rate;
    const uint8_t *in = t->in + off;
    if (l->blk + 1 < l->nblk) {
        for (unsigned j = 0; j < rate / 8; j++) {
            uint64_t w;
            memcpy(&w, in + 8 * j, 8);
            LANE_WORD(s, ways, i, j) ^= w;
        }
        return;
    }
    uint8_t block[200] = {0};
    const size_t take = t->len - off;
    memcpy(block, in, take);
    block[take] ^= t->dom;
    block[rate - 1] ^= 0x80;
    for (unsigned j = 0; j < rate / 8; j++) {
        uint64_t w;
        memcpy(&w, block + 8 * j, 8);
        LANE_WORD(s, ways, i, j) ^= w;
    }
    mbc_memzero(block, sizeof(block));
}

/* lane_start: lane i's next sponge, zeroed and given its first block:
 * task *nt (tasks rate bytes a block), else entry *ne (its 34-byte seed,
 * SHAKE128's padding), else idle. */
static void lane_start(uint64_t *s, unsigned ways, unsigned i, unsigned rate, struct mixed_lane *l,
                       const struct mbc_hash_task *t, unsigned n, unsigned *nt,
                       const uint8_t (*seed)[34], unsigned m, unsigned *ne)
{
    for (unsigned j = 0; j < 25; j++) {
        LANE_WORD(s, ways, i, j) = 0;
    }
    *l = (struct mixed_lane){LANE_IDLE, 0, 0, 0, 0, 0};
    if (*nt < n) {
        l->kind = LANE_TASK;
        l->idx = (*nt)++;
        l->nblk = 1;
        for (size_t rem = t[l->idx].len; rem >= rate; rem -= rate) {
            l->nblk++; /* len / rate + 1, without division */
        }
        task_block(s, ways, i, rate, &t[l->idx], l);
    } else if (*ne < m) {
        l->kind = LANE_ENTRY;
        l->idx = (*ne)++;
        const uint8_t *sd = seed[l->idx];
        for (unsigned j = 0; j < 4; j++) {
            memcpy(&LANE_WORD(s, ways, i, j), sd + 8 * j, 8);
        }
        LANE_WORD(s, ways, i, 4) = (uint64_t)sd[32] | (uint64_t)sd[33] << 8 | 0x1Full << 16;
        LANE_WORD(s, ways, i, MBC_SHAKE128_RATE / 8 - 1) = 0x80ull << 56;
    }
}

void mbc_mlkem_sample_mixed(const struct mbc_mlkem_impl *impl, const struct mbc_hash_task *t,
                            unsigned n, unsigned rate, int16_t *const out[],
                            const uint8_t (*seed)[34], unsigned m)
{
    MBC_ALIGN64 uint64_t s[25 * MLKEM_MAX_WAYS];
    uint8_t buf[MLKEM_MAX_WAYS][MLKEM_SAMPLE_BLOCKS * MBC_SHAKE128_RATE];
    struct mixed_lane lane[MLKEM_MAX_WAYS];
    const unsigned ways = impl->ways;
    unsigned nt = 0, ne = 0, busy = 0;
    for (unsigned i = 0; i < ways; i++) {
        lane_start(s, ways, i, rate, &lane[i], t, n, &nt, seed, m, &ne);
        busy += lane[i].kind != LANE_IDLE;
    }
    while (busy != 0) {
        impl->permute(s);
        busy = 0;
        for (unsigned i = 0; i < ways; i++) {
            struct mixed_lane *l = &lane[i];
            int fin = 0;
            if (l->kind == LANE_TASK) {
                if (++l->blk == l->nblk) {
                    uint64_t o[25];
                    for (size_t j = 0; j < (t[l->idx].out_len + 7) / 8; j++) {
                        o[j] = LANE_WORD(s, ways, i, j);
                    }
                    memcpy(t[l->idx].out, o, t[l->idx].out_len);
                    mbc_memzero(o, sizeof(o));
                    fin = 1;
                } else {
                    task_block(s, ways, i, rate, &t[l->idx], l);
                }
            } else if (l->kind == LANE_ENTRY) {
                uint8_t *b = buf[i] + l->got;
                for (unsigned j = 0; j < MBC_SHAKE128_RATE / 8; j++) {
                    memcpy(b + 8 * j, &LANE_WORD(s, ways, i, j), 8);
                }
                l->got += MBC_SHAKE128_RATE;
                if (l->got == sizeof(buf[i]) || l->done != 0) {
                    l->done = impl->rej(out[l->idx], l->done, buf[i], l->got);
                    l->got = 0;
                    fin = l->done == MLKEM_N;
                }
            }
            if (fin) {
                lane_start(s, ways, i, rate, l, t, n, &nt, seed, m, &ne);
            }
            busy += l->kind != LANE_IDLE;
        }
    }
    mbc_memzero(s, sizeof(s));
}

#if MBC_HAVE_AVX2
static void permute4(uint64_t *s)
{
    mbc_keccak4_f1600_avx2((uint64_t(*)[4])s);
}
#endif
#if MBC_HAVE_AVX512
static void permute8(uint64_t *s)
{
    mbc_keccak8_f1600_avx512((uint64_t(*)[8])s);
}
#endif

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
    .ways = 1,
    .permute = mbc_keccak_f1600,
    .rej = mbc_mlkem_rej,
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
    .ways = 4,
    .permute = permute4,
    .rej = mbc_mlkem_rej_avx2,
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
    .ways = 8,
    .permute = permute8,
    .rej = mbc_mlkem_rej_avx512,
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
