/*
 * prov.h - what the files of the mbcrypto OpenSSL provider share.
 */
#ifndef MBC_OPENSSL_PROVIDER_PROV_H
#define MBC_OPENSSL_PROVIDER_PROV_H

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/types.h>

#include "../common/mbo.h"

/* The property every algorithm of ours carries. */
#define MBP_PROPS "provider=mbcrypto"

/* mbp_ctx: the provider context, one per loading (library context). */
struct mbp_ctx {
    const OSSL_CORE_HANDLE *handle;
    OSSL_LIB_CTX *libctx;   /* a child of the loading library context: the
                             * digests and random numbers we use come from it */
    OSSL_ALGORITHM *served; /* what query_operation answers (prov.c), by the
                             * policy at init */
};

/* Reasons of the errors we raise (mbp_err); names in prov.c. */
enum mbp_reason {
    MBP_R_INIT = 1,      /* not initialised / no key */
    MBP_R_BAD_KEY,       /* the key cannot do this operation */
    MBP_R_BAD_PADDING,   /* padding mode not supported */
    MBP_R_BAD_DIGEST,    /* digest not allowed or not fetched */
    MBP_R_BAD_SALT,      /* PSS salt length */
    MBP_R_BAD_LENGTH,    /* input or output length */
    MBP_R_BAD_SIGNATURE, /* signature did not verify */
    MBP_R_MBCRYPTO,      /* mbcrypto returned an error */
    MBP_R_BAD_PARAM,     /* a parameter's value */
    MBP_R_CIPHER,        /* cipher call refused (tag, IV, order) */
};

/* mbp_err: raises reason (with an optional printf detail) on the OpenSSL
 * error queue through the core. */
void mbp_err(const struct mbp_ctx *pc, enum mbp_reason reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Key management selections, shorter. */
#define MBP_SEL_PUB OSSL_KEYMGMT_SELECT_PUBLIC_KEY
#define MBP_SEL_PRIV OSSL_KEYMGMT_SELECT_PRIVATE_KEY
#define MBP_SEL_KEYPAIR OSSL_KEYMGMT_SELECT_KEYPAIR
#define MBP_SEL_DOMAIN OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS

/* mbp_params_clear_free: wipes the values of params (private components),
 * then frees them (OSSL_PARAM_free). NULL is allowed. */
void mbp_params_clear_free(OSSL_PARAM *params);

/* The algorithms' dispatch tables. */
extern const OSSL_DISPATCH mbp_rsa_keymgmt[];
extern const OSSL_DISPATCH mbp_rsa_signature[];
extern const OSSL_DISPATCH mbp_x25519_keymgmt[];
extern const OSSL_DISPATCH mbp_x25519_keyexch[];
extern const OSSL_DISPATCH mbp_aes128gcm[];
extern const OSSL_DISPATCH mbp_aes192gcm[];
extern const OSSL_DISPATCH mbp_aes256gcm[];

/* mbp_rsa_key: our RSA key data (rsa_kmgmt.c): the standard components,
 * kept for export, and the mbcrypto key objects built once at import. */
struct mbp_rsa_key {
    struct mbp_ctx *pc;
    BIGNUM *n, *e, *d, *p, *q, *dp, *dq, *qinv;
    mbc_rsa_pub_key *pub;
    mbc_rsa_priv_key *priv; /* NULL for a public key */
    unsigned bits;
};

#endif /* MBC_OPENSSL_PROVIDER_PROV_H */
