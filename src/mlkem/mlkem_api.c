/*
 * mlkem_api.c - the ML-KEM calls: lane checks and plan (src/lanes.c), the
 * batch algorithms of mlkem.c on the packed requests, the per-lane
 * verdicts, the randomness of the random forms, the single-request calls.
 * Baseline x86-64 code.
 */
#include <string.h>

#include "../ct.h"
#include "../dispatch.h"
#include "../lanes.h"
#include "../wipe.h"
#include "mlkem_internal.h"

static size_t wipe_bytes(unsigned lane_mask)
{
    return MLKEM_WIPE_BASE + (size_t)__builtin_popcount(lane_mask & 0xFFu) * MLKEM_WIPE_PER_REQ;
}

enum mlkem_op { OP_KEYGEN, OP_ENCAPS, OP_DECAPS };

/* mlkem_call: the arguments of one _mb8 call (the arrays not used by op
 * NULL): keygen out1 = ek, out2 = dk, in1 = seed; encaps out1 = ct, out2 =
 * ss, in1 = ek, in2 = m; decaps out1 = ss, in1 = ct, in2 = dk. */
struct mlkem_call {
    enum mlkem_op op;
    const struct mlkem_params *p;
    uint8_t *const *out1, *const *out2;
    const uint8_t *const *in1, *const *in2;
};

/* out_lens: the lengths of op's outputs under p. */
static void out_lens(const struct mlkem_call *c, size_t lens[2])
{
    switch (c->op) {
    case OP_KEYGEN:
        lens[0] = c->p->ek_len;
        lens[1] = c->p->dk_len;
        break;
    case OP_ENCAPS:
        lens[0] = c->p->ct_len;
        lens[1] = MBC_MLKEM_SS_LEN;
        break;
    case OP_DECAPS:
        lens[0] = MBC_MLKEM_SS_LEN;
        lens[1] = 0;
        break;
    }
}

/* mlkem_body: the batch of ln's packed requests (mbc_lanes_run's body). */
static void mlkem_body(struct mbc_lanes *ln, const void *call, void *work)
{
    (void)work;
    const struct mlkem_call *c = call;
    const struct mbc_mlkem_impl *impl = mbc_dispatch_get()->mlkem;
    const unsigned n = ln->n;
    struct mlkem_state st[n];
    unsigned ok = ln->slot_mask;
    switch (c->op) {
    case OP_KEYGEN: {
        struct mlkem_keygen_req r[MBC_LANES];
        for (unsigned s = 0; s < n; s++) {
            const unsigned l = ln->lane_of[s];
            r[s] = (struct mlkem_keygen_req){c->in1[l], c->out1[l], c->out2[l]};
        }
        mbc_mlkem_keygen_batch(impl, c->p, r, n, st);
        break;
    }
    case OP_ENCAPS: {
        struct mlkem_encaps_req r[MBC_LANES];
        for (unsigned s = 0; s < n; s++) {
            const unsigned l = ln->lane_of[s];
            r[s] = (struct mlkem_encaps_req){c->in1[l], c->in2[l], c->out1[l], c->out2[l]};
        }
        ok &= mbc_mlkem_encaps_batch(impl, c->p, r, n, st);
        break;
    }
    case OP_DECAPS: {
        struct mlkem_decaps_req r[MBC_LANES];
        for (unsigned s = 0; s < n; s++) {
            const unsigned l = ln->lane_of[s];
            r[s] = (struct mlkem_decaps_req){c->in1[l], c->in2[l], c->out1[l]};
        }
        ok &= mbc_mlkem_decaps_batch(impl, c->p, r, n, st);
        break;
    }
    }
    mbc_memzero(st, sizeof(st));
    /* the key checks' verdicts (of public data: ek, dk's H(ek)) and the
     * released outputs are made public here */
    mbc_declassify(&ok, sizeof(ok));
    mbc_lanes_set_slots(ln, ln->slot_mask & ~ok, MBC_LANE_BAD_PARAM);
    size_t lens[2];
    out_lens(c, lens);
    for (unsigned s = 0; s < n; s++) {
        const unsigned l = ln->lane_of[s];
        if ((ok >> s) & 1u) {
            mbc_declassify(c->out1[l], lens[0]);
            if (lens[1] != 0) {
                mbc_declassify(c->out2[l], lens[1]);
            }
        }
    }
}

/* The plan: every valid request in one pass of the batch code. Measured
 * (mbc_bench mlkem768 --concurrency 1,2,4,8, avx512 tier, Intel family 6
 * model 207): a batch of 8 gives 1.8x (decaps) to 2.2x (keygen) the rate
 * of 8 single calls, and a batch of 2 already 1.4x that of 2 singles: the
 * requests' SHAKE streams fill the 4- and 8-way Keccak groups. Again on AMD
 * family 26 model 2 (Zen 5), rdtsc per request of calls of n requests
 * against n single calls, since single requests sample their matrix beside
 * H(ek): avx512 1.14x (encaps, n = 2) to 1.99x (keygen, n = 8), avx2 1.00x
 * (encaps, n = 2) to 1.6x: no request count is better served one by one. */
static const struct mbc_kplan mlkem_plan = {.few_lanes = 0, .one_by_one = 0};

/* mlkem_run: one _mb8 call: lane checks, plan, body, finish. overlaps_checked:
 * the caller (random_run) has refused the lanes whose buffers overlap, and
 * the only input it adds is its own random bytes: the 8x8 pairwise check
 * (a few percent of an 8-lane call) is not made twice. */
__attribute__((noinline)) static mbc_status mlkem_run(const struct mlkem_call *c,
                                                      unsigned lane_mask, int overlaps_checked)
{
    const void *const *const arrays[4] = {
        (const void *const *)c->out1, (const void *const *)c->in1,
        c->op == OP_DECAPS ? (const void *const *)c->in2 : (const void *const *)c->out2,
        (const void *const *)(c->op == OP_KEYGEN ? c->in1 : c->in2)};
    struct mbc_lanes ln;
    mbc_lanes_begin(&ln, lane_mask, c->p != NULL, arrays, 4, NULL, NULL);
    size_t lens[2] = {0, 0}, in_lens[2] = {0, 0};
    if (c->p != NULL) {
        out_lens(c, lens);
    }
    if (c->p != NULL && !overlaps_checked) {
        switch (c->op) {
        case OP_KEYGEN:
            in_lens[0] = MBC_MLKEM_SEED_LEN;
            break;
        case OP_ENCAPS:
            in_lens[0] = c->p->ek_len;
            in_lens[1] = MBC_MLKEM_MSG_LEN;
            break;
        case OP_DECAPS:
            in_lens[0] = c->p->ct_len;
            in_lens[1] = c->p->dk_len;
            break;
        }
        const struct mbc_lane_bufs outs[2] = {{(const void *const *)c->out1, NULL, lens[0]},
                                              {(const void *const *)c->out2, NULL, lens[1]}};
        const struct mbc_lane_bufs ins[2] = {{(const void *const *)c->in1, NULL, in_lens[0]},
                                             {(const void *const *)c->in2, NULL, in_lens[1]}};
        mbc_lanes_refuse_overlaps(&ln, outs, c->op == OP_DECAPS ? 1 : 2, ins,
                                  c->op == OP_KEYGEN ? 1 : 2);
    }
    mbc_lanes_pick(&ln, &mlkem_plan);
    mbc_lanes_run(&ln, mlkem_body, c, NULL);
    uint8_t *const *const outs[2] = {c->out1, c->out2};
    return mbc_lanes_finish(&ln, outs, lens, c->op == OP_DECAPS ? 1 : 2);
}

MBC_API mbc_status mbc_mlkem_keygen_seed_mb8(mbc_mlkem_param param, uint8_t *const ek[MBC_LANES],
                                             uint8_t *const dk[MBC_LANES],
                                             const uint8_t *const seed[MBC_LANES],
                                             unsigned lane_mask)
{
    const struct mlkem_call c = {OP_KEYGEN, mbc_mlkem_params((unsigned)param), ek, dk, seed, NULL};
    const mbc_status st = mlkem_run(&c, lane_mask, 0);
    mbc_wipe_secrets(wipe_bytes(lane_mask));
    return st;
}

MBC_API mbc_status mbc_mlkem_encaps_m_mb8(mbc_mlkem_param param, uint8_t *const ct[MBC_LANES],
                                          uint8_t *const ss[MBC_LANES],
                                          const uint8_t *const ek[MBC_LANES],
                                          const uint8_t *const m[MBC_LANES], unsigned lane_mask)
{
    const struct mlkem_call c = {OP_ENCAPS, mbc_mlkem_params((unsigned)param), ct, ss, ek, m};
    const mbc_status st = mlkem_run(&c, lane_mask, 0);
    mbc_wipe_secrets(wipe_bytes(lane_mask));
    return st;
}

MBC_API mbc_status mbc_mlkem_decaps_mb8(mbc_mlkem_param param, uint8_t *const ss[MBC_LANES],
                                        const uint8_t *const ct[MBC_LANES],
                                        const uint8_t *const dk[MBC_LANES], unsigned lane_mask)
{
    const struct mlkem_call c = {OP_DECAPS, mbc_mlkem_params((unsigned)param), ss, NULL, ct, dk};
    const mbc_status st = mlkem_run(&c, lane_mask, 0);
    mbc_wipe_secrets(wipe_bytes(lane_mask));
    return st;
}

/*
 * random_run: the random forms: the lane checks of c without its random
 * input (c->in1 for keygen, c->in2 for encaps, which must be NULL here),
 * then len random bytes per valid lane as that input, then c's run.
 */
__attribute__((noinline)) static mbc_status random_run(struct mlkem_call c, size_t len,
                                                       unsigned lane_mask)
{
    const int keygen = c.op == OP_KEYGEN;
    const void *const *const arrays[3] = {(const void *const *)c.out1, (const void *const *)c.out2,
                                          (const void *const *)c.in1};
    struct mbc_lanes ln;
    mbc_lanes_begin(&ln, lane_mask, c.p != NULL, arrays, keygen ? 2 : 3, NULL, NULL);
    size_t lens[2] = {0, 0};
    if (c.p != NULL) {
        out_lens(&c, lens);
        const struct mbc_lane_bufs outs[2] = {{(const void *const *)c.out1, NULL, lens[0]},
                                              {(const void *const *)c.out2, NULL, lens[1]}};
        const struct mbc_lane_bufs ins[1] = {{(const void *const *)c.in1, NULL, c.p->ek_len}};
        mbc_lanes_refuse_overlaps(&ln, outs, 2, ins, keygen ? 0 : 1);
    }
    if (ln.valid != 0) {
        uint8_t rnd[MBC_LANES * MBC_MLKEM_SEED_LEN];
        const uint8_t *rp[MBC_LANES] = {NULL};
        const unsigned n = (unsigned)__builtin_popcount(ln.valid);
        if (mbc_random_bytes(rnd, n * len) != MBC_OK) {
            mbc_lanes_fail(&ln, ln.valid, MBC_LANE_UNSUPPORTED);
        } else {
            unsigned s = 0;
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if ((ln.valid >> l) & 1u) {
                    rp[l] = rnd + len * s++;
                }
            }
            if (keygen) {
                c.in1 = rp;
            } else {
                c.in2 = rp;
            }
            const mbc_status st = mlkem_run(&c, ln.valid, 1);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if ((ln.valid >> l) & 1u) {
                    mbc_lanes_fail(&ln, 1u << l, mbc_lane_code(st, l));
                }
            }
        }
        mbc_memzero(rnd, sizeof(rnd));
    }
    uint8_t *const *const outs[2] = {c.out1, c.out2};
    return mbc_lanes_finish(&ln, outs, lens, 2);
}

MBC_API mbc_status mbc_mlkem_keygen_mb8(mbc_mlkem_param param, uint8_t *const ek[MBC_LANES],
                                        uint8_t *const dk[MBC_LANES], unsigned lane_mask)
{
    const struct mlkem_call c = {OP_KEYGEN, mbc_mlkem_params((unsigned)param), ek, dk, NULL, NULL};
    const mbc_status st = random_run(c, MBC_MLKEM_SEED_LEN, lane_mask);
    mbc_wipe_secrets(wipe_bytes(lane_mask));
    return st;
}

MBC_API mbc_status mbc_mlkem_encaps_mb8(mbc_mlkem_param param, uint8_t *const ct[MBC_LANES],
                                        uint8_t *const ss[MBC_LANES],
                                        const uint8_t *const ek[MBC_LANES], unsigned lane_mask)
{
    const struct mlkem_call c = {OP_ENCAPS, mbc_mlkem_params((unsigned)param), ct, ss, ek, NULL};
    const mbc_status st = random_run(c, MBC_MLKEM_MSG_LEN, lane_mask);
    mbc_wipe_secrets(wipe_bytes(lane_mask));
    return st;
}

/* one_err: the mbc_err of lane 0 of st. */
static mbc_err one_err(mbc_status st)
{
    return mbc_lane_code_to_err(mbc_lane_code(st, 0));
}

MBC_API mbc_err mbc_mlkem_keygen_seed(mbc_mlkem_param param, uint8_t *ek, uint8_t *dk,
                                      const uint8_t *seed, size_t seed_len)
{
    if (ek == NULL || dk == NULL || seed == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    if (mbc_mlkem_params((unsigned)param) == NULL || seed_len != MBC_MLKEM_SEED_LEN) {
        return MBC_ERR_BAD_PARAM;
    }
    uint8_t *const e[MBC_LANES] = {ek};
    uint8_t *const d[MBC_LANES] = {dk};
    const uint8_t *const sd[MBC_LANES] = {seed};
    return one_err(mbc_mlkem_keygen_seed_mb8(param, e, d, sd, 1));
}

MBC_API mbc_err mbc_mlkem_keygen(mbc_mlkem_param param, uint8_t *ek, uint8_t *dk)
{
    if (ek == NULL || dk == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    uint8_t *const e[MBC_LANES] = {ek};
    uint8_t *const d[MBC_LANES] = {dk};
    return one_err(mbc_mlkem_keygen_mb8(param, e, d, 1));
}

MBC_API mbc_err mbc_mlkem_encaps_m(mbc_mlkem_param param, uint8_t *ct, uint8_t ss[MBC_MLKEM_SS_LEN],
                                   const uint8_t *ek, size_t ek_len,
                                   const uint8_t m[MBC_MLKEM_MSG_LEN])
{
    if (ct == NULL || ss == NULL || ek == NULL || m == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    const struct mlkem_params *p = mbc_mlkem_params((unsigned)param);
    if (p == NULL || ek_len != p->ek_len) {
        return MBC_ERR_BAD_PARAM;
    }
    uint8_t *const c[MBC_LANES] = {ct};
    uint8_t *const s[MBC_LANES] = {ss};
    const uint8_t *const e[MBC_LANES] = {ek};
    const uint8_t *const mm[MBC_LANES] = {m};
    return one_err(mbc_mlkem_encaps_m_mb8(param, c, s, e, mm, 1));
}

MBC_API mbc_err mbc_mlkem_encaps(mbc_mlkem_param param, uint8_t *ct, uint8_t ss[MBC_MLKEM_SS_LEN],
                                 const uint8_t *ek, size_t ek_len)
{
    if (ct == NULL || ss == NULL || ek == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    const struct mlkem_params *p = mbc_mlkem_params((unsigned)param);
    if (p == NULL || ek_len != p->ek_len) {
        return MBC_ERR_BAD_PARAM;
    }
    uint8_t *const c[MBC_LANES] = {ct};
    uint8_t *const s[MBC_LANES] = {ss};
    const uint8_t *const e[MBC_LANES] = {ek};
    return one_err(mbc_mlkem_encaps_mb8(param, c, s, e, 1));
}

MBC_API mbc_err mbc_mlkem_decaps(mbc_mlkem_param param, uint8_t ss[MBC_MLKEM_SS_LEN],
                                 const uint8_t *ct, size_t ct_len, const uint8_t *dk, size_t dk_len)
{
    if (ss == NULL || ct == NULL || dk == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    const struct mlkem_params *p = mbc_mlkem_params((unsigned)param);
    if (p == NULL || ct_len != p->ct_len || dk_len != p->dk_len) {
        return MBC_ERR_BAD_PARAM;
    }
    uint8_t *const s[MBC_LANES] = {ss};
    const uint8_t *const c[MBC_LANES] = {ct};
    const uint8_t *const d[MBC_LANES] = {dk};
    return one_err(mbc_mlkem_decaps_mb8(param, s, c, d, 1));
}
