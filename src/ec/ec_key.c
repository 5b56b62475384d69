/*
 * ec_key.c - the curves, their fixed-base tables, and the EC key objects:
 * validation, the public point of a private key. One-lane code on 52-bit
 * digit arrays; every step on a secret runs in constant time and only the
 * verdict of a check is revealed.
 */
#include <pthread.h>
#include <string.h>

#include "../ct.h"
#include "../dispatch.h"
#include "../test_hooks.h"
#include "../wipe.h"
#include "ec_internal.h"

const struct ec_curve *mbc_ec_curve(mbc_curve id)
{
    switch (id) {
    case MBC_CURVE_P256:
        return &mbc_ec_p256;
    case MBC_CURVE_P384:
        return &mbc_ec_p384;
    }
    return NULL;
}

MBC_API size_t mbc_ec_scalar_len(mbc_curve curve)
{
    const struct ec_curve *c = mbc_ec_curve(curve);
    return c != NULL ? c->len : 0;
}

MBC_API size_t mbc_ec_point_len(mbc_curve curve)
{
    const struct ec_curve *c = mbc_ec_curve(curve);
    return c != NULL ? 1 + 2 * (size_t)c->len : 0;
}

MBC_API size_t mbc_ec_sig_len(mbc_curve curve)
{
    const struct ec_curve *c = mbc_ec_curve(curve);
    return c != NULL ? 2 * (size_t)c->len : 0;
}

/* ------------------------------------------------------------------------ */
/* Fixed-base tables: built once, at first use, by the portable kernel      */
/* ------------------------------------------------------------------------ */

/* Static storage (70 KiB for P-256, 160 KiB for P-384, and 24 KiB of
 * scratch each while building): no allocation that could fail. */

static EC_ALIGN mb52_row gtab_p256[EC_P256_GTAB_ROWS];
static EC_ALIGN mb52_row gtab_p384[EC_P384_GTAB_ROWS];
static pthread_once_t once_p256 = PTHREAD_ONCE_INIT, once_p384 = PTHREAD_ONCE_INIT;

/* gtab_build: the table of c into tab, with scratch (each curve has its
 * own: the two tables may be built by two threads at once). */
static void gtab_build(const struct ec_curve *c, mb52_row *tab, struct ec_pt *scratch)
{
    mbc_ec_gtab_build_c1(c, tab, scratch);
    mbc_memzero(scratch, EC_GTAB_BUILD_SCRATCH * sizeof(struct ec_pt));
}

static void build_p256(void)
{
    static struct ec_pt scratch[EC_GTAB_BUILD_SCRATCH];
    gtab_build(&mbc_ec_p256, gtab_p256, scratch);
}

static void build_p384(void)
{
    static struct ec_pt scratch[EC_GTAB_BUILD_SCRATCH];
    gtab_build(&mbc_ec_p384, gtab_p384, scratch);
}

const mb52_row *mbc_ec_gtab(const struct ec_curve *c)
{
    if (c->id == MBC_CURVE_P256) {
        pthread_once(&once_p256, build_p256);
        return gtab_p256;
    }
    pthread_once(&once_p384, build_p384);
    return gtab_p384;
}

/* ------------------------------------------------------------------------ */
/* Scalars and points                                                        */
/* ------------------------------------------------------------------------ */

/* lt_mask: all-ones if a < b (k digits each), constant time. */
static uint64_t lt_mask(const uint64_t *a, const uint64_t *b, unsigned k)
{
    uint64_t borrow = 0;
    for (unsigned j = 0; j < k; j++) {
        borrow = (a[j] - b[j] - borrow) >> 63;
    }
    return mbc_value_barrier(0 - borrow);
}

/* digits_of: m (rows of equal lanes) as a plain k-digit array. */
static void digits_of(uint64_t *d, const mb52_row *m, unsigned k)
{
    for (unsigned j = 0; j < k; j++) {
        d[j] = m[j][0];
    }
}

uint64_t mbc_ec_scalar_mask(const struct ec_curve *c, const uint64_t *d)
{
    uint64_t n[EC_MAX_K], any = 0;
    digits_of(n, c->n.m, c->k);
    for (unsigned j = 0; j < c->k; j++) {
        any |= d[j];
    }
    return ~mbc_ct_is_zero_mask(any) & lt_mask(d, n, c->k);
}

mbc_err mbc_ec_draw_scalar(const struct ec_curve *c, uint64_t *d)
{
    uint8_t buf[EC_MAX_LEN];
    mbc_err err = MBC_ERR_UNSUPPORTED;
    for (int tries = 0; tries < 64; tries++) {
        if (mbc_random_bytes(buf, c->len) != MBC_OK) {
            break;
        }
        (void)mbc_mb52_from_be(d, c->k, buf, c->len, c->bits);
        uint64_t ok = mbc_ec_scalar_mask(c, d);
        mbc_declassify(&ok, sizeof(ok)); /* a rejected draw is discarded */
        if (ok != 0) {
            err = MBC_OK;
            break;
        }
    }
    mbc_memzero(buf, sizeof(buf));
    if (err != MBC_OK) {
        memset(d, 0, c->k * sizeof(uint64_t));
    }
    return err;
}

mbc_err mbc_ec_parse_point(const struct ec_curve *c, const uint8_t *pt, size_t len, uint64_t *x,
                           uint64_t *y)
{
    if (len == 1) {
        uint64_t inf = mbc_ct_is_zero_mask(pt[0]);
        mbc_declassify(&inf, sizeof(inf));
        return inf ? MBC_ERR_INFINITY : MBC_ERR_POINT_FORMAT;
    }
    if (len != 1 + 2 * (size_t)c->len) {
        return MBC_ERR_POINT_FORMAT;
    }
    uint64_t p[EC_MAX_K];
    digits_of(p, c->p.m, c->k);
    (void)mbc_mb52_from_be(x, c->k, pt + 1, c->len, c->bits);
    (void)mbc_mb52_from_be(y, c->k, pt + 1 + c->len, c->len, c->bits);
    uint64_t format = mbc_ct_eq_mask(pt[0], 4);
    uint64_t range = lt_mask(x, p, c->k) & lt_mask(y, p, c->k);
    mbc_declassify(&format, sizeof(format));
    mbc_declassify(&range, sizeof(range));
    if (!format) {
        return MBC_ERR_POINT_FORMAT;
    }
    return range ? MBC_OK : MBC_ERR_POINT_RANGE;
}

void mbc_ec_put_point(const struct ec_curve *c, uint8_t *out, const uint64_t *x, const uint64_t *y)
{
    out[0] = 4;
    mbc_mb52_to_be(out + 1, c->len, x, c->k);
    mbc_mb52_to_be(out + 1 + c->len, c->len, y, c->k);
}

/* on_curve: 1 if (x, y) (coordinates < p) is on c (the portable one-lane
 * kernel: a few multiplies). */
static int on_curve(const struct ec_curve *c, const uint64_t *x, const uint64_t *y)
{
    EC_ALIGN mb52_row xr[EC_MAX_K], yr[EC_MAX_K];
    const uint64_t *const xc[8] = {x}, *const yc[8] = {y};
    mbc_mb52_gather(xr, c->k, xc, 1);
    mbc_mb52_gather(yr, c->k, yc, 1);
    struct ec_point_args a = {c, xr, yr, 1, 0};
    mbc_ec_point_check_c1(&a);
    return a.on_curve == 1;
}

/* ------------------------------------------------------------------------ */
/* Key objects                                                               */
/* ------------------------------------------------------------------------ */

unsigned mbc_ec_priv_curve(const void *key)
{
    return mbc_key_info(key, MBC_KEY_EC_PRIV);
}

unsigned mbc_ec_pub_curve(const void *key)
{
    return mbc_key_info(key, MBC_KEY_EC_PUB);
}

MBC_API mbc_curve mbc_ec_priv_key_curve(const mbc_ec_priv_key *key)
{
    return (mbc_curve)mbc_ec_priv_curve(key);
}

MBC_API mbc_curve mbc_ec_pub_key_curve(const mbc_ec_pub_key *key)
{
    return (mbc_curve)mbc_ec_pub_curve(key);
}

/* priv_init: key from d (1 <= d < n, checked by the caller) and its point:
 * q (validated by the caller) or, for q NULL, Q = d G on the single-request
 * kernel, checked on the curve (MBC_ERR_FAULT). */
static mbc_err priv_init(struct mbc_ec_priv_key *key, const struct ec_curve *c, const uint64_t *d,
                         const uint8_t *q)
{
    if (q != NULL) {
        memcpy(key->q, q, 1 + 2 * (size_t)c->len);
        memcpy(key->d, d, c->k * sizeof(uint64_t));
        key->tag = (struct mbc_key_tag){MBC_KEY_EC_PRIV, (uint32_t)c->id};
        return MBC_OK;
    }
    const struct mbc_ec_impl *impl = mbc_dispatch_get()->ec;
    EC_ALIGN mb52_row dr[EC_MAX_K], x[EC_MAX_K], y[EC_MAX_K];
    const uint64_t *const dc[8] = {d};
    mbc_mb52_gather(dr, c->k, dc, 1);
    struct ec_base_args a = {c, mbc_ec_gtab(c), dr, x, y, 1, mbc_test_hook(ec_fault_lanes) & 1u, 0};
    impl->keygen.one(&a);
    mbc_declassify(&a.ok_lanes, sizeof(a.ok_lanes));
    mbc_err err = MBC_ERR_FAULT;
    if (a.ok_lanes == 1) {
        uint64_t xd[EC_MAX_K], yd[EC_MAX_K];
        digits_of(xd, x, c->k);
        digits_of(yd, y, c->k);
        mbc_ec_put_point(c, key->q, xd, yd);
        mbc_declassify(key->q, 1 + 2 * (size_t)c->len);
        memcpy(key->d, d, c->k * sizeof(uint64_t));
        key->tag = (struct mbc_key_tag){MBC_KEY_EC_PRIV, (uint32_t)c->id};
        err = MBC_OK;
    }
    mbc_memzero(dr, sizeof(dr));
    return err;
}

/* priv_new: a key object for d (and q, see priv_init), or the error. */
static mbc_err priv_new(mbc_ec_priv_key **key, const struct ec_curve *c, const uint64_t *d,
                        const uint8_t *q)
{
    struct mbc_ec_priv_key *k = mbc_aligned_alloc(sizeof(*k));
    if (k == NULL) {
        return MBC_ERR_NO_MEMORY;
    }
    mbc_err err = priv_init(k, c, d, q);
    if (err != MBC_OK) {
        mbc_aligned_free(k, sizeof(*k));
        return err;
    }
    *key = k;
    return MBC_OK;
}

/* priv_key_new / priv_key_generate: the work of mbc_ec_priv_key_new (point
 * NULL), mbc_ec_priv_key_new_pair and mbc_ec_priv_key_generate, in frames
 * of their own that the callers then scrub (wipe.h). */
__attribute__((noinline)) static mbc_err priv_key_new(mbc_ec_priv_key **key, mbc_curve curve,
                                                      const uint8_t *d, size_t d_len,
                                                      const uint8_t *point, size_t point_len)
{
    if (key == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    *key = NULL;
    if (d == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    const struct ec_curve *c = mbc_ec_curve(curve);
    if (c == NULL) {
        return MBC_ERR_BAD_PARAM;
    }
    uint64_t dd[EC_MAX_K];
    uint64_t ok = ~mbc_mb52_from_be(dd, c->k, d, d_len, c->bits);
    ok &= mbc_ec_scalar_mask(c, dd);
    mbc_declassify(&ok, sizeof(ok));
    mbc_err err = ok ? MBC_OK : MBC_ERR_KEY_RANGE;
    if (err == MBC_OK && point != NULL) {
        uint64_t x[EC_MAX_K], y[EC_MAX_K];
        err = point_len == 0 ? MBC_ERR_POINT_FORMAT : mbc_ec_parse_point(c, point, point_len, x, y);
        if (err == MBC_OK && !on_curve(c, x, y)) {
            err = MBC_ERR_NOT_ON_CURVE;
        }
    }
    if (err == MBC_OK) {
        err = priv_new(key, c, dd, point);
    }
    mbc_memzero(dd, sizeof(dd));
    return err;
}

__attribute__((noinline)) static mbc_err priv_key_generate(mbc_ec_priv_key **key, mbc_curve curve)
{
    if (key == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    *key = NULL;
    const struct ec_curve *c = mbc_ec_curve(curve);
    if (c == NULL) {
        return MBC_ERR_BAD_PARAM;
    }
    uint64_t d[EC_MAX_K];
    mbc_err err = mbc_ec_draw_scalar(c, d);
    if (err == MBC_OK) {
        err = priv_new(key, c, d, NULL);
    }
    mbc_memzero(d, sizeof(d));
    return err;
}

MBC_API mbc_err mbc_ec_priv_key_new(mbc_ec_priv_key **key, mbc_curve curve, const uint8_t *d,
                                    size_t d_len)
{
    const mbc_err err = priv_key_new(key, curve, d, d_len, NULL, 0);
    mbc_wipe_secrets(MBC_WIPE_EC);
    return err;
}

MBC_API mbc_err mbc_ec_priv_key_new_pair(mbc_ec_priv_key **key, mbc_curve curve, const uint8_t *d,
                                         size_t d_len, const uint8_t *point, size_t point_len)
{
    if (point == NULL) {
        if (key != NULL) {
            *key = NULL;
        }
        return MBC_ERR_NULL_PARAM;
    }
    const mbc_err err = priv_key_new(key, curve, d, d_len, point, point_len);
    mbc_wipe_secrets(MBC_WIPE_EC);
    return err;
}

MBC_API mbc_err mbc_ec_priv_key_generate(mbc_ec_priv_key **key, mbc_curve curve)
{
    const mbc_err err = priv_key_generate(key, curve);
    mbc_wipe_secrets(MBC_WIPE_EC);
    return err;
}

MBC_API void mbc_ec_priv_key_free(mbc_ec_priv_key *key)
{
    if (mbc_key_info(key, MBC_KEY_EC_PRIV) != 0) {
        mbc_aligned_free(key, sizeof(*key));
    }
}

MBC_API mbc_err mbc_ec_priv_key_public(const mbc_ec_priv_key *key, uint8_t *point, size_t point_len)
{
    if (key == NULL || point == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    const size_t len = mbc_ec_point_len((mbc_curve)mbc_ec_priv_curve(key));
    if (len == 0 || point_len < len) {
        return MBC_ERR_BAD_PARAM;
    }
    memcpy(point, key->q, len);
    return MBC_OK;
}

MBC_API mbc_err mbc_ec_pub_key_new(mbc_ec_pub_key **key, mbc_curve curve, const uint8_t *point,
                                   size_t point_len)
{
    if (key == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    *key = NULL;
    if (point == NULL) {
        return MBC_ERR_NULL_PARAM;
    }
    const struct ec_curve *c = mbc_ec_curve(curve);
    if (c == NULL) {
        return MBC_ERR_BAD_PARAM;
    }
    struct mbc_ec_pub_key *k = mbc_aligned_alloc(sizeof(*k));
    if (k == NULL) {
        return MBC_ERR_NO_MEMORY;
    }
    mbc_err err =
        point_len == 0 ? MBC_ERR_POINT_FORMAT : mbc_ec_parse_point(c, point, point_len, k->x, k->y);
    if (err == MBC_OK && !on_curve(c, k->x, k->y)) {
        err = MBC_ERR_NOT_ON_CURVE;
    }
    if (err != MBC_OK) {
        mbc_aligned_free(k, sizeof(*k));
        return err;
    }
    memcpy(k->q, point, point_len);
    k->tag = (struct mbc_key_tag){MBC_KEY_EC_PUB, (uint32_t)c->id};
    *key = k;
    return MBC_OK;
}

MBC_API void mbc_ec_pub_key_free(mbc_ec_pub_key *key)
{
    if (mbc_key_info(key, MBC_KEY_EC_PUB) != 0) {
        mbc_aligned_free(key, sizeof(*key));
    }
}
