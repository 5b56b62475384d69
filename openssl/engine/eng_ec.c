/*
 * eng_ec.c - the ENGINE's EC_KEY_METHOD: a copy of OpenSSL's default
 * (EC_KEY_OpenSSL()) whose ECDSA signing and checking (sign_sig,
 * verify_sig) and ECDH (compute_key) run on mbcrypto for P-256 and P-384
 * keys, through openssl/common (batched inside an ASYNC job, at once outside
 * one). OpenSSL's DER functions (the method's sign and verify, ECDSA_sign,
 * ECDSA_verify) stay its own: they call the method's sign_sig and
 * verify_sig, so they reach ours; the signature they encode is built with
 * the public ECDSA_SIG functions from mbcrypto's r || s. Key generation and
 * sign_setup stay OpenSSL's.
 *
 * What mbcrypto does not serve goes to the original functions unchanged:
 * the families outside the serve policy (ecdsa, ecdh), keys of other curves
 * (or with explicit parameters, or a private scalar outside [1, n-1]), a
 * precomputed (kinv, r) given to sign_sig (ECDSA_sign_setup, deterministic
 * nonces), signatures with r or s outside [1, n-1], a peer point at
 * infinity or of another group, and any request mbcrypto returns an error
 * for (a failed fault check...): the original then computes the result or
 * raises OpenSSL's own error, so callers see the same verdicts and error
 * queues as with OpenSSL's method. One exception: a peer point off the
 * curve (only the deprecated EC_POINT_set_Jprojective_coordinates_GFp makes
 * one unchecked) is refused with EC_R_POINT_IS_NOT_ON_CURVE, where
 * OpenSSL's method would return a secret computed from it.
 *
 * Digests: OpenSSL and mbcrypto both use the leftmost bitlen(n) bits of a
 * longer digest; for P-256 and P-384 that is its first scalar_len bytes,
 * which is all we pass (mbcrypto's jobs take at most 64).
 *
 * Keys: an EC_KEY's mbcrypto key objects (the private scalar's, the public
 * point's) are made at its first served operation and kept in its ex_data,
 * freed with it; a copy makes its own. A key refused is kept as refused, so
 * it is tried once. Setting the key's group, private or public key, or
 * generating a new key into it drops what was kept (the method's set_group,
 * set_private, set_public and keygen hooks). As with OpenSSL's own key
 * objects, changing a key while another thread uses it is not supported.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>

#include "eng.h"

#define MAX_SCALAR 48 /* P-384 */
#define MAX_POINT (1 + 2 * MAX_SCALAR)

/* An EC_KEY's mbcrypto keys. */
struct keys {
    mbc_ec_priv_key *priv; /* NULL: no private key, or refused */
    mbc_ec_pub_key *pub;   /* NULL: no public key, or refused */
    mbc_curve curve;       /* 0: a curve mbcrypto does not have */
    int refused;           /* some part of the key is left to OpenSSL */
};

/* OpenSSL's functions (EC_KEY_OpenSSL()), for what we do not serve. */
static struct {
    int (*set_group)(EC_KEY *, const EC_GROUP *);
    int (*set_private)(EC_KEY *, const BIGNUM *);
    int (*set_public)(EC_KEY *, const EC_POINT *);
    int (*keygen)(EC_KEY *);
    int (*compute_key)(unsigned char **, size_t *, const EC_POINT *, const EC_KEY *);
    ECDSA_SIG *(*sign_sig)(const unsigned char *, int, const BIGNUM *, const BIGNUM *, EC_KEY *);
    int (*verify_sig)(const unsigned char *, int, const ECDSA_SIG *, EC_KEY *);
} soft;

static EC_KEY_METHOD *meth;
static int key_idx = -1; /* the EC_KEY ex_data index of struct keys */

static void keys_release(struct keys *k)
{
    if (k != NULL) {
        mbc_ec_priv_key_free(k->priv);
        mbc_ec_pub_key_free(k->pub);
        OPENSSL_free(k);
    }
}

static void keys_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
    (void)parent;
    (void)ad;
    (void)argl;
    (void)argp;
    (void)idx;
    keys_release(ptr);
}

/* keys_dup: EC_KEY_copy and EC_KEY_dup: the destination makes its own keys
 * at its first use (what it kept before the copy is freed). */
static int keys_dup(CRYPTO_EX_DATA *to, const CRYPTO_EX_DATA *from, void **from_d, int idx,
                    long argl, void *argp)
{
    (void)from;
    (void)argl;
    (void)argp;
    keys_release(CRYPTO_get_ex_data(to, idx));
    *from_d = NULL;
    return 1;
}

/* curve_of: mbcrypto's curve for group, 0 if it has none. */
static mbc_curve curve_of(const EC_GROUP *group)
{
    switch (group != NULL ? EC_GROUP_get_curve_name(group) : NID_undef) {
    case NID_X9_62_prime256v1:
        return MBC_CURVE_P256;
    case NID_secp384r1:
        return MBC_CURVE_P384;
    default:
        return 0;
    }
}

/* point_bytes: the uncompressed encoding of p (mbc_ec_point_len(curve)
 * bytes) in out; 0 if p has none of that length (infinity, another group).
 * Leaves the error queue as it was. */
static int point_bytes(const EC_GROUP *group, mbc_curve curve, const EC_POINT *p, uint8_t *out)
{
    ERR_set_mark();
    const size_t n =
        EC_POINT_point2oct(group, p, POINT_CONVERSION_UNCOMPRESSED, out, MAX_POINT, NULL);
    ERR_pop_to_mark();
    return n != 0 && n == mbc_ec_point_len(curve);
}

/* convert: the mbcrypto keys of ec (either may be NULL: absent or
 * refused); NULL only when out of memory. Counted by the caller if kept. */
static struct keys *convert(const EC_KEY *ec)
{
    struct keys *k = OPENSSL_zalloc(sizeof(*k));
    if (k == NULL) {
        return NULL;
    }
    const EC_GROUP *group = EC_KEY_get0_group(ec);
    const BIGNUM *d = EC_KEY_get0_private_key(ec);
    const EC_POINT *q = EC_KEY_get0_public_key(ec);
    k->curve = curve_of(group);
    if (k->curve == 0) {
        k->refused = 1;
        return k;
    }
    const size_t n = mbc_ec_scalar_len(k->curve);
    if (d != NULL) {
        uint8_t db[MAX_SCALAR];
        if (BN_bn2binpad(d, db, (int)n) == (int)n) {
            mbo_ec_priv_key_new(&k->priv, k->curve, db, n);
        }
        OPENSSL_cleanse(db, sizeof(db));
    }
    uint8_t point[MAX_POINT];
    if (q != NULL && point_bytes(group, k->curve, q, point)) {
        mbo_ec_pub_key_new(&k->pub, k->curve, point, mbc_ec_point_len(k->curve));
    }
    k->refused = (d != NULL && k->priv == NULL) || (q != NULL && k->pub == NULL);
    return k;
}

/* The cache of struct keys (see mbe_cache). */
static void *cache_get(const void *ec)
{
    return EC_KEY_get_ex_data(ec, key_idx);
}

static int cache_set(void *ec, void *k)
{
    return EC_KEY_set_ex_data(ec, key_idx, k);
}

static void *cache_make(const void *ec)
{
    return convert(ec);
}

static void cache_release(void *k)
{
    keys_release(k);
}

static struct mbe_cache cache = {NULL, cache_get, cache_set, cache_make, cache_release};

/* keys_for: ec's keys, made at the first call; NULL when fam is not served
 * (or out of memory). */
static const struct keys *keys_for(const EC_KEY *ec, unsigned fam)
{
    int made;
    const struct keys *k = (mbo_policy() & fam) != 0 ? mbe_cached(&cache, ec, &made) : NULL;
    if (k != NULL && made) {
        mbo_count(k->refused ? MBO_CTR_EC_REFUSED : MBO_CTR_EC_KEYS, 1);
    }
    return k;
}

/* drop: forgets ec's keys (its value is about to change). 1 on success. */
static int drop(EC_KEY *ec)
{
    if (!CRYPTO_THREAD_write_lock(cache.lock)) {
        return 0;
    }
    struct keys *k = EC_KEY_get_ex_data(ec, key_idx);
    const int ok = k == NULL || EC_KEY_set_ex_data(ec, key_idx, NULL);
    CRYPTO_THREAD_unlock(cache.lock);
    if (ok) {
        keys_release(k);
    }
    return ok;
}

static int set_group(EC_KEY *ec, const EC_GROUP *group)
{
    return drop(ec) && (soft.set_group == NULL || soft.set_group(ec, group));
}

static int set_private(EC_KEY *ec, const BIGNUM *d)
{
    return drop(ec) && (soft.set_private == NULL || soft.set_private(ec, d));
}

static int set_public(EC_KEY *ec, const EC_POINT *q)
{
    return drop(ec) && (soft.set_public == NULL || soft.set_public(ec, q));
}

static int keygen(EC_KEY *ec)
{
    return drop(ec) && soft.keygen(ec);
}

/* digest_len: the digest bytes both OpenSSL and mbcrypto use. */
static size_t digest_len(mbc_curve curve, int dlen)
{
    const size_t n = mbc_ec_scalar_len(curve);
    return (size_t)dlen < n ? (size_t)dlen : n;
}

/* ours: whether k's request of op runs on mbcrypto, not handed to
 * OpenSSL's function (mbo_hand_off). */
static int ours(const struct keys *k, mbc_job_op op)
{
    return !mbo_hand_off(MBC_ALG_EC, op, 8 * (unsigned)mbc_ec_scalar_len(k->curve));
}

static ECDSA_SIG *sign_sig(const unsigned char *dgst, int dlen, const BIGNUM *kinv, const BIGNUM *r,
                           EC_KEY *ec)
{
    const struct keys *k =
        kinv == NULL && r == NULL && dgst != NULL && dlen >= 0 ? keys_for(ec, MBO_FAM_ECDSA) : NULL;
    if (k != NULL && k->priv != NULL && ours(k, MBC_OP_ECDSA_SIGN)) {
        const size_t n = mbc_ec_scalar_len(k->curve);
        uint8_t rs[2 * MAX_SCALAR];
        if (mbo_ecdsa_sign(k->priv, rs, dgst, digest_len(k->curve, dlen)) == MBC_OK) {
            ECDSA_SIG *sig = ECDSA_SIG_new();
            BIGNUM *br = BN_bin2bn(rs, (int)n, NULL), *bs = BN_bin2bn(rs + n, (int)n, NULL);
            if (sig == NULL || br == NULL || bs == NULL || !ECDSA_SIG_set0(sig, br, bs)) {
                ECDSA_SIG_free(sig);
                BN_free(br);
                BN_free(bs);
                ERR_raise(ERR_LIB_EC, ERR_R_MALLOC_FAILURE);
                return NULL;
            }
            return sig;
        }
    }
    return soft.sign_sig(dgst, dlen, kinv, r, ec);
}

/* in_range: 1 <= v < the order of ec's group. */
static int in_range(const BIGNUM *v, const EC_KEY *ec)
{
    const BIGNUM *order = EC_GROUP_get0_order(EC_KEY_get0_group(ec));
    return v != NULL && order != NULL && !BN_is_zero(v) && !BN_is_negative(v) &&
           BN_ucmp(v, order) < 0;
}

static int verify_sig(const unsigned char *dgst, int dlen, const ECDSA_SIG *sig, EC_KEY *ec)
{
    const struct keys *k =
        sig != NULL && dgst != NULL && dlen >= 0 ? keys_for(ec, MBO_FAM_ECDSA) : NULL;
    if (k != NULL && k->pub != NULL && ours(k, MBC_OP_ECDSA_VERIFY)) {
        const BIGNUM *r, *s;
        ECDSA_SIG_get0(sig, &r, &s);
        const int n = (int)mbc_ec_scalar_len(k->curve);
        uint8_t rs[2 * MAX_SCALAR];
        if (in_range(r, ec) && in_range(s, ec) && BN_bn2binpad(r, rs, n) == n &&
            BN_bn2binpad(s, rs + n, n) == n) {
            const mbc_err err = mbo_ecdsa_verify(k->pub, rs, dgst, digest_len(k->curve, dlen));
            if (err == MBC_OK || err == MBC_ERR_SIG_INVALID) {
                return err == MBC_OK; /* OpenSSL's verdicts: no error for a mismatch */
            }
        }
    }
    return soft.verify_sig(dgst, dlen, sig, ec);
}

static int compute_key(unsigned char **psec, size_t *pseclen, const EC_POINT *peer,
                       const EC_KEY *ec)
{
    const struct keys *k = peer != NULL ? keys_for(ec, MBO_FAM_ECDH) : NULL;
    uint8_t point[MAX_POINT];
    if (k != NULL && k->priv != NULL && ours(k, MBC_OP_ECDH) &&
        point_bytes(EC_KEY_get0_group(ec), k->curve, peer, point)) {
        const size_t n = mbc_ec_scalar_len(k->curve);
        unsigned char *out = OPENSSL_malloc(n);
        if (out == NULL) {
            ERR_raise(ERR_LIB_EC, ERR_R_MALLOC_FAILURE);
            return 0;
        }
        const mbc_err err = mbo_ecdh(k->priv, out, point, mbc_ec_point_len(k->curve));
        if (err == MBC_OK) {
            *psec = out;
            *pseclen = n;
            return 1;
        }
        OPENSSL_clear_free(out, n);
        if (err == MBC_ERR_NOT_ON_CURVE || err == MBC_ERR_POINT_RANGE) {
            /* Not a point of the curve (an EC_POINT made without OpenSSL's
             * checks): no secret from it, where OpenSSL's would compute one. */
            ERR_raise(ERR_LIB_EC, EC_R_POINT_IS_NOT_ON_CURVE);
            return 0;
        }
    }
    return soft.compute_key(psec, pseclen, peer, ec);
}

int mbe_ec_setup(void)
{
    const EC_KEY_METHOD *def = EC_KEY_OpenSSL();
    cache.lock = CRYPTO_THREAD_lock_new();
    key_idx = EC_KEY_get_ex_new_index(0, NULL, NULL, keys_dup, keys_free);
    meth = def != NULL ? EC_KEY_METHOD_new(def) : NULL;
    if (meth == NULL || cache.lock == NULL || key_idx < 0) {
        return 0;
    }
    int (*init)(EC_KEY *);
    void (*finish)(EC_KEY *);
    int (*copy)(EC_KEY *, const EC_KEY *);
    int (*sign)(int, const unsigned char *, int, unsigned char *, unsigned int *, const BIGNUM *,
                const BIGNUM *, EC_KEY *);
    int (*sign_setup)(EC_KEY *, BN_CTX *, BIGNUM **, BIGNUM **);
    int (*verify)(int, const unsigned char *, int, const unsigned char *, int, EC_KEY *);
    EC_KEY_METHOD_get_init(def, &init, &finish, &copy, &soft.set_group, &soft.set_private,
                           &soft.set_public);
    EC_KEY_METHOD_get_keygen(def, &soft.keygen);
    EC_KEY_METHOD_get_compute_key(def, &soft.compute_key);
    EC_KEY_METHOD_get_sign(def, &sign, &sign_setup, &soft.sign_sig);
    EC_KEY_METHOD_get_verify(def, &verify, &soft.verify_sig);
    if (soft.keygen == NULL || soft.compute_key == NULL || soft.sign_sig == NULL ||
        soft.verify_sig == NULL) {
        return 0;
    }
    EC_KEY_METHOD_set_init(meth, init, finish, copy, set_group, set_private, set_public);
    EC_KEY_METHOD_set_keygen(meth, keygen);
    EC_KEY_METHOD_set_compute_key(meth, compute_key);
    EC_KEY_METHOD_set_sign(meth, sign, sign_setup, sign_sig);
    EC_KEY_METHOD_set_verify(meth, verify, verify_sig);
    return 1;
}

const EC_KEY_METHOD *mbe_ec_method(void)
{
    return meth;
}
