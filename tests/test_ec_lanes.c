/*
 * test_ec_lanes.c - lane semantics of the EC batch calls (every lane mask,
 * one bad lane of each kind among good ones, the fault hook), bad input to
 * the batch and single-request calls, and every error of the key
 * constructors. Each test runs on the implementation's own plan and, for
 * part of the cases, on the batch kernel (test hook ec_batch_plan), so the
 * batch glue is tested where the portable path would run requests one by
 * one. Reference results: OpenSSL (ossl_ec.c).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/obj_mac.h>

#include "ec/ec_internal.h"
#include "ossl_ec.h"
#include "test_hooks.h"
#include "ec_impls.h"
#include "test_util.h"

#define MAX_LEN 48
#define MAX_POINT 97
#define OUT_MAX 128
#define CANARY 0xA5

enum op { OP_SIGN, OP_VERIFY, OP_ECDH, OP_KEYGEN, NUM_OPS };
static const char *const op_names[NUM_OPS] = {"sign_k", "verify", "ecdh", "keygen"};

/* ------------------------------------------------------------------------ */
/* Fixture: per curve, 8 keys with their lane's inputs and OpenSSL results  */
/* ------------------------------------------------------------------------ */

struct lane_ref {
    EVP_PKEY *pkey;
    uint8_t d[MAX_LEN], point[MAX_POINT];
    mbc_ec_priv_key *priv;
    mbc_ec_pub_key *pub;
    uint8_t digest[MAX_LEN], k[MAX_LEN];
    uint8_t sig[2 * MAX_LEN]; /* OpenSSL's signature with k */
    uint8_t peer[MAX_POINT];  /* the point of the next lane's key */
    uint8_t secret[MAX_LEN];  /* OpenSSL's ECDH of d and peer */
};

struct curve_fx {
    mbc_curve curve;
    size_t len, plen, slen;
    struct lane_ref l[MBC_LANES];
    mbc_ec_priv_key *other_priv; /* a key of the other curve */
    mbc_ec_pub_key *other_pub;
};

static struct fixture {
    int ready;
    struct curve_fx c[2];
} fx;

static void curve_init(struct curve_fx *cf, mbc_curve curve, mbc_curve other)
{
    cf->curve = curve;
    cf->len = mbc_ec_scalar_len(curve);
    cf->plen = mbc_ec_point_len(curve);
    cf->slen = mbc_ec_sig_len(curve);
    for (unsigned i = 0; i < MBC_LANES; i++) {
        struct lane_ref *r = &cf->l[i];
        r->pkey = mbt_ossl_ec_keygen(curve);
        assert_non_null(r->pkey);
        assert_int_equal(mbt_ossl_ec_get(r->pkey, curve, r->d, r->point), 0);
        assert_int_equal(mbc_ec_priv_key_new(&r->priv, curve, r->d, cf->len), MBC_OK);
        assert_int_equal(mbc_ec_pub_key_new(&r->pub, curve, r->point, cf->plen), MBC_OK);
    }
    for (unsigned i = 0; i < MBC_LANES; i++) {
        struct lane_ref *r = &cf->l[i];
        mbt_rand_bytes(r->digest, cf->len);
        do {
            mbt_rand_bytes(r->k, cf->len);
            r->k[0] &= 0x7F; /* below n */
        } while (mbt_ossl_ecdsa_sign_k(curve, r->d, r->k, r->digest, cf->len, r->sig) != 0);
        memcpy(r->peer, cf->l[(i + 1) % MBC_LANES].point, cf->plen);
        assert_int_equal(
            mbt_ossl_ecdh(r->pkey, cf->l[(i + 1) % MBC_LANES].pkey, r->secret, cf->len), 0);
    }
    assert_int_equal(mbc_ec_priv_key_generate(&cf->other_priv, other), MBC_OK);
    uint8_t q[MAX_POINT];
    assert_int_equal(mbc_ec_priv_key_public(cf->other_priv, q, sizeof(q)), MBC_OK);
    assert_int_equal(mbc_ec_pub_key_new(&cf->other_pub, other, q, mbc_ec_point_len(other)), MBC_OK);
}

static const struct fixture *fixture(void)
{
    if (!fx.ready) {
        curve_init(&fx.c[0], MBC_CURVE_P256, MBC_CURVE_P384);
        curve_init(&fx.c[1], MBC_CURVE_P384, MBC_CURVE_P256);
        fx.ready = 1;
    }
    return &fx;
}

static void fixture_free(void)
{
    for (int c = 0; c < 2 && fx.ready; c++) {
        for (unsigned i = 0; i < MBC_LANES; i++) {
            EVP_PKEY_free(fx.c[c].l[i].pkey);
            mbc_ec_priv_key_free(fx.c[c].l[i].priv);
            mbc_ec_pub_key_free(fx.c[c].l[i].pub);
        }
        mbc_ec_priv_key_free(fx.c[c].other_priv);
        mbc_ec_pub_key_free(fx.c[c].other_pub);
    }
    fx.ready = 0;
}

static void begin(void **state)
{
    mbc_test_hooks.random_fail = 0;
    mbc_test_hooks.ec_fault_lanes = 0;
    mbc_test_hooks.ec_batch_plan = 0;
    const char *impl = mbt_use_ec_impl(state);
    assert_string_equal(mbc_impl_name(MBC_ALG_EC), impl);
    fixture();
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                   */
/* ------------------------------------------------------------------------ */

/* batch: the arrays of one call of any op, lane l on key (l + rot) % 8. */
struct batch {
    const struct curve_fx *cf;
    uint8_t *out[MBC_LANES], *out2[MBC_LANES];
    const uint8_t *in[MBC_LANES], *in2[MBC_LANES];
    size_t in_len[MBC_LANES];
    const mbc_ec_priv_key *priv[MBC_LANES];
    const mbc_ec_pub_key *pub[MBC_LANES];
    const struct lane_ref *ref[MBC_LANES];
    unsigned want[MBC_LANES];
    uint8_t buf[MBC_LANES][OUT_MAX], buf2[MBC_LANES][OUT_MAX];
};

static void set_lane(struct batch *b, enum op op, unsigned l, const struct lane_ref *r)
{
    memset(b->buf[l], CANARY, OUT_MAX);
    memset(b->buf2[l], CANARY, OUT_MAX);
    b->out[l] = b->buf[l];
    b->out2[l] = b->buf2[l];
    b->ref[l] = r;
    b->priv[l] = r->priv;
    b->pub[l] = r->pub;
    b->in_len[l] = b->cf->len;
    b->want[l] = MBC_LANE_OK;
    switch (op) {
    case OP_SIGN:
        b->in[l] = r->digest;
        b->in2[l] = r->k;
        break;
    case OP_VERIFY:
        b->in[l] = r->digest;
        b->in2[l] = r->sig;
        break;
    case OP_ECDH:
        b->in[l] = r->peer;
        b->in2[l] = NULL;
        break;
    default:
        b->in[l] = b->in2[l] = NULL;
        break;
    }
}

static void clean_batch(struct batch *b, const struct curve_fx *cf, enum op op, unsigned rot)
{
    b->cf = cf;
    for (unsigned l = 0; l < MBC_LANES; l++) {
        set_lane(b, op, l, &cf->l[(l + rot) % MBC_LANES]);
    }
}

static mbc_status run(enum op op, const struct batch *b, mbc_curve curve, unsigned mask)
{
    switch (op) {
    case OP_SIGN:
        return mbc_ecdsa_sign_k_mb8(b->out, b->in, b->in_len, b->priv, b->in2, curve, mask);
    case OP_VERIFY:
        return mbc_ecdsa_verify_mb8(b->in2, b->in, b->in_len, b->pub, curve, mask);
    case OP_ECDH:
        return mbc_ecdh_mb8(b->out, b->in, b->priv, curve, mask);
    default:
        return mbc_ec_keygen_mb8(b->out, b->out2, curve, mask);
    }
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

/* out_lens: the bytes op writes to out and out2. */
static void out_lens(enum op op, const struct curve_fx *cf, size_t *len, size_t *len2)
{
    *len = op == OP_SIGN ? cf->slen : op == OP_VERIFY ? 0 : cf->len;
    *len2 = op == OP_KEYGEN ? cf->plen : 0;
}

/* keygen_ok: out (d) and out2 (point) are a key pair of the curve. */
static int keygen_ok(const struct curve_fx *cf, const uint8_t *d, const uint8_t *point)
{
    uint8_t q[MAX_POINT];
    return mbt_ossl_ec_mul_g(cf->curve, d, cf->len, q) == 0 && memcmp(q, point, cf->plen) == 0;
}

/*
 * check: every lane has code want[l]; an OK lane holds the reference
 * result, another active lane zeros, an EMPTY lane is untouched, and no
 * lane is written past its output lengths.
 */
static void check(const struct batch *b, enum op op, mbc_status st, const char *what)
{
    size_t len, len2;
    out_lens(op, b->cf, &len, &len2);
    for (unsigned l = 0; l < MBC_LANES; l++) {
        const unsigned got = mbc_lane_code(st, l);
        if (got != b->want[l]) {
            fail_msg("%s: lane %u is %s, want %s (status 0x%08x)", what, l, mbc_lane_code_str(got),
                     mbc_lane_code_str(b->want[l]), st);
        }
        if (b->want[l] == MBC_LANE_EMPTY) {
            if (!all_bytes(b->buf[l], OUT_MAX, CANARY) || !all_bytes(b->buf2[l], OUT_MAX, CANARY)) {
                fail_msg("%s: empty lane %u was written", what, l);
            }
            continue;
        }
        const uint8_t *o = b->buf[l], *o2 = b->buf2[l];
        if (b->out[l] != b->buf[l]) {
            o = NULL;
        }
        if (b->want[l] == MBC_LANE_OK) {
            const int right = op == OP_SIGN     ? memcmp(o, b->ref[l]->sig, len) == 0
                              : op == OP_ECDH   ? memcmp(o, b->ref[l]->secret, len) == 0
                              : op == OP_KEYGEN ? keygen_ok(b->cf, o, o2)
                                                : 1;
            if (!right) {
                fail_msg("%s: lane %u's result is wrong", what, l);
            }
        } else {
            if (o != NULL && !all_bytes(o, len, 0)) {
                fail_msg("%s: failed lane %u's output is not zeroed", what, l);
            }
            if (len2 != 0 && b->out2[l] == b->buf2[l] && !all_bytes(o2, len2, 0)) {
                fail_msg("%s: failed lane %u's second output is not zeroed", what, l);
            }
        }
        if ((o != NULL && !all_bytes(o + len, OUT_MAX - len, CANARY)) ||
            !all_bytes(o2 + len2, OUT_MAX - len2, CANARY)) {
            fail_msg("%s: lane %u written past its output", what, l);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* 1. Every lane mask                                                        */
/* ------------------------------------------------------------------------ */

/*
 * Every mask 0..255 on P-256 (every 17th on P-384), keys rotated over the
 * lanes. Inactive lanes take turns: NULL pointers; a NULL output with real
 * inputs; garbage (not a key, not a point). One mask in 8 (and every P-384
 * one) also on the batch kernel.
 */
static void test_all_masks(void **state)
{
    begin(state);
    static _Alignas(64) uint8_t garbage[sizeof(struct mbc_ec_pub_key)];
    memset(garbage, 0xFF, sizeof(garbage));
    struct batch *b = malloc(sizeof(*b));
    assert_non_null(b);
    char what[96];
    for (int ci = 0; ci < 2; ci++) {
        const struct curve_fx *cf = &fx.c[ci];
        for (unsigned op = 0; op < NUM_OPS; op++) {
            /* the sanitizer runs (mbt_quick): every 7th mask of P-256 */
            const unsigned step = ci == 0 ? (mbt_quick() ? 7 : 1) : 17;
            for (unsigned mask = 0; mask <= MBC_LANE_MASK_ALL; mask += step) {
                const unsigned variant = mask % 3;
                clean_batch(b, cf, (enum op)op, (unsigned)(mbt_rand() % MBC_LANES));
                for (unsigned l = 0; l < MBC_LANES; l++) {
                    if ((mask >> l) & 1u) {
                        continue;
                    }
                    b->want[l] = MBC_LANE_EMPTY;
                    if (variant == 0) {
                        b->in[l] = b->in2[l] = NULL;
                        b->priv[l] = NULL;
                        b->pub[l] = NULL;
                    } else if (variant == 1) {
                        b->out[l] = b->out2[l] = NULL;
                    } else {
                        b->in[l] = b->in2[l] = garbage;
                        b->priv[l] = (const mbc_ec_priv_key *)(const void *)garbage;
                        b->pub[l] = (const mbc_ec_pub_key *)(const void *)garbage;
                    }
                }
                for (int plan = 0; plan < 2; plan++) {
                    if (plan == 1 && ci == 0 && mask % 8 != 5) {
                        continue;
                    }
                    for (unsigned l = 0; l < MBC_LANES; l++) {
                        memset(b->buf[l], CANARY, OUT_MAX);
                        memset(b->buf2[l], CANARY, OUT_MAX);
                    }
                    mbc_test_hooks.ec_batch_plan = (unsigned)plan;
                    const mbc_status st = run((enum op)op, b, cf->curve, mask);
                    mbc_test_hooks.ec_batch_plan = 0;
                    snprintf(what, sizeof(what), "P-%zu %s mask 0x%02x%s", cf->len * 8,
                             op_names[op], mask, plan ? " (batch plan)" : "");
                    check(b, (enum op)op, st, what);
                }
            }
        }
    }
    free(b);
}

/* ------------------------------------------------------------------------ */
/* 2. One bad lane among 7 good ones                                         */
/* ------------------------------------------------------------------------ */

enum bad {
    B_OUT_NULL,
    B_OUT2_NULL,
    B_IN_NULL,
    B_IN2_NULL,
    B_DIGEST_NULL_LEN,
    B_KEY_NULL,
    B_KEY_OTHER_CURVE,
    B_KEY_OTHER_TYPE,
    B_K_ZERO,
    B_K_N,
    B_K_S_ZERO,
    B_R_ZERO,
    B_S_ZERO,
    B_R_N,
    B_S_N,
    B_SIG_FLIP,
    B_DIGEST_FLIP,
    B_PEER_FORMAT,
    B_PEER_X_P,
    B_PEER_Y_P,
    B_PEER_OFF,
    B_PEER_ZERO,
    B_FAULT,
};

static const struct bad_case {
    const char *name;
    enum bad kind;
    unsigned code;
    unsigned ops; /* bit per op */
} bad_cases[] = {
    {"out NULL", B_OUT_NULL, MBC_LANE_NULL_PARAM, 1u << OP_SIGN | 1u << OP_ECDH | 1u << OP_KEYGEN},
    {"point out NULL", B_OUT2_NULL, MBC_LANE_NULL_PARAM, 1u << OP_KEYGEN},
    {"in NULL", B_IN_NULL, MBC_LANE_NULL_PARAM, 1u << OP_ECDH},
    {"k / sig NULL", B_IN2_NULL, MBC_LANE_NULL_PARAM, 1u << OP_SIGN | 1u << OP_VERIFY},
    {"digest NULL, length 32", B_DIGEST_NULL_LEN, MBC_LANE_NULL_PARAM,
     1u << OP_SIGN | 1u << OP_VERIFY},
    {"key NULL", B_KEY_NULL, MBC_LANE_NULL_PARAM, 1u << OP_SIGN | 1u << OP_VERIFY | 1u << OP_ECDH},
    {"key of the other curve", B_KEY_OTHER_CURVE, MBC_LANE_BAD_PARAM,
     1u << OP_SIGN | 1u << OP_VERIFY | 1u << OP_ECDH},
    {"key of the other type", B_KEY_OTHER_TYPE, MBC_LANE_BAD_PARAM,
     1u << OP_SIGN | 1u << OP_VERIFY | 1u << OP_ECDH},
    {"k = 0", B_K_ZERO, MBC_LANE_BAD_PARAM, 1u << OP_SIGN},
    {"k = n", B_K_N, MBC_LANE_BAD_PARAM, 1u << OP_SIGN},
    {"k giving s = 0", B_K_S_ZERO, MBC_LANE_BAD_PARAM, 1u << OP_SIGN},
    {"r = 0", B_R_ZERO, MBC_LANE_SIG_INVALID, 1u << OP_VERIFY},
    {"s = 0", B_S_ZERO, MBC_LANE_SIG_INVALID, 1u << OP_VERIFY},
    {"r = n", B_R_N, MBC_LANE_SIG_INVALID, 1u << OP_VERIFY},
    {"s = n", B_S_N, MBC_LANE_SIG_INVALID, 1u << OP_VERIFY},
    {"signature bit flipped", B_SIG_FLIP, MBC_LANE_SIG_INVALID, 1u << OP_VERIFY},
    {"digest bit flipped", B_DIGEST_FLIP, MBC_LANE_SIG_INVALID, 1u << OP_VERIFY},
    {"peer 03 || ...", B_PEER_FORMAT, MBC_LANE_BAD_PARAM, 1u << OP_ECDH},
    {"peer x = p", B_PEER_X_P, MBC_LANE_BAD_PARAM, 1u << OP_ECDH},
    {"peer y = p", B_PEER_Y_P, MBC_LANE_BAD_PARAM, 1u << OP_ECDH},
    {"peer off the curve", B_PEER_OFF, MBC_LANE_NOT_ON_CURVE, 1u << OP_ECDH},
    {"peer (0, 0)", B_PEER_ZERO, MBC_LANE_NOT_ON_CURVE, 1u << OP_ECDH},
    {"fault hook", B_FAULT, MBC_LANE_FAULT, 1u << OP_SIGN | 1u << OP_ECDH | 1u << OP_KEYGEN},
};

/* s_zero_digest: the digest z = -r d mod n that makes s = 0 with the
 * lane's key and nonce (r from its reference signature). */
static void s_zero_digest(const struct curve_fx *cf, const struct lane_ref *r, uint8_t *z)
{
    EC_GROUP *g = EC_GROUP_new_by_curve_name(cf->curve == MBC_CURVE_P256 ? NID_X9_62_prime256v1
                                                                         : NID_secp384r1);
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *rb = BN_bin2bn(r->sig, (int)cf->len, NULL), *d = BN_bin2bn(r->d, (int)cf->len, NULL);
    BIGNUM *t = BN_new();
    BN_mod_mul(t, rb, d, EC_GROUP_get0_order(g), ctx);
    BN_mod_sub(t, EC_GROUP_get0_order(g), t, EC_GROUP_get0_order(g), ctx);
    BN_bn2binpad(t, z, (int)cf->len);
    BN_free(rb);
    BN_free(d);
    BN_free(t);
    BN_CTX_free(ctx);
    EC_GROUP_free(g);
}

static void test_bad_lane(void **state)
{
    begin(state);
    struct batch *clean = malloc(sizeof(*clean)), *b = malloc(sizeof(*b));
    assert_non_null(clean);
    assert_non_null(b);
    uint8_t bad_in[OUT_MAX], bad_in2[OUT_MAX];
    char what[128];
    for (int ci = 0; ci < 2; ci++) {
        const struct curve_fx *cf = &fx.c[ci];
        const size_t len = cf->len;
        for (unsigned op = 0; op < NUM_OPS; op++) {
            clean_batch(clean, cf, (enum op)op, 0);
            check(clean, (enum op)op, run((enum op)op, clean, cf->curve, 0xFF), "clean batch");
            for (size_t c = 0; c < sizeof(bad_cases) / sizeof(bad_cases[0]); c++) {
                const struct bad_case *bc = &bad_cases[c];
                if (!((bc->ops >> op) & 1u)) {
                    continue;
                }
                /* P-384: a few lane positions; P-256 every one, and on the
                 * batch kernel at two */
                for (unsigned pos = 0; pos < MBC_LANES; pos += ci == 0 ? 1 : 3) {
                    for (int plan = 0; plan < 2; plan++) {
                        if (plan == 1 && (ci != 0 || (pos != 0 && pos != 5))) {
                            continue;
                        }
                        clean_batch(b, cf, (enum op)op, 0);
                        const struct lane_ref *r = b->ref[pos];
                        b->want[pos] = bc->code;
                        switch (bc->kind) {
                        case B_OUT_NULL:
                            b->out[pos] = NULL;
                            break;
                        case B_OUT2_NULL:
                            b->out2[pos] = NULL;
                            break;
                        case B_IN_NULL:
                            b->in[pos] = NULL;
                            break;
                        case B_IN2_NULL:
                            b->in2[pos] = NULL;
                            break;
                        case B_DIGEST_NULL_LEN:
                            b->in[pos] = NULL;
                            break;
                        case B_KEY_NULL:
                            b->priv[pos] = NULL;
                            b->pub[pos] = NULL;
                            break;
                        case B_KEY_OTHER_CURVE:
                            b->priv[pos] = cf->other_priv;
                            b->pub[pos] = cf->other_pub;
                            break;
                        case B_KEY_OTHER_TYPE:
                            b->priv[pos] = (const mbc_ec_priv_key *)(const void *)r->pub;
                            b->pub[pos] = (const mbc_ec_pub_key *)(const void *)r->priv;
                            break;
                        case B_K_ZERO:
                        case B_K_N:
                            memset(bad_in2, 0, len);
                            if (bc->kind == B_K_N) {
                                memcpy(bad_in2, mbc_ec_curve(cf->curve)->def->n, len);
                            }
                            b->in2[pos] = bad_in2;
                            break;
                        case B_K_S_ZERO:
                            s_zero_digest(cf, r, bad_in);
                            b->in[pos] = bad_in;
                            break;
                        case B_R_ZERO:
                        case B_S_ZERO:
                        case B_R_N:
                        case B_S_N:
                        case B_SIG_FLIP:
                            memcpy(bad_in2, r->sig, 2 * len);
                            if (bc->kind == B_SIG_FLIP) {
                                bad_in2[pos * 5 % (2 * len)] ^= 0x10;
                            } else {
                                uint8_t *half =
                                    bad_in2 + (bc->kind == B_S_ZERO || bc->kind == B_S_N ? len : 0);
                                memset(half, 0, len);
                                if (bc->kind == B_R_N || bc->kind == B_S_N) {
                                    memcpy(half, mbc_ec_curve(cf->curve)->def->n, len);
                                }
                            }
                            b->in2[pos] = bad_in2;
                            break;
                        case B_DIGEST_FLIP:
                            memcpy(bad_in, r->digest, len);
                            bad_in[len - 1] ^= 1;
                            b->in[pos] = bad_in;
                            break;
                        case B_PEER_FORMAT:
                        case B_PEER_X_P:
                        case B_PEER_Y_P:
                        case B_PEER_OFF:
                        case B_PEER_ZERO:
                            memcpy(bad_in, r->peer, cf->plen);
                            if (bc->kind == B_PEER_FORMAT) {
                                bad_in[0] = 3;
                            } else if (bc->kind == B_PEER_X_P) {
                                memcpy(bad_in + 1, mbc_ec_curve(cf->curve)->def->p, len);
                            } else if (bc->kind == B_PEER_Y_P) {
                                memcpy(bad_in + 1 + len, mbc_ec_curve(cf->curve)->def->p, len);
                            } else if (bc->kind == B_PEER_OFF) {
                                bad_in[cf->plen - 1] ^= 1;
                            } else {
                                memset(bad_in + 1, 0, 2 * len);
                            }
                            b->in[pos] = bad_in;
                            break;
                        case B_FAULT:
                            break;
                        }
                        mbc_test_hooks.ec_fault_lanes = bc->kind == B_FAULT ? 1u << pos : 0;
                        mbc_test_hooks.ec_batch_plan = (unsigned)plan;
                        const mbc_status st = run((enum op)op, b, cf->curve, 0xFF);
                        mbc_test_hooks.ec_fault_lanes = 0;
                        mbc_test_hooks.ec_batch_plan = 0;
                        snprintf(what, sizeof(what), "P-%zu %s, %s in lane %u%s", len * 8,
                                 op_names[op], bc->name, pos, plan ? " (batch plan)" : "");
                        check(b, (enum op)op, st, what);
                        for (unsigned l = 0; l < MBC_LANES && op != OP_KEYGEN; l++) {
                            if (l != pos && memcmp(b->buf[l], clean->buf[l], OUT_MAX) != 0) {
                                fail_msg("%s: good lane %u differs from the clean run", what, l);
                            }
                        }
                    }
                }
            }
        }
    }
    free(b);
    free(clean);
}

/* No randomness from the OS (the test hook): the lanes that draw a scalar
 * (keygen, a signature's random nonce) report MBC_LANE_UNSUPPORTED with
 * their outputs zeroed, the others are untouched; then all is well again.
 * The lanes' scalars are drawn in one read for the whole batch. */
static void test_random_fail(void **state)
{
    begin(state);
    struct batch *b = malloc(sizeof(*b));
    assert_non_null(b);
    for (int c = 0; c < 2; c++) {
        const struct curve_fx *cf = &fx.c[c];
        for (int pass = 0; pass < 2; pass++) {
            clean_batch(b, cf, OP_KEYGEN, 0);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                b->want[l] = (0x5Bu >> l) & 1u ? (pass == 0 ? MBC_LANE_UNSUPPORTED : MBC_LANE_OK)
                                               : MBC_LANE_EMPTY;
            }
            mbc_test_hooks.random_fail = pass == 0;
            const mbc_status st = run(OP_KEYGEN, b, cf->curve, 0x5B);
            mbc_test_hooks.random_fail = 0;
            check(b, OP_KEYGEN, st, pass == 0 ? "keygen, random generator failing" : "keygen");
        }
        /* a signature with a random nonce */
        clean_batch(b, cf, OP_SIGN, 0);
        mbc_test_hooks.random_fail = 1;
        const mbc_status st =
            mbc_ecdsa_sign_mb8(b->out, b->in, b->in_len, b->priv, cf->curve, 0xA5);
        mbc_test_hooks.random_fail = 0;
        for (unsigned l = 0; l < MBC_LANES; l++) {
            assert_int_equal(mbc_lane_code(st, l),
                             (0xA5u >> l) & 1u ? MBC_LANE_UNSUPPORTED : MBC_LANE_EMPTY);
            assert_true(all_bytes(b->buf[l], cf->slen, (0xA5u >> l) & 1u ? 0 : CANARY));
        }
        uint8_t out[OUT_MAX], out2[OUT_MAX];
        mbc_test_hooks.random_fail = 1;
        memset(out2, CANARY, sizeof(out2));
        assert_int_equal(mbc_ec_keygen(out, out2, cf->curve), MBC_ERR_UNSUPPORTED);
        assert_true(all_bytes(out, cf->len, 0) && all_bytes(out2, cf->plen, 0));
        mbc_test_hooks.random_fail = 0;
        assert_int_equal(mbc_ec_keygen(out, out2, cf->curve), MBC_OK);
        assert_true(keygen_ok(cf, out, out2));
    }
    free(b);
}

/* ------------------------------------------------------------------------ */
/* 3. The fault hook                                                         */
/* ------------------------------------------------------------------------ */

static void test_fault_hook(void **state)
{
    begin(state);
    static const unsigned hooks[] = {0x01, 0x80, 0x5A, 0xFF};
    struct batch *b = malloc(sizeof(*b));
    assert_non_null(b);
    char what[96];
    const struct curve_fx *cf = &fx.c[0];
    for (unsigned op = 0; op < NUM_OPS; op++) {
        for (size_t h = 0; h < sizeof(hooks) / sizeof(hooks[0]); h++) {
            clean_batch(b, cf, (enum op)op, 3);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                /* verification releases nothing secret: no fault check */
                b->want[l] =
                    op != OP_VERIFY && ((hooks[h] >> l) & 1u) ? MBC_LANE_FAULT : MBC_LANE_OK;
            }
            mbc_test_hooks.ec_fault_lanes = hooks[h];
            mbc_test_hooks.ec_batch_plan = h % 2;
            const mbc_status st = run((enum op)op, b, cf->curve, 0xFF);
            mbc_test_hooks.ec_fault_lanes = 0;
            mbc_test_hooks.ec_batch_plan = 0;
            snprintf(what, sizeof(what), "%s, fault hook 0x%02x", op_names[op], hooks[h]);
            check(b, (enum op)op, st, what);
        }
    }
    free(b);

    /* single requests: MBC_ERR_FAULT, outputs zeroed; a key constructor
     * refuses the key; then all is well again */
    const struct lane_ref *r = &cf->l[0];
    uint8_t out[OUT_MAX], out2[OUT_MAX];
    mbc_ec_priv_key *k = NULL;
    mbc_test_hooks.ec_fault_lanes = 1;
    memset(out, CANARY, sizeof(out));
    assert_int_equal(mbc_ecdsa_sign_k(out, r->digest, cf->len, r->priv, r->k), MBC_ERR_FAULT);
    assert_true(all_bytes(out, cf->slen, 0));
    assert_int_equal(mbc_ecdsa_sign(out, r->digest, cf->len, r->priv), MBC_ERR_FAULT);
    assert_true(all_bytes(out, cf->slen, 0));
    memset(out, CANARY, sizeof(out));
    assert_int_equal(mbc_ecdh(out, r->peer, cf->plen, r->priv), MBC_ERR_FAULT);
    assert_true(all_bytes(out, cf->len, 0));
    memset(out2, CANARY, sizeof(out2));
    assert_int_equal(mbc_ec_keygen(out, out2, cf->curve), MBC_ERR_FAULT);
    assert_true(all_bytes(out, cf->len, 0) && all_bytes(out2, cf->plen, 0));
    assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, r->d, cf->len), MBC_ERR_FAULT);
    assert_null(k);
    assert_int_equal(mbc_ec_priv_key_generate(&k, cf->curve), MBC_ERR_FAULT);
    assert_null(k);
    mbc_test_hooks.ec_fault_lanes = 0;
    assert_int_equal(mbc_ecdsa_sign_k(out, r->digest, cf->len, r->priv, r->k), MBC_OK);
    assert_memory_equal(out, r->sig, cf->slen);
    assert_int_equal(mbc_ecdh(out, r->peer, cf->plen, r->priv), MBC_OK);
    assert_memory_equal(out, r->secret, cf->len);
}

/* ------------------------------------------------------------------------ */
/* 4. Bad calls                                                              */
/* ------------------------------------------------------------------------ */

static void test_api_batch(void **state)
{
    begin(state);
    struct batch *b = malloc(sizeof(*b));
    assert_non_null(b);
    const struct curve_fx *cf = &fx.c[0];
    char what[96];
    for (unsigned op = 0; op < NUM_OPS; op++) {
        /* unknown curve, lane_mask above 0xFF: every active lane BAD_PARAM,
         * nothing written */
        static const mbc_curve bad_curves[] = {(mbc_curve)0, (mbc_curve)3, (mbc_curve)256};
        for (size_t i = 0; i < 3; i++) {
            clean_batch(b, cf, (enum op)op, 0);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                b->want[l] = ((0xB7u >> l) & 1u) ? MBC_LANE_BAD_PARAM : MBC_LANE_EMPTY;
            }
            const mbc_status st = run((enum op)op, b, bad_curves[i], 0xB7);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                assert_int_equal(mbc_lane_code(st, l), b->want[l]);
                assert_true(all_bytes(b->buf[l], OUT_MAX, CANARY));
                assert_true(all_bytes(b->buf2[l], OUT_MAX, CANARY));
            }
        }
        static const unsigned masks[] = {0x100, 0x1FF, 0xFFFFFFFFu};
        for (size_t i = 0; i < 3; i++) {
            clean_batch(b, cf, (enum op)op, 0);
            assert_int_equal(run((enum op)op, b, cf->curve, masks[i]), 0x33333333u);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                assert_true(all_bytes(b->buf[l], OUT_MAX, CANARY));
            }
        }
        /* lane mask 0 reads nothing */
        static const struct batch empty = {0};
        assert_int_equal(run((enum op)op, &empty, cf->curve, 0), 0x11111111u);
    }
    /* NULL arrays: every active lane NULL_PARAM */
    for (int which = 0; which < 5; which++) {
        clean_batch(b, cf, OP_SIGN, 0);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            b->want[l] = ((0x35u >> l) & 1u) ? MBC_LANE_NULL_PARAM : MBC_LANE_EMPTY;
        }
        mbc_status st = mbc_ecdsa_sign_k_mb8(
            which == 0 ? NULL : b->out, which == 1 ? NULL : b->in, which == 2 ? NULL : b->in_len,
            which == 3 ? NULL : b->priv, which == 4 ? NULL : b->in2, cf->curve, 0x35);
        if (which == 0) {
            for (unsigned l = 0; l < MBC_LANES; l++) {
                b->out[l] = NULL; /* the library never saw these buffers */
            }
        }
        snprintf(what, sizeof(what), "sign_k, array %d NULL", which);
        check(b, OP_SIGN, st, what);
        if (which == 4) {
            continue;
        }
        clean_batch(b, cf, OP_SIGN, 0);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            b->want[l] = ((0x35u >> l) & 1u) ? MBC_LANE_NULL_PARAM : MBC_LANE_EMPTY;
        }
        st = mbc_ecdsa_sign_mb8(which == 0 ? NULL : b->out, which == 1 ? NULL : b->in,
                                which == 2 ? NULL : b->in_len, which == 3 ? NULL : b->priv,
                                cf->curve, 0x35);
        if (which == 0) {
            for (unsigned l = 0; l < MBC_LANES; l++) {
                b->out[l] = NULL;
            }
        }
        check(b, OP_SIGN, st, "sign, an array NULL");
    }
    for (int which = 0; which < 4; which++) {
        clean_batch(b, cf, OP_VERIFY, 0);
        const mbc_status st = mbc_ecdsa_verify_mb8(
            which == 0 ? NULL : b->in2, which == 1 ? NULL : b->in, which == 2 ? NULL : b->in_len,
            which == 3 ? NULL : b->pub, cf->curve, 0xFF);
        assert_int_equal(st, 0x22222222u);
    }
    for (int which = 0; which < 3; which++) {
        clean_batch(b, cf, OP_ECDH, 0);
        const mbc_status st = mbc_ecdh_mb8(which == 0 ? NULL : b->out, which == 1 ? NULL : b->in,
                                           which == 2 ? NULL : b->priv, cf->curve, 0xFF);
        assert_int_equal(st, 0x22222222u);
    }
    for (int which = 0; which < 2; which++) {
        clean_batch(b, cf, OP_KEYGEN, 0);
        const mbc_status st = mbc_ec_keygen_mb8(which == 0 ? NULL : b->out,
                                                which == 1 ? NULL : b->out2, cf->curve, 0xFF);
        assert_int_equal(st, 0x22222222u);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            if (which == 1) {
                assert_true(all_bytes(b->buf[l], cf->len, 0)); /* zeroed, not released */
            }
        }
    }
    /* a NULL digest of length 0 is the empty digest */
    clean_batch(b, cf, OP_SIGN, 0);
    uint8_t want[2 * MAX_LEN];
    b->in[2] = NULL;
    b->in_len[2] = 0;
    assert_int_equal(mbt_ossl_ecdsa_sign_k(cf->curve, b->ref[2]->d, b->ref[2]->k, NULL, 0, want),
                     0);
    assert_int_equal(run(OP_SIGN, b, cf->curve, 0x04), 0x11111011u);
    assert_memory_equal(b->buf[2], want, cf->slen);
    free(b);
}

static void test_api_single(void **state)
{
    begin(state);
    for (int ci = 0; ci < 2; ci++) {
        const struct curve_fx *cf = &fx.c[ci];
        const struct lane_ref *r = &cf->l[1];
        const size_t len = cf->len, plen = cf->plen;
        uint8_t out[OUT_MAX], out2[OUT_MAX], pt[MAX_POINT + 1];
        /* NULL pointers */
        assert_int_equal(mbc_ecdsa_sign(NULL, r->digest, len, r->priv), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ecdsa_sign(out, NULL, len, r->priv), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ecdsa_sign(out, r->digest, len, NULL), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ecdsa_sign_k(NULL, r->digest, len, r->priv, r->k), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ecdsa_verify(NULL, r->digest, len, r->pub), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ecdsa_verify(r->sig, NULL, len, r->pub), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ecdsa_verify(r->sig, r->digest, len, NULL), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ecdh(NULL, r->peer, plen, r->priv), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ecdh(out, NULL, plen, r->priv), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ecdh(out, r->peer, plen, NULL), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ec_keygen(NULL, out2, cf->curve), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ec_keygen(out, NULL, cf->curve), MBC_ERR_NULL_PARAM);
        /* keys of the wrong type, unknown curves */
        const void *wrong = r->pub;
        assert_int_equal(mbc_ecdsa_sign(out, r->digest, len, wrong), MBC_ERR_BAD_PARAM);
        assert_int_equal(mbc_ecdsa_verify(r->sig, r->digest, len, (const void *)r->priv),
                         MBC_ERR_BAD_PARAM);
        assert_int_equal(mbc_ecdh(out, r->peer, plen, wrong), MBC_ERR_BAD_PARAM);
        assert_int_equal(mbc_ec_keygen(out, out2, (mbc_curve)0), MBC_ERR_BAD_PARAM);
        assert_int_equal(mbc_ec_keygen(out, out2, (mbc_curve)3), MBC_ERR_BAD_PARAM);
        /* peer points: each failure its own error, the secret zeroed */
        static const struct {
            const char *name;
            int kind;
            mbc_err err;
        } peers[] = {
            {"empty", 0, MBC_ERR_POINT_FORMAT},
            {"00", 1, MBC_ERR_INFINITY},
            {"04", 2, MBC_ERR_POINT_FORMAT},
            {"one byte short", 3, MBC_ERR_POINT_FORMAT},
            {"one byte long", 4, MBC_ERR_POINT_FORMAT},
            {"02 || x", 5, MBC_ERR_POINT_FORMAT},
            {"x = p", 6, MBC_ERR_POINT_RANGE},
            {"y all FF", 7, MBC_ERR_POINT_RANGE},
            {"off the curve", 8, MBC_ERR_NOT_ON_CURVE},
            {"(0, 0)", 9, MBC_ERR_NOT_ON_CURVE},
        };
        for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
            size_t n = plen;
            memcpy(pt, r->peer, plen);
            switch (peers[i].kind) {
            case 0:
                n = 0;
                break;
            case 1:
                pt[0] = 0;
                n = 1;
                break;
            case 2:
                n = 1;
                break;
            case 3:
                n = plen - 1;
                break;
            case 4:
                n = plen + 1;
                pt[plen] = 0;
                break;
            case 5:
                pt[0] = 2;
                n = 1 + len;
                break;
            case 6:
                memcpy(pt + 1, mbc_ec_curve(cf->curve)->def->p, len);
                break;
            case 7:
                memset(pt + 1 + len, 0xFF, len);
                break;
            case 8:
                pt[3] ^= 4;
                break;
            default:
                memset(pt + 1, 0, 2 * len);
                break;
            }
            memset(out, CANARY, sizeof(out));
            const mbc_err err = mbc_ecdh(out, pt, n, r->priv);
            if (err != peers[i].err) {
                fail_msg("ecdh, peer %s: %s, want %s", peers[i].name, mbc_err_str(err),
                         mbc_err_str(peers[i].err));
            }
            assert_true(all_bytes(out, len, 0) && all_bytes(out + len, OUT_MAX - len, CANARY));
            mbc_ec_pub_key *pk = NULL;
            assert_int_equal(mbc_ec_pub_key_new(&pk, cf->curve, pt, n), peers[i].err);
            assert_null(pk);
        }
        /* a nonce that makes s = 0: MBC_ERR_BAD_PARAM; a random one signs */
        uint8_t z[MAX_LEN];
        s_zero_digest(cf, r, z);
        memset(out, CANARY, sizeof(out));
        assert_int_equal(mbc_ecdsa_sign_k(out, z, len, r->priv, r->k), MBC_ERR_BAD_PARAM);
        assert_true(all_bytes(out, cf->slen, 0));
        assert_int_equal(mbc_ecdsa_sign(out, z, len, r->priv), MBC_OK);
        assert_int_equal(mbc_ecdsa_verify(out, z, len, r->pub), MBC_OK);
        /* the single calls give the lanes' results */
        assert_int_equal(mbc_ecdsa_sign_k(out, r->digest, len, r->priv, r->k), MBC_OK);
        assert_memory_equal(out, r->sig, cf->slen);
        assert_int_equal(mbc_ecdsa_verify(r->sig, r->digest, len, r->pub), MBC_OK);
        memcpy(out, r->sig, cf->slen);
        out[len] ^= 1;
        assert_int_equal(mbc_ecdsa_verify(out, r->digest, len, r->pub), MBC_ERR_SIG_INVALID);
    }
    /* names of the new errors */
    assert_string_equal(mbc_err_str(MBC_ERR_NOT_ON_CURVE), "MBC_ERR_NOT_ON_CURVE");
    assert_string_equal(mbc_err_str(MBC_ERR_POINT_FORMAT), "MBC_ERR_POINT_FORMAT");
    assert_string_equal(mbc_err_str(MBC_ERR_POINT_RANGE), "MBC_ERR_POINT_RANGE");
    assert_string_equal(mbc_err_str(MBC_ERR_INFINITY), "MBC_ERR_INFINITY");
    assert_string_equal(mbc_err_str(MBC_ERR_LOW_ORDER), "MBC_ERR_LOW_ORDER");
    assert_string_equal(mbc_err_str((mbc_err)(MBC_ERR_INFINITY + 1)), "MBC_ERR_(unknown)");
    assert_int_equal(mbc_ec_scalar_len(MBC_CURVE_P256), 32);
    assert_int_equal(mbc_ec_scalar_len(MBC_CURVE_P384), 48);
    assert_int_equal(mbc_ec_point_len(MBC_CURVE_P256), 65);
    assert_int_equal(mbc_ec_point_len(MBC_CURVE_P384), 97);
    assert_int_equal(mbc_ec_sig_len(MBC_CURVE_P256), 64);
    assert_int_equal(mbc_ec_sig_len(MBC_CURVE_P384), 96);
    assert_int_equal(mbc_ec_scalar_len((mbc_curve)0), 0);
    assert_int_equal(mbc_ec_point_len((mbc_curve)3), 0);
    assert_int_equal(mbc_ec_sig_len((mbc_curve)-1), 0);
}

/* ------------------------------------------------------------------------ */
/* 5. Key constructors                                                       */
/* ------------------------------------------------------------------------ */

/* be_add: the big-endian buf += v. */
static void be_add(uint8_t *buf, size_t len, unsigned v)
{
    for (size_t i = len; i-- > 0 && v != 0;) {
        v += buf[i];
        buf[i] = (uint8_t)v;
        v >>= 8;
    }
}

static void test_key_constructors(void **state)
{
    (void)state;
    fixture();
    static char sentinel;
    for (int ci = 0; ci < 2; ci++) {
        const struct curve_fx *cf = &fx.c[ci];
        const struct ec_curve *c = mbc_ec_curve(cf->curve);
        const size_t len = cf->len, plen = cf->plen;
        const struct lane_ref *r = &cf->l[2];
        mbc_ec_priv_key *k = (mbc_ec_priv_key *)(void *)&sentinel;
        mbc_ec_pub_key *pk = (mbc_ec_pub_key *)(void *)&sentinel;
        uint8_t d[MAX_LEN + 16], q[MAX_POINT];
        /* private keys */
        assert_int_equal(mbc_ec_priv_key_new(NULL, cf->curve, r->d, len), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, NULL, len), MBC_ERR_NULL_PARAM);
        assert_null(k);
        k = (mbc_ec_priv_key *)(void *)&sentinel;
        assert_int_equal(mbc_ec_priv_key_new(&k, (mbc_curve)0, r->d, len), MBC_ERR_BAD_PARAM);
        assert_null(k);
        assert_int_equal(mbc_ec_priv_key_new(&k, (mbc_curve)7, r->d, len), MBC_ERR_BAD_PARAM);
        memset(d, 0, sizeof(d));
        assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, d, len), MBC_ERR_KEY_RANGE);
        assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, d, 0), MBC_ERR_KEY_RANGE);
        assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, d, sizeof(d)), MBC_ERR_KEY_RANGE);
        memcpy(d, c->def->n, len);
        assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, d, len), MBC_ERR_KEY_RANGE);
        be_add(d, len, 1);
        assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, d, len), MBC_ERR_KEY_RANGE);
        memset(d, 0xFF, len);
        assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, d, len), MBC_ERR_KEY_RANGE);
        /* d with a non-zero byte beyond the scalar length */
        memset(d, 0, sizeof(d));
        d[0] = 1;
        memcpy(d + 1, r->d, len);
        assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, d, len + 1), MBC_ERR_KEY_RANGE);
        assert_null(k);
        /* leading zeros, n - 1 and 1 are fine */
        d[0] = 0;
        memset(d, 0, 16);
        memcpy(d + 16, r->d, len);
        assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, d, len + 16), MBC_OK);
        assert_int_equal(mbc_ec_priv_key_curve(k), cf->curve);
        assert_int_equal(mbc_ec_priv_key_public(k, q, sizeof(q)), MBC_OK);
        assert_memory_equal(q, r->point, plen);
        /* priv_key_public: NULLs, short buffer (nothing written) */
        memset(q, CANARY, sizeof(q));
        assert_int_equal(mbc_ec_priv_key_public(NULL, q, sizeof(q)), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ec_priv_key_public(k, NULL, sizeof(q)), MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_ec_priv_key_public(k, q, plen - 1), MBC_ERR_BAD_PARAM);
        assert_int_equal(mbc_ec_priv_key_public((const void *)r->pub, q, sizeof(q)),
                         MBC_ERR_BAD_PARAM);
        assert_true(all_bytes(q, sizeof(q), CANARY));
        mbc_ec_priv_key_free(k);
        memcpy(d, c->def->n, len);
        d[len - 1] -= 1; /* n - 1: n is odd */
        assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, d, len), MBC_OK);
        mbc_ec_priv_key_free(k);
        d[0] = 1;
        assert_int_equal(mbc_ec_priv_key_new(&k, cf->curve, d, 1), MBC_OK);
        mbc_ec_priv_key_free(k);
        /* new_pair: a generated pair becomes a key without d G; the key
         * signs and agrees as the one mbc_ec_priv_key_new builds; every
         * point error is its own, and the d errors stay */
        {
            uint8_t gd[MAX_LEN], gq[MAX_POINT], s1[MAX_LEN], s2[MAX_LEN], sig[2 * MAX_LEN];
            static const uint8_t dg[32] = {7, 7, 7};
            mbc_ec_priv_key *k2 = NULL;
            mbc_ec_pub_key *pk2 = NULL;
            assert_int_equal(mbc_ec_keygen(gd, gq, cf->curve), MBC_OK);
            assert_int_equal(mbc_ec_priv_key_new_pair(&k, cf->curve, gd, len, gq, plen), MBC_OK);
            assert_int_equal(mbc_ec_priv_key_curve(k), cf->curve);
            assert_int_equal(mbc_ec_priv_key_public(k, q, sizeof(q)), MBC_OK);
            assert_memory_equal(q, gq, plen);
            assert_int_equal(mbc_ec_priv_key_new(&k2, cf->curve, gd, len), MBC_OK);
            assert_int_equal(mbc_ec_priv_key_public(k2, q, sizeof(q)), MBC_OK);
            assert_memory_equal(q, gq, plen);
            assert_int_equal(mbc_ecdh(s1, r->point, plen, k), MBC_OK);
            assert_int_equal(mbc_ecdh(s2, r->point, plen, k2), MBC_OK);
            assert_memory_equal(s1, s2, len);
            assert_int_equal(mbc_ec_pub_key_new(&pk2, cf->curve, gq, plen), MBC_OK);
            assert_int_equal(mbc_ecdsa_sign(sig, dg, sizeof(dg), k), MBC_OK);
            assert_int_equal(mbc_ecdsa_verify(sig, dg, sizeof(dg), pk2), MBC_OK);
            mbc_ec_pub_key_free(pk2);
            mbc_ec_priv_key_free(k2);
            mbc_ec_priv_key_free(k);
            k = (mbc_ec_priv_key *)(void *)&sentinel;
            assert_int_equal(mbc_ec_priv_key_new_pair(&k, cf->curve, gd, len, NULL, plen),
                             MBC_ERR_NULL_PARAM);
            assert_null(k);
            assert_int_equal(mbc_ec_priv_key_new_pair(NULL, cf->curve, gd, len, gq, plen),
                             MBC_ERR_NULL_PARAM);
            assert_int_equal(mbc_ec_priv_key_new_pair(&k, cf->curve, NULL, len, gq, plen),
                             MBC_ERR_NULL_PARAM);
            assert_int_equal(mbc_ec_priv_key_new_pair(&k, (mbc_curve)7, gd, len, gq, plen),
                             MBC_ERR_BAD_PARAM);
            memset(d, 0, len);
            assert_int_equal(mbc_ec_priv_key_new_pair(&k, cf->curve, d, len, gq, plen),
                             MBC_ERR_KEY_RANGE);
            assert_int_equal(mbc_ec_priv_key_new_pair(&k, cf->curve, gd, len, gq, plen - 1),
                             MBC_ERR_POINT_FORMAT);
            assert_int_equal(mbc_ec_priv_key_new_pair(&k, cf->curve, gd, len, gq, 0),
                             MBC_ERR_POINT_FORMAT);
            memcpy(q, gq, plen);
            q[0] = 6;
            assert_int_equal(mbc_ec_priv_key_new_pair(&k, cf->curve, gd, len, q, plen),
                             MBC_ERR_POINT_FORMAT);
            memcpy(q, gq, plen);
            memcpy(q + 1, c->def->p, len); /* x = p */
            assert_int_equal(mbc_ec_priv_key_new_pair(&k, cf->curve, gd, len, q, plen),
                             MBC_ERR_POINT_RANGE);
            memcpy(q, gq, plen);
            q[plen - 1] ^= 1; /* y changed: off the curve */
            assert_int_equal(mbc_ec_priv_key_new_pair(&k, cf->curve, gd, len, q, plen),
                             MBC_ERR_NOT_ON_CURVE);
            assert_null(k);
        }
        /* generate */
        assert_int_equal(mbc_ec_priv_key_generate(NULL, cf->curve), MBC_ERR_NULL_PARAM);
        k = (mbc_ec_priv_key *)(void *)&sentinel;
        assert_int_equal(mbc_ec_priv_key_generate(&k, (mbc_curve)0), MBC_ERR_BAD_PARAM);
        assert_null(k);
        /* public keys: the point errors are covered with the ECDH peers;
         * here the rest */
        assert_int_equal(mbc_ec_pub_key_new(NULL, cf->curve, r->point, plen), MBC_ERR_NULL_PARAM);
        pk = (mbc_ec_pub_key *)(void *)&sentinel;
        assert_int_equal(mbc_ec_pub_key_new(&pk, cf->curve, NULL, plen), MBC_ERR_NULL_PARAM);
        assert_null(pk);
        pk = (mbc_ec_pub_key *)(void *)&sentinel;
        assert_int_equal(mbc_ec_pub_key_new(&pk, (mbc_curve)9, r->point, plen), MBC_ERR_BAD_PARAM);
        assert_null(pk);
        /* a point of the other curve's length */
        assert_int_equal(
            mbc_ec_pub_key_new(&pk, cf->curve, fx.c[1 - ci].l[0].point, fx.c[1 - ci].plen),
            MBC_ERR_POINT_FORMAT);
        /* hybrid encodings 06 / 07 */
        memcpy(q, r->point, plen);
        q[0] = 6;
        assert_int_equal(mbc_ec_pub_key_new(&pk, cf->curve, q, plen), MBC_ERR_POINT_FORMAT);
        assert_int_equal(mbc_ec_pub_key_new(&pk, cf->curve, r->point, plen), MBC_OK);
        assert_int_equal(mbc_ec_pub_key_curve(pk), cf->curve);
        mbc_ec_pub_key_free(pk);
        /* type tags: a key of one type is not a key of the other */
        assert_int_equal(mbc_ec_priv_key_curve((const void *)r->pub), 0);
        assert_int_equal(mbc_ec_pub_key_curve((const void *)r->priv), 0);
    }
    assert_int_equal(mbc_ec_priv_key_curve(NULL), 0);
    assert_int_equal(mbc_ec_pub_key_curve(NULL), 0);
    mbc_ec_priv_key_free(NULL);
    mbc_ec_pub_key_free(NULL);
    /* the type tags stand where the RSA keys carry theirs: an EC key is no
     * RSA key, and the other way round */
    assert_int_equal(mbc_rsa_priv_key_bits((const void *)fx.c[0].l[0].priv), 0);
    assert_int_equal(mbc_rsa_pub_key_bits((const void *)fx.c[0].l[0].pub), 0);
    assert_int_equal(offsetof(struct mbc_ec_priv_key, tag), 0);
    assert_int_equal(offsetof(struct mbc_ec_pub_key, tag), 0);
    /* keys of the other families are no EC keys, and the other way round */
    mbc_gcm_key *gcm = NULL;
    const uint8_t aes[16] = {0x53, 0x43, 0x43, 0x45, 1, 0, 0, 0}; /* an EC tag's bytes */
    assert_int_equal(mbc_gcm_key_new(&gcm, aes, sizeof(aes)), MBC_OK);
    assert_int_equal(mbc_ec_priv_key_curve((const void *)gcm), 0);
    assert_int_equal(mbc_ec_pub_key_curve((const void *)gcm), 0);
    assert_null(mbc_gcm_key_impl((const void *)fx.c[0].l[0].priv));
    uint8_t sig[64];
    assert_int_equal(mbc_ecdsa_sign(sig, aes, 16, (const void *)gcm), MBC_ERR_BAD_PARAM);
    mbc_gcm_key_free(gcm);
    /* the free functions leave a key of another type alone */
    mbc_ec_priv_key_free((mbc_ec_priv_key *)(void *)fx.c[0].l[0].pub);
    mbc_ec_pub_key_free((mbc_ec_pub_key *)(void *)fx.c[0].l[0].priv);
    assert_int_equal(mbc_ec_pub_key_curve(fx.c[0].l[0].pub), MBC_CURVE_P256);
    assert_int_equal(mbc_ec_priv_key_curve(fx.c[0].l[0].priv), MBC_CURVE_P256);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MBT_EC_IMPL_TESTS(test_all_masks),       MBT_EC_IMPL_TESTS(test_bad_lane),
        MBT_EC_IMPL_TESTS(test_fault_hook),      MBT_EC_IMPL_TESTS(test_api_batch),
        MBT_EC_IMPL_TESTS(test_api_single),      MBT_EC_IMPL_TESTS(test_random_fail),
        cmocka_unit_test(test_key_constructors),
    };
    const int failed = mbt_run("ec_lanes", tests);
    fixture_free();
    return failed;
}
