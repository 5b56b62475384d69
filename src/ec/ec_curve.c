/*
 * ec_curve.c - the curves: lookup by id, their sizes, and the fixed-base
 * tables of the 52-bit kernels, built once at first use by the portable
 * one-lane kernel.
 */
#include <pthread.h>

#include "../ct.h"
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

/* Static storage (185 KiB for P-256, 260 KiB for P-384, and 24 KiB of
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
