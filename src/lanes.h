/*
 * lanes.h - the per-lane glue of every _mb8 call (src/lanes.c), whatever the
 * family: the first pass over the lanes (EMPTY, NULL_PARAM, the family's own
 * checks), the first-error-wins codes, the packing of the valid requests
 * into slots 0..n-1 for the kernels, the plan (one batch, one by one, or the
 * single-request path), and the end (outputs of failed lanes zeroed).
 * Baseline code; lane occupancy and validity are public.
 *
 * A call goes:
 *   struct mbc_lanes ln;
 *   mbc_lanes_begin(&ln, lane_mask, call_ok, arrays, n, check, ctx);
 *   if (mbc_lanes_pick(&ln, &impl->op.plan) != MBC_PLAN_NONE) { ...allocate work... }
 *   mbc_lanes_run(&ln, body, call, work);
 *   ... in body: MBC_KSET_FN(&impl->op, ln->plan), and
 *       mbc_lanes_set_slots(ln, slots, code) as verdicts come in ...
 *   return mbc_lanes_finish(&ln, outs, lens, num_outs);
 */
#ifndef MBC_SRC_LANES_H
#define MBC_SRC_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

struct mbc_lanes {
    mbc_status st;               /* the codes so far; a lane's first error stays */
    unsigned mask;               /* the call's lane_mask */
    unsigned valid;              /* lanes that passed every check so far */
    int writable;                /* 0 when the call itself is malformed: no output is touched */
    unsigned n;                  /* requests packed into slots (mbc_lanes_pack) */
    unsigned slot_mask;          /* (1 << n) - 1 */
    unsigned lane_of[MBC_LANES]; /* the call's lane of slot s */
    int plan;                    /* enum mbc_plan: what mbc_lanes_plan chose */
};

/* mbc_lane_check_fn: MBC_LANE_OK or the code of lane of a call's context
 * (wrong key type or size, bad length, ...). Only called for lanes whose
 * pointers are all non-NULL. */
typedef unsigned mbc_lane_check_fn(const void *ctx, unsigned lane);

/*
 * mbc_lanes_begin: the first pass. A lane_mask above 0xFF makes every lane
 * BAD_PARAM and the call unwritable; call_ok == 0 (an unsupported size or
 * curve: the length of the outputs is unknown) makes every active lane
 * BAD_PARAM, unwritable too. Otherwise: lanes outside lane_mask EMPTY; a
 * lane where any of the num_arrays arrays (each an array of MBC_LANES
 * pointers, of any pointer type) is NULL or holds NULL is NULL_PARAM; then
 * check (if not NULL) gives the remaining lanes' codes. ln->valid gets the
 * lanes still OK.
 */
void mbc_lanes_begin(struct mbc_lanes *ln, unsigned lane_mask, int call_ok,
                     const void *const *const arrays[], unsigned num_arrays,
                     mbc_lane_check_fn *check, const void *ctx);

/* mbc_lane_bufs: one per-lane buffer array of a call: ptrs[l], lens[l]
 * bytes long (len bytes each when lens is NULL); ptrs NULL: no such array. */
struct mbc_lane_bufs {
    const void *const *ptrs;
    const size_t *lens;
    size_t len;
};

/*
 * mbc_lanes_refuse_overlaps: the aliasing rule of every _mb8 call. A valid
 * lane whose output overlaps another output (of any lane, its own other
 * outputs included) or an input of another valid lane gets BAD_PARAM: run
 * together, such lanes would read inputs another lane has not yet written,
 * run one by one they would read what it wrote, so the paths would differ.
 * An output may overlap its own lane's inputs (in place): every path reads
 * a lane's inputs before it writes that lane's outputs. At most
 * MBC_LANES_MAX_BUFS arrays of each kind are looked at.
 */
#define MBC_LANES_MAX_BUFS 4
void mbc_lanes_refuse_overlaps(struct mbc_lanes *ln, const struct mbc_lane_bufs *outs,
                               unsigned num_outs, const struct mbc_lane_bufs *ins,
                               unsigned num_ins);

/* mbc_lanes_fail: the lanes of lanes (a lane bitmask) that are still OK get
 * code and leave valid. */
void mbc_lanes_fail(struct mbc_lanes *ln, unsigned lanes, unsigned code);

/* mbc_lanes_pack: slots 0..n-1 get the valid lanes, in lane order. */
void mbc_lanes_pack(struct mbc_lanes *ln);

/* mbc_lanes_of_slots: the lanes of the slots in slots. */
unsigned mbc_lanes_of_slots(const struct mbc_lanes *ln, unsigned slots);

/* mbc_lanes_set_slots: mbc_lanes_fail for the lanes of slots (code OK
 * leaves them as they are). */
void mbc_lanes_set_slots(struct mbc_lanes *ln, unsigned slots, unsigned code);

/* mbc_lanes_slot_outs: sp[s] = arr[lane_of[s]] for the packed slots, NULL
 * beyond n: the outputs in the kernels' order. */
void mbc_lanes_slot_outs(const struct mbc_lanes *ln, uint8_t *const arr[MBC_LANES],
                         uint8_t *sp[MBC_LANES]);

/*
 * mbc_plan: how the valid requests of a call run (mbc_lanes_pick).
 *   MBC_PLAN_NONE        no valid lane: nothing to compute
 *   MBC_PLAN_ONE         one request: the single-request kernel
 *   MBC_PLAN_ONE_BY_ONE  2..one_by_one requests: each alone on the
 *                        single-request kernel (n single runs cost less than
 *                        one shared pass, as the family measured)
 *   MBC_PLAN_FEW         otherwise up to few_lanes requests: the narrow
 *                        kernel, which computes only that many slots
 *   MBC_PLAN_BATCH       the batch kernel, requests packed into slots
 */
enum mbc_plan { MBC_PLAN_NONE, MBC_PLAN_ONE, MBC_PLAN_ONE_BY_ONE, MBC_PLAN_FEW, MBC_PLAN_BATCH };

/* mbc_kplan: the lane thresholds of one operation's kernel set. */
struct mbc_kplan {
    unsigned few_lanes;  /* the slots the few kernel computes (0: no few kernel) */
    unsigned one_by_one; /* up to this many requests run one by one (0 or 1: never) */
};

/*
 * MBC_KSET(args): the kernels of one operation of an implementation, each
 * taking the operation's argument struct:
 *   batch  up to 8 requests, packed into slots 0..n-1
 *   few    2..plan.few_lanes requests (NULL when few_lanes is 0)
 *   one    a lone request, in slot 0: the fastest single-request kernel
 *   plan   the thresholds mbc_lanes_pick applies
 * MBC_KSET_FN(ks, plan) is the kernel of ks that runs a plan's requests.
 */
#define MBC_KSET(args)                                                                             \
    struct {                                                                                       \
        void (*batch)(args *);                                                                     \
        void (*few)(args *);                                                                       \
        void (*one)(args *);                                                                       \
        struct mbc_kplan plan;                                                                     \
    }
#define MBC_KSET_FN(ks, plan)                                                                      \
    ((plan) == MBC_PLAN_BATCH ? (ks)->batch : (plan) == MBC_PLAN_FEW ? (ks)->few : (ks)->one)

/* mbc_lanes_pick: the plan of the valid requests under kp (also stored in
 * ln->plan); the one place where every family decides between its kernels. */
enum mbc_plan mbc_lanes_pick(struct mbc_lanes *ln, const struct mbc_kplan *kp);

/* mbc_lanes_body_fn: a family's work on the packed requests of ln (its
 * slots, its plan), with the call's arguments and the work memory the
 * caller allocated once; verdicts go into ln (mbc_lanes_set_slots). */
typedef void mbc_lanes_body_fn(struct mbc_lanes *ln, const void *call, void *work);

/*
 * mbc_lanes_run: runs body as ln's plan says. ONE, FEW, BATCH: once, with
 * the valid requests packed into slots. ONE_BY_ONE: once per valid lane, on
 * a one-request view of ln (that lane in slot 0, plan ONE), each lane then
 * taking the code its run gave; the work memory and the caller's single
 * stack scrub serve every run. NONE: nothing.
 */
void mbc_lanes_run(struct mbc_lanes *ln, mbc_lanes_body_fn *body, const void *call, void *work);

/*
 * mbc_lanes_finish: zeroes, for every active lane that is not OK, its
 * outputs: outs[i] (an array of MBC_LANES output pointers, may be NULL or
 * hold NULL) with lens[i] bytes each, i < num_outs; nothing when the call is
 * unwritable. Returns the status word.
 */
mbc_status mbc_lanes_finish(const struct mbc_lanes *ln, uint8_t *const *const outs[],
                            const size_t lens[], unsigned num_outs);

#endif /* MBC_SRC_LANES_H */
