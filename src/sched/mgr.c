/*
 * mgr.c - the lane manager: per-class FIFOs of caller-owned jobs, run in
 * batches of up to MBC_LANES on the caller's thread. Everything it knows
 * about operations comes from the class table (sched.h). No locks: a manager
 * belongs to one thread at a time. No allocation per job: jobs are linked
 * through their own mgr_next_ field.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched.h"

/*
 * Job states (job->mgr_state_). Any other value, zero included, means "in no
 * manager": a zeroed job is accepted, and the improbable values below are
 * what make an uninitialised one (almost surely) accepted too.
 */
#define JOB_WAITING 0x4d424357u /* "MBCW": in a class FIFO, not yet run */
#define JOB_DONE 0x4d424344u    /* "MBCD": in the completed FIFO */
#define JOB_FREE 0u             /* submittable */

struct job_fifo {
    mbc_job *head;
    mbc_job *tail;
    unsigned count;
};

struct mbc_mgr {
    uint64_t max_wait_us; /* 0: no deadline */
    unsigned flags;
    size_t pending;         /* jobs in the class FIFOs */
    struct job_fifo done;   /* completed, not yet collected */
    struct job_fifo wait[]; /* one per row of mbc_classes */
};

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void fifo_push(struct job_fifo *f, mbc_job *job)
{
    job->mgr_next_ = NULL;
    if (f->tail != NULL) {
        f->tail->mgr_next_ = job;
    } else {
        f->head = job;
    }
    f->tail = job;
    f->count++;
}

static mbc_job *fifo_pop(struct job_fifo *f)
{
    mbc_job *job = f->head;
    if (job != NULL) {
        f->head = job->mgr_next_;
        if (f->head == NULL) {
            f->tail = NULL;
        }
        f->count--;
        job->mgr_next_ = NULL;
    }
    return job;
}

/* complete: job (status set) joins the completed FIFO. */
static void complete(mbc_mgr *mgr, mbc_job *job)
{
    job->mgr_state_ = JOB_DONE;
    fifo_push(&mgr->done, job);
}

/* run_class: runs the oldest (up to the class's lanes) waiting jobs of class
 * ci as one batch, a lone job on the single-request path. Returns the number
 * run. */
static size_t run_class(mbc_mgr *mgr, unsigned ci)
{
    const struct mbc_class *c = &mbc_classes[ci];
    mbc_job *jobs[MBC_LANES];
    unsigned n = 0;
    while (n < c->lanes && mgr->wait[ci].head != NULL) {
        jobs[n++] = fifo_pop(&mgr->wait[ci]);
    }
    if (n == 0) {
        return 0;
    }
    mgr->pending -= n;
    mbc_class_run(c, jobs, n);
    for (unsigned i = 0; i < n; i++) {
        complete(mgr, jobs[i]);
    }
    return n;
}

/* len_ok: a buffer of len bytes given for a field the row sizes want (its
 * exact length, or at most it with any_len); unused fields always pass. */
static int len_ok(size_t len, size_t want, int any_len)
{
    return want == 0 || (any_len ? len <= want : len == want);
}

/* check_job: MBC_OK or the error of a malformed job; *ci gets its class, or
 * -1 when op and key fit none. */
static mbc_err check_job(const mbc_job *job, int *ci)
{
    *ci = -1;
    const struct mbc_class *shape = mbc_class_of_op(job->op);
    if (shape == NULL) {
        return MBC_ERR_BAD_PARAM;
    }
    const int any_len = (shape->flags & MBC_CLASS_IN_ANY_LEN) != 0;
    if ((shape->key_bits != NULL && job->key == NULL) ||
        ((shape->in_len != 0 || any_len) && job->in == NULL) ||
        (shape->in2_len != 0 && job->in2 == NULL) || (shape->out_len != 0 && job->out == NULL) ||
        (shape->out2_len != 0 && job->out2 == NULL)) {
        if (job->key != NULL || shape->key_bits == NULL) {
            *ci = mbc_class_find(job->op, job->key);
        }
        return MBC_ERR_NULL_PARAM;
    }
    *ci = mbc_class_find(job->op, job->key);
    if (*ci < 0) {
        return MBC_ERR_BAD_PARAM;
    }
    const struct mbc_class *c = &mbc_classes[*ci];
    if (!len_ok(job->in_len, c->in_len, any_len) || !len_ok(job->in2_len, c->in2_len, 0) ||
        job->out_len < c->out_len || job->out2_len < c->out2_len) {
        return MBC_ERR_BAD_PARAM;
    }
    return MBC_OK;
}

/* zero_outputs: a failed job's outputs, over its class's lengths, where the
 * caller's buffers are there and long enough. */
static void zero_outputs(mbc_job *job, const struct mbc_class *c)
{
    if (job->out != NULL && c->out_len != 0 && job->out_len >= c->out_len) {
        memset(job->out, 0, c->out_len);
    }
    if (job->out2 != NULL && c->out2_len != 0 && job->out2_len >= c->out2_len) {
        memset(job->out2, 0, c->out2_len);
    }
}

MBC_API mbc_err mbc_mgr_new(mbc_mgr **mgr, const mbc_mgr_config *cfg)
{
    if (mgr == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    *mgr = NULL;
    const mbc_mgr_config defaults = {0};
    if (cfg == NULL) {
        cfg = &defaults;
    }
    if ((cfg->flags & ~MBC_MGR_SYNC) != 0) {
        return MBC_ERR_BAD_PARAM;
    }
    mbc_mgr *m = calloc(1, sizeof(*m) + mbc_num_classes * sizeof(m->wait[0]));
    if (m == NULL) {
        return MBC_ERR_NO_MEMORY;
    }
    m->max_wait_us = cfg->max_wait_us;
    m->flags = cfg->flags;
    *mgr = m;
    return MBC_OK;
}

MBC_API void mbc_mgr_free(mbc_mgr *mgr)
{
    if (mgr == NULL) {
        return;
    }
    mbc_mgr_flush(mgr);
    while (mbc_mgr_get_completed(mgr) != NULL) {
    }
    free(mgr);
}

MBC_API mbc_err mbc_mgr_submit(mbc_mgr *mgr, mbc_job *job)
{
    if (mgr == NULL || job == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    if (job->mgr_state_ == JOB_WAITING || job->mgr_state_ == JOB_DONE) {
        return MBC_ERR_BUSY;
    }
    int ci;
    const mbc_err err = check_job(job, &ci);
    job->mgr_t_submit_ = 0;
    if (err != MBC_OK) {
        if (ci >= 0) {
            zero_outputs(job, &mbc_classes[ci]);
        }
        job->status = err;
        complete(mgr, job);
        return MBC_OK;
    }
    const struct mbc_class *c = &mbc_classes[ci];
    job->status = MBC_ERR_PENDING;
    if (mgr->flags & MBC_MGR_SYNC) {
        mbc_class_run(c, &job, 1);
        complete(mgr, job);
        return MBC_OK;
    }
    if (mgr->max_wait_us != 0) {
        job->mgr_t_submit_ = now_us();
    }
    job->mgr_state_ = JOB_WAITING;
    fifo_push(&mgr->wait[ci], job);
    mgr->pending++;
    if (mgr->wait[ci].count == c->lanes) {
        run_class(mgr, (unsigned)ci);
    }
    return MBC_OK;
}

MBC_API size_t mbc_mgr_flush(mbc_mgr *mgr)
{
    size_t n = 0;
    if (mgr == NULL) {
        return 0;
    }
    for (unsigned ci = 0; ci < mbc_num_classes; ci++) {
        while (mgr->wait[ci].head != NULL) {
            n += run_class(mgr, ci);
        }
    }
    return n;
}

MBC_API mbc_job *mbc_mgr_get_completed(mbc_mgr *mgr)
{
    if (mgr == NULL) {
        return NULL;
    }
    mbc_job *job = fifo_pop(&mgr->done);
    if (job != NULL) {
        job->mgr_state_ = JOB_FREE;
    }
    return job;
}

MBC_API size_t mbc_mgr_pending(const mbc_mgr *mgr)
{
    return mgr != NULL ? mgr->pending : 0;
}

MBC_API int64_t mbc_mgr_next_deadline_us(const mbc_mgr *mgr)
{
    if (mgr == NULL || mgr->max_wait_us == 0 || mgr->pending == 0) {
        return -1;
    }
    const uint64_t now = now_us();
    int64_t next = -1;
    for (unsigned ci = 0; ci < mbc_num_classes; ci++) {
        const mbc_job *oldest = mgr->wait[ci].head;
        if (oldest == NULL) {
            continue;
        }
        const uint64_t due = oldest->mgr_t_submit_ + mgr->max_wait_us;
        const int64_t left = due > now ? (int64_t)(due - now) : 0;
        if (next < 0 || left < next) {
            next = left;
        }
    }
    return next;
}

MBC_API size_t mbc_mgr_poll(mbc_mgr *mgr)
{
    size_t n = 0;
    if (mgr == NULL || mgr->max_wait_us == 0 || mgr->pending == 0) {
        return 0;
    }
    const uint64_t now = now_us();
    for (unsigned ci = 0; ci < mbc_num_classes; ci++) {
        const mbc_job *oldest = mgr->wait[ci].head;
        if (oldest != NULL && now >= oldest->mgr_t_submit_ + mgr->max_wait_us) {
            n += run_class(mgr, ci);
        }
    }
    return n;
}
