/*
 * vec_ifma.h - the AVX-512 IFMA backend of the mb52 vector API: one vec is
 * one zmm register (8 lanes of 64 bits), one vmask an AVX-512 opmask.
 * Only included by kernel objects built with the IFMA flags.
 */
#ifndef MBC_SRC_MB52_VEC_IFMA_H
#define MBC_SRC_MB52_VEC_IFMA_H

#include <immintrin.h>
#include <stdint.h>

#include "../ct.h"

typedef __m512i vec;
typedef __mmask8 vmask;

#define MBC_KFN(name) mbc_##name##_ifma
#define MBC_VEC_NAME "ifma"
#define MBC_VEC_LANES 8

static inline vec v_load(const uint64_t *p) { return _mm512_load_si512((const void *)p); }
static inline void v_store(uint64_t *p, vec a) { _mm512_store_si512((void *)p, a); }
static inline vec v_zero(void) { return _mm512_setzero_si512(); }
static inline vec v_set1(uint64_t x) { return _mm512_set1_epi64((long long)x); }
#if defined(MBC_MSAN)
/* v_msan_spill: r into rv, and a, b, c into ov (8 words each), for the
 * MemorySanitizer wrappers that spread secrecy over a result. */
static inline void v_msan_spill(uint64_t rv[8], uint64_t ov[24], vec r, vec a, vec b, vec c)
{
    _mm512_storeu_si512((void *)rv, r);
    _mm512_storeu_si512((void *)ov, a);
    _mm512_storeu_si512((void *)(ov + 8), b);
    _mm512_storeu_si512((void *)(ov + 16), c);
}
#endif

/* v_msan / v_msan_all: under MemorySanitizer, r with the secrecy of a, b
 * and c spread over whole lanes (see mbc_msan_spread), or over all of r
 * when any lane of an operand is secret (results that mix lanes: lane
 * shifts, carry ripples); otherwise r. */
static inline vec v_msan_any(vec r, vec a, vec b, vec c, int all)
{
#if defined(MBC_MSAN)
    uint64_t rv[8], ov[24];
    v_msan_spill(rv, ov, r, a, b, c);
    if (all) {
        mbc_msan_spread_all(rv, sizeof(rv), ov, sizeof(ov));
    } else {
        const uint64_t *const ops[3] = {ov, ov + 8, ov + 16};
        mbc_msan_spread(rv, ops, 3, 8);
    }
    return _mm512_loadu_si512((const void *)rv);
#else
    (void)a;
    (void)b;
    (void)c;
    (void)all;
    return r;
#endif
}

static inline vec v_msan(vec r, vec a, vec b, vec c) { return v_msan_any(r, a, b, c, 0); }
static inline vec v_msan_all(vec r, vec a, vec b, vec c) { return v_msan_any(r, a, b, c, 1); }

/* v_madd52lo: acc + low 52 bits of (a mod 2^52) * (b mod 2^52), per lane. */
static inline vec v_madd52lo(vec acc, vec a, vec b)
{
    return v_msan(_mm512_madd52lo_epu64(acc, a, b), acc, a, b);
}
/* v_madd52hi: acc + high 52 bits of the 104-bit product of the low 52 bits. */
static inline vec v_madd52hi(vec acc, vec a, vec b)
{
    return v_msan(_mm512_madd52hi_epu64(acc, a, b), acc, a, b);
}
/* v_madd52lohi: *lo = v_madd52lo(*lo, a, b) and *hi = v_madd52hi(*hi, a, b)
 * (one product on the portable backend). */
static inline void v_madd52lohi(vec *lo, vec *hi, vec a, vec b)
{
    *lo = v_madd52lo(*lo, a, b);
    *hi = v_madd52hi(*hi, a, b);
}
static inline vec v_add(vec a, vec b) { return v_msan(_mm512_add_epi64(a, b), a, b, b); }
static inline vec v_sub(vec a, vec b) { return v_msan(_mm512_sub_epi64(a, b), a, b, b); }
static inline vec v_and(vec a, vec b) { return _mm512_and_si512(a, b); }
static inline vec v_or(vec a, vec b) { return _mm512_or_si512(a, b); }
static inline vec v_xor(vec a, vec b) { return _mm512_xor_si512(a, b); }
/* v_srl / v_sll: logical shifts by n < 64 bits (n public, same for all lanes). */
static inline vec v_srl(vec a, unsigned n) { return _mm512_srlv_epi64(a, _mm512_set1_epi64(n)); }
static inline vec v_sll(vec a, unsigned n) { return _mm512_sllv_epi64(a, _mm512_set1_epi64(n)); }
static inline vec v_srl52(vec a) { return _mm512_srli_epi64(a, 52); }
/* v_sra63: arithmetic shift by 63: all-ones where the top bit is set. */
static inline vec v_sra63(vec a) { return _mm512_srai_epi64(a, 63); }
static inline vmask v_eq(vec a, vec b) { return _mm512_cmpeq_epi64_mask(a, b); }
static inline vmask v_nonzero(vec a) { return _mm512_test_epi64_mask(a, a); }
/* v_blend: lanes of m take b, the others a. */
static inline vec v_blend(vmask m, vec a, vec b) { return _mm512_mask_blend_epi64(m, a, b); }
static inline vmask vm_and(vmask a, vmask b) { return (vmask)(a & b); }
static inline vmask vm_or(vmask a, vmask b) { return (vmask)(a | b); }
static inline vmask vm_not(vmask a) { return (vmask)~a; }
static inline vmask vm_from_bits(unsigned bits) { return (vmask)bits; }
static inline unsigned vm_bits(vmask m) { return (unsigned)m & 0xFFu; }

#endif /* MBC_SRC_MB52_VEC_IFMA_H */
