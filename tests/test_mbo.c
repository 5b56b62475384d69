/*
 * test_mbo.c - openssl/common: the serve policy, the async wake logic of
 * mbo_run inside real OpenSSL ASYNC jobs (a lone request's fd is readable at
 * once and its batch runs on resume, or once it has waited the max wait when
 * one is set; four private requests batch without a
 * flush; a job torn down while paused leaves nothing behind; blocked
 * pausing), one manager per thread, a forked child starting clean, the
 * counters file, and AES-GCM (plain AEAD and TLS 1.2 records) against
 * OpenSSL's default provider.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "mbo.h"
#include "ossl_gcm.h"
#include "ossl_rsa.h"
#include "test_util.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MBT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(MBT_ASAN)
#include <sanitizer/lsan_interface.h>
#define MBT_LSAN_IGNORE(p) __lsan_ignore_object(p)
#else
#define MBT_LSAN_IGNORE(p) ((void)(p))
#endif

/* This program offers what the ENGINE does, so the policy's refusal of a
 * family not offered is tested too (the provider offers every family:
 * test_provider). */
const unsigned mbo_offered = MBO_FAM_RSA | MBO_FAM_GCM;

static EVP_PKEY *pkey;
static mbc_rsa_priv_key *priv;
static mbc_rsa_pub_key *pub;
static char counters_path[4096];

#define K 256 /* RSA-2048 */

static int group_setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] == '\0') {
        tmp = P_tmpdir; /* <stdio.h>: the system's temporary directory */
    }
    const int len = snprintf(counters_path, sizeof(counters_path), "%s/test_mbo.XXXXXX", tmp);
    if (len < 0 || (size_t)len >= sizeof(counters_path)) {
        return -1;
    }
    const int fd = mkstemp(counters_path);
    if (fd < 0) {
        return -1;
    }
    close(fd);
    setenv(MBO_COUNTERS_ENV, counters_path, 1);
    if (!mbo_init(NULL) || (pkey = mbt_ossl_rsa_keygen(2048, 65537)) == NULL) {
        return -1;
    }
    static const char *const names[] = {"n",
                                        "e",
                                        "rsa-factor1",
                                        "rsa-factor2",
                                        "rsa-exponent1",
                                        "rsa-exponent2",
                                        "rsa-coefficient1"};
    BIGNUM *bn[7] = {NULL};
    for (int i = 0; i < 7; i++) {
        if (!EVP_PKEY_get_bn_param(pkey, names[i], &bn[i])) {
            return -1;
        }
    }
    const int ok =
        mbo_rsa_priv_new(&priv, bn[0], bn[1], bn[2], bn[3], bn[4], bn[5], bn[6]) == MBC_OK &&
        mbo_rsa_pub_new(&pub, bn[0], bn[1]) == MBC_OK;
    for (int i = 0; i < 7; i++) {
        BN_clear_free(bn[i]);
    }
    return ok ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    mbc_rsa_priv_key_free(priv);
    mbc_rsa_pub_key_free(pub);
    EVP_PKEY_free(pkey);
    mbo_fini();
    unlink(counters_path);
    return 0;
}

/* A request and its expected answer. */
struct rsa_req {
    int priv;
    uint8_t in[K], out[K], want[K];
    mbc_err err;
};

static void req_init(struct rsa_req *r, int is_priv)
{
    memset(r, 0, sizeof(*r));
    r->priv = is_priv;
    mbt_rand_bytes(r->in, K);
    r->in[0] &= 0x7F; /* below n */
    assert_int_equal(mbt_ossl_rsa_raw(pkey, is_priv, r->want, r->in, K), 0);
}

static void req_check(const struct rsa_req *r)
{
    assert_int_equal(r->err, MBC_OK);
    assert_memory_equal(r->out, r->want, K);
}

static int run_req(void *arg)
{
    struct rsa_req *r = *(struct rsa_req **)arg;
    r->err = r->priv ? mbo_rsa_private(priv, r->out, r->in) : mbo_rsa_public(pub, r->out, r->in);
    return 0;
}

/* An ASYNC job running one request, with its own wait context. */
struct job {
    ASYNC_JOB *job;
    ASYNC_WAIT_CTX *ctx;
    struct rsa_req *req;
};

static int job_step(struct job *j)
{
    int ret;
    return ASYNC_start_job(&j->job, j->ctx, &ret, run_req, &j->req, sizeof(j->req));
}

static int job_start(struct job *j, struct rsa_req *r)
{
    j->job = NULL;
    j->req = r;
    j->ctx = ASYNC_WAIT_CTX_new();
    assert_non_null(j->ctx);
    return job_step(j);
}

/* job_fd: the job's one wait fd (-1 if none). */
static int job_fd(struct job *j)
{
    OSSL_ASYNC_FD fd[2];
    size_t n = 0;
    assert_true(ASYNC_WAIT_CTX_get_all_fds(j->ctx, NULL, &n));
    if (n == 0) {
        return -1;
    }
    assert_int_equal(n, 1);
    assert_true(ASYNC_WAIT_CTX_get_all_fds(j->ctx, fd, &n));
    return fd[0];
}

static int readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static uint64_t ctr(enum mbo_counter c)
{
    return mbo_counter_get(c);
}

static void test_policy(void **state)
{
    (void)state;
    unsigned f = 12345;
    char s[MBO_POLICY_STR_LEN];
    assert_true(mbo_policy_parse("all", &f));
    assert_int_equal(f, mbo_offered);
    assert_true(mbo_policy_parse("none", &f));
    assert_int_equal(f, 0);
    assert_true(mbo_policy_parse("aes-gcm,rsa", &f));
    assert_int_equal(f, MBO_FAM_RSA | MBO_FAM_GCM);
    mbo_policy_str(f, s, sizeof(s));
    assert_string_equal(s, "rsa,aes-gcm");
    assert_true(mbo_policy_parse("rsa", &f));
    assert_int_equal(f, MBO_FAM_RSA);
    assert_true(mbo_policy_parse("auto", &f));
    assert_int_equal(f, mbo_policy_auto());
    f = 7;
    assert_false(mbo_policy_parse("rsa,", &f));
    assert_false(mbo_policy_parse("ecdsa", &f)); /* a family not offered here */
    assert_false(mbo_policy_parse("rsa,x25519", &f));
    assert_false(mbo_policy_parse("", &f));
    assert_int_equal(f, 7);
    /* auto: RSA only on the IFMA kernels, AES-GCM only on vaes512. */
    const unsigned a = mbo_policy_auto();
    assert_int_equal((a & MBO_FAM_RSA) != 0, strcmp(mbc_impl_name(MBC_ALG_RSA), "ifma") == 0);
    assert_int_equal((a & MBO_FAM_GCM) != 0, strcmp(mbc_impl_name(MBC_ALG_GCM), "vaes512") == 0);
    assert_int_equal(a & ~mbo_offered, 0);
    /* mbo_policy_setup at run time: the setting, unless MBCRYPTO_SERVE is
     * set and valid; "auto" when neither is valid. */
    const char *env = getenv(MBO_SERVE_ENV);
    char *saved = env != NULL ? strdup(env) : NULL;
    unsetenv(MBO_SERVE_ENV);
    mbo_policy_setup("aes-gcm");
    assert_int_equal(mbo_policy(), MBO_FAM_GCM);
    mbo_policy_setup("bogus");
    assert_int_equal(mbo_policy(), a);
    setenv(MBO_SERVE_ENV, "rsa", 1);
    mbo_policy_setup("aes-gcm");
    assert_int_equal(mbo_policy(), MBO_FAM_RSA);
    setenv(MBO_SERVE_ENV, "bogus", 1);
    mbo_policy_setup("none");
    assert_int_equal(mbo_policy(), 0);
    if (saved != NULL) {
        setenv(MBO_SERVE_ENV, saved, 1);
        free(saved);
    } else {
        unsetenv(MBO_SERVE_ENV);
    }
    mbo_policy_setup(NULL);
}

/* One mbo_hand_off call inside an ASYNC job. */
struct hand_off_call {
    mbc_alg alg;
    mbc_job_op op;
    unsigned bits;
    int got;
};

static int hand_off_job(void *arg)
{
    struct hand_off_call *c = *(struct hand_off_call **)arg;
    c->got = mbo_hand_off(c->alg, c->op, c->bits);
    return 1;
}

/* hand_off_in_job: mbo_hand_off(c) inside an ASYNC job with a wait
 * context (a request that would batch). */
static int hand_off_in_job(struct hand_off_call *c)
{
    ASYNC_WAIT_CTX *w = ASYNC_WAIT_CTX_new();
    ASYNC_JOB *job = NULL;
    int ret = 0;
    assert_non_null(w);
    assert_int_equal(ASYNC_start_job(&job, w, &ret, hand_off_job, &c, sizeof(c)), ASYNC_FINISH);
    ASYNC_WAIT_CTX_free(w);
    return c->got;
}

/* mbc_impl_lone: the rows of the selected implementations (a size where
 * one is named, every size where none is; nothing for the portable paths,
 * AES-GCM, ML-KEM or an unknown family). mbo_hand_off answers 1 (and
 * counts) under "auto" alone, outside ASYNC jobs, for an operation whose
 * lone path the selected implementation does not list; never for an
 * explicit setting; inside a job only what the lone-request rule runs at
 * once (test_lone_at_once; here the thread has no streak) and a one-lane
 * family's requests (test_runs_alone). */
static void test_hand_off(void **state)
{
    (void)state;
    const mbc_tier ec = mbc_impl_get_info(MBC_ALG_EC)->tier,
                   rsa = mbc_impl_get_info(MBC_ALG_RSA)->tier;
    assert_int_equal(mbc_impl_lone(MBC_ALG_EC, MBC_OP_ECDSA_SIGN, 384), ec != MBC_TIER_PORTABLE);
    assert_int_equal(mbc_impl_lone(MBC_ALG_EC, MBC_OP_EC_KEYGEN_P256, 256),
                     ec != MBC_TIER_PORTABLE);
    assert_int_equal(mbc_impl_lone(MBC_ALG_EC, MBC_OP_ECDSA_SIGN, 256), ec != MBC_TIER_PORTABLE);
    assert_false(mbc_impl_lone(MBC_ALG_EC, MBC_OP_ECDH, 256));
    assert_int_equal(mbc_impl_lone(MBC_ALG_EC, MBC_OP_ECDH, 384), ec != MBC_TIER_PORTABLE);
    assert_int_equal(mbc_impl_lone(MBC_ALG_RSA, MBC_OP_RSA_PUBLIC, 4096), rsa != MBC_TIER_PORTABLE);
    assert_int_equal(mbc_impl_lone(MBC_ALG_RSA, MBC_OP_RSA_PRIVATE, 2048),
                     rsa != MBC_TIER_PORTABLE);
    assert_false(mbc_impl_lone(MBC_ALG_X25519, MBC_OP_X25519_DERIVE, 255));
    assert_false(mbc_impl_lone(MBC_ALG_GCM, 0, 0));
    assert_false(mbc_impl_lone(MBC_ALG_MLKEM, MBC_OP_MLKEM768_ENCAPS, 0));
    assert_false(mbc_impl_lone((mbc_alg)99, MBC_OP_RSA_PUBLIC, 2048));

    const char *env = getenv(MBO_SERVE_ENV);
    char *saved = env != NULL ? strdup(env) : NULL;
    unsetenv(MBO_SERVE_ENV);
    struct hand_off_call calls[] = {
        {MBC_ALG_RSA, MBC_OP_RSA_PRIVATE, 2048, 0},     {MBC_ALG_RSA, MBC_OP_RSA_PRIVATE, 4096, 0},
        {MBC_ALG_RSA, MBC_OP_RSA_PUBLIC, 2048, 0},      {MBC_ALG_EC, MBC_OP_ECDSA_SIGN, 256, 0},
        {MBC_ALG_EC, MBC_OP_ECDSA_SIGN, 384, 0},        {MBC_ALG_EC, MBC_OP_ECDH, 256, 0},
        {MBC_ALG_X25519, MBC_OP_X25519_DERIVE, 255, 0},
    };
    const char *settings[] = {"auto", "all", "rsa"};
    for (size_t s = 0; s < sizeof(settings) / sizeof(settings[0]); s++) {
        mbo_policy_setup(settings[s]);
        for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
            struct hand_off_call *c = &calls[i];
            const int want = s == 0 && !mbc_impl_lone(c->alg, c->op, c->bits);
            /* In a job only a one-lane family's (it would run at once). */
            const int in_job = want && mbo_one_lane(c->alg);
            const uint64_t n = ctr(MBO_CTR_HANDED_OFF);
            assert_int_equal(mbo_hand_off(c->alg, c->op, c->bits), want);
            assert_int_equal(ctr(MBO_CTR_HANDED_OFF), n + (uint64_t)want);
            assert_int_equal(hand_off_in_job(c), in_job);
            assert_int_equal(ctr(MBO_CTR_HANDED_OFF), n + (uint64_t)(want + in_job));
        }
    }
    if (saved != NULL) {
        setenv(MBO_SERVE_ENV, saved, 1);
        free(saved);
    }
    mbo_policy_setup(NULL);
}

/* Outside a job: at once, no pause. */
static void test_outside_job(void **state)
{
    (void)state;
    struct rsa_req r;
    const uint64_t pauses = ctr(MBO_CTR_ASYNC_PAUSES);
    for (int p = 0; p < 2; p++) {
        req_init(&r, p);
        struct rsa_req *rp = &r;
        run_req(&rp);
        req_check(&r);
    }
    assert_int_equal(ctr(MBO_CTR_ASYNC_PAUSES), pauses);
}

/* A lone request: the job pauses with its fd readable at once (no timer to
 * wait for), and its batch runs when it is resumed. */
static void test_lone_request(void **state)
{
    (void)state;
    struct rsa_req r;
    struct job j;
    req_init(&r, 1);
    const uint64_t flushes = ctr(MBO_CTR_ASYNC_FLUSHES), pauses = ctr(MBO_CTR_ASYNC_PAUSES);
    assert_int_equal(job_start(&j, &r), ASYNC_PAUSE);
    const int fd = job_fd(&j);
    assert_true(fd >= 0);
    assert_true(readable(fd));
    assert_int_equal(ctr(MBO_CTR_ASYNC_PAUSES), pauses + 1);
    assert_int_equal(job_step(&j), ASYNC_FINISH);
    req_check(&r);
    assert_false(readable(fd)); /* read back to empty on resume */
    assert_int_equal(ctr(MBO_CTR_ASYNC_FLUSHES), flushes + 1);
    /* The fd stays with the wait context for its next pause. */
    req_init(&r, 0);
    j.job = NULL;
    assert_int_equal(job_step(&j), ASYNC_PAUSE);
    assert_int_equal(job_fd(&j), fd);
    assert_int_equal(job_step(&j), ASYNC_FINISH);
    req_check(&r);
    ASYNC_WAIT_CTX_free(j.ctx);
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* With a max wait, a resumed lone request pauses again, its fd readable at
 * once, until it has waited that long; then its batch runs. Settings above
 * the maximum are refused. */
static void test_max_wait(void **state)
{
    (void)state;
    const uint32_t wait = 50000;
    assert_false(mbo_set_max_wait_us(MBO_MAX_WAIT_US_MAX + 1));
    assert_int_equal(mbo_max_wait_us(), 0);
    assert_true(mbo_set_max_wait_us(wait));
    assert_int_equal(mbo_max_wait_us(), wait);
    struct rsa_req r;
    struct job j;
    req_init(&r, 1);
    const uint64_t flushes = ctr(MBO_CTR_ASYNC_FLUSHES), t0 = now_us();
    assert_int_equal(job_start(&j, &r), ASYNC_PAUSE);
    /* Resumed at once, it waits on; only a thread descheduled for the whole
     * wait before this step may find its batch due already, so that is
     * checked by the clock, not assumed. */
    int st = job_step(&j);
    if (st == ASYNC_PAUSE) {
        assert_true(readable(job_fd(&j)));
        assert_int_equal(ctr(MBO_CTR_ASYNC_FLUSHES), flushes);
    }
    while (st == ASYNC_PAUSE) {
        assert_true(readable(job_fd(&j)));
        st = job_step(&j);
    }
    assert_int_equal(st, ASYNC_FINISH);
    assert_true(now_us() - t0 >= wait);
    req_check(&r);
    assert_int_equal(ctr(MBO_CTR_ASYNC_FLUSHES), flushes + 1);
    assert_true(mbo_set_max_wait_us(0));
    ASYNC_WAIT_CTX_free(j.ctx);
}

/* lone_job: one lone request in a job of its own; returns what its first
 * start gave (ASYNC_PAUSE or ASYNC_FINISH), having run it to the end and
 * checked its result. */
static int lone_job(int is_priv)
{
    struct rsa_req r;
    struct job j;
    req_init(&r, is_priv);
    const int first = job_start(&j, &r);
    int st = first;
    while (st == ASYNC_PAUSE) {
        st = job_step(&j);
    }
    assert_int_equal(st, ASYNC_FINISH);
    req_check(&r);
    ASYNC_WAIT_CTX_free(j.ctx);
    return first;
}

/* The lone-request rule: after four pauses in a row that nobody joined, a
 * lone request runs at once (counted, same result), the fourth pauses as
 * a probe, and after each probe nobody joined the interval doubles (8, 16,
 * ..., 64); a probe joined by another request ends the streak. Under
 * "auto", what it runs at once goes to OpenSSL where our lone path is
 * slower (mbo_hand_off). Off, or with a max wait set, every request
 * pauses. */
static void test_lone_at_once(void **state)
{
    (void)state;
    mbo_set_lone_at_once(1);
    const uint64_t at_once = ctr(MBO_CTR_ASYNC_AT_ONCE);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(lone_job(i & 1), ASYNC_PAUSE);
    }
    assert_int_equal(ctr(MBO_CTR_ASYNC_AT_ONCE), at_once);
    /* Under "auto", a request the rule would run at once, of an operation
     * whose lone path is not at OpenSSL's speed, is handed off instead
     * (counted as both); one whose lone path is, is not; the probe is not. */
    const char *env = getenv(MBO_SERVE_ENV);
    char *saved = env != NULL ? strdup(env) : NULL;
    unsetenv(MBO_SERVE_ENV);
    mbo_policy_setup("auto");
    struct hand_off_call ecdh = {MBC_ALG_X25519, MBC_OP_X25519_DERIVE, 255, 0};
    struct hand_off_call p384 = {MBC_ALG_EC, MBC_OP_ECDSA_SIGN, 384, 0};
    if (mbo_one_lane(MBC_ALG_X25519) || mbo_one_lane(MBC_ALG_EC)) {
        /* One lane (no IFMA): their requests run at once apart from the
         * rule (test_runs_alone); RSA, 8 lanes on every tier, takes their
         * place (its portable lone path is not claimed). */
        ecdh = (struct hand_off_call){MBC_ALG_RSA, MBC_OP_RSA_PRIVATE, 2048, 0};
        p384 = (struct hand_off_call){MBC_ALG_RSA, MBC_OP_RSA_PUBLIC, 2048, 0};
    }
    const int claimed = mbc_impl_lone(p384.alg, p384.op, p384.bits);
    const uint64_t handed = ctr(MBO_CTR_HANDED_OFF);
    assert_false(mbc_impl_lone(ecdh.alg, ecdh.op, ecdh.bits)); /* X25519 derive (RSA) */
    assert_int_equal(hand_off_in_job(&ecdh), 1);
    assert_int_equal(hand_off_in_job(&p384), !claimed);
    assert_int_equal(hand_off_in_job(&ecdh), 1);
    unsigned n = 2 + !claimed;
    assert_int_equal(ctr(MBO_CTR_HANDED_OFF), handed + n);
    assert_int_equal(ctr(MBO_CTR_ASYNC_AT_ONCE), at_once + n);
    if (claimed) {
        assert_int_equal(lone_job(0), ASYNC_FINISH); /* run at once, ours */
        n++;
    }
    assert_int_equal(hand_off_in_job(&ecdh), 0); /* the probe's turn */
    assert_int_equal(lone_job(1), ASYNC_PAUSE);  /* the probe, joined by nobody */
    assert_int_equal(ctr(MBO_CTR_HANDED_OFF), handed + 2 + !claimed);
    if (saved != NULL) {
        setenv(MBO_SERVE_ENV, saved, 1);
        free(saved);
    }
    mbo_policy_setup(NULL);
    for (unsigned interval = 8; interval <= 64; interval *= 2) {
        for (unsigned i = 0; i + 1 < interval; i++, n++) {
            assert_int_equal(lone_job(i & 1), ASYNC_FINISH);
        }
        assert_int_equal(lone_job(1), ASYNC_PAUSE); /* the probe, joined by nobody */
    }
    assert_int_equal(ctr(MBO_CTR_ASYNC_AT_ONCE), at_once + n);
    /* At most 64: 63 at once again, then the probe; a request that finds the
     * probe waiting joins it instead of running at once. */
    for (int i = 0; i < 63; i++, n++) {
        assert_int_equal(lone_job(0), ASYNC_FINISH);
    }
    struct rsa_req r[2];
    struct job j[2];
    req_init(&r[0], 1);
    req_init(&r[1], 1);
    assert_int_equal(job_start(&j[0], &r[0]), ASYNC_PAUSE); /* the probe */
    assert_int_equal(job_start(&j[1], &r[1]), ASYNC_PAUSE); /* joins it */
    const uint64_t batched = ctr(MBO_CTR_BATCHED);
    assert_int_equal(job_step(&j[1]), ASYNC_FINISH);
    assert_int_equal(job_step(&j[0]), ASYNC_FINISH);
    assert_int_equal(ctr(MBO_CTR_BATCHED), batched + 2);
    for (int i = 0; i < 2; i++) {
        req_check(&r[i]);
        ASYNC_WAIT_CTX_free(j[i].ctx);
    }
    /* They met: the streak is over, lone requests pause again, and the next
     * streak probes every fourth again. */
    assert_int_equal(lone_job(1), ASYNC_PAUSE);
    assert_int_equal(ctr(MBO_CTR_ASYNC_AT_ONCE), at_once + n);
    /* Three more make four lone pauses in a row: three at once, then the
     * probe, the fourth again; with a max wait, and with the rule off, no
     * request runs at once even so. */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(lone_job(1), ASYNC_PAUSE);
    }
    for (int i = 0; i < 3; i++, n++) {
        assert_int_equal(lone_job(1), ASYNC_FINISH);
    }
    assert_int_equal(lone_job(1), ASYNC_PAUSE); /* the probe */
    assert_true(mbo_set_max_wait_us(1));
    assert_int_equal(lone_job(1), ASYNC_PAUSE);
    assert_true(mbo_set_max_wait_us(0));
    mbo_set_lone_at_once(0);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(lone_job(1), ASYNC_PAUSE);
    }
    assert_int_equal(ctr(MBO_CTR_ASYNC_AT_ONCE), at_once + n);
    mbo_set_lone_at_once(1);
}

/* Key generations through mbo_run_jobs in one ASYNC job: an X25519 key
 * pair and a P-256 one (n of them), and an ML-KEM-768 one (8 lanes on
 * every tier) beside them when mixed. */
struct gen_call {
    int mixed;
    mbc_job job[4];
    size_t n;
    uint8_t x_priv[MBC_X25519_LEN], x_pub[MBC_X25519_LEN];
    uint8_t ec_d[32], ec_point[65];
    uint8_t ek[MBC_MLKEM768_EK_LEN], dk[MBC_MLKEM768_DK_LEN];
    mbc_err err;
};

static void gen_init(struct gen_call *g, int mixed)
{
    memset(g, 0, sizeof(*g));
    g->mixed = mixed;
    g->job[0] = (mbc_job){.op = MBC_OP_X25519_KEYGEN,
                          .out = g->x_priv,
                          .out_len = sizeof(g->x_priv),
                          .out2 = g->x_pub,
                          .out2_len = sizeof(g->x_pub)};
    g->job[1] = (mbc_job){.op = MBC_OP_EC_KEYGEN_P256,
                          .out = g->ec_d,
                          .out_len = sizeof(g->ec_d),
                          .out2 = g->ec_point,
                          .out2_len = sizeof(g->ec_point)};
    g->n = 2;
    if (mixed) {
        g->job[g->n++] = (mbc_job){.op = MBC_OP_MLKEM768_KEYGEN,
                                   .out = g->ek,
                                   .out_len = sizeof(g->ek),
                                   .out2 = g->dk,
                                   .out2_len = sizeof(g->dk)};
    }
}

static void gen_check(const struct gen_call *g)
{
    assert_int_equal(g->err, MBC_OK);
    uint8_t pub[MBC_X25519_LEN];
    assert_int_equal(mbc_x25519_public_key(pub, g->x_priv), MBC_OK);
    assert_memory_equal(pub, g->x_pub, sizeof(pub));
    if (g->n >= 2) {
        mbc_ec_pub_key *k = NULL;
        assert_int_equal(mbc_ec_pub_key_new(&k, MBC_CURVE_P256, g->ec_point, sizeof(g->ec_point)),
                         MBC_OK);
        mbc_ec_pub_key_free(k);
    }
}

static int gen_job(void *arg)
{
    struct gen_call *g = *(struct gen_call **)arg;
    mbc_job *jobs[4];
    for (size_t i = 0; i < g->n; i++) {
        jobs[i] = &g->job[i];
    }
    g->err = mbo_run_jobs(jobs, g->n);
    return 1;
}

/* gen_in_job: g's call in an ASYNC job with a wait context, run to the
 * end; returns what its first start gave (ASYNC_PAUSE or ASYNC_FINISH)
 * and sets *fd to the job's wait fd (-1: it never paused). */
static int gen_in_job(struct gen_call *g, int *fd)
{
    ASYNC_WAIT_CTX *w = ASYNC_WAIT_CTX_new();
    ASYNC_JOB *job = NULL;
    int ret = 0;
    assert_non_null(w);
    const int first = ASYNC_start_job(&job, w, &ret, gen_job, &g, sizeof(g));
    struct job view = {.ctx = w};
    *fd = job_fd(&view);
    int st = first;
    while (st == ASYNC_PAUSE) {
        st = ASYNC_start_job(&job, w, &ret, gen_job, &g, sizeof(g));
    }
    assert_int_equal(st, ASYNC_FINISH);
    ASYNC_WAIT_CTX_free(w);
    gen_check(g);
    return first;
}

/* Requests of families whose implementation runs requests one by one
 * (lanes == 1: EC and X25519 once IFMA is removed, on adx or the portable
 * tier) run at once inside a job, every time: no pause, no wait fd, each
 * counted as at once, with the lone-request rule off (it plays no part).
 * A call that also holds a request of an 8-lane family (ML-KEM) pauses as
 * one and batches. Under "auto", such a request is one that mbo_hand_off
 * may hand to OpenSSL inside a job (X25519 derive: its lone path is not
 * claimed). With IFMA (this CPU natively), the same call pauses. */
static void test_runs_alone(void **state)
{
    (void)state;
    mbo_set_lone_at_once(0);
    const uint64_t all = mbc_cpu_restrict(~0ull);
    mbc_cpu_restrict(all & ~MBC_CPU_AVX512IFMA);
    assert_true(mbo_one_lane(MBC_ALG_EC));
    assert_true(mbo_one_lane(MBC_ALG_X25519));
    assert_false(mbo_one_lane(MBC_ALG_MLKEM));
    assert_false(mbo_one_lane(MBC_ALG_RSA));
    struct gen_call g;
    int fd;
    const uint64_t pauses = ctr(MBO_CTR_ASYNC_PAUSES), at_once = ctr(MBO_CTR_ASYNC_AT_ONCE);
    uint64_t n = 0;
    for (int i = 0; i < 6; i++) {
        gen_init(&g, 0);
        g.n = i % 3 == 0 ? 1 : 2; /* X25519 alone, or X25519 with P-256 */
        assert_int_equal(gen_in_job(&g, &fd), ASYNC_FINISH);
        assert_int_equal(fd, -1);
        n += g.n;
        assert_int_equal(ctr(MBO_CTR_ASYNC_PAUSES), pauses);
        assert_int_equal(ctr(MBO_CTR_ASYNC_AT_ONCE), at_once + n);
    }
    gen_init(&g, 1);
    assert_int_equal(gen_in_job(&g, &fd), ASYNC_PAUSE);
    assert_true(fd >= 0);
    assert_int_equal(ctr(MBO_CTR_ASYNC_PAUSES), pauses + 1);
    assert_int_equal(ctr(MBO_CTR_ASYNC_AT_ONCE), at_once + n);

    const char *env = getenv(MBO_SERVE_ENV);
    char *saved = env != NULL ? strdup(env) : NULL;
    unsetenv(MBO_SERVE_ENV);
    mbo_policy_setup("auto");
    struct hand_off_call derive = {MBC_ALG_X25519, MBC_OP_X25519_DERIVE, 255, 0};
    const uint64_t handed = ctr(MBO_CTR_HANDED_OFF);
    assert_false(mbc_impl_lone(derive.alg, derive.op, derive.bits));
    assert_int_equal(hand_off_in_job(&derive), 1);
    assert_int_equal(ctr(MBO_CTR_HANDED_OFF), handed + 1);
    assert_int_equal(ctr(MBO_CTR_ASYNC_AT_ONCE), at_once + n + 1);
    if (saved != NULL) {
        setenv(MBO_SERVE_ENV, saved, 1);
        free(saved);
    }
    mbo_policy_setup(NULL);

    mbc_cpu_restrict(all);
    if (!mbo_one_lane(MBC_ALG_X25519)) {
        gen_init(&g, 0);
        assert_int_equal(gen_in_job(&g, &fd), ASYNC_PAUSE);
        assert_int_equal(ctr(MBO_CTR_ASYNC_PAUSES), pauses + 2);
        assert_int_equal(ctr(MBO_CTR_ASYNC_AT_ONCE), at_once + n + 1);
    }
    mbo_set_lone_at_once(1);
}

/* Four private requests fill a batch: the fourth runs it inside its submit
 * and does not pause; the three paused ones find their results on resume
 * without a flush. */
static void test_batch_of_four(void **state)
{
    (void)state;
    struct rsa_req r[4];
    struct job j[4];
    const uint64_t flushes = ctr(MBO_CTR_ASYNC_FLUSHES), batched = ctr(MBO_CTR_BATCHED);
    for (int i = 0; i < 4; i++) {
        req_init(&r[i], 1);
    }
    for (int i = 0; i < 3; i++) {
        assert_int_equal(job_start(&j[i], &r[i]), ASYNC_PAUSE);
        assert_true(readable(job_fd(&j[i])));
    }
    assert_int_equal(job_start(&j[3], &r[3]), ASYNC_FINISH);
    assert_int_equal(job_fd(&j[3]), -1); /* never paused: no fd */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(job_step(&j[i]), ASYNC_FINISH);
    }
    for (int i = 0; i < 4; i++) {
        req_check(&r[i]);
        ASYNC_WAIT_CTX_free(j[i].ctx);
    }
    assert_int_equal(ctr(MBO_CTR_ASYNC_FLUSHES), flushes);
    assert_int_equal(ctr(MBO_CTR_BATCHED), batched + 4);
}

/* Requests of two classes in one round: the first resumed job runs every
 * partial batch; the second finds its result done. */
static void test_two_classes(void **state)
{
    (void)state;
    struct rsa_req r[2];
    struct job j[2];
    req_init(&r[0], 1);
    req_init(&r[1], 0);
    const uint64_t flushes = ctr(MBO_CTR_ASYNC_FLUSHES);
    assert_int_equal(job_start(&j[0], &r[0]), ASYNC_PAUSE);
    assert_int_equal(job_start(&j[1], &r[1]), ASYNC_PAUSE);
    assert_int_equal(job_step(&j[1]), ASYNC_FINISH);
    assert_int_equal(job_step(&j[0]), ASYNC_FINISH);
    req_check(&r[0]);
    req_check(&r[1]);
    assert_int_equal(ctr(MBO_CTR_ASYNC_FLUSHES), flushes + 1);
    ASYNC_WAIT_CTX_free(j[0].ctx);
    ASYNC_WAIT_CTX_free(j[1].ctx);
}

/* A job torn down while paused: its wait context freed (the fd closed by
 * the context's cleanup); the request stays in the manager until the next
 * flush runs it; nothing touches the freed context. */
static void test_teardown_paused(void **state)
{
    (void)state;
    static struct rsa_req ra; /* the abandoned job keeps a pointer to it */
    struct rsa_req rb;
    struct job a, b;
    req_init(&ra, 1);
    req_init(&rb, 1);
    mbc_mgr *mgr = mbo_thread_mgr(mbo_thread_get(), 0);
    assert_int_equal(job_start(&a, &ra), ASYNC_PAUSE);
    const int fd = job_fd(&a);
    ASYNC_WAIT_CTX_free(a.ctx);
    errno = 0;
    assert_int_equal(fcntl(fd, F_GETFD), -1);
    assert_int_equal(errno, EBADF);
    assert_int_equal(mbc_mgr_pending(mgr), 1);
    /* Another connection's request: its resume runs both. */
    assert_int_equal(job_start(&b, &rb), ASYNC_PAUSE);
    assert_int_equal(job_step(&b), ASYNC_FINISH);
    req_check(&rb);
    assert_int_equal(mbc_mgr_pending(mgr), 0);
    assert_memory_equal(ra.out, ra.want, K); /* the orphan ran too */
    assert_null(mbc_mgr_get_completed(mgr)); /* and its slot was released */
    ASYNC_WAIT_CTX_free(b.ctx);
    /* The paused job itself is OpenSSL's (a torn-down SSL never resumes
     * it): abandoned here as there. */
    MBT_LSAN_IGNORE(a.job);
}

static int run_blocked(void *arg)
{
    ASYNC_block_pause();
    run_req(arg);
    ASYNC_unblock_pause();
    return 0;
}

/* Pausing blocked: the request runs its batch at once. */
static void test_pause_blocked(void **state)
{
    (void)state;
    struct rsa_req r;
    req_init(&r, 1);
    struct rsa_req *rp = &r;
    ASYNC_WAIT_CTX *ctx = ASYNC_WAIT_CTX_new();
    ASYNC_JOB *job = NULL;
    int ret;
    assert_int_equal(ASYNC_start_job(&job, ctx, &ret, run_blocked, &rp, sizeof(rp)), ASYNC_FINISH);
    req_check(&r);
    ASYNC_WAIT_CTX_free(ctx);
}

/* One state per thread, freed at thread exit. */
#define NUM_THREADS 4
static pthread_barrier_t barrier;
static size_t live_inside;

static void *thread_main(void *arg)
{
    struct rsa_req r;
    req_init(&r, 1);
    struct job j;
    int ok = job_start(&j, &r) == ASYNC_PAUSE && job_step(&j) == ASYNC_FINISH && r.err == MBC_OK &&
             memcmp(r.out, r.want, K) == 0;
    ASYNC_WAIT_CTX_free(j.ctx);
    pthread_barrier_wait(&barrier);
    if (arg == NULL) {
        live_inside = mbo_threads_live();
    }
    pthread_barrier_wait(&barrier);
    return ok ? (void *)1 : NULL;
}

static void test_threads(void **state)
{
    (void)state;
    mbo_thread_get();
    const size_t before = mbo_threads_live();
    pthread_t t[NUM_THREADS];
    pthread_barrier_init(&barrier, NULL, NUM_THREADS);
    for (int i = 0; i < NUM_THREADS; i++) {
        assert_int_equal(pthread_create(&t[i], NULL, thread_main, i == 0 ? NULL : &t[i]), 0);
    }
    for (int i = 0; i < NUM_THREADS; i++) {
        void *ok;
        pthread_join(t[i], &ok);
        assert_non_null(ok);
    }
    pthread_barrier_destroy(&barrier);
    assert_int_equal(live_inside, before + NUM_THREADS);
    assert_int_equal(mbo_threads_live(), before);
}

/* A forked child starts with no manager, then works; so does the parent. */
static void test_fork(void **state)
{
    (void)state;
    struct rsa_req r;
    req_init(&r, 1);
    assert_non_null(mbo_thread_get());
    assert_true(mbo_threads_live() >= 1);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int ok = mbo_threads_live() == 0;
        struct job j;
        ok = ok && job_start(&j, &r) == ASYNC_PAUSE && job_step(&j) == ASYNC_FINISH &&
             r.err == MBC_OK && memcmp(r.out, r.want, K) == 0 && mbo_threads_live() == 1;
        _exit(ok ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    struct rsa_req *rp = &r;
    run_req(&rp);
    req_check(&r);
}

/* The counters file holds what mbo_counter_get says (layout of mbo.h). */
static void test_counters_file(void **state)
{
    (void)state;
    mbo_count(MBO_CTR_RSA_REFUSED, 3);
    FILE *f = fopen(counters_path, "rb");
    assert_non_null(f);
    uint8_t buf[16 + 64 * MBO_NUM_COUNTERS];
    assert_int_equal(fread(buf, 1, sizeof(buf), f), sizeof(buf));
    fclose(f);
    assert_memory_equal(buf, "MBOCTR1\n", 8);
    uint64_t n;
    memcpy(&n, buf + 8, 8);
    assert_int_equal(n, MBO_NUM_COUNTERS);
    for (unsigned i = 0; i < MBO_NUM_COUNTERS; i++) {
        uint64_t v;
        assert_string_equal((const char *)buf + 16 + 64 * i, mbo_counter_name(i));
        memcpy(&v, buf + 16 + 64 * i + 56, 8);
        assert_int_equal(v, mbo_counter_get(i));
    }
    assert_true(mbo_counter_get(MBO_CTR_RSA_REFUSED) >= 3);
}

/* ------------------------------------------------------------- AES-GCM */

/* Plain AEAD, in pieces, against OpenSSL's one-shot; a wrong tag fails. */
static void test_gcm_aead(void **state)
{
    (void)state;
    for (size_t key_len = 16; key_len <= 32; key_len += 16) {
        uint8_t key[32], iv[12], aad[20], pt[1000], ct[1000], want[1000], tag[16], wtag[16];
        mbt_rand_bytes(key, sizeof(key));
        mbt_rand_bytes(iv, sizeof(iv));
        mbt_rand_bytes(aad, sizeof(aad));
        mbt_rand_bytes(pt, sizeof(pt));
        EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
        int l;
        assert_true(EVP_EncryptInit_ex(c, mbt_ossl_gcm(key_len), NULL, key, iv) &&
                    EVP_EncryptUpdate(c, NULL, &l, aad, sizeof(aad)) &&
                    EVP_EncryptUpdate(c, want, &l, pt, sizeof(pt)) &&
                    EVP_EncryptFinal_ex(c, want + l, &l) &&
                    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, wtag));
        EVP_CIPHER_CTX_free(c);
        struct mbo_gcm g;
        mbo_gcm_init(&g, 1);
        /* IV before key, as EVP callers may. */
        assert_true(mbo_gcm_set_iv(&g, iv, 12));
        assert_true(mbo_gcm_set_key(&g, key, key_len));
        assert_false(mbo_gcm_get_tag(&g, tag, 16)); /* not before final */
        assert_true(mbo_gcm_update(&g, NULL, aad, 7) && mbo_gcm_update(&g, NULL, aad + 7, 13));
        assert_true(mbo_gcm_update(&g, ct, pt, 333) && mbo_gcm_update(&g, ct + 333, pt + 333, 667));
        assert_true(mbo_gcm_final(&g));
        assert_true(mbo_gcm_get_tag(&g, tag, 16));
        assert_memory_equal(ct, want, sizeof(ct));
        assert_memory_equal(tag, wtag, 16);
        assert_false(mbo_gcm_update(&g, ct, pt, 16)); /* the IV must be set again */
        mbo_gcm_cleanup(&g);
        /* Open, then a forged tag. */
        for (int forge = 0; forge < 2; forge++) {
            uint8_t out[1000];
            mbo_gcm_init(&g, 0);
            assert_true(mbo_gcm_set_key(&g, key, key_len) && mbo_gcm_set_iv(&g, iv, 12));
            wtag[5] ^= (uint8_t)forge;
            assert_true(mbo_gcm_set_tag(&g, wtag, 16));
            assert_true(mbo_gcm_update(&g, NULL, aad, sizeof(aad)) &&
                        mbo_gcm_update(&g, out, ct, sizeof(ct)));
            assert_int_equal(mbo_gcm_final(&g), !forge);
            if (!forge) {
                assert_memory_equal(out, pt, sizeof(pt));
            }
            mbo_gcm_cleanup(&g);
        }
    }
}

/* seal_ossl: OpenSSL's ciphertext and tag of pt (64 bytes) with aad (13). */
static void seal_ossl(size_t key_len, const uint8_t *key, const uint8_t *iv, const uint8_t *aad,
                      const uint8_t *pt, uint8_t *ct, uint8_t *tag)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int l;
    assert_true(EVP_EncryptInit_ex(c, mbt_ossl_gcm(key_len), NULL, key, iv) &&
                EVP_EncryptUpdate(c, NULL, &l, aad, 13) && EVP_EncryptUpdate(c, ct, &l, pt, 64) &&
                EVP_EncryptFinal_ex(c, ct + l, &l) &&
                EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag));
    EVP_CIPHER_CTX_free(c);
}

/* seal_ours: the same through g, re-initialised as EVP callers do for each
 * message: key (NULL: none passed) and IV in the order asked. */
static void seal_ours(struct mbo_gcm *g, size_t key_len, const uint8_t *key, const uint8_t *iv,
                      int iv_first, const uint8_t *aad, const uint8_t *pt, uint8_t *ct,
                      uint8_t *tag)
{
    if (iv_first) {
        assert_true(mbo_gcm_set_iv(g, iv, 12));
    }
    if (key != NULL) {
        assert_true(mbo_gcm_set_key(g, key, key_len));
    }
    if (!iv_first) {
        assert_true(mbo_gcm_set_iv(g, iv, 12));
    }
    assert_true(mbo_gcm_update(g, NULL, aad, 13) && mbo_gcm_update(g, ct, pt, 64));
    assert_true(mbo_gcm_final(g) && mbo_gcm_get_tag(g, tag, 16));
}

/* Re-initialising with the key (the cheap same-key check): the same bytes
 * keep the key object; a key that differs in any one 8-byte word, or in
 * length, gets a new one; no key passed keeps it; key before or after the
 * IV. Every message against OpenSSL's. */
static void test_gcm_rekey(void **state)
{
    (void)state;
    for (size_t key_len = 16; key_len <= 32; key_len += 8) {
        uint8_t key[32], key2[32], iv[12], aad[13], pt[64], ct[64], want[64], tag[16], wtag[16];
        mbt_rand_bytes(key, sizeof(key));
        mbt_rand_bytes(aad, sizeof(aad));
        mbt_rand_bytes(pt, sizeof(pt));
        struct mbo_gcm g;
        mbo_gcm_init(&g, 1);
        for (size_t step = 0; step < 2 + key_len / 8; step++) {
            mbt_rand_bytes(iv, sizeof(iv));
            const struct mbo_gcm_key *before = g.key;
            const uint8_t *k = key;
            if (step == 1) {
                k = NULL; /* no key passed */
            } else if (step >= 2) {
                /* one bit of word step - 2 flipped: a new key */
                memcpy(key2, key, sizeof(key2));
                key2[(step - 2) * 8 + 3] ^= 0x10;
                k = key2;
            }
            seal_ours(&g, key_len, k, iv, (int)(step & 1), aad, pt, ct, tag);
            seal_ossl(key_len, k != NULL ? k : key, iv, aad, pt, want, wtag);
            assert_memory_equal(ct, want, sizeof(ct));
            assert_memory_equal(tag, wtag, 16);
            if (step == 0 && before == NULL) {
                assert_non_null(g.key);
            } else if (step == 1) {
                assert_ptr_equal(g.key, before);
            } else if (step >= 2) {
                assert_ptr_not_equal(g.key, before);
                /* back to the first key: a new object again, then kept */
                const struct mbo_gcm_key *second = g.key;
                seal_ours(&g, key_len, key, iv, 0, aad, pt, ct, tag);
                assert_ptr_not_equal(g.key, second);
                const struct mbo_gcm_key *third = g.key;
                seal_ours(&g, key_len, key, iv, 1, aad, pt, ct, tag);
                assert_ptr_equal(g.key, third);
                seal_ossl(key_len, key, iv, aad, pt, want, wtag);
                assert_memory_equal(ct, want, sizeof(ct));
                assert_memory_equal(tag, wtag, 16);
            }
        }
        /* The same first bytes at another length: a new key object. */
        if (key_len > 16) {
            const struct mbo_gcm_key *before = g.key;
            mbt_rand_bytes(iv, sizeof(iv));
            seal_ours(&g, 16, key, iv, 0, aad, pt, ct, tag);
            assert_ptr_not_equal(g.key, before);
            seal_ossl(16, key, iv, aad, pt, want, wtag);
            assert_memory_equal(ct, want, sizeof(ct));
            assert_memory_equal(tag, wtag, 16);
        }
        mbo_gcm_cleanup(&g);
    }
}

/* ossl_aead: OpenSSL's ciphertext and tag of pt[0..n) with aad[0..a), one
 * piece each, 128-bit key. */
static void ossl_aead(const uint8_t *key, const uint8_t *iv, const uint8_t *aad, size_t a,
                      const uint8_t *pt, size_t n, uint8_t *ct, uint8_t *tag)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int l;
    assert_true(EVP_EncryptInit_ex(c, mbt_ossl_gcm(16), NULL, key, iv) &&
                EVP_EncryptUpdate(c, NULL, &l, aad, (int)a) &&
                EVP_EncryptUpdate(c, ct, &l, pt, (int)n) && EVP_EncryptFinal_ex(c, ct + l, &l) &&
                EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag));
    EVP_CIPHER_CTX_free(c);
}

/* feed: the message through g in the pieces of cut: AAD in two pieces (at
 * a / 2), a zero-length data piece, then data pieces of cut[0], cut[1], ...
 * (0-terminated; the rest in the last). The tag, opening, is set at
 * tag_at: 0 before the data, 1 between the first two data pieces, 2 after
 * the data. Returns final's result. */
static int feed(struct mbo_gcm *g, const uint8_t *aad, size_t a, uint8_t *out, const uint8_t *in,
                size_t n, const size_t *cut, const uint8_t *tag, int tag_at)
{
    assert_true(mbo_gcm_update(g, NULL, aad, a / 2) &&
                mbo_gcm_update(g, NULL, aad + a / 2, a - a / 2));
    assert_true(mbo_gcm_update(g, out, in, 0));
    assert_true(mbo_gcm_update(g, NULL, aad, 0)); /* the AAD may still go on */
    if (!g->enc && tag_at == 0) {
        assert_true(mbo_gcm_set_tag(g, tag, 16));
    }
    size_t at = 0;
    for (int i = 0; at < n; i++) {
        const size_t k = cut[i] != 0 && cut[i] < n - at ? cut[i] : n - at;
        assert_true(mbo_gcm_update(g, out + at, in + at, k));
        at += k;
        if (!g->enc && tag_at == 1 && i == 0) {
            assert_true(mbo_gcm_set_tag(g, tag, 16));
        }
    }
    if (!g->enc && (tag_at == 2 || (tag_at == 1 && n == 0))) {
        assert_true(mbo_gcm_set_tag(g, tag, 16));
    }
    if (n > 0) {
        assert_false(mbo_gcm_update(g, NULL, aad, 1)); /* no AAD after the data */
    }
    return mbo_gcm_final(g);
}

/* Messages around the one-shot path's limits (mbo.h: AAD held up to
 * MBO_GCM_AAD_MAX bytes, a first data piece up to MBO_GCM_ONESHOT_MAX in one
 * call) against OpenSSL: one data piece, or a first one that the message
 * then goes on from (replayed into the streaming context); in place;
 * opening with the tag set before, within and after the data; forged tags
 * fail and release the plaintext OpenSSL releases. */
static void test_gcm_oneshot(void **state)
{
    (void)state;
    static const size_t aads[] = {0, 13, MBO_GCM_AAD_MAX, MBO_GCM_AAD_MAX + 1, 100};
    static const size_t lens[] = {
        0, 1, 16, 64, 1000, MBO_GCM_ONESHOT_MAX, MBO_GCM_ONESHOT_MAX + 1, 3000};
    static const size_t cuts[][3] = {{0}, {1, 0}, {17, 500, 0}, {MBO_GCM_ONESHOT_MAX, 0}};
    uint8_t key[16], iv[12], aad[100], pt[3000], want[3000], wtag[16], ct[3000], back[3000];
    uint8_t tag[16];
    mbt_rand_bytes(key, sizeof(key));
    mbt_rand_bytes(iv, sizeof(iv));
    mbt_rand_bytes(aad, sizeof(aad));
    mbt_rand_bytes(pt, sizeof(pt));
    struct mbo_gcm s, o;
    mbo_gcm_init(&s, 1);
    mbo_gcm_init(&o, 0);
    assert_true(mbo_gcm_set_key(&s, key, 16) && mbo_gcm_set_key(&o, key, 16));
    for (size_t ai = 0; ai < sizeof(aads) / sizeof(aads[0]); ai++) {
        for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
            const size_t a = aads[ai], n = lens[li];
            ossl_aead(key, iv, aad, a, pt, n, want, wtag);
            for (size_t ci = 0; ci < sizeof(cuts) / sizeof(cuts[0]); ci++) {
                /* Sealing, in place every other time. */
                uint8_t *out = ci & 1 ? ct : back;
                memcpy(back, pt, n);
                assert_true(mbo_gcm_set_iv(&s, iv, 12));
                assert_int_equal(feed(&s, aad, a, out, ci & 1 ? pt : back, n, cuts[ci], NULL, 0),
                                 1);
                assert_true(mbo_gcm_get_tag(&s, tag, 16));
                assert_memory_equal(out, want, n);
                assert_memory_equal(tag, wtag, 16);
                /* Opening, the tag set at each point, then forged. */
                for (int at = 0; at < 3; at++) {
                    for (int forge = 0; forge < 2; forge++) {
                        wtag[at * 5] ^= (uint8_t)forge;
                        memcpy(back, want, n);
                        assert_true(mbo_gcm_set_iv(&o, iv, 12));
                        assert_int_equal(feed(&o, aad, a, back, back, n, cuts[ci], wtag, at),
                                         !forge);
                        assert_memory_equal(back, pt, n);
                        wtag[at * 5] ^= (uint8_t)forge;
                    }
                }
            }
        }
    }
    /* A copy made after a one-shot piece finishes the message too. */
    ossl_aead(key, iv, aad, 13, pt, 300, want, wtag);
    assert_true(mbo_gcm_set_iv(&s, iv, 12));
    assert_true(mbo_gcm_update(&s, NULL, aad, 13) && mbo_gcm_update(&s, ct, pt, 100));
    struct mbo_gcm d;
    mbo_gcm_dup(&d, &s);
    for (int i = 0; i < 2; i++) {
        struct mbo_gcm *g = i == 0 ? &d : &s;
        memset(ct + 100, 0, 200);
        assert_true(mbo_gcm_update(g, ct + 100, pt + 100, 200) && mbo_gcm_final(g) &&
                    mbo_gcm_get_tag(g, tag, 16));
        assert_memory_equal(ct, want, 300);
        assert_memory_equal(tag, wtag, 16);
    }
    mbo_gcm_cleanup(&d);
    mbo_gcm_cleanup(&s);
    mbo_gcm_cleanup(&o);
}

/* TLS 1.2 records: ours seals, OpenSSL opens and the other way round; the
 * AAD's record length, truncated and forged records. */
static void test_gcm_tls(void **state)
{
    (void)state;
    for (size_t key_len = 16; key_len <= 32; key_len += 16) {
        uint8_t key[32], iv[12], aad[13], rec[8 + 500 + 16], pt[500];
        mbt_rand_bytes(key, sizeof(key));
        mbt_rand_bytes(iv, sizeof(iv));
        mbt_rand_bytes(aad, sizeof(aad));
        mbt_rand_bytes(pt, sizeof(pt));
        const size_t n = sizeof(pt), len = sizeof(rec);
        /* Ours seals with the whole IV given (so OpenSSL can open: the
         * explicit IV travels in the record anyway). */
        struct mbo_gcm g;
        size_t out_len;
        mbo_gcm_init(&g, 1);
        assert_true(mbo_gcm_set_key(&g, key, key_len));
        assert_true(mbo_gcm_set_iv_fixed(&g, iv, (size_t)-1));
        aad[11] = (uint8_t)((n + 8) >> 8);
        aad[12] = (uint8_t)(n + 8);
        assert_int_equal(mbo_gcm_tls_aad(&g, aad, 13), 16);
        memcpy(rec + 8, pt, n);
        assert_true(mbo_gcm_tls_record(&g, rec, len, &out_len));
        assert_int_equal(out_len, len);
        assert_memory_equal(rec, iv + 4, 8); /* the explicit IV */
        /* Records count on: the next one's explicit IV is one more. */
        uint8_t next[8];
        assert_true(mbo_gcm_iv_gen(&g, next, 8));
        assert_int_equal(next[7], (uint8_t)(iv[11] + 1));
        mbo_gcm_cleanup(&g);
        uint8_t daad[13];
        memcpy(daad, aad, 13);
        daad[11] = (uint8_t)(len >> 8);
        daad[12] = (uint8_t)len;
        uint8_t copy[sizeof(rec)];
        memcpy(copy, rec, len);
        assert_int_equal(mbt_ossl_gcm_tls_record(NULL, key_len, key, iv, -1, 0, daad, copy, len),
                         (int)len);
        assert_memory_equal(copy + 8, pt, n);
        /* Ours opens: the record as sealed, truncated, forged. */
        for (int t = 0; t < 4; t++) {
            memcpy(copy, rec, len);
            size_t l = len;
            if (t == 2) {
                copy[100] ^= 1;
            }
            if (t == 3) {
                l = 20; /* shorter than explicit IV and tag */
            }
            uint8_t a[13];
            memcpy(a, daad, 13);
            if (t == 1) {
                a[12] ^= 1; /* the AAD's length is not the record's */
            }
            mbo_gcm_init(&g, 0);
            assert_true(mbo_gcm_set_key(&g, key, key_len));
            assert_true(mbo_gcm_set_iv_fixed(&g, iv, 4));
            if (t == 3) {
                a[11] = 0;
                a[12] = 24;
            }
            assert_int_equal(mbo_gcm_tls_aad(&g, a, 13), 16);
            assert_int_equal(mbo_gcm_tls_record(&g, copy, l, &out_len), t == 0);
            if (t == 0) {
                assert_int_equal(out_len, n);
                assert_memory_equal(copy + 8, pt, n);
            } else {
                assert_int_equal(out_len, 0);
            }
            if (t == 2) {
                uint8_t zero[500] = {0};
                assert_memory_equal(copy + 8, zero, n); /* no plaintext released */
            }
            mbo_gcm_cleanup(&g);
        }
        /* A malformed AAD: a record length below the explicit IV. */
        mbo_gcm_init(&g, 1);
        aad[11] = 0;
        aad[12] = 7;
        assert_int_equal(mbo_gcm_tls_aad(&g, aad, 13), 0);
        assert_int_equal(mbo_gcm_tls_aad(&g, aad, 12), 0);
        mbo_gcm_cleanup(&g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy),        cmocka_unit_test(test_hand_off),
        cmocka_unit_test(test_outside_job),   cmocka_unit_test(test_lone_request),
        cmocka_unit_test(test_max_wait),      cmocka_unit_test(test_batch_of_four),
        cmocka_unit_test(test_two_classes),   cmocka_unit_test(test_teardown_paused),
        cmocka_unit_test(test_pause_blocked), cmocka_unit_test(test_threads),
        cmocka_unit_test(test_fork),          cmocka_unit_test(test_counters_file),
        cmocka_unit_test(test_gcm_aead),      cmocka_unit_test(test_gcm_tls),
        cmocka_unit_test(test_lone_at_once),  cmocka_unit_test(test_gcm_rekey),
        cmocka_unit_test(test_gcm_oneshot),   cmocka_unit_test(test_runs_alone),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
