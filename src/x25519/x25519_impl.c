/* x25519_impl.c - the X25519 implementations and their selection. */
#include "../internal.h"
#include "../wipe.h"
#include "x25519_kern.h"

/*
 * The portable 8-lane kernels compute all 8 lanes whatever the batch holds,
 * with every vector of 8 words in memory; the 1-lane build (_c1) keeps its
 * field elements in registers and costs less than an eighth of a batch per
 * request: measured on a Zen 3 (taskset -c 1), a full 8-lane derive batch
 * took 2.8 ms and 8 requests one by one on _c1 1.2 ms (public keys 1.25 ms
 * and 0.4 ms). So every portable request runs alone on _c1; the 8-lane
 * portable kernels are the IFMA kernels' digit-for-digit oracle, and the
 * row has one lane (mbc_impl_info). Below OpenSSL's speed: "auto" serves
 * none.
 */
#define X25519_C_SET(kern)                                                                         \
    {                                                                                              \
        .batch = mbc_x25519_##kern##_c, .one = mbc_x25519_##kern##_c1,                             \
        .plan = {.few_lanes = 0, .one_by_one = MBC_LANES},                                         \
    }
const struct mbc_x25519_impl mbc_x25519_impl_c = {
    .base = {.info = {.name = "c", .tier = MBC_TIER_PORTABLE, .lanes = 1, .fast_ops = 0},
             .needs = 0},
    .ladder = X25519_C_SET(ladder),
    .pubkey = X25519_C_SET(base),
    .one_scrub = MBC_WIPE_X25519_ONE,
};

#if MBC_HAVE_ADX || MBC_HAVE_IFMA
/* The lone requests at OpenSSL's speed or better (mbc_impl_lone), on both
 * rows that run them on the scalar kernel: key generation (3.0-3.3x,
 * below). Not derive, which did not hold on every CPU measured: through
 * the provider and the ENGINE without async jobs against OpenSSL 3.0's
 * default provider, 0.91-1.01x on a Xeon family 6 model 207 (openssl
 * speed), 1.14x on an EPYC family 26 model 2 (bench/sync_ab; README). */
static const struct mbc_op_size x25519_lone[] = {{MBC_OP_X25519_KEYGEN, 0}, {0, 0}};
#endif

#if MBC_HAVE_IFMA
/*
 * On IFMA a lone request runs on the scalar kernel (x25519_adx.c), which
 * is faster than the ymm build of the vector kernels (_ifma4) for one
 * request (derive 84k TSC cycles against 117k, public key 34k against 37k,
 * Xeon family 6 model 207), but not for two one by one (168k and 68k:
 * _ifma4 computes 4 for the price of one); 2 to 4 requests run on
 * _ifma4 (the same multiply-adds on 4 lanes of ymm, which issue twice as
 * fast as zmm ones on Zen 4 and Ice Lake and as fast elsewhere:
 * vec_ifma.h), 5 or more share one zmm batch. Every IFMA CPU has BMI2 and
 * ADX; the row needs them anyway, so a feature word without them (a test's
 * mask) falls to a row that does not use the scalar kernel. "auto" serves
 * derive and key generation, whose batched rates through the provider's
 * ASYNC jobs were measured above OpenSSL's (README).
 */
#define X25519_IFMA_SET(kern)                                                                      \
    {                                                                                              \
        .batch = mbc_x25519_##kern##_ifma, .few = mbc_x25519_##kern##_ifma4,                       \
        .one = X25519_ONE(kern), .plan = {.few_lanes = 4, .one_by_one = X25519_ONE_BY_ONE},        \
    }
#if MBC_HAVE_ADX
#define X25519_ONE(kern) mbc_x25519_##kern##_adx
#define X25519_ONE_BY_ONE 1
#define X25519_IFMA_NEEDS (MBC_CPU_IFMA_PATH | MBC_CPU_BMI2 | MBC_CPU_ADX)
#define X25519_ONE_SCRUB MBC_WIPE_X25519_ONE
#else
#define X25519_ONE(kern) mbc_x25519_##kern##_ifma4
#define X25519_ONE_BY_ONE 1
#define X25519_IFMA_NEEDS MBC_CPU_IFMA_PATH
#define X25519_ONE_SCRUB MBC_WIPE_X25519
#endif
static const struct mbc_x25519_impl x25519_ifma = {
    .base = {.info = {.name = "ifma",
                      .tier = MBC_TIER_VECTOR,
                      .lanes = MBC_LANES,
                      .fast_ops = 1u << MBC_OP_X25519_DERIVE | 1u << MBC_OP_X25519_KEYGEN |
                                  1u << MBC_OP_X25519_PUBLIC_KEY},
             .needs = X25519_IFMA_NEEDS},
    .ladder = X25519_IFMA_SET(ladder),
    .pubkey = X25519_IFMA_SET(base),
    .one_scrub = X25519_ONE_SCRUB,
    .lone = x25519_lone,
};
#endif

#if MBC_HAVE_ADX
/*
 * Without IFMA (or with it masked off), every request runs alone on the
 * scalar kernels: radix 2^64 with MULX, ADCX and ADOX (x25519_adx.c).
 * Measured against OpenSSL 3.0 on the Xeon (README): key generation 3.3x
 * its rate, derive 0.93x, so "auto" serves key generation only (and the
 * public key of a scalar, its fixed-base half).
 * The batch slot is the portable 8-lane kernel, which the plan never takes
 * (every count up to 8 runs one by one).
 */
#define X25519_ADX_SET(kern)                                                                       \
    {                                                                                              \
        .batch = mbc_x25519_##kern##_c, .one = mbc_x25519_##kern##_adx,                            \
        .plan = {.few_lanes = 0, .one_by_one = MBC_LANES},                                         \
    }
static const struct mbc_x25519_impl x25519_adx = {
    .base = {.info = {.name = "adx",
                      .tier = MBC_TIER_SCALAR,
                      .lanes = 1,
                      .fast_ops = 1u << MBC_OP_X25519_KEYGEN | 1u << MBC_OP_X25519_PUBLIC_KEY},
             .needs = MBC_CPU_BMI2 | MBC_CPU_ADX},
    .ladder = X25519_ADX_SET(ladder),
    .pubkey = X25519_ADX_SET(base),
    .one_scrub = MBC_WIPE_X25519_ONE,
    .lone = x25519_lone,
};
#endif

/* The implementations, fastest first: the first the CPU can run is used. */
static const struct mbc_x25519_impl *const x25519_impls[] = {
#if MBC_HAVE_IFMA
    &x25519_ifma,
#endif
#if MBC_HAVE_ADX
    &x25519_adx,
#endif
    &mbc_x25519_impl_c,
};
MBC_IMPL_TABLE(mbc_x25519_impl_table, x25519_impls);

const struct mbc_x25519_impl *mbc_x25519_impl_for(uint64_t features)
{
    return mbc_impl_pick(&mbc_x25519_impl_table, features);
}
