/*
 * ec_inv1.c - one inversion modulo p or n of a curve on plain 52-bit
 * digits (one lane of the mb52 rows), by the constant-time divsteps of
 * ec_adx_inv.h that the scalar tier uses too. The vector kernels invert
 * the product of all their lanes with it (ec_kern.c, fe_inv). Plain C: it
 * runs on every CPU, under every backend.
 */
#include "ec_adx_inv.h"
#include "ec_kern.h"

/* repack: r (nr digits of sr bits) = a (na digits of sa bits, each below
 * 2^sa), for sa, sr <= 64 and a value that fits in r. Positions are
 * public: no value decides a branch or an address. */
static void repack(uint64_t *r, unsigned nr, unsigned sr, const uint64_t *a, unsigned na,
                   unsigned sa)
{
    const uint64_t mask = sr == 64 ? ~0ull : (1ull << sr) - 1;
    for (unsigned i = 0; i < nr; i++) {
        const unsigned lo = sr * i;
        uint64_t d = 0;
        for (unsigned j = lo / sa; j < na && sa * j < lo + sr; j++) {
            d |= sa * j >= lo ? a[j] << (sa * j - lo) : a[j] >> (lo - sa * j);
        }
        r[i] = d & mask;
    }
}

void mbc_ec_inv1(const struct ec_mod *md, unsigned k, unsigned bits, uint64_t *r, const uint64_t *a)
{
    const unsigned n = (bits + 63) / 64;
    uint64_t a64[EC64_MAX_N], r64[EC64_MAX_N];
    repack(a64, n, 64, a, k, MB52_BITS);
    sg_inv(r64, a64, md->sg_m, md->sg_minv, n, md->sg_limbs, md->sg_batches);
    repack(r, k, MB52_BITS, r64, n, 64);
    mbc_memzero(a64, sizeof(a64));
    mbc_memzero(r64, sizeof(r64));
}
