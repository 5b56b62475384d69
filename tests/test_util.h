/*
 * test_util.h - shared helpers of the cmocka tests: running a test once per
 * implementation, locating the Wycheproof vectors, hex and JSON, randomness.
 */
#ifndef MBC_TESTS_TEST_UTIL_H
#define MBC_TESTS_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "gcm_ref.h"
#include "mbcrypto.h"

/* MBT_IMPL_TESTS(fn): two cmocka entries, "fn/c" and "fn/ifma"; the test's
 * *state is the implementation name. Call mbt_use_impl(state) first. */
#define MBT_IMPL_TESTS(fn)                                                                         \
    {#fn "/c", fn, NULL, NULL, (void *)"c"},                                                       \
    {                                                                                              \
#fn "/ifma", fn, NULL, NULL, (void *)"ifma"                                                \
    }

/*
 * mbt_use_impl: selects the implementation named by *state ("c" or "ifma")
 * through mbc_cpu_restrict() and checks that it is the one dispatched. When
 * the CPU lacks it, prints a clear message and skip()s the test (returns
 * only when the implementation runs). Returns the implementation name.
 */
const char *mbt_use_impl(void **state);

/*
 * mbt_use_alg_impl: generic form of mbt_use_impl for any algorithm family:
 * removes features through mbc_cpu_restrict() (most features kept first)
 * until mbc_impl_name(alg) is impl, e.g. (MBC_ALG_GCM, "aesni"). When no
 * feature word selects it (CPU or build lacks it), prints a message and
 * skip()s. Returns impl. mbt_alg_impl_available: the same test, 1/0, with
 * the selection left as found.
 */
const char *mbt_use_alg_impl(mbc_alg alg, const char *impl);
int mbt_alg_impl_available(mbc_alg alg, const char *impl);

/* mbt_impl_available: 1 if the CPU (and build) can run impl. */
int mbt_impl_available(const char *impl);

/* mbt_vectors_path: "<vectors dir>/wycheproof/<file>" in a static buffer.
 * The directory is $MBC_VECTORS_DIR, else the build-time default. */
const char *mbt_vectors_path(const char *file);

/* mbt_load_json: parses a vectors file; fails the test if it is missing. */
json_t *mbt_load_json(const char *file);

/* mbt_hex: decodes the hex string s into a malloc'ed buffer (*len bytes;
 * never NULL, even for ""). Fails the test on bad hex. */
uint8_t *mbt_hex(const char *s, size_t *len);

/* mbt_json_hex: mbt_hex of the string member key of obj. */
uint8_t *mbt_json_hex(const json_t *obj, const char *key, size_t *len);

/* mbt_left_pad: copies a big-endian integer src (src_len bytes, possibly
 * with leading zeros) into dst of dst_len bytes; returns 0 if it does not
 * fit (non-zero bytes would be dropped). */
int mbt_left_pad(uint8_t *dst, size_t dst_len, const uint8_t *src, size_t src_len);

/* mbt_rand: deterministic test randomness (xoshiro256**), seeded from
 * $MBC_TEST_SEED or a fixed default; the seed is printed once. */
uint64_t mbt_rand(void);
void mbt_rand_bytes(uint8_t *buf, size_t len);

/* mbt_soak: 1 when MBC_TEST_SOAK=1 asks for the long runs; mbt_quick: 1
 * when MBC_TEST_QUICK=1 asks for the short ones (the sanitizer builds). */
int mbt_soak(void);
int mbt_quick(void);

/* mbt_scale: an iteration count n of a randomised test, scaled by the run:
 * n * 20 with MBC_TEST_SOAK=1; n / 16 (at least 1) with MBC_TEST_QUICK=1,
 * which tools/run.sh sets for the sanitizer builds, whose job is to catch
 * memory and UB errors rather than to repeat the statistics; n otherwise. */
size_t mbt_scale(size_t n);

/* mbt_lane_bn: lane lane of the k mb52 rows a (uint64_t[8] each) as a new
 * BIGNUM. mbt_bn_to_lane: the other way (v must fit k digits; the other
 * lanes are left as they are). Both fail the test on an OpenSSL error. */
struct bignum_st;
struct bignum_st *mbt_lane_bn(const uint64_t (*a)[8], unsigned k, unsigned lane);
void mbt_bn_to_lane(uint64_t (*a)[8], unsigned k, unsigned lane, const struct bignum_st *v);

/* mbt_filter: applies $MBC_TEST_FILTER, when set, as cmocka's test filter:
 * only the cases whose names match the pattern run ('*' and '?' wildcards,
 * e.g. MBC_TEST_FILTER='*ifma'). tools/emu/run_avx512.sh uses it to spend
 * the emulator's time on the AVX-512 cases only. */
void mbt_filter(void);

/* mbt_run: runs the group (filtered by mbt_filter), returns cmocka's failure
 * count. */
#define mbt_run(name, tests) \
    (mbt_filter(), _cmocka_run_group_tests(name, tests, sizeof(tests) / sizeof((tests)[0]), NULL, NULL))

#endif /* MBC_TESTS_TEST_UTIL_H */
