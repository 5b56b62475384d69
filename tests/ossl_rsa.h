/*
 * ossl_rsa.h - RSA keys from OpenSSL, shared by the tests and mbc_bench:
 * generate a key, read its CRT components as big-endian byte strings, build
 * mbcrypto's key objects from them, and raw RSA (RSA_NO_PADDING) with OpenSSL
 * as the reference.
 *
 * No cmocka here: every function reports failure through its return value and
 * leaves OpenSSL's error queue as it is, so the tests assert and the bench
 * prints the queue and gives up. Only the public API of mbcrypto is used.
 * mbt_ossl_rsa_* functions call OpenSSL; mbt_rsa_* ones only handle the byte
 * strings (they also serve components that do not come from OpenSSL).
 */
#ifndef MBC_TESTS_OSSL_RSA_H
#define MBC_TESTS_OSSL_RSA_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "mbcrypto.h"

/* The CRT key components, in the order of mbc_rsa_priv_components. */
enum mbt_rsa_part {
    MBT_RSA_N,
    MBT_RSA_E,
    MBT_RSA_P,
    MBT_RSA_Q,
    MBT_RSA_DP,
    MBT_RSA_DQ,
    MBT_RSA_QINV,
    MBT_RSA_NUM_PARTS
};

/* mbt_rsa_parts: the components as big-endian byte strings, each in its own
 * malloc'ed buffer (NULL when missing), len[i] bytes long. */
typedef struct mbt_rsa_parts {
    uint8_t *c[MBT_RSA_NUM_PARTS];
    size_t len[MBT_RSA_NUM_PARTS];
} mbt_rsa_parts;

/* mbt_ossl_rsa_keygen: a new OpenSSL RSA key of bits with public exponent
 * e, or NULL. */
EVP_PKEY *mbt_ossl_rsa_keygen(unsigned bits, uint64_t e);

/* mbt_ossl_rsa_part_name: the OSSL_PKEY_PARAM_RSA_* name of part. */
const char *mbt_ossl_rsa_part_name(enum mbt_rsa_part part);

/*
 * mbt_ossl_rsa_get_parts: the components of pkey, each of minimal length
 * (pad_len 0) or left-padded with zeros to pad_len bytes. Returns 0, or -1
 * when a component is missing, does not fit in pad_len bytes or finds no
 * memory: that one is left NULL and the others are still read. *parts is set
 * in both cases; the caller frees it with mbt_rsa_parts_free.
 */
int mbt_ossl_rsa_get_parts(mbt_rsa_parts *parts, const EVP_PKEY *pkey, size_t pad_len);

/* mbt_rsa_parts_free: wipes and frees every component (NULL ones too);
 * parts becomes all NULL. */
void mbt_rsa_parts_free(mbt_rsa_parts *parts);

/* mbt_rsa_components: parts as mbc_rsa_priv_components (pointers into parts,
 * nothing copied). */
mbc_rsa_priv_components mbt_rsa_components(const mbt_rsa_parts *parts);

/* mbt_rsa_keys_new: mbcrypto's private key *priv and public key *pub (n, e)
 * from parts. Returns MBC_OK, or the first error, with both set to NULL. */
mbc_err mbt_rsa_keys_new(mbc_rsa_priv_key **priv, mbc_rsa_pub_key **pub,
                         const mbt_rsa_parts *parts);

/* mbt_ossl_rsa_raw_ctx: an OpenSSL context of pkey for raw (RSA_NO_PADDING)
 * private (priv = 1: decrypt, in^d mod n) or public (priv = 0: encrypt,
 * in^e mod n) operations, or NULL. Free it with EVP_PKEY_CTX_free. */
EVP_PKEY_CTX *mbt_ossl_rsa_raw_ctx(EVP_PKEY *pkey, int priv);

/* mbt_ossl_rsa_raw_op: one raw operation on a context of mbt_ossl_rsa_raw_ctx
 * made with the same priv: out = in^d or in^e mod n, len bytes each (len =
 * the modulus size). Returns 0, or -1 when OpenSSL fails or returns another
 * length. */
int mbt_ossl_rsa_raw_op(EVP_PKEY_CTX *ctx, int priv, uint8_t *out, const uint8_t *in, size_t len);

/* mbt_ossl_rsa_raw: mbt_ossl_rsa_raw_op on a context made for this call. */
int mbt_ossl_rsa_raw(EVP_PKEY *pkey, int priv, uint8_t *out, const uint8_t *in, size_t len);

#endif /* MBC_TESTS_OSSL_RSA_H */
