/*
 * loops.c - the run loops every public-key workload shares: timed units
 * (one call, its latency, its check), and K requests in flight through a
 * lane manager, closed loop. The workloads (bench_rsa.c, bench_ec.c) give
 * the calls and the checks; these loops give the timing.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static uint64_t deadline(uint64_t start, double seconds)
{
    return start + (uint64_t)(seconds * 1e9);
}

int bench_timed_run(void *ts, unsigned op, double seconds, run_out *out, bench_unit unit)
{
    const uint64_t start = bench_now_ns(), end = deadline(start, seconds);
    uint64_t t0 = start, t1;
    do {
        const int n = unit(ts, op, &t1);
        if (n < 0) {
            return -1;
        }
        run_out_lat(out, t1 - t0);
        out->ops += (uint64_t)n;
        t0 = bench_now_ns();
    } while (t1 < end);
    out->elapsed = (double)(t1 - start) * 1e-9;
    return 0;
}

void bench_jobs_free(bench_jobs *b)
{
    free(b->jobs);
    free(b->out);
    free(b->t_submit);
    free(b->free_jobs);
    memset(b, 0, sizeof(*b));
}

/* jobs_reserve: room for k jobs with out and out2 buffers of out_size. */
static int jobs_reserve(bench_jobs *b, size_t k, size_t out_size)
{
    if (b->cap >= k && b->out_size == out_size) {
        return 0;
    }
    bench_jobs_free(b);
    b->jobs = calloc(k, sizeof(*b->jobs));
    b->out = calloc(k, 2 * out_size);
    b->t_submit = calloc(k, sizeof(*b->t_submit));
    b->free_jobs = calloc(k, sizeof(*b->free_jobs));
    if (b->jobs == NULL || b->out == NULL || b->t_submit == NULL || b->free_jobs == NULL) {
        bench_jobs_free(b);
        return bench_fail("out of memory");
    }
    b->cap = k;
    b->out_size = out_size;
    return 0;
}

/* job_init: job j of op, with its buffers and its submit-time slot. */
static void job_init(void *ts, bench_jobs *b, const bench_mgr_fns *fns, unsigned op, unsigned j)
{
    mbc_job *job = &b->jobs[j];
    memset(job, 0, sizeof(*job));
    uint8_t *out = b->out + (size_t)j * 2 * b->out_size;
    fns->init(ts, op, j, job, out, out + b->out_size);
    job->user_data = &b->t_submit[j];
}

/* job_check: a completed job is one of ours and passes the workload's check. */
static int job_check(void *ts, const bench_jobs *b, const bench_mgr_fns *fns, unsigned op,
                     const mbc_job *job)
{
    const size_t j = (size_t)(job - b->jobs);
    if (j >= b->cap || job->user_data != &b->t_submit[j]) {
        return bench_fail("%s, manager: a completed job is not ours", fns->label(ts, op));
    }
    if (job->status != MBC_OK) {
        return bench_fail("%s, manager: job %zu completed with %s", fns->label(ts, op), j,
                          mbc_err_str(job->status));
    }
    return fns->check(ts, op, job, (unsigned)j);
}

/*
 * drain: collects every completed job: latency from its submission to now,
 * result checked, job back on the free list. Returns the number collected,
 * or -1. *last: the time of the last collection.
 */
static long drain(void *ts, bench_jobs *b, const bench_mgr_fns *fns, mbc_mgr *mgr, unsigned op,
                  unsigned *num_free, run_out *out, uint64_t *last)
{
    long n = 0;
    mbc_job *job;
    while ((job = mbc_mgr_get_completed(mgr)) != NULL) {
        const uint64_t now = bench_now_ns();
        if (job_check(ts, b, fns, op, job) != 0) {
            return -1;
        }
        const size_t j = (size_t)(job - b->jobs);
        run_out_lat(out, now - b->t_submit[j]);
        b->free_jobs[(*num_free)++] = (unsigned)j;
        *last = now;
        n++;
    }
    return n;
}

int bench_run_mgr(void *ts, bench_jobs *b, const bench_mgr_fns *fns, unsigned op, unsigned k,
                  double seconds, run_out *out)
{
    if (jobs_reserve(b, k, fns->out_size) != 0) {
        return -1;
    }
    mbc_mgr *mgr = NULL;
    const mbc_mgr_config cfg = {.max_wait_us = 0, .flags = 0};
    mbc_err err = mbc_mgr_new(&mgr, &cfg);
    if (err != MBC_OK) {
        return bench_fail("mbc_mgr_new: %s", mbc_err_str(err));
    }
    unsigned num_free = 0;
    for (unsigned j = k; j-- > 0;) {
        job_init(ts, b, fns, op, j);
        b->free_jobs[num_free++] = j;
    }
    int rc = 0;
    const uint64_t start = bench_now_ns(), end = deadline(start, seconds);
    uint64_t last = start;
    while (rc == 0) {
        while (num_free > 0) {
            const unsigned j = b->free_jobs[--num_free];
            memset(b->out + (size_t)j * 2 * b->out_size, 0, 2 * b->out_size);
            b->t_submit[j] = bench_now_ns();
            err = mbc_mgr_submit(mgr, &b->jobs[j]);
            if (err != MBC_OK) {
                rc = bench_fail("mbc_mgr_submit: %s", mbc_err_str(err));
                break;
            }
        }
        long n = rc == 0 ? drain(ts, b, fns, mgr, op, &num_free, out, &last) : 0;
        if (n == 0 && rc == 0) {
            mbc_mgr_flush(mgr);
            n = drain(ts, b, fns, mgr, op, &num_free, out, &last);
            if (n == 0) {
                rc = bench_fail("%s, manager: nothing completed after a flush with %u jobs in "
                                "flight",
                                fns->label(ts, op), k);
            }
        }
        if (n < 0) {
            rc = -1;
        }
        if (rc == 0) {
            out->ops += (uint64_t)n;
        }
        if (last >= end) {
            break;
        }
    }
    out->elapsed = (double)(last - start) * 1e-9;
    mbc_mgr_flush(mgr);
    while (mbc_mgr_get_completed(mgr) != NULL) {
    }
    mbc_mgr_free(mgr);
    return rc;
}

int bench_check_mgr(void *ts, bench_jobs *b, const bench_mgr_fns *fns, unsigned op)
{
    if (jobs_reserve(b, 1, fns->out_size) != 0) {
        return -1;
    }
    mbc_mgr *mgr = NULL;
    mbc_err err = mbc_mgr_new(&mgr, NULL);
    if (err != MBC_OK) {
        return bench_fail("mbc_mgr_new: %s", mbc_err_str(err));
    }
    job_init(ts, b, fns, op, 0);
    memset(b->out, 0, 2 * b->out_size);
    err = mbc_mgr_submit(mgr, &b->jobs[0]);
    mbc_mgr_flush(mgr);
    mbc_job *job = mbc_mgr_get_completed(mgr);
    int rc = 0;
    if (err != MBC_OK) {
        rc = bench_fail("mbc_mgr_submit: %s", mbc_err_str(err));
    } else if (job != &b->jobs[0] || mbc_mgr_get_completed(mgr) != NULL) {
        rc = bench_fail("%s, manager: one job submitted and flushed, but the manager did not "
                        "return exactly it",
                        fns->label(ts, op));
    } else {
        rc = job_check(ts, b, fns, op, job);
    }
    mbc_mgr_free(mgr);
    return rc;
}

/* pool_run: a thread state and its family's pool, as bench_timed_run's
 * units see them. */
struct pool_run {
    void *ts;
    const bench_pool *pool;
};

/* pool_check: the full check of one result in BENCH_SAMPLE. */
static int pool_full(bench_pool_pos *pos)
{
    return ++pos->sample % BENCH_SAMPLE == 0;
}

/* pool_check_mb8: lane statuses and results of an 8-lane call on
 * requests e0..e0+7; full: every result fully checked, else lane 0's once
 * in BENCH_SAMPLE. */
static int pool_check_mb8(void *ts, const bench_pool *p, unsigned op, unsigned e0, mbc_status st,
                          int full)
{
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if (mbc_lane_code(st, l) != MBC_LANE_OK) {
            return bench_fail("%s %s, 8 lanes: lane %u returned %s", p->name, p->ops[op], l,
                              mbc_lane_code_str(mbc_lane_code(st, l)));
        }
        if (p->check(ts, op, e0 + l, l, full || (l == 0 && pool_full(ts))) != 0) {
            return -1;
        }
    }
    return 0;
}

static int pool_check_single(void *ts, const bench_pool *p, unsigned op, unsigned e, mbc_err err,
                             int full)
{
    if (err != MBC_OK) {
        return bench_fail("%s %s, single call: %s", p->name, p->ops[op], mbc_err_str(err));
    }
    return p->check(ts, op, e, 0, full || pool_full(ts));
}

static int pool_unit_mb8(void *r, unsigned op, uint64_t *t_done)
{
    const struct pool_run *pr = r;
    bench_pool_pos *pos = pr->ts;
    const unsigned e0 = pos->next8;
    pos->next8 = (pos->next8 + MBC_LANES) % pr->pool->size;
    const mbc_status st = pr->pool->mb8(pr->ts, op, e0);
    *t_done = bench_now_ns();
    return pool_check_mb8(pr->ts, pr->pool, op, e0, st, 0) != 0 ? -1 : MBC_LANES;
}

static int pool_unit_single(void *r, unsigned op, uint64_t *t_done)
{
    const struct pool_run *pr = r;
    bench_pool_pos *pos = pr->ts;
    const unsigned e = pos->next;
    pos->next = (pos->next + 1) % pr->pool->size;
    const mbc_err err = pr->pool->single(pr->ts, op, e);
    *t_done = bench_now_ns();
    return pool_check_single(pr->ts, pr->pool, op, e, err, 0) != 0 ? -1 : 1;
}

int bench_pool_run_mb8(void *ts, const void *arg, double seconds, run_out *out)
{
    const pk_arg *a = arg;
    struct pool_run r = {ts, a->pool};
    return bench_timed_run(&r, a->op, seconds, out, pool_unit_mb8);
}

int bench_pool_run_single(void *ts, const void *arg, double seconds, run_out *out)
{
    const pk_arg *a = arg;
    struct pool_run r = {ts, a->pool};
    return bench_timed_run(&r, a->op, seconds, out, pool_unit_single);
}

int bench_pool_selftest(void *ts, const bench_pool *pool, unsigned nops)
{
    for (unsigned op = 0; op < nops; op++) {
        if (pool_check_mb8(ts, pool, op, 0, pool->mb8(ts, op, 0), 1) != 0 ||
            pool_check_single(ts, pool, op, 1, pool->single(ts, op, 1), 1) != 0) {
            return -1;
        }
    }
    return 0;
}

pk_case *bench_pool_case_new(const bench_pool *p, const bench_opts *opts)
{
    pk_case *c = calloc(1, p->case_size);
    if (c == NULL) {
        bench_fail("out of memory");
        return NULL;
    }
    void **th = (void **)c;
    int rc = p->material(c);
    for (unsigned t = 0; t < opts->threads && rc == 0; t++) {
        th[t] = calloc(1, p->thread_size);
        rc = th[t] == NULL ? bench_fail("out of memory") : p->thread_init(th[t], c);
    }
    if (rc == 0) {
        rc = bench_pool_selftest(th[0], p, p->nops);
    }
    if (rc != 0) {
        bench_pool_case_free(p, c);
        return NULL;
    }
    return c;
}

void bench_pool_case_free(const bench_pool *p, pk_case *c)
{
    if (c == NULL) {
        return;
    }
    void **th = (void **)c;
    for (unsigned t = 0; t < BENCH_MAX_THREADS; t++) {
        if (th[t] != NULL) {
            p->thread_free(th[t]);
            free(th[t]);
        }
    }
    /* the material may hold private keys */
    volatile uint8_t *b = (volatile uint8_t *)c;
    for (size_t i = 0; i < p->case_size; i++) {
        b[i] = 0;
    }
    free(c);
}

void *const *bench_pool_case_threads(const pk_case *c)
{
    return (void *const *)c;
}
