/*
 * mlkem.c - ML-KEM-768 and X25519MLKEM768 of the provider (issue 24)
 * through the EVP API against OpenSSL 3.5's default provider: key pairs of
 * each provider, encapsulation by one and decapsulation by the other both
 * ways, keys moved between them (export and import, PEM and DER), seeded
 * key pairs and encapsulations with a given m equal byte for byte, random
 * key pairs keeping their seeds as the default provider's do, each
 * operation in an ASYNC job pausing once (the ML-KEM and classical
 * requests of a hybrid together),
 * encapsulation keys failing the modulus check and decapsulation keys
 * failing the hash check refused by both, wrong-length ciphertexts
 * refused, a tampered ciphertext giving the same implicit-rejection secret
 * as the default provider's, a low-order X25519 share refused, and the
 * TLS-GROUP capability announcing the groups as the default provider
 * does. The counters show mbcrypto did the work. With an OpenSSL before
 * 3.5 (no ML-KEM), it checks that none of this is offered. Built against
 * the system's OpenSSL 3.0, run with 3.0's and 3.5's libcrypto
 * (test_mlkem.sh). TAP on stdout; MBC_PROVIDER_DIR is the directory of
 * mbcrypto.so.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include "evp_tap.h"

#define OURS "provider=mbcrypto"
#define THEIRS "provider=default"
#define PREFER_OURS "?provider=mbcrypto" /* decoders are the default provider's */

/* The kinds, with OpenSSL 3.5's sizes; hybrid: the classical half's
 * public key length (0: none), first: it comes before the ML-KEM part;
 * moves: the default provider imports and exports its private keys
 * (3.5.9's SecP256r1MLKEM768 does not: it takes its P-256 half's private
 * key as an octet string, which OpenSSL's EC keys give and take as a
 * BIGNUM; its key pairs work only where they were made). */
struct kind {
    const char *name;
    size_t pub, priv, ct, ss;
    size_t hybrid;
    int first, moves;
};
static const struct kind kinds[] = {
    {"ML-KEM-768", 1184, 2400, 1088, 32, 0, 0, 1},
    {"X25519MLKEM768", 1216, 2432, 1120, 64, 32, 0, 1},
    {"SecP256r1MLKEM768", 1249, 2432, 1153, 64, 65, 1, 0},
};

/* skip_case: a TAP case skipped, with why. */
static void skip_case(const char *name, const char *what, const char *why)
{
    printf("ok %d # SKIP %s: %s: %s\n", ++n_tests, name, what, why);
}
#define NO_MOVE "the default provider cannot move this key pair"

#define NUM_KINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Where the ML-KEM part of a public key (and ciphertext) and of a private
 * key starts, and where the classical half of a public key does. */
static size_t m_pub(const struct kind *kd)
{
    return kd->first ? kd->hybrid : 0;
}
static size_t m_priv(const struct kind *kd)
{
    return kd->first ? 32 : 0;
}
static size_t x_pub(const struct kind *kd)
{
    return kd->first ? 0 : 1184;
}

#define MAXPUB 1249
#define MAXCT 1153
#define MAXSS 64

/* keygen: a key pair of kind by the provider props picks (with a 64-byte
 * seed when not NULL). */
static EVP_PKEY *keygen(const struct kind *kd, const char *props, const uint8_t *seed)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(lib, kd->name, props);
    EVP_PKEY *k = NULL;
    OSSL_PARAM p[] = {OSSL_PARAM_octet_string("seed", (void *)seed, 64), OSSL_PARAM_END};
    if (c == NULL || EVP_PKEY_keygen_init(c) != 1 ||
        (seed != NULL && EVP_PKEY_CTX_set_params(c, p) != 1) || EVP_PKEY_keygen(c, &k) != 1) {
        k = NULL;
    }
    EVP_PKEY_CTX_free(c);
    return k;
}

/* encaps: ct, ss of key by the KEM props picks (m: a 32-byte ikme, or
 * NULL); 1 on success with *ctlen, *sslen set. */
static int encaps(EVP_PKEY *key, const char *props, const uint8_t *m, uint8_t *ct, size_t *ctlen,
                  uint8_t *ss, size_t *sslen)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, key, props);
    OSSL_PARAM p[] = {OSSL_PARAM_octet_string("ikme", (void *)m, 32), OSSL_PARAM_END};
    *ctlen = MAXCT;
    *sslen = MAXSS;
    const int ok = c != NULL && EVP_PKEY_encapsulate_init(c, m != NULL ? p : NULL) == 1 &&
                   EVP_PKEY_encapsulate(c, ct, ctlen, ss, sslen) == 1;
    EVP_PKEY_CTX_free(c);
    return ok;
}

static int decaps(EVP_PKEY *key, const char *props, const uint8_t *ct, size_t ctlen, uint8_t *ss,
                  size_t *sslen)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, key, props);
    *sslen = MAXSS;
    const int ok = c != NULL && EVP_PKEY_decapsulate_init(c, NULL) == 1 &&
                   EVP_PKEY_decapsulate(c, ss, sslen, ct, ctlen) == 1;
    EVP_PKEY_CTX_free(c);
    return ok;
}

/* fromdata: a key of kind from params by the key management props picks. */
static EVP_PKEY *fromdata(const struct kind *kd, const char *props, int selection,
                          OSSL_PARAM *params)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(lib, kd->name, props);
    EVP_PKEY *k = NULL;
    if (c == NULL || EVP_PKEY_fromdata_init(c) != 1 ||
        EVP_PKEY_fromdata(c, &k, selection, params) != 1) {
        k = NULL;
    }
    EVP_PKEY_CTX_free(c);
    return k;
}

/* move: key (selection) exported and imported by the provider props picks. */
static EVP_PKEY *move(const struct kind *kd, EVP_PKEY *key, const char *props, int selection)
{
    OSSL_PARAM *p = NULL;
    if (EVP_PKEY_todata(key, selection, &p) != 1) {
        return NULL;
    }
    EVP_PKEY *k = fromdata(kd, props, selection, p);
    OSSL_PARAM_free(p);
    return k;
}

/* raw: key's octet string parameter name (n bytes) into out. */
static int raw(EVP_PKEY *key, const char *name, uint8_t *out, size_t n)
{
    size_t len = 0;
    return EVP_PKEY_get_octet_string_param(key, name, out, n, &len) == 1 && len == n;
}

/* one_key: fromdata of a single octet string component. */
static EVP_PKEY *one_key(const struct kind *kd, const char *props, const char *name,
                         const uint8_t *v, size_t len, int selection)
{
    OSSL_PARAM p[] = {OSSL_PARAM_octet_string(name, (void *)v, len), OSSL_PARAM_END};
    return fromdata(kd, props, selection, p);
}

/* cross: an encapsulation by one provider to the other's key pair,
 * decapsulated by the other. */
static void cross(const struct kind *kd, const char *enc_props, const char *dec_props,
                  const char *what)
{
    EVP_PKEY *pair = keygen(kd, dec_props, NULL);
    EVP_PKEY *pub = pair != NULL ? move(kd, pair, enc_props, EVP_PKEY_PUBLIC_KEY) : NULL;
    uint8_t ct[MAXCT], ss[MAXSS], ss2[MAXSS];
    size_t ctlen = 0, sslen = 0, sslen2 = 0;
    const int e = pub != NULL && encaps(pub, enc_props, NULL, ct, &ctlen, ss, &sslen);
    const int d = e && decaps(pair, dec_props, ct, ctlen, ss2, &sslen2);
    check(pair != NULL && pub != NULL && e && d && ctlen == kd->ct && sslen == kd->ss &&
              sslen2 == kd->ss && memcmp(ss, ss2, sslen) == 0,
          "%s: %s (key pair of %s, public key moved to %s)", kd->name, what, provider_of(pair),
          provider_of(pub));
    /* The pair itself used through the other provider's KEM (EVP moves it). */
    if (!kd->moves && strcmp(enc_props, dec_props) != 0) {
        skip_case(kd->name, "the key pair as is", NO_MOVE);
        EVP_PKEY_free(pair);
        EVP_PKEY_free(pub);
        return;
    }
    const int e2 = pair != NULL && encaps(pair, enc_props, NULL, ct, &ctlen, ss, &sslen);
    const int d2 = e2 && decaps(pair, dec_props, ct, ctlen, ss2, &sslen2);
    check(e2 && d2 && memcmp(ss, ss2, kd->ss) == 0, "%s: %s with the key pair as is", kd->name,
          what);
    EVP_PKEY_free(pair);
    EVP_PKEY_free(pub);
}

/* pem_roundtrip: our key pair through the default provider's PEM (PKCS#8)
 * and DER (SubjectPublicKeyInfo) encoders, read back (the default
 * provider's decoders make its own keys); our encapsulation to the read
 * public key, decapsulated by each provider with the read key pair (EVP
 * exports it to us for ours). */
static void pem_roundtrip(const struct kind *kd, EVP_PKEY *ours)
{
    BIO *b = BIO_new(BIO_s_mem());
    int ok = b != NULL && PEM_write_bio_PrivateKey(b, ours, NULL, NULL, 0, NULL, NULL) == 1;
    EVP_PKEY *back_theirs = NULL, *back_ours = NULL, *pub = NULL;
    if (ok) {
        BIO *b2 = BIO_new(BIO_s_mem());
        char *data = NULL;
        const long n = BIO_get_mem_data(b, &data);
        BIO_write(b2, data, (int)n);
        back_theirs = PEM_read_bio_PrivateKey_ex(b, NULL, NULL, NULL, lib, THEIRS);
        back_ours = PEM_read_bio_PrivateKey_ex(b2, NULL, NULL, NULL, lib, PREFER_OURS);
        BIO_free(b2);
    }
    unsigned char *der = NULL;
    const int derlen = i2d_PUBKEY(ours, &der);
    if (derlen > 0) {
        const unsigned char *q = der;
        pub = d2i_PUBKEY_ex(NULL, &q, derlen, lib, PREFER_OURS);
    }
    check(ok && back_theirs != NULL && back_ours != NULL && pub != NULL &&
              EVP_PKEY_eq(back_theirs, ours) == 1 && EVP_PKEY_eq(back_ours, ours) == 1 &&
              EVP_PKEY_eq(pub, ours) == 1,
          "%s: our key through PEM and DER (read as %s, %s, %s)", kd->name,
          provider_of(back_theirs), provider_of(back_ours), provider_of(pub));
    uint8_t ct[MAXCT], ss[MAXSS], ss2[MAXSS], ss3[MAXSS];
    size_t ctlen = 0, sslen = 0, l2 = 0, l3 = 0;
    check(pub != NULL && encaps(pub, OURS, NULL, ct, &ctlen, ss, &sslen) && back_theirs != NULL &&
              decaps(back_theirs, THEIRS, ct, ctlen, ss2, &l2) && back_ours != NULL &&
              decaps(back_ours, OURS, ct, ctlen, ss3, &l3) && memcmp(ss, ss2, kd->ss) == 0 &&
              memcmp(ss, ss3, kd->ss) == 0,
          "%s: the keys read back decapsulate", kd->name);
    OPENSSL_free(der);
    EVP_PKEY_free(back_theirs);
    EVP_PKEY_free(back_ours);
    EVP_PKEY_free(pub);
    BIO_free(b);
}

/* seeded: the key pair of a seed equal byte for byte, the seed exported;
 * encapsulation with a given m (ikme) equal. */
static void seeded(const struct kind *kd)
{
    uint8_t seed[64], m[32];
    for (int i = 0; i < 64; i++) {
        seed[i] = (uint8_t)(i * 7 + 1);
    }
    for (int i = 0; i < 32; i++) {
        m[i] = (uint8_t)(255 - i);
    }
    EVP_PKEY *a = keygen(kd, OURS, seed), *b = keygen(kd, THEIRS, seed);
    uint8_t pa[1184], pb[1184], va[2400], vb[2400], sa[64], sb[64];
    check(a != NULL && b != NULL && strcmp(provider_of(a), "mbcrypto") == 0 &&
              raw(a, OSSL_PKEY_PARAM_PUB_KEY, pa, sizeof(pa)) &&
              raw(b, OSSL_PKEY_PARAM_PUB_KEY, pb, sizeof(pb)) &&
              raw(a, OSSL_PKEY_PARAM_PRIV_KEY, va, sizeof(va)) &&
              raw(b, OSSL_PKEY_PARAM_PRIV_KEY, vb, sizeof(vb)) && raw(a, "seed", sa, 64) &&
              raw(b, "seed", sb, 64) && memcmp(pa, pb, sizeof(pa)) == 0 &&
              memcmp(va, vb, sizeof(va)) == 0 && memcmp(sa, seed, 64) == 0 &&
              memcmp(sb, seed, 64) == 0,
          "%s: the key pair of a seed equals the default provider's, seed kept", kd->name);
    /* A key imported from its seed alone (as a PEM seed-only key is). */
    EVP_PKEY *c = one_key(kd, OURS, "seed", seed, 64, EVP_PKEY_KEYPAIR);
    check(c != NULL && EVP_PKEY_eq(c, b) == 1, "%s: a key imported from its seed", kd->name);
    uint8_t cta[MAXCT], ctb[MAXCT], ssa[MAXSS], ssb[MAXSS];
    size_t la = 0, lb = 0, sla = 0, slb = 0;
    check(a != NULL && b != NULL && encaps(a, OURS, m, cta, &la, ssa, &sla) &&
              encaps(b, THEIRS, m, ctb, &lb, ssb, &slb) && la == lb && sla == slb &&
              memcmp(cta, ctb, la) == 0 && memcmp(ssa, ssb, sla) == 0,
          "%s: encapsulation with a given m (ikme) equals the default provider's", kd->name);
    /* Tampered ciphertext: both give the same implicit-rejection secret. */
    cta[5] ^= 0x10;
    check(a != NULL && b != NULL && decaps(a, OURS, cta, la, ssa, &sla) &&
              decaps(b, THEIRS, cta, la, ssb, &slb) && sla == slb && memcmp(ssa, ssb, sla) == 0,
          "%s: a tampered ciphertext gives the default provider's rejection secret", kd->name);
    /* Wrong lengths. */
    uint8_t big[MAXCT + 1] = {0};
    check(a != NULL && !decaps(a, OURS, big, kd->ct - 1, ssa, &sla) &&
              !decaps(a, OURS, big, kd->ct + 1, ssa, &sla),
          "%s: ciphertexts of %zu and %zu bytes refused", kd->name, kd->ct - 1, kd->ct + 1);
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
    EVP_PKEY_free(c);
}

/* bad_keys: an encapsulation key with a coefficient >= q and a
 * decapsulation key whose H(ek) is wrong are refused by both providers
 * (import, and libssl's encoded-pub-key). */
static void bad_keys(const struct kind *kd)
{
    /* A pair whose private key can be had: the default provider's, else ours. */
    const char *pair_props = kd->moves ? THEIRS : OURS;
    EVP_PKEY *pair = keygen(kd, pair_props, NULL);
    uint8_t pub[MAXPUB], priv[2432];
    if (pair == NULL || !raw(pair, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pub, kd->pub) ||
        !raw(pair, OSSL_PKEY_PARAM_PRIV_KEY, priv, kd->priv)) {
        check(0, "%s: key pair of %s", kd->name, pair_props);
        EVP_PKEY_free(pair);
        return;
    }
    EVP_PKEY *good = one_key(kd, OURS, OSSL_PKEY_PARAM_PUB_KEY, pub, kd->pub, EVP_PKEY_PUBLIC_KEY);
    check(good != NULL && strcmp(provider_of(good), "mbcrypto") == 0, "%s: a valid public key",
          kd->name);
    EVP_PKEY_free(good);
    /* Coefficient 100 of polynomial 1 set to 4095 (the 12 bits at 150.5 bytes). */
    uint8_t bad[MAXPUB];
    memcpy(bad, pub, kd->pub);
    bad[m_pub(kd) + 384 + 150] = 0xFF;
    bad[m_pub(kd) + 384 + 151] |= 0x0F;
    EVP_PKEY *o = one_key(kd, OURS, OSSL_PKEY_PARAM_PUB_KEY, bad, kd->pub, EVP_PKEY_PUBLIC_KEY);
    EVP_PKEY *t = one_key(kd, THEIRS, OSSL_PKEY_PARAM_PUB_KEY, bad, kd->pub, EVP_PKEY_PUBLIC_KEY);
    check(o == NULL && t == NULL,
          "%s: encapsulation key failing the modulus check refused (ours %s, default %s)", kd->name,
          o == NULL ? "refused" : "took it", t == NULL ? "refused" : "took it");
    EVP_PKEY_free(o);
    EVP_PKEY_free(t);
    /* As libssl sets a peer's share: on an empty key. */
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(lib, kd->name, OURS);
    EVP_PKEY *empty = NULL;
    const int made =
        c != NULL && EVP_PKEY_paramgen_init(c) == 1 && EVP_PKEY_paramgen(c, &empty) == 1;
    check(made && EVP_PKEY_set1_encoded_public_key(empty, bad, kd->pub) != 1,
          "%s: encoded-pub-key failing the modulus check refused", kd->name);
    EVP_PKEY_free(empty);
    empty = NULL;
    const int made2 = c != NULL && EVP_PKEY_paramgen(c, &empty) == 1;
    uint8_t ct[MAXCT], ss[MAXSS], ss2[MAXSS];
    size_t ctlen = 0, sslen = 0, sl2 = 0;
    check(made2 && EVP_PKEY_set1_encoded_public_key(empty, pub, kd->pub) == 1 &&
              encaps(empty, OURS, NULL, ct, &ctlen, ss, &sslen) &&
              decaps(pair, pair_props, ct, ctlen, ss2, &sl2) && memcmp(ss, ss2, kd->ss) == 0,
          "%s: a peer's encoded-pub-key on an empty key, as libssl does", kd->name);
    EVP_PKEY_free(empty);
    EVP_PKEY_CTX_free(c);
    /* Decapsulation key with a wrong H(ek). */
    uint8_t badp[2432];
    memcpy(badp, priv, kd->priv);
    badp[m_priv(kd) + 1152 + 1184] ^= 1;
    o = one_key(kd, OURS, OSSL_PKEY_PARAM_PRIV_KEY, badp, kd->priv, EVP_PKEY_KEYPAIR);
    t = kd->moves ? one_key(kd, THEIRS, OSSL_PKEY_PARAM_PRIV_KEY, badp, kd->priv, EVP_PKEY_KEYPAIR)
                  : NULL;
    EVP_PKEY *good_priv =
        one_key(kd, OURS, OSSL_PKEY_PARAM_PRIV_KEY, priv, kd->priv, EVP_PKEY_KEYPAIR);
    check(good_priv != NULL && EVP_PKEY_eq(good_priv, pair) == 1, "%s: a valid private key",
          kd->name);
    EVP_PKEY_free(good_priv);
    check(o == NULL && t == NULL,
          "%s: decapsulation key failing the hash check refused (ours %s, default %s)", kd->name,
          o == NULL ? "refused" : "took it", t == NULL ? "refused" : "took it");
    EVP_PKEY_free(o);
    EVP_PKEY_free(t);
    /* Wrong lengths of keys. */
    o = one_key(kd, OURS, OSSL_PKEY_PARAM_PUB_KEY, pub, kd->pub - 1, EVP_PKEY_PUBLIC_KEY);
    check(o == NULL, "%s: a public key of %zu bytes refused", kd->name, kd->pub - 1);
    EVP_PKEY_free(o);
    if (kd->hybrid != 0) {
        /* A classical share of zeros (X25519: u = 0, low order; P-256: 04
         * and zeros, not on the curve): both refuse it, at import or at
         * encapsulation. */
        memcpy(bad, pub, kd->pub);
        memset(bad + x_pub(kd), 0, kd->hybrid);
        bad[x_pub(kd)] = kd->first ? 0x04 : 0;
        o = one_key(kd, OURS, OSSL_PKEY_PARAM_PUB_KEY, bad, kd->pub, EVP_PKEY_PUBLIC_KEY);
        t = one_key(kd, THEIRS, OSSL_PKEY_PARAM_PUB_KEY, bad, kd->pub, EVP_PKEY_PUBLIC_KEY);
        const int ro = o == NULL || !encaps(o, OURS, NULL, ct, &ctlen, ss, &sslen);
        const int rt = t == NULL || !encaps(t, THEIRS, NULL, ct, &ctlen, ss, &sslen);
        check(ro && rt && (o == NULL) == (t == NULL),
              "%s: a bad classical share refused by both (at %s)", kd->name,
              o == NULL ? "import" : "encapsulation");
        EVP_PKEY_free(o);
        EVP_PKEY_free(t);
    }
    EVP_PKEY_free(pair);
}

/* random_seed: an ML-KEM-768 key pair made without a seed keeps the seed
 * it was made from, as the default provider's does: gettable, exported
 * (EVP_PKEY_todata), the same key pair when the default provider makes it
 * from that seed, and written by the default provider's PEM encoder (read
 * back with it). Two such keys have different seeds. */
static void random_seed(const struct kind *kd)
{
    EVP_PKEY *a = keygen(kd, OURS, NULL), *a2 = keygen(kd, OURS, NULL);
    EVP_PKEY *t = keygen(kd, THEIRS, NULL);
    uint8_t sa[64], sa2[64], st[64], sp[64];
    const int got = a != NULL && a2 != NULL && t != NULL && raw(a, "seed", sa, 64) &&
                    raw(a2, "seed", sa2, 64) && raw(t, "seed", st, 64);
    EVP_PKEY *b = got ? keygen(kd, THEIRS, sa) : NULL;
    OSSL_PARAM *pp = NULL;
    const OSSL_PARAM *ps = a != NULL && EVP_PKEY_todata(a, EVP_PKEY_KEYPAIR, &pp) == 1
                               ? OSSL_PARAM_locate_const(pp, "seed")
                               : NULL;
    const void *sv = NULL;
    size_t sl = 0;
    check(got && b != NULL && EVP_PKEY_eq(a, b) == 1 && memcmp(sa, sa2, 64) != 0 && ps != NULL &&
              OSSL_PARAM_get_octet_string_ptr(ps, &sv, &sl) == 1 && sl == 64 &&
              memcmp(sv, sa, 64) == 0,
          "%s: a random key pair keeps its seed (gettable, exported, the default provider's "
          "key pair of it)",
          kd->name);
    OSSL_PARAM_free(pp);
    BIO *bio = BIO_new(BIO_s_mem());
    EVP_PKEY *back =
        bio != NULL && a != NULL && PEM_write_bio_PrivateKey(bio, a, NULL, NULL, 0, NULL, NULL) == 1
            ? PEM_read_bio_PrivateKey_ex(bio, NULL, NULL, NULL, lib, THEIRS)
            : NULL;
    check(back != NULL && raw(back, "seed", sp, 64) && memcmp(sp, sa, 64) == 0 &&
              EVP_PKEY_eq(back, a) == 1,
          "%s: PEM of a random key pair of ours holds its seed", kd->name);
    BIO_free(bio);
    EVP_PKEY_free(back);
    EVP_PKEY_free(a);
    EVP_PKEY_free(a2);
    EVP_PKEY_free(t);
    EVP_PKEY_free(b);
}

/* ---- ASYNC jobs: one pause per operation ---------------------------- */

#define NJOBS 8

/* aop: one operation of ours in an ASYNC job: a key pair of kd (into
 * made), an encapsulation to key (ct, ss) or a decapsulation of ct by key
 * (ss). */
enum { A_GEN, A_ENC, A_DEC };
struct aop {
    int op;
    const struct kind *kd;
    EVP_PKEY *key, *made;
    uint8_t ct[MAXCT], ss[MAXSS];
    size_t ctlen, sslen;
};

static int aop_run(void *arg)
{
    struct aop *a = *(struct aop **)arg;
    if (a->op == A_GEN) {
        return (a->made = keygen(a->kd, OURS, NULL)) != NULL;
    }
    if (a->op == A_ENC) {
        return encaps(a->key, OURS, NULL, a->ct, &a->ctlen, a->ss, &a->sslen);
    }
    return decaps(a->key, OURS, a->ct, a->ctlen, a->ss, &a->sslen);
}

/* in_jobs: the n operations in ASYNC jobs of their own wait contexts,
 * started in order, then resumed round after round (at most 100) as an
 * event loop does. Returns how many times they paused in all, -1 when one
 * failed or did not finish. */
static int in_jobs(struct aop *const a[], int n)
{
    ASYNC_JOB *job[NJOBS] = {NULL};
    ASYNC_WAIT_CTX *ctx[NJOBS] = {NULL};
    int done[NJOBS] = {0}, left = n, pauses = 0, ok = 1;
    for (int i = 0; i < n; i++) {
        ok &= (ctx[i] = ASYNC_WAIT_CTX_new()) != NULL;
    }
    for (int round = 0; ok && round < 100 && left > 0; round++) {
        for (int i = 0; i < n && ok; i++) {
            int ret = 0;
            if (done[i]) {
                continue;
            }
            const int r =
                ASYNC_start_job(&job[i], ctx[i], &ret, aop_run, (void *)&a[i], sizeof(a[i]));
            if (r == ASYNC_PAUSE) {
                pauses++;
            } else if (r == ASYNC_FINISH) {
                done[i] = 1;
                left--;
                ok = ret == 1;
            } else {
                ok = 0;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        ASYNC_WAIT_CTX_free(ctx[i]);
    }
    return ok && left == 0 ? pauses : -1;
}

/* async_ops: each operation of kd alone in an ASYNC job pauses once, for
 * the ML-KEM part and the classical half's requests together (twice for
 * SecP256r1MLKEM768's encapsulation: its ephemeral key pair before its
 * secret; once where EC's implementation has one lane, MBC_TEST_EC_LANES=1
 * from test_mlkem.sh, as the secret's ECDH alone then runs at once),
 * counted as such (async-pauses), and the decapsulation gives the
 * encapsulation's secret; 8 encapsulations in 8 jobs pause once each but
 * the last, whose requests fill their batches. The lone-request rule is
 * off (MBCRYPTO_LONE_AT_ONCE=0, main). */
static void async_ops(const struct kind *kd, EVP_PKEY *pair)
{
    static const char *const what[] = {"key generation", "encapsulation", "decapsulation"};
    struct aop one = {.kd = kd, .key = pair}, *op = &one;
    uint8_t ss[MAXSS];
    const char *ec_lanes = getenv("MBC_TEST_EC_LANES");
    const int ec_one_lane = ec_lanes != NULL && strcmp(ec_lanes, "1") == 0;
    for (int o = A_GEN; o <= A_DEC; o++) {
        const int want = o == A_ENC && kd->first && !ec_one_lane ? 2 : 1;
        one.op = o;
        const uint64_t p0 = counter("async-pauses");
        const int p = in_jobs(&op, 1);
        const uint64_t dp = counter("async-pauses") - p0;
        check(p == want && dp == (uint64_t)want && (o != A_DEC || memcmp(one.ss, ss, kd->ss) == 0),
              "%s: an ASYNC %s pauses %d time(s) (%d, async-pauses +%llu)", kd->name, what[o], want,
              p, (unsigned long long)dp);
        memcpy(ss, one.ss, sizeof(ss));
    }
    EVP_PKEY_free(one.made);
    if (kd->first) {
        return;
    }
    struct aop *many = calloc(NJOBS, sizeof(*many));
    struct aop *mp[NJOBS];
    int p = -1, agree = many != NULL;
    if (many != NULL) {
        for (int i = 0; i < NJOBS; i++) {
            many[i] = (struct aop){.op = A_ENC, .kd = kd, .key = pair};
            mp[i] = &many[i];
        }
        p = in_jobs(mp, NJOBS);
        for (int i = 0; i < NJOBS && agree; i++) {
            size_t sl = 0;
            agree = decaps(pair, OURS, many[i].ct, many[i].ctlen, ss, &sl) && sl == kd->ss &&
                    memcmp(ss, many[i].ss, sl) == 0 &&
                    (i == 0 || memcmp(many[i].ct, many[0].ct, many[i].ctlen) != 0);
        }
    }
    check(p == NJOBS - 1 && agree,
          "%s: %d ASYNC encapsulations pause %d times (%d), each decapsulates", kd->name, NJOBS,
          NJOBS - 1, p);
    free(many);
}

/* The TLS-GROUP capability: each of ours as the default provider's. */
struct group {
    char name[64];
    unsigned id, secbits, kem;
    int min_tls, max_tls, min_dtls, max_dtls;
};
struct groups {
    struct group g[128];
    size_t n;
};

static int group_cb(const OSSL_PARAM params[], void *arg)
{
    struct groups *gs = arg;
    if (gs->n >= 128) {
        return 1;
    }
    struct group *g = &gs->g[gs->n++];
    memset(g, 0, sizeof(*g));
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, OSSL_CAPABILITY_TLS_GROUP_NAME);
    const char *s = NULL;
    if (p != NULL && OSSL_PARAM_get_utf8_string_ptr(p, &s)) {
        snprintf(g->name, sizeof(g->name), "%s", s);
    }
    OSSL_PARAM_get_uint(OSSL_PARAM_locate_const(params, OSSL_CAPABILITY_TLS_GROUP_ID), &g->id);
    OSSL_PARAM_get_uint(OSSL_PARAM_locate_const(params, OSSL_CAPABILITY_TLS_GROUP_SECURITY_BITS),
                        &g->secbits);
    OSSL_PARAM_get_uint(OSSL_PARAM_locate_const(params, OSSL_CAPABILITY_TLS_GROUP_IS_KEM), &g->kem);
    OSSL_PARAM_get_int(OSSL_PARAM_locate_const(params, OSSL_CAPABILITY_TLS_GROUP_MIN_TLS),
                       &g->min_tls);
    OSSL_PARAM_get_int(OSSL_PARAM_locate_const(params, OSSL_CAPABILITY_TLS_GROUP_MAX_TLS),
                       &g->max_tls);
    OSSL_PARAM_get_int(OSSL_PARAM_locate_const(params, OSSL_CAPABILITY_TLS_GROUP_MIN_DTLS),
                       &g->min_dtls);
    OSSL_PARAM_get_int(OSSL_PARAM_locate_const(params, OSSL_CAPABILITY_TLS_GROUP_MAX_DTLS),
                       &g->max_dtls);
    return 1;
}

static const struct group *find_group(const struct groups *gs, const char *name)
{
    for (size_t i = 0; i < gs->n; i++) {
        if (strcmp(gs->g[i].name, name) == 0) {
            return &gs->g[i];
        }
    }
    return NULL;
}

static void tls_groups(int v35)
{
    static struct groups ours, theirs;
    OSSL_PROVIDER_get_capabilities(mbc, "TLS-GROUP", group_cb, &ours);
    OSSL_PROVIDER_get_capabilities(dflt, "TLS-GROUP", group_cb, &theirs);
    static const char *const names[] = {"X25519MLKEM768", "MLKEM768", "SecP256r1MLKEM768"};
    for (size_t i = 0; i < 3; i++) {
        const struct group *a = find_group(&ours, names[i]), *b = find_group(&theirs, names[i]);
        if (!v35) {
            check(a == NULL, "TLS group %s not announced before OpenSSL 3.5", names[i]);
            continue;
        }
        check(a != NULL && b != NULL && a->id == b->id && a->secbits == b->secbits && a->kem == 1 &&
                  b->kem == 1 && a->min_tls == b->min_tls && a->max_tls == b->max_tls &&
                  a->min_dtls == b->min_dtls && a->max_dtls == b->max_dtls,
              "TLS group %s announced as the default provider does (id %u, secbits %u, kem %u, "
              "TLS 0x%x-0x%x, DTLS %d-%d)",
              names[i], a != NULL ? a->id : 0, a != NULL ? a->secbits : 0, a != NULL ? a->kem : 0,
              a != NULL ? (unsigned)a->min_tls : 0, a != NULL ? (unsigned)a->max_tls : 0,
              a != NULL ? a->min_dtls : 0, a != NULL ? a->max_dtls : 0);
    }
    check(find_group(&ours, "x25519") != NULL, "TLS group x25519 still announced");
}

int main(void)
{
    setenv("MBCRYPTO_LONE_AT_ONCE", "0", 1); /* every request pauses (async_ops) */
    if (!tap_start()) {
        return 1;
    }
    const int v35 = OPENSSL_VERSION_MAJOR > 3 || OpenSSL_version_num() >= 0x30500000L;
    tls_groups(v35);
    if (!v35) {
        for (size_t i = 0; i < NUM_KINDS; i++) {
            EVP_KEYMGMT *km = EVP_KEYMGMT_fetch(lib, kinds[i].name, OURS);
            EVP_KEM *kem = EVP_KEM_fetch(lib, kinds[i].name, OURS);
            check(km == NULL && kem == NULL, "%s not offered before OpenSSL 3.5", kinds[i].name);
            EVP_KEYMGMT_free(km);
            EVP_KEM_free(kem);
        }
        printf("1..%d\n", n_tests);
        return n_failed != 0;
    }
    const uint64_t kg0 = counter("ops-mlkem-keygen"), en0 = counter("ops-mlkem-encaps"),
                   de0 = counter("ops-mlkem-decaps"), xd0 = counter("ops-x25519-derive"),
                   ecdh0 = counter("ops-ecdh");
    for (size_t i = 0; i < NUM_KINDS; i++) {
        const struct kind *kd = &kinds[i];
        EVP_PKEY *k = keygen(kd, OURS, NULL);
        int bits = 0, secbits = 0, maxsize = 0;
        uint8_t buf[2432];
        const int got = k != NULL && EVP_PKEY_get_int_param(k, OSSL_PKEY_PARAM_BITS, &bits) == 1 &&
                        EVP_PKEY_get_int_param(k, OSSL_PKEY_PARAM_SECURITY_BITS, &secbits) == 1 &&
                        EVP_PKEY_get_int_param(k, OSSL_PKEY_PARAM_MAX_SIZE, &maxsize) == 1;
        check(got && strcmp(provider_of(k), "mbcrypto") == 0 && bits == 768 && secbits == 192 &&
                  (size_t)maxsize == kd->ct && raw(k, OSSL_PKEY_PARAM_PUB_KEY, buf, kd->pub) &&
                  raw(k, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, buf, kd->pub) &&
                  raw(k, OSSL_PKEY_PARAM_PRIV_KEY, buf, kd->priv),
              "%s: our key pair (bits %d, security bits %d, max size %d)", kd->name, bits, secbits,
              maxsize);
        EVP_PKEY *d = k != NULL ? EVP_PKEY_dup(k) : NULL;
        EVP_PKEY *p = k != NULL ? move(kd, k, OURS, EVP_PKEY_PUBLIC_KEY) : NULL;
        EVP_PKEY *other = keygen(kd, OURS, NULL);
        check(d != NULL && EVP_PKEY_eq(d, k) == 1 && p != NULL && EVP_PKEY_eq(p, k) == 1 &&
                  other != NULL && EVP_PKEY_eq(p, other) != 1,
              "%s: dup and match", kd->name);
        EVP_PKEY_free(other);
        EVP_PKEY_CTX *vc = k != NULL ? EVP_PKEY_CTX_new_from_pkey(lib, k, OURS) : NULL;
        check(vc != NULL && EVP_PKEY_check(vc) == 1 && EVP_PKEY_public_check(vc) == 1,
              "%s: key checks pass", kd->name);
        EVP_PKEY_CTX_free(vc);
        cross(kd, OURS, THEIRS, "ours encapsulates, default decapsulates");
        cross(kd, THEIRS, OURS, "default encapsulates, ours decapsulates");
        cross(kd, OURS, OURS, "ours both ways");
        EVP_PKEY *t = k != NULL && kd->moves ? move(kd, k, THEIRS, EVP_PKEY_KEYPAIR) : NULL;
        EVP_PKEY *back = t != NULL ? move(kd, t, OURS, EVP_PKEY_KEYPAIR) : NULL;
        if (kd->moves) {
            check(t != NULL && back != NULL && strcmp(provider_of(t), "default") == 0 &&
                      strcmp(provider_of(back), "mbcrypto") == 0 && EVP_PKEY_eq(t, k) == 1 &&
                      EVP_PKEY_eq(back, k) == 1,
                  "%s: key pair exported to the default provider and back", kd->name);
        } else {
            skip_case(kd->name, "key pair exported to the default provider and back", NO_MOVE);
        }
        if (kd->hybrid == 0) {
            pem_roundtrip(kd, k);
            uint8_t seed[64] = {1, 2, 3};
            EVP_PKEY *s = keygen(kd, OURS, seed);
            if (s != NULL) {
                pem_roundtrip(kd, s);
            }
            EVP_PKEY_free(s);
            seeded(kd);
            random_seed(kd);
        } else {
            /* ikme is ML-KEM's alone: the hybrid, as OpenSSL's, takes none. */
            uint8_t m[32] = {0}, ct[MAXCT], ss[MAXSS];
            size_t ctlen = 0, sslen = 0;
            check(k != NULL && !encaps(k, OURS, m, ct, &ctlen, ss, &sslen), "%s: ikme refused",
                  kd->name);
            uint8_t ss2[MAXSS];
            size_t sl2 = 0;
            /* Tampered hybrid ciphertext: the ML-KEM half rejected implicitly
             * (as the default provider does), the classical half still
             * agrees. */
            if (!kd->moves) {
                skip_case(kd->name, "a tampered ciphertext against the default provider", NO_MOVE);
            } else if (k != NULL && t != NULL && encaps(k, OURS, NULL, ct, &ctlen, ss, &sslen)) {
                ct[m_pub(kd) + 7] ^= 1;
                check(decaps(k, OURS, ct, ctlen, ss, &sslen) &&
                          decaps(t, THEIRS, ct, ctlen, ss2, &sl2) && memcmp(ss, ss2, 64) == 0,
                      "%s: a tampered ciphertext gives the default provider's secret", kd->name);
            } else {
                check(0, "%s: encapsulation for the tampering case", kd->name);
            }
            uint8_t big[MAXCT + 1] = {0};
            check(k != NULL && !decaps(k, OURS, big, kd->ct - 1, ss, &sslen) &&
                      !decaps(k, OURS, big, kd->ct + 1, ss, &sslen),
                  "%s: ciphertexts of %zu and %zu bytes refused", kd->name, kd->ct - 1, kd->ct + 1);
        }
        bad_keys(kd);
        async_ops(kd, k);
        EVP_PKEY_free(k);
        EVP_PKEY_free(d);
        EVP_PKEY_free(p);
        EVP_PKEY_free(t);
        EVP_PKEY_free(back);
    }
    const uint64_t kg = counter("ops-mlkem-keygen") - kg0, en = counter("ops-mlkem-encaps") - en0,
                   de = counter("ops-mlkem-decaps") - de0, xd = counter("ops-x25519-derive") - xd0;
    const uint64_t ecdh = counter("ops-ecdh") - ecdh0;
    check(kg >= 6 && en >= 10 && de >= 10 && xd >= 6 && ecdh >= 6,
          "mbcrypto counted the work (keygen %llu, encaps %llu, decaps %llu, x25519 %llu, "
          "ecdh %llu)",
          (unsigned long long)kg, (unsigned long long)en, (unsigned long long)de,
          (unsigned long long)xd, (unsigned long long)ecdh);
    printf("1..%d\n", n_tests);
    return n_failed != 0;
}
