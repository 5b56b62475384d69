/* ec_impl.c - the EC implementations and their selection. */
#include "../internal.h"
#include "ec_adx.h"
#include "ec_kern.h"

/*
 * Portable: a lone request runs on the one-lane build of the kernels (_c1),
 * and so do the requests of any batch, one by one: 8 one-lane runs took
 * less CPU time than one 8-lane pass (taskset -c 1, thread CPU time, gcc 12,
 * Zen 3): P-256 ECDH 2.85 ms against 5.16 ms, sign 1.01 / 1.42 ms, keygen
 * 0.80 / 1.11 ms; P-384 ECDH 9.5 / 15.9 ms, sign 3.1 / 4.9 ms, keygen 3.0 /
 * 4.0 ms. The 8-lane portable kernels remain the oracle of the IFMA ones
 * (same source, same digits), and the tests run the batch plan on them
 * (test hook ec_batch_plan). No EC operation is at OpenSSL's speed here, so
 * "auto" serves none.
 */
#define EC_C_SET(op)                                                                               \
    {                                                                                              \
        .batch = mbc_ec_##op##_kern_c, .one = mbc_ec_##op##_kern_c1,                               \
        .plan = {.few_lanes = 0, .one_by_one = MBC_LANES},                                         \
    }
const struct mbc_ec_impl mbc_ec_impl_c = {
    .base = {.info = {.name = "c", .tier = MBC_TIER_PORTABLE, .lanes = MBC_LANES, .fast_ops = 0},
             .needs = 0},
    .keygen = EC_C_SET(base),
    .sign = EC_C_SET(sign),
    .verify = EC_C_SET(verify),
    .ecdh = EC_C_SET(ecdh),
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
 * (vec_ifma.h). 5 requests or more share one zmm batch. "auto" serves every
 * operation, as the batched rates through the provider's ASYNC jobs were
 * measured above OpenSSL's (README).
 */
#define EC_IFMA_SET(op, one_kern)                                                                  \
    {                                                                                              \
        .batch = mbc_ec_##op##_kern_ifma, .few = mbc_ec_##op##_kern_ifma4, .one = (one_kern),      \
        .plan = {.few_lanes = 4, .one_by_one = 1},                                                 \
    }
static const struct mbc_ec_impl ec_ifma = {
    .base = {.info = {.name = "ifma",
                      .tier = MBC_TIER_VECTOR,
                      .lanes = MBC_LANES,
                      .fast_ops = 1u << MBC_OP_ECDSA_SIGN | 1u << MBC_OP_ECDSA_VERIFY |
                                  1u << MBC_OP_ECDH | 1u << MBC_OP_EC_KEYGEN_P256 |
                                  1u << MBC_OP_EC_KEYGEN_P384},
             .needs = MBC_CPU_IFMA_PATH},
    .keygen = EC_IFMA_SET(base, mbc_ec_base_spread_kern_ifma),
    .sign = EC_IFMA_SET(sign, mbc_ec_sign_spread_kern_ifma),
    .verify = EC_IFMA_SET(verify, mbc_ec_verify_kern_ifma4),
    .ecdh = EC_IFMA_SET(ecdh, mbc_ec_ecdh_kern_ifma4),
};
#endif

#if MBC_HAVE_ADX
/*
 * adx: the scalar 64-bit kernels (ec_adx.c: MULX, ADCX, ADOX, a comb of
 * 7-bit windows for the fixed base) on every request, one by one; the
 * batch kernel, which only the tests' batch plan reaches, is the portable
 * 8-lane one.
 */
#define EC_ADX_SET(op)                                                                             \
    {                                                                                              \
        .batch = mbc_ec_##op##_kern_c, .one = mbc_ec_##op##_kern_adx,                              \
        .plan = {.few_lanes = 0, .one_by_one = MBC_LANES},                                         \
    }
static const struct mbc_ec_impl ec_adx = {
    .base = {.info = {.name = "adx", .tier = MBC_TIER_SCALAR, .lanes = MBC_LANES, .fast_ops = 0},
             .needs = MBC_CPU_BMI2 | MBC_CPU_ADX},
    .keygen = EC_ADX_SET(base),
    .sign = EC_ADX_SET(sign),
    .verify = EC_ADX_SET(verify),
    .ecdh = EC_ADX_SET(ecdh),
};
#endif

/* The implementations, fastest first: the first the CPU can run is used. */
static const struct mbc_ec_impl *const ec_impls[] = {
#if MBC_HAVE_IFMA
    &ec_ifma,
#endif
#if MBC_HAVE_ADX
    &ec_adx,
#endif
    &mbc_ec_impl_c,
};
MBC_IMPL_TABLE(mbc_ec_impl_table, ec_impls);

const struct mbc_ec_impl *mbc_ec_impl_for(uint64_t features)
{
    return mbc_impl_pick(&mbc_ec_impl_table, features);
}
