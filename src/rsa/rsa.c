/*
 * rsa.c - the RSA batch calls: lane validation, gathering the 8 keys into
 * mb52 rows, conversions, the kernel call through the dispatch table, and the
 * per-lane status. Baseline x86-64 code.
 */
#include <string.h>

#include "../ct.h"
#include "../dispatch.h"
#include "../lanes.h"
#include "../test_hooks.h"
#include "../wipe.h"
#include "rsa_internal.h"
#include "rsa_kern.h"

/* row_alloc: a bump allocator over one aligned block of mb52 rows. */
struct row_alloc {
    mb52_row *next;
};

static mb52_row *rows(struct row_alloc *ra, unsigned count)
{
    mb52_row *r = ra->next;
    ra->next += count;
    return r;
}

/* gather_mod: rows of one modulus and its constants, for lanes in mask. */
static void gather_mod(struct mb52_mod *out, struct row_alloc *ra, unsigned k,
                       const struct rsa_mod_consts *const c[8], unsigned mask)
{
    const uint64_t *col[8];
    mb52_row *m = rows(ra, k), *r1 = rows(ra, k), *tm = rows(ra, k), *m0 = rows(ra, 1);
    for (unsigned l = 0; l < 8; l++) {
        col[l] = ((mask >> l) & 1u) ? c[l]->m : NULL;
    }
    mbc_mb52_gather(m, k, col, mask);
    for (unsigned l = 0; l < 8; l++) {
        col[l] = ((mask >> l) & 1u) ? c[l]->r1 : NULL;
    }
    mbc_mb52_gather(r1, k, col, mask);
    for (unsigned l = 0; l < 8; l++) {
        col[l] = ((mask >> l) & 1u) ? c[l]->to_mont : NULL;
    }
    mbc_mb52_gather(tm, k, col, mask);
    for (unsigned l = 0; l < 8; l++) {
        (*m0)[l] = ((mask >> l) & 1u) ? c[l]->m0inv : 0;
    }
    *out = (struct mb52_mod){k, m, m0, r1, tm};
}

/* gather_arr: rows of one per-lane digit array (arr[l] for lanes in mask). */
static mb52_row *gather_arr(struct row_alloc *ra, unsigned k, const uint64_t *const arr[8],
                            unsigned mask)
{
    mb52_row *r = rows(ra, k);
    mbc_mb52_gather(r, k, arr, mask);
    return r;
}

/* below_mask: slots (of mask) whose x (rows) is below m (rows). Public
 * verdict of a comparison on the input. */
static unsigned below_mask(const mb52_row *x, const mb52_row *m, unsigned k, unsigned mask)
{
    unsigned below = 0;
    for (unsigned l = 0; l < 8; l++) {
        uint64_t borrow = 0;
        for (unsigned j = 0; j < k; j++) {
            borrow = (x[j][l] - m[j][l] - borrow) >> 63;
#if defined(MBC_MSAN)
            /* MSan drops borrows: the verdict on a secret x is secret */
            mbc_msan_spread_all(&borrow, sizeof(borrow), &x[j][l], sizeof(uint64_t));
#endif
        }
        below |= (unsigned)borrow << l;
    }
    return below & mask;
}

/* rsa_call: the arguments of one RSA batch call; the lane checks see it as
 * their context. */
struct rsa_call {
    uint8_t *const *out;
    const uint8_t *const *in;
    const void *const *key;
    unsigned bits;
    unsigned (*key_bits)(const void *key);
};

static unsigned priv_bits(const void *k)
{
    return mbc_rsa_priv_key_bits(k);
}

static unsigned pub_bits(const void *k)
{
    return mbc_rsa_pub_key_bits(k);
}

/* rsa_lane_check: a key of another size (or not a key of the call's type)
 * is BAD_PARAM. */
static unsigned rsa_lane_check(const void *ctx, unsigned lane)
{
    const struct rsa_call *c = ctx;
    return c->key_bits(c->key[lane]) == c->bits ? MBC_LANE_OK : MBC_LANE_BAD_PARAM;
}

/* rsa_finish: the status word, with the outputs of failed lanes zeroed. */
static mbc_status rsa_finish(const struct mbc_lanes *ln, const struct rsa_call *c)
{
    uint8_t *const *const outs[1] = {c->out};
    const size_t lens[1] = {c->bits / 8};
    return mbc_lanes_finish(ln, outs, lens, 1);
}

/* rsa_release: the results of the slots in ok go out; slots not in in_ok
 * are BAD_PARAM (input >= n), the other slots not in ok FAULT. */
static void rsa_release(struct mbc_lanes *ln, const struct rsa_call *c, const mb52_row *res,
                        unsigned k, unsigned ok, unsigned in_ok)
{
    mbc_lanes_set_slots(ln, ln->slot_mask & ~in_ok, MBC_LANE_BAD_PARAM);
    mbc_lanes_set_slots(ln, ln->slot_mask & ~ok, MBC_LANE_FAULT);
    if (ok != 0) {
        uint8_t *sout[MBC_LANES];
        mbc_lanes_slot_outs(ln, c->out, sout);
        mbc_mb52_to_be8(sout, c->bits / 8, res, k, ok);
    }
}

/*
 * rsa_run: one RSA call: the lane checks, the plan of kp, one block of
 * nrows rows for every run, body on the packed requests (once, or once per
 * request for the one-by-one plan: lanes.h), the finish.
 */
static mbc_status rsa_run(const struct rsa_call *c, unsigned lane_mask, const struct mbc_kplan *kp,
                          size_t nrows, mbc_lanes_body_fn *body)
{
    const void *const *const arrays[3] = {(const void *const *)c->out, (const void *const *)c->in,
                                          c->key};
    struct mbc_lanes ln;
    mbc_lanes_begin(&ln, lane_mask, rsa_supported_bits(c->bits), arrays, 3, rsa_lane_check, c);
    const struct mbc_lane_bufs out = {(const void *const *)c->out, NULL, c->bits / 8};
    const struct mbc_lane_bufs in = {(const void *const *)c->in, NULL, c->bits / 8};
    mbc_lanes_refuse_overlaps(&ln, &out, 1, &in, 1);
    if (mbc_lanes_pick(&ln, kp) != MBC_PLAN_NONE) {
        mb52_row *block = mbc_aligned_alloc(nrows * sizeof(mb52_row));
        if (block == NULL) {
            mbc_lanes_fail(&ln, ln.valid, MBC_LANE_NO_MEMORY);
        } else {
            mbc_lanes_run(&ln, body, c, block);
            mbc_aligned_free(block, nrows * sizeof(mb52_row));
        }
    }
    return rsa_finish(&ln, c);
}

/* priv_rows: the rows of one private run of size bits. */
static size_t priv_rows(unsigned bits)
{
    const unsigned kh = rsa_half_digits(bits);
    const unsigned kn = 2 * kh;
    return 2 * (3 * kh + 1) + 3 * kh + (3 * kn + 1) + 3 * kn + rsa_crt_scratch_rows(kh);
}

/*
 * priv_body: the private results of ln's packed requests (rsa_run's body).
 * Up to 4 requests run both CRT halves in one pass (see rsa_crt_args:
 * paired); a lone request goes to the single-request kernel (horizontal on
 * IFMA; on the portable path 2 lanes instead of 8).
 */
static void priv_body(struct mbc_lanes *ln, const void *call, void *work)
{
    const struct rsa_call *c = call;
    const unsigned bits = c->bits;
    const unsigned kh = rsa_half_digits(bits);
    const unsigned kn = 2 * kh;
    const unsigned n = ln->n;
    const unsigned paired = n <= 4 ? n : 0;

    /* Per-slot key fields; when paired, the half passes (p, dp and in) also
     * get q, dq and in again in slots n..2n-1. */
    const struct rsa_mod_consts *pc[8] = {NULL}, *qc[8] = {NULL}, *nc[8] = {NULL};
    const uint64_t *dp[8] = {NULL}, *dq[8] = {NULL}, *qi[8] = {NULL}, *e[8] = {NULL};
    const uint8_t *sin[8] = {NULL};
    unsigned e_bits = 0;
    for (unsigned s = 0; s < n; s++) {
        const unsigned l = ln->lane_of[s];
        const mbc_rsa_priv_key *k = c->key[l];
        pc[s] = &k->p;
        qc[s] = &k->q;
        nc[s] = &k->pub.n;
        dp[s] = k->dp;
        dq[s] = k->dq;
        qi[s] = k->qinv_r;
        e[s] = k->pub.e;
        sin[s] = c->in[l];
        if (k->pub.e_bits > e_bits) {
            e_bits = k->pub.e_bits;
        }
        if (paired) {
            pc[s + n] = &k->q;
            dp[s + n] = k->dq;
            sin[s + n] = c->in[l];
        }
    }
    const unsigned half_mask = paired ? (ln->slot_mask << n) | ln->slot_mask : ln->slot_mask;

    struct row_alloc ra = {work};
    struct rsa_crt_args a = {0};
    a.paired = paired;
    gather_mod(&a.p, &ra, kh, pc, half_mask);
    gather_mod(&a.q, &ra, kh, qc, ln->slot_mask);
    gather_mod(&a.n, &ra, kn, nc, ln->slot_mask);
    a.dp = gather_arr(&ra, kh, dp, half_mask);
    a.dq = gather_arr(&ra, kh, dq, ln->slot_mask);
    a.qinv_r = gather_arr(&ra, kh, qi, ln->slot_mask);
    a.e = gather_arr(&ra, kn, e, ln->slot_mask);
    a.e_bits = e_bits;
    a.half_bits = bits / 2;
    mb52_row *x = rows(&ra, kn);
    a.in = x;
    a.out = rows(&ra, kn);
    a.scratch = rows(&ra, rsa_crt_scratch_rows(kh));
    mbc_mb52_from_be8(x, kn, sin, bits / 8, half_mask);

    /* The two verdicts (input below n, fault check passed) and the released
     * outputs are the only values derived from secrets made public here. */
    unsigned in_ok = below_mask(x, a.n.m, kn, ln->slot_mask);
    mbc_declassify(&in_ok, sizeof(in_ok));
    a.lanes = in_ok;
    for (unsigned s = 0; s < n; s++) {
        a.fault_lanes |= ((mbc_test_hook(rsa_fault_lanes) >> ln->lane_of[s]) & 1u) << s;
    }
    a.fault_lanes &= in_ok;
    if (in_ok != 0) {
        MBC_KSET_FN(&mbc_dispatch_get()->rsa->crt, ln->plan)(&a);
    }
    mbc_declassify(&a.ok_lanes, sizeof(a.ok_lanes));
    const unsigned released = in_ok & a.ok_lanes;
    rsa_release(ln, c, a.out, kn, released, in_ok);
    for (unsigned s = 0; s < n; s++) {
        if ((released >> s) & 1u) {
            mbc_declassify(c->out[ln->lane_of[s]], bits / 8);
        }
    }
}

/* rsa_private_mb8: the work of mbc_rsa_private_crt_mb8, in frames of its
 * own that the caller then scrubs (wipe.h). */
__attribute__((noinline)) static mbc_status
rsa_private_mb8(uint8_t *const out[MBC_LANES], const uint8_t *const in[MBC_LANES],
                const mbc_rsa_priv_key *const key[MBC_LANES], unsigned bits, unsigned lane_mask)
{
    const struct rsa_call c = {out, in, (const void *const *)key, bits, priv_bits};
    return rsa_run(&c, lane_mask, &mbc_dispatch_get()->rsa->crt.plan, priv_rows(bits), priv_body);
}

MBC_API mbc_status mbc_rsa_private_crt_mb8(uint8_t *const out[MBC_LANES],
                                           const uint8_t *const in[MBC_LANES],
                                           const mbc_rsa_priv_key *const key[MBC_LANES],
                                           unsigned bits, unsigned lane_mask)
{
    const mbc_status st = rsa_private_mb8(out, in, key, bits, lane_mask);
    mbc_wipe_secrets(MBC_WIPE_RSA_PRIVATE);
    return st;
}

/* pub_body: the public results of ln's packed requests (rsa_run's body). */
static void pub_body(struct mbc_lanes *ln, const void *call, void *work)
{
    const struct rsa_call *c = call;
    const unsigned bits = c->bits;
    const unsigned kn = 2 * rsa_half_digits(bits);
    const struct rsa_mod_consts *nc[8] = {NULL};
    const uint64_t *e[8] = {NULL};
    const uint8_t *sin[8] = {NULL};
    unsigned e_bits = 0;
    for (unsigned s = 0; s < ln->n; s++) {
        const mbc_rsa_pub_key *k = c->key[ln->lane_of[s]];
        nc[s] = &k->n;
        e[s] = k->e;
        sin[s] = c->in[ln->lane_of[s]];
        if (k->e_bits > e_bits) {
            e_bits = k->e_bits;
        }
    }
    struct row_alloc ra = {work};
    struct rsa_pub_args a = {0};
    gather_mod(&a.n, &ra, kn, nc, ln->slot_mask);
    a.e = gather_arr(&ra, kn, e, ln->slot_mask);
    a.e_bits = e_bits;
    mb52_row *x = rows(&ra, kn);
    a.in = x;
    a.out = rows(&ra, kn);
    a.scratch = rows(&ra, rsa_pub_scratch_rows(kn));
    mbc_mb52_from_be8(x, kn, sin, bits / 8, ln->slot_mask);

    const unsigned in_ok = below_mask(x, a.n.m, kn, ln->slot_mask);
    a.lanes = in_ok;
    if (in_ok != 0) {
        MBC_KSET_FN(&mbc_dispatch_get()->rsa->pub, ln->plan)(&a);
    }
    rsa_release(ln, c, a.out, kn, in_ok, in_ok);
}

MBC_API mbc_status mbc_rsa_public_mb8(uint8_t *const out[MBC_LANES],
                                      const uint8_t *const in[MBC_LANES],
                                      const mbc_rsa_pub_key *const key[MBC_LANES], unsigned bits,
                                      unsigned lane_mask)
{
    const struct rsa_call c = {out, in, (const void *const *)key, bits, pub_bits};
    const unsigned kn = 2 * rsa_half_digits(bits);
    const size_t nrows = (3 * kn + 1) + 3 * kn + rsa_pub_scratch_rows(kn);
    return rsa_run(&c, lane_mask, &mbc_dispatch_get()->rsa->pub.plan, nrows, pub_body);
}

MBC_API mbc_err mbc_rsa_private_crt(uint8_t *out, const uint8_t *in, const mbc_rsa_priv_key *key)
{
    if (out == NULL || in == NULL || key == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    unsigned bits = mbc_rsa_priv_key_bits(key);
    if (bits == 0) {
        return MBC_ERR_BAD_PARAM;
    }
    uint8_t *const o[8] = {out};
    const uint8_t *const i[8] = {in};
    const mbc_rsa_priv_key *const k[8] = {key};
    return mbc_lane_code_to_err(mbc_lane_code(mbc_rsa_private_crt_mb8(o, i, k, bits, 1), 0));
}

MBC_API mbc_err mbc_rsa_public(uint8_t *out, const uint8_t *in, const mbc_rsa_pub_key *key)
{
    if (out == NULL || in == NULL || key == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    unsigned bits = mbc_rsa_pub_key_bits(key);
    if (bits == 0) {
        return MBC_ERR_BAD_PARAM;
    }
    uint8_t *const o[8] = {out};
    const uint8_t *const i[8] = {in};
    const mbc_rsa_pub_key *const k[8] = {key};
    return mbc_lane_code_to_err(mbc_lane_code(mbc_rsa_public_mb8(o, i, k, bits, 1), 0));
}
