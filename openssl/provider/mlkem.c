/*
 * mlkem.c - ML-KEM-768 (FIPS 203) and the hybrid X25519MLKEM768 key
 * management and KEM, as OpenSSL 3.5's default provider has them (offered
 * only when the core is 3.5 or later, see prov.c):
 *
 *  - ML-KEM-768: the public key is the 1184-byte encapsulation key ek, the
 *    private key the 2400-byte decapsulation key dk (which holds ek), the
 *    64-byte seed d || z is kept when the key was made from one (every key
 *    pair made here is: the seed given, or one drawn); parameters
 *    "pub", "priv", "seed", "encoded-pub-key"; key generation takes "seed";
 *    encapsulation takes "ikme" (its 32-byte m).
 *  - X25519MLKEM768: the ML-KEM part first, then X25519's (pub ek || u,
 *    1216 bytes; priv dk || scalar, 2432 bytes); the ciphertext is the
 *    ML-KEM ciphertext then the ephemeral X25519 public key (1120 bytes);
 *    the 64-byte secret is the ML-KEM secret then the X25519 one.
 *  - SecP256r1MLKEM768: the P-256 part first (pub point 04 || X || Y || ek,
 *    1249 bytes; priv d || dk, 2432 bytes; ciphertext ephemeral point ||
 *    ML-KEM ciphertext, 1153 bytes; secret ECDH x || ML-KEM secret).
 *
 * One table row per kind; the code is the same for all, the classical half
 * (struct half) where the row puts it. The checks of FIPS 203 section 7.2 and 7.3
 * are made where OpenSSL makes them, when a key is set: an encapsulation
 * key whose coefficients are not all below q is refused (modulus check),
 * a decapsulation key whose H(ek) is not SHA3-256 of its ek is refused (hash
 * check). Key pairs, encapsulations and decapsulations go through the
 * thread's lane manager (batched inside an ASYNC job): the ML-KEM part and
 * the classical half's requests submitted together (mbo_run_jobs), so an
 * ASYNC job pauses once for all of them. The secrets drawn here (a key
 * pair's seed d || z, kept as OpenSSL 3.5 keeps it; X25519's ephemeral
 * scalar, whose public key and secret are then two requests of the same
 * round) come from OpenSSL's random generator, as the default provider's.
 * P-256's ephemeral key pair is a request of its own before its secret's
 * (its key object needs the point): that encapsulation takes two rounds
 * (one where EC's implementation has one lane: the secret's ECDH alone
 * runs at once, mbo_run_jobs).
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "prov.h"

#define EK MBC_MLKEM768_EK_LEN
#define DK MBC_MLKEM768_DK_LEN
#define CT MBC_MLKEM768_CT_LEN
#define SS MBC_MLKEM_SS_LEN
#define SEED MBC_MLKEM_SEED_LEN
#define HALF_PUB_MAX 65  /* a P-256 point 04 || X || Y */
#define HALF_PRIV_MAX 32 /* an X25519 or P-256 private key */

/* OpenSSL 3.5's parameter names (the 3.0 headers we build with lack them). */
#define PARAM_SEED "seed"
#define PARAM_IKME "ikme"

/*
 * half: the classical half of a hybrid: the lengths of its public key
 * (also its part of the ciphertext: an ephemeral public key) and private
 * key (its secret is 32 bytes), whether it comes before the ML-KEM part,
 * and its operations: the job of a key pair, the public key of a private
 * one (at once), the check of a peer's public key, the job of the secret of
 * priv (whose public key is pub) with peer (*key: a key object the job
 * uses, for the caller to free after the run; NULL when none), and, when
 * any priv-length string is a private key, the job of the public key of
 * one (NULL: an ephemeral key pair is a keygen job run before the secret's).
 */
struct half {
    size_t pub, priv;
    int first;
    void (*keygen)(mbc_job *job, uint8_t *priv, uint8_t *pub);
    mbc_err (*pub_of)(uint8_t *pub, const uint8_t *priv);
    mbc_err (*check)(const uint8_t *pub);
    mbc_err (*derive)(mbc_job *job, mbc_ec_priv_key **key, uint8_t *ss, const uint8_t *priv,
                      const uint8_t *pub, const uint8_t *peer);
    void (*pub_job)(mbc_job *job, uint8_t *pub, const uint8_t *priv);
};

/* X25519 (after ML-KEM): every 32 bytes are a public key (RFC 7748), and
 * a private key (clamped where it is used). */
static mbc_err x_check(const uint8_t *pub)
{
    (void)pub;
    return MBC_OK;
}
static mbc_err x_derive(mbc_job *job, mbc_ec_priv_key **key, uint8_t *ss, const uint8_t *priv,
                        const uint8_t *pub, const uint8_t *peer)
{
    (void)pub;
    *key = NULL;
    mbo_x25519_derive_job(job, ss, priv, peer);
    return MBC_OK;
}
static const struct half x25519_half = {
    MBC_X25519_LEN,        MBC_X25519_LEN, 0,        mbo_x25519_keygen_job,
    mbo_x25519_public_key, x_check,        x_derive, mbo_x25519_public_key_job};

/* P-256 (before ML-KEM): uncompressed points, 32-byte scalars. */
static void p_keygen(mbc_job *job, uint8_t *priv, uint8_t *pub)
{
    mbo_ec_keygen_job(job, MBC_CURVE_P256, priv, pub);
}
static mbc_err p_pub_of(uint8_t *pub, const uint8_t *priv)
{
    mbc_ec_priv_key *k = NULL;
    mbc_err err = mbo_ec_priv_key_new(&k, MBC_CURVE_P256, priv, 32);
    if (err == MBC_OK) {
        err = mbc_ec_priv_key_public(k, pub, 65);
    }
    mbc_ec_priv_key_free(k);
    return err;
}
static mbc_err p_check(const uint8_t *pub)
{
    mbc_ec_pub_key *k = NULL;
    const mbc_err err = mbo_ec_pub_key_new(&k, MBC_CURVE_P256, pub, 65);
    mbc_ec_pub_key_free(k);
    return err;
}
static mbc_err p_derive(mbc_job *job, mbc_ec_priv_key **key, uint8_t *ss, const uint8_t *priv,
                        const uint8_t *pub, const uint8_t *peer)
{
    const mbc_err err = mbo_ec_priv_key_new_pair(key, MBC_CURVE_P256, priv, 32, pub, 65);
    if (err == MBC_OK) {
        mbo_ecdh_job(job, *key, ss, peer, 65);
    }
    return err;
}
static const struct half p256_half = {65, 32, 1, p_keygen, p_pub_of, p_check, p_derive, NULL};

/* The kinds: ML-KEM-768 alone, or with a classical half. */
struct kind {
    const char *name;
    const struct half *half;
};
static const struct kind kinds[] = {
    {"ML-KEM-768", NULL},
    {"X25519MLKEM768", &x25519_half},
    {"SecP256r1MLKEM768", &p256_half},
};

/* The lengths of kind k's public key, private key, ciphertext, secret. */
static size_t pub_len(const struct kind *k)
{
    return EK + (k->half != NULL ? k->half->pub : 0);
}
static size_t priv_len(const struct kind *k)
{
    return DK + (k->half != NULL ? k->half->priv : 0);
}
static size_t ct_len(const struct kind *k)
{
    return CT + (k->half != NULL ? k->half->pub : 0);
}
static size_t ss_len(const struct kind *k)
{
    return SS + (k->half != NULL ? SS : 0);
}

/* at: where part (0 ML-KEM, 1 the classical half) of one of k's strings
 * starts, whose ML-KEM part is m bytes and classical part x bytes. */
static size_t at(const struct kind *k, int part, size_t m, size_t x)
{
    const int first = k->half != NULL && k->half->first;
    return part == 0 ? (first ? x : 0) : (first ? 0 : m);
}
static size_t at_pub(const struct kind *k, int part)
{
    return at(k, part, EK, k->half != NULL ? k->half->pub : 0);
}
static size_t at_priv(const struct kind *k, int part)
{
    return at(k, part, DK, k->half != NULL ? k->half->priv : 0);
}
static size_t at_ct(const struct kind *k, int part)
{
    return at(k, part, CT, k->half != NULL ? k->half->pub : 0);
}
static size_t at_ss(const struct kind *k, int part)
{
    return at(k, part, SS, SS);
}

/* mkey: pub = ek and priv = dk, with the classical half's public and
 * private keys where the kind puts them (at_pub, at_priv); ek is also
 * inside dk. */
struct mkey {
    struct mbp_ctx *pc;
    const struct kind *kind;
    int has_pub, has_priv, has_seed;
    uint8_t pub[EK + HALF_PUB_MAX];
    uint8_t priv[DK + HALF_PRIV_MAX];
    uint8_t seed[SEED];
};

/* Where ek sits inside dk (FIPS 203: dk_PKE || ek || H(ek) || z). */
#define DK_EK 1152
#define DK_H (DK_EK + EK)

static void *k_new(struct mbp_ctx *pc, const struct kind *kind)
{
    struct mkey *k = OPENSSL_zalloc(sizeof(*k));
    if (k != NULL) {
        k->pc = pc;
        k->kind = kind;
    }
    return k;
}

static void k_free(void *keydata)
{
    OPENSSL_clear_free(keydata, sizeof(struct mkey));
}

static int k_has(const void *keydata, int selection)
{
    const struct mkey *k = keydata;
    if (k == NULL) {
        return 0;
    }
    return ((selection & MBP_SEL_PUB) == 0 || k->has_pub) &&
           ((selection & MBP_SEL_PRIV) == 0 || k->has_priv);
}

/* k_match: as OpenSSL's, the public keys decide (both without: equal). */
static int k_match(const void *a, const void *b, int selection)
{
    const struct mkey *x = a, *y = b;
    if (x->kind != y->kind) {
        return 0;
    }
    if ((selection & MBP_SEL_KEYPAIR) == 0) {
        return 1;
    }
    if (x->has_pub != y->has_pub) {
        return 0;
    }
    return !x->has_pub || memcmp(x->pub, y->pub, pub_len(x->kind)) == 0;
}

/* ek_ok: FIPS 203's modulus check: every 12-bit coefficient of ek's 3
 * polynomials (the first 1152 bytes) is below q. Public data. */
static int ek_ok(const uint8_t *ek)
{
    for (size_t i = 0; i < DK_EK; i += 3) {
        const unsigned a = ek[i] | (ek[i + 1] & 0x0Fu) << 8;
        const unsigned b = ek[i + 1] >> 4 | (unsigned)ek[i + 2] << 4;
        if (a >= 3329 || b >= 3329) {
            return 0;
        }
    }
    return 1;
}

/* dk_ok: FIPS 203's hash check: H(ek) inside dk is SHA3-256 of its ek
 * (the default provider's digest, in our child library context). */
static int dk_ok(struct mbp_ctx *pc, const uint8_t *dk)
{
    uint8_t h[32];
    unsigned hlen = 0;
    EVP_MD *md = EVP_MD_fetch(pc->libctx, "SHA3-256", MBP_NOT_OURS);
    const int ok = md != NULL && EVP_Digest(dk + DK_EK, EK, h, &hlen, md, NULL) && hlen == 32 &&
                   memcmp(h, dk + DK_H, 32) == 0;
    EVP_MD_free(md);
    return ok;
}

/* get_oct: the octet string param name of params: 1 with *v, *len set,
 * 0 absent, -1 of another type. */
static int get_oct(const OSSL_PARAM params[], const char *name, const void **v, size_t *len)
{
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, name);
    if (p == NULL) {
        return 0;
    }
    return OSSL_PARAM_get_octet_string_ptr(p, v, len) ? 1 : -1;
}

/* set_pub: n gets the public key pub (pub_len bytes), checked. */
static int set_pub(struct mkey *n, const uint8_t *pub)
{
    const struct kind *kind = n->kind;
    if (!ek_ok(pub + at_pub(kind, 0))) {
        mbp_err(n->pc, MBP_R_BAD_KEY, "%s encapsulation key fails the modulus check", kind->name);
        return 0;
    }
    mbc_err err = MBC_OK;
    if (kind->half != NULL && (err = kind->half->check(pub + at_pub(kind, 1))) != MBC_OK) {
        mbp_err(n->pc, MBP_R_BAD_KEY, "%s classical public key: %s", kind->name, mbc_err_str(err));
        return 0;
    }
    memcpy(n->pub, pub, pub_len(n->kind));
    n->has_pub = 1;
    return 1;
}

/* set_priv: n gets the private key priv (priv_len bytes), checked, and the
 * public key it holds. */
static int set_priv(struct mkey *n, const uint8_t *priv)
{
    const struct kind *kind = n->kind;
    const uint8_t *dk = priv + at_priv(kind, 0);
    if (!ek_ok(dk + DK_EK) || !dk_ok(n->pc, dk)) {
        mbp_err(n->pc, MBP_R_BAD_KEY, "%s decapsulation key fails the FIPS 203 checks", kind->name);
        return 0;
    }
    memcpy(n->priv, priv, priv_len(kind));
    memcpy(n->pub + at_pub(kind, 0), dk + DK_EK, EK);
    mbc_err err = MBC_OK;
    if (kind->half != NULL &&
        (err = kind->half->pub_of(n->pub + at_pub(kind, 1), priv + at_priv(kind, 1))) != MBC_OK) {
        mbp_err(n->pc, MBP_R_BAD_KEY, "%s classical private key: %s", kind->name, mbc_err_str(err));
        return 0;
    }
    n->has_pub = n->has_priv = 1;
    return 1;
}

/* draw: len bytes of OpenSSL's random generator (private), as the default
 * provider draws its seeds; MBC_ERR_UNSUPPORTED when it gives none. */
static mbc_err draw(const struct mbp_ctx *pc, uint8_t *buf, size_t len)
{
    return RAND_priv_bytes_ex(pc->libctx, buf, len, 0) > 0 ? MBC_OK : MBC_ERR_UNSUPPORTED;
}

/* from_seed: n = the key pair of the ML-KEM-768 seed with, for a hybrid, a
 * new classical key pair: one round of the lane manager. ML-KEM-768 keeps
 * the seed (as OpenSSL 3.5: its hybrids keep none). */
static int from_seed(struct mkey *n, const uint8_t *seed)
{
    const struct kind *kind = n->kind;
    mbc_job jobs[2];
    mbc_job *const js[2] = {&jobs[0], &jobs[1]};
    mbo_mlkem768_keygen_seed_job(&jobs[0], n->pub + at_pub(kind, 0), n->priv + at_priv(kind, 0),
                                 seed);
    if (kind->half != NULL) {
        kind->half->keygen(&jobs[1], n->priv + at_priv(kind, 1), n->pub + at_pub(kind, 1));
    }
    const mbc_err err = mbo_run_jobs(js, kind->half != NULL ? 2 : 1);
    if (err != MBC_OK) {
        mbp_err(n->pc, MBP_R_MBCRYPTO, "%s: %s", kind->name, mbc_err_str(err));
        return 0;
    }
    if (kind->half == NULL) {
        memcpy(n->seed, seed, SEED);
        n->has_seed = 1;
    }
    n->has_pub = n->has_priv = 1;
    return 1;
}

/*
 * k_import: as OpenSSL 3.5: a seed (ML-KEM-768, with a private selection)
 * makes the pair, a private key otherwise, else the public key; what else
 * is given must agree with it. Keys are not changed once set.
 */
static int k_import(void *keydata, int selection, const OSSL_PARAM params[])
{
    struct mkey *k = keydata;
    if (k == NULL || (selection & MBP_SEL_KEYPAIR) == 0 || k->has_pub) {
        return 0;
    }
    const struct kind *kind = k->kind;
    const int want_priv = (selection & MBP_SEL_PRIV) != 0;
    const void *pub = NULL, *priv = NULL, *seed = NULL;
    size_t pl = 0, vl = 0, sl = 0;
    const int gp = get_oct(params, OSSL_PKEY_PARAM_PUB_KEY, &pub, &pl);
    const int gv = want_priv ? get_oct(params, OSSL_PKEY_PARAM_PRIV_KEY, &priv, &vl) : 0;
    const int gs = want_priv && kind->half == NULL ? get_oct(params, PARAM_SEED, &seed, &sl) : 0;
    if (gp < 0 || gv < 0 || gs < 0 || (gp > 0 && pl != pub_len(kind)) ||
        (gv > 0 && vl != priv_len(kind)) || (gs > 0 && sl != SEED)) {
        mbp_err(k->pc, MBP_R_BAD_LENGTH, "%s key component", kind->name);
        return 0;
    }
    if (gp == 0 && gv == 0 && gs == 0) {
        mbp_err(k->pc, MBP_R_BAD_KEY, "%s: no key given", kind->name);
        return 0;
    }
    struct mkey *n = k_new(k->pc, kind);
    if (n == NULL) {
        return 0;
    }
    int ok = gs > 0 ? from_seed(n, seed) : gv > 0 ? set_priv(n, priv) : set_pub(n, pub);
    if (ok && ((gv > 0 && gs > 0 && CRYPTO_memcmp(n->priv, priv, vl) != 0) ||
               (gp > 0 && (gs > 0 || gv > 0) && memcmp(n->pub, pub, pl) != 0))) {
        mbp_err(k->pc, MBP_R_BAD_KEY, "%s key components disagree", kind->name);
        ok = 0;
    }
    if (ok) {
        memcpy(k, n, sizeof(*k));
    }
    k_free(n);
    return ok;
}

/* to_params: k's components for selection (the caller frees with
 * mbp_params_clear_free). */
static OSSL_PARAM *to_params(const struct mkey *k, int selection)
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    if (bld == NULL) {
        return NULL;
    }
    const int priv = (selection & MBP_SEL_PRIV) != 0 && k->has_priv;
    int ok =
        (selection & MBP_SEL_PUB) == 0 ||
        OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, k->pub, pub_len(k->kind));
    if (ok && priv) {
        ok = OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PRIV_KEY, k->priv,
                                              priv_len(k->kind));
    }
    if (ok && priv && k->has_seed) {
        ok = OSSL_PARAM_BLD_push_octet_string(bld, PARAM_SEED, k->seed, SEED);
    }
    OSSL_PARAM *params = ok ? OSSL_PARAM_BLD_to_param(bld) : NULL;
    OSSL_PARAM_BLD_free(bld);
    return params;
}

static int k_export(void *keydata, int selection, OSSL_CALLBACK *cb, void *cbarg)
{
    const struct mkey *k = keydata;
    if (k == NULL || !k->has_pub || (selection & MBP_SEL_KEYPAIR) == 0) {
        return 0;
    }
    OSSL_PARAM *params = to_params(k, selection);
    const int ok = params != NULL && cb(params, cbarg);
    mbp_params_clear_free(params);
    return ok;
}

static const OSSL_PARAM key_types[] = {
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PRIV_KEY, NULL, 0),
    OSSL_PARAM_octet_string(PARAM_SEED, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *k_key_types(int selection)
{
    return (selection & MBP_SEL_KEYPAIR) != 0 ? key_types : NULL;
}

/* k_get_params: the sizes are ML-KEM-768's (bits 768, security bits 192),
 * max-size the ciphertext's, as OpenSSL 3.5 says them. */
static int k_get_params(void *keydata, OSSL_PARAM params[])
{
    const struct mkey *k = keydata;
    if (!mbp_key_sizes(params, 768, 192, (int)ct_len(k->kind))) {
        return 0;
    }
    const struct {
        const char *name;
        int has;
        const uint8_t *v;
        size_t len;
    } comps[] = {
        {OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, k->has_pub, k->pub, pub_len(k->kind)},
        {OSSL_PKEY_PARAM_PUB_KEY, k->has_pub, k->pub, pub_len(k->kind)},
        {OSSL_PKEY_PARAM_PRIV_KEY, k->has_priv, k->priv, priv_len(k->kind)},
        {PARAM_SEED, k->has_seed, k->seed, SEED},
    };
    for (size_t i = 0; i < sizeof(comps) / sizeof(comps[0]); i++) {
        OSSL_PARAM *p = OSSL_PARAM_locate(params, comps[i].name);
        if (p != NULL && comps[i].has &&
            !OSSL_PARAM_set_octet_string(p, comps[i].v, comps[i].len)) {
            return 0;
        }
    }
    return 1;
}

static const OSSL_PARAM gettable[] = {
    OSSL_PARAM_int(OSSL_PKEY_PARAM_BITS, NULL),
    OSSL_PARAM_int(OSSL_PKEY_PARAM_SECURITY_BITS, NULL),
    OSSL_PARAM_int(OSSL_PKEY_PARAM_MAX_SIZE, NULL),
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PRIV_KEY, NULL, 0),
    OSSL_PARAM_octet_string(PARAM_SEED, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *k_gettable_params(void *provctx)
{
    (void)provctx;
    return gettable;
}

/* k_set_params: encoded-pub-key (a peer's key share) on a key that has
 * none yet, checked; as in OpenSSL 3.5 a key is not changed once set. */
static int k_set_params(void *keydata, const OSSL_PARAM params[])
{
    struct mkey *k = keydata;
    const void *pub = NULL;
    size_t len = 0;
    const int r = get_oct(params, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, &pub, &len);
    if (r == 0) {
        return 1;
    }
    if (k->has_pub) {
        mbp_err(k->pc, MBP_R_BAD_KEY, "%s keys cannot be changed", k->kind->name);
        return 0;
    }
    if (r < 0 || len != pub_len(k->kind)) {
        mbp_err(k->pc, MBP_R_BAD_LENGTH, "%s public key of %zu bytes", k->kind->name, len);
        return 0;
    }
    return set_pub(k, pub);
}

static const OSSL_PARAM settable[] = {
    OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *k_settable_params(void *provctx)
{
    (void)provctx;
    return settable;
}

/* k_validate: the FIPS 203 checks again (keys are checked when set), and a
 * pair's public key is the one its private key holds. */
static int k_validate(const void *keydata, int selection, int checktype)
{
    (void)checktype;
    const struct mkey *k = keydata;
    if (!k_has(k, selection)) {
        return 0;
    }
    const struct kind *kind = k->kind;
    const uint8_t *ek = k->pub + at_pub(kind, 0), *dk = k->priv + at_priv(kind, 0);
    if ((selection & MBP_SEL_PUB) != 0 && !ek_ok(ek)) {
        return 0;
    }
    if ((selection & MBP_SEL_PRIV) != 0 && !dk_ok(k->pc, dk)) {
        return 0;
    }
    if ((selection & MBP_SEL_KEYPAIR) != MBP_SEL_KEYPAIR) {
        return 1;
    }
    uint8_t u[HALF_PUB_MAX];
    return memcmp(dk + DK_EK, ek, EK) == 0 &&
           (kind->half == NULL || (kind->half->pub_of(u, k->priv + at_priv(kind, 1)) == MBC_OK &&
                                   memcmp(u, k->pub + at_pub(kind, 1), kind->half->pub) == 0));
}

static void *k_dup(const void *keydata, int selection)
{
    const struct mkey *src = keydata;
    struct mkey *k = k_new(src->pc, src->kind);
    if (k == NULL) {
        return NULL;
    }
    if ((selection & MBP_SEL_PUB) != 0 || (selection & MBP_SEL_PRIV) != 0) {
        k->has_pub = src->has_pub;
        memcpy(k->pub, src->pub, sizeof(k->pub));
    }
    if ((selection & MBP_SEL_PRIV) != 0) {
        k->has_priv = src->has_priv;
        k->has_seed = src->has_seed;
        memcpy(k->priv, src->priv, sizeof(k->priv));
        memcpy(k->seed, src->seed, SEED);
    }
    return k;
}

/* ------------------------------------------------------------ generation */

struct mgen {
    struct mbp_ctx *pc;
    const struct kind *kind;
    int selection;
    int has_seed;
    uint8_t seed[SEED];
};

/* g_set_params: a seed (ML-KEM-768: OpenSSL 3.5's hybrid takes none);
 * the properties and group name libssl may set are taken and ignored. */
static int g_set_params(void *genctx, const OSSL_PARAM params[])
{
    struct mgen *g = genctx;
    const void *seed = NULL;
    size_t len = 0;
    const int r = g->kind->half != NULL ? 0 : get_oct(params, PARAM_SEED, &seed, &len);
    if (r < 0 || (r > 0 && len != SEED)) {
        mbp_err(g->pc, MBP_R_BAD_LENGTH, "ML-KEM seed of %zu bytes (64 wanted)", len);
        return 0;
    }
    if (r > 0) {
        memcpy(g->seed, seed, SEED);
        g->has_seed = 1;
    }
    return 1;
}

static void g_cleanup(void *genctx)
{
    OPENSSL_clear_free(genctx, sizeof(struct mgen));
}

static void *g_init(struct mbp_ctx *pc, const struct kind *kind, int selection,
                    const OSSL_PARAM params[])
{
    struct mgen *g = OPENSSL_zalloc(sizeof(*g));
    if (g == NULL) {
        return NULL;
    }
    g->pc = pc;
    g->kind = kind;
    g->selection = selection;
    if (!g_set_params(g, params)) {
        g_cleanup(g);
        return NULL;
    }
    return g;
}

static const OSSL_PARAM gen_settable_mlkem[] = {
    OSSL_PARAM_octet_string(PARAM_SEED, NULL, 0),
    OSSL_PARAM_END,
};
static const OSSL_PARAM gen_settable_hybrid[] = {
    OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_PROPERTIES, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *g_settable_params(void *genctx, void *provctx)
{
    (void)provctx;
    const struct mgen *g = genctx;
    return g != NULL && g->kind->half != NULL ? gen_settable_hybrid : gen_settable_mlkem;
}

/* g_gen: a key pair from the seed given, or from one drawn here (kept by
 * ML-KEM-768 either way, see from_seed); an empty key when only
 * parameters were asked for (libssl then sets a peer's encoded key on
 * it). */
static void *g_gen(void *genctx, OSSL_CALLBACK *cb, void *cbarg)
{
    (void)cb;
    (void)cbarg;
    struct mgen *g = genctx;
    struct mkey *k = k_new(g->pc, g->kind);
    if (k == NULL || (g->selection & MBP_SEL_KEYPAIR) == 0) {
        return k;
    }
    const mbc_err err = g->has_seed ? MBC_OK : draw(g->pc, g->seed, SEED);
    const int ok = err == MBC_OK && from_seed(k, g->seed);
    OPENSSL_cleanse(g->seed, SEED); /* single use, as in OpenSSL */
    g->has_seed = 0;
    if (!ok) {
        if (err != MBC_OK) {
            mbp_err(g->pc, MBP_R_MBCRYPTO, "%s seed: %s", g->kind->name, mbc_err_str(err));
        }
        k_free(k);
        return NULL;
    }
    return k;
}

/* The two key managements: the same calls, each with its kind. */
#define KEYMGMT(fn, i)                                                                             \
    static void *fn##_new(void *provctx)                                                           \
    {                                                                                              \
        return k_new(provctx, &kinds[i]);                                                          \
    }                                                                                              \
    static void *fn##_gen_init(void *provctx, int selection, const OSSL_PARAM params[])            \
    {                                                                                              \
        return g_init(provctx, &kinds[i], selection, params);                                      \
    }                                                                                              \
    const OSSL_DISPATCH mbp_##fn##_keymgmt[] = {                                                   \
        {OSSL_FUNC_KEYMGMT_NEW, (void (*)(void))fn##_new},                                         \
        {OSSL_FUNC_KEYMGMT_FREE, (void (*)(void))k_free},                                          \
        {OSSL_FUNC_KEYMGMT_HAS, (void (*)(void))k_has},                                            \
        {OSSL_FUNC_KEYMGMT_MATCH, (void (*)(void))k_match},                                        \
        {OSSL_FUNC_KEYMGMT_VALIDATE, (void (*)(void))k_validate},                                  \
        {OSSL_FUNC_KEYMGMT_IMPORT, (void (*)(void))k_import},                                      \
        {OSSL_FUNC_KEYMGMT_IMPORT_TYPES, (void (*)(void))k_key_types},                             \
        {OSSL_FUNC_KEYMGMT_EXPORT, (void (*)(void))k_export},                                      \
        {OSSL_FUNC_KEYMGMT_EXPORT_TYPES, (void (*)(void))k_key_types},                             \
        {OSSL_FUNC_KEYMGMT_GET_PARAMS, (void (*)(void))k_get_params},                              \
        {OSSL_FUNC_KEYMGMT_GETTABLE_PARAMS, (void (*)(void))k_gettable_params},                    \
        {OSSL_FUNC_KEYMGMT_SET_PARAMS, (void (*)(void))k_set_params},                              \
        {OSSL_FUNC_KEYMGMT_SETTABLE_PARAMS, (void (*)(void))k_settable_params},                    \
        {OSSL_FUNC_KEYMGMT_GEN_INIT, (void (*)(void))fn##_gen_init},                               \
        {OSSL_FUNC_KEYMGMT_GEN_SET_PARAMS, (void (*)(void))g_set_params},                          \
        {OSSL_FUNC_KEYMGMT_GEN_SETTABLE_PARAMS, (void (*)(void))g_settable_params},                \
        {OSSL_FUNC_KEYMGMT_GEN, (void (*)(void))g_gen},                                            \
        {OSSL_FUNC_KEYMGMT_GEN_CLEANUP, (void (*)(void))g_cleanup},                                \
        {OSSL_FUNC_KEYMGMT_DUP, (void (*)(void))k_dup},                                            \
        {0, NULL},                                                                                 \
    };
KEYMGMT(mlkem768, 0)
KEYMGMT(x25519mlkem768, 1)
KEYMGMT(secp256r1mlkem768, 2)

/* ------------------------------------------------------------------- KEM */

struct mkem {
    struct mbp_ctx *pc;
    const struct mkey *key; /* not owned: the EVP_PKEY_CTX holds it */
    int has_m;
    uint8_t m[MBC_MLKEM_MSG_LEN]; /* "ikme": the next encapsulation's m */
};

static void *e_newctx(void *provctx)
{
    struct mkem *e = OPENSSL_zalloc(sizeof(*e));
    if (e != NULL) {
        e->pc = provctx;
    }
    return e;
}

static void e_freectx(void *ctx)
{
    OPENSSL_clear_free(ctx, sizeof(struct mkem));
}

static void *e_dupctx(void *ctx)
{
    return OPENSSL_memdup(ctx, sizeof(struct mkem));
}

/* e_set_ctx_params: "ikme", ML-KEM-768's m (32 bytes; OpenSSL's hybrid
 * takes none). */
static int e_set_ctx_params(void *ctx, const OSSL_PARAM params[])
{
    struct mkem *e = ctx;
    const void *m = NULL;
    size_t len = 0;
    const int r = get_oct(params, PARAM_IKME, &m, &len);
    if (r == 0) {
        return 1;
    }
    if (r < 0 || len != MBC_MLKEM_MSG_LEN || (e->key != NULL && e->key->kind->half != NULL)) {
        mbp_err(e->pc, MBP_R_BAD_PARAM, "ikme (32 bytes, ML-KEM-768 only)");
        return 0;
    }
    memcpy(e->m, m, len);
    e->has_m = 1;
    return 1;
}

static int e_init(void *ctx, void *provkey, const OSSL_PARAM params[], int priv)
{
    struct mkem *e = ctx;
    const struct mkey *k = provkey;
    if (k == NULL || !(priv ? k->has_priv : k->has_pub)) {
        mbp_err(e->pc, MBP_R_BAD_KEY, "no %s key", priv ? "private" : "public");
        return 0;
    }
    e->key = k;
    e->has_m = 0;
    return e_set_ctx_params(e, params);
}

static int e_encaps_init(void *ctx, void *provkey, const OSSL_PARAM params[])
{
    return e_init(ctx, provkey, params, 0);
}

static int e_decaps_init(void *ctx, void *provkey, const OSSL_PARAM params[])
{
    return e_init(ctx, provkey, params, 1);
}

/* fail: err raised (a peer's share mbcrypto refuses, such as a low-order
 * X25519 point, as a bad key), secret wiped; 0. */
static int fail(const struct mkem *e, mbc_err err, unsigned char *secret)
{
    OPENSSL_cleanse(secret, ss_len(e->key->kind));
    const int ours = err == MBC_ERR_NO_MEMORY || err == MBC_ERR_UNSUPPORTED;
    mbp_err(e->pc, ours ? MBP_R_MBCRYPTO : MBP_R_BAD_KEY, "%s: %s", e->key->kind->name,
            mbc_err_str(err));
    return 0;
}

/* sizes: the lengths of ciphertext and secret, when asked (NULL buffers);
 * else the buffers' sizes checked (*outlen, *secretlen at least ours; a
 * NULL length is taken as big enough, as OpenSSL 3.5 still tolerates). */
static int sizes(const struct mkem *e, size_t *outlen, size_t need_out, size_t *secretlen,
                 size_t need_ss)
{
    if ((outlen != NULL && *outlen < need_out) || (secretlen != NULL && *secretlen < need_ss)) {
        mbp_err(e->pc, MBP_R_BAD_LENGTH, "%s output buffer too small", e->key->kind->name);
        return 0;
    }
    if (outlen != NULL) {
        *outlen = need_out;
    }
    if (secretlen != NULL) {
        *secretlen = need_ss;
    }
    return 1;
}

static int e_encaps(void *ctx, unsigned char *out, size_t *outlen, unsigned char *secret,
                    size_t *secretlen)
{
    struct mkem *e = ctx;
    if (e->key == NULL) {
        mbp_err(e->pc, MBP_R_INIT, "encapsulate");
        return 0;
    }
    const struct kind *kind = e->key->kind;
    if (out == NULL) {
        if (outlen == NULL && secretlen == NULL) {
            return 0;
        }
        if (outlen != NULL) {
            *outlen = ct_len(kind);
        }
        if (secretlen != NULL) {
            *secretlen = ss_len(kind);
        }
        return 1;
    }
    if (secret == NULL || outlen == NULL ||
        !sizes(e, outlen, ct_len(kind), secretlen, ss_len(kind))) {
        if (secret == NULL || outlen == NULL) {
            mbp_err(e->pc, MBP_R_BAD_LENGTH, "%s: no secret buffer or length", kind->name);
        }
        return 0;
    }
    const uint8_t *ek = e->key->pub + at_pub(kind, 0);
    uint8_t *ct = out + at_ct(kind, 0), *ss = secret + at_ss(kind, 0);
    if (e->has_m) { /* ML-KEM-768 alone (e_set_ctx_params) */
        const mbc_err err = mbo_mlkem768_encaps_m(ct, ss, ek, e->m);
        OPENSSL_cleanse(e->m, sizeof(e->m));
        e->has_m = 0;
        return err == MBC_OK ? 1 : fail(e, err, secret);
    }
    /* The ML-KEM encapsulation, and the classical half's ephemeral key
     * pair (its public key is its part of the ciphertext) and secret with
     * the peer's key: one round when the half makes the public key of a
     * private key drawn here, else the key pair first. */
    const struct half *h = kind->half;
    mbc_job jobs[3];
    mbc_job *const js[3] = {&jobs[0], &jobs[1], &jobs[2]};
    size_t n = 1;
    mbo_mlkem768_encaps_job(&jobs[0], ct, ss, ek);
    mbc_err err = MBC_OK;
    uint8_t eph[HALF_PRIV_MAX];
    mbc_ec_priv_key *hk = NULL;
    uint8_t *eph_pub = out + at_ct(kind, 1), *hss = secret + at_ss(kind, 1);
    const uint8_t *peer = e->key->pub + at_pub(kind, 1);
    if (h != NULL && h->pub_job != NULL) {
        err = draw(e->pc, eph, h->priv);
        h->pub_job(&jobs[n++], eph_pub, eph);
        if (err == MBC_OK) {
            err = h->derive(&jobs[n++], &hk, hss, eph, eph_pub, peer);
        }
    } else if (h != NULL) {
        h->keygen(&jobs[n++], eph, eph_pub);
        err = mbo_run_jobs(js, n);
        n = 0;
        if (err == MBC_OK) {
            err = h->derive(&jobs[n++], &hk, hss, eph, eph_pub, peer);
        }
    }
    if (err == MBC_OK && n != 0) {
        err = mbo_run_jobs(js, n);
    }
    mbc_ec_priv_key_free(hk);
    OPENSSL_cleanse(eph, sizeof(eph));
    return err == MBC_OK ? 1 : fail(e, err, secret);
}

static int e_decaps(void *ctx, unsigned char *secret, size_t *secretlen, const unsigned char *in,
                    size_t inlen)
{
    struct mkem *e = ctx;
    if (e->key == NULL) {
        mbp_err(e->pc, MBP_R_INIT, "decapsulate");
        return 0;
    }
    const struct kind *kind = e->key->kind;
    if (secret == NULL) {
        if (secretlen == NULL) {
            return 0;
        }
        *secretlen = ss_len(kind);
        return 1;
    }
    if (!sizes(e, NULL, 0, secretlen, ss_len(kind))) {
        return 0;
    }
    if (in == NULL || inlen != ct_len(kind)) {
        mbp_err(e->pc, MBP_R_BAD_LENGTH, "%s ciphertext of %zu bytes (%zu wanted)", kind->name,
                inlen, ct_len(kind));
        return 0;
    }
    /* The ML-KEM decapsulation and the classical secret, together. */
    const struct mkey *k = e->key;
    mbc_job jobs[2];
    mbc_job *const js[2] = {&jobs[0], &jobs[1]};
    mbo_mlkem768_decaps_job(&jobs[0], secret + at_ss(kind, 0), in + at_ct(kind, 0),
                            k->priv + at_priv(kind, 0));
    mbc_ec_priv_key *hk = NULL;
    mbc_err err =
        kind->half == NULL
            ? MBC_OK
            : kind->half->derive(&jobs[1], &hk, secret + at_ss(kind, 1), k->priv + at_priv(kind, 1),
                                 k->pub + at_pub(kind, 1), in + at_ct(kind, 1));
    if (err == MBC_OK) {
        err = mbo_run_jobs(js, kind->half != NULL ? 2 : 1);
    }
    mbc_ec_priv_key_free(hk);
    return err == MBC_OK ? 1 : fail(e, err, secret);
}

static const OSSL_PARAM e_settable_mlkem[] = {
    OSSL_PARAM_octet_string(PARAM_IKME, NULL, 0),
    OSSL_PARAM_END,
};

static const OSSL_PARAM *e_settable_ctx_params(void *ctx, void *provctx)
{
    (void)ctx;
    (void)provctx;
    return e_settable_mlkem;
}

const OSSL_DISPATCH mbp_mlkem_kem[] = {
    {OSSL_FUNC_KEM_NEWCTX, (void (*)(void))e_newctx},
    {OSSL_FUNC_KEM_FREECTX, (void (*)(void))e_freectx},
    {OSSL_FUNC_KEM_DUPCTX, (void (*)(void))e_dupctx},
    {OSSL_FUNC_KEM_ENCAPSULATE_INIT, (void (*)(void))e_encaps_init},
    {OSSL_FUNC_KEM_ENCAPSULATE, (void (*)(void))e_encaps},
    {OSSL_FUNC_KEM_DECAPSULATE_INIT, (void (*)(void))e_decaps_init},
    {OSSL_FUNC_KEM_DECAPSULATE, (void (*)(void))e_decaps},
    {OSSL_FUNC_KEM_SET_CTX_PARAMS, (void (*)(void))e_set_ctx_params},
    {OSSL_FUNC_KEM_SETTABLE_CTX_PARAMS, (void (*)(void))e_settable_ctx_params},
    {0, NULL},
};
