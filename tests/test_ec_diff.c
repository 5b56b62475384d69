/*
 * test_ec_diff.c - P-256 and P-384 against OpenSSL: signatures with a given
 * nonce equal OpenSSL's (computed with BIGNUM and EC_POINT), random-nonce
 * signatures verify under OpenSSL and OpenSSL's under mbcrypto, ECDH
 * secrets and generated key pairs agree; thousands per operation and curve
 * (mbt_scale: fewer in the sanitizer builds, 20x with MBC_TEST_SOAK=1),
 * through the 8-lane calls with random lane masks (one batch in 8 on the
 * batch kernel, test hook ec_batch_plan) and the single calls. Then the
 * edge scalars (1, 2, n - 1, n - 2, small multiples and window edges; 0 and
 * n rejected), points of low x, the point at infinity, digests of every
 * length around the order's.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>

#include "ossl_ec.h"
#include "test_hooks.h"
#include "ec_impls.h"
#include "test_util.h"

#define MAX_LEN 48
#define MAX_POINT 97
#define NKEYS 8

static const mbc_curve curves[] = {MBC_CURVE_P256, MBC_CURVE_P384};

struct key {
    EVP_PKEY *pkey;
    uint8_t d[MAX_LEN];
    uint8_t point[MAX_POINT];
    mbc_ec_priv_key *priv;
    mbc_ec_pub_key *pub;
};

static struct fixture {
    int ready;
    struct key k[2][NKEYS]; /* [curve][i] */
} fx;

static void key_init(struct key *k, mbc_curve curve)
{
    k->pkey = mbt_ossl_ec_keygen(curve);
    assert_non_null(k->pkey);
    assert_int_equal(mbt_ossl_ec_get(k->pkey, curve, k->d, k->point), 0);
    assert_int_equal(mbc_ec_priv_key_new(&k->priv, curve, k->d, mbc_ec_scalar_len(curve)), MBC_OK);
    assert_int_equal(mbc_ec_pub_key_new(&k->pub, curve, k->point, mbc_ec_point_len(curve)), MBC_OK);
    uint8_t q[MAX_POINT];
    assert_int_equal(mbc_ec_priv_key_public(k->priv, q, sizeof(q)), MBC_OK);
    assert_memory_equal(q, k->point, mbc_ec_point_len(curve));
}

static const struct fixture *fixture(void)
{
    if (!fx.ready) {
        for (int c = 0; c < 2; c++) {
            for (int i = 0; i < NKEYS; i++) {
                key_init(&fx.k[c][i], curves[c]);
            }
        }
        fx.ready = 1;
    }
    return &fx;
}

static void fixture_free(void)
{
    for (int c = 0; c < 2 && fx.ready; c++) {
        for (int i = 0; i < NKEYS; i++) {
            EVP_PKEY_free(fx.k[c][i].pkey);
            mbc_ec_priv_key_free(fx.k[c][i].priv);
            mbc_ec_pub_key_free(fx.k[c][i].pub);
        }
    }
    fx.ready = 0;
}

static const char *ec_begin(void **state)
{
    mbc_test_hooks.ec_fault_lanes = 0;
    mbc_test_hooks.ec_batch_plan = 0;
    const char *impl = mbt_use_ec_impl(state);
    assert_string_equal(mbc_impl_name(MBC_ALG_EC), impl);
    fixture();
    return impl;
}

/* batch_mask: a random non-empty lane mask, often full. */
static unsigned batch_mask(void)
{
    const uint64_t r = mbt_rand();
    const unsigned m = (r & 3) == 0 ? (unsigned)(r >> 8) & 0xFF : 0xFF;
    return m != 0 ? m : 0x80;
}

/* rand_scalar: a random scalar in [1, n-1], len bytes. */
static void rand_scalar(mbc_curve curve, uint8_t *out)
{
    const size_t len = mbc_ec_scalar_len(curve);
    EC_GROUP *g =
        EC_GROUP_new_by_curve_name(curve == MBC_CURVE_P256 ? NID_X9_62_prime256v1 : NID_secp384r1);
    BIGNUM *v = BN_new();
    do {
        mbt_rand_bytes(out, len);
        BN_bin2bn(out, (int)len, v);
    } while (BN_is_zero(v) || BN_cmp(v, EC_GROUP_get0_order(g)) >= 0);
    BN_free(v);
    EC_GROUP_free(g);
}

/* n_minus: n - v (v small), len bytes. */
static void n_minus(mbc_curve curve, unsigned v, uint8_t *out)
{
    EC_GROUP *g =
        EC_GROUP_new_by_curve_name(curve == MBC_CURVE_P256 ? NID_X9_62_prime256v1 : NID_secp384r1);
    BIGNUM *t = BN_dup(EC_GROUP_get0_order(g));
    BN_sub_word(t, v);
    BN_bn2binpad(t, out, (int)mbc_ec_scalar_len(curve));
    BN_free(t);
    EC_GROUP_free(g);
}

static void small(mbc_curve curve, unsigned v, uint8_t *out)
{
    const size_t len = mbc_ec_scalar_len(curve);
    memset(out, 0, len);
    out[len - 1] = (uint8_t)v;
    out[len - 2] = (uint8_t)(v >> 8);
}

/* edge_scalar: the i-th edge scalar: 1, 2, n - 1, n - 2, the multiples of
 * a window edge (15, 16, 17, 31, 32, 33), a power of 2 at a digit edge,
 * then n minus a window edge (n - 32 .. n - 2 are the scalars whose last
 * addition of d P doubles; near n the top windows of k G meet the
 * largest sums). */
static void edge_scalar(mbc_curve curve, unsigned i, uint8_t *out)
{
    static const unsigned smalls[] = {1, 2, 15, 16, 17, 31, 32, 33, 1023, 1024};
    static const unsigned nms[] = {4, 16, 17, 30, 32, 33};
    const unsigned ns = sizeof(smalls) / sizeof(smalls[0]);
    const size_t len = mbc_ec_scalar_len(curve);
    if (i < ns) {
        small(curve, smalls[i], out);
    } else if (i < ns + 3) {
        n_minus(curve, i - ns + 1, out); /* n - 1, n - 2, n - 3 */
    } else if (i < 16) {
        memset(out, 0, len);
        out[len - 1 - (52 * (i - ns - 2)) / 8 % len] = 1; /* 2^(52 j) area */
    } else {
        n_minus(curve, nms[i - 16], out);
    }
}
#define NUM_EDGE 22

/* ------------------------------------------------------------------------ */
/* Signatures                                                                */
/* ------------------------------------------------------------------------ */

/* sign_k: batches of signatures with given nonces against OpenSSL's. */
static void test_sign_k(void **state)
{
    ec_begin(state);
    for (int ci = 0; ci < 2; ci++) {
        const mbc_curve curve = curves[ci];
        const size_t len = mbc_ec_scalar_len(curve), slen = mbc_ec_sig_len(curve);
        const size_t batches = mbt_scale(128);
        for (size_t b = 0; b < batches; b++) {
            uint8_t sig[MBC_LANES][2 * MAX_LEN], want[MBC_LANES][2 * MAX_LEN];
            uint8_t k[MBC_LANES][MAX_LEN], digest[MBC_LANES][100];
            uint8_t *sp[MBC_LANES];
            const uint8_t *kp[MBC_LANES], *dp[MBC_LANES];
            size_t dl[MBC_LANES];
            const mbc_ec_priv_key *key[MBC_LANES];
            const unsigned mask = batch_mask();
            for (unsigned l = 0; l < MBC_LANES; l++) {
                const struct key *kk = &fx.k[ci][(b + l) % NKEYS];
                rand_scalar(curve, k[l]);
                dl[l] = (b + l) % 5 == 0 ? mbt_rand() % 100 : len;
                mbt_rand_bytes(digest[l], dl[l]);
                assert_int_equal(
                    mbt_ossl_ecdsa_sign_k(curve, kk->d, k[l], digest[l], dl[l], want[l]), 0);
                sp[l] = sig[l];
                kp[l] = k[l];
                dp[l] = digest[l];
                key[l] = kk->priv;
                memset(sig[l], 0xA5, sizeof(sig[l]));
            }
            mbc_test_hooks.ec_batch_plan = b % 8 == 7;
            const mbc_status st = mbc_ecdsa_sign_k_mb8(sp, dp, dl, key, kp, curve, mask);
            mbc_test_hooks.ec_batch_plan = 0;
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if (!((mask >> l) & 1u)) {
                    assert_int_equal(mbc_lane_code(st, l), MBC_LANE_EMPTY);
                    continue;
                }
                assert_int_equal(mbc_lane_code(st, l), MBC_LANE_OK);
                if (memcmp(sig[l], want[l], slen) != 0) {
                    fail_msg("P-%zu batch %zu lane %u: signature differs from OpenSSL's", len * 8,
                             b, l);
                }
            }
            /* one lane again through the single call */
            const unsigned l = (unsigned)(b % MBC_LANES);
            memset(sig[l], 0, slen);
            assert_int_equal(mbc_ecdsa_sign_k(sig[l], digest[l], dl[l], key[l], k[l]), MBC_OK);
            assert_memory_equal(sig[l], want[l], slen);
        }
    }
}

/* sign_verify: random-nonce signatures verify under OpenSSL (and ours),
 * OpenSSL's verify under ours; a changed byte fails both. */
static void test_sign_verify(void **state)
{
    ec_begin(state);
    for (int ci = 0; ci < 2; ci++) {
        const mbc_curve curve = curves[ci];
        const size_t len = mbc_ec_scalar_len(curve), slen = mbc_ec_sig_len(curve);
        const size_t batches = mbt_scale(128);
        for (size_t b = 0; b < batches; b++) {
            uint8_t sig[MBC_LANES][2 * MAX_LEN], theirs[MBC_LANES][2 * MAX_LEN];
            uint8_t digest[MBC_LANES][64];
            uint8_t *sp[MBC_LANES];
            const uint8_t *csp[MBC_LANES], *tsp[MBC_LANES], *dp[MBC_LANES];
            size_t dl[MBC_LANES];
            const mbc_ec_priv_key *priv[MBC_LANES];
            const mbc_ec_pub_key *pub[MBC_LANES];
            const unsigned mask = batch_mask();
            for (unsigned l = 0; l < MBC_LANES; l++) {
                const struct key *kk = &fx.k[ci][(b * 3 + l) % NKEYS];
                dl[l] = (b + l) % 7 == 0 ? 64 : len;
                mbt_rand_bytes(digest[l], dl[l]);
                sp[l] = sig[l];
                csp[l] = sig[l];
                tsp[l] = theirs[l];
                dp[l] = digest[l];
                priv[l] = kk->priv;
                pub[l] = kk->pub;
                assert_int_equal(mbt_ossl_ecdsa_sign(kk->pkey, curve, digest[l], dl[l], theirs[l]),
                                 0);
            }
            mbc_test_hooks.ec_batch_plan = b % 8 == 3;
            mbc_status st = mbc_ecdsa_sign_mb8(sp, dp, dl, priv, curve, mask);
            assert_int_equal(mbc_status_ok_mask(st), mask);
            st = mbc_ecdsa_verify_mb8(tsp, dp, dl, pub, curve, 0xFF);
            assert_int_equal(st, 0);
            st = mbc_ecdsa_verify_mb8(csp, dp, dl, pub, curve, mask);
            assert_int_equal(mbc_status_ok_mask(st), mask);
            mbc_test_hooks.ec_batch_plan = 0;
            for (unsigned l = 0; l < MBC_LANES; l++) {
                const struct key *kk = &fx.k[ci][(b * 3 + l) % NKEYS];
                if ((mask >> l) & 1u) {
                    if (mbt_ossl_ecdsa_verify(kk->pkey, curve, sig[l], digest[l], dl[l]) != 1) {
                        fail_msg("P-%zu batch %zu lane %u: OpenSSL rejects our signature", len * 8,
                                 b, l);
                    }
                }
                /* a flipped bit of r, s or the digest fails */
                theirs[l][(b + l) % slen] ^= (uint8_t)(1u << (l % 8));
            }
            st = mbc_ecdsa_verify_mb8(tsp, dp, dl, pub, curve, 0xFF);
            assert_int_equal(mbc_status_ok_mask(st), 0);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                assert_int_equal(mbc_lane_code(st, l), MBC_LANE_SIG_INVALID);
            }
            const unsigned l = (unsigned)(b % MBC_LANES);
            theirs[l][(b + l) % slen] ^= (uint8_t)(1u << (l % 8));
            assert_int_equal(mbc_ecdsa_verify(theirs[l], digest[l], dl[l], pub[l]), MBC_OK);
            assert_int_equal(mbc_ecdsa_sign(sig[l], digest[l], dl[l], priv[l]), MBC_OK);
            assert_int_equal(mbc_ecdsa_verify(sig[l], digest[l], dl[l], pub[l]), MBC_OK);
            digest[l][0] ^= 0x80;
            assert_int_equal(mbc_ecdsa_verify(sig[l], digest[l], dl[l], pub[l]),
                             MBC_ERR_SIG_INVALID);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* ECDH and key generation                                                   */
/* ------------------------------------------------------------------------ */

static void test_ecdh(void **state)
{
    ec_begin(state);
    for (int ci = 0; ci < 2; ci++) {
        const mbc_curve curve = curves[ci];
        const size_t len = mbc_ec_scalar_len(curve);
        const size_t batches = mbt_scale(128);
        for (size_t b = 0; b < batches; b++) {
            uint8_t secret[MBC_LANES][MAX_LEN], want[MBC_LANES][MAX_LEN];
            uint8_t *sp[MBC_LANES];
            const uint8_t *peer[MBC_LANES];
            const mbc_ec_priv_key *key[MBC_LANES];
            EVP_PKEY *mine[MBC_LANES];
            mbc_ec_priv_key *own[MBC_LANES];
            const unsigned mask = batch_mask();
            for (unsigned l = 0; l < MBC_LANES; l++) {
                uint8_t d[MAX_LEN];
                rand_scalar(curve, d);
                mine[l] = mbt_ossl_ec_from_d(curve, d, len);
                assert_non_null(mine[l]);
                assert_int_equal(mbc_ec_priv_key_new(&own[l], curve, d, len), MBC_OK);
                const struct key *other = &fx.k[ci][(b + l) % NKEYS];
                assert_int_equal(mbt_ossl_ecdh(mine[l], other->pkey, want[l], len), 0);
                sp[l] = secret[l];
                peer[l] = other->point;
                key[l] = own[l];
            }
            mbc_test_hooks.ec_batch_plan = b % 8 == 5;
            const mbc_status st = mbc_ecdh_mb8(sp, peer, key, curve, mask);
            mbc_test_hooks.ec_batch_plan = 0;
            assert_int_equal(mbc_status_ok_mask(st), mask);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if (((mask >> l) & 1u) && memcmp(secret[l], want[l], len) != 0) {
                    fail_msg("P-%zu batch %zu lane %u: shared secret differs from OpenSSL's",
                             len * 8, b, l);
                }
            }
            const unsigned l = (unsigned)(b % MBC_LANES);
            memset(secret[l], 0, len);
            assert_int_equal(mbc_ecdh(secret[l], peer[l], mbc_ec_point_len(curve), key[l]), MBC_OK);
            assert_memory_equal(secret[l], want[l], len);
            for (unsigned i = 0; i < MBC_LANES; i++) {
                EVP_PKEY_free(mine[i]);
                mbc_ec_priv_key_free(own[i]);
            }
        }
    }
}

static void test_keygen(void **state)
{
    ec_begin(state);
    for (int ci = 0; ci < 2; ci++) {
        const mbc_curve curve = curves[ci];
        const size_t len = mbc_ec_scalar_len(curve), plen = mbc_ec_point_len(curve);
        const size_t batches = mbt_scale(128);
        uint8_t first[MAX_LEN] = {0};
        for (size_t b = 0; b < batches; b++) {
            uint8_t d[MBC_LANES][MAX_LEN], pt[MBC_LANES][MAX_POINT], want[MAX_POINT];
            uint8_t *dp[MBC_LANES], *pp[MBC_LANES];
            for (unsigned l = 0; l < MBC_LANES; l++) {
                dp[l] = d[l];
                pp[l] = pt[l];
            }
            const unsigned mask = batch_mask();
            mbc_test_hooks.ec_batch_plan = b % 8 == 1;
            const mbc_status st = mbc_ec_keygen_mb8(dp, pp, curve, mask);
            mbc_test_hooks.ec_batch_plan = 0;
            assert_int_equal(mbc_status_ok_mask(st), mask);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if (!((mask >> l) & 1u)) {
                    continue;
                }
                /* d in [1, n-1] (OpenSSL refuses others), d G = Q */
                if (mbt_ossl_ec_mul_g(curve, d[l], len, want) != 0 ||
                    memcmp(want, pt[l], plen) != 0) {
                    fail_msg("P-%zu batch %zu lane %u: point is not d G", len * 8, b, l);
                }
                /* no two draws alike */
                assert_memory_not_equal(d[l], first, len);
                if (b == 0) {
                    memcpy(first, d[l], len);
                }
            }
            const unsigned l = (unsigned)(b % MBC_LANES);
            assert_int_equal(mbc_ec_keygen(d[l], pt[l], curve), MBC_OK);
            assert_int_equal(mbt_ossl_ec_mul_g(curve, d[l], len, want), 0);
            assert_memory_equal(want, pt[l], plen);
            mbc_ec_priv_key *k = NULL;
            assert_int_equal(mbc_ec_priv_key_generate(&k, curve), MBC_OK);
            uint8_t q[MAX_POINT];
            assert_int_equal(mbc_ec_priv_key_public(k, q, sizeof(q)), MBC_OK);
            EVP_PKEY *pk = mbt_ossl_ec_from_point(curve, q, plen);
            assert_non_null(pk); /* OpenSSL accepts the point */
            EVP_PKEY_free(pk);
            mbc_ec_priv_key_free(k);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Edge cases                                                                */
/* ------------------------------------------------------------------------ */

/* edge scalars as private keys (d G, ECDH, signatures) and as nonces; 0
 * and n rejected. */
static void test_edge_scalars(void **state)
{
    ec_begin(state);
    for (int ci = 0; ci < 2; ci++) {
        const mbc_curve curve = curves[ci];
        const size_t len = mbc_ec_scalar_len(curve), plen = mbc_ec_point_len(curve),
                     slen = mbc_ec_sig_len(curve);
        const struct key *peer = &fx.k[ci][0];
        uint8_t digest[MAX_LEN];
        mbt_rand_bytes(digest, len);
        for (unsigned i = 0; i < NUM_EDGE; i++) {
            uint8_t d[MAX_LEN], q[MAX_POINT], want[MAX_POINT], s1[MAX_LEN], s2[MAX_LEN];
            uint8_t sig[2 * MAX_LEN], wsig[2 * MAX_LEN];
            edge_scalar(curve, i, d);
            mbc_ec_priv_key *k = NULL;
            assert_int_equal(mbc_ec_priv_key_new(&k, curve, d, len), MBC_OK);
            assert_int_equal(mbc_ec_priv_key_public(k, q, sizeof(q)), MBC_OK);
            assert_int_equal(mbt_ossl_ec_mul_g(curve, d, len, want), 0);
            assert_memory_equal(q, want, plen);
            /* ECDH with the edge d, and with the edge point as the peer */
            EVP_PKEY *mine = mbt_ossl_ec_from_d(curve, d, len);
            assert_non_null(mine);
            assert_int_equal(mbt_ossl_ecdh(mine, peer->pkey, s2, len), 0);
            assert_int_equal(mbc_ecdh(s1, peer->point, plen, k), MBC_OK);
            assert_memory_equal(s1, s2, len);
            assert_int_equal(mbc_ecdh(s1, q, plen, peer->priv), MBC_OK);
            assert_memory_equal(s1, s2, len);
            /* as the key and as the nonce of a signature */
            uint8_t nonce[MAX_LEN];
            edge_scalar(curve, (i + 5) % NUM_EDGE, nonce);
            assert_int_equal(mbt_ossl_ecdsa_sign_k(curve, d, nonce, digest, len, wsig), 0);
            assert_int_equal(mbc_ecdsa_sign_k(sig, digest, len, k, nonce), MBC_OK);
            assert_memory_equal(sig, wsig, slen);
            assert_int_equal(mbt_ossl_ecdsa_sign_k(curve, peer->d, d, digest, len, wsig), 0);
            assert_int_equal(mbc_ecdsa_sign_k(sig, digest, len, peer->priv, d), MBC_OK);
            assert_memory_equal(sig, wsig, slen);
            /* and verified as Q of a public key */
            mbc_ec_pub_key *pk = NULL;
            assert_int_equal(mbc_ec_pub_key_new(&pk, curve, q, plen), MBC_OK);
            assert_int_equal(mbc_ecdsa_sign(sig, digest, len, k), MBC_OK);
            assert_int_equal(mbc_ecdsa_verify(sig, digest, len, pk), MBC_OK);
            assert_int_equal(mbt_ossl_ecdsa_verify(mine, curve, sig, digest, len), 1);
            mbc_ec_pub_key_free(pk);
            EVP_PKEY_free(mine);
            mbc_ec_priv_key_free(k);
        }
        /* small multiples: d = 1..40 */
        for (unsigned v = 1; v <= 40; v++) {
            uint8_t d[MAX_LEN], q[MAX_POINT], want[MAX_POINT];
            small(curve, v, d);
            mbc_ec_priv_key *k = NULL;
            assert_int_equal(mbc_ec_priv_key_new(&k, curve, d, len), MBC_OK);
            assert_int_equal(mbc_ec_priv_key_public(k, q, sizeof(q)), MBC_OK);
            assert_int_equal(mbt_ossl_ec_mul_g(curve, d, len, want), 0);
            assert_memory_equal(q, want, plen);
            mbc_ec_priv_key_free(k);
        }
        /* 0 and n are rejected as keys and as nonces */
        uint8_t zero[MAX_LEN] = {0}, n[MAX_LEN], sig[2 * MAX_LEN];
        n_minus(curve, 0, n);
        mbc_ec_priv_key *k = NULL;
        assert_int_equal(mbc_ec_priv_key_new(&k, curve, zero, len), MBC_ERR_KEY_RANGE);
        assert_int_equal(mbc_ec_priv_key_new(&k, curve, n, len), MBC_ERR_KEY_RANGE);
        assert_int_equal(mbc_ecdsa_sign_k(sig, digest, len, peer->priv, zero), MBC_ERR_BAD_PARAM);
        assert_int_equal(mbc_ecdsa_sign_k(sig, digest, len, peer->priv, n), MBC_ERR_BAD_PARAM);
    }
}

/* points of low x (the smallest x with a point, and a few more) as peers
 * and public keys; the point at infinity. */
static void test_low_x(void **state)
{
    ec_begin(state);
    BN_CTX *ctx = BN_CTX_new();
    for (int ci = 0; ci < 2; ci++) {
        const mbc_curve curve = curves[ci];
        const size_t len = mbc_ec_scalar_len(curve), plen = mbc_ec_point_len(curve);
        EC_GROUP *g = EC_GROUP_new_by_curve_name(curve == MBC_CURVE_P256 ? NID_X9_62_prime256v1
                                                                         : NID_secp384r1);
        EC_POINT *p = EC_POINT_new(g);
        BIGNUM *x = BN_new();
        unsigned found = 0;
        for (unsigned xv = 0; xv < 64 && found < 6; xv++) {
            BN_set_word(x, xv);
            if (EC_POINT_set_compressed_coordinates(g, p, x, (int)(xv & 1), ctx) != 1) {
                ERR_clear_error();
                continue;
            }
            found++;
            uint8_t q[MAX_POINT], s1[MAX_LEN], s2[MAX_LEN], sig[2 * MAX_LEN], digest[MAX_LEN];
            assert_int_equal(EC_POINT_point2oct(g, p, POINT_CONVERSION_UNCOMPRESSED, q, plen, ctx),
                             plen);
            EVP_PKEY *op = mbt_ossl_ec_from_point(curve, q, plen);
            assert_non_null(op);
            const struct key *k = &fx.k[ci][found % NKEYS];
            assert_int_equal(mbt_ossl_ecdh(k->pkey, op, s2, len), 0);
            assert_int_equal(mbc_ecdh(s1, q, plen, k->priv), MBC_OK);
            assert_memory_equal(s1, s2, len);
            /* a signature whose check meets this public key: the key is
             * public, so OpenSSL's verify of a random signature must agree
             * with ours (both reject) */
            mbc_ec_pub_key *pk = NULL;
            assert_int_equal(mbc_ec_pub_key_new(&pk, curve, q, plen), MBC_OK);
            mbt_rand_bytes(sig, 2 * len);
            mbt_rand_bytes(digest, len);
            sig[0] = 0;
            sig[len] = 0;
            assert_int_equal(mbc_ecdsa_verify(sig, digest, len, pk),
                             mbt_ossl_ecdsa_verify(op, curve, sig, digest, len) == 1
                                 ? MBC_OK
                                 : MBC_ERR_SIG_INVALID);
            mbc_ec_pub_key_free(pk);
            EVP_PKEY_free(op);
        }
        assert_true(found >= 3);
        /* the point at infinity */
        const uint8_t inf[1] = {0};
        uint8_t s[MAX_LEN];
        mbc_ec_pub_key *pk = NULL;
        assert_int_equal(mbc_ec_pub_key_new(&pk, curve, inf, 1), MBC_ERR_INFINITY);
        memset(s, 0xA5, sizeof(s));
        assert_int_equal(mbc_ecdh(s, inf, 1, fx.k[ci][0].priv), MBC_ERR_INFINITY);
        for (size_t i = 0; i < len; i++) {
            assert_int_equal(s[i], 0);
        }
        BN_free(x);
        EC_POINT_free(p);
        EC_GROUP_free(g);
    }
    BN_CTX_free(ctx);
}

/*
 * verify's test of x(R) mod n = r without an inversion: X = r Z, or
 * X = (r + n) Z when r + n < p. A signature built so that x(R) = r + n - p
 * (r + n >= p: congruent mod p, but x(R) mod n is not r) must fail; the
 * honest one from the same R must pass. R = u1 G + u2 Q is chosen first,
 * then r, s = r / u2 and z = u1 s make the verifier compute that R.
 */
static void test_verify_r_plus_n(void **state)
{
    ec_begin(state);
    BN_CTX *ctx = BN_CTX_new();
    for (int ci = 0; ci < 2; ci++) {
        const mbc_curve curve = curves[ci];
        const size_t len = mbc_ec_scalar_len(curve);
        const struct key *kk = &fx.k[ci][2];
        EC_GROUP *g = EC_GROUP_new_by_curve_name(curve == MBC_CURVE_P256 ? NID_X9_62_prime256v1
                                                                         : NID_secp384r1);
        const BIGNUM *n = EC_GROUP_get0_order(g);
        BIGNUM *p = BN_new(), *d = BN_bin2bn(kk->d, (int)len, NULL), *u1 = BN_new(), *u2 = BN_new(),
               *t = BN_new(), *x = BN_new(), *r = BN_new(), *sv = BN_new(), *z = BN_new();
        EC_POINT *pt = EC_POINT_new(g);
        EC_GROUP_get_curve(g, p, NULL, NULL, ctx);
        for (int it = 0; it < 8; it++) {
            BN_rand_range(u1, n);
            BN_rand_range(u2, n);
            BN_mod_mul(t, u2, d, n, ctx);
            BN_mod_add(t, t, u1, n, ctx); /* R = (u1 + u2 d) G */
            EC_POINT_mul(g, pt, t, NULL, NULL, ctx);
            EC_POINT_get_affine_coordinates(g, pt, x, NULL, ctx);
            for (int forged = 0; forged < 2; forged++) {
                if (forged) {
                    BN_add(r, x, p);
                    BN_sub(r, r, n); /* r + n = x + p */
                    if (BN_cmp(r, n) >= 0) {
                        continue;
                    }
                } else {
                    BN_nnmod(r, x, n, ctx);
                }
                BN_mod_inverse(t, u2, n, ctx);
                BN_mod_mul(sv, r, t, n, ctx);  /* s = r / u2 */
                BN_mod_mul(z, u1, sv, n, ctx); /* z = u1 s */
                uint8_t sig[2 * MAX_LEN], digest[MAX_LEN];
                BN_bn2binpad(r, sig, (int)len);
                BN_bn2binpad(sv, sig + len, (int)len);
                BN_bn2binpad(z, digest, (int)len);
                const int ossl = mbt_ossl_ecdsa_verify(kk->pkey, curve, sig, digest, len);
                assert_int_equal(ossl, forged ? 0 : 1);
                assert_int_equal(mbc_ecdsa_verify(sig, digest, len, kk->pub),
                                 forged ? MBC_ERR_SIG_INVALID : MBC_OK);
            }
        }
        EC_POINT_free(pt);
        BN_free(p);
        BN_free(d);
        BN_free(u1);
        BN_free(u2);
        BN_free(t);
        BN_free(x);
        BN_free(r);
        BN_free(sv);
        BN_free(z);
        EC_GROUP_free(g);
    }
    BN_CTX_free(ctx);
}

/* digests of every length around the order's: used as FIPS 186-5 says
 * (OpenSSL's own verify is the independent check of the truncation). */
static void test_digest_lengths(void **state)
{
    ec_begin(state);
    for (int ci = 0; ci < 2; ci++) {
        const mbc_curve curve = curves[ci];
        const size_t len = mbc_ec_scalar_len(curve), slen = mbc_ec_sig_len(curve);
        const struct key *k = &fx.k[ci][1];
        static const size_t lens[] = {0,  1,  2,  20, 28, 31, 32,  33,
                                      47, 48, 49, 63, 64, 65, 100, 1000};
        uint8_t digest[1000], nonce[MAX_LEN], sig[2 * MAX_LEN], want[2 * MAX_LEN];
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            mbt_rand_bytes(digest, lens[i]);
            digest[0] |= 0x80; /* the top bit matters */
            rand_scalar(curve, nonce);
            assert_int_equal(mbt_ossl_ecdsa_sign_k(curve, k->d, nonce, digest, lens[i], want), 0);
            assert_int_equal(mbc_ecdsa_sign_k(sig, digest, lens[i], k->priv, nonce), MBC_OK);
            assert_memory_equal(sig, want, slen);
            assert_int_equal(mbt_ossl_ecdsa_verify(k->pkey, curve, sig, digest, lens[i]), 1);
            assert_int_equal(mbc_ecdsa_verify(sig, digest, lens[i], k->pub), MBC_OK);
            /* bytes past the order's length do not count */
            if (lens[i] > len) {
                digest[lens[i] - 1] ^= 1;
                assert_int_equal(mbc_ecdsa_verify(sig, digest, lens[i], k->pub), MBC_OK);
            }
        }
        /* a NULL digest of length 0 is the empty digest */
        rand_scalar(curve, nonce);
        assert_int_equal(mbt_ossl_ecdsa_sign_k(curve, k->d, nonce, digest, 0, want), 0);
        assert_int_equal(mbc_ecdsa_sign_k(sig, NULL, 0, k->priv, nonce), MBC_OK);
        assert_memory_equal(sig, want, slen);
        assert_int_equal(mbc_ecdsa_verify(sig, NULL, 0, k->pub), MBC_OK);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MBT_EC_IMPL_TESTS(test_sign_k),
        MBT_EC_IMPL_TESTS(test_sign_verify),
        MBT_EC_IMPL_TESTS(test_ecdh),
        MBT_EC_IMPL_TESTS(test_keygen),
        MBT_EC_IMPL_TESTS(test_edge_scalars),
        MBT_EC_IMPL_TESTS(test_low_x),
        MBT_EC_IMPL_TESTS(test_verify_r_plus_n),
        MBT_EC_IMPL_TESTS(test_digest_lengths),
    };
    const int failed = mbt_run("ec_diff", tests);
    fixture_free();
    return failed;
}
