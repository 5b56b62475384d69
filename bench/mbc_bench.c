/*
 * mbc_bench.c - throughput of mbcrypto next to OpenSSL, in one run.
 *
 * What it measures: for every selected benchmark case (e.g. rsa2048) and
 * each of its operations (e.g. private, public), the operations per second
 * of mbcrypto and of a peer (OpenSSL 3.0 libcrypto), and their ratio.
 *
 * How: a case's setup builds the keys and inputs once (RSA keys come from
 * OpenSSL's key generator) and checks that mbcrypto and the peer compute the
 * same results before anything is timed. A measurement then calls one run
 * function repeatedly, reading CLOCK_MONOTONIC after every call, until
 * --seconds have elapsed; ops/s = operations done / elapsed time. Each
 * mbcrypto call does 8 operations (all 8 lanes active); each peer call does
 * one, the way an application without batching would. A short warm-up
 * precedes every measurement, and with --reps N the median of N measurements
 * is reported. Results are single-threaded and most stable when the process
 * is pinned to one core (taskset -c 1 mbc_bench ...).
 *
 * New algorithms slot in as one more row in the cases[] table: a name, a
 * setup/teardown pair and a list of operations, each with an mbcrypto and a
 * peer run function.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include "mbcrypto.h"

/* ------------------------------------------------------------------------ */
/* The case table                                                            */
/* ------------------------------------------------------------------------ */

/* bench_fn: one call of the measured operation; returns operations done. */
typedef unsigned (*bench_fn)(void *state);

/* bench_op: one operation of a case, measured once per implementation. */
typedef struct bench_op {
    const char *label; /* "private", "public" */
    bench_fn run_mbc;  /* mbcrypto: one batch call */
    bench_fn run_peer; /* peer: one call */
} bench_op;

/*
 * bench_case: one selectable benchmark. setup(param) returns the state every
 * run function of ops gets, after checking mbcrypto against the peer; it
 * exits the program on any failure. teardown(state) frees it.
 */
typedef struct bench_case {
    const char *name;
    unsigned param;
    void *(*setup)(unsigned param);
    void (*teardown)(void *state);
    const bench_op *ops;
    size_t num_ops;
} bench_case;

/* bench_opts: the command line. */
typedef struct bench_opts {
    double seconds;
    unsigned reps;
} bench_opts;

/* die: reports a fatal error (with OpenSSL's error queue) and exits 1. */
static void die(const char *what)
{
    fprintf(stderr, "mbc_bench: FATAL: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

/* check_status: exits unless every lane of st is MBC_LANE_OK. */
static void check_status(mbc_status st, const char *what)
{
    if (mbc_status_ok_mask(st) == MBC_LANE_MASK_ALL) {
        return;
    }
    fprintf(stderr, "mbc_bench: FATAL: %s returned status 0x%08" PRIx32 ":", what, st);
    for (unsigned lane = 0; lane < MBC_LANES; lane++) {
        fprintf(stderr, " %u=%s", lane, mbc_lane_code_str(mbc_lane_code(st, lane)));
    }
    fprintf(stderr, "\n");
    exit(1);
}

/* ------------------------------------------------------------------------ */
/* RSA                                                                       */
/* ------------------------------------------------------------------------ */

#define RSA_MAX_BYTES 512

typedef struct rsa_state {
    unsigned bits;
    size_t len; /* modulus bytes */
    EVP_PKEY *pkey;
    EVP_PKEY_CTX *peer_priv; /* EVP_PKEY_decrypt, RSA_NO_PADDING */
    EVP_PKEY_CTX *peer_pub;  /* EVP_PKEY_encrypt, RSA_NO_PADDING */
    unsigned peer_next;      /* the peer cycles through the 8 inputs */
    mbc_rsa_priv_key *priv;
    mbc_rsa_pub_key *pub;
    const mbc_rsa_priv_key *priv_lanes[MBC_LANES];
    const mbc_rsa_pub_key *pub_lanes[MBC_LANES];
    const uint8_t *in_lanes[MBC_LANES];
    uint8_t *out_lanes[MBC_LANES];
    uint8_t in[MBC_LANES][RSA_MAX_BYTES];
    uint8_t out[MBC_LANES][RSA_MAX_BYTES];
    uint8_t peer_out[RSA_MAX_BYTES];
} rsa_state;

/* rsa_keygen: a fresh OpenSSL RSA key of bits bits with e = 65537. */
static EVP_PKEY *rsa_keygen(unsigned bits)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    BIGNUM *e = BN_new();
    EVP_PKEY *pkey = NULL;
    if (ctx == NULL || e == NULL || !BN_set_word(e, 65537) || EVP_PKEY_keygen_init(ctx) <= 0 ||
        EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, (int)bits) <= 0 ||
        EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx, e) <= 0 || EVP_PKEY_keygen(ctx, &pkey) <= 0) {
        die("OpenSSL RSA key generation failed");
    }
    BN_free(e);
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

/* rsa_param: the key parameter name of pkey as len big-endian bytes. */
static void rsa_param(uint8_t *buf, size_t len, const EVP_PKEY *pkey, const char *name)
{
    BIGNUM *bn = NULL;
    if (!EVP_PKEY_get_bn_param(pkey, name, &bn) || BN_bn2binpad(bn, buf, (int)len) < 0) {
        die(name);
    }
    BN_clear_free(bn);
}

/* rsa_mbc_keys: builds s->priv and s->pub from the OpenSSL key s->pkey. */
static void rsa_mbc_keys(rsa_state *s)
{
    /* Every field padded to the modulus size: leading zeros are allowed. */
    static const char *const names[7] = {
        OSSL_PKEY_PARAM_RSA_N,
        OSSL_PKEY_PARAM_RSA_E,
        OSSL_PKEY_PARAM_RSA_FACTOR1,
        OSSL_PKEY_PARAM_RSA_FACTOR2,
        OSSL_PKEY_PARAM_RSA_EXPONENT1,
        OSSL_PKEY_PARAM_RSA_EXPONENT2,
        OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
    };
    uint8_t f[7][RSA_MAX_BYTES];
    for (size_t i = 0; i < 7; i++) {
        rsa_param(f[i], s->len, s->pkey, names[i]);
    }
    const mbc_rsa_priv_components c = {
        .n = f[0],
        .n_len = s->len,
        .e = f[1],
        .e_len = s->len,
        .p = f[2],
        .p_len = s->len,
        .q = f[3],
        .q_len = s->len,
        .dp = f[4],
        .dp_len = s->len,
        .dq = f[5],
        .dq_len = s->len,
        .qinv = f[6],
        .qinv_len = s->len,
    };
    mbc_err err = mbc_rsa_priv_key_new(&s->priv, &c);
    if (err != MBC_OK) {
        die(mbc_err_str(err));
    }
    err = mbc_rsa_pub_key_new(&s->pub, f[0], s->len, f[1], s->len);
    if (err != MBC_OK) {
        die(mbc_err_str(err));
    }
    OPENSSL_cleanse(f, sizeof(f));
}

/* rsa_peer_ctx: an EVP_PKEY_CTX ready for raw decrypt or encrypt calls. */
static EVP_PKEY_CTX *rsa_peer_ctx(EVP_PKEY *pkey, int (*init)(EVP_PKEY_CTX *))
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    if (ctx == NULL || init(ctx) <= 0 || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) <= 0) {
        die("OpenSSL RSA context setup failed");
    }
    return ctx;
}

/* rsa_peer_call: one raw peer operation on input lane; result in s->peer_out. */
static void rsa_peer_call(rsa_state *s, int decrypt, unsigned lane)
{
    size_t out_len = s->len;
    int ok = decrypt ? EVP_PKEY_decrypt(s->peer_priv, s->peer_out, &out_len, s->in[lane], s->len)
                     : EVP_PKEY_encrypt(s->peer_pub, s->peer_out, &out_len, s->in[lane], s->len);
    if (ok <= 0 || out_len != s->len) {
        die("OpenSSL raw RSA operation failed");
    }
}

static unsigned rsa_mbc_private(void *state)
{
    rsa_state *s = state;
    check_status(mbc_rsa_private_crt_mb8(s->out_lanes, s->in_lanes, s->priv_lanes, s->bits,
                                         MBC_LANE_MASK_ALL),
                 "mbc_rsa_private_crt_mb8");
    return MBC_LANES;
}

static unsigned rsa_mbc_public(void *state)
{
    rsa_state *s = state;
    check_status(
        mbc_rsa_public_mb8(s->out_lanes, s->in_lanes, s->pub_lanes, s->bits, MBC_LANE_MASK_ALL),
        "mbc_rsa_public_mb8");
    return MBC_LANES;
}

static unsigned rsa_peer_private(void *state)
{
    rsa_state *s = state;
    rsa_peer_call(s, 1, s->peer_next++ % MBC_LANES);
    return 1;
}

static unsigned rsa_peer_public(void *state)
{
    rsa_state *s = state;
    rsa_peer_call(s, 0, s->peer_next++ % MBC_LANES);
    return 1;
}

/* rsa_check: one mbcrypto batch call must match the peer in every lane. */
static void rsa_check(rsa_state *s, bench_fn run_mbc, int decrypt, const char *what)
{
    run_mbc(s);
    for (unsigned lane = 0; lane < MBC_LANES; lane++) {
        rsa_peer_call(s, decrypt, lane);
        if (memcmp(s->out[lane], s->peer_out, s->len) != 0) {
            fprintf(stderr, "mbc_bench: FATAL: RSA-%u %s: lane %u differs from OpenSSL\n", s->bits,
                    what, lane);
            exit(1);
        }
    }
}

static void *rsa_setup(unsigned bits)
{
    rsa_state *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        die("out of memory");
    }
    s->bits = bits;
    s->len = bits / 8;
    fprintf(stderr, "mbc_bench: generating an RSA-%u key with OpenSSL...\n", bits);
    s->pkey = rsa_keygen(bits);
    rsa_mbc_keys(s);
    s->peer_priv = rsa_peer_ctx(s->pkey, EVP_PKEY_decrypt_init);
    s->peer_pub = rsa_peer_ctx(s->pkey, EVP_PKEY_encrypt_init);
    for (unsigned lane = 0; lane < MBC_LANES; lane++) {
        if (RAND_bytes(s->in[lane], (int)s->len) != 1) {
            die("RAND_bytes failed");
        }
        s->in[lane][0] = 0; /* below n, whose top bit is set */
        s->priv_lanes[lane] = s->priv;
        s->pub_lanes[lane] = s->pub;
        s->in_lanes[lane] = s->in[lane];
        s->out_lanes[lane] = s->out[lane];
    }
    rsa_check(s, rsa_mbc_private, 1, "private");
    rsa_check(s, rsa_mbc_public, 0, "public");
    return s;
}

static void rsa_teardown(void *state)
{
    rsa_state *s = state;
    mbc_rsa_priv_key_free(s->priv);
    mbc_rsa_pub_key_free(s->pub);
    EVP_PKEY_CTX_free(s->peer_priv);
    EVP_PKEY_CTX_free(s->peer_pub);
    EVP_PKEY_free(s->pkey);
    OPENSSL_cleanse(s, sizeof(*s));
    free(s);
}

static const bench_op rsa_ops[] = {
    {"private", rsa_mbc_private, rsa_peer_private},
    {"public", rsa_mbc_public, rsa_peer_public},
};

#define NUM_RSA_OPS (sizeof(rsa_ops) / sizeof(rsa_ops[0]))

/* cases: every benchmark; the default suite runs them all in this order. */
static const bench_case cases[] = {
    {"rsa2048", 2048, rsa_setup, rsa_teardown, rsa_ops, NUM_RSA_OPS},
    {"rsa3072", 3072, rsa_setup, rsa_teardown, rsa_ops, NUM_RSA_OPS},
    {"rsa4096", 4096, rsa_setup, rsa_teardown, rsa_ops, NUM_RSA_OPS},
};
#define NUM_CASES (sizeof(cases) / sizeof(cases[0]))

/* ------------------------------------------------------------------------ */
/* Timing                                                                    */
/* ------------------------------------------------------------------------ */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* rate: calls fn (at least once) until seconds elapse; returns ops/s. */
static double rate(bench_fn fn, void *state, double seconds)
{
    unsigned long long ops = 0;
    double start = now_seconds(), elapsed;
    do {
        ops += fn(state);
        elapsed = now_seconds() - start;
    } while (elapsed < seconds);
    return (double)ops / elapsed;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* measure: warm-up, then the median ops/s of opts->reps measurements. */
static double measure(bench_fn fn, void *state, const bench_opts *opts)
{
    double warmup = opts->seconds / 10 < 0.2 ? opts->seconds / 10 : 0.2;
    double *r = malloc(opts->reps * sizeof(*r));
    if (r == NULL) {
        die("out of memory");
    }
    rate(fn, state, warmup);
    for (unsigned i = 0; i < opts->reps; i++) {
        r[i] = rate(fn, state, opts->seconds);
    }
    qsort(r, opts->reps, sizeof(*r), cmp_double);
    unsigned mid = opts->reps / 2;
    double median = opts->reps % 2 ? r[mid] : (r[mid - 1] + r[mid]) / 2;
    free(r);
    return median;
}

/* ------------------------------------------------------------------------ */
/* Command line and report                                                   */
/* ------------------------------------------------------------------------ */

static void list_cases(FILE *f)
{
    for (size_t i = 0; i < NUM_CASES; i++) {
        fprintf(f, " %s", cases[i].name);
    }
    fprintf(f, "\n");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mbc_bench [options] [case...]\n"
               "Prints ops/s of mbcrypto (8 lanes per call) and OpenSSL (one op per call).\n"
               "  --impl auto|c|ifma  mbcrypto implementation (default auto: CPU dispatch)\n"
               "  --seconds S         time per measurement, in seconds (default 1.0)\n"
               "  --reps N            measurements per row; the median is shown (default 1)\n"
               "  --help              this text\n"
               "cases (default: all):");
    list_cases(f);
}

/* usage_error: a command-line mistake; exits 2. */
static void usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "mbc_bench: %s '%s' (see mbc_bench --help)\n", msg, arg);
    exit(2);
}

/* select_impl: applies --impl; exits 2 if the implementation is unavailable. */
static void select_impl(const char *impl)
{
    if (strcmp(impl, "c") == 0) {
        mbc_cpu_restrict(0);
    } else if (strcmp(impl, "ifma") == 0) {
        if (strcmp(mbc_impl_name(MBC_ALG_RSA), "ifma") != 0) {
            fprintf(stderr,
                    "mbc_bench: --impl ifma: the IFMA implementation is not available "
                    "(CPU, OS, build or MBCRYPTO_CPU_MASK); dispatch picked '%s'\n",
                    mbc_impl_name(MBC_ALG_RSA));
            exit(2);
        }
    } else if (strcmp(impl, "auto") != 0) {
        usage_error("--impl must be auto, c or ifma, not", impl);
    }
}

static const bench_case *find_case(const char *name)
{
    for (size_t i = 0; i < NUM_CASES; i++) {
        if (strcmp(cases[i].name, name) == 0) {
            return &cases[i];
        }
    }
    fprintf(stderr, "mbc_bench: unknown benchmark '%s'; valid names:", name);
    list_cases(stderr);
    exit(2);
}

static bench_opts parse_options(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"impl", required_argument, NULL, 'i'},
        {"seconds", required_argument, NULL, 's'},
        {"reps", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bench_opts opts = {1.0, 1};
    const char *impl = "auto";
    char *end;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == 'i') {
            impl = optarg;
        } else if (c == 's') {
            opts.seconds = strtod(optarg, &end);
            if (*end != '\0' || !(opts.seconds > 0 && opts.seconds < 1e6)) {
                usage_error("--seconds needs a positive number, not", optarg);
            }
        } else if (c == 'r') {
            unsigned long n = strtoul(optarg, &end, 10);
            if (*end != '\0' || optarg[0] == '-' || n < 1 || n > 1000) {
                usage_error("--reps needs a whole number from 1 to 1000, not", optarg);
            }
            opts.reps = (unsigned)n;
        } else if (c == 'h') {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            exit(2);
        }
    }
    select_impl(impl);
    return opts;
}

static void print_header(const bench_opts *opts)
{
    printf("mbcrypto %s, impl %s, cpu features 0x%" PRIx64 ", %d lanes per call\n",
           mbc_version_string(), mbc_impl_name(MBC_ALG_RSA), mbc_cpu_features(), MBC_LANES);
    printf("peer: %s, one op per call\n", OpenSSL_version(OPENSSL_VERSION));
    printf("seconds per measurement %.2f, reps %u (median shown)\n", opts->seconds, opts->reps);
    printf("hint: most meaningful pinned to one core, e.g. taskset -c 1 mbc_bench ...\n\n");
    printf("%-20s %12s %12s %8s\n", "op", "mbcrypto/s", "openssl/s", "ratio");
    fflush(stdout);
}

static void run_case(const bench_case *bc, const bench_opts *opts)
{
    void *state = bc->setup(bc->param);
    for (size_t i = 0; i < bc->num_ops; i++) {
        const bench_op *op = &bc->ops[i];
        char label[64];
        fprintf(stderr, "mbc_bench: measuring %s %s...\n", bc->name, op->label);
        double mbc = measure(op->run_mbc, state, opts);
        double peer = measure(op->run_peer, state, opts);
        snprintf(label, sizeof(label), "%s %s", bc->name, op->label);
        printf("%-20s %12.1f %12.1f %7.2fx\n", label, mbc, peer, mbc / peer);
        fflush(stdout);
    }
    bc->teardown(state);
}

int main(int argc, char **argv)
{
    bench_opts opts = parse_options(argc, argv);
    size_t num_run = 0;
    const bench_case **run = malloc(((size_t)argc + NUM_CASES) * sizeof(*run));
    if (run == NULL) {
        die("out of memory");
    }
    for (int i = optind; i < argc; i++) {
        run[num_run++] = find_case(argv[i]);
    }
    if (num_run == 0) {
        for (size_t i = 0; i < NUM_CASES; i++) {
            run[num_run++] = &cases[i];
        }
    }

    print_header(&opts);
    for (size_t i = 0; i < num_run; i++) {
        run_case(run[i], &opts);
    }
    free(run);
    return 0;
}
