/*
 * ec_adx.c - the scalar 64-bit EC kernels (ec_adx.h): the helpers every
 * curve shares (radix conversion from and to the mb52 rows of the args,
 * signed-window recoding, constant-time table scans, the fault hook), the
 * two curves instantiated from ec_adx_curve.h, and the entry points.
 * Compiled with -mbmi2 -madx (this object only: the rest of the library
 * runs on any x86-64); dispatch selects it only where CPUID reports both.
 */
#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#include "../internal.h"
#include "../test_hooks.h"
#include "ec_adx.h"
#include "ec_adx_inv.h"
#include "ec_adx_tab.h"
#include "fe64.h"
#include "fe_p256_x64.h"
#include "fe_p384_x64.h"

/* fe64_mont_mul4 reads m0 6 limbs past the modulus */
_Static_assert(offsetof(struct ec64_curve, p_m0) == offsetof(struct ec64_curve, p) + 48 &&
                   offsetof(struct ec64_curve, n_m0) == offsetof(struct ec64_curve, n) + 48,
               "m0 follows the 6 limbs of its modulus");

#if MBC_TEST_HOOKS
_Atomic unsigned long mbc_ec_kern_hits_adx;
#endif

/* ec64_from52: r (n limbs) = lane 0 of the k rows a of 52-bit digits (the
 * value fits in n limbs). */
static void ec64_from52(uint64_t *r, const mb52_row *a, unsigned k, unsigned n)
{
    memset(r, 0, n * sizeof(uint64_t));
    for (unsigned j = 0; j < k; j++) {
        const unsigned pos = 52 * j, li = pos / 64, sh = pos % 64;
        const uint64_t d = a[j][0];
        if (li < n) {
            r[li] |= d << sh;
        }
        if (sh > 12 && li + 1 < n) {
            r[li + 1] |= d >> (64 - sh);
        }
    }
}

/* ec64_to52: lane 0 of the k rows r = the n limbs a in 52-bit digits. */
static void ec64_to52(mb52_row *r, const uint64_t *a, unsigned k, unsigned n)
{
    for (unsigned j = 0; j < k; j++) {
        const unsigned pos = 52 * j, li = pos / 64, sh = pos % 64;
        uint64_t d = li < n ? a[li] >> sh : 0;
        if (sh > 12 && li + 1 < n) {
            d |= a[li + 1] << (64 - sh);
        }
        r[j][0] = d & MB52_MASK;
    }
}

/* ec64_shr1: a (n limbs) >>= 1 (public values: the variable-time inverse
 * and NAF of verification). */
static inline void ec64_shr1(uint64_t *a, unsigned n)
{
    for (unsigned j = 0; j + 1 < n; j++) {
        a[j] = a[j] >> 1 | a[j + 1] << 63;
    }
    a[n - 1] >>= 1;
}

/* ec64_booth: the signed digit of the w + 1 window bits b: its absolute
 * value (0..2^(w-1)) returned, *neg all-ones when it is negative. The
 * digits of e < 2^(w nwin - 1) sum to e (ec_kern.c's booth). */
static inline uint64_t ec64_booth(uint64_t b, unsigned w, uint64_t *neg)
{
    const uint64_t m = mbc_value_barrier(0 - (b >> w));
    const uint64_t d = (b & ~m) | (((2ull << w) - 1 - b) & m);
    *neg = m;
    return (d >> 1) + (d & 1);
}

/* ec64_scan: r (width words, width even) = entry idx of the n entries of
 * width words at tab, reading every entry (zeros when idx >= n). AVX2 (the
 * adx rows need it, ec_impl.c), four words an operation, the hit mask from
 * a compare of a running index with idx; SSE2 for the two words a width
 * not a multiple of four leaves. This scan was more than half of a P-256
 * fixed-base multiplication on SSE2 alone (rdtsc, Xeon family 6 model
 * 207: 30k of 53k cycles). */
__attribute__((always_inline, target("avx2"))) static inline void
ec64_scan_w(uint64_t *r, const uint64_t *tab, unsigned n, const unsigned width, uint64_t idx)
{
    enum { MAXW = 3 * EC64_MAX_N };
    __m256i acc[MAXW / 4];
    __m128i acc2 = _mm_setzero_si128();
    const unsigned w4 = width / 4;
    for (unsigned j = 0; j < w4; j++) {
        acc[j] = _mm256_setzero_si256();
    }
    const __m256i want = _mm256_set1_epi64x((long long)idx), one = _mm256_set1_epi64x(1);
    __m256i cur = _mm256_setzero_si256();
    for (unsigned t = 0; t < n; t++) {
        const __m256i hit = _mm256_cmpeq_epi64(cur, want);
        cur = _mm256_add_epi64(cur, one);
        const uint64_t *e = tab + (size_t)t * width;
        /* the same entry of the next window (the comb's next scan; a
         * prefetch past the table's end is harmless) */
        _mm_prefetch((const char *)(e + (size_t)n * width), _MM_HINT_T0);
        for (unsigned j = 0; j < w4; j++) {
            acc[j] = _mm256_or_si256(
                acc[j], _mm256_and_si256(hit, _mm256_loadu_si256((const __m256i *)(e + 4 * j))));
        }
        if (width % 4) {
            acc2 =
                _mm_or_si128(acc2, _mm_and_si128(_mm256_castsi256_si128(hit),
                                                 _mm_loadu_si128((const __m128i *)(e + 4 * w4))));
        }
    }
    for (unsigned j = 0; j < w4; j++) {
        _mm256_storeu_si256((__m256i *)(r + 4 * j), acc[j]);
    }
    if (width % 4) {
        _mm_storeu_si128((__m128i *)(r + 4 * w4), acc2);
    }
}

/* one function per width the kernels use (2 N and 3 N words), so that the
 * accumulators stay in registers */
#define EC64_SCAN_W(w)                                                                             \
    __attribute__((target("avx2"))) static void ec64_scan_##w(uint64_t *r, const uint64_t *tab,    \
                                                              unsigned n, uint64_t idx)            \
    {                                                                                              \
        ec64_scan_w(r, tab, n, w, idx);                                                            \
    }
EC64_SCAN_W(8)
EC64_SCAN_W(12)
EC64_SCAN_W(18)
#undef EC64_SCAN_W

static inline void ec64_scan(uint64_t *r, const uint64_t *tab, unsigned n, unsigned width,
                             uint64_t idx)
{
    (width == 8 ? ec64_scan_8 : width == 12 ? ec64_scan_12 : ec64_scan_18)(r, tab, n, idx);
}

/* ec64_fault: the test hook (ec_kern.c's fault): bit 0 of X flipped when
 * slot 0 is in mask. The shipped build has none. */
static void ec64_fault(uint64_t *x, unsigned mask)
{
#if MBC_TEST_HOOKS
    x[0] ^= mask & 1u;
#else
    (void)x;
    (void)mask;
#endif
}

#define EC64_N 4
#define EC64_CV ec64_p256
#define EC64_FN(x) x##_p256
#define EC64_P_MUL fe_p256_mul
#define EC64_P_SQR fe_p256_sqr
#define EC64_ADD fe64_add4
#if !defined(MBC_MSAN) /* the asm forms; MSan builds take the generic ones */
#define EC64_SUB(r, a, b, m) fe_p256_sub(r, a, b)
#define EC64_HALF fe_p256_half
#define EC64_TRI fe_p256_tri
#define EC64_DBL_SUB fe_p256_dbl_sub
#endif
#define EC64_N_MUL(r, a, b) fe64_mont_mul4(r, a, b, ec64_p256.n)
#include "ec_adx_curve.h"
#undef EC64_N
#undef EC64_CV
#undef EC64_FN
#undef EC64_P_MUL
#undef EC64_P_SQR
#undef EC64_ADD
#undef EC64_SUB
#undef EC64_HALF
#undef EC64_TRI
#undef EC64_DBL_SUB
#undef EC64_N_MUL

#define EC64_N 6
#define EC64_CV ec64_p384
#define EC64_FN(x) x##_p384
#define EC64_P_MUL fe_p384_mul
#define EC64_P_SQR fe_p384_sqr
#define EC64_N_MUL(r, a, b) fe64_mont_mul6(r, a, b, ec64_p384.n)
#include "ec_adx_curve.h"
#undef EC64_N
#undef EC64_CV
#undef EC64_FN
#undef EC64_P_MUL
#undef EC64_P_SQR
#undef EC64_N_MUL

#if MBC_TEST_HOOKS
void mbc_ec_adx_inv(unsigned curve, int mod_n, uint64_t *r, const uint64_t *a)
{
    const struct ec64_curve *c = curve == MBC_CURVE_P256 ? &ec64_p256 : &ec64_p384;
    sg_inv(r, a, mod_n ? c->n_s62 : c->p_s62, mod_n ? c->n_minv62 : c->p_minv62, c->n_limbs,
           c->sg_limbs, c->sg_batches);
}

void mbc_ec_adx_mul(unsigned curve, int op, uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    if (curve == MBC_CURVE_P256) {
        op == 0 ? p_mul_p256(r, a, b) : op == 1 ? p_sqr_p256(r, a) : n_mul_p256(r, a, b);
    } else {
        op == 0 ? p_mul_p384(r, a, b) : op == 1 ? p_sqr_p384(r, a) : n_mul_p384(r, a, b);
    }
}
#endif

void mbc_ec_base_kern_adx(struct ec_base_args *a)
{
    mbc_test_count(mbc_ec_kern_hits_adx);
    (a->c->id == MBC_CURVE_P256 ? base_p256 : base_p384)(a);
}

void mbc_ec_sign_kern_adx(struct ec_sign_args *a)
{
    mbc_test_count(mbc_ec_kern_hits_adx);
    (a->c->id == MBC_CURVE_P256 ? sign_p256 : sign_p384)(a);
}

void mbc_ec_verify_kern_adx(struct ec_verify_args *a)
{
    mbc_test_count(mbc_ec_kern_hits_adx);
    (a->c->id == MBC_CURVE_P256 ? verify_p256 : verify_p384)(a);
}

void mbc_ec_ecdh_kern_adx(struct ec_ecdh_args *a)
{
    mbc_test_count(mbc_ec_kern_hits_adx);
    (a->c->id == MBC_CURVE_P256 ? ecdh_p256 : ecdh_p384)(a);
}
