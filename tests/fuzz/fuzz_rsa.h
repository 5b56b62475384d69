/*
 * fuzz_rsa.h - what the RSA fuzz targets share (the BIGNUM helpers serve
 * fuzz_ec and fuzz_x25519 too): OpenSSL BIGNUMs of byte strings, the documented rules of RSA key
 * creation checked with BIGNUM arithmetic, OpenSSL public keys of fuzzed (n, e), and the keys of
 * the seed corpora.
 */
#ifndef MBC_TESTS_FUZZ_FUZZ_RSA_H
#define MBC_TESTS_FUZZ_FUZZ_RSA_H

#include <openssl/bn.h>
#include <openssl/evp.h>

#include "fuzz_util.h"
#include "ossl_rsa.h"

/* The modulus sizes mbcrypto supports, and the largest in bytes. */
#define FZ_RSA_NUM_SIZES 3
extern const unsigned fz_rsa_bits[FZ_RSA_NUM_SIZES];
#define FZ_RSA_MAX_BYTES 512

/* fz_bn_ctx: one BN_CTX for the process. */
BN_CTX *fz_bn_ctx(void);

/* fz_bn: the BIGNUM of a big-endian byte string (len 0: zero). Never NULL. */
BIGNUM *fz_bn(const uint8_t *p, size_t len);

/* fz_bn_be: x as exactly len big-endian bytes; aborts if it does not fit. */
void fz_bn_be(const BIGNUM *x, uint8_t *out, size_t len);

/* Near-miss edits of fuzzed numbers (fuzz_ec, fuzz_x25519): fz_bn_add_delta
 * adds delta (of either sign), fz_bn_flip_bit flips one bit, fz_bn_wrap
 * reduces x (of either sign) mod 2^bits. */
void fz_bn_add_delta(BIGNUM *x, int delta);
void fz_bn_flip_bit(BIGNUM *x, int bit);
void fz_bn_wrap(BIGNUM *x, int bits);

/* fz_rsa_supported: 1 if a modulus of bits bits is one mbcrypto takes. */
int fz_rsa_supported(int bits);

/*
 * fz_rsa_pub_errs: the errors the header documents for the public key (n, e)
 * (mbc_rsa_pub_key_new, and the same checks in mbc_rsa_priv_key_new): a size
 * other than 2048/3072/4096 bits (MBC_ERR_KEY_SIZE), an even n
 * (MBC_ERR_EVEN_MODULUS), e even, below 3 or not below n
 * (MBC_ERR_BAD_EXPONENT). Empty for a key that must be accepted.
 */
fz_errs fz_rsa_pub_errs(const BIGNUM *n, const BIGNUM *e);

/* fz_ossl_rsa_takes: 1 if OpenSSL 3.0 performs public operations with
 * (n, e): e below n and, above 3072 bits, e of at most 64 bits. */
int fz_ossl_rsa_takes(const BIGNUM *n, const BIGNUM *e);

/* fz_ossl_rsa_pub: an OpenSSL public key of (n, e). Never NULL. */
EVP_PKEY *fz_ossl_rsa_pub(const BIGNUM *n, const BIGNUM *e);

/* fz_seed_key: an OpenSSL key of fz_rsa_bits[i] bits (e = 65537), made once
 * per process, with its components, for the seed writers. */
EVP_PKEY *fz_seed_key(unsigned i, mbt_rsa_parts *parts);

#endif /* MBC_TESTS_FUZZ_FUZZ_RSA_H */
