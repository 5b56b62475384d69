/*
 * mbo_local.h - what the files of openssl/common share among themselves.
 */
#ifndef MBC_OPENSSL_COMMON_MBO_LOCAL_H
#define MBC_OPENSSL_COMMON_MBO_LOCAL_H

#include "mbo.h"

/*
 * mbo_req: what mbo_run_jobs keeps for its requests while they wait: the
 * user_data of each of their jobs points to it. done counts (release) the
 * jobs the manager has returned: once it reaches jobs, every one is out of
 * the manager and its result final.
 */
struct mbo_req {
    size_t done, jobs;
};

/* mbo_drain: takes every completed job out of mgr and counts it done in its
 * request. Returns the number of jobs taken. */
size_t mbo_drain(mbc_mgr *mgr);

/* mbo_thread_call: fn(arg) on the calling thread t, on a stack of t's own
 * (256 KiB) when own_stack is set (inside an ASYNC job, whose stack is too
 * small for the kernels), else on the caller's. 0 if the stack could not be
 * had (fn not called). */
int mbo_thread_call(struct mbo_thread *t, void (*fn)(void *), void *arg, int own_stack);

/* mbo_counters_setup, mbo_counters_teardown: map and unmap the counters file
 * named by MBCRYPTO_COUNTERS_FILE (at the first mbo_init, the last mbo_fini). */
void mbo_counters_setup(void);
void mbo_counters_teardown(void);

#endif /* MBC_OPENSSL_COMMON_MBO_LOCAL_H */
