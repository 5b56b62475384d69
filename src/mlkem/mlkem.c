/*
 * mlkem.c - ML-KEM (FIPS 203) key generation, encapsulation and
 * decapsulation over a batch of requests of one parameter set. Every
 * hashing step gathers the streams of all requests of the batch and hands
 * them to the implementation's kernel at once (struct mbc_mlkem_impl), so
 * a multi-way Keccak sees full groups; the polynomial arithmetic is the
 * implementation's, with poly.c's contracts and bits.
 * Baseline x86-64 code. Requests never mix: each has its own state, and a
 * request with a bad key is computed like the others, its verdict given
 * back for the caller to act on.
 */
#include <string.h>

#include "../ct.h"
#include "../hash/keccak.h"
#include "mlkem_internal.h"

static const struct mlkem_params params[3] = {
    {2, 3, 2, 10, 4, 800, 1632, 768},
    {3, 2, 2, 10, 4, 1184, 2400, 1088},
    {4, 2, 2, 11, 5, 1568, 3168, 1568},
};

const struct mlkem_params *mbc_mlkem_params(unsigned param)
{
    return param >= 2 && param <= 4 ? &params[param - 2] : NULL;
}

/* MAT_CHUNK: the matrix entries sampled at a time (a group of the 8-way
 * kernel, two of the 4-way one); the entries are public. */
#define MAT_CHUNK 8
#define MAT_PRE MLKEM_MAT_PRE

/* mat_pos: the next matrix entry, in the order (s, i, j): request s, and
 * A_s[i][j] (transposed: A_s[j][i]) for the row acc_s[i] and the vector
 * entry v_s[j]; counted without division (the scan of the built objects
 * allows no div instruction). */
struct mat_pos {
    unsigned s, i, j;
};

/* mat_next: the entry at *pos (its seed into seed when not NULL, its s, i,
 * j into who), then *pos moves on. */
static void mat_next(const struct mlkem_state *st, unsigned k, int transpose, struct mat_pos *pos,
                     uint8_t *seed, unsigned who[3])
{
    if (seed != NULL) {
        memcpy(seed, st[pos->s].rho, 32);
        /* A[i][j] = SampleNTT(rho || j || i); the transpose's [i][j] is
         * A[j][i] */
        seed[32] = (uint8_t)(transpose ? pos->i : pos->j);
        seed[33] = (uint8_t)(transpose ? pos->j : pos->i);
    }
    who[0] = pos->s;
    who[1] = pos->i;
    who[2] = pos->j;
    if (++pos->j == k) {
        pos->j = 0;
        if (++pos->i == k) {
            pos->i = 0;
            pos->s++;
        }
    }
}

/*
 * mat_prefill: the nt hash tasks t (of one rate) of a call of n requests,
 * with the first matrix entries (order of mat_pos) in the lanes those
 * tasks leave idle (mbc_mlkem_sample_mixed), into pre; returns how many
 * entries: as many as MLKEM_SAMPLE_BLOCKS-permutation entries fit beside the
 * tasks' blocks on impl->ways lanes (none when the tasks fill them), at
 * most MAT_PRE. The rho of every request must be in its state.
 */
static unsigned mat_prefill(const struct mbc_mlkem_impl *impl, unsigned k,
                            const struct mlkem_state *st, unsigned n, int transpose,
                            const struct mbc_hash_task *t, unsigned nt, unsigned rate,
                            int16_t (*pre)[MLKEM_N])
{
    /* idle lane-permutations: waves of ways tasks, each as long as the
     * longest task's blocks */
    size_t blocks = 1, idle = 0;
    for (unsigned i = 0; i < nt; i++) {
        size_t b = 1;
        for (size_t rem = t[i].len; rem >= rate; rem -= rate) {
            b++;
        }
        blocks = b > blocks ? b : blocks;
    }
    for (unsigned left = nt; left > 0; left -= left < impl->ways ? left : impl->ways) {
        idle += impl->ways - (left < impl->ways ? left : impl->ways);
    }
    unsigned fill = 0;
    const unsigned total = n * k * k;
    for (size_t cap = idle * blocks; cap >= MLKEM_SAMPLE_BLOCKS && fill < total && fill < MAT_PRE;
         cap -= MLKEM_SAMPLE_BLOCKS) {
        fill++;
    }
    if (fill == 0) {
        impl->hash(t, nt, rate);
        return 0;
    }
    uint8_t seed[MAT_PRE][34];
    int16_t *outs[MAT_PRE];
    struct mat_pos pos = {0, 0, 0};
    for (unsigned e = 0; e < fill; e++) {
        unsigned who[3];
        mat_next(st, k, transpose, &pos, seed[e], who);
        outs[e] = pre[e];
    }
    mbc_mlkem_sample_mixed(impl, t, nt, rate, outs, (const uint8_t(*)[34])seed, fill);
    return fill;
}

/* mat_acc: for every request s < n and every i, j < k: acc_s[i] +=
 * A_s[i][j] (transposed: A_s[j][i]) * v_s[j]; the first npre entries are
 * pre's (mat_prefill's), the others sampled from rho_s, MAT_CHUNK at a
 * time. acc(s, i) and v(s, j) are the rows b and a of the requests'
 * states. */
static void mat_acc(const struct mbc_mlkem_impl *impl, unsigned k, struct mlkem_state *st,
                    unsigned n, int transpose, const int16_t (*pre)[MLKEM_N], unsigned npre)
{
    MBC_ALIGN64 int16_t mat[MAT_CHUNK][MLKEM_N];
    uint8_t seed[MAT_CHUNK][34];
    int16_t *outs[MAT_CHUNK];
    unsigned who[MAT_CHUNK][3];
    const unsigned total = n * k * k;
    struct mat_pos pos = {0, 0, 0};
    for (unsigned c = 0; c < MAT_CHUNK; c++) {
        outs[c] = mat[c];
    }
    for (unsigned e = 0; e < npre; e++) {
        mat_next(st, k, transpose, &pos, NULL, who[0]);
        struct mlkem_state *t = &st[who[0][0]];
        impl->basemul_acc(t->b[who[0][1]], pre[e], t->a[who[0][2]]);
    }
    for (unsigned e0 = npre; e0 < total; e0 += MAT_CHUNK) {
        const unsigned cnt = total - e0 < MAT_CHUNK ? total - e0 : MAT_CHUNK;
        for (unsigned c = 0; c < cnt; c++) {
            mat_next(st, k, transpose, &pos, seed[c], who[c]);
        }
        impl->sample_ntt(outs, (const uint8_t(*)[34])seed, cnt);
        for (unsigned c = 0; c < cnt; c++) {
            struct mlkem_state *t = &st[who[c][0]];
            impl->basemul_acc(t->b[who[c][1]], mat[c], t->a[who[c][2]]);
        }
    }
}

/* prf_batch: for every request s < n, rows[s * per + i] = CBD_eta(PRF(
 * key_s, n0 + i)) for i < per, key_s the 32 bytes at keys(s), in one call
 * of the kernel. */
static void prf_batch(const struct mbc_mlkem_impl *impl, int16_t *const rows[],
                      const uint8_t *const keys[], unsigned n, unsigned per, unsigned n0,
                      unsigned eta)
{
    uint8_t seed[MBC_LANES * (2 * MLKEM_MAXK + 1)][33];
    for (unsigned s = 0; s < n; s++) {
        for (unsigned i = 0; i < per; i++) {
            memcpy(seed[s * per + i], keys[s], 32);
            seed[s * per + i][32] = (uint8_t)(n0 + i);
        }
    }
    impl->sample_cbd(rows, (const uint8_t(*)[33])seed, n * per, eta);
    mbc_memzero(seed, sizeof(seed));
}

void mbc_mlkem_keygen_batch(const struct mbc_mlkem_impl *impl, const struct mlkem_params *p,
                            const struct mlkem_keygen_req *req, unsigned n, struct mlkem_state *st)
{
    const unsigned k = p->k;
    int16_t *rows[MBC_LANES * 2 * MLKEM_MAXK] = {NULL};
    const uint8_t *sigma[MBC_LANES] = {NULL};
    struct mbc_hash_task t[2 * MBC_LANES] = {{0}};
    for (unsigned s = 0; s < n; s++) {
        /* (rho, sigma) = G(d || k) */
        memcpy(st[s].in, req[s].seed, 32);
        st[s].in[32] = (uint8_t)k;
        t[s] = (struct mbc_hash_task){st[s].in, 33, st[s].rk, 64, 0x06};
    }
    impl->hash(t, n, MBC_SHA3_512_RATE);
    for (unsigned s = 0; s < n; s++) {
        memcpy(st[s].m, req[s].seed + 32, 32);
        /* rho is public (it is part of ek): the matrix sampling may branch
         * on its stream */
        memcpy(st[s].rho, st[s].rk, 32);
        mbc_declassify(st[s].rho, 32);
        sigma[s] = st[s].rk + 32;
        for (unsigned i = 0; i < k; i++) {
            rows[s * 2 * k + i] = st[s].a[i];
            rows[s * 2 * k + k + i] = st[s].e[i];
        }
        memset(st[s].b, 0, sizeof(st[s].b));
    }
    /* s = CBD(PRF(sigma, 0..k-1)), the PKE secret, and e = CBD(PRF(sigma,
     * k..2k-1)), in one call; then their NTTs */
    prf_batch(impl, rows, sigma, n, 2 * k, 0, p->eta1);
    for (unsigned s = 0; s < n; s++) {
        for (unsigned i = 0; i < k; i++) {
            impl->ntt(st[s].a[i]);
            impl->ntt(st[s].e[i]);
        }
    }
    /* t = A s + e */
    mat_acc(impl, k, st, n, 0, NULL, 0);
    for (unsigned s = 0; s < n; s++) {
        uint8_t *ek = req[s].ek, *dk = req[s].dk;
        for (unsigned i = 0; i < k; i++) {
            impl->encode12(dk + 384 * i, st[s].a[i]);
            impl->reduce(st[s].b[i]);
            impl->tomont(st[s].b[i]);
            mbc_mlkem_add(st[s].b[i], st[s].b[i], st[s].e[i]);
            impl->encode12(ek + 384 * i, st[s].b[i]);
        }
        memcpy(ek + 384 * k, st[s].rho, 32);
        /* dk = dk_PKE || ek || H(ek) || z */
        memcpy(dk + 384 * k, ek, p->ek_len);
        memcpy(dk + 384 * k + p->ek_len + 32, st[s].m, 32);
        t[s] = (struct mbc_hash_task){ek, p->ek_len, dk + 384 * k + p->ek_len, 32, 0x06};
    }
    impl->hash(t, n, MBC_SHA3_256_RATE);
    mbc_memzero(t, sizeof(t));
}

/*
 * encrypt_batch: K-PKE.Encrypt (FIPS 203 algorithm 14) of every request:
 * ct_s = Encrypt(ek_s, m_s, r_s) with the ek at ek[s], m_s in st[s].m, r_s
 * the second half of st[s].rk and rho_s (ek_s's) in st[s].rho; the first
 * npre entries of the transposed matrices are pre's (mat_prefill). ct_s
 * may overlap only its own request's inputs once they are read (the t rows
 * are decoded before any ct is written). Returns the requests whose ek
 * passed the modulus check.
 */
static unsigned encrypt_batch(const struct mbc_mlkem_impl *impl, const struct mlkem_params *p,
                              const uint8_t *const ek[], uint8_t *const ct[], unsigned n,
                              struct mlkem_state *st, const int16_t (*pre)[MLKEM_N], unsigned npre)
{
    const unsigned k = p->k, per = 2 * k + 1;
    int16_t *rows[MBC_LANES * (2 * MLKEM_MAXK + 1)] = {NULL};
    const uint8_t *r[MBC_LANES] = {NULL};
    unsigned ok = 0;
    for (unsigned s = 0; s < n; s++) {
        r[s] = st[s].rk + 32;
        for (unsigned i = 0; i < k; i++) {
            rows[s * per + i] = st[s].a[i];
        }
        for (unsigned i = 0; i <= k; i++) {
            rows[s * per + k + i] = st[s].e[i];
        }
        memset(st[s].b, 0, sizeof(st[s].b));
        memset(st[s].c, 0, sizeof(st[s].c));
    }
    /* y = CBD_eta1(PRF(r, 0..k-1)) in a, e1 = CBD_eta2(PRF(r, k..2k-1)) and
     * e2 = CBD_eta2(PRF(r, 2k)) in e: one call of the kernel when the etas
     * are equal (ML-KEM-768 and -1024), two for ML-KEM-512 */
    if (p->eta1 == p->eta2) {
        prf_batch(impl, rows, r, n, per, 0, p->eta1);
    } else {
        int16_t *ys[MBC_LANES * MLKEM_MAXK] = {NULL}, *es[MBC_LANES * (MLKEM_MAXK + 1)] = {NULL};
        for (unsigned s = 0; s < n; s++) {
            for (unsigned i = 0; i <= k; i++) {
                if (i < k) {
                    ys[s * k + i] = st[s].a[i];
                }
                es[s * (k + 1) + i] = st[s].e[i];
            }
        }
        prf_batch(impl, ys, r, n, k, 0, p->eta1);
        prf_batch(impl, es, r, n, k + 1, k, p->eta2);
    }
    for (unsigned s = 0; s < n; s++) {
        int good = 1;
        for (unsigned i = 0; i < k; i++) {
            impl->ntt(st[s].a[i]);
        }
        /* v' = t^T y, t decoded row by row (the modulus check on the way) */
        for (unsigned i = 0; i < k; i++) {
            good &= impl->decode12(st[s].d, ek[s] + 384 * i);
            impl->basemul_acc(st[s].c, st[s].d, st[s].a[i]);
        }
        ok |= (unsigned)good << s;
    }
    /* u' = A^T y */
    mat_acc(impl, k, st, n, 1, pre, npre);
    for (unsigned s = 0; s < n; s++) {
        for (unsigned i = 0; i < k; i++) {
            impl->reduce(st[s].b[i]);
            impl->invntt(st[s].b[i]);
            mbc_mlkem_add(st[s].b[i], st[s].b[i], st[s].e[i]);
        }
        impl->reduce(st[s].c);
        impl->invntt(st[s].c);
        mbc_mlkem_add(st[s].c, st[s].c, st[s].e[k]);
        /* + Decompress_1(m) */
        impl->decode_decompress(st[s].d, st[s].m, 1);
        mbc_mlkem_add(st[s].c, st[s].c, st[s].d);
        for (unsigned i = 0; i < k; i++) {
            impl->compress_encode(ct[s] + 32 * p->du * i, st[s].b[i], p->du);
        }
        impl->compress_encode(ct[s] + 32 * p->du * k, st[s].c, p->dv);
    }
    return ok;
}

unsigned mbc_mlkem_encaps_batch(const struct mbc_mlkem_impl *impl, const struct mlkem_params *p,
                                const struct mlkem_encaps_req *req, unsigned n,
                                struct mlkem_state *st)
{
    const uint8_t *ek[MBC_LANES] = {NULL};
    uint8_t *ct[MBC_LANES] = {NULL};
    struct mbc_hash_task t[MBC_LANES] = {{0}};
    MBC_ALIGN64 int16_t pre[MAT_PRE][MLKEM_N];
    for (unsigned s = 0; s < n; s++) {
        memcpy(st[s].m, req[s].m, 32);
        /* rho first: ct may overlap the request's own ek */
        memcpy(st[s].rho, req[s].ek + 384 * p->k, 32);
        ek[s] = req[s].ek;
        ct[s] = st[s].ct;
        t[s] = (struct mbc_hash_task){req[s].ek, p->ek_len, st[s].h, 32, 0x06};
    }
    /* H(ek), the first matrix entries beside it */
    const unsigned npre = mat_prefill(impl, p->k, st, n, 1, t, n, MBC_SHA3_256_RATE, pre);
    /* (K, r) = G(m || H(ek)) */
    for (unsigned s = 0; s < n; s++) {
        memcpy(st[s].in, st[s].m, 32);
        memcpy(st[s].in + 32, st[s].h, 32);
        t[s] = (struct mbc_hash_task){st[s].in, 64, st[s].rk, 64, 0x06};
    }
    impl->hash(t, n, MBC_SHA3_512_RATE);
    mbc_memzero(t, sizeof(t));
    /* into the states first: ct may overlap the request's own ek */
    const unsigned ok = encrypt_batch(impl, p, ek, ct, n, st, (const int16_t(*)[MLKEM_N])pre, npre);
    for (unsigned s = 0; s < n; s++) {
        memcpy(req[s].ct, st[s].ct, p->ct_len);
        memcpy(req[s].ss, st[s].rk, 32);
    }
    return ok;
}

unsigned mbc_mlkem_decaps_batch(const struct mbc_mlkem_impl *impl, const struct mlkem_params *p,
                                const struct mlkem_decaps_req *req, unsigned n,
                                struct mlkem_state *st)
{
    const unsigned k = p->k;
    const uint8_t *ek[MBC_LANES] = {NULL};
    uint8_t *ct[MBC_LANES] = {NULL};
    unsigned ok = 0;
    struct mbc_hash_task t[2 * MBC_LANES] = {{0}};
    uint8_t hk[MBC_LANES][32]; /* H(ek), for the check */
    MBC_ALIGN64 int16_t pre[MAT_PRE][MLKEM_N];
    for (unsigned s = 0; s < n; s++) {
        const uint8_t *dk = req[s].dk, *c = req[s].ct;
        ek[s] = dk + 384 * k;
        memcpy(st[s].rho, ek[s] + 384 * k, 32);
        ct[s] = st[s].ct;
        /* the rejection key J(z || c), z || c gathered in ct */
        memcpy(st[s].ct, dk + 384 * k + p->ek_len + 32, 32);
        memcpy(st[s].ct + 32, c, p->ct_len);
        t[2 * s] = (struct mbc_hash_task){ek[s], p->ek_len, hk[s], 32, 0x06};
        t[2 * s + 1] = (struct mbc_hash_task){st[s].ct, 32 + p->ct_len, st[s].h, 32, 0x1F};
    }
    /* with the re-encryption's first matrix entries beside them */
    const unsigned npre = mat_prefill(impl, k, st, n, 1, t, 2 * n, MBC_SHA3_256_RATE, pre);
    for (unsigned s = 0; s < n; s++) {
        const uint8_t *dk = req[s].dk, *c = req[s].ct;
        const uint8_t *h = dk + 384 * k + p->ek_len;
        /* the decapsulation-key check: H(ek) as dk holds it */
        ok |= (unsigned)mbc_ct_memeq(hk[s], h, 32) << s;
        /* m' = Decrypt(dk_PKE, c): w = v - s^T NTT(u) */
        for (unsigned i = 0; i < k; i++) {
            impl->decode_decompress(st[s].b[i], c + 32 * p->du * i, p->du);
            impl->ntt(st[s].b[i]);
        }
        memset(st[s].d, 0, sizeof(st[s].d));
        for (unsigned i = 0; i < k; i++) {
            impl->decode12(st[s].a[i], dk + 384 * i);
            impl->basemul_acc(st[s].d, st[s].a[i], st[s].b[i]);
        }
        impl->reduce(st[s].d);
        impl->invntt(st[s].d);
        impl->decode_decompress(st[s].c, c + 32 * p->du * k, p->dv);
        mbc_mlkem_sub(st[s].c, st[s].c, st[s].d);
        impl->compress_encode(st[s].m, st[s].c, 1);
        /* (K', r') = G(m' || h) */
        memcpy(st[s].in, st[s].m, 32);
        memcpy(st[s].in + 32, h, 32);
        t[s] = (struct mbc_hash_task){st[s].in, 64, st[s].rk, 64, 0x06};
    }
    impl->hash(t, n, MBC_SHA3_512_RATE);
    mbc_memzero(t, sizeof(t));
    /* c' = Encrypt(ek, m', r') */
    encrypt_batch(impl, p, ek, ct, n, st, (const int16_t(*)[MLKEM_N])pre, npre);
    for (unsigned s = 0; s < n; s++) {
        /* K = c == c' ? K' : J(z || c), by masks */
        const uint8_t eq = (uint8_t)(0u - (unsigned)mbc_ct_memeq(st[s].ct, req[s].ct, p->ct_len));
        const uint8_t mask = (uint8_t)mbc_value_barrier(eq);
        for (unsigned i = 0; i < 32; i++) {
            req[s].ss[i] = (uint8_t)((st[s].rk[i] & mask) | (st[s].h[i] & (uint8_t)~mask));
        }
    }
    return ok;
}
