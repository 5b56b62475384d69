/*
 * test_key_types.c - every key object carries its own type tag (struct
 * mbc_key_tag at offset 0, src/internal.h), and a key of one kind passed
 * where another is expected is refused without being read as the wrong
 * type: by the lane manager, the single and the _mb8 RSA calls, the key-size
 * queries, every AES-GCM call and the free functions.
 *
 * The first case is issue 9's: a GCM key whose AES key starts with the bytes
 * of an RSA tag (magic, then 2048 little-endian: 53 41 53 52 00 08 00 00 for
 * a private key) was taken for an RSA key when the round keys stood at
 * offset 0, and the RSA code read about 1.9 KB past the GCM key (an ASan heap
 * overflow); the ASan build of this test is the proof that it no longer is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ossl_rsa.h"
#include "test_util.h"

#define LEN 256 /* bytes of a 2048-bit number */
#define MAX_LEN 512
#define CANARY 0xA5

/* The RSA key types' tags as the old layout compared them. */
#define TAG_RSA_PUB 0x52534150u
#define TAG_RSA_PRIV 0x52534153u

static struct fixture {
    int ready;
    EVP_PKEY *pkey;
    mbc_rsa_priv_key *priv;
    mbc_rsa_pub_key *pub;
    mbc_gcm_key *gcm;
    uint8_t in[LEN];     /* below n */
    uint8_t ref[2][LEN]; /* [0]: in^d mod n, [1]: in^e mod n (OpenSSL) */
} fx;

static struct fixture *fixture(void)
{
    if (fx.ready) {
        return &fx;
    }
    fx.pkey = mbt_ossl_rsa_keygen(2048, 65537);
    assert_non_null(fx.pkey);
    mbt_rsa_parts parts;
    assert_int_equal(mbt_ossl_rsa_get_parts(&parts, fx.pkey, 0), 0);
    assert_int_equal(mbt_rsa_keys_new(&fx.priv, &fx.pub, &parts), MBC_OK);
    mbt_rand_bytes(fx.in, LEN);
    fx.in[0] = (uint8_t)(parts.c[MBT_RSA_N][0] - 1);
    mbt_rsa_parts_free(&parts);
    assert_int_equal(mbt_ossl_rsa_raw(fx.pkey, 1, fx.ref[0], fx.in, LEN), 0);
    assert_int_equal(mbt_ossl_rsa_raw(fx.pkey, 0, fx.ref[1], fx.in, LEN), 0);
    uint8_t k[16];
    mbt_rand_bytes(k, sizeof(k));
    assert_int_equal(mbc_gcm_key_new(&fx.gcm, k, sizeof(k)), MBC_OK);
    fx.ready = 1;
    return &fx;
}

static int all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] != v) {
            return 0;
        }
    }
    return 1;
}

enum rsa_op { OP_PRIV, OP_PUB };
static const char *const op_names[] = {"private", "public"};

/* single: the single-request call of op with key (of any type). */
static mbc_err single(enum rsa_op op, uint8_t *out, const uint8_t *in, const void *key)
{
    return op == OP_PRIV ? mbc_rsa_private_crt(out, in, key) : mbc_rsa_public(out, in, key);
}

/* mb8: the batch call of op, lane l with key[l]. */
static mbc_status mb8(enum rsa_op op, uint8_t *const out[8], const uint8_t *const in[8],
                      const void *const key[8], unsigned bits, unsigned mask)
{
    return op == OP_PRIV
               ? mbc_rsa_private_crt_mb8(out, in, (const mbc_rsa_priv_key *const *)key, bits, mask)
               : mbc_rsa_public_mb8(out, in, (const mbc_rsa_pub_key *const *)key, bits, mask);
}

/*
 * refused_everywhere: key is not a key of op's type: the manager (batched
 * and in sync mode) and the single call give MBC_ERR_BAD_PARAM without
 * writing out; the key-size query gives 0; an 8-lane call of bits with key in
 * lane 3 gives that lane BAD_PARAM and, when bits is 2048 (the fixture's
 * size), the fixture's right results in the other lanes.
 */
static void refused_everywhere(enum rsa_op op, const void *key, unsigned bits, const char *what)
{
    struct fixture *f = fixture();
    const size_t len = bits / 8;
    uint8_t in[MAX_LEN], out[MAX_LEN];
    memset(in, 0, sizeof(in));
    memcpy(in + len - LEN, f->in, LEN);
    print_message("%s as an RSA-%u %s key\n", what, bits, op_names[op]);

    for (int sync = 0; sync < 2; sync++) {
        mbc_mgr *mgr = NULL;
        const mbc_mgr_config cfg = {0, sync ? MBC_MGR_SYNC : 0u};
        assert_int_equal(mbc_mgr_new(&mgr, &cfg), MBC_OK);
        mbc_job job = {.op = op == OP_PRIV ? MBC_OP_RSA_PRIVATE : MBC_OP_RSA_PUBLIC,
                       .key = key,
                       .in = in,
                       .in_len = len,
                       .out = out,
                       .out_len = len};
        memset(out, CANARY, sizeof(out));
        assert_int_equal(mbc_mgr_submit(mgr, &job), MBC_OK);
        mbc_mgr_flush(mgr);
        assert_ptr_equal(mbc_mgr_get_completed(mgr), &job);
        assert_int_equal(job.status, MBC_ERR_BAD_PARAM);
        assert_true(all_bytes(out, sizeof(out), CANARY));
        assert_null(mbc_mgr_get_completed(mgr));
        mbc_mgr_free(mgr);
    }

    memset(out, CANARY, sizeof(out));
    assert_int_equal(single(op, out, in, key), MBC_ERR_BAD_PARAM);
    assert_true(all_bytes(out, sizeof(out), CANARY));
    unsigned kbits = op == OP_PRIV ? mbc_rsa_priv_key_bits(key) : mbc_rsa_pub_key_bits(key);
    assert_int_equal(kbits, 0);

    /* Lane 3 holds key; with a 2048-bit call the other lanes hold the
     * fixture's right key of op's type. */
    uint8_t outs[8][MAX_LEN];
    uint8_t *o[8];
    const uint8_t *i8[8];
    const void *k8[8];
    const void *good = op == OP_PRIV ? (const void *)f->priv : (const void *)f->pub;
    for (unsigned l = 0; l < 8; l++) {
        o[l] = outs[l];
        i8[l] = in;
        k8[l] = bits == 2048 && l != 3 ? good : key;
    }
    /* lane 3 alone, lanes 2 and 3 (one by one), all lanes (a batch) */
    static const unsigned masks[] = {0x08, 0x0C, 0xFF};
    for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
        memset(outs, CANARY, sizeof(outs));
        const mbc_status st = mb8(op, o, i8, k8, bits, masks[m]);
        for (unsigned l = 0; l < 8; l++) {
            const unsigned code = mbc_lane_code(st, l);
            if (!((masks[m] >> l) & 1u)) {
                assert_int_equal(code, MBC_LANE_EMPTY);
            } else if (k8[l] == key) {
                assert_int_equal(code, MBC_LANE_BAD_PARAM);
                assert_true(all_bytes(outs[l], len, 0));
                assert_true(all_bytes(outs[l] + len, sizeof(outs[l]) - len, CANARY));
            } else {
                assert_int_equal(code, MBC_LANE_OK);
                assert_memory_equal(outs[l], f->ref[op], LEN);
            }
        }
    }
}

/* Issue 9, promise 1: GCM keys whose AES key begins with an RSA key's tag,
 * for every RSA operation, size and AES key size. */
static void test_gcm_key_with_rsa_tag(void **state)
{
    (void)state;
    static const unsigned sizes[] = {2048, 3072, 4096};
    static const size_t k_lens[] = {16, 24, 32};
    for (int op = OP_PRIV; op <= OP_PUB; op++) {
        for (size_t s = 0; s < 3; s++) {
            for (size_t kl = 0; kl < 3; kl++) {
                uint8_t k[32];
                mbt_rand_bytes(k, sizeof(k));
                const uint32_t words[2] = {op == OP_PRIV ? TAG_RSA_PRIV : TAG_RSA_PUB, sizes[s]};
                memcpy(k, words, sizeof(words)); /* little-endian, as the issue's bytes */
                if (op == OP_PRIV && sizes[s] == 2048) {
                    static const uint8_t issue[8] = {0x53, 0x41, 0x53, 0x52, 0, 0x08, 0, 0};
                    assert_memory_equal(k, issue, sizeof(issue));
                }
                mbc_gcm_key *g = NULL;
                assert_int_equal(mbc_gcm_key_new(&g, k, k_lens[kl]), MBC_OK);
                char what[64];
                snprintf(what, sizeof(what), "AES-%zu-GCM key with an RSA tag", 8 * k_lens[kl]);
                refused_everywhere((enum rsa_op)op, g, sizes[s], what);
                mbc_gcm_key_free(g);
            }
        }
    }
}

/* RSA keys of the other type and GCM keys where RSA keys are expected. */
static void test_rsa_calls_other_keys(void **state)
{
    (void)state;
    struct fixture *f = fixture();
    refused_everywhere(OP_PRIV, f->pub, 2048, "RSA public key");
    refused_everywhere(OP_PUB, f->priv, 2048, "RSA private key");
    refused_everywhere(OP_PRIV, f->gcm, 2048, "GCM key");
    refused_everywhere(OP_PUB, f->gcm, 2048, "GCM key");
}

/* RSA keys where a GCM key is expected: every GCM call checks the tag
 * (MBC_ERR_BAD_PARAM, nothing written), for the fast (12-byte IV, 16-byte
 * tag) and the general paths. */
static void test_gcm_calls_other_keys(void **state)
{
    (void)state;
    struct fixture *f = fixture();
    const void *const others[2] = {f->priv, f->pub};
    uint8_t iv[60], aad[20], in[40], out[40], tag[16];
    mbt_rand_bytes(iv, sizeof(iv));
    mbt_rand_bytes(aad, sizeof(aad));
    mbt_rand_bytes(in, sizeof(in));
    static const size_t iv_lens[] = {12, 60};
    static const size_t tag_lens[] = {16, 12};
    for (int o = 0; o < 2; o++) {
        const mbc_gcm_key *key = others[o];
        assert_null(mbc_gcm_key_impl(key));
        for (size_t v = 0; v < 2; v++) {
            for (size_t t = 0; t < 2; t++) {
                const size_t il = iv_lens[v], tl = tag_lens[t];
                memset(out, CANARY, sizeof(out));
                memset(tag, CANARY, sizeof(tag));
                assert_int_equal(mbc_gcm_seal(key, out, tag, tl, iv, il, aad, 20, in, 40),
                                 MBC_ERR_BAD_PARAM);
                assert_int_equal(mbc_gcm_seal_short_tag(key, out, tag, tl, iv, il, aad, 20, in, 40),
                                 MBC_ERR_BAD_PARAM);
                assert_true(all_bytes(tag, sizeof(tag), CANARY));
                assert_int_equal(mbc_gcm_open(key, out, tag, tl, iv, il, aad, 20, in, 40),
                                 MBC_ERR_BAD_PARAM);
                assert_int_equal(mbc_gcm_open_short_tag(key, out, tag, tl, iv, il, aad, 20, in, 40),
                                 MBC_ERR_BAD_PARAM);
                assert_true(all_bytes(out, sizeof(out), CANARY));
            }
            mbc_gcm_ctx ctx;
            assert_int_equal(mbc_gcm_init(&ctx, key, iv, iv_lens[v], 0), MBC_ERR_BAD_PARAM);
            /* the context is unusable */
            assert_int_equal(mbc_gcm_aad(&ctx, aad, 20), MBC_ERR_STATE);
            assert_int_equal(mbc_gcm_encrypt(&ctx, out, in, 40), MBC_ERR_STATE);
            assert_int_equal(mbc_gcm_finish(&ctx, tag, 16), MBC_ERR_STATE);
        }
    }
    /* The GCM key itself still works on both paths. */
    for (size_t v = 0; v < 2; v++) {
        assert_int_equal(mbc_gcm_seal(f->gcm, out, tag, 16, iv, iv_lens[v], aad, 20, in, 40),
                         MBC_OK);
        assert_int_equal(mbc_gcm_open(f->gcm, out, tag, 16, iv, iv_lens[v], aad, 20, out, 40),
                         MBC_OK);
        assert_memory_equal(out, in, sizeof(in));
    }
}

/* A free function given a key object of another type leaves it alone (it
 * is neither wiped nor freed: it still works afterwards, and ASan reports
 * no use after free). */
static void test_free_other_keys(void **state)
{
    (void)state;
    struct fixture *f = fixture();
    mbc_gcm_key_free((mbc_gcm_key *)(void *)f->priv);
    mbc_gcm_key_free((mbc_gcm_key *)(void *)f->pub);
    mbc_rsa_priv_key_free((mbc_rsa_priv_key *)(void *)f->pub);
    mbc_rsa_priv_key_free((mbc_rsa_priv_key *)(void *)f->gcm);
    mbc_rsa_pub_key_free((mbc_rsa_pub_key *)(void *)f->priv);
    mbc_rsa_pub_key_free((mbc_rsa_pub_key *)(void *)f->gcm);

    uint8_t out[LEN];
    assert_int_equal(mbc_rsa_private_crt(out, f->in, f->priv), MBC_OK);
    assert_memory_equal(out, f->ref[OP_PRIV], LEN);
    assert_int_equal(mbc_rsa_public(out, f->in, f->pub), MBC_OK);
    assert_memory_equal(out, f->ref[OP_PUB], LEN);
    assert_non_null(mbc_gcm_key_impl(f->gcm));
    uint8_t iv[12] = {1}, tag[16];
    assert_int_equal(mbc_gcm_seal(f->gcm, out, tag, 16, iv, 12, NULL, 0, f->in, 64), MBC_OK);
    assert_int_equal(mbc_gcm_open(f->gcm, out, tag, 16, iv, 12, NULL, 0, out, 64), MBC_OK);
    assert_memory_equal(out, f->in, 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gcm_key_with_rsa_tag),
        cmocka_unit_test(test_rsa_calls_other_keys),
        cmocka_unit_test(test_gcm_calls_other_keys),
        cmocka_unit_test(test_free_other_keys),
    };
    int rc = mbt_run("key_types", tests);
    mbc_rsa_priv_key_free(fx.priv);
    mbc_rsa_pub_key_free(fx.pub);
    mbc_gcm_key_free(fx.gcm);
    EVP_PKEY_free(fx.pkey);
    return rc;
}
