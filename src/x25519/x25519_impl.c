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
    "c",
    mbc_x25519_ladder_c,
    mbc_x25519_base_c,
    mbc_x25519_ladder_c1,
    mbc_x25519_base_c1,
    X25519_C_ONE_BY_ONE,
    X25519_C_ONE_BY_ONE,
};

#if MBC_HAVE_IFMA
/* On IFMA a lone request runs on the 8-lane kernels: one zmm multiply-add
 * costs the same for 1 lane or 8. */
static const struct mbc_x25519_impl x25519_ifma = {
    "ifma",
    mbc_x25519_ladder_ifma,
    mbc_x25519_base_ifma,
    mbc_x25519_ladder_ifma,
    mbc_x25519_base_ifma,
    1,
    1,
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
