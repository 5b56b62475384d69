/*
 * ec_adx_inv.h - constant-time inversion modulo an odd m of up to 6 limbs
 * by the divsteps of Bernstein and Yang ("Fast constant-time gcd
 * computation and modular inversion", 2019), for the scalar EC kernels
 * (ec_adx_curve.h: mod p and mod n of each curve).
 *
 * The divstep on (delta, f, g), f odd:
 *   delta > 0 and g odd:  (1 - delta, g, (g - f) / 2)
 *   g odd otherwise:      (1 + delta, f, (g + f) / 2)
 *   g even:               (1 + delta, f, g / 2)
 * from (1, m, a) reaches g = 0 and f = +-gcd(m, a) within
 * floor((49 d + 57) / 17) steps for f, g < 2^d, d >= 46 (their theorem
 * 11.2): 1111 for 384 bits, so 18 batches of 62. Up to 256 bits the steps
 * are half-delta divsteps (the same rules from delta = 1/2), of which 590
 * reach g = 0 for all f, g < 2^256 (Wuille's computed bound, for
 * libsecp256k1; fe25519_inv.h relies on it too), so 10 batches instead of
 * the 12 of the theorem's 742 divsteps.
 * A batch runs 62 divsteps on the low 64 bits of f and g alone, with masks
 * (no branch on the values), and returns the matrix T with
 * 2^62 (f', g') = T (f, g) (entries |u| + |v| <= 2^62); it is then applied
 * to the full f and g, and to (d, e) mod m, which keep f = d a and
 * g = e a mod m: d' = (u d + v e + k m) / 2^62 with k the multiple of m
 * that clears the low 62 bits. At the end f = +-1 and a^-1 = +-d.
 *
 * Numbers are signed, in limbs of 62 bits (all but the top one in
 * [0, 2^62), the top one signed): 5 limbs hold 256-bit values, 7 hold
 * 384-bit ones, with room for the sign and the growth of a batch. Every
 * batch runs whatever the values (a = 0 gives d = 0: 0 -> 0). Nothing
 * here branches on or indexes by a value, and there is no division.
 */
#ifndef MBC_SRC_EC_EC_ADX_INV_H
#define MBC_SRC_EC_EC_ADX_INV_H

#include <stdint.h>

#include "../ct.h"
#include "../internal.h"
#include "ec_adx.h"

#define SG_M62 ((UINT64_C(1) << 62) - 1)

typedef __int128 sg_i128;

/* sg_mat: the matrix of a batch, (u v; q r) */
struct sg_mat {
    int64_t u, v, q, r;
};

/* sg_divsteps: 62 steps on the low bits of f (odd) and g from delta (in
 * units of 1/2 for half-delta divsteps, "half" = 2, else of 1, half = 1);
 * the new delta returned, the matrix in *t. Each step adds f or -f to g
 * when g is odd (-f where delta > 0), and on a swap (that case with delta
 * > 0) f becomes the old g as f + (g - f); then g halves, which the rows
 * of f see as a doubling. g's chain through a step is 5 operations (its
 * low bit, the mask, and, add, shift). */
static inline int64_t sg_divsteps(int64_t delta, uint64_t f, uint64_t g, struct sg_mat *t,
                                  int64_t half)
{
    uint64_t u = 1, v = 0, q = 0, r = 1;
    /* eta = -delta, so that delta > 0 is eta's sign: its update
     * eta' = (swap ? -eta : eta) - half is 4 operations from eta's sign */
    uint64_t eta = 0 - (uint64_t)delta;
    for (unsigned i = 0; i < 62; i++) {
        const uint64_t pos = mbc_value_barrier((uint64_t)((int64_t)eta >> 63)); /* delta > 0 */
        const uint64_t godd = 0 - (g & 1);
        const uint64_t swap = pos & godd;
        g += ((f ^ pos) - pos) & godd;
        q += ((u ^ pos) - pos) & godd;
        r += ((v ^ pos) - pos) & godd;
        f += g & swap;
        u += q & swap;
        v += r & swap;
        g >>= 1;
        u <<= 1;
        v <<= 1;
        eta = (eta ^ swap) + ((swap & 1) - (uint64_t)half);
    }
    t->u = (int64_t)u;
    t->v = (int64_t)v;
    t->q = (int64_t)q;
    t->r = (int64_t)r;
    return (int64_t)(0 - eta);
}

/* sg_apply_fg: (f, g) = T (f, g) / 2^62 (exact), L limbs. */
static inline void sg_apply_fg(int64_t *f, int64_t *g, const struct sg_mat *t, unsigned L)
{
    sg_i128 cf = (sg_i128)t->u * f[0] + (sg_i128)t->v * g[0];
    sg_i128 cg = (sg_i128)t->q * f[0] + (sg_i128)t->r * g[0];
    cf >>= 62;
    cg >>= 62;
    for (unsigned i = 1; i < L; i++) {
        cf += (sg_i128)t->u * f[i] + (sg_i128)t->v * g[i];
        cg += (sg_i128)t->q * f[i] + (sg_i128)t->r * g[i];
        f[i - 1] = (int64_t)((uint64_t)cf & SG_M62);
        g[i - 1] = (int64_t)((uint64_t)cg & SG_M62);
        cf >>= 62;
        cg >>= 62;
    }
    f[L - 1] = (int64_t)cf;
    g[L - 1] = (int64_t)cg;
}

/* sg_norm: d = d mod m in [0, m) for -m < d < 2m given in any limbs of
 * magnitude below 2^62 (carried into canonical limbs first). */
static inline void sg_norm(int64_t *d, const int64_t *m, unsigned L)
{
    int64_t c = 0;
    for (unsigned i = 0; i + 1 < L; i++) {
        c += d[i];
        d[i] = (int64_t)((uint64_t)c & SG_M62);
        c >>= 62;
    }
    d[L - 1] += c;
    /* negative: add m */
    const uint64_t neg = mbc_value_barrier((uint64_t)(d[L - 1] >> 63));
    c = 0;
    for (unsigned i = 0; i + 1 < L; i++) {
        c += d[i] + (int64_t)((uint64_t)m[i] & neg);
        d[i] = (int64_t)((uint64_t)c & SG_M62);
        c >>= 62;
    }
    d[L - 1] += c + (int64_t)((uint64_t)m[L - 1] & neg);
    /* at least m: subtract m */
    int64_t s[EC64_SG_LIMBS];
    c = 0;
    for (unsigned i = 0; i + 1 < L; i++) {
        c += d[i] - m[i];
        s[i] = (int64_t)((uint64_t)c & SG_M62);
        c >>= 62;
    }
    s[L - 1] = d[L - 1] - m[L - 1] + c;
    const uint64_t below = mbc_value_barrier((uint64_t)(s[L - 1] >> 63));
    for (unsigned i = 0; i < L; i++) {
        d[i] = (int64_t)(((uint64_t)d[i] & below) | ((uint64_t)s[i] & ~below));
    }
}

/* sg_apply_de: (d, e) = (T (d, e) + (kd, ke) m) / 2^62 for d, e in [0, m),
 * then back to [0, m) (the result is in (-m, 2m)); minv = m^-1 mod 2^62. */
static inline void sg_apply_de(int64_t *d, int64_t *e, const struct sg_mat *t, const int64_t *m,
                               uint64_t minv, unsigned L)
{
    const uint64_t d0 = (uint64_t)d[0], e0 = (uint64_t)e[0];
    const int64_t kd = (int64_t)((0 - ((uint64_t)t->u * d0 + (uint64_t)t->v * e0) * minv) & SG_M62);
    const int64_t ke = (int64_t)((0 - ((uint64_t)t->q * d0 + (uint64_t)t->r * e0) * minv) & SG_M62);
    sg_i128 cd = (sg_i128)t->u * d[0] + (sg_i128)t->v * e[0] + (sg_i128)kd * m[0];
    sg_i128 ce = (sg_i128)t->q * d[0] + (sg_i128)t->r * e[0] + (sg_i128)ke * m[0];
    cd >>= 62;
    ce >>= 62;
    for (unsigned i = 1; i < L; i++) {
        cd += (sg_i128)t->u * d[i] + (sg_i128)t->v * e[i] + (sg_i128)kd * m[i];
        ce += (sg_i128)t->q * d[i] + (sg_i128)t->r * e[i] + (sg_i128)ke * m[i];
        d[i - 1] = (int64_t)((uint64_t)cd & SG_M62);
        e[i - 1] = (int64_t)((uint64_t)ce & SG_M62);
        cd >>= 62;
        ce >>= 62;
    }
    d[L - 1] = (int64_t)cd;
    e[L - 1] = (int64_t)ce;
    sg_norm(d, m, L);
    sg_norm(e, m, L);
}

/* sg_from64: r (L limbs of 62 bits) = the n limbs a (unsigned). */
static inline void sg_from64(int64_t *r, const uint64_t *a, unsigned n, unsigned L)
{
    for (unsigned i = 0; i < L; i++) {
        const unsigned pos = 62 * i, li = pos / 64, sh = pos % 64;
        uint64_t x = li < n ? a[li] >> sh : 0;
        if (sh > 2 && li + 1 < n) {
            x |= a[li + 1] << (64 - sh);
        }
        r[i] = (int64_t)(x & SG_M62);
    }
}

/* sg_to64: r (n limbs) = a (L canonical limbs, 0 <= a < 2^(64 n)). */
static inline void sg_to64(uint64_t *r, const int64_t *a, unsigned n, unsigned L)
{
    for (unsigned j = 0; j < n; j++) {
        r[j] = 0;
    }
    for (unsigned i = 0; i < L; i++) {
        const unsigned pos = 62 * i, li = pos / 64, sh = pos % 64;
        const uint64_t x = (uint64_t)a[i];
        if (li < n) {
            r[li] |= x << sh;
        }
        if (sh > 2 && li + 1 < n) {
            r[li + 1] |= x >> (64 - sh);
        }
    }
}

/* sg_inv: r = a^-1 mod m (0 -> 0) for a < m (n limbs); m in L limbs of 62
 * bits, minv = m^-1 mod 2^62, batches of 62 divsteps enough for m's size. */
static inline void sg_inv(uint64_t *r, const uint64_t *a, const int64_t *m, uint64_t minv,
                          unsigned n, unsigned L, unsigned batches)
{
    int64_t f[EC64_SG_LIMBS], g[EC64_SG_LIMBS], d[EC64_SG_LIMBS] = {0}, e[EC64_SG_LIMBS] = {1};
    for (unsigned i = 0; i < L; i++) {
        f[i] = m[i];
    }
    sg_from64(g, a, n, L);
    /* half-delta divsteps up to 256 bits (the bound of sg_params in
     * tools/gen_ec_consts.py), divsteps above */
    const int64_t half = n <= 4 ? 2 : 1;
    int64_t delta = 1;
    struct sg_mat t;
    for (unsigned b = 0; b < batches; b++) {
        delta = sg_divsteps(delta, (uint64_t)f[0], (uint64_t)g[0], &t, half);
        sg_apply_de(d, e, &t, m, minv, L);
        sg_apply_fg(f, g, &t, L);
    }
    /* f = +-1 (m when a = 0, d = 0 then): a^-1 = d f */
    const uint64_t neg = mbc_value_barrier((uint64_t)(f[L - 1] >> 63));
    for (unsigned i = 0; i < L; i++) {
        d[i] = (int64_t)(((uint64_t)d[i] ^ neg) - neg);
    }
    sg_norm(d, m, L);
    sg_to64(r, d, n, L);
    mbc_memzero(f, sizeof(f));
    mbc_memzero(g, sizeof(g));
    mbc_memzero(d, sizeof(d));
    mbc_memzero(e, sizeof(e));
    mbc_memzero(&t, sizeof(t));
}

#endif /* MBC_SRC_EC_EC_ADX_INV_H */
