/*
 * impl_select.h - selecting one implementation of an algorithm family by
 * removing CPU features with mbc_cpu_restrict(). No cmocka: shared by the
 * cmocka tests (test_util.c) and the fuzz targets (tests/fuzz).
 */
#ifndef MBC_TESTS_IMPL_SELECT_H
#define MBC_TESTS_IMPL_SELECT_H

#include "mbcrypto.h"

/*
 * mbt_select_alg_impl: removes features through mbc_cpu_restrict() (most
 * features kept first) until mbc_impl_name(alg) is impl, e.g. (MBC_ALG_GCM,
 * "aesni"), and returns 1 with that selection in force; returns 0, with every
 * feature restored, when no feature word selects it (CPU or build lacks it).
 */
int mbt_select_alg_impl(mbc_alg alg, const char *impl);

#endif /* MBC_TESTS_IMPL_SELECT_H */
