/*
 * ec_internal.h - EC key objects and the helpers the EC glue files share
 * (ec.c: the batch and single calls; ec_curve.c: the curves and their
 * tables; ec_scalar.c: scalars and points; ec_key.c: the keys). Baseline
 * code. A key holds each number in its canonical form (big-endian bytes,
 * for any tier) and in the 52-bit tiers' form (a plain little-endian array
 * of 52-bit digits, one lane, that a batch gathers into mb52 rows without
 * conversion).
 */
#ifndef MBC_SRC_EC_EC_INTERNAL_H
#define MBC_SRC_EC_EC_INTERNAL_H

#include "../internal.h"
#include "ec_kern.h"

#define EC_MAX_POINT (1 + 2 * EC_MAX_LEN)

/* Both key types start with their tag (MBC_KEY_EC_PRIV / MBC_KEY_EC_PUB;
 * info: the curve, mbc_curve), set last, once the key is complete. */
struct mbc_ec_priv_key {
    struct mbc_key_tag tag;
    uint64_t d[EC_MAX_K];     /* the secret scalar, 1 <= d < n, 52-bit digits */
    uint8_t d_be[EC_MAX_LEN]; /* the same, canonical: len bytes big-endian */
    uint8_t q[EC_MAX_POINT];  /* the public point, 04 || X || Y */
};

struct mbc_ec_pub_key {
    struct mbc_key_tag tag;
    uint64_t x[EC_MAX_K]; /* the point, on the curve, coordinates < p, 52-bit digits */
    uint64_t y[EC_MAX_K];
    uint8_t q[EC_MAX_POINT]; /* the same, canonical: 04 || X || Y */
};

/* mbc_ec_curve: the constants of curve id, NULL for an unknown curve. */
const struct ec_curve *mbc_ec_curve(mbc_curve id);

/* mbc_ec_gtab: the fixed-base table of c (built at the first call). */
const mb52_row *mbc_ec_gtab(const struct ec_curve *c);

/* mbc_ec_scalar_mask: all-ones if 1 <= d < n (d: k digits), else 0;
 * constant time in d. */
uint64_t mbc_ec_scalar_mask(const struct ec_curve *c, const uint64_t *d);

/* mbc_ec_draw_scalar: d (k digits) uniform in [1, n-1] from the OS, by
 * rejection sampling (a draw outside the range is discarded, never
 * reduced). MBC_OK, or MBC_ERR_UNSUPPORTED when the OS gives no randomness
 * (or only out-of-range values 64 times running): d is then zero. */
mbc_err mbc_ec_draw_scalar(const struct ec_curve *c, uint64_t *d);

/* mbc_ec_draw_scalars: d[s] drawn as mbc_ec_draw_scalar does for each slot s
 * of slots, from one read of the OS's generator for all of them (a system
 * call per lane cost about 8% of an 8-lane P-256 key generation, Intel
 * family 6 model 167); a lane whose draw is out of range draws again on its
 * own. Returns the slots whose draw failed (d[s] zero). */
unsigned mbc_ec_draw_scalars(const struct ec_curve *c, uint64_t d[][EC_MAX_K], unsigned slots);

/*
 * mbc_ec_parse_point: the coordinates (k digits each) of an uncompressed
 * point pt of len bytes: MBC_OK; MBC_ERR_INFINITY for the one byte 00 (the
 * point at infinity); MBC_ERR_POINT_FORMAT for another length or a first
 * byte other than 04; MBC_ERR_POINT_RANGE when a coordinate is >= p. Not
 * checked: the curve equation. Constant time in the bytes of a point of
 * the right length; only the verdict is revealed.
 */
mbc_err mbc_ec_parse_point(const struct ec_curve *c, const uint8_t *pt, size_t len, uint64_t *x,
                           uint64_t *y);

/* mbc_ec_put_point: writes 04 || X || Y (1 + 2 len bytes) from the
 * coordinates' digits. */
void mbc_ec_put_point(const struct ec_curve *c, uint8_t *out, const uint64_t *x, const uint64_t *y);

/* mbc_ec_on_curve: 1 if (x, y) (coordinates < p, k digits each) is on c
 * (the portable one-lane kernel: a few multiplies). */
int mbc_ec_on_curve(const struct ec_curve *c, const uint64_t *x, const uint64_t *y);

/* mbc_ec_priv_curve / mbc_ec_pub_curve: the curve of a key object of that
 * type, 0 otherwise (mbc_ec_priv_key_curve's test, for the lane checks). */
unsigned mbc_ec_priv_curve(const void *key);
unsigned mbc_ec_pub_curve(const void *key);

#endif /* MBC_SRC_EC_EC_INTERNAL_H */
