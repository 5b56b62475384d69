/*
 * rsa.c - the RSA batch calls: lane validation, gathering the 8 keys into
 * mb52 rows, conversions, the kernel call through the dispatch table, and the
 * per-lane status. Baseline x86-64 code.
 */
#include <string.h>

#include "../ct.h"
#include "../dispatch.h"
#include "rsa_internal.h"

unsigned mbc_rsa_test_fault_lanes;

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
static void gather_mod(struct rsa_mod *out, struct row_alloc *ra, unsigned k,
                       const struct rsa_mod_consts *const c[8], unsigned mask)
{
    const uint64_t *col[8];
    mb52_row *m = rows(ra, k), *r1 = rows(ra, k), *tm = rows(ra, k), *m0 = rows(ra, 1);
    for (unsigned l = 0; l < 8; l++) {
        col[l] = ((mask >> l) & 1u) ? c[l]->m : NULL;
    }
    mb52_gather(m, k, col, mask);
    for (unsigned l = 0; l < 8; l++) {
        col[l] = ((mask >> l) & 1u) ? c[l]->r1 : NULL;
    }
    mb52_gather(r1, k, col, mask);
    for (unsigned l = 0; l < 8; l++) {
        col[l] = ((mask >> l) & 1u) ? c[l]->to_mont : NULL;
    }
    mb52_gather(tm, k, col, mask);
    for (unsigned l = 0; l < 8; l++) {
        (*m0)[l] = ((mask >> l) & 1u) ? c[l]->m0inv : 0;
    }
    *out = (struct rsa_mod){k, m, m0, r1, tm};
}

/* gather_arr: rows of one per-lane digit array (arr[l] for lanes in mask). */
static mb52_row *gather_arr(struct row_alloc *ra, unsigned k, const uint64_t *const arr[8],
                            unsigned mask)
{
    mb52_row *r = rows(ra, k);
    mb52_gather(r, k, arr, mask);
    return r;
}

/* below_mask: lanes (of mask) whose x (rows) is below m (rows). Public
 * verdict of a comparison on the input. */
static unsigned below_mask(const mb52_row *x, const mb52_row *m, unsigned k, unsigned mask)
{
    unsigned below = 0;
    for (unsigned l = 0; l < 8; l++) {
        uint64_t borrow = 0;
        for (unsigned j = 0; j < k; j++) {
            borrow = (x[j][l] - m[j][l] - borrow) >> 63;
        }
        below |= (unsigned)borrow << l;
    }
    return below & mask;
}

/*
 * lane_check: the common first pass of every RSA batch call. Returns the
 * status with EMPTY, NULL_PARAM and BAD_PARAM filled in and sets *valid to the
 * lanes that passed. key_bits(l) gives lane l's key size (0 if malformed).
 * *writable is 0 when the call itself is malformed (lane_mask above 0xFF or
 * unsupported bits): then no output may be touched, since its length is
 * unknown.
 */
static mbc_status lane_check(uint8_t *const out[8], const uint8_t *const in[8],
                             const void *const key[8], unsigned (*key_bits)(const void *),
                             unsigned bits, unsigned lane_mask, unsigned *valid,
                             int *writable)
{
    mbc_status st = 0;
    *valid = 0;
    *writable = rsa_supported_bits(bits) && lane_mask <= MBC_LANE_MASK_ALL;
    if (lane_mask > MBC_LANE_MASK_ALL) {
        return mbc_status_all(MBC_LANE_BAD_PARAM);
    }
    for (unsigned l = 0; l < 8; l++) {
        unsigned code = MBC_LANE_OK;
        if (!((lane_mask >> l) & 1u)) {
            code = MBC_LANE_EMPTY;
        } else if (out == NULL || in == NULL || key == NULL || out[l] == NULL ||
                   in[l] == NULL || key[l] == NULL) {
            code = MBC_LANE_NULL_PARAM;
        } else if (!rsa_supported_bits(bits) || key_bits(key[l]) != bits) {
            code = MBC_LANE_BAD_PARAM;
        } else {
            *valid |= 1u << l;
        }
        st = mbc_status_set(st, l, code);
    }
    return st;
}

/* finish: zeroes the outputs of the active lanes that did not end OK and
 * returns the final status. */
static mbc_status finish(mbc_status st, uint8_t *const out[8], size_t len, unsigned lane_mask)
{
    for (unsigned l = 0; l < 8; l++) {
        if (((lane_mask >> l) & 1u) && mbc_lane_code(st, l) != MBC_LANE_OK && out != NULL &&
            out[l] != NULL) {
            memset(out[l], 0, len);
        }
    }
    return st;
}

static mbc_status set_lanes(mbc_status st, unsigned lanes, unsigned code)
{
    for (unsigned l = 0; l < 8; l++) {
        if ((lanes >> l) & 1u) {
            st = mbc_status_set(st, l, code);
        }
    }
    return st;
}

static unsigned priv_bits(const void *k)
{
    return mbc_rsa_priv_key_bits(k);
}

static unsigned pub_bits(const void *k)
{
    return mbc_rsa_pub_key_bits(k);
}

/*
 * Slots: the kernels see the valid requests packed into lanes ("slots")
 * 0..n-1, whatever their lanes in the call; lane_of[s] is the call's lane of
 * slot s. The packing depends only on lane_mask and public validity checks.
 */
struct slots {
    unsigned n;          /* requests */
    unsigned mask;       /* (1 << n) - 1 */
    unsigned lane_of[8];
};

static void pack_slots(struct slots *sl, unsigned valid)
{
    sl->n = 0;
    for (unsigned l = 0; l < 8; l++) {
        if ((valid >> l) & 1u) {
            sl->lane_of[sl->n++] = l;
        }
    }
    sl->mask = (1u << sl->n) - 1;
}

/* release: writes the results of the slots in ok, sets each slot's lane
 * code (OK, or bad_code for slots not in ok) and zeroes the other active
 * lanes' outputs. Returns the final status. */
static mbc_status release(mbc_status st, const struct slots *sl, uint8_t *const out[8],
                          size_t len, const mb52_row *res, unsigned k, unsigned ok,
                          unsigned in_ok, unsigned lane_mask)
{
    uint8_t *sout[8] = {NULL};
    for (unsigned s = 0; s < sl->n; s++) {
        sout[s] = out[sl->lane_of[s]];
        const unsigned code = !((in_ok >> s) & 1u) ? MBC_LANE_BAD_PARAM
                              : !((ok >> s) & 1u)  ? MBC_LANE_FAULT
                                                   : MBC_LANE_OK;
        st = mbc_status_set(st, sl->lane_of[s], code);
    }
    if (ok != 0) {
        mb52_to_be8(sout, len, res, k, ok);
    }
    return finish(st, out, len, lane_mask);
}

/*
 * Few requests run one by one on the single-request kernels, which cost a
 * fraction of a shared pass: up to this many private / public requests, n
 * single runs took less time than one batch of n, on IFMA (horizontal single
 * path) and on the portable path (2-lane kernels). Measured with mbc_bench
 * (taskset -c 1): a lone IFMA private request costs 0.46x (2048) and 0.37x
 * (3072) of a paired pass of 2 to 4, a lone public one 0.23x (2048) to 0.17x
 * (4096) of an 8-lane batch; a 2-lane portable run 1/4 of an 8-lane one.
 */
#define RSA_PRIV_ONE_BY_ONE 2
#define RSA_PUB_ONE_BY_ONE 4

typedef mbc_status batch_fn(uint8_t *const out[MBC_LANES], const uint8_t *const in[MBC_LANES],
                            const void *const key[MBC_LANES], unsigned bits, unsigned lane_mask);

/* one_by_one: the valid lanes through fn one at a time; st holds the codes
 * of the other lanes. */
static mbc_status one_by_one(batch_fn *fn, mbc_status st, uint8_t *const out[MBC_LANES],
                             const uint8_t *const in[MBC_LANES], const void *const key[MBC_LANES],
                             unsigned bits, unsigned valid, unsigned lane_mask)
{
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if ((valid >> l) & 1u) {
            st = mbc_status_set(st, l, mbc_lane_code(fn(out, in, key, bits, 1u << l), l));
        }
    }
    return finish(st, out, bits / 8, lane_mask);
}

static mbc_status priv_batch(uint8_t *const out[MBC_LANES], const uint8_t *const in[MBC_LANES],
                             const void *const key[MBC_LANES], unsigned bits, unsigned lane_mask)
{
    return mbc_rsa_private_crt_mb8(out, in, (const mbc_rsa_priv_key *const *)key, bits,
                                   lane_mask);
}

static mbc_status pub_batch(uint8_t *const out[MBC_LANES], const uint8_t *const in[MBC_LANES],
                            const void *const key[MBC_LANES], unsigned bits, unsigned lane_mask)
{
    return mbc_rsa_public_mb8(out, in, (const mbc_rsa_pub_key *const *)key, bits, lane_mask);
}

/*
 * Private batch. Up to RSA_PRIV_ONE_BY_ONE requests run one by one; up to 4
 * run both CRT halves in one pass (see rsa_crt_args: paired); a lone request
 * goes to the dispatch's single-request kernel (horizontal on IFMA; on the
 * portable path 2 lanes instead of 8).
 */
MBC_API mbc_status mbc_rsa_private_crt_mb8(uint8_t *const out[MBC_LANES],
                                           const uint8_t *const in[MBC_LANES],
                                           const mbc_rsa_priv_key *const key[MBC_LANES],
                                           unsigned bits, unsigned lane_mask)
{
    unsigned valid;
    int writable;
    mbc_status st = lane_check(out, in, (const void *const *)key, priv_bits, bits, lane_mask,
                               &valid, &writable);
    if (valid == 0) {
        return writable ? finish(st, out, bits / 8, lane_mask) : st;
    }
    const unsigned count = (unsigned)__builtin_popcount(valid);
    if (count > 1 && count <= RSA_PRIV_ONE_BY_ONE) {
        return one_by_one(priv_batch, st, out, in, (const void *const *)key, bits, valid,
                          lane_mask);
    }
    const unsigned kh = rsa_half_digits(bits);
    const unsigned kn = 2 * kh;
    const size_t nrows = 2 * (3 * kh + 1) + 3 * kh + (3 * kn + 1) + 3 * kn +
                         rsa_crt_scratch_rows(kh);
    mb52_row *block = mbc_aligned_alloc(nrows * sizeof(mb52_row));
    if (block == NULL) {
        return finish(set_lanes(st, valid, MBC_LANE_NO_MEMORY), out, bits / 8, lane_mask);
    }
    struct slots sl;
    pack_slots(&sl, valid);
    const unsigned n = sl.n;
    const unsigned paired = n <= 4 ? n : 0;

    /* Per-slot key fields; when paired, the half passes (p, dp and in) also
     * get q, dq and in again in slots n..2n-1. */
    const struct rsa_mod_consts *pc[8] = {NULL}, *qc[8] = {NULL}, *nc[8] = {NULL};
    const uint64_t *dp[8] = {NULL}, *dq[8] = {NULL}, *qi[8] = {NULL}, *e[8] = {NULL};
    const uint8_t *sin[8] = {NULL};
    unsigned e_bits = 0;
    for (unsigned s = 0; s < n; s++) {
        const unsigned l = sl.lane_of[s];
        const mbc_rsa_priv_key *k = key[l];
        pc[s] = &k->p;
        qc[s] = &k->q;
        nc[s] = &k->pub.n;
        dp[s] = k->dp;
        dq[s] = k->dq;
        qi[s] = k->qinv_r;
        e[s] = k->pub.e;
        sin[s] = in[l];
        if (k->pub.e_bits > e_bits) {
            e_bits = k->pub.e_bits;
        }
        if (paired) {
            pc[s + n] = &k->q;
            dp[s + n] = k->dq;
            sin[s + n] = in[l];
        }
    }
    const unsigned half_mask = paired ? (sl.mask << n) | sl.mask : sl.mask;

    struct row_alloc ra = {block};
    struct rsa_crt_args a = {0};
    a.paired = paired;
    gather_mod(&a.p, &ra, kh, pc, half_mask);
    gather_mod(&a.q, &ra, kh, qc, sl.mask);
    gather_mod(&a.n, &ra, kn, nc, sl.mask);
    a.dp = gather_arr(&ra, kh, dp, half_mask);
    a.dq = gather_arr(&ra, kh, dq, sl.mask);
    a.qinv_r = gather_arr(&ra, kh, qi, sl.mask);
    a.e = gather_arr(&ra, kn, e, sl.mask);
    a.e_bits = e_bits;
    a.half_bits = bits / 2;
    mb52_row *x = rows(&ra, kn);
    a.in = x;
    a.out = rows(&ra, kn);
    a.scratch = rows(&ra, rsa_crt_scratch_rows(kh));
    mb52_from_be8(x, kn, sin, bits / 8, half_mask);

    /* The two verdicts (input below n, fault check passed) and the released
     * outputs are the only values derived from secrets made public here. */
    unsigned in_ok = below_mask(x, a.n.m, kn, sl.mask);
    mbc_declassify(&in_ok, sizeof(in_ok));
    a.lanes = in_ok;
    for (unsigned s = 0; s < n; s++) {
        a.fault_lanes |= ((mbc_rsa_test_fault_lanes >> sl.lane_of[s]) & 1u) << s;
    }
    a.fault_lanes &= in_ok;
    if (in_ok != 0) {
        const struct mbc_dispatch *d = mbc_dispatch_get();
        (n == 1 ? d->rsa_crt_one : d->rsa_crt)(&a);
    }
    mbc_declassify(&a.ok_lanes, sizeof(a.ok_lanes));
    const unsigned released = in_ok & a.ok_lanes;
    st = release(st, &sl, out, bits / 8, a.out, kn, released, in_ok, lane_mask);
    for (unsigned s = 0; s < n; s++) {
        if ((released >> s) & 1u) {
            mbc_declassify(out[sl.lane_of[s]], bits / 8);
        }
    }
    mbc_aligned_free(block, nrows * sizeof(mb52_row));
    return st;
}

MBC_API mbc_status mbc_rsa_public_mb8(uint8_t *const out[MBC_LANES],
                                      const uint8_t *const in[MBC_LANES],
                                      const mbc_rsa_pub_key *const key[MBC_LANES],
                                      unsigned bits, unsigned lane_mask)
{
    unsigned valid;
    int writable;
    mbc_status st = lane_check(out, in, (const void *const *)key, pub_bits, bits, lane_mask,
                               &valid, &writable);
    if (valid == 0) {
        return writable ? finish(st, out, bits / 8, lane_mask) : st;
    }
    const unsigned count = (unsigned)__builtin_popcount(valid);
    if (count > 1 && count <= RSA_PUB_ONE_BY_ONE) {
        return one_by_one(pub_batch, st, out, in, (const void *const *)key, bits, valid,
                          lane_mask);
    }
    const unsigned kn = 2 * rsa_half_digits(bits);
    const size_t nrows = (3 * kn + 1) + 3 * kn + rsa_pub_scratch_rows(kn);
    mb52_row *block = mbc_aligned_alloc(nrows * sizeof(mb52_row));
    if (block == NULL) {
        return finish(set_lanes(st, valid, MBC_LANE_NO_MEMORY), out, bits / 8, lane_mask);
    }
    struct slots sl;
    pack_slots(&sl, valid);
    const struct rsa_mod_consts *nc[8] = {NULL};
    const uint64_t *e[8] = {NULL};
    const uint8_t *sin[8] = {NULL};
    unsigned e_bits = 0;
    for (unsigned s = 0; s < sl.n; s++) {
        const mbc_rsa_pub_key *k = key[sl.lane_of[s]];
        nc[s] = &k->n;
        e[s] = k->e;
        sin[s] = in[sl.lane_of[s]];
        if (k->e_bits > e_bits) {
            e_bits = k->e_bits;
        }
    }
    struct row_alloc ra = {block};
    struct rsa_pub_args a = {0};
    gather_mod(&a.n, &ra, kn, nc, sl.mask);
    a.e = gather_arr(&ra, kn, e, sl.mask);
    a.e_bits = e_bits;
    mb52_row *x = rows(&ra, kn);
    a.in = x;
    a.out = rows(&ra, kn);
    a.scratch = rows(&ra, rsa_pub_scratch_rows(kn));
    mb52_from_be8(x, kn, sin, bits / 8, sl.mask);

    const unsigned in_ok = below_mask(x, a.n.m, kn, sl.mask);
    a.lanes = in_ok;
    if (in_ok != 0) {
        const struct mbc_dispatch *d = mbc_dispatch_get();
        (sl.n == 1 ? d->rsa_pub_one : d->rsa_pub)(&a);
    }
    st = release(st, &sl, out, bits / 8, a.out, kn, in_ok, in_ok, lane_mask);
    mbc_aligned_free(block, nrows * sizeof(mb52_row));
    return st;
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
