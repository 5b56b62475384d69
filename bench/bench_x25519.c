/*
 * bench_x25519.c - the X25519 workloads of mbc_bench.
 *
 * Material, built once per case: a pool of X25519_POOL requests, each an
 * OpenSSL private key (random bytes) and a peer's public key (of another
 * OpenSSL key), with OpenSSL's shared secret: derive requests are what a TLS
 * server computes with a client's key share. Keygen makes a new key pair
 * (random bytes from the OS and their public key), the server's own share.
 *
 * Checks while timing: every derive output is compared with OpenSSL's (a
 * 32-byte memcmp); every keygen status is checked and its private key must
 * be clamped, and one key pair in X25519_SAMPLE (mbcrypto's and OpenSSL's
 * alike) has its public key recomputed by the other library and compared.
 * Any difference aborts the case.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "bench.h"
#include "ossl_x25519.h"

#define X25519_POOL 32 /* requests; a multiple of MBC_LANES */
#define LEN MBC_X25519_LEN

static const char *const op_name[2] = {"derive", "keygen"};

struct x25519_thread {
    bench_pool_pos pos; /* first: the pool runner's */
    const pk_case *c;
    EVP_PKEY_CTX *derive[X25519_POOL]; /* derive contexts with their peer set */
    EVP_PKEY_CTX *keygen;
    uint8_t out[MBC_LANES][LEN], out2[MBC_LANES][LEN];
    bench_jobs jobs; /* x25519_run_mgr */
};

/* pk_case: the X25519 case (one curve: the size argument is unused). */
struct pk_case {
    void *th[BENCH_MAX_THREADS]; /* first (bench_pool_case_new): struct x25519_thread */
    uint8_t priv[X25519_POOL][LEN], peer[X25519_POOL][LEN], shared[X25519_POOL][LEN];
};

static int ossl_fail(const char *what)
{
    bench_fail("OpenSSL: %s", what);
    ERR_print_errors_fp(stderr);
    return -1;
}

/* derive_ctx: OpenSSL's context for request e, ready for EVP_PKEY_derive. */
static EVP_PKEY_CTX *derive_ctx(const pk_case *c, unsigned e)
{
    EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, c->priv[e], LEN);
    EVP_PKEY *p = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, c->peer[e], LEN);
    EVP_PKEY_CTX *ctx = k != NULL ? EVP_PKEY_CTX_new(k, NULL) : NULL;
    if (ctx == NULL || p == NULL || EVP_PKEY_derive_init(ctx) <= 0 ||
        EVP_PKEY_derive_set_peer(ctx, p) <= 0) {
        EVP_PKEY_CTX_free(ctx);
        ctx = NULL;
    }
    EVP_PKEY_free(k);
    EVP_PKEY_free(p);
    return ctx;
}

void x25519_case_free(pk_case *c)
{
    bench_pool_case_free(&x25519_pool, c);
}

/* check_pair: priv is clamped and pub its public key, as the other library
 * computes it (by: 0 mbcrypto made the pair, OpenSSL checks; 1 the other
 * way round). */
static int check_pair(const uint8_t *priv, const uint8_t *pub, int by, int full)
{
    uint8_t ref[LEN];
    if ((priv[0] & 7) != 0 || (priv[31] & 0xC0) != 0x40) {
        return by == 0 ? bench_fail("X25519 keygen: a private key is not clamped") : 0;
    }
    if (!full) {
        return 0;
    }
    const int ok = by == 0 ? mbt_ossl_x25519_public(ref, priv) == 0
                           : mbc_x25519_public_key(ref, priv) == MBC_OK;
    if (!ok || memcmp(ref, pub, LEN) != 0) {
        return bench_fail("X25519 keygen: a public key is not its private key's (%s)",
                          by == 0 ? "mbcrypto" : "OpenSSL");
    }
    return 0;
}

/* mb8_call: one 8-lane call of op on requests e0..e0+7. */
static mbc_status mb8_call(void *ts, unsigned op, unsigned e0)
{
    struct x25519_thread *th = ts;
    const pk_case *c = th->c;
    uint8_t *o[MBC_LANES], *o2[MBC_LANES];
    const uint8_t *k[MBC_LANES], *u[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        o[l] = th->out[l];
        o2[l] = th->out2[l];
        k[l] = c->priv[e0 + l];
        u[l] = c->peer[e0 + l];
        memset(th->out[l], 0, LEN);
    }
    return op == X25519_OP_DERIVE ? mbc_x25519_mb8(o, k, u, MBC_LANE_MASK_ALL)
                                  : mbc_x25519_keygen_mb8(o, o2, MBC_LANE_MASK_ALL);
}

/* single_call: one single call of op on request e. */
static mbc_err single_call(void *ts, unsigned op, unsigned e)
{
    struct x25519_thread *th = ts;
    const pk_case *c = th->c;
    memset(th->out[0], 0, LEN);
    return op == X25519_OP_DERIVE ? mbc_x25519(th->out[0], c->priv[e], c->peer[e])
                                  : mbc_x25519_keygen(th->out[0], th->out2[0]);
}

/* check_slot: a derive has OpenSSL's result; a key pair is clamped and,
 * when full, recomputed by OpenSSL. */
static int check_slot(void *ts, unsigned op, unsigned e, unsigned slot, int full)
{
    struct x25519_thread *th = ts;
    if (op == X25519_OP_DERIVE) {
        return memcmp(th->out[slot], th->c->shared[e], LEN) == 0
                   ? 0
                   : bench_fail("X25519 derive: slot %u differs from OpenSSL", slot);
    }
    return check_pair(th->out[slot], th->out2[slot], 0, full);
}

/* thread_init: the thread's OpenSSL contexts. */
static int thread_init(void *ts, const pk_case *c)
{
    struct x25519_thread *th = ts;
    th->c = c;
    for (unsigned e = 0; e < X25519_POOL; e++) {
        th->derive[e] = derive_ctx(c, e);
        if (th->derive[e] == NULL) {
            return ossl_fail("X25519 derive context");
        }
    }
    th->keygen = EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, NULL);
    if (th->keygen == NULL || EVP_PKEY_keygen_init(th->keygen) <= 0) {
        return ossl_fail("X25519 keygen context");
    }
    return 0;
}

static void thread_free(void *ts)
{
    struct x25519_thread *th = ts;
    for (unsigned e = 0; e < X25519_POOL; e++) {
        EVP_PKEY_CTX_free(th->derive[e]);
    }
    EVP_PKEY_CTX_free(th->keygen);
    bench_jobs_free(&th->jobs);
}

static int material(pk_case *c)
{
    int rc = 0;
    uint8_t other[LEN];
    for (unsigned e = 0; e < X25519_POOL && rc == 0; e++) {
        if (RAND_bytes(c->priv[e], LEN) != 1 || RAND_bytes(other, LEN) != 1 ||
            mbt_ossl_x25519_public(c->peer[e], other) != 0 ||
            mbt_ossl_x25519(c->shared[e], c->priv[e], c->peer[e]) != 0) {
            rc = ossl_fail("X25519 request setup failed");
        }
    }
    return rc;
}

/* clang-format off */
const bench_pool x25519_pool = {
    .size = X25519_POOL,
    .name = "X25519",
    .ops = op_name,
    .nops = 2,
    .mb8 = mb8_call,
    .single = single_call,
    .check = check_slot,
    .thread_size = sizeof(struct x25519_thread),
    .thread_init = thread_init,
    .thread_free = thread_free,
    .case_size = sizeof(pk_case),
    .material = material,
};
/* clang-format on */

pk_case *x25519_case_new(unsigned bits, const bench_opts *opts)
{
    (void)bits;
    return bench_pool_case_new(&x25519_pool, opts);
}

/* ------------------------------------------------------------------------ */
/* Run functions                                                             */
/* ------------------------------------------------------------------------ */

/* unit_ossl: one OpenSSL operation: EVP_PKEY_derive on a prepared context
 * (the same request pool), or EVP_PKEY_keygen with both keys read out as
 * bytes (what mbcrypto's keygen returns). */
static int unit_ossl(void *ts, unsigned op, uint64_t *t_done)
{
    struct x25519_thread *th = ts;
    const unsigned e = th->pos.next;
    th->pos.next = (th->pos.next + 1) % X25519_POOL;
    size_t len = LEN, len2 = LEN;
    int ok;
    if (op == X25519_OP_DERIVE) {
        ok = EVP_PKEY_derive(th->derive[e], th->out[0], &len) > 0;
    } else {
        EVP_PKEY *k = NULL;
        ok = EVP_PKEY_keygen(th->keygen, &k) > 0 &&
             EVP_PKEY_get_raw_private_key(k, th->out[0], &len) > 0 &&
             EVP_PKEY_get_raw_public_key(k, th->out2[0], &len2) > 0;
        EVP_PKEY_free(k);
    }
    *t_done = bench_now_ns();
    if (!ok || len != LEN || len2 != LEN) {
        return ossl_fail(op == X25519_OP_DERIVE ? "X25519 derive failed" : "X25519 keygen failed");
    }
    if (op == X25519_OP_DERIVE) {
        return memcmp(th->out[0], th->c->shared[e], LEN) == 0
                   ? 1
                   : bench_fail("X25519 derive: OpenSSL's result changed");
    }
    return check_pair(th->out[0], th->out2[0], 1, ++th->pos.sample % BENCH_SAMPLE == 0) != 0 ? -1
                                                                                             : 1;
}

int x25519_run_ossl(void *ts, const void *arg, double seconds, run_out *out)
{
    return bench_timed_run(ts, ((const pk_arg *)arg)->op, seconds, out, unit_ossl);
}

/* The manager runs (loops.c): job j of op on request j % X25519_POOL. */
static void job_init(void *ts, unsigned op, unsigned j, mbc_job *job, uint8_t *out, uint8_t *out2)
{
    const struct x25519_thread *th = ts;
    const unsigned e = j % X25519_POOL;
    job->op = op == X25519_OP_DERIVE ? MBC_OP_X25519_DERIVE : MBC_OP_X25519_KEYGEN;
    job->out = out;
    job->out_len = LEN;
    if (op == X25519_OP_DERIVE) {
        job->in = th->c->priv[e];
        job->in_len = LEN;
        job->in2 = th->c->peer[e];
        job->in2_len = LEN;
    } else {
        job->out2 = out2;
        job->out2_len = LEN;
    }
}

/* job_check: a derive has OpenSSL's result; a key pair is clamped, and one
 * in X25519_SAMPLE is recomputed by OpenSSL. */
static int job_check(void *ts, unsigned op, const mbc_job *job, unsigned j)
{
    struct x25519_thread *th = ts;
    if (op == X25519_OP_DERIVE) {
        return memcmp(job->out, th->c->shared[j % X25519_POOL], LEN) == 0
                   ? 0
                   : bench_fail("X25519 derive, manager: job %u differs from OpenSSL", j);
    }
    return check_pair(job->out, job->out2, 0, ++th->pos.sample % BENCH_SAMPLE == 0);
}

static const char *job_label(void *ts, unsigned op)
{
    (void)ts;
    return op == X25519_OP_DERIVE ? "X25519 derive" : "X25519 keygen";
}

static const bench_mgr_fns mgr_fns = {job_init, job_check, job_label, LEN};

int x25519_run_mgr(void *ts, const void *arg, double seconds, run_out *out)
{
    struct x25519_thread *th = ts;
    const pk_arg *a = arg;
    return bench_run_mgr(th, &th->jobs, &mgr_fns, a->op, a->k, seconds, out);
}

int x25519_check_mgr(pk_case *c, unsigned op)
{
    struct x25519_thread *th = c->th[0];
    th->pos.sample = BENCH_SAMPLE - 1; /* job_check compares this key pair with OpenSSL */
    return bench_check_mgr(th, &th->jobs, &mgr_fns, op);
}
