/*
 * bench_rsa.c - the RSA workloads of mbc_bench.
 *
 * Material, built once per modulus size and cached for the whole run:
 * --keys OpenSSL keys (e = 65537) and a pool of RSA_POOL requests. Request e
 * uses key e % keys; its private input is a PKCS#1 v1.5 SHA-256 signature
 * encoding of a random digest (what a TLS server signs) and its public input
 * the resulting signature (what a client verifies). Both results come from
 * OpenSSL (raw RSA, no padding): they are the expected values every timed
 * mbcrypto result is compared with, and OpenSSL's own PKCS#1 signature of
 * request 0 is checked to be the private result, so the encoding is right.
 *
 * Every run function zeroes each output buffer before the call and compares
 * the result with the expected value after it (a few hundred bytes of
 * memcmp against a modular exponentiation: well below 1% of the time, and
 * the same for every implementation). Any difference, or any status other
 * than OK, aborts the case.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include "bench.h"
#include "ossl_rsa.h"

#define RSA_POOL 32 /* requests; a multiple of MBC_LANES */
#define RSA_MAX_BYTES 512

typedef struct rsa_material {
    unsigned bits, num_keys;
    size_t len;
    EVP_PKEY *pkey[BENCH_MAX_KEYS];
    uint8_t in[2][RSA_POOL][RSA_MAX_BYTES];   /* [op][request] */
    uint8_t want[2][RSA_POOL][RSA_MAX_BYTES]; /* OpenSSL's results */
} rsa_material;

/* rsa_thread: one worker thread's state. */
struct rsa_thread {
    const pk_case *c;
    EVP_PKEY_CTX *ossl[2][BENCH_MAX_KEYS]; /* [op][key]: raw decrypt / encrypt */
    uint8_t out[MBC_LANES][RSA_MAX_BYTES];
    unsigned next;   /* next request of the pool (one-request calls) */
    unsigned next8;  /* first request of the next 8-lane call, a multiple of 8 */
    bench_jobs jobs; /* rsa_run_mgr */
    char label[32];
};

/* pk_case: an RSA case (each workload file has its own; mbc_bench.c only
 * holds pointers). */
struct pk_case {
    const rsa_material *m;
    unsigned num_threads;
    mbc_rsa_priv_key *priv[BENCH_MAX_KEYS];
    mbc_rsa_pub_key *pub[BENCH_MAX_KEYS];
    struct rsa_thread *th[BENCH_MAX_THREADS];
};

static rsa_material *g_material[3]; /* 2048, 3072, 4096 */

static const char *const op_name[2] = {"private", "public"};

/* ------------------------------------------------------------------------ */
/* Material                                                                  */
/* ------------------------------------------------------------------------ */

/* raw_ctx: an EVP_PKEY_CTX for raw (RSA_NO_PADDING) decrypt (op private) or
 * encrypt (op public) calls. */
static EVP_PKEY_CTX *raw_ctx(EVP_PKEY *pkey, unsigned op)
{
    EVP_PKEY_CTX *ctx = mbt_ossl_rsa_raw_ctx(pkey, op == RSA_OP_PRIVATE);
    if (ctx == NULL) {
        bench_ossl_fail("RSA context setup failed");
    }
    return ctx;
}

/* check_pkcs1: OpenSSL's own PKCS#1 v1.5 SHA-256 signature of digest equals
 * sig (so our encoding of request 0 is the standard one). */
static int check_pkcs1(EVP_PKEY *pkey, const uint8_t *digest, const uint8_t *sig, size_t len)
{
    uint8_t buf[RSA_MAX_BYTES];
    size_t sig_len = sizeof(buf);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int ok = ctx != NULL && EVP_PKEY_sign_init(ctx) > 0 &&
             EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
             EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) > 0 &&
             EVP_PKEY_sign(ctx, buf, &sig_len, digest, 32) > 0;
    EVP_PKEY_CTX_free(ctx);
    if (!ok) {
        return bench_ossl_fail("PKCS#1 v1.5 signature failed");
    }
    if (sig_len != len || memcmp(buf, sig, len) != 0) {
        return bench_fail("RSA-%zu: the PKCS#1 encoding differs from OpenSSL's", len * 8);
    }
    return 0;
}

static void material_free(rsa_material *m)
{
    if (m == NULL) {
        return;
    }
    for (unsigned k = 0; k < BENCH_MAX_KEYS; k++) {
        EVP_PKEY_free(m->pkey[k]);
    }
    OPENSSL_cleanse(m, sizeof(*m));
    free(m);
}

static rsa_material *material_new(unsigned bits, unsigned num_keys, int quiet)
{
    rsa_material *m = calloc(1, sizeof(*m));
    if (m == NULL) {
        bench_fail("out of memory");
        return NULL;
    }
    m->bits = bits;
    m->num_keys = num_keys;
    m->len = bits / 8;
    if (!quiet) {
        fprintf(stderr, "mbc_bench: generating %u RSA-%u key%s with OpenSSL...\n", num_keys, bits,
                num_keys > 1 ? "s" : "");
    }
    EVP_PKEY_CTX *ctx[BENCH_MAX_KEYS] = {NULL};
    int rc = 0;
    for (unsigned k = 0; k < num_keys && rc == 0; k++) {
        m->pkey[k] = mbt_ossl_rsa_keygen(bits, 65537);
        if (m->pkey[k] == NULL) {
            rc = bench_ossl_fail("RSA key generation failed");
            break;
        }
        ctx[k] = raw_ctx(m->pkey[k], RSA_OP_PRIVATE);
        rc = ctx[k] != NULL ? 0 : -1;
    }
    uint8_t digest[32];
    for (unsigned e = 0; e < RSA_POOL && rc == 0; e++) {
        uint8_t *em = m->in[RSA_OP_PRIVATE][e], *sig = m->want[RSA_OP_PRIVATE][e];
        if (RAND_bytes(digest, sizeof(digest)) != 1 ||
            mbc_rsa_pkcs1_v15_sign_encode(em, m->len, MBC_HASH_SHA256, digest, 32) != MBC_OK ||
            mbt_ossl_rsa_raw_op(ctx[e % num_keys], 1 /* private */, sig, em, m->len) != 0) {
            rc = bench_ossl_fail("raw RSA signature of a request failed");
            break;
        }
        memcpy(m->in[RSA_OP_PUBLIC][e], sig, m->len);
        memcpy(m->want[RSA_OP_PUBLIC][e], em, m->len);
        if (e == 0) {
            rc = check_pkcs1(m->pkey[0], digest, sig, m->len);
        }
    }
    for (unsigned k = 0; k < num_keys; k++) {
        EVP_PKEY_CTX_free(ctx[k]);
    }
    if (rc != 0) {
        material_free(m);
        return NULL;
    }
    return m;
}

static const rsa_material *material_get(unsigned bits, unsigned num_keys, int quiet)
{
    unsigned slot = bits == 2048 ? 0 : bits == 3072 ? 1 : 2;
    if (g_material[slot] == NULL) {
        g_material[slot] = material_new(bits, num_keys, quiet);
    }
    return g_material[slot];
}

void rsa_material_free_all(void)
{
    for (unsigned i = 0; i < 3; i++) {
        material_free(g_material[i]);
        g_material[i] = NULL;
    }
}

/* ------------------------------------------------------------------------ */
/* mbcrypto keys and the case                                                */
/* ------------------------------------------------------------------------ */

/* mbc_keys: mbcrypto's key objects for OpenSSL's key pkey. Every component
 * is padded to the modulus size len: leading zeros are allowed. */
static int mbc_keys(mbc_rsa_priv_key **priv, mbc_rsa_pub_key **pub, const EVP_PKEY *pkey,
                    size_t len)
{
    mbt_rsa_parts parts;
    int rc = 0;
    if (mbt_ossl_rsa_get_parts(&parts, pkey, len) != 0) {
        rc = bench_ossl_fail("reading the RSA key components failed");
    } else {
        mbc_err err = mbt_rsa_keys_new(priv, pub, &parts);
        if (err != MBC_OK) {
            rc = bench_fail("mbcrypto refused an OpenSSL RSA-%zu key: %s", len * 8,
                            mbc_err_str(err));
        }
    }
    mbt_rsa_parts_free(&parts);
    return rc;
}

static const void *lane_key(const pk_case *c, unsigned op, unsigned e)
{
    unsigned k = e % c->m->num_keys;
    return op == RSA_OP_PRIVATE ? (const void *)c->priv[k] : (const void *)c->pub[k];
}

/* mb8_call: one 8-lane call of op on requests e0..e0+7 into out. */
static mbc_status mb8_call(const pk_case *c, unsigned op, unsigned e0,
                           uint8_t (*out)[RSA_MAX_BYTES])
{
    const rsa_material *m = c->m;
    uint8_t *o[MBC_LANES];
    const uint8_t *in[MBC_LANES];
    const mbc_rsa_priv_key *priv[MBC_LANES];
    const mbc_rsa_pub_key *pub[MBC_LANES];
    for (unsigned lane = 0; lane < MBC_LANES; lane++) {
        o[lane] = out[lane];
        in[lane] = m->in[op][e0 + lane];
        priv[lane] = c->priv[(e0 + lane) % m->num_keys];
        pub[lane] = c->pub[(e0 + lane) % m->num_keys];
        memset(out[lane], 0, m->len);
    }
    return op == RSA_OP_PRIVATE ? mbc_rsa_private_crt_mb8(o, in, priv, m->bits, MBC_LANE_MASK_ALL)
                                : mbc_rsa_public_mb8(o, in, pub, m->bits, MBC_LANE_MASK_ALL);
}

/* check_mb8: status and results of an 8-lane call on requests e0..e0+7. */
static int check_mb8(const pk_case *c, unsigned op, unsigned e0, mbc_status st,
                     uint8_t (*out)[RSA_MAX_BYTES])
{
    const rsa_material *m = c->m;
    for (unsigned lane = 0; lane < MBC_LANES; lane++) {
        unsigned code = mbc_lane_code(st, lane);
        if (code != MBC_LANE_OK) {
            return bench_fail("RSA-%u %s, 8 lanes: lane %u returned %s", m->bits, op_name[op], lane,
                              mbc_lane_code_str(code));
        }
        if (memcmp(out[lane], m->want[op][e0 + lane], m->len) != 0) {
            return bench_fail("RSA-%u %s, 8 lanes: lane %u (request %u) differs from OpenSSL",
                              m->bits, op_name[op], lane, e0 + lane);
        }
    }
    return 0;
}

void rsa_case_free(pk_case *c)
{
    if (c == NULL) {
        return;
    }
    for (unsigned t = 0; t < BENCH_MAX_THREADS; t++) {
        struct rsa_thread *th = c->th[t];
        if (th == NULL) {
            continue;
        }
        for (unsigned op = 0; op < 2; op++) {
            for (unsigned k = 0; k < BENCH_MAX_KEYS; k++) {
                EVP_PKEY_CTX_free(th->ossl[op][k]);
            }
        }
        bench_jobs_free(&th->jobs);
        free(th);
    }
    for (unsigned k = 0; k < BENCH_MAX_KEYS; k++) {
        mbc_rsa_priv_key_free(c->priv[k]);
        mbc_rsa_pub_key_free(c->pub[k]);
    }
    free(c);
}

pk_case *rsa_case_new(unsigned bits, const bench_opts *opts)
{
    const rsa_material *m = material_get(bits, opts->keys, opts->quiet);
    pk_case *c = calloc(1, sizeof(*c));
    if (m == NULL || c == NULL) {
        free(c);
        return NULL;
    }
    c->m = m;
    c->num_threads = opts->threads;
    int rc = 0;
    for (unsigned k = 0; k < m->num_keys && rc == 0; k++) {
        rc = mbc_keys(&c->priv[k], &c->pub[k], m->pkey[k], m->len);
    }
    for (unsigned t = 0; t < c->num_threads && rc == 0; t++) {
        struct rsa_thread *th = calloc(1, sizeof(*th));
        c->th[t] = th;
        if (th == NULL) {
            rc = bench_fail("out of memory");
            break;
        }
        th->c = c;
        for (unsigned op = 0; op < 2 && rc == 0; op++) {
            for (unsigned k = 0; k < m->num_keys && rc == 0; k++) {
                th->ossl[op][k] = raw_ctx(m->pkey[k], op);
                rc = th->ossl[op][k] != NULL ? 0 : -1;
            }
        }
    }
    /* One 8-lane call and one single call of each operation vs OpenSSL. */
    for (unsigned op = 0; op < 2 && rc == 0; op++) {
        struct rsa_thread *th = c->th[0];
        rc = check_mb8(c, op, 0, mb8_call(c, op, 0, th->out), th->out);
        if (rc == 0) {
            memset(th->out[0], 0, m->len);
            mbc_err err =
                op == RSA_OP_PRIVATE
                    ? mbc_rsa_private_crt(th->out[0], m->in[op][1], c->priv[1 % m->num_keys])
                    : mbc_rsa_public(th->out[0], m->in[op][1], c->pub[1 % m->num_keys]);
            if (err != MBC_OK || memcmp(th->out[0], m->want[op][1], m->len) != 0) {
                rc = bench_fail("RSA-%u %s, single call: %s", bits, op_name[op],
                                err != MBC_OK ? mbc_err_str(err) : "result differs from OpenSSL");
            }
        }
    }
    if (rc != 0) {
        rsa_case_free(c);
        return NULL;
    }
    return c;
}

void *const *rsa_case_threads(const pk_case *c)
{
    return (void *const *)c->th;
}

/* ------------------------------------------------------------------------ */
/* Run functions                                                             */
/* ------------------------------------------------------------------------ */

/* unit_mb8: one 8-lane call (its latency is the batch's). */
static int unit_mb8(void *ts, unsigned op, uint64_t *t_done)
{
    struct rsa_thread *th = ts;
    const unsigned e0 = th->next8;
    th->next8 = (th->next8 + MBC_LANES) % RSA_POOL;
    mbc_status st = mb8_call(th->c, op, e0, th->out);
    *t_done = bench_now_ns();
    return check_mb8(th->c, op, e0, st, th->out) != 0 ? -1 : MBC_LANES;
}

/* unit_single: one single-request call. */
static int unit_single(void *ts, unsigned op, uint64_t *t_done)
{
    struct rsa_thread *th = ts;
    const pk_case *c = th->c;
    const rsa_material *m = c->m;
    const unsigned e = th->next;
    th->next = (th->next + 1) % RSA_POOL;
    memset(th->out[0], 0, m->len);
    mbc_err err = op == RSA_OP_PRIVATE
                      ? mbc_rsa_private_crt(th->out[0], m->in[op][e], lane_key(c, op, e))
                      : mbc_rsa_public(th->out[0], m->in[op][e], lane_key(c, op, e));
    *t_done = bench_now_ns();
    if (err != MBC_OK || memcmp(th->out[0], m->want[op][e], m->len) != 0) {
        return bench_fail("RSA-%u %s, single call: %s", m->bits, op_name[op],
                          err != MBC_OK ? mbc_err_str(err) : "result differs from OpenSSL");
    }
    return 1;
}

/* unit_ossl: one OpenSSL operation, same request pool. */
static int unit_ossl(void *ts, unsigned op, uint64_t *t_done)
{
    struct rsa_thread *th = ts;
    const rsa_material *m = th->c->m;
    const unsigned e = th->next;
    th->next = (th->next + 1) % RSA_POOL;
    memset(th->out[0], 0, m->len);
    int rc = mbt_ossl_rsa_raw_op(th->ossl[op][e % m->num_keys], op == RSA_OP_PRIVATE, th->out[0],
                                 m->in[op][e], m->len);
    *t_done = bench_now_ns();
    if (rc != 0) {
        return bench_ossl_fail("raw RSA operation failed");
    }
    if (memcmp(th->out[0], m->want[op][e], m->len) != 0) {
        return bench_fail("RSA-%u %s: OpenSSL's result changed", m->bits, op_name[op]);
    }
    return 1;
}

int rsa_run_mb8(void *ts, const void *arg, double seconds, run_out *out)
{
    return bench_timed_run(ts, ((const pk_arg *)arg)->op, seconds, out, unit_mb8);
}

int rsa_run_single(void *ts, const void *arg, double seconds, run_out *out)
{
    return bench_timed_run(ts, ((const pk_arg *)arg)->op, seconds, out, unit_single);
}

int rsa_run_ossl(void *ts, const void *arg, double seconds, run_out *out)
{
    return bench_timed_run(ts, ((const pk_arg *)arg)->op, seconds, out, unit_ossl);
}

/* The manager runs (loops.c): job j of op on request j % RSA_POOL. */
static void job_init(void *ts, unsigned op, unsigned j, mbc_job *job, uint8_t *out, uint8_t *out2)
{
    const struct rsa_thread *th = ts;
    const rsa_material *m = th->c->m;
    const unsigned e = j % RSA_POOL;
    (void)out2;
    job->op = op == RSA_OP_PRIVATE ? MBC_OP_RSA_PRIVATE : MBC_OP_RSA_PUBLIC;
    job->key = lane_key(th->c, op, e);
    job->in = m->in[op][e];
    job->in_len = m->len;
    job->out = out;
    job->out_len = m->len;
}

/* job_check: a completed job has OpenSSL's result. */
static int job_check(void *ts, unsigned op, const mbc_job *job, unsigned j)
{
    const struct rsa_thread *th = ts;
    const rsa_material *m = th->c->m;
    if (memcmp(job->out, m->want[op][j % RSA_POOL], m->len) != 0) {
        return bench_fail("RSA-%u %s, manager: job %u differs from OpenSSL", m->bits, op_name[op],
                          j);
    }
    return 0;
}

static const char *job_label(void *ts, unsigned op)
{
    struct rsa_thread *th = ts;
    snprintf(th->label, sizeof(th->label), "RSA-%u %s", th->c->m->bits, op_name[op]);
    return th->label;
}

static const bench_mgr_fns mgr_fns = {job_init, job_check, job_label, RSA_MAX_BYTES};

int rsa_run_mgr(void *ts, const void *arg, double seconds, run_out *out)
{
    struct rsa_thread *th = ts;
    const pk_arg *a = arg;
    return bench_run_mgr(th, &th->jobs, &mgr_fns, a->op, a->k, seconds, out);
}

int rsa_check_mgr(pk_case *c, unsigned op)
{
    return bench_check_mgr(c->th[0], &c->th[0]->jobs, &mgr_fns, op);
}
