/* test_util.c - see test_util.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>

#include "test_util.h"
#include "hexval.h"
#include "impl_select.h"

#ifndef MBT_VECTORS_DIR
#define MBT_VECTORS_DIR "../shared/vectors"
#endif

int mbt_impl_available(const char *impl)
{
    if (strcmp(impl, "c") == 0) {
        return 1;
    }
    if (strcmp(impl, "ifma") == 0) {
#if MBC_HAVE_IFMA
        uint64_t all = mbc_cpu_restrict(~0ull);
        return (all & MBC_CPU_IFMA_PATH) == MBC_CPU_IFMA_PATH;
#else
        return 0;
#endif
    }
    return 0;
}

const char *mbt_use_impl(void **state)
{
    const char *impl = (const char *)*state;
    if (!mbt_impl_available(impl)) {
        print_message("SKIP %s: this CPU (or build) lacks AVX-512 IFMA (needs "
                      "AVX512F+BW+VL+IFMA with OS ZMM state)\n",
                      impl);
        skip();
    }
    mbc_cpu_restrict(strcmp(impl, "c") == 0 ? 0 : ~0ull);
    assert_string_equal(mbc_impl_name(MBC_ALG_RSA), impl);
    return impl;
}

int mbt_alg_impl_available(mbc_alg alg, const char *impl)
{
    int ok = mbt_select_alg_impl(alg, impl);
    mbc_cpu_restrict(~0ull);
    return ok;
}

const char *mbt_use_alg_impl(mbc_alg alg, const char *impl)
{
    if (!mbt_select_alg_impl(alg, impl)) {
        print_message("SKIP %s: this CPU (or build) cannot run it (features 0x%llx)\n", impl,
                      (unsigned long long)mbc_cpu_features());
        skip();
    }
    assert_string_equal(mbc_impl_name(alg), impl);
    return impl;
}

const char *mbt_vectors_path(const char *file)
{
    static char path[4096];
    const char *dir = getenv("MBC_VECTORS_DIR");
    if (dir == NULL || *dir == '\0') {
        dir = MBT_VECTORS_DIR;
    }
    snprintf(path, sizeof(path), "%s/wycheproof/%s", dir, file);
    return path;
}

json_t *mbt_load_json(const char *file)
{
    json_error_t err;
    const char *path = mbt_vectors_path(file);
    json_t *root = json_load_file(path, 0, &err);
    if (root == NULL) {
        fail_msg("cannot load %s: %s (set MBC_VECTORS_DIR to the shared vectors)", path, err.text);
    }
    return root;
}

uint8_t *mbt_hex(const char *s, size_t *len)
{
    size_t n = strlen(s);
    assert_true(n % 2 == 0);
    uint8_t *out = malloc(n / 2 + 1);
    assert_non_null(out);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = mbt_hexval(s[2 * i]), lo = mbt_hexval(s[2 * i + 1]);
        assert_true(hi >= 0 && lo >= 0);
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    *len = n / 2;
    return out;
}

uint8_t *mbt_json_hex(const json_t *obj, const char *key, size_t *len)
{
    const char *s = json_string_value(json_object_get(obj, key));
    if (s == NULL) {
        fail_msg("JSON member '%s' missing", key);
    }
    return mbt_hex(s, len);
}

int mbt_left_pad(uint8_t *dst, size_t dst_len, const uint8_t *src, size_t src_len)
{
    while (src_len > dst_len) {
        if (*src != 0) {
            return 0;
        }
        src++;
        src_len--;
    }
    memset(dst, 0, dst_len - src_len);
    memcpy(dst + dst_len - src_len, src, src_len);
    return 1;
}

static uint64_t rng_s[4];
static int rng_seeded;

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t mbt_rand(void)
{
    if (!rng_seeded) {
        const char *env = getenv("MBC_TEST_SEED");
        uint64_t seed = env ? strtoull(env, NULL, 0) : 0x6d62637279707430ull;
        print_message("test seed: 0x%llx (set MBC_TEST_SEED to repeat another)\n",
                      (unsigned long long)seed);
        for (int i = 0; i < 4; i++) {
            /* splitmix64 */
            seed += 0x9e3779b97f4a7c15ull;
            uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            rng_s[i] = z ^ (z >> 31);
        }
        rng_seeded = 1;
    }
    const uint64_t result = rotl(rng_s[1] * 5, 7) * 9;
    const uint64_t t = rng_s[1] << 17;
    rng_s[2] ^= rng_s[0];
    rng_s[3] ^= rng_s[1];
    rng_s[1] ^= rng_s[2];
    rng_s[0] ^= rng_s[3];
    rng_s[2] ^= t;
    rng_s[3] = rotl(rng_s[3], 45);
    return result;
}

void mbt_rand_bytes(uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = (uint8_t)mbt_rand();
    }
}

int mbt_soak(void)
{
    const char *env = getenv("MBC_TEST_SOAK");
    return env != NULL && strcmp(env, "1") == 0;
}

int mbt_quick(void)
{
    const char *env = getenv("MBC_TEST_QUICK");
    return env != NULL && strcmp(env, "1") == 0;
}

void mbt_filter(void)
{
    const char *pattern = getenv("MBC_TEST_FILTER");
    if (pattern != NULL && pattern[0] != '\0') {
        cmocka_set_test_filter(pattern);
    }
}

size_t mbt_scale(size_t n)
{
    if (mbt_soak()) {
        return n * 20;
    }
    if (mbt_quick()) {
        return n / 16 > 0 ? n / 16 : 1;
    }
    return n;
}

BIGNUM *mbt_lane_bn(const uint64_t (*a)[8], unsigned k, unsigned lane)
{
    BIGNUM *r = BN_new();
    assert_non_null(r);
    BN_zero(r);
    for (unsigned j = k; j-- > 0;) {
        assert_true(BN_lshift(r, r, 52) == 1 && BN_add_word(r, a[j][lane]) == 1);
    }
    return r;
}

void mbt_bn_to_lane(uint64_t (*a)[8], unsigned k, unsigned lane, const BIGNUM *v)
{
    BIGNUM *t = BN_new();
    assert_non_null(t);
    assert_true(BN_num_bits(v) <= (int)(52 * k));
    for (unsigned j = 0; j < k; j++) {
        assert_true(BN_rshift(t, v, (int)(52 * j)) == 1);
        BN_mask_bits(t, 52);
        a[j][lane] = BN_get_word(t);
    }
    BN_free(t);
}
