/* rsa_pkcs1.c - EMSA-PKCS1-v1_5 encoding (RFC 8017, section 9.2). */
#include <string.h>

#include "../internal.h"

struct digest_info {
    uint8_t prefix_len;
    uint8_t digest_len;
    uint8_t prefix[19];
};

/* DER of DigestInfo up to the digest octets, per RFC 8017 section 9.2 note 1. */
static const struct digest_info digest_infos[] = {
    [MBC_HASH_SHA1] = {15, 20, {0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02,
                                0x1a, 0x05, 0x00, 0x04, 0x14}},
    [MBC_HASH_SHA224] = {19, 28, {0x30, 0x2d, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                  0x65, 0x03, 0x04, 0x02, 0x04, 0x05, 0x00, 0x04, 0x1c}},
    [MBC_HASH_SHA256] = {19, 32, {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                  0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20}},
    [MBC_HASH_SHA384] = {19, 48, {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                  0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30}},
    [MBC_HASH_SHA512] = {19, 64, {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                  0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40}},
};

MBC_API mbc_err mbc_rsa_pkcs1_v15_sign_encode(uint8_t *em, size_t em_len, mbc_hash hash,
                                              const uint8_t *digest, size_t digest_len)
{
    if (em == NULL || digest == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    if ((unsigned)hash >= sizeof(digest_infos) / sizeof(digest_infos[0])) {
        return MBC_ERR_BAD_PARAM;
    }
    const struct digest_info *di = &digest_infos[hash];
    const size_t t_len = (size_t)di->prefix_len + di->digest_len;
    if (digest_len != di->digest_len || em_len < t_len + 11) {
        return MBC_ERR_BAD_PARAM;
    }
    const size_t ps_len = em_len - t_len - 3;
    em[0] = 0x00;
    em[1] = 0x01;
    memset(em + 2, 0xff, ps_len);
    em[2 + ps_len] = 0x00;
    memcpy(em + 3 + ps_len, di->prefix, di->prefix_len);
    memcpy(em + 3 + ps_len + di->prefix_len, digest, digest_len);
    return MBC_OK;
}

MBC_API mbc_err mbc_rsa_pkcs1_v15_verify_encoded(const uint8_t *em, size_t em_len,
                                                 mbc_hash hash, const uint8_t *digest,
                                                 size_t digest_len)
{
    uint8_t expect[512];
    if (em == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    if (em_len > sizeof(expect)) {
        return MBC_ERR_BAD_PARAM;
    }
    mbc_err err = mbc_rsa_pkcs1_v15_sign_encode(expect, em_len, hash, digest, digest_len);
    if (err != MBC_OK) {
        return err;
    }
    int same = mbc_ct_memeq(expect, em, em_len);
    mbc_memzero(expect, em_len);
    return same ? MBC_OK : MBC_ERR_SIG_INVALID;
}
