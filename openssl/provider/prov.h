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
    int core35;             /* the core (libcrypto) is OpenSSL 3.5 or later */
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

/* mbp_fetch_md: *md (freed first) = the digest name from the child library
 * context: with props, else the operation's op_props (when some provider of
 * the digest matches them: "provider=mbcrypto" matches none), else none.
 * 0 (an error raised) when there is no such digest. */
int mbp_fetch_md(const struct mbp_ctx *pc, EVP_MD **md, const char *name, const char *props,
                 const char *op_props);

/*
 * What both signature implementations (rsa_sig.c, ec_sig.c) share.
 * mbp_digest_sign_final, mbp_digest_verify_final: the end of a
 * digest-and-sign: the digest of mdctx (NULL: not a digest operation, 0),
 * signed or checked by the implementation's sign or verify on ctx (a size
 * query, sig NULL, goes to sign as is).
 * mbp_algorithm_id: p gets the DER AlgorithmIdentifier { OID of sig_nid,
 * parameter } (param_type V_ASN1_NULL, V_ASN1_UNDEF for none, or
 * V_ASN1_SEQUENCE with param the DER, an ASN1_STRING that is freed); 0
 * with an error raised when sig_nid is NID_undef or it could not be made.
 */
int mbp_digest_sign_final(void *ctx, EVP_MD_CTX *mdctx, OSSL_FUNC_signature_sign_fn *sign,
                          unsigned char *sig, size_t *siglen, size_t sigsize);
int mbp_digest_verify_final(void *ctx, EVP_MD_CTX *mdctx, OSSL_FUNC_signature_verify_fn *verify,
                            const unsigned char *sig, size_t siglen);
int mbp_algorithm_id(const struct mbp_ctx *pc, OSSL_PARAM *p, int sig_nid, int param_type,
                     ASN1_STRING *param);

/*
 * mbp_md_row: what OpenSSL's default provider does with a digest in
 * signatures (its behaviour, observed on 3.0 and 3.5): md signs with RSA
 * (PKCS#1 v1.5 and PSS, and as PSS's MGF1 digest) from OpenSSL version
 * since; rsa_sig and ecdsa_sig are the signature AlgorithmIdentifiers it
 * gives with PKCS#1 v1.5 and with ECDSA (NID_undef: none); pss: it names md
 * in RSASSA-PSS parameters. mbp_md_row_of: md's row for the running
 * OpenSSL, NULL when the default provider refuses md for RSA signatures
 * (SHAKE, BLAKE2, SM3 before 3.5...).
 */
struct mbp_md_row {
    int md, rsa_sig, ecdsa_sig, pss;
    unsigned long since;
};
const struct mbp_md_row *mbp_md_row_of(const EVP_MD *md);

/* mbp_ecdsa_md_ok: whether the default provider of the running OpenSSL
 * takes md for ECDSA (observed on 3.0 and 3.5: 3.0 takes every digest;
 * 3.5 refuses XOFs (SHAKE, KMAC) and digests without a size (NULL), and
 * takes the others, KECCAK and BLAKE2 included; 3.1-3.4 not seen, taken
 * as 3.0). */
int mbp_ecdsa_md_ok(const EVP_MD *md);

/*
 * mbp_sigctx: the part of a signature context both implementations have,
 * first in their own struct (so a pointer to theirs is one to this).
 * mbp_sigctx_new: a zeroed context of size bytes with pc and a copy of
 * propq (NULL on failure). mbp_sigctx_free: frees what the base holds, then
 * the context. mbp_sigctx_dup: a copy of size bytes of src with its own
 * propq, md reference and digest state; extra (may be NULL) takes the
 * references of the implementation's own fields, and returns 0 when it
 * could not (the copy is then freed with free_fn). NULL on failure.
 */
struct mbp_sigctx {
    struct mbp_ctx *pc;
    char *propq;
    EVP_MD *md;        /* NULL: none set */
    EVP_MD_CTX *mdctx; /* digest-and-sign: the message's digest */
    /* A key another provider holds (mbp_other_sig_*): its operation, and
     * for digest-and-sign the digest context that owns it. */
    EVP_PKEY_CTX *other;
    EVP_MD_CTX *other_md;
    int other_signing;
    /* Handed-off requests with our key (mbp_sync_op): the other provider's
     * operation, kept until the next init (mbp_other_sig_reset). */
    EVP_PKEY_CTX *sync;
};
void *mbp_sigctx_new(void *provctx, const char *propq, size_t size);
void mbp_sigctx_free(struct mbp_sigctx *b);
void *mbp_sigctx_dup(const struct mbp_sigctx *src, size_t size, int (*extra)(void *copy),
                     void (*free_fn)(void *ctx));

/* mbp_set_str: the param key of params, when asked for, gets v; 0 only if
 * setting it failed. mbp_key_sizes: so for a key's bits, security-bits and
 * max-size. */
int mbp_set_str(OSSL_PARAM params[], const char *key, const char *v);
int mbp_key_sizes(OSSL_PARAM params[], int bits, int secbits, int max_size);

/* MBP_NOT_OURS: the property query for what we leave to other providers. */
#define MBP_NOT_OURS "provider!=mbcrypto"

/*
 * Keys left to another provider (the default one) in our child library
 * context, held inside our key data (ec_kmgmt.c, rsa_kmgmt.c).
 * mbp_params_merge: *dst (freed and replaced) = a copy of *dst with
 * params merged in (params' values win); 0 on failure, *dst unchanged.
 * mbp_other_import: a key of type from params (EVP_PKEY_fromdata with
 * selection); NULL on failure. mbp_other_gen: a key pair (selection with
 * a key) or domain parameters of type from params (may be NULL) or from
 * the template key templ (may be NULL); cb (may be NULL) gets the other
 * provider's progress as OSSL_GEN_PARAM_POTENTIAL and _ITERATION.
 */
int mbp_params_merge(OSSL_PARAM **dst, const OSSL_PARAM params[]);
EVP_PKEY *mbp_other_import(struct mbp_ctx *pc, const char *type, int selection,
                           const OSSL_PARAM params[]);
EVP_PKEY *mbp_other_gen(struct mbp_ctx *pc, const char *type, int selection,
                        const OSSL_PARAM *params, EVP_PKEY *templ, OSSL_CALLBACK *cb, void *cbarg);

/* mbp_other_validate: the other provider's check of key for selection
 * (a pair, a private or public key, or parameters); 1 when it passed. */
int mbp_other_validate(struct mbp_ctx *pc, EVP_PKEY *key, int selection);

/*
 * Signatures with a key another provider holds (mbp_rsa_key.other,
 * mbp_ec_key.other): the operation is that provider's in our child
 * library context (other.c), kept in the base context b (b->other is set
 * while it is delegated). mbp_other_sig_reset also frees b->sync, and
 * mbp_other_sig_dup gives the copy none. mbp_other_sig_init: sign or verify (signing),
 * digest-and-sign with mdname (digest; NULL: the key's default) or not,
 * with params; 0 on failure. The others are the signature calls of the
 * same names, forwarded; mbp_other_sig_reset frees the operation (also
 * done by mbp_sigctx_free), mbp_other_sig_dup gives copy (a byte copy of
 * src) its own (mbp_sigctx_dup calls it).
 */
void mbp_other_sig_reset(struct mbp_sigctx *b);
int mbp_other_sig_init(struct mbp_sigctx *b, EVP_PKEY *key, int signing, int digest,
                       const char *mdname, const OSSL_PARAM params[]);
int mbp_other_sig_sign(struct mbp_sigctx *b, unsigned char *sig, size_t *siglen, size_t sigsize,
                       const unsigned char *tbs, size_t tbslen);
int mbp_other_sig_verify(struct mbp_sigctx *b, const unsigned char *sig, size_t siglen,
                         const unsigned char *tbs, size_t tbslen);
int mbp_other_sig_update(struct mbp_sigctx *b, const unsigned char *data, size_t len);
int mbp_other_sig_sign_final(struct mbp_sigctx *b, unsigned char *sig, size_t *siglen,
                             size_t sigsize);
int mbp_other_sig_verify_final(struct mbp_sigctx *b, const unsigned char *sig, size_t siglen);
int mbp_other_sig_set_params(struct mbp_sigctx *b, const OSSL_PARAM params[]);
int mbp_other_sig_get_params(struct mbp_sigctx *b, OSSL_PARAM params[]);
int mbp_other_sig_dup(struct mbp_sigctx *copy, const struct mbp_sigctx *src);
/* mbp_other_sig_settable, _gettable: the delegated operation's parameter
 * lists when b (may be NULL) has one, else ours. */
const OSSL_PARAM *mbp_other_sig_settable(const struct mbp_sigctx *b, const OSSL_PARAM *ours);
const OSSL_PARAM *mbp_other_sig_gettable(const struct mbp_sigctx *b, const OSSL_PARAM *ours);

/*
 * Requests handed to the default provider outside ASYNC jobs (mbo_hand_off:
 * under "auto", the operations whose lone path is slower than OpenSSL's):
 * the same operation on a copy of our key in the other provider, kept in
 * the key data (its field sync) from the first such request on, and one
 * operation context kept in our operation context until its next init.
 * mbp_sync_keep: *slot when set, else made (a new reference, may be NULL)
 * stored into it (atomic: a key is shared by threads; a loser frees its
 * own); NULL on failure. The key data's free drops *slot.
 * mbp_sync_op: *slot when set, else a new operation context on key
 * (NULL: none can be had, e.g. no other provider, nothing made and no
 * error left: the caller runs ours then) for kind, stored into *slot: a signature
 * (MBP_SYNC_SIGN, MBP_SYNC_VERIFY), raw RSA private (MBP_SYNC_RSA_RAW:
 * signing with no padding, in = out = the modulus's length), or a key
 * exchange with peer (MBP_SYNC_DERIVE; the peer was checked by us).
 * mbp_sync_reset frees *slot (our contexts' init, set_peer and free).
 */
enum mbp_sync_kind { MBP_SYNC_SIGN, MBP_SYNC_VERIFY, MBP_SYNC_RSA_RAW, MBP_SYNC_DERIVE };
EVP_PKEY *mbp_sync_keep(EVP_PKEY **slot, EVP_PKEY *made);
EVP_PKEY_CTX *mbp_sync_op(struct mbp_ctx *pc, EVP_PKEY_CTX **slot, EVP_PKEY *key,
                          enum mbp_sync_kind kind, EVP_PKEY *peer);
void mbp_sync_reset(EVP_PKEY_CTX **slot);

/*
 * mbp_derived_before: whether a key exchange with the key whose flag this
 * is ran before (and marks it as run). A key exchange is handed off only
 * from a key's second one on: a handed-off exchange copies both keys into
 * the other provider and makes an operation context, which for a key used
 * once (TLS's ephemeral keys: each handshake a new one on both sides) costs
 * more than it can save. tls_bench without ssl-mode-async on an Intel Xeon
 * (family 6 model 167), one connection: ECDSA P-256 with a P-256 share
 * 0.91-0.99x the default provider with every exchange handed off, 1.15-1.27x
 * with ours; with X25519 0.89-0.92x against 1.01-1.02x.
 */
static inline int mbp_derived_before(const int *flag)
{
    /* A mark on the key, not part of its value: a const key carries it. */
    return __atomic_exchange_n((int *)flag, 1, __ATOMIC_RELAXED);
}

/* The algorithms' dispatch tables. */
extern const OSSL_DISPATCH mbp_rsa_keymgmt[];
extern const OSSL_DISPATCH mbp_rsa_signature[];
extern const OSSL_DISPATCH mbp_x25519_keymgmt[];
extern const OSSL_DISPATCH mbp_x25519_keyexch[];
extern const OSSL_DISPATCH mbp_ec_keymgmt[];
extern const OSSL_DISPATCH mbp_ecdh_keyexch[];
extern const OSSL_DISPATCH mbp_ecdsa_signature[];
extern const OSSL_DISPATCH mbp_aes128gcm[];
extern const OSSL_DISPATCH mbp_aes192gcm[];
extern const OSSL_DISPATCH mbp_aes256gcm[];
extern const OSSL_DISPATCH mbp_mlkem768_keymgmt[];
extern const OSSL_DISPATCH mbp_x25519mlkem768_keymgmt[];
extern const OSSL_DISPATCH mbp_secp256r1mlkem768_keymgmt[];
extern const OSSL_DISPATCH mbp_mlkem_kem[];

/* mbp_rsa_key: our RSA key data (rsa_kmgmt.c): the standard components,
 * kept for export, and the mbcrypto key objects built once at import. */
struct mbp_rsa_key {
    struct mbp_ctx *pc;
    BIGNUM *n, *e, *d, *p, *q, *dp, *dq, *qinv;
    mbc_rsa_pub_key *pub;
    mbc_rsa_priv_key *priv; /* NULL for a public key */
    unsigned bits;
    EVP_PKEY *sync;  /* the default provider's copy, for handed-off requests */
    EVP_PKEY *other; /* a key mbcrypto does not serve, generated through us
                      * (rsa_kmgmt.c): held by another provider, every
                      * key management call on it goes there; the
                      * components and key objects are empty then */
};

/* mbp_ec_key: our P-256/P-384 key data (ec_kmgmt.c): the curve alone
 * (domain parameters), a public key, or a key pair; the mbcrypto key
 * objects are built when the key is set. */
#define MBP_EC_SCALAR_MAX 48 /* P-384 */
#define MBP_EC_POINT_MAX 97  /* 04 || X || Y on P-384 */
enum mbp_ec_form { MBP_EC_UNCOMPRESSED = 0, MBP_EC_COMPRESSED, MBP_EC_HYBRID };
struct mbp_ec_key {
    struct mbp_ctx *pc;
    mbc_curve curve;                 /* 0: none yet */
    mbc_ec_pub_key *pub;             /* NULL: no public key */
    mbc_ec_priv_key *priv;           /* NULL: no private key */
    uint8_t point[MBP_EC_POINT_MAX]; /* the public key, mbc_ec_point_len bytes */
    uint8_t d[MBP_EC_SCALAR_MAX];    /* the private scalar (for export) */
    uint8_t form;                    /* the point format of the public key's
                                      * parameter (pub), enum mbp_ec_form */
    uint8_t gform;                   /* the format the key's parameters give
                                      * out (point-format), as OpenSSL's
                                      * group has its own */
    EVP_PKEY *sync;                  /* the default provider's copy, for handed-off
                                      * requests (mbp_sync_keep); NULL: none yet */
    int derived;                     /* mbp_derived_before's flag */
    EVP_PKEY *other;                 /* a key of another curve, generated through us (see
                                      * ec_kmgmt.c): held by another provider, every call
                                      * on it goes there; curve is 0 then */
};

/* mbp_ec_sig_max: the longest DER ECDSA signature of curve (two INTEGERs
 * of scalar_len + 1 bytes). */
size_t mbp_ec_sig_max(mbc_curve curve);

/* mbp_rsa_other: k as another provider's key (a reference on k->other, or
 * a new key from k's components, private ones included); NULL on failure.
 * Free with EVP_PKEY_free. */
EVP_PKEY *mbp_rsa_other(const struct mbp_rsa_key *k);

/* mbp_ec_other: k as another provider's key (a reference on k->other, or a
 * new key from k's parameters, private key included), for operations with
 * a key of that kind; NULL on failure. Free with EVP_PKEY_free. */
EVP_PKEY *mbp_ec_other(const struct mbp_ec_key *k);

/* mbp_ec_sync, mbp_rsa_sync: k's copy in the other provider for handed-off
 * requests (k->sync, made at the first call: mbp_sync_keep); NULL on
 * failure. Not a new reference: the key data holds it. */
EVP_PKEY *mbp_ec_sync(const struct mbp_ec_key *k);
EVP_PKEY *mbp_rsa_sync(const struct mbp_rsa_key *k);

#endif /* MBC_OPENSSL_PROVIDER_PROV_H */
