/*
 * internal.h - declarations shared inside the library. Nothing here is
 * exported: the library is built with -fvisibility=hidden and only MBC_API
 * symbols of mbcrypto.h are visible.
 */
#ifndef MBC_SRC_INTERNAL_H
#define MBC_SRC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mbcrypto.h"

#define MBC_ALIGN64 __attribute__((aligned(64)))

/* MBC_STATUS_SET: returns st with lane's code replaced by code. */
static inline mbc_status mbc_status_set(mbc_status st, unsigned lane, unsigned code)
{
    return (st & ~(0xFu << (4u * lane))) | ((mbc_status)code << (4u * lane));
}

/* mbc_status_all: the status word with every lane set to code. */
mbc_status mbc_status_all(unsigned code);

/* mbc_status_to_err: maps a lane code to the mbc_err of a single-request call. */
mbc_err mbc_lane_code_to_err(unsigned code);

/* mbc_memzero: sets len bytes at p to zero; never optimised away. */
void mbc_memzero(void *p, size_t len);

/* mbc_ct_memeq: 1 if a and b hold the same len bytes, 0 otherwise; the time
 * depends on len only. */
int mbc_ct_memeq(const void *a, const void *b, size_t len);

/* mbc_random_bytes: fills len bytes at buf from the OS random generator
 * (getrandom, retried on EINTR and short reads). MBC_OK, or
 * MBC_ERR_UNSUPPORTED when the OS gives no randomness (buf is then zeroed:
 * never a weak value). Under MemorySanitizer the bytes are marked secret
 * (mbc_classify), so the constant-time check follows them. */
mbc_err mbc_random_bytes(void *buf, size_t len);

/* mbc_aligned_alloc: 64-byte aligned, zeroed allocation of len bytes (NULL on
 * failure). mbc_aligned_free wipes len bytes and frees. */
void *mbc_aligned_alloc(size_t len);
void mbc_aligned_free(void *p, size_t len);

#endif /* MBC_SRC_INTERNAL_H */
