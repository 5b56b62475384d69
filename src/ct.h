/*
 * ct.h - constant-time helpers on uint64_t words. Masks are all-ones or zero
 * and pass through a value barrier so the compiler cannot turn them back into
 * branches. Under MemorySanitizer the barrier is volatile-based, because an
 * inline-asm barrier makes MSan report every secret that passes through it.
 */
#ifndef MBC_SRC_CT_H
#define MBC_SRC_CT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define MBC_MSAN 1
#include <sanitizer/msan_interface.h>
#endif
#endif

/*
 * mbc_declassify: marks len bytes at p as public. Only for a value derived
 * from secrets that the caller is meant to see: an output, a per-lane
 * verdict. The constant-time check (tests/ct) poisons the secrets under
 * MemorySanitizer, so any other branch or address that depends on them is
 * reported; this unpoisons. Elsewhere it compiles to nothing.
 */
static inline void mbc_declassify(const void *p, size_t len)
{
#if defined(MBC_MSAN)
    __msan_unpoison(p, len);
#else
    (void)p;
    (void)len;
#endif
}

/*
 * mbc_classify: marks len bytes at p as secret: under MemorySanitizer they
 * become "uninitialised", so any branch or address that depends on them is
 * reported (the constant-time check of tests/ct). For secrets the library
 * makes itself (random scalars); elsewhere it compiles to nothing.
 */
static inline void mbc_classify(const void *p, size_t len)
{
#if defined(MBC_MSAN)
    __msan_poison(p, len);
#else
    (void)p;
    (void)len;
#endif
}

#if defined(MBC_MSAN)
/*
 * mbc_msan_spread: MSan propagates shadow through additions without their
 * carries, so a flag made of a carry or borrow out of partly secret words
 * would look public. The mb52 backends call this after each add, subtract and
 * multiply-add: lane l of r (lanes words) becomes wholly secret when lane l
 * of any of the n operands holds a secret bit.
 */
static inline void mbc_msan_spread(uint64_t *r, const uint64_t *const *ops, int n, int lanes)
{
    for (int l = 0; l < lanes; l++) {
        for (int i = 0; i < n; i++) {
            if (__msan_test_shadow(&ops[i][l], sizeof(uint64_t)) != -1) {
                __msan_poison(&r[l], sizeof(uint64_t));
            }
        }
    }
}

/*
 * mbc_msan_spread_all: the cross-lane form of mbc_msan_spread, for results
 * that mix lanes (a lane shift, a sum over lanes): all r_len bytes of r
 * become secret when any byte of the ops_len bytes at ops holds a secret bit.
 */
static inline void mbc_msan_spread_all(void *r, size_t r_len, const void *ops, size_t ops_len)
{
    if (__msan_test_shadow(ops, ops_len) != -1) {
        __msan_poison(r, r_len);
    }
}
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
    uint64_t mask = mbc_ct_msb_mask(~x & (x - 1));
#if defined(MBC_MSAN)
    /* MSan propagates shadow through x - 1 without the borrow, so a mask of
     * a partly secret x would read as public: make it secret as a whole. */
    if (__msan_test_shadow(&x, sizeof(x)) != -1) {
        __msan_poison(&mask, sizeof(mask));
    }
#endif
    return mask;
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
