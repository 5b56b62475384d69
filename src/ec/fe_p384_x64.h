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
 * high ones), then a reduction step t += q m, one limb shifted out by
 * renaming the eight accumulator registers. fe64_mont_mul6 (any m, q =
 * t_0 m0): six MULX by m's limbs per step. fe_p384_mul (P-384's p, the
 * EC64_P_MUL and EC64_P_SQR of ec_adx.c): the quotient digit by a shift
 * and an add and q p by two MULX (FE64_RED6_P384), 48 MULX a product
 * instead of 72. With a and m in registers and twelve taken by the
 * arithmetic, the limbs of b are read from a copy on the stack and r from
 * memory, so no pointer needs a register of its own. t < 2m throughout;
 * the result is stored, m subtracted in the registers, and the stored
 * value reloaded by CMOV when that borrows. MemorySanitizer cannot see
 * into assembly, so its builds take fe64.h's C instead.
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

/* FE64_RED6_M0(T0..T7): t += q m for q = t_0 m0, any modulus m (m0 read
 * 6 limbs past it); T0 is zero after it (the next step's top) */
#define FE64_RED6_M0(T0, T1, T2, T3, T4, T5, T6, T7)                                               \
    "movq " T0 ", %%rdx\n\t"                                                                       \
    "imulq 48(%[m]), %%rdx\n\t" FE64_MAC6("%[m]", T0, T1, T2, T3, T4, T5, T6, T7)

/* FE64_P384_QC(T0): for P-384's p = 2^384 - c, c = 2^128 + 2^96 - 2^32
 * + 1, whose m0 is 2^32 + 1: the quotient digit q = t_0 + (t_0 << 32)
 * into rdx without a multiply, and limbs 1..3 of q c into r9, r8, rax
 * from two MULX (by the limbs c_0 = 2^64 - 2^32 + 1 and c_1 = 2^32 - 1 of
 * c - 2^128, plus q at limb 2) instead of six by p's limbs: then
 * t + q p = t + q 2^384 - q c. Limb 0 of q c equals t_0 (q was chosen
 * so: t_0 - v_0 = 0, no borrow), so it is never subtracted. */
#define FE64_P384_QC(T0)                                                                           \
    "movq " T0 ", %%rdx\n\t"                                                                       \
    "shlq $32, %%rdx\n\t"                                                                          \
    "addq " T0 ", %%rdx\n\t"                                                                       \
    "mulxq %[c0], %%r8, %%r9\n\t"                                                                  \
    "mulxq %[c1], %%rax, %%r8\n\t"                                                                 \
    "addq %%rax, %%r9\n\t"                                                                         \
    "adcq %%rdx, %%r8\n\t"                                                                         \
    "movl $0, %%eax\n\t"                                                                           \
    "adcq $0, %%rax\n\t"

/* FE64_RED6_P384(T0..T7): FE64_RED6_M0's step for P-384's p (fe_p384_mul):
 * q added at limb 6 before q c is subtracted, so the chain T1..T7 never
 * borrows past T7 (t + q p >= 0); T0 zeroed */
#define FE64_RED6_P384(T0, T1, T2, T3, T4, T5, T6, T7)                                             \
    FE64_P384_QC(T0)                                                                               \
    "addq %%rdx, " T6 "\n\t"                                                                       \
    "adcq $0, " T7 "\n\t"                                                                          \
    "subq %%r9, " T1 "\n\t"                                                                        \
    "sbbq %%r8, " T2 "\n\t"                                                                        \
    "sbbq %%rax, " T3 "\n\t"                                                                       \
    "sbbq $0, " T4 "\n\t"                                                                          \
    "sbbq $0, " T5 "\n\t"                                                                          \
    "sbbq $0, " T6 "\n\t"                                                                          \
    "sbbq $0, " T7 "\n\t"                                                                          \
    "xorq " T0 ", " T0 "\n\t"

/* one CIOS step for the limb BI of b (a memory operand): t += a b_i, then
 * the reduction step RED */
#define FE64_STEP6(RED, BI, T0, T1, T2, T3, T4, T5, T6, T7)                                        \
    "movq " BI ", %%rdx\n\t" FE64_MAC6("%[a]", T0, T1, T2, T3, T4, T5, T6, T7)                     \
        RED(T0, T1, T2, T3, T4, T5, T6, T7)

/* FE64_MONT6(RED): the six steps and the final subtraction of m.
 * Accumulators R0..R7 = r10..r15, rcx, rsi; after the six steps t is
 * R6 R7 R0 R1 R2 R3 and the word R4 above them. */
#define FE64_MONT6(RED)                                                                            \
    "xorl %%r10d, %%r10d\n\t"                                                                      \
    "xorl %%r11d, %%r11d\n\t"                                                                      \
    "xorl %%r12d, %%r12d\n\t"                                                                      \
    "xorl %%r13d, %%r13d\n\t"                                                                      \
    "xorl %%r14d, %%r14d\n\t"                                                                      \
    "xorl %%r15d, %%r15d\n\t"                                                                      \
    "xorl %%ecx, %%ecx\n\t"                                                                        \
    "xorl %%esi, %%esi\n\t" FE64_STEP6(RED, "%[b0]", "%%r10", "%%r11", "%%r12", "%%r13", "%%r14",  \
                                       "%%r15", "%%rcx", "%%rsi")                                  \
        FE64_STEP6(RED, "%[b1]", "%%r11", "%%r12", "%%r13", "%%r14", "%%r15", "%%rcx", "%%rsi",    \
                   "%%r10") FE64_STEP6(RED, "%[b2]", "%%r12", "%%r13", "%%r14", "%%r15", "%%rcx",  \
                                       "%%rsi", "%%r10", "%%r11")                                  \
            FE64_STEP6(RED, "%[b3]", "%%r13", "%%r14", "%%r15", "%%rcx", "%%rsi", "%%r10",         \
                       "%%r11", "%%r12") FE64_STEP6(RED, "%[b4]", "%%r14", "%%r15", "%%rcx",       \
                                                    "%%rsi", "%%r10", "%%r11", "%%r12", "%%r13")   \
                FE64_STEP6(RED, "%[b5]", "%%r15", "%%rcx", "%%rsi", "%%r10", "%%r11", "%%r12",     \
                           "%%r13", "%%r14") FE64_FINAL6

/* store t, subtract m, reload t where that borrows, store */
#define FE64_FINAL6                                                                                \
    "movq %[rp], %%rax\n\t"                                                                        \
    "movq %%rcx, 0(%%rax)\n\t"                                                                     \
    "movq %%rsi, 8(%%rax)\n\t"                                                                     \
    "movq %%r10, 16(%%rax)\n\t"                                                                    \
    "movq %%r11, 24(%%rax)\n\t"                                                                    \
    "movq %%r12, 32(%%rax)\n\t"                                                                    \
    "movq %%r13, 40(%%rax)\n\t"                                                                    \
    "subq 0(%[m]), %%rcx\n\t"                                                                      \
    "sbbq 8(%[m]), %%rsi\n\t"                                                                      \
    "sbbq 16(%[m]), %%r10\n\t"                                                                     \
    "sbbq 24(%[m]), %%r11\n\t"                                                                     \
    "sbbq 32(%[m]), %%r12\n\t"                                                                     \
    "sbbq 40(%[m]), %%r13\n\t"                                                                     \
    "sbbq $0, %%r14\n\t"                                                                           \
    "cmovcq 0(%%rax), %%rcx\n\t"                                                                   \
    "cmovcq 8(%%rax), %%rsi\n\t"                                                                   \
    "cmovcq 16(%%rax), %%r10\n\t"                                                                  \
    "cmovcq 24(%%rax), %%r11\n\t"                                                                  \
    "cmovcq 32(%%rax), %%r12\n\t"                                                                  \
    "cmovcq 40(%%rax), %%r13\n\t"                                                                  \
    "movq %%rcx, 0(%%rax)\n\t"                                                                     \
    "movq %%rsi, 8(%%rax)\n\t"                                                                     \
    "movq %%r10, 16(%%rax)\n\t"                                                                    \
    "movq %%r11, 24(%%rax)\n\t"                                                                    \
    "movq %%r12, 32(%%rax)\n\t"                                                                    \
    "movq %%r13, 40(%%rax)\n\t"

#define FE64_MONT6_OPERANDS                                                                        \
    [rp] "m"(r), [a] "r"(a), [b0] "m"(bb[0]), [b1] "m"(bb[1]), [b2] "m"(bb[2]), [b3] "m"(bb[3]),   \
        [b4] "m"(bb[4]), [b5] "m"(bb[5])
#define FE64_MONT6_CLOBBERS                                                                        \
    "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cc", "memory"

/* fe64_mont_mul6: r = a b / R mod m (6 limbs; m0 = -m^-1 mod 2^64 at m[6],
 * as struct ec64_curve holds them). r may alias a or b. */
static inline void fe64_mont_mul6(uint64_t *r, const uint64_t *a, const uint64_t *b,
                                  const uint64_t *m)
{
    uint64_t bb[6];
    memcpy(bb, b, sizeof(bb));
    __asm__ volatile(FE64_MONT6(FE64_RED6_M0)
                     :
                     : FE64_MONT6_OPERANDS, [m] "r"(m)
                     : FE64_MONT6_CLOBBERS);
}

/* fe_p384_mul: r = a b / R mod p for P-384's p (ec64_p384.p, whose limbs
 * the final subtraction reads). r may alias a or b. */
static inline void fe_p384_mul(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    static const uint64_t c0 = 0xffffffff00000001ull, c1 = 0xffffffffull;
    uint64_t bb[6];
    memcpy(bb, b, sizeof(bb));
    __asm__ volatile(FE64_MONT6(FE64_RED6_P384)
                     :
                     : FE64_MONT6_OPERANDS, [m] "r"(ec64_p384.p), [c0] "m"(c0), [c1] "m"(c1)
                     : FE64_MONT6_CLOBBERS);
}

/* FE64_P384_RED_LOW(T0..T5): one step of the Montgomery reduction of a
 * 6-limb window alone (fe_p384_sqr): q into T0 as the new top word
 * (t + q 2^384 needs no word above it: the window stays below 2^384), q c
 * taken off T1..T3 with the borrow run to the top; the window is T1..T5
 * T0 after it */
#define FE64_P384_RED_LOW(T0, T1, T2, T3, T4, T5)                                                  \
    FE64_P384_QC(T0)                                                                               \
    "movq %%rdx, " T0 "\n\t"                                                                       \
    "subq %%r9, " T1 "\n\t"                                                                        \
    "sbbq %%r8, " T2 "\n\t"                                                                        \
    "sbbq %%rax, " T3 "\n\t"                                                                       \
    "sbbq $0, " T4 "\n\t"                                                                          \
    "sbbq $0, " T5 "\n\t"                                                                          \
    "sbbq $0, " T0 "\n\t"

/* FE64_SQR6_DBL(OFF, T, H): limb T (loaded from OFF(w)) doubled on the
 * ADCX chain, the square half H added on ADOX */
#define FE64_SQR6_DBL(OFF, T, H)                                                                   \
    "movq " OFF "+%[w], " T "\n\t"                                                                 \
    "adcxq " T ", " T "\n\t"                                                                       \
    "adoxq " H ", " T "\n\t"
#define FE64_SQR6_SQ(OFF) "movq " OFF "(%[a]), %%rdx\n\tmulxq %%rdx, %%r8, %%r9\n\t"

/* fe_p384_sqr: r = a^2 / R mod p for P-384's p. The square costs 21 MULX
 * (the 15 products a_i a_j, i < j, once, doubled, and the 6 squares)
 * where fe_p384_mul takes 36; then the Montgomery reduction of its low
 * six limbs L alone, W = (L + Q p) / 2^384 <= p (12 MULX), plus its high
 * six H < p: W + H < 2p, one conditional subtraction. The triangle goes
 * through w[1..10] on the stack, rows of registers stored as they are
 * final; the doubling pass leaves L in r10..r15 and H in w[6..11]; the
 * sum ends as fe_p384_mul does (FE64_FINAL6). */
static inline void fe_p384_sqr(uint64_t *r, const uint64_t *a)
{
    static const uint64_t c0 = 0xffffffff00000001ull, c1 = 0xffffffffull;
    uint64_t w[12];
    /* clang-format off */
    __asm__ volatile(
        /* row 0: a_0 (a_1 .. a_5) into t1..t6 = r10..r15 */
        "movq 0(%[a]), %%rdx\n\t"
        "mulxq 8(%[a]), %%r10, %%r11\n\t"
        "mulxq 16(%[a]), %%rax, %%r12\n\t"
        "addq %%rax, %%r11\n\t"
        "mulxq 24(%[a]), %%rax, %%r13\n\t"
        "adcq %%rax, %%r12\n\t"
        "mulxq 32(%[a]), %%rax, %%r14\n\t"
        "adcq %%rax, %%r13\n\t"
        "mulxq 40(%[a]), %%rax, %%r15\n\t"
        "adcq %%rax, %%r14\n\t"
        "adcq $0, %%r15\n\t"
        "movq %%r10, 8+%[w]\n\t"
        "movq %%r11, 16+%[w]\n\t"
        /* row 1: a_1 (a_2 .. a_5) into t3..t7 (t7 = r10) */
        "movq 8(%[a]), %%rdx\n\t"
        "xorl %%eax, %%eax\n\t"
        "xorl %%r10d, %%r10d\n\t"
        FE64_MAC1("%[a]", "16", "%%r12", "%%r13")
        FE64_MAC1("%[a]", "24", "%%r13", "%%r14")
        FE64_MAC1("%[a]", "32", "%%r14", "%%r15")
        FE64_MAC1("%[a]", "40", "%%r15", "%%r10")
        "adcxq %%rax, %%r10\n\t"
        "movq %%r12, 24+%[w]\n\t"
        "movq %%r13, 32+%[w]\n\t"
        /* row 2: a_2 (a_3 .. a_5) into t5..t8 (t8 = r11) */
        "movq 16(%[a]), %%rdx\n\t"
        "xorl %%r11d, %%r11d\n\t"
        FE64_MAC1("%[a]", "24", "%%r14", "%%r15")
        FE64_MAC1("%[a]", "32", "%%r15", "%%r10")
        FE64_MAC1("%[a]", "40", "%%r10", "%%r11")
        "adcxq %%rax, %%r11\n\t"
        "movq %%r14, 40+%[w]\n\t"
        "movq %%r15, 48+%[w]\n\t"
        /* row 3: a_3 (a_4, a_5) into t7..t9 (t9 = r12) */
        "movq 24(%[a]), %%rdx\n\t"
        "xorl %%r12d, %%r12d\n\t"
        FE64_MAC1("%[a]", "32", "%%r10", "%%r11")
        FE64_MAC1("%[a]", "40", "%%r11", "%%r12")
        "adcxq %%rax, %%r12\n\t"
        "movq %%r10, 56+%[w]\n\t"
        "movq %%r11, 64+%[w]\n\t"
        /* row 4: a_4 a_5 into t9, t10 */
        "movq 32(%[a]), %%rdx\n\t"
        "mulxq 40(%[a]), %%r8, %%r13\n\t"
        "addq %%r8, %%r12\n\t"
        "adcq $0, %%r13\n\t"
        "movq %%r12, 72+%[w]\n\t"
        "movq %%r13, 80+%[w]\n\t"
        /* doubled, plus the squares: L in r10..r15, H into w[6..11] */
        "xorl %%eax, %%eax\n\t"
        "movq 0(%[a]), %%rdx\n\t"
        "mulxq %%rdx, %%r10, %%r9\n\t"
        FE64_SQR6_DBL("8", "%%r11", "%%r9")
        FE64_SQR6_SQ("8")
        FE64_SQR6_DBL("16", "%%r12", "%%r8")
        FE64_SQR6_DBL("24", "%%r13", "%%r9")
        FE64_SQR6_SQ("16")
        FE64_SQR6_DBL("32", "%%r14", "%%r8")
        FE64_SQR6_DBL("40", "%%r15", "%%r9")
        FE64_SQR6_SQ("24")
        FE64_SQR6_DBL("48", "%%rcx", "%%r8")
        "movq %%rcx, 48+%[w]\n\t"
        FE64_SQR6_DBL("56", "%%rcx", "%%r9")
        "movq %%rcx, 56+%[w]\n\t"
        FE64_SQR6_SQ("32")
        FE64_SQR6_DBL("64", "%%rcx", "%%r8")
        "movq %%rcx, 64+%[w]\n\t"
        FE64_SQR6_DBL("72", "%%rcx", "%%r9")
        "movq %%rcx, 72+%[w]\n\t"
        FE64_SQR6_SQ("40")
        FE64_SQR6_DBL("80", "%%rcx", "%%r8")
        "movq %%rcx, 80+%[w]\n\t"
        "movl $0, %%ecx\n\t"
        "adcxq %%rcx, %%rcx\n\t"
        "adoxq %%r9, %%rcx\n\t"
        "movq %%rcx, 88+%[w]\n\t"
        /* W = REDC(L) in r10..r15 (the six steps rotate the window back) */
        FE64_P384_RED_LOW("%%r10", "%%r11", "%%r12", "%%r13", "%%r14", "%%r15")
        FE64_P384_RED_LOW("%%r11", "%%r12", "%%r13", "%%r14", "%%r15", "%%r10")
        FE64_P384_RED_LOW("%%r12", "%%r13", "%%r14", "%%r15", "%%r10", "%%r11")
        FE64_P384_RED_LOW("%%r13", "%%r14", "%%r15", "%%r10", "%%r11", "%%r12")
        FE64_P384_RED_LOW("%%r14", "%%r15", "%%r10", "%%r11", "%%r12", "%%r13")
        FE64_P384_RED_LOW("%%r15", "%%r10", "%%r11", "%%r12", "%%r13", "%%r14")
        /* W + H into FE64_FINAL6's registers (rcx rsi r10..r13, the
         * carry r14): less p, kept unless that borrows */
        "movq %%r10, %%rcx\n\t"
        "movq %%r11, %%rsi\n\t"
        "movq %%r12, %%r10\n\t"
        "movq %%r13, %%r11\n\t"
        "movq %%r14, %%r12\n\t"
        "movq %%r15, %%r13\n\t"
        "xorl %%r14d, %%r14d\n\t"
        "addq 48+%[w], %%rcx\n\t"
        "adcq 56+%[w], %%rsi\n\t"
        "adcq 64+%[w], %%r10\n\t"
        "adcq 72+%[w], %%r11\n\t"
        "adcq 80+%[w], %%r12\n\t"
        "adcq 88+%[w], %%r13\n\t"
        "adcq $0, %%r14\n\t"
        FE64_FINAL6
        : [w] "=m"(w)
        : [rp] "m"(r), [a] "r"(a), [m] "r"(ec64_p384.p), [c0] "m"(c0), [c1] "m"(c1)
        : FE64_MONT6_CLOBBERS);
    /* clang-format on */
}

#else

static inline void fe64_mont_mul6(uint64_t *r, const uint64_t *a, const uint64_t *b,
                                  const uint64_t *m)
{
    fe64_mont_mul(r, a, b, m, m[6], 6);
}

static inline void fe_p384_mul(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    fe64_mont_mul(r, a, b, ec64_p384.p, ec64_p384.p_m0, 6);
}

static inline void fe_p384_sqr(uint64_t *r, const uint64_t *a)
{
    fe64_mont_sqr(r, a, ec64_p384.p, ec64_p384.p_m0, 6);
}

#endif

#endif /* MBC_SRC_EC_FE_P384_X64_H */
