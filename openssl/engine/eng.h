/*
 * eng.h - what the files of the mbcrypto ENGINE share.
 *
 * The ENGINE (id "mbcrypto") offers an RSA_METHOD (eng_rsa.c), an
 * EC_KEY_METHOD for ECDSA and ECDH on P-256/P-384 (eng_ec.c), an X25519
 * EVP_PKEY_METHOD (eng_x25519.c) and the AES-128/192/256-GCM EVP_CIPHERs
 * (eng_gcm.c), all on openssl/common: the
 * serve policy decides per operation whether mbcrypto runs it or OpenSSL's
 * own software method does; inside an ASYNC job mbcrypto's requests batch
 * through the thread's lane manager (mbo_run).
 */
#ifndef MBC_OPENSSL_ENGINE_ENG_H
#define MBC_OPENSSL_ENGINE_ENG_H

#include <openssl/engine.h>

#include "../common/mbo.h"

/* mbe_rsa_setup, mbe_ec_setup, mbe_x25519_setup, mbe_gcm_setup: make the
 * RSA_METHOD, the EC_KEY_METHOD, the X25519 EVP_PKEY_METHOD and the ciphers
 * (once per process: they stay for its life, as keys and contexts of any
 * ENGINE instance may point to them). 1 on success. */
int mbe_rsa_setup(void);
int mbe_ec_setup(void);
int mbe_x25519_setup(void);
int mbe_gcm_setup(void);

/*
 * mbe_cache: where the mbcrypto key objects of OpenSSL key objects of one
 * type (RSA, EC_KEY) are kept: in one ex_data slot of each, every access
 * under lock. get and set read and write that slot; make converts a key
 * (NULL only when out of memory); release frees what make made.
 * mbe_cached: key's objects, made at the first call (then *made is set, so
 * the caller counts them); NULL when out of memory. Made outside the lock:
 * a thread that raced us keeps the one it set first. The slot is not part
 * of the key's value: setting it on a key callers hold const is what
 * OpenSSL's own lazily made key objects (Montgomery contexts) do too.
 */
struct mbe_cache {
    CRYPTO_RWLOCK *lock;
    void *(*get)(const void *key);
    int (*set)(void *key, void *data);
    void *(*make)(const void *key);
    void (*release)(void *data);
};
void *mbe_cached(const struct mbe_cache *c, const void *key, int *made);

/* mbe_rsa_method, mbe_ec_method: the methods (after their setup). */
const RSA_METHOD *mbe_rsa_method(void);
const EC_KEY_METHOD *mbe_ec_method(void);

/* mbe_pkey_meths: the ENGINE's EVP_PKEY_METHOD selector
 * (ENGINE_set_pkey_meths): X25519. */
int mbe_pkey_meths(ENGINE *e, EVP_PKEY_METHOD **pmeth, const int **nids, int nid);

/* mbe_ciphers: the ENGINE's cipher selector (ENGINE_set_ciphers). */
int mbe_ciphers(ENGINE *e, const EVP_CIPHER **cipher, const int **nids, int nid);

#endif /* MBC_OPENSSL_ENGINE_ENG_H */
