/* x25519_impl.c - the X25519 implementations and their selection. */
#include "../internal.h"
#include "x25519_kern.h"

/*
 * The portable 8-lane kernels compute all 8 lanes whatever the batch holds,
 * with every vector of 8 words in memory; the 1-lane build (_c1) keeps its
 * field elements in registers and costs less than an eighth of a batch per
 * request: measured on a Zen 3 (taskset -c 1), a full 8-lane derive batch
 * took 2.8 ms and 8 requests one by one on _c1 1.2 ms (public keys 1.25 ms
 * and 0.4 ms). So every portable request runs alone on _c1; the 8-lane
 * portable kernels are the IFMA kernels' digit-for-digit oracle.
 */
#define X25519_C_ONE_BY_ONE MBC_LANES
const struct mbc_x25519_impl mbc_x25519_impl_c = {
    .name = "c",
    .ladder = mbc_x25519_ladder_c,
    .base = mbc_x25519_base_c,
    .ladder_one = mbc_x25519_ladder_c1,
    .base_one = mbc_x25519_base_c1,
    .ladder_few = NULL, /* every request runs alone on _c1 */
    .base_few = NULL,
    .few_lanes = 0,
    .ladder_one_by_one = X25519_C_ONE_BY_ONE,
    .base_one_by_one = X25519_C_ONE_BY_ONE,
};

#if MBC_HAVE_IFMA
/*
 * On IFMA up to 4 requests run on the ymm build of the kernels (_ifma4): the
 * same multiply-adds on 4 lanes, which issue twice as fast as zmm ones on
 * Zen 4 and Ice Lake and as fast elsewhere (vec_ifma.h). A lone derive is
 * 135,842 ymm multiply-adds, about 68,000 cycles at 2 per cycle (18 us at
 * 3.7 GHz) where the zmm batch needs about 136,000 on Zen 4; 5 requests or
 * more share one zmm batch. Not measured: this machine has no IFMA.
 */
static const struct mbc_x25519_impl x25519_ifma = {
    .name = "ifma",
    .ladder = mbc_x25519_ladder_ifma,
    .base = mbc_x25519_base_ifma,
    .ladder_one = mbc_x25519_ladder_ifma4,
    .base_one = mbc_x25519_base_ifma4,
    .ladder_few = mbc_x25519_ladder_ifma4,
    .base_few = mbc_x25519_base_ifma4,
    .few_lanes = 4,
    .ladder_one_by_one = 1,
    .base_one_by_one = 1,
};
#endif

const struct mbc_x25519_impl *mbc_x25519_impl_for(uint64_t features)
{
#if MBC_HAVE_IFMA
    if ((features & MBC_CPU_IFMA_PATH) == MBC_CPU_IFMA_PATH) {
        return &x25519_ifma;
    }
#else
    (void)features;
#endif
    return &mbc_x25519_impl_c;
}
