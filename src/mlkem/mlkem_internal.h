/*
 * mlkem_internal.h - ML-KEM (FIPS 203) inside the library: the parameter
 * sets, the polynomial arithmetic (poly.c, portable C), the hashing
 * kernels each implementation supplies (struct mbc_mlkem_impl) and the
 * batch algorithms (mlkem.c) on which every call runs.
 *
 * Polynomials are int16_t[256]. Arithmetic is mod q = 3329 with Montgomery
 * (R = 2^16) and Barrett reductions made of multiplications and shifts:
 * nothing divides by q (the KyberSlash timing leak), nothing branches on or
 * indexes by a secret coefficient. Only the public sampling of the matrix
 * (rejection on rho's stream) has a data-dependent loop.
 */
#ifndef MBC_SRC_MLKEM_MLKEM_INTERNAL_H
#define MBC_SRC_MLKEM_MLKEM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../hash/keccak.h"
#include "../impl.h"
#include "../internal.h"

#define MLKEM_N 256
#define MLKEM_Q 3329
#define MLKEM_MAXK 4
/* MLKEM_SAMPLE_BLOCKS: the SHAKE128 blocks squeezed for a matrix entry
 * before the first rejection pass: 504 bytes give 336 candidates, of which
 * 256 pass (each with probability q / 4096) almost always; more blocks
 * follow when not. */
#define MLKEM_SAMPLE_BLOCKS 3
/* MLKEM_MAT_PRE: at most this many matrix entries sampled beside a call's
 * long hash tasks (mlkem.c's mat_prefill; a lone ML-KEM-1024 request's 16),
 * kept on the stack until the vector they multiply is known. */
#define MLKEM_MAT_PRE 16

/* mlkem_params: one parameter set (FIPS 203 table 2) and its sizes. */
struct mlkem_params {
    unsigned k, eta1, eta2, du, dv;
    size_t ek_len, dk_len, ct_len;
};

/* mbc_mlkem_params: the set of param (2, 3 or 4: ML-KEM-512, -768,
 * -1024), NULL for any other value. */
const struct mlkem_params *mbc_mlkem_params(unsigned param);

/* ---- poly.c: the arithmetic (bounds in absolute value) ---------------- */

/* mbc_mlkem_zetas: 17^brv7(i) R mod q, centred (tools/gen_mlkem_zetas.py). */
extern const int16_t mbc_mlkem_zetas[128];

/* NTT (FIPS 203 algorithm 9) in place: input |a| < 2^12 (after decoding,
 * before any reduction: 4095 is the largest value a decoded byte string
 * gives), output |a| < q (reduced). */
void mbc_mlkem_ntt(int16_t a[MLKEM_N]);
/* inverse NTT (algorithm 10) times R: input |a| < 2^14 (a sum of
 * basemul_acc products after mbc_mlkem_reduce), output |a| < q. With
 * basemul's factor R^-1 the two cancel. */
void mbc_mlkem_invntt(int16_t a[MLKEM_N]);
/* r += a * b in the NTT domain (algorithm 11), times R^-1: each call adds
 * less than 2q in absolute value to each coefficient of r; inputs |a|,
 * |b| < 2^12. */
void mbc_mlkem_basemul_acc(int16_t r[MLKEM_N], const int16_t a[MLKEM_N], const int16_t b[MLKEM_N]);
/* a = a * R mod q (|a| < q out), for the keygen sum whose basemul left
 * R^-1. */
void mbc_mlkem_tomont(int16_t a[MLKEM_N]);
/* a reduced to |a| < q (Barrett); input any int16. */
void mbc_mlkem_reduce(int16_t a[MLKEM_N]);
/* r = a + b (no reduction). */
void mbc_mlkem_add(int16_t r[MLKEM_N], const int16_t a[MLKEM_N], const int16_t b[MLKEM_N]);
/* r = a - b (no reduction). */
void mbc_mlkem_sub(int16_t r[MLKEM_N], const int16_t a[MLKEM_N], const int16_t b[MLKEM_N]);

/* ByteEncode_12 of a (any |a| < q: mapped to [0, q) first), 384 bytes. */
void mbc_mlkem_encode12(uint8_t out[384], const int16_t a[MLKEM_N]);
/* ByteDecode_12: 384 bytes into a (values 0..4095); returns 1 when every
 * value is below q (the encapsulation-key modulus check), 0 otherwise, in
 * time independent of the values. */
int mbc_mlkem_decode12(int16_t a[MLKEM_N], const uint8_t in[384]);
/* Compress_d then ByteEncode_d of a (any int16: reduced first), 32 d
 * bytes. */
void mbc_mlkem_compress_encode(uint8_t *out, const int16_t a[MLKEM_N], unsigned d);
/* ByteEncode_d of 256 values of d bits (d in 1, 4, 5, 10, 11, 12). */
void mbc_mlkem_pack(uint8_t *out, const uint16_t v[MLKEM_N], unsigned d);
/* ByteDecode_d then Decompress_d, 32 d bytes into a (values in [0, q)). */
void mbc_mlkem_decode_decompress(int16_t a[MLKEM_N], const uint8_t *in, unsigned d);
/* the compression of one coefficient x in [0, q) to d bits (for tests). */
uint16_t mbc_mlkem_compress1(uint16_t x, unsigned d);

/* SamplePolyCBD_eta (algorithm 8): 64 eta bytes into a (|a| <= eta). */
void mbc_mlkem_cbd(int16_t a[MLKEM_N], const uint8_t *buf, unsigned eta);
/* SampleNTT's rejection (algorithm 7) on len bytes of a SHAKE128 stream:
 * fills a[done..] from buf, returns the new count (at most 256). Public
 * data only. */
unsigned mbc_mlkem_rej(int16_t a[MLKEM_N], unsigned done, const uint8_t *buf, size_t len);

/* ---- the implementations' kernels -------------------------------------- */

/*
 * mbc_mlkem_impl: one ML-KEM implementation, as dispatch selects it.
 *  sample_ntt   out[i] = SampleNTT(seed[i]) for i < n (seed: rho || j || i,
 *               34 bytes; FIPS 203 algorithm 7): the matrix entries
 *  sample_cbd   out[i] = SamplePolyCBD_eta(PRF_eta(seed[i])) for i < n
 *               (seed: sigma || N, 33 bytes; SHAKE256, 64 eta bytes)
 * Both take any n; a vector implementation hashes several streams side by
 * side, so the batch code hands them every stream of every request at
 * once.
 */
struct mbc_mlkem_impl {
    struct mbc_impl_base base;
    void (*sample_ntt)(int16_t *const out[], const uint8_t (*seed)[34], unsigned n);
    void (*sample_cbd)(int16_t *const out[], const uint8_t (*seed)[33], unsigned n, unsigned eta);
    /* n fixed-output hashes of one rate (keccak.h): H, J, G of every
     * request of a batch together */
    void (*hash)(const struct mbc_hash_task *t, unsigned n, unsigned rate);
    /* the NTT, its inverse and the base multiplication, with poly.c's
     * contracts and bit for bit its results */
    void (*ntt)(int16_t a[MLKEM_N]);
    void (*invntt)(int16_t a[MLKEM_N]);
    void (*basemul_acc)(int16_t r[MLKEM_N], const int16_t a[MLKEM_N], const int16_t b[MLKEM_N]);
    /* Compress_d then ByteEncode_d, mbc_mlkem_compress_encode's bytes */
    void (*compress_encode)(uint8_t *out, const int16_t a[MLKEM_N], unsigned d);
    /* poly.c's coefficient passes and byte codings, with its contracts
     * and bit for bit its results */
    void (*reduce)(int16_t a[MLKEM_N]);
    void (*tomont)(int16_t a[MLKEM_N]);
    void (*encode12)(uint8_t out[384], const int16_t a[MLKEM_N]);
    int (*decode12)(int16_t a[MLKEM_N], const uint8_t in[384]);
    void (*decode_decompress)(int16_t a[MLKEM_N], const uint8_t *in, unsigned d);
    /* mbc_mlkem_sample_mixed's lanes: the Keccak-f[1600] of ways states
     * side by side (word j of state i at s[ways j + i]; ways <=
     * MLKEM_MAX_WAYS) and the rejection pass (mbc_mlkem_rej's results) */
    unsigned ways;
    void (*permute)(uint64_t *s);
    unsigned (*rej)(int16_t a[MLKEM_N], unsigned done, const uint8_t *buf, size_t len);
};

#define MLKEM_MAX_WAYS 8

/*
 * mbc_mlkem_sample_mixed: the n hash tasks t (keccak.h's; one rate) and the
 * m matrix entries out[i] = SampleNTT(seed[i]) together, on impl's
 * permutation, a sponge a lane: a lane whose sponge is done takes the next
 * task, then the next entry. So entries run in the lanes that long tasks
 * (H(ek), J(z || c): 9 blocks each) leave idle, and no lane waits for the
 * slowest entry of its group. The tasks may be secret; the entries'
 * streams (public) decide the number of permutations.
 */
void mbc_mlkem_sample_mixed(const struct mbc_mlkem_impl *impl, const struct mbc_hash_task *t,
                            unsigned n, unsigned rate, int16_t *const out[],
                            const uint8_t (*seed)[34], unsigned m);

extern const struct mbc_mlkem_impl mbc_mlkem_impl_c;
extern const struct mbc_impl_table mbc_mlkem_impl_table;
const struct mbc_mlkem_impl *mbc_mlkem_impl_for(uint64_t features);

/* The portable kernels (mlkem_impl.c), one stream at a time. */
void mbc_mlkem_sample_ntt_c(int16_t *const out[], const uint8_t (*seed)[34], unsigned n);
void mbc_mlkem_sample_cbd_c(int16_t *const out[], const uint8_t (*seed)[33], unsigned n,
                            unsigned eta);
/* The AVX2 kernels (mlkem_avx2.c): several streams at a time on a
 * multi-way Keccak (4-way; a lone stream on the portable one); a group with
 * idle slots runs with repeated inputs. */
void mbc_mlkem_sample_ntt_avx2(int16_t *const out[], const uint8_t (*seed)[34], unsigned n);
void mbc_mlkem_sample_cbd_avx2(int16_t *const out[], const uint8_t (*seed)[33], unsigned n,
                               unsigned eta);
/* mbc_mlkem_rej on AVX2, 16 candidates at a time (same results). */
unsigned mbc_mlkem_rej_avx2(int16_t a[MLKEM_N], unsigned done, const uint8_t *buf, size_t len);
unsigned mbc_mlkem_rej_avx512(int16_t a[MLKEM_N], unsigned done, const uint8_t *buf, size_t len);
/* The AVX2 polynomial kernels (mlkem_avx2.c): poly.c's operations, the same
 * multiplications and reductions on 16 coefficients at a time. */
void mbc_mlkem_ntt_avx2(int16_t a[MLKEM_N]);
void mbc_mlkem_invntt_avx2(int16_t a[MLKEM_N]);
void mbc_mlkem_basemul_acc_avx2(int16_t r[MLKEM_N], const int16_t a[MLKEM_N],
                                const int16_t b[MLKEM_N]);
/* The same kernels on the AVX-512 Keccaks, 8-way for more than four
 * streams, else the 4-way AVX-512VL one (mlkem_avx2.c built again with
 * MBC_AVX512=1). */
void mbc_mlkem_sample_ntt_avx512(int16_t *const out[], const uint8_t (*seed)[34], unsigned n);
void mbc_mlkem_sample_cbd_avx512(int16_t *const out[], const uint8_t (*seed)[33], unsigned n,
                                 unsigned eta);
void mbc_mlkem_ntt_avx512(int16_t a[MLKEM_N]);
void mbc_mlkem_invntt_avx512(int16_t a[MLKEM_N]);
void mbc_mlkem_basemul_acc_avx512(int16_t r[MLKEM_N], const int16_t a[MLKEM_N],
                                  const int16_t b[MLKEM_N]);
void mbc_mlkem_compress_encode_avx2(uint8_t *out, const int16_t a[MLKEM_N], unsigned d);
void mbc_mlkem_compress_encode_avx512(uint8_t *out, const int16_t a[MLKEM_N], unsigned d);
/* poly.c's coefficient passes and byte codings on 16 coefficients at a
 * time (mlkem_avx2.c; d 10, 4 and 1 vectorised, the others poly.c's). */
#define MLKEM_VEC_POLY_DECL(sfx)                                                                   \
    void mbc_mlkem_reduce_##sfx(int16_t a[MLKEM_N]);                                               \
    void mbc_mlkem_tomont_##sfx(int16_t a[MLKEM_N]);                                               \
    void mbc_mlkem_encode12_##sfx(uint8_t out[384], const int16_t a[MLKEM_N]);                     \
    int mbc_mlkem_decode12_##sfx(int16_t a[MLKEM_N], const uint8_t in[384]);                       \
    void mbc_mlkem_decode_decompress_##sfx(int16_t a[MLKEM_N], const uint8_t *in, unsigned d);
MLKEM_VEC_POLY_DECL(avx2)
MLKEM_VEC_POLY_DECL(avx512)

/* ---- mlkem.c: the batch algorithms ------------------------------------- */

/* The requests of one batch call (n <= MBC_LANES, all of parameter set p),
 * slot s in index s. Outputs of slots whose verdict is not OK are
 * overwritten by the caller (zeroed). */
struct mlkem_keygen_req {
    const uint8_t *seed; /* d || z, 64 bytes */
    uint8_t *ek, *dk;
};
struct mlkem_encaps_req {
    const uint8_t *ek; /* public; checked (modulus) */
    const uint8_t *m;  /* 32 bytes */
    uint8_t *ct, *ss;
};
struct mlkem_decaps_req {
    const uint8_t *ct, *dk; /* dk checked (hash of its ek) */
    uint8_t *ss;
};

/* mlkem_state: the per-request work memory of the batch algorithms (a
 * variable-length array of n on the caller's stack: its size, like n,
 * is public). */
struct mlkem_state {
    int16_t a[MLKEM_MAXK][MLKEM_N];
    int16_t b[MLKEM_MAXK][MLKEM_N];
    int16_t c[MLKEM_N];
    int16_t d[MLKEM_N];
    int16_t e[MLKEM_MAXK + 1][MLKEM_N]; /* the noise: keygen's e, encryption's e1, e2 */
    uint8_t rk[64];                     /* (K, r) = G(m || H(ek)), or (rho, sigma) */
    uint8_t m[32];                      /* the message, or keygen's z */
    uint8_t h[32];                      /* H(ek) */
    uint8_t rho[32];                    /* the matrix seed */
    uint8_t ct[32 + 1568];              /* decaps: z || c for J, then the re-encryption */
    uint8_t in[64];                     /* the input of G */
};

/* MLKEM_WIPE_BASE, MLKEM_WIPE_PER_REQ: the stack scrub of a call of n
 * requests (mlkem_api.c; tests/test_wipe.c checks it), MLKEM_WIPE_BASE + n
 * MLKEM_WIPE_PER_REQ bytes: the work's frames (the matrix chunk, the
 * entries sampled beside the hash tasks, the seeds, the hashing kernels'
 * buffers) and its per-request states (a variable-length array of n),
 * with a margin. */
#define MLKEM_WIPE_BASE (16384 + MLKEM_MAT_PRE * MLKEM_N * sizeof(int16_t))
#define MLKEM_WIPE_PER_REQ (2 * sizeof(struct mlkem_state))

/* mbc_mlkem_keygen_batch: the key pairs of the n seeds (FIPS 203
 * algorithms 16 and 13). */
void mbc_mlkem_keygen_batch(const struct mbc_mlkem_impl *impl, const struct mlkem_params *p,
                            const struct mlkem_keygen_req *req, unsigned n, struct mlkem_state *st);
/* mbc_mlkem_encaps_batch: ct and ss for each request (algorithms 17 and
 * 14); returns the slots whose ek passed the modulus check (the others'
 * outputs are garbage for the caller to zero). */
unsigned mbc_mlkem_encaps_batch(const struct mbc_mlkem_impl *impl, const struct mlkem_params *p,
                                const struct mlkem_encaps_req *req, unsigned n,
                                struct mlkem_state *st);
/* mbc_mlkem_decaps_batch: ss for each request (algorithms 18 and 15, with
 * implicit rejection); returns the slots whose dk passed the hash check. */
unsigned mbc_mlkem_decaps_batch(const struct mbc_mlkem_impl *impl, const struct mlkem_params *p,
                                const struct mlkem_decaps_req *req, unsigned n,
                                struct mlkem_state *st);

#endif /* MBC_SRC_MLKEM_MLKEM_INTERNAL_H */
