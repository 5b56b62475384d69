/*
 * test_rsa_wycheproof.c - the Wycheproof RSA vectors through the 8-lane entry
 * points, on every implementation:
 *  - PKCS#1 v1.5 signature verification (mbc_rsa_public_mb8, then
 *    mbc_rsa_pkcs1_v15_verify_encoded),
 *  - PKCS#1 v1.5 signature generation (mbc_rsa_pkcs1_v15_sign_encode, then
 *    mbc_rsa_private_crt_mb8; the signature must match byte for byte),
 *  - PKCS#1 v1.5 decryption (mbc_rsa_private_crt_mb8, then type-2 unpadding
 *    done here).
 * One generic runner walks a file's groups and tests and packs the tests that
 * need an RSA operation into batches of 8 lanes (a partial last batch uses a
 * smaller lane_mask), so batches mix valid and invalid inputs and, where a
 * file has small groups, the keys of several groups. Each lane must report
 * MBC_LANE_OK, or MBC_LANE_BAD_PARAM exactly when its input is >= n (with its
 * output zeroed); inactive lanes must report MBC_LANE_EMPTY.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ossl_rsa.h"
#include "test_util.h"

#define WP_MAX_BYTES 512 /* 4096-bit modulus */

enum wp_result { WP_VALID, WP_INVALID, WP_ACCEPTABLE };
enum wp_verdict { WP_REJECT, WP_ACCEPT, WP_WRONG };

/* wp_group: the key of one test group and its hash (signature files). */
typedef struct wp_group {
    mbc_rsa_pub_key *pub;
    mbc_rsa_priv_key *priv;
    unsigned bits;
    uint8_t n[WP_MAX_BYTES]; /* the modulus, bits/8 bytes */
    mbc_hash hash;
    const EVP_MD *md;
    int refused; /* key outside the documented limits: every test is rejected */
} wp_group;

/* wp_lane: one test and its buffers. */
typedef struct wp_lane {
    const wp_group *g;
    const json_t *test;
    long tcid;
    enum wp_result result;
    uint8_t in[WP_MAX_BYTES];
    uint8_t out[WP_MAX_BYTES];
} wp_lane;

struct wp_run;

/* wp_kind: what differs between the three file types. */
typedef struct wp_kind {
    int priv;                 /* 1: private CRT op, 0: public op */
    int acceptable_must_pass; /* acceptable tests must be accepted too */
    int (*group_init)(struct wp_run *r, wp_group *g, const json_t *group);
    /* fills lane->in; 0 rejects the test without running the op */
    int (*prepare)(struct wp_run *r, wp_lane *lane);
    /* judges lane->out after an OK op; reports WP_WRONG itself */
    enum wp_verdict (*judge)(struct wp_run *r, const wp_lane *lane);
} wp_kind;

/* wp_run: the state of one file on one implementation. */
typedef struct wp_run {
    const char *file;
    const char *impl;
    const wp_kind *kind;
    wp_lane lanes[MBC_LANES];
    unsigned used;
    size_t tests, ops, batches, too_big, count[3], acceptable_accepted, failures;
    long first_fail;
} wp_run;

static void wp_fail(wp_run *r, long tcid, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* wp_fail: reports one mismatch; the file fails once all tests ran. */
static void wp_fail(wp_run *r, long tcid, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (tcid > 0) {
        print_error("%s [%s] tcId %ld: %s\n", r->file, r->impl, tcid, msg);
    } else {
        print_error("%s [%s]: %s\n", r->file, r->impl, msg);
    }
    if (r->failures == 0) {
        r->first_fail = tcid;
    }
    r->failures++;
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static const struct {
    const char *name;
    mbc_hash hash;
    const EVP_MD *(*md)(void);
} wp_hashes[] = {
    {"SHA-1", MBC_HASH_SHA1, EVP_sha1},       {"SHA-224", MBC_HASH_SHA224, EVP_sha224},
    {"SHA-256", MBC_HASH_SHA256, EVP_sha256}, {"SHA-384", MBC_HASH_SHA384, EVP_sha384},
    {"SHA-512", MBC_HASH_SHA512, EVP_sha512},
};

/* wp_group_hash: sets g->hash and g->md from the group's "sha". */
static int wp_group_hash(wp_run *r, wp_group *g, const json_t *group, long tcid)
{
    const char *sha = json_string_value(json_object_get(group, "sha"));
    for (size_t i = 0; sha != NULL && i < sizeof(wp_hashes) / sizeof(wp_hashes[0]); i++) {
        if (strcmp(sha, wp_hashes[i].name) == 0) {
            g->hash = wp_hashes[i].hash;
            g->md = wp_hashes[i].md();
            return 1;
        }
    }
    wp_fail(r, tcid, "unknown sha '%s'", sha != NULL ? sha : "(none)");
    return 0;
}

/* wp_digest: hashes the test's msg with the group's hash. */
static unsigned wp_digest(const wp_lane *lane, uint8_t dig[EVP_MAX_MD_SIZE])
{
    size_t msg_len;
    unsigned dig_len = 0;
    uint8_t *msg = mbt_json_hex(lane->test, "msg", &msg_len);
    int ok = EVP_Digest(msg, msg_len, dig, &dig_len, lane->g->md, NULL);
    free(msg);
    assert_int_equal(ok, 1);
    return dig_len;
}

/* wp_first_tcid: the tcId of a group's first test, to report group errors. */
static long wp_first_tcid(const json_t *group)
{
    const json_t *first = json_array_get(json_object_get(group, "tests"), 0);
    return (long)json_integer_value(json_object_get(first, "tcId"));
}

/* wp_group_size: checks the key size against the group's keySize. */
static int wp_group_size(wp_run *r, wp_group *g, const json_t *group, unsigned bits)
{
    long want = (long)json_integer_value(json_object_get(group, "keySize"));
    if (bits == 0 || (long)bits != want) {
        wp_fail(r, wp_first_tcid(group), "key has %u bits, keySize is %ld", bits, want);
        return 0;
    }
    g->bits = bits;
    return 1;
}

/* wp_bit_len: the bit length of a big-endian number. */
static unsigned wp_bit_len(const uint8_t *a, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (a[i] != 0) {
            return (unsigned)(8 * (len - i)) - (unsigned)__builtin_clz(a[i]) + 24;
        }
    }
    return 0;
}

/*
 * wp_priv_from_parts: builds g->priv from n, e, p, q, dp, dq, qinv and frees
 * the parts. A key with a prime longer than half the modulus is outside the
 * documented limits (MBC_ERR_KEY_SIZE): the group is marked refused.
 */
static int wp_priv_from_parts(wp_run *r, wp_group *g, const json_t *group, mbt_rsa_parts *parts)
{
    const mbc_rsa_priv_components c = mbt_rsa_components(parts);
    mbc_err err = mbc_rsa_priv_key_new(&g->priv, &c);
    const unsigned half = (unsigned)json_integer_value(json_object_get(group, "keySize")) / 2;
    const unsigned pbits = wp_bit_len(c.p, c.p_len), qbits = wp_bit_len(c.q, c.q_len);
    int ok = err == MBC_OK;
    if (err == MBC_ERR_KEY_SIZE && (pbits > half || qbits > half)) {
        print_message("# %s tcId %ld: key with %u/%u-bit primes refused (MBC_ERR_KEY_SIZE, "
                      "as documented); its tests count as rejected\n",
                      r->file, wp_first_tcid(group), pbits, qbits);
        g->refused = 1;
        g->bits = 2 * half;
        ok = 1;
    } else if (!ok) {
        wp_fail(r, wp_first_tcid(group), "mbc_rsa_priv_key_new: %s", mbc_err_str(err));
    } else {
        ok = wp_group_size(r, g, group, mbc_rsa_priv_key_bits(g->priv)) &&
             mbt_left_pad(g->n, g->bits / 8, c.n, c.n_len);
    }
    mbt_rsa_parts_free(parts);
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Signature verification: rsa_signature_*_test.json                         */
/* ------------------------------------------------------------------------ */

static int verify_group_init(wp_run *r, wp_group *g, const json_t *group)
{
    const json_t *pk = json_object_get(group, "publicKey");
    size_t n_len, e_len;
    uint8_t *n = mbt_json_hex(pk, "modulus", &n_len);
    uint8_t *e = mbt_json_hex(pk, "publicExponent", &e_len);
    mbc_err err = mbc_rsa_pub_key_new(&g->pub, n, n_len, e, e_len);
    int ok = err == MBC_OK;
    if (!ok) {
        wp_fail(r, wp_first_tcid(group), "mbc_rsa_pub_key_new: %s", mbc_err_str(err));
    } else {
        ok = wp_group_size(r, g, group, mbc_rsa_pub_key_bits(g->pub)) &&
             mbt_left_pad(g->n, g->bits / 8, n, n_len) &&
             wp_group_hash(r, g, group, wp_first_tcid(group));
    }
    free(n);
    free(e);
    return ok;
}

/* wp_input: copies the test's member key into lane->in; 0 (reject) if it is
 * not exactly the modulus length. */
static int wp_input(wp_lane *lane, const char *key)
{
    size_t len;
    uint8_t *buf = mbt_json_hex(lane->test, key, &len);
    int ok = len == lane->g->bits / 8;
    if (ok) {
        memcpy(lane->in, buf, len);
    }
    free(buf);
    return ok;
}

static int verify_prepare(wp_run *r, wp_lane *lane)
{
    (void)r;
    return wp_input(lane, "sig");
}

static enum wp_verdict verify_judge(wp_run *r, const wp_lane *lane)
{
    uint8_t dig[EVP_MAX_MD_SIZE];
    unsigned dig_len = wp_digest(lane, dig);
    mbc_err err =
        mbc_rsa_pkcs1_v15_verify_encoded(lane->out, lane->g->bits / 8, lane->g->hash, dig, dig_len);
    if (err == MBC_OK) {
        return WP_ACCEPT;
    }
    if (err == MBC_ERR_SIG_INVALID) {
        return WP_REJECT;
    }
    wp_fail(r, lane->tcid, "mbc_rsa_pkcs1_v15_verify_encoded: %s", mbc_err_str(err));
    return WP_WRONG;
}

static const wp_kind kind_verify = {0, 0, verify_group_init, verify_prepare, verify_judge};

/* ------------------------------------------------------------------------ */
/* Signature generation: rsa_pkcs1_*_sig_gen_test.json                       */
/* ------------------------------------------------------------------------ */

/* The key comes from privateKeyPkcs8, parsed by OpenSSL. */
static int sign_group_init(wp_run *r, wp_group *g, const json_t *group)
{
    const long tcid = wp_first_tcid(group);
    if (!wp_group_hash(r, g, group, tcid)) {
        return 0;
    }
    size_t der_len;
    uint8_t *der = mbt_json_hex(group, "privateKeyPkcs8", &der_len);
    const unsigned char *p = der;
    EVP_PKEY *pkey = d2i_AutoPrivateKey(NULL, &p, (long)der_len);
    free(der);
    if (pkey == NULL) {
        wp_fail(r, tcid, "OpenSSL cannot parse privateKeyPkcs8");
        return 0;
    }
    mbt_rsa_parts parts;
    const int ok = mbt_ossl_rsa_get_parts(&parts, pkey, 0) == 0;
    EVP_PKEY_free(pkey);
    if (!ok) {
        for (int i = 0; i < MBT_RSA_NUM_PARTS; i++) {
            if (parts.c[i] == NULL) {
                wp_fail(r, tcid, "privateKeyPkcs8 lacks %s", mbt_ossl_rsa_part_name(i));
            }
        }
        mbt_rsa_parts_free(&parts);
        return 0;
    }
    return wp_priv_from_parts(r, g, group, &parts);
}

/* hash(msg) -> EMSA-PKCS1-v1_5 encoding, the lane input. */
static int sign_prepare(wp_run *r, wp_lane *lane)
{
    uint8_t dig[EVP_MAX_MD_SIZE];
    unsigned dig_len = wp_digest(lane, dig);
    mbc_err err =
        mbc_rsa_pkcs1_v15_sign_encode(lane->in, lane->g->bits / 8, lane->g->hash, dig, dig_len);
    if (err != MBC_OK) {
        wp_fail(r, lane->tcid, "mbc_rsa_pkcs1_v15_sign_encode: %s", mbc_err_str(err));
        return 0;
    }
    return 1;
}

static enum wp_verdict sign_judge(wp_run *r, const wp_lane *lane)
{
    size_t sig_len;
    uint8_t *sig = mbt_json_hex(lane->test, "sig", &sig_len);
    int same = sig_len == lane->g->bits / 8 && memcmp(sig, lane->out, sig_len) == 0;
    free(sig);
    if (!same) {
        wp_fail(r, lane->tcid, "signature differs from the expected sig");
        return WP_WRONG;
    }
    return WP_ACCEPT;
}

static const wp_kind kind_sign = {1, 1, sign_group_init, sign_prepare, sign_judge};

/* ------------------------------------------------------------------------ */
/* Decryption: rsa_pkcs1_*_test.json                                         */
/* ------------------------------------------------------------------------ */

/* The key comes from the privateKey fields (BigInt hex). */
static int decrypt_group_init(wp_run *r, wp_group *g, const json_t *group)
{
    static const char *const names[MBT_RSA_NUM_PARTS] = {
        "modulus", "publicExponent", "prime1", "prime2", "exponent1", "exponent2", "coefficient",
    };
    const json_t *sk = json_object_get(group, "privateKey");
    mbt_rsa_parts parts;
    for (int i = 0; i < MBT_RSA_NUM_PARTS; i++) {
        parts.c[i] = mbt_json_hex(sk, names[i], &parts.len[i]);
    }
    return wp_priv_from_parts(r, g, group, &parts);
}

static int decrypt_prepare(wp_run *r, wp_lane *lane)
{
    (void)r;
    return wp_input(lane, "ct");
}

/* wp_unpad_type2: PKCS#1 v1.5 encryption unpadding: 00 02, at least 8
 * non-zero padding bytes, 00, message. Returns the message offset or 0. */
static size_t wp_unpad_type2(const uint8_t *em, size_t len)
{
    if (len < 11 || em[0] != 0x00 || em[1] != 0x02) {
        return 0;
    }
    for (size_t i = 2; i < len; i++) {
        if (em[i] == 0x00) {
            return i - 2 >= 8 ? i + 1 : 0;
        }
    }
    return 0;
}

static enum wp_verdict decrypt_judge(wp_run *r, const wp_lane *lane)
{
    const size_t len = lane->g->bits / 8;
    const size_t off = wp_unpad_type2(lane->out, len);
    if (off == 0) {
        return WP_REJECT;
    }
    size_t msg_len;
    uint8_t *msg = mbt_json_hex(lane->test, "msg", &msg_len);
    int same = msg_len == len - off && memcmp(msg, lane->out + off, msg_len) == 0;
    free(msg);
    if (!same) {
        wp_fail(r, lane->tcid, "unpadding gave a %zu-byte message other than msg", len - off);
        return WP_WRONG;
    }
    return WP_ACCEPT;
}

static const wp_kind kind_decrypt = {1, 0, decrypt_group_init, decrypt_prepare, decrypt_judge};

/* ------------------------------------------------------------------------ */
/* The generic runner                                                        */
/* ------------------------------------------------------------------------ */

/* wp_record: counts one finished test and checks its verdict. */
static void wp_record(wp_run *r, const wp_lane *lane, enum wp_verdict v)
{
    r->tests++;
    r->count[lane->result]++;
    if (v == WP_WRONG) {
        return; /* already reported */
    }
    if (lane->result == WP_VALID && v != WP_ACCEPT) {
        wp_fail(r, lane->tcid, "valid test rejected");
    } else if (lane->result == WP_INVALID && v != WP_REJECT) {
        wp_fail(r, lane->tcid, "invalid test accepted");
    } else if (lane->result == WP_ACCEPTABLE) {
        if (v == WP_ACCEPT) {
            r->acceptable_accepted++;
        } else if (r->kind->acceptable_must_pass && !lane->g->refused) {
            wp_fail(r, lane->tcid, "acceptable test rejected");
        }
    }
}

static int wp_all_zero(const uint8_t *p, size_t len)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < len; i++) {
        acc |= p[i];
    }
    return acc == 0;
}

/* wp_flush: runs the queued lanes as one batch and judges every lane. */
static void wp_flush(wp_run *r)
{
    if (r->used == 0) {
        return;
    }
    const unsigned bits = r->lanes[0].g->bits, len = bits / 8;
    const unsigned mask = (1u << r->used) - 1;
    uint8_t *out[MBC_LANES] = {0};
    const uint8_t *in[MBC_LANES] = {0};
    const mbc_rsa_pub_key *pub[MBC_LANES] = {0};
    const mbc_rsa_priv_key *priv[MBC_LANES] = {0};
    for (unsigned i = 0; i < r->used; i++) {
        memset(r->lanes[i].out, 0xA5, sizeof(r->lanes[i].out));
        out[i] = r->lanes[i].out;
        in[i] = r->lanes[i].in;
        pub[i] = r->lanes[i].g->pub;
        priv[i] = r->lanes[i].g->priv;
    }
    const mbc_status st = r->kind->priv ? mbc_rsa_private_crt_mb8(out, in, priv, bits, mask)
                                        : mbc_rsa_public_mb8(out, in, pub, bits, mask);
    r->ops += r->used;
    r->batches++;
    for (unsigned i = 0; i < MBC_LANES; i++) {
        const unsigned code = mbc_lane_code(st, i);
        if (i >= r->used) {
            if (code != MBC_LANE_EMPTY) {
                wp_fail(r, r->lanes[0].tcid, "inactive lane %u of the batch reports %s", i,
                        mbc_lane_code_str(code));
            }
            continue;
        }
        const wp_lane *lane = &r->lanes[i];
        const unsigned want =
            memcmp(lane->in, lane->g->n, len) >= 0 ? MBC_LANE_BAD_PARAM : MBC_LANE_OK;
        if (code != want) {
            wp_fail(r, lane->tcid, "lane %u (mask 0x%02x) reports %s, expected %s", i, mask,
                    mbc_lane_code_str(code), mbc_lane_code_str(want));
            wp_record(r, lane, WP_WRONG);
        } else if (code != MBC_LANE_OK) {
            r->too_big++;
            if (!wp_all_zero(lane->out, len)) {
                wp_fail(r, lane->tcid, "lane %u failed but its output was not zeroed", i);
            }
            wp_record(r, lane, WP_REJECT);
        } else {
            wp_record(r, lane, r->kind->judge(r, lane));
        }
    }
    r->used = 0;
}

static enum wp_result wp_parse_result(const json_t *test)
{
    const char *s = json_string_value(json_object_get(test, "result"));
    assert_non_null(s);
    if (strcmp(s, "valid") == 0) {
        return WP_VALID;
    }
    if (strcmp(s, "invalid") == 0) {
        return WP_INVALID;
    }
    assert_string_equal(s, "acceptable");
    return WP_ACCEPTABLE;
}

/*
 * wp_run_file: runs every test of file with kind on the current
 * implementation and prints a summary. Returns the number of failures and
 * sets *first_fail to the first failing tcId.
 */
static size_t wp_run_file(const char *impl, const char *file, const wp_kind *kind, long *first_fail)
{
    json_t *root = mbt_load_json(file);
    const json_t *groups = json_object_get(root, "testGroups");
    const size_t ngroups = json_array_size(groups);
    const long want = (long)json_integer_value(json_object_get(root, "numberOfTests"));
    wp_group *g = calloc(ngroups + 1, sizeof(*g));
    wp_run *r = calloc(1, sizeof(*r));
    assert_non_null(g);
    assert_non_null(r);
    r->file = file;
    r->impl = impl;
    r->kind = kind;

    for (size_t gi = 0; gi < ngroups; gi++) {
        const json_t *group = json_array_get(groups, gi);
        if (!kind->group_init(r, &g[gi], group)) {
            continue; /* reported; its tests are not counted */
        }
        if (r->used > 0 && r->lanes[0].g->bits != g[gi].bits) {
            wp_flush(r);
        }
        const json_t *tests = json_object_get(group, "tests");
        for (size_t ti = 0; ti < json_array_size(tests); ti++) {
            wp_lane *lane = &r->lanes[r->used];
            lane->g = &g[gi];
            lane->test = json_array_get(tests, ti);
            lane->tcid = (long)json_integer_value(json_object_get(lane->test, "tcId"));
            lane->result = wp_parse_result(lane->test);
            if (g[gi].refused || !kind->prepare(r, lane)) {
                wp_record(r, lane, WP_REJECT);
                continue;
            }
            if (++r->used == MBC_LANES) {
                wp_flush(r);
            }
        }
    }
    wp_flush(r);

    print_message("# %-36s %-4s: %zu tests (%zu ops in %zu batches, %zu inputs >= n), "
                  "valid %zu, invalid %zu, acceptable %zu (%zu accepted)\n",
                  file, impl, r->tests, r->ops, r->batches, r->too_big, r->count[WP_VALID],
                  r->count[WP_INVALID], r->count[WP_ACCEPTABLE], r->acceptable_accepted);
    if ((long)r->tests != want) {
        wp_fail(r, 0, "ran %zu tests, numberOfTests is %ld", r->tests, want);
    }
    const size_t failures = r->failures;
    *first_fail = r->first_fail;
    for (size_t gi = 0; gi < ngroups; gi++) {
        mbc_rsa_pub_key_free(g[gi].pub);
        mbc_rsa_priv_key_free(g[gi].priv);
    }
    free(g);
    free(r);
    json_decref(root);
    return failures;
}

/* wp_run_files: runs every file on the implementation named by *state and
 * fails the test at the end if any file had a failure. */
static void wp_run_files(void **state, const char *const *files, size_t nfiles, const wp_kind *kind)
{
    const char *impl = mbt_use_impl(state);
    size_t total = 0;
    const char *bad_file = NULL;
    long bad_tcid = 0;
    for (size_t i = 0; i < nfiles; i++) {
        long first = 0;
        size_t f = wp_run_file(impl, files[i], kind, &first);
        if (f > 0 && bad_file == NULL) {
            bad_file = files[i];
            bad_tcid = first;
        }
        total += f;
    }
    if (total > 0) {
        fail_msg("%zu failure(s) on %s; the first: %s tcId %ld", total, impl, bad_file, bad_tcid);
    }
}

#define WP_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void test_pkcs1_verify(void **state)
{
    static const char *const files[] = {
        "rsa_signature_2048_sha256_test.json", "rsa_signature_2048_sha384_test.json",
        "rsa_signature_2048_sha512_test.json", "rsa_signature_3072_sha256_test.json",
        "rsa_signature_3072_sha384_test.json", "rsa_signature_3072_sha512_test.json",
        "rsa_signature_4096_sha256_test.json", "rsa_signature_4096_sha384_test.json",
        "rsa_signature_4096_sha512_test.json",
    };
    wp_run_files(state, files, WP_COUNT(files), &kind_verify);
}

static void test_pkcs1_sign(void **state)
{
    static const char *const files[] = {
        "rsa_pkcs1_2048_sig_gen_test.json",
        "rsa_pkcs1_3072_sig_gen_test.json",
        "rsa_pkcs1_4096_sig_gen_test.json",
    };
    wp_run_files(state, files, WP_COUNT(files), &kind_sign);
}

static void test_pkcs1_decrypt(void **state)
{
    static const char *const files[] = {
        "rsa_pkcs1_2048_test.json",
        "rsa_pkcs1_3072_test.json",
        "rsa_pkcs1_4096_test.json",
    };
    wp_run_files(state, files, WP_COUNT(files), &kind_decrypt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MBT_IMPL_TESTS(test_pkcs1_verify),
        MBT_IMPL_TESTS(test_pkcs1_sign),
        MBT_IMPL_TESTS(test_pkcs1_decrypt),
    };
    return mbt_run("rsa_wycheproof", tests);
}
