/*
 * bench_ec.c - the P-256 and P-384 workloads of mbc_bench: ECDSA signing of
 * a digest (random nonce: its generation is part of the time), ECDSA
 * verification, ECDH and key generation, for mbcrypto's 8-lane calls, its
 * single calls and its lane manager, and for OpenSSL 3.0 (EVP_PKEY_sign on
 * a digest, EVP_PKEY_verify, EVP_PKEY_derive, EVP_PKEY_keygen).
 *
 * Material, built once per curve and cached for the whole run: --keys
 * OpenSSL keys and a pool of EC_POOL requests; request e uses key e % keys,
 * a random digest of the curve's size (SHA-256 / SHA-384), OpenSSL's
 * signature of it (what a client verifies), a peer point of its own
 * OpenSSL key, and OpenSSL's ECDH secret with that peer.
 *
 * Every result is checked. Verification must say valid (mbcrypto's lane
 * status, OpenSSL's 1) and every ECDH secret equals OpenSSL's (a memcmp in
 * the timed loop, as the RSA workloads do). A signature with a random nonce
 * or a new key pair has no known answer, and checking it costs an
 * operation of its own (a verification: three signatures' worth), so those
 * results are logged during the timed window and checked right after it,
 * outside the time and the CPU time the engine counts: mbcrypto's
 * signatures verified by OpenSSL and its key pairs recomputed by OpenSSL
 * (d G), OpenSSL's signatures verified by mbcrypto and its key pairs
 * rebuilt by mbcrypto. Any difference or failed status aborts the case.
 * Those checks are bounded: at most EC_LOG_MAX results of a window, evenly
 * spread over it (request 0, s, 2 s, ... for the smallest power of two s
 * that keeps them under the bound), as X25519's key pairs are sampled.
 * Checking all of them cost far more than the window itself where
 * OpenSSL's curve is slow (OpenSSL 3.0's P-384 verifies about 2,000
 * signatures a second against 170,000 8-lane signs: a 0.4 s window took
 * half a minute of checks, the P-384 row of the default suite minutes).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "bench.h"
#include "ossl_ec.h"

#define EC_POOL 32 /* requests; a multiple of MBC_LANES */
#define EC_LEN 48
#define EC_POINT 97
#define EC_DER 112

static const char *const op_name[4] = {"sign", "verify", "ecdh", "keygen"};

typedef struct ec_material {
    mbc_curve curve;
    unsigned bits, num_keys;
    size_t len, plen, slen;
    EVP_PKEY *pkey[BENCH_MAX_KEYS];
    uint8_t d[BENCH_MAX_KEYS][EC_LEN];
    uint8_t point[BENCH_MAX_KEYS][EC_POINT];
    EVP_PKEY *peer[EC_POOL];
    uint8_t peer_point[EC_POOL][EC_POINT];
    uint8_t secret[EC_POOL][EC_LEN];
    uint8_t digest[EC_POOL][EC_LEN];
    uint8_t sig[EC_POOL][2 * EC_LEN]; /* OpenSSL's, r || s */
    uint8_t der[EC_POOL][EC_DER];     /* the same, DER, for OpenSSL's verify */
    size_t der_len[EC_POOL];
} ec_material;

/* A result checked after the timed window. */
enum { LOG_SIG, LOG_OSSL_SIG, LOG_PAIR, LOG_OSSL_PAIR };
struct ec_logrec {
    unsigned kind, e;    /* request */
    size_t len;          /* bytes of a (OpenSSL's DER signature) */
    uint8_t a[EC_DER];   /* a signature, or d */
    uint8_t b[EC_POINT]; /* a point */
    EVP_PKEY *pkey;      /* OpenSSL's new key */
};

/* The results of one window to check: those whose sequence number is a
 * multiple of stride, at most EC_LOG_MAX; the others go to spare and are
 * dropped. */
#define EC_LOG_MAX 1024
struct ec_log {
    struct ec_logrec *r;
    size_t n, cap;
    unsigned long seen, stride;
    struct ec_logrec spare;
};

/* ec_thread: one worker thread's state. */
struct ec_thread {
    const pk_case *c;
    EVP_PKEY_CTX *sign[BENCH_MAX_KEYS], *verify[BENCH_MAX_KEYS];
    EVP_PKEY_CTX *derive[EC_POOL]; /* request e's key with its peer */
    EVP_PKEY_CTX *keygen;
    uint8_t out[MBC_LANES][2 * EC_LEN], out2[MBC_LANES][EC_POINT];
    unsigned next, next8;
    bench_jobs jobs;
    struct ec_log log;
    char label[32];
};

/* pk_case: an EC case (each workload file has its own; mbc_bench.c only
 * holds pointers). */
struct pk_case {
    const ec_material *m;
    unsigned num_threads;
    mbc_ec_priv_key *priv[BENCH_MAX_KEYS];
    mbc_ec_pub_key *pub[BENCH_MAX_KEYS];
    struct ec_thread *th[BENCH_MAX_THREADS];
};

static ec_material *g_material[2]; /* P-256, P-384 */

/* ------------------------------------------------------------------------ */
/* Material                                                                  */
/* ------------------------------------------------------------------------ */

static void material_free(ec_material *m)
{
    if (m == NULL) {
        return;
    }
    for (unsigned k = 0; k < BENCH_MAX_KEYS; k++) {
        EVP_PKEY_free(m->pkey[k]);
    }
    for (unsigned e = 0; e < EC_POOL; e++) {
        EVP_PKEY_free(m->peer[e]);
    }
    OPENSSL_cleanse(m, sizeof(*m));
    free(m);
}

static ec_material *material_new(mbc_curve curve, unsigned num_keys, int quiet)
{
    ec_material *m = calloc(1, sizeof(*m));
    if (m == NULL) {
        bench_fail("out of memory");
        return NULL;
    }
    m->curve = curve;
    m->len = mbc_ec_scalar_len(curve);
    m->plen = mbc_ec_point_len(curve);
    m->slen = mbc_ec_sig_len(curve);
    m->bits = (unsigned)m->len * 8;
    m->num_keys = num_keys;
    if (!quiet) {
        fprintf(stderr, "mbc_bench: generating %u P-%u key%s and %u peers with OpenSSL...\n",
                num_keys, m->bits, num_keys > 1 ? "s" : "", EC_POOL);
    }
    int rc = 0;
    for (unsigned k = 0; k < num_keys && rc == 0; k++) {
        m->pkey[k] = mbt_ossl_ec_keygen(curve);
        if (m->pkey[k] == NULL || mbt_ossl_ec_get(m->pkey[k], curve, m->d[k], m->point[k]) != 0) {
            rc = bench_ossl_fail("EC key generation failed");
        }
    }
    for (unsigned e = 0; e < EC_POOL && rc == 0; e++) {
        EVP_PKEY *key = m->pkey[e % num_keys];
        m->peer[e] = mbt_ossl_ec_keygen(curve);
        uint8_t der[EC_DER];
        size_t der_len = sizeof(der);
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
        if (m->peer[e] == NULL || mbt_ossl_ec_get(m->peer[e], curve, NULL, m->peer_point[e]) != 0 ||
            mbt_ossl_ecdh(key, m->peer[e], m->secret[e], m->len) != 0 ||
            RAND_bytes(m->digest[e], (int)m->len) != 1 || ctx == NULL ||
            EVP_PKEY_sign_init(ctx) != 1 ||
            EVP_PKEY_sign(ctx, der, &der_len, m->digest[e], m->len) != 1 ||
            mbt_ecdsa_der_to_raw(der, der_len, m->len, m->sig[e]) != 0) {
            rc = bench_ossl_fail("EC request setup failed");
        }
        memcpy(m->der[e], der, der_len);
        m->der_len[e] = der_len;
        EVP_PKEY_CTX_free(ctx);
    }
    if (rc != 0) {
        material_free(m);
        return NULL;
    }
    return m;
}

static const ec_material *material_get(unsigned bits, unsigned num_keys, int quiet)
{
    const unsigned slot = bits == 256 ? 0 : 1;
    if (g_material[slot] == NULL) {
        g_material[slot] =
            material_new(bits == 256 ? MBC_CURVE_P256 : MBC_CURVE_P384, num_keys, quiet);
    }
    return g_material[slot];
}

void ec_material_free_all(void)
{
    for (unsigned i = 0; i < 2; i++) {
        material_free(g_material[i]);
        g_material[i] = NULL;
    }
}

/* ------------------------------------------------------------------------ */
/* Deferred checks                                                           */
/* ------------------------------------------------------------------------ */

/* log_drop: every other record of the log dropped (those at odd places,
 * their sequence numbers odd multiples of the stride), the stride doubled. */
static void log_drop(struct ec_log *lg)
{
    size_t k = 0;
    for (size_t i = 0; i < lg->n; i++) {
        if (i % 2) {
            EVP_PKEY_free(lg->r[i].pkey);
        } else {
            lg->r[k++] = lg->r[i];
        }
    }
    lg->n = k;
    lg->stride *= 2;
}

/* log_add: the record for the next result of the window: one to fill and
 * check, or the spare (filled, never checked) when the result falls
 * between the kept ones. NULL when out of memory. */
static struct ec_logrec *log_add(struct ec_log *lg, unsigned kind, unsigned e)
{
    if (lg->stride == 0) {
        lg->stride = 1;
    }
    const unsigned long seq = lg->seen++;
    if (lg->n == EC_LOG_MAX && seq % lg->stride == 0) {
        log_drop(lg);
    }
    if (seq % lg->stride != 0) {
        EVP_PKEY_free(lg->spare.pkey);
        lg->spare.pkey = NULL;
        return &lg->spare;
    }
    if (lg->n == lg->cap) {
        const size_t cap = lg->cap ? 2 * lg->cap : 1024;
        struct ec_logrec *r = realloc(lg->r, cap * sizeof(*r));
        if (r == NULL) {
            bench_fail("out of memory");
            return NULL;
        }
        lg->r = r;
        lg->cap = cap;
    }
    struct ec_logrec *r = &lg->r[lg->n++];
    r->kind = kind;
    r->e = e;
    r->pkey = NULL;
    return r;
}

/* log_reset: the log empty for the next window. */
static void log_reset(struct ec_log *lg)
{
    lg->n = 0;
    lg->seen = 0;
    lg->stride = 1;
    EVP_PKEY_free(lg->spare.pkey);
    lg->spare.pkey = NULL;
}

/* log_check: every logged result checked (see the file comment), the log
 * emptied. 0, or -1 after the first failure. */
static int log_check(struct ec_thread *th)
{
    const pk_case *c = th->c;
    const ec_material *m = c->m;
    int rc = 0;
    for (size_t i = 0; i < th->log.n; i++) {
        struct ec_logrec *r = &th->log.r[i];
        const unsigned k = r->e % m->num_keys;
        uint8_t raw[2 * EC_LEN], q[EC_POINT];
        if (rc != 0) {
            EVP_PKEY_free(r->pkey);
            continue;
        }
        switch (r->kind) {
        case LOG_SIG:
            if (mbt_ossl_ecdsa_verify(m->pkey[k], m->curve, r->a, m->digest[r->e], m->len) != 1) {
                rc = bench_fail("P-%u sign: OpenSSL rejects mbcrypto's signature of request %u",
                                m->bits, r->e);
            }
            break;
        case LOG_OSSL_SIG:
            if (mbt_ecdsa_der_to_raw(r->a, r->len, m->len, raw) != 0 ||
                mbc_ecdsa_verify(raw, m->digest[r->e], m->len, c->pub[k]) != MBC_OK) {
                rc = bench_fail("P-%u sign: mbcrypto rejects OpenSSL's signature of request %u",
                                m->bits, r->e);
            }
            break;
        case LOG_PAIR:
            if (mbt_ossl_ec_mul_g(m->curve, r->a, m->len, q) != 0 ||
                memcmp(q, r->b, m->plen) != 0) {
                rc = bench_fail("P-%u keygen: mbcrypto's point is not d G (OpenSSL)", m->bits);
            }
            break;
        default: {
            mbc_ec_priv_key *key = NULL;
            uint8_t d[EC_LEN], p[EC_POINT];
            if (mbt_ossl_ec_get(r->pkey, m->curve, d, p) != 0 ||
                mbc_ec_priv_key_new(&key, m->curve, d, m->len) != MBC_OK ||
                mbc_ec_priv_key_public(key, q, sizeof(q)) != MBC_OK || memcmp(q, p, m->plen) != 0) {
                rc = bench_fail("P-%u keygen: OpenSSL's key pair does not rebuild in mbcrypto",
                                m->bits);
            }
            mbc_ec_priv_key_free(key);
            OPENSSL_cleanse(d, sizeof(d));
            EVP_PKEY_free(r->pkey);
            break;
        }
        }
    }
    log_reset(&th->log);
    return rc;
}

/* thread_cpu: this thread's CPU time in seconds. */
static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* checked: a timed run's result, with its deferred checks after it, their
 * CPU time excluded from the run's. */
static int checked(struct ec_thread *th, int rc, run_out *out)
{
    const double t0 = thread_cpu();
    const int lc = log_check(th);
    out->cpu_untimed += thread_cpu() - t0;
    return rc != 0 ? rc : lc;
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                     */
/* ------------------------------------------------------------------------ */

/* mb8_call: one 8-lane call of op on requests e0..e0+7. */
static mbc_status mb8_call(struct ec_thread *th, unsigned op, unsigned e0)
{
    const pk_case *c = th->c;
    const ec_material *m = c->m;
    uint8_t *o[MBC_LANES], *o2[MBC_LANES];
    const uint8_t *in[MBC_LANES], *sig[MBC_LANES];
    size_t len[MBC_LANES];
    const mbc_ec_priv_key *priv[MBC_LANES];
    const mbc_ec_pub_key *pub[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        const unsigned e = e0 + l, k = e % m->num_keys;
        o[l] = th->out[l];
        o2[l] = th->out2[l];
        in[l] = op == EC_OP_ECDH ? m->peer_point[e] : m->digest[e];
        sig[l] = m->sig[e];
        len[l] = m->len;
        priv[l] = c->priv[k];
        pub[l] = c->pub[k];
    }
    switch (op) {
    case EC_OP_SIGN:
        return mbc_ecdsa_sign_mb8(o, in, len, priv, m->curve, MBC_LANE_MASK_ALL);
    case EC_OP_VERIFY:
        return mbc_ecdsa_verify_mb8(sig, in, len, pub, m->curve, MBC_LANE_MASK_ALL);
    case EC_OP_ECDH:
        return mbc_ecdh_mb8(o, in, priv, m->curve, MBC_LANE_MASK_ALL);
    default:
        return mbc_ec_keygen_mb8(o, o2, m->curve, MBC_LANE_MASK_ALL);
    }
}

/* single_call: one single call of op on request e, into out[0] (out2[0]). */
static mbc_err single_call(struct ec_thread *th, unsigned op, unsigned e)
{
    const pk_case *c = th->c;
    const ec_material *m = c->m;
    const unsigned k = e % m->num_keys;
    switch (op) {
    case EC_OP_SIGN:
        return mbc_ecdsa_sign(th->out[0], m->digest[e], m->len, c->priv[k]);
    case EC_OP_VERIFY:
        return mbc_ecdsa_verify(m->sig[e], m->digest[e], m->len, c->pub[k]);
    case EC_OP_ECDH:
        return mbc_ecdh(th->out[0], m->peer_point[e], m->plen, c->priv[k]);
    default:
        return mbc_ec_keygen(th->out[0], th->out2[0], m->curve);
    }
}

/* result: request e's result of op in out (out2): checked now (verify:
 * the status alone, ECDH: OpenSSL's secret) or logged for after the
 * window (signatures, key pairs). 0 or -1. */
static int result(struct ec_thread *th, unsigned op, unsigned e, const uint8_t *out,
                  const uint8_t *out2)
{
    const ec_material *m = th->c->m;
    struct ec_logrec *r;
    switch (op) {
    case EC_OP_SIGN:
        if ((r = log_add(&th->log, LOG_SIG, e)) == NULL) {
            return -1;
        }
        memcpy(r->a, out, m->slen);
        return 0;
    case EC_OP_ECDH:
        if (memcmp(out, m->secret[e], m->len) != 0) {
            return bench_fail("P-%u ecdh: request %u differs from OpenSSL", m->bits, e);
        }
        return 0;
    case EC_OP_KEYGEN:
        if ((r = log_add(&th->log, LOG_PAIR, e)) == NULL) {
            return -1;
        }
        memcpy(r->a, out, m->len);
        memcpy(r->b, out2, m->plen);
        return 0;
    default:
        return 0;
    }
}

/* unit_mb8: one 8-lane call (its latency is the batch's). */
static int unit_mb8(void *ts, unsigned op, uint64_t *t_done)
{
    struct ec_thread *th = ts;
    const ec_material *m = th->c->m;
    const unsigned e0 = th->next8;
    th->next8 = (th->next8 + MBC_LANES) % EC_POOL;
    const mbc_status st = mb8_call(th, op, e0);
    *t_done = bench_now_ns();
    for (unsigned l = 0; l < MBC_LANES; l++) {
        const unsigned code = mbc_lane_code(st, l);
        if (code != MBC_LANE_OK) {
            return bench_fail("P-%u %s, 8 lanes: lane %u returned %s", m->bits, op_name[op], l,
                              mbc_lane_code_str(code));
        }
        if (result(th, op, e0 + l, th->out[l], th->out2[l]) != 0) {
            return -1;
        }
    }
    return MBC_LANES;
}

/* unit_single: one single-request call. */
static int unit_single(void *ts, unsigned op, uint64_t *t_done)
{
    struct ec_thread *th = ts;
    const unsigned e = th->next;
    th->next = (th->next + 1) % EC_POOL;
    const mbc_err err = single_call(th, op, e);
    *t_done = bench_now_ns();
    if (err != MBC_OK) {
        return bench_fail("P-%u %s, single call: %s", th->c->m->bits, op_name[op],
                          mbc_err_str(err));
    }
    return result(th, op, e, th->out[0], th->out2[0]) != 0 ? -1 : 1;
}

/* unit_ossl: one OpenSSL operation on the same requests. */
static int unit_ossl(void *ts, unsigned op, uint64_t *t_done)
{
    struct ec_thread *th = ts;
    const ec_material *m = th->c->m;
    const unsigned e = th->next, k = e % m->num_keys;
    th->next = (th->next + 1) % EC_POOL;
    uint8_t der[EC_DER];
    size_t len = sizeof(der);
    EVP_PKEY *pkey = NULL;
    int ok;
    switch (op) {
    case EC_OP_SIGN:
        ok = EVP_PKEY_sign(th->sign[k], der, &len, m->digest[e], m->len) == 1;
        break;
    case EC_OP_VERIFY:
        ok = EVP_PKEY_verify(th->verify[k], m->der[e], m->der_len[e], m->digest[e], m->len) == 1;
        break;
    case EC_OP_ECDH:
        len = m->len;
        ok = EVP_PKEY_derive(th->derive[e], th->out[0], &len) == 1 && len == m->len;
        break;
    default:
        ok = EVP_PKEY_keygen(th->keygen, &pkey) == 1;
        break;
    }
    *t_done = bench_now_ns();
    if (!ok) {
        EVP_PKEY_free(pkey);
        return bench_ossl_fail(op_name[op]);
    }
    struct ec_logrec *r;
    switch (op) {
    case EC_OP_SIGN:
        if ((r = log_add(&th->log, LOG_OSSL_SIG, e)) == NULL) {
            return -1;
        }
        memcpy(r->a, der, len);
        r->len = len;
        break;
    case EC_OP_ECDH:
        if (memcmp(th->out[0], m->secret[e], m->len) != 0) {
            return bench_fail("P-%u ecdh: OpenSSL's result changed", m->bits);
        }
        break;
    case EC_OP_KEYGEN:
        if ((r = log_add(&th->log, LOG_OSSL_PAIR, e)) == NULL) {
            EVP_PKEY_free(pkey);
            return -1;
        }
        r->pkey = pkey;
        break;
    default:
        break;
    }
    return 1;
}

int ec_run_mb8(void *ts, const void *arg, double seconds, run_out *out)
{
    const int rc = bench_timed_run(ts, ((const pk_arg *)arg)->op, seconds, out, unit_mb8);
    return checked(ts, rc, out);
}

int ec_run_single(void *ts, const void *arg, double seconds, run_out *out)
{
    const int rc = bench_timed_run(ts, ((const pk_arg *)arg)->op, seconds, out, unit_single);
    return checked(ts, rc, out);
}

int ec_run_ossl(void *ts, const void *arg, double seconds, run_out *out)
{
    const int rc = bench_timed_run(ts, ((const pk_arg *)arg)->op, seconds, out, unit_ossl);
    return checked(ts, rc, out);
}

/* ------------------------------------------------------------------------ */
/* The manager                                                               */
/* ------------------------------------------------------------------------ */

static void job_init(void *ts, unsigned op, unsigned j, mbc_job *job, uint8_t *out, uint8_t *out2)
{
    const struct ec_thread *th = ts;
    const pk_case *c = th->c;
    const ec_material *m = c->m;
    const unsigned e = j % EC_POOL, k = e % m->num_keys;
    job->out = out;
    job->out_len = m->slen;
    switch (op) {
    case EC_OP_SIGN:
        job->op = MBC_OP_ECDSA_SIGN;
        job->key = c->priv[k];
        job->in = m->digest[e];
        job->in_len = m->len;
        break;
    case EC_OP_VERIFY:
        job->op = MBC_OP_ECDSA_VERIFY;
        job->key = c->pub[k];
        job->in = m->digest[e];
        job->in_len = m->len;
        job->in2 = m->sig[e];
        job->in2_len = m->slen;
        break;
    case EC_OP_ECDH:
        job->op = MBC_OP_ECDH;
        job->key = c->priv[k];
        job->in = m->peer_point[e];
        job->in_len = m->plen;
        break;
    default:
        job->op = m->curve == MBC_CURVE_P256 ? MBC_OP_EC_KEYGEN_P256 : MBC_OP_EC_KEYGEN_P384;
        job->out2 = out2;
        job->out2_len = m->plen;
        break;
    }
}

static int job_check(void *ts, unsigned op, const mbc_job *job, unsigned j)
{
    return result(ts, op, j % EC_POOL, job->out, job->out2);
}

static const char *job_label(void *ts, unsigned op)
{
    struct ec_thread *th = ts;
    snprintf(th->label, sizeof(th->label), "P-%u %s", th->c->m->bits, op_name[op]);
    return th->label;
}

static const bench_mgr_fns mgr_fns = {job_init, job_check, job_label, 2 * EC_LEN + 4};

int ec_run_mgr(void *ts, const void *arg, double seconds, run_out *out)
{
    struct ec_thread *th = ts;
    const pk_arg *a = arg;
    const int rc = bench_run_mgr(th, &th->jobs, &mgr_fns, a->op, a->k, seconds, out);
    return checked(th, rc, out);
}

int ec_check_mgr(pk_case *c, unsigned op)
{
    struct ec_thread *th = c->th[0];
    run_out none = {0};
    return checked(th, bench_check_mgr(th, &th->jobs, &mgr_fns, op), &none);
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

void ec_case_free(pk_case *c)
{
    if (c == NULL) {
        return;
    }
    for (unsigned t = 0; t < BENCH_MAX_THREADS; t++) {
        struct ec_thread *th = c->th[t];
        if (th == NULL) {
            continue;
        }
        for (unsigned k = 0; k < BENCH_MAX_KEYS; k++) {
            EVP_PKEY_CTX_free(th->sign[k]);
            EVP_PKEY_CTX_free(th->verify[k]);
        }
        for (unsigned e = 0; e < EC_POOL; e++) {
            EVP_PKEY_CTX_free(th->derive[e]);
        }
        EVP_PKEY_CTX_free(th->keygen);
        log_reset(&th->log);
        free(th->log.r);
        bench_jobs_free(&th->jobs);
        free(th);
    }
    for (unsigned k = 0; k < BENCH_MAX_KEYS; k++) {
        mbc_ec_priv_key_free(c->priv[k]);
        mbc_ec_pub_key_free(c->pub[k]);
    }
    free(c);
}

/* thread_new: thread t's state in c, with its OpenSSL contexts set up
 * once. 0, or -1 (c->th[t] is then freed with the case). */
static int thread_new(pk_case *c, unsigned t)
{
    const ec_material *m = c->m;
    struct ec_thread *th = calloc(1, sizeof(*th));
    c->th[t] = th;
    if (th == NULL) {
        return bench_fail("out of memory");
    }
    th->c = c;
    int ok = 1;
    for (unsigned k = 0; k < m->num_keys && ok; k++) {
        th->sign[k] = EVP_PKEY_CTX_new_from_pkey(NULL, m->pkey[k], NULL);
        th->verify[k] = EVP_PKEY_CTX_new_from_pkey(NULL, m->pkey[k], NULL);
        ok = th->sign[k] != NULL && th->verify[k] != NULL && EVP_PKEY_sign_init(th->sign[k]) == 1 &&
             EVP_PKEY_verify_init(th->verify[k]) == 1;
    }
    for (unsigned e = 0; e < EC_POOL && ok; e++) {
        th->derive[e] = EVP_PKEY_CTX_new_from_pkey(NULL, m->pkey[e % m->num_keys], NULL);
        ok = th->derive[e] != NULL && EVP_PKEY_derive_init(th->derive[e]) == 1 &&
             EVP_PKEY_derive_set_peer(th->derive[e], m->peer[e]) == 1;
    }
    th->keygen = ok ? EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL) : NULL;
    ok = ok && th->keygen != NULL && EVP_PKEY_keygen_init(th->keygen) == 1 &&
         EVP_PKEY_CTX_set_group_name(th->keygen, mbt_ossl_ec_group_name(m->curve)) == 1;
    return ok ? 0 : bench_ossl_fail("EC context setup failed");
}

pk_case *ec_case_new(unsigned bits, const bench_opts *opts)
{
    const ec_material *m = material_get(bits, opts->keys, opts->quiet);
    pk_case *c = calloc(1, sizeof(*c));
    if (m == NULL || c == NULL) {
        free(c);
        return NULL;
    }
    c->m = m;
    c->num_threads = opts->threads;
    int rc = 0;
    for (unsigned k = 0; k < m->num_keys && rc == 0; k++) {
        uint8_t q[EC_POINT];
        mbc_err err = mbc_ec_priv_key_new(&c->priv[k], m->curve, m->d[k], m->len);
        if (err == MBC_OK) {
            err = mbc_ec_pub_key_new(&c->pub[k], m->curve, m->point[k], m->plen);
        }
        if (err == MBC_OK) {
            err = mbc_ec_priv_key_public(c->priv[k], q, sizeof(q));
        }
        if (err != MBC_OK) {
            rc = bench_fail("mbcrypto refused an OpenSSL P-%u key: %s", m->bits, mbc_err_str(err));
        } else if (memcmp(q, m->point[k], m->plen) != 0) {
            rc = bench_fail("P-%u: mbcrypto's public point of an OpenSSL key differs", m->bits);
        }
    }
    for (unsigned t = 0; t < c->num_threads && rc == 0; t++) {
        rc = thread_new(c, t);
    }
    /* one 8-lane call and one single call of each operation, checked at once */
    for (unsigned op = 0; op < 4 && rc == 0; op++) {
        struct ec_thread *th = c->th[0];
        uint64_t t;
        rc = unit_mb8(th, op, &t) < 0 || unit_single(th, op, &t) < 0 ? -1 : 0;
        th->next = th->next8 = 0;
        if (log_check(th) != 0) {
            rc = -1;
        }
    }
    if (rc != 0) {
        ec_case_free(c);
        return NULL;
    }
    return c;
}

void *const *ec_case_threads(const pk_case *c)
{
    return (void *const *)c->th;
}
