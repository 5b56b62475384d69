/*
 * fromdata.c - RSA keys made with EVP_PKEY_fromdata while mbcrypto is the
 * preferred provider (issue 22 item 5): every key, of a size mbcrypto
 * serves (2048) or not (1024, 1536), multi-prime, or without its CRT
 * components, is made by our key management and then does everything the
 * same key made by the default provider does: PKCS#1 v1.5 signatures equal
 * byte for byte, PSS and OAEP and PKCS#1 v1.5 encryption both ways, its
 * parameters, export and import again, PEM, comparison, checks and dup. The
 * counters show that mbcrypto signed the 2048-bit key and left the others
 * to the default provider. Built against the system's OpenSSL 3.0, run with
 * it and (test_fromdata.sh) with OpenSSL 3.5's libcrypto. TAP on stdout;
 * MBC_PROVIDER_DIR is the directory of mbcrypto.so.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/rsa.h>

#include "evp_tap.h"

#define OURS "?provider=mbcrypto" /* preferred, as the README's openssl.cnf */
#define THEIRS "provider=default"

/* fromdata: a key from params by the key management props picks. */
static EVP_PKEY *fromdata(OSSL_PARAM *params, int selection, const char *props)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(lib, "RSA", props);
    EVP_PKEY *k = NULL;
    if (c == NULL || EVP_PKEY_fromdata_init(c) != 1 ||
        EVP_PKEY_fromdata(c, &k, selection, params) != 1) {
        k = NULL;
    }
    EVP_PKEY_CTX_free(c);
    return k;
}

/* sig: the signature of msg by k (operation props), with padding pad; its
 * length, 0 on failure. */
static size_t sig(EVP_PKEY *k, const char *props, int pad, uint8_t *out, size_t size,
                  const uint8_t *msg, size_t len)
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pc = NULL;
    size_t n = size;
    int ok = m != NULL && EVP_DigestSignInit_ex(m, &pc, "SHA256", lib, props, k, NULL) == 1 &&
             EVP_PKEY_CTX_set_rsa_padding(pc, pad) == 1 &&
             EVP_DigestSign(m, out, &n, msg, len) == 1;
    EVP_MD_CTX_free(m);
    return ok ? n : 0;
}

static int ver(EVP_PKEY *k, const char *props, int pad, const uint8_t *s, size_t slen,
               const uint8_t *msg, size_t len)
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pc = NULL;
    int ok = m != NULL && EVP_DigestVerifyInit_ex(m, &pc, "SHA256", lib, props, k, NULL) == 1 &&
             EVP_PKEY_CTX_set_rsa_padding(pc, pad) == 1 &&
             EVP_DigestVerify(m, s, slen, msg, len) == 1;
    EVP_MD_CTX_free(m);
    return ok;
}

/* crypt: encrypt (enc) or decrypt in with k, padding pad; out's length, 0
 * on failure. */
static size_t crypt(EVP_PKEY *k, const char *props, int enc, int pad, uint8_t *out, size_t size,
                    const uint8_t *in, size_t len)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, k, props);
    size_t n = size;
    int ok =
        c != NULL && (enc ? EVP_PKEY_encrypt_init(c) : EVP_PKEY_decrypt_init(c)) == 1 &&
        EVP_PKEY_CTX_set_rsa_padding(c, pad) == 1 &&
        (enc ? EVP_PKEY_encrypt(c, out, &n, in, len) : EVP_PKEY_decrypt(c, out, &n, in, len)) == 1;
    EVP_PKEY_CTX_free(c);
    return ok ? n : 0;
}

/* pem: k's PKCS#8 PEM (private) or SubjectPublicKeyInfo PEM; freed by the
 * caller; NULL on failure. */
static char *pem(EVP_PKEY *k, int priv)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *data = NULL, *s = NULL;
    int ok =
        b != NULL && (priv ? PEM_write_bio_PrivateKey_ex(b, k, NULL, NULL, 0, NULL, NULL, lib, NULL)
                           : PEM_write_bio_PUBKEY_ex(b, k, lib, NULL));
    long n = ok ? BIO_get_mem_data(b, &data) : 0;
    if (n > 0 && (s = malloc((size_t)n + 1)) != NULL) {
        memcpy(s, data, (size_t)n);
        s[n] = 0;
    }
    BIO_free(b);
    return s;
}

/* same_params: whether a and b have the same value of every RSA component
 * (both lacking one counts as the same). */
static int same_params(EVP_PKEY *a, EVP_PKEY *b)
{
    static const char *const names[] = {
        OSSL_PKEY_PARAM_RSA_N,         OSSL_PKEY_PARAM_RSA_E,
        OSSL_PKEY_PARAM_RSA_D,         OSSL_PKEY_PARAM_RSA_FACTOR1,
        OSSL_PKEY_PARAM_RSA_FACTOR2,   OSSL_PKEY_PARAM_RSA_FACTOR3,
        OSSL_PKEY_PARAM_RSA_EXPONENT1, OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
    };
    int same = 1;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        BIGNUM *x = NULL, *y = NULL;
        const int hx = EVP_PKEY_get_bn_param(a, names[i], &x);
        const int hy = EVP_PKEY_get_bn_param(b, names[i], &y);
        same = same && hx == hy && (!hx || BN_cmp(x, y) == 0);
        BN_clear_free(x);
        BN_clear_free(y);
    }
    ERR_clear_error();
    return same;
}

static int same_sizes(EVP_PKEY *a, EVP_PKEY *b)
{
    return EVP_PKEY_get_bits(a) == EVP_PKEY_get_bits(b) &&
           EVP_PKEY_get_security_bits(a) == EVP_PKEY_get_security_bits(b) &&
           EVP_PKEY_get_size(a) == EVP_PKEY_get_size(b);
}

/* checks: the results of the four key checks of k (operation props), one
 * bit each. */
static int checks(EVP_PKEY *k, const char *props)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, k, props);
    int r = 0;
    if (c != NULL) {
        r = (EVP_PKEY_check(c) == 1) | (EVP_PKEY_pairwise_check(c) == 1) << 1 |
            (EVP_PKEY_public_check(c) == 1) << 2 | (EVP_PKEY_private_check(c) == 1) << 3;
    }
    EVP_PKEY_CTX_free(c);
    ERR_clear_error();
    return r;
}

/* same_str: both NULL, or both the same string. */
static int same_str(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* one_key: the cases for params (a key pair; name for the TAP lines);
 * served: mbcrypto computes its signatures. */
static void one_key(const char *name, OSSL_PARAM *params, int served)
{
    uint8_t msg[100], s1[1024], s2[1024], ct[1024], pt[1024];
    memset(msg, 0x5a, sizeof(msg));
    const uint64_t signs = counter("ops-rsa-sign");
    EVP_PKEY *ours = fromdata(params, EVP_PKEY_KEYPAIR, OURS);
    EVP_PKEY *theirs = fromdata(params, EVP_PKEY_KEYPAIR, THEIRS);
    check(ours != NULL && strcmp(provider_of(ours), "mbcrypto") == 0,
          "%s: fromdata with mbcrypto preferred (key of %s)", name, provider_of(ours));
    if (ours == NULL || theirs == NULL) {
        EVP_PKEY_free(ours);
        EVP_PKEY_free(theirs);
        return;
    }
    check(same_sizes(ours, theirs), "%s: bits %d, security bits, size as the default provider's",
          name, EVP_PKEY_get_bits(ours));
    /* PKCS#1 v1.5 is deterministic: the same signature. */
    size_t l1 = sig(ours, OURS, RSA_PKCS1_PADDING, s1, sizeof(s1), msg, sizeof(msg));
    size_t l2 = sig(theirs, THEIRS, RSA_PKCS1_PADDING, s2, sizeof(s2), msg, sizeof(msg));
    check(l1 > 0 && l1 == l2 && memcmp(s1, s2, l1) == 0 &&
              ver(ours, OURS, RSA_PKCS1_PADDING, s2, l2, msg, sizeof(msg)),
          "%s: PKCS#1 v1.5 signature, the same as the default provider's", name);
    l1 = sig(ours, OURS, RSA_PKCS1_PSS_PADDING, s1, sizeof(s1), msg, sizeof(msg));
    l2 = sig(theirs, THEIRS, RSA_PKCS1_PSS_PADDING, s2, sizeof(s2), msg, sizeof(msg));
    check(l1 > 0 && ver(theirs, THEIRS, RSA_PKCS1_PSS_PADDING, s1, l1, msg, sizeof(msg)) &&
              ver(ours, OURS, RSA_PKCS1_PSS_PADDING, s2, l2, msg, sizeof(msg)) &&
              !ver(ours, OURS, RSA_PKCS1_PSS_PADDING, s2, l2, msg, sizeof(msg) - 1),
          "%s: PSS signatures verify both ways (and a wrong message does not)", name);
    const uint64_t signed_here = counter("ops-rsa-sign") - signs;
    check(served ? signed_here >= 2 : signed_here == 0, "%s: %llu signatures by mbcrypto", name,
          (unsigned long long)signed_here);
    static const int pads[] = {RSA_PKCS1_OAEP_PADDING, RSA_PKCS1_PADDING};
    for (int i = 0; i < 2; i++) {
        size_t c1 = crypt(ours, OURS, 1, pads[i], ct, sizeof(ct), msg, 20);
        size_t p1 = c1 > 0 ? crypt(theirs, THEIRS, 0, pads[i], pt, sizeof(pt), ct, c1) : 0;
        int ok = p1 == 20 && memcmp(pt, msg, 20) == 0;
        size_t c2 = crypt(theirs, THEIRS, 1, pads[i], ct, sizeof(ct), msg, 20);
        size_t p2 = c2 > 0 ? crypt(ours, OURS, 0, pads[i], pt, sizeof(pt), ct, c2) : 0;
        check(ok && p2 == 20 && memcmp(pt, msg, 20) == 0, "%s: %s encryption both ways", name,
              i == 0 ? "OAEP" : "PKCS#1 v1.5");
    }
    /* Export, and import of the export, by each provider. */
    OSSL_PARAM *out = NULL;
    EVP_PKEY *again = NULL, *theirs2 = NULL;
    int ok = EVP_PKEY_todata(ours, EVP_PKEY_KEYPAIR, &out) == 1 &&
             (again = fromdata(out, EVP_PKEY_KEYPAIR, OURS)) != NULL &&
             (theirs2 = fromdata(out, EVP_PKEY_KEYPAIR, THEIRS)) != NULL;
    check(ok && same_params(ours, theirs) && same_params(again, theirs) &&
              same_params(theirs2, theirs),
          "%s: export, and import of the export, keep every component", name);
    check(EVP_PKEY_eq(ours, theirs) == 1 && (again == NULL || EVP_PKEY_eq(ours, again) == 1),
          "%s: equal to the default provider's key", name);
    char *po = pem(ours, 1), *pt2 = pem(theirs, 1), *uo = pem(ours, 0), *ut = pem(theirs, 0);
    /* (The default provider writes no PEM of a key without its primes.) */
    ERR_clear_error();
    check(same_str(po, pt2) && uo != NULL && same_str(uo, ut),
          "%s: private PEM (%s) and public PEM as the default provider's", name,
          po != NULL ? "made" : "refused");
    free(po);
    free(pt2);
    free(uo);
    free(ut);
    const int co = checks(ours, OURS), ct2 = checks(theirs, THEIRS);
    check(co == ct2 && (co == 15 || !served), "%s: key checks as the default provider's (%#x)",
          name, co);
    EVP_PKEY *dup = EVP_PKEY_dup(ours);
    l1 = dup != NULL ? sig(dup, OURS, RSA_PKCS1_PADDING, s1, sizeof(s1), msg, sizeof(msg)) : 0;
    check(l1 > 0 && ver(theirs, THEIRS, RSA_PKCS1_PADDING, s1, l1, msg, sizeof(msg)),
          "%s: a dup signs", name);
    /* The public key alone, from the exported n and e. */
    OSSL_PARAM pubp[3] = {OSSL_PARAM_END, OSSL_PARAM_END, OSSL_PARAM_END};
    const OSSL_PARAM *n = OSSL_PARAM_locate_const(out, OSSL_PKEY_PARAM_RSA_N),
                     *e = OSSL_PARAM_locate_const(out, OSSL_PKEY_PARAM_RSA_E);
    EVP_PKEY *pub = NULL;
    if (n != NULL && e != NULL) {
        pubp[0] = *n;
        pubp[1] = *e;
        pub = fromdata(pubp, EVP_PKEY_PUBLIC_KEY, OURS);
    }
    l2 = sig(theirs, THEIRS, RSA_PKCS1_PADDING, s2, sizeof(s2), msg, sizeof(msg));
    check(pub != NULL && strcmp(provider_of(pub), "mbcrypto") == 0 &&
              ver(pub, OURS, RSA_PKCS1_PADDING, s2, l2, msg, sizeof(msg)) &&
              EVP_PKEY_eq(pub, theirs) == 1 && EVP_PKEY_get_bits(pub) == EVP_PKEY_get_bits(theirs),
          "%s: the public key alone verifies", name);
    EVP_PKEY_free(pub);
    EVP_PKEY_free(dup);
    EVP_PKEY_free(again);
    EVP_PKEY_free(theirs2);
    OSSL_PARAM_free(out);
    EVP_PKEY_free(ours);
    EVP_PKEY_free(theirs);
}

/* keygen: a key of bits (primes primes) from the default provider, as
 * parameters. */
static OSSL_PARAM *keygen(unsigned bits, unsigned primes)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(lib, "RSA", THEIRS);
    EVP_PKEY *k = NULL;
    OSSL_PARAM *p = NULL;
    if (c != NULL && EVP_PKEY_keygen_init(c) == 1 &&
        EVP_PKEY_CTX_set_rsa_keygen_bits(c, (int)bits) == 1 &&
        EVP_PKEY_CTX_set_rsa_keygen_primes(c, (int)primes) == 1 && EVP_PKEY_keygen(c, &k) == 1) {
        EVP_PKEY_todata(k, EVP_PKEY_KEYPAIR, &p);
    }
    EVP_PKEY_free(k);
    EVP_PKEY_CTX_free(c);
    return p;
}

int main(void)
{
    if (!tap_start()) {
        return 1;
    }
    static const struct {
        const char *name;
        unsigned bits, primes;
        int crt, served;
    } keys[] = {
        {"rsa1024", 1024, 2, 1, 0},        {"rsa1536", 1536, 2, 1, 0},
        {"rsa2048", 2048, 2, 1, 1},        {"rsa2048-3-primes", 2048, 3, 1, 0},
        {"rsa2048-no-crt", 2048, 2, 0, 0},
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        OSSL_PARAM *p = keygen(keys[i].bits, keys[i].primes);
        if (p == NULL) {
            check(0, "%s: generated by the default provider", keys[i].name);
            continue;
        }
        /* Without CRT components: n, e and d alone. */
        static const char *const ned[] = {OSSL_PKEY_PARAM_RSA_N, OSSL_PKEY_PARAM_RSA_E,
                                          OSSL_PKEY_PARAM_RSA_D};
        OSSL_PARAM sub[4] = {OSSL_PARAM_END, OSSL_PARAM_END, OSSL_PARAM_END, OSSL_PARAM_END};
        for (int j = 0; j < 3 && !keys[i].crt; j++) {
            const OSSL_PARAM *q = OSSL_PARAM_locate_const(p, ned[j]);
            if (q != NULL) {
                sub[j] = *q;
            }
        }
        one_key(keys[i].name, keys[i].crt ? p : sub, keys[i].served);
        OSSL_PARAM_free(p);
    }
    printf("1..%d\n", n_tests);
    return n_failed != 0;
}
