/*
 * rsa_key.c - RSA key objects: validation and Montgomery constants, computed
 * once at creation. One-lane arithmetic on 52-bit digit arrays; every step on
 * private components runs in constant time and only the verdict of a check
 * is revealed.
 */
#include <stdlib.h>
#include <string.h>

#include "../ct.h"
#include "../wipe.h"
#include "rsa_internal.h"

#define M52 MB52_MASK

/* bn_sub: r = a - b over k digits (r may be NULL); returns 1 on borrow. */
static uint64_t bn_sub(uint64_t *r, const uint64_t *a, const uint64_t *b, unsigned k)
{
    uint64_t borrow = 0;
    for (unsigned j = 0; j < k; j++) {
        uint64_t d = a[j] - b[j] - borrow;
        borrow = d >> 63;
        if (r != NULL) {
            r[j] = d & M52;
        }
    }
    return borrow;
}

/* bn_lt_mask: all-ones if a < b (k digits each), else 0. */
static uint64_t bn_lt_mask(const uint64_t *a, const uint64_t *b, unsigned k)
{
    return mbc_value_barrier(0 - bn_sub(NULL, a, b, k));
}

/* bn_cond_sub: x = x >= m ? x - m : x. x's top digit may exceed 52 bits. */
static void bn_cond_sub(uint64_t *x, const uint64_t *m, unsigned k)
{
    uint64_t t[MB52_MAX_DIGITS];
    uint64_t keep = mbc_value_barrier(0 - bn_sub(t, x, m, k));
    for (unsigned j = 0; j < k; j++) {
        x[j] = mbc_ct_select(keep, x[j], t[j]);
    }
    mbc_memzero(t, sizeof(t));
}

/* bn_double_mod: x = 2x mod m. Pre: x < m, 2m < 2^(52k + 1). */
static void bn_double_mod(uint64_t *x, const uint64_t *m, unsigned k)
{
    uint64_t carry = 0;
    for (unsigned j = 0; j < k; j++) {
        uint64_t v = (x[j] << 1) | carry;
        carry = v >> 52;
        x[j] = (j + 1 < k) ? (v & M52) : v;
    }
    bn_cond_sub(x, m, k);
}

/* bn_amm: one-lane almost-Montgomery product, the same algorithm as
 * mb52_amm_k: r = a b / R mod m, r < 2m for a, b < 2m. r may alias a, b. */
static void bn_amm(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *m,
                   uint64_t m0inv, unsigned k)
{
    uint64_t acc[MB52_MAX_DIGITS] = {0};
    for (unsigned i = 0; i < k; i++) {
        const uint64_t bi = b[i];
        for (unsigned j = 0; j < k; j++) {
            acc[j] += (a[j] * bi) & M52;
        }
        const uint64_t y = (acc[0] * m0inv) & M52;
        for (unsigned j = 0; j < k; j++) {
            acc[j] += (m[j] * y) & M52;
        }
        const uint64_t carry = acc[0] >> 52;
        memmove(acc, acc + 1, (k - 1) * sizeof(acc[0]));
        acc[k - 1] = 0;
        acc[0] += carry;
        for (unsigned j = 0; j < k; j++) {
            acc[j] += (uint64_t)(((unsigned __int128)a[j] * bi) >> 52);
            acc[j] += (uint64_t)(((unsigned __int128)m[j] * y) >> 52);
        }
    }
    uint64_t carry = 0;
    for (unsigned j = 0; j < k; j++) {
        uint64_t t = acc[j] + carry;
        carry = t >> 52;
        r[j] = t & M52;
    }
    mbc_memzero(acc, sizeof(acc));
}

/* bn_m0inv: -m0^-1 mod 2^52 for odd m0 (Newton: each step doubles the
 * correct low bits, 3 -> 96). */
static uint64_t bn_m0inv(uint64_t m0)
{
    uint64_t x = m0;
    for (int i = 0; i < 5; i++) {
        x *= 2 - m0 * x;
    }
    return (0 - x) & M52;
}

/* bn_mul: r (2k digits) = a b. */
static void bn_mul(uint64_t *r, const uint64_t *a, const uint64_t *b, unsigned k)
{
    uint64_t acc[2 * MB52_MAX_DIGITS] = {0};
    for (unsigned i = 0; i < k; i++) {
        for (unsigned j = 0; j < k; j++) {
            unsigned __int128 p = (unsigned __int128)a[j] * b[i];
            acc[i + j] += (uint64_t)p & M52;
            acc[i + j + 1] += (uint64_t)(p >> 52);
        }
    }
    uint64_t carry = 0;
    for (unsigned j = 0; j < 2 * k; j++) {
        uint64_t t = acc[j] + carry;
        carry = t >> 52;
        r[j] = t & M52;
    }
    mbc_memzero(acc, sizeof(acc));
}

/* bn_bits: bit length of a public number (variable time). */
static unsigned bn_bits(const uint64_t *a, unsigned k)
{
    for (unsigned j = k; j-- > 0;) {
        if (a[j] != 0) {
            return 52 * j + (64 - (unsigned)__builtin_clzll(a[j]));
        }
    }
    return 0;
}

/*
 * mont_setup: fills c for modulus m (k digits, exactly mbits bits, odd, and
 * m > 2^(mbits-1)): m0inv, r1 = R mod m, to_mont = R^2 mod m (cube = 0) or
 * R^3 mod m (cube = 1). Constant time in m.
 */
static void mont_setup(struct rsa_mod_consts *c, const uint64_t *m, unsigned k, unsigned mbits,
                       int cube)
{
    uint64_t y[MB52_MAX_DIGITS] = {0};
    memcpy(c->m, m, k * sizeof(uint64_t));
    c->m0inv = bn_m0inv(m[0]);

    /* R mod m: 2^(mbits-1) < m, doubled up to 2^(52k). */
    memset(c->r1, 0, sizeof(c->r1));
    c->r1[(mbits - 1) / 52] = 1ull << ((mbits - 1) % 52);
    for (unsigned i = mbits - 1; i < 52 * k; i++) {
        bn_double_mod(c->r1, m, k);
    }
    /* 52k = t 2^s: y = R 2^t, then s Montgomery squarings give R 2^(t 2^s). */
    unsigned s = (unsigned)__builtin_ctz(52 * k);
    unsigned t = (52 * k) >> s;
    memcpy(y, c->r1, k * sizeof(uint64_t));
    for (unsigned i = 0; i < t; i++) {
        bn_double_mod(y, m, k);
    }
    for (unsigned i = 0; i < s; i++) {
        bn_amm(y, y, y, m, c->m0inv, k);
    }
    bn_cond_sub(y, m, k);
    if (cube) {
        bn_amm(y, y, y, m, c->m0inv, k); /* R^2 R^2 / R = R^3 */
        bn_cond_sub(y, m, k);
    }
    memcpy(c->to_mont, y, k * sizeof(uint64_t));
    mbc_memzero(y, sizeof(y));
}

/* pub_init: validates (n, e) and fills key. */
static mbc_err pub_init(struct mbc_rsa_pub_key *key, const uint8_t *n, size_t n_len,
                        const uint8_t *e, size_t e_len)
{
    uint64_t nd[MB52_MAX_DIGITS];
    if (n == NULL || e == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    memset(key, 0, sizeof(*key));
    if (mbc_mb52_from_be(nd, MB52_MAX_DIGITS, n, n_len, 4096) != 0) {
        return MBC_ERR_KEY_SIZE;
    }
    unsigned bits = bn_bits(nd, MB52_MAX_DIGITS);
    if (!rsa_supported_bits(bits)) {
        return MBC_ERR_KEY_SIZE;
    }
    if ((nd[0] & 1) == 0) {
        return MBC_ERR_EVEN_MODULUS;
    }
    unsigned kn = 2 * rsa_half_digits(bits);
    if (mbc_mb52_from_be(key->e, kn, e, e_len, bits) != 0) {
        return MBC_ERR_BAD_EXPONENT; /* e longer than n */
    }
    key->e_bits = bn_bits(key->e, kn);
    if ((key->e[0] & 1) == 0 || key->e_bits < 2 || !bn_lt_mask(key->e, nd, kn)) {
        return MBC_ERR_BAD_EXPONENT;
    }
    key->kn = kn;
    mont_setup(&key->n, nd, kn, bits, 0);
    key->tag = (struct mbc_key_tag){MBC_KEY_RSA_PUB, bits};
    return MBC_OK;
}

MBC_API mbc_err mbc_rsa_pub_key_new(mbc_rsa_pub_key **key, const uint8_t *n, size_t n_len,
                                    const uint8_t *e, size_t e_len)
{
    if (key == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    *key = NULL;
    struct mbc_rsa_pub_key *k = mbc_aligned_alloc(sizeof(*k));
    if (k == NULL) {
        return MBC_ERR_NO_MEMORY;
    }
    mbc_err err = pub_init(k, n, n_len, e, e_len);
    if (err != MBC_OK) {
        mbc_aligned_free(k, sizeof(*k));
        return err;
    }
    *key = k;
    return MBC_OK;
}

MBC_API void mbc_rsa_pub_key_free(mbc_rsa_pub_key *key)
{
    if (mbc_key_info(key, MBC_KEY_RSA_PUB) != 0) {
        mbc_aligned_free(key, sizeof(*key));
    }
}

MBC_API unsigned mbc_rsa_pub_key_bits(const mbc_rsa_pub_key *key)
{
    return mbc_key_info(key, MBC_KEY_RSA_PUB);
}

/* priv_init: validates c and fills key (pub part first). */
static mbc_err priv_init(struct mbc_rsa_priv_key *key, const mbc_rsa_priv_components *c)
{
    if (c->p == NULL || c->q == NULL || c->dp == NULL || c->dq == NULL || c->qinv == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    mbc_err err = pub_init(&key->pub, c->n, c->n_len, c->e, c->e_len);
    if (err != MBC_OK) {
        return err;
    }
    const unsigned bits = key->pub.tag.info;
    const unsigned half = bits / 2;
    const unsigned kh = rsa_half_digits(bits);
    uint64_t p[RSA_MAX_HALF_DIGITS], q[RSA_MAX_HALF_DIGITS], qinv[RSA_MAX_HALF_DIGITS];
    uint64_t pq[MB52_MAX_DIGITS];

    uint64_t too_long = mbc_mb52_from_be(p, kh, c->p, c->p_len, half);
    too_long |= mbc_mb52_from_be(q, kh, c->q, c->q_len, half);
    uint64_t even = ~(0 - (p[0] & q[0] & 1));
    bn_mul(pq, p, q, kh);
    int same = mbc_ct_memeq(pq, key->pub.n.m, key->pub.kn * sizeof(uint64_t));

    uint64_t range = mbc_mb52_from_be(key->dp, kh, c->dp, c->dp_len, half);
    range |= mbc_mb52_from_be(key->dq, kh, c->dq, c->dq_len, half);
    range |= mbc_mb52_from_be(qinv, kh, c->qinv, c->qinv_len, half);
    range |= ~bn_lt_mask(key->dp, p, kh);
    range |= ~bn_lt_mask(key->dq, q, kh);
    range |= ~bn_lt_mask(qinv, p, kh);

    /* Verdicts only; the first failing check names the error. */
    if (mbc_value_barrier(too_long) != 0) {
        err = MBC_ERR_KEY_SIZE;
    } else if (mbc_value_barrier(even) != 0) {
        err = MBC_ERR_EVEN_MODULUS;
    } else if (!same) {
        err = MBC_ERR_KEY_MISMATCH;
    } else if (mbc_value_barrier(range) != 0) {
        err = MBC_ERR_KEY_RANGE;
    } else {
        /* p q = n with n of exactly bits bits and p, q < 2^half puts both
         * primes above 2^(half-1), as mont_setup and the kernels need. */
        key->kh = kh;
        mont_setup(&key->p, p, kh, half, 1);
        mont_setup(&key->q, q, kh, half, 1);
        uint64_t rr[RSA_MAX_HALF_DIGITS];
        /* R^2 mod p = R^3 / R: one Montgomery multiply by 1 */
        uint64_t one[RSA_MAX_HALF_DIGITS] = {1};
        bn_amm(rr, key->p.to_mont, one, p, key->p.m0inv, kh);
        bn_cond_sub(rr, p, kh);
        bn_amm(key->qinv_r, qinv, rr, p, key->p.m0inv, kh);
        bn_cond_sub(key->qinv_r, p, kh);
        mbc_memzero(rr, sizeof(rr));
        key->tag = (struct mbc_key_tag){MBC_KEY_RSA_PRIV, bits};
    }
    mbc_memzero(p, sizeof(p));
    mbc_memzero(q, sizeof(q));
    mbc_memzero(qinv, sizeof(qinv));
    mbc_memzero(pq, sizeof(pq));
    return err;
}

/* priv_key_new: mbc_rsa_priv_key_new's work, in frames of its own that the
 * caller then scrubs (wipe.h). */
__attribute__((noinline)) static mbc_err priv_key_new(mbc_rsa_priv_key **key,
                                                      const mbc_rsa_priv_components *c)
{
    if (key == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    *key = NULL;
    if (c == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    struct mbc_rsa_priv_key *k = mbc_aligned_alloc(sizeof(*k));
    if (k == NULL) {
        return MBC_ERR_NO_MEMORY;
    }
    mbc_err err = priv_init(k, c);
    if (err != MBC_OK) {
        mbc_aligned_free(k, sizeof(*k));
        return err;
    }
    *key = k;
    return MBC_OK;
}

MBC_API mbc_err mbc_rsa_priv_key_new(mbc_rsa_priv_key **key, const mbc_rsa_priv_components *c)
{
    const mbc_err err = priv_key_new(key, c);
    mbc_wipe_secrets(MBC_WIPE_RSA_KEY_NEW);
    return err;
}

MBC_API void mbc_rsa_priv_key_free(mbc_rsa_priv_key *key)
{
    if (mbc_key_info(key, MBC_KEY_RSA_PRIV) != 0) {
        mbc_aligned_free(key, sizeof(*key));
    }
}

MBC_API unsigned mbc_rsa_priv_key_bits(const mbc_rsa_priv_key *key)
{
    return mbc_key_info(key, MBC_KEY_RSA_PRIV);
}
