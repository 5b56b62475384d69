/*
 * fuzz_ec.c - P-256 and P-384 on fuzzed untrusted inputs, checked against
 * OpenSSL (BIGNUM and EC_POINT arithmetic; EVP where it takes the input):
 *  - mbc_ec_pub_key_new on fuzzed encodings (any length, first byte 00, 02,
 *    03, 04 or other, coordinates near or above p, off the curve, the one
 *    byte 00): the documented error of the first rule the bytes break, as
 *    BIGNUM computes it, and OpenSSL accepts a 04 point exactly when
 *    mbcrypto does; mbc_ec_priv_key_new_pair gives the same verdict on the
 *    same bytes, and keeps an accepted point as the key's;
 *  - mbc_ecdsa_verify on fuzzed signatures (r, s = 0, n - 1, n, >= n, a
 *    valid signature and near misses) and digests of 0..127 bytes: valid
 *    exactly when u1 G + u2 Q (EC_POINT_mul) says so, and when
 *    EVP_PKEY_verify does;
 *  - mbc_ec_priv_key_new on fuzzed d (0, n - 1, n, >= n, leading zeros,
 *    short and long strings): MBC_ERR_KEY_RANGE exactly for d == 0 or
 *    d >= n, else Q = d G;
 *  - mbc_ecdh with fuzzed peer points: the validation errors, else x(d Q);
 *  - mbc_ecdsa_sign_k with a fuzzed nonce k: the ECDSA formula on BIGNUM
 *    (MBC_ERR_BAD_PARAM for k == 0, k >= n, or r or s zero), checked with
 *    EVP_PKEY_verify and mbc_ecdsa_verify; mbc_ecdsa_sign (a random nonce)
 *    and keygen, whose results OpenSSL verifies;
 *  - the _mb8 calls with a fuzzed lane mask (also above 0xFF), NULL arrays
 *    and pointers, keys of the other curve or another type, unknown curves
 *    and good and bad lanes mixed: every lane's code is one the header
 *    documents for its arguments, an OK lane holds OpenSSL's result (so a
 *    bad lane cannot change another lane's), a failed active lane's output
 *    is zeroed, an inactive lane's (or a malformed call's) untouched.
 *
 * Input:
 *   0      implementation (modulo the EC implementations the CPU runs)
 *   1      bit 0: curve (P-256, P-384); bits 1-3: operation (OP_*); bit
 *          4: a byte of flags (F_*) of the first single call follows
 *   then   the operation's fields, read as the code below says: values
 *          (value()), points (point_of()), digests (digest_of()), signatures
 *          (sig_of()); an _mb8 call reads a mask byte, a flags byte (M_*)
 *          and 8 lanes (lane byte L_*, then its fields, inactive lanes too)
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>
#include <openssl/sha.h>

#include "fuzz_rsa.h"
#include "ossl_ec.h"

#define CANARY 0xA5
#define LEN_MAX 48
#define PLEN_MAX 97
#define PT_MAX 256
#define DIGEST_MAX 128
#define NKEYS 4

enum op {
    OP_PUB_VERIFY,  /* pub key from a point, then verify on it */
    OP_PRIV_ECDH,   /* priv key from d, then ECDH with a peer point */
    OP_SIGN_K,      /* priv key from d (or a fixed key), then sign with k */
    OP_VERIFY_MB8,  /* mbc_ecdsa_verify_mb8 */
    OP_ECDH_MB8,    /* mbc_ecdh_mb8 */
    OP_SIGN_K_MB8,  /* mbc_ecdsa_sign_k_mb8 */
    OP_KEYGEN,      /* mbc_ec_keygen and _mb8 */
    OP_SIGN_RANDOM, /* mbc_ecdsa_sign and _mb8 (random nonces) */
};

/* flags of the first single call (a byte that follows when bit 4 of byte 1
 * is set) */
#define F_NULL_OUT 1  /* key pointer NULL */
#define F_NULL_IN 2   /* point / d NULL */
#define F_WRONG_KEY 4 /* verify: keys of another type too */
#define F_BAD_CURVE 8 /* an unknown curve */

/* ------------------------------------------------------------ the fixture */

struct key {
    uint8_t d[LEN_MAX], q[PLEN_MAX];
    BIGNUM *bd, *qx, *qy;
    EC_POINT *Q;
    mbc_ec_priv_key *priv;
    mbc_ec_pub_key *pub;
    EVP_PKEY *pkey; /* OpenSSL's key pair */
};

struct cfx {
    mbc_curve id;
    size_t len, plen;
    EC_GROUP *g;
    BIGNUM *p, *a, *b, *n;
    struct key keys[NKEYS];
};

static struct cfx fx[2];
static mbc_gcm_key *gcm_key; /* a key object of another family */

static BIGNUM *bn_new(void)
{
    BIGNUM *x = BN_new();
    FZ_CHECK(x != NULL, "BN_new");
    return x;
}

static BIGNUM *bn_dup(const BIGNUM *a)
{
    BIGNUM *x = BN_dup(a);
    FZ_CHECK(x != NULL, "BN_dup");
    return x;
}

static void make_key(struct cfx *c, unsigned i)
{
    struct key *k = &c->keys[i];
    BN_CTX *ctx = fz_bn_ctx();
    k->bd = bn_new();
    if (i == 0) {
        BN_one(k->bd);
    } else if (i == 1) {
        FZ_CHECK(BN_sub(k->bd, c->n, BN_value_one()) == 1, "n - 1");
    } else {
        uint8_t h[SHA512_DIGEST_LENGTH];
        char name[32];
        snprintf(name, sizeof(name), "fuzz_ec key %u", i);
        SHA512((const unsigned char *)name, strlen(name), h);
        BIGNUM *x = fz_bn(h, c->len);
        FZ_CHECK(BN_nnmod(k->bd, x, c->n, ctx) == 1 && !BN_is_zero(k->bd), "d mod n");
        BN_free(x);
    }
    fz_bn_be(k->bd, k->d, c->len);
    FZ_CHECK(mbt_ossl_ec_mul_g(c->id, k->d, c->len, k->q) == 0, "d G");
    k->pkey = mbt_ossl_ec_from_d(c->id, k->d, c->len);
    k->Q = EC_POINT_new(c->g);
    FZ_CHECK(k->pkey != NULL && k->Q != NULL &&
                 EC_POINT_oct2point(c->g, k->Q, k->q, c->plen, ctx) == 1,
             "OpenSSL key");
    k->qx = fz_bn(k->q + 1, c->len);
    k->qy = fz_bn(k->q + 1 + c->len, c->len);
    FZ_CHECK(mbc_ec_priv_key_new(&k->priv, c->id, k->d, c->len) == MBC_OK &&
                 mbc_ec_pub_key_new(&k->pub, c->id, k->q, c->plen) == MBC_OK,
             "mbcrypto key %u", i);
}

static void init(void)
{
    const int nids[2] = {NID_X9_62_prime256v1, NID_secp384r1};
    for (unsigned ci = 0; ci < 2; ci++) {
        struct cfx *c = &fx[ci];
        c->id = ci == 0 ? MBC_CURVE_P256 : MBC_CURVE_P384;
        c->len = mbc_ec_scalar_len(c->id);
        c->plen = mbc_ec_point_len(c->id);
        c->g = EC_GROUP_new_by_curve_name(nids[ci]);
        c->p = bn_new();
        c->a = bn_new();
        c->b = bn_new();
        FZ_CHECK(c->g != NULL && EC_GROUP_get_curve(c->g, c->p, c->a, c->b, fz_bn_ctx()) == 1,
                 "EC group");
        c->n = bn_dup(EC_GROUP_get0_order(c->g));
        for (unsigned i = 0; i < NKEYS; i++) {
            make_key(c, i);
        }
    }
    const uint8_t k[16] = {0};
    FZ_CHECK(mbc_gcm_key_new(&gcm_key, k, sizeof(k)) == MBC_OK, "GCM key");
    fprintf(stderr, "fuzz_ec: EC implementations:");
    for (unsigned i = 0; i < fz_num_impls(MBC_ALG_EC); i++) {
        fprintf(stderr, " %s", fz_impl(MBC_ALG_EC, i));
    }
    fprintf(stderr, "\n");
}

/* ---------------------------------------------------------------- reading */

/*
 * value: a number below 2^(8 len) from the input. A kind byte: bits 0-2 the
 * base (0, 7: len raw bytes; 1: n; 2: p; 3: 0; 4: good, the caller's
 * near-valid value (0 when NULL); 5: 2^(8 len) - 1; 6: one raw byte), bit 3
 * plus a signed delta byte, bit 4 one bit flipped (a u16 picks it), bit 5
 * plus n, bit 6 plus p; the sum is taken mod 2^(8 len).
 */
static BIGNUM *value(struct fz_in *in, const struct cfx *c, const BIGNUM *good, size_t len)
{
    const unsigned kind = fz_u8(in);
    BIGNUM *x = bn_new();
    const int bits = (int)(8 * len);
    switch (kind & 7) {
    case 1:
        FZ_CHECK(BN_copy(x, c->n) != NULL, "BN_copy");
        break;
    case 2:
        FZ_CHECK(BN_copy(x, c->p) != NULL, "BN_copy");
        break;
    case 3:
        BN_zero(x);
        break;
    case 4:
        FZ_CHECK(good == NULL || BN_copy(x, good) != NULL, "BN_copy");
        break;
    case 5:
        FZ_CHECK(BN_set_bit(x, bits) == 1 && BN_sub_word(x, 1) == 1, "2^k - 1");
        break;
    case 6:
        FZ_CHECK(BN_set_word(x, fz_u8(in)) == 1, "BN_set_word");
        break;
    default: {
        uint8_t *b = fz_dup(in, len);
        FZ_CHECK(BN_bin2bn(b, (int)len, x) != NULL, "BN_bin2bn");
        free(b);
        break;
    }
    }
    if (kind & 8) {
        fz_bn_add_delta(x, (int8_t)fz_u8(in));
    }
    if (kind & 16) {
        fz_bn_flip_bit(x, (int)(fz_u16(in) % (unsigned)bits));
    }
    if ((kind & 32) && BN_add(x, x, c->n) != 1) {
        FZ_CHECK(0, "BN_add");
    }
    if ((kind & 64) && BN_add(x, x, c->p) != 1) {
        FZ_CHECK(0, "BN_add");
    }
    fz_bn_wrap(x, bits);
    return x;
}

/* value_be: value() as len big-endian bytes in out. */
static void value_be(struct fz_in *in, const struct cfx *c, const BIGNUM *good, uint8_t *out,
                     size_t len)
{
    BIGNUM *x = value(in, c, good, len);
    fz_bn_be(x, out, len);
    BN_free(x);
}

/* rhs: x^3 + a x + b mod p. */
static BIGNUM *rhs(const struct cfx *c, const BIGNUM *x)
{
    BN_CTX *ctx = fz_bn_ctx();
    BIGNUM *r = bn_new(), *t = bn_new();
    FZ_CHECK(BN_mod_sqr(t, x, c->p, ctx) == 1 && BN_mod_add(t, t, c->a, c->p, ctx) == 1 &&
                 BN_mod_mul(r, t, x, c->p, ctx) == 1 && BN_mod_add(r, r, c->b, c->p, ctx) == 1,
             "x^3 + a x + b");
    BN_free(t);
    return r;
}

/*
 * point_of: an encoded point in pt (PT_MAX bytes) from the input; returns
 * its length. A form byte: bits 3-4 pick a fixed key's Q; bits 0-2 the
 * point: 0 Q, 1 -Q, 2 x a value and y a square root of its right-hand side
 * (a value when there is none), 3 x and y values (near Q's), 4 the one byte
 * 00, 5 raw bytes (a byte gives the length), 6 Q compressed, 7 x a value
 * and y Q's. Then bit 5: the first byte from the input; bit 6: the length
 * from the input (mod 2 point_len + 2; zeros added); bit 7: the last bit
 * flipped.
 */
static size_t point_of(struct fz_in *in, const struct cfx *c, uint8_t *pt)
{
    const unsigned form = fz_u8(in);
    const struct key *k = &c->keys[(form >> 3) & 3];
    memset(pt, 0, PT_MAX);
    size_t len = c->plen;
    BIGNUM *x = NULL, *y = NULL;
    switch (form & 7) {
    case 0:
    case 1:
        x = bn_dup(k->qx);
        y = bn_dup(k->qy);
        if ((form & 7) == 1) {
            FZ_CHECK(BN_sub(y, c->p, y) == 1, "p - y");
        }
        break;
    case 2: {
        x = value(in, c, k->qx, c->len);
        BIGNUM *r = rhs(c, x);
        y = BN_mod_sqrt(NULL, r, c->p, fz_bn_ctx());
        BN_free(r);
        if (y == NULL) {
            ERR_clear_error();
            fz_count("point: x without a square root");
            y = value(in, c, k->qy, c->len);
        } else if (fz_u8(in) & 1) {
            FZ_CHECK(BN_sub(y, c->p, y) == 1 || BN_is_zero(y), "p - y");
        }
        break;
    }
    case 3:
        x = value(in, c, k->qx, c->len);
        y = value(in, c, k->qy, c->len);
        break;
    case 4:
        len = 1;
        break;
    case 5:
        len = fz_u8(in);
        {
            uint8_t *b = fz_dup(in, len);
            memcpy(pt, b, len);
            free(b);
        }
        break;
    case 6:
        len = 1 + c->len;
        memcpy(pt, k->q, len);
        pt[0] = (uint8_t)(2 | (k->q[c->plen - 1] & 1));
        break;
    default:
        x = value(in, c, k->qx, c->len);
        y = bn_dup(k->qy);
        break;
    }
    if (x != NULL) {
        pt[0] = 4;
        fz_bn_be(x, pt + 1, c->len);
        fz_bn_be(y, pt + 1 + c->len, c->len);
        BN_free(x);
        BN_free(y);
    }
    if (form & 32) {
        pt[0] = fz_u8(in);
    }
    if (form & 64) {
        const size_t l = fz_u8(in) % (2 * c->plen + 2);
        if (l > len) {
            memset(pt + len, 0, l - len);
        }
        len = l;
    }
    if ((form & 128) && len > 1) {
        pt[len - 1] ^= 1;
    }
    return len;
}

/* digest_of: a digest of fz_u8 % DIGEST_MAX bytes from the input in
 * dg (DIGEST_MAX bytes); returns its length. */
static size_t digest_of(struct fz_in *in, uint8_t *dg)
{
    const size_t len = fz_u8(in) % DIGEST_MAX;
    uint8_t *b = fz_dup(in, len);
    memset(dg, 0, DIGEST_MAX);
    memcpy(dg, b, len);
    free(b);
    return len;
}

/*
 * sig_of: a signature r || s in sig from the input. A byte: bits 0-1 a
 * fixed key; bit 2: a valid signature of digest by that key, with a nonce
 * value() (near n - 1), is the good value of r and s; then r and s are
 * value()s.
 */
static void sig_of(struct fz_in *in, const struct cfx *c, const uint8_t *digest, size_t dlen,
                   uint8_t *sig)
{
    const unsigned b = fz_u8(in);
    BIGNUM *r = NULL, *s = NULL;
    if (b & 4) {
        uint8_t k[LEN_MAX], valid[2 * LEN_MAX];
        BIGNUM *nm1 = bn_dup(c->n);
        FZ_CHECK(BN_sub_word(nm1, 1) == 1, "n - 1");
        value_be(in, c, nm1, k, c->len);
        BN_free(nm1);
        if (mbt_ossl_ecdsa_sign_k(c->id, c->keys[b & 3].d, k, digest, dlen, valid) == 0) {
            fz_count("valid signature made");
            r = fz_bn(valid, c->len);
            s = fz_bn(valid + c->len, c->len);
        }
    }
    value_be(in, c, r, sig, c->len);
    value_be(in, c, s, sig + c->len, c->len);
    BN_free(r);
    BN_free(s);
}

/* ------------------------------------------------------------- the oracle */

/* on_curve: y^2 == x^3 + a x + b mod p (x, y < p). */
static int on_curve(const struct cfx *c, const BIGNUM *x, const BIGNUM *y)
{
    BIGNUM *r = rhs(c, x), *l = bn_new();
    FZ_CHECK(BN_mod_sqr(l, y, c->p, fz_bn_ctx()) == 1, "y^2");
    const int on = BN_cmp(l, r) == 0;
    BN_free(l);
    BN_free(r);
    return on;
}

/*
 * point_errs: the errors mbc_ec_pub_key_new documents for the len bytes at
 * pt, from BIGNUM: the one byte 00 MBC_ERR_INFINITY, another length or
 * first byte MBC_ERR_POINT_FORMAT, a coordinate >= p MBC_ERR_POINT_RANGE,
 * off the curve MBC_ERR_NOT_ON_CURVE; empty for a valid point (then Q, when
 * not NULL, gets it). OpenSSL must take a 04 point of the right length
 * exactly when it is valid.
 */
static fz_errs point_errs(const struct cfx *c, const uint8_t *pt, size_t len, EC_POINT *Q)
{
    if (len == 1 && pt[0] == 0) {
        return FZ_ERR(MBC_ERR_INFINITY);
    }
    if (len != c->plen || pt[0] != 4) {
        return FZ_ERR(MBC_ERR_POINT_FORMAT);
    }
    BIGNUM *x = fz_bn(pt + 1, c->len), *y = fz_bn(pt + 1 + c->len, c->len);
    fz_errs e = 0;
    if (BN_cmp(x, c->p) >= 0 || BN_cmp(y, c->p) >= 0) {
        e = FZ_ERR(MBC_ERR_POINT_RANGE);
    } else if (!on_curve(c, x, y)) {
        e = FZ_ERR(MBC_ERR_NOT_ON_CURVE);
    } else if (Q != NULL) {
        FZ_CHECK(EC_POINT_set_affine_coordinates(c->g, Q, x, y, fz_bn_ctx()) == 1, "set point");
    }
    EVP_PKEY *pk = mbt_ossl_ec_from_point(c->id, pt, len);
    FZ_CHECK((pk != NULL) == (e == 0), "OpenSSL %s a point that mbcrypto's rules %s",
             pk != NULL ? "takes" : "refuses", e == 0 ? "accept" : "refuse");
    EVP_PKEY_free(pk);
    ERR_clear_error();
    BN_free(x);
    BN_free(y);
    return e;
}

/* ecdh_ref: x(d Q) as len bytes (EC_POINT_mul). */
static void ecdh_ref(const struct cfx *c, const BIGNUM *d, const EC_POINT *Q, uint8_t *secret)
{
    EC_POINT *R = EC_POINT_new(c->g);
    BIGNUM *x = bn_new();
    FZ_CHECK(R != NULL && EC_POINT_mul(c->g, R, NULL, Q, d, fz_bn_ctx()) == 1 &&
                 !EC_POINT_is_at_infinity(c->g, R) &&
                 EC_POINT_get_affine_coordinates(c->g, R, x, NULL, fz_bn_ctx()) == 1,
             "d Q");
    fz_bn_be(x, secret, c->len);
    BN_free(x);
    EC_POINT_free(R);
}

/* verify_ref: 1 if sig is a valid signature of digest under Q: r, s in
 * [1, n - 1] and x(u1 G + u2 Q) == r mod n (EC_POINT_mul). */
static int verify_ref(const struct cfx *c, const EC_POINT *Q, const uint8_t *sig,
                      const uint8_t *digest, size_t dlen)
{
    BN_CTX *ctx = fz_bn_ctx();
    BIGNUM *r = fz_bn(sig, c->len), *s = fz_bn(sig + c->len, c->len);
    BIGNUM *z = fz_bn(digest, dlen < c->len ? dlen : c->len);
    BIGNUM *w = bn_new(), *u1 = bn_new(), *u2 = bn_new(), *x = bn_new();
    EC_POINT *R = EC_POINT_new(c->g);
    int ok = 0;
    if (!BN_is_zero(r) && !BN_is_zero(s) && BN_cmp(r, c->n) < 0 && BN_cmp(s, c->n) < 0) {
        FZ_CHECK(R != NULL && BN_mod_inverse(w, s, c->n, ctx) != NULL &&
                     BN_mod_mul(u1, z, w, c->n, ctx) == 1 && BN_mod_mul(u2, r, w, c->n, ctx) == 1 &&
                     EC_POINT_mul(c->g, R, u1, Q, u2, ctx) == 1,
                 "u1 G + u2 Q");
        if (!EC_POINT_is_at_infinity(c->g, R)) {
            FZ_CHECK(EC_POINT_get_affine_coordinates(c->g, R, x, NULL, ctx) == 1 &&
                         BN_nnmod(x, x, c->n, ctx) == 1,
                     "x(R) mod n");
            ok = BN_cmp(x, r) == 0;
        }
    }
    BN_free(r);
    BN_free(s);
    BN_free(z);
    BN_free(w);
    BN_free(u1);
    BN_free(u2);
    BN_free(x);
    EC_POINT_free(R);
    return ok;
}

/* evp_agrees: EVP_PKEY_verify on pkey gives verdict ok for sig. */
static void evp_agrees(EVP_PKEY *pkey, const struct cfx *c, const uint8_t *sig,
                       const uint8_t *digest, size_t dlen, int ok)
{
    const int got = mbt_ossl_ecdsa_verify(pkey, c->id, sig, digest, dlen);
    ERR_clear_error();
    FZ_CHECK(got == ok, "EVP_PKEY_verify says %d, the formula %d", got, ok);
}

/* failed_out: the output of a single call that failed with err: zeroed,
 * except that a NULL argument may leave it untouched and a key object of
 * another type (wrong_key) leaves it untouched. */
static void failed_out(const char *what, mbc_err err, const uint8_t *out, size_t len, int wrong_key)
{
    if (err == MBC_ERR_NULL_PARAM) {
        FZ_CHECK(fz_all(out, len, 0) || fz_all(out, len, CANARY),
                 "%s: output half written after MBC_ERR_NULL_PARAM", what);
    } else if (wrong_key && err == MBC_ERR_BAD_PARAM) {
        FZ_CHECK(fz_all(out, len, CANARY), "%s: output written for a wrong key", what);
    } else {
        FZ_CHECK(fz_all(out, len, 0), "%s: output not zeroed after %s", what, mbc_err_str(err));
    }
}

/* ------------------------------------------------------------ single calls */

/* pub_verify: OP_PUB_VERIFY. */
static void pub_verify(struct fz_in *in, const struct cfx *c, unsigned flags)
{
    uint8_t pt[PT_MAX], dg[DIGEST_MAX], sig[2 * LEN_MAX];
    const size_t plen = point_of(in, c, pt);
    EC_POINT *Q = EC_POINT_new(c->g);
    FZ_CHECK(Q != NULL, "EC_POINT_new");
    fz_errs errs = point_errs(c, pt, plen, Q);
    uint8_t *buf = fz_alloc(plen);
    memcpy(buf, pt, plen);
    const mbc_curve curve = (flags & F_BAD_CURVE) ? (mbc_curve)(plen & 1 ? 0 : 3) : c->id;
    if (flags & (F_NULL_OUT | F_NULL_IN)) {
        errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
    }
    if (flags & F_BAD_CURVE) {
        errs |= FZ_ERR(MBC_ERR_BAD_PARAM);
    }
    mbc_ec_pub_key *key = (mbc_ec_pub_key *)&errs; /* non-NULL: must become NULL */
    const mbc_err err = mbc_ec_pub_key_new((flags & F_NULL_OUT) ? NULL : &key, curve,
                                           (flags & F_NULL_IN) ? NULL : buf, plen);
    fz_expect("mbc_ec_pub_key_new", err, errs);
    if (!(flags & (F_NULL_OUT | F_NULL_IN))) {
        /* the same point as the point of a pair (with a good d): the same
         * verdict, and an accepted point is the key's public point */
        mbc_ec_priv_key *pair = (mbc_ec_priv_key *)&errs;
        const mbc_err perr =
            mbc_ec_priv_key_new_pair(&pair, curve, c->keys[0].d, c->len, buf, plen);
        FZ_CHECK(perr == err, "mbc_ec_priv_key_new_pair: %s, mbc_ec_pub_key_new: %s",
                 mbc_err_str(perr), mbc_err_str(err));
        if (perr == MBC_OK) {
            uint8_t q[PT_MAX];
            FZ_CHECK(mbc_ec_priv_key_public(pair, q, sizeof(q)) == MBC_OK &&
                         memcmp(q, pt, plen) == 0,
                     "mbc_ec_priv_key_new_pair: the key's point is not the one given");
            mbc_ec_priv_key_free(pair);
        } else {
            FZ_CHECK(pair == NULL, "mbc_ec_priv_key_new_pair: *key not NULL");
        }
    }
    free(buf);
    fz_count(err == MBC_OK ? "point accepted" : "point refused");
    if (err != MBC_OK) {
        FZ_CHECK((flags & F_NULL_OUT) || key == NULL, "mbc_ec_pub_key_new: *key not NULL");
        EC_POINT_free(Q);
        return;
    }
    FZ_CHECK(mbc_ec_pub_key_curve(key) == c->id, "pub key curve");
    const size_t dlen = digest_of(in, dg);
    sig_of(in, c, dg, dlen, sig);
    const int ok = verify_ref(c, Q, sig, dg, dlen);
    EVP_PKEY *pkey = mbt_ossl_ec_from_point(c->id, pt, plen);
    FZ_CHECK(pkey != NULL, "OpenSSL public key");
    evp_agrees(pkey, c, sig, dg, dlen, ok);
    EVP_PKEY_free(pkey);
    uint8_t *s = fz_alloc(2 * c->len), *d = fz_alloc(dlen);
    memcpy(s, sig, 2 * c->len);
    memcpy(d, dg, dlen);
    const mbc_err v = mbc_ecdsa_verify(s, d, dlen, key);
    fz_count(ok ? "signature valid" : "signature invalid");
    fz_expect("mbc_ecdsa_verify", v, ok ? 0 : FZ_ERR(MBC_ERR_SIG_INVALID));
    /* the same with the digest NULL when it is empty, and a wrong key type */
    if (dlen == 0) {
        fz_expect("mbc_ecdsa_verify(NULL, 0)", mbc_ecdsa_verify(s, NULL, 0, key),
                  ok ? 0 : FZ_ERR(MBC_ERR_SIG_INVALID));
    }
    if (flags & F_WRONG_KEY) {
        const void *wrong[2] = {c->keys[0].priv, gcm_key};
        for (unsigned i = 0; i < 2; i++) {
            fz_expect("mbc_ecdsa_verify(key of another type)",
                      mbc_ecdsa_verify(s, d, dlen, (const mbc_ec_pub_key *)wrong[i]),
                      FZ_ERR(MBC_ERR_BAD_PARAM));
        }
    }
    free(s);
    free(d);
    mbc_ec_pub_key_free(key);
    EC_POINT_free(Q);
}

/* op flags of the call after a key constructor (a byte of the input; they
 * apply when its bit 7 is set) */
#define O_NULL_OUT 1  /* sig / secret NULL */
#define O_NULL_IN 2   /* digest (digest_len != 0 for an error) / peer NULL */
#define O_WRONG_KEY 4 /* the key object of the other type */
#define O_GCM_KEY 8   /* a GCM key object */
#define O_NULL_KEY 16 /* key NULL */
#define O_NULL_K 32   /* sign_k: k NULL (a random nonce) */

/* op_key: the key an op-flags byte passes, and the errors it adds. */
static const void *op_key(unsigned of, const void *key, const void *other, fz_errs *errs)
{
    if (of & O_NULL_KEY) {
        *errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
        return NULL;
    }
    if (of & (O_WRONG_KEY | O_GCM_KEY)) {
        *errs |= FZ_ERR(MBC_ERR_BAD_PARAM);
        return (of & O_GCM_KEY) ? (const void *)gcm_key : other;
    }
    return key;
}

/*
 * priv_of: mbc_ec_priv_key_new on a fuzzed d, checked: a value (near a
 * fixed key's d) and a length byte; with bit 7 set, its bits 0-5 give
 * d_len (mod len + 17): the last d_len bytes of the value when d_len <=
 * len, else the value after d_len - len bytes of a fill byte (from the
 * input). Returns the key (NULL when refused), its d in *bd.
 */
static mbc_ec_priv_key *priv_of(struct fz_in *in, const struct cfx *c, unsigned flags, BIGNUM **bd)
{
    uint8_t v[LEN_MAX];
    value_be(in, c, c->keys[2].bd, v, c->len);
    const unsigned lb = fz_u8(in);
    const size_t dlen = (lb & 128) ? (lb & 63) % (c->len + 17) : c->len;
    uint8_t *d = fz_alloc(dlen);
    if (dlen <= c->len) {
        memcpy(d, v + c->len - dlen, dlen);
    } else {
        memset(d, fz_u8(in), dlen - c->len);
        memcpy(d + dlen - c->len, v, c->len);
    }
    *bd = fz_bn(d, dlen);
    fz_errs errs = 0;
    if (BN_is_zero(*bd) || BN_cmp(*bd, c->n) >= 0) {
        errs |= FZ_ERR(MBC_ERR_KEY_RANGE);
    }
    if (flags & (F_NULL_OUT | F_NULL_IN)) {
        errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
    }
    if (flags & F_BAD_CURVE) {
        errs |= FZ_ERR(MBC_ERR_BAD_PARAM);
    }
    mbc_ec_priv_key *key = (mbc_ec_priv_key *)&errs; /* non-NULL: must become NULL */
    const mbc_curve curve = (flags & F_BAD_CURVE) ? (mbc_curve)(lb & 1 ? 0 : 3) : c->id;
    const mbc_err err = mbc_ec_priv_key_new((flags & F_NULL_OUT) ? NULL : &key, curve,
                                            (flags & F_NULL_IN) ? NULL : d, dlen);
    fz_expect("mbc_ec_priv_key_new", err, errs);
    fz_count(err == MBC_OK ? "d accepted" : "d refused");
    free(d);
    if (err != MBC_OK) {
        FZ_CHECK((flags & F_NULL_OUT) || key == NULL, "mbc_ec_priv_key_new: *key not NULL");
        return NULL;
    }
    /* its public point is d G, written only to a long enough buffer */
    FZ_CHECK(mbc_ec_priv_key_curve(key) == c->id, "priv key curve");
    uint8_t want[PLEN_MAX], dd[LEN_MAX];
    fz_bn_be(*bd, dd, c->len);
    FZ_CHECK(mbt_ossl_ec_mul_g(c->id, dd, c->len, want) == 0, "OpenSSL d G");
    uint8_t *q = fz_alloc(c->plen);
    memset(q, CANARY, c->plen);
    fz_expect("mbc_ec_priv_key_public(short)", mbc_ec_priv_key_public(key, q, c->plen - 1),
              FZ_ERR(MBC_ERR_BAD_PARAM));
    FZ_CHECK(fz_all(q, c->plen, CANARY), "mbc_ec_priv_key_public wrote to a short buffer");
    fz_expect("mbc_ec_priv_key_public", mbc_ec_priv_key_public(key, q, c->plen), 0);
    fz_expect_same("Q = d G", q, want, c->plen);
    free(q);
    return key;
}

/* priv_ecdh: OP_PRIV_ECDH. */
static void priv_ecdh(struct fz_in *in, const struct cfx *c, unsigned flags)
{
    BIGNUM *bd = NULL;
    mbc_ec_priv_key *key = priv_of(in, c, flags, &bd);
    if (key == NULL) {
        BN_free(bd);
        return;
    }
    const unsigned ob = fz_u8(in), of = (ob & 128) ? ob : 0;
    uint8_t pt[PT_MAX], want[LEN_MAX];
    const size_t plen = point_of(in, c, pt);
    EC_POINT *Q = EC_POINT_new(c->g);
    FZ_CHECK(Q != NULL, "EC_POINT_new");
    const fz_errs perrs = point_errs(c, pt, plen, Q);
    fz_errs errs = perrs;
    if (perrs == 0) {
        ecdh_ref(c, bd, Q, want);
    }
    if (of & (O_NULL_OUT | O_NULL_IN)) {
        errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
    }
    const void *k = op_key(of, key, c->keys[0].pub, &errs);
    uint8_t *secret = fz_alloc(c->len), *peer = fz_alloc(plen);
    memset(secret, CANARY, c->len);
    memcpy(peer, pt, plen);
    const mbc_err err = mbc_ecdh((of & O_NULL_OUT) ? NULL : secret, (of & O_NULL_IN) ? NULL : peer,
                                 plen, (const mbc_ec_priv_key *)k);
    fz_expect("mbc_ecdh", err, errs);
    fz_count(err == MBC_OK ? "ECDH done" : "ECDH refused");
    if (err == MBC_OK) {
        fz_expect_same("x(d Q)", secret, want, c->len);
    } else {
        failed_out("mbc_ecdh", err, secret, c->len, (of & (O_WRONG_KEY | O_GCM_KEY)) != 0);
    }
    free(secret);
    free(peer);
    EC_POINT_free(Q);
    BN_free(bd);
    mbc_ec_priv_key_free(key);
}

/* sign_check: a signature of ours that must verify (OpenSSL's formula and
 * EVP, and mbc_ecdsa_verify under the key's public point). */
static void sign_check(const struct cfx *c, const uint8_t *sig, const uint8_t *dg, size_t dlen,
                       const mbc_ec_priv_key *key)
{
    uint8_t q[PLEN_MAX];
    mbc_ec_pub_key *pub = NULL;
    FZ_CHECK(mbc_ec_priv_key_public(key, q, sizeof(q)) == MBC_OK &&
                 mbc_ec_pub_key_new(&pub, c->id, q, c->plen) == MBC_OK,
             "public key of a private key");
    EC_POINT *Q = EC_POINT_new(c->g);
    FZ_CHECK(Q != NULL && EC_POINT_oct2point(c->g, Q, q, c->plen, fz_bn_ctx()) == 1, "Q");
    FZ_CHECK(verify_ref(c, Q, sig, dg, dlen), "our signature fails the formula");
    EVP_PKEY *pkey = mbt_ossl_ec_from_point(c->id, q, c->plen);
    FZ_CHECK(pkey != NULL, "OpenSSL public key");
    evp_agrees(pkey, c, sig, dg, dlen, 1);
    EVP_PKEY_free(pkey);
    fz_expect("mbc_ecdsa_verify(our signature)", mbc_ecdsa_verify(sig, dg, dlen, pub), 0);
    EC_POINT_free(Q);
    mbc_ec_pub_key_free(pub);
}

/* sign_k: OP_SIGN_K. A byte: bit 7 a fixed key (bits 0-1), else the key
 * of a fuzzed d; the op flags; a digest; k, a value near n - 1. */
static void sign_k(struct fz_in *in, const struct cfx *c, unsigned flags)
{
    const unsigned kb = fz_u8(in);
    BIGNUM *bd = NULL;
    mbc_ec_priv_key *own = NULL;
    const mbc_ec_priv_key *key;
    if (kb & 128) {
        key = c->keys[kb & 3].priv;
        bd = bn_dup(c->keys[kb & 3].bd);
    } else {
        key = own = priv_of(in, c, flags, &bd);
        if (key == NULL) {
            BN_free(bd);
            return;
        }
    }
    const unsigned ob = fz_u8(in), of = (ob & 128) ? ob : 0;
    uint8_t dg[DIGEST_MAX], d[LEN_MAX], want[2 * LEN_MAX];
    const size_t dlen = digest_of(in, dg);
    BIGNUM *nm1 = bn_dup(c->n);
    FZ_CHECK(BN_sub_word(nm1, 1) == 1, "n - 1");
    uint8_t *k = fz_alloc(c->len);
    value_be(in, c, nm1, k, c->len);
    BN_free(nm1);
    fz_bn_be(bd, d, c->len);
    const int ref = mbt_ossl_ecdsa_sign_k(c->id, d, k, dg, dlen, want);
    fz_errs errs = 0;
    if ((of & O_NULL_OUT) || ((of & O_NULL_IN) && dlen != 0)) {
        errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
    }
    const void *kk = op_key(of, key, c->keys[0].pub, &errs);
    if (ref != 0 && !(of & O_NULL_K)) {
        errs |= FZ_ERR(MBC_ERR_BAD_PARAM); /* k == 0, k >= n, r or s zero */
    }
    uint8_t *sig = fz_alloc(2 * c->len), *dig = fz_alloc(dlen);
    memset(sig, CANARY, 2 * c->len);
    memcpy(dig, dg, dlen);
    const mbc_err err =
        mbc_ecdsa_sign_k((of & O_NULL_OUT) ? NULL : sig, (of & O_NULL_IN) ? NULL : dig, dlen,
                         (const mbc_ec_priv_key *)kk, (of & O_NULL_K) ? NULL : k);
    fz_expect("mbc_ecdsa_sign_k", err, errs);
    fz_count(err == MBC_OK ? "signed" : "sign refused");
    if (err == MBC_OK) {
        if (!(of & O_NULL_K)) {
            fz_expect_same("signature with k (BIGNUM formula)", sig, want, 2 * c->len);
        }
        sign_check(c, sig, dig, dlen, key);
    } else {
        failed_out("mbc_ecdsa_sign_k", err, sig, 2 * c->len, (of & (O_WRONG_KEY | O_GCM_KEY)) != 0);
    }
    free(sig);
    free(dig);
    free(k);
    BN_free(bd);
    mbc_ec_priv_key_free(own);
}

/* keygen_check: d (len bytes) in [1, n - 1] and point its public point. */
static void keygen_check(const struct cfx *c, const uint8_t *d, const uint8_t *point)
{
    BIGNUM *bd = fz_bn(d, c->len);
    FZ_CHECK(!BN_is_zero(bd) && BN_cmp(bd, c->n) < 0, "generated d out of range");
    BN_free(bd);
    uint8_t want[PLEN_MAX];
    FZ_CHECK(mbt_ossl_ec_mul_g(c->id, d, c->len, want) == 0, "OpenSSL d G");
    fz_expect_same("generated point = d G", point, want, c->plen);
}

/* ------------------------------------------------------------- _mb8 calls */

#define LC(code) (1u << (code))

/* the lane byte of an _mb8 call: bits 0-1 a fixed key; bit 2 a bad lane:
 * then bits 3-4 the key: 0 that key, 1 the other curve's, 2 the key object
 * of the other type, 3 a GCM key; bits 5-7 a NULL pointer: */
#define L_NULL_KEY 1
#define L_NULL_OUT 2 /* sig (sign, verify) or secret; keygen: point */
#define L_NULL_IN 3  /* digest (sign, verify) or peer; keygen: d */
#define L_NULL_K 4   /* sign_k: k */
/* (5-7: none) */

/* the flags byte of an _mb8 call */
#define M_NULL_ARRAY 16 /* bits 0-2 pick the array (mod their number) passed as NULL */
#define M_BIG_MASK 32   /* lane_mask | 0x100 */
/* bits 6-7: the curve argument: 1 0, 2 an unknown value, else the curve */

/* lane_key: the key a lane byte passes (public ones for verify); adds the
 * codes it makes to *bad. */
static const void *lane_key(const struct cfx *c, unsigned spec, int pub, unsigned *bad)
{
    const struct key *k = &c->keys[spec & 3], *o = &fx[c == &fx[0]].keys[spec & 3];
    const unsigned which = (spec & 4) ? (spec >> 3) & 3 : 0;
    if ((spec & 4) && (spec >> 5) == L_NULL_KEY) {
        *bad |= LC(MBC_LANE_NULL_PARAM);
        return NULL;
    }
    if (which != 0) {
        *bad |= LC(MBC_LANE_BAD_PARAM);
    }
    switch (which) {
    case 0:
        return pub ? (const void *)k->pub : (const void *)k->priv;
    case 1:
        return pub ? (const void *)o->pub : (const void *)o->priv;
    case 2:
        return pub ? (const void *)k->priv : (const void *)k->pub;
    default:
        return gcm_key;
    }
}

struct lane {
    const struct key *k;
    const void *key;
    uint8_t *out, *out2, *dg, *in2;           /* the lane's buffers (exact sizes) */
    const uint8_t *pout, *pout2, *pdg, *pin2; /* what is passed (NULL, the buffer) */
    size_t dlen;
    unsigned codes; /* the lane codes allowed */
    uint8_t want[2 * LEN_MAX];
};

static const char *op_name(enum op op)
{
    static const char *const names[] = {"",
                                        "",
                                        "",
                                        "mbc_ecdsa_verify_mb8",
                                        "mbc_ecdh_mb8",
                                        "mbc_ecdsa_sign_k_mb8",
                                        "mbc_ec_keygen_mb8",
                                        "mbc_ecdsa_sign_mb8"};
    return names[op];
}

/* lane_data: the fields of lane l of op from the input; adds the codes its
 * data makes to *bad (key_ok: its key is right) and sets l->want. */
static void lane_data(struct fz_in *in, const struct cfx *c, enum op op, struct lane *l, int key_ok,
                      unsigned *bad)
{
    uint8_t buf[PT_MAX];
    if (op == OP_VERIFY_MB8 || op == OP_SIGN_K_MB8 || op == OP_SIGN_RANDOM) {
        l->dlen = digest_of(in, buf);
        l->dg = fz_alloc(l->dlen);
        memcpy(l->dg, buf, l->dlen);
    }
    if (op == OP_VERIFY_MB8) {
        l->in2 = fz_alloc(2 * c->len);
        sig_of(in, c, l->dg, l->dlen, l->in2);
        if (!key_ok || !verify_ref(c, l->k->Q, l->in2, l->dg, l->dlen)) {
            *bad |= LC(MBC_LANE_SIG_INVALID);
        }
    } else if (op == OP_ECDH_MB8) {
        (void)point_of(in, c, buf); /* its first point_len bytes */
        l->in2 = fz_alloc(c->plen);
        memcpy(l->in2, buf, c->plen);
        EC_POINT *Q = EC_POINT_new(c->g);
        FZ_CHECK(Q != NULL, "EC_POINT_new");
        const fz_errs pe = point_errs(c, l->in2, c->plen, Q);
        if (pe & (FZ_ERR(MBC_ERR_POINT_FORMAT) | FZ_ERR(MBC_ERR_POINT_RANGE))) {
            *bad |= LC(MBC_LANE_BAD_PARAM);
        } else if (pe != 0) {
            *bad |= LC(MBC_LANE_NOT_ON_CURVE);
        } else if (key_ok) {
            ecdh_ref(c, l->k->bd, Q, l->want);
        }
        EC_POINT_free(Q);
    } else if (op == OP_SIGN_K_MB8) {
        BIGNUM *nm1 = bn_dup(c->n);
        FZ_CHECK(BN_sub_word(nm1, 1) == 1, "n - 1");
        l->in2 = fz_alloc(c->len);
        value_be(in, c, nm1, l->in2, c->len);
        BN_free(nm1);
        if (key_ok && mbt_ossl_ecdsa_sign_k(c->id, l->k->d, l->in2, l->dg, l->dlen, l->want) != 0) {
            *bad |= LC(MBC_LANE_BAD_PARAM);
        }
    }
}

/* out_lens: the bytes of the two outputs of op's lanes. */
static void out_lens(const struct cfx *c, enum op op, size_t lens[2])
{
    lens[0] = op == OP_ECDH_MB8     ? c->len
              : op == OP_VERIFY_MB8 ? 0
              : op == OP_KEYGEN     ? c->len
                                    : 2 * c->len;
    lens[1] = op == OP_KEYGEN ? c->plen : 0;
}

/*
 * mb8: an _mb8 call of op: a mask byte, a flags byte (M_*), then 8 lanes
 * (a lane byte and the op's fields, read for inactive lanes too). Inactive
 * lanes get pointers that crash when used (they must not be read).
 */
static void mb8(struct fz_in *in, const struct cfx *c, enum op op)
{
    unsigned mask = fz_u8(in);
    const unsigned mf = fz_u8(in);
    if (mf & M_BIG_MASK) {
        mask |= 0x100;
    }
    const unsigned cv = mf >> 6;
    const mbc_curve curve = cv == 1 ? (mbc_curve)0 : cv == 2 ? (mbc_curve)(3 + (mf & 7)) : c->id;
    const unsigned narrays = op == OP_SIGN_K_MB8 ? 5
                             : op == OP_ECDH_MB8 ? 3
                             : op == OP_KEYGEN   ? 2
                                                 : 4;
    const int null_array = (mf & M_NULL_ARRAY) ? (int)((mf & 7) % narrays) : -1;
    const int writable = mask <= 0xFF && cv != 1 && cv != 2;
    size_t lens[2];
    out_lens(c, op, lens);
    const uint8_t *const wild = (const uint8_t *)(uintptr_t)64;
    struct lane L[MBC_LANES];
    uint8_t *outs[MBC_LANES], *outs2[MBC_LANES];
    const uint8_t *dgs[MBC_LANES], *in2s[MBC_LANES];
    size_t dls[MBC_LANES];
    const void *keys[MBC_LANES];
    for (unsigned i = 0; i < MBC_LANES; i++) {
        struct lane *l = &L[i];
        memset(l, 0, sizeof(*l));
        const unsigned spec = fz_u8(in);
        const int active = (mask >> i) & 1;
        unsigned bad = 0;
        l->k = &c->keys[spec & 3];
        if (op != OP_KEYGEN) {
            l->key = lane_key(c, spec, op == OP_VERIFY_MB8, &bad);
        }
        lane_data(in, c, op, l, bad == 0, &bad);
        for (unsigned j = 0; j < 2; j++) {
            uint8_t **o = j == 0 ? &l->out : &l->out2;
            if (lens[j] != 0) {
                *o = fz_alloc(lens[j]);
                memset(*o, CANARY, lens[j]);
            }
        }
        const unsigned nul = (spec & 4) ? spec >> 5 : 0;
        l->pout = nul == L_NULL_OUT && op != OP_VERIFY_MB8 && op != OP_KEYGEN ? NULL : l->out;
        l->pout2 = nul == L_NULL_OUT ? NULL : l->out2;
        l->pdg = nul == L_NULL_IN ? NULL : l->dg;
        l->pin2 = (nul == L_NULL_OUT && op == OP_VERIFY_MB8) ||
                          (nul == L_NULL_IN && op == OP_ECDH_MB8) ||
                          (nul == L_NULL_K && op == OP_SIGN_K_MB8)
                      ? NULL
                      : l->in2;
        if (op == OP_KEYGEN) {
            l->pout = nul == L_NULL_IN ? NULL : l->out;
        }
        const int null_ptr = (lens[0] != 0 && l->pout == NULL) ||
                             (lens[1] != 0 && l->pout2 == NULL) ||
                             (l->dg != NULL && l->pdg == NULL && l->dlen != 0) ||
                             (l->in2 != NULL && l->pin2 == NULL);
        if (null_ptr || null_array >= 0) {
            bad |= LC(MBC_LANE_NULL_PARAM);
        }
        if (mask > 0xFF) {
            l->codes = LC(MBC_LANE_BAD_PARAM);
        } else if (active && !writable) {
            /* an unknown curve (the header does not order it with NULL) */
            l->codes = LC(MBC_LANE_BAD_PARAM) | (bad & LC(MBC_LANE_NULL_PARAM));
        } else if (!active) {
            l->codes = LC(MBC_LANE_EMPTY);
        } else {
            l->codes = bad != 0 ? bad : LC(MBC_LANE_OK);
        }
        const int hide = !active && mask <= 0xFF;
        outs[i] = hide ? (uint8_t *)(uintptr_t)wild : (uint8_t *)(uintptr_t)l->pout;
        outs2[i] = hide ? (uint8_t *)(uintptr_t)wild : (uint8_t *)(uintptr_t)l->pout2;
        dgs[i] = hide ? wild : l->pdg;
        in2s[i] = hide ? wild : l->pin2;
        dls[i] = l->dlen;
        keys[i] = hide ? wild : l->key;
    }
#define ARR(j, a) (null_array == (j) ? NULL : (a))
    mbc_status st;
    switch (op) {
    case OP_VERIFY_MB8:
        st = mbc_ecdsa_verify_mb8(ARR(0, in2s), ARR(1, dgs), ARR(2, dls),
                                  ARR(3, (const mbc_ec_pub_key *const *)keys), curve, mask);
        break;
    case OP_ECDH_MB8:
        st = mbc_ecdh_mb8(ARR(0, outs), ARR(1, in2s), ARR(2, (const mbc_ec_priv_key *const *)keys),
                          curve, mask);
        break;
    case OP_SIGN_K_MB8:
        st = mbc_ecdsa_sign_k_mb8(ARR(0, outs), ARR(1, dgs), ARR(2, dls),
                                  ARR(3, (const mbc_ec_priv_key *const *)keys), ARR(4, in2s), curve,
                                  mask);
        break;
    case OP_KEYGEN:
        st = mbc_ec_keygen_mb8(ARR(0, outs), ARR(1, outs2), curve, mask);
        break;
    default:
        st = mbc_ecdsa_sign_mb8(ARR(0, outs), ARR(1, dgs), ARR(2, dls),
                                ARR(3, (const mbc_ec_priv_key *const *)keys), curve, mask);
        break;
    }
#undef ARR
    for (unsigned i = 0; i < MBC_LANES; i++) {
        struct lane *l = &L[i];
        const unsigned code = mbc_lane_code(st, i);
        FZ_CHECK(code < 16 && (l->codes & LC(code)), "%s: lane %u is %s (allowed: %#x)",
                 op_name(op), i, mbc_lane_code_str(code), l->codes);
        fz_count(code == MBC_LANE_OK ? "mb8 lanes OK" : "mb8 lanes failed");
        /* outputs: OK lanes the result; active failed lanes of a well-formed
         * call zeroed where the pointer was passed (output j is in array j);
         * the others untouched */
        for (unsigned j = 0; j < 2 && code != MBC_LANE_OK; j++) {
            const uint8_t *o = j == 0 ? l->out : l->out2;
            const uint8_t *po = j == 0 ? l->pout : l->pout2;
            if (o == NULL) {
                continue;
            }
            const int z = code != MBC_LANE_EMPTY && writable && po != NULL && null_array != (int)j;
            FZ_CHECK(fz_all(o, lens[j], z ? 0 : CANARY), "%s: lane %u (%s): output %u %s",
                     op_name(op), i, mbc_lane_code_str(code), j, z ? "not zeroed" : "written");
        }
        if (code == MBC_LANE_OK) {
            if (op == OP_ECDH_MB8 || op == OP_SIGN_K_MB8) {
                fz_expect_same(op_name(op), l->out, l->want, lens[0]);
            }
            if (op == OP_SIGN_K_MB8 || op == OP_SIGN_RANDOM) {
                sign_check(c, l->out, l->dg, l->dlen, l->k->priv);
            }
            if (op == OP_KEYGEN) {
                keygen_check(c, l->out, l->out2);
            }
        }
        free(l->out);
        free(l->out2);
        free(l->dg);
        free(l->in2);
    }
}

/* keygen: mbc_ec_keygen (flags: d NULL, point NULL, unknown curve), then
 * an mbc_ec_keygen_mb8 call. */
static void keygen(struct fz_in *in, const struct cfx *c, unsigned flags)
{
    uint8_t *d = fz_alloc(c->len), *pt = fz_alloc(c->plen);
    memset(d, CANARY, c->len);
    memset(pt, CANARY, c->plen);
    fz_errs errs = 0;
    if (flags & (F_NULL_OUT | F_NULL_IN)) {
        errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
    }
    if (flags & F_BAD_CURVE) {
        errs |= FZ_ERR(MBC_ERR_BAD_PARAM);
    }
    const mbc_err err =
        mbc_ec_keygen((flags & F_NULL_OUT) ? NULL : d, (flags & F_NULL_IN) ? NULL : pt,
                      (flags & F_BAD_CURVE) ? (mbc_curve)0 : c->id);
    fz_expect("mbc_ec_keygen", err, errs);
    if (err == MBC_OK) {
        keygen_check(c, d, pt);
    } else {
        FZ_CHECK(fz_all(d, c->len, CANARY) && fz_all(pt, c->plen, CANARY),
                 "mbc_ec_keygen wrote after %s", mbc_err_str(err));
    }
    free(d);
    free(pt);
    mb8(in, c, OP_KEYGEN);
}

/* --------------------------------------------------------------- one input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in = {data, size};
    fz_use_impl(MBC_ALG_EC, fz_u8(&in));
    const unsigned b = fz_u8(&in);
    const struct cfx *c = &fx[b & 1];
    const enum op op = (enum op)((b >> 1) & 7);
    const unsigned flags = (b & 16) ? fz_u8(&in) : 0;
    switch (op) {
    case OP_PUB_VERIFY:
        pub_verify(&in, c, flags);
        break;
    case OP_PRIV_ECDH:
        priv_ecdh(&in, c, flags);
        break;
    case OP_SIGN_K:
        sign_k(&in, c, flags);
        break;
    case OP_KEYGEN:
        keygen(&in, c, flags);
        break;
    default:
        mb8(&in, c, op);
        break;
    }
    ERR_clear_error();
    return 0;
}

/* ------------------------------------------------------------------- seeds */

/* value encodings (see value()) */
static void v_raw(struct fz_out *o, size_t len)
{
    uint8_t b[LEN_MAX];
    fz_seed_rand(b, len);
    fz_put_u8(o, 0);
    fz_put(o, b, len);
}
static void v_kind(struct fz_out *o, unsigned kind)
{
    fz_put_u8(o, kind);
}
static void v_delta(struct fz_out *o, unsigned kind, int delta)
{
    fz_put_u8(o, kind | 8);
    fz_put_u8(o, (unsigned)delta & 0xff);
}
#define K_N 1
#define K_P 2
#define K_ZERO 3
#define K_GOOD 4
#define K_ONES 5

static void digest(struct fz_out *o, size_t len)
{
    uint8_t b[DIGEST_MAX];
    fz_seed_rand(b, len);
    fz_put_u8(o, (unsigned)len);
    fz_put(o, b, len);
}

/* a valid signature of key k (r, s: kinds, as value()) */
static void sig(struct fz_out *o, size_t len, unsigned k, unsigned r, unsigned s)
{
    fz_put_u8(o, 4 | k);
    v_raw(o, len);
    v_kind(o, r);
    v_kind(o, s);
}

static void seed(const char *dir, unsigned *count, const struct fz_out *o)
{
    char name[64];
    snprintf(name, sizeof(name), "seed-%03u", (*count)++);
    fz_seed_write(dir, name, o);
}

static void write_seeds(const char *dir)
{
    unsigned count = 0;
    for (unsigned impl = 0; impl < fz_num_impls(MBC_ALG_EC); impl++) {
        for (unsigned ci = 0; ci < 2; ci++) {
            const size_t len = ci == 0 ? 32 : 48;
            struct fz_out o;
#define BEGIN(op, flags)                                                                           \
    o.len = 0;                                                                                     \
    fz_put_u8(&o, impl);                                                                           \
    fz_put_u8(&o, ci | (op) << 1 | (flags))
            /* points: Q, -Q, x with its root, x = p, off the curve, compressed,
             * the byte 00, 00 || X || Y, then a valid signature on Q of each
             * digest length, and r, s = 0, n - 1, n, good + n */
            const unsigned forms[] = {2 << 3, 1 | 3 << 3, 2, 3, 128, 6, 4, 32};
            for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
                BEGIN(OP_PUB_VERIFY, 0);
                fz_put_u8(&o, forms[f]);
                if (forms[f] == 2) {
                    v_raw(&o, len);
                    fz_put_u8(&o, 0);
                } else if (forms[f] == 3) {
                    v_kind(&o, K_P);
                    v_kind(&o, K_GOOD);
                } else if (forms[f] == 32) {
                    fz_put_u8(&o, 0);
                }
                digest(&o, 32);
                sig(&o, len, 2, K_GOOD, K_GOOD);
                seed(dir, &count, &o);
            }
            const size_t dlens[] = {0, 1, 20, 47, 48, 64, 100};
            for (size_t d = 0; d < sizeof(dlens) / sizeof(dlens[0]); d++) {
                BEGIN(OP_PUB_VERIFY, 0);
                fz_put_u8(&o, 1 << 3);
                digest(&o, dlens[d]);
                sig(&o, len, 1, K_GOOD, K_GOOD);
                seed(dir, &count, &o);
            }
            const unsigned rs[][2] = {{K_ZERO, K_GOOD},      {K_GOOD, K_ZERO},
                                      {K_N, K_GOOD},         {K_GOOD, K_N},
                                      {K_GOOD | 32, K_GOOD}, {K_GOOD, K_GOOD | 32}};
            for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
                BEGIN(OP_PUB_VERIFY, 0);
                fz_put_u8(&o, 0);
                digest(&o, 32);
                sig(&o, len, 0, rs[i][0], rs[i][1]);
                seed(dir, &count, &o);
            }
            /* private keys: good, 0, n, n - 1, leading zeros, short; then ECDH
             * with Q, -Q, off the curve, x = p + small, first byte 00 */
            for (unsigned v = 0; v < 6; v++) {
                BEGIN(OP_PRIV_ECDH, 0);
                if (v == 0 || v == 4) {
                    v_kind(&o, K_GOOD);
                } else if (v == 1) {
                    v_kind(&o, K_ZERO);
                } else if (v == 2) {
                    v_kind(&o, K_N);
                } else if (v == 3) {
                    v_delta(&o, K_N, -1);
                } else {
                    v_raw(&o, len);
                }
                fz_put_u8(&o, v == 4 ? 128 | (unsigned)(len + 7) % 64 : v == 5 ? 128 | 5 : 0);
                if (v == 4) {
                    fz_put_u8(&o, 0);
                }
                fz_put_u8(&o, 0);
                fz_put_u8(&o, v % 3 << 3);
                seed(dir, &count, &o);
            }
            const unsigned peers[] = {1, 128 | 2 << 3, 7 | 3 << 3, 32 | 1 << 3};
            for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
                BEGIN(OP_PRIV_ECDH, 0);
                v_kind(&o, K_GOOD);
                fz_put_u8(&o, 0);
                fz_put_u8(&o, 0);
                fz_put_u8(&o, peers[i]);
                if ((peers[i] & 7) == 7) {
                    v_delta(&o, K_P, 3);
                } else if (peers[i] & 32) {
                    fz_put_u8(&o, 0);
                }
                seed(dir, &count, &o);
            }
            /* sign with k: n - 1, 0, n, random, a fuzzed d, a random nonce */
            const unsigned ks[] = {K_GOOD, K_ZERO, K_N, 0, 0, 0};
            for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
                BEGIN(OP_SIGN_K, 0);
                if (i == 4) {
                    fz_put_u8(&o, 0);
                    v_raw(&o, len);
                    fz_put_u8(&o, 0);
                } else {
                    fz_put_u8(&o, 128 | (unsigned)i % 4);
                }
                fz_put_u8(&o, i == 5 ? 128 | O_NULL_K : 0);
                digest(&o, 32);
                if (ks[i] == 0) {
                    v_raw(&o, len);
                } else {
                    v_kind(&o, ks[i]);
                }
                seed(dir, &count, &o);
            }
            /* _mb8: every lane good, then mixed good and bad lanes */
            const enum op mops[] = {OP_VERIFY_MB8, OP_ECDH_MB8, OP_SIGN_K_MB8, OP_SIGN_RANDOM,
                                    OP_KEYGEN};
            for (size_t m = 0; m < sizeof(mops) / sizeof(mops[0]); m++) {
                for (unsigned mixed = 0; mixed < 2; mixed++) {
                    BEGIN(mops[m], 0);
                    fz_put_u8(&o, mixed ? 0xB7 : 0xFF);
                    fz_put_u8(&o, 0);
                    for (unsigned i = 0; i < MBC_LANES; i++) {
                        const unsigned bad_lane = mixed && (i == 1 || i == 4);
                        const unsigned spec = (i & 3) | (bad_lane && i == 1 ? 4 | 1 << 3 : 0) |
                                              (bad_lane && i == 4 ? 4 | L_NULL_OUT << 5 : 0);
                        fz_put_u8(&o, spec);
                        if (mops[m] == OP_VERIFY_MB8 || mops[m] == OP_SIGN_K_MB8 ||
                            mops[m] == OP_SIGN_RANDOM) {
                            digest(&o, 32);
                        }
                        if (mops[m] == OP_VERIFY_MB8) {
                            sig(&o, len, i & 3, mixed && i == 6 ? K_N : K_GOOD, K_GOOD);
                        } else if (mops[m] == OP_ECDH_MB8) {
                            fz_put_u8(&o, (mixed && i == 6 ? 128 : 0) | ((i + 1) & 3) << 3);
                        } else if (mops[m] == OP_SIGN_K_MB8) {
                            if (mixed && i == 6) {
                                v_kind(&o, K_N);
                            } else {
                                v_raw(&o, len);
                            }
                        }
                    }
                    seed(dir, &count, &o);
                }
            }
#undef BEGIN
        }
    }
}

const struct fz_target fz_target = {"fuzz_ec", init, write_seeds};
