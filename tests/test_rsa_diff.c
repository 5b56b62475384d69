/*
 * test_rsa_diff.c - raw RSA (no padding) differential tests of mbcrypto
 * against OpenSSL's libcrypto, on every implementation:
 *  - random inputs under random keys of 2048, 3072 and 4096 bits (e = 3, a
 *    random odd 64-bit e, a random odd e above 2^31, 65537), the keys of one
 *    size mixed across the 8 lanes of every mbc_rsa_private_crt_mb8 and
 *    mbc_rsa_public_mb8 call;
 *  - carry-stress inputs: 0, 1, 2, n-1, n-2, (n-1)/2, 2^(bits-1), 52-bit
 *    digits all ones below n, long runs of 0xFF and 0x00 bytes;
 *  - the single-request calls mbc_rsa_private_crt and mbc_rsa_public;
 *  - "c" against "ifma" on fresh random inputs, byte for byte (on the other
 *    inputs both already match OpenSSL).
 * OpenSSL generates the keys once per process and computes the reference
 * results once per input set (EVP_PKEY_encrypt / EVP_PKEY_decrypt with
 * RSA_NO_PADDING); every implementation is checked against the same sets.
 * MBC_TEST_SOAK=1 runs 20 times more random operations, MBC_TEST_QUICK=1
 * (the sanitizer builds) 16 times fewer (mbt_scale).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "ossl_rsa.h"
#include "rsa/rsa_kern.h"
#include "test_util.h"

#define DIFF_MAX_BYTES 512 /* 4096-bit modulus */
#define DIFF_MAX_KEYS 6
#define DIFF_BATCHES 125   /* random batches of 8 lanes per size (mbt_scale) */
#define DIFF_SINGLE 2      /* single-request ops taken from each input set */
#define DIFF_CROSS 4       /* fresh random batches per size in the c/ifma test */

/* diff_key: one OpenSSL key and the same key in mbcrypto. */
typedef struct diff_key {
    EVP_PKEY *pkey;
    EVP_PKEY_CTX *dec; /* OpenSSL private op, RSA_NO_PADDING */
    EVP_PKEY_CTX *enc; /* OpenSSL public op, RSA_NO_PADDING */
    mbc_rsa_priv_key *priv;
    mbc_rsa_pub_key *pub;
    uint64_t e;
    uint8_t n[DIFF_MAX_BYTES]; /* bits/8 bytes */
} diff_key;

/* diff_set: count inputs, each with its key and OpenSSL's results ref[1] of
 * the private and ref[0] of the public op (count * bits/8 bytes each). */
typedef struct diff_set {
    int ready;
    size_t count;
    unsigned *key;
    uint8_t *in, *ref[2];
} diff_set;

/* diff_size: the keys and the cached input sets of one modulus size. */
typedef struct diff_size {
    unsigned bits;
    unsigned nkeys;
    unsigned ready; /* keys generated so far */
    diff_key keys[DIFF_MAX_KEYS];
    diff_set random, carry;
} diff_size;

static diff_size sizes[] = {
    {.bits = 2048, .nkeys = 6},
    {.bits = 3072, .nkeys = 4},
    {.bits = 4096, .nkeys = 3},
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void ossl_fail(const char *what)
{
    fail_msg("OpenSSL %s failed: %s", what, ERR_reason_error_string(ERR_get_error()));
}

static void expect_ok(mbc_err err, const char *what)
{
    if (err != MBC_OK) {
        fail_msg("%s: %s", what, mbc_err_str(err));
    }
}

static void print_hex(const char *label, const uint8_t *x, size_t len)
{
    print_message("  %s = ", label);
    for (size_t i = 0; i < len; i++) {
        print_message("%02x", x[i]);
    }
    print_message("\n");
}

/* report: prints everything needed to replay a failed operation (want and
 * got may be NULL). */
static void report(const diff_key *k, const uint8_t *in, const uint8_t *want,
                   const uint8_t *got, size_t bytes)
{
    print_message("failing operation on impl %s:\n", mbc_impl_name(MBC_ALG_RSA));
    for (int i = 0; i < MBT_RSA_NUM_PARTS; i++) {
        const char *name = mbt_ossl_rsa_part_name(i);
        BIGNUM *bn = NULL;
        if (EVP_PKEY_get_bn_param(k->pkey, name, &bn) == 1) {
            char *hex = BN_bn2hex(bn);
            print_message("  %s = %s\n", name, hex ? hex : "?");
            OPENSSL_free(hex);
        }
        BN_free(bn);
    }
    print_hex("in", in, bytes);
    if (want != NULL) {
        print_hex("expected", want, bytes);
    }
    if (got != NULL) {
        print_hex("got", got, bytes);
    }
}

/* key_exponent: the public exponent of key number idx of a size. */
static uint64_t key_exponent(unsigned idx)
{
    switch (idx) {
    case 0:
        return 3;
    case 1:
        return mbt_rand() | 1ull << 63 | 1u; /* 64-bit */
    case 3:
        return 1ull << 31 | (mbt_rand() & 0x7fffffffu) | 1u;
    default:
        return 65537;
    }
}

static void key_free(diff_key *k)
{
    EVP_PKEY_CTX_free(k->dec);
    EVP_PKEY_CTX_free(k->enc);
    EVP_PKEY_free(k->pkey);
    mbc_rsa_priv_key_free(k->priv);
    mbc_rsa_pub_key_free(k->pub);
    memset(k, 0, sizeof(*k));
}

/* op_ctx: an OpenSSL raw (RSA_NO_PADDING) private (decrypt) or public
 * (encrypt) context of pkey. */
static EVP_PKEY_CTX *op_ctx(EVP_PKEY *pkey, int priv)
{
    EVP_PKEY_CTX *ctx = mbt_ossl_rsa_raw_ctx(pkey, priv);
    if (ctx == NULL) {
        ossl_fail("raw RSA context setup");
    }
    return ctx;
}

/* key_gen: an OpenSSL key of bits with public exponent e, and its mbcrypto
 * private and public keys built from the extracted components. */
static void key_gen(diff_key *k, unsigned bits, uint64_t e)
{
    key_free(k);
    k->e = e;
    k->pkey = mbt_ossl_rsa_keygen(bits, e);
    if (k->pkey == NULL) {
        ossl_fail("RSA key generation");
    }
    k->dec = op_ctx(k->pkey, 1);
    k->enc = op_ctx(k->pkey, 0);

    mbt_rsa_parts parts;
    if (mbt_ossl_rsa_get_parts(&parts, k->pkey, 0) != 0) {
        ossl_fail("reading the RSA key components");
    }
    assert_int_equal(parts.len[MBT_RSA_N], bits / 8);
    assert_true(bits / 8 <= DIFF_MAX_BYTES);
    memcpy(k->n, parts.c[MBT_RSA_N], bits / 8);
    expect_ok(mbt_rsa_keys_new(&k->priv, &k->pub, &parts), "mbt_rsa_keys_new");
    mbt_rsa_parts_free(&parts);
}

/* get_size: sizes[i] with its keys, generated on first use. */
static diff_size *get_size(size_t i)
{
    diff_size *sz = &sizes[i];
    if (sz->ready == sz->nkeys) {
        return sz;
    }
    double t0 = now();
    for (; sz->ready < sz->nkeys; sz->ready++) {
        key_gen(&sz->keys[sz->ready], sz->bits, key_exponent(sz->ready));
    }
    print_message("rsa%u: %u OpenSSL keys generated in %.1f s, e =", sz->bits, sz->nkeys,
                  now() - t0);
    for (unsigned k = 0; k < sz->nkeys; k++) {
        print_message(" 0x%llx", (unsigned long long)sz->keys[k].e);
    }
    print_message("\n");
    return sz;
}

/* ref_op: OpenSSL's raw private (priv = 1) or public op of k on in. */
static void ref_op(const diff_key *k, int priv, const uint8_t *in, size_t bytes, uint8_t *out)
{
    if (mbt_ossl_rsa_raw_op(priv ? k->dec : k->enc, priv, out, in, bytes) != 0) {
        ossl_fail(priv ? "raw private op" : "raw public op");
    }
}

static void set_free(diff_set *s)
{
    free(s->key);
    free(s->in);
    free(s->ref[0]);
    free(s->ref[1]);
    memset(s, 0, sizeof(*s));
}

/* set_alloc: room for count inputs of bytes each; the caller fills key and
 * in, then set_finish computes the references. */
static void set_alloc(diff_set *s, size_t count, size_t bytes)
{
    set_free(s);
    s->count = count;
    s->key = calloc(count, sizeof(*s->key));
    s->in = malloc(count * bytes);
    s->ref[0] = malloc(count * bytes);
    s->ref[1] = malloc(count * bytes);
    assert_true(s->key != NULL && s->in != NULL && s->ref[0] != NULL && s->ref[1] != NULL);
}

static void set_finish(const diff_size *sz, diff_set *s)
{
    const size_t bytes = sz->bits / 8;
    for (size_t i = 0; i < s->count; i++) {
        const diff_key *k = &sz->keys[s->key[i]];
        assert_true(memcmp(s->in + i * bytes, k->n, bytes) < 0);
        for (int priv = 1; priv >= 0; priv--) {
            ref_op(k, priv, s->in + i * bytes, bytes, s->ref[priv] + i * bytes);
        }
    }
    s->ready = 1;
}

/* rand_below: a uniformly random x < n, both bytes long. */
static void rand_below(uint8_t *x, const uint8_t *n, size_t bytes)
{
    do {
        mbt_rand_bytes(x, bytes);
    } while (memcmp(x, n, bytes) >= 0);
}

/* random_set: random inputs under random keys of sz. */
static const diff_set *random_set(diff_size *sz)
{
    diff_set *s = &sz->random;
    if (!s->ready) {
        const size_t bytes = sz->bits / 8;
        double t0 = now();
        set_alloc(s, mbt_scale((size_t)DIFF_BATCHES * MBC_LANES), bytes);
        for (size_t i = 0; i < s->count; i++) {
            s->key[i] = (unsigned)(mbt_rand() % sz->nkeys);
            rand_below(s->in + i * bytes, sz->keys[s->key[i]].n, bytes);
        }
        set_finish(sz, s);
        print_message("rsa%u: OpenSSL reference of %zu random inputs in %.1f s\n", sz->bits,
                      s->count, now() - t0);
    }
    return s;
}

/* Byte-run patterns: bytes alternate between 0xFF and 0x00 every run bytes
 * (run 0: half the input), starting with first. */
static const struct {
    unsigned run;
    uint8_t first;
} byte_runs[] = {{DIFF_MAX_BYTES, 0xFF}, {0, 0x00}, {0, 0xFF}, {64, 0xFF},
                 {64, 0x00}, {13, 0xFF}, {7, 0x00}, {1, 0xFF}};
#define N_FIXED 13 /* inputs of carry_input computed with BIGNUM arithmetic */
#define N_CARRY (N_FIXED + sizeof(byte_runs) / sizeof(byte_runs[0]))

/* carry_input: carry-stress input number idx (< N_CARRY) below the modulus
 * n (bytes long) into x. */
static void carry_input(uint8_t *x, const uint8_t *n, size_t bytes, unsigned idx)
{
    if (idx >= N_FIXED) {
        const unsigned run = byte_runs[idx - N_FIXED].run ? byte_runs[idx - N_FIXED].run
                                                          : (unsigned)bytes / 2;
        const uint8_t first = byte_runs[idx - N_FIXED].first;
        for (size_t i = 0; i < bytes; i++) {
            x[i] = (i / run) % 2 == 0 ? first : (uint8_t)~first;
        }
        if (x[0] >= n[0]) {
            x[0] = (uint8_t)(n[0] - 1); /* keeps x < n */
        }
        return;
    }
    const int bits = (int)bytes * 8, ndig = (bits + 51) / 52;
    const int dig[4] = {1, 2, ndig / 2, ndig - 1};
    BIGNUM *v = BN_bin2bn(n, (int)bytes, NULL);
    assert_non_null(v);
    int ok = 1;
    if (idx <= 2) { /* 0, 1, 2 */
        ok = BN_set_word(v, idx);
    } else if (idx <= 5) { /* n-1, n-2, (n-1)/2 */
        ok = BN_sub_word(v, idx == 4 ? 2 : 1) && (idx != 5 || BN_rshift1(v, v));
    } else if (idx <= 7) { /* 2^(bits-1), 2^(bits-1)-1 */
        BN_zero(v);
        ok = BN_set_bit(v, bits - 1) && (idx == 6 || BN_sub_word(v, 1));
    } else if (idx <= 11) { /* n with its low j digits all ones, digit j one less */
        int sh = 52 * dig[idx - 8];
        ok = BN_rshift(v, v, sh) && BN_lshift(v, v, sh) && BN_sub_word(v, 1);
    } else { /* every digit but the top one all ones */
        BN_zero(v);
        ok = BN_set_bit(v, 52 * (ndig - 1)) && BN_sub_word(v, 1);
    }
    ok = ok && BN_bn2binpad(v, x, (int)bytes) == (int)bytes;
    BN_free(v);
    assert_true(ok);
}

/* carry_set: every carry-stress input under every key of sz, input-major
 * so that each batch mixes keys. */
static const diff_set *carry_set(diff_size *sz)
{
    diff_set *s = &sz->carry;
    if (!s->ready) {
        const size_t bytes = sz->bits / 8;
        set_alloc(s, N_CARRY * sz->nkeys, bytes);
        for (size_t i = 0; i < s->count; i++) {
            s->key[i] = (unsigned)(i % sz->nkeys);
            carry_input(s->in + i * bytes, sz->keys[s->key[i]].n, bytes,
                        (unsigned)(i / sz->nkeys));
        }
        set_finish(sz, s);
    }
    return s;
}

/* diff_batch: up to 8 lanes (key, input); lanes outside mask are NULL. */
typedef struct diff_batch {
    unsigned mask;
    const diff_key *key[MBC_LANES];
    const uint8_t *in[MBC_LANES];
} diff_batch;

/* set_batch: the lanes first .. first+7 of s (fewer at its end). */
static diff_batch set_batch(const diff_size *sz, const diff_set *s, size_t first)
{
    diff_batch b = {0};
    for (unsigned l = 0; l < MBC_LANES && first + l < s->count; l++) {
        b.mask |= 1u << l;
        b.key[l] = &sz->keys[s->key[first + l]];
        b.in[l] = s->in + (first + l) * (sz->bits / 8);
    }
    return b;
}

/* run_batch: b through mbc_rsa_private_crt_mb8 (priv = 1) or
 * mbc_rsa_public_mb8; the status must be OK on every lane of b. */
static void run_batch(const diff_batch *b, unsigned bits, int priv,
                      uint8_t out[MBC_LANES][DIFF_MAX_BYTES])
{
    uint8_t *o[MBC_LANES];
    const mbc_rsa_priv_key *pk[MBC_LANES];
    const mbc_rsa_pub_key *uk[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        o[l] = out[l];
        pk[l] = b->key[l] ? b->key[l]->priv : NULL;
        uk[l] = b->key[l] ? b->key[l]->pub : NULL;
    }
    mbc_status st = priv ? mbc_rsa_private_crt_mb8(o, b->in, pk, bits, b->mask)
                         : mbc_rsa_public_mb8(o, b->in, uk, bits, b->mask);
    for (unsigned l = 0; l < MBC_LANES; l++) {
        unsigned want = ((b->mask >> l) & 1u) ? MBC_LANE_OK : MBC_LANE_EMPTY;
        if (mbc_lane_code(st, l) != want) {
            if (want == MBC_LANE_OK) {
                report(b->key[l], b->in[l], NULL, NULL, bits / 8);
            }
            fail_msg("rsa%u %s lane %u: %s, expected %s", bits, priv ? "private" : "public", l,
                     mbc_lane_code_str(mbc_lane_code(st, l)), mbc_lane_code_str(want));
        }
    }
}

/* check_set: every input of s through both batch calls; each lane's output
 * must equal OpenSSL's. */
static void check_set(const diff_size *sz, const diff_set *s)
{
    const size_t bytes = sz->bits / 8;
    uint8_t out[MBC_LANES][DIFF_MAX_BYTES];
    for (size_t first = 0; first < s->count; first += MBC_LANES) {
        const diff_batch b = set_batch(sz, s, first);
        for (int priv = 1; priv >= 0; priv--) {
            const uint8_t *ref = s->ref[priv];
            run_batch(&b, sz->bits, priv, out);
            for (unsigned l = 0; l < MBC_LANES; l++) {
                const uint8_t *want = ref + (first + l) * bytes;
                if (((b.mask >> l) & 1u) && memcmp(out[l], want, bytes) != 0) {
                    report(b.key[l], b.in[l], want, out[l], bytes);
                    fail_msg("rsa%u %s op, input %zu, lane %u: differs from OpenSSL", sz->bits,
                             priv ? "private" : "public", first + l, l);
                }
            }
        }
    }
}

static void test_random(void **state)
{
    const char *impl = mbt_use_impl(state);
    for (size_t i = 0; i < NSIZES; i++) {
        diff_size *sz = get_size(i);
        const diff_set *s = random_set(sz);
        double t0 = now();
        check_set(sz, s);
        print_message("%s rsa%u: %zu private + %zu public random ops (%u keys mixed per "
                      "batch) match OpenSSL, %.1f s\n",
                      impl, sz->bits, s->count, s->count, sz->nkeys, now() - t0);
    }
}

static void test_carry(void **state)
{
    const char *impl = mbt_use_impl(state);
    for (size_t i = 0; i < NSIZES; i++) {
        diff_size *sz = get_size(i);
        const diff_set *s = carry_set(sz);
        check_set(sz, s);
        print_message("%s rsa%u: %zu private + %zu public carry-stress ops match OpenSSL\n",
                      impl, sz->bits, s->count, s->count);
    }
}

/* check_single: DIFF_SINGLE inputs spread over s through the single calls. */
static size_t check_single(const diff_size *sz, const diff_set *s)
{
    const size_t bytes = sz->bits / 8, step = s->count / DIFF_SINGLE + 1;
    uint8_t out[DIFF_MAX_BYTES];
    size_t ops = 0;
    for (size_t i = 0; i < s->count; i += step, ops++) {
        const diff_key *k = &sz->keys[s->key[i]];
        const uint8_t *in = s->in + i * bytes;
        for (int priv = 1; priv >= 0; priv--) {
            const uint8_t *want = s->ref[priv] + i * bytes;
            expect_ok(priv ? mbc_rsa_private_crt(out, in, k->priv)
                           : mbc_rsa_public(out, in, k->pub),
                      priv ? "mbc_rsa_private_crt" : "mbc_rsa_public");
            if (memcmp(out, want, bytes) != 0) {
                report(k, in, want, out, bytes);
                fail_msg("rsa%u single %s op differs from OpenSSL", sz->bits,
                         priv ? "private" : "public");
            }
        }
    }
    return ops;
}

static void test_single(void **state)
{
    const char *impl = mbt_use_impl(state);
    for (size_t i = 0; i < NSIZES; i++) {
        diff_size *sz = get_size(i);
#if MBC_HAVE_IFMA
        const unsigned long h2 = mbc_rsa_kern_hits_h2, h1 = mbc_rsa_kern_hits_h1;
#endif
        size_t ops = check_single(sz, carry_set(sz)) + check_single(sz, random_set(sz));
#if MBC_HAVE_IFMA
        /* on ifma, each lone private op ran the horizontal halves
         * (mbc_rsa_crt_kern_h2_ifma) and its fault check, and each lone public
         * op (mbc_rsa_pub_kern_h1_ifma), the horizontal public exponentiation;
         * the c path never does */
        const int want_h = strcmp(impl, "ifma") == 0;
        assert_int_equal(mbc_rsa_kern_hits_h2 - h2, want_h ? ops : 0);
        assert_int_equal(mbc_rsa_kern_hits_h1 - h1, want_h ? 2 * ops : 0);
#endif
        print_message("%s rsa%u: %zu private + %zu public single-request ops match OpenSSL\n",
                      impl, sz->bits, ops, ops);
    }
}

/* cross_batch: b on "c" and on "ifma", both ops; status and output of every
 * lane must be identical. */
static void cross_batch(const diff_batch *b, unsigned bits)
{
    uint8_t out_c[MBC_LANES][DIFF_MAX_BYTES], out_ifma[MBC_LANES][DIFF_MAX_BYTES];
    for (int priv = 1; priv >= 0; priv--) {
        mbc_cpu_restrict(0);
        assert_string_equal(mbc_impl_name(MBC_ALG_RSA), "c");
        run_batch(b, bits, priv, out_c);
        mbc_cpu_restrict(~0ull);
        assert_string_equal(mbc_impl_name(MBC_ALG_RSA), "ifma");
        run_batch(b, bits, priv, out_ifma);
        for (unsigned l = 0; l < MBC_LANES; l++) {
            if (((b->mask >> l) & 1u) && memcmp(out_c[l], out_ifma[l], bits / 8) != 0) {
                report(b->key[l], b->in[l], out_c[l], out_ifma[l], bits / 8);
                fail_msg("rsa%u %s lane %u: ifma differs from c", bits,
                         priv ? "private" : "public", l);
            }
        }
    }
}

static void test_cross_impl(void **state)
{
    (void)state;
    if (!mbt_impl_available("ifma")) {
        print_message("SKIP c vs ifma: this CPU (or build) lacks AVX-512 IFMA\n");
        skip();
    }
    for (size_t i = 0; i < NSIZES; i++) {
        diff_size *sz = get_size(i);
        const size_t bytes = sz->bits / 8;
        uint8_t in[MBC_LANES][DIFF_MAX_BYTES];
        for (unsigned r = 0; r < DIFF_CROSS; r++) {
            diff_batch b = {.mask = MBC_LANE_MASK_ALL};
            for (unsigned l = 0; l < MBC_LANES; l++) {
                b.key[l] = &sz->keys[mbt_rand() % sz->nkeys];
                rand_below(in[l], b.key[l]->n, bytes);
                b.in[l] = in[l];
            }
            cross_batch(&b, sz->bits);
        }
        print_message("rsa%u: %u private + %u public random ops identical on c and ifma\n",
                      sz->bits, DIFF_CROSS * MBC_LANES, DIFF_CROSS * MBC_LANES);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MBT_IMPL_TESTS(test_random),
        MBT_IMPL_TESTS(test_carry),
        MBT_IMPL_TESTS(test_single),
        cmocka_unit_test(test_cross_impl),
    };
    int failed = mbt_run("rsa_diff", tests);
    for (size_t i = 0; i < NSIZES; i++) {
        for (unsigned k = 0; k < DIFF_MAX_KEYS; k++) {
            key_free(&sizes[i].keys[k]);
        }
        set_free(&sizes[i].random);
        set_free(&sizes[i].carry);
    }
    return failed;
}
