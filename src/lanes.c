/* lanes.c - the per-lane glue of every _mb8 call (see lanes.h). */
#include <string.h>

#include "lanes.h"

void mbc_lanes_begin(struct mbc_lanes *ln, unsigned lane_mask, int call_ok,
                     const void *const *const arrays[], unsigned num_arrays,
                     mbc_lane_check_fn *check, const void *ctx)
{
    memset(ln, 0, sizeof(*ln));
    ln->mask = lane_mask;
    if (lane_mask > MBC_LANE_MASK_ALL) {
        ln->st = mbc_status_all(MBC_LANE_BAD_PARAM);
        return;
    }
    ln->writable = call_ok;
    for (unsigned l = 0; l < MBC_LANES; l++) {
        unsigned code = MBC_LANE_OK;
        if (!((lane_mask >> l) & 1u)) {
            code = MBC_LANE_EMPTY;
        } else {
            for (unsigned i = 0; i < num_arrays && code == MBC_LANE_OK; i++) {
                if (arrays[i] == NULL || arrays[i][l] == NULL) {
                    code = MBC_LANE_NULL_PARAM;
                }
            }
            if (code == MBC_LANE_OK && !call_ok) {
                code = MBC_LANE_BAD_PARAM;
            }
            if (code == MBC_LANE_OK && check != NULL) {
                code = check(ctx, l);
            }
        }
        ln->st = mbc_status_set(ln->st, l, code);
        if (code == MBC_LANE_OK) {
            ln->valid |= 1u << l;
        }
    }
}

/* lane_span: the bytes [lo, hi) of lane l's buffer in one array. */
struct lane_span {
    uintptr_t lo, hi;
    unsigned lane;
};

/* spans: the non-empty buffers of the valid lanes in the num arrays b,
 * into sp (at most MBC_LANES * MBC_LANES_MAX_BUFS); returns their count. */
static unsigned spans(const struct mbc_lane_bufs *b, unsigned num, unsigned valid,
                      struct lane_span *sp)
{
    unsigned n = 0;
    for (unsigned i = 0; i < num && i < MBC_LANES_MAX_BUFS; i++) {
        for (unsigned l = 0; l < MBC_LANES; l++) {
            if (!((valid >> l) & 1u) || b[i].ptrs == NULL || b[i].ptrs[l] == NULL) {
                continue;
            }
            const size_t len = b[i].lens != NULL ? b[i].lens[l] : b[i].len;
            if (len != 0) {
                const uintptr_t lo = (uintptr_t)b[i].ptrs[l];
                sp[n++] = (struct lane_span){lo, lo + len, l};
            }
        }
    }
    return n;
}

void mbc_lanes_refuse_overlaps(struct mbc_lanes *ln, const struct mbc_lane_bufs *outs,
                               unsigned num_outs, const struct mbc_lane_bufs *ins, unsigned num_ins)
{
    /* the spans once, then pairs of them: an output against every other
     * output span, and against the inputs of other lanes */
    struct lane_span o[MBC_LANES * MBC_LANES_MAX_BUFS], in[MBC_LANES * MBC_LANES_MAX_BUFS];
    const unsigned no = spans(outs, num_outs, ln->valid, o);
    const unsigned ni = spans(ins, num_ins, ln->valid, in);
    unsigned bad = 0;
    for (unsigned a = 0; a < no; a++) {
        for (unsigned b = 0; b < no; b++) {
            if (a != b && o[a].lo < o[b].hi && o[b].lo < o[a].hi) {
                bad |= 1u << o[a].lane;
            }
        }
        for (unsigned b = 0; b < ni; b++) {
            if (o[a].lane != in[b].lane && o[a].lo < in[b].hi && in[b].lo < o[a].hi) {
                bad |= 1u << o[a].lane;
            }
        }
    }
    mbc_lanes_fail(ln, bad, MBC_LANE_BAD_PARAM);
}

void mbc_lanes_fail(struct mbc_lanes *ln, unsigned lanes, unsigned code)
{
    if (code == MBC_LANE_OK) {
        return;
    }
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if (((lanes >> l) & 1u) && mbc_lane_code(ln->st, l) == MBC_LANE_OK) {
            ln->st = mbc_status_set(ln->st, l, code);
        }
    }
    ln->valid &= ~lanes;
}

void mbc_lanes_pack(struct mbc_lanes *ln)
{
    ln->n = 0;
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if ((ln->valid >> l) & 1u) {
            ln->lane_of[ln->n++] = l;
        }
    }
    ln->slot_mask = (1u << ln->n) - 1u;
}

unsigned mbc_lanes_of_slots(const struct mbc_lanes *ln, unsigned slots)
{
    unsigned lanes = 0;
    for (unsigned s = 0; s < ln->n; s++) {
        lanes |= ((slots >> s) & 1u) << ln->lane_of[s];
    }
    return lanes;
}

void mbc_lanes_set_slots(struct mbc_lanes *ln, unsigned slots, unsigned code)
{
    mbc_lanes_fail(ln, mbc_lanes_of_slots(ln, slots), code);
}

void mbc_lanes_slot_outs(const struct mbc_lanes *ln, uint8_t *const arr[MBC_LANES],
                         uint8_t *sp[MBC_LANES])
{
    for (unsigned s = 0; s < MBC_LANES; s++) {
        sp[s] = s < ln->n ? arr[ln->lane_of[s]] : NULL;
    }
}

enum mbc_plan mbc_lanes_pick(struct mbc_lanes *ln, const struct mbc_kplan *kp)
{
    const unsigned count = (unsigned)__builtin_popcount(ln->valid);
    enum mbc_plan plan = MBC_PLAN_BATCH;
    if (count == 0) {
        plan = MBC_PLAN_NONE;
    } else if (count == 1) {
        plan = MBC_PLAN_ONE;
    } else if (count <= kp->one_by_one) {
        plan = MBC_PLAN_ONE_BY_ONE;
    } else if (count <= kp->few_lanes) {
        plan = MBC_PLAN_FEW;
    }
    ln->plan = plan;
    return plan;
}

void mbc_lanes_run(struct mbc_lanes *ln, mbc_lanes_body_fn *body, const void *call, void *work)
{
    if (ln->plan == MBC_PLAN_NONE) {
        return;
    }
    if (ln->plan != MBC_PLAN_ONE_BY_ONE) {
        mbc_lanes_pack(ln);
        body(ln, call, work);
        return;
    }
    const unsigned valid = ln->valid;
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if ((valid >> l) & 1u) {
            struct mbc_lanes one = *ln;
            one.valid = 1u << l;
            one.plan = MBC_PLAN_ONE;
            mbc_lanes_pack(&one);
            body(&one, call, work);
            mbc_lanes_fail(ln, 1u << l, mbc_lane_code(one.st, l));
        }
    }
}

mbc_status mbc_lanes_finish(const struct mbc_lanes *ln, uint8_t *const *const outs[],
                            const size_t lens[], unsigned num_outs)
{
    if (!ln->writable) {
        return ln->st;
    }
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if (!((ln->mask >> l) & 1u) || mbc_lane_code(ln->st, l) == MBC_LANE_OK) {
            continue;
        }
        for (unsigned i = 0; i < num_outs; i++) {
            if (outs[i] != NULL && outs[i][l] != NULL) {
                memset(outs[i][l], 0, lens[i]);
            }
        }
    }
    return ln->st;
}
