/*
 * derive_auto.c - key exchanges under serve = auto outside ASYNC jobs
 * (MBCRYPTO_SERVE unset), P-256 ECDH and X25519: a key's first exchange
 * runs on mbcrypto's lone path (a handed-off one would copy both keys into
 * the default provider, which for TLS's keys, used once, costs more than it
 * saves: mbp_derived_before); from its second on, an operation whose lone
 * path mbcrypto does not claim (argv: "handed") goes to the default
 * provider (sync-handed-off), else (argv: "ours") stays ours. Every secret,
 * each in a new context as libssl makes them, equals the one the default
 * provider alone derives from the other side. Built against the system's
 * OpenSSL 3.0, run with it and with 3.5's libcrypto (test_sync.sh). TAP on
 * stdout; MBC_PROVIDER_DIR is the directory of mbcrypto.so.
 *
 *   derive_auto P256_ROUTE X25519_ROUTE     (each "ours" or "handed")
 */
#include <string.h>

#include <openssl/ec.h>

#include "evp_tap.h"

#define OURS "?provider=mbcrypto" /* preferred, as the README's openssl.cnf */
#define THEIRS "provider=default"

/* keygen: a key pair of type (with curve for EC) by the provider props picks. */
static EVP_PKEY *keygen(const char *type, const char *curve, const char *props)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(lib, type, props);
    EVP_PKEY *k = NULL;
    if (c == NULL || EVP_PKEY_keygen_init(c) != 1 ||
        (curve != NULL && EVP_PKEY_CTX_set_group_name(c, curve) != 1) ||
        EVP_PKEY_keygen(c, &k) != 1) {
        k = NULL;
    }
    EVP_PKEY_CTX_free(c);
    return k;
}

/* derive: the secret of key with peer (a new context, by props), its length
 * in *len; 0 on failure. */
static int derive(EVP_PKEY *key, EVP_PKEY *peer, const char *props, unsigned char *out, size_t *len)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, key, props);
    const int ok = c != NULL && EVP_PKEY_derive_init(c) == 1 &&
                   EVP_PKEY_derive_set_peer(c, peer) == 1 && EVP_PKEY_derive(c, out, len) == 1;
    EVP_PKEY_CTX_free(c);
    return ok;
}

/* one: NAME's exchanges, ROUTE "handed" or "ours" from the second on. */
static void one(const char *name, const char *type, const char *curve, const char *ops, int handed)
{
    EVP_PKEY *a = keygen(type, curve, OURS), *b = keygen(type, curve, THEIRS);
    check(a != NULL && b != NULL && strcmp(provider_of(a), "mbcrypto") == 0 &&
              strcmp(provider_of(b), "default") == 0,
          "%s: a key pair by mbcrypto, the peer's by the default provider", name);
    unsigned char want[64], got[64];
    size_t wlen = sizeof(want);
    check(a != NULL && b != NULL && derive(b, a, THEIRS, want, &wlen),
          "%s: the default provider's secret from the other side", name);
    for (int i = 0; i < 3; i++) {
        const uint64_t o0 = counter(ops), h0 = counter("sync-handed-off");
        size_t glen = sizeof(got);
        const int ok = a != NULL && b != NULL && derive(a, b, OURS, got, &glen) && glen == wlen &&
                       memcmp(got, want, wlen) == 0;
        const int by_default = i > 0 && handed;
        const uint64_t o1 = counter(ops), h1 = counter("sync-handed-off");
        check(ok && o1 == o0 + !by_default && h1 == h0 + by_default,
              "%s: exchange %d of the key: the same secret, %s (%s +%llu, sync-handed-off +%llu)",
              name, i + 1, by_default ? "by the default provider" : "by mbcrypto", ops,
              (unsigned long long)(o1 - o0), (unsigned long long)(h1 - h0));
    }
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
}

int main(int argc, char **argv)
{
    if (argc != 3 || !tap_start_serve(NULL)) {
        printf("Bail out! usage: derive_auto P256_ROUTE X25519_ROUTE (ours|handed)\n");
        return 1;
    }
    one("P-256", "EC", "P-256", "ops-ecdh", strcmp(argv[1], "handed") == 0);
    one("X25519", "X25519", NULL, "ops-x25519-derive", strcmp(argv[2], "handed") == 0);
    printf("1..%d\n", n_tests);
    return n_failed != 0;
}
