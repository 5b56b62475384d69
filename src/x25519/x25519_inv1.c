/*
 * x25519_inv1.c - one inversion mod p = 2^255 - 19 on plain 52-bit digits
 * (one lane of the mb52 rows), by the constant-time divsteps of
 * fe25519_inv.h that the scalar tier uses too. The vector kernels invert
 * the product of all their lanes with it (fe.h, fe_inv). Plain C:
 * it runs on every CPU, under every backend, and MemorySanitizer sees it.
 */
#include "fe25519_inv.h"
#include "x25519_kern.h"

void mbc_x25519_inv1(uint64_t r[X25519_DIGITS], const uint64_t a[X25519_DIGITS])
{
    uint64_t a64[4], r64[4];
    /* 52-bit digits to 64-bit limbs: a < 2^256, so digit 4 holds at most
     * bits 208..255 */
    a64[0] = a[0] | a[1] << 52;
    a64[1] = a[1] >> 12 | a[2] << 40;
    a64[2] = a[2] >> 24 | a[3] << 28;
    a64[3] = a[3] >> 36 | a[4] << 16;
    fe64_inv_divsteps(r64, a64);
    /* the result is at most p < 2^255: digit 4 below 2^47 */
    const uint64_t m52 = (1ull << 52) - 1;
    r[0] = r64[0] & m52;
    r[1] = (r64[0] >> 52 | r64[1] << 12) & m52;
    r[2] = (r64[1] >> 40 | r64[2] << 24) & m52;
    r[3] = (r64[2] >> 28 | r64[3] << 36) & m52;
    r[4] = r64[3] >> 16;
    mbc_memzero(a64, sizeof(a64));
    mbc_memzero(r64, sizeof(r64));
}
