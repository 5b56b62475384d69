/*
 * bench_mlkem.c - the ML-KEM-768 workloads of mbc_bench: key generation
 * (the client's share of X25519MLKEM768), encapsulation (the server's) and
 * decapsulation (the client's, on receiving the server's share).
 *
 * Material, built once per case: a pool of MLKEM_POOL key pairs made by
 * mbcrypto from random seeds, each with a ciphertext and its shared secret.
 * OpenSSL (the peer) needs 3.5 or later: the system's 3.0 has no ML-KEM,
 * so run mbc_bench with OpenSSL 3.5's libcrypto (LD_LIBRARY_PATH, or the
 * loader of tools/openssl35.sh's tree) for --compare openssl; without it
 * the OpenSSL column fails with that reason.
 *
 * Checks while timing: every decapsulation output is compared with the
 * pool's secret; every status is checked; one key pair or encapsulation in
 * MLKEM_SAMPLE is checked by the other operation (a new key pair
 * decapsulates what its ek encapsulates; an encapsulation decapsulates to
 * its secret), OpenSSL's results by mbcrypto.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "bench.h"

#define MLKEM_POOL 32 /* requests; a multiple of MBC_LANES */
#define P MBC_MLKEM_768
#define EK MBC_MLKEM768_EK_LEN
#define DK MBC_MLKEM768_DK_LEN
#define CT MBC_MLKEM768_CT_LEN
#define SS MBC_MLKEM_SS_LEN

static const char *const op_name[3] = {"keygen", "encaps", "decaps"};

struct mlkem_thread {
    bench_pool_pos pos; /* first: the pool runner's */
    const pk_case *c;
    EVP_PKEY *ossl_pub[MLKEM_POOL], *ossl_priv[MLKEM_POOL];
    /* OpenSSL's contexts, made once as openssl speed does: keygen, and per
     * request encapsulation (ek) and decapsulation (dk), initialised */
    EVP_PKEY_CTX *ossl_keygen, *ossl_enc[MLKEM_POOL], *ossl_dec[MLKEM_POOL];
    uint8_t out[MBC_LANES][DK], out2[MBC_LANES][DK];
    bench_jobs jobs; /* mlkem_run_mgr */
};

struct pk_case {
    void *th[BENCH_MAX_THREADS]; /* first (bench_pool_case_new): struct mlkem_thread */
    uint8_t ek[MLKEM_POOL][EK], dk[MLKEM_POOL][DK], ct[MLKEM_POOL][CT], ss[MLKEM_POOL][SS];
};

/* check_result: out/out2 of op on request e (NULL: no request): decaps must
 * give the pool's secret; a key pair (out ek, out2 dk) or an encapsulation
 * (out ct, out2 ss) is cross-checked when full. */
static int check_result(const pk_case *c, unsigned op, unsigned e, const uint8_t *out,
                        const uint8_t *out2, int full, const char *who)
{
    uint8_t ct[CT], ss[SS], ss2[SS];
    if (op == MLKEM_OP_DECAPS) {
        return memcmp(out, c->ss[e], SS) == 0
                   ? 0
                   : bench_fail("ML-KEM-768 decaps (%s): a wrong secret", who);
    }
    if (!full) {
        return 0;
    }
    if (op == MLKEM_OP_KEYGEN) {
        if (mbc_mlkem_encaps(P, ct, ss, out, EK) != MBC_OK ||
            mbc_mlkem_decaps(P, ss2, ct, CT, out2, DK) != MBC_OK || memcmp(ss, ss2, SS) != 0) {
            return bench_fail("ML-KEM-768 keygen (%s): the key pair does not work", who);
        }
        return 0;
    }
    if (mbc_mlkem_decaps(P, ss2, out, CT, c->dk[e], DK) != MBC_OK || memcmp(out2, ss2, SS) != 0) {
        return bench_fail("ML-KEM-768 encaps (%s): the secret does not decapsulate", who);
    }
    return 0;
}

void mlkem_case_free(pk_case *c)
{
    bench_pool_case_free(&mlkem_pool, c);
}

/* mb8_call: one 8-lane call of op on requests e0..e0+7. */
static mbc_status mb8_call(void *ts, unsigned op, unsigned e0)
{
    struct mlkem_thread *th = ts;
    const pk_case *c = th->c;
    uint8_t *o[MBC_LANES], *o2[MBC_LANES];
    const uint8_t *ek[MBC_LANES], *ct[MBC_LANES], *dk[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        o[l] = th->out[l];
        o2[l] = th->out2[l];
        ek[l] = c->ek[e0 + l];
        ct[l] = c->ct[e0 + l];
        dk[l] = c->dk[e0 + l];
    }
    switch (op) {
    case MLKEM_OP_KEYGEN:
        return mbc_mlkem_keygen_mb8(P, o, o2, MBC_LANE_MASK_ALL);
    case MLKEM_OP_ENCAPS:
        return mbc_mlkem_encaps_mb8(P, o, o2, ek, MBC_LANE_MASK_ALL);
    default:
        return mbc_mlkem_decaps_mb8(P, o, ct, dk, MBC_LANE_MASK_ALL);
    }
}

/* single_call: one single-request call of op on request e. */
static mbc_err single_call(void *ts, unsigned op, unsigned e)
{
    struct mlkem_thread *th = ts;
    const pk_case *c = th->c;
    switch (op) {
    case MLKEM_OP_KEYGEN:
        return mbc_mlkem_keygen(P, th->out[0], th->out2[0]);
    case MLKEM_OP_ENCAPS:
        return mbc_mlkem_encaps(P, th->out[0], th->out2[0], c->ek[e], EK);
    default:
        return mbc_mlkem_decaps(P, th->out[0], c->ct[e], CT, c->dk[e], DK);
    }
}

/* check_slot: the outputs in slot as request e's (check_result). */
static int check_slot(void *ts, unsigned op, unsigned e, unsigned slot, int full)
{
    const struct mlkem_thread *th = ts;
    return check_result(th->c, op, e, th->out[slot], th->out2[slot], full, "mbcrypto");
}

/* thread_init: OpenSSL's keys and contexts (3.5 and later; none on 3.0:
 * its column then fails, saying why). */
static int thread_init(void *ts, const pk_case *c)
{
    struct mlkem_thread *th = ts;
    th->c = c;
    for (unsigned e = 0; e < MLKEM_POOL; e++) {
        th->ossl_pub[e] = EVP_PKEY_new_raw_public_key_ex(NULL, "ML-KEM-768", NULL, c->ek[e], EK);
        th->ossl_priv[e] = EVP_PKEY_new_raw_private_key_ex(NULL, "ML-KEM-768", NULL, c->dk[e], DK);
        if (th->ossl_pub[e] != NULL && th->ossl_priv[e] != NULL) {
            th->ossl_enc[e] = EVP_PKEY_CTX_new_from_pkey(NULL, th->ossl_pub[e], NULL);
            th->ossl_dec[e] = EVP_PKEY_CTX_new_from_pkey(NULL, th->ossl_priv[e], NULL);
            if (th->ossl_enc[e] != NULL && EVP_PKEY_encapsulate_init(th->ossl_enc[e], NULL) <= 0) {
                EVP_PKEY_CTX_free(th->ossl_enc[e]);
                th->ossl_enc[e] = NULL;
            }
            if (th->ossl_dec[e] != NULL && EVP_PKEY_decapsulate_init(th->ossl_dec[e], NULL) <= 0) {
                EVP_PKEY_CTX_free(th->ossl_dec[e]);
                th->ossl_dec[e] = NULL;
            }
        }
    }
    th->ossl_keygen = EVP_PKEY_CTX_new_from_name(NULL, "ML-KEM-768", NULL);
    if (th->ossl_keygen != NULL && EVP_PKEY_keygen_init(th->ossl_keygen) <= 0) {
        EVP_PKEY_CTX_free(th->ossl_keygen);
        th->ossl_keygen = NULL;
    }
    ERR_clear_error();
    return 0;
}

static void thread_free(void *ts)
{
    struct mlkem_thread *th = ts;
    for (unsigned e = 0; e < MLKEM_POOL; e++) {
        EVP_PKEY_CTX_free(th->ossl_enc[e]);
        EVP_PKEY_CTX_free(th->ossl_dec[e]);
        EVP_PKEY_free(th->ossl_pub[e]);
        EVP_PKEY_free(th->ossl_priv[e]);
    }
    EVP_PKEY_CTX_free(th->ossl_keygen);
    bench_jobs_free(&th->jobs);
}

static int material(pk_case *c)
{
    int rc = 0;
    for (unsigned e = 0; e < MLKEM_POOL && rc == 0; e++) {
        uint8_t seed[MBC_MLKEM_SEED_LEN];
        if (RAND_bytes(seed, sizeof(seed)) != 1 ||
            mbc_mlkem_keygen_seed(P, c->ek[e], c->dk[e], seed, sizeof(seed)) != MBC_OK ||
            mbc_mlkem_encaps(P, c->ct[e], c->ss[e], c->ek[e], EK) != MBC_OK) {
            rc = bench_fail("ML-KEM-768 request setup failed");
        }
    }
    return rc;
}

/* clang-format off */
const bench_pool mlkem_pool = {
    .size = MLKEM_POOL,
    .name = "ML-KEM-768",
    .ops = op_name,
    .nops = 3,
    .mb8 = mb8_call,
    .single = single_call,
    .check = check_slot,
    .thread_size = sizeof(struct mlkem_thread),
    .thread_init = thread_init,
    .thread_free = thread_free,
    .case_size = sizeof(pk_case),
    .material = material,
};
/* clang-format on */

pk_case *mlkem_case_new(unsigned bits, const bench_opts *opts)
{
    (void)bits;
    return bench_pool_case_new(&mlkem_pool, opts);
}

/* ------------------------------------------------------------------------ */
/* Run functions                                                             */
/* ------------------------------------------------------------------------ */

/* unit_ossl: one OpenSSL operation through EVP (3.5's ML-KEM-768), on
 * contexts made once: a key pair with both keys read out as bytes (what
 * mbcrypto's keygen returns), EVP_PKEY_encapsulate, EVP_PKEY_decapsulate,
 * on the same pool. */
static int unit_ossl(void *ts, unsigned op, uint64_t *t_done)
{
    struct mlkem_thread *th = ts;
    const unsigned e = th->pos.next;
    th->pos.next = (th->pos.next + 1) % MLKEM_POOL;
    int ok = 0;
    if (op == MLKEM_OP_KEYGEN) {
        EVP_PKEY *k = NULL;
        size_t l1 = EK, l2 = DK;
        ok = th->ossl_keygen != NULL && EVP_PKEY_keygen(th->ossl_keygen, &k) > 0 &&
             EVP_PKEY_get_raw_public_key(k, th->out[0], &l1) > 0 &&
             EVP_PKEY_get_raw_private_key(k, th->out2[0], &l2) > 0 && l1 == EK && l2 == DK;
        EVP_PKEY_free(k);
    } else if (op == MLKEM_OP_ENCAPS) {
        size_t l1 = CT, l2 = SS;
        ok = th->ossl_enc[e] != NULL &&
             EVP_PKEY_encapsulate(th->ossl_enc[e], th->out[0], &l1, th->out2[0], &l2) > 0 &&
             l1 == CT && l2 == SS;
    } else {
        size_t l2 = SS;
        ok = th->ossl_dec[e] != NULL &&
             EVP_PKEY_decapsulate(th->ossl_dec[e], th->out[0], &l2, th->c->ct[e], CT) > 0 &&
             l2 == SS;
    }
    *t_done = bench_now_ns();
    if (!ok) {
        bench_fail("OpenSSL: ML-KEM-768 %s failed (%s has no ML-KEM? run with OpenSSL 3.5's "
                   "libcrypto)",
                   op_name[op], OpenSSL_version(OPENSSL_VERSION));
        ERR_print_errors_fp(stderr);
        return -1;
    }
    return check_result(th->c, op, e, th->out[0], th->out2[0], ++th->pos.sample % BENCH_SAMPLE == 0,
                        "OpenSSL") != 0
               ? -1
               : 1;
}

int mlkem_run_ossl(void *ts, const void *arg, double seconds, run_out *out)
{
    return bench_timed_run(ts, ((const pk_arg *)arg)->op, seconds, out, unit_ossl);
}

/* The manager runs (loops.c): job j of op on request j % MLKEM_POOL; the
 * job buffers are DK bytes each (bench_mgr_fns). */
static void job_init(void *ts, unsigned op, unsigned j, mbc_job *job, uint8_t *out, uint8_t *out2)
{
    const struct mlkem_thread *th = ts;
    const unsigned e = j % MLKEM_POOL;
    static const mbc_job_op ops[3] = {MBC_OP_MLKEM768_KEYGEN, MBC_OP_MLKEM768_ENCAPS,
                                      MBC_OP_MLKEM768_DECAPS};
    job->op = ops[op];
    job->out = out;
    job->out_len = DK;
    if (op != MLKEM_OP_DECAPS) {
        job->out2 = out2;
        job->out2_len = DK;
    }
    if (op == MLKEM_OP_ENCAPS) {
        job->in = th->c->ek[e];
        job->in_len = EK;
    } else if (op == MLKEM_OP_DECAPS) {
        job->in = th->c->ct[e];
        job->in_len = CT;
        job->in2 = th->c->dk[e];
        job->in2_len = DK;
    }
}

static int job_check(void *ts, unsigned op, const mbc_job *job, unsigned j)
{
    struct mlkem_thread *th = ts;
    return check_result(th->c, op, j % MLKEM_POOL, job->out, job->out2,
                        ++th->pos.sample % BENCH_SAMPLE == 0, "manager");
}

static const char *job_label(void *ts, unsigned op)
{
    (void)ts;
    static const char *const labels[3] = {"ML-KEM-768 keygen", "ML-KEM-768 encaps",
                                          "ML-KEM-768 decaps"};
    return labels[op];
}

static const bench_mgr_fns mgr_fns = {job_init, job_check, job_label, DK};

int mlkem_run_mgr(void *ts, const void *arg, double seconds, run_out *out)
{
    struct mlkem_thread *th = ts;
    const pk_arg *a = arg;
    return bench_run_mgr(th, &th->jobs, &mgr_fns, a->op, a->k, seconds, out);
}

int mlkem_check_mgr(pk_case *c, unsigned op)
{
    struct mlkem_thread *th = c->th[0];
    th->pos.sample = BENCH_SAMPLE - 1;
    return bench_check_mgr(th, &th->jobs, &mgr_fns, op);
}
