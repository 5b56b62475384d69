/*
 * sync_ab.c - one request at a time outside ASYNC jobs, in one process:
 * the mbcrypto provider as programs load it (serve = auto unless
 * MBCRYPTO_SERVE says otherwise; ours preferred, the default provider
 * beside it) in one library context, the default provider alone in
 * another, batches of the same operation interleaved. Prints, for P-256
 * sign, verify and ECDH and X25519 derive, the least thread CPU time per
 * operation over the batches of each and the default's over ours (above
 * 1: ours is faster). The minimum of many short batches leaves out most
 * of what a loaded machine adds. Not a test.
 *
 *   sync_ab PROVIDER_DIR [BATCHES]     (default 200 batches of 20)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#define PER_BATCH 20

enum { SIGN, VERIFY, ECDH, X25519, NUM_OPS };
static const char *const op_names[NUM_OPS] = {"p256-sign", "p256-verify", "p256-ecdh",
                                              "x25519-derive"};

/* side: one library context and its operation contexts. */
struct side {
    OSSL_LIB_CTX *lib;
    const char *propq;
    EVP_PKEY_CTX *ctx[NUM_OPS];
    unsigned char sig[80];
    size_t sig_len;
};

static const unsigned char dgst[32] = {1, 2, 3};

static void die(const char *what)
{
    fprintf(stderr, "sync_ab: %s failed\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static EVP_PKEY *keygen(const struct side *s, const char *alg, const char *group)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(s->lib, alg, s->propq);
    EVP_PKEY *k = NULL;
    if (c == NULL || EVP_PKEY_keygen_init(c) != 1 ||
        (group != NULL && EVP_PKEY_CTX_set_group_name(c, group) != 1) ||
        EVP_PKEY_keygen(c, &k) != 1) {
        die("key generation");
    }
    EVP_PKEY_CTX_free(c);
    return k;
}

/* setup: s's contexts, made once and used for every batch (as openssl
 * speed does). */
static void setup(struct side *s)
{
    EVP_PKEY *a = keygen(s, "EC", "P-256"), *b = keygen(s, "EC", "P-256");
    EVP_PKEY *xa = keygen(s, "X25519", NULL), *xb = keygen(s, "X25519", NULL);
    EVP_PKEY *keys[NUM_OPS] = {a, a, a, xa};
    for (int op = 0; op < NUM_OPS; op++) {
        EVP_PKEY_CTX *c = s->ctx[op] = EVP_PKEY_CTX_new_from_pkey(s->lib, keys[op], s->propq);
        const int ok = c != NULL && (op == SIGN     ? EVP_PKEY_sign_init(c)
                                     : op == VERIFY ? EVP_PKEY_verify_init(c)
                                                    : EVP_PKEY_derive_init(c)) == 1;
        if (!ok || (op >= ECDH && EVP_PKEY_derive_set_peer(c, op == ECDH ? b : xb) != 1)) {
            die(op_names[op]);
        }
    }
    s->sig_len = sizeof(s->sig);
    if (EVP_PKEY_sign(s->ctx[SIGN], s->sig, &s->sig_len, dgst, sizeof(dgst)) != 1) {
        die("signing");
    }
    EVP_PKEY_free(a);
    EVP_PKEY_free(b);
    EVP_PKEY_free(xa);
    EVP_PKEY_free(xb);
}

/* batch: the CPU time of one of s's op, over PER_BATCH of them. */
static double batch(struct side *s, int op)
{
    unsigned char out[80];
    const double t0 = cpu_ns();
    for (int i = 0; i < PER_BATCH; i++) {
        size_t len = sizeof(out);
        EVP_PKEY_CTX *c = s->ctx[op];
        const int r = op == SIGN     ? EVP_PKEY_sign(c, out, &len, dgst, sizeof(dgst))
                      : op == VERIFY ? EVP_PKEY_verify(c, s->sig, s->sig_len, dgst, sizeof(dgst))
                                     : EVP_PKEY_derive(c, out, &len);
        if (r != 1) {
            die(op_names[op]);
        }
    }
    return (cpu_ns() - t0) / PER_BATCH;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sync_ab PROVIDER_DIR [BATCHES]\n");
        return 2;
    }
    const int batches = argc > 2 ? atoi(argv[2]) : 200;
    struct side ours = {OSSL_LIB_CTX_new(), "?provider=mbcrypto", {0}, {0}, 0},
                theirs = {OSSL_LIB_CTX_new(), NULL, {0}, {0}, 0};
    if (ours.lib == NULL || theirs.lib == NULL ||
        !OSSL_PROVIDER_set_default_search_path(ours.lib, argv[1]) ||
        OSSL_PROVIDER_load(ours.lib, "mbcrypto") == NULL ||
        OSSL_PROVIDER_load(ours.lib, "default") == NULL ||
        OSSL_PROVIDER_load(theirs.lib, "default") == NULL) {
        die("loading the providers");
    }
    setup(&ours);
    setup(&theirs);
    printf("%-14s %12s %12s %7s   (least CPU ns per operation, %d batches of %d)\n", "op",
           "mbcrypto", "default", "def/ours", batches, PER_BATCH);
    for (int op = 0; op < NUM_OPS; op++) {
        double best_ours = 1e18, best_theirs = 1e18;
        for (int r = 0; r < batches; r++) {
            const double a = batch(&ours, op), b = batch(&theirs, op);
            best_ours = a < best_ours ? a : best_ours;
            best_theirs = b < best_theirs ? b : best_theirs;
        }
        printf("%-14s %12.0f %12.0f %6.3fx\n", op_names[op], best_ours, best_theirs,
               best_theirs / best_ours);
    }
    return 0;
}
