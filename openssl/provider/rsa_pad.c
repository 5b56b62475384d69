/*
 * rsa_pad.c - the signature encodings of PKCS#1 (RFC 8017): EMSA-PKCS1-v1_5
 * (section 9.2) and EMSA-PSS with MGF1 (sections 9.1, B.2.1), written from
 * the RFC; hashes through libcrypto's EVP_Digest. Every modulus mbcrypto
 * serves has a multiple of 8 bits, so emLen = k and emBits = 8k - 1.
 * The encoded values are public (digests, salts): plain comparisons.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include "rsa_pad.h"

int mbp_pkcs1_encode(uint8_t *em, size_t k, const uint8_t *prefix, size_t prefix_len,
                     const uint8_t *data, size_t data_len)
{
    /* 00 01 PS 00 T with at least 8 bytes of PS. */
    if (prefix_len + data_len + 11 > k) {
        return 0;
    }
    const size_t ps = k - 3 - prefix_len - data_len;
    em[0] = 0x00;
    em[1] = 0x01;
    memset(em + 2, 0xFF, ps);
    em[2 + ps] = 0x00;
    memcpy(em + 3 + ps, prefix, prefix_len);
    memcpy(em + 3 + ps + prefix_len, data, data_len);
    return 1;
}

/* mgf1_xor: out[0..len) ^= MGF1(seed, len) with md. */
static int mgf1_xor(uint8_t *out, size_t len, const uint8_t *seed, size_t seed_len,
                    const EVP_MD *md)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    const size_t h = (size_t)EVP_MD_get_size(md);
    uint8_t t[EVP_MAX_MD_SIZE];
    int ok = c != NULL;
    for (uint32_t counter = 0, done = 0; ok && done < len; counter++) {
        const uint8_t cb[4] = {(uint8_t)(counter >> 24), (uint8_t)(counter >> 16),
                               (uint8_t)(counter >> 8), (uint8_t)counter};
        ok = EVP_DigestInit_ex(c, md, NULL) && EVP_DigestUpdate(c, seed, seed_len) &&
             EVP_DigestUpdate(c, cb, sizeof(cb)) && EVP_DigestFinal_ex(c, t, NULL);
        for (size_t i = 0; ok && i < h && done < len; i++) {
            out[done++] ^= t[i];
        }
    }
    EVP_MD_CTX_free(c);
    return ok;
}

/* pss_hash: H = Hash(00 x 8 || mhash || salt). */
static int pss_hash(uint8_t *h, const EVP_MD *md, const uint8_t *mhash, const uint8_t *salt,
                    size_t salt_len)
{
    static const uint8_t zeros[8] = {0};
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    const int ok = c != NULL && EVP_DigestInit_ex(c, md, NULL) &&
                   EVP_DigestUpdate(c, zeros, sizeof(zeros)) &&
                   EVP_DigestUpdate(c, mhash, (size_t)EVP_MD_get_size(md)) &&
                   EVP_DigestUpdate(c, salt, salt_len) && EVP_DigestFinal_ex(c, h, NULL);
    EVP_MD_CTX_free(c);
    return ok;
}

int mbp_pss_salt_len(int saltlen, size_t k, const EVP_MD *md, int sign, int *out)
{
    const int h = EVP_MD_get_size(md);
    const int max = (int)k - h - 2;
    if (h <= 0 || max < 0) {
        return 0;
    }
    switch (saltlen) {
    case RSA_PSS_SALTLEN_DIGEST:
        *out = h;
        break;
    case RSA_PSS_SALTLEN_AUTO:
        *out = sign ? max : MBP_PSS_SALT_RECOVER;
        break;
    case RSA_PSS_SALTLEN_MAX:
        *out = max;
        break;
    case MBP_PSS_SALTLEN_AUTO_DIGEST_MAX:
        *out = sign ? (h < max ? h : max) : MBP_PSS_SALT_RECOVER;
        break;
    default:
        if (saltlen < 0) {
            return 0;
        }
        *out = saltlen;
        break;
    }
    return *out == MBP_PSS_SALT_RECOVER || *out <= max;
}

int mbp_pss_encode(uint8_t *em, size_t k, const EVP_MD *md, const EVP_MD *mgf1,
                   const uint8_t *mhash, int salt_len, OSSL_LIB_CTX *libctx)
{
    const size_t h = (size_t)EVP_MD_get_size(md);
    const size_t s = (size_t)salt_len;
    if (salt_len < 0 || k < h + s + 2) {
        return 0;
    }
    /* em = maskedDB (k - h - 1) || H (h) || 0xbc;
     * DB = 00.. 01 || salt, the salt at its end. */
    const size_t db_len = k - h - 1;
    uint8_t *db = em, *hh = em + db_len;
    memset(db, 0, db_len);
    db[db_len - s - 1] = 0x01;
    if (s > 0 && RAND_bytes_ex(libctx, db + db_len - s, s, 0) <= 0) {
        return 0;
    }
    if (!pss_hash(hh, md, mhash, db + db_len - s, s) || !mgf1_xor(db, db_len, hh, h, mgf1)) {
        return 0;
    }
    db[0] &= 0x7F; /* emBits = 8k - 1 */
    em[k - 1] = 0xBC;
    return 1;
}

int mbp_pss_verify(const uint8_t *em_in, size_t k, const EVP_MD *md, const EVP_MD *mgf1,
                   const uint8_t *mhash, int salt_len)
{
    const size_t h = (size_t)EVP_MD_get_size(md);
    uint8_t em[512];
    if (k > sizeof(em) || k < h + 2 || em_in[k - 1] != 0xBC || (em_in[0] & 0x80) != 0) {
        return 0;
    }
    memcpy(em, em_in, k);
    const size_t db_len = k - h - 1;
    uint8_t *db = em;
    const uint8_t *hh = em + db_len;
    if (!mgf1_xor(db, db_len, hh, h, mgf1)) {
        return 0;
    }
    db[0] &= 0x7F;
    /* DB = 00..00 01 salt */
    size_t i = 0;
    while (i < db_len && db[i] == 0) {
        i++;
    }
    if (i == db_len || db[i] != 0x01) {
        return 0;
    }
    const size_t s = db_len - i - 1;
    if (salt_len != MBP_PSS_SALT_RECOVER && s != (size_t)salt_len) {
        return 0;
    }
    uint8_t h2[EVP_MAX_MD_SIZE];
    return pss_hash(h2, md, mhash, db + i + 1, s) && CRYPTO_memcmp(h2, hh, h) == 0;
}
