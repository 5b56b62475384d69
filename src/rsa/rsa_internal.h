/*
 * rsa_internal.h - RSA key objects and the glue's private helpers.
 * Keys keep every number as a plain little-endian array of 52-bit digits
 * (one lane); a batch gathers the 8 lanes' arrays into mb52 rows.
 */
#ifndef MBC_SRC_RSA_RSA_INTERNAL_H
#define MBC_SRC_RSA_RSA_INTERNAL_H

#include "../internal.h"
#include "../mb52/mb52.h"

#define RSA_MAX_HALF_DIGITS (MB52_MAX_DIGITS / 2)

/* rsa_mod_consts: a modulus and its Montgomery constants for R = 2^(52k). */
struct rsa_mod_consts {
    uint64_t m0inv;                   /* -m^-1 mod 2^52 */
    uint64_t m[MB52_MAX_DIGITS];
    uint64_t r1[MB52_MAX_DIGITS];     /* R mod m */
    uint64_t to_mont[MB52_MAX_DIGITS];/* R^2 mod m (n), R^3 mod m (p, q) */
};

/* Both key types start with their tag (MBC_KEY_RSA_PUB / MBC_KEY_RSA_PRIV;
 * info: the modulus bits, 2048, 3072 or 4096), set last, once the key is
 * complete. */
struct mbc_rsa_pub_key {
    struct mbc_key_tag tag;
    unsigned kn;     /* digits of n: 2 * mb52_digits(bits / 2) */
    unsigned e_bits; /* bit length of e */
    struct rsa_mod_consts n;
    uint64_t e[MB52_MAX_DIGITS];
};

struct mbc_rsa_priv_key {
    struct mbc_key_tag tag;
    unsigned kh; /* digits of p and q */
    struct mbc_rsa_pub_key pub;
    struct rsa_mod_consts p, q;
    uint64_t dp[RSA_MAX_HALF_DIGITS];
    uint64_t dq[RSA_MAX_HALF_DIGITS];
    uint64_t qinv_r[RSA_MAX_HALF_DIGITS]; /* qinv * R mod p */
};

/* rsa_supported_bits: 1 for 2048, 3072 and 4096. */
static inline int rsa_supported_bits(unsigned bits)
{
    return bits == 2048 || bits == 3072 || bits == 4096;
}

/* rsa_half_digits: digits of a CRT half for a modulus of bits bits. */
static inline unsigned rsa_half_digits(unsigned bits)
{
    return mb52_digits(bits / 2);
}

#endif /* MBC_SRC_RSA_RSA_INTERNAL_H */
