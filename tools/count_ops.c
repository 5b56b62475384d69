/*
 * count_ops.c - the cost model of the 8-lane kernels: every kernel source
 * built once more on the portable backend with MBC_VEC_COUNT (src/mb52/
 * vec_c.h, symbols _cnt), where every multiply-add and every other vector
 * operation (add, subtract, logic, shift, compare, blend; not loads, stores,
 * constants or mask logic) adds 1 to a counter, as one zmm instruction of the
 * IFMA build would, and every value carries its dependency depth (a
 * multiply-add ready 4 cycles after its inputs, any other operation 1, a
 * load when its row was stored: the shadow below). The IFMA builds run the
 * same source, so these are their instruction counts and dependency chains
 * up to what the compiler adds or fuses; they are exact and the same on
 * every machine, whatever its CPU.
 *
 *   build/count_ops [--ghz G] [--window N] [--budget FILE [--tap] [--self-test]]
 *                   [--write-budget FILE]
 *
 * For each kernel pass (RSA private with CRT and public, P-256 / P-384
 * keygen, sign, verify, ECDH, X25519 derive and keygen, 8 lanes on zmm; the
 * lone rows: one request on the zmm spread kernel) it prints the
 * multiply-adds, the other operations, the critical path (the deepest
 * dependency chain), and the modelled cycles of a pass on two machines,
 * each the larger of its throughput bound and the critical path:
 *   Intel (Sapphire Rapids class): 2 zmm operations per cycle of any kind;
 *   Zen 4: 1 zmm multiply-add and 2 other zmm operations per cycle.
 * Beside that bound, the pass is also scheduled in source order on a small
 * out-of-order model of each machine (ooo: a window of N operations, 64 by
 * default, the same ports; see schedule()): what a dependency chain costs
 * when the independent work is too far away in the program to overlap it.
 * It does not explain the measured cycles better than the bound (PERF.md's
 * rows are off by 9-43% at any window from 24 to 160: what costs the rest is
 * outside the vector operations' dependencies); it shows which passes the
 * order of their source slows (X25519 derive: 22% more cycles at a window
 * of 24 than at 160).
 * A third machine, Zen 5 (2 zmm multiply-adds and 4 zmm operations in all
 * per cycle), gets the bound alone, printed against the cycles the kernels
 * measured there (report_zen5).
 * Where ../shared/PERF.md has a measured time of the pass on the Intel part
 * (section 2, cycles per pass; RSA from section 1's rates at its 3.8 GHz),
 * it prints the model's error against it, raw and after one calibration
 * factor (the geometric mean of measured / modelled over those rows: what
 * the kernels lose to everything the model leaves out).
 *
 * --budget FILE checks every pass against its line in FILE
 * (tools/count_budget.txt): the total count and both modelled cycle counts
 * must not exceed the budget's, and every pass must have a budget; exit 1
 * otherwise. --tap prints the checks as TAP (the test suite runs it).
 * --self-test lowers every budget by one and checks that each pass then
 * fails (the check can fail). --write-budget FILE writes today's figures.
 * Every run also checks that each constant-time kernel counts the same on
 * two different inputs (exit 1 if not), and that the kernels computed
 * correct results where the pass checks itself (verify, RSA).
 */
/* the counting build's types (vec_time, the counters' declarations: src/mb52/vec_c.h) */
#define MBC_VEC_COUNT 1

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ec/ec_internal.h"
#include "mb52/vec.h"
#include "mbcrypto.h"
#include "ossl_rsa.h"
#include "rsa/rsa_internal.h"
#include "rsa/rsa_kern.h"
#include "x25519/x25519_kern.h"

unsigned long mbc_vec_count_madd, mbc_vec_count_alu, mbc_vec_count_scalar;

/*
 * mbc_vec_count_scalar_inv: the kernels' one scalar step, the inversion of
 * the product of the lanes (ec_kern.c fe_inv: mbc_ec_inv1, constant-time
 * divsteps on 64-bit integers), is not vector work: it enters the model as
 * fixed cycles, added to the pass after the vector bound (the vector chain
 * waits for it). Its figures are its rdtsc minimum on the AMD Zen 4 (family
 * 25 model 17), 7.2k ticks mod a 256-bit m and 11.5k mod a 384-bit one,
 * taken as cycles on both machines (scalar 64-bit multiplies and adds run
 * at about the same rate on the two). The 256-bit one then went to 10
 * half-delta batches from 12: 6.2k -> 4.6-4.9k ticks on the Intel part
 * (family 6 model 167), so 7.2k x 0.77, about 5.5k, here. X25519's
 * (x25519_inv1.c: fe25519_inv.h, 10 batches of 59 steps, its fixed
 * p = 2^255 - 19; bits 255) took 3.9k ticks against P-256's 5.0k in one
 * run on that Intel part (rdtsc minima of 20,000 calls): 5.5k x 0.78,
 * about 4.3k.
 */
void mbc_vec_count_scalar_inv(unsigned bits)
{
    mbc_vec_count_scalar += bits == 255 ? 4300 : bits <= 256 ? 5500 : 11500;
}

void mbc_ec_base_kern_cnt(struct ec_base_args *a);
void mbc_ec_sign_kern_cnt(struct ec_sign_args *a);
void mbc_ec_verify_kern_cnt(struct ec_verify_args *a);
void mbc_ec_ecdh_kern_cnt(struct ec_ecdh_args *a);
void mbc_ec_base_spread_kern_cnt(struct ec_base_args *a);
void mbc_ec_sign_spread_kern_cnt(struct ec_sign_args *a);
void mbc_ec_fe_test_cnt(const struct ec_curve *c, const struct ec_mod *md, enum ec_fe_op op,
                        mb52_row *r, const mb52_row *a, const mb52_row *b);
void mbc_x25519_ladder_cnt(struct x25519_args *a);
void mbc_x25519_base_cnt(struct x25519_args *a);
void mbc_x25519_fe_test_cnt(enum x25519_fe_op op, mb52_row *r, const mb52_row *a,
                            const mb52_row *b);
void mbc_rsa_crt_kern_cnt(struct rsa_crt_args *a);
void mbc_rsa_pub_kern_cnt(struct rsa_pub_args *a);

/* ---------------------------------------------------------------- depth shadow */

/* The depth of every row stored in the pass, by address (open addressing;
 * a slot belongs to the current pass when its generation is). */
#define SHADOW_BITS 20
#define SHADOW_SIZE (1u << SHADOW_BITS)
static struct {
    const void *p;
    vec_time t;
    unsigned gen;
} shadow[SHADOW_SIZE];
static unsigned shadow_gen = 1, shadow_used;

static unsigned shadow_slot(const void *p)
{
    unsigned h = (unsigned)(((uintptr_t)p >> 3) * 0x9E3779B1u) >> (32 - SHADOW_BITS);
    while (shadow[h].gen == shadow_gen && shadow[h].p != p) {
        h = (h + 1) & (SHADOW_SIZE - 1);
    }
    return h;
}

vec_time mbc_vec_count_load(const void *p)
{
    const unsigned h = shadow_slot(p);
    return shadow[h].gen == shadow_gen ? shadow[h].t : VEC_T0;
}

void mbc_vec_count_store(const void *p, vec_time t)
{
    const unsigned h = shadow_slot(p);
    if (shadow[h].gen != shadow_gen) {
        if (++shadow_used > SHADOW_SIZE / 2) {
            fprintf(stderr, "count_ops: depth shadow full\n");
            exit(2);
        }
        shadow[h].gen = shadow_gen;
        shadow[h].p = p;
    }
    shadow[h].t = t;
}

/* ---------------------------------------------------------------- scheduling */

/*
 * Besides the bound (throughput or critical path), each pass is scheduled
 * on a small model of an out-of-order core, to see what the order of the
 * source costs: operations enter a window of g_window operations in program
 * order (one cannot enter before the one g_window earlier has retired, in
 * order) and each starts at the first cycle its inputs are ready and a port
 * is free: Intel 2 ports that take any operation; Zen 4 1 port for
 * multiply-adds and 2 for the others. No front end, no loads, no scalar
 * work: what it leaves out, the calibration factor holds.
 */
static unsigned g_window = 64;
static int g_sched = 1; /* off for the budget checks, which do not use it */
#define WIN_MAX 4096
#define CAL_SIZE (1u << 16) /* cycles of the port calendar (a ring) */

struct machine {
    unsigned long retire[WIN_MAX]; /* ring: retirement cycle of the last g_window ops */
    unsigned long last_retire, end;
    unsigned long cyc[CAL_SIZE];
    unsigned char used_any[CAL_SIZE], used_madd[CAL_SIZE];
    unsigned any, madd_only; /* ports: any operation; multiply-adds only (Zen 4: 0 / 1) */
    unsigned other_only;     /* ports for the other operations only (Zen 4: 2) */
};
static struct machine m_intel = {.any = 2}, m_zen4 = {.madd_only = 1, .other_only = 2};
static unsigned long op_seq, cnt_path;

static void machine_reset(struct machine *m)
{
    memset(m->retire, 0, sizeof(m->retire));
    memset(m->cyc, 0xff, sizeof(m->cyc));
    m->last_retire = m->end = 0;
}

static unsigned long schedule(struct machine *m, unsigned long ready, unsigned lat)
{
    const unsigned slot = (unsigned)(op_seq % g_window);
    unsigned long c = ready > m->retire[slot] ? ready : m->retire[slot];
    const int madd = lat != 1;
    for (;; c++) {
        const unsigned h = (unsigned)(c % CAL_SIZE);
        if (m->cyc[h] != c) {
            if (m->cyc[h] != ~0ul && m->cyc[h] + CAL_SIZE > c) {
                fprintf(stderr, "count_ops: port calendar too short\n");
                exit(2);
            }
            m->cyc[h] = c;
            m->used_any[h] = 0;
            m->used_madd[h] = 0;
        }
        const unsigned cap = m->any + (madd ? m->madd_only : m->other_only);
        unsigned char *used = m->any ? &m->used_any[h] : madd ? &m->used_madd[h] : &m->used_any[h];
        if (*used < cap) {
            (*used)++;
            break;
        }
    }
    const unsigned long done = c + lat;
    m->last_retire = done > m->last_retire ? done : m->last_retire;
    m->retire[slot] = m->last_retire;
    m->end = done > m->end ? done : m->end;
    return done;
}

vec_time mbc_vec_count_op(unsigned lat, vec_time dep)
{
    vec_time r = {dep.depth + lat, 0, 0};
    cnt_path = r.depth > cnt_path ? r.depth : cnt_path;
    if (g_sched) {
        r.intel = schedule(&m_intel, dep.intel, lat);
        r.zen4 = schedule(&m_zen4, dep.zen4, lat);
    }
    op_seq++;
    return r;
}

/* ---------------------------------------------------------------- counting */

struct count {
    unsigned long madd, alu, path, sched_intel, sched_zen4, scalar;
};

static struct count counted(void (*fn)(void *), void *arg)
{
    mbc_vec_count_madd = 0;
    mbc_vec_count_alu = 0;
    mbc_vec_count_scalar = 0;
    cnt_path = 0;
    op_seq = 0;
    if (g_sched) {
        machine_reset(&m_intel);
        machine_reset(&m_zen4);
    }
    shadow_gen++;
    shadow_used = 0;
    fn(arg);
    return (struct count){mbc_vec_count_madd, mbc_vec_count_alu, cnt_path,
                          m_intel.end,        m_zen4.end,        mbc_vec_count_scalar};
}

static double model_intel(struct count c)
{
    return fmax((double)(c.madd + c.alu) / 2, (double)c.path) + (double)c.scalar;
}

static double model_zen4(struct count c)
{
    return fmax(fmax((double)c.madd, (double)c.alu / 2), (double)c.path) + (double)c.scalar;
}

/* Zen 5 (family 26 model 2), measured with unrolled loops of independent
 * instructions: 2 zmm multiply-adds and 4 zmm operations in all per cycle
 * (a 1:1 mix of multiply-adds and adds 3.6, 1:2 4.0). The bound only; the
 * out-of-order schedule and the budgets stay on the two machines above. */
static double model_zen5(struct count c)
{
    return fmax(fmax((double)c.madd / 2, (double)(c.madd + c.alu) / 4), (double)c.path) +
           (double)c.scalar;
}

static int bad;

/* same: a constant-time kernel counted the same on other inputs. */
static void same(const char *name, struct count a, struct count b)
{
    if (a.madd != b.madd || a.alu != b.alu || a.path != b.path || a.sched_intel != b.sched_intel ||
        a.sched_zen4 != b.sched_zen4 || a.scalar != b.scalar) {
        fprintf(stderr, "FAIL %s: %lu/%lu/%lu operations on one input, %lu/%lu/%lu on another\n",
                name, a.madd, a.alu, a.path, b.madd, b.alu, b.path);
        bad = 1;
    }
}

/* ---------------------------------------------------------------- the passes */

/* pass: one row of the report. id: its name in the budget file. perf: the
 * Intel part's measured cycles per pass in ../shared/PERF.md (0: none);
 * perf_total: the count PERF.md measured it at (0: not given). zen5: the
 * cycles per pass measured on an AMD Zen 5 (family 26 model 2) at the
 * counts of 2026-12-04 (mbc_bench --cpu-time --reps 5, 8-lane rates, at
 * 3.8 GHz; 0: none). */
struct pass {
    const char *id, *label;
    double perf;
    unsigned long perf_total;
    int lone;
    struct count c;
    int have;
    double zen5;
};

#define ZEN5(rate) (8 / (rate)*3.8e9)

/* clang-format off */
static struct pass passes[] = {
    {"rsa2048.private", "RSA-2048 private", 8 / 9965.0 * 3.8e9, 0, 0, {0}, 0, ZEN5(13543.8)},
    {"rsa2048.public", "RSA-2048 public", 8 / 337221.0 * 3.8e9, 0, 0, {0}, 0, ZEN5(450446.0)},
    {"rsa3072.private", "RSA-3072 private", 8 / 2950.0 * 3.8e9, 0, 0, {0}, 0, ZEN5(4098.5)},
    {"rsa3072.public", "RSA-3072 public", 8 / 138743.0 * 3.8e9, 0, 0, {0}, 0, ZEN5(190179.0)},
    {"rsa4096.private", "RSA-4096 private", 8 / 1297.0 * 3.8e9, 0, 0, {0}, 0, ZEN5(1749.8)},
    {"rsa4096.public", "RSA-4096 public", 8 / 80745.0 * 3.8e9, 0, 0, {0}, 0, ZEN5(109756.0)},
    {"p256.mul", "P-256 mul mod p", 0, 0, 0, {0}, 0, 0},
    {"p256.sqr", "P-256 sqr mod p", 0, 0, 0, {0}, 0, 0},
    {"p256.keygen", "P-256 keygen", 159099, 173349, 0, {0}, 0, ZEN5(537181.0)},
    {"p256.sign", "P-256 sign", 205329, 213074, 0, {0}, 0, ZEN5(511338.0)},
    {"p256.verify", "P-256 verify", 582556, 774597, 0, {0}, 0, ZEN5(102403.0)},
    {"p256.ecdh", "P-256 ECDH", 461931, 624314, 0, {0}, 0, ZEN5(111414.0)},
    {"p256.keygen_lone", "P-256 keygen lone", 0, 0, 1, {0}, 0, 0},
    {"p256.sign_lone", "P-256 sign lone", 28.8e-6 * 3.8e9, 99669, 1, {0}, 0, 0},
    {"p384.mul", "P-384 mul mod p", 0, 0, 0, {0}, 0, 0},
    {"p384.sqr", "P-384 sqr mod p", 0, 0, 0, {0}, 0, 0},
    {"p384.keygen", "P-384 keygen", 478463, 581965, 0, {0}, 0, ZEN5(207355.0)},
    {"p384.sign", "P-384 sign", 602205, 715898, 0, {0}, 0, ZEN5(191783.0)},
    {"p384.verify", "P-384 verify", 1883811, 2549537, 0, {0}, 0, ZEN5(31822.7)},
    {"p384.ecdh", "P-384 ECDH", 1592073, 2089280, 0, {0}, 0, ZEN5(38912.9)},
    {"p384.keygen_lone", "P-384 keygen lone", 0, 0, 1, {0}, 0, 0},
    {"p384.sign_lone", "P-384 sign lone", 0, 0, 1, {0}, 0, 0},
    {"x25519.mul", "X25519 mul", 0, 0, 0, {0}, 0, 0},
    {"x25519.sqr", "X25519 sqr", 0, 0, 0, {0}, 0, 0},
    {"x25519.derive", "X25519 derive", 197951, 285921, 0, {0}, 0, ZEN5(355942.0)},
    {"x25519.keygen", "X25519 keygen", 69856, 89116, 0, {0}, 0, ZEN5(810790.0)},
};
/* clang-format on */
#define NUM_PASSES (sizeof(passes) / sizeof(passes[0]))

static struct pass *find_pass(const char *id)
{
    for (size_t i = 0; i < NUM_PASSES; i++) {
        if (strcmp(passes[i].id, id) == 0) {
            return &passes[i];
        }
    }
    return NULL;
}

static void record(const char *id, struct count c)
{
    struct pass *p = find_pass(id);
    if (p == NULL) {
        fprintf(stderr, "count_ops: no pass %s\n", id);
        exit(2);
    }
    p->c = c;
    p->have = 1;
}

/* ---------------------------------------------------------------- RSA */

/* The glue's gathering (rsa.c), for one key in every lane. */
static EC_ALIGN mb52_row rsa_rows[8 * MB52_MAX_DIGITS + 4096 + 2048];

struct rsa_job {
    const mbc_rsa_priv_key *key;
    unsigned bits;
    int priv;
    unsigned ok;
};

static mb52_row *rsa_take(mb52_row **at, unsigned n)
{
    mb52_row *r = *at;
    *at += n;
    return r;
}

static mb52_row *rsa_bcast(mb52_row **at, const uint64_t *d, unsigned k)
{
    mb52_row *r = rsa_take(at, k);
    for (unsigned j = 0; j < k; j++) {
        for (unsigned l = 0; l < 8; l++) {
            r[j][l] = d[j];
        }
    }
    return r;
}

static struct mb52_mod rsa_mod(mb52_row **at, const struct rsa_mod_consts *c, unsigned k)
{
    struct mb52_mod m = {k, NULL, NULL, NULL, NULL};
    m.m = rsa_bcast(at, c->m, k);
    m.r1 = rsa_bcast(at, c->r1, k);
    m.to_mont = rsa_bcast(at, c->to_mont, k);
    m.m0inv = rsa_bcast(at, &c->m0inv, 1);
    return m;
}

static void run_rsa(void *arg)
{
    struct rsa_job *j = arg;
    const mbc_rsa_priv_key *k = j->key;
    const unsigned kh = k->kh, kn = 2 * kh;
    mb52_row *at = rsa_rows;
    /* inputs below n: n with its top nonzero digit halved, the low digit varied per lane */
    mb52_row *in = rsa_bcast(&at, k->pub.n.m, kn);
    unsigned top = kn - 1;
    while (top > 0 && k->pub.n.m[top] == 0) {
        top--;
    }
    for (unsigned l = 0; l < 8; l++) {
        in[top][l] >>= 1;
        in[0][l] ^= 0x5A5 * (l + 1);
    }
    mb52_row *out = rsa_take(&at, kn);
    if (j->priv) {
        struct rsa_crt_args a = {0};
        a.p = rsa_mod(&at, &k->p, kh);
        a.q = rsa_mod(&at, &k->q, kh);
        a.n = rsa_mod(&at, &k->pub.n, kn);
        a.dp = rsa_bcast(&at, k->dp, kh);
        a.dq = rsa_bcast(&at, k->dq, kh);
        a.qinv_r = rsa_bcast(&at, k->qinv_r, kh);
        a.e = rsa_bcast(&at, k->pub.e, kn);
        a.e_bits = k->pub.e_bits;
        a.half_bits = j->bits / 2;
        a.lanes = 0xFF;
        a.in = in;
        a.out = out;
        a.scratch = rsa_take(&at, rsa_crt_scratch_rows(kh));
        mbc_rsa_crt_kern_cnt(&a);
        j->ok = a.ok_lanes;
    } else {
        struct rsa_pub_args a = {0};
        a.n = rsa_mod(&at, &k->pub.n, kn);
        a.e = rsa_bcast(&at, k->pub.e, kn);
        a.e_bits = k->pub.e_bits;
        a.lanes = 0xFF;
        a.in = in;
        a.out = out;
        a.scratch = rsa_take(&at, rsa_pub_scratch_rows(kn));
        mbc_rsa_pub_kern_cnt(&a);
        j->ok = 0xFF;
    }
    if ((size_t)(at - rsa_rows) > sizeof(rsa_rows) / sizeof(rsa_rows[0])) {
        fprintf(stderr, "count_ops: RSA rows overflow\n");
        exit(2);
    }
}

static void count_rsa(unsigned bits)
{
    struct count c[2][2];
    char id[32];
    for (int keyn = 0; keyn < 2; keyn++) {
        EVP_PKEY *pk = mbt_ossl_rsa_keygen(bits, 65537);
        mbt_rsa_parts parts;
        mbc_rsa_priv_key *key = NULL;
        mbc_rsa_pub_key *pub = NULL;
        if (pk == NULL || mbt_ossl_rsa_get_parts(&parts, pk, 0) != 0 ||
            mbt_rsa_keys_new(&key, &pub, &parts) != MBC_OK) {
            fprintf(stderr, "count_ops: no RSA-%u key\n", bits);
            exit(2);
        }
        for (int priv = 1; priv >= 0; priv--) {
            struct rsa_job j = {key, bits, priv, 0};
            c[keyn][priv] = counted(run_rsa, &j);
            if (j.ok != 0xFF) {
                fprintf(stderr,
                        "FAIL RSA-%u private: the kernel's check passed lanes 0x%02x of 0xff\n",
                        bits, j.ok);
                bad = 1;
            }
        }
        mbc_rsa_priv_key_free(key);
        mbc_rsa_pub_key_free(pub);
        mbt_rsa_parts_free(&parts);
        EVP_PKEY_free(pk);
    }
    for (int priv = 1; priv >= 0; priv--) {
        snprintf(id, sizeof(id), "rsa%u.%s", bits, priv ? "private" : "public");
        record(id, c[0][priv]);
        same(id, c[0][priv], c[1][priv]);
    }
}

/* ---------------------------------------------------------------- EC */

static const struct ec_curve *cur;
static EC_ALIGN mb52_row d[EC_MAX_K], k[EC_MAX_K], z[EC_MAX_K], qx[EC_MAX_K], qy[EC_MAX_K];
static EC_ALIGN mb52_row r[EC_MAX_K], s[EC_MAX_K], out[EC_MAX_K], fa[EC_MAX_K], fb[EC_MAX_K];
static EC_ALIGN struct ec_pt vt[EC_VT_ENTRIES];

/* scalars: lane l of v gets n - 1 - 977 (l + 1) seed (below n, not 0) */
static void scalar(mb52_row *v, unsigned seed)
{
    for (unsigned l = 0; l < 8; l++) {
        uint64_t borrow = 1 + 977ull * (l + 1) * seed;
        for (unsigned j = 0; j < cur->k; j++) {
            const uint64_t nj = cur->n.m[j][0];
            v[j][l] = (nj - borrow) & MB52_MASK;
            borrow = nj < borrow;
        }
    }
}

static void run_base(void *spread)
{
    struct ec_base_args a = {cur, mbc_ec_gtab(cur), d, qx, qy, spread ? 1u : 0xFFu, 0, 0};
    (spread ? mbc_ec_base_spread_kern_cnt : mbc_ec_base_kern_cnt)(&a);
}
static void run_sign(void *spread)
{
    struct ec_sign_args a = {cur, mbc_ec_gtab(cur), k, d, z, r, s, spread ? 1u : 0xFFu, 0, 0, 0};
    (spread ? mbc_ec_sign_spread_kern_cnt : mbc_ec_sign_kern_cnt)(&a);
}
static void run_verify(void *unused)
{
    (void)unused;
    struct ec_verify_args a = {cur, mbc_ec_gtab(cur), r, s, z, qx, qy, vt, 0xFF, 0};
    mbc_ec_verify_kern_cnt(&a);
    if (a.ok_lanes != 0xFF) {
        fprintf(stderr, "FAIL verify: lanes 0x%02x of 0xff\n", a.ok_lanes);
        bad = 1;
    }
}
static void run_ecdh(void *unused)
{
    (void)unused;
    struct ec_ecdh_args a = {cur, k, qx, qy, out, vt, 0xFF, 0, 0, 0};
    mbc_ec_ecdh_kern_cnt(&a);
}
static void run_fe(void *op)
{
    mbc_ec_fe_test_cnt(cur, &cur->p, *(enum ec_fe_op *)op, out, fa, fb);
}

static void count_ec(const struct ec_curve *c, const char *name)
{
    char id[64];
    cur = c;
    static const enum ec_fe_op ops[2] = {EC_FE_MUL, EC_FE_SQR};
    static const char *const opn[2] = {"mul", "sqr"};
    for (unsigned i = 0; i < 2; i++) {
        snprintf(id, sizeof(id), "%s.%s", name, opn[i]);
        record(id, counted(run_fe, (void *)&ops[i]));
    }
    struct count c1[6], c2[6];
    for (int pass = 0; pass < 2; pass++) {
        struct count *cc = pass ? c2 : c1;
        scalar(d, 1 + pass);
        scalar(k, 7 + pass);
        scalar(z, 3 + pass);
        cc[0] = counted(run_base, NULL);
        cc[1] = counted(run_sign, NULL);
        cc[2] = counted(run_verify, NULL);
        cc[3] = counted(run_ecdh, NULL);
        cc[4] = counted(run_base, (void *)1);
        cc[5] = counted(run_sign, (void *)1);
    }
    static const char *const kn[6] = {"keygen", "sign",        "verify",
                                      "ecdh",   "keygen_lone", "sign_lone"};
    for (unsigned i = 0; i < 6; i++) {
        snprintf(id, sizeof(id), "%s.%s", name, kn[i]);
        record(id, c1[i]);
        if (i != 2) { /* verify handles public data only */
            same(id, c1[i], c2[i]);
        }
    }
}

/* ---------------------------------------------------------------- X25519 */

static _Alignas(64) mb52_row xk[5], xu[5], xr[5];

static void run_ladder(void *unused)
{
    (void)unused;
    struct x25519_args a = {xk, xu, xr, 0};
    mbc_x25519_ladder_cnt(&a);
}
static void run_xbase(void *unused)
{
    (void)unused;
    struct x25519_args a = {xk, xu, xr, 0};
    mbc_x25519_base_cnt(&a);
}
static void run_xfe(void *op)
{
    mbc_x25519_fe_test_cnt(*(enum x25519_fe_op *)op, xr, xk, xu);
}

static void count_x25519(void)
{
    static const enum x25519_fe_op ops[2] = {X25519_FE_MUL, X25519_FE_SQR};
    record("x25519.mul", counted(run_xfe, (void *)&ops[0]));
    record("x25519.sqr", counted(run_xfe, (void *)&ops[1]));
    struct count c1[2], c2[2];
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned j = 0; j < 5; j++) {
            for (unsigned l = 0; l < 8; l++) {
                xk[j][l] = (0x9e3779b97f4a7c15ull * (j + 1) * (l + 3 + pass)) & MB52_MASK;
                xu[j][l] = (0xc2b2ae3d27d4eb4full * (j + 2) * (l + 5 + pass)) & MB52_MASK;
            }
        }
        xk[4][0] &= (1ull << 47) - 1;
        (pass ? c2 : c1)[0] = counted(run_ladder, NULL);
        (pass ? c2 : c1)[1] = counted(run_xbase, NULL);
    }
    record("x25519.derive", c1[0]);
    record("x25519.keygen", c1[1]);
    same("x25519.derive", c1[0], c2[0]);
    same("x25519.keygen", c1[1], c2[1]);
}

/* ---------------------------------------------------------------- report */

static void report(double ghz)
{
    /* calibration: the geometric mean of measured / modelled (Intel) */
    double lsum = 0;
    unsigned ncal = 0;
    for (size_t i = 0; i < NUM_PASSES; i++) {
        if (passes[i].perf > 0) {
            lsum += log(passes[i].perf / model_intel(passes[i].c));
            ncal++;
        }
    }
    const double cal = ncal ? exp(lsum / ncal) : 1;
    printf(
        "vector operations and modelled cycles per kernel pass (tools/count_ops.c)\n"
        "model: max(throughput bound, critical path) + scalar (the EC inversions'\n"
        "divsteps, fixed cycles: mbc_vec_count_scalar_inv); Intel: 2 zmm ops/cycle of any kind;\n"
        "Zen 4: 1 zmm multiply-add and 2 other zmm ops/cycle; depth: multiply-add 4, other 1,\n"
        "load 0. measured: Intel cycles per pass from ../shared/PERF.md (RSA: its rates at\n"
        "3.8 GHz); err: model / measured - 1, raw and after one calibration factor %.3f\n\n",
        cal);
    printf("%-18s %9s %9s %9s %9s %7s %9s %9s %4s %9s %9s %9s %7s %7s %7s %7s\n", "kernel pass",
           "madd", "other", "total", "crit.path", "scalar", "intel", "zen4", "bind", "ooo.intel",
           "ooo.zen4", "measured", "err", "cal.err", "ooo.err", "ops/cyc");
    double worst = 0, worst_ooo = 0;
    for (size_t i = 0; i < NUM_PASSES; i++) {
        const struct pass *p = &passes[i];
        if (!p->have) {
            continue;
        }
        const double mi = model_intel(p->c), mz = model_zen4(p->c);
        const unsigned long total = p->c.madd + p->c.alu;
        const char *bind = (double)p->c.path >= mi ? "path" : "tput";
        printf("%-18s %9lu %9lu %9lu %9lu %7lu %9.0f %9.0f %4s %9lu %9lu", p->label, p->c.madd,
               p->c.alu, total, p->c.path, p->c.scalar, mi, mz, bind,
               p->c.sched_intel + p->c.scalar, p->c.sched_zen4 + p->c.scalar);
        if (p->perf > 0) {
            const double e = mi / p->perf - 1, ec = mi * cal / p->perf - 1;
            const double eo = (double)(p->c.sched_intel + p->c.scalar) / p->perf - 1;
            worst = fmax(worst, fabs(ec));
            worst_ooo = fmax(worst_ooo, fabs(eo));
            printf(" %9.0f %+6.1f%% %+6.1f%% %+6.1f%% %7.2f", p->perf, 100 * e, 100 * ec, 100 * eo,
                   (double)(p->perf_total ? p->perf_total : total) / p->perf);
            if (p->perf_total != 0 && p->perf_total != total) {
                printf("  (measured at %lu ops)", p->perf_total);
            }
        }
        printf("\n");
    }
    printf("\ncalibrated model: largest error %.1f%% over the %u measured rows. ooo: the pass\n"
           "scheduled in source order on an out-of-order model (a window of %u operations,\n"
           "the same ports; --window N), largest error %.1f%% (uncalibrated). ops/cyc: the\n"
           "vector operations per cycle the measured pass sustained (at the count it was\n"
           "measured at)\n",
           100 * worst, ncal, g_window, 100 * worst_ooo);
    printf("\nrates the model gives at %.2f GHz, operations/s (8 per pass; lone: 1), Intel / "
           "Zen 4,\nuncalibrated (upper bounds) and calibrated:\n",
           ghz);
    for (size_t i = 0; i < NUM_PASSES; i++) {
        const struct pass *p = &passes[i];
        if (!p->have || strstr(p->id, ".mul") || strstr(p->id, ".sqr")) {
            continue;
        }
        const double ops = p->lone ? 1 : 8, f = ghz * 1e9;
        printf("%-18s %12.0f %12.0f   %12.0f %12.0f\n", p->label, ops * f / model_intel(p->c),
               ops * f / model_zen4(p->c), ops * f / (cal * model_intel(p->c)),
               ops * f / (cal * model_zen4(p->c)));
    }
}

/* report_zen5: the Zen 5 bound against what the kernels measured there. */
static void report_zen5(void)
{
    printf("\nZen 5 (AMD family 26 model 2): 2 zmm multiply-adds and 4 zmm ops in all per\n"
           "cycle (measured); bound = max(madd / 2, total / 4, critical path) + scalar;\n"
           "measured: cycles per pass from mbc_bench's 8-lane rates there at 3.8 GHz\n"
           "(2026-12-04, the counts of that day); of bound: bound / measured\n\n");
    printf("%-18s %9s %9s %8s %7s\n", "kernel pass", "bound", "measured", "of bound", "ops/cyc");
    for (size_t i = 0; i < NUM_PASSES; i++) {
        const struct pass *p = &passes[i];
        if (!p->have || p->zen5 <= 0) {
            continue;
        }
        const double mz = model_zen5(p->c);
        printf("%-18s %9.0f %9.0f %7.0f%% %7.2f\n", p->label, mz, p->zen5, 100 * mz / p->zen5,
               (double)(p->c.madd + p->c.alu) / p->zen5);
    }
}

/* ---------------------------------------------------------------- budgets */

struct budget {
    char id[48];
    unsigned long madd, alu, total, path, intel, zen4;
};

static size_t read_budget(const char *file, struct budget *b, size_t cap)
{
    FILE *f = fopen(file, "r");
    if (f == NULL) {
        perror(file);
        exit(2);
    }
    char line[256];
    size_t n = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (line[0] == '#' || line[0] == '\n') {
            continue;
        }
        if (n == cap || sscanf(line, "%47s %lu %lu %lu %lu %lu %lu", b[n].id, &b[n].madd, &b[n].alu,
                               &b[n].total, &b[n].path, &b[n].intel, &b[n].zen4) != 7) {
            fprintf(stderr, "count_ops: %s: bad line: %s", file, line);
            exit(2);
        }
        n++;
    }
    fclose(f);
    return n;
}

static void write_budget(const char *file)
{
    FILE *f = fopen(file, "w");
    if (f == NULL) {
        perror(file);
        exit(2);
    }
    fprintf(f, "# Budgets of the kernel passes, checked by the test count_budget (count_ops\n"
               "# --budget): a pass fails when its total count or a modelled cycle count\n"
               "# (Intel, Zen 4) exceeds its line. Exact on every CPU (the counting build).\n"
               "# Lower a line when a kernel gets faster; regenerate with\n"
               "#   build/count_ops --write-budget tools/count_budget.txt\n"
               "# pass madd other total critical_path intel_cycles zen4_cycles\n");
    for (size_t i = 0; i < NUM_PASSES; i++) {
        const struct pass *p = &passes[i];
        if (p->have) {
            fprintf(f, "%s %lu %lu %lu %lu %.0f %.0f\n", p->id, p->c.madd, p->c.alu,
                    p->c.madd + p->c.alu, p->c.path, ceil(model_intel(p->c)),
                    ceil(model_zen4(p->c)));
        }
    }
    fclose(f);
}

/* over: what of pass p exceeds budget b ("" if nothing), in buf. */
static const char *over(const struct pass *p, const struct budget *b, char *buf, size_t len)
{
    const unsigned long total = p->c.madd + p->c.alu;
    const double mi = ceil(model_intel(p->c)), mz = ceil(model_zen4(p->c));
    buf[0] = '\0';
    size_t at = 0;
    if (total > b->total) {
        at += (size_t)snprintf(buf + at, len - at, " total %lu > %lu;", total, b->total);
    }
    if (mi > (double)b->intel) {
        at += (size_t)snprintf(buf + at, len - at, " intel %.0f > %lu;", mi, b->intel);
    }
    if (mz > (double)b->zen4) {
        snprintf(buf + at, len - at, " zen4 %.0f > %lu;", mz, b->zen4);
    }
    return buf;
}

/* check_budget: TAP lines (or FAIL lines) for every pass; returns the failures. With lower,
 * every budget is lowered by one first and each pass must fail. */
static unsigned check_budget(const char *file, int tap, int lower)
{
    static struct budget b[NUM_PASSES + 16];
    const size_t nb = read_budget(file, b, sizeof(b) / sizeof(b[0]));
    unsigned fails = 0, t = 0;
    if (tap) {
        printf("1..%zu\n", NUM_PASSES + nb + 1);
        printf("%s %u - the constant-time kernels count the same on two inputs, and the "
               "self-checking passes (verify, RSA) computed correct results\n",
               bad ? "not ok" : "ok", ++t);
    }
    for (size_t i = 0; i < NUM_PASSES; i++) {
        const struct pass *p = &passes[i];
        const struct budget *bb = NULL;
        for (size_t j = 0; j < nb; j++) {
            if (strcmp(b[j].id, p->id) == 0) {
                bb = &b[j];
            }
        }
        char why[160];
        int ok;
        if (bb == NULL) {
            ok = 0;
            snprintf(why, sizeof(why), " no budget in %s", file);
        } else if (lower) {
            /* the pass within its budget fails it with any one figure lowered by one */
            struct budget low[3] = {*bb, *bb, *bb};
            low[0].total--;
            low[1].intel--;
            low[2].zen4--;
            ok = over(p, bb, why, sizeof(why))[0] == '\0';
            for (int j = 0; j < 3; j++) {
                ok = ok && over(p, &low[j], why, sizeof(why))[0] != '\0';
            }
            snprintf(why, sizeof(why), " (fails each of its budgets lowered by one: %s)",
                     ok ? "yes" : "NO");
        } else {
            ok = over(p, bb, why, sizeof(why))[0] == '\0';
        }
        fails += !ok;
        if (tap) {
            printf("%s %u - %s: %lu ops, %.0f Intel / %.0f Zen 4 cycles%s\n", ok ? "ok" : "not ok",
                   ++t, p->id, p->c.madd + p->c.alu, ceil(model_intel(p->c)),
                   ceil(model_zen4(p->c)), ok ? (lower ? why : "") : why);
        } else if (!ok) {
            printf("FAIL budget %s:%s\n", p->id, why);
        }
    }
    for (size_t j = 0; j < nb; j++) { /* every budget names a pass */
        const int ok = find_pass(b[j].id) != NULL;
        fails += !ok;
        if (tap) {
            printf("%s %u - budget line %s names a pass\n", ok ? "ok" : "not ok", ++t, b[j].id);
        } else if (!ok) {
            printf("FAIL budget line %s: no such pass\n", b[j].id);
        }
    }
    return fails;
}

int main(int argc, char **argv)
{
    double ghz = 3.8;
    const char *budget = NULL, *write = NULL;
    int tap = 0, self_test = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ghz") == 0 && i + 1 < argc) {
            ghz = atof(argv[++i]);
        } else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) {
            budget = argv[++i];
        } else if (strcmp(argv[i], "--write-budget") == 0 && i + 1 < argc) {
            write = argv[++i];
        } else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc) {
            g_window = (unsigned)atoi(argv[++i]);
            if (g_window < 1 || g_window > WIN_MAX) {
                ghz = 0;
            }
        } else if (strcmp(argv[i], "--tap") == 0) {
            tap = 1;
        } else if (strcmp(argv[i], "--self-test") == 0) {
            self_test = 1;
        } else {
            ghz = 0;
        }
        if (!(ghz > 0) || (self_test && budget == NULL && i + 1 == argc)) {
            fprintf(stderr,
                    "usage: %s [--ghz G] [--window N] [--budget FILE [--tap] [--self-test]] "
                    "[--write-budget FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    g_sched = budget == NULL;
    for (unsigned bits = 2048; bits <= 4096; bits += 1024) {
        count_rsa(bits);
    }
    count_ec(&mbc_ec_p256, "p256");
    count_ec(&mbc_ec_p384, "p384");
    count_x25519();
    if (write != NULL) {
        write_budget(write);
    }
    if (budget != NULL) {
        const unsigned fails = check_budget(budget, tap, self_test);
        return fails != 0 || bad;
    }
    report(ghz);
    report_zen5();
    return bad;
}
