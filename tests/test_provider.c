/*
 * test_provider.c - the mbcrypto provider (mbcrypto.so from the build tree)
 * through OpenSSL's EVP API, against the default provider in the same
 * library context: signatures made by one verify with the other (PKCS#1
 * v1.5 with and without a digest, PSS with every salt-length setting, raw),
 * AES-GCM ciphertexts and tags agree (plain AEAD and libssl's TLS 1.2 record
 * mode), keys mbcrypto does not serve go to the default provider, and bad
 * input (forged or malformed signatures, overlong data, bad PSS salts,
 * unsupported padding, a key whose primes do not match its modulus, wrong
 * tags, truncated records) gets an error, never a crash. The counters show
 * that mbcrypto ran what it should.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/provider.h>
#include <openssl/rsa.h>

#include "test_util.h"

static OSSL_LIB_CTX *lib;
static OSSL_PROVIDER *mbc, *dflt;
static EVP_PKEY *key2048, *key4096, *key1024;

#define OURS "provider=mbcrypto"
#define THEIRS "provider=default"

static uint64_t counter(const char *name)
{
    uint64_t v = 0;
    char full[64];
    snprintf(full, sizeof(full), "mbcrypto-%s", name);
    OSSL_PARAM p[] = {OSSL_PARAM_uint64(full, &v), OSSL_PARAM_END};
    assert_true(OSSL_PROVIDER_get_params(mbc, p));
    return v;
}

static EVP_PKEY *keygen(unsigned bits)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(lib, "RSA", THEIRS);
    EVP_PKEY *k = NULL;
    if (c != NULL && EVP_PKEY_keygen_init(c) > 0 && EVP_PKEY_CTX_set_rsa_keygen_bits(c, bits) > 0) {
        EVP_PKEY_keygen(c, &k);
    }
    EVP_PKEY_CTX_free(c);
    return k;
}

static int group_setup(void **state)
{
    (void)state;
    const char *dir = getenv("MBC_PROVIDER_DIR");
    setenv("MBCRYPTO_SERVE", "all", 1);
    lib = OSSL_LIB_CTX_new();
    if (dir == NULL || lib == NULL || !OSSL_PROVIDER_set_default_search_path(lib, dir) ||
        (mbc = OSSL_PROVIDER_load(lib, "mbcrypto")) == NULL ||
        (dflt = OSSL_PROVIDER_load(lib, "default")) == NULL) {
        ERR_print_errors_fp(stderr);
        return -1;
    }
    key2048 = keygen(2048);
    key4096 = keygen(4096);
    key1024 = keygen(1024);
    return key2048 != NULL && key4096 != NULL && key1024 != NULL ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    EVP_PKEY_free(key2048);
    EVP_PKEY_free(key4096);
    EVP_PKEY_free(key1024);
    OSSL_PROVIDER_unload(mbc);
    OSSL_PROVIDER_unload(dflt);
    OSSL_LIB_CTX_free(lib);
    return 0;
}

static void test_params(void **state)
{
    (void)state;
    char serve[64] = "";
    OSSL_PARAM p[] = {OSSL_PARAM_utf8_string("mbcrypto-serve", serve, sizeof(serve)),
                      OSSL_PARAM_END};
    assert_true(OSSL_PROVIDER_get_params(mbc, p));
    assert_string_equal(serve, "rsa,aes-gcm,x25519,ecdh,ecdsa");
    counter("ops-rsa-sign");
}

/* A signature setting: padding, digest (NULL: none), PSS salt length. */
struct sig_set {
    int pad;
    const char *md;
    int salt;
};

/* ctx_for: a sign or verify context of key in provider props, set up. */
static EVP_PKEY_CTX *ctx_for(EVP_PKEY *key, const char *props, int sign, const struct sig_set *s)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, key, props);
    assert_non_null(c);
    assert_int_equal(sign ? EVP_PKEY_sign_init(c) : EVP_PKEY_verify_init(c), 1);
    assert_int_equal(EVP_PKEY_CTX_set_rsa_padding(c, s->pad), 1);
    if (s->md != NULL) {
        assert_int_equal(EVP_PKEY_CTX_set_signature_md(c, EVP_get_digestbyname(s->md)), 1);
    }
    if (s->pad == RSA_PKCS1_PSS_PADDING) {
        assert_int_equal(EVP_PKEY_CTX_set_rsa_pss_saltlen(c, s->salt), 1);
    }
    return c;
}

static size_t sign(EVP_PKEY *key, const char *props, const struct sig_set *s, uint8_t *sig,
                   const uint8_t *tbs, size_t tbs_len)
{
    EVP_PKEY_CTX *c = ctx_for(key, props, 1, s);
    size_t len = 0;
    assert_int_equal(EVP_PKEY_sign(c, NULL, &len, tbs, tbs_len), 1);
    assert_int_equal(EVP_PKEY_sign(c, sig, &len, tbs, tbs_len), 1);
    EVP_PKEY_CTX_free(c);
    return len;
}

static int verify(EVP_PKEY *key, const char *props, const struct sig_set *s, const uint8_t *sig,
                  size_t sig_len, const uint8_t *tbs, size_t tbs_len)
{
    EVP_PKEY_CTX *c = ctx_for(key, props, 0, s);
    const int r = EVP_PKEY_verify(c, sig, sig_len, tbs, tbs_len);
    EVP_PKEY_CTX_free(c);
    ERR_clear_error();
    return r;
}

/* Signatures of one side verify with the other, for every setting. */
static void test_rsa_cross(void **state)
{
    (void)state;
    static const struct sig_set sets[] = {
        {RSA_PKCS1_PADDING, "SHA256", 0},
        {RSA_PKCS1_PADDING, "SHA384", 0},
        {RSA_PKCS1_PADDING, "SHA512", 0},
        {RSA_PKCS1_PADDING, "SHA1", 0},
        {RSA_PKCS1_PADDING, "SHA3-256", 0},
        {RSA_PKCS1_PADDING, NULL, 0},
        {RSA_PKCS1_PSS_PADDING, "SHA256", RSA_PSS_SALTLEN_DIGEST},
        {RSA_PKCS1_PSS_PADDING, "SHA384", RSA_PSS_SALTLEN_MAX},
        {RSA_PKCS1_PSS_PADDING, "SHA256", 0},
        {RSA_PKCS1_PSS_PADDING, "SHA512", 20},
    };
    EVP_PKEY *keys[] = {key2048, key4096};
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
            const struct sig_set *s = &sets[i];
            uint8_t tbs[64], sig[512];
            const size_t tbs_len =
                s->md != NULL ? (size_t)EVP_MD_get_size(EVP_get_digestbyname(s->md)) : 36;
            mbt_rand_bytes(tbs, tbs_len);
            for (int ours_signs = 0; ours_signs < 2; ours_signs++) {
                const uint64_t signs = counter("ops-rsa-sign"),
                               verifies = counter("ops-rsa-verify");
                const size_t len = sign(keys[k], ours_signs ? OURS : THEIRS, s, sig, tbs, tbs_len);
                assert_int_equal(len, (size_t)EVP_PKEY_get_size(keys[k]));
                /* Verifiers use the salt-recovering setting for PSS. */
                struct sig_set v = *s;
                if (v.pad == RSA_PKCS1_PSS_PADDING) {
                    v.salt = RSA_PSS_SALTLEN_AUTO;
                }
                const char *other = ours_signs ? THEIRS : OURS;
                assert_int_equal(verify(keys[k], other, &v, sig, len, tbs, tbs_len), 1);
                assert_int_equal(verify(keys[k], other, s, sig, len, tbs, tbs_len), 1);
                assert_int_equal(counter("ops-rsa-sign"), signs + (ours_signs ? 1 : 0));
                assert_int_equal(counter("ops-rsa-verify"), verifies + (ours_signs ? 0 : 2));
                /* A flipped bit fails on both sides. */
                sig[len / 2] ^= 0x10;
                assert_int_not_equal(verify(keys[k], OURS, &v, sig, len, tbs, tbs_len), 1);
                assert_int_not_equal(verify(keys[k], THEIRS, &v, sig, len, tbs, tbs_len), 1);
            }
        }
    }
}

/* EVP_DigestSign with ours, EVP_DigestVerify with the default provider, as
 * libssl and X509_verify use them. */
static void test_rsa_digest_sign(void **state)
{
    (void)state;
    const uint8_t msg[] = "the message of a TLS CertificateVerify";
    for (int pss = 0; pss < 2; pss++) {
        EVP_MD_CTX *m = EVP_MD_CTX_new();
        EVP_PKEY_CTX *pc = NULL;
        uint8_t sig[256];
        size_t len = sizeof(sig);
        assert_int_equal(EVP_DigestSignInit_ex(m, &pc, "SHA256", lib, OURS, key2048, NULL), 1);
        if (pss) {
            assert_int_equal(EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PSS_PADDING), 1);
            assert_int_equal(EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, RSA_PSS_SALTLEN_DIGEST), 1);
        }
        assert_int_equal(EVP_DigestSign(m, sig, &len, msg, sizeof(msg)), 1);
        EVP_MD_CTX_free(m);
        m = EVP_MD_CTX_new();
        assert_int_equal(EVP_DigestVerifyInit_ex(m, &pc, "SHA256", lib, THEIRS, key2048, NULL), 1);
        if (pss) {
            assert_int_equal(EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PSS_PADDING), 1);
        }
        assert_int_equal(EVP_DigestVerify(m, sig, len, msg, sizeof(msg)), 1);
        EVP_MD_CTX_free(m);
    }
}

/* Bad input: errors, never a crash; OpenSSL's error queue says why. */
static void test_rsa_bad_input(void **state)
{
    (void)state;
    const struct sig_set v15 = {RSA_PKCS1_PADDING, "SHA256", 0};
    const struct sig_set raw = {RSA_PKCS1_PADDING, NULL, 0};
    uint8_t tbs[256], sig[512];
    mbt_rand_bytes(tbs, sizeof(tbs));
    /* Signatures of the wrong length, all ones (>= n), all zeros. */
    memset(sig, 0xFF, sizeof(sig));
    assert_int_not_equal(verify(key2048, OURS, &v15, sig, 256, tbs, 32), 1);
    assert_int_not_equal(verify(key2048, OURS, &v15, sig, 255, tbs, 32), 1);
    assert_int_not_equal(verify(key2048, OURS, &v15, sig, 512, tbs, 32), 1);
    memset(sig, 0, sizeof(sig));
    assert_int_not_equal(verify(key2048, OURS, &v15, sig, 256, tbs, 32), 1);
    /* A digest of the wrong length; raw data too long for PKCS#1. */
    EVP_PKEY_CTX *c = ctx_for(key2048, OURS, 1, &v15);
    size_t len = sizeof(sig);
    assert_int_not_equal(EVP_PKEY_sign(c, sig, &len, tbs, 31), 1);
    assert_int_not_equal(ERR_peek_error(), 0);
    ERR_clear_error();
    EVP_PKEY_CTX_free(c);
    c = ctx_for(key2048, OURS, 1, &raw);
    len = sizeof(sig);
    assert_int_not_equal(EVP_PKEY_sign(c, sig, &len, tbs, 256 - 10), 1);
    ERR_clear_error();
    /* A signature buffer too small. */
    len = 100;
    assert_int_not_equal(EVP_PKEY_sign(c, sig, &len, tbs, 20), 1);
    ERR_clear_error();
    /* Unsupported padding (X9.31); OAEP is not a signature padding. */
    assert_int_not_equal(EVP_PKEY_CTX_set_rsa_padding(c, RSA_X931_PADDING), 1);
    assert_int_not_equal(EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING), 1);
    ERR_clear_error();
    EVP_PKEY_CTX_free(c);
    /* A PSS salt that does not fit a 2048-bit key with SHA-512. */
    const struct sig_set pss = {RSA_PKCS1_PSS_PADDING, "SHA512", 200};
    c = ctx_for(key2048, OURS, 1, &pss);
    len = sizeof(sig);
    assert_int_not_equal(EVP_PKEY_sign(c, sig, &len, tbs, 64), 1);
    ERR_clear_error();
    EVP_PKEY_CTX_free(c);
}

/* Keys mbcrypto does not serve are signed by the default provider: a
 * 1024-bit key, and a key whose p * q is not n (refused at import). */
static void test_rsa_fallback(void **state)
{
    (void)state;
    const struct sig_set v15 = {RSA_PKCS1_PADDING, "SHA256", 0};
    uint8_t tbs[32], sig[512];
    mbt_rand_bytes(tbs, sizeof(tbs));
    uint64_t refused = counter("keys-rsa-refused"), signs = counter("ops-rsa-sign");
    /* "?": mbcrypto preferred, as in the README's setup: the key falls back
     * to its own provider when our key management refuses it. */
    size_t len = sign(key1024, "?" OURS, &v15, sig, tbs, sizeof(tbs));
    assert_int_equal(len, 128);
    assert_int_equal(verify(key1024, THEIRS, &v15, sig, len, tbs, sizeof(tbs)), 1);
    assert_true(counter("keys-rsa-refused") > refused);
    assert_int_equal(counter("ops-rsa-sign"), signs);
    /* A malformed key: the first prime replaced by another odd number. */
    BIGNUM *bn[8] = {NULL};
    static const char *const names[8] = {"n",
                                         "e",
                                         "d",
                                         "rsa-factor1",
                                         "rsa-factor2",
                                         "rsa-exponent1",
                                         "rsa-exponent2",
                                         "rsa-coefficient1"};
    for (int i = 0; i < 8; i++) {
        assert_true(EVP_PKEY_get_bn_param(key2048, names[i], &bn[i]));
    }
    BN_add_word(bn[3], 2);
    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    for (int i = 0; i < 8; i++) {
        assert_true(OSSL_PARAM_BLD_push_BN(b, names[i], bn[i]));
    }
    OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(b);
    EVP_PKEY_CTX *fc = EVP_PKEY_CTX_new_from_name(lib, "RSA", THEIRS);
    EVP_PKEY *bad = NULL;
    assert_int_equal(EVP_PKEY_fromdata_init(fc), 1);
    assert_int_equal(EVP_PKEY_fromdata(fc, &bad, EVP_PKEY_KEYPAIR, params), 1);
    refused = counter("keys-rsa-refused");
    signs = counter("ops-rsa-sign");
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, bad, "?" OURS);
    /* Whatever the default provider makes of it, mbcrypto stays out. */
    if (EVP_PKEY_sign_init(c) == 1) {
        len = sizeof(sig);
        EVP_PKEY_sign(c, sig, &len, tbs, sizeof(tbs));
    }
    ERR_clear_error();
    assert_true(counter("keys-rsa-refused") > refused);
    assert_int_equal(counter("ops-rsa-sign"), signs);
    EVP_PKEY_CTX_free(c);
    EVP_PKEY_CTX_free(fc);
    EVP_PKEY_free(bad);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(b);
    for (int i = 0; i < 8; i++) {
        BN_clear_free(bn[i]);
    }
}

/* ------------------------------------------------------------- AES-GCM */

static EVP_CIPHER *cipher(size_t key_len, const char *props)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(lib, key_len == 16 ? "AES-128-GCM" : "AES-256-GCM", props);
    assert_non_null(c);
    return c;
}

/* seal or open one message (AAD then data in two pieces); returns the
 * result of final. */
static int aead(EVP_CIPHER *ci, int enc, const uint8_t *key, const uint8_t *iv, size_t iv_len,
                const uint8_t *aad, size_t aad_len, uint8_t *out, const uint8_t *in, size_t len,
                uint8_t *tag, size_t tag_len)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int l, ok = EVP_CipherInit_ex2(c, ci, NULL, NULL, enc, NULL) &&
                EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, (int)iv_len, NULL) &&
                EVP_CipherInit_ex2(c, NULL, key, iv, enc, NULL);
    if (ok && !enc) {
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, tag);
    }
    ok = ok && EVP_CipherUpdate(c, NULL, &l, aad, (int)aad_len) &&
         EVP_CipherUpdate(c, out, &l, in, (int)(len / 3)) &&
         EVP_CipherUpdate(c, out + len / 3, &l, in + len / 3, (int)(len - len / 3));
    assert_true(ok);
    ok = EVP_CipherFinal_ex(c, out + len, &l);
    if (ok && enc) {
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)tag_len, tag);
    }
    EVP_CIPHER_CTX_free(c);
    ERR_clear_error();
    return ok;
}

static void test_gcm_cross(void **state)
{
    (void)state;
    static const size_t ivs[] = {12, 8, 60};
    for (size_t key_len = 16; key_len <= 32; key_len += 16) {
        EVP_CIPHER *ours = cipher(key_len, OURS), *theirs = cipher(key_len, THEIRS);
        for (size_t v = 0; v < 3; v++) {
            uint8_t key[32], iv[60], aad[29], pt[1500], ct[1500], ct2[1500], back[1500];
            uint8_t tag[16], tag2[16];
            mbt_rand_bytes(key, sizeof(key));
            mbt_rand_bytes(iv, sizeof(iv));
            mbt_rand_bytes(aad, sizeof(aad));
            mbt_rand_bytes(pt, sizeof(pt));
            const uint64_t enc0 = counter("ops-aes-gcm-encrypt");
            assert_true(
                aead(ours, 1, key, iv, ivs[v], aad, sizeof(aad), ct, pt, sizeof(pt), tag, 16));
            assert_true(
                aead(theirs, 1, key, iv, ivs[v], aad, sizeof(aad), ct2, pt, sizeof(pt), tag2, 16));
            assert_int_equal(counter("ops-aes-gcm-encrypt"), enc0 + 1);
            assert_memory_equal(ct, ct2, sizeof(ct));
            assert_memory_equal(tag, tag2, 16);
            assert_true(
                aead(ours, 0, key, iv, ivs[v], aad, sizeof(aad), back, ct, sizeof(ct), tag, 16));
            assert_memory_equal(back, pt, sizeof(pt));
            /* A 12-byte tag; then a wrong tag, a wrong AAD. */
            assert_true(
                aead(ours, 0, key, iv, ivs[v], aad, sizeof(aad), back, ct, sizeof(ct), tag, 12));
            tag[3] ^= 1;
            assert_false(
                aead(ours, 0, key, iv, ivs[v], aad, sizeof(aad), back, ct, sizeof(ct), tag, 16));
            tag[3] ^= 1;
            assert_false(aead(ours, 0, key, iv, ivs[v], aad, sizeof(aad) - 1, back, ct, sizeof(ct),
                              tag, 16));
        }
        EVP_CIPHER_free(ours);
        EVP_CIPHER_free(theirs);
    }
}

/* tls_record: libssl's TLS 1.2 use of a GCM cipher on one record, in
 * place: fixed IV, the 13-byte AAD (its length field counting the explicit
 * IV, and the tag when opening), then EVP_Cipher (libssl's legacy path) or,
 * with by_update, EVP_CipherUpdate (libssl 3.x with provided ciphers).
 * Returns EVP_Cipher's result or the update's output length, -1 on error. */
static int by_update;
static int tls_record(EVP_CIPHER *ci, int enc, const uint8_t *key, const uint8_t *fixed,
                      uint8_t *rec, size_t len, size_t aad_len_field)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    uint8_t aad[13] = {0, 0, 0, 0, 0, 0, 0, 1, 23, 3, 3};
    aad[11] = (uint8_t)(aad_len_field >> 8);
    aad[12] = (uint8_t)aad_len_field;
    int r = -1;
    if (EVP_CipherInit_ex(c, ci, NULL, key, NULL, enc) &&
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IV_FIXED, 4, (void *)fixed) &&
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) == 16) {
        int outl = -1;
        r = by_update ? (EVP_CipherUpdate(c, rec, &outl, rec, (int)len) ? outl : -1)
                      : EVP_Cipher(c, rec, rec, (unsigned)len);
    }
    EVP_CIPHER_CTX_free(c);
    ERR_clear_error();
    return r;
}

static void test_gcm_tls12(void **state)
{
    (void)state;
    for (int k = 0; k < 4; k++) {
        const size_t key_len = k & 1 ? 32 : 16;
        by_update = k >= 2;
        EVP_CIPHER *ours = cipher(key_len, OURS), *theirs = cipher(key_len, THEIRS);
        uint8_t key[32], fixed[4], pt[1000], rec[8 + 1000 + 16], copy[sizeof(rec)];
        const size_t n = sizeof(pt), len = sizeof(rec);
        mbt_rand_bytes(key, sizeof(key));
        mbt_rand_bytes(fixed, sizeof(fixed));
        mbt_rand_bytes(pt, sizeof(pt));
        for (int ours_seals = 0; ours_seals < 2; ours_seals++) {
            memcpy(rec + 8, pt, n);
            assert_int_equal(tls_record(ours_seals ? ours : theirs, 1, key, fixed, rec, len, n + 8),
                             (int)len);
            EVP_CIPHER *opener = ours_seals ? theirs : ours;
            memcpy(copy, rec, len);
            /* Opened by update, a record gives its plaintext's length. */
            assert_int_equal(tls_record(opener, 0, key, fixed, copy, len, len),
                             (int)(by_update ? n : len));
            assert_memory_equal(copy + 8, pt, n);
            /* Ours refuses a forged record, a truncated one, a wrong length. */
            memcpy(copy, rec, len);
            copy[len - 1] ^= 1;
            assert_true(tls_record(ours, 0, key, fixed, copy, len, len) < 0);
            memcpy(copy, rec, len);
            assert_true(tls_record(ours, 0, key, fixed, copy, 23, 23) < 0);
            assert_true(tls_record(ours, 0, key, fixed, copy, len - 1, len - 1) < 0);
            assert_true(tls_record(ours, 0, key, fixed, copy, len, len - 1) < 0);
        }
        EVP_CIPHER_free(ours);
        EVP_CIPHER_free(theirs);
    }
}

/* ---------------------------------------------------- key agreement */

/* pkey_gen: a key pair (param_only: domain parameters alone) of type (and
 * group, when not NULL) made by the provider of props. */
static EVP_PKEY *pkey_gen(const char *type, const char *group, const char *props, int param_only)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(lib, type, props);
    EVP_PKEY *k = NULL;
    assert_non_null(c);
    assert_int_equal(param_only ? EVP_PKEY_paramgen_init(c) : EVP_PKEY_keygen_init(c), 1);
    if (group != NULL) {
        assert_int_equal(EVP_PKEY_CTX_set_group_name(c, group), 1);
    }
    assert_int_equal(param_only ? EVP_PKEY_paramgen(c, &k) : EVP_PKEY_keygen(c, &k), 1);
    EVP_PKEY_CTX_free(c);
    return k;
}

/* is_ours: 1 if key lives in mbcrypto's key management. */
static int is_ours(const EVP_PKEY *key)
{
    const OSSL_PROVIDER *p = EVP_PKEY_get0_provider(key);
    return p != NULL && strcmp(OSSL_PROVIDER_get0_name(p), "mbcrypto") == 0;
}

/* derive_ctx: a key exchange context of key and peer in provider props
 * (NULL when a step fails: the error is the caller's to expect). */
static EVP_PKEY_CTX *derive_ctx(EVP_PKEY *key, EVP_PKEY *peer, const char *props)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, key, props);
    assert_non_null(c);
    if (EVP_PKEY_derive_init(c) != 1 || EVP_PKEY_derive_set_peer(c, peer) != 1) {
        EVP_PKEY_CTX_free(c);
        ERR_clear_error();
        return NULL;
    }
    return c;
}

/* derive: the shared secret of key and peer in provider props into out (64
 * bytes); its length, or -1 on failure. */
static int derive(EVP_PKEY *key, EVP_PKEY *peer, const char *props, uint8_t out[64])
{
    EVP_PKEY_CTX *c = derive_ctx(key, peer, props);
    size_t len = 0;
    int r = -1;
    if (c != NULL && EVP_PKEY_derive(c, NULL, &len) == 1 && len <= 64 &&
        EVP_PKEY_derive(c, out, &len) == 1) {
        r = (int)len;
    }
    EVP_PKEY_CTX_free(c);
    ERR_clear_error();
    return r;
}

/* agree: keys a (ours) and b (the default provider's) agree, whichever
 * provider derives, on the secret of want_len bytes; our derivations are
 * counted in ctr. */
static void agree(EVP_PKEY *a, EVP_PKEY *b, const char *ctr, int want_len)
{
    uint8_t s[4][64];
    const uint64_t n = counter(ctr);
    assert_int_equal(derive(a, b, OURS, s[0]), want_len);
    assert_int_equal(counter(ctr), n + 1);
    assert_int_equal(derive(b, a, THEIRS, s[1]), want_len);
    assert_int_equal(derive(a, b, THEIRS, s[2]), want_len); /* a exported */
    assert_int_equal(derive(b, a, OURS, s[3]), want_len);   /* b imported */
    assert_int_equal(counter(ctr), n + 2);
    for (int i = 1; i < 4; i++) {
        assert_memory_equal(s[0], s[i], (size_t)want_len);
    }
}

/* raw_key: an X25519 key from raw bytes in provider props. */
static EVP_PKEY *raw_key(const char *props, int priv, const uint8_t *b, size_t len)
{
    return priv ? EVP_PKEY_new_raw_private_key_ex(lib, "X25519", props, b, len)
                : EVP_PKEY_new_raw_public_key_ex(lib, "X25519", props, b, len);
}

static void test_x25519_cross(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        const uint64_t gens = counter("ops-x25519-keygen");
        EVP_PKEY *a = pkey_gen("X25519", NULL, OURS, 0), *b = pkey_gen("X25519", NULL, THEIRS, 0);
        assert_int_equal(counter("ops-x25519-keygen"), gens + 1);
        assert_true(is_ours(a));
        assert_false(is_ours(b));
        assert_int_equal(EVP_PKEY_get_bits(a), 253);
        assert_int_equal(EVP_PKEY_get_security_bits(a), 128);
        assert_int_equal(EVP_PKEY_get_size(a), 32);
        agree(a, b, "ops-x25519-derive", 32);
        /* Raw keys: ours made from a's private key has a's public key, as
         * the default provider's does; the keys match. */
        uint8_t priv[32], pub[32], pub2[32], pub3[32];
        size_t len = 32;
        assert_int_equal(EVP_PKEY_get_raw_private_key(a, priv, &len), 1);
        assert_int_equal(EVP_PKEY_get_raw_public_key(a, pub, &len), 1);
        EVP_PKEY *ra = raw_key(OURS, 1, priv, 32), *ta = raw_key(THEIRS, 1, priv, 32);
        assert_non_null(ra);
        assert_true(is_ours(ra));
        assert_int_equal(EVP_PKEY_get_raw_public_key(ra, pub2, &len), 1);
        assert_int_equal(EVP_PKEY_get_raw_public_key(ta, pub3, &len), 1);
        assert_memory_equal(pub, pub2, 32);
        assert_memory_equal(pub, pub3, 32);
        assert_int_equal(EVP_PKEY_eq(a, ta), 1);
        assert_int_equal(EVP_PKEY_eq(a, b), 0);
        /* libssl's peer key: parameters generated by us, then the peer's
         * encoded public key set on them. */
        uint8_t *enc = NULL;
        assert_int_equal(EVP_PKEY_get1_encoded_public_key(b, &enc), 32);
        EVP_PKEY *peer = pkey_gen("X25519", "x25519", OURS, 1);
        assert_true(is_ours(peer));
        assert_int_equal(EVP_PKEY_set1_encoded_public_key(peer, enc, 32), 1);
        uint8_t s1[64], s2[64];
        assert_int_equal(derive(ra, peer, OURS, s1), 32);
        assert_int_equal(derive(b, ta, THEIRS, s2), 32);
        assert_memory_equal(s1, s2, 32);
        OPENSSL_free(enc);
        assert_int_equal(EVP_PKEY_get1_encoded_public_key(a, &enc), 32);
        assert_memory_equal(enc, pub, 32);
        OPENSSL_free(enc);
        EVP_PKEY_free(peer);
        EVP_PKEY_free(ra);
        EVP_PKEY_free(ta);
        EVP_PKEY_free(a);
        EVP_PKEY_free(b);
    }
}

/* Low-order peer points give the all-zero secret: refused, as OpenSSL
 * does; a short buffer and a missing peer are errors. */
static void test_x25519_bad_peer(void **state)
{
    (void)state;
    uint8_t low[4][32] = {{0}, {1}};
    /* p - 1 (order 2) and p (reduced: 0). */
    memset(low[2], 0xFF, 32);
    low[2][0] = 0xEC;
    low[2][31] = 0x7F;
    memcpy(low[3], low[2], 32);
    low[3][0] = 0xED;
    EVP_PKEY *a = pkey_gen("X25519", NULL, OURS, 0);
    for (int i = 0; i < 4; i++) {
        EVP_PKEY *peer = raw_key(OURS, 0, low[i], 32);
        assert_non_null(peer);
        uint8_t s[64];
        assert_int_equal(derive(a, peer, OURS, s), -1);
        assert_int_equal(derive(a, peer, THEIRS, s), -1);
        EVP_PKEY_free(peer);
    }
    EVP_PKEY *b = pkey_gen("X25519", NULL, THEIRS, 0);
    EVP_PKEY_CTX *c = derive_ctx(a, b, OURS);
    uint8_t s[32];
    size_t len = 31;
    assert_non_null(c);
    assert_int_not_equal(EVP_PKEY_derive(c, s, &len), 1);
    ERR_clear_error();
    EVP_PKEY_CTX_free(c);
    c = EVP_PKEY_CTX_new_from_pkey(lib, a, OURS);
    len = 32;
    assert_int_equal(EVP_PKEY_derive_init(c), 1);
    assert_int_not_equal(EVP_PKEY_derive(c, s, &len), 1);
    ERR_clear_error();
    EVP_PKEY_CTX_free(c);
    /* A public key alone cannot derive; a raw key of the wrong length is
     * refused. */
    uint8_t pub[32];
    len = 32;
    assert_int_equal(EVP_PKEY_get_raw_public_key(a, pub, &len), 1);
    EVP_PKEY *pa = raw_key(OURS, 0, pub, 32);
    c = EVP_PKEY_CTX_new_from_pkey(lib, pa, OURS);
    assert_int_not_equal(EVP_PKEY_derive_init(c), 1);
    ERR_clear_error();
    EVP_PKEY_CTX_free(c);
    assert_null(raw_key(OURS, 0, pub, 31));
    ERR_clear_error();
    EVP_PKEY_free(pa);
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
}

/* ------------------------------------------------------- ASYNC batches */

#define NJOBS 8

/* run_jobs: fn(arg[i]) in NJOBS ASYNC jobs, each with its own wait
 * context, resumed round after round (at most 100) until all finish, as an
 * event loop does. Returns how many paused at their start. */
static int run_jobs(int (*fn)(void *), void *const arg[NJOBS])
{
    ASYNC_JOB *job[NJOBS] = {NULL};
    ASYNC_WAIT_CTX *ctx[NJOBS];
    int done[NJOBS] = {0}, paused = 0, left = NJOBS, ret;
    for (int i = 0; i < NJOBS; i++) {
        assert_non_null(ctx[i] = ASYNC_WAIT_CTX_new());
    }
    for (int round = 0; round < 100 && left > 0; round++) {
        for (int i = 0; i < NJOBS; i++) {
            if (done[i]) {
                continue;
            }
            const int r =
                ASYNC_start_job(&job[i], ctx[i], &ret, fn, (void *)&arg[i], sizeof(arg[i]));
            assert_true(r == ASYNC_PAUSE || r == ASYNC_FINISH);
            if (r == ASYNC_FINISH) {
                assert_int_equal(ret, 1);
                done[i] = 1;
                left--;
            } else if (round == 0) {
                paused++;
            }
        }
    }
    assert_int_equal(left, 0);
    for (int i = 0; i < NJOBS; i++) {
        ASYNC_WAIT_CTX_free(ctx[i]);
    }
    return paused;
}

/* One derivation in a job: its context and output. */
struct derive_job {
    EVP_PKEY_CTX *c;
    uint8_t out[64];
    size_t len;
};

static int derive_in_job(void *arg)
{
    struct derive_job *d = *(struct derive_job **)arg;
    d->len = sizeof(d->out);
    return EVP_PKEY_derive(d->c, d->out, &d->len);
}

/* async_derive: NJOBS derivations of our keys a[i] with the default
 * provider's b[i] in ASYNC jobs: they pause, run as one batch and give the
 * secrets the default provider computes. */
static void async_derive(EVP_PKEY *const a[NJOBS], EVP_PKEY *const b[NJOBS], const char *ctr)
{
    struct derive_job d[NJOBS];
    void *arg[NJOBS];
    for (int i = 0; i < NJOBS; i++) {
        assert_non_null(d[i].c = derive_ctx(a[i], b[i], OURS));
        arg[i] = &d[i];
    }
    const uint64_t n = counter(ctr), batched = counter("async-batched");
    assert_int_equal(run_jobs(derive_in_job, arg), NJOBS - 1);
    assert_int_equal(counter(ctr), n + NJOBS);
    assert_true(counter("async-batched") >= batched + NJOBS);
    for (int i = 0; i < NJOBS; i++) {
        uint8_t want[64];
        assert_int_equal(derive(b[i], a[i], THEIRS, want), (int)d[i].len);
        assert_memory_equal(d[i].out, want, d[i].len);
        EVP_PKEY_CTX_free(d[i].c);
    }
}

/* One key generation in a job. */
struct gen_job {
    EVP_PKEY_CTX *c;
    EVP_PKEY *key;
};

static int gen_in_job(void *arg)
{
    struct gen_job *g = *(struct gen_job **)arg;
    return EVP_PKEY_keygen(g->c, &g->key);
}

/* async_gen: NJOBS keys of type (group) generated by us in ASYNC jobs, in
 * one batch, into key[]. */
static void async_gen(const char *type, const char *group, EVP_PKEY *key[NJOBS], const char *ctr)
{
    struct gen_job g[NJOBS];
    void *arg[NJOBS];
    for (int i = 0; i < NJOBS; i++) {
        g[i].key = NULL;
        assert_non_null(g[i].c = EVP_PKEY_CTX_new_from_name(lib, type, OURS));
        assert_int_equal(EVP_PKEY_keygen_init(g[i].c), 1);
        if (group != NULL) {
            assert_int_equal(EVP_PKEY_CTX_set_group_name(g[i].c, group), 1);
        }
        arg[i] = &g[i];
    }
    const uint64_t n = counter(ctr), batched = counter("async-batched");
    assert_int_equal(run_jobs(gen_in_job, arg), NJOBS - 1);
    assert_int_equal(counter(ctr), n + NJOBS);
    assert_true(counter("async-batched") >= batched + NJOBS);
    for (int i = 0; i < NJOBS; i++) {
        assert_non_null(key[i] = g[i].key);
        assert_true(is_ours(key[i]));
        EVP_PKEY_CTX_free(g[i].c);
    }
}

static void test_x25519_async(void **state)
{
    (void)state;
    EVP_PKEY *a[NJOBS], *b[NJOBS];
    async_gen("X25519", NULL, a, "ops-x25519-keygen");
    for (int i = 0; i < NJOBS; i++) {
        b[i] = pkey_gen("X25519", NULL, THEIRS, 0);
        /* Each generated public key is its private key's. */
        uint8_t priv[32], pub[32], pub2[32];
        size_t len = 32;
        assert_int_equal(EVP_PKEY_get_raw_private_key(a[i], priv, &len), 1);
        assert_int_equal(EVP_PKEY_get_raw_public_key(a[i], pub, &len), 1);
        EVP_PKEY *t = raw_key(THEIRS, 1, priv, 32);
        assert_int_equal(EVP_PKEY_get_raw_public_key(t, pub2, &len), 1);
        assert_memory_equal(pub, pub2, 32);
        EVP_PKEY_free(t);
    }
    async_derive(a, b, "ops-x25519-derive");
    for (int i = 0; i < NJOBS; i++) {
        EVP_PKEY_free(a[i]);
        EVP_PKEY_free(b[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),          cmocka_unit_test(test_rsa_cross),
        cmocka_unit_test(test_rsa_digest_sign), cmocka_unit_test(test_rsa_bad_input),
        cmocka_unit_test(test_rsa_fallback),    cmocka_unit_test(test_gcm_cross),
        cmocka_unit_test(test_gcm_tls12),       cmocka_unit_test(test_x25519_cross),
        cmocka_unit_test(test_x25519_bad_peer), cmocka_unit_test(test_x25519_async),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
