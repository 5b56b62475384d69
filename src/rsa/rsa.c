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

/* finish: writes the OK lanes' results, zeroes the outputs of active lanes
 * that failed, and returns the final status. */
static mbc_status finish(mbc_status st, uint8_t *const out[8], size_t len,
                         const mb52_row *res, unsigned k, unsigned ok, unsigned lane_mask)
{
    if (ok != 0) {
        mb52_to_be8(out, len, res, k, ok);
    }
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
 * The private batch runs in kernel lanes ("slots"). Up to 4 requests are
 * packed into slots 0..3 so that their p and q halves share one pass (see
 * rsa_crt_args); 5..8 requests keep their own lanes. The layout depends only
 * on lane_mask and the public validity checks.
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
        return writable ? finish(st, out, bits / 8, NULL, 0, 0, lane_mask) : st;
    }
    const unsigned kh = rsa_half_digits(bits);
    const unsigned kn = 2 * kh;
    const size_t nrows = 2 * (3 * kh + 1) + 3 * kh + (3 * kn + 1) + 3 * kn +
                         rsa_crt_scratch_rows(kh);
    mb52_row *block = mbc_aligned_alloc(nrows * sizeof(mb52_row));
    if (block == NULL) {
        return finish(set_lanes(st, valid, MBC_LANE_NO_MEMORY), out, bits / 8, NULL, 0, 0,
                      lane_mask);
    }

    /* Slots: lane_of[s] is the request lane in slot s. */
    const unsigned paired = __builtin_popcount(valid) <= 4;
    unsigned lane_of[8] = {0}, slots = 0, ns = 0;
    const mbc_rsa_priv_key *k[8] = {NULL};
    const uint8_t *kin[8] = {NULL};
    uint8_t *kout[8] = {NULL};
    for (unsigned l = 0; l < 8; l++) {
        if ((valid >> l) & 1u) {
            const unsigned s = paired ? ns++ : l;
            lane_of[s] = l;
            k[s] = key[l];
            kin[s] = in[l];
            kout[s] = out[l];
            slots |= 1u << s;
        }
    }

    /* Per-slot key fields; the half passes (p, dp and in) also fill slots
     * 4..7 with q, dq and in again when paired. */
    const struct rsa_mod_consts *pc[8] = {NULL}, *qc[8] = {NULL}, *nc[8] = {NULL};
    const uint64_t *dp[8] = {NULL}, *dq[8] = {NULL}, *qi[8] = {NULL}, *e[8] = {NULL};
    unsigned e_bits = 0;
    for (unsigned s = 0; s < 8; s++) {
        if (k[s] == NULL) {
            continue;
        }
        pc[s] = &k[s]->p;
        qc[s] = &k[s]->q;
        nc[s] = &k[s]->pub.n;
        dp[s] = k[s]->dp;
        dq[s] = k[s]->dq;
        qi[s] = k[s]->qinv_r;
        e[s] = k[s]->pub.e;
        if (k[s]->pub.e_bits > e_bits) {
            e_bits = k[s]->pub.e_bits;
        }
        if (paired) {
            pc[s + 4] = &k[s]->q;
            dp[s + 4] = k[s]->dq;
            kin[s + 4] = kin[s];
        }
    }
    const unsigned half_slots = paired ? slots | slots << 4 : slots;

    struct row_alloc ra = {block};
    struct rsa_crt_args a = {0};
    a.paired = paired;
    gather_mod(&a.p, &ra, kh, pc, half_slots);
    gather_mod(&a.q, &ra, kh, qc, slots);
    gather_mod(&a.n, &ra, kn, nc, slots);
    a.dp = gather_arr(&ra, kh, dp, half_slots);
    a.dq = gather_arr(&ra, kh, dq, slots);
    a.qinv_r = gather_arr(&ra, kh, qi, slots);
    a.e = gather_arr(&ra, kn, e, slots);
    a.e_bits = e_bits;
    a.half_bits = bits / 2;
    mb52_row *x = rows(&ra, kn);
    a.in = x;
    a.out = rows(&ra, kn);
    a.scratch = rows(&ra, rsa_crt_scratch_rows(kh));
    mb52_from_be8(x, kn, kin, bits / 8, half_slots);

    /* The two verdicts (input below n, fault check passed) and the released
     * outputs are the only values derived from secrets made public here. */
    unsigned in_ok = below_mask(x, a.n.m, kn, slots);
    mbc_declassify(&in_ok, sizeof(in_ok));
    a.lanes = in_ok;
    for (unsigned s = 0; s < 8; s++) {
        if ((in_ok >> s) & 1u & (mbc_rsa_test_fault_lanes >> lane_of[s])) {
            a.fault_lanes |= 1u << s;
        }
    }
    if (in_ok != 0) {
        mbc_dispatch_get()->rsa_crt(&a);
    }
    mbc_declassify(&a.ok_lanes, sizeof(a.ok_lanes));
    const unsigned released = in_ok & a.ok_lanes;
    if (released != 0) {
        mb52_to_be8(kout, bits / 8, a.out, kn, released);
    }
    for (unsigned s = 0; s < 8; s++) {
        if ((slots >> s) & 1u) {
            const unsigned code = !((in_ok >> s) & 1u)     ? MBC_LANE_BAD_PARAM
                                  : !((released >> s) & 1u) ? MBC_LANE_FAULT
                                                            : MBC_LANE_OK;
            st = mbc_status_set(st, lane_of[s], code);
            if (code == MBC_LANE_OK) {
                mbc_declassify(kout[s], bits / 8);
            }
        }
    }
    st = finish(st, out, bits / 8, NULL, 0, 0, lane_mask);
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
        return writable ? finish(st, out, bits / 8, NULL, 0, 0, lane_mask) : st;
    }
    const unsigned kn = 2 * rsa_half_digits(bits);
    const size_t nrows = (3 * kn + 1) + 3 * kn + rsa_pub_scratch_rows(kn);
    mb52_row *block = mbc_aligned_alloc(nrows * sizeof(mb52_row));
    if (block == NULL) {
        return finish(set_lanes(st, valid, MBC_LANE_NO_MEMORY), out, bits / 8, NULL, 0, 0,
                      lane_mask);
    }
    struct row_alloc ra = {block};
    const struct rsa_mod_consts *nc[8];
    const uint64_t *e[8];
    unsigned e_bits = 0;
    for (unsigned l = 0; l < 8; l++) {
        const mbc_rsa_pub_key *k = ((valid >> l) & 1u) ? key[l] : NULL;
        nc[l] = k ? &k->n : NULL;
        e[l] = k ? k->e : NULL;
        if (k && k->e_bits > e_bits) {
            e_bits = k->e_bits;
        }
    }
    struct rsa_pub_args a = {0};
    gather_mod(&a.n, &ra, kn, nc, valid);
    a.e = gather_arr(&ra, kn, e, valid);
    a.e_bits = e_bits;
    mb52_row *x = rows(&ra, kn);
    a.in = x;
    a.out = rows(&ra, kn);
    a.scratch = rows(&ra, rsa_pub_scratch_rows(kn));
    mb52_from_be8(x, kn, in, bits / 8, valid);

    unsigned in_ok = below_mask(x, a.n.m, kn, valid);
    st = set_lanes(st, valid & ~in_ok, MBC_LANE_BAD_PARAM);
    a.lanes = in_ok;
    if (in_ok != 0) {
        mbc_dispatch_get()->rsa_pub(&a);
    }
    st = finish(st, out, bits / 8, a.out, kn, in_ok, lane_mask);
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
