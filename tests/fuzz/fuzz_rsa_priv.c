/*
 * fuzz_rsa_priv.c - RSA private key creation on fuzzed CRT components, then
 * one private operation. Structure-aware: the input holds the seven
 * components (the seeds hold OpenSSL keys) and a list of edits the target
 * applies with BIGNUM arithmetic (flip a bit, swap or copy fields, zero one,
 * add, recompute n or the CRT exponents, swap p and q properly, pad with
 * zero bytes, make a field NULL...), so that each input is a near-miss of a
 * valid key.
 *
 * mbc_rsa_priv_key_new must accept exactly the keys the header's rules allow
 * (checked with BIGNUM) and refuse the others with a documented error. On an
 * accepted key, mbc_rsa_private_crt(in) must return exactly what the CRT
 * formula gives on the same components (m1 = in^dp mod p, m2 = in^dq mod q,
 * out = m2 + q (qinv (m1 - m2) mod p)) when that result passes the check
 * out^e == in mod n, and MBC_ERR_FAULT with out zeroed when it does not;
 * in >= n must give MBC_ERR_BAD_PARAM with out zeroed.
 *
 * Input:
 *   0      implementation (modulo the RSA implementations the CPU runs)
 *   1      bits 0-1: 1 key NULL, 2 components NULL; bits 2-7: number of edits
 *   then   n, e, p, q, dp, dq, qinv, each as a length (little-endian u16, mod
 *          1024) and its bytes; then 4 bytes per edit (operation, field,
 *          argument u16); then the input of the private operation (bits/8
 *          bytes, zero-filled)
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include "fuzz_rsa.h"

#define CANARY 0xA5
#define NUM_FIELDS MBT_RSA_NUM_PARTS
#define FIELD_MAX 1024

/*
 * Issue 9, promise 4: mbc_rsa_priv_key_new will also refuse, each with an
 * error of its own, keys whose CRT components do not fit together (the rules
 * of crt_rules below). Until then the header lets such a key be accepted (its
 * results then fail the check with e: MBC_ERR_FAULT), and this target allows
 * either: accepted, or refused with a code newer than this header's last
 * (MBC_ERR_BUSY). When the new errors land: give crt_rules an mbc_err member
 * with them, and in create() add the errors of the broken rules to errs (and
 * drop `newer`), so that such keys must be refused with exactly those codes.
 */
struct comps {
    BIGNUM *f[NUM_FIELDS];
};

static int p_equals_q(const struct comps *k, BN_CTX *ctx)
{
    (void)ctx;
    return BN_cmp(k->f[MBT_RSA_P], k->f[MBT_RSA_Q]) == 0;
}

/* not_one: 1 unless a * b == 1 (mod m); 0 for m < 2, where the rule has no
 * meaning (and other rules refuse the key). */
static int not_one(const BIGNUM *a, const BIGNUM *b, const BIGNUM *m, BN_CTX *ctx)
{
    if (BN_is_zero(m) || BN_is_one(m)) {
        return 0;
    }
    BIGNUM *t = BN_CTX_get(ctx);
    FZ_CHECK(t != NULL && BN_mod_mul(t, a, b, m, ctx) == 1, "BN_mod_mul");
    return !BN_is_one(t);
}

/* minus_one: x - 1, or 0 for x = 0. */
static BIGNUM *minus_one(const BIGNUM *x, BN_CTX *ctx)
{
    BIGNUM *t = BN_CTX_get(ctx);
    FZ_CHECK(t != NULL && BN_copy(t, x) != NULL && (BN_is_zero(t) || BN_sub_word(t, 1) == 1),
             "BN_sub_word");
    return t;
}

static int bad_qinv(const struct comps *k, BN_CTX *ctx)
{
    return not_one(k->f[MBT_RSA_Q], k->f[MBT_RSA_QINV], k->f[MBT_RSA_P], ctx);
}

static int bad_dp(const struct comps *k, BN_CTX *ctx)
{
    return not_one(k->f[MBT_RSA_E], k->f[MBT_RSA_DP], minus_one(k->f[MBT_RSA_P], ctx), ctx);
}

static int bad_dq(const struct comps *k, BN_CTX *ctx)
{
    return not_one(k->f[MBT_RSA_E], k->f[MBT_RSA_DQ], minus_one(k->f[MBT_RSA_Q], ctx), ctx);
}

static const struct crt_rule {
    const char *what;
    int (*broken)(const struct comps *k, BN_CTX *ctx);
} crt_rules[] = {
    {"p != q", p_equals_q},
    {"q * qinv == 1 mod p", bad_qinv},
    {"e * dp == 1 mod (p - 1)", bad_dp},
    {"e * dq == 1 mod (q - 1)", bad_dq},
};

/* crt_broken: the first broken rule of crt_rules, or NULL. */
static const char *crt_broken(const struct comps *k)
{
    BN_CTX *ctx = fz_bn_ctx();
    const char *what = NULL;
    BN_CTX_start(ctx);
    for (size_t i = 0; i < sizeof(crt_rules) / sizeof(crt_rules[0]) && what == NULL; i++) {
        if (crt_rules[i].broken(k, ctx)) {
            what = crt_rules[i].what;
        }
    }
    BN_CTX_end(ctx);
    return what;
}

/* FZ_NEWER_ERRS: every code above the header's last. */
#define FZ_NEWER_ERRS (~(FZ_ERR(MBC_ERR_BUSY + 1) - 1))

/* key_errs: the errors the header documents for k (mbc_rsa_priv_key_new). */
static fz_errs key_errs(const struct comps *k)
{
    BIGNUM *const *f = k->f;
    fz_errs errs = fz_rsa_pub_errs(f[MBT_RSA_N], f[MBT_RSA_E]);
    const int bits = BN_num_bits(f[MBT_RSA_N]);
    if (fz_rsa_supported(bits) &&
        (BN_num_bits(f[MBT_RSA_P]) > bits / 2 || BN_num_bits(f[MBT_RSA_Q]) > bits / 2)) {
        errs |= FZ_ERR(MBC_ERR_KEY_SIZE);
    }
    if (!BN_is_odd(f[MBT_RSA_P]) || !BN_is_odd(f[MBT_RSA_Q])) {
        errs |= FZ_ERR(MBC_ERR_EVEN_MODULUS);
    }
    BN_CTX *ctx = fz_bn_ctx();
    BN_CTX_start(ctx);
    BIGNUM *pq = BN_CTX_get(ctx);
    FZ_CHECK(pq != NULL && BN_mul(pq, f[MBT_RSA_P], f[MBT_RSA_Q], ctx) == 1, "BN_mul");
    if (BN_cmp(pq, f[MBT_RSA_N]) != 0) {
        errs |= FZ_ERR(MBC_ERR_KEY_MISMATCH);
    }
    BN_CTX_end(ctx);
    if (BN_cmp(f[MBT_RSA_DP], f[MBT_RSA_P]) >= 0 || BN_cmp(f[MBT_RSA_DQ], f[MBT_RSA_Q]) >= 0 ||
        BN_cmp(f[MBT_RSA_QINV], f[MBT_RSA_P]) >= 0) {
        errs |= FZ_ERR(MBC_ERR_KEY_RANGE);
    }
    return errs;
}

/* crt_result: the CRT formula on k's components for input x, in m. */
static void crt_result(BIGNUM *m, const struct comps *k, const BIGNUM *x)
{
    BIGNUM *const *f = k->f;
    BN_CTX *ctx = fz_bn_ctx();
    BN_CTX_start(ctx);
    BIGNUM *m1 = BN_CTX_get(ctx), *m2 = BN_CTX_get(ctx), *h = BN_CTX_get(ctx);
    FZ_CHECK(h != NULL && BN_mod_exp(m1, x, f[MBT_RSA_DP], f[MBT_RSA_P], ctx) == 1 &&
                 BN_mod_exp(m2, x, f[MBT_RSA_DQ], f[MBT_RSA_Q], ctx) == 1 &&
                 BN_mod_sub(h, m1, m2, f[MBT_RSA_P], ctx) == 1 &&
                 BN_mod_mul(h, h, f[MBT_RSA_QINV], f[MBT_RSA_P], ctx) == 1 &&
                 BN_mul(h, h, f[MBT_RSA_Q], ctx) == 1 && BN_add(m, m2, h) == 1,
             "the CRT formula");
    BN_CTX_end(ctx);
}

/* ------------------------------------------------------------------ edits */

enum edit_op {
    ED_FLIP,      /* flip bit arg of f */
    ED_SWAP,      /* swap f and field arg */
    ED_ZERO,      /* f = 0 */
    ED_ADD_SMALL, /* f += arg & 0xff, or -= when bit 8 of arg is set (floor 0) */
    ED_COPY,      /* f = field arg */
    ED_PAD,       /* encode f with arg % 64 leading zero bytes */
    ED_N,         /* n = p * q */
    ED_CRT,       /* dp, dq, qinv recomputed from p, q and e (when they exist) */
    ED_ADD,       /* f += field arg */
    ED_SET,       /* f = arg */
    ED_SWAP_PQ,   /* p <-> q, dp <-> dq, qinv = q^-1 mod p: a valid key stays valid */
    ED_SUB,       /* f = |f - field arg| */
    ED_SHIFT,     /* f <<= 1 (bit 0 of arg set), else f >>= 1 */
    ED_NULL,      /* f is passed as NULL */
    ED_NUM
};

struct key_in {
    struct comps k;
    const uint8_t *raw[NUM_FIELDS]; /* the input's bytes, used while not edited */
    size_t raw_len[NUM_FIELDS];
    unsigned pad[NUM_FIELDS];
    int edited[NUM_FIELDS];
    int null[NUM_FIELDS];
};

static void set_inverse(BIGNUM *r, const BIGNUM *a, const BIGNUM *m, BN_CTX *ctx)
{
    BIGNUM *t = BN_CTX_get(ctx);
    ERR_set_mark();
    if (t != NULL && !BN_is_zero(m) && BN_mod_inverse(t, a, m, ctx) != NULL) {
        BN_copy(r, t);
    }
    ERR_pop_to_mark();
}

static void recompute_crt(struct comps *k, BN_CTX *ctx)
{
    BIGNUM **f = k->f;
    if (BN_is_zero(f[MBT_RSA_P]) || BN_is_zero(f[MBT_RSA_Q])) {
        return;
    }
    BN_CTX_start(ctx);
    BIGNUM *p1 = minus_one(f[MBT_RSA_P], ctx), *q1 = minus_one(f[MBT_RSA_Q], ctx);
    BIGNUM *g = BN_CTX_get(ctx), *l = BN_CTX_get(ctx), *d = BN_CTX_get(ctx);
    FZ_CHECK(d != NULL && BN_gcd(g, p1, q1, ctx) == 1 && BN_mul(l, p1, q1, ctx) == 1,
             "lcm(p - 1, q - 1)");
    if (!BN_is_zero(g) && BN_div(l, NULL, l, g, ctx) == 1 && !BN_is_zero(l)) {
        BN_zero(d);
        set_inverse(d, f[MBT_RSA_E], l, ctx);
        if (!BN_is_zero(d) && !BN_is_zero(p1) && !BN_is_zero(q1)) {
            FZ_CHECK(BN_mod(f[MBT_RSA_DP], d, p1, ctx) == 1 &&
                         BN_mod(f[MBT_RSA_DQ], d, q1, ctx) == 1,
                     "d mod (p - 1)");
        }
    }
    set_inverse(f[MBT_RSA_QINV], f[MBT_RSA_Q], f[MBT_RSA_P], ctx);
    BN_CTX_end(ctx);
}

static void edit(struct key_in *x, unsigned op, unsigned field, unsigned arg)
{
    BIGNUM **f = x->k.f;
    const unsigned a = field % NUM_FIELDS, b = arg % NUM_FIELDS;
    BIGNUM *fa = f[a], *fb = f[b];
    BN_CTX *ctx = fz_bn_ctx();
    BN_CTX_start(ctx);
    int ok = 1;
    switch ((enum edit_op)(op % ED_NUM)) {
    case ED_FLIP: {
        const int bit = (int)(arg % ((unsigned)BN_num_bits(fa) + 8));
        ok = BN_is_bit_set(fa, bit) ? BN_clear_bit(fa, bit) : BN_set_bit(fa, bit);
        break;
    }
    case ED_SWAP:
        BN_swap(fa, fb);
        x->edited[b] = 1;
        break;
    case ED_ZERO:
        BN_zero(fa);
        break;
    case ED_ADD_SMALL: {
        const BN_ULONG w = arg & 0xff;
        if (!(arg & 0x100)) {
            ok = BN_add_word(fa, w);
        } else if (BN_num_bits(fa) > 8 || BN_get_word(fa) >= w) {
            ok = BN_sub_word(fa, w);
        } else {
            BN_zero(fa);
        }
        break;
    }
    case ED_COPY:
        ok = BN_copy(fa, fb) != NULL;
        break;
    case ED_PAD:
        x->pad[a] = arg % 64;
        break;
    case ED_N:
        ok = BN_mul(f[MBT_RSA_N], f[MBT_RSA_P], f[MBT_RSA_Q], ctx);
        x->edited[MBT_RSA_N] = 1;
        break;
    case ED_CRT:
        recompute_crt(&x->k, ctx);
        x->edited[MBT_RSA_DP] = x->edited[MBT_RSA_DQ] = x->edited[MBT_RSA_QINV] = 1;
        break;
    case ED_ADD:
        ok = BN_add(fa, fa, fb);
        break;
    case ED_SET:
        ok = BN_set_word(fa, arg);
        break;
    case ED_SWAP_PQ:
        BN_swap(f[MBT_RSA_P], f[MBT_RSA_Q]);
        BN_swap(f[MBT_RSA_DP], f[MBT_RSA_DQ]);
        set_inverse(f[MBT_RSA_QINV], f[MBT_RSA_Q], f[MBT_RSA_P], ctx);
        x->edited[MBT_RSA_P] = x->edited[MBT_RSA_Q] = x->edited[MBT_RSA_DP] = 1;
        x->edited[MBT_RSA_DQ] = x->edited[MBT_RSA_QINV] = 1;
        break;
    case ED_SUB:
        ok = BN_sub(fa, fa, fb);
        BN_set_negative(fa, 0);
        break;
    case ED_SHIFT:
        ok = (arg & 1) ? BN_lshift1(fa, fa) : BN_rshift1(fa, fa);
        break;
    case ED_NULL:
        x->null[a] = 1;
        break;
    case ED_NUM:
        break;
    }
    FZ_CHECK(ok == 1, "edit %u", op % ED_NUM);
    x->edited[a] = 1;
    BN_CTX_end(ctx);
}

/* ------------------------------------------------------------- one input */

/* encode: field i as the bytes given to mbc_rsa_priv_key_new (malloc'ed,
 * exactly *len bytes). */
static uint8_t *encode(const struct key_in *x, unsigned i, size_t *len)
{
    if (!x->edited[i]) {
        *len = x->raw_len[i];
        uint8_t *b = fz_alloc(*len);
        memcpy(b, x->raw[i], *len);
        return b;
    }
    const size_t n = (size_t)BN_num_bytes(x->k.f[i]);
    *len = x->pad[i] + n;
    uint8_t *b = fz_alloc(*len);
    fz_bn_be(x->k.f[i], b, *len);
    return b;
}

/* create: mbc_rsa_priv_key_new on x; returns the key or NULL. */
static mbc_rsa_priv_key *create(const struct key_in *x, unsigned nulls, uint8_t *bytes[],
                                size_t lens[])
{
    mbt_rsa_parts given; /* pointers into bytes, or NULL */
    for (unsigned i = 0; i < NUM_FIELDS; i++) {
        bytes[i] = encode(x, i, &lens[i]);
        given.c[i] = x->null[i] ? NULL : bytes[i];
        given.len[i] = lens[i];
    }
    const mbc_rsa_priv_components c = mbt_rsa_components(&given);
    fz_errs errs = key_errs(&x->k);
    for (unsigned i = 0; i < NUM_FIELDS; i++) {
        errs |= x->null[i] ? FZ_ERR(MBC_ERR_NULL_PARAM) : 0;
    }
    if (nulls != 0) {
        errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
    }
    const char *broken = crt_broken(&x->k);
    const fz_errs newer = broken != NULL ? FZ_NEWER_ERRS : 0;

    mbc_rsa_priv_key *key = (mbc_rsa_priv_key *)&errs; /* non-NULL: must become NULL */
    const mbc_err err = mbc_rsa_priv_key_new(nulls == 1 ? NULL : &key, nulls == 2 ? NULL : &c);
    if (err == MBC_OK) {
        fz_expect("mbc_rsa_priv_key_new", err, errs);
        fz_count(broken != NULL ? "key accepted, a CRT rule broken" : "key accepted");
        return key;
    }
    fz_count("key refused");
    FZ_CHECK(nulls == 1 || key == NULL, "mbc_rsa_priv_key_new: *key not NULL on error");
    fz_expect("mbc_rsa_priv_key_new", err, errs | newer);
    return NULL;
}

static void private_op(const struct key_in *x, mbc_rsa_priv_key *key, struct fz_in *in)
{
    const int bits = BN_num_bits(x->k.f[MBT_RSA_N]);
    FZ_CHECK(mbc_rsa_priv_key_bits(key) == (unsigned)bits, "key bits %u, n has %d",
             mbc_rsa_priv_key_bits(key), bits);
    const size_t len = (size_t)bits / 8;
    uint8_t *msg = fz_dup(in, len), *out = fz_alloc(len), *want = fz_alloc(len);
    memset(out, CANARY, len);
    const mbc_err err = mbc_rsa_private_crt(out, msg, key);
    BN_CTX *ctx = fz_bn_ctx();
    BN_CTX_start(ctx);
    BIGNUM *m = BN_CTX_get(ctx), *back = BN_CTX_get(ctx), *c = fz_bn(msg, len);
    FZ_CHECK(back != NULL, "BN_CTX_get");
    if (BN_cmp(c, x->k.f[MBT_RSA_N]) >= 0) {
        fz_count("in >= n");
        fz_expect("mbc_rsa_private_crt(in >= n)", err, FZ_ERR(MBC_ERR_BAD_PARAM));
        FZ_CHECK(fz_all(out, len, 0), "out not zeroed for in >= n");
    } else {
        crt_result(m, &x->k, c);
        FZ_CHECK(BN_mod_exp(back, m, x->k.f[MBT_RSA_E], x->k.f[MBT_RSA_N], ctx) == 1, "BN_mod_exp");
        if (BN_cmp(back, c) == 0) {
            fz_count("result OK");
            fz_expect("mbc_rsa_private_crt", err, 0);
            fz_bn_be(m, want, len);
            fz_expect_same("the CRT result", out, want, len);
        } else {
            fz_count("result MBC_ERR_FAULT");
            fz_expect("mbc_rsa_private_crt (result fails the check with e)", err,
                      FZ_ERR(MBC_ERR_FAULT));
            FZ_CHECK(fz_all(out, len, 0), "out not zeroed on MBC_ERR_FAULT");
        }
    }
    BN_free(c);
    BN_CTX_end(ctx);
    free(msg);
    free(out);
    free(want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in = {data, size};
    fz_use_impl(MBC_ALG_RSA, fz_u8(&in));
    const unsigned b1 = fz_u8(&in), nulls = b1 & 3 ? (b1 & 3) % 3 : 0, num_edits = b1 >> 2;
    struct key_in x;
    memset(&x, 0, sizeof(x));
    uint8_t *raw[NUM_FIELDS];
    for (unsigned i = 0; i < NUM_FIELDS; i++) {
        x.raw_len[i] = fz_u16(&in) % FIELD_MAX;
        raw[i] = fz_dup(&in, x.raw_len[i]);
        x.raw[i] = raw[i];
        x.k.f[i] = fz_bn(raw[i], x.raw_len[i]);
    }
    for (unsigned i = 0; i < num_edits; i++) {
        const unsigned op = fz_u8(&in), field = fz_u8(&in);
        edit(&x, op, field, fz_u16(&in));
    }
    uint8_t *bytes[NUM_FIELDS];
    size_t lens[NUM_FIELDS];
    mbc_rsa_priv_key *key = create(&x, nulls, bytes, lens);
    if (key != NULL) {
        private_op(&x, key, &in);
        mbc_rsa_priv_key_free(key);
    }
    for (unsigned i = 0; i < NUM_FIELDS; i++) {
        BN_clear_free(x.k.f[i]);
        free(raw[i]);
        free(bytes[i]);
    }
    return 0;
}

/* ------------------------------------------------------------------- seeds */

/* The edit lists of the seeds, each applied to every seed key. */
static const struct {
    unsigned num;
    uint8_t edits[8]; /* op, field, argument (u16) */
} seed_edits[] = {
    {0, {0}},                                                 /* the key as it is */
    {1, {ED_SWAP_PQ, 0, 0, 0}},                               /* p < q, still valid */
    {1, {ED_SWAP, MBT_RSA_P, MBT_RSA_Q, 0}},                  /* p, q swapped, old CRT values */
    {1, {ED_ZERO, MBT_RSA_DP, 0, 0}},                         /* dp = 0 */
    {2, {ED_COPY, MBT_RSA_P, MBT_RSA_Q, 0, ED_N, 0, 0, 0}},   /* p == q, n = q^2 */
    {1, {ED_ADD_SMALL, MBT_RSA_E, 2, 0}},                     /* a wrong e */
    {1, {ED_FLIP, MBT_RSA_QINV, 5, 0}},                       /* a wrong qinv */
    {1, {ED_ADD, MBT_RSA_DP, MBT_RSA_P, 0}},                  /* dp >= p */
    {2, {ED_PAD, MBT_RSA_N, 3, 0, ED_PAD, MBT_RSA_DQ, 9, 0}}, /* leading zero bytes */
    {1, {ED_NULL, MBT_RSA_QINV, 0, 0}},                       /* a NULL field */
    {2, {ED_SET, MBT_RSA_E, 3, 0, ED_CRT, 0, 0, 0}},          /* e = 3, CRT values recomputed */
    {1, {ED_FLIP, MBT_RSA_P, 0, 0}},                          /* p even */
};

static void write_seeds(const char *dir)
{
    unsigned count = 0;
    uint8_t msg[FZ_RSA_MAX_BYTES];
    for (unsigned s = 0; s < FZ_RSA_NUM_SIZES; s++) {
        mbt_rsa_parts parts;
        fz_seed_key(s, &parts);
        const size_t len = parts.len[MBT_RSA_N];
        for (size_t j = 0; j < sizeof(seed_edits) / sizeof(seed_edits[0]); j++) {
            for (unsigned impl = 0; impl < fz_num_impls(MBC_ALG_RSA); impl++) {
                struct fz_out o = {.len = 0};
                fz_put_u8(&o, impl);
                fz_put_u8(&o, seed_edits[j].num << 2);
                for (unsigned i = 0; i < NUM_FIELDS; i++) {
                    fz_put_u16(&o, (unsigned)parts.len[i]);
                    fz_put(&o, parts.c[i], parts.len[i]);
                }
                fz_put(&o, seed_edits[j].edits, 4 * seed_edits[j].num);
                /* inputs: random below n, n - 1, 0 */
                fz_seed_rand(msg, len);
                msg[0] = (uint8_t)(msg[0] % parts.c[MBT_RSA_N][0]);
                if (j % 3 == 1) {
                    memcpy(msg, parts.c[MBT_RSA_N], len);
                    msg[len - 1] ^= 1;
                } else if (j % 3 == 2) {
                    memset(msg, 0, len);
                }
                fz_put(&o, msg, len);
                char name[64];
                snprintf(name, sizeof(name), "seed-%03u", count++);
                fz_seed_write(dir, name, &o);
            }
        }
    }
}

const struct fz_target fz_target = {"fuzz_rsa_priv", NULL, write_seeds};
