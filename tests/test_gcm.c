/*
 * test_gcm.c - AES-GCM on every implementation (c, aesni, vaes512; skipped
 * with a message where the CPU or build lacks one): Wycheproof
 * aes_gcm_test.json, differential against OpenSSL EVP and intel-ipsec-mb
 * (when built with it) for every plaintext length 0..1024 with AAD lengths
 * 0..64 plus random large sizes and longer AAD (65..4099 bytes) with
 * lengths around the _vaes512 path limits, streaming split at every byte
 * boundary, zero-length streaming pieces at every position, counter wrap,
 * argument errors, and that a key keeps its implementation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#if MBT_HAVE_IPSEC_MB
#include <intel-ipsec-mb.h>
#endif

#include "dispatch.h"
#include "gcm/gcm_internal.h"
#include "gcm_ref.h"
#include "test_util.h"

#define GCM_TESTS(fn)                                                                              \
    {#fn "/c", fn, NULL, NULL, (void *)"c"}, {#fn "/aesni", fn, NULL, NULL, (void *)"aesni"},      \
    {                                                                                              \
#fn "/vaes512", fn, NULL, NULL, (void *)"vaes512"                                          \
    }

static const char *use_impl(void **state)
{
    return mbt_use_alg_impl(MBC_ALG_GCM, (const char *)*state);
}

static mbc_gcm_key *new_key(const uint8_t *k, size_t k_len, const char *impl)
{
    mbc_gcm_key *key = NULL;
    assert_int_equal(mbc_gcm_key_new(&key, k, k_len), MBC_OK);
    assert_string_equal(mbc_gcm_key_impl(key), impl);
    return key;
}

/* ------------------------------------------------------------------------ */
/* References                                                                */
/* ------------------------------------------------------------------------ */

static const EVP_CIPHER *evp_gcm(size_t k_len)
{
    return k_len == 16 ? EVP_aes_128_gcm() : k_len == 24 ? EVP_aes_192_gcm() : EVP_aes_256_gcm();
}

/* ossl_seal: OpenSSL EVP reference, 16-byte tag. */
static void ossl_seal(const uint8_t *k, size_t k_len, const uint8_t *iv, size_t iv_len,
                      const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
                      uint8_t *out, uint8_t tag[16])
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int n = 0;
    assert_non_null(c);
    assert_int_equal(EVP_EncryptInit_ex(c, evp_gcm(k_len), NULL, NULL, NULL), 1);
    assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, (int)iv_len, NULL), 1);
    assert_int_equal(EVP_EncryptInit_ex(c, NULL, NULL, k, iv), 1);
    if (aad_len > 0) {
        assert_int_equal(EVP_EncryptUpdate(c, NULL, &n, aad, (int)aad_len), 1);
    }
    if (len > 0) {
        assert_int_equal(EVP_EncryptUpdate(c, out, &n, in, (int)len), 1);
    }
    assert_int_equal(EVP_EncryptFinal_ex(c, out + len, &n), 1);
    assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag), 1);
    EVP_CIPHER_CTX_free(c);
}

#if MBT_HAVE_IPSEC_MB
static IMB_MGR *imb;

static IMB_MGR *imb_mgr(void)
{
    if (imb == NULL) {
        imb = alloc_mb_mgr(0);
        assert_non_null(imb);
        init_mb_mgr_auto(imb, NULL);
    }
    return imb;
}

/* imb_seal: intel-ipsec-mb reference (12-byte IV), 16-byte tag. */
static void imb_seal(const struct gcm_key_data *gk, size_t k_len, const uint8_t iv[12],
                     const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
                     uint8_t *out, uint8_t tag[16])
{
    struct gcm_context_data ctx;
    IMB_MGR *m = imb_mgr();
    if (k_len == 16) {
        IMB_AES128_GCM_ENC(m, gk, &ctx, out, in, len, iv, aad, aad_len, tag, 16);
    } else if (k_len == 24) {
        IMB_AES192_GCM_ENC(m, gk, &ctx, out, in, len, iv, aad, aad_len, tag, 16);
    } else {
        IMB_AES256_GCM_ENC(m, gk, &ctx, out, in, len, iv, aad, aad_len, tag, 16);
    }
}

static void imb_key(struct gcm_key_data *gk, const uint8_t *k, size_t k_len)
{
    IMB_MGR *m = imb_mgr();
    if (k_len == 16) {
        IMB_AES128_GCM_PRE(m, k, gk);
    } else if (k_len == 24) {
        IMB_AES192_GCM_PRE(m, k, gk);
    } else {
        IMB_AES256_GCM_PRE(m, k, gk);
    }
}
#endif

/* ------------------------------------------------------------------------ */
/* Wycheproof                                                                */
/* ------------------------------------------------------------------------ */

static void test_wycheproof(void **state)
{
    const char *impl = use_impl(state);
    json_t *root = mbt_load_json("aes_gcm_test.json");
    size_t gi, ti, count = 0;
    json_t *group, *t;
    json_array_foreach(json_object_get(root, "testGroups"), gi, group)
    {
        json_array_foreach(json_object_get(group, "tests"), ti, t)
        {
            size_t k_len, iv_len, aad_len, msg_len, ct_len, tag_len;
            uint8_t *k = mbt_json_hex(t, "key", &k_len);
            uint8_t *iv = mbt_json_hex(t, "iv", &iv_len);
            uint8_t *aad = mbt_json_hex(t, "aad", &aad_len);
            uint8_t *msg = mbt_json_hex(t, "msg", &msg_len);
            uint8_t *ct = mbt_json_hex(t, "ct", &ct_len);
            uint8_t *tag = mbt_json_hex(t, "tag", &tag_len);
            const char *result = json_string_value(json_object_get(t, "result"));
            int tc = (int)json_integer_value(json_object_get(t, "tcId"));
            int valid = strcmp(result, "valid") == 0;
            mbc_gcm_key *key = new_key(k, k_len, impl);
            uint8_t *out = malloc(msg_len + ct_len + 1);
            uint8_t tag_out[16];
            assert_non_null(out);
            assert_int_equal(tag_len, 16);
            mbc_err e =
                mbc_gcm_seal(key, out, tag_out, tag_len, iv, iv_len, aad, aad_len, msg, msg_len);
            if (iv_len == 0) {
                if (e != MBC_ERR_IV_LEN) {
                    fail_msg("tcId %d: empty IV gave %s", tc, mbc_err_str(e));
                }
            } else {
                assert_int_equal(e, MBC_OK);
                if (valid && (memcmp(out, ct, ct_len) != 0 || memcmp(tag_out, tag, 16) != 0)) {
                    fail_msg("tcId %d (%s): seal differs", tc, impl);
                }
            }
            e = mbc_gcm_open(key, out, tag, tag_len, iv, iv_len, aad, aad_len, ct, ct_len);
            if (valid) {
                if (e != MBC_OK || memcmp(out, msg, msg_len) != 0) {
                    fail_msg("tcId %d (%s): open failed: %s", tc, impl, mbc_err_str(e));
                }
            } else if (e == MBC_OK) {
                fail_msg("tcId %d (%s): invalid test accepted", tc, impl);
            } else if (e == MBC_ERR_AUTH) {
                for (size_t i = 0; i < ct_len; i++) {
                    assert_int_equal(out[i], 0);
                }
            }
            count++;
            mbc_gcm_key_free(key);
            free(out);
            free(k);
            free(iv);
            free(aad);
            free(msg);
            free(ct);
            free(tag);
        }
    }
    json_decref(root);
    assert_int_equal(count, 316);
}

/* ------------------------------------------------------------------------ */
/* Differential                                                              */
/* ------------------------------------------------------------------------ */

#define DIFF_MAX_LEN 1024
#define DIFF_MAX_AAD 64

/* diff_one: seal and open with key against OpenSSL (and ipsec-mb). */
static void diff_one(mbc_gcm_key *key, const uint8_t *k, size_t k_len, const void *ipsec_key,
                     const uint8_t *iv, size_t iv_len, const uint8_t *aad, size_t aad_len,
                     const uint8_t *msg, size_t len, uint8_t *buf)
{
    uint8_t *ref = buf, *out = buf + len + 16, *dec = buf + 2 * (len + 16);
    uint8_t ref_tag[16], tag[16];
    ossl_seal(k, k_len, iv, iv_len, aad, aad_len, msg, len, ref, ref_tag);
    assert_int_equal(mbc_gcm_seal(key, out, tag, 16, iv, iv_len, aad, aad_len, msg, len), MBC_OK);
    if (memcmp(out, ref, len) != 0 || memcmp(tag, ref_tag, 16) != 0) {
        fail_msg("seal vs OpenSSL: AES-%zu len %zu aad %zu iv %zu", 8 * k_len, len, aad_len,
                 iv_len);
    }
#if MBT_HAVE_IPSEC_MB
    if (ipsec_key != NULL && iv_len == 12) {
        uint8_t itag[16];
        imb_seal(ipsec_key, k_len, iv, aad, aad_len, msg, len, dec, itag);
        if (memcmp(dec, ref, len) != 0 || memcmp(itag, ref_tag, 16) != 0) {
            fail_msg("seal vs intel-ipsec-mb: AES-%zu len %zu aad %zu", 8 * k_len, len, aad_len);
        }
    }
#else
    (void)ipsec_key;
#endif
    assert_int_equal(mbc_gcm_open(key, dec, ref_tag, 16, iv, iv_len, aad, aad_len, ref, len),
                     MBC_OK);
    if (memcmp(dec, msg, len) != 0) {
        fail_msg("open: AES-%zu len %zu aad %zu", 8 * k_len, len, aad_len);
    }
    /* A flipped tag bit must fail and zero the output. */
    ref_tag[len % 16] ^= (uint8_t)(1u << (aad_len % 8));
    assert_int_equal(mbc_gcm_open(key, dec, ref_tag, 16, iv, iv_len, aad, aad_len, ref, len),
                     MBC_ERR_AUTH);
    for (size_t i = 0; i < len; i++) {
        assert_int_equal(dec[i], 0);
    }
}

/* diff_keys: one random key of each size, as an mbcrypto key of impl, and
 * (when built in) the same key for intel-ipsec-mb (ik, else NULL). */
static const size_t k_lens[3] = {16, 24, 32};
struct diff_keys {
#if MBT_HAVE_IPSEC_MB
    struct gcm_key_data gk[3] __attribute__((aligned(64)));
#endif
    uint8_t k[3][32];
    mbc_gcm_key *keys[3];
    const void *ik[3];
};

static struct diff_keys *diff_keys_new(const char *impl)
{
    struct diff_keys *d = aligned_alloc(64, (sizeof(*d) + 63) / 64 * 64);
    assert_non_null(d);
    for (int i = 0; i < 3; i++) {
        mbt_rand_bytes(d->k[i], k_lens[i]);
        d->keys[i] = new_key(d->k[i], k_lens[i], impl);
        d->ik[i] = NULL;
#if MBT_HAVE_IPSEC_MB
        imb_key(&d->gk[i], d->k[i], k_lens[i]);
        d->ik[i] = &d->gk[i];
#endif
    }
    return d;
}

static void diff_keys_free(struct diff_keys *d)
{
    for (int i = 0; i < 3; i++) {
        mbc_gcm_key_free(d->keys[i]);
    }
    free(d);
}

static void test_differential(void **state)
{
    const char *impl = use_impl(state);
    uint8_t iv[16], aad[DIFF_MAX_AAD];
#if !MBT_HAVE_IPSEC_MB
    print_message("note: intel-ipsec-mb not built in (libipsec-mb-dev missing): OpenSSL only\n");
#endif
    struct diff_keys *d = diff_keys_new(impl);
    uint8_t(*k)[32] = d->k;
    mbc_gcm_key **keys = d->keys;
    const void **ik = d->ik;
    size_t big = 1u << 20;
    uint8_t *msg = malloc(big), *buf = malloc(3 * (big + 16));
    assert_non_null(msg);
    assert_non_null(buf);
    mbt_rand_bytes(msg, DIFF_MAX_LEN);
    mbt_rand_bytes(aad, sizeof(aad));
    /* Every length 0..1024 with every AAD length 0..64, key size rotating. */
    for (size_t len = 0; len <= DIFF_MAX_LEN; len++) {
        for (size_t a = 0; a <= DIFF_MAX_AAD; a++) {
            int ki = (int)((len + a) % 3);
            mbt_rand_bytes(iv, 12);
            diff_one(keys[ki], k[ki], k_lens[ki], ik[ki], iv, 12, aad, a, msg, len, buf);
        }
    }
    /* Other IV lengths. */
    for (size_t iv_len = 1; iv_len <= 16; iv_len++) {
        mbt_rand_bytes(iv, iv_len);
        diff_one(keys[iv_len % 3], k[iv_len % 3], k_lens[iv_len % 3], NULL, iv, iv_len, aad, 20,
                 msg, 100 + iv_len, buf);
    }
    /* In place (out == in), through every path of the kernels. */
    mbt_rand_bytes(msg + DIFF_MAX_LEN, 5000 - DIFF_MAX_LEN);
    static const size_t inplace_lens[] = {0, 1, 63, 64, 100, 496, 497, 511, 512, 1000, 1553, 5000};
    for (size_t i = 0; i < sizeof(inplace_lens) / sizeof(inplace_lens[0]); i++) {
        size_t len = inplace_lens[i];
        uint8_t ref_tag[16], tag[16];
        for (size_t iv_len = 12; iv_len <= 13; iv_len++) {
            mbt_rand_bytes(iv, iv_len);
            ossl_seal(k[i % 3], k_lens[i % 3], iv, iv_len, aad, 7, msg, len, buf, ref_tag);
            uint8_t *io = buf + len + 16;
            memcpy(io, msg, len);
            assert_int_equal(mbc_gcm_seal(keys[i % 3], io, tag, 16, iv, iv_len, aad, 7, io, len),
                             MBC_OK);
            assert_memory_equal(io, buf, len);
            assert_memory_equal(tag, ref_tag, 16);
            assert_int_equal(mbc_gcm_open(keys[i % 3], io, tag, 16, iv, iv_len, aad, 7, io, len),
                             MBC_OK);
            assert_memory_equal(io, msg, len);
        }
    }
    /* Random large sizes, each key size. */
    mbt_rand_bytes(msg, big);
    for (int i = 0; i < 9; i++) {
        size_t len = (size_t)(mbt_rand() % big);
        mbt_rand_bytes(iv, 12);
        diff_one(keys[i % 3], k[i % 3], k_lens[i % 3], ik[i % 3], iv, 12, aad,
                 (size_t)(mbt_rand() % 65), msg, len, buf);
    }
    diff_keys_free(d);
    free(msg);
    free(buf);
}

/*
 * Longer AAD: the _vaes512 one-shot path aggregates AAD, data and length
 * block under one reduction while ceil(aad/16) + ceil(len/16) + 1 <= 36 and
 * len <= 512, else it hashes the AAD first; lengths on both sides of those
 * limits, and AAD with little or no data.
 */
static void test_long_aad(void **state)
{
    const char *impl = use_impl(state);
    static const size_t aad_lens[] = {65,  100, 255, 256, 257, 400, 496, 511,  512,
                                      513, 528, 544, 560, 561, 576, 600, 1000, 4099};
    static const size_t lens[] = {0,   1,   15,  16,  17,  31,  32,  33,  48,  63,   64,  65,
                                  100, 255, 256, 257, 496, 497, 511, 512, 513, 1000, 1025};
    uint8_t iv[12], *aad = malloc(4099), *msg = malloc(1025), *buf = malloc(3 * 1041);
    assert_non_null(aad);
    assert_non_null(msg);
    assert_non_null(buf);
    struct diff_keys *d = diff_keys_new(impl);
    uint8_t(*k)[32] = d->k;
    mbc_gcm_key **keys = d->keys;
    const void **ik = d->ik;
    mbt_rand_bytes(aad, 4099);
    mbt_rand_bytes(msg, 1025);
    for (size_t a = 0; a < sizeof(aad_lens) / sizeof(aad_lens[0]); a++) {
        for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
            int ki = (int)((a + l) % 3);
            mbt_rand_bytes(iv, 12);
            diff_one(keys[ki], k[ki], k_lens[ki], ik[ki], iv, 12, aad, aad_lens[a], msg, lens[l],
                     buf);
        }
    }
    diff_keys_free(d);
    free(aad);
    free(msg);
    free(buf);
}

/* ------------------------------------------------------------------------ */
/* Streaming                                                                 */
/* ------------------------------------------------------------------------ */

/* stream_seal: pieces of the AAD split at sa, data split at the cut points. */
static void stream_check(mbc_gcm_key *key, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                         size_t aad_len, size_t sa, const uint8_t *msg, size_t len,
                         const size_t *cuts, size_t num_cuts, const uint8_t *ref,
                         const uint8_t ref_tag[16])
{
    uint8_t out[4096], tag[16];
    mbc_gcm_ctx ctx;
    for (int dir = 0; dir < 2; dir++) {
        const uint8_t *src = dir == 0 ? msg : ref;
        assert_int_equal(mbc_gcm_init(&ctx, key, iv, iv_len, 0), MBC_OK);
        assert_int_equal(mbc_gcm_aad(&ctx, aad, sa), MBC_OK);
        assert_int_equal(mbc_gcm_aad(&ctx, aad + sa, aad_len - sa), MBC_OK);
        size_t at = 0;
        for (size_t c = 0; c <= num_cuts; c++) {
            size_t end = c < num_cuts ? cuts[c] : len;
            mbc_err e = dir == 0 ? mbc_gcm_encrypt(&ctx, out + at, src + at, end - at)
                                 : mbc_gcm_decrypt(&ctx, out + at, src + at, end - at);
            assert_int_equal(e, MBC_OK);
            at = end;
        }
        if (dir == 0) {
            assert_int_equal(mbc_gcm_finish(&ctx, tag, 16), MBC_OK);
            assert_memory_equal(out, ref, len);
            assert_memory_equal(tag, ref_tag, 16);
        } else {
            assert_int_equal(mbc_gcm_verify(&ctx, ref_tag, 16), MBC_OK);
            assert_memory_equal(out, msg, len);
        }
    }
}

static void test_streaming(void **state)
{
    const char *impl = use_impl(state);
    uint8_t k[32], iv[12], aad[40], msg[4000], ref[4016], ref_tag[16];
    mbt_rand_bytes(k, sizeof(k));
    mbt_rand_bytes(iv, sizeof(iv));
    mbt_rand_bytes(aad, sizeof(aad));
    mbt_rand_bytes(msg, sizeof(msg));
    /* Every cut for the short ones; random pieces only for the long one
     * (it runs the 512-byte stitched loops). */
    static const size_t lens[] = {0, 15, 47, 300, 4000};
    for (size_t ki = 0; ki < 3; ki++) {
        size_t k_len = 16 + 8 * ki;
        mbc_gcm_key *key = new_key(k, k_len, impl);
        for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
            size_t len = lens[li];
            size_t aad_len = 13 + 6 * li;
            ossl_seal(k, k_len, iv, 12, aad, aad_len, msg, len, ref, ref_tag);
            /* One cut at every byte boundary of the data, AAD split too. */
            for (size_t cut = 0; cut <= len && len <= 300; cut++) {
                stream_check(key, iv, 12, aad, aad_len, cut % (aad_len + 1), msg, len, &cut, 1, ref,
                             ref_tag);
            }
            /* Many small random pieces. */
            size_t cuts[64], n = 0, at = 0;
            while (n < 64 && len > 0) {
                at += 1 + (size_t)(mbt_rand() % (len > 300 ? 1200 : 20));
                if (at >= len) {
                    break;
                }
                cuts[n++] = at;
            }
            stream_check(key, iv, 12, aad, aad_len, aad_len / 2, msg, len, cuts, n, ref, ref_tag);
        }
        mbc_gcm_key_free(key);
    }
}

/* Zero-length pieces. The real pieces of a message are two AAD pieces and two
 * data pieces; slot s (0..4) comes before real piece s (slot 4 after the
 * last), and each slot may hold an empty AAD piece, an empty data piece, both
 * or neither. An empty data piece does not end the AAD; an AAD piece of any
 * length after a non-empty data piece is MBC_ERR_STATE and changes nothing.
 * Every combination (1024) must give the one-shot result. */
enum { EMPTY_SLOTS = 5, EMPTY_AAD = 1, EMPTY_DATA = 2 };

/* stream_with_empty: one streaming operation (dir 0 seal, 1 open) of the
 * pieces aad[0..sa), aad[sa..aad_len), in[0..sd), in[sd..len) with the empty
 * pieces of combo (2 bits per slot); the finish tag goes to tag (dir 0), the
 * verify verdict is returned (dir 1). */
static mbc_err stream_with_empty(mbc_gcm_key *key, const uint8_t iv[12], int dir, unsigned combo,
                                 const uint8_t *aad, size_t aad_len, size_t sa, const uint8_t *in,
                                 size_t len, size_t sd, uint8_t *out, uint8_t tag[16])
{
    const size_t cut[EMPTY_SLOTS] = {0, sa, aad_len, sd, len};
    mbc_gcm_ctx ctx;
    assert_int_equal(mbc_gcm_init(&ctx, key, iv, 12, 0), MBC_OK);
    size_t data_done = 0;
    for (unsigned s = 0; s < EMPTY_SLOTS; s++) {
        const unsigned e = (combo >> (2 * s)) & 3;
        if (e & EMPTY_AAD) {
            uint8_t dummy = 0;
            assert_int_equal(mbc_gcm_aad(&ctx, s % 2 ? &dummy : NULL, 0),
                             data_done > 0 ? MBC_ERR_STATE : MBC_OK);
        }
        if (e & EMPTY_DATA) {
            /* NULL buffers are allowed with length 0; so is any pointer. */
            uint8_t *o = s % 2 ? out + data_done : NULL;
            const uint8_t *i = s % 2 ? in + data_done : NULL;
            assert_int_equal(
                dir == 0 ? mbc_gcm_encrypt(&ctx, o, i, 0) : mbc_gcm_decrypt(&ctx, o, i, 0), MBC_OK);
        }
        if (s == 0 || s == 1) {
            assert_int_equal(mbc_gcm_aad(&ctx, aad + cut[s], cut[s + 1] - cut[s]), MBC_OK);
        } else if (s == 2 || s == 3) {
            const size_t from = s == 2 ? 0 : sd, to = s == 2 ? sd : len;
            assert_int_equal(dir == 0 ? mbc_gcm_encrypt(&ctx, out + from, in + from, to - from)
                                      : mbc_gcm_decrypt(&ctx, out + from, in + from, to - from),
                             MBC_OK);
            data_done = to;
        }
    }
    return dir == 0 ? mbc_gcm_finish(&ctx, tag, 16) : mbc_gcm_verify(&ctx, tag, 16);
}

static void test_streaming_empty(void **state)
{
    const char *impl = use_impl(state);
    uint8_t k[32], iv[12], aad[21], msg[40], ref[40], ref_tag[16], out[40], tag[16];
    mbt_rand_bytes(k, sizeof(k));
    mbt_rand_bytes(iv, sizeof(iv));
    mbt_rand_bytes(aad, sizeof(aad));
    mbt_rand_bytes(msg, sizeof(msg));
    static const size_t aad_lens[] = {0, 5, 21}, lens[] = {0, 7, 40};
    for (size_t ai = 0; ai < 3; ai++) {
        for (size_t li = 0; li < 3; li++) {
            const size_t aad_len = aad_lens[ai], len = lens[li], k_len = 16 + 8 * ((ai + li) % 3);
            const size_t sa = aad_len / 3, sd = len / 3 + (len > 16 ? 16 : 0);
            mbc_gcm_key *key = new_key(k, k_len, impl);
            assert_int_equal(mbc_gcm_seal(key, ref, ref_tag, 16, iv, 12, aad, aad_len, msg, len),
                             MBC_OK);
            for (unsigned combo = 0; combo < 1u << (2 * EMPTY_SLOTS); combo++) {
                memset(out, 0, sizeof(out));
                assert_int_equal(
                    stream_with_empty(key, iv, 0, combo, aad, aad_len, sa, msg, len, sd, out, tag),
                    MBC_OK);
                if (memcmp(out, ref, len) != 0 || memcmp(tag, ref_tag, 16) != 0) {
                    fail_msg("%s seal: aad %zu len %zu empty pieces 0x%x differ from one-shot",
                             impl, aad_len, len, combo);
                }
                memset(out, 0, sizeof(out));
                memcpy(tag, ref_tag, 16);
                assert_int_equal(
                    stream_with_empty(key, iv, 1, combo, aad, aad_len, sa, ref, len, sd, out, tag),
                    MBC_OK);
                if (memcmp(out, msg, len) != 0) {
                    fail_msg("%s open: aad %zu len %zu empty pieces 0x%x differ from one-shot",
                             impl, aad_len, len, combo);
                }
            }
            mbc_gcm_key_free(key);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Counter wrap                                                              */
/* ------------------------------------------------------------------------ */

static void test_counter_wrap(void **state)
{
    const char *impl = use_impl(state);
    uint8_t k[16], h[16] = {0}, iv[16], msg[2048], ref[2048 + 16], rt[16];
    mbt_rand_bytes(k, sizeof(k));
    mbt_rand_bytes(msg, sizeof(msg));
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int n;
    assert_int_equal(EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, k, NULL), 1);
    assert_int_equal(EVP_EncryptUpdate(c, h, &n, h, 16), 1);
    EVP_CIPHER_CTX_free(c);
    mbc_gcm_key *key = new_key(k, 16, impl);
    /* Choose J0 with counter 2^32 - s, then the 16-byte IV that gives it. */
    for (uint32_t s = 1; s <= 40; s += 3) {
        uint8_t j0[16];
        mbt_rand_bytes(j0, 12);
        uint32_t ctr0 = 0u - s;
        j0[12] = (uint8_t)(ctr0 >> 24);
        j0[13] = (uint8_t)(ctr0 >> 16);
        j0[14] = (uint8_t)(ctr0 >> 8);
        j0[15] = (uint8_t)ctr0;
        mbt_gcm_iv_for_j0(iv, j0, h);
        size_t len = 32 * s + (s % 16); /* up to 1295 bytes: crosses the wrap */
        ossl_seal(k, 16, iv, 16, msg, s, msg, len, ref, rt);
        uint8_t out[2048], tag[16];
        assert_int_equal(mbc_gcm_seal(key, out, tag, 16, iv, 16, msg, s, msg, len), MBC_OK);
        assert_memory_equal(out, ref, len);
        assert_memory_equal(tag, rt, 16);
        assert_int_equal(mbc_gcm_open(key, out, rt, 16, iv, 16, msg, s, ref, len), MBC_OK);
        assert_memory_equal(out, msg, len);
    }
    mbc_gcm_key_free(key);
}

/* ------------------------------------------------------------------------ */
/* API                                                                       */
/* ------------------------------------------------------------------------ */

static void test_errors(void **state)
{
    const char *impl = use_impl(state);
    uint8_t k[32] = {1}, iv[12] = {2}, buf[64] = {0}, tag[16], pt[16] = {3};
    mbc_gcm_key *key = NULL;
    assert_int_equal(mbc_gcm_key_new(&key, k, 20), MBC_ERR_KEY_SIZE);
    assert_null(key);
    assert_int_equal(mbc_gcm_key_new(&key, NULL, 16), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_gcm_key_new(NULL, k, 16), MBC_ERR_NULL_PARAM);
    key = new_key(k, 16, impl);
    assert_int_equal(mbc_gcm_seal(key, buf, tag, 16, iv, 12, NULL, 1, buf, 16), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_gcm_seal(key, NULL, tag, 16, iv, 12, NULL, 0, buf, 16),
                     MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_gcm_seal(key, buf, NULL, 16, iv, 12, NULL, 0, buf, 16),
                     MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_gcm_seal(NULL, buf, tag, 16, iv, 12, NULL, 0, buf, 16),
                     MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_gcm_seal(key, NULL, tag, 16, iv, 12, NULL, 0, NULL, 0), MBC_OK);
    static const size_t bad_tags[] = {0, 4, 8, 11, 17, 32};
    for (size_t i = 0; i < sizeof(bad_tags) / sizeof(bad_tags[0]); i++) {
        assert_int_equal(mbc_gcm_seal(key, buf, tag, bad_tags[i], iv, 12, NULL, 0, buf, 16),
                         MBC_ERR_TAG_LEN);
        assert_int_equal(mbc_gcm_open(key, buf, tag, bad_tags[i], iv, 12, NULL, 0, buf, 16),
                         MBC_ERR_TAG_LEN);
    }
    assert_int_equal(mbc_gcm_seal(key, buf, tag, 16, iv, 0, NULL, 0, buf, 16), MBC_ERR_IV_LEN);
    assert_int_equal(
        mbc_gcm_seal(key, buf, tag, 16, iv, 12, NULL, 0, buf, (size_t)MBC_GCM_MAX_DATA_LEN + 1),
        MBC_ERR_TOO_LONG);
    assert_int_equal(mbc_gcm_seal(key, buf, tag, 16, iv, 12, buf, (size_t)1 << 61, buf, 16),
                     MBC_ERR_TOO_LONG);
    /* Short tags: only through the explicit variants, and they are prefixes. */
    for (size_t tl = 4; tl <= 16; tl++) {
        uint8_t t2[16];
        mbc_err want = (tl == 4 || tl == 8 || tl >= 12) ? MBC_OK : MBC_ERR_TAG_LEN;
        assert_int_equal(mbc_gcm_seal(key, buf, tag, 16, iv, 12, NULL, 0, pt, 16), MBC_OK);
        assert_int_equal(mbc_gcm_seal_short_tag(key, buf + 16, t2, tl, iv, 12, NULL, 0, pt, 0),
                         want);
        if (want == MBC_OK) {
            assert_int_equal(mbc_gcm_seal_short_tag(key, buf + 32, t2, tl, iv, 12, NULL, 0, pt, 16),
                             MBC_OK);
            assert_memory_equal(t2, tag, tl);
            assert_int_equal(
                mbc_gcm_open_short_tag(key, buf + 48, t2, tl, iv, 12, NULL, 0, buf + 32, 16),
                MBC_OK);
            assert_memory_equal(buf + 48, pt, 16);
        }
    }
    /* Streaming order. */
    mbc_gcm_ctx ctx;
    assert_int_equal(mbc_gcm_init(&ctx, key, iv, 0, 0), MBC_ERR_IV_LEN);
    assert_int_equal(mbc_gcm_aad(&ctx, buf, 1), MBC_ERR_STATE);
    assert_int_equal(mbc_gcm_init(&ctx, key, iv, 12, 0), MBC_OK);
    assert_int_equal(mbc_gcm_encrypt(&ctx, buf, buf, 5), MBC_OK);
    assert_int_equal(mbc_gcm_aad(&ctx, buf, 1), MBC_ERR_STATE);
    assert_int_equal(mbc_gcm_decrypt(&ctx, buf, buf, 5), MBC_ERR_STATE);
    assert_int_equal(mbc_gcm_verify(&ctx, tag, 16), MBC_ERR_STATE);
    assert_int_equal(mbc_gcm_finish(&ctx, tag, 8), MBC_ERR_TAG_LEN);
    assert_int_equal(mbc_gcm_finish(&ctx, tag, 16), MBC_OK);
    assert_int_equal(mbc_gcm_finish(&ctx, tag, 16), MBC_ERR_STATE);
    assert_int_equal(mbc_gcm_init(&ctx, key, iv, 12, MBC_GCM_SHORT_TAGS), MBC_OK);
    assert_int_equal(mbc_gcm_finish(&ctx, tag, 8), MBC_OK);
    assert_int_equal(mbc_gcm_init(&ctx, key, iv, 12, 2), MBC_ERR_BAD_PARAM);
    /* The first data call, even of length 0, fixes the direction; only a
     * non-empty piece ends the AAD. */
    assert_int_equal(mbc_gcm_init(&ctx, key, iv, 12, 0), MBC_OK);
    assert_int_equal(mbc_gcm_encrypt(&ctx, buf, buf, 0), MBC_OK);
    assert_int_equal(mbc_gcm_aad(&ctx, buf, 3), MBC_OK);
    assert_int_equal(mbc_gcm_decrypt(&ctx, buf, buf, 0), MBC_ERR_STATE);
    assert_int_equal(mbc_gcm_verify(&ctx, tag, 16), MBC_ERR_STATE);
    assert_int_equal(mbc_gcm_encrypt(&ctx, buf, buf, 0), MBC_OK);
    assert_int_equal(mbc_gcm_aad(&ctx, buf, 0), MBC_OK);
    assert_int_equal(mbc_gcm_finish(&ctx, tag, 16), MBC_OK);
    assert_int_equal(mbc_gcm_init(&ctx, key, iv, 12, 0), MBC_OK);
    assert_int_equal(mbc_gcm_decrypt(&ctx, NULL, NULL, 0), MBC_OK);
    assert_int_equal(mbc_gcm_encrypt(&ctx, buf, buf, 0), MBC_ERR_STATE);
    assert_int_equal(mbc_gcm_encrypt(&ctx, buf, buf, 5), MBC_ERR_STATE);
    assert_int_equal(mbc_gcm_finish(&ctx, tag, 16), MBC_ERR_STATE);
    assert_int_equal(mbc_gcm_aad(&ctx, buf, 2), MBC_OK);
    assert_int_equal(mbc_gcm_decrypt(&ctx, buf, buf, 5), MBC_OK);
    assert_int_equal(mbc_gcm_aad(&ctx, buf, 0), MBC_ERR_STATE);
    assert_int_equal(mbc_gcm_decrypt(&ctx, buf, buf, 0), MBC_OK);
    assert_int_equal(mbc_gcm_verify(&ctx, tag, 16), MBC_ERR_AUTH);
    mbc_gcm_key_free(key);
    mbc_gcm_key_free(NULL);
    assert_string_equal(mbc_err_str(MBC_ERR_AUTH), "MBC_ERR_AUTH");
    assert_string_equal(mbc_err_str(MBC_ERR_STATE), "MBC_ERR_STATE");
}

/* A key keeps the implementation it was created with, and matches the others. */
static void test_key_keeps_impl(void **state)
{
    const char *impl = use_impl(state);
    uint8_t k[24], iv[12] = {0}, msg[200], a[216], b[216];
    mbt_rand_bytes(k, sizeof(k));
    mbt_rand_bytes(msg, sizeof(msg));
    mbc_gcm_key *key = new_key(k, 24, impl);
    mbc_cpu_restrict(0);
    assert_string_equal(mbc_impl_name(MBC_ALG_GCM), "c");
    assert_string_equal(mbc_gcm_key_impl(key), impl);
    mbc_gcm_key *ck = new_key(k, 24, "c");
    assert_int_equal(mbc_gcm_seal(key, a, a + 200, 16, iv, 12, msg, 7, msg, 200), MBC_OK);
    assert_int_equal(mbc_gcm_seal(ck, b, b + 200, 16, iv, 12, msg, 7, msg, 200), MBC_OK);
    assert_memory_equal(a, b, 216);
    mbc_cpu_restrict(~0ull);
    mbc_gcm_key_free(key);
    mbc_gcm_key_free(ck);
}

/* Key setup: every implementation's key schedule (its SubWord) and hash
 * powers give the portable code's bytes, for every key size. */
static void test_key_setup_same(void **state)
{
    const char *impl = use_impl(state);
    for (int i = 0; i < 30; i++) {
        const size_t k_len = (size_t)16 + 8 * (size_t)(i % 3);
        uint8_t k[32];
        mbt_rand_bytes(k, sizeof(k));
        mbc_cpu_restrict(~0ull);
        use_impl(state);
        mbc_gcm_key *key = new_key(k, k_len, impl);
        mbc_cpu_restrict(0);
        mbc_gcm_key *ck = new_key(k, k_len, "c");
        mbc_cpu_restrict(~0ull);
        assert_int_equal(key->rounds, ck->rounds);
        assert_memory_equal(key->rk, ck->rk, sizeof(key->rk));
        assert_memory_equal(key->h, ck->h, sizeof(key->h));
        assert_memory_equal(key->htab, ck->htab, sizeof(key->htab));
        assert_memory_equal(key->htabk, ck->htabk, sizeof(key->htabk));
        mbc_gcm_key_free(key);
        mbc_gcm_key_free(ck);
    }
}

/* The dispatch slot on made-up feature words: each path needs all its
 * features and falls back on its own. */
static void test_dispatch(void **state)
{
    (void)state;
    const uint64_t aesni = MBC_CPU_AESNI | MBC_CPU_PCLMULQDQ | MBC_CPU_SSE41 | MBC_CPU_SSSE3;
    const uint64_t vaes = aesni | MBC_CPU_VAES | MBC_CPU_VPCLMULQDQ | MBC_CPU_AVX512F |
                          MBC_CPU_AVX512BW | MBC_CPU_AVX512VL | MBC_CPU_BMI2;
    struct mbc_dispatch t;
    mbc_dispatch_fill(&t, 0);
    assert_string_equal(t.gcm->base.info.name, "c");
    assert_string_equal(mbc_gcm_impl_for(~aesni)->base.info.name, "c");
#if MBC_HAVE_AESNI
    assert_string_equal(mbc_gcm_impl_for(aesni)->base.info.name, "aesni");
    const uint64_t need[] = {MBC_CPU_VAES, MBC_CPU_VPCLMULQDQ, MBC_CPU_AVX512BW, MBC_CPU_BMI2};
    for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
        assert_string_equal(mbc_gcm_impl_for(vaes & ~need[i])->base.info.name, "aesni");
    }
    for (size_t i = 0; i < 4; i++) {
        uint64_t one[] = {MBC_CPU_AESNI, MBC_CPU_PCLMULQDQ, MBC_CPU_SSE41, MBC_CPU_SSSE3};
        assert_string_equal(mbc_gcm_impl_for(vaes & ~one[i])->base.info.name, "c");
    }
#endif
#if MBC_HAVE_VAES
    mbc_dispatch_fill(&t, vaes);
    assert_string_equal(t.gcm->base.info.name, "vaes512");
    /* The RSA slot is independent of the GCM one. */
    assert_string_equal(t.rsa->base.info.name, "c");
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dispatch), GCM_TESTS(test_errors),
        GCM_TESTS(test_key_keeps_impl),  GCM_TESTS(test_wycheproof),
        GCM_TESTS(test_streaming),       GCM_TESTS(test_streaming_empty),
        GCM_TESTS(test_counter_wrap),    GCM_TESTS(test_differential),
        GCM_TESTS(test_long_aad),        GCM_TESTS(test_key_setup_same),
    };
    int r = mbt_run("gcm", tests);
#if MBT_HAVE_IPSEC_MB
    if (imb != NULL) {
        free_mb_mgr(imb);
    }
#endif
    return r;
}
