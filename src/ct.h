/*
 * ct.h - constant-time helpers on uint64_t words. Masks are all-ones or zero
 * and pass through a value barrier so the compiler cannot turn them back into
 * branches. Under MemorySanitizer the barrier is volatile-based, because an
 * inline-asm barrier makes MSan report every secret that passes through it.
 */
#ifndef MBC_SRC_CT_H
#define MBC_SRC_CT_H

#include <stdint.h>

#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define MBC_MSAN 1
#endif
#endif

/* mbc_value_barrier: returns x, opaque to the optimiser. */
static inline uint64_t mbc_value_barrier(uint64_t x)
{
#if defined(MBC_MSAN)
    volatile uint64_t v = x;
    return v;
#else
    __asm__("" : "+r"(x));
    return x;
#endif
}

/* mbc_ct_msb_mask: all-ones if the top bit of x is set, else 0. */
static inline uint64_t mbc_ct_msb_mask(uint64_t x)
{
    return mbc_value_barrier(0 - (x >> 63));
}

/* mbc_ct_is_zero_mask: all-ones if x == 0, else 0. */
static inline uint64_t mbc_ct_is_zero_mask(uint64_t x)
{
    return mbc_ct_msb_mask(~x & (x - 1));
}

/* mbc_ct_eq_mask: all-ones if a == b, else 0. */
static inline uint64_t mbc_ct_eq_mask(uint64_t a, uint64_t b)
{
    return mbc_ct_is_zero_mask(a ^ b);
}

/* mbc_ct_select: mask ? a : b, for an all-ones/zero mask. */
static inline uint64_t mbc_ct_select(uint64_t mask, uint64_t a, uint64_t b)
{
    return (a & mask) | (b & ~mask);
}

#endif /* MBC_SRC_CT_H */
