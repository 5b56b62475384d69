/*
 * ec_key.c - the EC key objects: validation, the public point of a private
 * key, the canonical and the 52-bit forms they hold. One-lane code; every
 * step on a secret runs in constant time and only the verdict of a check is
 * revealed.
 */
#include <string.h>

#include "../ct.h"
#include "../dispatch.h"
#include "../test_hooks.h"
#include "../wipe.h"
#include "ec_internal.h"

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

/* set_d: the key's scalar in both its forms, then its tag (the key is
 * complete). */
static void set_d(struct mbc_ec_priv_key *key, const struct ec_curve *c, const uint64_t *d)
{
    memcpy(key->d, d, c->k * sizeof(uint64_t));
    mbc_mb52_to_be(key->d_be, c->len, d, c->k);
    key->tag = (struct mbc_key_tag){MBC_KEY_EC_PRIV, (uint32_t)c->id};
}

/* priv_init: key from d (1 <= d < n, checked by the caller) and its point:
 * q (validated by the caller) or, for q NULL, Q = d G on the single-request
 * kernel, checked on the curve (MBC_ERR_FAULT). */
static mbc_err priv_init(struct mbc_ec_priv_key *key, const struct ec_curve *c, const uint64_t *d,
                         const uint8_t *q)
{
    if (q != NULL) {
        memcpy(key->q, q, 1 + 2 * (size_t)c->len);
        set_d(key, c, d);
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
        /* Q from lane 0 of the kernel's rows, straight into 04 || X || Y */
        uint8_t *const xs[8] = {key->q + 1}, *const ys[8] = {key->q + 1 + c->len};
        key->q[0] = 4;
        mbc_mb52_to_be8(xs, c->len, x, c->k, 1);
        mbc_mb52_to_be8(ys, c->len, y, c->k, 1);
        mbc_declassify(key->q, 1 + 2 * (size_t)c->len);
        set_d(key, c, d);
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
        if (err == MBC_OK && !mbc_ec_on_curve(c, x, y)) {
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
    if (err == MBC_OK && !mbc_ec_on_curve(c, k->x, k->y)) {
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
