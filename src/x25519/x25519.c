/*
 * x25519.c - the X25519 calls (RFC 7748): lane checks and plan (src/lanes.c),
 * clamping and conversion of the little-endian strings into mb52 rows, the
 * kernel call through the dispatch table, and the per-lane status. Baseline
 * x86-64 code.
 */
#include <string.h>

#include "../ct.h"
#include "../dispatch.h"
#include "../lanes.h"
#include "../wipe.h"
#include "x25519_kern.h"

#define LEN MBC_X25519_LEN

/* x25519_call: the arguments of one derive (u != NULL) or public-key
 * (u == NULL) call. */
struct x25519_call {
    uint8_t *const *out;
    const uint8_t *const *scalar;
    const uint8_t *const *u;
};

/*
 * to_rows: the 32-byte little-endian strings src[s] of slots s < n into r
 * (5 rows; other lanes zero). A scalar is clamped (bits 0..2 and 255
 * cleared, bit 254 set; RFC 7748 section 5), a u-coordinate loses bit 255;
 * both into a copy, the caller's bytes stay as they are. The copies are
 * wiped.
 */
static void to_rows(mb52_row *r, const uint8_t *const src[MBC_LANES], unsigned n, int scalar)
{
    uint8_t be[MBC_LANES][LEN];
    const uint8_t *bp[MBC_LANES];
    for (unsigned s = 0; s < n; s++) {
        for (unsigned i = 0; i < LEN; i++) {
            be[s][LEN - 1 - i] = src[s][i];
        }
        if (scalar) {
            be[s][LEN - 1] &= 248;
            be[s][0] = (uint8_t)((be[s][0] & 127) | 64);
        } else {
            be[s][0] &= 127;
        }
        bp[s] = be[s];
    }
    mbc_mb52_from_be8(r, X25519_DIGITS, bp, LEN, (1u << n) - 1u);
    mbc_memzero(be, sizeof(be));
}

/* from_rows: the slots of mask of r (canonical) into out[s], little-endian. */
static void from_rows(uint8_t *const out[MBC_LANES], const mb52_row *r, unsigned mask)
{
    uint8_t be[MBC_LANES][LEN];
    uint8_t *bp[MBC_LANES] = {NULL};
    for (unsigned s = 0; s < MBC_LANES; s++) {
        bp[s] = be[s];
    }
    mbc_mb52_to_be8(bp, LEN, r, X25519_DIGITS, mask);
    for (unsigned s = 0; s < MBC_LANES; s++) {
        if ((mask >> s) & 1u) {
            for (unsigned i = 0; i < LEN; i++) {
                out[s][i] = be[s][LEN - 1 - i];
            }
        }
    }
    mbc_memzero(be, sizeof(be));
}

/*
 * x25519_body: the derive or public-key results of ln's packed requests
 * (mbc_lanes_run's body), on the kernel of ln's plan. Derive: an all-zero
 * result is MBC_LANE_LOW_ORDER (RFC 7748 section 6.1), that lane's output
 * zeroed (by the finish).
 */
static void x25519_body(struct mbc_lanes *ln, const void *call, void *work)
{
    (void)work;
    const struct x25519_call *c = call;
    const struct mbc_x25519_impl *impl = mbc_dispatch_get()->x25519;
    const int derive = c->u != NULL;
    const uint8_t *sk[MBC_LANES] = {NULL}, *su[MBC_LANES] = {NULL};
    for (unsigned s = 0; s < ln->n; s++) {
        sk[s] = c->scalar[ln->lane_of[s]];
        su[s] = derive ? c->u[ln->lane_of[s]] : NULL;
    }
    MBC_ALIGN64 mb52_row k[X25519_DIGITS], u[X25519_DIGITS], r[X25519_DIGITS];
    to_rows(k, sk, ln->n, 1);
    if (derive) {
        to_rows(u, su, ln->n, 0);
    }
    struct x25519_args a = {k, u, r, 0};
    MBC_KSET_FN(derive ? &impl->ladder : &impl->pubkey, ln->plan)(&a);
    /* The verdict and the released results are the only values derived
     * from the scalars made public here. */
    unsigned ok = ln->slot_mask;
    if (derive) {
        ok &= a.nonzero;
        mbc_declassify(&ok, sizeof(ok));
        mbc_lanes_set_slots(ln, ln->slot_mask & ~ok, MBC_LANE_LOW_ORDER);
    }
    uint8_t *sout[MBC_LANES];
    mbc_lanes_slot_outs(ln, c->out, sout);
    from_rows(sout, r, ok);
    for (unsigned s = 0; s < ln->n; s++) {
        if ((ok >> s) & 1u) {
            mbc_declassify(sout[s], LEN);
        }
    }
    mbc_memzero(k, sizeof(k));
    mbc_memzero(r, sizeof(r));
}

/* x25519_run: one derive or public-key call: the lane checks, the plan
 * (lanes.h), the body on the packed requests, the finish. *scrub: the stack
 * bytes the caller must scrub after it (wipe.h), by the plan (public): the
 * single-request kernels of some implementations write less deep than the
 * batch kernels. */
__attribute__((noinline)) static mbc_status x25519_run(const struct x25519_call *c,
                                                       unsigned lane_mask, size_t *scrub)
{
    const struct mbc_x25519_impl *impl = mbc_dispatch_get()->x25519;
    const int derive = c->u != NULL;
    const void *const *const arrays[3] = {
        (const void *const *)c->out, (const void *const *)c->scalar, (const void *const *)c->u};
    struct mbc_lanes ln;
    mbc_lanes_begin(&ln, lane_mask, 1, arrays, derive ? 3 : 2, NULL, NULL);
    const struct mbc_lane_bufs out = {(const void *const *)c->out, NULL, LEN};
    const struct mbc_lane_bufs ins[2] = {{(const void *const *)c->scalar, NULL, LEN},
                                         {(const void *const *)c->u, NULL, LEN}};
    mbc_lanes_refuse_overlaps(&ln, &out, 1, ins, derive ? 2 : 1);
    const enum mbc_plan plan =
        mbc_lanes_pick(&ln, derive ? &impl->ladder.plan : &impl->pubkey.plan);
    if (plan == MBC_PLAN_ONE || plan == MBC_PLAN_ONE_BY_ONE) {
        *scrub = impl->one_scrub;
    }
    mbc_lanes_run(&ln, x25519_body, c, NULL);
    uint8_t *const *const outs[1] = {c->out};
    const size_t lens[1] = {LEN};
    return mbc_lanes_finish(&ln, outs, lens, 1);
}

MBC_API mbc_status mbc_x25519_mb8(uint8_t *const out[MBC_LANES],
                                  const uint8_t *const scalar[MBC_LANES],
                                  const uint8_t *const u[MBC_LANES], unsigned lane_mask)
{
    /* a NULL u array must still read as NULL_PARAM, not as a public-key call */
    static const uint8_t *const no_u[MBC_LANES] = {NULL};
    const struct x25519_call c = {out, scalar, u != NULL ? u : no_u};
    size_t scrub = MBC_WIPE_X25519;
    const mbc_status st = x25519_run(&c, lane_mask, &scrub);
    mbc_wipe_secrets(scrub);
    return st;
}

MBC_API mbc_status mbc_x25519_public_key_mb8(uint8_t *const out[MBC_LANES],
                                             const uint8_t *const scalar[MBC_LANES],
                                             unsigned lane_mask)
{
    const struct x25519_call c = {out, scalar, NULL};
    size_t scrub = MBC_WIPE_X25519;
    const mbc_status st = x25519_run(&c, lane_mask, &scrub);
    mbc_wipe_secrets(scrub);
    return st;
}

/* keygen_mb8: the work of mbc_x25519_keygen_mb8, in frames of its own that
 * the caller then scrubs (wipe.h). */
__attribute__((noinline)) static mbc_status keygen_mb8(uint8_t *const priv[MBC_LANES],
                                                       uint8_t *const pub[MBC_LANES],
                                                       unsigned lane_mask, size_t *scrub)
{
    const void *const *const arrays[2] = {(const void *const *)priv, (const void *const *)pub};
    struct mbc_lanes ln;
    mbc_lanes_begin(&ln, lane_mask, 1, arrays, 2, NULL, NULL);
    const struct mbc_lane_bufs bufs[2] = {{(const void *const *)priv, NULL, LEN},
                                          {(const void *const *)pub, NULL, LEN}};
    mbc_lanes_refuse_overlaps(&ln, bufs, 2, NULL, 0);
    if (ln.valid != 0) {
        uint8_t rnd[MBC_LANES][LEN];
        const unsigned n = (unsigned)__builtin_popcount(ln.valid);
        if (mbc_random_bytes(rnd, (size_t)n * LEN) != MBC_OK) {
            mbc_lanes_fail(&ln, ln.valid, MBC_LANE_UNSUPPORTED);
        } else {
            /* the private keys are stored clamped: using them clamps
             * again and changes nothing */
            unsigned s = 0;
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if ((ln.valid >> l) & 1u) {
                    memcpy(priv[l], rnd[s++], LEN);
                    priv[l][0] &= 248;
                    priv[l][LEN - 1] = (uint8_t)((priv[l][LEN - 1] & 127) | 64);
                    mbc_classify(priv[l], LEN);
                }
            }
            const struct x25519_call c = {pub, (const uint8_t *const *)priv, NULL};
            const mbc_status st = x25519_run(&c, ln.valid, scrub);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if ((ln.valid >> l) & 1u) {
                    mbc_lanes_fail(&ln, 1u << l, mbc_lane_code(st, l));
                    mbc_declassify(priv[l], LEN);
                }
            }
        }
        mbc_memzero(rnd, sizeof(rnd));
    }
    uint8_t *const *const outs[2] = {priv, pub};
    const size_t lens[2] = {LEN, LEN};
    return mbc_lanes_finish(&ln, outs, lens, 2);
}

MBC_API mbc_status mbc_x25519_keygen_mb8(uint8_t *const priv[MBC_LANES],
                                         uint8_t *const pub[MBC_LANES], unsigned lane_mask)
{
    size_t scrub = MBC_WIPE_X25519;
    const mbc_status st = keygen_mb8(priv, pub, lane_mask, &scrub);
    mbc_wipe_secrets(scrub);
    return st;
}

MBC_API mbc_err mbc_x25519(uint8_t out[MBC_X25519_LEN], const uint8_t scalar[MBC_X25519_LEN],
                           const uint8_t u[MBC_X25519_LEN])
{
    if (out == NULL || scalar == NULL || u == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    uint8_t *const o[MBC_LANES] = {out};
    const uint8_t *const k[MBC_LANES] = {scalar};
    const uint8_t *const p[MBC_LANES] = {u};
    return mbc_lane_code_to_err(mbc_lane_code(mbc_x25519_mb8(o, k, p, 1), 0));
}

MBC_API mbc_err mbc_x25519_public_key(uint8_t out[MBC_X25519_LEN],
                                      const uint8_t scalar[MBC_X25519_LEN])
{
    if (out == NULL || scalar == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    uint8_t *const o[MBC_LANES] = {out};
    const uint8_t *const k[MBC_LANES] = {scalar};
    return mbc_lane_code_to_err(mbc_lane_code(mbc_x25519_public_key_mb8(o, k, 1), 0));
}

MBC_API mbc_err mbc_x25519_keygen(uint8_t priv[MBC_X25519_LEN], uint8_t pub[MBC_X25519_LEN])
{
    if (priv == NULL || pub == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    uint8_t *const s[MBC_LANES] = {priv};
    uint8_t *const p[MBC_LANES] = {pub};
    return mbc_lane_code_to_err(mbc_lane_code(mbc_x25519_keygen_mb8(s, p, 1), 0));
}
