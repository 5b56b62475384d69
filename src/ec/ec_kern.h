/*
 * ec_kern.h - the interface between the EC glue (ec.c, ec_key.c: baseline
 * code) and the EC kernels (ec_kern.c, compiled once per backend: _ifma,
 * _c and the one-lane _c1). All arrays of rows are mb52 rows (mb52.h),
 * 64-byte aligned, normalised.
 *
 * Numbers cross this interface as plain integers (not in Montgomery form),
 * fully reduced: scalars below n, coordinates below p. Lanes outside an
 * args' lanes compute on whatever their rows hold (zeros) and are ignored.
 */
#ifndef MBC_SRC_EC_EC_KERN_H
#define MBC_SRC_EC_EC_KERN_H

#include "../impl.h"
#include "../lanes.h"
#include "../mb52/mb52.h"
#include "mbcrypto.h"

#define EC_MAX_K 8         /* digits of P-384; P-256 has 5 */
#define EC_MAX_LEN 48      /* bytes of a P-384 scalar or coordinate */
#define EC_WIN 5           /* bits of a signed (Booth) window of a variable-base multiplication */
#define EC_VT_ENTRIES 17   /* variable-base table: 0..16 times the point */
#define EC_GT_MAX_BLOCKS 8 /* fixed-base table: at most 8 rows of 8 entries a digit (7 bits) */

#define EC_ALIGN __attribute__((aligned(64)))
#define EC_SG_LIMBS 7 /* signed 62-bit limbs of a P-384 number in the divsteps inversion */

/*
 * ec_mod: a modulus (p or n of a curve) and its Montgomery constants for
 * R = 2^(52 k), as rows of 8 equal lanes (the multiply reads rows).
 */
struct ec_mod {
    EC_ALIGN mb52_row m[EC_MAX_K]; /* the modulus */
    mb52_row m2[EC_MAX_K];         /* 2m: the bound of every field element */
    mb52_row m0inv;                /* -m^-1 mod 2^52 */
    mb52_row one[EC_MAX_K];        /* R mod m: 1 in Montgomery form */
    mb52_row rr[EC_MAX_K];         /* R^2 mod m: into Montgomery form */
    mb52_row r3[EC_MAX_K];     /* R^3 mod m: the inverse of a plain value into Montgomery form */
    uint64_t digits[EC_MAX_K]; /* m as plain digits (one lane), for the glue */
    /* the divsteps inversion (ec_inv1.c, ec_adx_inv.h): m in signed 62-bit
     * limbs, m^-1 mod 2^62, the limbs and the batches of 62 divsteps */
    int64_t sg_m[EC_SG_LIMBS];
    uint64_t sg_minv;
    unsigned sg_limbs, sg_batches;
    unsigned p256; /* this is P-256's p (mb52_p256_lo) */
    unsigned p384; /* this is P-384's p (mb52_p384_step) */
};

/*
 * ec_curve_def: one curve y^2 = x^3 - 3x + b over GF(p) of prime order n
 * with generator G, as its standard defines it: no radix, no Montgomery
 * form. Every tier's constants and tables derive from it
 * (tools/gen_ec_consts.py writes both into ec_consts.c).
 */
struct ec_curve_def {
    mbc_curve id;
    unsigned bits; /* bit length of p and of n */
    unsigned len;  /* bytes of a scalar or a coordinate: bits / 8 */
    uint8_t p[EC_MAX_LEN], n[EC_MAX_LEN], b[EC_MAX_LEN]; /* big-endian, len bytes */
    uint8_t gx[EC_MAX_LEN], gy[EC_MAX_LEN];
};

/*
 * ec_curve: the constants of the 52-bit kernels for one curve, derived
 * from def by the generator; id, bits and len repeat def's, so the kernels
 * read one struct.
 */
struct ec_curve {
    const struct ec_curve_def *def;
    mbc_curve id;
    unsigned k;       /* digits of p and n */
    unsigned bits;    /* bit length of p and of n */
    unsigned len;     /* bytes of a scalar or a coordinate: bits / 8 */
    unsigned nwin;    /* signed windows of EC_WIN bits in a scalar: ceil((bits + 1) / 5) */
    unsigned gwin;    /* bits of a signed window of the fixed base (k G): 7 (P-256), 6 (P-384) */
    unsigned gnwin;   /* fixed-base windows: ceil((bits + 1) / gwin) */
    unsigned gblocks; /* 2^(gwin - 1) / 8: rows of 8 entries per digit of a window's table */
    unsigned gsteps;  /* ceil(gnwin / 8): steps of 8 windows of a spread (lone) request */
    struct ec_mod p, n;
    EC_ALIGN mb52_row b[EC_MAX_K]; /* b R mod p */
    mb52_row gx[EC_MAX_K];         /* the generator G, Montgomery form */
    mb52_row gy[EC_MAX_K];
};

extern const struct ec_curve_def mbc_ec_p256_def;
extern const struct ec_curve_def mbc_ec_p384_def;
extern const struct ec_curve mbc_ec_p256;
extern const struct ec_curve mbc_ec_p384;

/*
 * ec_pt: a point of every lane in projective coordinates (X : Y : Z),
 * x = X/Z, y = Y/Z, Montgomery form, each coordinate < 2p and normalised;
 * the identity is (0 : 1 : 0). The first k rows of each coordinate are used.
 */
struct ec_pt {
    EC_ALIGN mb52_row x[EC_MAX_K];
    mb52_row y[EC_MAX_K];
    mb52_row z[EC_MAX_K];
};

/*
 * The fixed-base table of a curve: for each of the gnwin windows i, the
 * E = 2^(gwin - 1) = 8 gblocks multiples (j + 1) 2^(gwin i) G, j < E
 * (affine, Montgomery form, fully reduced below p), entry-major within a
 * row: window i is 2k digit rows (x, then y) of gblocks rows each, and lane
 * l of row q of digit r holds digit r of entry 8 q + l. A lookup loads all
 * the rows of a window and the secret index only picks lanes within
 * registers (vpermi2q: v_perm2_rows), for a batch (every lane the same
 * window, its own index) and for a lone request spread over the lanes (lane
 * l its own window, v_perm2m): no address depends on a secret.
 */
static inline size_t ec_gtab_rows(const struct ec_curve *c)
{
    return (size_t)c->gnwin * 2 * c->k * c->gblocks;
}

/* The table sizes of the two curves (P-256: 37 windows of 7 bits, 64 entries,
 * 185 KiB; P-384: 65 windows of 6 bits, 32 entries, 260 KiB; checked by the
 * tests against ec_gtab_rows). */
#define EC_P256_GTAB_ROWS (37 * 2 * 5 * 8)
#define EC_P384_GTAB_ROWS (65 * 2 * 8 * 4)

/* EC_GTAB_BUILD_SCRATCH: struct ec_pt of scratch the table builder needs
 * (it takes a window's entries 16 at a time). */
#define EC_GTAB_BUILD_SCRATCH 16

/*
 * ec_base_args: (x, y) = d G per lane (key generation, the public point of a
 * private key). ok_lanes gets the lanes whose result is on the curve (the
 * fault check); fault_lanes (a test hook) corrupts X of those lanes first.
 */
struct ec_base_args {
    const struct ec_curve *c;
    const mb52_row *gtab; /* ec_gtab_rows(c) rows */
    const mb52_row *d;    /* k rows, 1 <= d < n (secret) */
    mb52_row *x, *y;      /* out: k rows each, below p */
    unsigned lanes;       /* active lanes (public) */
    unsigned fault_lanes;
    unsigned ok_lanes; /* out */
};

/*
 * ec_sign_args: the ECDSA signature (r, s) of z with key d and nonce k per
 * lane: R = k G, r = x(R) mod n, s = k^-1 (z + r d) mod n. ok_lanes: R was
 * on the curve (fault check). zero_lanes: r == 0 or s == 0 (a new k is
 * needed).
 */
struct ec_sign_args {
    const struct ec_curve *c;
    const mb52_row *gtab;
    const mb52_row *k; /* k rows, 1 <= k < n (secret) */
    const mb52_row *d; /* k rows, 1 <= d < n (secret) */
    const mb52_row *z; /* k rows, the truncated digest: z < 2^bits */
    mb52_row *r, *s;   /* out: k rows each, below n */
    unsigned lanes;
    unsigned fault_lanes;
    unsigned ok_lanes;   /* out */
    unsigned zero_lanes; /* out */
};

/*
 * ec_verify_args: ok_lanes gets the lanes where (r, s) is a valid signature
 * of z under Q: R = (z s^-1) G + (r s^-1) Q is not the identity and
 * x(R) mod n == r. Public data only.
 */
struct ec_verify_args {
    const struct ec_curve *c;
    const mb52_row *gtab;
    const mb52_row *r, *s;   /* k rows each, 1 <= r, s < n */
    const mb52_row *z;       /* k rows, z < 2^bits */
    const mb52_row *qx, *qy; /* k rows each: a point on the curve */
    struct ec_pt *scratch;   /* EC_VT_ENTRIES points */
    unsigned lanes;
    unsigned ok_lanes; /* out */
};

/*
 * ec_ecdh_args: x = x(d P) per lane for the peer point P = (px, py).
 * peer_ok: P is on the curve (lanes whose P is not compute on G instead);
 * ok_lanes: the result is a point on the curve (fault check; the identity
 * fails it).
 */
struct ec_ecdh_args {
    const struct ec_curve *c;
    const mb52_row *d;       /* k rows, 1 <= d < n (secret) */
    const mb52_row *px, *py; /* k rows each, below p */
    mb52_row *x;             /* out: k rows, below p */
    struct ec_pt *scratch;   /* EC_VT_ENTRIES points */
    unsigned lanes;
    unsigned fault_lanes;
    unsigned peer_ok;  /* out */
    unsigned ok_lanes; /* out */
};

/* ec_point_args: on_curve gets the lanes where (x, y) (below p) is on the curve. */
struct ec_point_args {
    const struct ec_curve *c;
    const mb52_row *x, *y;
    unsigned lanes;
    unsigned on_curve; /* out */
};

/* The operations of an EC call (ec.c). */
enum ec_op { EC_OP_KEYGEN, EC_OP_SIGN, EC_OP_VERIFY, EC_OP_ECDH };

/* One kernel set per operation (lanes.h: batch, few, one and their
 * thresholds). */
typedef MBC_KSET(struct ec_base_args) ec_base_kset;
typedef MBC_KSET(struct ec_sign_args) ec_sign_kset;
typedef MBC_KSET(struct ec_verify_args) ec_verify_kset;
typedef MBC_KSET(struct ec_ecdh_args) ec_ecdh_kset;

/* mbc_ec_impl: one EC implementation, as dispatch selects it. */
struct mbc_ec_impl {
    struct mbc_impl_base base;
    ec_base_kset keygen; /* key generation: d G */
    ec_sign_kset sign;
    ec_verify_kset verify;
    ec_ecdh_kset ecdh;
    const struct mbc_op_size *lone; /* mbc_impl_lone's rows (NULL: none) */
    size_t one_scrub[4];            /* by ec_op: the stack scrub of a call whose requests all ran on
                                     * that operation's .one kernel (0: MBC_WIPE_EC; wipe.h) */
};

/* mbc_ec_impl_c: the portable implementation (every CPU). */
extern const struct mbc_ec_impl mbc_ec_impl_c;

/* mbc_ec_impl_for: the fastest implementation features allow. */
const struct mbc_ec_impl *mbc_ec_impl_for(uint64_t features);

/* mbc_ec_impl_table: the implementations mbc_ec_impl_for picks from. */
extern const struct mbc_impl_table mbc_ec_impl_table;

/* The kernels of each backend (MBC_KFN names), declared for every backend
 * that is built: _c (8 lanes), _c1 (lane 0 only), _ifma, _ifma4 (lanes
 * 0..3, on ymm). */
#define EC_KERNELS(SUF)                                                                            \
    void mbc_ec_base_kern_##SUF(struct ec_base_args *a);                                           \
    void mbc_ec_sign_kern_##SUF(struct ec_sign_args *a);                                           \
    void mbc_ec_verify_kern_##SUF(struct ec_verify_args *a);                                       \
    void mbc_ec_ecdh_kern_##SUF(struct ec_ecdh_args *a);                                           \
    void mbc_ec_point_check_##SUF(struct ec_point_args *a);
EC_KERNELS(c)
EC_KERNELS(c1)
EC_KERNELS(ifma)
EC_KERNELS(ifma4)
#undef EC_KERNELS

#if MBC_TEST_HOOKS
/* Batches run by each backend (relaxed counters, for the dispatch-hit
 * tests), in the tests' build only (src/test_hooks.h). */
extern _Atomic unsigned long mbc_ec_kern_hits_c;
extern _Atomic unsigned long mbc_ec_kern_hits_c1;
extern _Atomic unsigned long mbc_ec_kern_hits_ifma;
extern _Atomic unsigned long mbc_ec_kern_hits_ifma4;
#endif

/*
 * The lone-request form of key generation and signing in the 8-lane
 * kernels: the fixed-base windows of the request in slot 0 are spread over
 * the 8 lanes (lane l adds the windows 8 s + l), the 8 partial sums are
 * added horizontally (3 point additions), and the rest runs on lane 0. The
 * same results as the batch kernels for slot 0 (only slot 0 is computed).
 * IFMA's single-request path; the _c build, only in the tests' build, is its
 * oracle.
 */
#if MBC_TEST_HOOKS
void mbc_ec_base_spread_kern_c(struct ec_base_args *a);
void mbc_ec_sign_spread_kern_c(struct ec_sign_args *a);
#endif
void mbc_ec_base_spread_kern_ifma(struct ec_base_args *a);
void mbc_ec_sign_spread_kern_ifma(struct ec_sign_args *a);

/* mbc_ec_inv1: r = a^-1 mod md (0 -> 0) for a < m, both k plain 52-bit
 * digits (one lane), m below 2^bits: constant time (ec_inv1.c). */
void mbc_ec_inv1(const struct ec_mod *md, unsigned k, unsigned bits, uint64_t *r,
                 const uint64_t *a);

/* mbc_ec_gtab_build_c1: fills tab (ec_gtab_rows(c) rows) with the
 * fixed-base table of c, using scratch (EC_GTAB_BUILD_SCRATCH points), on
 * the portable one-lane kernel (the same table whatever the CPU). */
void mbc_ec_gtab_build_c1(const struct ec_curve *c, mb52_row *tab, struct ec_pt *scratch);

/*
 * Field and point operations of the kernels, for the tests (test_ec_field.c)
 * to compare backends digit for digit and with OpenSSL (the tests' build
 * only).
 *  fe ops on (md = &c->p or &c->n; a, b < 2m unless said, results < 2m):
 *   EC_FE_MUL  r = a b / R          (a, b < 4m)
 *   EC_FE_SQR  r = a^2 / R          (a < 4m)
 *   EC_FE_ADD  r = a + b, EC_FE_SUB r = a - b, EC_FE_NEG r = -a (mod m)
 *   EC_FE_INV  r = a^(m-2) in Montgomery form (a R -> a^-1 R; 0 -> 0)
 *   EC_FE_CANON r = a mod m (< m)
 *  point ops on c (coordinates < 2p):
 *   EC_PT_ADD r = p + q, EC_PT_MADD r = p + (q.x, q.y) (q affine, not the
 *   identity), EC_PT_DBL r = 2p
 */
enum ec_fe_op { EC_FE_MUL, EC_FE_SQR, EC_FE_ADD, EC_FE_SUB, EC_FE_NEG, EC_FE_INV, EC_FE_CANON };
enum ec_pt_op { EC_PT_ADD, EC_PT_MADD, EC_PT_DBL };
#if MBC_TEST_HOOKS
#define EC_TEST_OPS(SUF)                                                                           \
    void mbc_ec_fe_test_##SUF(const struct ec_curve *c, const struct ec_mod *md, enum ec_fe_op op, \
                              mb52_row *r, const mb52_row *a, const mb52_row *b);                  \
    void mbc_ec_pt_test_##SUF(const struct ec_curve *c, enum ec_pt_op op, struct ec_pt *r,         \
                              const struct ec_pt *p, const struct ec_pt *q);
EC_TEST_OPS(c)
EC_TEST_OPS(ifma)
#undef EC_TEST_OPS
#endif

#endif /* MBC_SRC_EC_EC_KERN_H */
