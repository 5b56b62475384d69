/* rsa_impl.c - the RSA implementations and their selection. */
#include "../internal.h"
#include "rsa_kern.h"

/*
 * Few requests run one by one on the single-request kernels, which cost a
 * fraction of a shared pass: up to 2 private and 4 public requests, n single
 * runs took less time than one batch of n, on IFMA (horizontal single path)
 * and on the portable path (2-lane kernels). Measured with mbc_bench
 * (taskset -c 1, an IFMA machine): a lone IFMA private request costs 0.46x
 * (2048) and 0.37x (3072) of a paired pass of 2 to 4, a lone public one
 * 0.23x (2048) to 0.17x (4096) of an 8-lane batch; a 2-lane portable run 1/4
 * of an 8-lane one.
 */
#define RSA_PLAN(n)                                                                                \
    {                                                                                              \
        .few_lanes = 0, .one_by_one = (n)                                                          \
    }
#define RSA_PRIV_ONE_BY_ONE 2
#define RSA_PUB_ONE_BY_ONE 4

/* The portable path is below OpenSSL's speed: "auto" serves nothing. */
const struct mbc_rsa_impl mbc_rsa_impl_c = {
    .base = {.info = {.name = "c", .tier = MBC_TIER_PORTABLE, .lanes = MBC_LANES, .fast_ops = 0},
             .needs = 0},
    .crt = {.batch = mbc_rsa_crt_kern_c,
            .one = mbc_rsa_crt_kern_c2,
            .plan = RSA_PLAN(RSA_PRIV_ONE_BY_ONE)},
    .pub = {.batch = mbc_rsa_pub_kern_c,
            .one = mbc_rsa_pub_kern_c2,
            .plan = RSA_PLAN(RSA_PUB_ONE_BY_ONE)},
};

#if MBC_HAVE_IFMA
/* A lone request on IFMA runs horizontally (rsa_h2.c): RSA-4096 private
 * 0.95 ms, public 13.7 us, where the 8-lane kernel with 2 or 1 busy lanes
 * took 2.6 ms and 73 us (OpenSSL 3.0: 3.7 ms, 54 us); RSA-2048 private
 * 151 us, public 4.6 us (OpenSSL: 239 us, 14.3 us). Measured on a CPU with
 * about 2 zmm IFMA per cycle; on a Zen 4 (1 per cycle) RSA-2048 private took
 * 247 us. "auto" serves both operations.
 * Lone requests of both operations at every size are faster than OpenSSL's
 * (mbc_impl_lone): through openssl speed without async jobs against OpenSSL
 * 3.0's default provider, provider and ENGINE, RSA-2048 sign 1.06-1.27x
 * and verify 2.2-2.8x on a Xeon family 6 model 207, 1.42-1.52x and 3.0x
 * on an EPYC family 26 model 2 (README); the larger sizes more (above). */
static const struct mbc_op_size rsa_ifma_lone[] = {
    {MBC_OP_RSA_PRIVATE, 0},
    {MBC_OP_RSA_PUBLIC, 0},
    {0, 0},
};
static const struct mbc_rsa_impl rsa_ifma = {
    .base = {.info = {.name = "ifma",
                      .tier = MBC_TIER_VECTOR,
                      .lanes = MBC_LANES,
                      .fast_ops = 1u << MBC_OP_RSA_PRIVATE | 1u << MBC_OP_RSA_PUBLIC},
             .needs = MBC_CPU_IFMA_PATH},
    .crt = {.batch = mbc_rsa_crt_kern_ifma,
            .one = mbc_rsa_crt_kern_h2_ifma,
            .plan = RSA_PLAN(RSA_PRIV_ONE_BY_ONE)},
    .pub = {.batch = mbc_rsa_pub_kern_ifma,
            .one = mbc_rsa_pub_kern_h1_ifma,
            .plan = RSA_PLAN(RSA_PUB_ONE_BY_ONE)},
    .lone = rsa_ifma_lone,
};
#endif

/* The implementations, fastest first: the first the CPU can run is used. */
static const struct mbc_rsa_impl *const rsa_impls[] = {
#if MBC_HAVE_IFMA
    &rsa_ifma,
#endif
    &mbc_rsa_impl_c,
};
MBC_IMPL_TABLE(mbc_rsa_impl_table, rsa_impls);

const struct mbc_rsa_impl *mbc_rsa_impl_for(uint64_t features)
{
    return mbc_impl_pick(&mbc_rsa_impl_table, features);
}
