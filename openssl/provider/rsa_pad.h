/*
 * rsa_pad.h - PKCS#1 signature encodings (rsa_pad.c) for moduli of k bytes
 * (a multiple of 8 bits).
 */
#ifndef MBC_OPENSSL_PROVIDER_RSA_PAD_H
#define MBC_OPENSSL_PROVIDER_RSA_PAD_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/types.h>

/* OpenSSL 3.1's RSA_PSS_SALTLEN_AUTO_DIGEST_MAX (not in 3.0's headers):
 * signing: the digest length, or less if the key is too small; verifying:
 * any salt length. */
#define MBP_PSS_SALTLEN_AUTO_DIGEST_MAX (-4)
/* mbp_pss_salt_len's answer for "take the salt length from the signature". */
#define MBP_PSS_SALT_RECOVER (-1)

/* mbp_pkcs1_encode: em[0..k) = 00 01 FF.. 00 prefix data (EMSA-PKCS1-v1_5
 * with prefix the DigestInfo header, or none for raw data); 0 if it does not
 * fit with 8 bytes of FF. */
int mbp_pkcs1_encode(uint8_t *em, size_t k, const uint8_t *prefix, size_t prefix_len,
                     const uint8_t *data, size_t data_len);

/* mbp_pss_salt_len: the salt length that OpenSSL's saltlen setting means
 * (RSA_PSS_SALTLEN_DIGEST, _AUTO, _MAX, MBP_PSS_SALTLEN_AUTO_DIGEST_MAX or a
 * length) for a k-byte modulus and md, signing or verifying; *out may be
 * MBP_PSS_SALT_RECOVER when verifying. 0 if it cannot be used. */
int mbp_pss_salt_len(int saltlen, size_t k, const EVP_MD *md, int sign, int *out);

/* mbp_pss_encode: EMSA-PSS-ENCODE of the digest mhash (md's size) with a
 * random salt of salt_len bytes into em[0..k). 1 on success. */
int mbp_pss_encode(uint8_t *em, size_t k, const EVP_MD *md, const EVP_MD *mgf1,
                   const uint8_t *mhash, int salt_len, OSSL_LIB_CTX *libctx);

/* mbp_pss_verify: 1 if em[0..k) is a PSS encoding of mhash with a salt of
 * salt_len bytes (any with MBP_PSS_SALT_RECOVER). */
int mbp_pss_verify(const uint8_t *em, size_t k, const EVP_MD *md, const EVP_MD *mgf1,
                   const uint8_t *mhash, int salt_len);

#endif /* MBC_OPENSSL_PROVIDER_RSA_PAD_H */
