/*
 * ec_impls.h - the EC implementations the EC tests run on: the two of
 * MBT_IMPL_TESTS ("c", "ifma") and the scalar 64-bit tier "adx" (BMI2 +
 * ADX), which dispatch selects when the AVX-512 features are removed, as on
 * a CPU without IFMA.
 */
#ifndef MBC_TESTS_EC_IMPLS_H
#define MBC_TESTS_EC_IMPLS_H

#include <string.h>

#include "test_util.h"

/* MBT_EC_IMPL_TESTS(fn): "fn/c", "fn/ifma" and "fn/adx"; *state is the
 * implementation name. Call mbt_use_ec_impl(state) first. */
#define MBT_EC_IMPL_TESTS(fn)                                                                      \
    MBT_IMPL_TESTS(fn),                                                                            \
    {                                                                                              \
#fn "/adx", fn, NULL, NULL, (void *)"adx"                                                  \
    }

/* mbt_use_ec_impl: selects the EC implementation named by *state (skips
 * the test when the CPU or build lacks it) and returns its name. */
static inline const char *mbt_use_ec_impl(void **state)
{
    const char *impl = (const char *)*state;
    if (strcmp(impl, "adx") == 0) {
        return mbt_use_alg_impl(MBC_ALG_EC, impl);
    }
    return mbt_use_impl(state);
}

#endif /* MBC_TESTS_EC_IMPLS_H */
