/* ossl_ec.c - see ossl_ec.h. */
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>

#include "ossl_ec.h"

const char *mbt_ossl_ec_group_name(mbc_curve curve)
{
    return curve == MBC_CURVE_P256 ? "prime256v1" : curve == MBC_CURVE_P384 ? "secp384r1" : NULL;
}

static int curve_nid(mbc_curve curve)
{
    return curve == MBC_CURVE_P256 ? NID_X9_62_prime256v1 : NID_secp384r1;
}

EVP_PKEY *mbt_ossl_ec_keygen(mbc_curve curve)
{
    const char *name = mbt_ossl_ec_group_name(curve);
    return name != NULL ? EVP_EC_gen(name) : NULL;
}

int mbt_ossl_ec_get(const EVP_PKEY *pkey, mbc_curve curve, uint8_t *d, uint8_t *point)
{
    const size_t len = mbc_ec_scalar_len(curve), plen = mbc_ec_point_len(curve);
    int rc = 0;
    if (d != NULL) {
        BIGNUM *bn = NULL;
        rc = EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &bn) == 1 &&
                     BN_bn2binpad(bn, d, (int)len) == (int)len
                 ? 0
                 : -1;
        BN_clear_free(bn);
    }
    if (rc == 0 && point != NULL) {
        uint8_t buf[256];
        size_t got = 0;
        rc = EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, buf, sizeof(buf),
                                             &got) == 1 &&
                     got == plen
                 ? 0
                 : -1;
        if (rc == 0) {
            memcpy(point, buf, plen);
        }
    }
    return rc;
}

/* from_params: an EC key of curve with the encoded public point and (when
 * d is not NULL) the private scalar. */
static EVP_PKEY *from_params(mbc_curve curve, const uint8_t *point, size_t len, const uint8_t *d,
                             size_t d_len)
{
    const char *name = mbt_ossl_ec_group_name(curve);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    BIGNUM *bn = d != NULL ? BN_bin2bn(d, (int)d_len, NULL) : NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    EVP_PKEY *pkey = NULL;
    if (name != NULL && bld != NULL && (d == NULL || bn != NULL) &&
        OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, name, 0) == 1 &&
        OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, len) == 1 &&
        (bn == NULL || OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, bn) == 1) &&
        (params = OSSL_PARAM_BLD_to_param(bld)) != NULL &&
        (ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)) != NULL &&
        EVP_PKEY_fromdata_init(ctx) == 1) {
        if (EVP_PKEY_fromdata(ctx, &pkey, d != NULL ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY,
                              params) != 1) {
            pkey = NULL;
        }
    }
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_clear_free(bn);
    return pkey;
}

EVP_PKEY *mbt_ossl_ec_from_point(mbc_curve curve, const uint8_t *point, size_t len)
{
    return from_params(curve, point, len, NULL, 0);
}

EVP_PKEY *mbt_ossl_ec_from_d(mbc_curve curve, const uint8_t *d, size_t len)
{
    uint8_t point[256];
    if (mbt_ossl_ec_mul_g(curve, d, len, point) != 0) {
        return NULL;
    }
    return from_params(curve, point, mbc_ec_point_len(curve), d, len);
}

int mbt_ossl_ec_mul_g(mbc_curve curve, const uint8_t *d, size_t len, uint8_t *point)
{
    EC_GROUP *g = EC_GROUP_new_by_curve_name(curve_nid(curve));
    EC_POINT *p = g != NULL ? EC_POINT_new(g) : NULL;
    BIGNUM *bn = BN_bin2bn(d, (int)len, NULL);
    BN_CTX *ctx = BN_CTX_new();
    const size_t plen = mbc_ec_point_len(curve);
    int rc = -1;
    if (p != NULL && bn != NULL && ctx != NULL && EC_POINT_mul(g, p, bn, NULL, NULL, ctx) == 1 &&
        !EC_POINT_is_at_infinity(g, p) &&
        EC_POINT_point2oct(g, p, POINT_CONVERSION_UNCOMPRESSED, point, plen, ctx) == plen) {
        rc = 0;
    }
    BN_CTX_free(ctx);
    BN_clear_free(bn);
    EC_POINT_free(p);
    EC_GROUP_free(g);
    return rc;
}

int mbt_ossl_ecdsa_sign_k(mbc_curve curve, const uint8_t *d, const uint8_t *k,
                          const uint8_t *digest, size_t digest_len, uint8_t *sig)
{
    const size_t len = mbc_ec_scalar_len(curve);
    EC_GROUP *g = EC_GROUP_new_by_curve_name(curve_nid(curve));
    EC_POINT *p = g != NULL ? EC_POINT_new(g) : NULL;
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *bd = BN_bin2bn(d, (int)len, NULL), *bk = BN_bin2bn(k, (int)len, NULL);
    BIGNUM *z = BN_bin2bn(digest, (int)(digest_len < len ? digest_len : len), NULL);
    BIGNUM *x = BN_new(), *r = BN_new(), *s = BN_new(), *kinv = BN_new();
    const BIGNUM *n = g != NULL ? EC_GROUP_get0_order(g) : NULL;
    int rc = -1;
    if (p != NULL && ctx != NULL && bd != NULL && bk != NULL && z != NULL && x != NULL &&
        r != NULL && s != NULL && kinv != NULL && n != NULL && !BN_is_zero(bk) &&
        BN_cmp(bk, n) < 0 && EC_POINT_mul(g, p, bk, NULL, NULL, ctx) == 1 &&
        EC_POINT_get_affine_coordinates(g, p, x, NULL, ctx) == 1 && BN_nnmod(r, x, n, ctx) == 1 &&
        BN_mod_inverse(kinv, bk, n, ctx) != NULL && BN_mod_mul(s, r, bd, n, ctx) == 1 &&
        BN_mod_add(s, s, z, n, ctx) == 1 && BN_mod_mul(s, s, kinv, n, ctx) == 1 && !BN_is_zero(r) &&
        !BN_is_zero(s) && BN_bn2binpad(r, sig, (int)len) == (int)len &&
        BN_bn2binpad(s, sig + len, (int)len) == (int)len) {
        rc = 0;
    }
    BN_clear_free(bd);
    BN_clear_free(bk);
    BN_free(z);
    BN_free(x);
    BN_free(r);
    BN_free(s);
    BN_clear_free(kinv);
    BN_CTX_free(ctx);
    EC_POINT_free(p);
    EC_GROUP_free(g);
    return rc;
}

int mbt_ecdsa_der_to_raw(const uint8_t *der, size_t der_len, size_t len, uint8_t *raw)
{
    const unsigned char *q = der;
    ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &q, (long)der_len);
    int rc = -1;
    if (es != NULL && q == der + der_len &&
        BN_bn2binpad(ECDSA_SIG_get0_r(es), raw, (int)len) == (int)len &&
        BN_bn2binpad(ECDSA_SIG_get0_s(es), raw + len, (int)len) == (int)len) {
        rc = 0;
    }
    ECDSA_SIG_free(es);
    return rc;
}

size_t mbt_ecdsa_raw_to_der(const uint8_t *raw, size_t len, uint8_t *out)
{
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, (int)len, NULL), *s = BN_bin2bn(raw + len, (int)len, NULL);
    size_t n = 0;
    if (es != NULL && r != NULL && s != NULL && ECDSA_SIG_set0(es, r, s) == 1) {
        r = s = NULL; /* owned by es */
        unsigned char *p = out;
        const int got = i2d_ECDSA_SIG(es, &p);
        n = got > 0 ? (size_t)got : 0;
    }
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(es);
    return n;
}

int mbt_ossl_ecdsa_sign(EVP_PKEY *pkey, mbc_curve curve, const uint8_t *digest, size_t digest_len,
                        uint8_t *sig)
{
    uint8_t der[160];
    size_t der_len = sizeof(der);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int rc = ctx != NULL && EVP_PKEY_sign_init(ctx) == 1 &&
                     EVP_PKEY_sign(ctx, der, &der_len, digest, digest_len) == 1
                 ? mbt_ecdsa_der_to_raw(der, der_len, mbc_ec_scalar_len(curve), sig)
                 : -1;
    EVP_PKEY_CTX_free(ctx);
    return rc;
}

int mbt_ossl_ecdsa_verify(EVP_PKEY *pkey, mbc_curve curve, const uint8_t *sig,
                          const uint8_t *digest, size_t digest_len)
{
    uint8_t der[160];
    const size_t der_len = mbt_ecdsa_raw_to_der(sig, mbc_ec_scalar_len(curve), der);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int rc = -1;
    if (der_len != 0 && ctx != NULL && EVP_PKEY_verify_init(ctx) == 1) {
        rc = EVP_PKEY_verify(ctx, der, der_len, digest, digest_len) == 1 ? 1 : 0;
    }
    EVP_PKEY_CTX_free(ctx);
    return rc;
}

int mbt_ossl_ecdh(EVP_PKEY *priv, EVP_PKEY *peer, uint8_t *secret, size_t secret_len)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, priv, NULL);
    size_t got = secret_len;
    int rc = ctx != NULL && EVP_PKEY_derive_init(ctx) == 1 &&
                     EVP_PKEY_derive_set_peer(ctx, peer) == 1 &&
                     EVP_PKEY_derive(ctx, secret, &got) == 1 && got == secret_len
                 ? 0
                 : -1;
    EVP_PKEY_CTX_free(ctx);
    return rc;
}
