/*
 * eng_x25519.c - the ENGINE's EVP_PKEY_METHOD for X25519: a copy of
 * OpenSSL's own (EVP_PKEY_meth_find(EVP_PKEY_X25519)) whose derive runs on
 * mbcrypto through openssl/common (batched inside an ASYNC job, at once
 * outside one). The raw private key of the context's key and the raw
 * public key of the peer are read with the public EVP_PKEY_get_raw_*
 * functions, so legacy and provider keys both work; an all-zero shared
 * secret (a low-order peer point) fails as OpenSSL's method fails it: 0
 * returned, no error raised, the output zeroed. The peer key control and
 * key generation stay OpenSSL's: an EVP_PKEY_METHOD must put the new key
 * into the EVP_PKEY it is given, and the public API can only make a new
 * X25519 EVP_PKEY, never fill one in place (that takes OpenSSL's private
 * ECX_KEY), so mbcrypto's key pair job cannot serve it here.
 *
 * Registered as the default X25519 method (ENGINE_set_default, -engine),
 * the ENGINE gets every X25519 context, libssl's TLS 1.3 key shares
 * included, as a legacy one; libssl 3.0 makes the peer's key with
 * EVP_PKEY_paramgen, which OpenSSL's own method lacks, so ours adds a
 * paramgen that types the key (what the key share's encoded point is then
 * set into). Outside the serve policy, and for what mbcrypto refuses,
 * OpenSSL's derive runs.
 *
 * Not on OpenSSL 3.5 and later: there the default TLS key share is the
 * hybrid X25519MLKEM768, whose X25519 half the default provider builds
 * with EVP_PKEY_CTX_new_from_name("X25519") and EVP_PKEY_fromdata; with an
 * ENGINE's X25519 method as the default that context is a legacy one,
 * fromdata fails and so does the handshake (as would any raw X25519 key
 * made through a provider). So from 3.5 on the selector offers nothing and
 * X25519 stays OpenSSL's.
 */
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "eng.h"

static EVP_PKEY_METHOD *meth;
static int (*soft_derive)(EVP_PKEY_CTX *, unsigned char *, size_t *);

static int derive(EVP_PKEY_CTX *ctx, unsigned char *key, size_t *keylen)
{
    EVP_PKEY *own = EVP_PKEY_CTX_get0_pkey(ctx), *peer = EVP_PKEY_CTX_get0_peerkey(ctx);
    if ((mbo_policy() & MBO_FAM_X25519) == 0 || key == NULL || keylen == NULL || own == NULL ||
        peer == NULL || mbo_hand_off(MBC_ALG_X25519, MBC_OP_X25519_DERIVE, 255)) {
        return soft_derive(ctx, key, keylen); /* its length, its errors; handed-off requests */
    }
    if (*keylen < MBC_X25519_LEN) {
        ERR_raise(ERR_LIB_EVP, EVP_R_BUFFER_TOO_SMALL);
        return 0;
    }
    uint8_t priv[MBC_X25519_LEN], pub[MBC_X25519_LEN];
    size_t priv_len = sizeof(priv), pub_len = sizeof(pub);
    ERR_set_mark();
    const int have =
        EVP_PKEY_get_raw_private_key(own, priv, &priv_len) == 1 && priv_len == MBC_X25519_LEN &&
        EVP_PKEY_get_raw_public_key(peer, pub, &pub_len) == 1 && pub_len == MBC_X25519_LEN;
    ERR_pop_to_mark();
    const mbc_err err = have ? mbo_x25519_derive(key, priv, pub) : MBC_ERR_BAD_PARAM;
    OPENSSL_cleanse(priv, sizeof(priv));
    if (err == MBC_OK) {
        *keylen = MBC_X25519_LEN;
        return 1;
    }
    if (err == MBC_ERR_LOW_ORDER) {
        return 0; /* key zeroed by mbcrypto */
    }
    return soft_derive(ctx, key, keylen);
}

/* paramgen: an X25519 key with no key material (X25519 has no parameters). */
static int paramgen(EVP_PKEY_CTX *ctx, EVP_PKEY *pkey)
{
    (void)ctx;
    return EVP_PKEY_set_type(pkey, EVP_PKEY_X25519);
}

int mbe_x25519_setup(void)
{
    const EVP_PKEY_METHOD *soft = EVP_PKEY_meth_find(EVP_PKEY_X25519);
    if (soft == NULL) {
        return 0;
    }
    int flags;
    EVP_PKEY_meth_get0_info(NULL, &flags, soft);
    meth = EVP_PKEY_meth_new(EVP_PKEY_X25519, flags);
    if (meth == NULL) {
        return 0;
    }
    EVP_PKEY_meth_copy(meth, soft);
    int (*derive_init)(EVP_PKEY_CTX *);
    EVP_PKEY_meth_get_derive(soft, &derive_init, &soft_derive);
    int (*paramgen_init)(EVP_PKEY_CTX *);
    int (*soft_paramgen)(EVP_PKEY_CTX *, EVP_PKEY *);
    EVP_PKEY_meth_get_paramgen(soft, &paramgen_init, &soft_paramgen);
    if (soft_derive == NULL) {
        return 0;
    }
    EVP_PKEY_meth_set_derive(meth, derive_init, derive);
    if (soft_paramgen == NULL) {
        EVP_PKEY_meth_set_paramgen(meth, paramgen_init, paramgen);
    }
    return 1;
}

static const int x25519_nids[] = {EVP_PKEY_X25519};

/* offered: whether this libcrypto can have an X25519 method of ours. */
static int offered(void)
{
    return OpenSSL_version_num() < 0x30500000UL;
}

int mbe_pkey_meths(ENGINE *e, EVP_PKEY_METHOD **pmeth, const int **nids, int nid)
{
    (void)e;
    if (pmeth == NULL) {
        *nids = x25519_nids;
        return offered() ? 1 : 0;
    }
    *pmeth = nid == EVP_PKEY_X25519 && offered() ? meth : NULL;
    return *pmeth != NULL;
}
