/*
 * vec_ifma.h - the AVX-512 IFMA backend of the mb52 vector API: one vec is
 * one zmm register (8 lanes of 64 bits), one vmask an AVX-512 opmask.
 * Only included by kernel objects built with the IFMA flags.
 *
 * MBC_VEC_IFMA_LANES=4 narrows it to one ymm register (AVX-512VL), lanes
 * 0..3 of each row (symbols name_ifma4), for lone and few requests: a ymm
 * multiply-add issues twice per cycle where a zmm one issues once (Zen 4,
 * Ice Lake) and as often elsewhere (Sapphire Rapids, Zen 5), so 4 lanes on
 * ymm never cost more than 8 on zmm and cost half on the former. Rows stay
 * 8 words (64 bytes) in memory.
 */
#ifndef MBC_SRC_MB52_VEC_IFMA_H
#define MBC_SRC_MB52_VEC_IFMA_H

#include <immintrin.h>
#include <stdint.h>

#include "../ct.h"

#ifndef MBC_VEC_IFMA_LANES
#define MBC_VEC_IFMA_LANES 8
#endif
#define MBC_VEC_LANES MBC_VEC_IFMA_LANES

#if MBC_VEC_IFMA_LANES == 8
typedef __m512i vec;
#define VI(op) _mm512_##op
#define VI_SI(op) _mm512_##op##_si512
#define VI_SET1 _mm512_set1_epi64
#define MBC_KFN(name) mbc_##name##_ifma
#define MBC_VEC_NAME "ifma"
#elif MBC_VEC_IFMA_LANES == 4
typedef __m256i vec;
#define VI(op) _mm256_##op
#define VI_SI(op) _mm256_##op##_si256
#define VI_SET1 _mm256_set1_epi64x
#define MBC_KFN(name) mbc_##name##_ifma4
#define MBC_VEC_NAME "ifma4"
#else
#error "MBC_VEC_IFMA_LANES must be 8 or 4"
#endif
typedef __mmask8 vmask;
#define VL MBC_VEC_IFMA_LANES

static inline vec v_load(const uint64_t *p)
{
    return VI_SI(load)((const void *)p);
}
static inline void v_store(uint64_t *p, vec a)
{
    VI_SI(store)((void *)p, a);
}
static inline vec v_zero(void)
{
    return VI_SI(setzero)();
}
static inline vec v_set1(uint64_t x)
{
    return VI_SET1((long long)x);
}
#if defined(MBC_MSAN)
/* v_msan_spill: r into rv, and a, b, c into ov (VL words each), for the
 * MemorySanitizer wrappers that spread secrecy over a result. */
static inline void v_msan_spill(uint64_t rv[VL], uint64_t ov[3 * VL], vec r, vec a, vec b, vec c)
{
    VI_SI(storeu)((void *)rv, r);
    VI_SI(storeu)((void *)ov, a);
    VI_SI(storeu)((void *)(ov + VL), b);
    VI_SI(storeu)((void *)(ov + 2 * VL), c);
}
#endif

/* v_msan / v_msan_all: under MemorySanitizer, r with the secrecy of a, b
 * and c spread over whole lanes (see mbc_msan_spread), or over all of r
 * when any lane of an operand is secret (results that mix lanes: lane
 * shifts, carry ripples); otherwise r. */
static inline vec v_msan_any(vec r, vec a, vec b, vec c, int all)
{
#if defined(MBC_MSAN)
    uint64_t rv[VL], ov[3 * VL];
    v_msan_spill(rv, ov, r, a, b, c);
    if (all) {
        mbc_msan_spread_all(rv, sizeof(rv), ov, sizeof(ov));
    } else {
        const uint64_t *const ops[3] = {ov, ov + VL, ov + 2 * VL};
        mbc_msan_spread(rv, ops, 3, VL);
    }
    return VI_SI(loadu)((const void *)rv);
#else
    (void)a;
    (void)b;
    (void)c;
    (void)all;
    return r;
#endif
}

static inline vec v_msan(vec r, vec a, vec b, vec c)
{
    return v_msan_any(r, a, b, c, 0);
}
static inline vec v_msan_all(vec r, vec a, vec b, vec c)
{
    return v_msan_any(r, a, b, c, 1);
}

/* v_madd52lo: acc + low 52 bits of (a mod 2^52) * (b mod 2^52), per lane. */
static inline vec v_madd52lo(vec acc, vec a, vec b)
{
    return v_msan(VI(madd52lo_epu64)(acc, a, b), acc, a, b);
}
/* v_madd52hi: acc + high 52 bits of the 104-bit product of the low 52 bits. */
static inline vec v_madd52hi(vec acc, vec a, vec b)
{
    return v_msan(VI(madd52hi_epu64)(acc, a, b), acc, a, b);
}
/* v_madd52lohi: *lo = v_madd52lo(*lo, a, b) and *hi = v_madd52hi(*hi, a, b)
 * (one product on the portable backend). */
static inline void v_madd52lohi(vec *lo, vec *hi, vec a, vec b)
{
    *lo = v_madd52lo(*lo, a, b);
    *hi = v_madd52hi(*hi, a, b);
}
static inline vec v_add(vec a, vec b)
{
    return v_msan(VI(add_epi64)(a, b), a, b, b);
}
static inline vec v_sub(vec a, vec b)
{
    return v_msan(VI(sub_epi64)(a, b), a, b, b);
}
static inline vec v_and(vec a, vec b)
{
    return VI_SI(and)(a, b);
}
static inline vec v_or(vec a, vec b)
{
    return VI_SI(or)(a, b);
}
static inline vec v_xor(vec a, vec b)
{
    return VI_SI(xor)(a, b);
}
/* v_srl / v_sll: logical shifts by n < 64 bits (n public, same for all lanes). */
static inline vec v_srl(vec a, unsigned n)
{
    return VI(srlv_epi64)(a, VI_SET1(n));
}
static inline vec v_sll(vec a, unsigned n)
{
    return VI(sllv_epi64)(a, VI_SET1(n));
}
static inline vec v_srl52(vec a)
{
    return VI(srli_epi64)(a, 52);
}
/* v_sra63: arithmetic shift by 63: all-ones where the top bit is set. */
static inline vec v_sra63(vec a)
{
    return VI(srai_epi64)(a, 63);
}
/* v_sra52: arithmetic shift by 52: the signed carry of a digit. */
static inline vec v_sra52(vec a)
{
    return VI(srai_epi64)(a, 52);
}
static inline vmask v_eq(vec a, vec b)
{
    return VI(cmpeq_epi64_mask)(a, b);
}
static inline vmask v_nonzero(vec a)
{
    return VI(test_epi64_mask)(a, a);
}
/* v_blend: lanes of m take b, the others a. */
static inline vec v_blend(vmask m, vec a, vec b)
{
    return VI(mask_blend_epi64)(m, a, b);
}
static inline vmask vm_and(vmask a, vmask b)
{
    return (vmask)(a & b);
}
static inline vmask vm_or(vmask a, vmask b)
{
    return (vmask)(a | b);
}
static inline vmask vm_not(vmask a)
{
    return (vmask)(~a & ((1u << VL) - 1));
}
static inline vmask vm_from_bits(unsigned bits)
{
    return (vmask)bits;
}
static inline unsigned vm_bits(vmask m)
{
    return (unsigned)m & ((1u << VL) - 1);
}
/* v_lanes_up / v_lanes_down: lanes moved up / down by h (public, < VL), the
 * lanes left empty taken from f (vec_c.h). A masked vpermq. */
#if VL == 8
#define VI_IOTA _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0)
#else
#define VI_IOTA _mm256_set_epi64x(3, 2, 1, 0)
#endif
static inline vec v_lanes_up(vec a, vec f, unsigned h)
{
    const vmask m = (vmask)(((1u << VL) - 1) & ~((1u << h) - 1));
    return VI(mask_permutexvar_epi64)(f, m, VI(sub_epi64)(VI_IOTA, VI_SET1(h)), a);
}
static inline vec v_lanes_down(vec a, vec f, unsigned h)
{
    const vmask m = (vmask)((1u << (VL - h)) - 1);
    return VI(mask_permutexvar_epi64)(f, m, VI(add_epi64)(VI_IOTA, VI_SET1(h)), a);
}
#undef VI_IOTA

/*
 * v_perm2_rows: lane i gets word (idx_i mod 16) of the 16 words a[0..7],
 * b[0..7] (two 8-word rows of a table in memory): every word is loaded and
 * the index only picks within registers, no address depends on it (one
 * vpermi2q on zmm; on ymm two, one per row, and a blend by bit 3).
 * v_perm2m: the same in the lanes of m, with the index taken from src; the
 * other lanes keep src (a masked vpermi2q, zmm only).
 */
#if VL == 8
static inline vec v_perm2_rows(const uint64_t *a, const uint64_t *b, vec idx)
{
    return v_msan(_mm512_permutex2var_epi64(v_load(a), idx, v_load(b)), idx, idx, idx);
}
static inline vec v_perm2m(vec src, vmask m, const uint64_t *a, const uint64_t *b)
{
    return v_msan(_mm512_mask2_permutex2var_epi64(v_load(a), src, m, v_load(b)), src, src, src);
}
#else
static inline vec v_perm2_rows(const uint64_t *a, const uint64_t *b, vec idx)
{
    const vec lo = _mm256_permutex2var_epi64(v_load(a), idx, v_load(a + 4));
    const vec hi = _mm256_permutex2var_epi64(v_load(b), idx, v_load(b + 4));
    const vmask m = _mm256_test_epi64_mask(idx, _mm256_set1_epi64x(8));
    return v_msan(_mm256_mask_blend_epi64(m, lo, hi), idx, idx, idx);
}
#endif

#undef VL

#endif /* MBC_SRC_MB52_VEC_IFMA_H */
