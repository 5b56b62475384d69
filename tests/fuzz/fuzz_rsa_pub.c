/*
 * fuzz_rsa_pub.c - RSA public keys, the public operation and PKCS#1 v1.5
 * verification on fuzzed n, e, input and digest: mbc_rsa_pub_key_new must
 * accept exactly the keys the header's rules allow (checked with BIGNUM) and
 * refuse the others with a documented error; on an accepted key
 * mbc_rsa_public must give BN_mod_exp's result and OpenSSL's raw public
 * operation's (where OpenSSL takes the key), and refuse an input >= n as
 * OpenSSL does; mbc_rsa_pkcs1_v15_verify_encoded must accept exactly the
 * encoding built from OpenSSL's DER of DigestInfo, so that a signature is
 * accepted exactly when OpenSSL's EVP_PKEY_verify accepts it. A direct mode
 * checks verify_encoded and sign_encode on any em, em_len, hash and digest.
 *
 * Input:
 *   0      implementation (modulo the RSA implementations the CPU runs)
 *   1      bits 0-2: mbc_hash (5-7: unknown values); bit 3: n NULL; bit 4:
 *          e NULL; bit 5: digest NULL; bit 6: em NULL (direct mode); bit 7:
 *          direct mode (no key: em is taken from the input)
 *   2..3   n_len (little-endian, mod 1024)   4..5 e_len (mod 1024)
 *   6      digest_len (mod 80)               7..8 em_len (mod 1024)
 *   then   n, e, digest, and the rest: the input of the public operation
 *          (bits/8 bytes, zero-filled), or in direct mode em (em_len bytes)
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/objects.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "fuzz_rsa.h"

#define CANARY 0xA5
#define EM_MAX 512 /* the longest em verify_encoded takes */
/* The public operation costs a squaring per bit of e: with the portable
 * kernels under ASan a 3720-bit e on a 4096-bit n took 12 s. Longer e are
 * checked at key creation and with inputs >= n only. */
#define E_BITS_MAX 256

/* OpenSSL's names of the mbc_hash values. */
static const int hash_nids[] = {NID_sha1, NID_sha224, NID_sha256, NID_sha384, NID_sha512};
#define NUM_HASHES (sizeof(hash_nids) / sizeof(hash_nids[0]))

/* digest_size: the digest length of hash h (OpenSSL's word), 0 if unknown. */
static size_t digest_size(unsigned h)
{
    return h < NUM_HASHES ? (size_t)EVP_MD_get_size(EVP_get_digestbynid(hash_nids[h])) : 0;
}

/*
 * ref_em: the EMSA-PKCS1-v1_5 encoding (RFC 8017 9.2) of digest with hash h
 * in em_len bytes: 00 01 FF..FF 00 || DER(DigestInfo), the DER written by
 * OpenSSL (X509_SIG, parameters NULL). Returns 0, or -1 when em_len leaves
 * fewer than 8 bytes of FF (then em is not written). h and digest_len valid.
 */
static int ref_em(uint8_t *em, size_t em_len, unsigned h, const uint8_t *digest, size_t digest_len)
{
    X509_SIG *sig = X509_SIG_new();
    X509_ALGOR *alg = NULL;
    ASN1_OCTET_STRING *os = NULL;
    unsigned char *der = NULL;
    FZ_CHECK(sig != NULL, "X509_SIG_new");
    X509_SIG_getm(sig, &alg, &os);
    FZ_CHECK(X509_ALGOR_set0(alg, OBJ_nid2obj(hash_nids[h]), V_ASN1_NULL, NULL) == 1 &&
                 ASN1_OCTET_STRING_set(os, digest, (int)digest_len) == 1,
             "DigestInfo");
    const int der_len = i2d_X509_SIG(sig, &der);
    FZ_CHECK(der_len > 0, "i2d_X509_SIG");
    int rc = -1;
    if (em_len >= (size_t)der_len + 11) {
        const size_t ps = em_len - (size_t)der_len - 3;
        em[0] = 0x00;
        em[1] = 0x01;
        memset(em + 2, 0xff, ps);
        em[2 + ps] = 0x00;
        memcpy(em + 3 + ps, der, (size_t)der_len);
        rc = 0;
    }
    OPENSSL_free(der);
    X509_SIG_free(sig);
    return rc;
}

/*
 * check_encoding: mbc_rsa_pkcs1_v15_verify_encoded(em, ...) (verify = 1) or
 * mbc_rsa_pkcs1_v15_sign_encode into em (verify = 0) against ref_em; em
 * and digest may be NULL. Returns the error of the call.
 */
static mbc_err check_encoding(int verify, uint8_t *em, size_t em_len, unsigned h,
                              const uint8_t *digest, size_t digest_len)
{
    fz_errs errs = 0;
    if (em == NULL || digest == NULL) {
        errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
    }
    if (h >= NUM_HASHES || digest_len != digest_size(h) || (verify && em_len > EM_MAX)) {
        errs |= FZ_ERR(MBC_ERR_BAD_PARAM);
    }
    uint8_t *want = fz_alloc(em_len);
    if (h < NUM_HASHES && digest_len == digest_size(h) && digest != NULL &&
        ref_em(want, em_len, h, digest, digest_len) != 0) {
        errs |= FZ_ERR(MBC_ERR_BAD_PARAM); /* em_len too short */
    }
    mbc_err err;
    if (verify) {
        if (errs == 0 && memcmp(em, want, em_len) != 0) {
            errs = FZ_ERR(MBC_ERR_SIG_INVALID);
        }
        err = mbc_rsa_pkcs1_v15_verify_encoded(em, em_len, (mbc_hash)h, digest, digest_len);
        fz_expect("mbc_rsa_pkcs1_v15_verify_encoded", err, errs);
    } else {
        err = mbc_rsa_pkcs1_v15_sign_encode(em, em_len, (mbc_hash)h, digest, digest_len);
        fz_expect("mbc_rsa_pkcs1_v15_sign_encode", err, errs);
        if (err == MBC_OK) {
            fz_expect_same("sign_encode", em, want, em_len);
        }
    }
    free(want);
    return err;
}

/* ossl_verify: 1 if OpenSSL accepts sig (len bytes) as a PKCS#1 v1.5
 * signature of digest with hash h under pkey. */
static int ossl_verify(EVP_PKEY *pkey, const uint8_t *sig, size_t len, unsigned h,
                       const uint8_t *digest, size_t digest_len)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    FZ_CHECK(ctx != NULL && EVP_PKEY_verify_init(ctx) == 1 &&
                 EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1 &&
                 EVP_PKEY_CTX_set_signature_md(ctx, EVP_get_digestbynid(hash_nids[h])) == 1,
             "OpenSSL verify set-up");
    const int ok = EVP_PKEY_verify(ctx, sig, len, digest, digest_len) == 1;
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

/* An accepted key and one input of the public operation. */
struct pub_case {
    mbc_rsa_pub_key *key;
    EVP_PKEY *pkey; /* OpenSSL's key, NULL where OpenSSL refuses (n, e) */
    BIGNUM *n, *e, *x;
    const uint8_t *in;
    uint8_t *out;
    size_t len;
};

/* public_op: mbc_rsa_public on c against BN_mod_exp and OpenSSL; returns
 * its error. */
static mbc_err public_op(const struct pub_case *c)
{
    uint8_t *want = fz_alloc(c->len);
    memset(c->out, CANARY, c->len);
    const mbc_err err = mbc_rsa_public(c->out, c->in, c->key);
    if (BN_cmp(c->x, c->n) >= 0) {
        fz_count("in >= n");
        fz_expect("mbc_rsa_public(in >= n)", err, FZ_ERR(MBC_ERR_BAD_PARAM));
        FZ_CHECK(fz_all(c->out, c->len, 0), "mbc_rsa_public: out not zeroed for in >= n");
        FZ_CHECK(c->pkey == NULL || mbt_ossl_rsa_raw(c->pkey, 0, want, c->in, c->len) != 0,
                 "OpenSSL took an input >= n");
    } else {
        fz_expect("mbc_rsa_public", err, 0);
        BIGNUM *y = BN_new();
        FZ_CHECK(y != NULL && BN_mod_exp(y, c->x, c->e, c->n, fz_bn_ctx()) == 1, "BN_mod_exp");
        fz_bn_be(y, want, c->len);
        BN_free(y);
        fz_expect_same("in^e mod n (BN_mod_exp)", c->out, want, c->len);
        if (c->pkey != NULL) {
            FZ_CHECK(mbt_ossl_rsa_raw(c->pkey, 0, want, c->in, c->len) == 0,
                     "OpenSSL raw public op");
            fz_expect_same("in^e mod n (OpenSSL)", c->out, want, c->len);
        }
    }
    free(want);
    return err;
}

/* key_and_verify: the key, the public operation on the rest of the input,
 * then the verification of its result. */
static void key_and_verify(unsigned flags, const uint8_t *n, size_t n_len, const uint8_t *e,
                           size_t e_len, const uint8_t *digest, size_t digest_len,
                           struct fz_in *rest)
{
    const unsigned h = flags & 7;
    struct pub_case c = {.n = fz_bn(n, n_len), .e = fz_bn(e, e_len)};
    fz_errs errs = fz_rsa_pub_errs(c.n, c.e);
    const uint8_t *pn = (flags & 8) ? NULL : n, *pe = (flags & 16) ? NULL : e;
    if (pn == NULL || pe == NULL) {
        errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
    }
    c.key = (mbc_rsa_pub_key *)&errs; /* non-NULL: must become NULL */
    const mbc_err err = mbc_rsa_pub_key_new(&c.key, pn, n_len, pe, e_len);
    fz_expect("mbc_rsa_pub_key_new", err, errs);
    fz_count(err == MBC_OK ? "key accepted" : "key refused");
    if (err != MBC_OK) {
        FZ_CHECK(c.key == NULL, "mbc_rsa_pub_key_new: *key not NULL on error");
    } else {
        const int bits = BN_num_bits(c.n);
        FZ_CHECK(mbc_rsa_pub_key_bits(c.key) == (unsigned)bits, "key bits %u, n has %d",
                 mbc_rsa_pub_key_bits(c.key), bits);
        c.len = (size_t)bits / 8;
        uint8_t *in = fz_dup(rest, c.len);
        c.in = in;
        c.out = fz_alloc(c.len);
        c.x = fz_bn(in, c.len);
        c.pkey = fz_ossl_rsa_takes(c.n, c.e) ? fz_ossl_rsa_pub(c.n, c.e) : NULL;
        fz_count(c.pkey != NULL ? "key OpenSSL takes" : "key OpenSSL refuses");
        if (BN_num_bits(c.e) > E_BITS_MAX && BN_cmp(c.x, c.n) < 0) {
            fz_count("e too long for the public operation");
        } else {
            const mbc_err op = public_op(&c);
            const uint8_t *pd = (flags & 32) ? NULL : digest;
            const int ours =
                op == MBC_OK && check_encoding(1, c.out, c.len, h, pd, digest_len) == MBC_OK;
            fz_count(ours ? "signature valid" : "signature invalid");
            if (c.pkey != NULL && pd != NULL && h < NUM_HASHES && digest_len == digest_size(h)) {
                FZ_CHECK(ossl_verify(c.pkey, in, c.len, h, digest, digest_len) == ours,
                         "signature %s by mbcrypto, %s by OpenSSL", ours ? "accepted" : "refused",
                         ours ? "refused" : "accepted");
            }
        }
        EVP_PKEY_free(c.pkey);
        BN_free(c.x);
        free(in);
        free(c.out);
        mbc_rsa_pub_key_free(c.key);
    }
    BN_free(c.n);
    BN_free(c.e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in = {data, size};
    fz_use_impl(MBC_ALG_RSA, fz_u8(&in));
    const unsigned flags = fz_u8(&in);
    const size_t n_len = fz_u16(&in) % 1024, e_len = fz_u16(&in) % 1024;
    const size_t digest_len = fz_u8(&in) % 80, em_len = fz_u16(&in) % 1024;
    uint8_t *n = fz_dup(&in, n_len), *e = fz_dup(&in, e_len), *digest = fz_dup(&in, digest_len);
    if (flags & 128) {
        fz_count("direct encoding checks");
        uint8_t *em = fz_dup(&in, em_len);
        const uint8_t *pd = (flags & 32) ? NULL : digest;
        check_encoding(1, (flags & 64) ? NULL : em, em_len, flags & 7, pd, digest_len);
        check_encoding(0, (flags & 64) ? NULL : em, em_len, flags & 7, pd, digest_len);
        free(em);
    } else {
        key_and_verify(flags, n, n_len, e, e_len, digest, digest_len, &in);
    }
    free(n);
    free(e);
    free(digest);
    return 0;
}

/* ------------------------------------------------------------------- seeds */

/* put_seed: one seed with these fields. */
static void put_seed(const char *dir, unsigned *count, unsigned impl, unsigned flags,
                     const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
                     const uint8_t *digest, size_t digest_len, const uint8_t *tail, size_t tail_len)
{
    struct fz_out o = {.len = 0};
    fz_put_u8(&o, impl);
    fz_put_u8(&o, flags);
    fz_put_u16(&o, (unsigned)n_len);
    fz_put_u16(&o, (unsigned)e_len);
    fz_put_u8(&o, (unsigned)digest_len);
    fz_put_u16(&o, (flags & 128) ? (unsigned)tail_len : 0);
    fz_put(&o, n, n_len);
    fz_put(&o, e, e_len);
    fz_put(&o, digest, digest_len);
    fz_put(&o, tail, tail_len);
    char name[64];
    snprintf(name, sizeof(name), "seed-%03u", (*count)++);
    fz_seed_write(dir, name, &o);
}

/* ossl_sign: OpenSSL's PKCS#1 v1.5 signature of digest (hash h) in sig. */
static void ossl_sign(EVP_PKEY *pkey, uint8_t *sig, size_t len, unsigned h, const uint8_t *digest,
                      size_t digest_len)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    size_t sig_len = len;
    FZ_CHECK(ctx != NULL && EVP_PKEY_sign_init(ctx) == 1 &&
                 EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1 &&
                 EVP_PKEY_CTX_set_signature_md(ctx, EVP_get_digestbynid(hash_nids[h])) == 1 &&
                 EVP_PKEY_sign(ctx, sig, &sig_len, digest, digest_len) == 1 && sig_len == len,
             "OpenSSL sign");
    EVP_PKEY_CTX_free(ctx);
}

static void write_seeds(const char *dir)
{
    unsigned count = 0;
    const uint8_t e3[1] = {3};
    uint8_t digest[64], sig[FZ_RSA_MAX_BYTES], em[EM_MAX + 1];
    for (unsigned i = 0; i < FZ_RSA_NUM_SIZES; i++) {
        mbt_rsa_parts parts;
        EVP_PKEY *pkey = fz_seed_key(i, &parts);
        const uint8_t *n = parts.c[MBT_RSA_N], *e = parts.c[MBT_RSA_E];
        const size_t n_len = parts.len[MBT_RSA_N], e_len = parts.len[MBT_RSA_E];
        for (unsigned impl = 0; impl < fz_num_impls(MBC_ALG_RSA); impl++) {
            for (unsigned h = 0; h < NUM_HASHES; h++) {
                /* a valid signature of a digest with each hash */
                fz_seed_rand(digest, digest_size(h));
                ossl_sign(pkey, sig, n_len, h, digest, digest_size(h));
                put_seed(dir, &count, impl, h, n, n_len, e, e_len, digest, digest_size(h), sig,
                         n_len);
            }
            /* inputs n - 1, n (refused), 0; e = 3 on the same n */
            memcpy(sig, n, n_len);
            sig[n_len - 1] ^= 1;
            put_seed(dir, &count, impl, 2, n, n_len, e, e_len, digest, 32, sig, n_len);
            put_seed(dir, &count, impl, 2, n, n_len, e, e_len, digest, 32, n, n_len);
            memset(sig, 0, n_len);
            put_seed(dir, &count, impl, 2, n, n_len, e3, 1, digest, 32, sig, n_len);
        }
    }
    /* direct mode: valid encodings at the key sizes and at the shortest em,
     * and one em longer than verify takes */
    for (unsigned h = 0; h < NUM_HASHES; h++) {
        const size_t dl = digest_size(h);
        fz_seed_rand(digest, dl);
        const size_t lens[] = {256, 384, 512, dl + (h == 0 ? 15 : 19) + 11, EM_MAX + 1};
        for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
            memset(em, 0, sizeof(em));
            if (lens[j] <= EM_MAX) {
                FZ_CHECK(ref_em(em, lens[j], h, digest, dl) == 0, "seed encoding");
            }
            put_seed(dir, &count, 0, 128 | h, NULL, 0, NULL, 0, digest, dl, em, lens[j]);
        }
    }
}

const struct fz_target fz_target = {"fuzz_rsa_pub", NULL, write_seeds};
