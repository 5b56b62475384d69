/*
 * ct_insn_control.c - the control of tools/ct_insn_scan.py: one function per
 * class of variable-latency instruction, built like the library (meson test
 * ct_insn_scan_control). The scan must find exactly these classes here.
 */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

uint64_t mbc_ctl_div(uint64_t a, uint64_t b);
double mbc_ctl_fpdiv(double a, double b);
double mbc_ctl_fp(double a, double b);
uint64_t mbc_ctl_pdep(uint64_t a, uint64_t mask);
__m256i mbc_ctl_gather(const int *table, __m256i idx);
size_t mbc_ctl_string(const void *a, const void *b, size_t n);

/* DIV: a secret divided by a secret. */
uint64_t mbc_ctl_div(uint64_t a, uint64_t b)
{
    return a / b;
}

/* DIVSD. */
double mbc_ctl_fpdiv(double a, double b)
{
    return a / b;
}

/* MULSD: denormal operands take a microcode assist. */
double mbc_ctl_fp(double a, double b)
{
    return a * b;
}

/* PDEP: microcoded on AMD before Zen 3. */
__attribute__((target("bmi2"))) uint64_t mbc_ctl_pdep(uint64_t a, uint64_t mask)
{
    return _pdep_u64(a, mask);
}

/* VPGATHERDD: addresses from vector data. */
__attribute__((target("avx2"))) __m256i mbc_ctl_gather(const int *table, __m256i idx)
{
    return _mm256_i32gather_epi32(table, idx, 4);
}

/* REPE CMPSB: stops at the first difference (what an inlined memcmp may
 * become). Returns the count left. */
size_t mbc_ctl_string(const void *a, const void *b, size_t n)
{
    __asm__ volatile("repe cmpsb" : "+S"(a), "+D"(b), "+c"(n) : : "cc", "memory");
    return n;
}
