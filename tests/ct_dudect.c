/*
 * ct_dudect.c - a statistical timing test in the style of dudect (Reparaz,
 * Balasch, Verbauwhede, "Dude, is my code constant time?", 2017): for the
 * code no checker here can instrument, above all the nasm vaes512 AES-GCM
 * kernels, and for the other GCM implementations and RSA private on the
 * portable kernels, as the shipped libmbcrypto.so runs them (it links the
 * release build's shared library). Not part of the test suite (timing is no
 * test here): run
 * it by hand, pinned, on a quiet machine:
 *
 *   taskset -c 1 ./build/tests/ct_dudect [--seconds S] [--impl c,aesni,vaes512]
 *                                        [--only NAME] [gcm] [rsa]
 *
 * (--only: the tests whose name starts with NAME, e.g. "seal-data 4096";
 * --fixed random: the fixed class of the GCM tests is one random value
 * instead of all-zero, which tells a data-dependent effect of zero data,
 * such as lower power, from one of the value itself.)
 *
 * Each test times one operation on inputs of two classes, chosen at random
 * per measurement: class 0 is fixed (all-zero data or key; for RSA a fixed
 * input and a fixed key), class 1 random. The inputs of a batch are made
 * before it is timed, in the same buffers for both classes; key objects come
 * from pools of the same size for both classes, so memory traffic is alike.
 * Each run is timed with lfence; rdtsc; ...; lfence; rdtsc. Welch's t-test
 * compares the classes on the raw times, on 100 croppings (times below the
 * percentiles 1 - 0.5^(10 (i+1) / 100) of warm-up measurements, which are
 * then discarded: long-tail noise such as interrupts removed) and on the
 * centred squares (a second-order
 * test). The verdict is the largest |t|: above 4.5, the timing depends on the
 * class (dudect's threshold); below it, no evidence of leakage was found
 * with that many measurements, which bounds only leaks large enough to show.
 *
 * Tests, per GCM implementation the CPU has (vaes512 needs AVX-512; a CPU
 * without it reports it as not run) and message length (64 B: one-shot
 * tail paths; 4 KiB: the main loops):
 *   seal-data  mbc_gcm_seal, fixed key, fixed vs random plaintext
 *   open-data  mbc_gcm_open, fixed key, fixed vs random ciphertext (each with
 *              its right tag, so both classes pass)
 *   seal-key   mbc_gcm_seal of random data under key objects of the fixed
 *              (all-zero) vs random keys (16 objects per class, made anew
 *              every batch in an order shuffled across the classes)
 *   key-new    mbc_gcm_key_new, fixed vs random key bytes (AES-128 and -256)
 * and, with "rsa", on the portable kernels (mbc_rsa_private_crt, one 2048-bit
 * request: the 2-lane kernels; 8 to 20 ms per run here, so few measurements):
 *   rsa-data   fixed key, fixed vs random input
 *   rsa-key    random inputs, the fixed key vs 8 other OpenSSL keys (8 key
 *              objects per class: the fixed one 8 times)
 * First a control, a compare that stops at the first difference, which must
 * show |t| > 4.5 (the harness can see a leak).
 * Exit code: 0 if every |t| < 4.5 with at least 100 measurements per class
 * and the control was caught, 1 otherwise, 2 on a usage error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "ossl_rsa.h"
#include "test_util.h"

#define NCROPS 100
#define THRESHOLD 4.5
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */
/* ------------------------------------------------------------------------ */

/* Welford's running mean and variance per class. */
struct ttest {
    double n[2], mean[2], m2[2];
};

static void tt_push(struct ttest *t, int cls, double x)
{
    t->n[cls] += 1;
    const double d = x - t->mean[cls];
    t->mean[cls] += d / t->n[cls];
    t->m2[cls] += d * (x - t->mean[cls]);
}

/* tt_value: Welch's t of the two classes (0 until each has 2 samples). */
static double tt_value(const struct ttest *t)
{
    if (t->n[0] < 2 || t->n[1] < 2) {
        return 0;
    }
    const double v0 = t->m2[0] / (t->n[0] - 1), v1 = t->m2[1] / (t->n[1] - 1);
    const double se = sqrt(v0 / t->n[0] + v1 / t->n[1]);
    return se > 0 ? (t->mean[0] - t->mean[1]) / se : 0;
}

struct dudect {
    struct ttest raw, second, crop[NCROPS];
    double thresh[NCROPS];
    uint64_t *warm; /* the first times, which only set the thresholds */
    size_t warm_n, warm_want;
    size_t samples;
};

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* dd_update: adds a batch of n times tm[i] of classes cls[i]. The first
 * warm_want times (warm-up, as dudect discards them) only fix the cropping
 * thresholds. */
static void dd_update(struct dudect *d, const uint64_t *tm, const uint8_t *cls, size_t n)
{
    if (d->warm_n < d->warm_want) {
        const size_t take = n < d->warm_want - d->warm_n ? n : d->warm_want - d->warm_n;
        memcpy(d->warm + d->warm_n, tm, take * sizeof(*tm));
        d->warm_n += take;
        if (d->warm_n == d->warm_want) {
            qsort(d->warm, d->warm_n, sizeof(*d->warm), cmp_u64);
            for (int i = 0; i < NCROPS; i++) {
                const double p = 1 - pow(0.5, 10.0 * (i + 1) / NCROPS);
                d->thresh[i] = (double)d->warm[(size_t)(p * (double)(d->warm_n - 1))];
            }
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const double x = (double)tm[i];
        const int c = cls[i];
        /* second order: the centred square, once the means have settled */
        if (d->raw.n[c] > 1000) {
            const double dev = x - d->raw.mean[c];
            tt_push(&d->second, c, dev * dev);
        }
        tt_push(&d->raw, c, x);
        for (int k = 0; k < NCROPS; k++) {
            if (x < d->thresh[k]) {
                tt_push(&d->crop[k], c, x);
            }
        }
    }
    d->samples += n;
}

/* dd_max: the t of largest |t| over the tests with at least 100 samples
 * per class (positive: class 0 slower); *which names it. */
static double dd_max(const struct dudect *d, char *which, size_t which_len)
{
    double best = tt_value(&d->raw);
    snprintf(which, which_len, "raw");
    const double t2 = tt_value(&d->second);
    if (d->second.n[0] >= 100 && d->second.n[1] >= 100 && fabs(t2) > fabs(best)) {
        best = t2;
        snprintf(which, which_len, "2nd order");
    }
    for (int k = 0; k < NCROPS; k++) {
        const double t = tt_value(&d->crop[k]);
        if (d->crop[k].n[0] >= 100 && d->crop[k].n[1] >= 100 && fabs(t) > fabs(best)) {
            best = t;
            snprintf(which, which_len, "crop p%.4g", 100 * (1 - pow(0.5, 10.0 * (k + 1) / NCROPS)));
        }
    }
    return best;
}

/* ------------------------------------------------------------------------ */
/* Timing                                                                    */
/* ------------------------------------------------------------------------ */

static inline uint64_t tick(void)
{
    _mm_lfence();
    const uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* rng: the class bits and random data (not the measured code's business). */
static uint64_t rng_state = 0x853C49E6748FEA9Bull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void rng_bytes(uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        p[i] = (uint8_t)(rng() >> 24);
    }
}

/*
 * A test: prepare(ctx, i, cls) builds input i of the coming batch for class
 * cls (untimed), run(ctx, i) is the timed operation, batch_end(ctx) (may be
 * NULL) runs untimed after each batch.
 */
struct test {
    const char *name;
    void *ctx;
    size_t batch, warmup; /* measurements per batch; warm-up measurements */
    void (*prepare)(void *ctx, size_t i, int cls);
    void (*run)(void *ctx, size_t i);
    void (*batch_end)(void *ctx);
};

static int failures;

/*
 * measure: runs t for seconds after its warm-up and prints the verdict
 * line. Returns 1 if the verdict is the expected one: a leak (|t| > 4.5)
 * exactly when expect_leak, with at least MIN_CLASS measurements per class.
 */
#define MIN_CLASS 100
static int measure(const struct test *t, const char *impl, double seconds, int expect_leak)
{
    static struct dudect d;
    uint64_t *tm = malloc(t->batch * sizeof(*tm));
    uint8_t *cls = malloc(t->batch);
    memset(&d, 0, sizeof(d));
    d.warm_want = t->warmup;
    d.warm = malloc(t->warmup * sizeof(*d.warm));
    if (tm == NULL || cls == NULL || d.warm == NULL) {
        abort();
    }
    double end = 0;
    do {
        for (size_t i = 0; i < t->batch; i++) {
            cls[i] = (uint8_t)(rng() >> 63);
            t->prepare(t->ctx, i, cls[i]);
        }
        for (size_t i = 0; i < t->batch; i++) {
            const uint64_t t0 = tick();
            t->run(t->ctx, i);
            tm[i] = tick() - t0;
        }
        if (t->batch_end != NULL) {
            t->batch_end(t->ctx);
        }
        dd_update(&d, tm, cls, t->batch);
        if (end == 0 && d.warm_n == d.warm_want) {
            end = now() + seconds;
        }
    } while (end == 0 || now() < end);
    char which[32];
    const double signed_best = dd_max(&d, which, sizeof(which));
    const double best = fabs(signed_best);
    const int leak = best > THRESHOLD;
    const int enough = d.raw.n[0] >= MIN_CLASS && d.raw.n[1] >= MIN_CLASS;
    const char *verdict = !enough       ? "TOO FEW measurements"
                          : expect_leak ? (leak ? "caught, as it must be" : "NOT CAUGHT")
                          : leak        ? "LEAK? (|t| > 4.5)"
                                        : "no evidence of leakage";
    printf("%-8s %-18s n = %9zu  mean %10.0f / %10.0f cycles  raw t = %7.2f  max |t| = %8.2f "
           "(%s: t = %+.2f)  %s\n",
           impl, t->name, d.samples, d.raw.mean[0], d.raw.mean[1], tt_value(&d.raw), best, which,
           signed_best, verdict);
    fflush(stdout);
    free(d.warm);
    free(tm);
    free(cls);
    return enough && leak == expect_leak;
}

/* check: measure, counting an unexpected verdict as a failure. */
static const char *only; /* --only: run the tests whose name starts so */

/* The class-0 value of the GCM tests (data and keys): all zero, or with
 * --fixed random one random value for the whole run. */
static uint8_t fixed_value[4096];

static void check(const struct test *t, const char *impl, double seconds)
{
    if (only == NULL || strncmp(t->name, only, strlen(only)) == 0) {
        failures += !measure(t, impl, seconds, 0);
    }
}

/* The control: a comparison that stops at the first difference, as memcmp
 * may: the fixed class (zeros, equal to the reference) runs to the end, the
 * random one stops at once. The harness must see it. */
#define CONTROL_LEN 512
struct control_ctx {
    uint8_t in[64][CONTROL_LEN], ref[CONTROL_LEN];
};

static volatile size_t control_sink;

static void control_prepare(void *p, size_t i, int cls)
{
    struct control_ctx *c = p;
    if (cls == 0) {
        memset(c->in[i], 0, CONTROL_LEN);
    } else {
        rng_bytes(c->in[i], CONTROL_LEN);
    }
}

__attribute__((noinline)) static void control_run(void *p, size_t i)
{
    struct control_ctx *c = p;
    size_t j = 0;
    while (j < CONTROL_LEN && c->in[i][j] == c->ref[j]) {
        j++;
    }
    control_sink = j;
}

static void control(double seconds)
{
    static struct control_ctx c;
    const struct test t = {"early-exit cmp", &c, 64, 2000, control_prepare, control_run, NULL};
    failures += !measure(&t, "control", seconds, 1);
}

/* ------------------------------------------------------------------------ */
/* AES-GCM                                                                   */
/* ------------------------------------------------------------------------ */

#define POOL 16 /* key objects per class (seal-key) */
#define KEYNEW_BATCH 256
#define GCM_WARMUP 2000
#define BATCH_BYTES (256 * 1024)

struct gcm_ctx {
    size_t len, k_len;
    uint8_t *in, *ct, *out; /* batch * len bytes each */
    uint8_t (*tags)[16];
    uint8_t (*keys)[32]; /* key-new: the batch's key bytes */
    mbc_gcm_key **made;  /* key-new: the batch's new key objects */
    mbc_gcm_key *fixed;  /* the all-zero key */
    mbc_gcm_key *pool[2][POOL];
    uint8_t *pick; /* seal-key: per input, class and pool index */
    uint8_t iv[12], aad[16], tag[16];
};

static mbc_gcm_key *gcm_key(const uint8_t *k, size_t k_len)
{
    mbc_gcm_key *key = NULL;
    if (mbc_gcm_key_new(&key, k, k_len) != MBC_OK) {
        abort();
    }
    return key;
}

static void gcm_prepare_data(void *p, size_t i, int cls)
{
    struct gcm_ctx *c = p;
    uint8_t *in = c->in + i * c->len;
    if (cls == 0) {
        memcpy(in, fixed_value, c->len);
    } else {
        rng_bytes(in, c->len);
    }
}

static void gcm_run_seal(void *p, size_t i)
{
    struct gcm_ctx *c = p;
    (void)mbc_gcm_seal(c->fixed, c->out + i * c->len, c->tag, 16, c->iv, 12, c->aad, sizeof(c->aad),
                       c->in + i * c->len, c->len);
}

/* open-data: the ciphertext of a fixed or random plaintext, with its tag. */
static void gcm_prepare_open(void *p, size_t i, int cls)
{
    struct gcm_ctx *c = p;
    gcm_prepare_data(p, i, cls);
    (void)mbc_gcm_seal(c->fixed, c->ct + i * c->len, c->tags[i], 16, c->iv, 12, c->aad,
                       sizeof(c->aad), c->in + i * c->len, c->len);
}

static void gcm_run_open(void *p, size_t i)
{
    struct gcm_ctx *c = p;
    if (mbc_gcm_open(c->fixed, c->out + i * c->len, c->tags[i], 16, c->iv, 12, c->aad,
                     sizeof(c->aad), c->ct + i * c->len, c->len) != MBC_OK) {
        abort();
    }
}

/* seal-key: random data under a key object of the input's class. */
static void gcm_prepare_key(void *p, size_t i, int cls)
{
    struct gcm_ctx *c = p;
    rng_bytes(c->in + i * c->len, c->len);
    c->pick[i] = (uint8_t)(cls * POOL + rng() % POOL);
}

static void gcm_run_key(void *p, size_t i)
{
    struct gcm_ctx *c = p;
    (void)mbc_gcm_seal(c->pool[c->pick[i] / POOL][c->pick[i] % POOL], c->out + i * c->len, c->tag,
                       16, c->iv, 12, c->aad, sizeof(c->aad), c->in + i * c->len, c->len);
}

/* gcm_refill: new key objects in both pools (zero keys, fresh random ones),
 * made in an order shuffled across the classes, so that no class gets the
 * earlier (or the later) allocations: their addresses must not differ by
 * class. */
static void gcm_refill(void *p)
{
    struct gcm_ctx *c = p;
    uint8_t order[2 * POOL];
    for (int j = 0; j < 2 * POOL; j++) {
        order[j] = (uint8_t)j;
    }
    for (int j = 2 * POOL - 1; j > 0; j--) {
        const int r = (int)(rng() % (uint64_t)(j + 1));
        const uint8_t t = order[j];
        order[j] = order[r];
        order[r] = t;
    }
    for (int j = 0; j < 2 * POOL; j++) {
        mbc_gcm_key_free(c->pool[j / POOL][j % POOL]);
        c->pool[j / POOL][j % POOL] = NULL;
    }
    for (int j = 0; j < 2 * POOL; j++) {
        const int cls = order[j] / POOL;
        uint8_t k[32];
        memcpy(k, fixed_value, sizeof(k));
        if (cls == 1) {
            rng_bytes(k, c->k_len);
        }
        c->pool[cls][order[j] % POOL] = gcm_key(k, c->k_len);
    }
}

static void gcm_prepare_keynew(void *p, size_t i, int cls)
{
    struct gcm_ctx *c = p;
    memcpy(c->keys[i], fixed_value, 32);
    if (cls == 1) {
        rng_bytes(c->keys[i], c->k_len);
    }
}

static void gcm_run_keynew(void *p, size_t i)
{
    struct gcm_ctx *c = p;
    (void)mbc_gcm_key_new(&c->made[i], c->keys[i], c->k_len);
}

/* gcm_keynew_free: frees the batch's new keys, untimed. */
static void gcm_keynew_free(void *p)
{
    struct gcm_ctx *c = p;
    for (size_t i = 0; i < KEYNEW_BATCH; i++) {
        mbc_gcm_key_free(c->made[i]);
        c->made[i] = NULL;
    }
}

static void gcm_tests(const char *impl, double seconds)
{
    static const size_t lens[] = {64, 4096};
    struct gcm_ctx c;
    memset(&c, 0, sizeof(c));
    rng_bytes(c.iv, sizeof(c.iv));
    rng_bytes(c.aad, sizeof(c.aad));
    for (size_t l = 0; l < COUNT(lens); l++) {
        c.len = lens[l];
        c.k_len = 16;
        size_t batch = BATCH_BYTES / c.len;
        batch = batch > 1000 ? 1000 : batch;
        c.in = malloc(batch * c.len);
        c.ct = malloc(batch * c.len);
        c.out = malloc(batch * c.len);
        c.tags = malloc(batch * 16);
        c.pick = malloc(batch);
        if (c.in == NULL || c.ct == NULL || c.out == NULL || c.tags == NULL || c.pick == NULL) {
            abort();
        }
        const uint8_t zero[32] = {0};
        c.fixed = gcm_key(zero, 16);
        if (strcmp(mbc_gcm_key_impl(c.fixed), impl) != 0) {
            abort();
        }
        char n1[32], n2[32], n3[32];
        snprintf(n1, sizeof(n1), "seal-data %zu B", c.len);
        snprintf(n2, sizeof(n2), "open-data %zu B", c.len);
        snprintf(n3, sizeof(n3), "seal-key %zu B", c.len);
        const struct test tests[] = {
            {n1, &c, batch, GCM_WARMUP, gcm_prepare_data, gcm_run_seal, NULL},
            {n2, &c, batch, GCM_WARMUP, gcm_prepare_open, gcm_run_open, NULL},
            {n3, &c, batch, GCM_WARMUP, gcm_prepare_key, gcm_run_key, gcm_refill},
        };
        gcm_refill(&c);
        for (size_t t = 0; t < COUNT(tests); t++) {
            check(&tests[t], impl, seconds);
        }
        for (int cls = 0; cls < 2; cls++) {
            for (int j = 0; j < POOL; j++) {
                mbc_gcm_key_free(c.pool[cls][j]);
                c.pool[cls][j] = NULL;
            }
        }
        mbc_gcm_key_free(c.fixed);
        free(c.in);
        free(c.ct);
        free(c.out);
        free(c.tags);
        free(c.pick);
    }
    /* key-new: the batch's keys are freed untimed after it */
    static const size_t k_lens[] = {16, 32};
    static uint8_t keys[KEYNEW_BATCH][32];
    static mbc_gcm_key *made[KEYNEW_BATCH];
    c.keys = keys;
    c.made = made;
    for (size_t k = 0; k < COUNT(k_lens); k++) {
        c.k_len = k_lens[k];
        char name[32];
        snprintf(name, sizeof(name), "key-new AES-%zu", 8 * c.k_len);
        const struct test t = {
            name,           &c, KEYNEW_BATCH, GCM_WARMUP, gcm_prepare_keynew, gcm_run_keynew,
            gcm_keynew_free};
        check(&t, impl, seconds);
    }
}

/* ------------------------------------------------------------------------ */
/* RSA private, portable kernels                                             */
/* ------------------------------------------------------------------------ */

#define RSA_LEN 256
#define RSA_KEYS 8
#define RSA_BATCH 16
#define RSA_WARMUP 64

/* Key objects of two classes, RSA_KEYS each, so both classes read as many
 * objects: fixed holds RSA_KEYS copies of one key, other RSA_KEYS keys. */
struct rsa_ctx {
    mbc_rsa_priv_key *pool[2][RSA_KEYS];
    uint8_t in[RSA_BATCH][RSA_LEN], out[RSA_LEN], fixed_in[RSA_LEN];
    const mbc_rsa_priv_key *key[RSA_BATCH];
    uint8_t n0; /* at most every modulus' top byte: x[0] < n0 puts x below n */
};

static void rsa_random_in(struct rsa_ctx *c, uint8_t *x)
{
    rng_bytes(x, RSA_LEN);
    x[0] = (uint8_t)(x[0] % c->n0);
}

static const mbc_rsa_priv_key *rsa_pick(const struct rsa_ctx *c, int cls)
{
    return c->pool[cls][rng() % RSA_KEYS];
}

/* rsa-data: the fixed key, the fixed or a random input. */
static void rsa_prepare_data(void *p, size_t i, int cls)
{
    struct rsa_ctx *c = p;
    if (cls == 0) {
        memcpy(c->in[i], c->fixed_in, RSA_LEN);
    } else {
        rsa_random_in(c, c->in[i]);
    }
    c->key[i] = rsa_pick(c, 0);
}

/* rsa-key: a random input, the fixed key or one of the others. */
static void rsa_prepare_key(void *p, size_t i, int cls)
{
    struct rsa_ctx *c = p;
    rsa_random_in(c, c->in[i]);
    c->key[i] = rsa_pick(c, cls);
}

static void rsa_run(void *p, size_t i)
{
    struct rsa_ctx *c = p;
    if (mbc_rsa_private_crt(c->out, c->in[i], c->key[i]) != MBC_OK) {
        abort();
    }
}

/* rsa_keys: copies key objects of one new OpenSSL key into keys; lowers
 * c->n0 to its modulus' top byte. */
static void rsa_keys(struct rsa_ctx *c, mbc_rsa_priv_key **keys, int copies)
{
    EVP_PKEY *pkey = mbt_ossl_rsa_keygen(8 * RSA_LEN, 65537);
    mbt_rsa_parts parts;
    if (pkey == NULL || mbt_ossl_rsa_get_parts(&parts, pkey, 0) != 0) {
        abort();
    }
    for (int i = 0; i < copies; i++) {
        mbc_rsa_pub_key *pub = NULL;
        if (mbt_rsa_keys_new(&keys[i], &pub, &parts) != MBC_OK) {
            abort();
        }
        mbc_rsa_pub_key_free(pub);
    }
    c->n0 = parts.c[MBT_RSA_N][0] < c->n0 ? parts.c[MBT_RSA_N][0] : c->n0;
    mbt_rsa_parts_free(&parts);
    EVP_PKEY_free(pkey);
}

static void rsa_tests(double seconds)
{
    static struct rsa_ctx c;
    c.n0 = 0xFF;
    rsa_keys(&c, c.pool[0], RSA_KEYS);
    for (int k = 0; k < RSA_KEYS; k++) {
        rsa_keys(&c, &c.pool[1][k], 1);
    }
    rsa_random_in(&c, c.fixed_in);
    mbc_cpu_restrict(0);
    const struct test tests[] = {
        {"rsa-data 2048", &c, RSA_BATCH, RSA_WARMUP, rsa_prepare_data, rsa_run, NULL},
        {"rsa-key 2048", &c, RSA_BATCH, RSA_WARMUP, rsa_prepare_key, rsa_run, NULL},
    };
    for (size_t t = 0; t < COUNT(tests); t++) {
        check(&tests[t], mbc_impl_name(MBC_ALG_RSA), seconds);
    }
    mbc_cpu_restrict(~(uint64_t)0);
    for (int cls = 0; cls < 2; cls++) {
        for (int k = 0; k < RSA_KEYS; k++) {
            mbc_rsa_priv_key_free(c.pool[cls][k]);
        }
    }
}

/* ------------------------------------------------------------------------ */

static int usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [--seconds S] [--impl c,aesni,vaes512] [--only NAME] [--fixed zero|random] "
            "[gcm] [rsa]\n",
            prog);
    return 2;
}

int main(int argc, char **argv)
{
    double seconds = 10;
    const char *impls = "c,aesni,vaes512";
    int gcm = 0, rsa = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
        } else if (strcmp(argv[i], "--impl") == 0 && i + 1 < argc) {
            impls = argv[++i];
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--fixed") == 0 && i + 1 < argc &&
                   (strcmp(argv[i + 1], "zero") == 0 || strcmp(argv[i + 1], "random") == 0)) {
            if (strcmp(argv[++i], "random") == 0) {
                rng_bytes(fixed_value, sizeof(fixed_value));
            }
        } else if (strcmp(argv[i], "gcm") == 0) {
            gcm = 1;
        } else if (strcmp(argv[i], "rsa") == 0) {
            rsa = 1;
        } else {
            return usage(argv[0]);
        }
    }
    if (!gcm && !rsa) {
        gcm = 1;
    }
    if (seconds <= 0) {
        return usage(argv[0]);
    }
    printf("# dudect-style timing test, %g s per test; fixed (class 0) vs random (class 1); "
           "|t| > %.1f means the time depends on the class\n",
           seconds, THRESHOLD);
    control(seconds < 2 ? seconds : 2);
    if (gcm) {
        char list[64];
        snprintf(list, sizeof(list), "%s", impls);
        for (char *save = NULL, *im = strtok_r(list, ",", &save); im != NULL;
             im = strtok_r(NULL, ",", &save)) {
            if (!mbt_alg_impl_available(MBC_ALG_GCM, im)) {
                printf("%-8s NOT RUN: this CPU (or build) lacks it (CPU features 0x%llx)\n", im,
                       (unsigned long long)mbc_cpu_features());
                continue;
            }
            mbt_use_alg_impl(MBC_ALG_GCM, im);
            gcm_tests(im, seconds);
            mbc_cpu_restrict(~(uint64_t)0);
        }
    }
    if (rsa) {
        rsa_tests(seconds);
    }
    printf("# %d unexpected verdict(s) (a leak, too few measurements, or the control not "
           "caught)\n",
           failures);
    return failures ? 1 : 0;
}
