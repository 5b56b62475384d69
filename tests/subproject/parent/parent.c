/*
 * parent.c - a program of the subproject test's parent project: calls a few
 * mbcrypto functions through the installed header and checks their answers
 * (an AES-128-GCM known answer, one-shot and streaming; key validation; the
 * status helpers). Exit status 0 when every check holds.
 */
#include <stdio.h>
#include <string.h>

#include <mbcrypto.h>

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "parent: FAILED: %s\n", what);
        failures++;
    }
}

int main(void)
{
    /* The GCM specification's test case 2: AES-128, zero key, zero 12-byte
     * IV, one zero block. */
    static const uint8_t ct_want[16] = {0x03, 0x88, 0xda, 0xce, 0x60, 0xb6, 0xa3, 0x92,
                                        0xf3, 0x28, 0xc2, 0xb9, 0x71, 0xb2, 0xfe, 0x78};
    static const uint8_t tag_want[16] = {0xab, 0x6e, 0x47, 0xd4, 0x2c, 0xec, 0x13, 0xbd,
                                         0xf5, 0x3a, 0x67, 0xb2, 0x12, 0x57, 0xbd, 0xdf};
    const uint8_t k[16] = {0}, iv[12] = {0}, pt[16] = {0};
    uint8_t ct[16], tag[16], back[16];

    printf("mbcrypto %s: RSA %s, AES-GCM %s\n", mbc_version_string(), mbc_impl_name(MBC_ALG_RSA),
           mbc_impl_name(MBC_ALG_GCM));
    char version[32];
    snprintf(version, sizeof(version), "%d.%d.%d", MBC_VERSION_MAJOR, MBC_VERSION_MINOR,
             MBC_VERSION_PATCH);
    check(strcmp(mbc_version_string(), version) == 0, "header and library versions");

    mbc_gcm_key *key = NULL;
    check(mbc_gcm_key_new(&key, k, sizeof(k)) == MBC_OK, "mbc_gcm_key_new");
    if (key == NULL) {
        return 1;
    }
    check(mbc_gcm_seal(key, ct, tag, 16, iv, 12, NULL, 0, pt, 16) == MBC_OK, "seal");
    check(memcmp(ct, ct_want, 16) == 0 && memcmp(tag, tag_want, 16) == 0, "seal known answer");
    check(mbc_gcm_open(key, back, tag, 16, iv, 12, NULL, 0, ct, 16) == MBC_OK, "open");
    check(memcmp(back, pt, 16) == 0, "open plaintext");
    tag[0] ^= 1;
    check(mbc_gcm_open(key, back, tag, 16, iv, 12, NULL, 0, ct, 16) == MBC_ERR_AUTH,
          "open with a bad tag");

    mbc_gcm_ctx ctx;
    check(mbc_gcm_init(&ctx, key, iv, 12, 0) == MBC_OK, "init");
    check(mbc_gcm_encrypt(&ctx, ct, pt, 5) == MBC_OK, "encrypt 5");
    check(mbc_gcm_encrypt(&ctx, ct + 5, pt + 5, 11) == MBC_OK, "encrypt 11");
    check(mbc_gcm_finish(&ctx, tag, 16) == MBC_OK, "finish");
    check(memcmp(ct, ct_want, 16) == 0 && memcmp(tag, tag_want, 16) == 0, "streaming known answer");
    mbc_gcm_key_free(key);

    /* A 16-bit modulus is refused with its own error. */
    const uint8_t n[2] = {0xc3, 0x4f}, e[1] = {3};
    mbc_rsa_pub_key *pub = NULL;
    check(mbc_rsa_pub_key_new(&pub, n, sizeof(n), e, sizeof(e)) == MBC_ERR_KEY_SIZE && pub == NULL,
          "RSA key size check");
    check(strcmp(mbc_err_str(MBC_ERR_KEY_SIZE), "MBC_ERR_KEY_SIZE") == 0, "mbc_err_str");
    check(mbc_lane_code(0x70u, 1) == MBC_LANE_FAULT && mbc_status_ok_mask(0x70u) == 0xFDu,
          "lane status helpers");
    return failures == 0 ? 0 : 1;
}
