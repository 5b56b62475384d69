/*
 * measure.c - the timing engine of mbc_bench: pinned worker threads, reps
 * interleaved across the implementations of a row, medians and percentiles.
 *
 * Every measurement starts its threads afresh: thread t pins itself to the
 * t-th CPU the process may use (sched_getaffinity at start, so taskset
 * chooses the CPUs), waits on a barrier with the others, then runs its
 * run_fn for --seconds. A thread's rate is its operations over its own
 * elapsed time; the total is the sum over threads. Latency percentiles of a
 * rep are taken over the samples of all threads of that rep; the reported
 * value is the median (or with --best the lowest) over the reps.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <openssl/err.h>

#include "bench.h"

static int g_cpus[CPU_SETSIZE];
static unsigned g_num_cpus;

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bench_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mbc_bench: ERROR: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return -1;
}

/* xcalloc: calloc or exit (the bench cannot go on without memory). */
int bench_ossl_fail(const char *what)
{
    bench_fail("OpenSSL: %s", what);
    ERR_print_errors_fp(stderr);
    return -1;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);
    if (p == NULL) {
        fprintf(stderr, "mbc_bench: FATAL: out of memory\n");
        exit(1);
    }
    return p;
}

void run_out_lat(run_out *out, uint64_t ns)
{
    if (!out->want_lat) {
        return;
    }
    if (out->num_lat == out->cap_lat) {
        size_t cap = out->cap_lat == 0 ? 4096 : 2 * out->cap_lat;
        uint64_t *p = realloc(out->lat, cap * sizeof(*p));
        if (p == NULL) {
            fprintf(stderr, "mbc_bench: FATAL: out of memory\n");
            exit(1);
        }
        out->lat = p;
        out->cap_lat = cap;
    }
    out->lat[out->num_lat++] = ns;
}

void bench_cpus_init(void)
{
    cpu_set_t set;
    g_num_cpus = 0;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
            if (CPU_ISSET(cpu, &set)) {
                g_cpus[g_num_cpus++] = cpu;
            }
        }
    }
    if (g_num_cpus == 0) {
        g_cpus[0] = 0;
        g_num_cpus = 1;
    }
}

int bench_cpu(unsigned t)
{
    return g_cpus[t % g_num_cpus];
}

unsigned bench_num_cpus(void)
{
    return g_num_cpus;
}

void bench_cpu_identify(bench_cpu_id *id)
{
    memset(id, 0, sizeof(*id));
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        memcpy(id->vendor, &b, 4);
        memcpy(id->vendor + 4, &d, 4);
        memcpy(id->vendor + 8, &c, 4);
    }
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        const unsigned base = (a >> 8) & 0xF, ext_model = (a >> 16) & 0xF;
        id->family = base == 0xF ? base + ((a >> 20) & 0xFF) : base;
        id->model = base == 0x6 || base == 0xF ? (ext_model << 4) | ((a >> 4) & 0xF)
                                               : (a >> 4) & 0xF;
        id->stepping = a & 0xF;
    }
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000004u) {
        for (unsigned i = 0; i < 3; i++) {
            unsigned r[4];
            __get_cpuid(0x80000002u + i, &r[0], &r[1], &r[2], &r[3]);
            memcpy(id->brand + 16 * i, r, 16);
        }
        /* brand strings are padded with spaces at either end */
        size_t n = strlen(id->brand);
        while (n > 0 && id->brand[n - 1] == ' ') {
            id->brand[--n] = '\0';
        }
        size_t lead = strspn(id->brand, " ");
        memmove(id->brand, id->brand + lead, n - lead + 1);
    }
#endif
    if (id->vendor[0] == '\0') {
        strcpy(id->vendor, "unknown");
    }
}

/* ------------------------------------------------------------------------ */
/* One measurement on n threads                                              */
/* ------------------------------------------------------------------------ */

struct worker {
    const bench_item *item;
    void *ts;
    double seconds;
    run_out *out;
    pthread_barrier_t *barrier;
    int cpu;
    int rc;
};

static void *worker_main(void *p)
{
    struct worker *w = p;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w->cpu, &set);
    int pin = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    pthread_barrier_wait(w->barrier);
    if (pin != 0) {
        w->rc = bench_fail("%s: cannot pin a thread to CPU %d", w->item->label, w->cpu);
        return NULL;
    }
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    w->rc = w->item->fn(w->ts, w->item->arg, w->seconds, w->out);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    w->out->cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9 -
                  w->out->cpu_untimed;
    return NULL;
}

/* run_threads: item on n threads for seconds; out[t] gets thread t's run. */
static int run_threads(const bench_item *item, unsigned n, double seconds, run_out *out)
{
    pthread_t tid[BENCH_MAX_THREADS];
    struct worker w[BENCH_MAX_THREADS];
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, n);
    for (unsigned t = 0; t < n; t++) {
        out[t].ops = 0;
        out[t].elapsed = 0;
        out[t].cpu = 0;
        out[t].cpu_untimed = 0;
        out[t].num_lat = 0;
        out[t].want_lat = item->latency;
        w[t] = (struct worker){item, item->ts[t], seconds, &out[t], &barrier, bench_cpu(t), 0};
        if (pthread_create(&tid[t], NULL, worker_main, &w[t]) != 0) {
            fprintf(stderr, "mbc_bench: FATAL: pthread_create failed\n");
            exit(1);
        }
    }
    int rc = 0;
    for (unsigned t = 0; t < n; t++) {
        pthread_join(tid[t], NULL);
        if (w[t].rc != 0) {
            rc = -1;
        }
    }
    pthread_barrier_destroy(&barrier);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */
/* ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* reduce: median (or the best: highest, or lowest when lower_better) of v. */
static stat3 reduce(double *v, unsigned n, int best, int lower_better)
{
    qsort(v, n, sizeof(*v), cmp_double);
    stat3 s = {0, v[0], v[n - 1]};
    if (best) {
        s.med = lower_better ? v[0] : v[n - 1];
    } else {
        s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
    return s;
}

/* percentile_us: nearest-rank percentile p (0..1) of v (sorted here), in us. */
static double percentile_us(uint64_t *v, size_t n, double p)
{
    if (n == 0) {
        return NAN;
    }
    qsort(v, n, sizeof(*v), cmp_u64);
    size_t rank = (size_t)ceil(p * (double)n);
    return (double)v[rank == 0 ? 0 : rank - 1] * 1e-3;
}

/* merged: all threads' samples in one array (caller frees). */
static uint64_t *merged(const run_out *out, unsigned n, size_t *num)
{
    size_t total = 0;
    for (unsigned t = 0; t < n; t++) {
        total += out[t].num_lat;
    }
    uint64_t *v = xcalloc(total, sizeof(*v));
    size_t at = 0;
    for (unsigned t = 0; t < n; t++) {
        memcpy(v + at, out[t].lat, out[t].num_lat * sizeof(*v));
        at += out[t].num_lat;
    }
    *num = total;
    return v;
}

/* queued: for each thread, the sums of k consecutive samples (the latency of
 * a request that waits for the k-1 ahead of it), all in one array. */
static uint64_t *queued(const run_out *out, unsigned n, unsigned k, size_t *num)
{
    size_t total = 0;
    for (unsigned t = 0; t < n; t++) {
        total += out[t].num_lat >= k ? out[t].num_lat - k + 1 : 0;
    }
    uint64_t *v = xcalloc(total, sizeof(*v));
    size_t at = 0;
    for (unsigned t = 0; t < n; t++) {
        const uint64_t *x = out[t].lat;
        uint64_t sum = 0;
        for (size_t i = 0; i < out[t].num_lat; i++) {
            sum += x[i];
            if (i >= k) {
                sum -= x[i - k];
            }
            if (i + 1 >= k) {
                v[at++] = sum;
            }
        }
    }
    *num = total;
    return v;
}

/* ------------------------------------------------------------------------ */
/* Items                                                                     */
/* ------------------------------------------------------------------------ */

/* per_item: the values of every rep of one item. */
struct per_item {
    double *rate, *rate1, *per_thread, *p50, *p99, *q50, *q99, *share;
};

static double warmup_seconds(const bench_opts *opts)
{
    return opts->seconds / 10 < 0.2 ? opts->seconds / 10 : 0.2;
}

double bench_estimate(size_t n, const bench_opts *opts)
{
    double per = opts->reps * opts->seconds * (opts->threads > 1 ? 2 : 1);
    return (double)n * (per + warmup_seconds(opts));
}

/* thread_rate: ops/s of one thread's run, over wall or (--cpu-time) CPU time. */
static double thread_rate(const run_out *o, const bench_opts *opts)
{
    double t = opts->cpu_time ? o->cpu : o->elapsed;
    return t > 0 ? (double)o->ops / t : 0;
}

/* record: the values of rep r of item i from out[0..n). */
static void record(struct per_item *v, unsigned r, const bench_item *item, run_out *out, unsigned n,
                   const bench_opts *opts)
{
    double total = 0, cpu = 0, wall = 0;
    for (unsigned t = 0; t < n; t++) {
        double rate = thread_rate(&out[t], opts);
        v->per_thread[t * opts->reps + r] = rate;
        total += rate;
        cpu += out[t].cpu;
        wall += out[t].elapsed;
    }
    v->rate[r] = total;
    v->share[r] = wall > 0 ? cpu / wall : 0;
    if (!item->latency) {
        return;
    }
    size_t num;
    uint64_t *all = merged(out, n, &num);
    v->p50[r] = percentile_us(all, num, 0.50);
    v->p99[r] = percentile_us(all, num, 0.99);
    free(all);
    for (size_t j = 0; item->queue && j < opts->num_k; j++) {
        uint64_t *q = queued(out, n, opts->k[j], &num);
        v->q50[j * opts->reps + r] = percentile_us(q, num, 0.50);
        v->q99[j * opts->reps + r] = percentile_us(q, num, 0.99);
        free(q);
    }
}

/* median_of: the median (best: lowest) of n latency values; NaN if any is. */
static double median_of(double *v, unsigned n, int best)
{
    for (unsigned i = 0; i < n; i++) {
        if (isnan(v[i])) {
            return NAN;
        }
    }
    return reduce(v, n, best, 1).med;
}

int measure_items(bench_item *items, size_t n, const bench_opts *opts)
{
    const unsigned nt = opts->threads, reps = opts->reps;
    run_out *out = xcalloc(nt, sizeof(*out));
    struct per_item *v = xcalloc(n, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        v[i].rate = xcalloc(reps, sizeof(double));
        v[i].rate1 = xcalloc(reps, sizeof(double));
        v[i].share = xcalloc(reps, sizeof(double));
        v[i].per_thread = xcalloc((size_t)nt * reps, sizeof(double));
        v[i].p50 = xcalloc(reps, sizeof(double));
        v[i].p99 = xcalloc(reps, sizeof(double));
        v[i].q50 = xcalloc(opts->num_k * reps, sizeof(double));
        v[i].q99 = xcalloc(opts->num_k * reps, sizeof(double));
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = run_threads(&items[i], nt, warmup_seconds(opts), out);
    }
    for (unsigned r = 0; r < reps && rc == 0; r++) {
        for (size_t i = 0; i < n && rc == 0; i++) {
            rc = run_threads(&items[i], nt, opts->seconds, out);
            if (rc == 0) {
                record(&v[i], r, &items[i], out, nt, opts);
            }
            if (rc == 0 && nt > 1) {
                rc = run_threads(&items[i], 1, opts->seconds, out);
                v[i].rate1[r] = thread_rate(&out[0], opts);
            }
        }
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        item_result *res = &items[i].res;
        memset(res, 0, sizeof(*res));
        res->rate = reduce(v[i].rate, reps, opts->best, 0);
        res->spread = res->rate.med > 0 ? 100 * (res->rate.max - res->rate.min) / res->rate.med : 0;
        res->cpu_share = reduce(v[i].share, reps, 0, 0).min;
        for (unsigned t = 0; t < nt; t++) {
            res->per_thread[t] =
                reduce(v[i].per_thread + (size_t)t * reps, reps, opts->best, 0).med;
        }
        if (nt > 1) {
            res->rate1 = reduce(v[i].rate1, reps, opts->best, 0);
            res->scaling = res->rate1.med > 0 ? res->rate.med / res->rate1.med : 0;
        }
        res->p50_us = res->p99_us = NAN;
        for (size_t j = 0; j < BENCH_MAX_K; j++) {
            res->q50_us[j] = res->q99_us[j] = NAN;
        }
        if (items[i].latency) {
            res->p50_us = median_of(v[i].p50, reps, opts->best);
            res->p99_us = median_of(v[i].p99, reps, opts->best);
        }
        for (size_t j = 0; items[i].queue && j < opts->num_k; j++) {
            res->q50_us[j] = median_of(v[i].q50 + j * reps, reps, opts->best);
            res->q99_us[j] = median_of(v[i].q99 + j * reps, reps, opts->best);
        }
    }
    for (size_t i = 0; i < n; i++) {
        free(v[i].rate);
        free(v[i].rate1);
        free(v[i].share);
        free(v[i].per_thread);
        free(v[i].p50);
        free(v[i].p99);
        free(v[i].q50);
        free(v[i].q99);
    }
    for (unsigned t = 0; t < nt; t++) {
        free(out[t].lat);
    }
    free(v);
    free(out);
    return rc;
}
