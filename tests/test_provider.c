/*
 * test_provider.c - the mbcrypto provider (mbcrypto.so from the build tree)
 * through OpenSSL's EVP API, against the default provider in the same
 * library context: signatures made by one verify with the other (PKCS#1
 * v1.5 with and without a digest, PSS with every salt-length setting, raw),
 * AES-GCM ciphertexts and tags agree (plain AEAD and libssl's TLS 1.2 record
 * mode), keys mbcrypto does not serve go to the default provider, and bad
 * input (forged or malformed signatures, overlong data, bad PSS salts,
 * unsupported padding, a key whose primes do not match its modulus, wrong
 * tags, truncated records) gets an error, never a crash. X25519 and ECDH
 * (P-256, P-384) secrets and ECDSA signatures agree with the default
 * provider's, with our keys and its peers and the other way round; low-order
 * X25519 points and bad EC points are refused; curves mbcrypto does not have
 * (P-521) work through the default provider; batches of 8 key generations,
 * derivations and signatures in ASYNC jobs give the same results. The
 * counters show that mbcrypto ran what it should.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/provider.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>

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
    assert_string_equal(serve, "rsa,aes-gcm,x25519,ecdh,ecdsa,mlkem");
    counter("ops-rsa-sign");
}

/* queued_text_has: some error queued carries data containing s; clears. */
static int queued_text_has(const char *s)
{
    const char *data;
    int flags, found = 0;
    while (ERR_get_error_all(NULL, NULL, NULL, &data, &flags) != 0) {
        found |= (flags & ERR_TXT_STRING) != 0 && strstr(data, s) != NULL;
    }
    return found;
}

/* Issue 22, item 9: a serve setting that does not parse ("none ", "bogus",
 * empty items, an empty string), in MBCRYPTO_SERVE or in the provider's
 * openssl.cnf section, makes loading fail with an error that says which
 * setting is wrong (and nothing of ours is served: OpenSSL's own code
 * runs); auto, all, none and lists load. */

/* tmp_file: a new file named after stem in $TMPDIR (or the system's
 * temporary directory), its name in path; the open fd, or -1. */
static int tmp_file(char *path, size_t size, const char *stem)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == '\0') {
        dir = P_tmpdir;
    }
    const int len = snprintf(path, size, "%s/%s-XXXXXX", dir, stem);
    return len > 0 && (size_t)len < size ? mkstemp(path) : -1;
}
/* max_wait_of: the max wait p reports. */
static uint32_t max_wait_of(OSSL_PROVIDER *p)
{
    uint32_t us = UINT32_MAX;
    OSSL_PARAM q[] = {OSSL_PARAM_uint32("mbcrypto-max-wait-us", &us), OSSL_PARAM_END};
    assert_true(OSSL_PROVIDER_get_params(p, q));
    return us;
}
/* cnf_load: an openssl.cnf whose mbcrypto section has line, loaded into a
 * new library context; whether mbcrypto is then available. OpenSSL drops
 * the errors of a provider that openssl.cnf fails to activate (load_config
 * succeeds): what the provider wrote on stderr is in err (size n). With us,
 * the provider's max wait is read there too. */
static int cnf_load(const char *line, char *err, size_t n, uint32_t *us)
{
    char path[4096], log[4096];
    const int fd = tmp_file(path, sizeof(path), "mbc-cnf");
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f,
            "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n"
            "[provider_sect]\nmbcrypto = mbcrypto_sect\n[mbcrypto_sect]\n"
            "module = %s/mbcrypto.so\nactivate = 1\n%s\n",
            getenv("MBC_PROVIDER_DIR"), line);
    fclose(f);
    OSSL_LIB_CTX *l2 = OSSL_LIB_CTX_new();
    assert_non_null(l2);
    const int lfd = tmp_file(log, sizeof(log), "mbc-cnf-log"), saved = dup(2);
    assert_true(lfd >= 0 && saved >= 0 && dup2(lfd, 2) == 2);
    ERR_clear_error();
    OSSL_LIB_CTX_load_config(l2, path);
    assert_true(dup2(saved, 2) == 2);
    close(saved);
    const int avail = OSSL_PROVIDER_available(l2, "mbcrypto");
    const ssize_t got = pread(lfd, err, n - 1, 0);
    assert_true(got >= 0);
    err[got] = '\0';
    close(lfd);
    unlink(log);
    if (avail && us != NULL) {
        OSSL_PROVIDER *p = OSSL_PROVIDER_load(l2, "mbcrypto");
        assert_non_null(p);
        *us = max_wait_of(p);
        OSSL_PROVIDER_unload(p);
    }
    ERR_clear_error();
    OSSL_LIB_CTX_free(l2);
    unlink(path);
    return avail;
}

static void test_serve_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {"none ", "bogus", "",    "rsa,,ecdsa",
                                      "rsa,",  " rsa",  "RSA", "rsa, ecdsa"};
    static const char *const good[] = {"auto", "all", "none", "rsa,ecdsa", "aes-gcm"};
    const char *dir = getenv("MBC_PROVIDER_DIR");
    OSSL_LIB_CTX *l2 = OSSL_LIB_CTX_new();
    assert_non_null(l2);
    assert_true(OSSL_PROVIDER_set_default_search_path(l2, dir));
    ERR_clear_error();
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv("MBCRYPTO_SERVE", bad[i], 1);
        assert_null(OSSL_PROVIDER_load(l2, "mbcrypto"));
        assert_true(queued_text_has("MBCRYPTO_SERVE"));
    }
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        setenv("MBCRYPTO_SERVE", good[i], 1);
        OSSL_PROVIDER *p = OSSL_PROVIDER_load(l2, "mbcrypto");
        assert_non_null(p);
        OSSL_PROVIDER_unload(p);
    }
    setenv("MBCRYPTO_SERVE", "all", 1);
    OSSL_LIB_CTX_free(l2);
    /* The "serve" key of openssl.cnf (MBCRYPTO_SERVE unset). */
    unsetenv("MBCRYPTO_SERVE");
    char line[512];
    assert_false(cnf_load("serve = rsa,,ecdsa", line, sizeof(line), NULL));
    assert_non_null(strstr(line, "mbcrypto: the serve setting \"rsa,,ecdsa\""));
    assert_true(cnf_load("serve = rsa,ecdsa", line, sizeof(line), NULL));
    assert_null(strstr(line, "mbcrypto:"));
    setenv("MBCRYPTO_SERVE", "all", 1);
}

/* The max wait of async requests: MBCRYPTO_MAX_WAIT_US or the "max-wait-us"
 * key, digits only, 0..100000; anything else fails the loading with an error
 * naming the setting; the value in force is the gettable
 * "mbcrypto-max-wait-us". Ends with the max wait back at 0 (the provider's
 * state is the process's: the other tests' async jobs must not wait). */
static void test_max_wait_setting(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "-1", "100001", "1e3", " 5", "5 ", "abc", "99999999999"};
    OSSL_LIB_CTX *l2 = OSSL_LIB_CTX_new();
    assert_non_null(l2);
    assert_true(OSSL_PROVIDER_set_default_search_path(l2, getenv("MBC_PROVIDER_DIR")));
    ERR_clear_error();
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv("MBCRYPTO_MAX_WAIT_US", bad[i], 1);
        assert_null(OSSL_PROVIDER_load(l2, "mbcrypto"));
        assert_true(queued_text_has("MBCRYPTO_MAX_WAIT_US"));
    }
    OSSL_LIB_CTX_free(l2);
    static const uint32_t good[] = {2500, 100000, 0};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char v[16];
        snprintf(v, sizeof(v), "%u", (unsigned)good[i]);
        setenv("MBCRYPTO_MAX_WAIT_US", v, 1);
        assert_non_null(l2 = OSSL_LIB_CTX_new());
        assert_true(OSSL_PROVIDER_set_default_search_path(l2, getenv("MBC_PROVIDER_DIR")));
        OSSL_PROVIDER *p = OSSL_PROVIDER_load(l2, "mbcrypto");
        assert_non_null(p);
        assert_int_equal(max_wait_of(p), good[i]);
        OSSL_PROVIDER_unload(p);
        OSSL_LIB_CTX_free(l2);
    }
    /* The key of openssl.cnf; the variable wins over it. */
    char line[512];
    uint32_t us = 0;
    unsetenv("MBCRYPTO_MAX_WAIT_US");
    assert_false(cnf_load("max-wait-us = 7x", line, sizeof(line), NULL));
    assert_non_null(strstr(line, "mbcrypto: the max-wait-us setting \"7x\""));
    assert_true(cnf_load("max-wait-us = 700", line, sizeof(line), &us));
    assert_int_equal(us, 700);
    setenv("MBCRYPTO_MAX_WAIT_US", "30", 1);
    assert_true(cnf_load("max-wait-us = 700", line, sizeof(line), &us));
    assert_int_equal(us, 30);
    setenv("MBCRYPTO_MAX_WAIT_US", "0", 1);
    assert_true(cnf_load("max-wait-us = 0", line, sizeof(line), &us));
    assert_int_equal(us, 0);
    assert_int_equal(max_wait_of(mbc), 0);
    unsetenv("MBCRYPTO_MAX_WAIT_US");
}

/* The TLS groups we announce (libssl 3.0 uses only those for the key
 * managements we serve): names and IANA ids. */
static int group_cb(const OSSL_PARAM params[], void *arg)
{
    char *list = arg;
    const char *name = NULL;
    unsigned id = 0;
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, OSSL_CAPABILITY_TLS_GROUP_NAME);
    if (p == NULL || !OSSL_PARAM_get_utf8_string_ptr(p, &name) ||
        (p = OSSL_PARAM_locate_const(params, OSSL_CAPABILITY_TLS_GROUP_ID)) == NULL ||
        !OSSL_PARAM_get_uint(p, &id)) {
        return 0;
    }
    snprintf(list + strlen(list), 256 - strlen(list), "%s%s=%u", list[0] != '\0' ? "," : "", name,
             id);
    return 1;
}

static void test_tls_groups(void **state)
{
    (void)state;
    char list[256] = "";
    assert_int_equal(OSSL_PROVIDER_get_capabilities(mbc, "TLS-GROUP", group_cb, list), 1);
    assert_string_equal(list, "x25519=29,secp256r1=23,P-256=23,secp384r1=24,P-384=24,"
                              "secp521r1=25,P-521=25");
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

/* open_when: opens ct (one piece of AAD, one of data) with the tag set at
 * point when: 0 before key and IV (the cipher alone set: python3-cryptography's
 * order), 1 between key and IV, 2 after the IV, 3 after the data. Then
 * opens the same message again on that context without setting the tag
 * (OpenSSL keeps it). Returns final's result (both messages), and whether
 * an error was queued in *queued. */
static int open_when(EVP_CIPHER *ci, int when, const uint8_t *key, const uint8_t *iv,
                     const uint8_t *aad, const uint8_t *ct, uint8_t *pt, size_t len,
                     const uint8_t *tag, size_t tag_len, int *queued)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int l, ok = 1;
    ERR_clear_error();
    for (int pass = 0; pass < 2 && ok; pass++) {
        const int set = pass == 0;
        ok = EVP_DecryptInit_ex2(c, pass == 0 ? ci : NULL, NULL, NULL, NULL) &&
             (!set || when != 0 ||
              EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, (void *)tag) == 1) &&
             EVP_DecryptInit_ex2(c, NULL, key, NULL, NULL) &&
             (!set || when != 1 ||
              EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, (void *)tag) == 1) &&
             EVP_DecryptInit_ex2(c, NULL, NULL, iv, NULL) &&
             (!set || when != 2 ||
              EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, (void *)tag) == 1) &&
             EVP_DecryptUpdate(c, NULL, &l, aad, 16) &&
             EVP_DecryptUpdate(c, pt, &l, ct, (int)len) &&
             (!set || when != 3 ||
              EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, (void *)tag) == 1) &&
             EVP_DecryptFinal_ex(c, pt + len, &l) == 1;
    }
    *queued = ERR_peek_error() != 0;
    ERR_clear_error();
    EVP_CIPHER_CTX_free(c);
    return ok;
}

/* Issue 22, items 1 and 10: a tag set at any point before final (before key
 * and IV too), of any length 1..16, opens a good message, kept for the next
 * message as OpenSSL keeps it; a forged one fails, with no error queued,
 * as with the default provider; lengths 0 and 17 are refused by both. */
static void test_gcm_tag_any_time(void **state)
{
    (void)state;
    EVP_CIPHER *ours = cipher(16, OURS), *theirs = cipher(16, THEIRS);
    uint8_t key[16], iv[12], aad[16], pt[700], ct[700], back[700], tag[16];
    mbt_rand_bytes(key, sizeof(key));
    mbt_rand_bytes(iv, sizeof(iv));
    mbt_rand_bytes(aad, sizeof(aad));
    mbt_rand_bytes(pt, sizeof(pt));
    int l;
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    assert_true(EVP_EncryptInit_ex2(c, theirs, key, iv, NULL) &&
                EVP_EncryptUpdate(c, NULL, &l, aad, 16) &&
                EVP_EncryptUpdate(c, ct, &l, pt, sizeof(pt)) && EVP_EncryptFinal_ex(c, ct, &l) &&
                EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag));
    EVP_CIPHER_CTX_free(c);
    for (int when = 0; when < 4; when++) {
        for (size_t n = 16; n >= 1; n--) {
            int q_ours, q_theirs;
            memset(back, 0, sizeof(back));
            assert_true(open_when(ours, when, key, iv, aad, ct, back, sizeof(ct), tag, n, &q_ours));
            assert_memory_equal(back, pt, sizeof(pt));
            assert_false(q_ours);
            tag[n - 1] ^= 0x10;
            assert_false(
                open_when(ours, when, key, iv, aad, ct, back, sizeof(ct), tag, n, &q_ours));
            assert_false(
                open_when(theirs, when, key, iv, aad, ct, back, sizeof(ct), tag, n, &q_theirs));
            assert_int_equal(q_ours, q_theirs);
            tag[n - 1] ^= 0x10;
        }
    }
    for (size_t n = 0; n <= 17; n += 17) {
        c = EVP_CIPHER_CTX_new();
        assert_true(EVP_DecryptInit_ex2(c, ours, key, iv, NULL));
        assert_false(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)n, tag) > 0);
        ERR_clear_error();
        EVP_CIPHER_CTX_free(c);
    }
    /* Sealing: every tag length can be read, as a prefix of the full tag;
     * AEAD_TAGLEN is 16 then, and the given length after an opening tag. */
    for (size_t n = 1; n <= 16; n++) {
        uint8_t t[16];
        size_t taglen = 0;
        OSSL_PARAM q[] = {OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, &taglen),
                          OSSL_PARAM_END};
        c = EVP_CIPHER_CTX_new();
        assert_true(EVP_EncryptInit_ex2(c, ours, key, iv, NULL) &&
                    EVP_EncryptUpdate(c, NULL, &l, aad, 16) &&
                    EVP_EncryptUpdate(c, back, &l, pt, sizeof(pt)) &&
                    EVP_EncryptFinal_ex(c, back, &l) &&
                    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)n, t) &&
                    EVP_CIPHER_CTX_get_params(c, q));
        assert_memory_equal(t, tag, n);
        assert_int_equal(taglen, 16);
        assert_true(EVP_DecryptInit_ex2(c, NULL, key, iv, NULL) &&
                    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)n, t) &&
                    EVP_CIPHER_CTX_get_params(c, q));
        assert_int_equal(taglen, n);
        EVP_CIPHER_CTX_free(c);
    }
    EVP_CIPHER_free(ours);
    EVP_CIPHER_free(theirs);
}

/* Issue 22, item 10: sealing with a key and no IV draws a random IV (as the
 * default provider of OpenSSL 3.0 and 3.5 does), readable as "iv" and
 * "updated-iv" after the message and not before; the default provider
 * opens the result. The next message without a new IV is refused, and so
 * is a message without an IV of fewer than 12 bytes, or when opening. */
static void test_gcm_no_iv(void **state)
{
    (void)state;
    EVP_CIPHER *ours = cipher(32, OURS), *theirs = cipher(32, THEIRS);
    uint8_t key[32], aad[16], pt[100], ct[100], back[100], tag[16], zero[12] = {0};
    mbt_rand_bytes(key, sizeof(key));
    mbt_rand_bytes(aad, sizeof(aad));
    mbt_rand_bytes(pt, sizeof(pt));
    EVP_CIPHER *both[2] = {ours, theirs};
    for (int side = 0; side < 2; side++) {
        uint8_t iv[12] = {0}, iv2[12] = {0};
        int l;
        OSSL_PARAM q[] = {OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, iv, sizeof(iv)),
                          OSSL_PARAM_END};
        OSSL_PARAM q2[] = {OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, iv2, sizeof(iv2)),
                           OSSL_PARAM_END};
        EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
        assert_true(EVP_EncryptInit_ex2(c, both[side], key, NULL, NULL));
        assert_false(EVP_CIPHER_CTX_get_params(c, q));
        assert_true(EVP_EncryptUpdate(c, NULL, &l, aad, sizeof(aad)) &&
                    EVP_EncryptUpdate(c, ct, &l, pt, sizeof(pt)) &&
                    EVP_EncryptFinal_ex(c, ct, &l) &&
                    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag) &&
                    EVP_CIPHER_CTX_get_params(c, q) && EVP_CIPHER_CTX_get_params(c, q2));
        assert_memory_equal(iv, iv2, sizeof(iv));
        assert_memory_not_equal(iv, zero, sizeof(iv));
        assert_false(EVP_EncryptUpdate(c, ct, &l, pt, sizeof(pt)));
        EVP_CIPHER_CTX_free(c);
        assert_true(aead(theirs, 0, key, iv, 12, aad, sizeof(aad), back, ct, sizeof(ct), tag, 16));
        assert_memory_equal(back, pt, sizeof(pt));
        c = EVP_CIPHER_CTX_new();
        assert_true(EVP_EncryptInit_ex2(c, both[side], NULL, NULL, NULL) &&
                    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, 8, NULL) &&
                    EVP_EncryptInit_ex2(c, NULL, key, NULL, NULL));
        assert_false(EVP_EncryptUpdate(c, ct, &l, pt, sizeof(pt)));
        assert_true(EVP_DecryptInit_ex2(c, both[side], key, NULL, NULL));
        assert_false(EVP_DecryptUpdate(c, back, &l, ct, sizeof(ct)));
        EVP_CIPHER_CTX_free(c);
        ERR_clear_error();
    }
    EVP_CIPHER_free(ours);
    EVP_CIPHER_free(theirs);
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

/* derive: the shared secret of key and peer in provider props into out
 * (SECRET_MAX bytes: P-521's 66 fit); its length, or -1 on failure. */
#define SECRET_MAX 72
static int derive(EVP_PKEY *key, EVP_PKEY *peer, const char *props, uint8_t out[SECRET_MAX])
{
    EVP_PKEY_CTX *c = derive_ctx(key, peer, props);
    size_t len = 0;
    int r = -1;
    if (c != NULL && EVP_PKEY_derive(c, NULL, &len) == 1 && len <= SECRET_MAX &&
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
    uint8_t s[4][SECRET_MAX];
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
        uint8_t s1[SECRET_MAX], s2[SECRET_MAX];
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
        uint8_t s[SECRET_MAX];
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

/* one_lane: whether alg's implementation runs requests one by one
 * (mbc_impl_info's lanes == 1: EC and X25519 without IFMA). Then requests
 * in ASYNC jobs run at once, none paused, none batched (async-at-once). */
static int one_lane(mbc_alg alg)
{
    return mbc_impl_get_info(alg)->lanes == 1;
}

/* run_batch: run_jobs of NJOBS requests of alg: NJOBS - 1 pause and all
 * batch (the last fills the batch), or with one lane all run at once. */
static void run_batch(mbc_alg alg, int (*fn)(void *), void *const arg[NJOBS])
{
    const int one = one_lane(alg);
    const uint64_t batched = counter("async-batched"), at_once = counter("async-at-once");
    assert_int_equal(run_jobs(fn, arg), one ? 0 : NJOBS - 1);
    if (one) {
        assert_int_equal(counter("async-at-once"), at_once + NJOBS);
        assert_int_equal(counter("async-batched"), batched);
    } else {
        assert_true(counter("async-batched") >= batched + NJOBS);
    }
}

/* One derivation in a job: its context and output. */
struct derive_job {
    EVP_PKEY_CTX *c;
    uint8_t out[SECRET_MAX];
    size_t len;
};

static int derive_in_job(void *arg)
{
    struct derive_job *d = *(struct derive_job **)arg;
    d->len = sizeof(d->out);
    return EVP_PKEY_derive(d->c, d->out, &d->len);
}

/* async_derive: NJOBS derivations of our keys a[i] (of alg) with the
 * default provider's b[i] in ASYNC jobs: they pause and run as one batch (or
 * run at once: run_batch) and give the secrets the default provider
 * computes. */
static void async_derive(mbc_alg alg, EVP_PKEY *const a[NJOBS], EVP_PKEY *const b[NJOBS],
                         const char *ctr)
{
    struct derive_job d[NJOBS];
    void *arg[NJOBS];
    for (int i = 0; i < NJOBS; i++) {
        assert_non_null(d[i].c = derive_ctx(a[i], b[i], OURS));
        arg[i] = &d[i];
    }
    const uint64_t n = counter(ctr);
    run_batch(alg, derive_in_job, arg);
    assert_int_equal(counter(ctr), n + NJOBS);
    for (int i = 0; i < NJOBS; i++) {
        uint8_t want[SECRET_MAX];
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

/* async_gen: NJOBS keys of type (group; of alg) generated by us in ASYNC
 * jobs, in one batch (or at once: run_batch), into key[]. */
static void async_gen(mbc_alg alg, const char *type, const char *group, EVP_PKEY *key[NJOBS],
                      const char *ctr)
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
    const uint64_t n = counter(ctr);
    run_batch(alg, gen_in_job, arg);
    assert_int_equal(counter(ctr), n + NJOBS);
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
    async_gen(MBC_ALG_X25519, "X25519", NULL, a, "ops-x25519-keygen");
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
    async_derive(MBC_ALG_X25519, a, b, "ops-x25519-derive");
    for (int i = 0; i < NJOBS; i++) {
        EVP_PKEY_free(a[i]);
        EVP_PKEY_free(b[i]);
    }
}

/* ------------------------------------------------------------- ECDH */

static const char *const ec_groups[] = {"P-256", "P-384"};

/* point_of: the encoded (uncompressed) public key of key into out. */
static size_t point_of(EVP_PKEY *key, uint8_t out[133])
{
    uint8_t *enc = NULL;
    const size_t len = EVP_PKEY_get1_encoded_public_key(key, &enc);
    assert_true(len > 0 && len <= 133);
    memcpy(out, enc, len);
    OPENSSL_free(enc);
    return len;
}

/* peer_of: a public key of group made by provider props from the encoded
 * point (as libssl makes a peer's key share); NULL if refused. */
static EVP_PKEY *peer_of(const char *group, const char *props, const uint8_t *point, size_t len)
{
    EVP_PKEY *k = pkey_gen("EC", group, props, 1);
    if (EVP_PKEY_set1_encoded_public_key(k, point, len) != 1) {
        ERR_clear_error();
        EVP_PKEY_free(k);
        return NULL;
    }
    return k;
}

static void test_ecdh_cross(void **state)
{
    (void)state;
    for (int g = 0; g < 2; g++) {
        const int slen = g == 0 ? 32 : 48;
        for (int i = 0; i < 3; i++) {
            const uint64_t gens = counter("ops-ec-keygen");
            EVP_PKEY *a = pkey_gen("EC", ec_groups[g], OURS, 0);
            EVP_PKEY *b = pkey_gen("EC", ec_groups[g], THEIRS, 0);
            assert_int_equal(counter("ops-ec-keygen"), gens + 1);
            assert_true(is_ours(a));
            assert_false(is_ours(b));
            assert_int_equal(EVP_PKEY_get_bits(a), slen * 8);
            assert_int_equal(EVP_PKEY_get_security_bits(a), g == 0 ? 128 : 192);
            assert_int_equal(EVP_PKEY_get_size(a), EVP_PKEY_get_size(b));
            char name[32];
            assert_int_equal(EVP_PKEY_get_group_name(a, name, sizeof(name), NULL), 1);
            assert_string_equal(name, g == 0 ? "prime256v1" : "secp384r1");
            agree(a, b, "ops-ecdh", slen);
            /* Our key in the default provider (exported) is the same key:
             * same public point, and a peer key made by each provider from
             * the other's encoded point derives the same secret. */
            uint8_t pa[133], pb[133], s1[SECRET_MAX], s2[SECRET_MAX];
            const size_t la = point_of(a, pa), lb = point_of(b, pb);
            assert_int_equal(la, (size_t)(2 * slen + 1));
            assert_int_equal(pa[0], 4);
            EVP_PKEY *peer_b = peer_of(ec_groups[g], OURS, pb, lb);
            EVP_PKEY *peer_a = peer_of(ec_groups[g], THEIRS, pa, la);
            assert_non_null(peer_b);
            assert_non_null(peer_a);
            assert_true(is_ours(peer_b));
            assert_int_equal(EVP_PKEY_eq(peer_b, b), 1);
            assert_int_equal(derive(a, peer_b, OURS, s1), slen);
            assert_int_equal(derive(b, peer_a, THEIRS, s2), slen);
            assert_memory_equal(s1, s2, (size_t)slen);
            /* A shorter buffer gets the secret's first bytes, as OpenSSL's. */
            EVP_PKEY_CTX *c = derive_ctx(a, b, OURS);
            size_t len = 20;
            assert_int_equal(EVP_PKEY_derive(c, s2, &len), 1);
            assert_int_equal(len, 20);
            assert_memory_equal(s1, s2, 20);
            EVP_PKEY_CTX_free(c);
            /* A private key given as data: ours from the default's pair. */
            BIGNUM *d = NULL;
            assert_int_equal(EVP_PKEY_get_bn_param(b, OSSL_PKEY_PARAM_PRIV_KEY, &d), 1);
            OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
            assert_true(
                OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, ec_groups[g], 0));
            assert_true(OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d));
            OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
            EVP_PKEY_CTX *fc = EVP_PKEY_CTX_new_from_name(lib, "EC", OURS);
            EVP_PKEY *ob = NULL;
            assert_int_equal(EVP_PKEY_fromdata_init(fc), 1);
            assert_int_equal(EVP_PKEY_fromdata(fc, &ob, EVP_PKEY_KEYPAIR, params), 1);
            assert_true(is_ours(ob));
            assert_int_equal(EVP_PKEY_eq(ob, b), 1);
            assert_int_equal(derive(ob, a, OURS, s2), slen);
            assert_memory_equal(s1, s2, (size_t)slen);
            EVP_PKEY_free(ob);
            EVP_PKEY_CTX_free(fc);
            OSSL_PARAM_free(params);
            OSSL_PARAM_BLD_free(bld);
            BN_clear_free(d);
            EVP_PKEY_free(peer_a);
            EVP_PKEY_free(peer_b);
            EVP_PKEY_free(a);
            EVP_PKEY_free(b);
        }
    }
}

/* Bad peer points are refused (off the curve, coordinates >= p, wrong
 * length, the point at infinity, another curve's key); compressed points
 * are ours too (issue 22). A public key off the curve given as data is
 * refused by our import too. */
static void test_ecdh_bad_peer(void **state)
{
    (void)state;
    EVP_PKEY *a = pkey_gen("EC", "P-256", OURS, 0);
    uint8_t p[133], bad[133], s[SECRET_MAX];
    const size_t len = point_of(a, p);
    memcpy(bad, p, len);
    bad[len - 1] ^= 1; /* off the curve */
    assert_null(peer_of("P-256", OURS, bad, len));
    memset(bad + 1, 0xFF, 32); /* x >= p */
    assert_null(peer_of("P-256", OURS, bad, len));
    assert_null(peer_of("P-256", OURS, p, len - 1));
    const uint8_t inf = 0;
    assert_null(peer_of("P-256", OURS, &inf, 1));
    /* The compressed form of a's point: a valid key, ours. */
    uint8_t comp[33];
    memcpy(comp, p, 33);
    comp[0] = (uint8_t)(2 | (p[64] & 1));
    EVP_PKEY *ourc = peer_of("P-256", OURS, comp, 33);
    assert_non_null(ourc);
    assert_true(is_ours(ourc));
    assert_int_equal(EVP_PKEY_eq(ourc, a), 1);
    EVP_PKEY_free(ourc);
    EVP_PKEY *theirs = peer_of("P-256", THEIRS, comp, 33);
    assert_non_null(theirs);
    assert_int_equal(EVP_PKEY_eq(theirs, a), 1);
    /* The default provider's key with a compressed point format is ours
     * to compute with: its ECDH (with our key too) runs in mbcrypto. */
    const uint64_t other = counter("keys-ec-other"), ecdh = counter("ops-ecdh");
    EVP_PKEY *b = pkey_gen("EC", "P-256", THEIRS, 0);
    assert_int_equal(
        EVP_PKEY_set_utf8_string_param(b, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, "compressed"),
        1);
    uint8_t s2[SECRET_MAX], s3[SECRET_MAX];
    assert_int_equal(derive(b, a, "?" OURS, s), 32);
    assert_int_equal(derive(a, b, OURS, s2), 32);
    assert_int_equal(derive(a, b, THEIRS, s3), 32);
    assert_memory_equal(s, s2, 32);
    assert_memory_equal(s, s3, 32);
    assert_int_equal(counter("keys-ec-other"), other);
    assert_int_equal(counter("ops-ecdh"), ecdh + 2);
    /* An off-curve point given as key data. */
    bad[1] = p[1];
    memcpy(bad, p, len);
    bad[len - 1] ^= 1;
    OSSL_PARAM params[] = {
        OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, "P-256", 0),
        OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, bad, len),
        OSSL_PARAM_END,
    };
    const uint64_t refused = counter("keys-ec-refused");
    EVP_PKEY_CTX *fc = EVP_PKEY_CTX_new_from_name(lib, "EC", OURS);
    EVP_PKEY *off = NULL;
    assert_int_equal(EVP_PKEY_fromdata_init(fc), 1);
    assert_int_not_equal(EVP_PKEY_fromdata(fc, &off, EVP_PKEY_PUBLIC_KEY, params), 1);
    ERR_clear_error();
    assert_int_equal(counter("keys-ec-refused"), refused + 1);
    EVP_PKEY_CTX_free(fc);
    /* A P-384 peer for a P-256 key. */
    EVP_PKEY *c = pkey_gen("EC", "P-384", OURS, 0);
    assert_int_equal(derive(a, c, OURS, s), -1);
    EVP_PKEY_free(c);
    EVP_PKEY_free(b);
    EVP_PKEY_free(theirs);
    EVP_PKEY_free(a);
}

/* Curves mbcrypto does not have (P-521, explicit parameters): keys
 * generated or imported through our key management are the default
 * provider's, and so is their ECDH, whatever the mix of keys. */
static void test_ecdh_fallback(void **state)
{
    (void)state;
    const uint64_t gens = counter("ops-ec-keygen");
    EVP_PKEY *o = pkey_gen("EC", "secp521r1", OURS, 0);
    assert_true(is_ours(o));
    assert_int_equal(counter("ops-ec-keygen"), gens);
    assert_int_equal(EVP_PKEY_get_bits(o), 521);
    char name[32];
    assert_int_equal(EVP_PKEY_get_group_name(o, name, sizeof(name), NULL), 1);
    assert_string_equal(name, "secp521r1");
    EVP_PKEY *a = pkey_gen("EC", "P-521", THEIRS, 0), *b = pkey_gen("EC", "P-521", THEIRS, 0);
    uint8_t s[2][SECRET_MAX];
    const uint64_t other = counter("keys-ec-other"), ecdh = counter("ops-ecdh");
    assert_int_equal(derive(a, b, "?" OURS, s[0]), 66);
    assert_int_equal(derive(b, a, THEIRS, s[1]), 66);
    assert_memory_equal(s[0], s[1], 66);
    assert_true(counter("keys-ec-other") > other);
    /* Our P-521 key with theirs, both ways, and as libssl's peer key made
     * from parameters generated through us. */
    assert_int_equal(derive(o, a, OURS, s[0]), 66);
    assert_int_equal(derive(a, o, THEIRS, s[1]), 66);
    assert_memory_equal(s[0], s[1], 66);
    uint8_t pa[133];
    const size_t la = point_of(a, pa);
    EVP_PKEY *peer = peer_of("P-521", OURS, pa, la);
    assert_non_null(peer);
    assert_true(is_ours(peer));
    assert_int_equal(EVP_PKEY_eq(peer, a), 1);
    assert_int_equal(derive(o, peer, OURS, s[1]), 66);
    assert_memory_equal(s[0], s[1], 66);
    /* A key generated from our P-521 key as template (libssl's server
     * share for a client's group). */
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, peer, OURS);
    EVP_PKEY *t = NULL;
    assert_int_equal(EVP_PKEY_keygen_init(c), 1);
    assert_int_equal(EVP_PKEY_keygen(c, &t), 1);
    assert_int_equal(EVP_PKEY_get_bits(t), 521);
    assert_int_equal(derive(t, a, OURS, s[0]), 66);
    assert_int_equal(derive(a, t, THEIRS, s[1]), 66);
    assert_memory_equal(s[0], s[1], 66);
    EVP_PKEY_CTX_free(c);
    /* A P-521 key cannot derive with a P-256 one. */
    EVP_PKEY *p256 = pkey_gen("EC", "P-256", OURS, 0);
    assert_int_equal(derive(o, p256, OURS, s[0]), -1);
    assert_int_equal(derive(p256, o, OURS, s[0]), -1);
    assert_int_equal(counter("ops-ecdh"), ecdh);
    EVP_PKEY_free(p256);
    EVP_PKEY_free(t);
    EVP_PKEY_free(peer);
    EVP_PKEY_free(o);
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
    /* P-256 with explicit parameters. */
    a = pkey_gen("EC", "P-256", THEIRS, 0);
    b = pkey_gen("EC", "P-256", THEIRS, 0);
    assert_int_equal(EVP_PKEY_set_utf8_string_param(a, OSSL_PKEY_PARAM_EC_ENCODING,
                                                    OSSL_PKEY_EC_ENCODING_EXPLICIT),
                     1);
    assert_int_equal(derive(a, b, "?" OURS, s[0]), 32);
    assert_int_equal(derive(b, a, THEIRS, s[1]), 32);
    assert_memory_equal(s[0], s[1], 32);
    assert_int_equal(counter("ops-ecdh"), ecdh);
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
}

static void test_ecdh_async(void **state)
{
    (void)state;
    for (int g = 0; g < 2; g++) {
        EVP_PKEY *a[NJOBS], *b[NJOBS];
        async_gen(MBC_ALG_EC, "EC", ec_groups[g], a, "ops-ec-keygen");
        for (int i = 0; i < NJOBS; i++) {
            b[i] = pkey_gen("EC", ec_groups[g], THEIRS, 0);
            /* Each generated key pair is consistent (the default provider
             * checks it). */
            EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, a[i], THEIRS);
            assert_int_equal(EVP_PKEY_pairwise_check(c), 1);
            EVP_PKEY_CTX_free(c);
        }
        async_derive(MBC_ALG_EC, a, b, "ops-ecdh");
        for (int i = 0; i < NJOBS; i++) {
            EVP_PKEY_free(a[i]);
            EVP_PKEY_free(b[i]);
        }
    }
}

/* ------------------------------------------------------------ ECDSA */

/* ec_sign: an ECDSA signature (DER) of tbs with md set (NULL: none) by the
 * provider of props into sig; its length, 0 on failure. */
static size_t ec_sign(EVP_PKEY *key, const char *props, const char *md, uint8_t *sig,
                      const uint8_t *tbs, size_t tbs_len)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, key, props);
    size_t len = 0;
    assert_non_null(c);
    assert_int_equal(EVP_PKEY_sign_init(c), 1);
    if (md != NULL) {
        assert_int_equal(EVP_PKEY_CTX_set_signature_md(c, EVP_get_digestbyname(md)), 1);
    }
    assert_int_equal(EVP_PKEY_sign(c, NULL, &len, tbs, tbs_len), 1);
    assert_true(len >= 72 && len <= 139);
    if (EVP_PKEY_sign(c, sig, &len, tbs, tbs_len) != 1) {
        len = 0;
    }
    EVP_PKEY_CTX_free(c);
    ERR_clear_error();
    return len;
}

static int ec_verify(EVP_PKEY *key, const char *props, const char *md, const uint8_t *sig,
                     size_t sig_len, const uint8_t *tbs, size_t tbs_len)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, key, props);
    assert_non_null(c);
    assert_int_equal(EVP_PKEY_verify_init(c), 1);
    if (md != NULL) {
        assert_int_equal(EVP_PKEY_CTX_set_signature_md(c, EVP_get_digestbyname(md)), 1);
    }
    const int r = EVP_PKEY_verify(c, sig, sig_len, tbs, tbs_len);
    EVP_PKEY_CTX_free(c);
    ERR_clear_error();
    return r;
}

static void test_ecdsa_cross(void **state)
{
    (void)state;
    static const char *const mds[] = {"SHA256", "SHA384", "SHA512", NULL};
    for (int g = 0; g < 2; g++) {
        EVP_PKEY *keys[2] = {pkey_gen("EC", ec_groups[g], THEIRS, 0),
                             pkey_gen("EC", ec_groups[g], OURS, 0)};
        for (int k = 0; k < 2; k++) {
            for (size_t m = 0; m < 4; m++) {
                uint8_t tbs[64], sig[160];
                const size_t tbs_len =
                    mds[m] != NULL ? (size_t)EVP_MD_get_size(EVP_get_digestbyname(mds[m])) : 20;
                mbt_rand_bytes(tbs, tbs_len);
                for (int ours_signs = 0; ours_signs < 2; ours_signs++) {
                    const uint64_t signs = counter("ops-ecdsa-sign"),
                                   verifies = counter("ops-ecdsa-verify");
                    const size_t len =
                        ec_sign(keys[k], ours_signs ? OURS : THEIRS, mds[m], sig, tbs, tbs_len);
                    assert_true(len > 0);
                    const char *other = ours_signs ? THEIRS : OURS;
                    assert_int_equal(ec_verify(keys[k], other, mds[m], sig, len, tbs, tbs_len), 1);
                    assert_int_equal(counter("ops-ecdsa-sign"), signs + (ours_signs ? 1 : 0));
                    assert_int_equal(counter("ops-ecdsa-verify"), verifies + (ours_signs ? 0 : 1));
                    /* A flipped bit, a trailing byte, a wrong digest fail on
                     * both sides. */
                    sig[len - 3] ^= 0x10;
                    assert_int_not_equal(ec_verify(keys[k], OURS, mds[m], sig, len, tbs, tbs_len),
                                         1);
                    assert_int_not_equal(ec_verify(keys[k], THEIRS, mds[m], sig, len, tbs, tbs_len),
                                         1);
                    sig[len - 3] ^= 0x10;
                    sig[len] = 0;
                    assert_int_not_equal(
                        ec_verify(keys[k], OURS, mds[m], sig, len + 1, tbs, tbs_len), 1);
                    assert_int_not_equal(
                        ec_verify(keys[k], THEIRS, mds[m], sig, len + 1, tbs, tbs_len), 1);
                    tbs[0] ^= 1;
                    assert_int_not_equal(ec_verify(keys[k], OURS, mds[m], sig, len, tbs, tbs_len),
                                         1);
                    tbs[0] ^= 1;
                }
            }
        }
        /* With a digest set, the input must be a digest of its length. */
        uint8_t tbs[64] = {0}, sig[160];
        EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, keys[1], OURS);
        size_t len = sizeof(sig);
        assert_int_equal(EVP_PKEY_sign_init(c), 1);
        assert_int_equal(EVP_PKEY_CTX_set_signature_md(c, EVP_sha256()), 1);
        assert_int_not_equal(EVP_PKEY_sign(c, sig, &len, tbs, 31), 1);
        len = 10; /* too small a buffer */
        assert_int_not_equal(EVP_PKEY_sign(c, sig, &len, tbs, 32), 1);
        ERR_clear_error();
        EVP_PKEY_CTX_free(c);
        EVP_PKEY_free(keys[0]);
        EVP_PKEY_free(keys[1]);
    }
}

/* EVP_DigestSign/Verify (libssl's CertificateVerify, X509_sign) across the
 * providers; a P-521 key signs through the default provider. */
static void test_ecdsa_digest_sign(void **state)
{
    (void)state;
    const uint8_t msg[] = "the message of a TLS CertificateVerify";
    const char *groups[] = {"P-256", "P-384", "P-521"};
    for (int g = 0; g < 3; g++) {
        EVP_PKEY *key = pkey_gen("EC", groups[g], THEIRS, 0);
        for (int ours_signs = 0; ours_signs < 2; ours_signs++) {
            const uint64_t signs = counter("ops-ecdsa-sign");
            EVP_MD_CTX *m = EVP_MD_CTX_new();
            uint8_t sig[160];
            size_t len = sizeof(sig);
            assert_int_equal(EVP_DigestSignInit_ex(m, NULL, "SHA384", lib,
                                                   ours_signs ? "?" OURS : THEIRS, key, NULL),
                             1);
            assert_int_equal(EVP_DigestSign(m, sig, &len, msg, sizeof(msg)), 1);
            EVP_MD_CTX_free(m);
            assert_int_equal(counter("ops-ecdsa-sign"), signs + (ours_signs && g < 2 ? 1 : 0));
            m = EVP_MD_CTX_new();
            assert_int_equal(EVP_DigestVerifyInit_ex(m, NULL, "SHA384", lib,
                                                     ours_signs ? THEIRS : "?" OURS, key, NULL),
                             1);
            assert_int_equal(EVP_DigestVerify(m, sig, len, msg, sizeof(msg)), 1);
            EVP_MD_CTX_free(m);
        }
        EVP_PKEY_free(key);
    }
}

/* digest_sign_ctx: EVP_DigestSignInit_ex of key in provider props with
 * mdname and params; the signature context, or NULL (m freed) if refused.
 * *queued: whether the init left an error queued. */
static EVP_PKEY_CTX *digest_sign_ctx(EVP_MD_CTX **m, EVP_PKEY *key, const char *props,
                                     const char *mdname, const OSSL_PARAM *params, int *queued)
{
    EVP_PKEY_CTX *pc = NULL;
    ERR_clear_error();
    *m = EVP_MD_CTX_new();
    assert_non_null(*m);
    if (EVP_DigestSignInit_ex(*m, &pc, mdname, lib, props, key, params) != 1) {
        EVP_MD_CTX_free(*m);
        *m = NULL;
        pc = NULL;
    }
    *queued = ERR_peek_error() != 0;
    ERR_clear_error();
    return pc;
}

/* aid_of: the signature's AlgorithmIdentifier from pc into aid (its length,
 * or 0 if none: then an error must be queued, never a silent failure). */
static size_t aid_of(EVP_PKEY_CTX *pc, uint8_t *aid, size_t size, int *queued)
{
    OSSL_PARAM q[] = {OSSL_PARAM_octet_string(OSSL_SIGNATURE_PARAM_ALGORITHM_ID, aid, size),
                      OSSL_PARAM_END};
    ERR_clear_error();
    const int ok = EVP_PKEY_CTX_get_params(pc, q) == 1;
    *queued = ERR_peek_error() != 0;
    ERR_clear_error();
    return ok ? q[0].return_size : 0;
}

static const char *const sig_mds[] = {
    "SHA1",        "SHA224",      "SHA256",   "SHA384",   "SHA512",    "SHA512-224", "SHA512-256",
    "SHA3-224",    "SHA3-256",    "SHA3-384", "SHA3-512", "SHAKE128",  "SHAKE256",   "SM3",
    "BLAKE2S-256", "BLAKE2B-512", "MD5",      "MD5-SHA1", "RIPEMD160",
};
#define NUM_SIG_MDS (sizeof(sig_mds) / sizeof(sig_mds[0]))

/* Issue 22, item 8: RSA (PKCS#1 v1.5 and PSS, and PSS's MGF1 digest) takes
 * exactly the digests the default provider takes: not SHAKE, BLAKE2, nor
 * SM3 before OpenSSL 3.5. */
static void test_rsa_digests(void **state)
{
    (void)state;
    for (size_t i = 0; i < NUM_SIG_MDS; i++) {
        for (int pss = 0; pss < 2; pss++) {
            OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE,
                                                                    pss ? "pss" : "pkcs1", 0),
                                   OSSL_PARAM_END};
            EVP_MD_CTX *mo, *mt;
            int q;
            EVP_PKEY_CTX *po = digest_sign_ctx(&mo, key2048, OURS, sig_mds[i], params, &q);
            EVP_PKEY_CTX *pt = digest_sign_ctx(&mt, key2048, THEIRS, sig_mds[i], params, &q);
            assert_int_equal(po != NULL, pt != NULL);
            EVP_MD_CTX_free(mo);
            EVP_MD_CTX_free(mt);
        }
        int r[2];
        for (int ours = 0; ours < 2; ours++) {
            EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(lib, key2048, ours ? OURS : THEIRS);
            EVP_MD *md = EVP_MD_fetch(lib, sig_mds[i], NULL);
            assert_int_equal(EVP_PKEY_sign_init(c), 1);
            assert_int_equal(EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_PSS_PADDING), 1);
            r[ours] = md != NULL && EVP_PKEY_CTX_set_rsa_mgf1_md(c, md) == 1;
            EVP_MD_free(md);
            EVP_PKEY_CTX_free(c);
            ERR_clear_error();
        }
        assert_int_equal(r[1], r[0]);
    }
}

/* Issue 22, item 4: the AlgorithmIdentifiers of our signatures (what
 * certificate and CSR signing write) are the default provider's byte for
 * byte: PKCS#1 v1.5 ones, RSASSA-PSS with its hash, MGF1 and salt length,
 * ECDSA ones, with SHA-3 too. Where the default provider has none, neither
 * have we, and an error is queued (never a silent failure). */
static void test_sig_algorithm_ids(void **state)
{
    (void)state;
    EVP_PKEY *ec = pkey_gen("EC", "P-256", THEIRS, 0);
    for (size_t i = 0; i < NUM_SIG_MDS; i++) {
        for (int kind = 0; kind < 3; kind++) {
            EVP_PKEY *key = kind == 2 ? ec : key2048;
            OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE,
                                                                    kind == 1 ? "pss" : "pkcs1", 0),
                                   OSSL_PARAM_END};
            EVP_MD_CTX *mo, *mt;
            int q;
            EVP_PKEY_CTX *po =
                digest_sign_ctx(&mo, key, OURS, sig_mds[i], kind < 2 ? params : NULL, &q);
            EVP_PKEY_CTX *pt =
                digest_sign_ctx(&mt, key, THEIRS, sig_mds[i], kind < 2 ? params : NULL, &q);
            if (po != NULL && pt != NULL) {
                uint8_t ao[256], at[256];
                const size_t lo = aid_of(po, ao, sizeof(ao), &q);
                assert_true(lo > 0 || q);
                assert_int_equal(lo, aid_of(pt, at, sizeof(at), &q));
                assert_memory_equal(ao, at, lo);
            }
            EVP_MD_CTX_free(mo);
            EVP_MD_CTX_free(mt);
        }
    }
    static const char *const pss_sets[][3] = {
        {"SHA256", "SHA1", "20"},       {"SHA384", "SHA256", "auto"}, {"SHA1", "SHA512", "max"},
        {"SHA512", "SHA512", "digest"}, {"SHA224", "SHA224", "0"},    {"SHA256", "SHA3-256", "20"},
    };
    for (size_t i = 0; i < sizeof(pss_sets) / sizeof(pss_sets[0]); i++) {
        OSSL_PARAM pad[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, "pss", 0),
            OSSL_PARAM_END};
        OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_MGF1_DIGEST,
                                                                (char *)pss_sets[i][1], 0),
                               OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN,
                                                                (char *)pss_sets[i][2], 0),
                               OSSL_PARAM_END};
        uint8_t ao[256], at[256];
        size_t lo = 0, lt = 0;
        for (int ours = 0; ours < 2; ours++) {
            EVP_MD_CTX *m;
            int q;
            EVP_PKEY_CTX *pc =
                digest_sign_ctx(&m, key4096, ours ? OURS : THEIRS, pss_sets[i][0], pad, &q);
            assert_non_null(pc);
            assert_int_equal(EVP_PKEY_CTX_set_params(pc, params), 1);
            if (ours) {
                lo = aid_of(pc, ao, sizeof(ao), &q);
                assert_true(lo > 0 || q);
            } else {
                lt = aid_of(pc, at, sizeof(at), &q);
            }
            EVP_MD_CTX_free(m);
        }
        assert_int_equal(lo, lt);
        assert_memory_equal(ao, at, lo);
    }
    EVP_PKEY_free(ec);
}

/* Issue 22, item 7: PSS salt lengths given as strings, names or numbers
 * (what `-sigopt rsa_pss_saltlen:-1` and EVP_PKEY_CTX_set_rsa_pss_saltlen
 * send), or as ints, are taken exactly when the default provider takes
 * them (names and bounds of the running OpenSSL version: "auto-digestmax"
 * and -4 from 3.1 on), read back the same, and sign what it signs: the
 * same AlgorithmIdentifier, a signature it verifies. */
static void test_pss_salt_settings(void **state)
{
    (void)state;
    static const char *const strs[] = {
        "-1", "-2", "-3",  "-4",  "-5",  "digest", "max", "auto", "auto-digestmax",
        "0",  "20", "222", "300", " 20", "20x",    "abc", "+5",   ""};
    static const int ints[] = {-1, -2, -3, -4, -5, 0, 32};
    const size_t n = sizeof(strs) / sizeof(strs[0]), ni = sizeof(ints) / sizeof(ints[0]);
    for (size_t i = 0; i < n + ni; i++) {
        char got[2][32] = {"", ""};
        uint8_t aid[2][256];
        size_t aid_len[2] = {0, 0};
        int set[2], signed_ok[2];
        uint8_t sig[2][512];
        size_t sig_len[2] = {512, 512};
        for (int ours = 0; ours < 2; ours++) {
            EVP_MD_CTX *m;
            int q, iv = i >= n ? ints[i - n] : 0;
            OSSL_PARAM pad[] = {
                OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_PAD_MODE, "pss", 0),
                OSSL_PARAM_END};
            OSSL_PARAM salt[] = {
                i < n ? OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN,
                                                         (char *)strs[i], 0)
                      : OSSL_PARAM_construct_int(OSSL_SIGNATURE_PARAM_PSS_SALTLEN, &iv),
                OSSL_PARAM_END};
            EVP_PKEY_CTX *pc =
                digest_sign_ctx(&m, key2048, ours ? OURS : THEIRS, "SHA256", pad, &q);
            assert_non_null(pc);
            set[ours] = EVP_PKEY_CTX_set_params(pc, salt) == 1;
            OSSL_PARAM g[] = {OSSL_PARAM_construct_utf8_string(OSSL_SIGNATURE_PARAM_PSS_SALTLEN,
                                                               got[ours], sizeof(got[ours])),
                              OSSL_PARAM_END};
            assert_int_equal(EVP_PKEY_CTX_get_params(pc, g), 1);
            aid_len[ours] = aid_of(pc, aid[ours], sizeof(aid[ours]), &q);
            signed_ok[ours] =
                EVP_DigestSign(m, sig[ours], &sig_len[ours], (const uint8_t *)"abc", 3) == 1;
            EVP_MD_CTX_free(m);
            ERR_clear_error();
        }
        assert_int_equal(set[1], set[0]);
        assert_string_equal(got[1], got[0]);
        assert_int_equal(aid_len[1], aid_len[0]);
        assert_memory_equal(aid[1], aid[0], aid_len[0]);
        assert_int_equal(signed_ok[1], signed_ok[0]);
        if (signed_ok[1]) {
            struct sig_set v = {RSA_PKCS1_PSS_PADDING, "SHA256", RSA_PSS_SALTLEN_AUTO};
            uint8_t d[32];
            SHA256((const uint8_t *)"abc", 3, d);
            assert_int_equal(verify(key2048, THEIRS, &v, sig[1], sig_len[1], d, 32), 1);
        }
    }
}

/*
 * A digest-sign context copied in the middle of its message
 * (EVP_MD_CTX_copy_ex: the signature context's dupctx): the copy and the
 * original each finish the message and both signatures verify under the
 * default provider; the original freed first, the copy still signs. RSA
 * PSS (the copy owns its MGF1 digest too) and ECDSA P-256.
 */
static void test_sig_dup(void **state)
{
    (void)state;
    const uint8_t head[] = "the first half, ", tail[] = "and the second";
    uint8_t whole[sizeof(head) + sizeof(tail)];
    memcpy(whole, head, sizeof(head));
    memcpy(whole + sizeof(head), tail, sizeof(tail));
    EVP_PKEY *ec = pkey_gen("EC", "P-256", THEIRS, 0);
    EVP_PKEY *keys[2] = {key2048, ec};
    for (int k = 0; k < 2; k++) {
        const char *ctr = k == 0 ? "ops-rsa-sign" : "ops-ecdsa-sign";
        const uint64_t signs = counter(ctr);
        EVP_MD_CTX *m = EVP_MD_CTX_new(), *copy = EVP_MD_CTX_new();
        EVP_PKEY_CTX *pc = NULL;
        assert_non_null(copy);
        assert_int_equal(EVP_DigestSignInit_ex(m, &pc, "SHA256", lib, OURS, keys[k], NULL), 1);
        if (k == 0) {
            assert_int_equal(EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PSS_PADDING), 1);
            assert_int_equal(EVP_PKEY_CTX_set_rsa_mgf1_md_name(pc, "SHA384", NULL), 1);
        }
        assert_int_equal(EVP_DigestSignUpdate(m, head, sizeof(head)), 1);
        assert_int_equal(EVP_MD_CTX_copy_ex(copy, m), 1);
        uint8_t sig[2][256];
        size_t len[2] = {sizeof(sig[0]), sizeof(sig[1])};
        assert_int_equal(EVP_DigestSignUpdate(m, tail, sizeof(tail)), 1);
        assert_int_equal(EVP_DigestSignFinal(m, sig[0], &len[0]), 1);
        EVP_MD_CTX_free(m);
        assert_int_equal(EVP_DigestSignUpdate(copy, tail, sizeof(tail)), 1);
        assert_int_equal(EVP_DigestSignFinal(copy, sig[1], &len[1]), 1);
        EVP_MD_CTX_free(copy);
        assert_true(counter(ctr) >= signs + 2);
        for (int i = 0; i < 2; i++) {
            EVP_MD_CTX *v = EVP_MD_CTX_new();
            EVP_PKEY_CTX *vc = NULL;
            assert_int_equal(EVP_DigestVerifyInit_ex(v, &vc, "SHA256", lib, THEIRS, keys[k], NULL),
                             1);
            if (k == 0) {
                assert_int_equal(EVP_PKEY_CTX_set_rsa_padding(vc, RSA_PKCS1_PSS_PADDING), 1);
                assert_int_equal(EVP_PKEY_CTX_set_rsa_mgf1_md_name(vc, "SHA384", NULL), 1);
            }
            assert_int_equal(EVP_DigestVerify(v, sig[i], len[i], whole, sizeof(whole)), 1);
            EVP_MD_CTX_free(v);
        }
    }
    EVP_PKEY_free(ec);
}

/* One signature in a job. */
struct sign_job {
    EVP_PKEY_CTX *c;
    uint8_t tbs[32], sig[80];
    size_t len;
};

static int sign_in_job(void *arg)
{
    struct sign_job *j = *(struct sign_job **)arg;
    j->len = sizeof(j->sig);
    return EVP_PKEY_sign(j->c, j->sig, &j->len, j->tbs, sizeof(j->tbs));
}

static void test_ecdsa_async(void **state)
{
    (void)state;
    EVP_PKEY *key = pkey_gen("EC", "P-256", THEIRS, 0);
    struct sign_job j[NJOBS];
    void *arg[NJOBS];
    for (int i = 0; i < NJOBS; i++) {
        assert_non_null(j[i].c = EVP_PKEY_CTX_new_from_pkey(lib, key, OURS));
        assert_int_equal(EVP_PKEY_sign_init(j[i].c), 1);
        mbt_rand_bytes(j[i].tbs, sizeof(j[i].tbs));
        arg[i] = &j[i];
    }
    const uint64_t n = counter("ops-ecdsa-sign");
    run_batch(MBC_ALG_EC, sign_in_job, arg);
    assert_int_equal(counter("ops-ecdsa-sign"), n + NJOBS);
    for (int i = 0; i < NJOBS; i++) {
        assert_int_equal(ec_verify(key, THEIRS, NULL, j[i].sig, j[i].len, j[i].tbs, 32), 1);
        EVP_PKEY_CTX_free(j[i].c);
    }
    EVP_PKEY_free(key);
}

/* ------------------------------------------ delegation to the default
 * provider (issue 22): RSA key generation, ECDH with the X9.63 KDF,
 * compressed and hybrid EC points. */

/* same_params: a and b (todata of two keys) have the same parameters, in
 * the same order, with the same values. */
static void same_params(const OSSL_PARAM *a, const OSSL_PARAM *b)
{
    for (; a->key != NULL && b->key != NULL; a++, b++) {
        assert_string_equal(a->key, b->key);
        assert_int_equal(a->data_type, b->data_type);
        assert_int_equal(a->data_size, b->data_size);
        assert_memory_equal(a->data, b->data, a->data_size);
    }
    assert_null(a->key);
    assert_null(b->key);
}

/* exported_alike: key (ours) exports exactly as its copy in the default
 * provider (made from that export) does. */
static void exported_alike(EVP_PKEY *key, const char *type)
{
    OSSL_PARAM *p = NULL, *q = NULL;
    EVP_PKEY *copy = NULL;
    EVP_PKEY_CTX *fc = EVP_PKEY_CTX_new_from_name(lib, type, THEIRS);
    assert_int_equal(EVP_PKEY_todata(key, EVP_PKEY_KEYPAIR, &p), 1);
    assert_int_equal(EVP_PKEY_fromdata_init(fc), 1);
    assert_int_equal(EVP_PKEY_fromdata(fc, &copy, EVP_PKEY_KEYPAIR, p), 1);
    assert_false(is_ours(copy));
    assert_int_equal(EVP_PKEY_todata(copy, EVP_PKEY_KEYPAIR, &q), 1);
    same_params(p, q);
    assert_int_equal(EVP_PKEY_eq(key, copy), 1);
    OSSL_PARAM_free(p);
    OSSL_PARAM_free(q);
    EVP_PKEY_free(copy);
    EVP_PKEY_CTX_free(fc);
}

static int progress_calls;
static int progress(EVP_PKEY_CTX *c)
{
    (void)c;
    progress_calls++;
    return 1;
}

/* rsa_gen_ours: an RSA key pair generated through our key management
 * (bits, primes; e 65537 unless e3), the progress callback counted. */
static EVP_PKEY *rsa_gen_ours(size_t bits, size_t primes, int e3)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(lib, "RSA", "?" OURS);
    EVP_PKEY *k = NULL;
    assert_non_null(c);
    assert_int_equal(EVP_PKEY_keygen_init(c), 1);
    assert_int_equal(EVP_PKEY_CTX_set_rsa_keygen_bits(c, (int)bits), 1);
    assert_int_equal(EVP_PKEY_CTX_set_rsa_keygen_primes(c, (int)primes), 1);
    if (e3) {
        assert_int_equal(EVP_PKEY_CTX_ctrl_str(c, "rsa_keygen_pubexp", "3"), 1);
    }
    EVP_PKEY_CTX_set_cb(c, progress);
    progress_calls = 0;
    assert_int_equal(EVP_PKEY_keygen(c, &k), 1);
    assert_true(progress_calls > 0);
    EVP_PKEY_CTX_free(c);
    assert_true(is_ours(k));
    assert_int_equal(EVP_PKEY_get_bits(k), (int)bits);
    return k;
}

/* RSA key generation through our key management (the default provider's
 * generation): a served size becomes our key, signs with mbcrypto and
 * exports as the default provider's key does; others (1024 bits, three
 * primes) stay the default provider's, held in ours, and export alike. */
static void test_rsa_keygen(void **state)
{
    (void)state;
    const struct sig_set v15 = {RSA_PKCS1_PADDING, "SHA256", 0};
    uint8_t tbs[32], sig[512];
    mbt_rand_bytes(tbs, sizeof(tbs));
    const uint64_t keys = counter("keys-rsa"), signs = counter("ops-rsa-sign");
    for (int e3 = 0; e3 < 2; e3++) {
        EVP_PKEY *k = rsa_gen_ours(2048, 2, e3);
        assert_int_equal(counter("keys-rsa"), keys + (uint64_t)e3 + 1);
        BIGNUM *e = NULL;
        assert_int_equal(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_E, &e), 1);
        assert_true(BN_is_word(e, e3 ? 3 : 65537));
        BN_free(e);
        const size_t len = sign(k, OURS, &v15, sig, tbs, sizeof(tbs));
        assert_int_equal(len, 256);
        assert_int_equal(counter("ops-rsa-sign"), signs + (uint64_t)e3 + 1);
        assert_int_equal(verify(k, THEIRS, &v15, sig, len, tbs, sizeof(tbs)), 1);
        exported_alike(k, "RSA");
        EVP_PKEY_free(k);
    }
    const size_t sizes[2][2] = {{1024, 2}, {2048, 3}};
    for (int i = 0; i < 2; i++) {
        const uint64_t refused = counter("keys-rsa-refused");
        EVP_PKEY *k = rsa_gen_ours(sizes[i][0], sizes[i][1], 0);
        assert_true(counter("keys-rsa-refused") > refused);
        assert_int_equal(EVP_PKEY_get_size(k), (int)sizes[i][0] / 8);
        BIGNUM *f3 = NULL;
        assert_int_equal(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_FACTOR3, &f3), i);
        BN_free(f3);
        ERR_clear_error();
        exported_alike(k, "RSA");
        EVP_PKEY *d = EVP_PKEY_dup(k);
        assert_non_null(d);
        assert_int_equal(EVP_PKEY_eq(d, k), 1);
        EVP_PKEY_free(d);
        EVP_PKEY_free(k);
    }
}

/* kdf_derive: the ECDH secret of key and peer in provider props through
 * the X9.63 KDF (SHA-256, outlen bytes, ukm) into out; its length, or -1. */
static int kdf_derive(EVP_PKEY *key, EVP_PKEY *peer, const char *props, size_t outlen,
                      const uint8_t *ukm, size_t ukm_len, uint8_t *out)
{
    EVP_PKEY_CTX *c = derive_ctx(key, peer, props);
    EVP_MD *md = EVP_MD_fetch(lib, "SHA256", NULL);
    size_t len = 0;
    int r = -1;
    if (c != NULL && EVP_PKEY_CTX_set_ecdh_kdf_type(c, EVP_PKEY_ECDH_KDF_X9_63) == 1 &&
        EVP_PKEY_CTX_set_ecdh_kdf_md(c, md) == 1 &&
        EVP_PKEY_CTX_set_ecdh_kdf_outlen(c, (int)outlen) == 1 &&
        (ukm_len == 0 ||
         EVP_PKEY_CTX_set0_ecdh_kdf_ukm(c, OPENSSL_memdup(ukm, ukm_len), (int)ukm_len) == 1) &&
        EVP_PKEY_CTX_get_ecdh_kdf_type(c) == EVP_PKEY_ECDH_KDF_X9_63 &&
        EVP_PKEY_derive(c, NULL, &len) == 1 && len == outlen &&
        EVP_PKEY_derive(c, out, &len) == 1) {
        r = (int)len;
    }
    EVP_MD_free(md);
    EVP_PKEY_CTX_free(c);
    if (getenv("MBT_VERBOSE") != NULL) {
        ERR_print_errors_fp(stderr);
    }
    ERR_clear_error();
    return r;
}

/* ECDH with the X9.63 KDF (CMS, S/MIME): our keys and the default
 * provider's give the same output whichever provider derives, on P-256,
 * P-384 (mbcrypto's ECDH) and P-521 (the default provider's). */
static void test_ecdh_kdf(void **state)
{
    (void)state;
    static const char *const groups[] = {"P-256", "P-384", "P-521"};
    uint8_t ukm[20], out[4][100];
    mbt_rand_bytes(ukm, sizeof(ukm));
    for (int g = 0; g < 3; g++) {
        EVP_PKEY *a = pkey_gen("EC", groups[g], OURS, 0);
        EVP_PKEY *b = pkey_gen("EC", groups[g], THEIRS, 0);
        const size_t outlen = g == 0 ? 16 : 100;
        const uint64_t ecdh = counter("ops-ecdh");
        assert_int_equal(kdf_derive(a, b, OURS, outlen, ukm, sizeof(ukm), out[0]), (int)outlen);
        assert_int_equal(counter("ops-ecdh"), ecdh + (g < 2));
        assert_int_equal(kdf_derive(b, a, THEIRS, outlen, ukm, sizeof(ukm), out[1]), (int)outlen);
        assert_int_equal(kdf_derive(b, a, "?" OURS, outlen, ukm, sizeof(ukm), out[2]), (int)outlen);
        assert_int_equal(kdf_derive(a, b, OURS, outlen, ukm, 0, out[3]), (int)outlen);
        for (int i = 1; i < 3; i++) {
            assert_memory_equal(out[0], out[i], outlen);
        }
        assert_memory_not_equal(out[0], out[3], outlen);
        /* Without the KDF: the plain secret again. */
        assert_int_equal(derive(a, b, OURS, out[3]), g == 0 ? 32 : g == 1 ? 48 : 66);
        /* A buffer shorter than the KDF's output is refused. */
        EVP_PKEY_CTX *c = derive_ctx(a, b, OURS);
        assert_int_equal(EVP_PKEY_CTX_set_ecdh_kdf_type(c, EVP_PKEY_ECDH_KDF_X9_63), 1);
        assert_int_equal(EVP_PKEY_CTX_set_ecdh_kdf_md(c, EVP_sha256()), 1);
        assert_int_equal(EVP_PKEY_CTX_set_ecdh_kdf_outlen(c, 40), 1);
        int got = 0;
        assert_int_equal(EVP_PKEY_CTX_get_ecdh_kdf_outlen(c, &got), 1);
        assert_int_equal(got, 40);
        size_t len = 39;
        assert_int_not_equal(EVP_PKEY_derive(c, out[3], &len), 1);
        ERR_clear_error();
        EVP_PKEY_CTX_free(c);
        EVP_PKEY_free(a);
        EVP_PKEY_free(b);
    }
}

/* ec_shape: what OpenSSL gives out of an EC key's point format: pub's
 * length and format byte, encoded-pub-key's, point-format, and those of
 * its export. */
struct ec_shape {
    size_t pub_len, enc_len, exp_len;
    uint8_t pub0, enc0;
    char form[16], exp_form[16];
};

static void ec_shape(EVP_PKEY *k, struct ec_shape *s)
{
    uint8_t buf[133], *enc = NULL;
    memset(s, 0, sizeof(*s));
    assert_int_equal(
        EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_PUB_KEY, buf, sizeof(buf), &s->pub_len),
        1);
    s->pub0 = (uint8_t)(buf[0] & ~1);
    s->enc_len = EVP_PKEY_get1_encoded_public_key(k, &enc);
    assert_true(s->enc_len > 0);
    s->enc0 = enc[0];
    OPENSSL_free(enc);
    assert_int_equal(EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                                    s->form, sizeof(s->form), NULL),
                     1);
    OSSL_PARAM *p = NULL;
    assert_int_equal(EVP_PKEY_todata(k, EVP_PKEY_PUBLIC_KEY, &p), 1);
    const OSSL_PARAM *q = OSSL_PARAM_locate_const(p, OSSL_PKEY_PARAM_PUB_KEY);
    const char *f = NULL;
    assert_non_null(q);
    s->exp_len = q->data_size;
    q = OSSL_PARAM_locate_const(p, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT);
    assert_non_null(q);
    assert_int_equal(OSSL_PARAM_get_utf8_string_ptr(q, &f), 1);
    snprintf(s->exp_form, sizeof(s->exp_form), "%s", f);
    OSSL_PARAM_free(p);
}

/* alike: a (ours) and b (the default provider's) give the same shapes,
 * and agree as keys when same_key. */
static void alike(EVP_PKEY *a, EVP_PKEY *b, int same_key)
{
    struct ec_shape x, y;
    assert_true(is_ours(a));
    assert_false(is_ours(b));
    ec_shape(a, &x);
    ec_shape(b, &y);
    assert_int_equal(x.pub_len, y.pub_len);
    assert_int_equal(x.pub0, y.pub0);
    assert_int_equal(x.enc_len, y.enc_len);
    assert_int_equal(x.enc0, y.enc0);
    assert_int_equal(x.exp_len, y.exp_len);
    assert_string_equal(x.form, y.form);
    assert_string_equal(x.exp_form, y.exp_form);
    if (same_key) {
        assert_int_equal(EVP_PKEY_eq(a, b), 1);
    }
}

/* ec_pub_fromdata: a public key of group from the point (format: NULL
 * for no point-format parameter) in provider props. */
static EVP_PKEY *ec_pub_fromdata(const char *group, const uint8_t *pt, size_t len,
                                 const char *format, const char *props)
{
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)group, 0),
        OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)pt, len),
        OSSL_PARAM_construct_end(),
        OSSL_PARAM_construct_end(),
    };
    if (format != NULL) {
        params[2] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                                     (char *)format, 0);
    }
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(lib, "EC", props);
    EVP_PKEY *k = NULL;
    assert_int_equal(EVP_PKEY_fromdata_init(c), 1);
    assert_int_equal(EVP_PKEY_fromdata(c, &k, EVP_PKEY_PUBLIC_KEY, params), 1);
    EVP_PKEY_CTX_free(c);
    return k;
}

/* Compressed and hybrid points: fromdata and set1_encoded_public_key
 * take them, mbcrypto computes with them, and the point format follows
 * the default provider's rules in every encoding it gives out. */
static void test_ec_compressed(void **state)
{
    (void)state;
    static const char *const fmts[] = {NULL, "compressed", "hybrid", "uncompressed"};
    uint8_t s[2][SECRET_MAX];
    for (int g = 0; g < 2; g++) {
        const int slen = g == 0 ? 32 : 48;
        EVP_PKEY *b = pkey_gen("EC", ec_groups[g], THEIRS, 0);
        EVP_PKEY *mine = pkey_gen("EC", ec_groups[g], OURS, 0);
        uint8_t u[133], c[133], h[133];
        const size_t ul = point_of(b, u);
        memcpy(c, u, 1 + (size_t)slen);
        c[0] = (uint8_t)(2 | (u[ul - 1] & 1));
        memcpy(h, u, ul);
        h[0] = (uint8_t)(6 | (u[ul - 1] & 1));
        const uint8_t *pts[3] = {u, c, h};
        const size_t lens[3] = {ul, 1 + (size_t)slen, ul};
        for (int p = 0; p < 3; p++) {
            for (int f = 0; f < 4; f++) {
                EVP_PKEY *x = ec_pub_fromdata(ec_groups[g], pts[p], lens[p], fmts[f], OURS);
                EVP_PKEY *y = ec_pub_fromdata(ec_groups[g], pts[p], lens[p], fmts[f], THEIRS);
                alike(x, y, 1);
                const uint64_t ecdh = counter("ops-ecdh");
                assert_int_equal(derive(mine, x, OURS, s[0]), slen);
                assert_int_equal(counter("ops-ecdh"), ecdh + 1);
                assert_int_equal(derive(mine, y, THEIRS, s[1]), slen);
                assert_memory_equal(s[0], s[1], (size_t)slen);
                /* A copy of ours keeps the formats. */
                EVP_PKEY *d = EVP_PKEY_dup(x);
                alike(d, y, 1);
                EVP_PKEY_free(d);
                EVP_PKEY_free(x);
                EVP_PKEY_free(y);
            }
            /* A peer's key share in that encoding, then a format set. */
            EVP_PKEY *x = peer_of(ec_groups[g], OURS, pts[p], lens[p]);
            EVP_PKEY *y = peer_of(ec_groups[g], THEIRS, pts[p], lens[p]);
            assert_non_null(x);
            assert_non_null(y);
            alike(x, y, 1);
            assert_int_equal(derive(mine, x, OURS, s[0]), slen);
            assert_int_equal(derive(mine, y, THEIRS, s[1]), slen);
            assert_memory_equal(s[0], s[1], (size_t)slen);
            for (int f = 1; f < 4; f++) {
                assert_int_equal(EVP_PKEY_set_utf8_string_param(
                                     x, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, fmts[f]),
                                 1);
                assert_int_equal(EVP_PKEY_set_utf8_string_param(
                                     y, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, fmts[f]),
                                 1);
                alike(x, y, 1);
            }
            EVP_PKEY_free(x);
            EVP_PKEY_free(y);
        }
        /* Not a point: the compressed form of an x with no y. */
        memset(c + 1, 0xFF, (size_t)slen);
        assert_null(peer_of(ec_groups[g], OURS, c, 1 + (size_t)slen));
        assert_null(peer_of(ec_groups[g], THEIRS, c, 1 + (size_t)slen));
        /* Generation with a point format: the parameters get it (key
         * pairs and domain parameters alike). */
        for (int f = 1; f < 7; f++) {
            EVP_PKEY *k[2];
            const int pg = f >= 4;
            for (int i = 0; i < 2; i++) {
                EVP_PKEY_CTX *gc = EVP_PKEY_CTX_new_from_name(lib, "EC", i == 0 ? OURS : THEIRS);
                const OSSL_PARAM gp[] = {
                    OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
                                                     (char *)ec_groups[g], 0),
                    OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                                     (char *)fmts[pg ? f - 3 : f], 0),
                    OSSL_PARAM_construct_end(),
                };
                k[i] = NULL;
                assert_int_equal(pg ? EVP_PKEY_paramgen_init(gc) : EVP_PKEY_keygen_init(gc), 1);
                assert_int_equal(EVP_PKEY_CTX_set_params(gc, gp), 1);
                assert_int_equal(pg ? EVP_PKEY_paramgen(gc, &k[i]) : EVP_PKEY_keygen(gc, &k[i]), 1);
                EVP_PKEY_CTX_free(gc);
            }
            if (pg) {
                /* Their parameters, then a peer's point in them. */
                char fa[16], fb[16];
                assert_int_equal(
                    EVP_PKEY_get_utf8_string_param(k[0], OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                                   fa, sizeof(fa), NULL),
                    1);
                assert_int_equal(
                    EVP_PKEY_get_utf8_string_param(k[1], OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                                   fb, sizeof(fb), NULL),
                    1);
                assert_string_equal(fa, fb);
                for (int i = 0; i < 2; i++) {
                    assert_int_equal(EVP_PKEY_set1_encoded_public_key(k[i], u, ul), 1);
                }
                alike(k[0], k[1], 1);
                EVP_PKEY_free(k[0]);
                EVP_PKEY_free(k[1]);
                continue;
            }
            alike(k[0], k[1], 0);
            assert_int_equal(derive(k[0], k[1], OURS, s[0]), slen);
            assert_int_equal(derive(k[1], k[0], THEIRS, s[1]), slen);
            assert_memory_equal(s[0], s[1], (size_t)slen);
            EVP_PKEY_free(k[0]);
            EVP_PKEY_free(k[1]);
        }
        EVP_PKEY_free(mine);
        EVP_PKEY_free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_tls_groups),
        cmocka_unit_test(test_serve_malformed),
        cmocka_unit_test(test_max_wait_setting),
        cmocka_unit_test(test_rsa_cross),
        cmocka_unit_test(test_rsa_digest_sign),
        cmocka_unit_test(test_rsa_bad_input),
        cmocka_unit_test(test_rsa_fallback),
        cmocka_unit_test(test_gcm_cross),
        cmocka_unit_test(test_gcm_tls12),
        cmocka_unit_test(test_gcm_tag_any_time),
        cmocka_unit_test(test_gcm_no_iv),
        cmocka_unit_test(test_x25519_cross),
        cmocka_unit_test(test_x25519_bad_peer),
        cmocka_unit_test(test_x25519_async),
        cmocka_unit_test(test_ecdh_cross),
        cmocka_unit_test(test_ecdh_bad_peer),
        cmocka_unit_test(test_ecdh_fallback),
        cmocka_unit_test(test_ecdh_async),
        cmocka_unit_test(test_ecdsa_cross),
        cmocka_unit_test(test_ecdsa_digest_sign),
        cmocka_unit_test(test_ecdsa_async),
        cmocka_unit_test(test_sig_dup),
        cmocka_unit_test(test_rsa_keygen),
        cmocka_unit_test(test_ecdh_kdf),
        cmocka_unit_test(test_ec_compressed),
        cmocka_unit_test(test_rsa_digests),
        cmocka_unit_test(test_sig_algorithm_ids),
        cmocka_unit_test(test_pss_salt_settings),
    };
    if (getenv("MBT_FILTER") != NULL) {
        cmocka_set_test_filter(getenv("MBT_FILTER"));
    }
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
