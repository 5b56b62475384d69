/*
 * vec_c.h - the portable backend of the mb52 vector API: one vec is plain
 * uint64_t lanes, one vmask all-ones/zero words. Every operation gives
 * bit-identical results to vec_ifma.h, and none branches on lane values.
 *
 * MBC_VEC_C_LANES (default 8) narrows the backend to the first lanes of
 * each row: with 2, kernels compute lanes 0 and 1 only, at a quarter of the
 * work, for lone requests (symbols name_c2); with 1, lane 0 only, an eighth
 * (symbols name_c1). Rows stay 8 words in memory. MBC_VEC_LANES is the
 * number of lanes a kernel object computes.
 */
#ifndef MBC_SRC_MB52_VEC_C_H
#define MBC_SRC_MB52_VEC_C_H

#include <stdint.h>
#include <string.h>

#include "../ct.h"

#ifndef MBC_VEC_C_LANES
#define MBC_VEC_C_LANES 8
#endif
#define VW MBC_VEC_C_LANES
#define MBC_VEC_LANES MBC_VEC_C_LANES

/* MBC_VEC_COUNT: the counting build of tools/count_ops.c (8 lanes,
 * symbols name_cnt): every multiply-add and every other vector operation
 * adds 1 to its counter, as one zmm instruction would. Every value also
 * carries its times t (vec_time): its dependency depth, the cycle it would
 * be ready at with unlimited execution units (a multiply-add takes
 * MBC_VEC_LAT_MADD cycles, any other counted operation 1; constants are
 * ready at 0; a load is ready when its row was stored, through the shadow
 * of memory that tools/count_ops.c keeps: mbc_vec_count_load / _store), and
 * when it is ready on the modelled out-of-order machines that
 * mbc_vec_count_op schedules it on (tools/count_ops.c). */
#if defined(MBC_VEC_COUNT)
#define MBC_VEC_LAT_MADD 4
typedef struct {
    unsigned long depth, intel, zen4;
} vec_time;
typedef struct {
    uint64_t v[VW];
    vec_time t;
} vec;
typedef struct {
    uint64_t v[VW];
    vec_time t;
} vmask;
extern unsigned long mbc_vec_count_madd, mbc_vec_count_alu;
/* mbc_vec_count_scalar_inv: a scalar inversion mod a bits-bit modulus,
 * counted as the fixed cycles tools/count_ops.c gives it. */
void mbc_vec_count_scalar_inv(unsigned bits);
vec_time mbc_vec_count_load(const void *p);
void mbc_vec_count_store(const void *p, vec_time t);
/* mbc_vec_count_op: the times of an operation of latency lat (1 or
 * MBC_VEC_LAT_MADD) whose inputs are ready at dep. */
vec_time mbc_vec_count_op(unsigned lat, vec_time dep);
#define VEC_COUNT(ctr, n) (mbc_vec_count_##ctr += (n))
static inline unsigned long vec_tmax(unsigned long a, unsigned long b)
{
    return a > b ? a : b;
}
static inline vec_time vec_tjoin(vec_time a, vec_time b)
{
    return (vec_time){vec_tmax(a.depth, b.depth), vec_tmax(a.intel, b.intel),
                      vec_tmax(a.zen4, b.zen4)};
}
#define VEC_T0 ((vec_time){0, 0, 0})
/* VEC_T: r is the result of an operation of latency lat on inputs ready at
 * dep (lat 0: no operation, r is ready when its inputs are). */
#define VEC_T(r, lat, dep) ((r).t = (lat) ? mbc_vec_count_op((lat), (dep)) : (dep))
#else
typedef struct {
    uint64_t v[VW];
} vec;
typedef struct {
    uint64_t v[VW];
} vmask;
#define VEC_COUNT(ctr, n) ((void)0)
#define VEC_T(r, lat, dep) ((void)0)
#endif

#if VW == 8 && defined(MBC_VEC_COUNT)
#define MBC_KFN(name) mbc_##name##_cnt
#define MBC_VEC_NAME "cnt"
#elif VW == 8
#define MBC_KFN(name) mbc_##name##_c
#define MBC_VEC_NAME "c"
#elif VW == 2
#define MBC_KFN(name) mbc_##name##_c2
#define MBC_VEC_NAME "c2"
#elif VW == 1
#define MBC_KFN(name) mbc_##name##_c1
#define MBC_VEC_NAME "c1"
#else
#error "MBC_VEC_C_LANES must be 8, 2 or 1"
#endif

/* VEC_MAP: one counted operation of depth 1 after dep, lane by lane. */
#define VEC_MAP(expr, dep)                                                                         \
    vec r_;                                                                                        \
    VEC_COUNT(alu, 1);                                                                             \
    VEC_T(r_, 1, dep);                                                                             \
    for (int i = 0; i < VW; i++) {                                                                 \
        r_.v[i] = (expr);                                                                          \
    }                                                                                              \
    return r_

#define M52 ((1ull << 52) - 1)

static inline vec v_load(const uint64_t *p)
{
    vec r;
    memcpy(r.v, p, sizeof(r.v));
#if defined(MBC_VEC_COUNT)
    r.t = mbc_vec_count_load(p);
#endif
    return r;
}
static inline void v_store(uint64_t *p, vec a)
{
    memcpy(p, a.v, sizeof(a.v));
#if defined(MBC_VEC_COUNT)
    mbc_vec_count_store(p, a.t);
#endif
}
/* (constants and broadcasts are not counted: a compiler hoists most) */
static inline vec v_zero(void)
{
    vec r;
    memset(&r, 0, sizeof(r));
    return r;
}
static inline vec v_set1(uint64_t x)
{
    vec r;
    VEC_T(r, 0, VEC_T0);
    for (int i = 0; i < VW; i++) {
        r.v[i] = x;
    }
    return r;
}
/* v_msan: under MemorySanitizer, r with carries' secrecy spread over whole
 * lanes (see mbc_msan_spread); otherwise r. */
static inline vec v_msan(vec r, vec a, vec b, vec c)
{
#if defined(MBC_MSAN)
    const uint64_t *const ops[3] = {a.v, b.v, c.v};
    mbc_msan_spread(r.v, ops, 3, VW);
#else
    (void)a;
    (void)b;
    (void)c;
#endif
    return r;
}

static inline vec v_madd52lo(vec acc, vec a, vec b)
{
    vec r;
    VEC_COUNT(madd, 1);
    VEC_T(r, MBC_VEC_LAT_MADD, vec_tjoin(acc.t, vec_tjoin(a.t, b.t)));
    for (int i = 0; i < VW; i++) {
        r.v[i] = acc.v[i] + (((a.v[i] & M52) * (b.v[i] & M52)) & M52);
    }
    return v_msan(r, acc, a, b);
}
static inline vec v_madd52hi(vec acc, vec a, vec b)
{
    vec r;
    VEC_COUNT(madd, 1);
    VEC_T(r, MBC_VEC_LAT_MADD, vec_tjoin(acc.t, vec_tjoin(a.t, b.t)));
    for (int i = 0; i < VW; i++) {
        r.v[i] = acc.v[i] + (uint64_t)(((unsigned __int128)(a.v[i] & M52) * (b.v[i] & M52)) >> 52);
    }
    return v_msan(r, acc, a, b);
}
/* v_madd52lohi: *lo = v_madd52lo(*lo, a, b) and *hi = v_madd52hi(*hi, a, b),
 * from one 128-bit product per lane. */
static inline void v_madd52lohi(vec *lo, vec *hi, vec a, vec b)
{
    vec l, h;
    VEC_COUNT(madd, 2);
    VEC_T(l, MBC_VEC_LAT_MADD, vec_tjoin(lo->t, vec_tjoin(a.t, b.t)));
    VEC_T(h, MBC_VEC_LAT_MADD, vec_tjoin(hi->t, vec_tjoin(a.t, b.t)));
    for (int i = 0; i < VW; i++) {
        const unsigned __int128 p = (unsigned __int128)(a.v[i] & M52) * (b.v[i] & M52);
        l.v[i] = lo->v[i] + ((uint64_t)p & M52);
        h.v[i] = hi->v[i] + (uint64_t)(p >> 52);
    }
    *lo = v_msan(l, *lo, a, b);
    *hi = v_msan(h, *hi, a, b);
}
static inline vec v_add(vec a, vec b)
{
    vec r;
    VEC_COUNT(alu, 1);
    VEC_T(r, 1, vec_tjoin(a.t, b.t));
    for (int i = 0; i < VW; i++) {
        r.v[i] = a.v[i] + b.v[i];
    }
    return v_msan(r, a, b, b);
}
static inline vec v_sub(vec a, vec b)
{
    vec r;
    VEC_COUNT(alu, 1);
    VEC_T(r, 1, vec_tjoin(a.t, b.t));
    for (int i = 0; i < VW; i++) {
        r.v[i] = a.v[i] - b.v[i];
    }
    return v_msan(r, a, b, b);
}
static inline vec v_and(vec a, vec b)
{
    VEC_MAP(a.v[i] & b.v[i], vec_tjoin(a.t, b.t));
}
static inline vec v_or(vec a, vec b)
{
    VEC_MAP(a.v[i] | b.v[i], vec_tjoin(a.t, b.t));
}
static inline vec v_xor(vec a, vec b)
{
    VEC_MAP(a.v[i] ^ b.v[i], vec_tjoin(a.t, b.t));
}
static inline vec v_srl(vec a, unsigned n)
{
    VEC_MAP(a.v[i] >> n, a.t);
}
static inline vec v_sll(vec a, unsigned n)
{
    VEC_MAP(a.v[i] << n, a.t);
}
static inline vec v_srl52(vec a)
{
    VEC_MAP(a.v[i] >> 52, a.t);
}
static inline vec v_sra63(vec a)
{
    VEC_MAP(0 - (a.v[i] >> 63), a.t);
}
/* v_sra52: arithmetic shift by 52 (the top 52 bits copies of the sign). */
static inline vec v_sra52(vec a)
{
    VEC_MAP((a.v[i] >> 52) | ((0 - (a.v[i] >> 63)) << 12), a.t);
}
static inline vmask v_eq(vec a, vec b)
{
    vmask r;
    VEC_COUNT(alu, 1);
    VEC_T(r, 1, vec_tjoin(a.t, b.t));
    for (int i = 0; i < VW; i++) {
        r.v[i] = mbc_ct_eq_mask(a.v[i], b.v[i]);
    }
    return r;
}
static inline vmask v_nonzero(vec a)
{
    vmask r;
    VEC_COUNT(alu, 1);
    VEC_T(r, 1, a.t);
    for (int i = 0; i < VW; i++) {
        r.v[i] = ~mbc_ct_is_zero_mask(a.v[i]);
    }
    return r;
}
static inline vec v_blend(vmask m, vec a, vec b)
{
    VEC_MAP((b.v[i] & m.v[i]) | (a.v[i] & ~m.v[i]), vec_tjoin(m.t, vec_tjoin(a.t, b.t)));
}
/* (mask logic is not counted: k-register operations, off the vector ports;
 * its depth is its inputs') */
static inline vmask vm_and(vmask a, vmask b)
{
    vmask r;
    VEC_T(r, 0, vec_tjoin(a.t, b.t));
    for (int i = 0; i < VW; i++) {
        r.v[i] = a.v[i] & b.v[i];
    }
    return r;
}
static inline vmask vm_or(vmask a, vmask b)
{
    vmask r;
    VEC_T(r, 0, vec_tjoin(a.t, b.t));
    for (int i = 0; i < VW; i++) {
        r.v[i] = a.v[i] | b.v[i];
    }
    return r;
}
static inline vmask vm_not(vmask a)
{
    vmask r;
    VEC_T(r, 0, a.t);
    for (int i = 0; i < VW; i++) {
        r.v[i] = ~a.v[i];
    }
    return r;
}
static inline vmask vm_from_bits(unsigned bits)
{
    vmask r;
    VEC_T(r, 0, VEC_T0);
    for (int i = 0; i < VW; i++) {
        r.v[i] = 0 - (uint64_t)((bits >> i) & 1u);
    }
    return r;
}
static inline unsigned vm_bits(vmask m)
{
    unsigned bits = 0;
    for (int i = 0; i < VW; i++) {
        bits |= (unsigned)(m.v[i] & 1u) << i;
    }
    return bits;
}

/* v_lanes_up: lane l of a moved to lane l + h (h < lanes, public), the low
 * h lanes taken from f; v_lanes_down: lane l + h moved to lane l, the top h
 * lanes from f. One operation each (a masked lane permute). */
static inline vec v_lanes_up(vec a, vec f, unsigned h)
{
    VEC_MAP(i >= (int)h ? a.v[i - (int)h] : f.v[i], vec_tjoin(a.t, f.t));
}
static inline vec v_lanes_down(vec a, vec f, unsigned h)
{
    VEC_MAP(i + (int)h < VW ? a.v[i + (int)h] : f.v[i], vec_tjoin(a.t, f.t));
}

/* v_perm2_rows: lane i gets word (idx_i mod 16) of the 16 words a[0..7],
 * b[0..7] (two 8-word rows in memory), one operation (a vpermi2q): every
 * word is read and masked, the index reaches no address and no branch.
 * v_perm2m: the same in the lanes of m, the index taken from src; the
 * other lanes keep src (a masked vpermi2q). */
static inline uint64_t vec_sel16(const uint64_t *a, const uint64_t *b, uint64_t ix)
{
    uint64_t r = 0;
    for (uint64_t t = 0; t < 16; t++) {
        r |= (t < 8 ? a[t] : b[t - 8]) & mbc_ct_eq_mask(ix & 15, t);
    }
    return r;
}
static inline vec v_perm2_rows(const uint64_t *a, const uint64_t *b, vec idx)
{
    VEC_MAP(vec_sel16(a, b, idx.v[i]),
            vec_tjoin(idx.t, vec_tjoin(mbc_vec_count_load(a), mbc_vec_count_load(b))));
}
static inline vec v_perm2m(vec src, vmask m, const uint64_t *a, const uint64_t *b)
{
    VEC_MAP(
        (vec_sel16(a, b, src.v[i]) & m.v[i]) | (src.v[i] & ~m.v[i]),
        vec_tjoin(vec_tjoin(src.t, m.t), vec_tjoin(mbc_vec_count_load(a), mbc_vec_count_load(b))));
}

#undef M52
#undef VW
#undef VEC_COUNT
#undef VEC_T

#endif /* MBC_SRC_MB52_VEC_C_H */
