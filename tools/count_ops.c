/*
 * count_ops.c - counts the vector operations of the curve kernels: the EC
 * and X25519 kernel sources built once more on the portable backend with
 * MBC_VEC_COUNT (src/mb52/vec_c.h, symbols _cnt), where every multiply-add
 * and every other vector operation (add, subtract, logic, shift, compare,
 * blend; not loads, stores or constants) adds 1 to a counter, as one zmm
 * (or ymm) instruction of the IFMA build would. The IFMA builds run the same
 * source, so these are their instruction counts up to what the compiler
 * adds or fuses.
 *
 *   build/tools/count_ops [GHz]
 *
 * prints, per kernel pass (8 lanes on zmm; the _ifma4 build runs the same
 * operations on 4 lanes of ymm): multiply-adds, other operations, and the
 * rates the multiply-adds alone allow at GHz (default 3.68): a full zmm
 * batch at 1 multiply-add per cycle (Zen 4) and at 2 (Sapphire Rapids,
 * Zen 5), and one request on ymm at 2 per cycle. Bounds, not measurements.
 * It also runs every constant-time kernel on two different inputs and fails
 * (exit 1) if the counts differ.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ec/ec_internal.h"
#include "x25519/x25519_kern.h"

unsigned long mbc_vec_count_madd, mbc_vec_count_alu;

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

struct count {
    unsigned long madd, alu;
};

static struct count counted(void (*fn)(void *), void *arg)
{
    mbc_vec_count_madd = 0;
    mbc_vec_count_alu = 0;
    fn(arg);
    return (struct count){mbc_vec_count_madd, mbc_vec_count_alu};
}

static double ghz = 3.68;
static int bad;

/* row: one line of the table; lone: the kernel serves one request (spread),
 * otherwise 8 per zmm pass and 1..4 per ymm pass. */
static void row(const char *name, struct count c, int lone)
{
    const double f = ghz * 1e9;
    if (lone) {
        printf("%-22s %10lu %10lu %12s %12s %12.0f\n", name, c.madd, c.alu, "-", "-", f / c.madd);
    } else {
        printf("%-22s %10lu %10lu %12.0f %12.0f %12.0f\n", name, c.madd, c.alu, 8 * f / c.madd,
               16 * f / c.madd, 2 * f / c.madd);
    }
}

/* same: a constant-time kernel counted the same on other inputs. */
static void same(const char *name, struct count a, struct count b)
{
    if (a.madd != b.madd || a.alu != b.alu) {
        printf("FAIL %s: %lu/%lu operations on one input, %lu/%lu on another\n", name, a.madd,
               a.alu, b.madd, b.alu);
        bad = 1;
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
        printf("FAIL verify: lanes 0x%02x of 0xff\n", a.ok_lanes);
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
    char label[64];
    cur = c;
    static const enum ec_fe_op ops[2] = {EC_FE_MUL, EC_FE_SQR};
    static const char *const opn[2] = {"mul mod p", "sqr mod p"};
    for (unsigned i = 0; i < 2; i++) {
        snprintf(label, sizeof(label), "%s %s", name, opn[i]);
        row(label, counted(run_fe, (void *)&ops[i]), 0);
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
                                      "ecdh",   "keygen lone", "sign lone"};
    for (unsigned i = 0; i < 6; i++) {
        snprintf(label, sizeof(label), "%s %s", name, kn[i]);
        row(label, c1[i], i >= 4);
        if (i != 2) { /* verify handles public data only */
            same(label, c1[i], c2[i]);
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
    row("X25519 mul", counted(run_xfe, (void *)&ops[0]), 0);
    row("X25519 sqr", counted(run_xfe, (void *)&ops[1]), 0);
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
    row("X25519 derive", c1[0], 0);
    row("X25519 keygen", c1[1], 0);
    same("X25519 derive", c1[0], c2[0]);
    same("X25519 keygen", c1[1], c2[1]);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        ghz = atof(argv[1]);
        if (!(ghz > 0)) {
            fprintf(stderr, "usage: %s [GHz]\n", argv[0]);
            return 2;
        }
    }
    printf("vector operations per kernel pass (tools/count_ops.c); rates from the multiply-adds\n"
           "alone at %.2f GHz: bounds, not measurements\n\n",
           ghz);
    printf("%-22s %10s %10s %12s %12s %12s\n", "kernel pass", "madd", "other", "zmm8@1/cyc",
           "zmm8@2/cyc", "ymm1@2/cyc");
    count_ec(&mbc_ec_p256, "P-256");
    count_ec(&mbc_ec_p384, "P-384");
    count_x25519();
    printf("\nzmm8: requests/s of full 8-lane batches; ymm1: one request alone on the _ifma4\n"
           "build (lone rows: one request on the zmm spread kernel at 1 per cycle)\n");
    return bad;
}
