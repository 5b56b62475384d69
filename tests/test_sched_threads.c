/*
 * test_sched_threads.c - several threads, each with its own lane manager,
 * sharing the same key objects: random submits, flushes, polls and
 * collections, every result checked against OpenSSL. Built into every test
 * build, and the only test of the ThreadSanitizer build (meson suite
 * 'tsan'; tools/run.sh test), where any data race fails it.
 *
 * cmocka's assertions are not thread-safe: the workers record their first
 * error and the main thread reports it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_sched_fixture.h"

#define NTHREADS 3
#define NRECS 20

struct worker {
    pthread_t tid;
    const struct sf_key *keys;
    uint64_t seed;
    size_t steps;
    uint32_t max_wait_us;
    size_t submitted, collected;
    char err[200];
};

/* collect: every completed job, each checked; 0 or -1 with w->err set. */
static int collect(struct worker *w, mbc_mgr *mgr, struct sf_rec *recs, int *busy)
{
    mbc_job *job;
    while ((job = mbc_mgr_get_completed(mgr)) != NULL) {
        struct sf_rec *rec = job->user_data;
        char msg[160];
        if (rec < recs || rec >= recs + NRECS || &rec->job != job) {
            snprintf(w->err, sizeof(w->err), "a job of another owner came back");
            return -1;
        }
        if (!busy[rec - recs]) {
            snprintf(w->err, sizeof(w->err), "job %ld returned twice", (long)(rec - recs));
            return -1;
        }
        if (sf_check(rec, msg, sizeof(msg)) != 0) {
            snprintf(w->err, sizeof(w->err), "job %ld: %s", (long)(rec - recs), msg);
            return -1;
        }
        busy[rec - recs] = 0;
        w->collected++;
    }
    return 0;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    struct sf_rng rng = {w->seed};
    struct sf_rec *recs = calloc(NRECS, sizeof(*recs));
    int busy[NRECS] = {0};
    mbc_mgr *mgr = NULL;
    const mbc_mgr_config cfg = {w->max_wait_us, 0};
    if (recs == NULL || mbc_mgr_new(&mgr, &cfg) != MBC_OK) {
        snprintf(w->err, sizeof(w->err), "setup failed");
        free(recs);
        return NULL;
    }
    for (size_t s = 0; s < w->steps && w->err[0] == '\0'; s++) {
        uint64_t r = sf_rand(&rng);
        const unsigned act = (unsigned)(r % 10);
        r /= 10;
        if (act < 6) {
            int i = (int)(r % NRECS);
            r /= NRECS;
            while (i < NRECS && busy[i]) {
                i++;
            }
            if (i == NRECS) {
                mbc_mgr_flush(mgr);
                collect(w, mgr, recs, busy);
                continue;
            }
            /* mostly 2048-bit private and public; 3072-bit public now and then */
            const unsigned kind = (unsigned)(r % 16);
            r /= 16;
            const enum sf_op op = kind < 7 ? SF_PRIV : SF_PUB;
            const struct sf_key *k = &w->keys[kind >= 14 ? 3 : r % 3];
            r /= 3;
            sf_set_job(&recs[i], op, k, (unsigned)(r % SF_NIN), kind == 13 ? 0 : -1, r % 5);
            if (mbc_mgr_submit(mgr, &recs[i].job) != MBC_OK) {
                snprintf(w->err, sizeof(w->err), "submit failed");
                break;
            }
            busy[i] = 1;
            w->submitted++;
        } else if (act < 7) {
            mbc_mgr_flush(mgr);
        } else if (act < 8) {
            mbc_mgr_poll(mgr);
        } else {
            collect(w, mgr, recs, busy);
        }
    }
    mbc_mgr_flush(mgr);
    if (w->err[0] == '\0' && collect(w, mgr, recs, busy) == 0 &&
        (w->collected != w->submitted || mbc_mgr_pending(mgr) != 0)) {
        snprintf(w->err, sizeof(w->err), "%zu jobs submitted, %zu collected", w->submitted,
                 w->collected);
    }
    mbc_mgr_free(mgr);
    free(recs);
    return NULL;
}

static void test_threads(void **state)
{
    mbt_use_impl(state);
    const struct sf_key *keys = sf_keys();
    const int on_c = strcmp((const char *)*state, "c") == 0;
    struct worker w[NTHREADS];
    memset(w, 0, sizeof(w));
    for (int t = 0; t < NTHREADS; t++) {
        w[t].keys = keys;
        w[t].seed = mbt_rand();
        w[t].steps = mbt_scale(on_c ? 100 : 800);
        w[t].max_wait_us = t == 0 ? 0 : 300;
        assert_int_equal(pthread_create(&w[t].tid, NULL, work, &w[t]), 0);
    }
    for (int t = 0; t < NTHREADS; t++) {
        assert_int_equal(pthread_join(w[t].tid, NULL), 0);
    }
    for (int t = 0; t < NTHREADS; t++) {
        if (w[t].err[0] != '\0') {
            fail_msg("thread %d: %s", t, w[t].err);
        }
        print_message("thread %d: %zu jobs\n", t, w[t].collected);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MBT_IMPL_TESTS(test_threads),
    };
    int failed = mbt_run("sched_threads", tests);
    sf_free();
    return failed;
}
