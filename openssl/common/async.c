/*
 * async.c - mbo_run_jobs: requests through the calling thread's lane
 * manager, pausing the OpenSSL ASYNC job they run in (see mbo.h for the
 * contract). The requests of one call (a hybrid's ML-KEM and X25519 parts)
 * are submitted together and wait together: one pause for all of them.
 *
 * The wake logic in one place:
 *  1. submit to the thread's batch manager; submits that fill their classes
 *     run those batches at once (when every request ran so: no pause);
 *  2. otherwise make the job's wait fd readable *now* and pause: the event
 *     loop sees the fd at its next poll and resumes the job after the other
 *     events of that round, whose requests join the same manager;
 *  3. on resume, read the fd back to empty; if a request has not run yet
 *     (nobody filled its class meanwhile), run the manager's partial batches:
 *     the requests and every other one waiting in this thread.
 * So a lone request waits one round of the event loop (a poll that returns
 * at once), never a timer, and requests arriving in the same round batch.
 * With a max wait set (mbo_set_max_wait_us), step 3 pauses again instead of
 * running the batches until the request has waited that long.
 *
 * The lone-request rule (no max wait set): a pause whose requests nobody
 * joined (no other request submitted on the thread while they waited) cost an
 * event-loop round for nothing: in HAProxy about 50 us of server CPU per
 * pause, a tenth of a one-connection TLS handshake. After LONE_AFTER such
 * pauses in a row, requests that find the thread's batch manager empty
 * run at once (on the sync manager, as outside a job); every LONE_PROBE-th
 * such call pauses still, to learn whether requests meet again: one that
 * meets another ends the streak, and every request pauses again.
 *
 * One-lane implementations: requests whose family is served by an
 * implementation that runs requests one by one (mbc_impl_info's lanes == 1:
 * the scalar adx tiers of EC and X25519 on CPUs without IFMA, the portable
 * ones) would wait an event-loop round to run alone all the same, so they
 * run at once on the sync manager, counted as async-at-once, without
 * touching the rule's streak or probes. A call whose jobs are not all such
 * (a hybrid's X25519 part beside its ML-KEM part) pauses as one: it waits
 * for its batched part anyway, and its one-lane parts wait with it.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <openssl/async.h>

#include "mbo_local.h"

const char mbo_wait_key = 0;

static uint32_t max_wait_us; /* mbo_set_max_wait_us (atomic) */
static int lone_at_once = 1; /* mbo_set_lone_at_once (atomic) */

#define LONE_AFTER 4 /* lone pauses in a row before lone requests run at once */
#define LONE_PROBE 4 /* then every LONE_PROBE-th lone request pauses, */
#define LONE_PROBE_MAX                                                                             \
    64 /* the interval doubling, up to this, after each                                            \
        * probe that nobody joined */

/* The calling thread's record for the rule (a job resumed on another
 * thread counts for neither). */
static __thread struct {
    unsigned streak;   /* pauses in a row that nobody joined */
    unsigned at_once;  /* lone requests run at once since the last probe */
    unsigned interval; /* the probe interval less LONE_PROBE (0: LONE_PROBE) */
    uint64_t submits;  /* requests submitted to this thread's batch manager */
} lone;

/* lone_reset: the streak over; lone requests pause again. */
static void lone_reset(void)
{
    lone.streak = 0;
    lone.at_once = 0;
    lone.interval = 0;
}

void mbo_set_lone_at_once(int on)
{
    __atomic_store_n(&lone_at_once, on != 0, __ATOMIC_RELAXED);
    lone_reset();
}

/* lone_streak: whether the rule is on and the thread on a streak of lone
 * pauses, with mgr (its batch manager) empty. */
static int lone_streak(mbc_mgr *mgr, uint32_t max_wait)
{
    return max_wait == 0 && __atomic_load_n(&lone_at_once, __ATOMIC_RELAXED) &&
           lone.streak >= LONE_AFTER && mbc_mgr_pending(mgr) == 0;
}

/* lone_run_at_once: whether requests about to be submitted to mgr (the
 * thread's batch manager, empty or not) run at once instead. */
static int lone_run_at_once(mbc_mgr *mgr, uint32_t max_wait)
{
    if (!lone_streak(mgr, max_wait)) {
        return 0;
    }
    if (++lone.at_once >= LONE_PROBE + lone.interval) {
        lone.at_once = 0;
        return 0; /* the probe */
    }
    return 1;
}

/* lone_note: paused requests completed; met: another request was
 * submitted on the thread while they waited. */
static void lone_note(int met)
{
    if (met) {
        lone_reset();
    } else if (lone.streak < LONE_AFTER) {
        lone.streak++;
    } else {
        /* A probe nobody joined: the next one twice as far away. */
        const unsigned next = 2 * (LONE_PROBE + lone.interval);
        lone.interval = (next < LONE_PROBE_MAX ? next : LONE_PROBE_MAX) - LONE_PROBE;
    }
}

int mbo_set_max_wait_us(uint32_t us)
{
    if (us > MBO_MAX_WAIT_US_MAX) {
        return 0;
    }
    __atomic_store_n(&max_wait_us, us, __ATOMIC_RELAXED);
    return 1;
}

uint32_t mbo_max_wait_us(void)
{
    return __atomic_load_n(&max_wait_us, __ATOMIC_RELAXED);
}

/* wait_parse: s as a max wait (digits only, at most MBO_MAX_WAIT_US_MAX). */
static int wait_parse(const char *s, uint32_t *us)
{
    uint32_t v = 0;
    if (s == NULL || *s == '\0') {
        return 0;
    }
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9' || (v = v * 10 + (uint32_t)(*s - '0')) > MBO_MAX_WAIT_US_MAX) {
            return 0;
        }
    }
    *us = v;
    return 1;
}

static int wait_valid(const char *s)
{
    uint32_t us;
    return wait_parse(s, &us);
}

int mbo_max_wait_check(const char *cfg, char *why, size_t len)
{
    char allowed[48];
    snprintf(allowed, sizeof(allowed), "a number of microseconds 0..%u", MBO_MAX_WAIT_US_MAX);
    return mbo_setting_check(MBO_MAX_WAIT_ENV, "max-wait-us setting", cfg, wait_valid, allowed, why,
                             len);
}

void mbo_max_wait_setup(const char *cfg)
{
    uint32_t us;
    if (wait_parse(getenv(MBO_MAX_WAIT_ENV), &us) || wait_parse(cfg, &us)) {
        mbo_set_max_wait_us(us);
    }
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int req_done(const struct mbo_req *r)
{
    return __atomic_load_n(&r->done, __ATOMIC_ACQUIRE) >= r->jobs;
}

size_t mbo_drain(mbc_mgr *mgr)
{
    size_t n = 0;
    for (mbc_job *j; (j = mbc_mgr_get_completed(mgr)) != NULL; n++) {
        struct mbo_req *r = j->user_data;
        __atomic_fetch_add(&r->done, 1, __ATOMIC_RELEASE);
    }
    return n;
}

/* drain_counted: mbo_drain, counting requests that completed with others. */
static void drain_counted(mbc_mgr *mgr)
{
    const size_t n = mbo_drain(mgr);
    if (n > 1) {
        mbo_count(MBO_CTR_BATCHED, n);
    }
}

static void close_wait_fd(ASYNC_WAIT_CTX *ctx, const void *key, OSSL_ASYNC_FD fd, void *custom)
{
    (void)ctx;
    (void)key;
    (void)custom;
    close(fd);
}

/* wait_fd: the eventfd of ctx, made and registered on first use; -1 if that
 * fails. */
static int wait_fd(ASYNC_WAIT_CTX *ctx)
{
    OSSL_ASYNC_FD fd;
    void *custom;
    if (ASYNC_WAIT_CTX_get_fd(ctx, &mbo_wait_key, &fd, &custom)) {
        return fd;
    }
    fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    if (!ASYNC_WAIT_CTX_set_wait_fd(ctx, &mbo_wait_key, fd, NULL, close_wait_fd)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* signal_fd: makes fd readable. */
static int signal_fd(int fd)
{
    const uint64_t one = 1;
    ssize_t r;
    do {
        r = write(fd, &one, sizeof(one));
    } while (r < 0 && errno == EINTR);
    /* EAGAIN: the counter is at its maximum, so the fd is readable anyway. */
    return r == (ssize_t)sizeof(one) || (r < 0 && errno == EAGAIN);
}

/* clear_fd: reads ctx's fd back to empty (after a resume: the context is
 * looked up again, it is the one the job runs with now). */
static void clear_fd(ASYNC_JOB *aj)
{
    ASYNC_WAIT_CTX *ctx = ASYNC_get_wait_ctx(aj);
    OSSL_ASYNC_FD fd;
    void *custom;
    if (ctx != NULL && ASYNC_WAIT_CTX_get_fd(ctx, &mbo_wait_key, &fd, &custom)) {
        uint64_t v;
        while (read(fd, &v, sizeof(v)) < 0 && errno == EINTR) {
        }
    }
}

/* A manager call, run by mbo_thread_call (on the thread's own stack inside
 * an ASYNC job): n jobs submitted (0: flush); accepted: how many were. */
struct call {
    mbc_mgr *mgr;
    mbc_job *const *jobs;
    size_t n, accepted;
    mbc_err err;
};

static void call_mgr(void *arg)
{
    struct call *c = arg;
    c->err = MBC_OK;
    if (c->n == 0) {
        mbc_mgr_flush(c->mgr);
    }
    while (c->accepted < c->n) {
        c->err = mbc_mgr_submit(c->mgr, c->jobs[c->accepted]);
        if (c->err != MBC_OK) {
            return;
        }
        c->accepted++;
    }
}

/* submit: the n jobs submitted to mgr in order, then the completed jobs
 * drained (counted as batched only from the batch manager: the sync one
 * ran each alone). req->jobs becomes the number accepted (the jobs after a
 * refused one are not submitted); returns MBC_OK or the refusal's error. */
static mbc_err submit(struct mbo_thread *t, mbc_mgr *mgr, mbc_job *const jobs[], size_t n,
                      struct mbo_req *req, int in_job)
{
    struct call c = {mgr, jobs, n, 0, MBC_ERR_NO_MEMORY};
    if (!mbo_thread_call(t, call_mgr, &c, in_job)) {
        c.err = MBC_ERR_NO_MEMORY;
    }
    req->jobs = c.accepted;
    if (mgr == mbo_thread_mgr(t, 1)) {
        mbo_drain(mgr);
    } else {
        drain_counted(mgr);
    }
    return c.err;
}

/* flush: mbc_mgr_flush(mgr), then the completed jobs drained. Only after a
 * submit to mgr on this thread (the stack is there). */
static void flush(struct mbo_thread *t, mbc_mgr *mgr, int in_job)
{
    struct call c = {mgr, NULL, 0, 0, MBC_OK};
    mbo_thread_call(t, call_mgr, &c, in_job);
    drain_counted(mgr);
    mbo_count(MBO_CTR_ASYNC_FLUSHES, 1);
}

int mbo_call(void (*fn)(void *), void *arg)
{
    if (ASYNC_get_current_job() == NULL) {
        fn(arg);
        return 1;
    }
    struct mbo_thread *t = mbo_thread_get();
    return t != NULL && mbo_thread_call(t, fn, arg, 1);
}

int mbo_batching(void)
{
    ASYNC_JOB *aj = ASYNC_get_current_job();
    return aj != NULL && ASYNC_get_wait_ctx(aj) != NULL;
}

int mbo_one_lane(mbc_alg alg)
{
    const mbc_impl_info *info = mbc_impl_get_info(alg);
    return info != NULL && info->lanes == 1;
}

/* one_lane_jobs: whether every one of the n jobs is of a family that
 * mbo_one_lane says runs its requests one by one (an unknown op: no, the
 * manager refuses it). */
static int one_lane_jobs(mbc_job *const jobs[], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mbc_alg alg;
        switch (jobs[i]->op) {
        case MBC_OP_RSA_PRIVATE:
        case MBC_OP_RSA_PUBLIC:
            alg = MBC_ALG_RSA;
            break;
        case MBC_OP_ECDSA_SIGN:
        case MBC_OP_ECDSA_VERIFY:
        case MBC_OP_ECDH:
        case MBC_OP_EC_KEYGEN_P256:
        case MBC_OP_EC_KEYGEN_P384:
            alg = MBC_ALG_EC;
            break;
        case MBC_OP_X25519_DERIVE:
        case MBC_OP_X25519_KEYGEN:
        case MBC_OP_X25519_PUBLIC_KEY:
            alg = MBC_ALG_X25519;
            break;
        case MBC_OP_MLKEM768_KEYGEN:
        case MBC_OP_MLKEM768_KEYGEN_SEED:
        case MBC_OP_MLKEM768_ENCAPS:
        case MBC_OP_MLKEM768_DECAPS:
            alg = MBC_ALG_MLKEM;
            break;
        default:
            return 0;
        }
        if (!mbo_one_lane(alg)) {
            return 0;
        }
    }
    return n > 0;
}

int mbo_lone_now(mbc_alg alg)
{
    struct mbo_thread *t = mbo_batching() ? mbo_thread_get() : NULL;
    if (t == NULL) {
        return 0;
    }
    /* The next request runs at once if its implementation has one lane, or
     * if the rule runs it at once and it is not the probe: the decision
     * mbo_run_jobs would make, taken here for the request. */
    if (!mbo_one_lane(alg)) {
        if (!lone_streak(mbo_thread_mgr(t, 0), mbo_max_wait_us()) ||
            lone.at_once + 1 >= LONE_PROBE + lone.interval) {
            return 0;
        }
        lone.at_once++;
    }
    mbo_count(MBO_CTR_ASYNC_AT_ONCE, 1);
    return 1;
}

/* status: the first error among the jobs' statuses, else MBC_OK. */
static mbc_err status(mbc_job *const jobs[], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (jobs[i]->status != MBC_OK) {
            return jobs[i]->status;
        }
    }
    return MBC_OK;
}

/* at_once: the jobs on the sync manager (each runs as it is submitted). */
static mbc_err at_once(struct mbo_thread *t, mbc_job *const jobs[], size_t n, struct mbo_req *req,
                       int in_job)
{
    const mbc_err err = submit(t, mbo_thread_mgr(t, 1), jobs, n, req, in_job);
    return err != MBC_OK ? err : status(jobs, n);
}

mbc_err mbo_run_jobs(mbc_job *const jobs[], size_t n)
{
    struct mbo_thread *t = mbo_thread_get();
    if (t == NULL) {
        return MBC_ERR_NO_MEMORY;
    }
    struct mbo_req req = {0, n};
    for (size_t i = 0; i < n; i++) {
        jobs[i]->user_data = &req;
    }
    ASYNC_JOB *aj = ASYNC_get_current_job();
    ASYNC_WAIT_CTX *ctx = aj != NULL ? ASYNC_get_wait_ctx(aj) : NULL;
    if (ctx == NULL) {
        /* No job, or no way to wake one: the single-request path now. */
        return at_once(t, jobs, n, &req, aj != NULL);
    }
    if (one_lane_jobs(jobs, n)) {
        mbo_count(MBO_CTR_ASYNC_AT_ONCE, n);
        return at_once(t, jobs, n, &req, 1);
    }
    mbc_mgr *mgr = mbo_thread_mgr(t, 0);
    const uint32_t max_wait = mbo_max_wait_us();
    if (lone_run_at_once(mgr, max_wait)) {
        mbo_count(MBO_CTR_ASYNC_AT_ONCE, n);
        return at_once(t, jobs, n, &req, 1);
    }
    lone.submits += n;
    const uint64_t seq = lone.submits;
    const mbc_err err = submit(t, mgr, jobs, n, &req, 1);
    const uint64_t t0 = max_wait != 0 ? now_us() : 0;
    int waited = 0;
    while (!req_done(&req)) {
        /* The fd joins the wait context only for a job that really pauses:
         * event loops learn of it from that pause (HAProxy deletes, at
         * close, every fd of the context from its poller). */
        const int fd = ctx != NULL ? wait_fd(ctx) : -1;
        const int paused = fd >= 0 && signal_fd(fd);
        if (paused) {
            waited = 1;
            mbo_count(MBO_CTR_ASYNC_PAUSES, 1);
            ASYNC_pause_job(); /* returns at once when pausing is blocked */
            clear_fd(aj);
            if (req_done(&req)) {
                break;
            }
        }
        /* Nothing filled the classes meanwhile: run the partial batches, if
         * this is still the thread whose manager holds the requests (and
         * they may wait no longer). A job resumed on another thread pauses
         * again until that one runs them. */
        if (mbo_thread_get() == t) {
            if (paused && max_wait != 0 && now_us() - t0 < max_wait) {
                continue;
            }
            flush(t, mgr, 1);
            continue;
        }
        ctx = ASYNC_get_wait_ctx(aj);
        if (ctx == NULL) {
            sched_yield();
        }
    }
    if (waited && mbo_thread_get() == t) {
        lone_note(lone.submits != seq);
    }
    return err != MBC_OK ? err : status(jobs, n);
}

mbc_err mbo_run(mbc_job *job)
{
    return mbo_run_jobs(&job, 1);
}
