/* ec_impl.c - the EC implementations and their selection. */
#include "../internal.h"
#include "ec_kern.h"

/*
 * Portable: a lone request runs on the one-lane build of the kernels (_c1),
 * and so do the requests of any batch, one by one: 8 one-lane runs took
 * less CPU time than one 8-lane pass (taskset -c 1, thread CPU time, gcc 12,
 * Zen 3): P-256 ECDH 2.85 ms against 5.16 ms, sign 1.01 / 1.42 ms, keygen
 * 0.80 / 1.11 ms; P-384 ECDH 9.5 / 15.9 ms, sign 3.1 / 4.9 ms, keygen 3.0 /
 * 4.0 ms. The 8-lane portable kernels remain the oracle of the IFMA ones
 * (same source, same digits), and the tests run the batch plan on them
 * (test hook ec_batch_plan).
 */
const struct mbc_ec_impl mbc_ec_impl_c = {
    "c",
    mbc_ec_base_kern_c,
    mbc_ec_sign_kern_c,
    mbc_ec_verify_kern_c,
    mbc_ec_ecdh_kern_c,
    mbc_ec_base_kern_c1,
    mbc_ec_sign_kern_c1,
    mbc_ec_verify_kern_c1,
    mbc_ec_ecdh_kern_c1,
    NULL, /* every request runs alone on _c1 */
    NULL,
    NULL,
    NULL,
    {0, 0, 0, 0},
    {8, 8, 8, 8},
};

#if MBC_HAVE_IFMA
/*
 * IFMA: a lone key generation or signature spreads its fixed-base windows
 * over the 8 lanes (mbc_ec_base_spread_kern_ifma: 7 or 10 mixed additions
 * and 3 horizontal additions instead of 52 or 77 mixed additions); the
 * inversions after it still take a whole 8-lane pass each. A lone ECDH or
 * verification, and 2 to 4 requests of any operation, run on the ymm build
 * (_ifma4): the batch kernel's instructions on 4 lanes, which issue twice
 * as fast as zmm ones on Zen 4 and Ice Lake and as fast elsewhere
 * (vec_ifma.h). 5 requests or more share one zmm batch. Not measured: this
 * machine has no IFMA.
 */
static const struct mbc_ec_impl ec_ifma = {
    "ifma",
    mbc_ec_base_kern_ifma,
    mbc_ec_sign_kern_ifma,
    mbc_ec_verify_kern_ifma,
    mbc_ec_ecdh_kern_ifma,
    mbc_ec_base_spread_kern_ifma,
    mbc_ec_sign_spread_kern_ifma,
    mbc_ec_verify_kern_ifma4,
    mbc_ec_ecdh_kern_ifma4,
    mbc_ec_base_kern_ifma4,
    mbc_ec_sign_kern_ifma4,
    mbc_ec_verify_kern_ifma4,
    mbc_ec_ecdh_kern_ifma4,
    {4, 4, 4, 4},
    {1, 1, 1, 1},
};
#endif

const struct mbc_ec_impl *mbc_ec_impl_for(uint64_t features)
{
#if MBC_HAVE_IFMA
    if ((features & MBC_CPU_IFMA_PATH) == MBC_CPU_IFMA_PATH) {
        return &ec_ifma;
    }
#else
    (void)features;
#endif
    return &mbc_ec_impl_c;
}
