/*
 * ec_scalar.c - one-lane helpers on 52-bit digit arrays for the EC glue:
 * scalar range checks and draws, point parsing and encoding, the curve
 * equation. Every step on a secret runs in constant time and only the
 * verdict of a check is revealed.
 */
#include <string.h>

#include "../ct.h"
#include "ec_internal.h"

/* lt_mask: all-ones if a < b (k digits each), constant time. */
static uint64_t lt_mask(const uint64_t *a, const uint64_t *b, unsigned k)
{
    uint64_t borrow = 0;
    for (unsigned j = 0; j < k; j++) {
        borrow = (a[j] - b[j] - borrow) >> 63;
    }
    return mbc_value_barrier(0 - borrow);
}

uint64_t mbc_ec_scalar_mask(const struct ec_curve *c, const uint64_t *d)
{
    uint64_t any = 0;
    for (unsigned j = 0; j < c->k; j++) {
        any |= d[j];
    }
    return ~mbc_ct_is_zero_mask(any) & lt_mask(d, c->n.digits, c->k);
}

/* accept_draw: d = the c->len random bytes at buf, and whether d is in
 * [1, n-1]; only that verdict is revealed (a rejected draw is discarded). */
static int accept_draw(const struct ec_curve *c, uint64_t *d, const uint8_t *buf)
{
    (void)mbc_mb52_from_be(d, c->k, buf, c->len, c->bits);
    uint64_t ok = mbc_ec_scalar_mask(c, d);
    mbc_declassify(&ok, sizeof(ok));
    return ok != 0;
}

mbc_err mbc_ec_draw_scalar(const struct ec_curve *c, uint64_t *d)
{
    uint8_t buf[EC_MAX_LEN];
    mbc_err err = MBC_ERR_UNSUPPORTED;
    for (int tries = 0; tries < 64; tries++) {
        if (mbc_random_bytes(buf, c->len) != MBC_OK) {
            break;
        }
        if (accept_draw(c, d, buf)) {
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

unsigned mbc_ec_draw_scalars(const struct ec_curve *c, uint64_t d[][EC_MAX_K], unsigned slots)
{
    uint8_t buf[MBC_LANES * EC_MAX_LEN];
    unsigned n = 0, failed = 0;
    for (unsigned s = 0; s < MBC_LANES; s++) {
        n += (slots >> s) & 1u;
    }
    const int got = n != 0 && mbc_random_bytes(buf, (size_t)n * c->len) == MBC_OK;
    for (unsigned s = 0, i = 0; s < MBC_LANES; s++) {
        if (((slots >> s) & 1u) == 0) {
            continue;
        }
        const int ok = got && accept_draw(c, d[s], buf + (size_t)i++ * c->len);
        /* a draw out of range (or none): this lane's own draws, which
         * also tell a failing OS */
        if (!ok && mbc_ec_draw_scalar(c, d[s]) != MBC_OK) {
            failed |= 1u << s;
        }
    }
    mbc_memzero(buf, sizeof(buf));
    return failed;
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
    (void)mbc_mb52_from_be(x, c->k, pt + 1, c->len, c->bits);
    (void)mbc_mb52_from_be(y, c->k, pt + 1 + c->len, c->len, c->bits);
    uint64_t format = mbc_ct_eq_mask(pt[0], 4);
    uint64_t range = lt_mask(x, c->p.digits, c->k) & lt_mask(y, c->p.digits, c->k);
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

/* mbc_ec_on_curve: 1 if (x, y) (coordinates < p) is on c (the portable one-lane
 * kernel: a few multiplies). */
int mbc_ec_on_curve(const struct ec_curve *c, const uint64_t *x, const uint64_t *y)
{
    EC_ALIGN mb52_row xr[EC_MAX_K], yr[EC_MAX_K];
    const uint64_t *const xc[8] = {x}, *const yc[8] = {y};
    mbc_mb52_gather(xr, c->k, xc, 1);
    mbc_mb52_gather(yr, c->k, yc, 1);
    struct ec_point_args a = {c, xr, yr, 1, 0};
    mbc_ec_point_check_c1(&a);
    return a.on_curve == 1;
}
