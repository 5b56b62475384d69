/*
 * test_aliasing.c - the aliasing rule of the _mb8 calls (mbcrypto.h): an
 * output may overlap its own lane's inputs; one that overlaps another
 * output or another lane's input makes its lane BAD_PARAM, the same on
 * every implementation, and the other lanes are computed as usual. Each
 * case runs on "c" and "ifma", and on several lane counts (the one-by-one,
 * few and batch plans), and checks every result against a call without
 * aliasing.
 */
#include <stdlib.h>
#include <string.h>

#include "ossl_rsa.h"
#include "ec_impls.h"
#include "test_util.h"

#define P256 MBC_CURVE_P256
#define SLEN 32
#define PLEN 65
#define XLEN MBC_X25519_LEN

/* Lane counts whose plans differ (one by one, few, batch), at least 3 so
 * that one lane runs in place while another writes over a third's input. */
static const unsigned counts[] = {3, 5, 8};

/* ec_key: a fresh P-256 key and its point. */
static mbc_ec_priv_key *ec_key(uint8_t point[PLEN])
{
    uint8_t d[SLEN];
    assert_int_equal(mbc_ec_keygen(d, point, P256), MBC_OK);
    mbc_ec_priv_key *k = NULL;
    assert_int_equal(mbc_ec_priv_key_new(&k, P256, d, SLEN), MBC_OK);
    return k;
}

/* Key generation with d and the point in one buffer (the d of item 11 of
 * issue 22 was destroyed), at an offset, and across lanes. */
static void test_ec_keygen_alias(void **state)
{
    mbt_use_ec_impl(state);
    uint8_t buf[2 * PLEN];
    assert_int_equal(mbc_ec_keygen(buf, buf, P256), MBC_ERR_BAD_PARAM);
    assert_int_equal(mbc_ec_keygen(buf, buf + 1, P256), MBC_ERR_BAD_PARAM);
    assert_int_equal(mbc_ec_keygen(buf + PLEN - 1, buf, P256), MBC_ERR_BAD_PARAM);
    assert_int_equal(mbc_ec_keygen(buf, buf + SLEN, P256), MBC_OK); /* adjacent: fine */

    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        const unsigned n = counts[ci];
        uint8_t d[MBC_LANES][SLEN], pt[MBC_LANES][PLEN], shared[SLEN + PLEN];
        uint8_t *dp[MBC_LANES] = {NULL}, *pp[MBC_LANES] = {NULL};
        for (unsigned l = 0; l < n; l++) {
            dp[l] = d[l];
            pp[l] = pt[l];
        }
        dp[0] = shared;
        pp[n - 1] = shared + 4; /* the last lane's point overlaps lane 0's d */
        const mbc_status st = mbc_ec_keygen_mb8(dp, pp, P256, (1u << n) - 1);
        for (unsigned l = 0; l < n; l++) {
            const unsigned want = (l == 0 || l == n - 1) ? MBC_LANE_BAD_PARAM : MBC_LANE_OK;
            assert_int_equal(mbc_lane_code(st, l), want);
        }
        for (unsigned l = 1; l + 1 < n; l++) {
            /* the lanes in between are real key pairs */
            mbc_ec_priv_key *k = NULL;
            uint8_t q[PLEN];
            assert_int_equal(mbc_ec_priv_key_new(&k, P256, d[l], SLEN), MBC_OK);
            assert_int_equal(mbc_ec_priv_key_public(k, q, PLEN), MBC_OK);
            assert_memory_equal(q, pt[l], PLEN);
            mbc_ec_priv_key_free(k);
        }
    }
}

/* ECDH: a lane's secret written over the next lane's peer point is
 * refused; the same secret buffer as its own peer point (in place) is
 * fine; every other lane gets the secret a clean call gives. */
static void test_ecdh_alias(void **state)
{
    mbt_use_ec_impl(state);
    uint8_t kpt[PLEN];
    mbc_ec_priv_key *key = ec_key(kpt);
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        const unsigned n = counts[ci];
        uint8_t peer[MBC_LANES][PLEN], want[MBC_LANES][SLEN], sec[MBC_LANES][PLEN];
        const mbc_ec_priv_key *keys[MBC_LANES] = {NULL};
        const uint8_t *pp[MBC_LANES] = {NULL};
        uint8_t *sp[MBC_LANES] = {NULL};
        for (unsigned l = 0; l < n; l++) {
            uint8_t d[SLEN];
            assert_int_equal(mbc_ec_keygen(d, peer[l], P256), MBC_OK);
            assert_int_equal(mbc_ecdh(want[l], peer[l], PLEN, key), MBC_OK);
            keys[l] = key;
            pp[l] = peer[l];
            sp[l] = sec[l];
        }
        sp[0] = peer[n - 1] + 8; /* over the last lane's input: refused */
        sp[1] = peer[1];         /* over its own input: in place */
        const mbc_status st = mbc_ecdh_mb8(sp, pp, keys, P256, (1u << n) - 1);
        assert_int_equal(mbc_lane_code(st, 0), MBC_LANE_BAD_PARAM);
        for (unsigned l = 1; l < n; l++) {
            assert_int_equal(mbc_lane_code(st, l), MBC_LANE_OK);
            assert_memory_equal(sp[l], want[l], SLEN);
        }
    }
    mbc_ec_priv_key_free(key);
}

/* X25519: key pairs whose buffers overlap, and a derive whose output
 * overwrites another lane's scalar. */
static void test_x25519_alias(void **state)
{
    mbt_use_alg_impl(MBC_ALG_X25519, (const char *)*state);
    uint8_t buf[2 * XLEN];
    assert_int_equal(mbc_x25519_keygen(buf, buf + 1), MBC_ERR_BAD_PARAM);
    assert_int_equal(mbc_x25519_keygen(buf, buf), MBC_ERR_BAD_PARAM);
    assert_int_equal(mbc_x25519_keygen(buf, buf + XLEN), MBC_OK);
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        const unsigned n = counts[ci];
        uint8_t sk[MBC_LANES][XLEN], u[MBC_LANES][XLEN], want[MBC_LANES][XLEN];
        uint8_t out[MBC_LANES][XLEN];
        const uint8_t *skp[MBC_LANES] = {NULL}, *up[MBC_LANES] = {NULL};
        uint8_t *op[MBC_LANES] = {NULL};
        for (unsigned l = 0; l < n; l++) {
            uint8_t other[XLEN];
            assert_int_equal(mbc_x25519_keygen(sk[l], u[l]), MBC_OK);
            assert_int_equal(mbc_x25519_keygen(other, u[l]), MBC_OK);
            assert_int_equal(mbc_x25519(want[l], sk[l], u[l]), MBC_OK);
            skp[l] = sk[l];
            up[l] = u[l];
            op[l] = out[l];
        }
        op[1] = sk[0]; /* lane 1's output over lane 0's scalar: refused */
        op[0] = u[0];  /* lane 0's over its own u: in place */
        const mbc_status st = mbc_x25519_mb8(op, skp, up, (1u << n) - 1);
        assert_int_equal(mbc_lane_code(st, 1), MBC_LANE_BAD_PARAM);
        for (unsigned l = 0; l < n; l++) {
            if (l != 1) {
                assert_int_equal(mbc_lane_code(st, l), MBC_LANE_OK);
                assert_memory_equal(op[l], want[l], XLEN);
            }
        }
    }
}

/* RSA public: in place is fine, an output over another lane's input is
 * refused. */
static void test_rsa_alias(void **state)
{
    mbt_use_impl(state);
    EVP_PKEY *pkey = mbt_ossl_rsa_keygen(2048, 65537);
    assert_non_null(pkey);
    mbt_rsa_parts parts;
    assert_int_equal(mbt_ossl_rsa_get_parts(&parts, pkey, 0), 0);
    mbc_rsa_priv_key *priv = NULL;
    mbc_rsa_pub_key *pub = NULL;
    assert_int_equal(mbt_rsa_keys_new(&priv, &pub, &parts), MBC_OK);
    enum { K = 256 };
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        const unsigned n = counts[ci];
        uint8_t in[MBC_LANES][K], want[MBC_LANES][K], out[MBC_LANES][K], in0[2 * K];
        const uint8_t *ip[MBC_LANES] = {NULL};
        uint8_t *op[MBC_LANES] = {NULL};
        const mbc_rsa_pub_key *keys[MBC_LANES] = {NULL};
        for (unsigned l = 0; l < n; l++) {
            mbt_rand_bytes(in[l], K);
            in[l][0] = 0x12; /* below n */
            assert_int_equal(mbt_ossl_rsa_raw(pkey, 0, want[l], in[l], K), 0);
            ip[l] = in[l];
            op[l] = out[l];
            keys[l] = pub;
        }
        memcpy(in0, in[0], K);
        ip[0] = in0;
        op[1] = in[1];         /* in place */
        op[n - 1] = in0 + 100; /* over lane 0's input: refused */
        const mbc_status st = mbc_rsa_public_mb8(op, ip, keys, 2048, (1u << n) - 1);
        assert_int_equal(mbc_lane_code(st, n - 1), MBC_LANE_BAD_PARAM);
        for (unsigned l = 0; l + 1 < n; l++) {
            assert_int_equal(mbc_lane_code(st, l), MBC_LANE_OK);
            assert_memory_equal(op[l], want[l], K);
        }
    }
    mbc_rsa_priv_key_free(priv);
    mbc_rsa_pub_key_free(pub);
    mbt_rsa_parts_free(&parts);
    EVP_PKEY_free(pkey);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MBT_EC_IMPL_TESTS(test_ec_keygen_alias),
        MBT_EC_IMPL_TESTS(test_ecdh_alias),
        MBT_IMPL_TESTS(test_x25519_alias),
        {"test_x25519_alias/adx", test_x25519_alias, NULL, NULL, (void *)"adx"},
        MBT_IMPL_TESTS(test_rsa_alias),
    };
    return mbt_run("aliasing", tests);
}
