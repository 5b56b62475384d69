/*
 * test_engine.c - the mbcrypto ENGINE (mbcrypto.so of the build tree, found
 * through OPENSSL_ENGINES as `-engine mbcrypto` finds it) against OpenSSL's
 * software methods on the same keys and inputs.
 *
 * RSA 2048/3072/4096: raw operations, PKCS#1 v1.5 and PSS signatures and
 * OAEP and PKCS#1 v1.5 encryption through EVP (the default provider's code
 * calling the ENGINE's RSA_METHOD, as in `openssl speed -engine`) and
 * through the RSA_METHOD directly; results equal OpenSSL's (the
 * deterministic ones byte for byte, the others cross-verified); bad input
 * leaves the same errors on the queue as the software method. Keys mbcrypto
 * does not serve (1024 bits, no CRT components) and "SERVE none" run on the
 * software method. ASYNC jobs pause and batch; threads share a key's cache;
 * a forked child works. AES-128/192/256-GCM: the ENGINE's ciphers against
 * the default provider's (AEAD in pieces, long IVs, short tags, libssl's
 * TLS 1.2 record mode and its IV controls, copies), bad input refused, the
 * built-in cipher when AES-GCM is not served. ECDSA and ECDH on P-256 and
 * P-384 (the EC_KEY_METHOD, through EVP and through the EC_KEY API): each
 * side's signatures verify on the other, digests of every length truncated
 * alike, shared secrets equal OpenSSL's; forged signatures, r or s out of
 * range and bad peer points are refused as OpenSSL refuses them (a point off
 * the curve with an error where OpenSSL would compute a secret); P-521,
 * precomputed nonces and "SERVE rsa" run on OpenSSL's method; a key's
 * cached objects follow it when it is regenerated or set; ASYNC jobs pause
 * and batch. X25519 (the EVP_PKEY_METHOD): shared secrets equal the
 * default provider's, for its keys, keys the method generates and a peer
 * made as libssl 3.0 makes one; low-order peers fail; ASYNC jobs batch.
 * The counters (the GET_COUNTERS command) show what mbcrypto ran.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/engine.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "mbo.h"
#include "ossl_gcm.h"
#include "ossl_rsa.h"
#include "test_util.h"

static ENGINE *eng;

#define NUM_SIZES 4 /* 2048, 3072, 4096 (served), 1024 (not) */
static const unsigned sizes[NUM_SIZES] = {2048, 3072, 4096, 1024};
static EVP_PKEY *soft_key[NUM_SIZES]; /* made before the ENGINE was the default */
static EVP_PKEY *eng_key[NUM_SIZES];  /* the same keys loaded again: the ENGINE's */
static RSA *soft_rsa[NUM_SIZES];      /* legacy RSA objects, software method */
static RSA *eng_rsa[NUM_SIZES];       /* the same, the ENGINE's method */

#define MAX_K 512

#define NUM_CURVES 3 /* P-256, P-384 (served), P-521 (not) */
static const char *const curves[NUM_CURVES] = {"P-256", "P-384", "P-521"};
static EVP_PKEY *soft_ec[NUM_CURVES]; /* made before the ENGINE was the default */
static EVP_PKEY *eng_ec[NUM_CURVES];  /* the same keys loaded again: the ENGINE's */
static EVP_PKEY *peer_ec[NUM_CURVES]; /* other keys, OpenSSL's method */
#define MAX_DER 160                   /* a DER ECDSA signature on P-521 */

/* ---------------------------------------------------------------- helpers */

static uint64_t ctr(enum mbo_counter c)
{
    uint64_t v[MBO_NUM_COUNTERS];
    const int cmd =
        ENGINE_ctrl(eng, ENGINE_CTRL_GET_CMD_FROM_NAME, 0, (void *)"GET_COUNTERS", NULL);
    assert_true(cmd >= ENGINE_CMD_BASE);
    assert_int_equal(ENGINE_ctrl(eng, cmd, MBO_NUM_COUNTERS, v, NULL), MBO_NUM_COUNTERS);
    return v[c];
}

static void serve(const char *what)
{
    assert_int_equal(ENGINE_ctrl_cmd_string(eng, "SERVE", what, 0), 1);
}

/* errors: the (library, reason) pairs on the error queue, oldest first;
 * the queue is emptied. */
static void errors(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (unsigned long e; (e = ERR_get_error()) != 0;) {
        if (at < len) {
            at += (size_t)snprintf(buf + at, len - at, "%d:%d ", ERR_GET_LIB(e), ERR_GET_REASON(e));
        }
    }
}

/* reload: key read back from its DER: made now, it gets the default RSA
 * or EC method of this moment. */
static EVP_PKEY *reload(EVP_PKEY *key)
{
    unsigned char *der = NULL;
    const int len = i2d_PrivateKey(key, &der);
    assert_true(len > 0);
    const unsigned char *p = der;
    EVP_PKEY *k = d2i_PrivateKey(EVP_PKEY_get_base_id(key), NULL, &p, len);
    OPENSSL_clear_free(der, (size_t)len);
    assert_non_null(k);
    return k;
}

/* legacy: an RSA object with key's components and the ENGINE's method
 * (e) or the software one (e NULL); with_crt 0 leaves out the primes and
 * CRT components (n, e, d only). */
static RSA *legacy(EVP_PKEY *key, ENGINE *e, int with_crt)
{
    static const char *const names[8] = {
        OSSL_PKEY_PARAM_RSA_N,         OSSL_PKEY_PARAM_RSA_E,
        OSSL_PKEY_PARAM_RSA_D,         OSSL_PKEY_PARAM_RSA_FACTOR1,
        OSSL_PKEY_PARAM_RSA_FACTOR2,   OSSL_PKEY_PARAM_RSA_EXPONENT1,
        OSSL_PKEY_PARAM_RSA_EXPONENT2, OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
    };
    BIGNUM *bn[8] = {NULL};
    for (int i = 0; i < (with_crt ? 8 : 3); i++) {
        assert_int_equal(EVP_PKEY_get_bn_param(key, names[i], &bn[i]), 1);
    }
    RSA *r = RSA_new_method(e);
    assert_non_null(r);
    if (e == NULL) {
        assert_int_equal(RSA_set_method(r, RSA_PKCS1_OpenSSL()), 1);
    }
    assert_int_equal(RSA_set0_key(r, bn[0], bn[1], bn[2]), 1);
    if (with_crt) {
        assert_int_equal(RSA_set0_factors(r, bn[3], bn[4]), 1);
        assert_int_equal(RSA_set0_crt_params(r, bn[5], bn[6], bn[7]), 1);
    }
    return r;
}

static int group_setup(void **state)
{
    (void)state;
    const char *dir = getenv("MBC_ENGINE_DIR");
    if (dir == NULL) {
        return -1;
    }
    setenv("OPENSSL_ENGINES", dir, 1);
    unsetenv(MBO_SERVE_ENV); /* the SERVE command decides */
    unsetenv(MBO_COUNTERS_ENV);
    for (int i = 0; i < NUM_SIZES; i++) {
        if ((soft_key[i] = mbt_ossl_rsa_keygen(sizes[i], 65537)) == NULL) {
            return -1;
        }
    }
    for (int i = 0; i < NUM_CURVES; i++) {
        soft_ec[i] = EVP_PKEY_Q_keygen(NULL, NULL, "EC", curves[i]);
        peer_ec[i] = EVP_PKEY_Q_keygen(NULL, NULL, "EC", curves[i]);
        if (soft_ec[i] == NULL || peer_ec[i] == NULL) {
            return -1;
        }
    }
    eng = ENGINE_by_id("mbcrypto");
    if (eng == NULL || !ENGINE_ctrl_cmd_string(eng, "SERVE", "all", 0) || !ENGINE_init(eng) ||
        !ENGINE_set_default_RSA(eng) || !ENGINE_set_default_EC(eng)) {
        ERR_print_errors_fp(stderr);
        return -1;
    }
    for (int i = 0; i < NUM_SIZES; i++) {
        eng_key[i] = reload(soft_key[i]);
        soft_rsa[i] = legacy(soft_key[i], NULL, 1);
        eng_rsa[i] = legacy(soft_key[i], eng, 1);
    }
    for (int i = 0; i < NUM_CURVES; i++) {
        eng_ec[i] = reload(soft_ec[i]);
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    for (int i = 0; i < NUM_SIZES; i++) {
        EVP_PKEY_free(soft_key[i]);
        EVP_PKEY_free(eng_key[i]);
        RSA_free(soft_rsa[i]);
        RSA_free(eng_rsa[i]);
    }
    for (int i = 0; i < NUM_CURVES; i++) {
        EVP_PKEY_free(soft_ec[i]);
        EVP_PKEY_free(eng_ec[i]);
        EVP_PKEY_free(peer_ec[i]);
    }
    /* ENGINE_unregister_RSA also takes it out of the default RSA table
     * (ENGINE_set_default_RSA(NULL) would dereference NULL); the same for
     * EC. */
    ENGINE_unregister_RSA(eng);
    ENGINE_unregister_EC(eng);
    ENGINE_finish(eng);
    ENGINE_free(eng);
    return 0;
}

/* ---------------------------------------------------------------- commands */

static void test_commands(void **state)
{
    (void)state;
    char errs[256];
    assert_string_equal(ENGINE_get_id(eng), "mbcrypto");
    assert_ptr_equal(ENGINE_get_RSA(eng), RSA_get_method(eng_rsa[0]));
    assert_non_null(ENGINE_get_EC(eng));
    const char *names[] = {"SERVE", "MAX_WAIT_US", "PRINT_COUNTERS", "GET_COUNTERS"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        assert_true(ENGINE_ctrl(eng, ENGINE_CTRL_GET_CMD_FROM_NAME, 0, (void *)names[i], NULL) >=
                    ENGINE_CMD_BASE);
    }
    /* Bad values are refused with ENGINE_R_INVALID_ARGUMENT. */
    const char *bad[][2] = {{"SERVE", "dsa"},      {"SERVE", "rsa,"},         {"SERVE", ""},
                            {"MAX_WAIT_US", "-1"}, {"MAX_WAIT_US", "100001"}, {"MAX_WAIT_US", "x"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(ENGINE_ctrl_cmd_string(eng, bad[i][0], bad[i][1], 0), 0);
        ERR_clear_error();
    }
    assert_int_equal(ENGINE_ctrl_cmd_string(eng, "SERVE", "x25519,dsa", 0), 0);
    errors(errs, sizeof(errs));
    char want[32];
    snprintf(want, sizeof(want), "%d:%d ", ERR_LIB_ENGINE, ENGINE_R_INVALID_ARGUMENT);
    assert_string_equal(errs, want);
    assert_int_equal(ENGINE_ctrl_cmd_string(eng, "MAX_WAIT_US", "250", 0), 1);
    assert_int_equal(ENGINE_ctrl_cmd_string(eng, "MAX_WAIT_US", "0", 0), 1);
    assert_int_equal(ENGINE_ctrl_cmd_string(eng, "PRINT_COUNTERS", NULL, 0), 1);
    serve("rsa,ecdsa,ecdh,x25519,aes-gcm");
    /* GET_COUNTERS fills at most what it is given. */
    const int cmd =
        ENGINE_ctrl(eng, ENGINE_CTRL_GET_CMD_FROM_NAME, 0, (void *)"GET_COUNTERS", NULL);
    uint64_t two[3] = {0, 0, 12345};
    assert_int_equal(ENGINE_ctrl(eng, cmd, 2, two, NULL), 2);
    assert_int_equal(two[2], 12345);
    assert_int_equal(ENGINE_ctrl(eng, cmd, -1, two, NULL), 0);
    ERR_clear_error();
}

/* -------------------------------------------------------------------- RSA */

/* Raw private and public operations (RSA_NO_PADDING through EVP) equal
 * OpenSSL's, and are counted; 1024-bit keys are left to OpenSSL. */
static void test_rsa_raw(void **state)
{
    (void)state;
    for (int i = 0; i < NUM_SIZES; i++) {
        const size_t k = sizes[i] / 8;
        const uint64_t sign = ctr(MBO_CTR_RSA_SIGN), verify = ctr(MBO_CTR_RSA_VERIFY);
        for (int rep = 0; rep < 3; rep++) {
            uint8_t in[MAX_K], ours[MAX_K], theirs[MAX_K];
            mbt_rand_bytes(in, k);
            in[0] &= 0x7F;
            for (int priv = 0; priv < 2; priv++) {
                assert_int_equal(mbt_ossl_rsa_raw(eng_key[i], priv, ours, in, k), 0);
                assert_int_equal(mbt_ossl_rsa_raw(soft_key[i], priv, theirs, in, k), 0);
                assert_memory_equal(ours, theirs, k);
            }
        }
        const uint64_t served = sizes[i] == 1024 ? 0 : 3;
        assert_int_equal(ctr(MBO_CTR_RSA_SIGN), sign + served);
        assert_int_equal(ctr(MBO_CTR_RSA_VERIFY), verify + served);
    }
}

/* A signature setting: padding, digest, PSS salt length. */
struct sig_set {
    int pad;
    const char *md;
    int salt;
};

static const struct sig_set sig_sets[] = {
    {RSA_PKCS1_PADDING, "SHA256", 0},
    {RSA_PKCS1_PADDING, "SHA512", 0},
    {RSA_PKCS1_PSS_PADDING, "SHA256", RSA_PSS_SALTLEN_DIGEST},
    {RSA_PKCS1_PSS_PADDING, "SHA384", RSA_PSS_SALTLEN_MAX},
};

/* digest_sign: a signature of msg by key with s (EVP_DigestSign). */
static size_t digest_sign(EVP_PKEY *key, const struct sig_set *s, uint8_t *sig, const uint8_t *msg,
                          size_t msg_len)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pc = NULL;
    size_t len = MAX_K;
    assert_int_equal(EVP_DigestSignInit_ex(md, &pc, s->md, NULL, NULL, key, NULL), 1);
    assert_int_equal(EVP_PKEY_CTX_set_rsa_padding(pc, s->pad), 1);
    if (s->pad == RSA_PKCS1_PSS_PADDING) {
        assert_int_equal(EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, s->salt), 1);
    }
    assert_int_equal(EVP_DigestSign(md, sig, &len, msg, msg_len), 1);
    EVP_MD_CTX_free(md);
    return len;
}

/* digest_verify: EVP_DigestVerify's verdict; its errors are left queued. */
static int digest_verify(EVP_PKEY *key, const struct sig_set *s, const uint8_t *sig, size_t len,
                         const uint8_t *msg, size_t msg_len)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pc = NULL;
    assert_int_equal(EVP_DigestVerifyInit_ex(md, &pc, s->md, NULL, NULL, key, NULL), 1);
    assert_int_equal(EVP_PKEY_CTX_set_rsa_padding(pc, s->pad), 1);
    if (s->pad == RSA_PKCS1_PSS_PADDING) {
        assert_int_equal(EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, RSA_PSS_SALTLEN_AUTO), 1);
    }
    const int r = EVP_DigestVerify(md, sig, len, msg, msg_len);
    EVP_MD_CTX_free(md);
    return r;
}

/* Signatures: PKCS#1 v1.5 ones equal OpenSSL's byte for byte; each side's
 * signatures verify on the other; forged and truncated ones fail on both
 * with the same errors. */
static void test_rsa_signatures(void **state)
{
    (void)state;
    for (int i = 0; i < NUM_SIZES; i++) {
        for (size_t s = 0; s < sizeof(sig_sets) / sizeof(sig_sets[0]); s++) {
            const struct sig_set *set = &sig_sets[s];
            uint8_t msg[100], ours[MAX_K], theirs[MAX_K];
            mbt_rand_bytes(msg, sizeof(msg));
            const uint64_t signs = ctr(MBO_CTR_RSA_SIGN);
            const size_t len = digest_sign(eng_key[i], set, ours, msg, sizeof(msg));
            assert_int_equal(len, sizes[i] / 8);
            assert_int_equal(ctr(MBO_CTR_RSA_SIGN), signs + (sizes[i] != 1024));
            assert_int_equal(digest_sign(soft_key[i], set, theirs, msg, sizeof(msg)), len);
            if (set->pad == RSA_PKCS1_PADDING) {
                assert_memory_equal(ours, theirs, len);
            }
            assert_int_equal(digest_verify(soft_key[i], set, ours, len, msg, sizeof(msg)), 1);
            assert_int_equal(digest_verify(eng_key[i], set, theirs, len, msg, sizeof(msg)), 1);
            /* Forged (a bit of the signature, of the message) and short. */
            for (int bad = 0; bad < 3; bad++) {
                uint8_t sig[MAX_K], m[100];
                memcpy(sig, theirs, len);
                memcpy(m, msg, sizeof(m));
                size_t l = len;
                if (bad == 0) {
                    sig[len / 2] ^= 0x10;
                } else if (bad == 1) {
                    m[7] ^= 1;
                } else {
                    l = len - 1;
                }
                char e1[512], e2[512];
                assert_int_not_equal(digest_verify(eng_key[i], set, sig, l, m, sizeof(m)), 1);
                errors(e1, sizeof(e1));
                assert_int_not_equal(digest_verify(soft_key[i], set, sig, l, m, sizeof(m)), 1);
                errors(e2, sizeof(e2));
                assert_string_equal(e1, e2);
            }
        }
    }
}

/* pkey_crypt: EVP_PKEY_encrypt or _decrypt of in with padding (OAEP with
 * SHA-256, or PKCS#1 v1.5); the output length, or -1 (errors queued). */
static int pkey_crypt(EVP_PKEY *key, int enc, int pad, uint8_t *out, const uint8_t *in, size_t len)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    assert_non_null(c);
    assert_int_equal(enc ? EVP_PKEY_encrypt_init(c) : EVP_PKEY_decrypt_init(c), 1);
    assert_int_equal(EVP_PKEY_CTX_set_rsa_padding(c, pad), 1);
    if (pad == RSA_PKCS1_OAEP_PADDING) {
        assert_int_equal(EVP_PKEY_CTX_set_rsa_oaep_md(c, EVP_sha256()), 1);
    }
    size_t out_len = MAX_K;
    const int r = enc ? EVP_PKEY_encrypt(c, out, &out_len, in, len)
                      : EVP_PKEY_decrypt(c, out, &out_len, in, len);
    EVP_PKEY_CTX_free(c);
    return r == 1 ? (int)out_len : -1;
}

/* Encryption through EVP (OAEP-SHA256, PKCS#1 v1.5): what one side
 * encrypts the other decrypts; a corrupted ciphertext fails on both. */
static void test_rsa_encryption(void **state)
{
    (void)state;
    const int pads[] = {RSA_PKCS1_OAEP_PADDING, RSA_PKCS1_PADDING};
    for (int i = 0; i < NUM_SIZES; i++) {
        const int k = (int)sizes[i] / 8;
        for (size_t p = 0; p < 2; p++) {
            uint8_t msg[40], ct[MAX_K], pt[MAX_K];
            mbt_rand_bytes(msg, sizeof(msg));
            for (int dir = 0; dir < 2; dir++) {
                EVP_PKEY *enc = dir ? eng_key[i] : soft_key[i];
                EVP_PKEY *dec = dir ? soft_key[i] : eng_key[i];
                assert_int_equal(pkey_crypt(enc, 1, pads[p], ct, msg, sizeof(msg)), k);
                assert_int_equal(pkey_crypt(dec, 0, pads[p], pt, ct, (size_t)k), sizeof(msg));
                assert_memory_equal(pt, msg, sizeof(msg));
            }
            if (pads[p] == RSA_PKCS1_OAEP_PADDING) {
                ct[k / 2] ^= 4;
                char e1[512], e2[512];
                assert_int_equal(pkey_crypt(eng_key[i], 0, pads[p], pt, ct, (size_t)k), -1);
                errors(e1, sizeof(e1));
                assert_int_equal(pkey_crypt(soft_key[i], 0, pads[p], pt, ct, (size_t)k), -1);
                errors(e2, sizeof(e2));
                assert_string_equal(e1, e2);
            }
        }
    }
}

/* An RSA_METHOD call on ours and on the software method: both results and
 * error queues equal; returns the result. */
typedef int (*rsa_call)(int flen, const unsigned char *from, unsigned char *to, RSA *rsa,
                        int padding);

static int both(rsa_call f, int i, int flen, const uint8_t *from, int padding, uint8_t *out)
{
    uint8_t theirs[MAX_K];
    char e1[512], e2[512];
    ERR_clear_error();
    const int r1 = f(flen, from, out, eng_rsa[i], padding);
    errors(e1, sizeof(e1));
    const int r2 = f(flen, from, theirs, soft_rsa[i], padding);
    errors(e2, sizeof(e2));
    assert_int_equal(r1, r2);
    assert_string_equal(e1, e2);
    if (r1 > 0 && padding != RSA_PKCS1_OAEP_PADDING &&
        !(padding == RSA_PKCS1_PADDING && f == RSA_public_encrypt)) {
        assert_memory_equal(out, theirs, (size_t)r1); /* deterministic */
    }
    return r1;
}

/* The RSA_METHOD directly: every padding mode the method takes (raw,
 * PKCS#1 v1.5 both ways, OAEP with SHA-1), cross-checked; bad inputs (at or
 * above n, too long, bad padding) give the software method's errors. */
static void test_rsa_method(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++) {
        const int k = (int)sizes[i] / 8;
        uint8_t in[MAX_K], out[MAX_K], back[MAX_K];
        const uint64_t signs = ctr(MBO_CTR_RSA_SIGN), verifies = ctr(MBO_CTR_RSA_VERIFY);
        mbt_rand_bytes(in, (size_t)k);
        in[0] &= 0x7F;
        /* Raw both ways, PKCS#1 v1.5 signature and its check. */
        assert_int_equal(both(RSA_private_encrypt, i, k, in, RSA_NO_PADDING, out), k);
        assert_int_equal(both(RSA_public_decrypt, i, k, out, RSA_NO_PADDING, back), k);
        assert_memory_equal(back, in, (size_t)k);
        assert_int_equal(both(RSA_private_encrypt, i, 35, in, RSA_PKCS1_PADDING, out), k);
        assert_int_equal(both(RSA_public_decrypt, i, k, out, RSA_PKCS1_PADDING, back), 35);
        assert_memory_equal(back, in, 35);
        /* Encryption: ours encrypts, the software decrypts and back. */
        const int pads[] = {RSA_PKCS1_PADDING, RSA_PKCS1_OAEP_PADDING};
        for (int p = 0; p < 2; p++) {
            for (int dir = 0; dir < 2; dir++) {
                RSA *enc = dir ? soft_rsa[i] : eng_rsa[i], *dec = dir ? eng_rsa[i] : soft_rsa[i];
                assert_int_equal(RSA_public_encrypt(20, in, out, enc, pads[p]), k);
                assert_int_equal(RSA_private_decrypt(k, out, back, dec, pads[p]), 20);
                assert_memory_equal(back, in, 20);
            }
            /* A corrupted ciphertext: the same failure on both. */
            out[3] ^= 0x40;
            both(RSA_private_decrypt, i, k, out, pads[p], back);
        }
        assert_true(ctr(MBO_CTR_RSA_SIGN) >= signs + 6);
        assert_true(ctr(MBO_CTR_RSA_VERIFY) >= verifies + 4);
        /* Inputs at or above n, longer than n, wrong lengths for the padding. */
        memset(in, 0xFF, (size_t)k);
        assert_int_equal(both(RSA_private_encrypt, i, k, in, RSA_NO_PADDING, out), -1);
        assert_int_equal(both(RSA_private_decrypt, i, k, in, RSA_NO_PADDING, out), -1);
        assert_int_equal(both(RSA_public_decrypt, i, k, in, RSA_NO_PADDING, out), -1);
        assert_int_equal(both(RSA_public_encrypt, i, k, in, RSA_NO_PADDING, out), -1);
        assert_int_equal(both(RSA_private_decrypt, i, k + 1, in, RSA_NO_PADDING, out), -1);
        assert_int_equal(both(RSA_public_decrypt, i, k + 1, in, RSA_PKCS1_PADDING, out), -1);
        assert_int_equal(both(RSA_private_encrypt, i, k - 10, in, RSA_PKCS1_PADDING, out), -1);
        assert_int_equal(both(RSA_private_encrypt, i, k - 1, in, RSA_NO_PADDING, out), -1);
        assert_int_equal(both(RSA_public_encrypt, i, k, in, RSA_PKCS1_OAEP_PADDING, out), -1);
        /* A block that is not PKCS#1 v1.5 type 1; a padding the method
         * leaves to OpenSSL (X9.31). */
        mbt_rand_bytes(in, (size_t)k);
        in[0] &= 0x7F;
        assert_int_equal(both(RSA_public_decrypt, i, k, in, RSA_PKCS1_PADDING, out), -1);
        assert_int_equal(both(RSA_private_encrypt, i, 20, in, RSA_X931_PADDING, out), k);
        assert_int_equal(both(RSA_private_encrypt, i, 20, in, 12345, out), -1);
    }
}

/* Keys mbcrypto does not serve run on OpenSSL's method: refused once (the
 * refusal is cached with the key), results still right. */
static void test_rsa_fallback(void **state)
{
    (void)state;
    uint8_t in[MAX_K], ours[MAX_K], theirs[MAX_K];
    /* No CRT components: private operations with d alone. */
    RSA *plain = legacy(soft_key[0], eng, 0), *soft = legacy(soft_key[0], NULL, 0);
    const uint64_t refused = ctr(MBO_CTR_RSA_REFUSED), keys = ctr(MBO_CTR_RSA_KEYS);
    const uint64_t signs = ctr(MBO_CTR_RSA_SIGN);
    for (int rep = 0; rep < 2; rep++) {
        mbt_rand_bytes(in, 256);
        in[0] &= 0x7F;
        assert_int_equal(RSA_private_encrypt(256, in, ours, plain, RSA_NO_PADDING), 256);
        assert_int_equal(RSA_private_encrypt(256, in, theirs, soft, RSA_NO_PADDING), 256);
        assert_memory_equal(ours, theirs, 256);
    }
    assert_int_equal(ctr(MBO_CTR_RSA_REFUSED), refused + 1);
    assert_int_equal(ctr(MBO_CTR_RSA_SIGN), signs);
    /* Its public operations are still mbcrypto's. */
    const uint64_t verifies0 = ctr(MBO_CTR_RSA_VERIFY);
    assert_int_equal(RSA_public_decrypt(256, ours, theirs, plain, RSA_NO_PADDING), 256);
    assert_memory_equal(theirs, in, 256);
    assert_int_equal(ctr(MBO_CTR_RSA_VERIFY), verifies0 + 1);
    RSA_free(plain);
    RSA_free(soft);
    /* SERVE none: OpenSSL's method for every key; no key is converted. */
    serve("none");
    RSA *fresh = legacy(soft_key[1], eng, 1);
    const uint64_t verifies = ctr(MBO_CTR_RSA_VERIFY);
    mbt_rand_bytes(in, 384);
    in[0] &= 0x7F;
    assert_int_equal(both(RSA_private_encrypt, 1, 384, in, RSA_NO_PADDING, ours), 384);
    assert_int_equal(RSA_public_decrypt(384, ours, theirs, fresh, RSA_NO_PADDING), 384);
    assert_memory_equal(theirs, in, 384);
    assert_int_equal(ctr(MBO_CTR_RSA_SIGN), signs);
    assert_int_equal(ctr(MBO_CTR_RSA_VERIFY), verifies);
    assert_int_equal(ctr(MBO_CTR_RSA_KEYS), keys);
    serve("all");
    assert_int_equal(RSA_public_decrypt(384, ours, theirs, fresh, RSA_NO_PADDING), 384);
    assert_int_equal(ctr(MBO_CTR_RSA_KEYS), keys + 1);
    assert_int_equal(ctr(MBO_CTR_RSA_VERIFY), verifies + 1);
    RSA_free(fresh);
}

/* --------------------------------------------------------------- async */

struct req {
    int i; /* the key's index */
    uint8_t in[MAX_K], out[MAX_K];
    int ret;
};

static int sign_raw(void *arg)
{
    struct req *r = *(struct req **)arg;
    const int k = (int)sizes[r->i] / 8;
    r->ret = RSA_private_encrypt(k, r->in, r->out, eng_rsa[r->i], RSA_NO_PADDING);
    return 0;
}

/* run_jobs_of: fn(&arg[j]) for n requests in ASYNC jobs, as an event loop
 * runs them: all started, then resumed in turn until done. */
static void run_jobs_of(int (*fn)(void *), void *const *arg, int n)
{
    ASYNC_JOB *job[8] = {NULL};
    ASYNC_WAIT_CTX *ctx[8];
    int status[8], ret;
    for (int j = 0; j < n; j++) {
        ctx[j] = ASYNC_WAIT_CTX_new();
        void *a = arg[j];
        status[j] = ASYNC_start_job(&job[j], ctx[j], &ret, fn, &a, sizeof(a));
        assert_true(status[j] == ASYNC_PAUSE || status[j] == ASYNC_FINISH);
    }
    for (int busy = 1; busy;) {
        busy = 0;
        for (int j = 0; j < n; j++) {
            if (status[j] == ASYNC_PAUSE) {
                status[j] = ASYNC_start_job(&job[j], ctx[j], &ret, fn, NULL, 0);
                assert_true(status[j] == ASYNC_PAUSE || status[j] == ASYNC_FINISH);
                busy |= status[j] == ASYNC_PAUSE;
            }
        }
    }
    for (int j = 0; j < n; j++) {
        ASYNC_WAIT_CTX_free(ctx[j]);
    }
}

/* paused_or_at_once: after n requests of alg in ASYNC jobs (counters
 * pauses, batched and at_once before them), whether they paused and at
 * least min_batched batched, or, where alg's implementation runs requests
 * one by one (mbc_impl_info's lanes == 1: EC and X25519 without IFMA), all
 * ran at once: none paused or batched. */
static void paused_or_at_once(mbc_alg alg, int n, uint64_t pauses, uint64_t batched,
                              uint64_t at_once, uint64_t min_batched)
{
    if (mbc_impl_get_info(alg)->lanes == 1) {
        assert_int_equal(ctr(MBO_CTR_ASYNC_PAUSES), pauses);
        assert_int_equal(ctr(MBO_CTR_BATCHED), batched);
        assert_int_equal(ctr(MBO_CTR_ASYNC_AT_ONCE), at_once + (uint64_t)n);
    } else {
        assert_true(ctr(MBO_CTR_ASYNC_PAUSES) > pauses);
        assert_true(ctr(MBO_CTR_BATCHED) >= batched + min_batched);
    }
}

/* run_jobs: n raw RSA private operations (sign_raw) in ASYNC jobs. */
static void run_jobs(struct req *r, int n)
{
    void *arg[8];
    for (int j = 0; j < n; j++) {
        arg[j] = &r[j];
    }
    run_jobs_of(sign_raw, arg, n);
}

/* Inside ASYNC jobs the RSA_METHOD pauses and batches: a lone request, then
 * four (a full RSA private batch) and eight; results equal OpenSSL's. */
static void test_rsa_async(void **state)
{
    (void)state;
    const int counts[] = {1, 4, 8};
    for (size_t c = 0; c < 3; c++) {
        struct req r[8];
        const uint64_t pauses = ctr(MBO_CTR_ASYNC_PAUSES), batched = ctr(MBO_CTR_BATCHED);
        for (int j = 0; j < counts[c]; j++) {
            r[j].i = j % 2; /* 2048 and 3072: two classes */
            mbt_rand_bytes(r[j].in, MAX_K);
            r[j].in[0] &= 0x7F;
        }
        run_jobs(r, counts[c]);
        for (int j = 0; j < counts[c]; j++) {
            const int k = (int)sizes[r[j].i] / 8;
            uint8_t want[MAX_K];
            assert_int_equal(r[j].ret, k);
            assert_int_equal(
                RSA_private_encrypt(k, r[j].in, want, soft_rsa[r[j].i], RSA_NO_PADDING), k);
            assert_memory_equal(r[j].out, want, (size_t)k);
        }
        assert_true(ctr(MBO_CTR_ASYNC_PAUSES) > pauses);
        if (counts[c] == 8) {
            assert_true(ctr(MBO_CTR_BATCHED) >= batched + 8); /* 4 + 4 */
        }
    }
}

/* ------------------------------------------------------ threads and fork */

#define NUM_THREADS 4
static pthread_barrier_t barrier;
static RSA *shared_rsa;

static void *thread_main(void *arg)
{
    (void)arg;
    uint8_t in[256], out[256], want[256];
    int ok = 1;
    pthread_barrier_wait(&barrier);
    for (int rep = 0; rep < 4 && ok; rep++) {
        mbt_rand_bytes(in, sizeof(in));
        in[0] &= 0x7F;
        ok = RSA_private_encrypt(256, in, out, shared_rsa, RSA_NO_PADDING) == 256 &&
             RSA_private_encrypt(256, in, want, soft_rsa[0], RSA_NO_PADDING) == 256 &&
             memcmp(out, want, 256) == 0;
    }
    return ok ? (void *)1 : NULL;
}

/* Threads that first use one key at the same moment: right results, and
 * one conversion kept for the key. */
static void test_threads(void **state)
{
    (void)state;
    shared_rsa = legacy(soft_key[0], eng, 1);
    const uint64_t keys = ctr(MBO_CTR_RSA_KEYS);
    pthread_t t[NUM_THREADS];
    pthread_barrier_init(&barrier, NULL, NUM_THREADS);
    for (int i = 0; i < NUM_THREADS; i++) {
        assert_int_equal(pthread_create(&t[i], NULL, thread_main, NULL), 0);
    }
    for (int i = 0; i < NUM_THREADS; i++) {
        void *ok;
        pthread_join(t[i], &ok);
        assert_non_null(ok);
    }
    pthread_barrier_destroy(&barrier);
    assert_int_equal(ctr(MBO_CTR_RSA_KEYS), keys + 1);
    RSA_free(shared_rsa);
}

/* check_sign: one private operation on eng_rsa[0], sync or in a job,
 * against OpenSSL; 1 if right. */
static int check_sign(int in_job)
{
    struct req r = {.i = 0};
    uint8_t want[256];
    mbt_rand_bytes(r.in, 256);
    r.in[0] &= 0x7F;
    if (in_job) {
        run_jobs(&r, 1);
    } else {
        struct req *rp = &r;
        sign_raw(&rp);
    }
    return r.ret == 256 &&
           RSA_private_encrypt(256, r.in, want, soft_rsa[0], RSA_NO_PADDING) == 256 &&
           memcmp(r.out, want, 256) == 0;
}

/* A process that used the ENGINE forks: the child and the parent both
 * complete operations, at once and in ASYNC jobs. */
static void test_fork(void **state)
{
    (void)state;
    assert_true(check_sign(1));
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        _exit(check_sign(0) && check_sign(1) && check_sign(1) ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(check_sign(0));
    assert_true(check_sign(1));
}

/* ---------------------------------------------------------------- AES-GCM */

/* A message: key, IV, AAD, data. */
struct msg {
    size_t key_len, iv_len, aad_len, len;
    uint8_t key[32], iv[64], aad[40], data[5000];
};

static void msg_init(struct msg *m, size_t key_len, size_t iv_len, size_t aad_len, size_t len)
{
    m->key_len = key_len;
    m->iv_len = iv_len;
    m->aad_len = aad_len;
    m->len = len;
    mbt_rand_bytes(m->key, sizeof(m->key));
    mbt_rand_bytes(m->iv, sizeof(m->iv));
    mbt_rand_bytes(m->aad, sizeof(m->aad));
    mbt_rand_bytes(m->data, sizeof(m->data));
}

/* aead: m sealed (enc: out, tag written) or opened (out written, tag
 * checked) through impl's cipher (eng, or NULL: the default provider), AAD
 * and data each in two pieces. 1 on success. */
static int aead(ENGINE *impl, int enc, const struct msg *m, uint8_t *out, uint8_t *tag,
                size_t tag_len)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    const size_t half = m->len / 2;
    int l1 = 0, l2 = 0, l3 = 0, l;
    int ok = EVP_CipherInit_ex(c, mbt_ossl_gcm(m->key_len), impl, NULL, NULL, enc) &&
             EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, (int)m->iv_len, NULL) &&
             EVP_CipherInit_ex(c, NULL, NULL, m->key, m->iv, enc);
    if (ok && impl != NULL) {
        assert_ptr_equal(EVP_CIPHER_CTX_get0_cipher(c),
                         ENGINE_get_cipher(impl, EVP_CIPHER_get_nid(mbt_ossl_gcm(m->key_len))));
    }
    if (ok && !enc) {
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, tag);
    }
    ok = ok && EVP_CipherUpdate(c, NULL, &l, m->aad, 3) &&
         EVP_CipherUpdate(c, NULL, &l, m->aad + 3, (int)m->aad_len - 3) &&
         EVP_CipherUpdate(c, out, &l1, m->data, (int)half) &&
         EVP_CipherUpdate(c, out + half, &l2, m->data + half, (int)(m->len - half)) &&
         EVP_CipherFinal_ex(c, out + m->len, &l3) && (size_t)(l1 + l2 + l3) == m->len;
    if (ok && enc) {
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)tag_len, tag);
    }
    EVP_CIPHER_CTX_free(c);
    return ok;
}

/* Plain AEAD: ciphertexts and tags equal the default provider's for every
 * key size, data lengths around the block size, 12- and 60-byte IVs and
 * 16- and 12-byte tags; each side opens the other's; a forged tag fails. */
static void test_gcm_aead(void **state)
{
    (void)state;
    const size_t lens[] = {0, 1, 15, 16, 17, 64, 255, 1000, 4099};
    for (size_t key_len = 16; key_len <= 32; key_len += 8) {
        for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
            struct msg m;
            const size_t tag_len = li % 3 == 2 ? 12 : 16;
            msg_init(&m, key_len, li % 4 == 3 ? 60 : 12, 20, lens[li]);
            uint8_t ct[5000], want[5000], pt[5000], tag[16], wtag[16];
            const uint64_t enc = ctr(MBO_CTR_GCM_ENCRYPT), dec = ctr(MBO_CTR_GCM_DECRYPT);
            assert_true(aead(eng, 1, &m, ct, tag, tag_len));
            assert_true(aead(NULL, 1, &m, want, wtag, tag_len));
            assert_memory_equal(ct, want, m.len);
            assert_memory_equal(tag, wtag, tag_len);
            struct msg c = m;
            memcpy(c.data, ct, m.len);
            assert_true(aead(eng, 0, &c, pt, wtag, tag_len));
            assert_memory_equal(pt, m.data, m.len);
            assert_true(aead(NULL, 0, &c, pt, tag, tag_len));
            tag[tag_len - 1] ^= 0x80;
            assert_false(aead(eng, 0, &c, pt, tag, tag_len));
            assert_false(aead(NULL, 0, &c, pt, tag, tag_len));
            assert_int_equal(ctr(MBO_CTR_GCM_ENCRYPT), enc + 1);
            assert_int_equal(ctr(MBO_CTR_GCM_DECRYPT), dec + 2);
        }
    }
}

/* open_when: opens c (its AAD and data in one piece each) through impl's
 * cipher with the tag set at point when: 0 before key and IV (the cipher
 * alone set: python3-cryptography's order), 1 between key and IV, 2 after
 * the IV, 3 after the data; then the same message again on that context
 * without setting the tag (OpenSSL keeps it). 1 if both opened. */
static int open_when(ENGINE *impl, int when, const struct msg *c, uint8_t *pt, const uint8_t *tag,
                     size_t tag_len)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int l, ok = 1;
    for (int pass = 0; pass < 2 && ok; pass++) {
        const int set = pass == 0;
        ok = (pass > 0 || EVP_DecryptInit_ex(x, mbt_ossl_gcm(c->key_len), impl, NULL, NULL)) &&
             (!set || when != 0 ||
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, (void *)tag) == 1) &&
             EVP_DecryptInit_ex(x, NULL, NULL, c->key, NULL) &&
             (!set || when != 1 ||
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, (void *)tag) == 1) &&
             EVP_DecryptInit_ex(x, NULL, NULL, NULL, c->iv) &&
             (!set || when != 2 ||
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, (void *)tag) == 1) &&
             EVP_DecryptUpdate(x, NULL, &l, c->aad, (int)c->aad_len) &&
             EVP_DecryptUpdate(x, pt, &l, c->data, (int)c->len) &&
             (!set || when != 3 ||
              EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, (void *)tag) == 1) &&
             EVP_DecryptFinal_ex(x, pt + c->len, &l) == 1;
    }
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    return ok;
}

/* Issue 22, items 1 and 10: through the ENGINE, a tag set at any point
 * before final (before key and IV too) and of any length 1..16 opens a good
 * message, and is kept for the next one, as with OpenSSL's own GCM; a forged
 * tag fails with both. */
static void test_gcm_tag_any_time(void **state)
{
    (void)state;
    struct msg m;
    msg_init(&m, 16, 12, 16, 333);
    uint8_t ct[5000], pt[5000], tag[16];
    assert_true(aead(NULL, 1, &m, ct, tag, 16));
    struct msg c = m;
    memcpy(c.data, ct, m.len);
    for (int when = 0; when < 4; when++) {
        for (size_t n = 16; n >= 1; n--) {
            memset(pt, 0, sizeof(pt));
            assert_true(open_when(eng, when, &c, pt, tag, n));
            assert_memory_equal(pt, m.data, m.len);
            assert_true(open_when(NULL, when, &c, pt, tag, n));
            tag[n - 1] ^= 0x04;
            assert_false(open_when(eng, when, &c, pt, tag, n));
            assert_false(open_when(NULL, when, &c, pt, tag, n));
            tag[n - 1] ^= 0x04;
        }
    }
}

/* tls_record: m's key and IV (fixed_len bytes of it fixed, or -1: all) in
 * libssl's TLS 1.2 record call on rec with impl's cipher. */
static int tls_record(ENGINE *impl, int enc, const struct msg *m, int fixed_len, uint8_t aad[13],
                      uint8_t *rec, size_t len)
{
    return mbt_ossl_gcm_tls_record(impl, m->key_len, m->key, m->iv, fixed_len, enc, aad, rec, len);
}

/* TLS 1.2 records: with the whole IV fixed, ours seals what the default
 * provider seals; with 4 fixed bytes (the explicit IV drawn at random) each
 * side opens the other's records; a forged record fails and releases no
 * plaintext. */
static void test_gcm_tls(void **state)
{
    (void)state;
    for (size_t key_len = 16; key_len <= 32; key_len += 8) {
        struct msg m;
        msg_init(&m, key_len, 12, 13, 700);
        const size_t n = m.len, len = 8 + n + 16;
        uint8_t aad[13], ours[8 + 700 + 16], theirs[8 + 700 + 16];
        memcpy(aad, m.aad, 13);
        aad[11] = (uint8_t)((n + 8) >> 8); /* the record length libssl gives */
        aad[12] = (uint8_t)(n + 8);
        memcpy(ours + 8, m.data, n);
        memcpy(theirs + 8, m.data, n);
        assert_int_equal(tls_record(eng, 1, &m, -1, aad, ours, len), (int)len);
        assert_int_equal(tls_record(NULL, 1, &m, -1, aad, theirs, len), (int)len);
        assert_memory_equal(ours, theirs, len);
        uint8_t daad[13];
        memcpy(daad, aad, 13);
        daad[11] = (uint8_t)(len >> 8);
        daad[12] = (uint8_t)len;
        for (int dir = 0; dir < 2; dir++) {
            ENGINE *seal = dir ? NULL : eng, *open = dir ? eng : NULL;
            uint8_t rec[8 + 700 + 16];
            memcpy(rec + 8, m.data, n);
            assert_int_equal(tls_record(seal, 1, &m, 4, aad, rec, len), (int)len);
            /* Opening, OpenSSL's own legacy GCM (and so ours) returns the
             * plaintext's length, the default provider's the record's. */
            assert_int_equal(tls_record(open, 0, &m, 4, daad, rec, len), open ? (int)n : (int)len);
            assert_memory_equal(rec + 8, m.data, n);
        }
        /* Forged, truncated, not in place. */
        uint8_t rec[8 + 700 + 16], zero[700] = {0};
        memcpy(rec, ours, len);
        rec[50] ^= 1;
        assert_int_equal(tls_record(eng, 0, &m, 4, daad, rec, len), -1);
        assert_memory_equal(rec + 8, zero, n);
        uint8_t short_aad[13];
        memcpy(short_aad, daad, 13);
        short_aad[11] = 0;
        short_aad[12] = 20;
        memcpy(rec, ours, len);
        assert_int_equal(tls_record(eng, 0, &m, 4, short_aad, rec, 20), -1);
        EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
        uint8_t other[8 + 700 + 16];
        assert_true(EVP_CipherInit_ex(c, mbt_ossl_gcm(key_len), eng, m.key, NULL, 1));
        assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IV_FIXED, 4, m.iv));
        assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_TLS1_AAD, 13, aad), 16);
        assert_int_equal(EVP_Cipher(c, other, ours, (unsigned)len), -1);
        /* A malformed AAD: shorter than the explicit IV; 12 bytes. */
        aad[11] = 0;
        aad[12] = 7;
        assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) <= 0);
        assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_TLS1_AAD, 12, aad) <= 0);
        EVP_CIPHER_CTX_free(c);
        ERR_clear_error();
    }
}

/* The IV controls libssl uses when it handles the explicit IV itself:
 * EVP_CTRL_GCM_IV_GEN counts on from the fixed IV, EVP_CTRL_GCM_SET_IV_INV
 * sets the opener's; the messages match the default provider's. A copied
 * context finishes the message it copied. */
static void test_gcm_iv_controls(void **state)
{
    (void)state;
    struct msg m;
    msg_init(&m, 16, 12, 13, 300);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    uint8_t explicit_iv[8], ct[300], tag[16], wtag[16], want[300];
    int l;
    assert_true(EVP_CipherInit_ex(c, EVP_aes_128_gcm(), eng, m.key, NULL, 1));
    assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IV_FIXED, -1, m.iv));
    assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_IV_GEN, 8, explicit_iv));
    assert_memory_equal(explicit_iv, m.iv + 4, 8);
    assert_true(EVP_CipherUpdate(c, NULL, &l, m.aad, 13));
    assert_true(EVP_CipherUpdate(c, ct, &l, m.data, 100));
    /* The copy and the original each finish the message. */
    EVP_CIPHER_CTX *copy = EVP_CIPHER_CTX_new();
    assert_true(EVP_CIPHER_CTX_copy(copy, c));
    uint8_t ct2[300], tag2[16];
    assert_true(EVP_CipherUpdate(copy, ct2 + 100, &l, m.data + 100, 200));
    assert_true(EVP_CipherFinal_ex(copy, ct2 + 300, &l));
    assert_true(EVP_CIPHER_CTX_ctrl(copy, EVP_CTRL_AEAD_GET_TAG, 16, tag2));
    assert_true(EVP_CipherUpdate(c, ct + 100, &l, m.data + 100, 200));
    assert_true(EVP_CipherFinal_ex(c, ct + 300, &l));
    assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag));
    assert_true(aead(NULL, 1, &m, want, wtag, 16));
    assert_memory_equal(ct, want, 300);
    assert_memory_equal(ct2 + 100, want + 100, 200);
    assert_memory_equal(tag, wtag, 16);
    assert_memory_equal(tag2, wtag, 16);
    /* The copy keyed again (the key length it keeps came with the copied
     * cipher data) seals the same message. */
    assert_true(EVP_CipherInit_ex(copy, NULL, NULL, m.key, m.iv, 1) &&
                EVP_CipherUpdate(copy, NULL, &l, m.aad, 13) &&
                EVP_CipherUpdate(copy, ct2, &l, m.data, 300) &&
                EVP_CipherFinal_ex(copy, ct2 + 300, &l) &&
                EVP_CIPHER_CTX_ctrl(copy, EVP_CTRL_AEAD_GET_TAG, 16, tag2));
    assert_memory_equal(ct2, want, 300);
    assert_memory_equal(tag2, wtag, 16);
    EVP_CIPHER_CTX_free(copy);
    /* The next IV is one more. */
    assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_IV_GEN, 8, explicit_iv));
    assert_int_equal(explicit_iv[7], (uint8_t)(m.iv[11] + 1));
    EVP_CIPHER_CTX_free(c);
    /* Opening: 4 fixed bytes, then the explicit IV of the record. */
    c = EVP_CIPHER_CTX_new();
    uint8_t pt[300];
    assert_true(EVP_CipherInit_ex(c, EVP_aes_128_gcm(), eng, m.key, NULL, 0));
    assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IV_FIXED, 4, m.iv));
    assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IV_INV, 8, m.iv + 4));
    assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, wtag));
    assert_true(EVP_CipherUpdate(c, NULL, &l, m.aad, 13));
    assert_true(EVP_CipherUpdate(c, pt, &l, want, 300));
    assert_true(EVP_CipherFinal_ex(c, pt + 300, &l));
    assert_memory_equal(pt, m.data, 300);
    /* SET_IV_INV while sealing is refused, as OpenSSL's own GCM does. */
    assert_true(EVP_CipherInit_ex(c, NULL, NULL, NULL, NULL, 1));
    assert_false(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IV_INV, 8, m.iv + 4) > 0);
    EVP_CIPHER_CTX_free(c);
    ERR_clear_error();
}

/* Calls out of order or with bad arguments are refused, never crash. */
static void test_gcm_bad_input(void **state)
{
    (void)state;
    struct msg m;
    msg_init(&m, 32, 12, 20, 64);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    uint8_t out[100], tag[20];
    int l;
    assert_true(EVP_CipherInit_ex(c, EVP_aes_256_gcm(), eng, m.key, NULL, 1));
    assert_false(EVP_CipherUpdate(c, out, &l, m.data, 64));                   /* no IV */
    assert_false(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0); /* no final */
    assert_false(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, tag) > 0); /* sealing */
    assert_false(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, 0, NULL) > 0);
    assert_false(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_IV_GEN, 8, tag) > 0); /* no fixed IV */
    assert_false(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IV_FIXED, 3, m.iv) > 0);
    assert_false(EVP_CIPHER_CTX_ctrl(c, 12345, 0, NULL) > 0); /* unknown control */
    assert_true(EVP_CipherInit_ex(c, NULL, NULL, NULL, m.iv, 1));
    assert_true(EVP_CipherUpdate(c, out, &l, m.data, 64));
    assert_true(EVP_CipherFinal_ex(c, out, &l));
    assert_false(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 17, tag) > 0);
    assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag));
    assert_false(EVP_CipherUpdate(c, out, &l, m.data, 64)); /* the IV is used up */
    /* Opening: no tag set, a 17-byte tag. */
    assert_true(EVP_CipherInit_ex(c, NULL, NULL, NULL, m.iv, 0));
    assert_true(EVP_CipherUpdate(c, out, &l, m.data, 64));
    assert_false(EVP_CipherFinal_ex(c, out, &l));
    assert_false(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 17, tag) > 0);
    EVP_CIPHER_CTX_free(c);
    ERR_clear_error();
}

/* AES-GCM not served: the selector gives OpenSSL's built-in cipher, whose
 * results are the same; nothing is counted. */
static void test_gcm_not_served(void **state)
{
    (void)state;
    serve("rsa");
    assert_ptr_equal(ENGINE_get_cipher(eng, NID_aes_128_gcm), EVP_aes_128_gcm());
    struct msg m;
    msg_init(&m, 16, 12, 20, 500);
    uint8_t ct[500], want[500], tag[16], wtag[16];
    const uint64_t enc = ctr(MBO_CTR_GCM_ENCRYPT);
    assert_true(aead(eng, 1, &m, ct, tag, 16));
    assert_true(aead(NULL, 1, &m, want, wtag, 16));
    assert_memory_equal(ct, want, 500);
    assert_memory_equal(tag, wtag, 16);
    assert_int_equal(ctr(MBO_CTR_GCM_ENCRYPT), enc);
    serve("all");
    assert_ptr_not_equal(ENGINE_get_cipher(eng, NID_aes_128_gcm), EVP_aes_128_gcm());
}

/* --------------------------------------------------------------- ECDSA, ECDH */

/* ec_sign: key's DER signature of the digest dgst (EVP_PKEY_sign). */
static size_t ec_sign(EVP_PKEY *key, uint8_t *sig, const uint8_t *dgst, size_t dlen)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    size_t len = MAX_DER;
    assert_non_null(c);
    assert_int_equal(EVP_PKEY_sign_init(c), 1);
    assert_int_equal(EVP_PKEY_sign(c, sig, &len, dgst, dlen), 1);
    EVP_PKEY_CTX_free(c);
    return len;
}

/* ec_verify: EVP_PKEY_verify's verdict; its errors are left queued. */
static int ec_verify(EVP_PKEY *key, const uint8_t *sig, size_t len, const uint8_t *dgst,
                     size_t dlen)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    assert_non_null(c);
    assert_int_equal(EVP_PKEY_verify_init(c), 1);
    const int r = EVP_PKEY_verify(c, sig, len, dgst, dlen);
    EVP_PKEY_CTX_free(c);
    return r;
}

/* ec_derive: the shared secret of key and peer (EVP_PKEY_derive); its
 * length, or 0 (errors queued). */
static size_t ec_derive(EVP_PKEY *key, EVP_PKEY *peer, uint8_t *out)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    size_t len = 66;
    assert_non_null(c);
    const int ok = EVP_PKEY_derive_init(c) == 1 && EVP_PKEY_derive_set_peer(c, peer) == 1 &&
                   EVP_PKEY_derive(c, out, &len) == 1;
    EVP_PKEY_CTX_free(c);
    return ok ? len : 0;
}

/* both_verify: the verdicts of the ENGINE's key and the software one on
 * sig, with equal error queues; returns the verdict. */
static int both_verify(int i, const uint8_t *sig, size_t len, const uint8_t *dgst, size_t dlen)
{
    char e1[512], e2[512];
    ERR_clear_error();
    const int r1 = ec_verify(eng_ec[i], sig, len, dgst, dlen);
    errors(e1, sizeof(e1));
    const int r2 = ec_verify(soft_ec[i], sig, len, dgst, dlen);
    errors(e2, sizeof(e2));
    assert_int_equal(r1, r2);
    assert_string_equal(e1, e2);
    return r1;
}

/* with_r: sig (DER) with r replaced by v. */
static size_t with_r(const uint8_t *sig, size_t len, const BIGNUM *v, uint8_t *out)
{
    const unsigned char *p = sig;
    ECDSA_SIG *s = d2i_ECDSA_SIG(NULL, &p, (long)len);
    assert_non_null(s);
    const BIGNUM *r0, *s0;
    ECDSA_SIG_get0(s, &r0, &s0);
    assert_int_equal(ECDSA_SIG_set0(s, BN_dup(v), BN_dup(s0)), 1);
    unsigned char *q = out;
    const int n = i2d_ECDSA_SIG(s, &q);
    ECDSA_SIG_free(s);
    assert_true(n > 0);
    return (size_t)n;
}

/* ECDSA through EVP: signatures of digests of every length (shorter and
 * longer than the order, truncated alike) verify on the other side and are
 * counted for P-256 and P-384; P-521 is refused once and runs on OpenSSL's
 * method. Forged signatures, r = 0, r = n and malformed DER fail on both
 * with the same errors. */
static void test_ecdsa(void **state)
{
    (void)state;
    const size_t dlens[] = {0, 1, 20, 32, 48, 64, 100};
    for (int i = 0; i < NUM_CURVES; i++) {
        const uint64_t signs = ctr(MBO_CTR_ECDSA_SIGN), verifies = ctr(MBO_CTR_ECDSA_VERIFY);
        const uint64_t refused = ctr(MBO_CTR_EC_REFUSED);
        const size_t nd = sizeof(dlens) / sizeof(dlens[0]);
        for (size_t d = 0; d < nd; d++) {
            uint8_t dgst[100], ours[MAX_DER], theirs[MAX_DER];
            mbt_rand_bytes(dgst, sizeof(dgst));
            const size_t l1 = ec_sign(eng_ec[i], ours, dgst, dlens[d]);
            const size_t l2 = ec_sign(soft_ec[i], theirs, dgst, dlens[d]);
            assert_int_equal(ec_verify(soft_ec[i], ours, l1, dgst, dlens[d]), 1);
            assert_int_equal(ec_verify(eng_ec[i], theirs, l2, dgst, dlens[d]), 1);
            /* A digest differing in its last used byte; a bit of s. */
            if (dlens[d] > 0) {
                dgst[(dlens[d] < 32 ? dlens[d] : 32) - 1] ^= 1;
                assert_int_equal(both_verify(i, ours, l1, dgst, dlens[d]), 0);
                dgst[(dlens[d] < 32 ? dlens[d] : 32) - 1] ^= 1;
            }
            ours[l1 - 3] ^= 0x20;
            assert_int_equal(both_verify(i, ours, l1, dgst, dlens[d]), 0);
        }
        const uint64_t served = i < 2 ? nd : 0;
        assert_int_equal(ctr(MBO_CTR_ECDSA_SIGN), signs + served);
        assert_int_equal(ctr(MBO_CTR_ECDSA_VERIFY), verifies + 3 * served - (i < 2));
        assert_int_equal(ctr(MBO_CTR_EC_REFUSED), refused + (i == 2));
        /* r = 0 and r = n (outside [1, n-1]), truncated DER. */
        uint8_t dgst[32], sig[MAX_DER], bad[MAX_DER];
        mbt_rand_bytes(dgst, sizeof(dgst));
        const size_t len = ec_sign(eng_ec[i], sig, dgst, sizeof(dgst));
        BIGNUM *n = NULL, *zero = BN_new();
        assert_int_equal(EVP_PKEY_get_bn_param(soft_ec[i], OSSL_PKEY_PARAM_EC_ORDER, &n), 1);
        BN_zero(zero);
        assert_int_equal(both_verify(i, bad, with_r(sig, len, zero, bad), dgst, 32), 0);
        assert_int_equal(both_verify(i, bad, with_r(sig, len, n, bad), dgst, 32), 0);
        assert_true(both_verify(i, sig, len - 1, dgst, 32) <= 0);
        BN_free(n);
        BN_free(zero);
    }
}

/* ECDH through EVP: the ENGINE's key and the software one derive the same
 * secret with a peer, counted for P-256 and P-384. */
static void test_ecdh(void **state)
{
    (void)state;
    for (int i = 0; i < NUM_CURVES; i++) {
        const uint64_t ecdh = ctr(MBO_CTR_ECDH);
        for (int rep = 0; rep < 2; rep++) {
            uint8_t ours[66], theirs[66], back[66];
            const size_t len = ec_derive(eng_ec[i], peer_ec[i], ours);
            assert_true(len > 0);
            assert_int_equal(ec_derive(soft_ec[i], peer_ec[i], theirs), len);
            assert_memory_equal(ours, theirs, len);
            assert_int_equal(ec_derive(peer_ec[i], eng_ec[i], back), len);
            assert_memory_equal(back, ours, len);
        }
        assert_int_equal(ctr(MBO_CTR_ECDH), ecdh + (i < 2 ? 2 : 0));
    }
}

/* soft_copy: ec with OpenSSL's own method (the same key values). */
static EC_KEY *soft_copy(const EC_KEY *ec)
{
    EC_KEY *c = EC_KEY_dup(ec);
    assert_non_null(c);
    assert_int_equal(EC_KEY_set_method(c, EC_KEY_OpenSSL()), 1);
    return c;
}

/* ECDH_compute_key of key and peer; the secret's length or <= 0, errors
 * queued. */
static int compute(const EC_KEY *key, const EC_POINT *peer, uint8_t *out)
{
    return ECDH_compute_key(out, 66, peer, key, NULL);
}

/* The EC_KEY API: new keys get the ENGINE's method; ECDSA_sign,
 * ECDSA_do_sign and their checks cross-verify with OpenSSL's method;
 * precomputed (kinv, r) run on OpenSSL's; regenerating or setting a key
 * replaces its cached objects (signatures then verify under the new key
 * only); ECDH_compute_key equals OpenSSL's, and refuses points at infinity,
 * of another curve (as OpenSSL does) and off the curve. */
static void test_ec_key_api(void **state)
{
    (void)state;
    EC_KEY *ek = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1);
    assert_non_null(ek);
    assert_ptr_equal(EC_KEY_get_method(ek), ENGINE_get_EC(eng));
    assert_int_equal(EC_KEY_generate_key(ek), 1);
    EC_KEY *sw = soft_copy(ek);
    uint8_t dgst[32], sig[MAX_DER];
    unsigned int len = sizeof(sig);
    mbt_rand_bytes(dgst, sizeof(dgst));
    const uint64_t signs = ctr(MBO_CTR_ECDSA_SIGN), verifies = ctr(MBO_CTR_ECDSA_VERIFY);
    assert_int_equal(ECDSA_sign(0, dgst, 32, sig, &len, ek), 1);
    assert_int_equal(ECDSA_verify(0, dgst, 32, sig, (int)len, sw), 1);
    ECDSA_SIG *s = ECDSA_do_sign(dgst, 32, sw);
    assert_non_null(s);
    assert_int_equal(ECDSA_do_verify(dgst, 32, s, ek), 1);
    ECDSA_SIG_free(s);
    assert_int_equal(ctr(MBO_CTR_ECDSA_SIGN), signs + 1);
    assert_int_equal(ctr(MBO_CTR_ECDSA_VERIFY), verifies + 1);
    /* Precomputed nonce: OpenSSL's signing. */
    BIGNUM *kinv = NULL, *rp = NULL;
    assert_int_equal(ECDSA_sign_setup(ek, NULL, &kinv, &rp), 1);
    len = sizeof(sig);
    assert_int_equal(ECDSA_sign_ex(0, dgst, 32, sig, &len, kinv, rp, ek), 1);
    assert_int_equal(ECDSA_verify(0, dgst, 32, sig, (int)len, sw), 1);
    assert_int_equal(ctr(MBO_CTR_ECDSA_SIGN), signs + 1);
    BN_clear_free(kinv);
    BN_free(rp);
    /* A new key in the same object: signatures follow it. */
    const uint64_t keys = ctr(MBO_CTR_EC_KEYS);
    assert_int_equal(EC_KEY_generate_key(ek), 1);
    len = sizeof(sig);
    assert_int_equal(ECDSA_sign(0, dgst, 32, sig, &len, ek), 1);
    assert_int_equal(ECDSA_verify(0, dgst, 32, sig, (int)len, sw), 0);
    EC_KEY *sw2 = soft_copy(ek);
    assert_int_equal(ECDSA_verify(0, dgst, 32, sig, (int)len, sw2), 1);
    /* The old key's values set again. */
    assert_int_equal(EC_KEY_set_private_key(ek, EC_KEY_get0_private_key(sw)), 1);
    assert_int_equal(EC_KEY_set_public_key(ek, EC_KEY_get0_public_key(sw)), 1);
    len = sizeof(sig);
    assert_int_equal(ECDSA_sign(0, dgst, 32, sig, &len, ek), 1);
    assert_int_equal(ECDSA_verify(0, dgst, 32, sig, (int)len, sw), 1);
    assert_int_equal(ctr(MBO_CTR_EC_KEYS), keys + 2);
    /* ECDH: equal secrets; bad points. */
    const EC_GROUP *g = EC_KEY_get0_group(ek);
    const uint64_t ecdh = ctr(MBO_CTR_ECDH);
    uint8_t ours[66], theirs[66];
    assert_int_equal(compute(ek, EC_KEY_get0_public_key(sw2), ours), 32);
    assert_int_equal(compute(sw, EC_KEY_get0_public_key(sw2), theirs), 32);
    assert_memory_equal(ours, theirs, 32);
    assert_int_equal(ctr(MBO_CTR_ECDH), ecdh + 1);
    EC_POINT *inf = EC_POINT_new(g);
    assert_int_equal(EC_POINT_set_to_infinity(g, inf), 1);
    EC_GROUP *g384 = EC_GROUP_new_by_curve_name(NID_secp384r1);
    EC_POINT *other = EC_POINT_dup(EC_GROUP_get0_generator(g384), g384);
    const EC_POINT *bad[2] = {inf, other};
    for (int b = 0; b < 2; b++) {
        char e1[512], e2[512];
        ERR_clear_error();
        assert_true(compute(ek, bad[b], ours) <= 0);
        errors(e1, sizeof(e1));
        assert_true(compute(sw, bad[b], theirs) <= 0);
        errors(e2, sizeof(e2));
        assert_string_equal(e1, e2);
    }
    /* Off the curve: (x, y + 1) of a point, set without OpenSSL's check. */
    BIGNUM *x = BN_new(), *y = BN_new();
    EC_POINT *off = EC_POINT_new(g);
    assert_int_equal(EC_POINT_get_affine_coordinates(g, EC_KEY_get0_public_key(sw2), x, y, NULL),
                     1);
    assert_int_equal(BN_add_word(y, 1), 1);
    assert_int_equal(EC_POINT_set_Jprojective_coordinates_GFp(g, off, x, y, BN_value_one(), NULL),
                     1);
    assert_int_equal(EC_POINT_is_on_curve(g, off, NULL), 0);
    char e1[512], want[32];
    ERR_clear_error();
    assert_true(compute(ek, off, ours) <= 0);
    errors(e1, sizeof(e1));
    snprintf(want, sizeof(want), "%d:%d ", ERR_LIB_EC, EC_R_POINT_IS_NOT_ON_CURVE);
    assert_string_equal(e1, want);
    assert_int_equal(ctr(MBO_CTR_ECDH), ecdh + 2);
    BN_free(x);
    BN_free(y);
    EC_POINT_free(off);
    EC_POINT_free(inf);
    EC_POINT_free(other);
    EC_GROUP_free(g384);
    EC_KEY_free(sw);
    EC_KEY_free(sw2);
    EC_KEY_free(ek);
}

/* One EC request of an ASYNC job: a signature or a shared secret. */
struct ec_req {
    int i;      /* the curve */
    int derive; /* ECDH, else ECDSA */
    uint8_t dgst[32];
    uint8_t out[MAX_DER];
    size_t len;
};

static int ec_job(void *arg)
{
    struct ec_req *r = *(struct ec_req **)arg;
    r->len = r->derive ? ec_derive(eng_ec[r->i], peer_ec[r->i], r->out)
                       : ec_sign(eng_ec[r->i], r->out, r->dgst, sizeof(r->dgst));
    return 0;
}

/* Inside ASYNC jobs ECDSA and ECDH pause and batch (8 of a curve fill a
 * batch), or run at once on a one-lane implementation; the results verify,
 * the secrets equal OpenSSL's. */
static void test_ec_async(void **state)
{
    (void)state;
    for (int derive = 0; derive < 2; derive++) {
        struct ec_req r[8];
        void *arg[8];
        const uint64_t pauses = ctr(MBO_CTR_ASYNC_PAUSES), batched = ctr(MBO_CTR_BATCHED);
        const uint64_t at_once = ctr(MBO_CTR_ASYNC_AT_ONCE);
        const uint64_t ops = ctr(derive ? MBO_CTR_ECDH : MBO_CTR_ECDSA_SIGN);
        for (int j = 0; j < 8; j++) {
            r[j].i = j < 6 ? 0 : 1; /* 6 on P-256 (a partial batch), 2 on P-384 */
            r[j].derive = derive;
            mbt_rand_bytes(r[j].dgst, sizeof(r[j].dgst));
            arg[j] = &r[j];
        }
        run_jobs_of(ec_job, arg, 8);
        for (int j = 0; j < 8; j++) {
            if (derive) {
                uint8_t want[66];
                assert_int_equal(ec_derive(soft_ec[r[j].i], peer_ec[r[j].i], want), r[j].len);
                assert_memory_equal(r[j].out, want, r[j].len);
            } else {
                assert_int_equal(ec_verify(soft_ec[r[j].i], r[j].out, r[j].len, r[j].dgst, 32), 1);
            }
        }
        assert_int_equal(ctr(derive ? MBO_CTR_ECDH : MBO_CTR_ECDSA_SIGN), ops + 8);
        paused_or_at_once(MBC_ALG_EC, 8, pauses, batched, at_once, 6);
    }
}

/* ECDSA and ECDH not served: OpenSSL's method, nothing counted, results
 * still right. */
static void test_ec_not_served(void **state)
{
    (void)state;
    serve("rsa,aes-gcm");
    const uint64_t signs = ctr(MBO_CTR_ECDSA_SIGN), ecdh = ctr(MBO_CTR_ECDH);
    uint8_t dgst[32], sig[MAX_DER], ours[66], theirs[66];
    mbt_rand_bytes(dgst, sizeof(dgst));
    const size_t len = ec_sign(eng_ec[0], sig, dgst, 32);
    assert_int_equal(ec_verify(soft_ec[0], sig, len, dgst, 32), 1);
    assert_int_equal(ec_derive(eng_ec[1], peer_ec[1], ours), 48);
    assert_int_equal(ec_derive(soft_ec[1], peer_ec[1], theirs), 48);
    assert_memory_equal(ours, theirs, 48);
    assert_int_equal(ctr(MBO_CTR_ECDSA_SIGN), signs);
    assert_int_equal(ctr(MBO_CTR_ECDH), ecdh);
    serve("ecdh");
    assert_int_equal(ec_derive(eng_ec[1], peer_ec[1], ours), 48);
    assert_int_equal(ctr(MBO_CTR_ECDH), ecdh + 1);
    ec_sign(eng_ec[0], sig, dgst, 32);
    assert_int_equal(ctr(MBO_CTR_ECDSA_SIGN), signs);
    serve("all");
}

/* ------------------------------------------------------------------ X25519 */

/* x_derive: the X25519 secret of key and peer through impl's method (eng,
 * or NULL: the default provider); 32, or 0 (errors queued). */
static size_t x_derive(ENGINE *impl, EVP_PKEY *key, EVP_PKEY *peer, uint8_t out[32])
{
    EVP_PKEY_CTX *c =
        impl != NULL ? EVP_PKEY_CTX_new(key, impl) : EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    size_t len = 0;
    assert_non_null(c);
    int ok = EVP_PKEY_derive_init(c) == 1 && EVP_PKEY_derive_set_peer(c, peer) == 1 &&
             EVP_PKEY_derive(c, NULL, &len) == 1 && len == 32;
    ok = ok && EVP_PKEY_derive(c, out, &len) == 1;
    EVP_PKEY_CTX_free(c);
    return ok ? len : 0;
}

/* x_raw_pub: an X25519 public key of the 32 bytes u (the default
 * provider's). */
static EVP_PKEY *x_raw_pub(const uint8_t u[32])
{
    EVP_PKEY *k = EVP_PKEY_new_raw_public_key_ex(NULL, "X25519", NULL, u, 32);
    assert_non_null(k);
    return k;
}

/* X25519: the selector gives the method for X25519 only; shared secrets
 * of the default provider's keys, of keys the method generated and of a
 * peer made as libssl 3.0 makes a key share's (paramgen, then the encoded
 * point) equal the default provider's and are counted; a low-order peer
 * fails on both, with no secret; a buffer too short is refused. */
static void test_x25519(void **state)
{
    (void)state;
    EVP_PKEY_METHOD *pm = NULL;
    assert_non_null(ENGINE_get_pkey_meth(eng, EVP_PKEY_X25519));
    const int *nids;
    assert_int_equal(ENGINE_get_pkey_meths(eng)(eng, NULL, &nids, 0), 1);
    assert_int_equal(nids[0], EVP_PKEY_X25519);
    assert_int_equal(ENGINE_get_pkey_meths(eng)(eng, &pm, NULL, EVP_PKEY_ED25519), 0);
    assert_null(pm);
    EVP_PKEY *a = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
    EVP_PKEY *b = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
    assert_non_null(a);
    assert_non_null(b);
    uint8_t ours[32], theirs[32];
    const uint64_t derives = ctr(MBO_CTR_X25519_DERIVE);
    assert_int_equal(x_derive(eng, a, b, ours), 32);
    assert_int_equal(x_derive(NULL, b, a, theirs), 32);
    assert_memory_equal(ours, theirs, 32);
    assert_int_equal(ctr(MBO_CTR_X25519_DERIVE), derives + 1);
    /* A key generated through the method (OpenSSL's generation). */
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, eng);
    EVP_PKEY *g = NULL;
    assert_int_equal(EVP_PKEY_keygen_init(c), 1);
    assert_int_equal(EVP_PKEY_keygen(c, &g), 1);
    EVP_PKEY_CTX_free(c);
    assert_int_equal(x_derive(eng, g, a, ours), 32);
    assert_int_equal(x_derive(NULL, a, g, theirs), 32);
    assert_memory_equal(ours, theirs, 32);
    /* libssl 3.0's peer key: paramgen, then the encoded public key. */
    c = EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, eng);
    EVP_PKEY *p = NULL;
    uint8_t u[32];
    size_t ul = sizeof(u);
    assert_int_equal(EVP_PKEY_paramgen_init(c), 1);
    assert_int_equal(EVP_PKEY_paramgen(c, &p), 1);
    EVP_PKEY_CTX_free(c);
    assert_int_equal(EVP_PKEY_get_raw_public_key(b, u, &ul), 1);
    assert_int_equal(EVP_PKEY_set1_encoded_public_key(p, u, 32), 1);
    assert_int_equal(x_derive(eng, g, p, ours), 32);
    assert_int_equal(x_derive(NULL, b, g, theirs), 32);
    assert_memory_equal(ours, theirs, 32);
    assert_int_equal(ctr(MBO_CTR_X25519_DERIVE), derives + 3);
    /* Low-order peers (u = 0, u = 1): no secret on either side. */
    for (int v = 0; v < 2; v++) {
        uint8_t lo[32] = {(uint8_t)v}, out[32];
        EVP_PKEY *bad = x_raw_pub(lo);
        memset(out, 0x55, sizeof(out));
        assert_int_equal(x_derive(eng, a, bad, out), 0);
        const uint8_t zero[32] = {0};
        assert_memory_equal(out, zero, 32);
        assert_int_equal(x_derive(NULL, a, bad, out), 0);
        EVP_PKEY_free(bad);
        ERR_clear_error();
    }
    assert_int_equal(ctr(MBO_CTR_X25519_DERIVE), derives + 5);
    /* A buffer too short. */
    c = EVP_PKEY_CTX_new(a, eng);
    size_t len = 31;
    assert_int_equal(EVP_PKEY_derive_init(c), 1);
    assert_int_equal(EVP_PKEY_derive_set_peer(c, b), 1);
    assert_true(EVP_PKEY_derive(c, ours, &len) <= 0);
    EVP_PKEY_CTX_free(c);
    ERR_clear_error();
    /* Not served: OpenSSL's derive, the same secret, nothing counted. */
    serve("rsa");
    assert_int_equal(x_derive(eng, a, b, ours), 32);
    assert_int_equal(x_derive(NULL, a, b, theirs), 32);
    assert_memory_equal(ours, theirs, 32);
    assert_int_equal(ctr(MBO_CTR_X25519_DERIVE), derives + 5);
    serve("all");
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
    EVP_PKEY_free(g);
    EVP_PKEY_free(p);
}

/* One X25519 derive of an ASYNC job. */
struct x_req {
    EVP_PKEY *key, *peer;
    uint8_t out[32];
    size_t len;
};

static int x_job(void *arg)
{
    struct x_req *r = *(struct x_req **)arg;
    r->len = x_derive(eng, r->key, r->peer, r->out);
    return 0;
}

/* Inside ASYNC jobs X25519 derives pause and batch: eight fill a batch (or
 * all run at once on a one-lane implementation); the secrets equal the
 * default provider's. */
static void test_x25519_async(void **state)
{
    (void)state;
    struct x_req r[8];
    void *arg[8];
    EVP_PKEY *peer = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
    assert_non_null(peer);
    const uint64_t pauses = ctr(MBO_CTR_ASYNC_PAUSES), batched = ctr(MBO_CTR_BATCHED);
    const uint64_t at_once = ctr(MBO_CTR_ASYNC_AT_ONCE);
    const uint64_t derives = ctr(MBO_CTR_X25519_DERIVE);
    for (int j = 0; j < 8; j++) {
        r[j].key = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
        assert_non_null(r[j].key);
        r[j].peer = peer;
        arg[j] = &r[j];
    }
    run_jobs_of(x_job, arg, 8);
    for (int j = 0; j < 8; j++) {
        uint8_t want[32];
        assert_int_equal(r[j].len, 32);
        assert_int_equal(x_derive(NULL, peer, r[j].key, want), 32);
        assert_memory_equal(r[j].out, want, 32);
        EVP_PKEY_free(r[j].key);
    }
    EVP_PKEY_free(peer);
    assert_int_equal(ctr(MBO_CTR_X25519_DERIVE), derives + 8);
    paused_or_at_once(MBC_ALG_X25519, 8, pauses, batched, at_once, 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands),
        cmocka_unit_test(test_rsa_raw),
        cmocka_unit_test(test_rsa_signatures),
        cmocka_unit_test(test_rsa_encryption),
        cmocka_unit_test(test_rsa_method),
        cmocka_unit_test(test_rsa_fallback),
        cmocka_unit_test(test_rsa_async),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_fork),
        cmocka_unit_test(test_gcm_aead),
        cmocka_unit_test(test_gcm_tls),
        cmocka_unit_test(test_gcm_tag_any_time),
        cmocka_unit_test(test_gcm_iv_controls),
        cmocka_unit_test(test_gcm_bad_input),
        cmocka_unit_test(test_gcm_not_served),
        cmocka_unit_test(test_ecdsa),
        cmocka_unit_test(test_ecdh),
        cmocka_unit_test(test_ec_key_api),
        cmocka_unit_test(test_ec_async),
        cmocka_unit_test(test_ec_not_served),
        cmocka_unit_test(test_x25519),
        cmocka_unit_test(test_x25519_async),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
