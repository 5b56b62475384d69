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
