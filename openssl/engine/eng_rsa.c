/*
 * eng_rsa.c - the ENGINE's RSA_METHOD: OpenSSL's software method
 * (RSA_PKCS1_OpenSSL()) with its four operations replaced. Each one pads or
 * checks the padding with OpenSSL's public padding functions (PKCS#1 v1.5
 * types 1 and 2; OAEP with SHA-1, as the software method does for
 * RSA_PKCS1_OAEP_PADDING; none) around a raw operation of mbcrypto's, run
 * through openssl/common (batched inside an ASYNC job, at once outside one).
 * PSS signatures and OAEP with other digests reach the method already padded
 * (RSA_NO_PADDING) from OpenSSL's signature and asymmetric cipher code, so
 * OpenSSL's own padding serves them too. No blinding: mbcrypto's private
 * operation is constant time, and its result is checked with e before it is
 * released.
 *
 * What mbcrypto does not serve goes to the software method unchanged: RSA
 * outside the serve policy, other padding modes (X9.31), keys mbcrypto
 * refuses (sizes other than 2048/3072/4096, multi-prime, no CRT components,
 * unbalanced primes, and public exponents above 64 bits with moduli above
 * 3072 bits, which OpenSSL's public operations refuse), and requests
 * mbcrypto returns an error for (input >= n, a failed fault check): the
 * software method then computes the result or raises OpenSSL's own error.
 *
 * Keys: an RSA object's mbcrypto key objects are made at its first
 * operation and kept in its ex_data (freed with it; a duplicated RSA makes
 * its own); a key mbcrypto refused is kept as refused, so it is tried once.
 * Like OpenSSL's own cached Montgomery contexts, they assume the key's
 * components do not change after its first use.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rsa.h>

#include "eng.h"

#define MAX_K 512 /* 4096-bit modulus */

/* An RSA object's mbcrypto keys. */
struct keys {
    mbc_rsa_pub_key *pub;   /* NULL: public operations go to OpenSSL */
    mbc_rsa_priv_key *priv; /* NULL: private operations go to OpenSSL */
    int len;                /* the modulus size in bytes */
    int refused;            /* some part of the key is left to OpenSSL */
};

static const RSA_METHOD *soft; /* RSA_PKCS1_OpenSSL() */
static RSA_METHOD *meth;
static int key_idx = -1; /* the RSA ex_data index of struct keys */

static void keys_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
    (void)parent;
    (void)ad;
    (void)idx;
    (void)argl;
    (void)argp;
    struct keys *k = ptr;
    if (k != NULL) {
        mbc_rsa_pub_key_free(k->pub);
        mbc_rsa_priv_key_free(k->priv);
        OPENSSL_free(k);
    }
}

/* keys_dup: a copy of an RSA object makes its own keys at its first use. */
static int keys_dup(CRYPTO_EX_DATA *to, const CRYPTO_EX_DATA *from, void **from_d, int idx,
                    long argl, void *argp)
{
    (void)to;
    (void)from;
    (void)idx;
    (void)argl;
    (void)argp;
    *from_d = NULL;
    return 1;
}

/* convert: the mbcrypto keys of rsa (either may be NULL: refused); NULL
 * only when out of memory. Counted by the caller if kept. */
static struct keys *convert(const RSA *rsa)
{
    struct keys *k = OPENSSL_zalloc(sizeof(*k));
    if (k == NULL) {
        return NULL;
    }
    const BIGNUM *n, *e, *d, *p, *q, *dp, *dq, *qinv;
    RSA_get0_key(rsa, &n, &e, &d);
    RSA_get0_factors(rsa, &p, &q);
    RSA_get0_crt_params(rsa, &dp, &dq, &qinv);
    if (n == NULL || e == NULL) {
        k->refused = 1;
        return k;
    }
    k->len = BN_num_bytes(n);
    if (BN_num_bits(n) <= OPENSSL_RSA_SMALL_MODULUS_BITS ||
        BN_num_bits(e) <= OPENSSL_RSA_MAX_PUBEXP_BITS) {
        mbo_rsa_pub_new(&k->pub, n, e);
    }
    if (d != NULL && RSA_get_multi_prime_extra_count(rsa) == 0) {
        mbo_rsa_priv_new(&k->priv, n, e, p, q, dp, dq, qinv);
    }
    /* Refused: some part the key has is left to OpenSSL. */
    k->refused = k->pub == NULL || (d != NULL && k->priv == NULL);
    return k;
}

/* The cache of struct keys (see mbe_cache). */
static void *cache_get(const void *rsa)
{
    return RSA_get_ex_data(rsa, key_idx);
}

static int cache_set(void *rsa, void *k)
{
    return RSA_set_ex_data(rsa, key_idx, k);
}

static void *cache_make(const void *rsa)
{
    return convert(rsa);
}

static void cache_release(void *k)
{
    keys_free(NULL, k, NULL, 0, 0, NULL);
}

static struct mbe_cache cache = {NULL, cache_get, cache_set, cache_make, cache_release};

/* keys_for: rsa's keys, made at the first call; NULL when RSA is not served
 * (or out of memory). */
static const struct keys *keys_for(RSA *rsa)
{
    int made;
    const struct keys *k =
        (mbo_policy() & MBO_FAM_RSA) != 0 ? mbe_cached(&cache, rsa, &made) : NULL;
    if (k != NULL && made) {
        mbo_count(k->refused ? MBO_CTR_RSA_REFUSED : MBO_CTR_RSA_KEYS, 1);
    }
    return k;
}

/* ours: whether mbcrypto's path takes padding for this operation (private
 * or public, padding added before it or checked after it). */
static int ours(int priv, int adds, int padding)
{
    return padding == RSA_PKCS1_PADDING || padding == RSA_NO_PADDING ||
           (padding == RSA_PKCS1_OAEP_PADDING && priv != adds);
}

/* raw: out = in^d (priv) or in^e mod n, k->len bytes each. */
static mbc_err raw(const struct keys *k, int priv, uint8_t *out, const uint8_t *in)
{
    return priv ? mbo_rsa_private(k->priv, out, in) : mbo_rsa_public(k->pub, out, in);
}

/* The key of the operation, or NULL (OpenSSL's then: also for a request
 * handed off, mbo_hand_off). */
static const struct keys *served(RSA *rsa, int priv, int adds, int padding)
{
    const struct keys *k = ours(priv, adds, padding) ? keys_for(rsa) : NULL;
    return k != NULL && (priv ? k->priv != NULL : k->pub != NULL) &&
                   !mbo_hand_off(MBC_ALG_RSA, priv ? MBC_OP_RSA_PRIVATE : MBC_OP_RSA_PUBLIC,
                                 8 * (unsigned)k->len)
               ? k
               : NULL;
}

/* pad_then_raw: private encryption (signing) and public encryption: the
 * padded block, then the raw operation. */
static int pad_then_raw(int priv, int flen, const unsigned char *from, unsigned char *to, RSA *rsa,
                        int padding)
{
    const struct keys *k = served(rsa, priv, 1, padding);
    if (k != NULL) {
        uint8_t em[MAX_K];
        int r;
        if (padding == RSA_PKCS1_PADDING) {
            r = priv ? RSA_padding_add_PKCS1_type_1(em, k->len, from, flen)
                     : RSA_padding_add_PKCS1_type_2(em, k->len, from, flen);
        } else if (padding == RSA_PKCS1_OAEP_PADDING) {
            r = RSA_padding_add_PKCS1_OAEP(em, k->len, from, flen, NULL, 0);
        } else {
            r = RSA_padding_add_none(em, k->len, from, flen);
        }
        const mbc_err err = r > 0 ? raw(k, priv, to, em) : MBC_ERR_BAD_PARAM;
        OPENSSL_cleanse(em, sizeof(em));
        if (r <= 0) {
            return -1; /* the padding function raised OpenSSL's error */
        }
        if (err == MBC_OK) {
            return k->len;
        }
    }
    return priv ? RSA_meth_get_priv_enc(soft)(flen, from, to, rsa, padding)
                : RSA_meth_get_pub_enc(soft)(flen, from, to, rsa, padding);
}

/* raw_then_unpad: private decryption and public decryption (verifying): the
 * raw operation on the input (left-padded with zeros to the modulus size),
 * then the padding checked (in constant time, by OpenSSL's functions). */
static int raw_then_unpad(int priv, int flen, const unsigned char *from, unsigned char *to,
                          RSA *rsa, int padding)
{
    const struct keys *k = served(rsa, priv, 0, padding);
    if (k != NULL && flen > 0 && flen <= k->len) {
        uint8_t c[MAX_K], m[MAX_K];
        memset(c, 0, (size_t)(k->len - flen));
        memcpy(c + k->len - flen, from, (size_t)flen);
        int r = -1;
        const mbc_err err = raw(k, priv, m, c);
        if (err == MBC_OK) {
            if (padding == RSA_PKCS1_PADDING) {
                r = priv ? RSA_padding_check_PKCS1_type_2(to, k->len, m, k->len, k->len)
                         : RSA_padding_check_PKCS1_type_1(to, k->len, m, k->len, k->len);
            } else if (padding == RSA_PKCS1_OAEP_PADDING) {
                r = RSA_padding_check_PKCS1_OAEP(to, k->len, m, k->len, k->len, NULL, 0);
            } else {
                memcpy(to, m, (size_t)k->len);
                r = k->len;
            }
        }
        OPENSSL_cleanse(m, sizeof(m));
        if (err == MBC_OK) {
            if (r < 0) {
                /* What the software method adds to the padding function's
                 * error (the verdict is the return value anyway). */
                ERR_raise(ERR_LIB_RSA, RSA_R_PADDING_CHECK_FAILED);
            }
            return r;
        }
    }
    return priv ? RSA_meth_get_priv_dec(soft)(flen, from, to, rsa, padding)
                : RSA_meth_get_pub_dec(soft)(flen, from, to, rsa, padding);
}

static int priv_enc(int flen, const unsigned char *from, unsigned char *to, RSA *rsa, int padding)
{
    return pad_then_raw(1, flen, from, to, rsa, padding);
}

static int pub_enc(int flen, const unsigned char *from, unsigned char *to, RSA *rsa, int padding)
{
    return pad_then_raw(0, flen, from, to, rsa, padding);
}

static int priv_dec(int flen, const unsigned char *from, unsigned char *to, RSA *rsa, int padding)
{
    return raw_then_unpad(1, flen, from, to, rsa, padding);
}

static int pub_dec(int flen, const unsigned char *from, unsigned char *to, RSA *rsa, int padding)
{
    return raw_then_unpad(0, flen, from, to, rsa, padding);
}

int mbe_rsa_setup(void)
{
    soft = RSA_PKCS1_OpenSSL();
    cache.lock = CRYPTO_THREAD_lock_new();
    key_idx = RSA_get_ex_new_index(0, NULL, NULL, keys_dup, keys_free);
    meth = RSA_meth_dup(soft);
    return soft != NULL && cache.lock != NULL && key_idx >= 0 && meth != NULL &&
           RSA_meth_set1_name(meth, "mbcrypto RSA") &&
           RSA_meth_set_flags(meth, RSA_meth_get_flags(soft) & ~RSA_FLAG_FIPS_METHOD) &&
           RSA_meth_set_priv_enc(meth, priv_enc) && RSA_meth_set_priv_dec(meth, priv_dec) &&
           RSA_meth_set_pub_enc(meth, pub_enc) && RSA_meth_set_pub_dec(meth, pub_dec);
}

const RSA_METHOD *mbe_rsa_method(void)
{
    return meth;
}
