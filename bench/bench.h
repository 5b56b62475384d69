/*
 * bench.h - what the files of mbc_bench share: options, the timing engine
 * (measure.c), the run loops of the public-key workloads (loops.c), the JSON
 * writer (json.c) and the RSA, EC and AES-GCM workloads (bench_rsa.c,
 * bench_ec.c, bench_gcm.c). mbc_bench.c holds the command line, the case
 * and family tables and the reports.
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
#define PEER_CRYPTO_MB 4u

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
    uint64_t ops;       /* operations completed */
    double elapsed;     /* seconds, from the run's start to its last completion */
    double cpu;         /* seconds of CPU time the thread used meanwhile (set by the engine) */
    double cpu_untimed; /* seconds of it spent after the timed window (deferred checks, set
                           by the run_fn): the engine leaves them out */
    int want_lat;       /* set by the engine: record latency samples */
    uint64_t *lat;      /* latency samples in ns, in completion order */
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

/* bench_cpu_id: the processor's identity from CPUID (vendor, family, model
 * and stepping as /proc/cpuinfo numbers them, brand string), for reports:
 * the same code runs at different speeds on different cores, so every
 * result names the CPU it came from. */
typedef struct bench_cpu_id {
    char vendor[13];
    char brand[49];
    unsigned family, model, stepping;
} bench_cpu_id;
void bench_cpu_identify(bench_cpu_id *id);

/*
 * measure_items: warm-up, then opts->reps rounds; each round measures every
 * item in turn (on opts->threads threads, and alone on one thread as well
 * when threads > 1), so a change of machine load hits all of them alike.
 * Fills items[i].res. Returns 0, or -1 when a run failed.
 */
int measure_items(bench_item *items, size_t n, const bench_opts *opts);

/* bench_estimate: seconds measure_items takes for n items. */
double bench_estimate(size_t n, const bench_opts *opts);

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

/* bench_fail: prints "mbc_bench: ERROR: ..." on stderr; returns -1.
 * bench_ossl_fail: the same for a failed OpenSSL call (what), with
 * OpenSSL's error queue. */
int bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int bench_ossl_fail(const char *what);

/* pk_arg: what the public-key run functions (RSA, EC) run: an operation of
 * the family (RSA_OP_*, EC_OP_*) and, for the manager runs, K requests in
 * flight. */
typedef struct bench_pool bench_pool;
typedef struct pk_case pk_case;
typedef struct pk_arg {
    unsigned op;
    unsigned k;
    const bench_pool *pool; /* the family's pool hooks (NULL: it has none) */
} pk_arg;

/*
 * bench_pool: the hooks of a family whose workload is a pool of requests
 * (X25519, ML-KEM, the hybrid), for the one runner of their 8-lane and
 * single calls (loops.c): size requests (a multiple of MBC_LANES); mb8
 * makes one 8-lane call of op on requests e0..e0+7 into the thread's
 * output slots 0..7; single one call of op on request e into slot 0; check
 * tests slot's outputs as request e's (full: also the costly cross-check;
 * 0, or -1 with the reason printed). name and ops[op] name them in
 * messages. A thread state of such a family begins with a bench_pool_pos.
 */
struct bench_pool {
    unsigned size;
    const char *name;
    const char *const *ops;
    unsigned nops;
    mbc_status (*mb8)(void *ts, unsigned op, unsigned e0);
    mbc_err (*single)(void *ts, unsigned op, unsigned e);
    int (*check)(void *ts, unsigned op, unsigned e, unsigned slot, int full);
    /* a thread state: thread_size zeroed bytes, then thread_init (its case
     * c, OpenSSL's contexts; 0, or -1 with the reason printed);
     * thread_free releases what init made, also after a failed init */
    size_t thread_size;
    int (*thread_init)(void *ts, const pk_case *c);
    void (*thread_free)(void *ts);
    /* the case: case_size zeroed bytes, beginning with its thread states
     * (void *th[BENCH_MAX_THREADS]), then material (the pool's requests
     * and their expected results; 0, or -1 with the reason printed) */
    size_t case_size;
    int (*material)(pk_case *c);
};
typedef struct bench_pool_pos {
    unsigned next, next8, sample;
} bench_pool_pos;
/* BENCH_SAMPLE: one result in this many gets the full check. */
#define BENCH_SAMPLE 64
/* The runs of a pool family (pk_arg's pool), and the check a case makes
 * when it is built: one 8-lane call and one single call of each of nops
 * operations on thread state ts, every result fully checked. */
int bench_pool_run_mb8(void *ts, const void *arg, double seconds, run_out *out);
int bench_pool_run_single(void *ts, const void *arg, double seconds, run_out *out);
int bench_pool_selftest(void *ts, const bench_pool *pool, unsigned nops);
/* bench_pool_threads_new: the n thread states of case c into th (see
 * struct bench_pool), then the self-test on th[0]; 0 or -1 (th then holds
 * what was made). bench_pool_threads_free: frees them. */
/* bench_pool_case_new: pool p's case (see struct bench_pool): material,
 * opts->threads thread states, the self-test on the first; NULL, with the
 * reason printed, on failure. bench_pool_case_free frees it (NULL: nothing);
 * bench_pool_case_threads gives its thread states. */
pk_case *bench_pool_case_new(const bench_pool *p, const bench_opts *opts);
void bench_pool_case_free(const bench_pool *p, pk_case *c);
void *const *bench_pool_case_threads(const pk_case *c);

/*
 * The run loops the public-key workloads share (loops.c).
 * bench_unit: one timed unit on thread state ts: does its operations, sets
 * *t_done as soon as they are done (before the check, so latency excludes
 * it), checks the results and returns how many operations it did, or -1.
 * bench_timed_run: units until seconds have passed; one latency sample a
 * unit; out->elapsed from the start to the last unit's t_done.
 */
typedef int (*bench_unit)(void *ts, unsigned op, uint64_t *t_done);
int bench_timed_run(void *ts, unsigned op, double seconds, run_out *out, bench_unit unit);

/* bench_jobs: K jobs of a thread, each with out and out2 buffers of
 * out_size bytes, submit times and a free list. Zero-initialise; free with
 * bench_jobs_free. */
typedef struct bench_jobs {
    size_t cap, out_size;
    mbc_job *jobs;
    uint8_t *out;
    uint64_t *t_submit;
    unsigned *free_jobs;
} bench_jobs;
void bench_jobs_free(bench_jobs *b);

/* bench_mgr_fns: a workload's side of a manager run: init fills job j of op
 * (request j mod its pool; user_data is the loop's), with its buffers out
 * and out2 (out_size bytes each, zeroed before every submit); check tests a
 * completed job j whose status is MBC_OK (0, or -1 with the reason
 * printed); label names the case and op for messages. */
typedef struct bench_mgr_fns {
    void (*init)(void *ts, unsigned op, unsigned j, mbc_job *job, uint8_t *out, uint8_t *out2);
    int (*check)(void *ts, unsigned op, const mbc_job *job, unsigned j);
    const char *(*label)(void *ts, unsigned op);
    size_t out_size;
} bench_mgr_fns;

/*
 * bench_run_mgr: K requests in flight through one manager (this thread's),
 * closed loop, as an event loop would run it: submit until K are in flight;
 * collect what completed; when nothing completed and nothing else can arrive
 * (all K are submitted and waiting), flush, the way an event loop flushes
 * when it goes idle; every collected request is resubmitted at once (its
 * client sends the next one). Latency: submit to collection, per job.
 * bench_check_mgr: one job of op through a manager passes its check.
 */
int bench_run_mgr(void *ts, bench_jobs *b, const bench_mgr_fns *fns, unsigned op, unsigned k,
                  double seconds, run_out *out);
int bench_check_mgr(void *ts, bench_jobs *b, const bench_mgr_fns *fns, unsigned op);

/*
 * pk_case: the interface of a public-key family's workload to mbc_bench.c
 * (a row of its family table): case_new builds a case (keys, requests with
 * OpenSSL's results, per-thread state) for size (RSA bits, EC curve bits)
 * and checks one 8-lane batch and one single call against OpenSSL (NULL,
 * reason on stderr, on failure); threads gives the per-thread states;
 * check_mgr runs one job of op through a manager. The run functions take a
 * pk_arg. (Its typedef is above, with pk_arg's.)
 */

/* RSA (bench_rsa.c). op: RSA_OP_PRIVATE or RSA_OP_PUBLIC. */
enum { RSA_OP_PRIVATE = 0, RSA_OP_PUBLIC = 1 };

pk_case *rsa_case_new(unsigned bits, const bench_opts *opts);
void rsa_case_free(pk_case *c);
void *const *rsa_case_threads(const pk_case *c);
int rsa_check_mgr(pk_case *c, unsigned op);
/* rsa_material_free_all: frees the cached keys (at exit). */
void rsa_material_free_all(void);

int rsa_run_mb8(void *ts, const void *arg, double seconds, run_out *out);    /* 8 lanes/call */
int rsa_run_single(void *ts, const void *arg, double seconds, run_out *out); /* one op/call */
int rsa_run_mgr(void *ts, const void *arg, double seconds, run_out *out);    /* K in flight */
int rsa_run_ossl(void *ts, const void *arg, double seconds, run_out *out);   /* OpenSSL */

/* EC (bench_ec.c): P-256 and P-384 (bits 256, 384). ops: */
enum { EC_OP_SIGN = 0, EC_OP_VERIFY = 1, EC_OP_ECDH = 2, EC_OP_KEYGEN = 3 };

pk_case *ec_case_new(unsigned bits, const bench_opts *opts);
void ec_case_free(pk_case *c);
void *const *ec_case_threads(const pk_case *c);
int ec_check_mgr(pk_case *c, unsigned op);
void ec_material_free_all(void);

int ec_run_mb8(void *ts, const void *arg, double seconds, run_out *out);
int ec_run_single(void *ts, const void *arg, double seconds, run_out *out);
int ec_run_mgr(void *ts, const void *arg, double seconds, run_out *out);
int ec_run_ossl(void *ts, const void *arg, double seconds, run_out *out);

/* X25519 (bench_x25519.c), one case (size unused): ops X25519_OP_DERIVE (a
 * shared secret with a peer's public key) and X25519_OP_KEYGEN (a new key
 * pair). */
enum { X25519_OP_DERIVE = 0, X25519_OP_KEYGEN = 1 };

pk_case *x25519_case_new(unsigned bits, const bench_opts *opts);
void x25519_case_free(pk_case *c);
int x25519_check_mgr(pk_case *c, unsigned op);
extern const bench_pool x25519_pool;

int x25519_run_mgr(void *ts, const void *arg, double seconds, run_out *out);
int x25519_run_ossl(void *ts, const void *arg, double seconds, run_out *out);

/* ML-KEM-768 (bench_mlkem.c), one case (size unused): ops MLKEM_OP_KEYGEN,
 * MLKEM_OP_ENCAPS, MLKEM_OP_DECAPS. */
enum { MLKEM_OP_KEYGEN = 0, MLKEM_OP_ENCAPS = 1, MLKEM_OP_DECAPS = 2 };

pk_case *mlkem_case_new(unsigned bits, const bench_opts *opts);
void mlkem_case_free(pk_case *c);
int mlkem_check_mgr(pk_case *c, unsigned op);
extern const bench_pool mlkem_pool;

int mlkem_run_mgr(void *ts, const void *arg, double seconds, run_out *out);
int mlkem_run_ossl(void *ts, const void *arg, double seconds, run_out *out);

/* X25519MLKEM768 (bench_hybrid.c), one case: the ML-KEM-768 ops
 * (MLKEM_OP_*) of the hybrid, as mbcrypto's ML-KEM and X25519 calls beside
 * OpenSSL 3.5's hybrid KEM. No manager class (check_mgr fails, saying so). */
pk_case *hybrid_case_new(unsigned bits, const bench_opts *opts);
void hybrid_case_free(pk_case *c);
int hybrid_check_mgr(pk_case *c, unsigned op);
extern const bench_pool hybrid_pool;
int hybrid_run_ossl(void *ts, const void *arg, double seconds, run_out *out);

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

/* crypto_mb (bench_cmb.c): Intel's multi-buffer library as a peer, its
 * 8-lane _ssl_mb8 calls (those QAT_Engine makes), when meson found it (see
 * meson_options.txt: crypto_mb). cmb_version: its version, NULL when not
 * built in; cmb_unusable: NULL when it can run here, else why not (it needs
 * AVX-512 IFMA). A case is one family and size (CMB_RSA: bits 2048..4096;
 * CMB_EC: 256, 384; CMB_X25519), every lane of every operation checked
 * against OpenSSL when it is made (NULL, reason on stderr, on failure); the
 * ops are the family's (RSA_OP_*, EC_OP_*, X25519_OP_*); cmb_run takes a
 * pk_arg. Its EC keygen returns Jacobian X:Y:Z, without the inversion. */
enum cmb_family { CMB_RSA, CMB_EC, CMB_X25519 };
typedef struct cmb_case cmb_case;
const char *cmb_version(void);
const char *cmb_unusable(void);
cmb_case *cmb_case_new(enum cmb_family fam, unsigned bits, const bench_opts *opts);
void cmb_case_free(cmb_case *c);
void *const *cmb_case_threads(const cmb_case *c);
int cmb_run(void *ts, const void *arg, double seconds, run_out *out);

#endif /* MBC_BENCH_BENCH_H */
