/*
 * rsa_kern.h - the interface between the RSA glue (rsa.c, baseline code) and
 * the RSA kernels (rsa_kern.c, compiled once per backend: _ifma and _c).
 * All arrays are mb52 rows (see mb52.h), 64-byte aligned, normalised.
 */
#ifndef MBC_SRC_RSA_RSA_KERN_H
#define MBC_SRC_RSA_RSA_KERN_H

#include "../impl.h"
#include "../lanes.h"
#include "../mb52/mb52.h"

/* RSA_WIN: the fixed window width of the private exponentiation. */
#define RSA_WIN 5

/* rsa_pub_args: out = in^e mod n per lane; e public, possibly per lane. */
struct rsa_pub_args {
    struct mb52_mod n;
    const mb52_row *e;  /* mb52_digits(e_bits) rows */
    unsigned e_bits;    /* max bit length of e over the active lanes */
    unsigned lanes;     /* active lanes (public) */
    const mb52_row *in; /* n.k rows, each lane < n */
    mb52_row *out;      /* n.k rows, fully reduced (< n) */
    mb52_row *scratch;  /* rsa_pub_scratch_rows(n.k) rows */
};

/*
 * rsa_crt_args: out = in^d mod n per lane through the CRT, then checked:
 * ok_lanes gets the lanes where out^e mod n == in.
 *
 * Two layouts, chosen by the glue from the number of requests (public):
 *  - paired == 0: up to 8 requests, one per lane; the p halves of all lanes
 *    run in one exponentiation pass, then the q halves in a second.
 *  - paired == n, 1 <= n <= 4: n requests in lanes 0..n-1; both halves run
 *    in one pass: lanes 0..n-1 of p and dp hold each request's p and dp,
 *    lanes n..2n-1 its q and dq, and lanes n..2n-1 of in repeat lanes
 *    0..n-1. q (modulus rows only) and everything else are in lanes 0..n-1.
 *    A lone request thus costs one pass, not two, and lives in lanes 0 and 1
 *    only (what the 2-lane portable kernel computes).
 */
struct rsa_crt_args {
    unsigned paired;
    struct mb52_mod p, q;    /* k = kh for both */
    const mb52_row *dp, *dq; /* kh rows; secret exponents below 2^half_bits */
    const mb52_row *qinv_r;  /* kh rows: qinv * R mod p */
    unsigned half_bits;      /* bits / 2 */
    struct mb52_mod n;       /* k = 2 kh */
    const mb52_row *e;       /* public exponents, mb52_digits(e_bits) rows */
    unsigned e_bits;
    unsigned lanes;       /* active lanes (public) */
    unsigned fault_lanes; /* test hook: lanes whose p-half result is corrupted */
    const mb52_row *in;   /* 2 kh rows, each lane < n */
    mb52_row *out;        /* 2 kh rows */
    mb52_row *scratch;    /* rsa_crt_scratch_rows(kh) rows */
    unsigned ok_lanes;    /* output */
};

#define RSA_PUB_SCRATCH_ROWS(kn) (4 * (kn))

static inline unsigned rsa_pub_scratch_rows(unsigned kn)
{
    return RSA_PUB_SCRATCH_ROWS(kn);
}

static inline unsigned rsa_crt_scratch_rows(unsigned kh)
{
    return ((1u << RSA_WIN) + 6) * kh + rsa_pub_scratch_rows(2 * kh) + 2 * kh;
}

/* One kernel set per operation (lanes.h): the CRT private operation and
 * the public one. RSA has no few-request kernels. */
typedef MBC_KSET(struct rsa_crt_args) rsa_crt_kset;
typedef MBC_KSET(struct rsa_pub_args) rsa_pub_kset;

/* mbc_rsa_impl: one RSA implementation, as dispatch selects it. */
struct mbc_rsa_impl {
    struct mbc_impl_base base;
    rsa_crt_kset crt;
    rsa_pub_kset pub;
    const struct mbc_op_size *lone; /* mbc_impl_lone's rows (NULL: none) */
};

/* mbc_rsa_impl_c: the portable implementation (every CPU). */
extern const struct mbc_rsa_impl mbc_rsa_impl_c;

/* mbc_rsa_impl_for: the fastest implementation features allow. */
const struct mbc_rsa_impl *mbc_rsa_impl_for(uint64_t features);

/* mbc_rsa_impl_table: the implementations mbc_rsa_impl_for picks from. */
extern const struct mbc_impl_table mbc_rsa_impl_table;

#if MBC_TEST_HOOKS
/* Batches run by each backend (relaxed counters, for the dispatch-hit test),
 * in the tests' build only (src/test_hooks.h). */
extern _Atomic unsigned long mbc_rsa_kern_hits_c;
extern _Atomic unsigned long mbc_rsa_kern_hits_c2;
extern _Atomic unsigned long mbc_rsa_kern_hits_ifma;
/* Lone private requests whose CRT halves ran horizontally (rsa_h2.c); they
 * count in mbc_rsa_kern_hits_ifma too. */
extern _Atomic unsigned long mbc_rsa_kern_hits_h2;
/* Horizontal public exponentiations (rsa_h2.c): lone public requests, and
 * the fault checks of lone private requests that ran horizontally. */
extern _Atomic unsigned long mbc_rsa_kern_hits_h1;
#endif

void mbc_rsa_crt_kern_c(struct rsa_crt_args *a);
void mbc_rsa_pub_kern_c(struct rsa_pub_args *a);
/* The 2-lane portable kernels: lanes 0 and 1 only (a lone request). */
void mbc_rsa_crt_kern_c2(struct rsa_crt_args *a);
void mbc_rsa_pub_kern_c2(struct rsa_pub_args *a);
void mbc_rsa_crt_kern_ifma(struct rsa_crt_args *a);
void mbc_rsa_pub_kern_ifma(struct rsa_pub_args *a);
/* The lone-request kernels on IFMA (rsa_h2.c), same results as the 8-lane
 * ones: mbc_rsa_crt_kern_h2_ifma runs the two CRT half exponentiations of one
 * request (paired == 1, kh = 20, 30, 40) horizontally, interleaved, and its
 * fault check as mbc_rsa_pub_kern_h1_ifma does; any other batch goes to
 * mbc_rsa_crt_kern_ifma. mbc_rsa_pub_kern_h1_ifma runs a lone public request
 * (lanes == 1, k = 40, 60, 80) horizontally, anything else as
 * mbc_rsa_pub_kern_ifma. */
void mbc_rsa_crt_kern_h2_ifma(struct rsa_crt_args *a);
void mbc_rsa_pub_kern_h1_ifma(struct rsa_pub_args *a);
#if MBC_TEST_HOOKS
/* For the vertical/horizontal equality test (the tests' build only): the
 * two CRT halves of a (mp, mq: kh rows each, fully reduced, as rsa_crt_kern
 * computes them before Garner), with the horizontal exponentiation when
 * h2 != 0 and a fits it, else the vertical one; returns 1 if the horizontal
 * one ran. Uses a->scratch. */
int mbc_rsa_crt_halves_test_ifma(mb52_row *mp, mb52_row *mq, const struct rsa_crt_args *a, int h2);
#endif

#endif /* MBC_SRC_RSA_RSA_KERN_H */
