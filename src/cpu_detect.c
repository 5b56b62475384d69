/*
 * cpu_detect.c - CPUID leaves 1 and 7 plus XGETBV into one feature word.
 * No vendor-string checks: any CPU that reports a feature gets it.
 */
#include <cpuid.h>
#include <stdint.h>

#include "dispatch.h"

struct cpu_bit {
    uint32_t leaf;
    uint32_t subleaf;
    uint8_t reg; /* 0 = eax, 1 = ebx, 2 = ecx, 3 = edx */
    uint8_t bit;
    uint64_t feature;
};

static const struct cpu_bit cpu_bits[] = {
    {1, 0, 3, 26, MBC_CPU_SSE2},       {1, 0, 2, 9, MBC_CPU_SSSE3},
    {1, 0, 2, 19, MBC_CPU_SSE41},      {1, 0, 2, 25, MBC_CPU_AESNI},
    {1, 0, 2, 1, MBC_CPU_PCLMULQDQ},   {1, 0, 2, 28, MBC_CPU_AVX},
    {7, 0, 1, 5, MBC_CPU_AVX2},        {7, 0, 1, 8, MBC_CPU_BMI2},
    {7, 0, 1, 19, MBC_CPU_ADX},        {7, 0, 1, 16, MBC_CPU_AVX512F},
    {7, 0, 1, 17, MBC_CPU_AVX512DQ},   {7, 0, 1, 30, MBC_CPU_AVX512BW},
    {7, 0, 1, 31, MBC_CPU_AVX512VL},   {7, 0, 1, 21, MBC_CPU_AVX512IFMA},
    {7, 0, 2, 1, MBC_CPU_AVX512VBMI},  {7, 0, 2, 9, MBC_CPU_VAES},
    {7, 0, 2, 10, MBC_CPU_VPCLMULQDQ}, {7, 0, 2, 8, MBC_CPU_GFNI},
};

#define AVX_STATE_FEATURES                                                            \
    (MBC_CPU_AVX | MBC_CPU_AVX2 | MBC_CPU_VAES | MBC_CPU_VPCLMULQDQ | MBC_CPU_GFNI)
#define AVX512_FEATURES                                                               \
    (MBC_CPU_AVX512F | MBC_CPU_AVX512DQ | MBC_CPU_AVX512BW | MBC_CPU_AVX512VL |      \
     MBC_CPU_AVX512IFMA | MBC_CPU_AVX512VBMI)

uint64_t mbc_cpu_features_from_regs(uint32_t (*regs)[4], uint32_t max_leaf, uint64_t xcr0,
                                    int osxsave)
{
    uint64_t features = 0;
    for (size_t i = 0; i < sizeof(cpu_bits) / sizeof(cpu_bits[0]); i++) {
        const struct cpu_bit *b = &cpu_bits[i];
        if (b->leaf > max_leaf) {
            continue;
        }
        const uint32_t *r = regs[b->leaf == 1 ? 0 : 1];
        if ((r[b->reg] >> b->bit) & 1u) {
            features |= b->feature;
        }
    }
    /* The OS must save the state the instructions use: XMM|YMM for AVX and
     * the 256-bit VAES/VPCLMULQDQ forms, plus opmask and ZMM for AVX-512. */
    if (!osxsave || (xcr0 & 0x6) != 0x6) {
        features &= ~(AVX_STATE_FEATURES | AVX512_FEATURES);
    }
    if (!osxsave || (xcr0 & 0xE6) != 0xE6) {
        features &= ~AVX512_FEATURES;
    }
    return features;
}

uint64_t mbc_cpu_detect(void)
{
    uint32_t regs[2][4] = {{0}};
    uint32_t max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf >= 1) {
        __cpuid_count(1, 0, regs[0][0], regs[0][1], regs[0][2], regs[0][3]);
    }
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, regs[1][0], regs[1][1], regs[1][2], regs[1][3]);
    }
    int osxsave = (int)((regs[0][2] >> 27) & 1u);
    uint64_t xcr0 = 0;
    if (osxsave) {
        uint32_t lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = ((uint64_t)hi << 32) | lo;
    }
    return mbc_cpu_features_from_regs(regs, max_leaf, xcr0, osxsave);
}
