/*
 * mbc_bench.c - throughput of mbcrypto next to OpenSSL, in one run.
 *
 * What it measures: for every selected benchmark case (e.g. rsa2048) and
 * each of its operations (e.g. private, public), the operations per second
 * of mbcrypto and of a peer (OpenSSL 3.0 libcrypto), and their ratio.
 *
 * How: a case's setup builds the keys and inputs once (RSA keys come from
 * OpenSSL's key generator) and checks that mbcrypto and the peer compute the
 * same results before anything is timed. A measurement then calls one run
 * function repeatedly, reading CLOCK_MONOTONIC after every call, until
 * --seconds have elapsed; ops/s = operations done / elapsed time. Each
 * mbcrypto call does 8 operations (all 8 lanes active); each peer call does
 * one, the way an application without batching would. A short warm-up
 * precedes every measurement, and with --reps N the median of N measurements
 * is reported. Results are single-threaded and most stable when the process
 * is pinned to one core (taskset -c 1 mbc_bench ...).
 *
 * New algorithms slot in as one more row in the cases[] table: a name, a
 * setup/teardown pair and a list of operations, each with an mbcrypto and a
 * peer run function.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#if MBT_HAVE_IPSEC_MB
#include <intel-ipsec-mb.h>
#endif

#include "mbcrypto.h"

/* ------------------------------------------------------------------------ */
/* The case table                                                            */
/* ------------------------------------------------------------------------ */

/* bench_fn: one call of the measured operation; returns operations done. */
typedef unsigned (*bench_fn)(void *state);

/* bench_op: one operation of a case, measured once per implementation. */
typedef struct bench_op {
    const char *label;  /* "private", "public" */
    bench_fn run_mbc;   /* mbcrypto: one batch call */
    bench_fn run_peer;  /* peer: one call */
    bench_fn run_peer2; /* second peer (intel-ipsec-mb) or NULL */
} bench_op;

/*
 * bench_case: one selectable benchmark. setup(param) returns the state every
 * run function of ops gets, after checking mbcrypto against the peer; it
 * exits the program on any failure. teardown(state) frees it.
 */
typedef struct bench_case {
    const char *name;
    unsigned param;
    void *(*setup)(unsigned param);
    void (*teardown)(void *state);
    const bench_op *ops;
    size_t num_ops;
    size_t bytes;   /* bytes per operation: rows in GB/s; 0: rows in ops/s */
    int in_default; /* part of the default suite (no case named) */
} bench_case;

/* bench_opts: the command line. */
typedef struct bench_opts {
    double seconds;
    unsigned reps;
    int best; /* --best: report the best of the reps instead of the median */
} bench_opts;

/* die: reports a fatal error (with OpenSSL's error queue) and exits 1. */
static void die(const char *what)
{
    fprintf(stderr, "mbc_bench: FATAL: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

/* check_status: exits unless every lane of st is MBC_LANE_OK. */
static void check_status(mbc_status st, const char *what)
{
    if (mbc_status_ok_mask(st) == MBC_LANE_MASK_ALL) {
        return;
    }
    fprintf(stderr, "mbc_bench: FATAL: %s returned status 0x%08" PRIx32 ":", what, st);
    for (unsigned lane = 0; lane < MBC_LANES; lane++) {
        fprintf(stderr, " %u=%s", lane, mbc_lane_code_str(mbc_lane_code(st, lane)));
    }
    fprintf(stderr, "\n");
    exit(1);
}

/* ------------------------------------------------------------------------ */
/* RSA                                                                       */
/* ------------------------------------------------------------------------ */

#define RSA_MAX_BYTES 512

typedef struct rsa_state {
    unsigned bits;
    size_t len; /* modulus bytes */
    EVP_PKEY *pkey;
    EVP_PKEY_CTX *peer_priv; /* EVP_PKEY_decrypt, RSA_NO_PADDING */
    EVP_PKEY_CTX *peer_pub;  /* EVP_PKEY_encrypt, RSA_NO_PADDING */
    unsigned peer_next;      /* the peer cycles through the 8 inputs */
    mbc_rsa_priv_key *priv;
    mbc_rsa_pub_key *pub;
    const mbc_rsa_priv_key *priv_lanes[MBC_LANES];
    const mbc_rsa_pub_key *pub_lanes[MBC_LANES];
    const uint8_t *in_lanes[MBC_LANES];
    uint8_t *out_lanes[MBC_LANES];
    uint8_t in[MBC_LANES][RSA_MAX_BYTES];
    uint8_t out[MBC_LANES][RSA_MAX_BYTES];
    uint8_t peer_out[RSA_MAX_BYTES];
} rsa_state;

/* rsa_keygen: a fresh OpenSSL RSA key of bits bits with e = 65537. */
static EVP_PKEY *rsa_keygen(unsigned bits)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    BIGNUM *e = BN_new();
    EVP_PKEY *pkey = NULL;
    if (ctx == NULL || e == NULL || !BN_set_word(e, 65537) || EVP_PKEY_keygen_init(ctx) <= 0 ||
        EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, (int)bits) <= 0 ||
        EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx, e) <= 0 || EVP_PKEY_keygen(ctx, &pkey) <= 0) {
        die("OpenSSL RSA key generation failed");
    }
    BN_free(e);
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

/* rsa_param: the key parameter name of pkey as len big-endian bytes. */
static void rsa_param(uint8_t *buf, size_t len, const EVP_PKEY *pkey, const char *name)
{
    BIGNUM *bn = NULL;
    if (!EVP_PKEY_get_bn_param(pkey, name, &bn) || BN_bn2binpad(bn, buf, (int)len) < 0) {
        die(name);
    }
    BN_clear_free(bn);
}

/* rsa_mbc_keys: builds s->priv and s->pub from the OpenSSL key s->pkey. */
static void rsa_mbc_keys(rsa_state *s)
{
    /* Every field padded to the modulus size: leading zeros are allowed. */
    static const char *const names[7] = {
        OSSL_PKEY_PARAM_RSA_N,
        OSSL_PKEY_PARAM_RSA_E,
        OSSL_PKEY_PARAM_RSA_FACTOR1,
        OSSL_PKEY_PARAM_RSA_FACTOR2,
        OSSL_PKEY_PARAM_RSA_EXPONENT1,
        OSSL_PKEY_PARAM_RSA_EXPONENT2,
        OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
    };
    uint8_t f[7][RSA_MAX_BYTES];
    for (size_t i = 0; i < 7; i++) {
        rsa_param(f[i], s->len, s->pkey, names[i]);
    }
    const mbc_rsa_priv_components c = {
        .n = f[0],
        .n_len = s->len,
        .e = f[1],
        .e_len = s->len,
        .p = f[2],
        .p_len = s->len,
        .q = f[3],
        .q_len = s->len,
        .dp = f[4],
        .dp_len = s->len,
        .dq = f[5],
        .dq_len = s->len,
        .qinv = f[6],
        .qinv_len = s->len,
    };
    mbc_err err = mbc_rsa_priv_key_new(&s->priv, &c);
    if (err != MBC_OK) {
        die(mbc_err_str(err));
    }
    err = mbc_rsa_pub_key_new(&s->pub, f[0], s->len, f[1], s->len);
    if (err != MBC_OK) {
        die(mbc_err_str(err));
    }
    OPENSSL_cleanse(f, sizeof(f));
}

/* rsa_peer_ctx: an EVP_PKEY_CTX ready for raw decrypt or encrypt calls. */
static EVP_PKEY_CTX *rsa_peer_ctx(EVP_PKEY *pkey, int (*init)(EVP_PKEY_CTX *))
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    if (ctx == NULL || init(ctx) <= 0 || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) <= 0) {
        die("OpenSSL RSA context setup failed");
    }
    return ctx;
}

/* rsa_peer_call: one raw peer operation on input lane; result in s->peer_out. */
static void rsa_peer_call(rsa_state *s, int decrypt, unsigned lane)
{
    size_t out_len = s->len;
    int ok = decrypt ? EVP_PKEY_decrypt(s->peer_priv, s->peer_out, &out_len, s->in[lane], s->len)
                     : EVP_PKEY_encrypt(s->peer_pub, s->peer_out, &out_len, s->in[lane], s->len);
    if (ok <= 0 || out_len != s->len) {
        die("OpenSSL raw RSA operation failed");
    }
}

static unsigned rsa_mbc_private(void *state)
{
    rsa_state *s = state;
    check_status(mbc_rsa_private_crt_mb8(s->out_lanes, s->in_lanes, s->priv_lanes, s->bits,
                                         MBC_LANE_MASK_ALL),
                 "mbc_rsa_private_crt_mb8");
    return MBC_LANES;
}

static unsigned rsa_mbc_public(void *state)
{
    rsa_state *s = state;
    check_status(
        mbc_rsa_public_mb8(s->out_lanes, s->in_lanes, s->pub_lanes, s->bits, MBC_LANE_MASK_ALL),
        "mbc_rsa_public_mb8");
    return MBC_LANES;
}

static unsigned rsa_peer_private(void *state)
{
    rsa_state *s = state;
    rsa_peer_call(s, 1, s->peer_next++ % MBC_LANES);
    return 1;
}

static unsigned rsa_peer_public(void *state)
{
    rsa_state *s = state;
    rsa_peer_call(s, 0, s->peer_next++ % MBC_LANES);
    return 1;
}

/* rsa_check: one mbcrypto batch call must match the peer in every lane. */
static void rsa_check(rsa_state *s, bench_fn run_mbc, int decrypt, const char *what)
{
    run_mbc(s);
    for (unsigned lane = 0; lane < MBC_LANES; lane++) {
        rsa_peer_call(s, decrypt, lane);
        if (memcmp(s->out[lane], s->peer_out, s->len) != 0) {
            fprintf(stderr, "mbc_bench: FATAL: RSA-%u %s: lane %u differs from OpenSSL\n", s->bits,
                    what, lane);
            exit(1);
        }
    }
}

static void *rsa_setup(unsigned bits)
{
    rsa_state *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        die("out of memory");
    }
    s->bits = bits;
    s->len = bits / 8;
    fprintf(stderr, "mbc_bench: generating an RSA-%u key with OpenSSL...\n", bits);
    s->pkey = rsa_keygen(bits);
    rsa_mbc_keys(s);
    s->peer_priv = rsa_peer_ctx(s->pkey, EVP_PKEY_decrypt_init);
    s->peer_pub = rsa_peer_ctx(s->pkey, EVP_PKEY_encrypt_init);
    for (unsigned lane = 0; lane < MBC_LANES; lane++) {
        if (RAND_bytes(s->in[lane], (int)s->len) != 1) {
            die("RAND_bytes failed");
        }
        s->in[lane][0] = 0; /* below n, whose top bit is set */
        s->priv_lanes[lane] = s->priv;
        s->pub_lanes[lane] = s->pub;
        s->in_lanes[lane] = s->in[lane];
        s->out_lanes[lane] = s->out[lane];
    }
    rsa_check(s, rsa_mbc_private, 1, "private");
    rsa_check(s, rsa_mbc_public, 0, "public");
    return s;
}

static void rsa_teardown(void *state)
{
    rsa_state *s = state;
    mbc_rsa_priv_key_free(s->priv);
    mbc_rsa_pub_key_free(s->pub);
    EVP_PKEY_CTX_free(s->peer_priv);
    EVP_PKEY_CTX_free(s->peer_pub);
    EVP_PKEY_free(s->pkey);
    OPENSSL_cleanse(s, sizeof(*s));
    free(s);
}

static const bench_op rsa_ops[] = {
    {"private", rsa_mbc_private, rsa_peer_private, NULL},
    {"public", rsa_mbc_public, rsa_peer_public, NULL},
};

#define NUM_RSA_OPS (sizeof(rsa_ops) / sizeof(rsa_ops[0]))

/* ------------------------------------------------------------------------ */
/* AES-GCM                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * One operation = one one-shot seal (or open, tag checked) of a message of
 * the case's size with a 12-byte IV, no AAD and a 16-byte tag, key set up
 * once. OpenSSL: EVP with the key set once, IV, update, final and tag per
 * message. intel-ipsec-mb: its one-shot IMB_AESxxx_GCM_ENC/DEC on the
 * architecture init_mb_mgr_auto() picks. Small messages are done in runs of
 * 'batch' calls per run function (each call one complete operation), so that
 * reading the clock after each run costs the same small share to everyone.
 */
#define GCM_PARAM(bits, size) (((unsigned)(bits) << 20) | (unsigned)(size))

typedef struct gcm_state {
    unsigned bits;
    size_t len;
    unsigned batch; /* operations per run-function call */
    uint8_t key[32], iv[12], tag[16], ptag[16];
    uint8_t *pt, *ct, *out;
    mbc_gcm_key *mkey;
    EVP_CIPHER_CTX *enc, *dec;
#if MBT_HAVE_IPSEC_MB
    IMB_MGR *imb;
    struct gcm_key_data *ikey;
    struct gcm_context_data ictx;
#endif
} gcm_state;

static void gcm_mbc_seal_one(gcm_state *s)
{
    if (mbc_gcm_seal(s->mkey, s->out, s->ptag, 16, s->iv, 12, NULL, 0, s->pt, s->len) != MBC_OK) {
        die("mbc_gcm_seal failed");
    }
}

static void gcm_mbc_open_one(gcm_state *s)
{
    if (mbc_gcm_open(s->mkey, s->out, s->tag, 16, s->iv, 12, NULL, 0, s->ct, s->len) != MBC_OK) {
        die("mbc_gcm_open failed");
    }
}

static void gcm_ossl_seal_one(gcm_state *s)
{
    int n;
    if (EVP_EncryptInit_ex(s->enc, NULL, NULL, NULL, s->iv) != 1 ||
        EVP_EncryptUpdate(s->enc, s->out, &n, s->pt, (int)s->len) != 1 ||
        EVP_EncryptFinal_ex(s->enc, s->out + n, &n) != 1 ||
        EVP_CIPHER_CTX_ctrl(s->enc, EVP_CTRL_GCM_GET_TAG, 16, s->ptag) != 1) {
        die("OpenSSL GCM seal failed");
    }
}

static void gcm_ossl_open_one(gcm_state *s)
{
    int n;
    if (EVP_DecryptInit_ex(s->dec, NULL, NULL, NULL, s->iv) != 1 ||
        EVP_DecryptUpdate(s->dec, s->out, &n, s->ct, (int)s->len) != 1 ||
        EVP_CIPHER_CTX_ctrl(s->dec, EVP_CTRL_GCM_SET_TAG, 16, s->tag) != 1 ||
        EVP_DecryptFinal_ex(s->dec, s->out + n, &n) != 1) {
        die("OpenSSL GCM open failed");
    }
}

#if MBT_HAVE_IPSEC_MB
static void gcm_imb_seal_one(gcm_state *s)
{
    if (s->bits == 128) {
        IMB_AES128_GCM_ENC(s->imb, s->ikey, &s->ictx, s->out, s->pt, s->len, s->iv, NULL, 0,
                           s->ptag, 16);
    } else if (s->bits == 192) {
        IMB_AES192_GCM_ENC(s->imb, s->ikey, &s->ictx, s->out, s->pt, s->len, s->iv, NULL, 0,
                           s->ptag, 16);
    } else {
        IMB_AES256_GCM_ENC(s->imb, s->ikey, &s->ictx, s->out, s->pt, s->len, s->iv, NULL, 0,
                           s->ptag, 16);
    }
}

static void gcm_imb_open_one(gcm_state *s)
{
    if (s->bits == 128) {
        IMB_AES128_GCM_DEC(s->imb, s->ikey, &s->ictx, s->out, s->ct, s->len, s->iv, NULL, 0,
                           s->ptag, 16);
    } else if (s->bits == 192) {
        IMB_AES192_GCM_DEC(s->imb, s->ikey, &s->ictx, s->out, s->ct, s->len, s->iv, NULL, 0,
                           s->ptag, 16);
    } else {
        IMB_AES256_GCM_DEC(s->imb, s->ikey, &s->ictx, s->out, s->ct, s->len, s->iv, NULL, 0,
                           s->ptag, 16);
    }
    /* Like the others, the tag is checked (constant time). */
    if (CRYPTO_memcmp(s->ptag, s->tag, 16) != 0) {
        die("intel-ipsec-mb GCM open: tag mismatch");
    }
}
#endif

/* GCM_RUN: the run function of one operation: s->batch calls. */
#define GCM_RUN(name)                                                                  \
    static unsigned name(void *state)                                                  \
    {                                                                                  \
        gcm_state *s = state;                                                          \
        for (unsigned i = 0; i < s->batch; i++) {                                      \
            name##_one(s);                                                             \
        }                                                                              \
        return s->batch;                                                               \
    }
GCM_RUN(gcm_mbc_seal)
GCM_RUN(gcm_mbc_open)
GCM_RUN(gcm_ossl_seal)
GCM_RUN(gcm_ossl_open)
#if MBT_HAVE_IPSEC_MB
GCM_RUN(gcm_imb_seal)
GCM_RUN(gcm_imb_open)
#endif

/* gcm_check: mbcrypto, OpenSSL (and ipsec-mb) give the same ciphertext and tag. */
static void gcm_check(gcm_state *s, void (*fn)(gcm_state *), const char *who)
{
    memset(s->out, 0, s->len);
    memset(s->ptag, 0, 16);
    fn(s);
    if (memcmp(s->out, s->ct, s->len) != 0 || memcmp(s->ptag, s->tag, 16) != 0) {
        fprintf(stderr, "mbc_bench: FATAL: AES-%u-GCM %zu B: %s differs from mbcrypto\n", s->bits,
                s->len, who);
        exit(1);
    }
}

static void *gcm_setup(unsigned param)
{
    gcm_state *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        die("out of memory");
    }
    s->bits = param >> 20;
    s->len = param & 0xFFFFF;
    s->batch = s->len >= 16384 ? 1 : (unsigned)(16384 / s->len);
    size_t alloc = s->len + 64;
    s->pt = malloc(alloc);
    s->ct = malloc(alloc);
    s->out = malloc(alloc);
    if (s->pt == NULL || s->ct == NULL || s->out == NULL) {
        die("out of memory");
    }
    if (RAND_bytes(s->key, sizeof(s->key)) != 1 || RAND_bytes(s->iv, sizeof(s->iv)) != 1 ||
        RAND_bytes(s->pt, (int)s->len) != 1) {
        die("RAND_bytes failed");
    }
    mbc_err err = mbc_gcm_key_new(&s->mkey, s->key, s->bits / 8);
    if (err != MBC_OK) {
        die(mbc_err_str(err));
    }
    if (mbc_gcm_seal(s->mkey, s->ct, s->tag, 16, s->iv, 12, NULL, 0, s->pt, s->len) != MBC_OK) {
        die("mbc_gcm_seal failed");
    }
    const EVP_CIPHER *c = s->bits == 128   ? EVP_aes_128_gcm()
                          : s->bits == 192 ? EVP_aes_192_gcm()
                                           : EVP_aes_256_gcm();
    s->enc = EVP_CIPHER_CTX_new();
    s->dec = EVP_CIPHER_CTX_new();
    if (s->enc == NULL || s->dec == NULL ||
        EVP_EncryptInit_ex(s->enc, c, NULL, s->key, s->iv) != 1 ||
        EVP_DecryptInit_ex(s->dec, c, NULL, s->key, s->iv) != 1) {
        die("OpenSSL GCM setup failed");
    }
    gcm_check(s, gcm_ossl_seal_one, "OpenSSL");
#if MBT_HAVE_IPSEC_MB
    s->imb = alloc_mb_mgr(0);
    s->ikey = aligned_alloc(64, (sizeof(*s->ikey) + 63) & ~(size_t)63);
    if (s->imb == NULL || s->ikey == NULL) {
        die("intel-ipsec-mb setup failed");
    }
    init_mb_mgr_auto(s->imb, NULL);
    if (s->bits == 128) {
        IMB_AES128_GCM_PRE(s->imb, s->key, s->ikey);
    } else if (s->bits == 192) {
        IMB_AES192_GCM_PRE(s->imb, s->key, s->ikey);
    } else {
        IMB_AES256_GCM_PRE(s->imb, s->key, s->ikey);
    }
    gcm_check(s, gcm_imb_seal_one, "intel-ipsec-mb");
#endif
    /* Decryption must give the plaintext back. */
    gcm_mbc_open_one(s);
    gcm_ossl_open_one(s);
    if (memcmp(s->out, s->pt, s->len) != 0) {
        die("GCM open: plaintext differs");
    }
    return s;
}

static void gcm_teardown(void *state)
{
    gcm_state *s = state;
    mbc_gcm_key_free(s->mkey);
    EVP_CIPHER_CTX_free(s->enc);
    EVP_CIPHER_CTX_free(s->dec);
#if MBT_HAVE_IPSEC_MB
    free_mb_mgr(s->imb);
    free(s->ikey);
#endif
    free(s->pt);
    free(s->ct);
    free(s->out);
    OPENSSL_cleanse(s, sizeof(*s));
    free(s);
}

#if MBT_HAVE_IPSEC_MB
#define GCM_PEER2(fn) fn
#else
#define GCM_PEER2(fn) NULL
#endif

static const bench_op gcm_ops[] = {
    {"encrypt", gcm_mbc_seal, gcm_ossl_seal, GCM_PEER2(gcm_imb_seal)},
    {"decrypt", gcm_mbc_open, gcm_ossl_open, GCM_PEER2(gcm_imb_open)},
};
#define NUM_GCM_OPS (sizeof(gcm_ops) / sizeof(gcm_ops[0]))

/* GCM_CASE: one key size and message size; d: in the default suite. */
#define GCM_CASE(bits, size, d)                                                         \
    {"aes" #bits "gcm-" #size, GCM_PARAM(bits, size), gcm_setup, gcm_teardown, gcm_ops,  \
     NUM_GCM_OPS, size, d}
#define GCM_SIZES(bits, d64, d16k)                                                      \
    GCM_CASE(bits, 16, 0), GCM_CASE(bits, 64, d64), GCM_CASE(bits, 256, 0),             \
        GCM_CASE(bits, 1024, 0), GCM_CASE(bits, 8192, 0), GCM_CASE(bits, 16384, d16k), \
        GCM_CASE(bits, 65536, 0)

/* cases: every benchmark, in the order the default suite runs those marked
 * in_default (all RSA sizes and a short AES-GCM run); "gcm" names every
 * AES-GCM case, "all" every case. */
static const bench_case cases[] = {
    {"rsa2048", 2048, rsa_setup, rsa_teardown, rsa_ops, NUM_RSA_OPS, 0, 1},
    {"rsa3072", 3072, rsa_setup, rsa_teardown, rsa_ops, NUM_RSA_OPS, 0, 1},
    {"rsa4096", 4096, rsa_setup, rsa_teardown, rsa_ops, NUM_RSA_OPS, 0, 1},
    GCM_SIZES(128, 1, 1),
    GCM_SIZES(192, 0, 0),
    GCM_SIZES(256, 0, 1),
};
#define NUM_CASES (sizeof(cases) / sizeof(cases[0]))

/* ------------------------------------------------------------------------ */
/* Timing                                                                    */
/* ------------------------------------------------------------------------ */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* rate: calls fn (at least once) until seconds elapse; returns ops/s. */
static double rate(bench_fn fn, void *state, double seconds)
{
    unsigned long long ops = 0;
    double start = now_seconds(), elapsed;
    do {
        ops += fn(state);
        elapsed = now_seconds() - start;
    } while (elapsed < seconds);
    return (double)ops / elapsed;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* summarize: the median (or with --best the maximum) of opts->reps rates. */
static double summarize(double *r, const bench_opts *opts)
{
    qsort(r, opts->reps, sizeof(*r), cmp_double);
    if (opts->best) {
        return r[opts->reps - 1];
    }
    unsigned mid = opts->reps / 2;
    return opts->reps % 2 ? r[mid] : (r[mid - 1] + r[mid]) / 2;
}

/* measure: warm-up, then the median ops/s of opts->reps measurements. */
static double measure(bench_fn fn, void *state, const bench_opts *opts)
{
    double warmup = opts->seconds / 10 < 0.2 ? opts->seconds / 10 : 0.2;
    double *r = malloc(opts->reps * sizeof(*r));
    if (r == NULL) {
        die("out of memory");
    }
    rate(fn, state, warmup);
    for (unsigned i = 0; i < opts->reps; i++) {
        r[i] = rate(fn, state, opts->seconds);
    }
    double v = summarize(r, opts);
    free(r);
    return v;
}

/*
 * measure_interleaved: for rows with several implementations: a warm-up of
 * each, then rep by rep each implementation in turn (so that a change of
 * machine load hits them all alike); out[i] = median (or best) for fns[i].
 */
static void measure_interleaved(const bench_fn *fns, size_t n, void *state,
                                const bench_opts *opts, double *out)
{
    double warmup = opts->seconds / 10 < 0.2 ? opts->seconds / 10 : 0.2;
    double *r = malloc(n * opts->reps * sizeof(*r));
    if (r == NULL) {
        die("out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        rate(fns[i], state, warmup);
    }
    for (unsigned k = 0; k < opts->reps; k++) {
        for (size_t i = 0; i < n; i++) {
            r[i * opts->reps + k] = rate(fns[i], state, opts->seconds);
        }
    }
    for (size_t i = 0; i < n; i++) {
        out[i] = summarize(r + i * opts->reps, opts);
    }
    free(r);
}

/* ------------------------------------------------------------------------ */
/* Command line and report                                                   */
/* ------------------------------------------------------------------------ */

static void list_cases(FILE *f)
{
    for (size_t i = 0; i < NUM_CASES; i++) {
        fprintf(f, " %s", cases[i].name);
    }
    fprintf(f, "\n");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mbc_bench [options] [case...]\n"
               "Prints ops/s of mbcrypto (8 lanes per call) and OpenSSL (one op per call).\n"
               "  --impl auto|c|ifma|aesni|vaes512\n"
               "                      mbcrypto implementation (default auto: CPU dispatch;\n"
               "                      ifma: RSA, aesni/vaes512: AES-GCM)\n"
               "  --seconds S         time per measurement, in seconds (default 1.0)\n"
               "  --reps N            measurements per row; the median is shown (default 1)\n"
               "  --best              show the best of the --reps measurements instead of the\n"
               "                      median (for a shared, loaded machine)\n"
               "  --help              this text\n"
               "AES-GCM rows are GB/s of one-shot seal (encrypt) / open (decrypt),\n"
               "12-byte IV, no AAD, next to OpenSSL EVP and intel-ipsec-mb.\n"
               "cases (default: rsa* and a short AES-GCM run; 'gcm': every AES-GCM case;\n"
               "'all': everything):");
    list_cases(f);
}

/* usage_error: a command-line mistake; exits 2. */
static void usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "mbc_bench: %s '%s' (see mbc_bench --help)\n", msg, arg);
    exit(2);
}

/* select_impl: applies --impl; exits 2 if the implementation is unavailable. */
static void select_impl(const char *impl)
{
    if (strcmp(impl, "c") == 0) {
        mbc_cpu_restrict(0);
    } else if (strcmp(impl, "aesni") == 0 || strcmp(impl, "vaes512") == 0) {
        if (strcmp(impl, "aesni") == 0) {
            mbc_cpu_restrict(~(MBC_CPU_VAES | MBC_CPU_VPCLMULQDQ));
        }
        if (strcmp(mbc_impl_name(MBC_ALG_GCM), impl) != 0) {
            fprintf(stderr,
                    "mbc_bench: --impl %s: not available (CPU, OS, build or "
                    "MBCRYPTO_CPU_MASK); AES-GCM dispatch picked '%s'\n",
                    impl, mbc_impl_name(MBC_ALG_GCM));
            exit(2);
        }
    } else if (strcmp(impl, "ifma") == 0) {
        if (strcmp(mbc_impl_name(MBC_ALG_RSA), "ifma") != 0) {
            fprintf(stderr,
                    "mbc_bench: --impl ifma: the IFMA implementation is not available "
                    "(CPU, OS, build or MBCRYPTO_CPU_MASK); dispatch picked '%s'\n",
                    mbc_impl_name(MBC_ALG_RSA));
            exit(2);
        }
    } else if (strcmp(impl, "auto") != 0) {
        usage_error("--impl must be auto, c, ifma, aesni or vaes512, not", impl);
    }
}

static const bench_case *find_case(const char *name)
{
    for (size_t i = 0; i < NUM_CASES; i++) {
        if (strcmp(cases[i].name, name) == 0) {
            return &cases[i];
        }
    }
    fprintf(stderr, "mbc_bench: unknown benchmark '%s'; valid names:", name);
    list_cases(stderr);
    exit(2);
}

static bench_opts parse_options(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"impl", required_argument, NULL, 'i'},
        {"seconds", required_argument, NULL, 's'},
        {"reps", required_argument, NULL, 'r'},
        {"best", no_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bench_opts opts = {1.0, 1, 0};
    const char *impl = "auto";
    char *end;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == 'i') {
            impl = optarg;
        } else if (c == 's') {
            opts.seconds = strtod(optarg, &end);
            if (*end != '\0' || !(opts.seconds > 0 && opts.seconds < 1e6)) {
                usage_error("--seconds needs a positive number, not", optarg);
            }
        } else if (c == 'r') {
            unsigned long n = strtoul(optarg, &end, 10);
            if (*end != '\0' || optarg[0] == '-' || n < 1 || n > 1000) {
                usage_error("--reps needs a whole number from 1 to 1000, not", optarg);
            }
            opts.reps = (unsigned)n;
        } else if (c == 'b') {
            opts.best = 1;
        } else if (c == 'h') {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            exit(2);
        }
    }
    select_impl(impl);
    return opts;
}

static void print_header(const bench_opts *opts)
{
    printf("mbcrypto %s, impl %s (AES-GCM %s), cpu features 0x%" PRIx64 ", %d lanes per call\n",
           mbc_version_string(), mbc_impl_name(MBC_ALG_RSA), mbc_impl_name(MBC_ALG_GCM),
           mbc_cpu_features(), MBC_LANES);
    printf("peer: %s, one op per call\n", OpenSSL_version(OPENSSL_VERSION));
#if MBT_HAVE_IPSEC_MB
    printf("peer 2 (AES-GCM): intel-ipsec-mb %s\n", imb_get_version_str());
#else
    printf("peer 2 (AES-GCM): intel-ipsec-mb not built in\n");
#endif
    printf("seconds per measurement %.2f, reps %u (%s shown)\n", opts->seconds, opts->reps,
           opts->best ? "best" : "median");
    printf("hint: most meaningful pinned to one core, e.g. taskset -c 1 mbc_bench ...\n\n");
    fflush(stdout);
}

/* print_columns: the column header of ops/s rows (bytes == 0) or GB/s rows. */
static void print_columns(size_t bytes)
{
    if (bytes == 0) {
        printf("\n%-20s %12s %12s %8s\n", "op", "mbcrypto/s", "openssl/s", "ratio");
    } else {
        printf("\n%-26s %9s %9s %9s %9s %9s\n", "op (GB/s)", "mbcrypto", "openssl", "ipsec-mb",
               "vs ossl", "vs ipsec");
    }
}

static void run_case(const bench_case *bc, const bench_opts *opts, int *columns)
{
    int kind = bc->bytes == 0 ? 1 : 2;
    if (*columns != kind) {
        print_columns(bc->bytes);
        *columns = kind;
    }
    void *state = bc->setup(bc->param);
    for (size_t i = 0; i < bc->num_ops; i++) {
        const bench_op *op = &bc->ops[i];
        char label[64];
        fprintf(stderr, "mbc_bench: measuring %s %s...\n", bc->name, op->label);
        snprintf(label, sizeof(label), "%s %s", bc->name, op->label);
        if (bc->bytes == 0) {
            double mbc = measure(op->run_mbc, state, opts);
            double peer = measure(op->run_peer, state, opts);
            printf("%-20s %12.1f %12.1f %7.2fx\n", label, mbc, peer, mbc / peer);
        } else {
            const bench_fn fns[3] = {op->run_mbc, op->run_peer, op->run_peer2};
            double v[3] = {0, 0, 0};
            measure_interleaved(fns, op->run_peer2 != NULL ? 3 : 2, state, opts, v);
            double gb = (double)bc->bytes * 1e-9;
            double mbc = v[0], peer = v[1], peer2 = v[2];
            printf("%-26s %9.3f %9.3f", label, mbc * gb, peer * gb);
            if (peer2 > 0) {
                printf(" %9.3f %8.2fx %8.2fx\n", peer2 * gb, mbc / peer, mbc / peer2);
            } else {
                printf(" %9s %8.2fx %9s\n", "-", mbc / peer, "-");
            }
        }
        fflush(stdout);
    }
    bc->teardown(state);
}

int main(int argc, char **argv)
{
    bench_opts opts = parse_options(argc, argv);
    size_t num_run = 0;
    const bench_case **run = malloc(((size_t)argc + NUM_CASES) * sizeof(*run));
    if (run == NULL) {
        die("out of memory");
    }
    for (int i = optind; i < argc; i++) {
        int all = strcmp(argv[i], "all") == 0, gcm = strcmp(argv[i], "gcm") == 0;
        if (!all && !gcm) {
            run[num_run++] = find_case(argv[i]);
            continue;
        }
        run = realloc(run, (num_run + NUM_CASES + (size_t)argc) * sizeof(*run));
        if (run == NULL) {
            die("out of memory");
        }
        for (size_t j = 0; j < NUM_CASES; j++) {
            if (all || cases[j].bytes != 0) {
                run[num_run++] = &cases[j];
            }
        }
    }
    if (num_run == 0) {
        for (size_t i = 0; i < NUM_CASES; i++) {
            if (cases[i].in_default) {
                run[num_run++] = &cases[i];
            }
        }
    }

    print_header(&opts);
    int columns = 0;
    for (size_t i = 0; i < num_run; i++) {
        run_case(run[i], &opts, &columns);
    }
    free(run);
    return 0;
}
