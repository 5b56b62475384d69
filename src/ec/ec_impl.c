/* ec_impl.c - the EC implementations and their selection. */
#include "../internal.h"
#include "../wipe.h"
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
 * "auto" serves none. One lane (mbc_impl_info): requests gain nothing by
 * waiting for others.
 */
#define EC_C_SET(op)                                                                               \
    {                                                                                              \
        .batch = mbc_ec_##op##_kern_c, .one = mbc_ec_##op##_kern_c1,                               \
        .plan = {.few_lanes = 0, .one_by_one = MBC_LANES},                                         \
    }
const struct mbc_ec_impl mbc_ec_impl_c = {
    .base = {.info = {.name = "c", .tier = MBC_TIER_PORTABLE, .lanes = 1, .fast_ops = 0},
             .needs = 0},
    .keygen = EC_C_SET(base),
    .sign = EC_C_SET(sign),
    .verify = EC_C_SET(verify),
    .ecdh = EC_C_SET(ecdh),
};

#if MBC_HAVE_ADX || MBC_HAVE_IFMA
/*
 * The lone requests at OpenSSL's speed or better (mbc_impl_lone), on both
 * rows that run lone requests on the scalar kernels (adx, and ifma, whose
 * lone requests are adx's but P-384 key generation, spread over the 8
 * lanes): every operation of both curves but P-256 ECDH. A lone request's
 * p50 against OpenSSL 3.0's (mbc_bench --concurrency 1,2, taskset -c 1),
 * on an EPYC family 25 model 1 (Zen 3, no AVX-512), after the width-5 NAF
 * of verification: P-256 sign 0.76x, verify 0.93x, keygen 0.64x, but
 * ECDH 1.09x (rdtsc p50 of 3,000 calls interleaved with OpenSSL's:
 * 1.08-1.10x): its 260 doublings are multiplies and squares of the same
 * shape as OpenSSL's own MULX code, and on this core a MULX next to more
 * than two other integer operations costs about two cycles (a P-256
 * multiply, 20 MULX and about 60 other operations, measured 41 cycles of
 * throughput, 55 of latency). On a Xeon family 6 model 167 the same ECDH
 * was 0.88x; a row cannot claim for one CPU what another measures
 * slower, so P-256 ECDH is not claimed: outside ASYNC jobs it goes to
 * OpenSSL's code (the provider: from a key's second exchange on). Through
 * the provider without async jobs against the default provider
 * (bench/sync_ab, least CPU time per operation) on the model 167, since
 * the 4M + 4S doubling and the deferred P-256 reduction carries: P-256
 * sign 1.32x, verify 1.30x, ECDH 1.13x (load 4-6); handed off, 0.99x
 * each. In TLS a handed-off request also pays for its operation context
 * (libssl makes one per handshake), and ephemeral keys for their copies:
 * tls_bench on the model 167 without ssl-mode-async, one connection, gave
 * ECDSA P-256 + X25519 0.87-0.92x the default provider handed off against
 * 0.98-1.02x ours. P-384 on the Zen 3, lone p50 against OpenSSL 3.0's
 * (3.5's): sign 0.05x (0.17x), verify 0.32x (0.40x), ECDH 0.26x (0.45x),
 * keygen 0.05x (0.20x).
 */
static const struct mbc_op_size ec_lone[] = {
    {MBC_OP_ECDSA_SIGN, 0},     {MBC_OP_ECDSA_VERIFY, 0},   {MBC_OP_ECDH, 384},
    {MBC_OP_EC_KEYGEN_P384, 0}, {MBC_OP_EC_KEYGEN_P256, 0}, {0, 0},
};
#endif

#if MBC_HAVE_ADX
/*
 * adx: the scalar 64-bit kernels (ec_adx.c: MULX, ADCX, ADOX, a comb of
 * 7-bit windows for the fixed base) on every request, one by one; the
 * batch kernel, which only the tests' batch plan reaches, is the portable
 * 8-lane one, so the row has one lane (mbc_impl_info: inside ASYNC jobs
 * its requests run at once instead of pausing for company). Measured
 * against OpenSSL 3.0 (Xeon family 6 model 207, gcc 12,
 * MBCRYPTO_CPU_MASK=0x381ff mbc_bench --reps 3 p256 p384, 8 requests a
 * call, load 9, one run): P-256 sign 1.18x, verify 0.87x, ECDH 0.85x,
 * keygen 1.07x; P-384 sign 10x, verify 2.2x, ECDH 3.5x, keygen 14x (the
 * same run of the tier before the divsteps inversion, AVX2 scans, Jacobian
 * doublings and P-384 multiply: P-256 0.85x, 0.76x, 0.72x, 0.75x). "auto"
 * serves what is at OpenSSL's speed for every curve its bit covers, with
 * a margin the noise of that run (43% spread) does not give yet: P-384 key
 * generation only.
 */
#define EC_ADX_SET(op)                                                                             \
    {                                                                                              \
        .batch = mbc_ec_##op##_kern_c, .one = mbc_ec_##op##_kern_adx,                              \
        .plan = {.few_lanes = 0, .one_by_one = MBC_LANES},                                         \
    }
static const struct mbc_ec_impl ec_adx = {
    .base = {.info = {.name = "adx",
                      .tier = MBC_TIER_SCALAR,
                      .lanes = 1,
                      .fast_ops = 1u << MBC_OP_EC_KEYGEN_P384},
             .needs = MBC_CPU_BMI2 | MBC_CPU_ADX | MBC_CPU_AVX2},
    .keygen = EC_ADX_SET(base),
    .sign = EC_ADX_SET(sign),
    .verify = EC_ADX_SET(verify),
    .ecdh = EC_ADX_SET(ecdh),
    .lone = ec_lone,
    .one_scrub = {MBC_WIPE_EC_ONE, MBC_WIPE_EC_ONE, MBC_WIPE_EC_ONE, MBC_WIPE_EC_ONE},
};
#endif

#if MBC_HAVE_IFMA
/*
 * IFMA: 2 to 4 requests of any operation run on the ymm build (_ifma4):
 * the batch kernel's instructions on 4 lanes, which issue twice as fast as
 * zmm ones on Zen 4 and Ice Lake and as fast elsewhere (vec_ifma.h); 5
 * requests or more share one zmm batch. "auto" serves every operation, as
 * the batched rates through the provider's ASYNC jobs were measured above
 * OpenSSL's (README).
 *
 * A lone key generation or signature of either curve runs spread over the
 * 8 lanes (the _spread kernels: the comb's 7-bit (P-256) and 6-bit (P-384)
 * windows, the table rows read by vpermi2q): since those windows, they take
 * far less than the scalar kernels (rdtsc, min of 5000 mbc_ec_keygen /
 * mbc_ecdsa_sign calls, Xeon family 6 model 167, taskset -c 1, spread vs
 * adx: P-256 keygen 18.6k vs 25.7k, sign 24.9k vs 30.9k; P-384 keygen 37.4k
 * vs 76.0k, sign 49.5k vs 85.9k TSC cycles, before the spread kernels' 48
 * KiB scrub; on Zen 4 the counts give the spread P-256 keygen about 14.4k
 * cycles at one zmm multiply-add a cycle, count_ops). A lone verification
 * or ECDH of either curve runs on the scalar kernels (ec_adx.c), which
 * leaves the vector units to other work and issues at one zmm multiply-add
 * a cycle on Zen 4. Measured first for P-256
 * (Xeon family 6 model 207, gcc 12, taskset -c 1, p50 of the single call,
 * loaded machine: ECDH 113 us against 150 us on the ymm build, verification
 * 146 against 200 us); since the MULX multiply of P-384 (fe_p384_x64.h)
 * and the divsteps inversion also for P-384 (same machine, load 5-8, one
 * run each): sign 111 us against 127 us on the spread kernel, verification
 * 518 against 715 us and ECDH 389 against 504 us on the ymm build; but
 * P-384 key generation 101 us against 77 us spread over the 8 lanes
 * (mbc_ec_base_spread_kern_ifma), where it stayed until the comb's
 * additions in Jacobian coordinates: then 68-71k TSC cycles on the scalar
 * kernel against 86-87k spread (mbc_ec_keygen, min of 300 calls, AMD Zen 5
 * family 26 model 2, taskset -c 1, load 14), before the wider windows.
 * Without the scalar tier every other lone request runs on the ymm build.
 * Two requests already take less time
 * on the ymm build than twice the scalar one for ECDH and verification.
 */
#define EC_IFMA_SET(op, one_kern)                                                                  \
    {                                                                                              \
        .batch = mbc_ec_##op##_kern_ifma, .few = mbc_ec_##op##_kern_ifma4, .one = (one_kern),      \
        .plan = {.few_lanes = 4, .one_by_one = 1},                                                 \
    }
#if MBC_HAVE_ADX
#define EC_IFMA_NEEDS (MBC_CPU_IFMA_PATH | MBC_CPU_BMI2 | MBC_CPU_ADX | MBC_CPU_AVX2)
#define EC_IFMA_ONE_KERN(op, p384_kern) mbc_ec_##op##_kern_adx
#define EC_IFMA_ONE_SCRUB MBC_WIPE_EC_ONE
#else
#define EC_IFMA_NEEDS MBC_CPU_IFMA_PATH
#define EC_IFMA_ONE_KERN(op, p384_kern) (p384_kern)
#define EC_IFMA_ONE_SCRUB 0 /* the spread and ymm kernels: MBC_WIPE_EC */
#endif
static const struct mbc_ec_impl ec_ifma = {
    .base = {.info = {.name = "ifma",
                      .tier = MBC_TIER_VECTOR,
                      .lanes = MBC_LANES,
                      .fast_ops = 1u << MBC_OP_ECDSA_SIGN | 1u << MBC_OP_ECDSA_VERIFY |
                                  1u << MBC_OP_ECDH | 1u << MBC_OP_EC_KEYGEN_P256 |
                                  1u << MBC_OP_EC_KEYGEN_P384},
             .needs = EC_IFMA_NEEDS},
    .keygen = EC_IFMA_SET(base, mbc_ec_base_spread_kern_ifma),
    .sign = EC_IFMA_SET(sign, mbc_ec_sign_spread_kern_ifma),
    .verify = EC_IFMA_SET(verify, EC_IFMA_ONE_KERN(verify, mbc_ec_verify_kern_ifma4)),
    .ecdh = EC_IFMA_SET(ecdh, EC_IFMA_ONE_KERN(ecdh, mbc_ec_ecdh_kern_ifma4)),
    .lone = ec_lone,
    /* the spread kernels write deeper: MBC_WIPE_EC */
    .one_scrub = {[EC_OP_VERIFY] = EC_IFMA_ONE_SCRUB, [EC_OP_ECDH] = EC_IFMA_ONE_SCRUB},
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
