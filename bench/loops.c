/*
 * loops.c - the timed loops of the workloads, whatever the operation
 * (bench.h): units one after the other (bench_timed_run) and the closed
 * manager loop of the --concurrency runs (bench_mgr_loop).
 */
#include <stdlib.h>

#include "bench.h"

int bench_timed_run(void *th, unsigned op, double seconds, run_out *out, bench_unit_fn *unit)
{
    const uint64_t start = bench_now_ns(), end = start + (uint64_t)(seconds * 1e9);
    uint64_t t0 = start, t1;
    do {
        const int n = unit(th, op, &t1);
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

/*
 * drain: collects every completed job: latency from its submission to now,
 * result checked, job back on the free list. Returns the number collected,
 * or -1. *last: the time of the last collection.
 */
static long drain(mbc_mgr *mgr, const bench_mgr_jobs *w, const uint64_t *t_submit,
                  unsigned *free_jobs, unsigned *num_free, run_out *out, uint64_t *last)
{
    long n = 0;
    mbc_job *job;
    while ((job = mbc_mgr_get_completed(mgr)) != NULL) {
        const uint64_t now = bench_now_ns();
        const size_t j = (size_t)(job - w->jobs);
        if (j >= w->k) {
            return bench_fail("%s, manager: a completed job is not ours", w->what);
        }
        if (w->check(w->ctx, job) != 0) {
            return -1;
        }
        run_out_lat(out, now - t_submit[j]);
        free_jobs[(*num_free)++] = (unsigned)j;
        *last = now;
        n++;
    }
    return n;
}

int bench_mgr_loop(const bench_mgr_jobs *w, double seconds, run_out *out)
{
    uint64_t *t_submit = calloc(w->k, sizeof(*t_submit));
    unsigned *free_jobs = calloc(w->k, sizeof(*free_jobs));
    mbc_mgr *mgr = NULL;
    int rc = 0;
    if (t_submit == NULL || free_jobs == NULL) {
        rc = bench_fail("out of memory");
    } else {
        const mbc_mgr_config cfg = {.max_wait_us = 0, .flags = 0};
        const mbc_err err = mbc_mgr_new(&mgr, &cfg);
        if (err != MBC_OK) {
            rc = bench_fail("mbc_mgr_new: %s", mbc_err_str(err));
        }
    }
    unsigned num_free = 0;
    for (unsigned j = w->k; j-- > 0 && rc == 0;) {
        free_jobs[num_free++] = j;
    }
    const uint64_t start = bench_now_ns(), end = start + (uint64_t)(seconds * 1e9);
    uint64_t last = start;
    while (rc == 0) {
        while (num_free > 0) {
            const unsigned j = free_jobs[--num_free];
            w->prep(w->ctx, &w->jobs[j]);
            t_submit[j] = bench_now_ns();
            const mbc_err err = mbc_mgr_submit(mgr, &w->jobs[j]);
            if (err != MBC_OK) {
                rc = bench_fail("mbc_mgr_submit: %s", mbc_err_str(err));
                break;
            }
        }
        long n = rc == 0 ? drain(mgr, w, t_submit, free_jobs, &num_free, out, &last) : 0;
        if (n == 0 && rc == 0) {
            mbc_mgr_flush(mgr);
            n = drain(mgr, w, t_submit, free_jobs, &num_free, out, &last);
            if (n == 0) {
                rc = bench_fail("%s, manager: nothing completed after a flush with %u jobs in "
                                "flight",
                                w->what, w->k);
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
    if (mgr != NULL) {
        mbc_mgr_flush(mgr);
        while (mbc_mgr_get_completed(mgr) != NULL) {
        }
        mbc_mgr_free(mgr);
    }
    free(t_submit);
    free(free_jobs);
    return rc;
}

int bench_mgr_one(const bench_mgr_jobs *w)
{
    mbc_mgr *mgr = NULL;
    mbc_err err = mbc_mgr_new(&mgr, NULL);
    if (err != MBC_OK) {
        return bench_fail("mbc_mgr_new: %s", mbc_err_str(err));
    }
    w->prep(w->ctx, &w->jobs[0]);
    err = mbc_mgr_submit(mgr, &w->jobs[0]);
    mbc_mgr_flush(mgr);
    mbc_job *job = mbc_mgr_get_completed(mgr);
    int rc;
    if (err != MBC_OK) {
        rc = bench_fail("mbc_mgr_submit: %s", mbc_err_str(err));
    } else if (job != &w->jobs[0] || mbc_mgr_get_completed(mgr) != NULL) {
        rc = bench_fail("%s, manager: one job submitted and flushed, but the manager did not "
                        "return exactly it",
                        w->what);
    } else {
        rc = w->check(w->ctx, job);
    }
    mbc_mgr_free(mgr);
    return rc;
}
