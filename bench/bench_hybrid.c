/*
 * bench_hybrid.c - the X25519MLKEM768 workloads of mbc_bench (the TLS 1.3
 * hybrid group): key generation (the client's share: an ML-KEM-768 key pair
 * and an X25519 key pair), encapsulation (the server's: ML-KEM encaps to
 * the client's ek, a new X25519 key pair, and its X25519 secret with the
 * client's share) and decapsulation (the client's: ML-KEM decaps, and the
 * X25519 secret with the server's share), each as the calls of mbcrypto a
 * provider makes, beside OpenSSL 3.5's X25519MLKEM768 KEM through EVP.
 * The layout is OpenSSL's (EVP_PKEY-ML-KEM: the ML-KEM part first, then
 * X25519): public key ek || x25519 pub (1216 bytes), private key dk ||
 * x25519 priv (2432), ciphertext ct || x25519 pub (1120), secret ML-KEM
 * ss || X25519 ss (64).
 *
 * Material, built once per case: HYB_POOL key pairs made by mbcrypto, each
 * with a ciphertext and a secret made by OpenSSL's encapsulation to it.
 * Checks: every decapsulation must give OpenSSL's secret; one key pair or
 * encapsulation in BENCH_SAMPLE (and every one at the start) is checked
 * by OpenSSL (it encapsulates to the new key pair and mbcrypto decapsulates;
 * it decapsulates mbcrypto's ciphertext to mbcrypto's secret). OpenSSL's
 * results are checked by mbcrypto the same way.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "bench.h"

#define HYB_POOL 32 /* requests; a multiple of MBC_LANES */
#define P MBC_MLKEM_768
#define EK MBC_MLKEM768_EK_LEN
#define DK MBC_MLKEM768_DK_LEN
#define CT MBC_MLKEM768_CT_LEN
#define XL MBC_X25519_LEN
#define PUB (EK + XL)
#define PRIV (DK + XL)
#define HCT (CT + XL)
#define HSS (MBC_MLKEM_SS_LEN + XL)
#define GROUP "X25519MLKEM768"

static const char *const op_name[3] = {"keygen", "encaps", "decaps"};

struct hybrid_thread {
    bench_pool_pos pos; /* first: the pool runner's */
    const pk_case *c;
    /* OpenSSL's contexts, made once: keygen, per request encapsulation
     * (the public key) and decapsulation (the private key) */
    EVP_PKEY_CTX *keygen, *enc[HYB_POOL], *dec[HYB_POOL];
    /* per slot: keygen pub / priv, encaps ct / ss, decaps ss / - */
    uint8_t out[MBC_LANES][PRIV], out2[MBC_LANES][PRIV];
    uint8_t eph[MBC_LANES][XL]; /* encaps: the server's X25519 private keys */
};

struct pk_case {
    void *th[BENCH_MAX_THREADS]; /* first (bench_pool_case_new): struct hybrid_thread */
    uint8_t pub[HYB_POOL][PUB], priv[HYB_POOL][PRIV], ct[HYB_POOL][HCT], ss[HYB_POOL][HSS];
};

/* ossl_key: OpenSSL's hybrid key of the bytes (public or private). */
static EVP_PKEY *ossl_key(const uint8_t *b, size_t len, int private)
{
    return private ? EVP_PKEY_new_raw_private_key_ex(NULL, GROUP, NULL, b, len)
                   : EVP_PKEY_new_raw_public_key_ex(NULL, GROUP, NULL, b, len);
}

/* ossl_encaps: OpenSSL's encapsulation to pub (ct, ss); 0 or -1. */
static int ossl_encaps(uint8_t ct[HCT], uint8_t ss[HSS], const uint8_t pub[PUB])
{
    EVP_PKEY *k = ossl_key(pub, PUB, 0);
    EVP_PKEY_CTX *x = k != NULL ? EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL) : NULL;
    size_t cl = HCT, sl = HSS;
    const int ok = x != NULL && EVP_PKEY_encapsulate_init(x, NULL) > 0 &&
                   EVP_PKEY_encapsulate(x, ct, &cl, ss, &sl) > 0 && cl == HCT && sl == HSS;
    EVP_PKEY_CTX_free(x);
    EVP_PKEY_free(k);
    return ok ? 0 : -1;
}

/* ossl_decaps: OpenSSL's decapsulation of ct with priv; 0 or -1. */
static int ossl_decaps(uint8_t ss[HSS], const uint8_t ct[HCT], const uint8_t priv[PRIV])
{
    EVP_PKEY *k = ossl_key(priv, PRIV, 1);
    EVP_PKEY_CTX *x = k != NULL ? EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL) : NULL;
    size_t sl = HSS;
    const int ok = x != NULL && EVP_PKEY_decapsulate_init(x, NULL) > 0 &&
                   EVP_PKEY_decapsulate(x, ss, &sl, ct, HCT) > 0 && sl == HSS;
    EVP_PKEY_CTX_free(x);
    EVP_PKEY_free(k);
    return ok ? 0 : -1;
}

/* status_join: lane by lane the first error of a and b. */
static mbc_status status_join(mbc_status a, mbc_status b)
{
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if (mbc_lane_code(a, l) == MBC_LANE_OK) {
            a = (a & ~(0xFu << (4 * l))) | (b & (0xFu << (4 * l)));
        }
    }
    return a;
}

/* our_decaps: mbcrypto's hybrid decapsulation of one request (ss, the 64
 * bytes), as the single call does it. */
static mbc_err our_decaps(uint8_t ss[HSS], const uint8_t ct[HCT], const uint8_t priv[PRIV])
{
    const mbc_err e = mbc_mlkem_decaps(P, ss, ct, CT, priv, DK);
    return e != MBC_OK ? e : mbc_x25519(ss + MBC_MLKEM_SS_LEN, priv + DK, ct + CT);
}

/* check_result: out/out2 of op on request e (see struct hybrid_thread);
 * who made them (0 mbcrypto, 1 OpenSSL) is checked by the other when
 * full. */
static int check_result(const pk_case *c, unsigned op, unsigned e, const uint8_t *out,
                        const uint8_t *out2, int full, int by)
{
    const char *who = by == 0 ? "mbcrypto" : "OpenSSL";
    uint8_t ct[HCT], ss[HSS], ss2[HSS];
    if (op == MLKEM_OP_DECAPS) {
        return memcmp(out, c->ss[e], HSS) == 0
                   ? 0
                   : bench_fail(GROUP " decaps (%s): not OpenSSL's secret", who);
    }
    if (!full) {
        return 0;
    }
    int ok;
    if (op == MLKEM_OP_KEYGEN) {
        /* out: pub, out2: priv; the other side encapsulates to pub, priv
         * decapsulates */
        ok = by == 0 ? ossl_encaps(ct, ss, out) == 0 && our_decaps(ss2, ct, out2) == MBC_OK
                     : mbc_mlkem_encaps(P, ct, ss, out, EK) == MBC_OK &&
                           mbc_x25519_keygen(ss2, ct + CT) == MBC_OK &&
                           mbc_x25519(ss + MBC_MLKEM_SS_LEN, ss2, out + EK) == MBC_OK &&
                           ossl_decaps(ss2, ct, out2) == 0;
        if (!ok || memcmp(ss, ss2, HSS) != 0) {
            return bench_fail(GROUP " keygen (%s): the key pair does not work", who);
        }
        return 0;
    }
    /* encaps: out ct, out2 ss for request e's key */
    ok = by == 0 ? ossl_decaps(ss2, out, c->priv[e]) == 0
                 : our_decaps(ss2, out, c->priv[e]) == MBC_OK;
    if (!ok || memcmp(out2, ss2, HSS) != 0) {
        return bench_fail(GROUP " encaps (%s): the secret does not decapsulate", who);
    }
    return 0;
}

/* mb8_call: one 8-lane call of op on requests e0..e0+7: the ML-KEM and
 * X25519 batch calls a provider makes. */
static mbc_status mb8_call(void *ts, unsigned op, unsigned e0)
{
    struct hybrid_thread *th = ts;
    const pk_case *c = th->c;
    uint8_t *o[MBC_LANES], *o2[MBC_LANES], *ox[MBC_LANES], *ox2[MBC_LANES], *eph[MBC_LANES];
    const uint8_t *pub[MBC_LANES], *xpub[MBC_LANES], *ct[MBC_LANES], *xct[MBC_LANES],
        *priv[MBC_LANES], *xpriv[MBC_LANES], *ceph[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        o[l] = th->out[l];
        o2[l] = th->out2[l];
        eph[l] = th->eph[l];
        ceph[l] = th->eph[l];
        pub[l] = c->pub[e0 + l];
        xpub[l] = c->pub[e0 + l] + EK;
        ct[l] = c->ct[e0 + l];
        xct[l] = c->ct[e0 + l] + CT;
        priv[l] = c->priv[e0 + l];
        xpriv[l] = c->priv[e0 + l] + DK;
    }
    mbc_status st;
    switch (op) {
    case MLKEM_OP_KEYGEN:
        for (unsigned l = 0; l < MBC_LANES; l++) {
            ox[l] = th->out2[l] + DK; /* x25519 priv after dk */
            ox2[l] = th->out[l] + EK; /* x25519 pub after ek */
        }
        st = mbc_mlkem_keygen_mb8(P, o, o2, MBC_LANE_MASK_ALL);
        return status_join(st, mbc_x25519_keygen_mb8(ox, ox2, MBC_LANE_MASK_ALL));
    case MLKEM_OP_ENCAPS:
        for (unsigned l = 0; l < MBC_LANES; l++) {
            ox[l] = th->out[l] + CT;                 /* the server's share after ct */
            ox2[l] = th->out2[l] + MBC_MLKEM_SS_LEN; /* its secret after ML-KEM's */
        }
        st = mbc_mlkem_encaps_mb8(P, o, o2, pub, MBC_LANE_MASK_ALL);
        st = status_join(st, mbc_x25519_keygen_mb8(eph, ox, MBC_LANE_MASK_ALL));
        st = status_join(st, mbc_x25519_mb8(ox2, ceph, xpub, MBC_LANE_MASK_ALL));
        OPENSSL_cleanse(th->eph, sizeof(th->eph));
        return st;
    default:
        for (unsigned l = 0; l < MBC_LANES; l++) {
            ox[l] = th->out[l] + MBC_MLKEM_SS_LEN;
        }
        st = mbc_mlkem_decaps_mb8(P, o, ct, priv, MBC_LANE_MASK_ALL);
        return status_join(st, mbc_x25519_mb8(ox, xpriv, xct, MBC_LANE_MASK_ALL));
    }
}

/* single_call: one request of op on request e, with the single calls. */
static mbc_err single_call(void *ts, unsigned op, unsigned e)
{
    struct hybrid_thread *th = ts;
    const pk_case *c = th->c;
    uint8_t *o = th->out[0], *o2 = th->out2[0];
    mbc_err err;
    switch (op) {
    case MLKEM_OP_KEYGEN:
        err = mbc_mlkem_keygen(P, o, o2);
        return err != MBC_OK ? err : mbc_x25519_keygen(o2 + DK, o + EK);
    case MLKEM_OP_ENCAPS:
        err = mbc_mlkem_encaps(P, o, o2, c->pub[e], EK);
        if (err == MBC_OK) {
            err = mbc_x25519_keygen(th->eph[0], o + CT);
        }
        if (err == MBC_OK) {
            err = mbc_x25519(o2 + MBC_MLKEM_SS_LEN, th->eph[0], c->pub[e] + EK);
        }
        OPENSSL_cleanse(th->eph[0], XL);
        return err;
    default:
        return our_decaps(o, c->ct[e], c->priv[e]);
    }
}

static int check_slot(void *ts, unsigned op, unsigned e, unsigned slot, int full)
{
    const struct hybrid_thread *th = ts;
    return check_result(th->c, op, e, th->out[slot], th->out2[slot], full, 0);
}

void hybrid_case_free(pk_case *c)
{
    bench_pool_case_free(&hybrid_pool, c);
}

/* kem_ctx: OpenSSL's context of request e's key, initialised for
 * encapsulation (private 0) or decapsulation (1); NULL when 3.5's hybrid
 * is not there. */
static EVP_PKEY_CTX *kem_ctx(const pk_case *c, unsigned e, int private)
{
    EVP_PKEY *k = private ? ossl_key(c->priv[e], PRIV, 1) : ossl_key(c->pub[e], PUB, 0);
    EVP_PKEY_CTX *x = k != NULL ? EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL) : NULL;
    EVP_PKEY_free(k);
    if (x != NULL &&
        (private ? EVP_PKEY_decapsulate_init(x, NULL) : EVP_PKEY_encapsulate_init(x, NULL)) <= 0) {
        EVP_PKEY_CTX_free(x);
        x = NULL;
    }
    return x;
}

/* thread_init: OpenSSL's contexts of the pool's keys. */
static int thread_init(void *ts, const pk_case *c)
{
    struct hybrid_thread *th = ts;
    th->c = c;
    for (unsigned e = 0; e < HYB_POOL; e++) {
        th->enc[e] = kem_ctx(c, e, 0);
        th->dec[e] = kem_ctx(c, e, 1);
        if (th->enc[e] == NULL || th->dec[e] == NULL) {
            return bench_ossl_fail(GROUP " contexts");
        }
    }
    th->keygen = EVP_PKEY_CTX_new_from_name(NULL, GROUP, NULL);
    if (th->keygen == NULL || EVP_PKEY_keygen_init(th->keygen) <= 0) {
        return bench_ossl_fail(GROUP " keygen context");
    }
    return 0;
}

static void thread_free(void *ts)
{
    struct hybrid_thread *th = ts;
    for (unsigned e = 0; e < HYB_POOL; e++) {
        EVP_PKEY_CTX_free(th->enc[e]);
        EVP_PKEY_CTX_free(th->dec[e]);
    }
    EVP_PKEY_CTX_free(th->keygen);
    OPENSSL_cleanse(th, sizeof(*th));
}

static int material(pk_case *c)
{
    int rc = 0;
    for (unsigned e = 0; e < HYB_POOL && rc == 0; e++) {
        if (mbc_mlkem_keygen(P, c->pub[e], c->priv[e]) != MBC_OK ||
            mbc_x25519_keygen(c->priv[e] + DK, c->pub[e] + EK) != MBC_OK) {
            rc = bench_fail(GROUP " key setup failed");
        } else if (ossl_encaps(c->ct[e], c->ss[e], c->pub[e]) != 0) {
            rc = bench_ossl_fail(GROUP " encapsulation (OpenSSL 3.5 or later has it: run with "
                                       "its libcrypto)");
        }
    }
    return rc;
}

/* clang-format off */
const bench_pool hybrid_pool = {
    .size = HYB_POOL,
    .name = GROUP,
    .ops = op_name,
    .nops = 3,
    .mb8 = mb8_call,
    .single = single_call,
    .check = check_slot,
    .thread_size = sizeof(struct hybrid_thread),
    .thread_init = thread_init,
    .thread_free = thread_free,
    .case_size = sizeof(pk_case),
    .material = material,
};
/* clang-format on */

pk_case *hybrid_case_new(unsigned bits, const bench_opts *opts)
{
    (void)bits;
    return bench_pool_case_new(&hybrid_pool, opts);
}

int hybrid_check_mgr(pk_case *c, unsigned op)
{
    (void)c;
    (void)op;
    return bench_fail(GROUP " has no manager class of its own: its parts are mlkem768 and "
                            "x25519 (--concurrency on those)");
}

/* unit_ossl: one OpenSSL 3.5 X25519MLKEM768 operation through EVP, on
 * contexts made once: a key pair with both keys read out as bytes, an
 * encapsulation, a decapsulation, on the same pool. */
static int unit_ossl(void *ts, unsigned op, uint64_t *t_done)
{
    struct hybrid_thread *th = ts;
    const unsigned e = th->pos.next;
    th->pos.next = (th->pos.next + 1) % HYB_POOL;
    int ok = 0;
    if (op == MLKEM_OP_KEYGEN) {
        EVP_PKEY *k = NULL;
        size_t l1 = PUB, l2 = PRIV;
        ok = EVP_PKEY_keygen(th->keygen, &k) > 0 &&
             EVP_PKEY_get_raw_public_key(k, th->out[0], &l1) > 0 &&
             EVP_PKEY_get_raw_private_key(k, th->out2[0], &l2) > 0 && l1 == PUB && l2 == PRIV;
        EVP_PKEY_free(k);
    } else if (op == MLKEM_OP_ENCAPS) {
        size_t l1 = HCT, l2 = HSS;
        ok = EVP_PKEY_encapsulate(th->enc[e], th->out[0], &l1, th->out2[0], &l2) > 0 && l1 == HCT &&
             l2 == HSS;
    } else {
        size_t l2 = HSS;
        ok = EVP_PKEY_decapsulate(th->dec[e], th->out[0], &l2, th->c->ct[e], HCT) > 0 && l2 == HSS;
    }
    *t_done = bench_now_ns();
    if (!ok) {
        return bench_ossl_fail(GROUP " through EVP failed");
    }
    return check_result(th->c, op, e, th->out[0], th->out2[0], ++th->pos.sample % BENCH_SAMPLE == 0,
                        1) != 0
               ? -1
               : 1;
}

int hybrid_run_ossl(void *ts, const void *arg, double seconds, run_out *out)
{
    return bench_timed_run(ts, ((const pk_arg *)arg)->op, seconds, out, unit_ossl);
}
