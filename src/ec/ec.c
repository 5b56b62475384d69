/*
 * ec.c - the ECDSA, ECDH and key-generation calls: lane checks (through
 * src/lanes.c), gathering keys and inputs into mb52 rows, nonces and
 * private scalars from the OS, the kernel call through the dispatch table,
 * releasing outputs. Baseline x86-64 code.
 */
#include <string.h>

#include "../ct.h"
#include "../dispatch.h"
#include "../lanes.h"
#include "../test_hooks.h"
#include "../wipe.h"
#include "ec_internal.h"

/* ec_call: the arguments of one batch call; the lane checks see it as
 * their context. */
struct ec_call {
    enum ec_op op;
    mbc_curve curve;
    const struct ec_curve *c;  /* NULL: unknown curve */
    uint8_t *const *out;       /* sig (sign), secret (ecdh), d (keygen) */
    uint8_t *const *out2;      /* keygen: the point */
    const uint8_t *const *in;  /* sign, verify: digests; ecdh: peer points */
    const size_t *in_len;      /* sign, verify: digest lengths */
    const uint8_t *const *in2; /* verify: signatures; sign: caller's nonces (NULL: random) */
    const void *const *key;    /* priv keys (sign, ecdh), pub keys (verify) */
};

/* ec_work: the rows of one call (heap: wiped when freed). */
struct ec_work {
    EC_ALIGN mb52_row d[EC_MAX_K];
    mb52_row k[EC_MAX_K];
    mb52_row z[EC_MAX_K];
    mb52_row r[EC_MAX_K];
    mb52_row s[EC_MAX_K];
    mb52_row x[EC_MAX_K];
    mb52_row y[EC_MAX_K];
    struct ec_pt vtab[EC_VT_ENTRIES];
};

/* digest_ok: the digest arrays of a call and lane: NULL_PARAM for a NULL
 * array or a NULL digest of non-zero length. */
static unsigned digest_check(const struct ec_call *c, unsigned lane)
{
    if (c->in == NULL || c->in_len == NULL || (c->in[lane] == NULL && c->in_len[lane] != 0)) {
        return MBC_LANE_NULL_PARAM;
    }
    return MBC_LANE_OK;
}

static unsigned ec_lane_check(const void *ctx, unsigned lane)
{
    const struct ec_call *c = ctx;
    uint64_t x[EC_MAX_K], y[EC_MAX_K];
    switch (c->op) {
    case EC_OP_SIGN:
    case EC_OP_VERIFY: {
        const unsigned code = digest_check(c, lane);
        if (code != MBC_LANE_OK) {
            return code;
        }
        const unsigned kc =
            c->op == EC_OP_SIGN ? mbc_ec_priv_curve(c->key[lane]) : mbc_ec_pub_curve(c->key[lane]);
        return kc == (unsigned)c->curve ? MBC_LANE_OK : MBC_LANE_BAD_PARAM;
    }
    case EC_OP_ECDH:
        if (mbc_ec_priv_curve(c->key[lane]) != (unsigned)c->curve) {
            return MBC_LANE_BAD_PARAM;
        }
        return mbc_ec_parse_point(c->c, c->in[lane], 1 + 2 * (size_t)c->c->len, x, y) == MBC_OK
                   ? MBC_LANE_OK
                   : MBC_LANE_BAD_PARAM;
    default:
        return MBC_LANE_OK;
    }
}

/* op_plan: the thresholds of op's kernel set in impl. */
static const struct mbc_kplan *op_plan(const struct mbc_ec_impl *impl, enum ec_op op)
{
    switch (op) {
    case EC_OP_SIGN:
        return &impl->sign.plan;
    case EC_OP_VERIFY:
        return &impl->verify.plan;
    case EC_OP_ECDH:
        return &impl->ecdh.plan;
    default:
        return &impl->keygen.plan;
    }
}

static mbc_status ec_finish(const struct mbc_lanes *ln, const struct ec_call *c, struct ec_work *w);

/* ec_refuse_overlaps: the aliasing rule (lanes.h) on a call's buffers:
 * sig, secret or d and the point out; digests, peer points, signatures and
 * nonces in. */
static void ec_refuse_overlaps(struct mbc_lanes *ln, const struct ec_call *c)
{
    if (c->c == NULL) {
        return;
    }
    const size_t len = c->c->len, pt = 1 + 2 * len;
    const struct mbc_lane_bufs outs[2] = {
        {(const void *const *)c->out, NULL, c->op == EC_OP_SIGN ? 2 * len : len},
        {(const void *const *)c->out2, NULL, pt},
    };
    const struct mbc_lane_bufs ins[2] = {
        {(const void *const *)c->in, c->op == EC_OP_ECDH ? NULL : c->in_len, pt},
        {(const void *const *)c->in2, NULL, c->op == EC_OP_VERIFY ? 2 * len : len},
    };
    mbc_lanes_refuse_overlaps(ln, outs, 2, ins, 2);
}

/*
 * ec_run: one EC call: the lane checks (arrays: the pointer arrays that
 * must hold no NULL), the plan, one work block, then body on the packed
 * requests (once, or once per request for the one-by-one plan: lanes.h),
 * and the finish. *scrub (when not NULL) becomes the stack scrub the
 * caller owes: MBC_WIPE_EC, or the implementation's one_scrub of the
 * operation when every request ran on its .one kernel.
 */
static mbc_status ec_run(const struct ec_call *c, unsigned lane_mask,
                         const void *const *const arrays[], unsigned num_arrays,
                         mbc_lanes_body_fn *body, size_t *scrub)
{
    /* test hook ec_batch_plan: 2 requests or more take the batch kernel */
    static const struct mbc_kplan batch_plan = {.few_lanes = 0, .one_by_one = 1};
    const struct mbc_kplan *kp =
        mbc_test_hook(ec_batch_plan) != 0 ? &batch_plan : op_plan(mbc_dispatch_get()->ec, c->op);
    struct mbc_lanes ln;
    mbc_lanes_begin(&ln, lane_mask, c->c != NULL, arrays, num_arrays, ec_lane_check, c);
    ec_refuse_overlaps(&ln, c);
    struct ec_work *w = NULL;
    const enum mbc_plan plan = mbc_lanes_pick(&ln, kp);
    if (scrub != NULL) {
        const size_t one = mbc_dispatch_get()->ec->one_scrub[c->op];
        *scrub =
            (plan == MBC_PLAN_ONE || plan == MBC_PLAN_ONE_BY_ONE) && one != 0 ? one : MBC_WIPE_EC;
    }
    if (plan != MBC_PLAN_NONE) {
        w = mbc_aligned_alloc(sizeof(*w));
        if (w == NULL) {
            mbc_lanes_fail(&ln, ln.valid, MBC_LANE_NO_MEMORY);
        } else {
            mbc_lanes_run(&ln, body, c, w);
        }
    }
    return ec_finish(&ln, c, w);
}

/* ec_finish: frees w, zeroes the outputs of failed lanes, the status. */
static mbc_status ec_finish(const struct mbc_lanes *ln, const struct ec_call *c, struct ec_work *w)
{
    mbc_aligned_free(w, sizeof(*w));
    const size_t len = c->c != NULL ? c->c->len : 0;
    uint8_t *const *const outs[2] = {c->out, c->out2};
    const size_t lens[2] = {c->op == EC_OP_SIGN ? 2 * len : len, 1 + 2 * len};
    return mbc_lanes_finish(ln, outs, lens,
                            c->op == EC_OP_VERIFY   ? 0
                            : c->op == EC_OP_KEYGEN ? 2
                                                    : 1);
}

/* slot_ptrs: sp[s] = arr[lane of slot s] + off, NULL beyond the slots. */
static void slot_ptrs(const struct mbc_lanes *ln, const uint8_t *const *arr, size_t off,
                      const uint8_t *sp[MBC_LANES])
{
    for (unsigned s = 0; s < MBC_LANES; s++) {
        sp[s] = s < ln->n ? arr[ln->lane_of[s]] + off : NULL;
    }
}

/* put_lane: lane s of rows r (k rows) becomes the digits d. */
static void put_lane(mb52_row *r, unsigned k, unsigned s, const uint64_t *d)
{
    for (unsigned j = 0; j < k; j++) {
        r[j][s] = d[j];
    }
}

/* get_lane: the digits of lane s of rows r. */
static void get_lane(uint64_t *d, const mb52_row *r, unsigned k, unsigned s)
{
    for (unsigned j = 0; j < k; j++) {
        d[j] = r[j][s];
    }
}

/* gather_keys: rows of the d of the slots' private keys, or of Q's x, y. */
static void gather_d(mb52_row *d, const struct mbc_lanes *ln, const struct ec_call *c)
{
    const uint64_t *col[8] = {NULL};
    for (unsigned s = 0; s < ln->n; s++) {
        col[s] = ((const struct mbc_ec_priv_key *)c->key[ln->lane_of[s]])->d;
    }
    mbc_mb52_gather(d, c->c->k, col, ln->slot_mask);
}

/* gather_digests: z of every slot, the leftmost min(8 len, bits) bits of
 * its digest (FIPS 186-5; bits is a multiple of 8: whole bytes). */
static void gather_digests(mb52_row *z, const struct mbc_lanes *ln, const struct ec_call *c)
{
    uint64_t col[EC_MAX_K];
    for (unsigned s = 0; s < ln->n; s++) {
        const unsigned l = ln->lane_of[s];
        const size_t len = c->in_len[l] < c->c->len ? c->in_len[l] : c->c->len;
        (void)mbc_mb52_from_be(col, c->c->k, len != 0 ? c->in[l] : (const uint8_t *)"", len,
                               c->c->bits);
        put_lane(z, c->c->k, s, col);
    }
}

/* fault_slots: the test hook's lanes, as slots. */
static unsigned fault_slots(const struct mbc_lanes *ln)
{
    unsigned f = 0;
    for (unsigned s = 0; s < ln->n; s++) {
        f |= ((mbc_test_hook(ec_fault_lanes) >> ln->lane_of[s]) & 1u) << s;
    }
    return f;
}

/* release: rows (k rows, below 2^(8 len)) as len big-endian bytes at
 * out[lane] + off for the slots in slots; the bytes become public. */
static void release(const struct mbc_lanes *ln, uint8_t *const *out, size_t off, const mb52_row *r,
                    const struct ec_curve *c, unsigned slots)
{
    uint8_t *sp[MBC_LANES];
    mbc_lanes_slot_outs(ln, out, sp);
    for (unsigned s = 0; s < ln->n; s++) {
        sp[s] += off;
    }
    mbc_mb52_to_be8(sp, c->len, r, c->k, slots);
    for (unsigned s = 0; s < ln->n; s++) {
        if ((slots >> s) & 1u) {
            mbc_declassify(sp[s], c->len);
        }
    }
}

/* draw_slots: a fresh random scalar into lane s of rows r for every slot
 * of slots; returns the slots whose draw failed (no OS randomness). */
static unsigned draw_slots(mb52_row *r, const struct ec_curve *c, unsigned slots)
{
    uint64_t d[MBC_LANES][EC_MAX_K];
    const unsigned failed = mbc_ec_draw_scalars(c, d, slots);
    for (unsigned s = 0; s < MBC_LANES; s++) {
        if ((slots >> s) & 1u) {
            put_lane(r, c->k, s, d[s]);
        }
    }
    mbc_memzero(d, sizeof(d));
    return failed;
}

/* ------------------------------------------------------------------------ */
/* ECDSA signature                                                           */
/* ------------------------------------------------------------------------ */

/* The tries of a random-nonce lane whose r or s came out 0 (probability
 * about 2^-256 per try: a broken generator, not bad luck). */
#define EC_SIGN_TRIES 8

/* sign_body: the signatures of ln's packed requests (ec_run's body). */
static void sign_body(struct mbc_lanes *ln, const void *call, void *work)
{
    const struct ec_call *c = call;
    struct ec_work *w = work;
    const struct ec_curve *cv = c->c;
    void (*kern)(struct ec_sign_args *) = MBC_KSET_FN(&mbc_dispatch_get()->ec->sign, ln->plan);
    gather_d(w->d, ln, c);
    gather_digests(w->z, ln, c);
    unsigned lanes = ln->slot_mask;
    if (c->in2 != NULL) {
        const uint8_t *sk[MBC_LANES];
        slot_ptrs(ln, c->in2, 0, sk);
        mbc_mb52_from_be8(w->k, cv->k, sk, cv->len, ln->slot_mask);
        uint64_t kd[EC_MAX_K];
        for (unsigned s = 0; s < ln->n; s++) {
            get_lane(kd, w->k, cv->k, s);
            uint64_t ok = mbc_ec_scalar_mask(cv, kd);
            mbc_declassify(&ok, sizeof(ok));
            lanes &= ~((unsigned)(ok == 0) << s);
        }
        mbc_memzero(kd, sizeof(kd));
        mbc_lanes_set_slots(ln, ln->slot_mask & ~lanes, MBC_LANE_BAD_PARAM);
    } else {
        const unsigned failed = draw_slots(w->k, cv, lanes);
        mbc_lanes_set_slots(ln, failed, MBC_LANE_UNSUPPORTED);
        lanes &= ~failed;
    }
    struct ec_sign_args a = {cv,    mbc_ec_gtab(cv),         w->k, w->d, w->z, w->r, w->s,
                             lanes, fault_slots(ln) & lanes, 0,    0};
    unsigned ok = 0, zero = 0;
    for (unsigned t = 0; t < EC_SIGN_TRIES && a.lanes != 0; t++) {
        kern(&a);
        mbc_declassify(&a.ok_lanes, sizeof(a.ok_lanes));
        mbc_declassify(&a.zero_lanes, sizeof(a.zero_lanes));
        /* a lane is done when it faulted or got r, s != 0; the others of
         * this run recompute the same values (the kernel is a function of
         * its inputs) */
        ok = (ok & ~a.lanes) | a.ok_lanes;
        zero = (zero & ~a.lanes) | a.zero_lanes;
        a.lanes &= a.ok_lanes & a.zero_lanes;
        a.fault_lanes &= a.lanes;
        if (c->in2 != NULL) {
            break; /* the caller's nonce: r or s == 0 fails the lane */
        }
        const unsigned failed = draw_slots(w->k, cv, a.lanes);
        mbc_lanes_set_slots(ln, failed, MBC_LANE_UNSUPPORTED);
        a.lanes &= ~failed;
        lanes &= ~failed;
    }
    mbc_lanes_set_slots(ln, lanes & ~ok, MBC_LANE_FAULT);
    mbc_lanes_set_slots(ln, lanes & zero,
                        c->in2 != NULL ? MBC_LANE_BAD_PARAM : MBC_LANE_UNSUPPORTED);
    const unsigned done = lanes & ok & ~zero;
    release(ln, c->out, 0, w->r, cv, done);
    release(ln, c->out, cv->len, w->s, cv, done);
}

/* sign_mb8: the work of both signing calls, in frames of its own that the
 * callers then scrub (wipe.h). */
__attribute__((noinline)) static mbc_status sign_mb8(const struct ec_call *c, unsigned lane_mask,
                                                     size_t *scrub)
{
    const void *const *const with_k[3] = {(const void *const *)c->out, c->key,
                                          (const void *const *)c->in2};
    return ec_run(c, lane_mask, with_k, c->in2 != NULL ? 3 : 2, sign_body, scrub);
}

/* sign_call: one signing call; k NULL draws the nonces (the random calls),
 * else the caller's nonces per lane. */
static mbc_status sign_call(uint8_t *const sig[MBC_LANES], const uint8_t *const digest[MBC_LANES],
                            const size_t digest_len[MBC_LANES],
                            const mbc_ec_priv_key *const key[MBC_LANES], const uint8_t *const *k,
                            mbc_curve curve, unsigned lane_mask)
{
    const struct ec_call c = {.op = EC_OP_SIGN,
                              .curve = curve,
                              .c = mbc_ec_curve(curve),
                              .out = sig,
                              .in = digest,
                              .in_len = digest_len,
                              .in2 = k,
                              .key = (const void *const *)key};
    size_t scrub = MBC_WIPE_EC;
    const mbc_status st = sign_mb8(&c, lane_mask, &scrub);
    mbc_wipe_secrets(scrub);
    return st;
}

MBC_API mbc_status mbc_ecdsa_sign_mb8(uint8_t *const sig[MBC_LANES],
                                      const uint8_t *const digest[MBC_LANES],
                                      const size_t digest_len[MBC_LANES],
                                      const mbc_ec_priv_key *const key[MBC_LANES], mbc_curve curve,
                                      unsigned lane_mask)
{
    return sign_call(sig, digest, digest_len, key, NULL, curve, lane_mask);
}

MBC_API mbc_status mbc_ecdsa_sign_k_mb8(uint8_t *const sig[MBC_LANES],
                                        const uint8_t *const digest[MBC_LANES],
                                        const size_t digest_len[MBC_LANES],
                                        const mbc_ec_priv_key *const key[MBC_LANES],
                                        const uint8_t *const k[MBC_LANES], mbc_curve curve,
                                        unsigned lane_mask)
{
    /* a NULL k array: every active lane NULL_PARAM, never a random nonce */
    static const uint8_t *const none[MBC_LANES] = {NULL};
    return sign_call(sig, digest, digest_len, key, k != NULL ? k : none, curve, lane_mask);
}

/* ------------------------------------------------------------------------ */
/* ECDSA verification                                                        */
/* ------------------------------------------------------------------------ */

/* verify_body: the verdicts of ln's packed requests (ec_run's body). */
static void verify_body(struct mbc_lanes *ln, const void *call, void *work)
{
    const struct ec_call *c = call;
    struct ec_work *w = work;
    const struct ec_curve *cv = c->c;
    const uint8_t *sp[MBC_LANES];
    slot_ptrs(ln, c->in2, 0, sp);
    mbc_mb52_from_be8(w->r, cv->k, sp, cv->len, ln->slot_mask);
    slot_ptrs(ln, c->in2, cv->len, sp);
    mbc_mb52_from_be8(w->s, cv->k, sp, cv->len, ln->slot_mask);
    gather_digests(w->z, ln, c);
    unsigned lanes = 0;
    uint64_t rd[EC_MAX_K], sd[EC_MAX_K];
    const uint64_t *qx[8] = {NULL}, *qy[8] = {NULL};
    for (unsigned s = 0; s < ln->n; s++) {
        get_lane(rd, w->r, cv->k, s);
        get_lane(sd, w->s, cv->k, s);
        /* public: r and s out of [1, n-1] fail without a computation */
        if (mbc_ec_scalar_mask(cv, rd) & mbc_ec_scalar_mask(cv, sd)) {
            lanes |= 1u << s;
        }
        const struct mbc_ec_pub_key *k = c->key[ln->lane_of[s]];
        qx[s] = k->x;
        qy[s] = k->y;
    }
    mbc_mb52_gather(w->x, cv->k, qx, ln->slot_mask);
    mbc_mb52_gather(w->y, cv->k, qy, ln->slot_mask);
    struct ec_verify_args a = {cv,   mbc_ec_gtab(cv), w->r,  w->s, w->z, w->x,
                               w->y, w->vtab,         lanes, 0};
    if (lanes != 0) {
        MBC_KSET_FN(&mbc_dispatch_get()->ec->verify, ln->plan)(&a);
    }
    mbc_lanes_set_slots(ln, ln->slot_mask & ~a.ok_lanes, MBC_LANE_SIG_INVALID);
}

MBC_API mbc_status mbc_ecdsa_verify_mb8(const uint8_t *const sig[MBC_LANES],
                                        const uint8_t *const digest[MBC_LANES],
                                        const size_t digest_len[MBC_LANES],
                                        const mbc_ec_pub_key *const key[MBC_LANES], mbc_curve curve,
                                        unsigned lane_mask)
{
    const struct ec_call c = {.op = EC_OP_VERIFY,
                              .curve = curve,
                              .c = mbc_ec_curve(curve),
                              .in = digest,
                              .in_len = digest_len,
                              .in2 = sig,
                              .key = (const void *const *)key};
    const void *const *const arrays[2] = {(const void *const *)sig, c.key};
    return ec_run(&c, lane_mask, arrays, 2, verify_body, NULL);
}

/* ------------------------------------------------------------------------ */
/* ECDH                                                                      */
/* ------------------------------------------------------------------------ */

/* ecdh_body: the shared secrets of ln's packed requests (ec_run's body). */
static void ecdh_body(struct mbc_lanes *ln, const void *call, void *work)
{
    const struct ec_call *c = call;
    struct ec_work *w = work;
    const struct ec_curve *cv = c->c;
    gather_d(w->d, ln, c);
    uint64_t x[EC_MAX_K], y[EC_MAX_K];
    for (unsigned s = 0; s < ln->n; s++) {
        /* checked by the lane check: the format and range are right */
        (void)mbc_ec_parse_point(cv, c->in[ln->lane_of[s]], 1 + 2 * (size_t)cv->len, x, y);
        put_lane(w->x, cv->k, s, x);
        put_lane(w->y, cv->k, s, y);
    }
    struct ec_ecdh_args a = {cv, w->d, w->x, w->y, w->r, w->vtab, ln->slot_mask, fault_slots(ln),
                             0,  0};
    MBC_KSET_FN(&mbc_dispatch_get()->ec->ecdh, ln->plan)(&a);
    mbc_declassify(&a.peer_ok, sizeof(a.peer_ok));
    mbc_declassify(&a.ok_lanes, sizeof(a.ok_lanes));
    mbc_lanes_set_slots(ln, ln->slot_mask & ~a.peer_ok, MBC_LANE_NOT_ON_CURVE);
    mbc_lanes_set_slots(ln, ln->slot_mask & ~a.ok_lanes, MBC_LANE_FAULT);
    release(ln, c->out, 0, w->r, cv, a.ok_lanes);
}

/* ecdh_mb8: mbc_ecdh_mb8's work, in frames of its own that the caller then
 * scrubs (wipe.h). */
__attribute__((noinline)) static mbc_status ecdh_mb8(uint8_t *const secret[MBC_LANES],
                                                     const uint8_t *const peer[MBC_LANES],
                                                     const mbc_ec_priv_key *const key[MBC_LANES],
                                                     mbc_curve curve, unsigned lane_mask,
                                                     size_t *scrub)
{
    const struct ec_call c = {.op = EC_OP_ECDH,
                              .curve = curve,
                              .c = mbc_ec_curve(curve),
                              .out = secret,
                              .in = peer,
                              .key = (const void *const *)key};
    const void *const *const arrays[3] = {(const void *const *)secret, (const void *const *)peer,
                                          c.key};
    return ec_run(&c, lane_mask, arrays, 3, ecdh_body, scrub);
}

MBC_API mbc_status mbc_ecdh_mb8(uint8_t *const secret[MBC_LANES],
                                const uint8_t *const peer[MBC_LANES],
                                const mbc_ec_priv_key *const key[MBC_LANES], mbc_curve curve,
                                unsigned lane_mask)
{
    size_t scrub = MBC_WIPE_EC;
    const mbc_status st = ecdh_mb8(secret, peer, key, curve, lane_mask, &scrub);
    mbc_wipe_secrets(scrub);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Key generation                                                            */
/* ------------------------------------------------------------------------ */

/* keygen_body: the key pairs of ln's packed requests (ec_run's body). */
static void keygen_body(struct mbc_lanes *ln, const void *call, void *work)
{
    const struct ec_call *c = call;
    struct ec_work *w = work;
    const struct ec_curve *cv = c->c;
    const unsigned failed = draw_slots(w->d, cv, ln->slot_mask);
    mbc_lanes_set_slots(ln, failed, MBC_LANE_UNSUPPORTED);
    struct ec_base_args a = {
        cv, mbc_ec_gtab(cv), w->d, w->x, w->y, ln->slot_mask & ~failed, fault_slots(ln) & ~failed,
        0};
    if (a.lanes != 0) {
        MBC_KSET_FN(&mbc_dispatch_get()->ec->keygen, ln->plan)(&a);
    }
    mbc_declassify(&a.ok_lanes, sizeof(a.ok_lanes));
    mbc_lanes_set_slots(ln, a.lanes & ~a.ok_lanes, MBC_LANE_FAULT);
    uint8_t *sp[MBC_LANES];
    mbc_lanes_slot_outs(ln, c->out2, sp);
    for (unsigned s = 0; s < ln->n; s++) {
        if ((a.ok_lanes >> s) & 1u) {
            sp[s][0] = 4;
        }
    }
    release(ln, c->out, 0, w->d, cv, a.ok_lanes);
    release(ln, c->out2, 1, w->x, cv, a.ok_lanes);
    release(ln, c->out2, 1 + cv->len, w->y, cv, a.ok_lanes);
}

/* keygen_mb8: mbc_ec_keygen_mb8's work, in frames of its own that the
 * caller then scrubs (wipe.h). */
__attribute__((noinline)) static mbc_status keygen_mb8(uint8_t *const d[MBC_LANES],
                                                       uint8_t *const point[MBC_LANES],
                                                       mbc_curve curve, unsigned lane_mask,
                                                       size_t *scrub)
{
    const struct ec_call c = {
        .op = EC_OP_KEYGEN, .curve = curve, .c = mbc_ec_curve(curve), .out = d, .out2 = point};
    const void *const *const arrays[2] = {(const void *const *)d, (const void *const *)point};
    return ec_run(&c, lane_mask, arrays, 2, keygen_body, scrub);
}

MBC_API mbc_status mbc_ec_keygen_mb8(uint8_t *const d[MBC_LANES], uint8_t *const point[MBC_LANES],
                                     mbc_curve curve, unsigned lane_mask)
{
    size_t scrub = MBC_WIPE_EC;
    const mbc_status st = keygen_mb8(d, point, curve, lane_mask, &scrub);
    mbc_wipe_secrets(scrub);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Single requests                                                           */
/* ------------------------------------------------------------------------ */

static mbc_err lane0(mbc_status st)
{
    return mbc_lane_code_to_err(mbc_lane_code(st, 0));
}

MBC_API mbc_err mbc_ecdsa_sign(uint8_t *sig, const uint8_t *digest, size_t digest_len,
                               const mbc_ec_priv_key *key)
{
    return mbc_ecdsa_sign_k(sig, digest, digest_len, key, NULL);
}

MBC_API mbc_err mbc_ecdsa_sign_k(uint8_t *sig, const uint8_t *digest, size_t digest_len,
                                 const mbc_ec_priv_key *key, const uint8_t *k)
{
    if (sig == NULL || key == NULL || (digest == NULL && digest_len != 0)) {
        return MBC_ERR_NULL_PARAM;
    }
    const mbc_curve curve = mbc_ec_priv_key_curve(key);
    if (curve == 0) {
        return MBC_ERR_BAD_PARAM;
    }
    uint8_t *const s[8] = {sig};
    const uint8_t *const dg[8] = {digest};
    const size_t dl[8] = {digest_len};
    const mbc_ec_priv_key *const ks[8] = {key};
    const uint8_t *const kk[8] = {k};
    return lane0(k != NULL ? mbc_ecdsa_sign_k_mb8(s, dg, dl, ks, kk, curve, 1)
                           : mbc_ecdsa_sign_mb8(s, dg, dl, ks, curve, 1));
}

MBC_API mbc_err mbc_ecdsa_verify(const uint8_t *sig, const uint8_t *digest, size_t digest_len,
                                 const mbc_ec_pub_key *key)
{
    if (sig == NULL || key == NULL || (digest == NULL && digest_len != 0)) {
        return MBC_ERR_NULL_PARAM;
    }
    const mbc_curve curve = mbc_ec_pub_key_curve(key);
    if (curve == 0) {
        return MBC_ERR_BAD_PARAM;
    }
    const uint8_t *const s[8] = {sig};
    const uint8_t *const dg[8] = {digest};
    const size_t dl[8] = {digest_len};
    const mbc_ec_pub_key *const ks[8] = {key};
    return lane0(mbc_ecdsa_verify_mb8(s, dg, dl, ks, curve, 1));
}

MBC_API mbc_err mbc_ecdh(uint8_t *secret, const uint8_t *peer, size_t peer_len,
                         const mbc_ec_priv_key *key)
{
    if (secret == NULL || peer == NULL || key == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    const struct ec_curve *c = mbc_ec_curve(mbc_ec_priv_key_curve(key));
    if (c == NULL) {
        return MBC_ERR_BAD_PARAM;
    }
    uint64_t x[EC_MAX_K], y[EC_MAX_K];
    const mbc_err err =
        peer_len == 0 ? MBC_ERR_POINT_FORMAT : mbc_ec_parse_point(c, peer, peer_len, x, y);
    if (err != MBC_OK) {
        memset(secret, 0, c->len);
        return err;
    }
    uint8_t *const s[8] = {secret};
    const uint8_t *const p[8] = {peer};
    const mbc_ec_priv_key *const ks[8] = {key};
    return lane0(mbc_ecdh_mb8(s, p, ks, c->id, 1));
}

MBC_API mbc_err mbc_ec_keygen(uint8_t *d, uint8_t *point, mbc_curve curve)
{
    if (d == NULL || point == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    if (mbc_ec_curve(curve) == NULL) {
        return MBC_ERR_BAD_PARAM;
    }
    uint8_t *const dd[8] = {d};
    uint8_t *const pp[8] = {point};
    return lane0(mbc_ec_keygen_mb8(dd, pp, curve, 1));
}
