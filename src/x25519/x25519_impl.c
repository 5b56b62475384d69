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
 * portable kernels are the IFMA kernels' digit-for-digit oracle. Below
 * OpenSSL's speed: "auto" serves none.
 */
#define X25519_C_SET(kern)                                                                         \
    {                                                                                              \
        .batch = mbc_x25519_##kern##_c, .one = mbc_x25519_##kern##_c1,                             \
        .plan = {.few_lanes = 0, .one_by_one = MBC_LANES},                                         \
    }
const struct mbc_x25519_impl mbc_x25519_impl_c = {
    .base = {.info = {.name = "c", .tier = MBC_TIER_PORTABLE, .lanes = MBC_LANES, .fast_ops = 0},
             .needs = 0},
    .ladder = X25519_C_SET(ladder),
    .pubkey = X25519_C_SET(base),
};

#if MBC_HAVE_IFMA
/*
 * On IFMA up to 4 requests run on the ymm build of the kernels (_ifma4): the
 * same multiply-adds on 4 lanes, which issue twice as fast as zmm ones on
 * Zen 4 and Ice Lake and as fast elsewhere (vec_ifma.h). A lone derive is
 * 135,842 ymm multiply-adds, about 68,000 cycles at 2 per cycle (18 us at
 * 3.7 GHz) where the zmm batch needs about 136,000 on Zen 4; 5 requests or
 * more share one zmm batch. "auto" serves derive and key generation, whose
 * batched rates through the provider's ASYNC jobs were measured above
 * OpenSSL's (README).
 */
#define X25519_IFMA_SET(kern)                                                                      \
    {                                                                                              \
        .batch = mbc_x25519_##kern##_ifma, .few = mbc_x25519_##kern##_ifma4,                       \
        .one = mbc_x25519_##kern##_ifma4, .plan = {.few_lanes = 4, .one_by_one = 1},               \
    }
static const struct mbc_x25519_impl x25519_ifma = {
    .base = {.info = {.name = "ifma",
                      .tier = MBC_TIER_VECTOR,
                      .lanes = MBC_LANES,
                      .fast_ops = 1u << MBC_OP_X25519_DERIVE | 1u << MBC_OP_X25519_KEYGEN},
             .needs = MBC_CPU_IFMA_PATH},
    .ladder = X25519_IFMA_SET(ladder),
    .pubkey = X25519_IFMA_SET(base),
};
#endif

/* The implementations, fastest first: the first the CPU can run is used. */
static const struct mbc_x25519_impl *const x25519_impls[] = {
#if MBC_HAVE_IFMA
    &x25519_ifma,
#endif
    &mbc_x25519_impl_c,
};
MBC_IMPL_TABLE(mbc_x25519_impl_table, x25519_impls);

const struct mbc_x25519_impl *mbc_x25519_impl_for(uint64_t features)
{
    return mbc_impl_pick(&mbc_x25519_impl_table, features);
}
