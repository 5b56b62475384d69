/*
 * test_rsa_lanes.c - lane semantics of the RSA batch calls, bad input to the
 * RSA API and key constructors, and the PKCS#1 v1.5 encoding helpers.
 *
 * Reference results come from OpenSSL (raw RSA, RSA_NO_PADDING) on keys it
 * generates once per process: 8 different 2048-bit keys with different public
 * exponents, so a batch mixes e lengths, and one 3072-bit key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "ossl_rsa.h"
#include "rsa/rsa_internal.h"
#include "test_hooks.h"
#include "test_util.h"

#define LEN 256      /* bytes of a 2048-bit number */
#define OUT_MAX 1024 /* out buffers fit bits/8 of every bits value tested */
#define NKEYS 8
#define NIN 6 /* inputs per key: 4 random, n - 1 and 0 */
#define CANARY 0xA5

enum op { OP_PRIV, OP_PUB };
static const char *const op_names[] = {"private_crt_mb8", "public_mb8"};

/* ------------------------------------------------------------------------ */
/* Keys and references (built once per process)                              */
/* ------------------------------------------------------------------------ */

/* Short names of the key components (enum mbt_rsa_part) for the tables. */
enum field {
    F_N = MBT_RSA_N,
    F_E = MBT_RSA_E,
    F_P = MBT_RSA_P,
    F_Q = MBT_RSA_Q,
    F_DP = MBT_RSA_DP,
    F_DQ = MBT_RSA_DQ,
    F_QINV = MBT_RSA_QINV,
    NFIELDS = MBT_RSA_NUM_PARTS
};

struct test_key {
    EVP_PKEY *pkey;
    mbt_rsa_parts parts; /* big-endian components, minimal length */
    mbc_rsa_priv_key *priv;
    mbc_rsa_pub_key *pub;
};

static struct fixture {
    int ready;
    struct test_key k[NKEYS];        /* 2048 bits, lane l of a clean batch uses k[l] */
    struct test_key big;             /* 3072 bits */
    uint8_t in[2][NKEYS][NIN][LEN];  /* [op][key][j], below n of the key */
    uint8_t ref[2][NKEYS][NIN][LEN]; /* OpenSSL's result for in */
} fx;

static void make_key(struct test_key *k, unsigned bits, uint64_t e)
{
    k->pkey = mbt_ossl_rsa_keygen(bits, e);
    assert_non_null(k->pkey);
    assert_int_equal(mbt_ossl_rsa_get_parts(&k->parts, k->pkey, 0), 0);
    assert_int_equal(mbt_rsa_keys_new(&k->priv, &k->pub, &k->parts), MBC_OK);
    assert_int_equal(mbc_rsa_priv_key_bits(k->priv), bits);
    assert_int_equal(mbc_rsa_pub_key_bits(k->pub), bits);
}

static void free_key(struct test_key *k)
{
    EVP_PKEY_free(k->pkey);
    mbt_rsa_parts_free(&k->parts);
    mbc_rsa_priv_key_free(k->priv);
    mbc_rsa_pub_key_free(k->pub);
    memset(k, 0, sizeof(*k));
}

/* rand_below: a random len-byte number below the big-endian n (n[0] != 0). */
static void rand_below(uint8_t *x, const uint8_t *n, size_t len)
{
    mbt_rand_bytes(x, len);
    x[0] = (uint8_t)(mbt_rand() % n[0]);
}

static const struct fixture *fixture(void)
{
    static const uint64_t exps[NKEYS] = {65537, 3, 17, 65537, 0x100000001ull, 5, 65537, 257};
    if (fx.ready) {
        return &fx;
    }
    for (int i = 0; i < NKEYS; i++) {
        make_key(&fx.k[i], 2048, exps[i]);
        assert_int_equal(fx.k[i].parts.len[F_N], LEN);
    }
    make_key(&fx.big, 3072, 65537);
    for (int op = 0; op < 2; op++) {
        for (int i = 0; i < NKEYS; i++) {
            const uint8_t *n = fx.k[i].parts.c[F_N];
            for (int j = 0; j < NIN; j++) {
                uint8_t *x = fx.in[op][i][j];
                if (j == NIN - 2) {
                    memcpy(x, n, LEN);
                    x[LEN - 1] ^= 1; /* n - 1 (n is odd) */
                } else if (j == NIN - 1) {
                    memset(x, 0, LEN);
                } else {
                    rand_below(x, n, LEN);
                }
                assert_int_equal(
                    mbt_ossl_rsa_raw(fx.k[i].pkey, op == OP_PRIV, fx.ref[op][i][j], x, LEN), 0);
            }
        }
    }
    fx.ready = 1;
    return &fx;
}

static void fixture_free(void)
{
    if (!fx.ready) {
        return;
    }
    for (int i = 0; i < NKEYS; i++) {
        free_key(&fx.k[i]);
    }
    free_key(&fx.big);
    fx.ready = 0;
}

/* ------------------------------------------------------------------------ */
/* Batches and their checks                                                  */
/* ------------------------------------------------------------------------ */

struct batch {
    uint8_t *out[MBC_LANES];
    const uint8_t *in[MBC_LANES];
    const mbc_rsa_priv_key *priv[MBC_LANES];
    const mbc_rsa_pub_key *pub[MBC_LANES];
    const uint8_t *ref[MBC_LANES]; /* expected output of an OK lane */
    unsigned want[MBC_LANES];      /* expected lane code */
    uint8_t buf[MBC_LANES][OUT_MAX];
};

static mbc_status run(enum op op, const struct batch *b, unsigned bits, unsigned mask)
{
    if (op == OP_PRIV) {
        return mbc_rsa_private_crt_mb8(b->out, b->in, b->priv, bits, mask);
    }
    return mbc_rsa_public_mb8(b->out, b->in, b->pub, bits, mask);
}

/* set_lane: lane l runs key ki on input j into its canary-filled buffer. */
static void set_lane(struct batch *b, enum op op, unsigned l, unsigned ki, unsigned j)
{
    const struct fixture *f = fixture();
    memset(b->buf[l], CANARY, OUT_MAX);
    b->out[l] = b->buf[l];
    b->in[l] = f->in[op][ki][j];
    b->priv[l] = f->k[ki].priv;
    b->pub[l] = f->k[ki].pub;
    b->ref[l] = f->ref[op][ki][j];
    b->want[l] = MBC_LANE_OK;
}

/* clean_batch: lane l runs key l on input j = 0. */
static void clean_batch(struct batch *b, enum op op)
{
    for (unsigned l = 0; l < MBC_LANES; l++) {
        set_lane(b, op, l, l, 0);
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

/*
 * check: every lane has code want[l]. With a buffer: an OK lane holds ref[l]
 * in its first len bytes, another active lane holds zeros there, an EMPTY
 * lane is untouched, and no lane is written beyond len bytes.
 */
static void check(const struct batch *b, mbc_status st, size_t len, const char *what)
{
    for (unsigned l = 0; l < MBC_LANES; l++) {
        unsigned got = mbc_lane_code(st, l);
        if (got != b->want[l]) {
            fail_msg("%s: lane %u is %s, want %s (status 0x%08x)", what, l, mbc_lane_code_str(got),
                     mbc_lane_code_str(b->want[l]), st);
        }
        const uint8_t *out = b->out[l];
        if (out == NULL || out != b->buf[l]) {
            continue; /* no buffer, or one the test does not own */
        }
        if (b->want[l] == MBC_LANE_EMPTY) {
            if (!all_bytes(out, OUT_MAX, CANARY)) {
                fail_msg("%s: empty lane %u's output was written", what, l);
            }
            continue;
        }
        if (b->want[l] == MBC_LANE_OK) {
            if (memcmp(out, b->ref[l], len) != 0) {
                fail_msg("%s: lane %u's result differs from OpenSSL", what, l);
            }
        } else if (!all_bytes(out, len, 0)) {
            fail_msg("%s: failed lane %u's output is not zeroed", what, l);
        }
        if (!all_bytes(out + len, OUT_MAX - len, CANARY)) {
            fail_msg("%s: lane %u written beyond %zu bytes", what, l, len);
        }
    }
}

/* begin: selects the implementation and clears the fault hook. */
static void begin(void **state)
{
    mbc_test_hooks.rsa_fault_lanes = 0;
    mbt_use_impl(state);
    fixture();
}

/* ------------------------------------------------------------------------ */
/* 1. Every lane mask                                                        */
/* ------------------------------------------------------------------------ */

/*
 * Every mask 0..255, keys rotated over the lanes, inputs drawn from the pool.
 * Inactive lanes take turns: NULL in and key with a canary out; NULL out with
 * real in and key; pointers to garbage (not a key, input >= n).
 */
static void all_masks(void **state, enum op op)
{
    begin(state);
    static _Alignas(64) uint8_t garbage[sizeof(struct mbc_rsa_priv_key)];
    memset(garbage, 0xFF, sizeof(garbage));
    struct batch *b = malloc(sizeof(*b));
    assert_non_null(b);
    char what[96];
    for (unsigned mask = 0; mask <= MBC_LANE_MASK_ALL; mask++) {
        const unsigned rot = (unsigned)(mbt_rand() % NKEYS);
        const unsigned variant = mask % 3;
        for (unsigned l = 0; l < MBC_LANES; l++) {
            set_lane(b, op, l, (l + rot) % NKEYS, (unsigned)(mbt_rand() % NIN));
            if ((mask >> l) & 1u) {
                continue;
            }
            b->want[l] = MBC_LANE_EMPTY;
            if (variant == 0) {
                b->in[l] = NULL;
                b->priv[l] = NULL;
                b->pub[l] = NULL;
            } else if (variant == 1) {
                b->out[l] = NULL;
            } else {
                b->in[l] = garbage;
                b->priv[l] = (const mbc_rsa_priv_key *)(const void *)garbage;
                b->pub[l] = (const mbc_rsa_pub_key *)(const void *)garbage;
            }
        }
        snprintf(what, sizeof(what), "%s mask 0x%02x", op_names[op], mask);
        check(b, run(op, b, 2048, mask), LEN, what);
    }
    free(b);
}

static void test_all_masks_private(void **state)
{
    all_masks(state, OP_PRIV);
}

static void test_all_masks_public(void **state)
{
    all_masks(state, OP_PUB);
}

/* ------------------------------------------------------------------------ */
/* 2. One bad lane among 7 good ones                                         */
/* ------------------------------------------------------------------------ */

enum bad {
    B_IN_N,
    B_IN_N_PLUS_1,
    B_IN_ALL_FF,
    B_IN_NULL,
    B_OUT_NULL,
    B_KEY_NULL,
    B_KEY_3072,
    B_KEY_MAGIC,
    B_KEY_BITS,
    B_KEY_DP,
    B_KEY_DQ,
    B_KEY_P,
    B_KEY_QINV,
    B_KEY_E
};

static const struct bad_case {
    const char *name;
    enum bad kind;
    unsigned code;
    int priv_only;
} bad_cases[] = {
    {"in == n", B_IN_N, MBC_LANE_BAD_PARAM, 0},
    {"in == n + 1", B_IN_N_PLUS_1, MBC_LANE_BAD_PARAM, 0},
    {"in all 0xFF", B_IN_ALL_FF, MBC_LANE_BAD_PARAM, 0},
    {"in NULL", B_IN_NULL, MBC_LANE_NULL_PARAM, 0},
    {"out NULL", B_OUT_NULL, MBC_LANE_NULL_PARAM, 0},
    {"key NULL", B_KEY_NULL, MBC_LANE_NULL_PARAM, 0},
    {"3072-bit key", B_KEY_3072, MBC_LANE_BAD_PARAM, 0},
    {"corrupted magic", B_KEY_MAGIC, MBC_LANE_BAD_PARAM, 0},
    {"corrupted bits", B_KEY_BITS, MBC_LANE_BAD_PARAM, 0},
    {"corrupted dp", B_KEY_DP, MBC_LANE_FAULT, 1},
    {"corrupted dq", B_KEY_DQ, MBC_LANE_FAULT, 1},
    {"corrupted p modulus", B_KEY_P, MBC_LANE_FAULT, 1},
    {"corrupted qinv", B_KEY_QINV, MBC_LANE_FAULT, 1},
    {"corrupted e", B_KEY_E, MBC_LANE_FAULT, 1},
};

/* be_add: the big-endian buf += v; returns the carry out. */
static unsigned be_add(uint8_t *buf, size_t len, unsigned v)
{
    for (size_t i = len; i-- > 0 && v != 0;) {
        v += buf[i];
        buf[i] = (uint8_t)v;
        v >>= 8;
    }
    return v;
}

/* corrupt_copy: a malloc'ed copy of key k (private or public) with one
 * field changed through the internal layout. */
static void *corrupt_copy(enum op op, const struct test_key *k, enum bad kind)
{
    const size_t size =
        op == OP_PRIV ? sizeof(struct mbc_rsa_priv_key) : sizeof(struct mbc_rsa_pub_key);
    void *copy = aligned_alloc(64, (size + 63) & ~(size_t)63);
    assert_non_null(copy);
    if (op == OP_PUB) {
        struct mbc_rsa_pub_key *pk = memcpy(copy, k->pub, size);
        if (kind == B_KEY_MAGIC) {
            pk->tag.magic ^= 1;
        } else if (kind == B_KEY_BITS) {
            pk->tag.info = 3072;
        }
        return copy;
    }
    struct mbc_rsa_priv_key *sk = memcpy(copy, k->priv, size);
    switch (kind) {
    case B_KEY_MAGIC:
        sk->tag.magic ^= 1;
        break;
    case B_KEY_BITS:
        sk->tag.info = 3072;
        break;
    case B_KEY_DP:
        sk->dp[3] ^= 1u << 7;
        break;
    case B_KEY_DQ:
        sk->dq[0] ^= 2;
        break;
    case B_KEY_P:
        sk->p.m[1] ^= 1u << 20; /* the modulus no longer matches its constants */
        break;
    case B_KEY_QINV:
        sk->qinv_r[5] ^= 1;
        break;
    case B_KEY_E:
        sk->pub.e[0] ^= 2; /* still odd, same length */
        break;
    default:
        fail_msg("no key corruption for case %d", (int)kind);
    }
    return copy;
}

static void bad_lane(void **state, enum op op)
{
    begin(state);
    const struct fixture *f = fixture();
    struct batch *clean = malloc(sizeof(*clean)), *b = malloc(sizeof(*b));
    assert_non_null(clean);
    assert_non_null(b);
    clean_batch(clean, op);
    check(clean, run(op, clean, 2048, MBC_LANE_MASK_ALL), LEN, "clean batch");

    uint8_t bad_in[LEN];
    char what[128];
    for (size_t c = 0; c < sizeof(bad_cases) / sizeof(bad_cases[0]); c++) {
        const struct bad_case *bc = &bad_cases[c];
        if (bc->priv_only && op != OP_PRIV) {
            continue;
        }
        for (unsigned pos = 0; pos < MBC_LANES; pos++) {
            void *copy = NULL;
            clean_batch(b, op);
            b->want[pos] = bc->code;
            switch (bc->kind) {
            case B_IN_N:
            case B_IN_N_PLUS_1:
                memcpy(bad_in, f->k[pos].parts.c[F_N], LEN);
                be_add(bad_in, LEN, bc->kind == B_IN_N_PLUS_1);
                b->in[pos] = bad_in;
                break;
            case B_IN_ALL_FF:
                memset(bad_in, 0xFF, LEN);
                b->in[pos] = bad_in;
                break;
            case B_IN_NULL:
                b->in[pos] = NULL;
                break;
            case B_OUT_NULL:
                b->out[pos] = NULL;
                break;
            case B_KEY_NULL:
                b->priv[pos] = NULL;
                b->pub[pos] = NULL;
                break;
            case B_KEY_3072:
                b->priv[pos] = f->big.priv;
                b->pub[pos] = f->big.pub;
                break;
            default:
                copy = corrupt_copy(op, &f->k[pos], bc->kind);
                b->priv[pos] = copy;
                b->pub[pos] = copy;
                break;
            }
            snprintf(what, sizeof(what), "%s, %s in lane %u", op_names[op], bc->name, pos);
            mbc_status st = run(op, b, 2048, MBC_LANE_MASK_ALL);
            free(copy);
            check(b, st, LEN, what);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                if (l != pos && memcmp(b->out[l], clean->out[l], OUT_MAX) != 0) {
                    fail_msg("%s: good lane %u differs from the clean run", what, l);
                }
            }
        }
    }
    free(b);
    free(clean);
}

static void test_bad_lane_private(void **state)
{
    bad_lane(state, OP_PRIV);
}

static void test_bad_lane_public(void **state)
{
    bad_lane(state, OP_PUB);
}

/* ------------------------------------------------------------------------ */
/* 3. The fault hook                                                         */
/* ------------------------------------------------------------------------ */

static void test_fault_hook(void **state)
{
    begin(state);
    static const unsigned hooks[] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20,
                                     0x40, 0x80, 0x81, 0x5A, 0xFF};
    struct batch *b = malloc(sizeof(*b));
    assert_non_null(b);
    char what[96];
    for (size_t h = 0; h < sizeof(hooks) / sizeof(hooks[0]); h++) {
        clean_batch(b, OP_PRIV);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            b->want[l] = ((hooks[h] >> l) & 1u) ? MBC_LANE_FAULT : MBC_LANE_OK;
        }
        mbc_test_hooks.rsa_fault_lanes = hooks[h];
        mbc_status st = run(OP_PRIV, b, 2048, MBC_LANE_MASK_ALL);
        mbc_test_hooks.rsa_fault_lanes = 0;
        snprintf(what, sizeof(what), "fault hook 0x%02x", hooks[h]);
        check(b, st, LEN, what);
    }

    /* Hooked lanes outside the mask stay EMPTY; an earlier error wins. */
    clean_batch(b, OP_PRIV);
    uint8_t n_in[LEN];
    memcpy(n_in, fixture()->k[2].parts.c[F_N], LEN);
    b->in[2] = n_in;
    const unsigned want[MBC_LANES] = {MBC_LANE_FAULT, MBC_LANE_FAULT, MBC_LANE_BAD_PARAM,
                                      MBC_LANE_OK,    MBC_LANE_EMPTY, MBC_LANE_EMPTY,
                                      MBC_LANE_EMPTY, MBC_LANE_EMPTY};
    memcpy(b->want, want, sizeof(want));
    mbc_test_hooks.rsa_fault_lanes = 0xF7;
    mbc_status st = run(OP_PRIV, b, 2048, 0x0F);
    mbc_test_hooks.rsa_fault_lanes = 0;
    check(b, st, LEN, "fault hook 0xF7, mask 0x0F, lane 2 input n");

    /* The public operation has no CRT and ignores the hook. */
    clean_batch(b, OP_PUB);
    mbc_test_hooks.rsa_fault_lanes = 0xFF;
    st = run(OP_PUB, b, 2048, MBC_LANE_MASK_ALL);
    mbc_test_hooks.rsa_fault_lanes = 0;
    check(b, st, LEN, "public batch with fault hook 0xFF");
    free(b);

    /* Single request: MBC_ERR_FAULT, output zeroed; then correct again. */
    const struct fixture *f = fixture();
    uint8_t out[LEN];
    memset(out, CANARY, LEN);
    mbc_test_hooks.rsa_fault_lanes = 1;
    mbc_err err = mbc_rsa_private_crt(out, f->in[OP_PRIV][0][0], f->k[0].priv);
    mbc_test_hooks.rsa_fault_lanes = 0;
    assert_int_equal(err, MBC_ERR_FAULT);
    assert_true(all_bytes(out, LEN, 0));
    assert_int_equal(mbc_rsa_private_crt(out, f->in[OP_PRIV][0][0], f->k[0].priv), MBC_OK);
    assert_memory_equal(out, f->ref[OP_PRIV][0][0], LEN);
}

/* ------------------------------------------------------------------------ */
/* 4. Bad input to the batch and single-request calls                        */
/* ------------------------------------------------------------------------ */

/* null_arrays: out, in or key array NULL; all active lanes NULL_PARAM. */
static void null_arrays(enum op op, struct batch *b)
{
    static const unsigned masks[] = {0xFF, 0x35, 0x80};
    char what[96];
    for (int which = 0; which < 3; which++) {
        for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
            clean_batch(b, op);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                b->want[l] = ((masks[m] >> l) & 1u) ? MBC_LANE_NULL_PARAM : MBC_LANE_EMPTY;
            }
            uint8_t *const *out = which == 0 ? NULL : b->out;
            const uint8_t *const *in = which == 1 ? NULL : b->in;
            mbc_status st =
                op == OP_PRIV
                    ? mbc_rsa_private_crt_mb8(out, in, which == 2 ? NULL : b->priv, 2048, masks[m])
                    : mbc_rsa_public_mb8(out, in, which == 2 ? NULL : b->pub, 2048, masks[m]);
            snprintf(what, sizeof(what), "%s, %s array NULL, mask 0x%02x", op_names[op],
                     (const char *const[]){"out", "in", "key"}[which], masks[m]);
            if (out == NULL) {
                for (unsigned l = 0; l < MBC_LANES; l++) {
                    assert_true(all_bytes(b->buf[l], OUT_MAX, CANARY));
                    b->out[l] = NULL; /* the library never saw these buffers */
                }
            }
            check(b, st, LEN, what);
        }
    }
    /* lane_mask 0 reads nothing at all */
    mbc_status st = op == OP_PRIV ? mbc_rsa_private_crt_mb8(NULL, NULL, NULL, 2048, 0)
                                  : mbc_rsa_public_mb8(NULL, NULL, NULL, 2048, 0);
    assert_int_equal(st, 0x11111111u);
}

/* bad_bits: unsupported sizes (nothing may be written: the library cannot
 * know the buffers' length) and another supported size than the keys' (the
 * failed lanes' bits/8-byte outputs are zeroed). */
static void bad_bits(enum op op, struct batch *b)
{
    static const unsigned bits[] = {1024, 2047, 0, 8192, 3072, 4096, 2056};
    char what[96];
    for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
        clean_batch(b, op);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            b->want[l] = ((0xB7u >> l) & 1u) ? MBC_LANE_BAD_PARAM : MBC_LANE_EMPTY;
        }
        snprintf(what, sizeof(what), "%s, bits %u", op_names[op], bits[i]);
        const int supported = bits[i] == 2048 || bits[i] == 3072 || bits[i] == 4096;
        check(b, run(op, b, bits[i], 0xB7), supported ? bits[i] / 8 : 0, what);
    }
}

/* big_mask: a lane_mask above 0xFF makes every lane BAD_PARAM. */
static void big_mask(enum op op, struct batch *b)
{
    static const unsigned masks[] = {0x100, 0x1FF, 0x80000001u, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
        clean_batch(b, op);
        assert_int_equal(run(op, b, 2048, masks[i]), 0x33333333u);
        uint8_t *none[MBC_LANES] = {NULL};
        assert_int_equal(op == OP_PRIV ? mbc_rsa_private_crt_mb8(none, NULL, NULL, 2048, masks[i])
                                       : mbc_rsa_public_mb8(none, NULL, NULL, 2048, masks[i]),
                         0x33333333u);
    }
}

/* in_place: out[l] == in[l] in every lane. */
static void in_place(enum op op, struct batch *b)
{
    clean_batch(b, op);
    for (unsigned l = 0; l < MBC_LANES; l++) {
        memcpy(b->buf[l], b->in[l], LEN);
        b->in[l] = b->buf[l];
    }
    check(b, run(op, b, 2048, MBC_LANE_MASK_ALL), LEN, "in-place batch");
}

static void test_api_batch(void **state)
{
    begin(state);
    struct batch *b = malloc(sizeof(*b));
    assert_non_null(b);
    for (int op = OP_PRIV; op <= OP_PUB; op++) {
        null_arrays((enum op)op, b);
        bad_bits((enum op)op, b);
        big_mask((enum op)op, b);
        in_place((enum op)op, b);
    }
    free(b);
}

/* single: one request of either kind (key is the test_key). */
static mbc_err single(enum op op, uint8_t *out, const uint8_t *in, const struct test_key *k,
                      int null_key)
{
    if (op == OP_PRIV) {
        return mbc_rsa_private_crt(out, in, null_key ? NULL : k->priv);
    }
    return mbc_rsa_public(out, in, null_key ? NULL : k->pub);
}

static void test_api_single(void **state)
{
    begin(state);
    const struct fixture *f = fixture();
    const struct test_key *k = &f->k[1];
    uint8_t out[LEN], in[LEN];
    for (int op = OP_PRIV; op <= OP_PUB; op++) {
        const uint8_t *x = f->in[op][1][0];
        assert_int_equal(single(op, NULL, x, k, 0), MBC_ERR_NULL_PARAM);
        assert_int_equal(single(op, out, NULL, k, 0), MBC_ERR_NULL_PARAM);
        assert_int_equal(single(op, out, x, k, 1), MBC_ERR_NULL_PARAM);

        const int plus[] = {0, 1, -1};
        for (size_t i = 0; i < sizeof(plus) / sizeof(plus[0]); i++) {
            memcpy(in, k->parts.c[F_N], LEN);
            if (plus[i] < 0) {
                memset(in, 0xFF, LEN);
            } else {
                be_add(in, LEN, (unsigned)plus[i]);
            }
            memset(out, CANARY, LEN);
            assert_int_equal(single(op, out, in, k, 0), MBC_ERR_BAD_PARAM);
            assert_true(all_bytes(out, LEN, 0));
        }

        memset(out, CANARY, LEN);
        assert_int_equal(single(op, out, x, k, 0), MBC_OK);
        assert_memory_equal(out, f->ref[op][1][0], LEN);
        memcpy(in, x, LEN);
        assert_int_equal(single(op, in, in, k, 0), MBC_OK);
        assert_memory_equal(in, f->ref[op][1][0], LEN);
    }

    /* A corrupted key object is rejected, not used. */
    void *copy = corrupt_copy(OP_PRIV, k, B_KEY_MAGIC);
    assert_int_equal(mbc_rsa_private_crt(out, f->in[OP_PRIV][1][0], copy), MBC_ERR_BAD_PARAM);
    free(copy);
    copy = corrupt_copy(OP_PUB, k, B_KEY_MAGIC);
    assert_int_equal(mbc_rsa_public(out, f->in[OP_PUB][1][0], copy), MBC_ERR_BAD_PARAM);
    free(copy);

    /* The 3072-bit key, against OpenSSL. */
    uint8_t x3[384], y3[384], ref3[384];
    rand_below(x3, f->big.parts.c[F_N], sizeof(x3));
    assert_int_equal(mbt_ossl_rsa_raw(f->big.pkey, 1, ref3, x3, sizeof(x3)), 0);
    assert_int_equal(mbc_rsa_private_crt(y3, x3, f->big.priv), MBC_OK);
    assert_memory_equal(y3, ref3, sizeof(y3));
    assert_int_equal(mbc_rsa_public(y3, y3, f->big.pub), MBC_OK);
    assert_memory_equal(y3, x3, sizeof(y3));
}

/* ------------------------------------------------------------------------ */
/* 4. Key constructors                                                       */
/* ------------------------------------------------------------------------ */

enum src {
    S_KEEP,       /* no override */
    S_NULL,       /* field = NULL */
    S_SMALL,      /* field = v, 4 bytes big-endian */
    S_FIELD_PLUS, /* field = key's field `from` + v */
    S_FIELD_XOR,  /* field = key's field `from` with the low byte xor v */
    S_OTHER_P,    /* field = another key's p */
    S_RAND_BITS   /* field = a random odd number of exactly v bits */
};

struct override {
    enum field field;
    enum src src;
    enum field from;
    unsigned v;
};

#define NO_PUB (-1) /* case does not apply to the public constructor */

static const struct ctor_case {
    const char *name;
    struct override ov[2];
    mbc_err want_priv;
    int want_pub;
} ctor_cases[] = {
    {"n NULL", {{F_N, S_NULL, 0, 0}}, MBC_ERR_NULL_PARAM, MBC_ERR_NULL_PARAM},
    {"e NULL", {{F_E, S_NULL, 0, 0}}, MBC_ERR_NULL_PARAM, MBC_ERR_NULL_PARAM},
    {"p NULL", {{F_P, S_NULL, 0, 0}}, MBC_ERR_NULL_PARAM, NO_PUB},
    {"q NULL", {{F_Q, S_NULL, 0, 0}}, MBC_ERR_NULL_PARAM, NO_PUB},
    {"dp NULL", {{F_DP, S_NULL, 0, 0}}, MBC_ERR_NULL_PARAM, NO_PUB},
    {"dq NULL", {{F_DQ, S_NULL, 0, 0}}, MBC_ERR_NULL_PARAM, NO_PUB},
    {"qinv NULL", {{F_QINV, S_NULL, 0, 0}}, MBC_ERR_NULL_PARAM, NO_PUB},
    {"n of 0 bits", {{F_N, S_RAND_BITS, 0, 0}}, MBC_ERR_KEY_SIZE, MBC_ERR_KEY_SIZE},
    {"n of 1024 bits", {{F_N, S_RAND_BITS, 0, 1024}}, MBC_ERR_KEY_SIZE, MBC_ERR_KEY_SIZE},
    {"n of 2047 bits", {{F_N, S_RAND_BITS, 0, 2047}}, MBC_ERR_KEY_SIZE, MBC_ERR_KEY_SIZE},
    {"n of 2049 bits", {{F_N, S_RAND_BITS, 0, 2049}}, MBC_ERR_KEY_SIZE, MBC_ERR_KEY_SIZE},
    {"n of 4097 bits", {{F_N, S_RAND_BITS, 0, 4097}}, MBC_ERR_KEY_SIZE, MBC_ERR_KEY_SIZE},
    {"n of 8192 bits", {{F_N, S_RAND_BITS, 0, 8192}}, MBC_ERR_KEY_SIZE, MBC_ERR_KEY_SIZE},
    {"n of 3072 bits", {{F_N, S_RAND_BITS, 0, 3072}}, MBC_ERR_KEY_MISMATCH, MBC_OK},
    {"n of 4096 bits", {{F_N, S_RAND_BITS, 0, 4096}}, MBC_ERR_KEY_MISMATCH, MBC_OK},
    {"n even", {{F_N, S_FIELD_XOR, F_N, 1}}, MBC_ERR_EVEN_MODULUS, MBC_ERR_EVEN_MODULUS},
    {"p even", {{F_P, S_FIELD_XOR, F_P, 1}}, MBC_ERR_EVEN_MODULUS, NO_PUB},
    {"q even", {{F_Q, S_FIELD_XOR, F_Q, 1}}, MBC_ERR_EVEN_MODULUS, NO_PUB},
    {"p of another key", {{F_P, S_OTHER_P, 0, 0}}, MBC_ERR_KEY_MISMATCH, NO_PUB},
    {"p + 2", {{F_P, S_FIELD_PLUS, F_P, 2}}, MBC_ERR_KEY_MISMATCH, NO_PUB},
    {"q + 2", {{F_Q, S_FIELD_PLUS, F_Q, 2}}, MBC_ERR_KEY_MISMATCH, NO_PUB},
    {"p = n, q = 1", {{F_P, S_FIELD_PLUS, F_N, 0}, {F_Q, S_SMALL, 0, 1}}, MBC_ERR_KEY_SIZE, NO_PUB},
    {"e = 65538", {{F_E, S_SMALL, 0, 65538}}, MBC_ERR_BAD_EXPONENT, MBC_ERR_BAD_EXPONENT},
    {"e = 0", {{F_E, S_SMALL, 0, 0}}, MBC_ERR_BAD_EXPONENT, MBC_ERR_BAD_EXPONENT},
    {"e = 1", {{F_E, S_SMALL, 0, 1}}, MBC_ERR_BAD_EXPONENT, MBC_ERR_BAD_EXPONENT},
    {"e = 2", {{F_E, S_SMALL, 0, 2}}, MBC_ERR_BAD_EXPONENT, MBC_ERR_BAD_EXPONENT},
    {"e = n", {{F_E, S_FIELD_PLUS, F_N, 0}}, MBC_ERR_BAD_EXPONENT, MBC_ERR_BAD_EXPONENT},
    {"e = n + 2", {{F_E, S_FIELD_PLUS, F_N, 2}}, MBC_ERR_BAD_EXPONENT, MBC_ERR_BAD_EXPONENT},
    {"e of 2056 bits", {{F_E, S_RAND_BITS, 0, 2056}}, MBC_ERR_BAD_EXPONENT, MBC_ERR_BAD_EXPONENT},
    {"dp = p", {{F_DP, S_FIELD_PLUS, F_P, 0}}, MBC_ERR_KEY_RANGE, NO_PUB},
    {"dp = p + 2", {{F_DP, S_FIELD_PLUS, F_P, 2}}, MBC_ERR_KEY_RANGE, NO_PUB},
    {"dq = q", {{F_DQ, S_FIELD_PLUS, F_Q, 0}}, MBC_ERR_KEY_RANGE, NO_PUB},
    {"qinv = p", {{F_QINV, S_FIELD_PLUS, F_P, 0}}, MBC_ERR_KEY_RANGE, NO_PUB},
    {"qinv = n", {{F_QINV, S_FIELD_PLUS, F_N, 0}}, MBC_ERR_KEY_RANGE, NO_PUB},
    {"dp of 2048 bits", {{F_DP, S_RAND_BITS, 0, 2048}}, MBC_ERR_KEY_RANGE, NO_PUB},
};

/* apply: sets p->c[o->field] to the override's value, built in buf. */
static void apply(const struct override *o, const struct fixture *f, mbt_rsa_parts *p, uint8_t *buf,
                  size_t buf_len)
{
    const struct test_key *k = &f->k[0];
    size_t n = 0;
    switch (o->src) {
    case S_KEEP:
        return;
    case S_NULL:
        p->c[o->field] = NULL;
        return;
    case S_SMALL:
        n = 4;
        for (int i = 0; i < 4; i++) {
            buf[i] = (uint8_t)(o->v >> (24 - 8 * i));
        }
        break;
    case S_FIELD_PLUS:
    case S_FIELD_XOR:
        n = k->parts.len[o->from] + 1;
        assert_true(n <= buf_len);
        buf[0] = 0;
        memcpy(buf + 1, k->parts.c[o->from], n - 1);
        if (o->src == S_FIELD_XOR) {
            buf[n - 1] ^= (uint8_t)o->v;
        } else {
            be_add(buf, n, o->v);
        }
        break;
    case S_OTHER_P:
        n = f->k[1].parts.len[F_P];
        memcpy(buf, f->k[1].parts.c[F_P], n);
        break;
    case S_RAND_BITS:
        n = (o->v + 7) / 8;
        assert_true(n <= buf_len);
        mbt_rand_bytes(buf, n);
        if (n > 0) {
            unsigned top = (o->v - 1) % 8;
            buf[0] = (uint8_t)((buf[0] & ((1u << top) - 1)) | (1u << top));
            buf[n - 1] |= 1;
        }
        break;
    }
    p->c[o->field] = buf;
    p->len[o->field] = n;
}

static void want_err(mbc_err got, mbc_err want, const char *ctor, const char *name)
{
    if (got != want) {
        fail_msg("%s, %s: got %s, want %s", ctor, name, mbc_err_str(got), mbc_err_str(want));
    }
}

static void test_key_constructors(void **state)
{
    (void)state;
    const struct fixture *f = fixture();
    static uint8_t bufs[2][1040];
    static char sentinel;
    for (size_t i = 0; i < sizeof(ctor_cases) / sizeof(ctor_cases[0]); i++) {
        const struct ctor_case *cc = &ctor_cases[i];
        mbt_rsa_parts p = f->k[0].parts; /* the pointers only: apply replaces some */
        for (int o = 0; o < 2; o++) {
            apply(&cc->ov[o], f, &p, bufs[o], sizeof(bufs[o]));
        }
        mbc_rsa_priv_components comp = mbt_rsa_components(&p);
        mbc_rsa_priv_key *sk = (mbc_rsa_priv_key *)(void *)&sentinel;
        want_err(mbc_rsa_priv_key_new(&sk, &comp), cc->want_priv, "priv_key_new", cc->name);
        if (cc->want_priv != MBC_OK && sk != NULL) {
            fail_msg("priv_key_new, %s: *key not NULL on error", cc->name);
        }
        mbc_rsa_priv_key_free(sk);
        if (cc->want_pub == NO_PUB) {
            continue;
        }
        mbc_rsa_pub_key *pk = (mbc_rsa_pub_key *)(void *)&sentinel;
        want_err(mbc_rsa_pub_key_new(&pk, p.c[F_N], p.len[F_N], p.c[F_E], p.len[F_E]),
                 (mbc_err)cc->want_pub, "pub_key_new", cc->name);
        if (cc->want_pub != MBC_OK && pk != NULL) {
            fail_msg("pub_key_new, %s: *key not NULL on error", cc->name);
        }
        mbc_rsa_pub_key_free(pk);
    }

    /* NULL key pointer and components; free and bits of NULL. */
    mbc_rsa_priv_components comp = mbt_rsa_components(&f->k[0].parts);
    mbc_rsa_priv_key *sk = (mbc_rsa_priv_key *)(void *)&sentinel;
    mbc_rsa_pub_key *pk = NULL;
    assert_int_equal(mbc_rsa_priv_key_new(NULL, &comp), MBC_ERR_NULL_PARAM);
    assert_int_equal(mbc_rsa_priv_key_new(&sk, NULL), MBC_ERR_NULL_PARAM);
    assert_null(sk);
    assert_int_equal(mbc_rsa_pub_key_new(NULL, comp.n, comp.n_len, comp.e, comp.e_len),
                     MBC_ERR_NULL_PARAM);
    mbc_rsa_priv_key_free(NULL);
    mbc_rsa_pub_key_free(NULL);
    assert_int_equal(mbc_rsa_priv_key_bits(NULL), 0);
    assert_int_equal(mbc_rsa_pub_key_bits(NULL), 0);

    /* Leading zero bytes in every component are accepted. */
    mbt_rsa_parts padded;
    for (int i = 0; i < NFIELDS; i++) {
        padded.len[i] = f->k[0].parts.len[i] + 3;
        padded.c[i] = calloc(1, padded.len[i]);
        assert_non_null(padded.c[i]);
        memcpy(padded.c[i] + 3, f->k[0].parts.c[i], f->k[0].parts.len[i]);
    }
    comp = mbt_rsa_components(&padded);
    assert_int_equal(mbc_rsa_priv_key_new(&sk, &comp), MBC_OK);
    assert_int_equal(
        mbc_rsa_pub_key_new(&pk, padded.c[F_N], padded.len[F_N], padded.c[F_E], padded.len[F_E]),
        MBC_OK);
    mbt_rsa_parts_free(&padded);
    uint8_t out[LEN];
    assert_int_equal(mbc_rsa_priv_key_bits(sk), 2048);
    assert_int_equal(mbc_rsa_private_crt(out, f->in[OP_PRIV][0][0], sk), MBC_OK);
    assert_memory_equal(out, f->ref[OP_PRIV][0][0], LEN);
    assert_int_equal(mbc_rsa_public(out, f->in[OP_PUB][0][0], pk), MBC_OK);
    assert_memory_equal(out, f->ref[OP_PUB][0][0], LEN);
    mbc_rsa_priv_key_free(sk);
    mbc_rsa_pub_key_free(pk);
}

/* ------------------------------------------------------------------------ */
/* 5. PKCS#1 v1.5 encoding                                                   */
/* ------------------------------------------------------------------------ */

static const struct hash_case {
    mbc_hash hash;
    const char *name;
    size_t len;
    size_t prefix_len; /* DER DigestInfo bytes before the digest */
} hashes[] = {
    {MBC_HASH_SHA1, "SHA1", 20, 15},     {MBC_HASH_SHA224, "SHA224", 28, 19},
    {MBC_HASH_SHA256, "SHA256", 32, 19}, {MBC_HASH_SHA384, "SHA384", 48, 19},
    {MBC_HASH_SHA512, "SHA512", 64, 19},
};

/* ossl_sign: OpenSSL's PKCS#1 v1.5 signature of digest (len bytes of sig). */
static void ossl_sign(EVP_PKEY *pkey, const struct hash_case *h, const uint8_t *digest,
                      uint8_t *sig, size_t len)
{
    EVP_MD *md = EVP_MD_fetch(NULL, h->name, NULL);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    size_t sig_len = len;
    int ok = md != NULL && ctx != NULL && EVP_PKEY_sign_init(ctx) == 1 &&
             EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1 &&
             EVP_PKEY_CTX_set_signature_md(ctx, md) == 1 &&
             EVP_PKEY_sign(ctx, sig, &sig_len, digest, h->len) == 1;
    EVP_PKEY_CTX_free(ctx);
    EVP_MD_free(md);
    assert_true(ok);
    assert_int_equal(sig_len, len);
}

/*
 * Our encoding, signed with our private operation, is OpenSSL's signature,
 * and OpenSSL's signature opened with our public operation is our encoding;
 * verify_encoded accepts it and rejects every single-byte change.
 */
static void test_pkcs1_v15(void **state)
{
    begin(state);
    const struct fixture *f = fixture();
    const struct test_key *keys[] = {&f->k[0], &f->big};
    uint8_t em[384], sig[384], mine[384], digest[64];
    for (size_t ki = 0; ki < 2; ki++) {
        const struct test_key *k = keys[ki];
        const size_t len = mbc_rsa_pub_key_bits(k->pub) / 8;
        for (size_t h = 0; h < sizeof(hashes) / sizeof(hashes[0]); h++) {
            const struct hash_case *hc = &hashes[h];
            mbt_rand_bytes(digest, hc->len);
            assert_int_equal(mbc_rsa_pkcs1_v15_sign_encode(em, len, hc->hash, digest, hc->len),
                             MBC_OK);
            const size_t ps_end = len - hc->len - hc->prefix_len - 1;
            assert_int_equal(em[0], 0);
            assert_int_equal(em[1], 1);
            assert_true(all_bytes(em + 2, ps_end - 2, 0xFF));
            assert_int_equal(em[ps_end], 0);
            assert_memory_equal(em + len - hc->len, digest, hc->len);

            ossl_sign(k->pkey, hc, digest, sig, len);
            assert_int_equal(mbc_rsa_private_crt(mine, em, k->priv), MBC_OK);
            assert_memory_equal(mine, sig, len);
            assert_int_equal(mbc_rsa_public(mine, sig, k->pub), MBC_OK);
            assert_memory_equal(mine, em, len);

            assert_int_equal(mbc_rsa_pkcs1_v15_verify_encoded(mine, len, hc->hash, digest, hc->len),
                             MBC_OK);
            for (size_t i = 0; i < len; i++) {
                mine[i] ^= (uint8_t)(1u << (i % 8));
                mbc_err err =
                    mbc_rsa_pkcs1_v15_verify_encoded(mine, len, hc->hash, digest, hc->len);
                mine[i] ^= (uint8_t)(1u << (i % 8));
                if (err != MBC_ERR_SIG_INVALID) {
                    fail_msg("%s: byte %zu changed: got %s", hc->name, i, mbc_err_str(err));
                }
            }
            digest[hc->len - 1] ^= 1;
            assert_int_equal(mbc_rsa_pkcs1_v15_verify_encoded(mine, len, hc->hash, digest, hc->len),
                             MBC_ERR_SIG_INVALID);
        }
    }
}

static void test_pkcs1_v15_errors(void **state)
{
    (void)state;
    uint8_t em[LEN], digest[64] = {0};
    for (size_t h = 0; h < sizeof(hashes) / sizeof(hashes[0]); h++) {
        const struct hash_case *hc = &hashes[h];
        const size_t min_len = hc->prefix_len + hc->len + 11; /* 8 bytes of FF */
        const size_t bad_lens[] = {0, hc->len - 1, hc->len + 1, 64 + 1};
        assert_int_equal(mbc_rsa_pkcs1_v15_sign_encode(NULL, LEN, hc->hash, digest, hc->len),
                         MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_rsa_pkcs1_v15_sign_encode(em, LEN, hc->hash, NULL, hc->len),
                         MBC_ERR_NULL_PARAM);
        for (size_t i = 0; i < sizeof(bad_lens) / sizeof(bad_lens[0]); i++) {
            if (bad_lens[i] == hc->len) {
                continue;
            }
            assert_int_equal(mbc_rsa_pkcs1_v15_sign_encode(em, LEN, hc->hash, digest, bad_lens[i]),
                             MBC_ERR_BAD_PARAM);
            assert_int_equal(
                mbc_rsa_pkcs1_v15_verify_encoded(em, LEN, hc->hash, digest, bad_lens[i]),
                MBC_ERR_BAD_PARAM);
        }
        assert_int_equal(mbc_rsa_pkcs1_v15_sign_encode(em, 0, hc->hash, digest, hc->len),
                         MBC_ERR_BAD_PARAM);
        assert_int_equal(mbc_rsa_pkcs1_v15_sign_encode(em, min_len - 1, hc->hash, digest, hc->len),
                         MBC_ERR_BAD_PARAM);
        assert_int_equal(
            mbc_rsa_pkcs1_v15_verify_encoded(em, min_len - 1, hc->hash, digest, hc->len),
            MBC_ERR_BAD_PARAM);
        /* the shortest allowed encoding: exactly 8 bytes of FF */
        memset(em, CANARY, sizeof(em));
        assert_int_equal(mbc_rsa_pkcs1_v15_sign_encode(em, min_len, hc->hash, digest, hc->len),
                         MBC_OK);
        assert_int_equal(em[1], 1);
        assert_true(all_bytes(em + 2, 8, 0xFF));
        assert_int_equal(em[10], 0);
        assert_true(all_bytes(em + min_len, sizeof(em) - min_len, CANARY));
        assert_int_equal(mbc_rsa_pkcs1_v15_verify_encoded(em, min_len, hc->hash, digest, hc->len),
                         MBC_OK);
        assert_int_equal(mbc_rsa_pkcs1_v15_verify_encoded(NULL, min_len, hc->hash, digest, hc->len),
                         MBC_ERR_NULL_PARAM);
        assert_int_equal(mbc_rsa_pkcs1_v15_verify_encoded(em, min_len, hc->hash, NULL, hc->len),
                         MBC_ERR_NULL_PARAM);
    }
    const mbc_hash unknown[] = {(mbc_hash)5, (mbc_hash)99};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        assert_int_equal(mbc_rsa_pkcs1_v15_sign_encode(em, LEN, unknown[i], digest, 32),
                         MBC_ERR_BAD_PARAM);
        assert_int_equal(mbc_rsa_pkcs1_v15_verify_encoded(em, LEN, unknown[i], digest, 32),
                         MBC_ERR_BAD_PARAM);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MBT_IMPL_TESTS(test_all_masks_private), MBT_IMPL_TESTS(test_all_masks_public),
        MBT_IMPL_TESTS(test_bad_lane_private),  MBT_IMPL_TESTS(test_bad_lane_public),
        MBT_IMPL_TESTS(test_fault_hook),        MBT_IMPL_TESTS(test_api_batch),
        MBT_IMPL_TESTS(test_api_single),        cmocka_unit_test(test_key_constructors),
        MBT_IMPL_TESTS(test_pkcs1_v15),         cmocka_unit_test(test_pkcs1_v15_errors),
    };
    int failed = mbt_run("rsa_lanes", tests);
    fixture_free();
    return failed;
}
