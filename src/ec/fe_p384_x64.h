/*
 * fe_p384_x64.h - Montgomery multiplication on 6 limbs with MULX, ADCX
 * and ADOX (GCC inline assembly), R = 2^384, inputs and result fully
 * reduced, for any 6-limb odd modulus m with m0 = -m^-1 mod 2^64 six limbs
 * past it (struct ec64_curve's p and n): the EC64_P_MUL / EC64_N_MUL
 * leaves of ec_adx_curve.h for P-384. fe64.h's generic C took about twice
 * as long (rdtsc, Xeon family 6 model 207).
 *
 * Operand scanning (CIOS), as fe64_mont_mul4 (fe_p256_x64.h): per limb b_i
 * of b, t += a b_i on the two carry chains (ADCX the low halves, ADOX the
 * high ones), then t += q m with q = t_0 m0, one limb shifted out by
 * renaming the eight accumulator registers. With a and m in registers and
 * twelve taken by the arithmetic, the limbs of b are read from a copy on
 * the stack and r from memory, so no pointer needs a register of its own.
 * t < 2m throughout; the result is stored, m subtracted in the registers,
 * and the stored value reloaded by CMOV when that borrows. MemorySanitizer
 * cannot see into assembly, so its builds take fe64.h's C instead.
 */
#ifndef MBC_SRC_EC_FE_P384_X64_H
#define MBC_SRC_EC_FE_P384_X64_H

#include <string.h>

#include "fe64.h"
#include "fe_p256_x64.h" /* FE64_MAC1 */

#if !defined(MBC_MSAN)

/* t[T0..T7] += rdx src (T7 zero on entry) */
#define FE64_MAC6(src, T0, T1, T2, T3, T4, T5, T6, T7)                                             \
    "xorl %%eax, %%eax\n\t" FE64_MAC1(src, "0", T0, T1) FE64_MAC1(src, "8", T1, T2)                \
        FE64_MAC1(src, "16", T2, T3) FE64_MAC1(src, "24", T3, T4) FE64_MAC1(src, "32", T4, T5)     \
            FE64_MAC1(src, "40", T5, T6) "adcxq %%rax, " T6 "\n\t"                                 \
                                         "adoxq %%rax, " T7 "\n\t"                                 \
                                         "adcxq %%rax, " T7 "\n\t"

/* one CIOS step for the limb BI of b (a memory operand): t += a b_i, then
 * t += q m for q = t_0 m0 (T0 is zero after it: the next step's top) */
#define FE64_STEP6(BI, T0, T1, T2, T3, T4, T5, T6, T7)                                             \
    "movq " BI ", %%rdx\n\t" FE64_MAC6("%[a]", T0, T1, T2, T3, T4, T5, T6,                         \
                                       T7) "movq " T0 ", %%rdx\n\t"                                \
                                           "imulq 48(%[m]), %%rdx\n\t" FE64_MAC6(                  \
                                               "%[m]", T0, T1, T2, T3, T4, T5, T6, T7)

/* fe64_mont_mul6: r = a b / R mod m (6 limbs; m0 = -m^-1 mod 2^64 at m[6],
 * as struct ec64_curve holds them). r may alias a or b. */
static inline void fe64_mont_mul6(uint64_t *r, const uint64_t *a, const uint64_t *b,
                                  const uint64_t *m)
{
    uint64_t bb[6];
    memcpy(bb, b, sizeof(bb));
    /* accumulators R0..R7 = r10..r15, rcx, rsi; after the six steps t is
     * R6 R7 R0 R1 R2 R3 and the word R4 above them */
    __asm__ volatile(
        "xorl %%r10d, %%r10d\n\t"
        "xorl %%r11d, %%r11d\n\t"
        "xorl %%r12d, %%r12d\n\t"
        "xorl %%r13d, %%r13d\n\t"
        "xorl %%r14d, %%r14d\n\t"
        "xorl %%r15d, %%r15d\n\t"
        "xorl %%ecx, %%ecx\n\t"
        "xorl %%esi, %%esi\n\t" FE64_STEP6("%[b0]", "%%r10", "%%r11", "%%r12", "%%r13", "%%r14",
                                           "%%r15", "%%rcx", "%%rsi")
            FE64_STEP6("%[b1]", "%%r11", "%%r12", "%%r13", "%%r14", "%%r15", "%%rcx", "%%rsi",
                       "%%r10") FE64_STEP6("%[b2]", "%%r12", "%%r13", "%%r14", "%%r15", "%%rcx",
                                           "%%rsi", "%%r10", "%%r11")
                FE64_STEP6("%[b3]", "%%r13", "%%r14", "%%r15", "%%rcx", "%%rsi", "%%r10", "%%r11",
                           "%%r12") FE64_STEP6("%[b4]", "%%r14", "%%r15", "%%rcx", "%%rsi", "%%r10",
                                               "%%r11", "%%r12", "%%r13")
                    FE64_STEP6("%[b5]", "%%r15", "%%rcx", "%%rsi", "%%r10", "%%r11", "%%r12",
                               "%%r13", "%%r14")
        /* store t, subtract m, reload t where that borrows, store */
        "movq %[rp], %%rax\n\t"
        "movq %%rcx, 0(%%rax)\n\t"
        "movq %%rsi, 8(%%rax)\n\t"
        "movq %%r10, 16(%%rax)\n\t"
        "movq %%r11, 24(%%rax)\n\t"
        "movq %%r12, 32(%%rax)\n\t"
        "movq %%r13, 40(%%rax)\n\t"
        "subq 0(%[m]), %%rcx\n\t"
        "sbbq 8(%[m]), %%rsi\n\t"
        "sbbq 16(%[m]), %%r10\n\t"
        "sbbq 24(%[m]), %%r11\n\t"
        "sbbq 32(%[m]), %%r12\n\t"
        "sbbq 40(%[m]), %%r13\n\t"
        "sbbq $0, %%r14\n\t"
        "cmovcq 0(%%rax), %%rcx\n\t"
        "cmovcq 8(%%rax), %%rsi\n\t"
        "cmovcq 16(%%rax), %%r10\n\t"
        "cmovcq 24(%%rax), %%r11\n\t"
        "cmovcq 32(%%rax), %%r12\n\t"
        "cmovcq 40(%%rax), %%r13\n\t"
        "movq %%rcx, 0(%%rax)\n\t"
        "movq %%rsi, 8(%%rax)\n\t"
        "movq %%r10, 16(%%rax)\n\t"
        "movq %%r11, 24(%%rax)\n\t"
        "movq %%r12, 32(%%rax)\n\t"
        "movq %%r13, 40(%%rax)\n\t"
        :
        : [rp] "m"(r), [a] "r"(a), [m] "r"(m), [b0] "m"(bb[0]), [b1] "m"(bb[1]), [b2] "m"(bb[2]),
          [b3] "m"(bb[3]), [b4] "m"(bb[4]), [b5] "m"(bb[5])
        : "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cc",
          "memory");
}

#else

static inline void fe64_mont_mul6(uint64_t *r, const uint64_t *a, const uint64_t *b,
                                  const uint64_t *m)
{
    fe64_mont_mul(r, a, b, m, m[6], 6);
}

#endif

#endif /* MBC_SRC_EC_FE_P384_X64_H */
