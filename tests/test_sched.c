/*
 * test_sched.c - the lane manager: random sequences of submit / flush / poll /
 * get_completed against a model, every batch size, jobs that fail their
 * checks or their lane, job states (MBC_ERR_BUSY, reuse), deadlines, sync
 * mode and freeing a busy manager. Every result is checked against OpenSSL.
 * Then the EC classes: every op and curve through the manager equals the
 * direct call, and EC jobs with bad fields get their errors.
 * The threads test is test_sched_threads.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rsa/rsa_internal.h"
#include "sched/sched.h"
#include "test_hooks.h"
#include "test_sched_fixture.h"

/* full_batch: the jobs at which op's class on key k runs at once (4 for RSA
 * private, 8 for public), from the library's own class table. */
static unsigned full_batch(enum sf_op op, const struct sf_key *k)
{
    const int ci = op == SF_PRIV ? mbc_class_find(MBC_OP_RSA_PRIVATE, k->priv)
                                 : mbc_class_find(MBC_OP_RSA_PUBLIC, k->pub);
    assert_true(ci >= 0);
    return mbc_classes[ci].lanes;
}

static void check_rec(const struct sf_rec *rec, const char *what)
{
    char msg[160];
    if (sf_check(rec, msg, sizeof(msg)) != 0) {
        fail_msg("%s: %s", what, msg);
    }
}

static const struct sf_key *begin(void **state)
{
    mbc_test_hooks.rsa_fault_lanes = 0;
    mbt_use_impl(state);
    return sf_keys();
}

static int on_c(void **state)
{
    return strcmp((const char *)*state, "c") == 0;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static mbc_mgr *new_mgr(uint32_t max_wait_us, unsigned flags)
{
    mbc_mgr *mgr = NULL;
    const mbc_mgr_config cfg = {max_wait_us, flags};
    assert_int_equal(mbc_mgr_new(&mgr, &cfg), MBC_OK);
    assert_non_null(mgr);
    return mgr;
}

/* collect_expect: the manager returns exactly recs[0..n) in this order, each
 * as expected, then nothing. */
static void collect_expect(mbc_mgr *mgr, struct sf_rec *const recs[], size_t n, const char *what)
{
    char where[96];
    for (size_t i = 0; i < n; i++) {
        mbc_job *job = mbc_mgr_get_completed(mgr);
        snprintf(where, sizeof(where), "%s: completion %zu", what, i);
        if (job != &recs[i]->job) {
            fail_msg("%s: got job %p, want %p", where, (void *)job, (void *)&recs[i]->job);
        }
        check_rec(recs[i], where);
    }
    assert_null(mbc_mgr_get_completed(mgr));
}

/* ------------------------------------------------------------------------ */
/* Jobs that fail the manager's checks                                       */
/* ------------------------------------------------------------------------ */

enum bad_kind {
    BK_OP_0,
    BK_OP_99,
    BK_KEY_NULL,
    BK_IN_NULL,
    BK_OUT_NULL,
    BK_IN_SHORT,
    BK_IN_LONG,
    BK_IN_EMPTY,
    BK_OUT_SHORT,
    BK_KEY_OTHER_TYPE,
    BK_KEY_GARBAGE,
    BK_KEY_3072_OUT_SHORT,
    BK_KEY_3072_OUT_OK,
    BK_LEN_3072_KEY_2048,
    NUM_BAD_KINDS
};

static const char *const bad_names[NUM_BAD_KINDS] = {
    "op 0",
    "op 99",
    "key NULL",
    "in NULL",
    "out NULL",
    "in_len - 1",
    "in_len + 1",
    "in_len 0",
    "out_len - 1",
    "other key type",
    "garbage key",
    "3072 key, 2048 lengths",
    "3072 key, 2048 in, long out",
    "2048 key, 3072 lengths",
};

/*
 * make_bad: rec becomes a job of op that fails the manager's checks with
 * kind; want_status and zeroed say how it must complete (zeroed: the class
 * is known and out is long enough, so rec->len bytes of out are zeroed).
 */
static void make_bad(struct sf_rec *rec, enum sf_op op, enum bad_kind kind,
                     const struct sf_key *keys)
{
    static _Alignas(64) uint8_t garbage[sizeof(struct mbc_rsa_priv_key)];
    memset(garbage, 0xFF, sizeof(garbage));
    sf_set_job(rec, op, &keys[0], 0, -1, SF_OUT_MAX);
    mbc_job *j = &rec->job;
    rec->want_status = MBC_ERR_BAD_PARAM;
    rec->zeroed = 0;
    switch (kind) {
    case BK_OP_0:
        j->op = (mbc_job_op)0;
        break;
    case BK_OP_99:
        j->op = (mbc_job_op)99;
        break;
    case BK_KEY_NULL:
        j->key = NULL;
        rec->want_status = MBC_ERR_NULL_PARAM;
        break;
    case BK_IN_NULL:
        j->in = NULL;
        rec->want_status = MBC_ERR_NULL_PARAM;
        rec->zeroed = 1;
        break;
    case BK_OUT_NULL:
        j->out = NULL;
        rec->want_status = MBC_ERR_NULL_PARAM;
        break;
    case BK_IN_SHORT:
        j->in_len = rec->len - 1;
        rec->zeroed = 1;
        break;
    case BK_IN_LONG:
        j->in_len = rec->len + 1;
        rec->zeroed = 1;
        break;
    case BK_IN_EMPTY:
        j->in_len = 0;
        rec->zeroed = 1;
        break;
    case BK_OUT_SHORT:
        j->out_len = rec->len - 1;
        break;
    case BK_KEY_OTHER_TYPE:
        j->key = op == SF_PRIV ? (const void *)keys[0].pub : (const void *)keys[0].priv;
        break;
    case BK_KEY_GARBAGE:
        j->key = garbage;
        break;
    case BK_KEY_3072_OUT_SHORT:
        j->key = op == SF_PRIV ? (const void *)keys[3].priv : (const void *)keys[3].pub;
        j->out_len = keys[0].len;
        break;
    case BK_KEY_3072_OUT_OK:
        j->key = op == SF_PRIV ? (const void *)keys[3].priv : (const void *)keys[3].pub;
        rec->len = keys[3].len;
        rec->zeroed = 1;
        break;
    case BK_LEN_3072_KEY_2048:
        j->in = keys[3].in[op][0];
        j->in_len = keys[3].len;
        j->out_len = keys[3].len;
        rec->zeroed = 1;
        break;
    default:
        fail();
    }
}

/* ------------------------------------------------------------------------ */
/* 1. Random sequences against a model                                       */
/* ------------------------------------------------------------------------ */

#define NRECS 48
#define NCLS 4 /* test classes: 2048 private, 2048 public, 3072 private, 3072 public */

struct mrec {
    struct sf_rec r; /* first: job.user_data points here */
    int where;       /* 0 free, 1 waiting in its class, 2 completed and not collected */
    int cls;         /* test class, -1 for a job failing the manager's checks */
    unsigned long seq;
    unsigned long epoch; /* the manager call in which it completed */
};

struct model {
    mbc_mgr *mgr;
    struct mrec recs[NRECS];
    unsigned waiting[NCLS];
    size_t completed;
    unsigned long seq, epoch, last_epoch;
    unsigned long last_seq[NCLS];
    size_t batches[NCLS][MBC_LANES + 1]; /* batch sizes run, for the log */
    size_t jobs, bad_fields, bad_inputs;
};

static size_t model_pending(const struct model *m)
{
    size_t n = 0;
    for (int c = 0; c < NCLS; c++) {
        n += m->waiting[c];
    }
    return n;
}

/* run_class: the model's side of a batch of class c running now. */
static void run_class(struct model *m, int c)
{
    if (m->waiting[c] == 0) {
        return;
    }
    m->batches[c][m->waiting[c]]++;
    for (int i = 0; i < NRECS; i++) {
        struct mrec *x = &m->recs[i];
        if (x->where == 1 && x->cls == c) {
            x->where = 2;
            x->epoch = m->epoch;
            m->completed++;
        }
    }
    m->waiting[c] = 0;
}

static void model_submit(struct model *m, struct mrec *x, const struct sf_key *keys, uint64_t r)
{
    static const int cls_weights[NCLS] = {40, 30, 12, 18};
    int c = 0;
    for (int w = (int)(r % 100); w >= cls_weights[c]; c++) {
        w -= cls_weights[c];
    }
    r /= 100;
    const enum sf_op op = (c & 1) ? SF_PUB : SF_PRIV;
    const struct sf_key *k = &keys[c < 2 ? r % 3 : 3];
    r /= 3;
    const unsigned kind = (unsigned)(r % 20);
    r /= 20;
    if (kind == 0) {
        sf_set_job(&x->r, op, k, 0, (int)(r % SF_NBAD), r % 7);
        m->bad_inputs++;
    } else if (kind <= 2) {
        make_bad(&x->r, op, (enum bad_kind)(r % NUM_BAD_KINDS), keys);
        c = -1;
        m->bad_fields++;
    } else {
        sf_set_job(&x->r, op, k, (unsigned)(r % SF_NIN), -1, (r / SF_NIN) % 3 == 0 ? r % 40 : 0);
    }
    m->jobs++;
    x->cls = c;
    x->seq = ++m->seq;
    m->epoch++;
    assert_int_equal(mbc_mgr_submit(m->mgr, &x->r.job), MBC_OK);
    if (c < 0) {
        assert_int_equal(x->r.job.status, x->r.want_status);
        x->where = 2;
        x->epoch = m->epoch;
        m->completed++;
    } else {
        x->where = 1;
        if (++m->waiting[c] == full_batch(op, k)) {
            run_class(m, c);
        } else {
            assert_int_equal(x->r.job.status, MBC_ERR_PENDING);
        }
    }
    assert_int_equal(mbc_mgr_pending(m->mgr), model_pending(m));
}

static void model_flush(struct model *m)
{
    const size_t want = model_pending(m);
    m->epoch++;
    assert_int_equal(mbc_mgr_flush(m->mgr), want);
    for (int c = 0; c < NCLS; c++) {
        run_class(m, c);
    }
    assert_int_equal(mbc_mgr_pending(m->mgr), 0);
}

/* model_collect: up to n completed jobs, each exactly once, in an order that
 * keeps every class FIFO and never returns a job before one that completed
 * in an earlier call. */
static void model_collect(struct model *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mbc_job *job = mbc_mgr_get_completed(m->mgr);
        if (m->completed == 0) {
            assert_null(job);
            return;
        }
        assert_non_null(job);
        struct mrec *x = job->user_data;
        assert_true(x >= m->recs && x < m->recs + NRECS);
        assert_ptr_equal(&x->r.job, job);
        if (x->where != 2) {
            fail_msg("job %ld returned while %s", (long)(x - m->recs),
                     x->where == 0 ? "already collected" : "still waiting");
        }
        char what[64];
        snprintf(what, sizeof(what), "job seq %lu class %d", x->seq, x->cls);
        check_rec(&x->r, what);
        assert_true(x->epoch >= m->last_epoch);
        m->last_epoch = x->epoch;
        if (x->cls >= 0) {
            assert_true(x->seq > m->last_seq[x->cls]);
            m->last_seq[x->cls] = x->seq;
        }
        x->where = 0;
        m->completed--;
    }
}

static void test_random_sequences(void **state)
{
    const struct sf_key *keys = begin(state);
    struct model *m = calloc(1, sizeof(*m));
    assert_non_null(m);
    m->mgr = new_mgr(0, 0);
    const size_t steps = mbt_scale(on_c(state) ? 500 : 4000);
    for (size_t s = 0; s < steps; s++) {
        const uint64_t r = mbt_rand();
        const unsigned act = (unsigned)(r % 100);
        if (act < 60) {
            struct mrec *x = NULL;
            for (unsigned i = 0, start = (unsigned)((r >> 8) % NRECS); i < NRECS; i++) {
                if (m->recs[(start + i) % NRECS].where == 0) {
                    x = &m->recs[(start + i) % NRECS];
                    break;
                }
            }
            if (x == NULL) {
                model_flush(m);
                model_collect(m, NRECS);
            } else {
                model_submit(m, x, keys, r >> 16);
            }
        } else if (act < 68) {
            model_flush(m);
        } else if (act < 72) {
            /* no deadline configured: poll runs nothing */
            assert_int_equal(mbc_mgr_poll(m->mgr), 0);
            assert_int_equal(mbc_mgr_next_deadline_us(m->mgr), -1);
            assert_int_equal(mbc_mgr_pending(m->mgr), model_pending(m));
        } else {
            model_collect(m, 1 + (r >> 8) % 12);
        }
    }
    model_flush(m);
    model_collect(m, NRECS + 1);
    for (int i = 0; i < NRECS; i++) {
        assert_int_equal(m->recs[i].where, 0);
    }
    print_message("%zu jobs (%zu with input >= n, %zu failing the checks); batch sizes 1..8 "
                  "per class:\n",
                  m->jobs, m->bad_inputs, m->bad_fields);
    for (int c = 0; c < NCLS; c++) {
        print_message("  class %d:", c);
        for (int n = 1; n <= MBC_LANES; n++) {
            print_message(" %zu", m->batches[c][n]);
        }
        print_message("\n");
    }
    mbc_mgr_free(m->mgr);
    free(m);
}

/* ------------------------------------------------------------------------ */
/* 2. Every batch size, FIFO within a batch                                  */
/* ------------------------------------------------------------------------ */

static void test_batch_sizes(void **state)
{
    const struct sf_key *keys = begin(state);
    struct sf_rec *recs = calloc(MBC_LANES, sizeof(*recs));
    struct sf_rec *order[MBC_LANES];
    assert_non_null(recs);
    char what[64];
    for (int op = 0; op < 2; op++) {
        for (int size = 0; size < 2; size++) {
            const unsigned full = full_batch((enum sf_op)op, &keys[size == 0 ? 0 : 3]);
            for (unsigned n = 1; n <= full; n++) {
                if (size == 1 && on_c(state) && n != 1 && n != 3 && n != full) {
                    continue; /* 3072 bits on the slow path: lone, partial, full */
                }
                mbc_mgr *mgr = new_mgr(0, 0);
                for (unsigned i = 0; i < n; i++) {
                    memset(&recs[i], 0, sizeof(recs[i]));
                    const struct sf_key *k = &keys[size == 0 ? i % 3 : 3];
                    sf_set_job(&recs[i], (enum sf_op)op, k, (i + n) % SF_NIN, -1, i);
                    order[i] = &recs[i];
                    assert_int_equal(mbc_mgr_submit(mgr, &recs[i].job), MBC_OK);
                    if (i + 1 < full) {
                        assert_int_equal(mbc_mgr_pending(mgr), i + 1);
                        assert_int_equal(recs[i].job.status, MBC_ERR_PENDING);
                        assert_null(mbc_mgr_get_completed(mgr));
                    }
                }
                snprintf(what, sizeof(what), "%s %u-bit, %u jobs",
                         op == SF_PRIV ? "private" : "public", keys[size == 0 ? 0 : 3].bits, n);
                if (n == full) {
                    /* the last job of a full batch ran it inside submit */
                    assert_int_equal(mbc_mgr_pending(mgr), 0);
                    assert_int_equal(mbc_mgr_flush(mgr), 0);
                } else {
                    assert_int_equal(mbc_mgr_flush(mgr), n);
                }
                assert_int_equal(mbc_mgr_pending(mgr), 0);
                collect_expect(mgr, order, n, what);
                mbc_mgr_free(mgr);
            }
        }
    }
    free(recs);
}

/* ------------------------------------------------------------------------ */
/* 3. Jobs failing the checks complete at once and block nothing             */
/* ------------------------------------------------------------------------ */

static void test_bad_jobs(void **state)
{
    const struct sf_key *keys = begin(state);
    struct sf_rec *good = calloc(NUM_BAD_KINDS, sizeof(*good));
    struct sf_rec *bad = calloc(NUM_BAD_KINDS, sizeof(*bad));
    struct sf_rec *expect[MBC_LANES + 1];
    assert_non_null(good);
    assert_non_null(bad);
    char what[96];
    for (int op = 0; op < 2; op++) {
        mbc_mgr *mgr = new_mgr(0, 0);
        size_t waiting = 0, first_waiting = 0;
        for (int kind = 0; kind < NUM_BAD_KINDS; kind++) {
            /* a good job of the 2048-bit class, then a bad one */
            sf_set_job(&good[kind], (enum sf_op)op, &keys[kind % 3], (unsigned)kind % SF_NIN, -1,
                       0);
            assert_int_equal(mbc_mgr_submit(mgr, &good[kind].job), MBC_OK);
            size_t ne = 0;
            const unsigned full = full_batch((enum sf_op)op, &keys[kind % 3]);
            if (++waiting == full) {
                for (size_t i = 0; i < full; i++) {
                    expect[ne++] = &good[first_waiting + i];
                }
                first_waiting += full;
                waiting = 0;
            }
            make_bad(&bad[kind], (enum sf_op)op, (enum bad_kind)kind, keys);
            assert_int_equal(mbc_mgr_submit(mgr, &bad[kind].job), MBC_OK);
            assert_int_equal(bad[kind].job.status, bad[kind].want_status);
            assert_int_equal(mbc_mgr_pending(mgr), waiting);
            expect[ne++] = &bad[kind];
            snprintf(what, sizeof(what), "%s, bad job '%s'", op == SF_PRIV ? "private" : "public",
                     bad_names[kind]);
            collect_expect(mgr, expect, ne, what);
        }
        /* the good jobs still waiting run as one batch */
        assert_int_equal(mbc_mgr_flush(mgr), waiting);
        for (size_t i = 0; i < waiting; i++) {
            expect[i] = &good[first_waiting + i];
        }
        collect_expect(mgr, expect, waiting, "good jobs after the bad ones");
        mbc_mgr_free(mgr);
    }
    free(good);
    free(bad);
}

/* ------------------------------------------------------------------------ */
/* 4. Errors inside a batch stay in their lane                               */
/* ------------------------------------------------------------------------ */

/* batch_with: n jobs of op on keys[k0..] (3072 when big), those in bad_mask
 * with inputs >= n (or the fault hook when fault is set); runs them, checks
 * all. */
static void batch_with(const struct sf_key *keys, enum sf_op op, int big, unsigned n,
                       unsigned bad_mask, int fault, const char *what)
{
    struct sf_rec *recs = calloc(MBC_LANES, sizeof(*recs));
    struct sf_rec *order[MBC_LANES];
    assert_non_null(recs);
    mbc_mgr *mgr = new_mgr(0, 0);
    mbc_test_hooks.rsa_fault_lanes = fault ? bad_mask : 0;
    for (unsigned i = 0; i < n; i++) {
        const int is_bad = (bad_mask >> i) & 1u;
        sf_set_job(&recs[i], op, &keys[big ? 3 : i % 3], i % SF_NIN,
                   is_bad && !fault ? (int)(i % SF_NBAD) : -1, 3);
        if (is_bad && fault) {
            recs[i].want_status = MBC_ERR_FAULT;
        }
        order[i] = &recs[i];
        assert_int_equal(mbc_mgr_submit(mgr, &recs[i].job), MBC_OK);
    }
    mbc_mgr_flush(mgr);
    mbc_test_hooks.rsa_fault_lanes = 0;
    collect_expect(mgr, order, n, what);
    mbc_mgr_free(mgr);
    free(recs);
}

static void test_bad_lanes(void **state)
{
    const struct sf_key *keys = begin(state);
    static const struct {
        unsigned n, bad_mask;
    } cases[] = {{8, 0x52}, {8, 0x01}, {8, 0x80}, {5, 0x11}, {2, 0x02}, {1, 0x01}, {7, 0x7E}};
    char what[96];
    for (int op = 0; op < 2; op++) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            snprintf(what, sizeof(what), "%s, %u jobs, inputs >= n in 0x%02x",
                     op == SF_PRIV ? "private" : "public", cases[i].n, cases[i].bad_mask);
            batch_with(keys, (enum sf_op)op, 0, cases[i].n, cases[i].bad_mask, 0, what);
        }
        batch_with(keys, (enum sf_op)op, 1, 3, 0x2, 0, "3072 bits, 3 jobs, input >= n in 0x02");
    }
    /* a result that fails its check with e is that job's error alone (the
     * fault hook names lanes of one call: one full private batch here) */
    batch_with(keys, SF_PRIV, 0, 4, 0x08, 1, "private, 4 jobs, fault in 0x08");
    batch_with(keys, SF_PRIV, 0, 3, 0x05, 1, "private, 3 jobs, faults in 0x05");
}

/* ------------------------------------------------------------------------ */
/* 5. Job states: MBC_ERR_BUSY, reuse, NULL arguments                        */
/* ------------------------------------------------------------------------ */

static void test_job_states(void **state)
{
    const struct sf_key *keys = begin(state);
    struct sf_rec *rec = calloc(2, sizeof(*rec));
    assert_non_null(rec);
    mbc_mgr *mgr = new_mgr(0, 0), *other = new_mgr(0, 0), *sync = new_mgr(0, MBC_MGR_SYNC);

    assert_int_equal(mbc_mgr_submit(NULL, &rec[0].job), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_mgr_submit(mgr, NULL), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_mgr_pending(mgr), 0);
    assert_null(mbc_mgr_get_completed(mgr));

    /* a job whose private fields hold garbage is (almost surely) accepted */
    memset(&rec[0].job, 0x5A, sizeof(rec[0].job));
    sf_set_job(&rec[0], SF_PRIV, &keys[0], 1, -1, 0);
    assert_int_equal(mbc_mgr_submit(mgr, &rec[0].job), MBC_OK);
    assert_int_equal(rec[0].job.status, MBC_ERR_PENDING);

    /* pending: busy everywhere, and left as it is */
    assert_int_equal(mbc_mgr_submit(mgr, &rec[0].job), MBC_ERR_BUSY);
    assert_int_equal(mbc_mgr_submit(other, &rec[0].job), MBC_ERR_BUSY);
    assert_int_equal(mbc_mgr_submit(sync, &rec[0].job), MBC_ERR_BUSY);
    assert_int_equal(rec[0].job.status, MBC_ERR_PENDING);
    assert_int_equal(mbc_mgr_pending(mgr), 1);
    assert_int_equal(mbc_mgr_pending(other), 0);

    /* completed but not collected: still busy */
    assert_int_equal(mbc_mgr_flush(mgr), 1);
    assert_int_equal(mbc_mgr_submit(mgr, &rec[0].job), MBC_ERR_BUSY);
    assert_int_equal(mbc_mgr_submit(other, &rec[0].job), MBC_ERR_BUSY);
    assert_ptr_equal(mbc_mgr_get_completed(mgr), &rec[0].job);
    check_rec(&rec[0], "garbage private fields");
    assert_null(mbc_mgr_get_completed(other));

    /* collected: reusable as it is, in any manager */
    sf_set_job(&rec[0], SF_PUB, &keys[1], 2, -1, 5);
    assert_int_equal(mbc_mgr_submit(other, &rec[0].job), MBC_OK);
    assert_int_equal(mbc_mgr_flush(other), 1);
    assert_ptr_equal(mbc_mgr_get_completed(other), &rec[0].job);
    check_rec(&rec[0], "reused job");

    /* a job that failed its checks is busy until collected too */
    make_bad(&rec[1], SF_PRIV, BK_IN_SHORT, keys);
    assert_int_equal(mbc_mgr_submit(mgr, &rec[1].job), MBC_OK);
    assert_int_equal(mbc_mgr_submit(mgr, &rec[1].job), MBC_ERR_BUSY);
    assert_int_equal(mbc_mgr_pending(mgr), 0);
    assert_ptr_equal(mbc_mgr_get_completed(mgr), &rec[1].job);
    check_rec(&rec[1], "bad job");
    sf_set_job(&rec[1], SF_PRIV, &keys[2], 3, -1, 0);
    assert_int_equal(mbc_mgr_submit(mgr, &rec[1].job), MBC_OK);

    /* a sync job is busy until collected */
    sf_set_job(&rec[0], SF_PUB, &keys[0], 0, -1, 0);
    assert_int_equal(mbc_mgr_submit(sync, &rec[0].job), MBC_OK);
    assert_int_equal(mbc_mgr_submit(sync, &rec[0].job), MBC_ERR_BUSY);
    assert_ptr_equal(mbc_mgr_get_completed(sync), &rec[0].job);
    check_rec(&rec[0], "sync job");

    assert_int_equal(mbc_mgr_flush(mgr), 1);
    assert_ptr_equal(mbc_mgr_get_completed(mgr), &rec[1].job);
    check_rec(&rec[1], "job reused after failing its checks");

    /* NULL managers */
    assert_int_equal(mbc_mgr_flush(NULL), 0);
    assert_int_equal(mbc_mgr_poll(NULL), 0);
    assert_int_equal(mbc_mgr_pending(NULL), 0);
    assert_int_equal(mbc_mgr_next_deadline_us(NULL), -1);
    assert_null(mbc_mgr_get_completed(NULL));
    mbc_mgr_free(NULL);
    mbc_mgr_free(mgr);
    mbc_mgr_free(other);
    mbc_mgr_free(sync);
    free(rec);
}

/* ------------------------------------------------------------------------ */
/* 6. Deadlines and poll                                                     */
/* ------------------------------------------------------------------------ */

/* Only what cannot fail on a slow machine is asserted: a deadline never
 * exceeds max_wait_us and never grows; a poll after sleeping past it runs
 * the batch; a poll long before a 10 s deadline runs nothing. */
static void test_deadlines(void **state)
{
    const struct sf_key *keys = begin(state);
    enum { WAIT = 2000 };
    struct sf_rec *rec = calloc(4, sizeof(*rec));
    struct sf_rec *order[4];
    assert_non_null(rec);
    mbc_mgr *mgr = new_mgr(WAIT, 0);

    assert_int_equal(mbc_mgr_next_deadline_us(mgr), -1);
    assert_int_equal(mbc_mgr_poll(mgr), 0);
    sf_set_job(&rec[0], SF_PRIV, &keys[0], 0, -1, 0);
    assert_int_equal(mbc_mgr_submit(mgr, &rec[0].job), MBC_OK);
    const int64_t d1 = mbc_mgr_next_deadline_us(mgr);
    assert_true(d1 >= 0 && d1 <= WAIT);
    sleep_us(WAIT / 4);
    const int64_t d2 = mbc_mgr_next_deadline_us(mgr);
    assert_true(d2 >= 0 && d2 <= d1);
    sleep_us(WAIT + 500);
    assert_int_equal(mbc_mgr_next_deadline_us(mgr), 0);
    assert_int_equal(mbc_mgr_poll(mgr), 1);
    assert_int_equal(mbc_mgr_pending(mgr), 0);
    assert_int_equal(mbc_mgr_next_deadline_us(mgr), -1);
    order[0] = &rec[0];
    collect_expect(mgr, order, 1, "one job due");

    /* two classes due, one batch of 2 and a lone job */
    for (int i = 0; i < 3; i++) {
        sf_set_job(&rec[i], i < 2 ? SF_PUB : SF_PRIV, &keys[i], (unsigned)i, -1, 0);
        assert_int_equal(mbc_mgr_submit(mgr, &rec[i].job), MBC_OK);
        order[i] = &rec[i];
    }
    const int64_t d3 = mbc_mgr_next_deadline_us(mgr);
    assert_true(d3 >= 0 && d3 <= WAIT);
    sleep_us(WAIT + 500);
    assert_int_equal(mbc_mgr_poll(mgr), 3);
    assert_int_equal(mbc_mgr_poll(mgr), 0);
    assert_int_equal(mbc_mgr_pending(mgr), 0);
    for (int i = 0; i < 3; i++) {
        /* the batches ran class by class: whichever came first, each in order */
        mbc_job *job = mbc_mgr_get_completed(mgr);
        assert_non_null(job);
        check_rec(job->user_data, "due batches");
    }
    assert_null(mbc_mgr_get_completed(mgr));
    mbc_mgr_free(mgr);

    /* a far deadline: poll runs nothing, flush still does */
    mgr = new_mgr(10000000, 0);
    sf_set_job(&rec[0], SF_PUB, &keys[3], 1, -1, 0);
    assert_int_equal(mbc_mgr_submit(mgr, &rec[0].job), MBC_OK);
    const int64_t d4 = mbc_mgr_next_deadline_us(mgr);
    assert_true(d4 > 0 && d4 <= 10000000);
    assert_int_equal(mbc_mgr_poll(mgr), 0);
    assert_int_equal(mbc_mgr_pending(mgr), 1);
    assert_int_equal(mbc_mgr_flush(mgr), 1);
    assert_int_equal(mbc_mgr_next_deadline_us(mgr), -1);
    order[0] = &rec[0];
    collect_expect(mgr, order, 1, "flush before a far deadline");
    mbc_mgr_free(mgr);

    /* no deadline: poll never runs anything */
    mgr = new_mgr(0, 0);
    sf_set_job(&rec[0], SF_PUB, &keys[0], 1, -1, 0);
    assert_int_equal(mbc_mgr_submit(mgr, &rec[0].job), MBC_OK);
    sleep_us(1000);
    assert_int_equal(mbc_mgr_next_deadline_us(mgr), -1);
    assert_int_equal(mbc_mgr_poll(mgr), 0);
    assert_int_equal(mbc_mgr_pending(mgr), 1);
    assert_int_equal(mbc_mgr_flush(mgr), 1);
    collect_expect(mgr, order, 1, "flush without a deadline");
    mbc_mgr_free(mgr);
    free(rec);
}

/* ------------------------------------------------------------------------ */
/* 7. Sync mode, configuration, freeing a busy manager                       */
/* ------------------------------------------------------------------------ */

static void test_sync(void **state)
{
    const struct sf_key *keys = begin(state);
    struct sf_rec *rec = calloc(5, sizeof(*rec));
    struct sf_rec *order[1];
    assert_non_null(rec);

    mbc_mgr *mgr = (mbc_mgr *)(uintptr_t)1;
    const mbc_mgr_config bad_flags = {0, 2};
    assert_int_equal(mbc_mgr_new(&mgr, &bad_flags), MBC_ERR_BAD_PARAM);
    assert_null(mgr);
    assert_int_equal(mbc_mgr_new(NULL, NULL), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_mgr_new(&mgr, NULL), MBC_OK);
    mbc_mgr_free(mgr);

    mgr = new_mgr(1000, MBC_MGR_SYNC);
    for (int i = 0; i < 5; i++) {
        if (i == 4) {
            make_bad(&rec[i], SF_PRIV, BK_KEY_OTHER_TYPE, keys);
        } else {
            sf_set_job(&rec[i], (i & 1) ? SF_PUB : SF_PRIV, &keys[i < 2 ? i : 3], (unsigned)i,
                       i == 3 ? 0 : -1, 0);
        }
        assert_int_equal(mbc_mgr_submit(mgr, &rec[i].job), MBC_OK);
        /* complete before submit returns */
        assert_int_not_equal(rec[i].job.status, MBC_ERR_PENDING);
        assert_int_equal(mbc_mgr_pending(mgr), 0);
        assert_int_equal(mbc_mgr_next_deadline_us(mgr), -1);
        assert_int_equal(mbc_mgr_flush(mgr), 0);
        order[0] = &rec[i];
        collect_expect(mgr, order, 1, "sync");
    }
    mbc_mgr_free(mgr);
    free(rec);
}

static void test_free_busy(void **state)
{
    const struct sf_key *keys = begin(state);
    enum { N = 6 };
    struct sf_rec *rec = calloc(N, sizeof(*rec));
    struct sf_rec *order[N];
    assert_non_null(rec);
    mbc_mgr *mgr = new_mgr(0, 0);
    /* job 5 runs and is not collected; then 3 private 2048 and 1 public 3072
     * wait, and 1 job fails its checks (completed) */
    sf_set_job(&rec[5], SF_PUB, &keys[0], 2, -1, 0);
    assert_int_equal(mbc_mgr_submit(mgr, &rec[5].job), MBC_OK);
    assert_int_equal(mbc_mgr_flush(mgr), 1);
    for (int i = 0; i < N - 1; i++) {
        if (i == 4) {
            make_bad(&rec[i], SF_PUB, BK_OP_99, keys);
        } else {
            sf_set_job(&rec[i], i == 3 ? SF_PUB : SF_PRIV, &keys[i == 3 ? 3 : i % 3], (unsigned)i,
                       -1, 0);
        }
        assert_int_equal(mbc_mgr_submit(mgr, &rec[i].job), MBC_OK);
    }
    assert_int_equal(mbc_mgr_pending(mgr), 4);
    mbc_mgr_free(mgr);
    for (int i = 0; i < N; i++) {
        check_rec(&rec[i], "job finished by mbc_mgr_free");
    }
    /* released: every job may be submitted again */
    mgr = new_mgr(0, MBC_MGR_SYNC);
    for (int i = 0; i < N; i++) {
        if (i != 4) {
            sf_set_job(&rec[i], SF_PUB, &keys[i % 3], (unsigned)i % SF_NIN, -1, 0);
        }
        assert_int_equal(mbc_mgr_submit(mgr, &rec[i].job), MBC_OK);
        order[i] = &rec[i];
    }
    collect_expect(mgr, order, N, "jobs released by mbc_mgr_free, submitted again");
    mbc_mgr_free(mgr);
    free(rec);
}

/* ------------------------------------------------------------------------ */
/* 8. The EC classes                                                         */
/* ------------------------------------------------------------------------ */

enum ec_job { EJ_SIGN, EJ_VERIFY, EJ_ECDH, EJ_KEYGEN, EJ_NUM };
static const mbc_curve ec_curves[2] = {MBC_CURVE_P256, MBC_CURVE_P384};

/* ec_keys: per curve, a key pair and a peer point (built once). */
static struct ec_fx {
    mbc_ec_priv_key *priv[2];
    mbc_ec_pub_key *pub[2];
    uint8_t peer[2][97];
    uint8_t digest[64];
} efx;

static const struct ec_fx *ec_keys(void)
{
    if (efx.priv[0] == NULL) {
        for (int c = 0; c < 2; c++) {
            uint8_t q[97];
            mbc_ec_priv_key *other = NULL;
            assert_int_equal(mbc_ec_priv_key_generate(&efx.priv[c], ec_curves[c]), MBC_OK);
            assert_int_equal(mbc_ec_priv_key_public(efx.priv[c], q, sizeof(q)), MBC_OK);
            assert_int_equal(
                mbc_ec_pub_key_new(&efx.pub[c], ec_curves[c], q, mbc_ec_point_len(ec_curves[c])),
                MBC_OK);
            assert_int_equal(mbc_ec_priv_key_generate(&other, ec_curves[c]), MBC_OK);
            assert_int_equal(mbc_ec_priv_key_public(other, efx.peer[c], 97), MBC_OK);
            mbc_ec_priv_key_free(other);
        }
        mbt_rand_bytes(efx.digest, sizeof(efx.digest));
    }
    return &efx;
}

static void ec_keys_free(void)
{
    for (int c = 0; c < 2; c++) {
        mbc_ec_priv_key_free(efx.priv[c]);
        mbc_ec_pub_key_free(efx.pub[c]);
    }
    memset(&efx, 0, sizeof(efx));
}

/* ec_rec: a job with its buffers; sig holds a signature to verify. */
struct ec_rec {
    mbc_job job;
    uint8_t out[128], out2[128], sig[96];
};

/* ec_job_init: rec becomes a good job of kind on curve c (digest length
 * dlen for the signature ops). */
static void ec_job_init(struct ec_rec *rec, enum ec_job kind, int c, size_t dlen)
{
    const struct ec_fx *f = ec_keys();
    const mbc_curve curve = ec_curves[c];
    memset(&rec->job, 0, sizeof(rec->job));
    memset(rec->out, SF_CANARY, sizeof(rec->out));
    memset(rec->out2, SF_CANARY, sizeof(rec->out2));
    mbc_job *j = &rec->job;
    j->out = rec->out;
    j->out_len = sizeof(rec->out);
    j->user_data = rec;
    switch (kind) {
    case EJ_SIGN:
        j->op = MBC_OP_ECDSA_SIGN;
        j->key = f->priv[c];
        j->in = f->digest;
        j->in_len = dlen;
        break;
    case EJ_VERIFY:
        j->op = MBC_OP_ECDSA_VERIFY;
        j->key = f->pub[c];
        j->in = f->digest;
        j->in_len = dlen;
        assert_int_equal(mbc_ecdsa_sign(rec->sig, f->digest, dlen, f->priv[c]), MBC_OK);
        j->in2 = rec->sig;
        j->in2_len = mbc_ec_sig_len(curve);
        j->out = NULL;
        j->out_len = 0;
        break;
    case EJ_ECDH:
        j->op = MBC_OP_ECDH;
        j->key = f->priv[c];
        j->in = f->peer[c];
        j->in_len = mbc_ec_point_len(curve);
        break;
    default:
        j->op = c == 0 ? MBC_OP_EC_KEYGEN_P256 : MBC_OP_EC_KEYGEN_P384;
        j->out2 = rec->out2;
        j->out2_len = sizeof(rec->out2);
        break;
    }
}

/* ec_job_check: a completed good job equals the direct call's result. */
static void ec_job_check(const struct ec_rec *rec, enum ec_job kind, int c, const char *what)
{
    const struct ec_fx *f = ec_keys();
    const mbc_curve curve = ec_curves[c];
    const size_t len = mbc_ec_scalar_len(curve), plen = mbc_ec_point_len(curve);
    const mbc_job *j = &rec->job;
    if (j->status != MBC_OK) {
        fail_msg("%s: %s", what, mbc_err_str(j->status));
    }
    uint8_t want[97];
    size_t wrote = 0, wrote2 = 0;
    switch (kind) {
    case EJ_SIGN:
        assert_int_equal(mbc_ecdsa_verify(rec->out, f->digest, j->in_len, f->pub[c]), MBC_OK);
        wrote = 2 * len;
        break;
    case EJ_ECDH:
        assert_int_equal(mbc_ecdh(want, f->peer[c], plen, f->priv[c]), MBC_OK);
        assert_memory_equal(rec->out, want, len);
        wrote = len;
        break;
    case EJ_KEYGEN: {
        mbc_ec_priv_key *k = NULL;
        assert_int_equal(mbc_ec_priv_key_new(&k, curve, rec->out, len), MBC_OK);
        assert_int_equal(mbc_ec_priv_key_public(k, want, sizeof(want)), MBC_OK);
        assert_memory_equal(rec->out2, want, plen);
        mbc_ec_priv_key_free(k);
        wrote = len;
        wrote2 = plen;
        break;
    }
    default:
        break;
    }
    for (size_t i = wrote; i < sizeof(rec->out); i++) {
        assert_int_equal(rec->out[i], SF_CANARY);
    }
    for (size_t i = wrote2; i < sizeof(rec->out2); i++) {
        assert_int_equal(rec->out2[i], SF_CANARY);
    }
}

/* Every EC op and curve through the manager, in batches of 1, 3 and 8
 * (the class's full batch: it runs inside submit), equals the direct
 * calls; a signature with a changed byte fails its verification job alone. */
static void test_ec_classes(void **state)
{
    begin(state);
    ec_keys();
    struct ec_rec *recs = calloc(MBC_LANES, sizeof(*recs));
    assert_non_null(recs);
    char what[96];
    static const unsigned sizes[] = {1, 3, 8};
    for (int c = 0; c < 2; c++) {
        for (unsigned kind = 0; kind < EJ_NUM; kind++) {
            for (size_t si = 0; si < 3; si++) {
                const unsigned n = sizes[si];
                mbc_mgr *mgr = new_mgr(0, 0);
                for (unsigned i = 0; i < n; i++) {
                    ec_job_init(&recs[i], (enum ec_job)kind, c, i == 1 ? 0 : 20 + 11 * i % 45);
                    if (kind == EJ_VERIFY && i == 2) {
                        recs[i].sig[5] ^= 1;
                    }
                    assert_int_equal(mbc_mgr_submit(mgr, &recs[i].job), MBC_OK);
                }
                const int ci = mbc_class_find(recs[0].job.op, recs[0].job.key);
                assert_true(ci >= 0);
                assert_int_equal(mbc_classes[ci].lanes, MBC_LANES);
                assert_int_equal(mbc_classes[ci].bits, ec_curves[c]);
                assert_int_equal(mbc_mgr_flush(mgr), n == MBC_LANES ? 0 : n);
                for (unsigned i = 0; i < n; i++) {
                    mbc_job *job = mbc_mgr_get_completed(mgr);
                    assert_ptr_equal(job, &recs[i].job);
                    snprintf(what, sizeof(what), "%s, %u jobs, job %u", mbc_classes[ci].name, n, i);
                    if (kind == EJ_VERIFY && i == 2) {
                        assert_int_equal(job->status, MBC_ERR_SIG_INVALID);
                    } else {
                        ec_job_check(&recs[i], (enum ec_job)kind, c, what);
                    }
                }
                assert_null(mbc_mgr_get_completed(mgr));
                mbc_mgr_free(mgr);
            }
        }
    }
    free(recs);
}

/* EC jobs with bad fields complete at once with their error; out is zeroed
 * over the class's length when the class is known. */
static void test_ec_bad_jobs(void **state)
{
    const struct sf_key *keys = begin(state);
    const struct ec_fx *f = ec_keys();
    struct ec_rec rec;
    static const struct {
        const char *name;
        enum ec_job kind;
        int what;
        mbc_err err;
        int zeroed;
    } cases[] = {
        {"sign, key NULL", EJ_SIGN, 0, MBC_ERR_NULL_PARAM, 0},
        {"sign, in NULL", EJ_SIGN, 1, MBC_ERR_NULL_PARAM, 1},
        {"sign, out NULL", EJ_SIGN, 2, MBC_ERR_NULL_PARAM, 0},
        {"sign, digest of 65 bytes", EJ_SIGN, 3, MBC_ERR_BAD_PARAM, 1},
        {"sign, out one byte short", EJ_SIGN, 4, MBC_ERR_BAD_PARAM, 0},
        {"sign, public key", EJ_SIGN, 5, MBC_ERR_BAD_PARAM, 0},
        {"sign, RSA key", EJ_SIGN, 6, MBC_ERR_BAD_PARAM, 0},
        {"verify, signature NULL", EJ_VERIFY, 7, MBC_ERR_NULL_PARAM, 0},
        {"verify, signature one byte long", EJ_VERIFY, 8, MBC_ERR_BAD_PARAM, 0},
        {"verify, private key", EJ_VERIFY, 5, MBC_ERR_BAD_PARAM, 0},
        {"ecdh, peer one byte short", EJ_ECDH, 3, MBC_ERR_BAD_PARAM, 1},
        {"ecdh, peer off the curve", EJ_ECDH, 9, MBC_ERR_NOT_ON_CURVE, 1},
        {"ecdh, P-384 key, P-256 lengths", EJ_ECDH, 10, MBC_ERR_BAD_PARAM, 1},
        {"keygen, out2 NULL", EJ_KEYGEN, 11, MBC_ERR_NULL_PARAM, 1},
        {"keygen, out2 short", EJ_KEYGEN, 12, MBC_ERR_BAD_PARAM, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mbc_mgr *mgr = new_mgr(0, 0);
        ec_job_init(&rec, cases[i].kind, 0, 32);
        mbc_job *j = &rec.job;
        size_t zero_len = cases[i].kind == EJ_SIGN ? 64 : 32;
        uint8_t peer[97];
        switch (cases[i].what) {
        case 0:
            j->key = NULL;
            break;
        case 1:
            j->in = NULL;
            break;
        case 2:
            j->out = NULL;
            break;
        case 3:
            j->in_len = cases[i].kind == EJ_SIGN ? 65 : 64;
            break;
        case 4:
            j->out_len = 63;
            break;
        case 5:
            j->key = cases[i].kind == EJ_SIGN ? (const void *)f->pub[0] : (const void *)f->priv[0];
            break;
        case 6:
            j->key = keys[0].priv;
            break;
        case 7:
            j->in2 = NULL;
            break;
        case 8:
            j->in2_len = 65;
            break;
        case 9:
            memcpy(peer, f->peer[0], 65);
            peer[64] ^= 1;
            j->in = peer;
            break;
        case 10:
            j->key = f->priv[1];
            zero_len = 48; /* the class of the key is known: P-384 ECDH */
            break;
        case 11:
            j->out2 = NULL;
            break;
        default:
            j->out2_len = 64;
            break;
        }
        assert_int_equal(mbc_mgr_submit(mgr, j), MBC_OK);
        if (cases[i].what == 9) {
            assert_int_equal(mbc_mgr_flush(mgr), 1); /* a lane error: the job ran */
        } else {
            assert_int_equal(j->status, cases[i].err);
            assert_int_equal(mbc_mgr_pending(mgr), 0);
        }
        assert_ptr_equal(mbc_mgr_get_completed(mgr), j);
        if (j->status != cases[i].err) {
            fail_msg("%s: %s, want %s", cases[i].name, mbc_err_str(j->status),
                     mbc_err_str(cases[i].err));
        }
        for (size_t b = 0; b < sizeof(rec.out); b++) {
            const int zero = cases[i].zeroed && b < zero_len;
            if (rec.out[b] != (zero ? 0 : SF_CANARY)) {
                fail_msg("%s: out[%zu] is 0x%02x", cases[i].name, b, rec.out[b]);
            }
        }
        mbc_mgr_free(mgr);
    }
    /* a digest of any length up to 64 bytes, 0 included, signs */
    mbc_mgr *mgr = new_mgr(0, MBC_MGR_SYNC);
    for (size_t dlen = 0; dlen <= 64; dlen += 16) {
        ec_job_init(&rec, EJ_SIGN, 1, dlen);
        assert_int_equal(mbc_mgr_submit(mgr, &rec.job), MBC_OK);
        assert_ptr_equal(mbc_mgr_get_completed(mgr), &rec.job);
        ec_job_check(&rec, EJ_SIGN, 1, "sync sign");
    }
    mbc_mgr_free(mgr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MBT_IMPL_TESTS(test_random_sequences),
        MBT_IMPL_TESTS(test_batch_sizes),
        MBT_IMPL_TESTS(test_bad_jobs),
        MBT_IMPL_TESTS(test_bad_lanes),
        MBT_IMPL_TESTS(test_job_states),
        MBT_IMPL_TESTS(test_deadlines),
        MBT_IMPL_TESTS(test_sync),
        MBT_IMPL_TESTS(test_free_busy),
        MBT_IMPL_TESTS(test_ec_classes),
        MBT_IMPL_TESTS(test_ec_bad_jobs),
    };
    int failed = mbt_run("sched", tests);
    sf_free();
    ec_keys_free();
    return failed;
}
