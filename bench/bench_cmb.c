/*
 * bench_cmb.c - Intel's crypto_mb as a peer of mbc_bench (--compare
 * crypto_mb): the 8-lane _ssl_mb8 calls QAT_Engine makes for RSA (private
 * with CRT, public), P-256 / P-384 (ECDSA sign with the caller's nonce,
 * verify, ECDH, public key of a private key) and X25519 (derive, public key),
 * all eight lanes full, one key per case, eight different requests a call.
 *
 * Built only when meson found crypto_mb (MBT_HAVE_CRYPTO_MB=1, see
 * meson_options.txt: crypto_mb); otherwise cmb_version() is NULL and the
 * column is left out. crypto_mb's kernels need AVX-512 IFMA: on a CPU
 * without it cmb_unusable() says so and the column is left out too.
 *
 * Checks, as for OpenSSL's column: when a case is made, every lane of every
 * call is compared with OpenSSL (RSA private and public results with
 * OpenSSL's raw RSA; signatures with OpenSSL's signature for the same nonce
 * and verified by OpenSSL; ECDH secrets and X25519 secrets and public keys
 * with OpenSSL's; EC public keys, which crypto_mb returns in Jacobian X:Y:Z
 * without the inversion, after conversion to affine with OpenSSL's BIGNUM).
 * While timing, every call's status is checked and its output compared with
 * the checked one (deterministic: same inputs, same outputs).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#if MBT_HAVE_CRYPTO_MB

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include <crypto_mb/cpu_features.h>
#include <crypto_mb/ec_nistp256.h>
#include <crypto_mb/ec_nistp384.h>
#include <crypto_mb/rsa.h>
#include <crypto_mb/version.h>
#include <crypto_mb/x25519.h>

#include "ossl_ec.h"
#include "ossl_rsa.h"
#include "ossl_x25519.h"

#define L MBC_LANES
#define MAXB 512 /* RSA-4096 */
#define ECB 48   /* P-384 */

const char *cmb_version(void)
{
    return mbx_getversion()->strVersion;
}

const char *cmb_unusable(void)
{
    return mbx_is_crypto_mb_applicable(0) ? NULL
                                          : "this CPU lacks what crypto_mb needs (AVX-512 IFMA)";
}

/* What every thread shares (read only) and what each owns (outputs). */
struct cmb_thread {
    const cmb_case *c;
    uint8_t out[L][MAXB], out2[L][MAXB];
    BIGNUM *x[L], *y[L], *z[L]; /* EC public keys out */
};

struct cmb_case {
    enum cmb_family fam;
    unsigned bits, len; /* RSA modulus or field bytes */
    /* RSA */
    BIGNUM *n, *e, *p, *q, *dp, *dq, *iq;
    uint8_t msg[L][MAXB], sig[L][MAXB]; /* RSA: msg^d = sig; EC: digests */
    /* EC: one key (d, Q = (qx, qy, 1)), nonces k[l], signatures r || s, ECDH secrets of k[l] Q,
     * crypto_mb's Jacobian k[l] G as checked */
    BIGNUM *d, *qx, *qy, *one, *k[L], *jx[L], *jy[L], *jz[L];
    ECDSA_SIG *osig[L];
    uint8_t r[L][ECB], s[L][ECB], secret[L][ECB];
    /* X25519: private keys, peers' public keys, secrets, own public keys */
    uint8_t xpriv[L][32], xpeer[L][32], xsecret[L][32], xpub[L][32];
    unsigned num_threads;
    struct cmb_thread *th[BENCH_MAX_THREADS];
};

static int ossl_fail(const char *what)
{
    return bench_ossl_fail(what);
}

/* ------------------------------------------------------------------------ */
/* The calls                                                                 */
/* ------------------------------------------------------------------------ */

static mbx_status call_rsa(struct cmb_thread *th, unsigned op)
{
    const cmb_case *c = th->c;
    const int8u *from[L];
    int8u *to[L];
    const BIGNUM *a[L], *b[L], *p[L], *q[L], *iq[L];
    for (unsigned l = 0; l < L; l++) {
        from[l] = op == RSA_OP_PRIVATE ? c->msg[l] : c->sig[l];
        to[l] = th->out[l];
        a[l] = op == RSA_OP_PRIVATE ? c->dp : c->e;
        b[l] = op == RSA_OP_PRIVATE ? c->dq : c->n;
        p[l] = c->p;
        q[l] = c->q;
        iq[l] = c->iq;
    }
    if (op == RSA_OP_PRIVATE) {
        return mbx_rsa_private_crt_ssl_mb8(from, to, p, q, a, b, iq, (int)c->bits);
    }
    return mbx_rsa_public_ssl_mb8(from, to, a, b, (int)c->bits);
}

static mbx_status call_ec(struct cmb_thread *th, unsigned op)
{
    const cmb_case *c = th->c;
    const int p256 = c->bits == 256;
    int8u *o[L], *o2[L];
    const int8u *m[L];
    const BIGNUM *k[L], *d[L], *x[L], *y[L], *z[L];
    const ECDSA_SIG *sg[L];
    for (unsigned l = 0; l < L; l++) {
        o[l] = th->out[l];
        o2[l] = th->out2[l];
        m[l] = c->msg[l];
        k[l] = c->k[l];
        d[l] = c->d;
        x[l] = c->qx;
        y[l] = c->qy;
        z[l] = c->one;
        sg[l] = c->osig[l];
    }
    switch (op) {
    case EC_OP_SIGN:
        return p256 ? mbx_nistp256_ecdsa_sign_ssl_mb8(o, o2, m, k, d, NULL)
                    : mbx_nistp384_ecdsa_sign_ssl_mb8(o, o2, m, k, d, NULL);
    case EC_OP_VERIFY:
        return p256 ? mbx_nistp256_ecdsa_verify_ssl_mb8(sg, m, x, y, z, NULL)
                    : mbx_nistp384_ecdsa_verify_ssl_mb8(sg, m, x, y, z, NULL);
    case EC_OP_ECDH:
        return p256 ? mbx_nistp256_ecdh_ssl_mb8(o, k, x, y, z, NULL)
                    : mbx_nistp384_ecdh_ssl_mb8(o, k, x, y, z, NULL);
    default:
        return p256 ? mbx_nistp256_ecpublic_key_ssl_mb8(th->x, th->y, th->z, k, NULL)
                    : mbx_nistp384_ecpublic_key_ssl_mb8(th->x, th->y, th->z, k, NULL);
    }
}

static mbx_status call_x25519(struct cmb_thread *th, unsigned op)
{
    const cmb_case *c = th->c;
    int8u *o[L];
    const int8u *k[L], *u[L];
    for (unsigned l = 0; l < L; l++) {
        o[l] = th->out[l];
        k[l] = c->xpriv[l];
        u[l] = c->xpeer[l];
    }
    return op == X25519_OP_DERIVE ? mbx_x25519_mb8(o, k, u) : mbx_x25519_public_key_mb8(o, k);
}

static mbx_status call(struct cmb_thread *th, unsigned op)
{
    switch (th->c->fam) {
    case CMB_RSA:
        return call_rsa(th, op);
    case CMB_EC:
        return call_ec(th, op);
    default:
        return call_x25519(th, op);
    }
}

/* ------------------------------------------------------------------------ */
/* Checks                                                                    */
/* ------------------------------------------------------------------------ */

static const char *const op_names[3][4] = {
    {"private", "public"}, {"sign", "verify", "ecdh", "keygen"}, {"derive", "keygen"}};

/* check: the outputs of one call of op against what was checked (0, -1). */
static int check(const struct cmb_thread *th, unsigned op, mbx_status st)
{
    const cmb_case *c = th->c;
    const char *fam = c->fam == CMB_RSA ? "RSA" : c->fam == CMB_EC ? "P-" : "X25519";
    const unsigned bits = c->fam == CMB_X25519 ? 0 : c->bits;
    char what[48];
    snprintf(what, sizeof(what), "crypto_mb %s%.0u %s", fam, bits, op_names[c->fam][op]);
    if (st != MBX_STATUS_OK) {
        return bench_fail("%s: status 0x%08x", what, (unsigned)st);
    }
    for (unsigned l = 0; l < L; l++) {
        const uint8_t *want = NULL, *want2 = NULL;
        size_t n = c->len;
        switch (c->fam) {
        case CMB_RSA:
            want = op == RSA_OP_PRIVATE ? c->sig[l] : c->msg[l];
            break;
        case CMB_EC:
            if (op == EC_OP_SIGN) {
                want = c->r[l];
                want2 = c->s[l];
            } else if (op == EC_OP_ECDH) {
                want = c->secret[l];
            } else if (op == EC_OP_KEYGEN &&
                       (BN_cmp(th->x[l], c->jx[l]) != 0 || BN_cmp(th->y[l], c->jy[l]) != 0 ||
                        BN_cmp(th->z[l], c->jz[l]) != 0)) {
                return bench_fail("%s: lane %u differs from the checked X:Y:Z", what, l);
            }
            break;
        default:
            want = op == X25519_OP_DERIVE ? c->xsecret[l] : c->xpub[l];
            n = 32;
            break;
        }
        if ((want != NULL && memcmp(th->out[l], want, n) != 0) ||
            (want2 != NULL && memcmp(th->out2[l], want2, n) != 0)) {
            return bench_fail("%s: lane %u differs from OpenSSL", what, l);
        }
    }
    return 0;
}

/* jacobian_is: X:Y:Z (Jacobian) is the affine point 04 || x || y of len-byte coordinates. */
static int jacobian_is(const EC_GROUP *g, const BIGNUM *x, const BIGNUM *y, const BIGNUM *z,
                       const uint8_t *point, unsigned len)
{
    BN_CTX *bn = BN_CTX_new();
    BIGNUM *p = BN_new(), *zi = BN_new(), *t = BN_new(), *ax = BN_new(), *ay = BN_new();
    uint8_t got[2 * ECB];
    int ok =
        bn != NULL && p != NULL && zi != NULL && t != NULL && ax != NULL && ay != NULL &&
        EC_GROUP_get_curve(g, p, NULL, NULL, bn) && BN_mod_inverse(zi, z, p, bn) != NULL &&
        BN_mod_sqr(t, zi, p, bn) && BN_mod_mul(ax, x, t, p, bn) && BN_mod_mul(t, t, zi, p, bn) &&
        BN_mod_mul(ay, y, t, p, bn) && BN_bn2binpad(ax, got, (int)len) == (int)len &&
        BN_bn2binpad(ay, got + len, (int)len) == (int)len && memcmp(got, point + 1, 2 * len) == 0;
    BN_free(p);
    BN_free(zi);
    BN_free(t);
    BN_free(ax);
    BN_free(ay);
    BN_CTX_free(bn);
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Material                                                                  */
/* ------------------------------------------------------------------------ */

static int rand_below(uint8_t *v, size_t len, const uint8_t *limit)
{
    do {
        if (RAND_bytes(v, (int)len) != 1) {
            return ossl_fail("RAND_bytes");
        }
    } while (memcmp(v, limit, len) >= 0 || v[0] == 0);
    return 0;
}

static int rsa_material(cmb_case *c)
{
    EVP_PKEY *k = EVP_RSA_gen(c->bits);
    int rc = 0;
    if (k == NULL || !EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &c->n) ||
        !EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_E, &c->e) ||
        !EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_FACTOR1, &c->p) ||
        !EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_FACTOR2, &c->q) ||
        !EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_EXPONENT1, &c->dp) ||
        !EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_EXPONENT2, &c->dq) ||
        !EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, &c->iq)) {
        rc = ossl_fail("RSA key");
    }
    uint8_t n[MAXB];
    if (rc == 0 && BN_bn2binpad(c->n, n, (int)c->len) != (int)c->len) {
        rc = ossl_fail("RSA modulus");
    }
    for (unsigned l = 0; l < L && rc == 0; l++) {
        if (rand_below(c->msg[l], c->len, n) != 0 ||
            mbt_ossl_rsa_raw(k, 1, c->sig[l], c->msg[l], c->len) != 0) {
            rc = ossl_fail("RSA private operation");
        }
    }
    EVP_PKEY_free(k);
    return rc;
}

static int ec_material(cmb_case *c)
{
    const mbc_curve curve = c->bits == 256 ? MBC_CURVE_P256 : MBC_CURVE_P384;
    const int nid = c->bits == 256 ? NID_X9_62_prime256v1 : NID_secp384r1;
    EVP_PKEY *key = mbt_ossl_ec_keygen(curve);
    EC_GROUP *g = EC_GROUP_new_by_curve_name(nid);
    uint8_t d[ECB], q[1 + 2 * ECB], n[ECB], kb[ECB], sig[2 * ECB];
    if (key == NULL || g == NULL || mbt_ossl_ec_get(key, curve, d, q) != 0 ||
        BN_bn2binpad(EC_GROUP_get0_order(g), n, (int)c->len) != (int)c->len) {
        EVP_PKEY_free(key);
        EC_GROUP_free(g);
        return ossl_fail("EC key");
    }
    c->d = BN_bin2bn(d, (int)c->len, NULL);
    c->qx = BN_bin2bn(q + 1, (int)c->len, NULL);
    c->qy = BN_bin2bn(q + 1 + c->len, (int)c->len, NULL);
    c->one = BN_new();
    int rc = c->d != NULL && c->qx != NULL && c->qy != NULL && c->one != NULL && BN_one(c->one)
                 ? 0
                 : ossl_fail("BIGNUM");
    for (unsigned l = 0; l < L && rc == 0; l++) {
        EVP_PKEY *peer = NULL;
        if (rand_below(kb, c->len, n) != 0 || RAND_bytes(c->msg[l], (int)c->len) != 1 ||
            (c->k[l] = BN_bin2bn(kb, (int)c->len, NULL)) == NULL ||
            mbt_ossl_ecdsa_sign_k(curve, d, kb, c->msg[l], c->len, sig) != 0 ||
            (peer = mbt_ossl_ec_from_d(curve, kb, c->len)) == NULL ||
            mbt_ossl_ecdh(peer, key, c->secret[l], c->len) != 0 ||
            (c->osig[l] = ECDSA_SIG_new()) == NULL ||
            !ECDSA_SIG_set0(c->osig[l], BN_bin2bn(sig, (int)c->len, NULL),
                            BN_bin2bn(sig + c->len, (int)c->len, NULL))) {
            rc = ossl_fail("EC request");
        }
        memcpy(c->r[l], sig, c->len);
        memcpy(c->s[l], sig + c->len, c->len);
        EVP_PKEY_free(peer);
    }
    EVP_PKEY_free(key);
    OPENSSL_cleanse(d, sizeof(d));
    EC_GROUP_free(g);
    return rc;
}

/* ec_check_keygen: crypto_mb's X:Y:Z of k[l] G (thread 0's) is OpenSSL's k[l] G; keeps it. */
static int ec_check_keygen(cmb_case *c, const struct cmb_thread *th)
{
    const mbc_curve curve = c->bits == 256 ? MBC_CURVE_P256 : MBC_CURVE_P384;
    EC_GROUP *g = EC_GROUP_new_by_curve_name(c->bits == 256 ? NID_X9_62_prime256v1 : NID_secp384r1);
    int rc = g != NULL ? 0 : ossl_fail("EC group");
    for (unsigned l = 0; l < L && rc == 0; l++) {
        uint8_t kb[ECB], point[1 + 2 * ECB];
        if (BN_bn2binpad(c->k[l], kb, (int)c->len) != (int)c->len ||
            mbt_ossl_ec_mul_g(curve, kb, c->len, point) != 0) {
            rc = ossl_fail("EC d G");
        } else if (!jacobian_is(g, th->x[l], th->y[l], th->z[l], point, c->len)) {
            rc = bench_fail("crypto_mb P-%u keygen: lane %u is not k G (OpenSSL)", c->bits, l);
        } else if ((c->jx[l] = BN_dup(th->x[l])) == NULL || (c->jy[l] = BN_dup(th->y[l])) == NULL ||
                   (c->jz[l] = BN_dup(th->z[l])) == NULL) {
            rc = ossl_fail("BN_dup");
        }
    }
    EC_GROUP_free(g);
    return rc;
}

static int x25519_material(cmb_case *c)
{
    for (unsigned l = 0; l < L; l++) {
        uint8_t other[32];
        if (RAND_bytes(c->xpriv[l], 32) != 1 || RAND_bytes(other, 32) != 1 ||
            mbt_ossl_x25519_public(c->xpeer[l], other) != 0 ||
            mbt_ossl_x25519_public(c->xpub[l], c->xpriv[l]) != 0 ||
            mbt_ossl_x25519(c->xsecret[l], c->xpriv[l], c->xpeer[l]) != 0) {
            return ossl_fail("X25519 request");
        }
    }
    return 0;
}

void cmb_case_free(cmb_case *c)
{
    if (c == NULL) {
        return;
    }
    for (unsigned t = 0; t < BENCH_MAX_THREADS; t++) {
        struct cmb_thread *th = c->th[t];
        if (th == NULL) {
            continue;
        }
        for (unsigned l = 0; l < L; l++) {
            BN_free(th->x[l]);
            BN_free(th->y[l]);
            BN_free(th->z[l]);
        }
        free(th);
    }
    BIGNUM *bns[] = {c->n, c->e, c->p, c->q, c->dp, c->dq, c->iq, c->qx, c->qy, c->one};
    for (size_t i = 0; i < sizeof(bns) / sizeof(bns[0]); i++) {
        BN_free(bns[i]);
    }
    BN_clear_free(c->d);
    for (unsigned l = 0; l < L; l++) {
        BN_clear_free(c->k[l]);
        BN_free(c->jx[l]);
        BN_free(c->jy[l]);
        BN_free(c->jz[l]);
        ECDSA_SIG_free(c->osig[l]);
    }
    free(c);
}

cmb_case *cmb_case_new(enum cmb_family fam, unsigned bits, const bench_opts *opts)
{
    cmb_case *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        bench_fail("out of memory");
        return NULL;
    }
    c->fam = fam;
    c->bits = bits;
    c->len = fam == CMB_X25519 ? 32 : (bits + 7) / 8;
    c->num_threads = opts->threads;
    int rc = fam == CMB_RSA ? rsa_material(c) : fam == CMB_EC ? ec_material(c) : x25519_material(c);
    for (unsigned t = 0; t < c->num_threads && rc == 0; t++) {
        struct cmb_thread *th = calloc(1, sizeof(*th));
        if (th == NULL) {
            rc = bench_fail("out of memory");
            break;
        }
        c->th[t] = th;
        th->c = c;
        for (unsigned l = 0; l < L && fam == CMB_EC; l++) {
            if ((th->x[l] = BN_new()) == NULL || (th->y[l] = BN_new()) == NULL ||
                (th->z[l] = BN_new()) == NULL) {
                rc = ossl_fail("BN_new");
            }
        }
    }
    /* Every operation once, every lane against OpenSSL. */
    const unsigned nops = fam == CMB_EC ? 4 : 2;
    for (unsigned op = 0; op < nops && rc == 0; op++) {
        struct cmb_thread *th = c->th[0];
        const mbx_status st = call(th, op);
        if (fam == CMB_EC && op == EC_OP_KEYGEN && st == MBX_STATUS_OK) {
            rc = ec_check_keygen(c, th);
        }
        if (rc == 0) {
            rc = check(th, op, st);
        }
    }
    if (rc != 0) {
        cmb_case_free(c);
        return NULL;
    }
    return c;
}

void *const *cmb_case_threads(const cmb_case *c)
{
    return (void *const *)c->th;
}

static int unit(void *ts, unsigned op, uint64_t *t_done)
{
    struct cmb_thread *th = ts;
    const mbx_status st = call(th, op);
    *t_done = bench_now_ns();
    return check(th, op, st) != 0 ? -1 : L;
}

int cmb_run(void *ts, const void *arg, double seconds, run_out *out)
{
    const pk_arg *a = arg;
    return bench_timed_run(ts, a->op, seconds, out, unit);
}

#else /* !MBT_HAVE_CRYPTO_MB */

const char *cmb_version(void)
{
    return NULL;
}

const char *cmb_unusable(void)
{
    return "mbc_bench was built without crypto_mb (meson option crypto_mb)";
}

cmb_case *cmb_case_new(enum cmb_family fam, unsigned bits, const bench_opts *opts)
{
    (void)fam;
    (void)bits;
    (void)opts;
    bench_fail("crypto_mb: %s", cmb_unusable());
    return NULL;
}

void cmb_case_free(cmb_case *c)
{
    (void)c;
}

void *const *cmb_case_threads(const cmb_case *c)
{
    (void)c;
    return NULL;
}

int cmb_run(void *ts, const void *arg, double seconds, run_out *out)
{
    (void)ts;
    (void)arg;
    (void)seconds;
    (void)out;
    return bench_fail("crypto_mb: %s", cmb_unusable());
}

#endif
