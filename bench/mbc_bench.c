/*
 * mbc_bench.c - mbcrypto next to OpenSSL and intel-ipsec-mb: the command
 * line, the case table and the reports. See --help and README.md.
 *
 * Three kinds of tables, each run per --impl:
 *  - RSA (bench_rsa.c), EC (bench_ec.c) and X25519 (bench_x25519.c), one
 *    family table each, a row per size: operations/s of mbcrypto's 8-lane
 *    calls (all lanes full) next to OpenSSL's one operation per call, like
 *    openssl speed rsa / ecdsa / ecdh.
 *  - AES-GCM (bench_gcm.c): MB/s by message size for mbcrypto, OpenSSL and
 *    intel-ipsec-mb, like openssl speed -evp aes-128-gcm.
 *  - --concurrency: K requests in flight through the lane manager (closed
 *    loop), ops/s and latency percentiles per K, next to OpenSSL serving the
 *    same requests one at a time, the raw 8-lane kernel and the library's
 *    single-request call, with the targets checked.
 * Numbers go to stdout (a table, or with --json one JSON document); progress
 * and errors to stderr. Every timed result is verified (see the workload
 * files); a case whose check fails is aborted and the exit status is 1.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "bench.h"

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */
/* ------------------------------------------------------------------------ */

enum family { FAM_RSA, FAM_GCM, FAM_EC, FAM_X25519, FAM_MLKEM, FAM_HYBRID, NUM_FAMS };

typedef struct case_def {
    const char *name;
    enum family fam;
    unsigned bits;
    size_t bytes; /* AES-GCM message size */
    int in_default;
} case_def;

#define MAX_OPS 4

/*
 * fam_def: one family of cases. Every family has a group name and its
 * operations; a public-key family (RSA, EC) also has a workload (case_new
 * .. run_ossl, bench.h) and runs in the same throughput table code and the
 * same --concurrency code as the others.
 */
typedef struct fam_def {
    const char *group; /* the group name selecting all its cases */
    unsigned num_ops;
    const char *ops[MAX_OPS];
    /* public-key families only (case_new NULL for AES-GCM): */
    const char *title;         /* table title */
    int alg;                   /* mbc_impl_name's family */
    const char *cols[MAX_OPS]; /* throughput column headers */
    const char *row_fmt;       /* throughput row label, from the case's bits */
    const char *conc_fmt;      /* concurrency table title, from the bits */
    const char *mb8_name[MAX_OPS], *single_name[MAX_OPS];
    const char *mb8_path, *ossl_path; /* JSON "path" of the throughput records */
    pk_case *(*case_new)(unsigned bits, const bench_opts *opts);
    void (*case_free)(pk_case *c);
    void *const *(*threads)(const pk_case *c);
    int (*check_mgr)(pk_case *c, unsigned op);
    run_fn run_mb8, run_single, run_mgr, run_ossl;
    int keyed; /* its requests use --keys keys (X25519's carry their own scalars) */
    const bench_pool *pool; /* a pool family's hooks (run_mb8, run_single: bench_pool_run_*) */
} fam_def;

/* clang-format off */
static const fam_def fams[NUM_FAMS] = {
    [FAM_RSA] = {"rsa", 2, {"private", "public"}, "RSA", MBC_ALG_RSA, {"private/s", "public/s"},
                 "rsa %u bits", "RSA-%u",
                 {"mbc_rsa_private_crt_mb8", "mbc_rsa_public_mb8"},
                 {"mbc_rsa_private_crt", "mbc_rsa_public"},
                 "mbc_rsa_*_mb8, 8 lanes", "EVP_PKEY_decrypt/encrypt, RSA_NO_PADDING, one op per call",
                 rsa_case_new, rsa_case_free, rsa_case_threads, rsa_check_mgr,
                 rsa_run_mb8, rsa_run_single, rsa_run_mgr, rsa_run_ossl, 1, NULL},
    [FAM_GCM] = {"gcm", 2, {"encrypt", "decrypt"}, NULL, MBC_ALG_GCM, {NULL}, NULL, NULL, {NULL},
                 {NULL}, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL},
    [FAM_EC] = {"ec", 4, {"sign", "verify", "ecdh", "keygen"}, "EC", MBC_ALG_EC,
                {"sign/s", "verify/s", "ecdh/s", "keygen/s"}, "P-%u", "P-%u",
                {"mbc_ecdsa_sign_mb8", "mbc_ecdsa_verify_mb8", "mbc_ecdh_mb8", "mbc_ec_keygen_mb8"},
                {"mbc_ecdsa_sign", "mbc_ecdsa_verify", "mbc_ecdh", "mbc_ec_keygen"},
                "mbc_ecdsa_sign/verify_mb8, mbc_ecdh_mb8, mbc_ec_keygen_mb8, 8 lanes",
                "EVP_PKEY_sign/verify (digest), EVP_PKEY_derive, EVP_PKEY_keygen, one op per call",
                ec_case_new, ec_case_free, ec_case_threads, ec_check_mgr,
                ec_run_mb8, ec_run_single, ec_run_mgr, ec_run_ossl, 1, NULL},
    [FAM_X25519] = {"x25519", 2, {"derive", "keygen"}, "X25519", MBC_ALG_X25519,
                    {"derive/s", "keygen/s"}, "x25519", "X25519",
                    {"mbc_x25519_mb8", "mbc_x25519_keygen_mb8"},
                    {"mbc_x25519", "mbc_x25519_keygen"},
                    "mbc_x25519_mb8 / mbc_x25519_keygen_mb8, 8 lanes",
                    "EVP_PKEY_derive / EVP_PKEY_keygen, one op per call",
                    x25519_case_new, x25519_case_free, bench_pool_case_threads, x25519_check_mgr,
                    bench_pool_run_mb8, bench_pool_run_single, x25519_run_mgr, x25519_run_ossl, 0,
                    &x25519_pool},
    [FAM_MLKEM] = {"mlkem", 3, {"keygen", "encaps", "decaps"}, "ML-KEM-768", MBC_ALG_MLKEM,
                   {"keygen/s", "encaps/s", "decaps/s"}, "mlkem768", "ML-KEM-768",
                   {"mbc_mlkem_keygen_mb8", "mbc_mlkem_encaps_mb8", "mbc_mlkem_decaps_mb8"},
                   {"mbc_mlkem_keygen", "mbc_mlkem_encaps", "mbc_mlkem_decaps"},
                   "mbc_mlkem_*_mb8, 8 lanes",
                   "EVP_PKEY_keygen / encapsulate / decapsulate (OpenSSL 3.5+), one op per call",
                   mlkem_case_new, mlkem_case_free, bench_pool_case_threads, mlkem_check_mgr,
                   bench_pool_run_mb8, bench_pool_run_single, mlkem_run_mgr, mlkem_run_ossl, 0,
                   &mlkem_pool},
    [FAM_HYBRID] = {"hybrid", 3, {"keygen", "encaps", "decaps"}, "X25519MLKEM768", MBC_ALG_MLKEM,
                    {"keygen/s", "encaps/s", "decaps/s"}, "x25519mlkem768", "X25519MLKEM768",
                    {"mbc_mlkem_keygen_mb8 + mbc_x25519_keygen_mb8",
                     "mbc_mlkem_encaps_mb8 + mbc_x25519_keygen_mb8 + mbc_x25519_mb8",
                     "mbc_mlkem_decaps_mb8 + mbc_x25519_mb8"},
                    {"mbc_mlkem_keygen + mbc_x25519_keygen",
                     "mbc_mlkem_encaps + mbc_x25519_keygen + mbc_x25519",
                     "mbc_mlkem_decaps + mbc_x25519"},
                    "mbc_mlkem_*_mb8 + mbc_x25519_*_mb8, 8 lanes",
                    "EVP_PKEY_keygen / encapsulate / decapsulate of X25519MLKEM768 (OpenSSL 3.5+), one op per call",
                    hybrid_case_new, hybrid_case_free, bench_pool_case_threads, hybrid_check_mgr,
                    bench_pool_run_mb8, bench_pool_run_single, NULL, hybrid_run_ossl, 0,
                    &hybrid_pool},
};
/* clang-format on */

/* fam_all: the op mask of every operation of family fam. */
static unsigned fam_all(enum family fam)
{
    return (1u << fams[fam].num_ops) - 1u;
}

/* clang-format off */
#define GCM_CASE(bits, size, d) {"aes" #bits "gcm-" #size, FAM_GCM, bits, size, d}
#define GCM_SIZES(bits, d64, d1k, d16k)                                                   \
    GCM_CASE(bits, 16, 0), GCM_CASE(bits, 64, d64), GCM_CASE(bits, 256, 0),               \
    GCM_CASE(bits, 1024, d1k), GCM_CASE(bits, 8192, 0), GCM_CASE(bits, 16384, d16k),      \
    GCM_CASE(bits, 65536, 0)

/* cases: every benchmark, in the order they run. in_default: part of the
 * default suite (every RSA size and curve; AES-GCM at a few sizes). For EC,
 * bits is the curve's: 256 (P-256), 384 (P-384). */
static const case_def cases[] = {
    {"rsa2048", FAM_RSA, 2048, 0, 1},
    {"rsa3072", FAM_RSA, 3072, 0, 1},
    {"rsa4096", FAM_RSA, 4096, 0, 1},
    GCM_SIZES(128, 1, 1, 1),
    GCM_SIZES(192, 0, 0, 0),
    GCM_SIZES(256, 1, 0, 1),
    {"p256", FAM_EC, 256, 0, 1},
    {"p384", FAM_EC, 384, 0, 1},
    {"x25519", FAM_X25519, 255, 0, 1},
    /* not in the default suite: its OpenSSL peer needs 3.5's libcrypto */
    {"mlkem768", FAM_MLKEM, 768, 0, 0},
    {"x25519mlkem768", FAM_HYBRID, 768, 0, 0},
};
/* clang-format on */
#define NUM_CASES (sizeof(cases) / sizeof(cases[0]))

/* The default suite's short concurrency table. */
static const unsigned default_suite_k[] = {1, 2, 8, 64};
static const unsigned default_k[] = {1, 2, 4, 8, 16, 64};

/* ------------------------------------------------------------------------ */
/* Implementations (--impl)                                                  */
/* ------------------------------------------------------------------------ */

/* impl_choice: a name, the family it names (-1: every family) and the
 * features removed to get it (features can only be removed). */
typedef struct impl_choice {
    const char *name;
    int alg;
    uint64_t remove;
} impl_choice;

static const impl_choice impl_choices[] = {
    {"auto", -2, 0},
    {"c", -1, ~0ull},
    {"ifma", MBC_ALG_RSA, 0},
    {"vaes512", MBC_ALG_GCM, 0},
    {"aesni", MBC_ALG_GCM, MBC_CPU_VAES | MBC_CPU_VPCLMULQDQ},
    {"avx512", MBC_ALG_MLKEM, 0},
    {"avx2", MBC_ALG_MLKEM, MBC_CPU_AVX512F | MBC_CPU_AVX512VL},
};
#define NUM_IMPL_CHOICES (sizeof(impl_choices) / sizeof(impl_choices[0]))
#define MAX_PASSES 8

/* ------------------------------------------------------------------------ */
/* State of the run                                                          */
/* ------------------------------------------------------------------------ */

static bench_opts g_opts = {
    .seconds = 0.4,
    .reps = 3,
    .threads = 1,
    .keys = 1,
    .peers = 0,
};
static unsigned g_sel[NUM_CASES]; /* ops selected per case */
static const impl_choice *g_passes[MAX_PASSES];
static size_t g_num_passes;
static int g_concurrency;   /* --concurrency given */
static int g_default_suite; /* no case named and no --concurrency */
static unsigned g_failures;
static size_t g_items_total, g_items_done;
static double g_started;

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

static double now_s(void)
{
    return (double)bench_now_ns() * 1e-9;
}

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* out: table text on stdout, unless --json. */
static void out(const char *fmt, ...)
{
    if (g_opts.json) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

static void progress(size_t items, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* progress: one line on stderr before measuring 'items' items. */
static void progress(size_t items, const char *fmt, ...)
{
    if (g_opts.quiet) {
        g_items_done += items;
        return;
    }
    double left = bench_estimate(g_items_total - g_items_done, &g_opts);
    fprintf(stderr, "mbc_bench: [%zu/%zu, ~%.0f s left] ", g_items_done + 1, g_items_total, left);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    g_items_done += items;
}

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* usage_error: a command-line mistake; exits 2. */
static void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mbc_bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see mbc_bench --help)\n");
    va_end(ap);
    exit(2);
}

/* failed: one aborted case (reason already on stderr). */
static void failed(const char *case_name, const char *op)
{
    g_failures++;
    fprintf(stderr, "mbc_bench: ERROR: %s%s%s aborted: verification or setup failed\n", case_name,
            op != NULL ? " " : "", op != NULL ? op : "");
    out("%s%s%s: FAILED (see stderr)\n", case_name, op != NULL ? " " : "", op != NULL ? op : "");
    if (g_opts.json) {
        json_obj_begin(NULL);
        json_str("kind", "failure");
        json_str("case", case_name);
        json_str("op", op);
        json_obj_end();
    }
}

/* fmt_num: a rate or a latency in 9 characters with 4+ significant digits. */
static const char *fmt_num(char *buf, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, 16, "%9s", "-");
    } else if (v >= 1e5) {
        snprintf(buf, 16, "%9.0f", v);
    } else if (v >= 100) {
        snprintf(buf, 16, "%9.1f", v);
    } else {
        snprintf(buf, 16, "%9.2f", v);
    }
    return buf;
}

static const char *fmt_ratio(char *buf, double v)
{
    if (!isfinite(v) || v <= 0) {
        snprintf(buf, 16, "%7s", "-");
    } else {
        snprintf(buf, 16, "%6.2fx", v);
    }
    return buf;
}

/* SIZE_LABEL_LEN: room for any size_t in decimal and " KiB". */
#define SIZE_LABEL_LEN 32

static const char *size_label(char buf[SIZE_LABEL_LEN], size_t bytes)
{
    if (bytes >= 1024 && bytes % 1024 == 0) {
        snprintf(buf, SIZE_LABEL_LEN, "%zu KiB", bytes / 1024);
    } else {
        snprintf(buf, SIZE_LABEL_LEN, "%zu B", bytes);
    }
    return buf;
}

static int peer(unsigned p)
{
    return (g_opts.peers & p) != 0;
}

/* cmb_family_of: crypto_mb's family of a public-key family. */
static enum cmb_family cmb_family_of(enum family fam)
{
    return fam == FAM_RSA ? CMB_RSA : fam == FAM_EC ? CMB_EC : CMB_X25519;
}

/* cmb_mark: "*" after crypto_mb's ratio where its operation does less than
 * ours: EC keygen, whose point it leaves in Jacobian X:Y:Z (no inversion). */
static const char *cmb_mark(enum family fam, unsigned op)
{
    return fam == FAM_EC && op == EC_OP_KEYGEN ? "*" : " ";
}

static double g_min_share = 1.0; /* lowest CPU share of any measurement */

/* measure: measure_items, keeping track of the CPU share. */
static int measure(bench_item *items, size_t n)
{
    int rc = measure_items(items, n, &g_opts);
    for (size_t i = 0; i < n && rc == 0; i++) {
        g_min_share = fmin(g_min_share, items[i].res.cpu_share);
    }
    return rc;
}

/* mk_item: a bench_item with no result yet. */
static bench_item mk_item(const char *label, run_fn fn, const void *arg, void *const *ts,
                          int latency, int queue)
{
    bench_item it;
    memset(&it, 0, sizeof(it));
    it.label = label;
    it.fn = fn;
    it.arg = arg;
    it.ts = ts;
    it.latency = latency;
    it.queue = queue;
    return it;
}

/* json_threads: the thread fields of a JSON record. */
static void json_threads(const item_result *r)
{
    json_int("threads", g_opts.threads);
    if (g_opts.threads > 1) {
        json_arr_begin("per_thread_ops_per_s");
        for (unsigned t = 0; t < g_opts.threads; t++) {
            json_num(NULL, r->per_thread[t]);
        }
        json_arr_end();
        json_stat("one_thread_ops_per_s", &r->rate1);
        json_num("scaling", r->scaling);
    }
}

/* json_result_head: the fields every measurement record starts with. */
static void json_result_head(const char *kind, const char *case_name, const char *op,
                             const char *impl, const char *kernel, const item_result *r)
{
    json_obj_begin(NULL);
    json_str("kind", kind);
    json_str("case", case_name);
    json_str("op", op);
    json_str("impl", impl);
    json_str("kernel", kernel);
    json_stat("ops_per_s", &r->rate);
    json_num("spread_pct", r->spread);
    json_num("cpu_share", r->cpu_share);
    json_threads(r);
}

/* ------------------------------------------------------------------------ */
/* Thread scaling table (--threads N > 1)                                    */
/* ------------------------------------------------------------------------ */

#define MAX_SCALING_ROWS 256

typedef struct scaling_row {
    char label[64];
    double unit; /* multiplier from ops/s to the shown unit */
    item_result r;
} scaling_row;

static scaling_row g_scaling[MAX_SCALING_ROWS];
static size_t g_num_scaling;

static void scaling_add(const char *label, double unit, const item_result *r)
{
    if (g_opts.threads < 2 || g_num_scaling == MAX_SCALING_ROWS) {
        return;
    }
    scaling_row *s = &g_scaling[g_num_scaling++];
    snprintf(s->label, sizeof(s->label), "%s", label);
    s->unit = unit;
    s->r = *r;
}

static void scaling_print(const char *unit_name)
{
    if (g_num_scaling == 0) {
        return;
    }
    char a[16], b[16], c[16];
    out("\nthread scaling (%s): %u threads, each pinned to its own CPU, vs one thread alone\n",
        unit_name, g_opts.threads);
    out("%-34s %9s %9s  %-24s %7s\n", "", "1 thread", "total", "per thread", "scaling");
    for (size_t i = 0; i < g_num_scaling; i++) {
        const scaling_row *s = &g_scaling[i];
        char per[128] = "";
        size_t at = 0;
        for (unsigned t = 0; t < g_opts.threads && at < sizeof(per) - 16; t++) {
            at += (size_t)snprintf(per + at, sizeof(per) - at, "%s%.1f", t ? " " : "",
                                   s->r.per_thread[t] * s->unit);
        }
        out("%-34s %s %s  %-24s %s\n", s->label, fmt_num(a, s->r.rate1.med * s->unit),
            fmt_num(b, s->r.rate.med * s->unit), per, fmt_ratio(c, s->r.scaling));
    }
    g_num_scaling = 0;
}

/* ------------------------------------------------------------------------ */
/* Public-key throughput (RSA, EC)                                           */
/* ------------------------------------------------------------------------ */

static void pk_section(enum family fam)
{
    const fam_def *fd = &fams[fam];
    const unsigned nops = fd->num_ops;
    int header = 0;
    for (size_t ci = 0; ci < NUM_CASES; ci++) {
        const case_def *cd = &cases[ci];
        if (cd->fam != fam || g_sel[ci] == 0) {
            continue;
        }
        if (!header) {
            out("\n%s, operations/s: mbcrypto %s, 8-lane calls with all lanes full; OpenSSL "
                "one operation per call\n",
                fd->title, mbc_impl_name((mbc_alg)fd->alg));
            if (peer(PEER_CRYPTO_MB)) {
                out("crypto_mb: %s, its _ssl_mb8 calls (QAT_Engine's), 8 lanes full%s\n",
                    cmb_version(),
                    fam == FAM_EC ? "; * keygen: crypto_mb's point is left in Jacobian X:Y:Z "
                                    "(no inversion), ours is affine"
                                  : "");
            }
            out("%-14s", "");
            for (unsigned op = 0; op < nops; op++) {
                out(" %9s", fd->cols[op]);
                if (peer(PEER_OPENSSL)) {
                    out(" %9s %7s", "openssl/s", "ratio");
                }
                if (peer(PEER_CRYPTO_MB)) {
                    out(" %9s %7s ", "cmb/s", "ratio");
                }
                out(" ");
            }
            out("%7s\n", "spread");
            header = 1;
        }
        const size_t n_items = 1 + (peer(PEER_OPENSSL) ? 1 : 0) + (peer(PEER_CRYPTO_MB) ? 1 : 0);
        pk_case *c = fd->case_new(cd->bits, &g_opts);
        cmb_case *cmb = NULL;
        if (c != NULL && peer(PEER_CRYPTO_MB)) {
            cmb = cmb_case_new(cmb_family_of(fam), cd->bits, &g_opts);
            if (cmb == NULL) {
                fd->case_free(c);
                c = NULL;
            }
        }
        if (c == NULL) {
            for (unsigned op = 0; op < nops; op++) {
                g_items_done += (g_sel[ci] >> op & 1u) * n_items;
            }
            failed(cd->name, NULL);
            continue;
        }
        item_result res[MAX_OPS][3]; /* [op][mbcrypto, openssl, crypto_mb] */
        int ok[MAX_OPS] = {0};
        pk_arg args[MAX_OPS];
        int any_ok = 0;
        for (unsigned op = 0; op < nops; op++) {
            args[op] = (pk_arg){op, 0, fd->pool};
            if (!(g_sel[ci] & (1u << op))) {
                continue;
            }
            bench_item items[3] = {
                mk_item("mbcrypto", fd->run_mb8, &args[op], fd->threads(c), 0, 0),
            };
            size_t n = 1, at[3] = {0, 0, 0};
            if (peer(PEER_OPENSSL)) {
                at[1] = n;
                items[n++] = mk_item("openssl", fd->run_ossl, &args[op], fd->threads(c), 0, 0);
            }
            if (peer(PEER_CRYPTO_MB)) {
                at[2] = n;
                items[n++] = mk_item("crypto_mb", cmb_run, &args[op], cmb_case_threads(cmb), 0, 0);
            }
            progress(n, "%s %s", cd->name, fd->ops[op]);
            if (measure(items, n) != 0) {
                failed(cd->name, fd->ops[op]);
                continue;
            }
            any_ok = 1;
            ok[op] = 1;
            for (size_t i = 0; i < 3; i++) {
                res[op][i] = items[at[i]].res;
            }
        }
        fd->case_free(c);
        cmb_case_free(cmb);
        if (!any_ok) {
            continue;
        }
        char label[32], a[16], b[16], r[16];
        snprintf(label, sizeof(label), fd->row_fmt, cd->bits);
        out("%-14s", label);
        double spread = 0;
        for (unsigned op = 0; op < nops; op++) {
            if (!ok[op]) {
                out(" %9s", "-");
                if (peer(PEER_OPENSSL)) {
                    out(" %9s %7s", "-", "-");
                }
                if (peer(PEER_CRYPTO_MB)) {
                    out(" %9s %7s ", "-", "-");
                }
                out(" ");
                continue;
            }
            out(" %s", fmt_num(a, res[op][0].rate.med));
            spread = fmax(spread, res[op][0].spread);
            if (peer(PEER_OPENSSL)) {
                out(" %s %s", fmt_num(b, res[op][1].rate.med),
                    fmt_ratio(r, res[op][0].rate.med / res[op][1].rate.med));
                spread = fmax(spread, res[op][1].spread);
            }
            if (peer(PEER_CRYPTO_MB)) {
                out(" %s %s%s", fmt_num(b, res[op][2].rate.med),
                    fmt_ratio(r, res[op][0].rate.med / res[op][2].rate.med), cmb_mark(fam, op));
                spread = fmax(spread, res[op][2].spread);
            }
            out(" ");
        }
        if (g_opts.reps > 1) {
            out("%6.1f%%\n", spread);
        } else {
            out("%7s\n", "-");
        }
        fflush(stdout);
        for (unsigned op = 0; op < nops; op++) {
            if (!ok[op]) {
                continue;
            }
            char sl[64];
            snprintf(sl, sizeof(sl), "%s %s mbcrypto", cd->name, fd->ops[op]);
            scaling_add(sl, 1, &res[op][0]);
            if (g_opts.json) {
                json_result_head("throughput", cd->name, fd->ops[op], "mbcrypto",
                                 mbc_impl_name((mbc_alg)fd->alg), &res[op][0]);
                json_str("path", fd->mb8_path);
                if (peer(PEER_OPENSSL)) {
                    json_num("vs_openssl", res[op][0].rate.med / res[op][1].rate.med);
                }
                if (peer(PEER_CRYPTO_MB)) {
                    json_num("vs_crypto_mb", res[op][0].rate.med / res[op][2].rate.med);
                }
                json_obj_end();
            }
            if (peer(PEER_CRYPTO_MB)) {
                snprintf(sl, sizeof(sl), "%s %s crypto_mb", cd->name, fd->ops[op]);
                scaling_add(sl, 1, &res[op][2]);
                if (g_opts.json) {
                    json_result_head("throughput", cd->name, fd->ops[op], "crypto_mb",
                                     cmb_version(), &res[op][2]);
                    json_str("path", "crypto_mb _ssl_mb8 calls, 8 lanes");
                    json_bool("jacobian_out", fam == FAM_EC && op == EC_OP_KEYGEN);
                    json_obj_end();
                }
            }
            if (peer(PEER_OPENSSL)) {
                snprintf(sl, sizeof(sl), "%s %s openssl", cd->name, fd->ops[op]);
                scaling_add(sl, 1, &res[op][1]);
                if (g_opts.json) {
                    json_result_head("throughput", cd->name, fd->ops[op], "openssl",
                                     OpenSSL_version(OPENSSL_VERSION), &res[op][1]);
                    json_str("path", fd->ossl_path);
                    json_obj_end();
                }
            }
        }
    }
    scaling_print("operations/s");
}

/* ------------------------------------------------------------------------ */
/* AES-GCM throughput                                                        */
/* ------------------------------------------------------------------------ */

#define GCM_NUM_SIZES 7

static const size_t gcm_sizes[GCM_NUM_SIZES] = {16, 64, 256, 1024, 8192, 16384, 65536};

static void gcm_block(unsigned bits)
{
    /* Sizes selected for any key size: the columns of every block. */
    int col[GCM_NUM_SIZES] = {0};
    int any = 0;
    for (size_t ci = 0; ci < NUM_CASES; ci++) {
        if (cases[ci].fam != FAM_GCM || g_sel[ci] == 0) {
            continue;
        }
        for (unsigned s = 0; s < GCM_NUM_SIZES; s++) {
            col[s] |= cases[ci].bytes == gcm_sizes[s];
        }
        any |= cases[ci].bits == bits;
    }
    if (!any) {
        return;
    }
    const unsigned impls[3] = {GCM_IMPL_MBC, GCM_IMPL_OSSL, GCM_IMPL_IPSEC_MB};
    const char *const names[3] = {"mbcrypto", "openssl", "ipsec-mb"};
    int have[3] = {1, peer(PEER_OPENSSL), peer(PEER_IPSEC_MB)};
    double mbs[2][3][GCM_NUM_SIZES];
    int ok[2][GCM_NUM_SIZES] = {{0}};
    double spread[2][3] = {{0}};
    const char *kernel = NULL;
    static char kernel_buf[32];
    for (unsigned s = 0; s < GCM_NUM_SIZES; s++) {
        const case_def *cd = NULL;
        size_t ci;
        for (ci = 0; ci < NUM_CASES; ci++) {
            if (cases[ci].fam == FAM_GCM && cases[ci].bits == bits &&
                cases[ci].bytes == gcm_sizes[s] && g_sel[ci] != 0) {
                cd = &cases[ci];
                break;
            }
        }
        if (cd == NULL) {
            continue;
        }
        size_t n = 0;
        for (unsigned i = 0; i < 3; i++) {
            n += have[i] ? 1 : 0;
        }
        gcm_case *c = gcm_case_new(bits, cd->bytes, &g_opts);
        if (c == NULL) {
            g_items_done += ((g_sel[ci] & 1u) + (g_sel[ci] >> 1 & 1u)) * n;
            failed(cd->name, NULL);
            continue;
        }
        snprintf(kernel_buf, sizeof(kernel_buf), "%s", gcm_case_impl(c));
        kernel = kernel_buf;
        for (unsigned op = 0; op < 2; op++) {
            if (!(g_sel[ci] & (1u << op))) {
                continue;
            }
            gcm_arg args[3];
            bench_item items[3];
            size_t num = 0, idx[3] = {0, 0, 0};
            for (unsigned i = 0; i < 3; i++) {
                if (have[i]) {
                    idx[i] = num;
                    args[num] = (gcm_arg){op, impls[i]};
                    items[num] = mk_item(names[i], gcm_run, &args[num], gcm_case_threads(c), 0, 0);
                    num++;
                }
            }
            progress(num, "%s %s", cd->name, fams[FAM_GCM].ops[op]);
            if (measure(items, num) != 0) {
                failed(cd->name, fams[FAM_GCM].ops[op]);
                continue;
            }
            ok[op][s] = 1;
            for (unsigned i = 0; i < 3; i++) {
                if (!have[i]) {
                    continue;
                }
                const item_result *r = &items[idx[i]].res;
                mbs[op][i][s] = r->rate.med * (double)cd->bytes * 1e-6;
                spread[op][i] = fmax(spread[op][i], r->spread);
                char sl[64];
                snprintf(sl, sizeof(sl), "%s %s %s", cd->name, fams[FAM_GCM].ops[op], names[i]);
                scaling_add(sl, (double)cd->bytes * 1e-6, r);
                if (g_opts.json) {
                    json_result_head("throughput", cd->name, fams[FAM_GCM].ops[op], names[i],
                                     i == 0   ? gcm_case_impl(c)
                                     : i == 1 ? OpenSSL_version(OPENSSL_VERSION)
                                              : gcm_ipsec_mb(),
                                     r);
                    json_int("bytes", (long long)cd->bytes);
                    stat3 b = {r->rate.med * (double)cd->bytes, r->rate.min * (double)cd->bytes,
                               r->rate.max * (double)cd->bytes};
                    json_stat("bytes_per_s", &b);
                    if (i == 0) {
                        for (unsigned p = 1; p < 3; p++) {
                            if (have[p]) {
                                json_num(p == 1 ? "vs_openssl" : "vs_ipsec_mb",
                                         r->rate.med / items[idx[p]].res.rate.med);
                            }
                        }
                    }
                    json_obj_end();
                }
            }
        }
        gcm_case_free(c);
    }
    int any_ok = 0;
    for (unsigned s = 0; s < GCM_NUM_SIZES; s++) {
        any_ok |= ok[0][s] | ok[1][s];
    }
    if (!any_ok) {
        return;
    }
    char buf[SIZE_LABEL_LEN];
    out("\nAES-%u-GCM, MB/s (10^6 bytes/s) by message size: mbcrypto %s; one-shot seal (enc) "
        "and open with tag check (dec), 12-byte IV, no AAD, 16-byte tag\n",
        bits, kernel != NULL ? kernel : "-");
    out("%-18s", "");
    for (unsigned s = 0; s < GCM_NUM_SIZES; s++) {
        if (col[s]) {
            out(" %9s", size_label(buf, gcm_sizes[s]));
        }
    }
    out(" %7s\n", "spread");
    for (unsigned op = 0; op < 2; op++) {
        int any_op = 0;
        for (unsigned s = 0; s < GCM_NUM_SIZES; s++) {
            any_op |= ok[op][s];
        }
        if (!any_op) {
            continue;
        }
        for (unsigned i = 0; i < 3; i++) {
            if (!have[i]) {
                continue;
            }
            out("%s %-14s", op == 0 ? "enc" : "dec", names[i]);
            for (unsigned s = 0; s < GCM_NUM_SIZES; s++) {
                if (col[s]) {
                    out(" %s", ok[op][s] ? fmt_num(buf, mbs[op][i][s]) : "        -");
                }
            }
            if (g_opts.reps > 1) {
                out(" %6.1f%%\n", spread[op][i]);
            } else {
                out(" %7s\n", "-");
            }
        }
        for (unsigned i = 1; i < 3; i++) {
            if (!have[i]) {
                continue;
            }
            out("    %-14s", i == 1 ? "vs openssl" : "vs ipsec-mb");
            for (unsigned s = 0; s < GCM_NUM_SIZES; s++) {
                if (col[s]) {
                    out("   %s",
                        ok[op][s] ? fmt_ratio(buf, mbs[op][0][s] / mbs[op][i][s]) : "      -");
                }
            }
            out("\n");
        }
    }
    fflush(stdout);
}

static void gcm_section(void)
{
    gcm_block(128);
    gcm_block(192);
    gcm_block(256);
    scaling_print("MB/s");
}

/* ------------------------------------------------------------------------ */
/* Concurrency: K requests in flight through the manager                     */
/* ------------------------------------------------------------------------ */

static unsigned g_conc_sel[NUM_CASES]; /* ops per case for --concurrency */

/* target: "1.03x (<= 1.10: ok)"-style verdicts, in the table and the JSON. */
static void target_line(const char *what, double value, int ok, const char *fmt_value)
{
    char v[32];
    snprintf(v, sizeof(v), fmt_value, value);
    out("  target: %-46s %-10s %s\n", what, isfinite(value) ? v : "-",
        !isfinite(value) ? "n/a"
        : ok             ? "ok"
                         : "MISSED");
}

static void conc_table(const case_def *cd, unsigned op)
{
    const fam_def *fd = &fams[cd->fam];
    const char *op_name = fd->ops[op];
    const size_t nk = g_opts.num_k;
    const int ossl = peer(PEER_OPENSSL);
    const size_t n = nk + 2 + (ossl ? 1 : 0);
    pk_case *c = fd->case_new(cd->bits, &g_opts);
    if (c == NULL || fd->check_mgr(c, op) != 0) {
        fd->case_free(c);
        g_items_done += n;
        failed(cd->name, op_name);
        return;
    }
    pk_arg args[BENCH_MAX_K + 1];
    bench_item items[BENCH_MAX_K + 3];
    char labels[BENCH_MAX_K][32];
    void *const *ts = fd->threads(c);
    for (size_t j = 0; j < nk; j++) {
        args[j] = (pk_arg){op, g_opts.k[j], fd->pool};
        snprintf(labels[j], sizeof(labels[j]), "manager K=%u", g_opts.k[j]);
        items[j] = mk_item(labels[j], fd->run_mgr, &args[j], ts, 1, 0);
    }
    args[nk] = (pk_arg){op, 0, fd->pool};
    const size_t i_single = nk, i_raw = nk + 1, i_ossl = nk + 2;
    items[i_single] = mk_item("single request", fd->run_single, &args[nk], ts, 1, 0);
    items[i_raw] = mk_item("raw 8-lane", fd->run_mb8, &args[nk], ts, 1, 0);
    if (ossl) {
        items[i_ossl] = mk_item("openssl", fd->run_ossl, &args[nk], ts, 1, 1);
    }
    progress(n, "%s %s through the manager, K = %u..%u", cd->name, op_name, g_opts.k[0],
             g_opts.k[nk - 1]);
    int rc = measure(items, n);
    fd->case_free(c);
    if (rc != 0) {
        failed(cd->name, op_name);
        return;
    }
    const char *kernel = mbc_impl_name((mbc_alg)fd->alg);
    const item_result *single = &items[i_single].res, *raw = &items[i_raw].res;
    const item_result *os = ossl ? &items[i_ossl].res : NULL;
    const int thr = g_opts.threads > 1;
    char a[16], b[16], d[16], e[16], f[16], g[16], h[16], k[16];

    char title[32];
    snprintf(title, sizeof(title), fd->conc_fmt, cd->bits);
    out("\n%s %s through the manager (mbcrypto %s", title, op_name, kernel);
    if (fd->keyed) {
        out(", %u key%s", g_opts.keys, g_opts.keys > 1 ? "s" : "");
    }
    out("): K requests in flight, closed loop, flush when all K wait\n");
    if (thr) {
        out("%u threads, each with its own manager and K requests, pinned to its own CPU; "
            "ops/s are totals\n",
            g_opts.threads);
    }
    out("%6s %9s %9s %9s %7s", "K", "ops/s", "p50 us", "p99 us", "vs raw8");
    if (thr) {
        out(" %9s %7s", "1 thr/s", "scaling");
    }
    if (ossl) {
        out(" | %9s %9s %9s %7s", "openssl/s", "p50 us", "p99 us", "ratio");
    }
    out(" %7s\n", "spread");
    double k1_ratio = NAN, min_vs_ossl = NAN, min_vs_raw = NAN, min_scaling = NAN;
    unsigned min_vs_ossl_k = 0, min_vs_raw_k = 0, min_scaling_k = 0;
    for (size_t j = 0; j < nk; j++) {
        const item_result *r = &items[j].res;
        const unsigned kk = g_opts.k[j];
        double vs_raw = r->rate.med / raw->rate.med;
        out("%6u %s %s %s %s", kk, fmt_num(a, r->rate.med), fmt_num(b, r->p50_us),
            fmt_num(d, r->p99_us), fmt_ratio(e, vs_raw));
        if (thr) {
            out(" %s %s", fmt_num(f, r->rate1.med), fmt_ratio(g, r->scaling));
            if (isnan(min_scaling) || r->scaling < min_scaling) {
                min_scaling = r->scaling;
                min_scaling_k = kk;
            }
        }
        double spread = r->spread;
        if (ossl) {
            double vs_ossl = r->rate.med / os->rate.med;
            out(" | %s %s %s %s", fmt_num(f, os->rate.med), fmt_num(g, os->q50_us[j]),
                fmt_num(h, os->q99_us[j]), fmt_ratio(k, vs_ossl));
            spread = fmax(spread, os->spread);
            if (kk >= 2 && (isnan(min_vs_ossl) || vs_ossl < min_vs_ossl)) {
                min_vs_ossl = vs_ossl;
                min_vs_ossl_k = kk;
            }
        }
        if (g_opts.reps > 1) {
            out(" %6.1f%%\n", spread);
        } else {
            out(" %7s\n", "-");
        }
        if (kk == 1) {
            k1_ratio = r->p50_us / single->p50_us;
        }
        if (kk >= 8 && (isnan(min_vs_raw) || vs_raw < min_vs_raw)) {
            min_vs_raw = vs_raw;
            min_vs_raw_k = kk;
        }
        char sl[64];
        snprintf(sl, sizeof(sl), "%s %s manager K=%u", cd->name, op_name, kk);
        scaling_add(sl, 1, r);
        if (g_opts.json) {
            json_result_head("concurrency", cd->name, op_name, "mbcrypto", kernel, r);
            json_str("path", "manager (mbc_mgr_submit / flush / get_completed)");
            json_int("k", kk);
            json_num("p50_us", r->p50_us);
            json_num("p99_us", r->p99_us);
            json_num("vs_raw_mb8", vs_raw);
            if (ossl) {
                json_num("vs_openssl", r->rate.med / os->rate.med);
            }
            json_obj_end();
            if (ossl) {
                json_result_head("concurrency", cd->name, op_name, "openssl",
                                 OpenSSL_version(OPENSSL_VERSION), os);
                json_str("path", "one request at a time; p50/p99 with K queued");
                json_int("k", kk);
                json_num("p50_us", os->q50_us[j]);
                json_num("p99_us", os->q99_us[j]);
                json_obj_end();
            }
        }
    }
    out("  %-44s %9s %9s %9s\n", "reference, same requests without the manager:", "ops/s", "p50 us",
        "p99 us");
    char raw_label[64], single_label[64];
    snprintf(raw_label, sizeof(raw_label), "raw 8-lane kernel, %s", fd->mb8_name[op]);
    snprintf(single_label, sizeof(single_label), "single request, %s", fd->single_name[op]);
    out("  %-44s %s %s %s   (latency of a batch of 8)\n", raw_label, fmt_num(a, raw->rate.med),
        fmt_num(b, raw->p50_us), fmt_num(d, raw->p99_us));
    out("  %-44s %s %s %s", single_label, fmt_num(a, single->rate.med), fmt_num(b, single->p50_us),
        fmt_num(d, single->p99_us));
    if (ossl) {
        out("   (p50 %.2fx openssl's)", single->p50_us / os->p50_us);
    }
    out("\n");
    if (ossl) {
        out("  %-44s %s %s %s\n", "openssl, one request at a time", fmt_num(a, os->rate.med),
            fmt_num(b, os->p50_us), fmt_num(d, os->p99_us));
        out("  (openssl columns of the table: the same requests served one at a time, so with K "
            "in flight a request\n   also waits for the K-1 ahead of it: latency = the sum of K "
            "consecutive measured per-op times)\n");
    }
    char sl[64];
    snprintf(sl, sizeof(sl), "%s %s raw 8-lane", cd->name, op_name);
    scaling_add(sl, 1, raw);
    snprintf(sl, sizeof(sl), "%s %s single request", cd->name, op_name);
    scaling_add(sl, 1, single);
    if (ossl) {
        snprintf(sl, sizeof(sl), "%s %s openssl", cd->name, op_name);
        scaling_add(sl, 1, os);
    }
    int k1_ok = k1_ratio <= 1.10, ossl_ok = min_vs_ossl >= 1.0, raw_ok = min_vs_raw >= 0.90;
    double want_scaling = 0.95 * g_opts.threads;
    int scaling_ok = min_scaling >= want_scaling;
    char what[80];
    target_line("K=1 p50 <= 1.10x the single-request p50", k1_ratio, k1_ok, "%.2fx");
    snprintf(what, sizeof(what), "K>=2 ops/s >= openssl's (lowest: K=%u)", min_vs_ossl_k);
    target_line(what, ossl ? min_vs_ossl : NAN, ossl_ok, "%.2fx");
    snprintf(what, sizeof(what), "K>=8 ops/s >= 90%% of raw 8-lane (lowest: K=%u)", min_vs_raw_k);
    target_line(what, min_vs_raw * 100, raw_ok, "%.1f%%");
    if (thr) {
        snprintf(what, sizeof(what), "%u threads >= %.2fx one thread (lowest: K=%u)",
                 g_opts.threads, want_scaling, min_scaling_k);
        target_line(what, min_scaling, scaling_ok, "%.2fx");
    }
    fflush(stdout);
    if (g_opts.json) {
        const struct {
            const char *path;
            const item_result *r;
        } refs[3] = {{"raw-mb8", raw}, {"single", single}, {"openssl-one-at-a-time", os}};
        for (unsigned i = 0; i < 3; i++) {
            if (refs[i].r == NULL) {
                continue;
            }
            json_result_head("reference", cd->name, op_name, i < 2 ? "mbcrypto" : "openssl",
                             i < 2 ? kernel : OpenSSL_version(OPENSSL_VERSION), refs[i].r);
            json_str("path", refs[i].path);
            json_num("p50_us", refs[i].r->p50_us);
            json_num("p99_us", refs[i].r->p99_us);
            json_str("latency_of", i == 0 ? "batch of 8" : "operation");
            json_obj_end();
        }
        json_obj_begin(NULL);
        json_str("kind", "targets");
        json_str("case", cd->name);
        json_str("op", op_name);
        json_num("k1_p50_vs_single_p50", k1_ratio);
        json_bool("k1_ok", k1_ok);
        json_num("single_p50_vs_openssl_p50", os != NULL ? single->p50_us / os->p50_us : NAN);
        json_num("min_k2plus_vs_openssl", min_vs_ossl);
        json_bool("k2plus_ok", ossl_ok);
        json_num("min_k8plus_vs_raw_mb8", min_vs_raw);
        json_bool("k8plus_ok", raw_ok);
        if (thr) {
            json_num("min_thread_scaling", min_scaling);
            json_bool("thread_scaling_ok", scaling_ok);
        }
        json_obj_end();
    }
}

static void conc_section(void)
{
    for (size_t ci = 0; ci < NUM_CASES; ci++) {
        for (unsigned op = 0; op < fams[cases[ci].fam].num_ops; op++) {
            if (fams[cases[ci].fam].case_new != NULL && (g_conc_sel[ci] & (1u << op))) {
                conc_table(&cases[ci], op);
            }
        }
    }
    scaling_print("operations/s");
}

/* ------------------------------------------------------------------------ */
/* Command line                                                              */
/* ------------------------------------------------------------------------ */

static void list_cases(FILE *f)
{
    fprintf(f, "cases (* = in the default suite):\n");
    for (size_t i = 0; i < NUM_CASES; i++) {
        const case_def *cd = &cases[i];
        const fam_def *fd = &fams[cd->fam];
        fprintf(f, "  %-18s", cd->name);
        for (unsigned op = 0; op < fd->num_ops; op++) {
            fprintf(f, "%s%s", op == 0 ? " " : ", ", fd->ops[op]);
        }
        fprintf(f, "%s\n", cd->in_default ? "  *" : "");
    }
    fprintf(f, "groups: all, default, rsa, gcm, aes128gcm, aes192gcm, aes256gcm, ec, x25519, mlkem,\n"
               "hybrid (mlkem768, x25519mlkem768: their OpenSSL peer needs 3.5)\n"
               "one operation: NAME/OP, e.g. rsa2048/private, aes128gcm-1024/decrypt, "
               "p256/sign, x25519/keygen\n");
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mbc_bench [options] [case[/op]...]\n"
            "\n"
            "mbcrypto next to OpenSSL (and intel-ipsec-mb for AES-GCM). Without a case\n"
            "and without --concurrency it runs the default suite: RSA-2048/3072/4096\n"
            "private and public, AES-GCM at a few sizes, P-256 and P-384 sign, verify,\n"
            "ECDH and keygen, X25519 derive and keygen, and RSA-2048 private and\n"
            "X25519 derive through the lane manager at K = 1, 2, 8, 64 (about two\n"
            "minutes).\n"
            "\n"
            "  --seconds S        time per measurement (default 0.4)\n"
            "  --reps N           measurements per value (default 3); the median is\n"
            "                     reported, with the spread (max-min)/median of the\n"
            "                     row's worst value\n"
            "  --best             report the best rep (highest rate, lowest latency)\n"
            "                     instead of the median\n"
            "  --impl LIST        mbcrypto implementations, comma-separated, one pass\n"
            "                     each: auto (CPU dispatch, the default), c (every\n"
            "                     portable path), ifma (RSA), vaes512, aesni (AES-GCM),\n"
            "                     avx512, avx2 (ML-KEM).\n"
            "                     Features are only removed, as MBCRYPTO_CPU_MASK does;\n"
            "                     each pass names the implementations that really ran.\n"
            "                     Exit 2 if one is not available.\n"
            "  --threads N        N worker threads, each pinned to its own CPU (the\n"
            "                     CPUs the process may use, in order: taskset picks\n"
            "                     them), each with its own contexts and manager; tables\n"
            "                     show totals and a scaling table compares them with\n"
            "                     one thread alone (default 1: one thread, pinned to\n"
            "                     the first allowed CPU)\n"
            "  --keys N           RSA and EC keys per size, 1..8 (default 1, the common TLS\n"
            "                     server); request i uses key i mod N, so 8 keys give\n"
            "                     every lane of a batch its own key. OpenSSL generates\n"
            "                     them at start.\n"
            "  --compare LIST     peers: openssl, ipsec-mb (AES-GCM only), crypto_mb\n"
            "                     (RSA, EC, X25519 throughput tables: Intel's 8-lane\n"
            "                     _ssl_mb8 calls, when built in: meson -Dcrypto_mb=PREFIX;\n"
            "                     its EC keygen leaves the point in Jacobian X:Y:Z,\n"
            "                     marked *), all, none (default: openssl and\n"
            "                     ipsec-mb when built in). Results are always\n"
            "                     checked against OpenSSL, whatever the peers.\n"
            "  --concurrency [K,...]\n"
            "                     instead of throughput tables: for each selected RSA\n"
            "                     EC or X25519 case and operation (default\n"
            "                     rsa2048/private) keep K\n"
            "                     requests in flight through one manager per thread\n"
            "                     (closed loop: submit until K are in flight, collect\n"
            "                     completions and resubmit them at once, flush when\n"
            "                     all K wait) and report ops/s and p50/p99 latency\n"
            "                     (submit to completion) per K, next to OpenSSL serving\n"
            "                     the same requests one at a time, the raw 8-lane\n"
            "                     kernel and the single-request call, with the targets\n"
            "                     checked (default K list 1,2,4,8,16,64; at most %d\n"
            "                     values, K <= %d)\n"
            "  --cpu-time         rates per second of the threads' CPU time, not wall\n"
            "                     time: steadier on a shared machine (latencies stay\n"
            "                     wall-clock). Every run measures the share of CPU time\n"
            "                     its threads got; below 90%% a note says so.\n"
            "  --json             one JSON document on stdout instead of the tables\n"
            "  --quiet            no progress on stderr\n"
            "  --list             list the cases and exit\n"
            "  --help             this text\n"
            "\n"
            "RSA: operations/s of 8-lane calls (mbc_rsa_private_crt_mb8, _public_mb8;\n"
            "all lanes full, fault check included) and of OpenSSL's raw EVP_PKEY_decrypt\n"
            "/ encrypt, one per call. Private requests are PKCS#1 v1.5 SHA-256 signature\n"
            "encodings, public requests the signatures.\n"
            "EC (p256, p384): operations/s of 8-lane calls (mbc_ecdsa_sign_mb8 with\n"
            "random nonces, mbc_ecdsa_verify_mb8, mbc_ecdh_mb8, mbc_ec_keygen_mb8) and\n"
            "of OpenSSL's EVP_PKEY_sign / verify of a digest, EVP_PKEY_derive and\n"
            "EVP_PKEY_keygen. Signatures and key pairs (no known answer) are checked\n"
            "right after each timed window, outside its time: at most 1024 of a\n"
            "window, evenly spread over it.\n"
            "X25519: derives (a shared secret from a private scalar and a peer's public\n"
            "key, mbc_x25519_mb8) and key pairs (mbc_x25519_keygen_mb8) per second,\n"
            "next to OpenSSL's EVP_PKEY_derive and EVP_PKEY_keygen.\n"
            "AES-GCM: MB/s of one-shot seal (encrypt) and open with tag check (decrypt),\n"
            "12-byte IV, no AAD, 16-byte tag, by message size.\n"
            "Every result is checked against OpenSSL's; a case that fails is aborted and\n"
            "the exit status is 1 (2 for a command-line error). Numbers are steadiest\n"
            "pinned: taskset -c 1 mbc_bench ...\n"
            "\n",
            BENCH_MAX_K, BENCH_K_LIMIT);
    list_cases(f);
}

/* parse_uint: a whole number in [lo, hi] or a usage error. */
static unsigned parse_uint(const char *opt, const char *s, unsigned lo, unsigned hi)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (s[0] == '\0' || s[0] == '-' || *end != '\0' || v < lo || v > hi) {
        usage_error("%s needs a whole number from %u to %u, not '%s'", opt, lo, hi, s);
    }
    return (unsigned)v;
}

static int cmp_unsigned(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

/* is_k_list: s looks like "1,2,8". */
static int is_k_list(const char *s)
{
    if (s == NULL || !isdigit((unsigned char)s[0])) {
        return 0;
    }
    for (; *s != '\0'; s++) {
        if (!isdigit((unsigned char)*s) && *s != ',') {
            return 0;
        }
    }
    return 1;
}

/* set_k: the K list, sorted, without repeats. */
static void set_k(const unsigned *k, size_t n)
{
    unsigned v[BENCH_MAX_K];
    memcpy(v, k, n * sizeof(*k));
    qsort(v, n, sizeof(*v), cmp_unsigned);
    g_opts.num_k = 0;
    for (size_t i = 0; i < n; i++) {
        if (g_opts.num_k == 0 || v[i] != g_opts.k[g_opts.num_k - 1]) {
            g_opts.k[g_opts.num_k++] = v[i];
        }
    }
}

static void parse_k_list(const char *s)
{
    unsigned v[BENCH_MAX_K];
    size_t n = 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (n == BENCH_MAX_K) {
            usage_error("--concurrency takes at most %d values", BENCH_MAX_K);
        }
        v[n++] = parse_uint("--concurrency", tok, 1, BENCH_K_LIMIT);
    }
    if (n == 0) {
        usage_error("--concurrency needs K values like 1,2,8, not '%s'", s);
    }
    set_k(v, n);
}

static void parse_impls(const char *s)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    g_num_passes = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < NUM_IMPL_CHOICES; i++) {
            if (strcmp(tok, impl_choices[i].name) == 0) {
                break;
            }
        }
        if (i == NUM_IMPL_CHOICES) {
            usage_error("--impl: unknown implementation '%s' (auto, c, ifma, vaes512, aesni)", tok);
        }
        if (g_num_passes == MAX_PASSES) {
            usage_error("--impl: at most %d implementations", MAX_PASSES);
        }
        g_passes[g_num_passes++] = &impl_choices[i];
    }
    if (g_num_passes == 0) {
        usage_error("--impl needs a name");
    }
}

static void parse_peers(const char *s)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    g_opts.peers = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "openssl") == 0) {
            g_opts.peers |= PEER_OPENSSL;
        } else if (strcmp(tok, "ipsec-mb") == 0 || strcmp(tok, "ipsec") == 0) {
            if (gcm_ipsec_mb() == NULL) {
                usage_error("--compare ipsec-mb: intel-ipsec-mb was not found when mbc_bench "
                            "was built");
            }
            g_opts.peers |= PEER_IPSEC_MB;
        } else if (strcmp(tok, "crypto_mb") == 0 || strcmp(tok, "crypto-mb") == 0) {
            if (cmb_unusable() != NULL) {
                fprintf(stderr,
                        "mbc_bench: note: --compare crypto_mb: %s; its column is left out\n",
                        cmb_unusable());
            } else {
                g_opts.peers |= PEER_CRYPTO_MB;
            }
        } else if (strcmp(tok, "all") == 0) {
            g_opts.peers |= PEER_OPENSSL | (gcm_ipsec_mb() != NULL ? PEER_IPSEC_MB : 0) |
                            (cmb_unusable() == NULL ? PEER_CRYPTO_MB : 0);
        } else if (strcmp(tok, "none") != 0) {
            usage_error("--compare: unknown peer '%s' (openssl, ipsec-mb, crypto_mb, all, none)",
                        tok);
        }
    }
}

/* select_cases: adds the cases (and ops) named by arg to sel. */
static void select_cases(unsigned *sel, const char *arg)
{
    char name[64];
    snprintf(name, sizeof(name), "%s", arg);
    unsigned ops = ~0u;
    char *slash = strchr(name, '/');
    if (slash != NULL) {
        *slash = '\0';
        ops = 0;
    }
    int found = 0;
    for (size_t i = 0; i < NUM_CASES; i++) {
        const case_def *cd = &cases[i];
        int match = strcmp(name, cd->name) == 0 || strcmp(name, "all") == 0 ||
                    (strcmp(name, "default") == 0 && cd->in_default) ||
                    strcmp(name, fams[cd->fam].group) == 0 ||
                    (cd->fam == FAM_GCM && strncmp(name, cd->name, strlen(name)) == 0 &&
                     strlen(name) == 9 && strncmp(name, "aes", 3) == 0);
        if (!match) {
            continue;
        }
        const fam_def *fd = &fams[cd->fam];
        unsigned o = ops & fam_all(cd->fam);
        if (slash != NULL) {
            for (unsigned op = 0; op < fd->num_ops; op++) {
                if (strcmp(slash + 1, fd->ops[op]) == 0) {
                    o = 1u << op;
                }
            }
            if (o == 0) {
                char list[96] = "";
                for (unsigned op = 0; op < fd->num_ops; op++) {
                    const char *sep = op == 0 ? "" : op + 1 == fd->num_ops ? " and " : ", ";
                    strncat(list, sep, sizeof(list) - strlen(list) - 1);
                    strncat(list, fd->ops[op], sizeof(list) - strlen(list) - 1);
                }
                usage_error("'%s': %s has the operations %s", arg, cd->name, list);
            }
        }
        sel[i] |= o;
        found = 1;
    }
    if (!found) {
        fprintf(stderr, "mbc_bench: unknown case '%s'\n", arg);
        list_cases(stderr);
        exit(2);
    }
}

static void parse_args(int argc, char **argv)
{
    unsigned sel[NUM_CASES] = {0};
    int any_case = 0, only_cases = 0;
    g_opts.peers = PEER_OPENSSL | (gcm_ipsec_mb() != NULL ? PEER_IPSEC_MB : 0);
    parse_impls("auto");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_cases || a[0] != '-') {
            select_cases(sel, a);
            any_case = 1;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_cases = 1;
            continue;
        }
        char opt[64];
        const char *val = NULL;
        snprintf(opt, sizeof(opt), "%s", a);
        char *eq = strchr(opt, '=');
        if (eq != NULL) {
            *eq = '\0';
            val = a + (eq - opt) + 1;
        }
        static const char *const with_value[] = {"--seconds", "--reps", "--impl",
                                                 "--threads", "--keys", "--compare"};
        for (size_t j = 0; j < sizeof(with_value) / sizeof(with_value[0]); j++) {
            if (strcmp(opt, with_value[j]) == 0 && val == NULL) {
                if (i + 1 >= argc) {
                    usage_error("%s needs a value", opt);
                }
                val = argv[++i];
            }
        }
        if (strcmp(opt, "--seconds") == 0) {
            char *end;
            g_opts.seconds = strtod(val, &end);
            if (*end != '\0' || !(g_opts.seconds >= 0.01 && g_opts.seconds <= 3600)) {
                usage_error("--seconds needs a number from 0.01 to 3600, not '%s'", val);
            }
        } else if (strcmp(opt, "--reps") == 0) {
            g_opts.reps = parse_uint(opt, val, 1, 1000);
        } else if (strcmp(opt, "--impl") == 0) {
            parse_impls(val);
        } else if (strcmp(opt, "--threads") == 0) {
            g_opts.threads = parse_uint(opt, val, 1, BENCH_MAX_THREADS);
        } else if (strcmp(opt, "--keys") == 0) {
            g_opts.keys = parse_uint(opt, val, 1, BENCH_MAX_KEYS);
        } else if (strcmp(opt, "--compare") == 0) {
            parse_peers(val);
        } else if (strcmp(opt, "--concurrency") == 0) {
            if (val == NULL && i + 1 < argc && is_k_list(argv[i + 1])) {
                val = argv[++i];
            }
            if (val != NULL) {
                parse_k_list(val);
            } else {
                set_k(default_k, sizeof(default_k) / sizeof(default_k[0]));
            }
            g_concurrency = 1;
        } else if (strcmp(opt, "--best") == 0 && val == NULL) {
            g_opts.best = 1;
        } else if (strcmp(opt, "--json") == 0 && val == NULL) {
            g_opts.json = 1;
        } else if (strcmp(opt, "--cpu-time") == 0 && val == NULL) {
            g_opts.cpu_time = 1;
        } else if (strcmp(opt, "--quiet") == 0 && val == NULL) {
            g_opts.quiet = 1;
        } else if (strcmp(opt, "--list") == 0 && val == NULL) {
            list_cases(stdout);
            exit(0);
        } else if ((strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) && val == NULL) {
            usage(stdout);
            exit(0);
        } else {
            usage_error("unknown option '%s'", a);
        }
    }
    const size_t rsa2048 = 0;
    if (g_concurrency) {
        int any_pk = 0;
        for (size_t i = 0; i < NUM_CASES; i++) {
            if (fams[cases[i].fam].case_new != NULL) {
                g_conc_sel[i] = sel[i];
                any_pk |= sel[i] != 0;
            } else if (sel[i] != 0) {
                fprintf(stderr,
                        "mbc_bench: --concurrency: %s has no manager class yet; "
                        "skipped\n",
                        cases[i].name);
            }
        }
        if (!any_case) {
            g_conc_sel[rsa2048] = 1u << RSA_OP_PRIVATE;
        } else if (!any_pk) {
            usage_error("--concurrency needs an RSA, EC or X25519 case");
        }
    } else if (!any_case) {
        g_default_suite = 1;
        for (size_t i = 0; i < NUM_CASES; i++) {
            g_sel[i] = cases[i].in_default ? fam_all(cases[i].fam) : 0;
        }
        g_conc_sel[rsa2048] = 1u << RSA_OP_PRIVATE;
        for (size_t i = 0; i < NUM_CASES; i++) {
            if (cases[i].fam == FAM_X25519) {
                g_conc_sel[i] = 1u << X25519_OP_DERIVE;
            }
        }
        set_k(default_suite_k, sizeof(default_suite_k) / sizeof(default_suite_k[0]));
    } else {
        memcpy(g_sel, sel, sizeof(sel));
    }
}

/* ------------------------------------------------------------------------ */
/* Main                                                                      */
/* ------------------------------------------------------------------------ */

/* apply_impl: selects ic; 0, or -1 when the dispatch cannot give it. */
static int apply_impl(const impl_choice *ic)
{
    mbc_cpu_restrict(~0ull);
    if (ic->remove != 0) {
        mbc_cpu_restrict(~ic->remove);
    }
    if (ic->alg == -1) {
        return strcmp(mbc_impl_name(MBC_ALG_RSA), ic->name) == 0 &&
                       strcmp(mbc_impl_name(MBC_ALG_GCM), ic->name) == 0 &&
                       strcmp(mbc_impl_name(MBC_ALG_EC), ic->name) == 0 &&
                       strcmp(mbc_impl_name(MBC_ALG_X25519), ic->name) == 0 &&
                       strcmp(mbc_impl_name(MBC_ALG_MLKEM), ic->name) == 0
                   ? 0
                   : -1;
    }
    if (ic->alg >= 0) {
        return strcmp(mbc_impl_name((mbc_alg)ic->alg), ic->name) == 0 ? 0 : -1;
    }
    return 0;
}

/* count_items: what the run will measure (for the progress estimate). */
static size_t count_items(void)
{
    size_t n = 0;
    const size_t ossl = peer(PEER_OPENSSL) ? 1 : 0, imb = peer(PEER_IPSEC_MB) ? 1 : 0,
                 cmb = peer(PEER_CRYPTO_MB) ? 1 : 0;
    for (size_t i = 0; i < NUM_CASES; i++) {
        for (unsigned op = 0; op < fams[cases[i].fam].num_ops; op++) {
            if (g_sel[i] & (1u << op)) {
                n += 1 + ossl + (cases[i].fam == FAM_GCM ? imb : cmb);
            }
            if (g_conc_sel[i] & (1u << op)) {
                n += g_opts.num_k + 2 + ossl;
            }
        }
    }
    return n * g_num_passes;
}

static void print_header(void)
{
    const char *mask = getenv("MBCRYPTO_CPU_MASK");
    const char *imb = gcm_ipsec_mb();
    char cpus[256] = "";
    size_t at = 0;
    unsigned used = g_opts.threads < bench_num_cpus() ? g_opts.threads : bench_num_cpus();
    for (unsigned t = 0; t < used && at < sizeof(cpus) - 8; t++) {
        at += (size_t)snprintf(cpus + at, sizeof(cpus) - at, "%s%d", t ? "," : "", bench_cpu(t));
    }
    bench_cpu_id cpu;
    bench_cpu_identify(&cpu);
    if (g_opts.json) {
        json_obj_begin(NULL);
        json_str("tool", "mbc_bench");
        json_str("mbcrypto", mbc_version_string());
        json_str("openssl", OpenSSL_version(OPENSSL_VERSION));
        json_str("ipsec_mb", imb);
        json_str("crypto_mb", cmb_version());
        char buf[32];
        snprintf(buf, sizeof(buf), "0x%" PRIx64, mbc_cpu_features());
        json_str("cpu_features", buf);
        json_obj_begin("cpu");
        json_str("vendor", cpu.vendor);
        json_int("family", cpu.family);
        json_int("model", cpu.model);
        json_int("stepping", cpu.stepping);
        json_str("brand", cpu.brand);
        json_obj_end();
        json_str("cpu_mask_env", mask);
        json_obj_begin("settings");
        json_num("seconds", g_opts.seconds);
        json_int("reps", g_opts.reps);
        json_str("statistic", g_opts.best ? "best" : "median");
        json_str("rate_clock", g_opts.cpu_time ? "thread-cpu" : "wall");
        json_int("threads", g_opts.threads);
        json_arr_begin("cpus");
        for (unsigned t = 0; t < g_opts.threads; t++) {
            json_int(NULL, bench_cpu(t));
        }
        json_arr_end();
        json_int("rsa_keys", g_opts.keys);
        json_arr_begin("compare");
        if (peer(PEER_OPENSSL)) {
            json_str(NULL, "openssl");
        }
        if (peer(PEER_IPSEC_MB)) {
            json_str(NULL, "ipsec-mb");
        }
        if (peer(PEER_CRYPTO_MB)) {
            json_str(NULL, "crypto_mb");
        }
        json_arr_end();
        json_arr_begin("concurrency");
        for (size_t j = 0; j < g_opts.num_k; j++) {
            json_int(NULL, g_opts.k[j]);
        }
        json_arr_end();
        json_bool("default_suite", g_default_suite);
        json_obj_end();
        json_arr_begin("passes");
        return;
    }
    printf("mbc_bench: mbcrypto %s, CPU features 0x%" PRIx64 "%s%s%s\n", mbc_version_string(),
           mbc_cpu_features(), mask != NULL ? " (MBCRYPTO_CPU_MASK=" : "", mask != NULL ? mask : "",
           mask != NULL ? ")" : "");
    printf("CPU: %s, %s family %u model %u stepping %u\n", cpu.brand[0] ? cpu.brand : "?",
           cpu.vendor, cpu.family, cpu.model, cpu.stepping);
    printf("peers: %s (libcrypto, one operation per call)%s%s%s\n",
           OpenSSL_version(OPENSSL_VERSION), peer(PEER_IPSEC_MB) ? "; " : "",
           peer(PEER_IPSEC_MB) ? imb : "", peer(PEER_IPSEC_MB) ? " for AES-GCM" : "");
    if (peer(PEER_CRYPTO_MB)) {
        printf("       %s (8-lane _ssl_mb8 calls, RSA / EC / X25519 throughput)\n", cmb_version());
    }
    if (!peer(PEER_OPENSSL)) {
        printf("       (OpenSSL not compared, still the reference every result is checked "
               "against)\n");
    }
    if (g_opts.keys == 1) {
        printf("RSA keys: 1 per size, generated by OpenSSL at start (e = 65537); every lane and "
               "request uses it (--keys 8: one per lane)\n");
    } else {
        printf("RSA keys: %u per size, generated by OpenSSL at start (e = 65537); request i uses "
               "key i mod %u%s\n",
               g_opts.keys, g_opts.keys, g_opts.keys == 8 ? ", so each lane has its own" : "");
    }
    printf("timing: %s of %u rep%s x %.2f s per value, implementations interleaved; "
           "spread = (max-min)/median; rates per second of %s\n",
           g_opts.best ? "best" : "median", g_opts.reps, g_opts.reps > 1 ? "s" : "", g_opts.seconds,
           g_opts.cpu_time ? "thread CPU time (--cpu-time)" : "wall time");
    printf("threads: %u, pinned to CPU%s %s%s\n", g_opts.threads, used > 1 ? "s" : "", cpus,
           g_opts.threads > bench_num_cpus() ? " (more threads than CPUs: they share)" : "");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    bench_cpus_init();
    parse_args(argc, argv);
    for (size_t p = 0; p < g_num_passes; p++) {
        if (apply_impl(g_passes[p]) != 0) {
            fprintf(stderr,
                    "mbc_bench: --impl %s: not available here (CPU, OS, build or "
                    "MBCRYPTO_CPU_MASK); dispatch picks RSA '%s', AES-GCM '%s'\n",
                    g_passes[p]->name, mbc_impl_name(MBC_ALG_RSA), mbc_impl_name(MBC_ALG_GCM));
            return 2;
        }
    }
    if (g_opts.threads > bench_num_cpus()) {
        fprintf(stderr, "mbc_bench: warning: %u threads on %u CPUs: threads share CPUs\n",
                g_opts.threads, bench_num_cpus());
    }
    g_items_total = count_items();
    g_started = now_s();
    if (!g_opts.quiet) {
        fprintf(stderr, "mbc_bench: %zu values to measure, about %.0f s\n", g_items_total,
                bench_estimate(g_items_total, &g_opts));
    }
    print_header();
    for (size_t p = 0; p < g_num_passes; p++) {
        apply_impl(g_passes[p]);
        if (g_opts.json) {
            json_obj_begin(NULL);
            json_str("impl", g_passes[p]->name);
            json_str("rsa_impl", mbc_impl_name(MBC_ALG_RSA));
            json_str("gcm_impl", mbc_impl_name(MBC_ALG_GCM));
            json_str("ec_impl", mbc_impl_name(MBC_ALG_EC));
            json_str("x25519_impl", mbc_impl_name(MBC_ALG_X25519));
            json_arr_begin("results");
        } else {
            printf("\n== --impl %s: RSA %s, AES-GCM %s, EC %s, X25519 %s\n", g_passes[p]->name,
                   mbc_impl_name(MBC_ALG_RSA), mbc_impl_name(MBC_ALG_GCM),
                   mbc_impl_name(MBC_ALG_EC), mbc_impl_name(MBC_ALG_X25519));
        }
        pk_section(FAM_RSA);
        gcm_section();
        pk_section(FAM_EC);
        pk_section(FAM_X25519);
        pk_section(FAM_MLKEM);
        pk_section(FAM_HYBRID);
        conc_section();
        if (g_opts.json) {
            json_arr_end();
            json_obj_end();
        }
    }
    double took = now_s() - g_started;
    if (g_min_share < 0.9 && !g_opts.json) {
        printf("\nnote: the measuring threads got as little as %.0f%% of their CPU's time "
               "(other processes ran):\n      %s; latencies include the waits.\n",
               100 * g_min_share,
               g_opts.cpu_time ? "rates are per CPU-second (--cpu-time)"
                               : "wall-clock rates are low and noisy; use a quiet machine or "
                                 "--cpu-time");
    }
    if (g_opts.json) {
        json_arr_end();
        json_int("failures", g_failures);
        json_num("seconds_total", took);
        json_num("min_cpu_share", g_min_share);
        json_bool("ok", g_failures == 0);
        json_obj_end();
        json_print(stdout);
    } else {
        printf("\n%s in %.0f s\n",
               g_failures == 0 ? "all results verified against OpenSSL" : "FAILED", took);
    }
    if (g_failures != 0) {
        fprintf(stderr, "mbc_bench: %u case%s failed verification or setup\n", g_failures,
                g_failures > 1 ? "s" : "");
    }
    rsa_material_free_all();
    ec_material_free_all();
    return g_failures != 0 ? 1 : 0;
}
