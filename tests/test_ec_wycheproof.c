/*
 * test_ec_wycheproof.c - every Wycheproof ecdsa_secp256r1_*, ecdsa_secp384r1_*
 * (DER and P1363 signatures), ecdh_secp256r1* and ecdh_secp384r1* file
 * (raw points in the _ecpoint files, SubjectPublicKeyInfo in the others)
 * in ../shared/vectors, through the 8-lane calls (records spread over the
 * lane positions, the lanes of a batch mixing keys and results) and through
 * the single-request calls (a quarter of the records in the sanitizer runs,
 * mbt_quick), on each implementation.
 *
 * DER signatures and SubjectPublicKeyInfo are parsed here, strictly: a
 * signature that is not the minimal DER encoding of two non-negative
 * integers is invalid (Wycheproof's BER and malformed cases); a public key
 * whose algorithm is not id-ecPublicKey with the file's named curve is not
 * a key of the curve (its test must not be "valid").
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "test_hooks.h"
#include "ec_impls.h"
#include "test_util.h"

#define MAX_LEN 48
#define MAX_POINT 97

static const char *ec_begin(void **state)
{
    mbc_test_hooks.ec_fault_lanes = 0;
    const char *impl = mbt_use_ec_impl(state);
    assert_string_equal(mbc_impl_name(MBC_ALG_EC), impl);
    return impl;
}

/* files: the vector files whose names start with prefix, sorted, in a
 * NULL-terminated malloc'ed array. */
static char **files(const char *prefix)
{
    const char *dir_path = mbt_vectors_path("");
    DIR *dir = opendir(dir_path);
    if (dir == NULL) {
        fail_msg("cannot open %s (set MBC_VECTORS_DIR)", dir_path);
    }
    char **names = calloc(64, sizeof(*names));
    size_t n = 0;
    assert_non_null(names);
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && n < 63) {
            names[n++] = strdup(e->d_name);
        }
    }
    closedir(dir);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            if (strcmp(names[j], names[i]) < 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
        }
    }
    if (n == 0) {
        fail_msg("no %s* vector file", prefix);
    }
    return names;
}

static void files_free(char **names)
{
    for (size_t i = 0; names[i] != NULL; i++) {
        free(names[i]);
    }
    free(names);
}

static mbc_curve curve_of(const char *name)
{
    if (strcmp(name, "secp256r1") == 0) {
        return MBC_CURVE_P256;
    }
    if (strcmp(name, "secp384r1") == 0) {
        return MBC_CURVE_P384;
    }
    fail_msg("unexpected curve %s", name);
    return (mbc_curve)0;
}

/* ------------------------------------------------------------------------ */
/* Strict DER                                                                */
/* ------------------------------------------------------------------------ */

/* der_tlv: the element at *p (end: the end of the buffer) with tag tag,
 * short-form length only (every valid element here is shorter than 128
 * bytes, so a long form would not be minimal); *p moves past it. The
 * contents start at *content. Returns its length, or -1. */
static long der_tlv(const uint8_t **p, const uint8_t *end, uint8_t tag, const uint8_t **content)
{
    if (end - *p < 2 || (*p)[0] != tag || (*p)[1] >= 0x80 || end - *p - 2 < (*p)[1]) {
        return -1;
    }
    const long len = (*p)[1];
    *content = *p + 2;
    *p += 2 + len;
    return len;
}

/* der_uint: a minimal non-negative INTEGER into out (len bytes). */
static int der_uint(const uint8_t **p, const uint8_t *end, uint8_t *out, size_t len)
{
    const uint8_t *c;
    long n = der_tlv(p, end, 0x02, &c);
    if (n < 1 || (c[0] & 0x80) != 0 || (n > 1 && c[0] == 0 && (c[1] & 0x80) == 0)) {
        return -1;
    }
    if (c[0] == 0 && n > 1) {
        c++;
        n--;
    }
    return mbt_left_pad(out, len, c, (size_t)n) ? 0 : -1;
}

/* der_sig: r || s from the DER ECDSA-Sig-Value der, or -1. A value too long
 * for len bytes is >= n: an invalid signature too. */
static int der_sig(const uint8_t *der, size_t der_len, size_t len, uint8_t *sig)
{
    const uint8_t *p = der, *end = der + der_len, *seq;
    const long n = der_tlv(&p, end, 0x30, &seq);
    if (n < 0 || p != end) {
        return -1;
    }
    const uint8_t *q = seq;
    if (der_uint(&q, seq + n, sig, len) != 0 || der_uint(&q, seq + n, sig + len, len) != 0) {
        return -1;
    }
    return q == seq + n ? 0 : -1;
}

/* spki_point: the encoded point of a SubjectPublicKeyInfo for id-ecPublicKey
 * on curve (named), or NULL. */
static const uint8_t *spki_point(const uint8_t *der, size_t der_len, mbc_curve curve,
                                 size_t *point_len)
{
    static const uint8_t alg_p256[] = {0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48,
                                       0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
                                       0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
    static const uint8_t alg_p384[] = {0x30, 0x10, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d,
                                       0x02, 0x01, 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22};
    const uint8_t *alg = curve == MBC_CURVE_P256 ? alg_p256 : alg_p384;
    const size_t alg_len = curve == MBC_CURVE_P256 ? sizeof(alg_p256) : sizeof(alg_p384);
    const uint8_t *p = der, *end = der + der_len, *seq, *bits;
    const long n = der_tlv(&p, end, 0x30, &seq);
    if (n < 0 || p != end || (size_t)n < alg_len || memcmp(seq, alg, alg_len) != 0) {
        return NULL;
    }
    const uint8_t *q = seq + alg_len;
    const long nb = der_tlv(&q, seq + n, 0x03, &bits);
    if (nb < 1 || q != seq + n || bits[0] != 0) {
        return NULL;
    }
    *point_len = (size_t)nb - 1;
    return bits + 1;
}

/* ------------------------------------------------------------------------ */
/* ECDSA                                                                     */
/* ------------------------------------------------------------------------ */

struct sig_rec {
    int tc_id;
    int valid;  /* result "valid" */
    int parsed; /* the signature has the form r || s */
    uint8_t sig[2 * MAX_LEN];
    uint8_t digest[64];
    size_t digest_len;
    const mbc_ec_pub_key *key;
};

static const EVP_MD *md_of(const char *sha)
{
    if (strcmp(sha, "SHA-256") == 0) {
        return EVP_sha256();
    }
    if (strcmp(sha, "SHA-384") == 0) {
        return EVP_sha384();
    }
    if (strcmp(sha, "SHA-512") == 0) {
        return EVP_sha512();
    }
    fail_msg("unexpected hash %s", sha);
    return NULL;
}

/* run_sig_batches: every record through the 8-lane call, 8 at a time with
 * the records of a batch rotated by the batch number over the lanes, and
 * through the single call; returns the number of lanes run. */
static size_t run_sig_batches(const struct sig_rec *recs, size_t n, mbc_curve curve,
                              const char *file)
{
    size_t lanes_run = 0;
    for (size_t b = 0; b * MBC_LANES < n; b++) {
        const uint8_t *sig[MBC_LANES] = {NULL}, *digest[MBC_LANES] = {NULL};
        size_t len[MBC_LANES] = {0};
        const mbc_ec_pub_key *key[MBC_LANES] = {NULL};
        const struct sig_rec *at[MBC_LANES] = {NULL};
        unsigned mask = 0;
        for (size_t i = b * MBC_LANES; i < n && i < (b + 1) * MBC_LANES; i++) {
            const unsigned lane = (unsigned)((i + b) % MBC_LANES);
            at[lane] = &recs[i];
            if (!recs[i].parsed) {
                continue; /* not r || s: invalid before any call */
            }
            sig[lane] = recs[i].sig;
            digest[lane] = recs[i].digest;
            len[lane] = recs[i].digest_len;
            key[lane] = recs[i].key;
            mask |= 1u << lane;
        }
        const mbc_status st = mbc_ecdsa_verify_mb8(sig, digest, len, key, curve, mask);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            if (at[l] == NULL) {
                continue;
            }
            const unsigned code = mbc_lane_code(st, l);
            const unsigned want = !((mask >> l) & 1u) ? MBC_LANE_EMPTY
                                  : at[l]->valid      ? MBC_LANE_OK
                                                      : MBC_LANE_SIG_INVALID;
            if (code != want) {
                fail_msg("%s tcId %d (8-lane, lane %u): %s, want %s", file, at[l]->tc_id, l,
                         mbc_lane_code_str(code), mbc_lane_code_str(want));
            }
            lanes_run += (mask >> l) & 1u;
            /* the single call: every record (a quarter in the sanitizer runs) */
            if (at[l]->parsed && (!mbt_quick() || at[l]->tc_id % 4 == 0)) {
                const mbc_err err =
                    mbc_ecdsa_verify(at[l]->sig, at[l]->digest, at[l]->digest_len, at[l]->key);
                if (err != (at[l]->valid ? MBC_OK : MBC_ERR_SIG_INVALID)) {
                    fail_msg("%s tcId %d (single): %s", file, at[l]->tc_id, mbc_err_str(err));
                }
            }
        }
    }
    return lanes_run;
}

static void ecdsa_file(const char *file)
{
    json_t *root = mbt_load_json(file);
    const int p1363 = strstr(file, "p1363") != NULL;
    json_t *groups = json_object_get(root, "testGroups");
    size_t total = 0, ran = 0, valid = 0;
    size_t gi;
    json_t *g;
    json_array_foreach(groups, gi, g)
    {
        json_t *pk = json_object_get(g, "publicKey");
        const mbc_curve curve = curve_of(json_string_value(json_object_get(pk, "curve")));
        const size_t len = mbc_ec_scalar_len(curve);
        size_t point_len;
        uint8_t *point = mbt_json_hex(pk, "uncompressed", &point_len);
        mbc_ec_pub_key *key = NULL;
        assert_int_equal(mbc_ec_pub_key_new(&key, curve, point, point_len), MBC_OK);
        free(point);
        const EVP_MD *md = md_of(json_string_value(json_object_get(g, "sha")));
        json_t *tests = json_object_get(g, "tests");
        const size_t nt = json_array_size(tests);
        struct sig_rec *recs = calloc(nt, sizeof(*recs));
        assert_non_null(recs);
        for (size_t t = 0; t < nt; t++) {
            json_t *tc = json_array_get(tests, t);
            struct sig_rec *r = &recs[t];
            const char *result = json_string_value(json_object_get(tc, "result"));
            r->tc_id = (int)json_integer_value(json_object_get(tc, "tcId"));
            assert_true(strcmp(result, "valid") == 0 || strcmp(result, "invalid") == 0);
            r->valid = strcmp(result, "valid") == 0;
            r->key = key;
            size_t msg_len, sig_len;
            uint8_t *msg = mbt_json_hex(tc, "msg", &msg_len);
            uint8_t *sig = mbt_json_hex(tc, "sig", &sig_len);
            unsigned dl = 0;
            assert_true(EVP_Digest(msg, msg_len, r->digest, &dl, md, NULL) == 1);
            r->digest_len = dl;
            if (p1363) {
                r->parsed = sig_len == 2 * len;
                if (r->parsed) {
                    memcpy(r->sig, sig, sig_len);
                }
            } else {
                r->parsed = der_sig(sig, sig_len, len, r->sig) == 0;
            }
            if (r->valid && !r->parsed) {
                fail_msg("%s tcId %d: a valid signature did not parse", file, r->tc_id);
            }
            valid += (size_t)r->valid;
            free(msg);
            free(sig);
        }
        ran += run_sig_batches(recs, nt, curve, file);
        total += nt;
        free(recs);
        mbc_ec_pub_key_free(key);
    }
    print_message("%s: %zu tests (%zu valid), %zu through the calls, the others invalid "
                  "encodings\n",
                  file, total, valid, ran);
    json_decref(root);
}

static void test_ecdsa(void **state)
{
    ec_begin(state);
    static const char *const prefixes[] = {"ecdsa_secp256r1_", "ecdsa_secp384r1_"};
    for (int p = 0; p < 2; p++) {
        char **names = files(prefixes[p]);
        for (size_t i = 0; names[i] != NULL; i++) {
            ecdsa_file(names[i]);
        }
        files_free(names);
    }
}

/* ------------------------------------------------------------------------ */
/* ECDH                                                                      */
/* ------------------------------------------------------------------------ */

struct dh_rec {
    int tc_id;
    char result; /* 'v'alid, 'i'nvalid, 'a'cceptable */
    const uint8_t *point;
    size_t point_len; /* 0: no key of the curve (SPKI of something else) */
    uint8_t shared[MAX_LEN];
    mbc_ec_priv_key *key;
};

/* check_dh: the outcome err (and out) of one record, by its result. */
static void check_dh(const struct dh_rec *r, size_t len, int ok, const uint8_t *out,
                     const char *file, const char *how)
{
    if (r->result == 'v' && !ok) {
        fail_msg("%s tcId %d (%s): a valid exchange failed", file, r->tc_id, how);
    }
    if (r->result == 'i' && ok) {
        fail_msg("%s tcId %d (%s): an invalid exchange succeeded", file, r->tc_id, how);
    }
    if (ok && memcmp(out, r->shared, len) != 0) {
        fail_msg("%s tcId %d (%s): wrong shared secret", file, r->tc_id, how);
    }
}

static void ecdh_file(const char *file)
{
    json_t *root = mbt_load_json(file);
    const int raw = strstr(file, "ecpoint") != NULL;
    json_t *groups = json_object_get(root, "testGroups");
    size_t total = 0, batched = 0, valid = 0;
    size_t gi;
    json_t *g;
    json_array_foreach(groups, gi, g)
    {
        const mbc_curve curve = curve_of(json_string_value(json_object_get(g, "curve")));
        const size_t len = mbc_ec_scalar_len(curve), plen = mbc_ec_point_len(curve);
        json_t *tests = json_object_get(g, "tests");
        const size_t nt = json_array_size(tests);
        struct dh_rec *recs = calloc(nt, sizeof(*recs));
        uint8_t **pub = calloc(nt, sizeof(*pub));
        assert_non_null(recs);
        assert_non_null(pub);
        for (size_t t = 0; t < nt; t++) {
            json_t *tc = json_array_get(tests, t);
            struct dh_rec *r = &recs[t];
            r->tc_id = (int)json_integer_value(json_object_get(tc, "tcId"));
            r->result = json_string_value(json_object_get(tc, "result"))[0];
            size_t pub_len, d_len, sh_len;
            pub[t] = mbt_json_hex(tc, "public", &pub_len);
            uint8_t *d = mbt_json_hex(tc, "private", &d_len);
            uint8_t *sh = mbt_json_hex(tc, "shared", &sh_len);
            assert_int_equal(mbc_ec_priv_key_new(&r->key, curve, d, d_len), MBC_OK);
            if (r->result != 'i') {
                assert_int_equal(sh_len, len);
                memcpy(r->shared, sh, len);
            }
            if (raw) {
                r->point = pub[t];
                r->point_len = pub_len;
            } else {
                r->point = spki_point(pub[t], pub_len, curve, &r->point_len);
                if (r->point == NULL && r->result == 'v') {
                    fail_msg("%s tcId %d: a valid key did not parse", file, r->tc_id);
                }
            }
            valid += r->result == 'v';
            free(d);
            free(sh);
        }
        /* single calls: every record with a point of the curve */
        uint8_t out[MAX_LEN];
        for (size_t t = 0; t < nt; t++) {
            const struct dh_rec *r = &recs[t];
            if (r->point == NULL || (mbt_quick() && r->tc_id % 4 != 0)) {
                continue;
            }
            const mbc_err err = mbc_ecdh(out, r->point, r->point_len, r->key);
            check_dh(r, len, err == MBC_OK, out, file, "single");
        }
        /* 8-lane calls: the records whose point has the uncompressed length */
        size_t t = 0;
        for (unsigned b = 0; t < nt; b++) {
            uint8_t secret[MBC_LANES][MAX_LEN];
            uint8_t *sp[MBC_LANES];
            const uint8_t *peer[MBC_LANES] = {NULL};
            const mbc_ec_priv_key *key[MBC_LANES] = {NULL};
            const struct dh_rec *at[MBC_LANES] = {NULL};
            unsigned mask = 0;
            for (unsigned i = 0; i < MBC_LANES && t < nt; t++) {
                if (recs[t].point == NULL || recs[t].point_len != plen) {
                    continue;
                }
                const unsigned lane = (i++ + b) % MBC_LANES;
                at[lane] = &recs[t];
                peer[lane] = recs[t].point;
                key[lane] = recs[t].key;
                mask |= 1u << lane;
            }
            for (unsigned l = 0; l < MBC_LANES; l++) {
                sp[l] = secret[l];
            }
            const mbc_status st = mbc_ecdh_mb8(sp, peer, key, curve, mask);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if (at[l] == NULL) {
                    assert_int_equal(mbc_lane_code(st, l), MBC_LANE_EMPTY);
                    continue;
                }
                const unsigned code = mbc_lane_code(st, l);
                if (code != MBC_LANE_OK && code != MBC_LANE_BAD_PARAM &&
                    code != MBC_LANE_NOT_ON_CURVE) {
                    fail_msg("%s tcId %d (8-lane): %s", file, at[l]->tc_id,
                             mbc_lane_code_str(code));
                }
                check_dh(at[l], len, code == MBC_LANE_OK, secret[l], file, "8-lane");
                batched++;
            }
        }
        for (size_t i = 0; i < nt; i++) {
            mbc_ec_priv_key_free(recs[i].key);
            free(pub[i]);
        }
        total += nt;
        free(recs);
        free(pub);
    }
    print_message("%s: %zu tests (%zu valid), %zu through the 8-lane call\n", file, total, valid,
                  batched);
    json_decref(root);
}

static void test_ecdh(void **state)
{
    ec_begin(state);
    static const char *const prefixes[] = {"ecdh_secp256r1", "ecdh_secp384r1"};
    for (int p = 0; p < 2; p++) {
        char **names = files(prefixes[p]);
        for (size_t i = 0; names[i] != NULL; i++) {
            ecdh_file(names[i]);
        }
        files_free(names);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MBT_EC_IMPL_TESTS(test_ecdsa),
        MBT_EC_IMPL_TESTS(test_ecdh),
    };
    return mbt_run("ec_wycheproof", tests);
}
