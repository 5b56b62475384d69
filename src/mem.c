/* mem.c - wiping, constant-time comparison and aligned scratch. */
#include <stdlib.h>
#include <string.h>

#include "ct.h"
#include "internal.h"

#if defined(MBC_MSAN)
void (*mbc_msan_release_hook)(const void *p, size_t len);
#endif

void mbc_memzero(void *p, size_t len)
{
    if (p == NULL || len == 0) {
        return;
    }
    memset(p, 0, len);
    /* The compiler must assume the asm reads the zeroed bytes. */
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

int mbc_ct_memeq(const void *a, const void *b, size_t len)
{
    const uint8_t *x = a;
    const uint8_t *y = b;
    uint64_t diff = 0;
    size_t i = 0;
    /* 8 bytes at a time (GCM tags are on hot paths), then the rest. */
    for (; i + 8 <= len; i += 8) {
        uint64_t u, v;
        memcpy(&u, x + i, 8);
        memcpy(&v, y + i, 8);
        diff |= u ^ v;
    }
    for (; i < len; i++) {
        diff |= (uint64_t)(x[i] ^ y[i]);
    }
    return (int)(mbc_ct_is_zero_mask(diff) & 1);
}

void *mbc_aligned_alloc(size_t len)
{
    size_t rounded = (len + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (p != NULL) {
        memset(p, 0, rounded == 0 ? 64 : rounded);
    }
    return p;
}

void mbc_aligned_free(void *p, size_t len)
{
    if (p == NULL) {
        return;
    }
    mbc_memzero(p, len);
    free(p);
}
