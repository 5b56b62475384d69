/*
 * test_cxx.cpp - mbcrypto.h as C++: this file is compiled with -Wall -Wextra
 * -Wpedantic -Wold-style-cast -Wuseless-cast (g++) -Wzero-as-null-pointer-
 * constant -Werror once per standard from C++11 on (tests/meson.build), with
 * every macro of the header expanded (header_macros.inc, generated from the
 * header), and linked against the shared library. It calls a few functions
 * the way a C++ server would and prints TAP.
 */
#include <mbcrypto.h>

#include <cstdio>
#include <cstring>

namespace
{

int num_cases;
int num_failed;

void check(bool ok, const char *what)
{
    num_cases++;
    std::printf("%s %d - %s\n", ok ? "ok" : "not ok", num_cases, what);
    if (!ok) {
        num_failed++;
    }
}

/* use: evaluates one macro of the header as an expression. */
unsigned num_macros;
template <typename T> void use(const T &)
{
    num_macros++;
}

void expand_every_macro()
{
#include "header_macros.inc"
}

void test_gcm()
{
    uint8_t k[32], iv[12], aad[7], pt[100], ct[100], ct2[100], back[100], tag[16], tag2[16];
    for (unsigned i = 0; i < sizeof(pt); i++) {
        pt[i] = static_cast<uint8_t>(3 * i + 1);
        k[i % sizeof(k)] = static_cast<uint8_t>(i);
        iv[i % sizeof(iv)] = static_cast<uint8_t>(7 * i);
        aad[i % sizeof(aad)] = static_cast<uint8_t>(i ^ 0x5a);
    }
    mbc_gcm_key *key = nullptr;
    check(mbc_gcm_key_new(&key, k, sizeof(k)) == MBC_OK && key != nullptr, "mbc_gcm_key_new");
    check(mbc_gcm_seal(key, ct, tag, MBC_GCM_TAG_LEN, iv, sizeof(iv), aad, sizeof(aad), pt,
                       sizeof(pt)) == MBC_OK,
          "mbc_gcm_seal");
    mbc_gcm_ctx ctx;
    bool ok = mbc_gcm_init(&ctx, key, iv, sizeof(iv), 0) == MBC_OK &&
              mbc_gcm_aad(&ctx, aad, sizeof(aad)) == MBC_OK &&
              mbc_gcm_encrypt(&ctx, ct2, pt, 33) == MBC_OK &&
              mbc_gcm_encrypt(&ctx, ct2 + 33, pt + 33, sizeof(pt) - 33) == MBC_OK &&
              mbc_gcm_finish(&ctx, tag2, sizeof(tag2)) == MBC_OK;
    check(ok && std::memcmp(ct, ct2, sizeof(ct)) == 0 && std::memcmp(tag, tag2, 16) == 0,
          "streaming seal equals one-shot");
    check(mbc_gcm_open(key, back, tag, 16, iv, sizeof(iv), aad, sizeof(aad), ct, sizeof(ct)) ==
                  MBC_OK &&
              std::memcmp(back, pt, sizeof(pt)) == 0,
          "mbc_gcm_open");
    tag[3] ^= 0x10;
    check(mbc_gcm_open(key, back, tag, 16, iv, sizeof(iv), nullptr, 0, ct, sizeof(ct)) ==
              MBC_ERR_AUTH,
          "mbc_gcm_open refuses a bad tag");
    check(std::strcmp(mbc_gcm_key_impl(key), mbc_impl_name(MBC_ALG_GCM)) == 0, "mbc_gcm_key_impl");
    mbc_gcm_key_free(key);
}

void test_rsa_and_manager()
{
    const uint8_t n[2] = {0xc3, 0x4f}, e[1] = {3};
    mbc_rsa_pub_key *pub = nullptr;
    check(mbc_rsa_pub_key_new(&pub, n, sizeof(n), e, sizeof(e)) == MBC_ERR_KEY_SIZE &&
              pub == nullptr,
          "mbc_rsa_pub_key_new refuses a 16-bit modulus");

    mbc_mgr *mgr = nullptr;
    check(mbc_mgr_new(&mgr, nullptr) == MBC_OK && mgr != nullptr, "mbc_mgr_new");
    mbc_job job{}; /* value-initialized: the private fields are zero */
    job.op = MBC_OP_RSA_PUBLIC;
    check(mbc_mgr_submit(mgr, &job) == MBC_OK, "mbc_mgr_submit");
    check(mbc_mgr_get_completed(mgr) == &job && job.status == MBC_ERR_NULL_PARAM,
          "a job without a key completes with MBC_ERR_NULL_PARAM");
    mbc_mgr_free(mgr);
}

} // namespace

int main()
{
    expand_every_macro();
    char version[32];
    std::snprintf(version, sizeof(version), "%d.%d.%d", MBC_VERSION_MAJOR, MBC_VERSION_MINOR,
                  MBC_VERSION_PATCH);
    check(std::strcmp(mbc_version_string(), version) == 0 && num_macros > 0 && MBC_LANES == 8,
          "version and macros");
    const mbc_status st = 0x70u;
    check(mbc_lane_code(st, 1) == MBC_LANE_FAULT && mbc_lane_code(st, 0) == MBC_LANE_OK &&
              mbc_status_ok_mask(st) == 0xFDu,
          "mbc_lane_code, mbc_status_ok_mask");
    check(MBC_GCM_MAX_DATA_LEN == (uint64_t{1} << 36) - 32, "MBC_GCM_MAX_DATA_LEN");
    test_gcm();
    test_rsa_and_manager();
    std::printf("1..%d\n", num_cases); /* TAP allows the plan last */
    return num_failed == 0 ? 0 : 1;
}
