/*
 * bench.h - what the files of mbc_bench share: options, the timing engine
 * (measure.c), the JSON writer (json.c) and the RSA and AES-GCM workloads
 * (bench_rsa.c, bench_gcm.c). mbc_bench.c holds the command line, the case
 * table and the reports.
 *
 * A workload is a run_fn: it runs one operation over and over on one
 * thread's state for a given time, verifying what it computes, and reports
 * the operations done, the time taken and (when asked) one latency sample
 * per operation or batch. The engine runs a run_fn on 1..N pinned threads at
 * once, repeats it --reps times interleaved with the other implementations of
 * the same row, and reduces the repetitions to median, min and max.
 */
#ifndef MBC_BENCH_BENCH_H
#define MBC_BENCH_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mbcrypto.h"

#define BENCH_MAX_THREADS 64
#define BENCH_MAX_K 32     /* entries of a --concurrency list */
#define BENCH_K_LIMIT 4096 /* largest K */
#define BENCH_MAX_KEYS 8

/* Peers (--compare). */
#define PEER_OPENSSL 1u
#define PEER_IPSEC_MB 2u

/* bench_opts: the command line, as every part of the bench sees it. */
typedef struct bench_opts {
    double seconds;   /* per measurement */
    unsigned reps;    /* measurements per value; the median is reported */
    int best;         /* report the best rep instead of the median */
    unsigned threads; /* worker threads, each pinned to its own CPU */
    unsigned keys;    /* RSA keys per size (1: one key for every lane) */
    unsigned peers;   /* PEER_* */
    int json;
    int quiet;
    int cpu_time;            /* rates per second of thread CPU time, not wall time */
    unsigned k[BENCH_MAX_K]; /* --concurrency list */
    size_t num_k;
} bench_opts;

/* ------------------------------------------------------------------------ */
/* Timing engine (measure.c)                                                 */
/* ------------------------------------------------------------------------ */

/* run_out: what one run of a run_fn on one thread produced. */
typedef struct run_out {
    uint64_t ops;   /* operations completed */
    double elapsed; /* seconds, from the run's start to its last completion */
    double cpu;     /* seconds of CPU time the thread used meanwhile (set by the engine) */
    int want_lat;   /* set by the engine: record latency samples */
    uint64_t *lat;  /* latency samples in ns, in completion order */
    size_t num_lat, cap_lat;
} run_out;

/*
 * run_fn: runs for about 'seconds' on thread state ts (arg: what to run),
 * adding to out. Returns 0, or -1 after printing why on stderr when a result
 * was wrong or a call failed (the case is then aborted).
 */
typedef int (*run_fn)(void *ts, const void *arg, double seconds, run_out *out);

/* bench_now_ns: CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

/* run_out_lat: records one latency sample (when samples are wanted). */
void run_out_lat(run_out *out, uint64_t ns);

/* stat3: one value over the reps. */
typedef struct stat3 {
    double med, min, max;
} stat3;

/* item_result: everything the engine measured for one item. */
typedef struct item_result {
    stat3 rate;                           /* ops/s, all threads together */
    stat3 rate1;                          /* ops/s of one thread alone (only when threads > 1) */
    double scaling;                       /* rate.med / rate1.med (threads > 1) */
    double per_thread[BENCH_MAX_THREADS]; /* median ops/s of each thread */
    double p50_us, p99_us;                /* median over the reps (latency items) */
    double q50_us[BENCH_MAX_K], q99_us[BENCH_MAX_K]; /* queued latency per K (queue items) */
    double spread;    /* (max - min) / median of the rate, in % (0 with one rep) */
    double cpu_share; /* lowest over the reps of CPU time / wall time of the threads:
                         below ~0.9, other processes took the CPU while measuring */
} item_result;

/*
 * bench_item: one implementation of one row: run fn(ts[t], arg) on every
 * thread t. latency: collect one sample per completion and report p50/p99.
 * queue: also report, for each K of the --concurrency list, the latency a
 * request would see with K requests in flight served one at a time: the sum
 * of the K consecutive per-operation times ending with it (needs latency).
 */
typedef struct bench_item {
    const char *label; /* for progress and errors */
    run_fn fn;
    const void *arg;
    void *const *ts; /* opts->threads thread states */
    int latency;
    int queue;
    item_result res;
} bench_item;

/* bench_cpus_init: reads the CPUs this process may run on (its affinity). */
void bench_cpus_init(void);
/* bench_cpu: the CPU thread t is pinned to. */
int bench_cpu(unsigned t);
unsigned bench_num_cpus(void);

/*
 * measure_items: warm-up, then opts->reps rounds; each round measures every
 * item in turn (on opts->threads threads, and alone on one thread as well
 * when threads > 1), so a change of machine load hits all of them alike.
 * Fills items[i].res. Returns 0, or -1 when a run failed.
 */
int measure_items(bench_item *items, size_t n, const bench_opts *opts);

/* bench_estimate: seconds measure_items takes for n items. */
double bench_estimate(size_t n, const bench_opts *opts);

/*
 * bench_unit_fn: one timed unit of a run on thread state th: does its
 * operations, sets *t_done as soon as they are done (before any check, so
 * latency excludes it), checks the results and returns how many operations
 * it did, or -1 after printing why.
 * bench_timed_run: units until seconds have passed; one latency sample a
 * unit; out->elapsed from the start to the last unit's t_done.
 */
typedef int bench_unit_fn(void *th, unsigned op, uint64_t *t_done);
int bench_timed_run(void *th, unsigned op, double seconds, run_out *out, bench_unit_fn *unit);

/*
 * bench_mgr_loop: k requests in flight through one manager (this thread's),
 * closed loop, as an event loop would run it: submit until k are in flight;
 * collect what completed; when nothing completed and nothing else can arrive
 * (all k are submitted and waiting), flush, the way an event loop flushes
 * when it goes idle; every collected request is resubmitted at once (its
 * client sends the next one). Latency: submit to collection, per job. jobs
 * are set up by the caller; prep(ctx, job) runs before each submission (a
 * fresh output), check(ctx, job) on each completed job (0, or -1 after
 * printing why). Returns 0 or -1.
 */
typedef struct bench_mgr_jobs {
    const char *what; /* for errors */
    mbc_job *jobs;
    unsigned k;
    void *ctx;
    void (*prep)(void *ctx, mbc_job *job);
    int (*check)(void *ctx, const mbc_job *job);
} bench_mgr_jobs;
int bench_mgr_loop(const bench_mgr_jobs *w, double seconds, run_out *out);
/* bench_mgr_one: job 0 of w alone through a new manager: submitted,
 * flushed, returned exactly once and checked. 0 or -1. */
int bench_mgr_one(const bench_mgr_jobs *w);

/* ------------------------------------------------------------------------ */
/* JSON writer (json.c): results go to a buffer printed at the end           */
/* ------------------------------------------------------------------------ */

/* Keys are NULL inside arrays. Numbers that are not finite become null. */
void json_obj_begin(const char *key);
void json_obj_end(void);
void json_arr_begin(const char *key);
void json_arr_end(void);
void json_str(const char *key, const char *value);
void json_num(const char *key, double value);
void json_int(const char *key, long long value);
void json_bool(const char *key, int value);
/* json_stat: {"median":..,"min":..,"max":..}. */
void json_stat(const char *key, const stat3 *s);
/* json_print: writes the document and a newline to f, frees the buffer. */
void json_print(FILE *f);

/* ------------------------------------------------------------------------ */
/* Workloads                                                                 */
/* ------------------------------------------------------------------------ */

/* bench_fail: prints "mbc_bench: ERROR: ..." on stderr; returns -1. */
int bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* RSA (bench_rsa.c). op: RSA_OP_PRIVATE or RSA_OP_PUBLIC. */
enum { RSA_OP_PRIVATE = 0, RSA_OP_PUBLIC = 1 };

typedef struct rsa_arg {
    unsigned op;
    unsigned k; /* requests in flight (rsa_run_mgr) */
} rsa_arg;

typedef struct rsa_case rsa_case;

/*
 * rsa_case_new: keys (generated once per size by OpenSSL, then cached),
 * inputs with OpenSSL's results, mbcrypto key objects, one state per thread;
 * then one 8-lane batch, one single call of each operation checked against
 * OpenSSL. NULL (reason on stderr) when anything fails or differs.
 */
rsa_case *rsa_case_new(unsigned bits, const bench_opts *opts);
void rsa_case_free(rsa_case *c);
void *const *rsa_case_threads(const rsa_case *c);
/* rsa_check_mgr: one job of op through a manager equals OpenSSL's result. */
int rsa_check_mgr(rsa_case *c, unsigned op);
/* rsa_material_free_all: frees the cached keys (at exit). */
void rsa_material_free_all(void);

int rsa_run_mb8(void *ts, const void *arg, double seconds, run_out *out);    /* 8 lanes/call */
int rsa_run_single(void *ts, const void *arg, double seconds, run_out *out); /* one op/call */
int rsa_run_mgr(void *ts, const void *arg, double seconds, run_out *out);    /* K in flight */
int rsa_run_ossl(void *ts, const void *arg, double seconds, run_out *out);   /* OpenSSL */

/* X25519 (bench_x25519.c): ops X25519_OP_DERIVE (a shared secret with a
 * peer's public key) and X25519_OP_KEYGEN (a new key pair); the argument is
 * an rsa_arg (op, and k for x25519_run_mgr). */
enum { X25519_OP_DERIVE = 0, X25519_OP_KEYGEN = 1 };

typedef struct x25519_case x25519_case;

/*
 * x25519_case_new: a pool of requests (OpenSSL key pairs: a private scalar
 * and a peer public key each, with OpenSSL's shared secret), one state per
 * thread; then one 8-lane call and one single call of each operation
 * checked against OpenSSL. NULL (reason on stderr) when anything fails.
 */
x25519_case *x25519_case_new(const bench_opts *opts);
void x25519_case_free(x25519_case *c);
void *const *x25519_case_threads(const x25519_case *c);
/* x25519_check_mgr: one job of op through a manager checked. */
int x25519_check_mgr(x25519_case *c, unsigned op);

int x25519_run_mb8(void *ts, const void *arg, double seconds, run_out *out);
int x25519_run_single(void *ts, const void *arg, double seconds, run_out *out);
int x25519_run_mgr(void *ts, const void *arg, double seconds, run_out *out);
int x25519_run_ossl(void *ts, const void *arg, double seconds, run_out *out);

/* AES-GCM (bench_gcm.c). */
enum { GCM_OP_SEAL = 0, GCM_OP_OPEN = 1 };
enum { GCM_IMPL_MBC = 0, GCM_IMPL_OSSL = 1, GCM_IMPL_IPSEC_MB = 2 };

typedef struct gcm_arg {
    unsigned op;
    unsigned impl;
} gcm_arg;

typedef struct gcm_case gcm_case;

/* gcm_case_new: key, message, per-thread contexts; mbcrypto's seal checked
 * against OpenSSL (and intel-ipsec-mb), every open checked. NULL on failure. */
gcm_case *gcm_case_new(unsigned bits, size_t len, const bench_opts *opts);
void gcm_case_free(gcm_case *c);
void *const *gcm_case_threads(const gcm_case *c);
/* gcm_case_impl: the implementation the mbcrypto key uses. */
const char *gcm_case_impl(const gcm_case *c);
int gcm_run(void *ts, const void *arg, double seconds, run_out *out);
/* gcm_ipsec_mb: intel-ipsec-mb's version and architecture, or NULL when not
 * built in. */
const char *gcm_ipsec_mb(void);

#endif /* MBC_BENCH_BENCH_H */
