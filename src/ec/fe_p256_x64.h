/*
 * fe_p256_x64.h - Montgomery multiplication on 4 limbs with MULX, ADCX
 * and ADOX (GCC inline assembly: gcc 12 builds one carry chain from the
 * intrinsics, these two chains interleaved), R = 2^256, inputs and result
 * fully reduced: the EC64_P_MUL / EC64_P_SQR leaves of ec_adx_curve.h for
 * P-256's p (with its subtraction, halving and the fused forms of the
 * doubling), and fe64_mont_mul4 for any 4-limb odd modulus (P-256's n).
 * p = 2^256 - 2^224 + 2^192 + 2^96 - 1 has -p^-1 = 1 mod 2^64: the quotient
 * digit of each reduction step is the low limb itself (no multiply).
 *
 * fe64_mont_mul4: operand scanning (CIOS): per limb b_i of b, t += a b_i on
 * the two carry chains (ADCX the low halves, ADOX the high ones), then
 * t += q m with q = t_0 m0 and one limb shifted out, by renaming the six
 * accumulator registers r10..r15. t < 2m throughout; one conditional
 * subtraction at the end. fe_p256_mul and fe_p256_sqr: the 8-limb product
 * or square first, then four reduction steps of the special p. MemorySanitizer cannot see into
 * assembly, so its builds take fe64.h's C instead (the same results).
 */
#ifndef MBC_SRC_EC_FE_P256_X64_H
#define MBC_SRC_EC_FE_P256_X64_H

#include <string.h>

#include "../internal.h"
#include "fe64.h"

#if !defined(MBC_MSAN)

/* FE64_MAC1: the product of rdx and limb off of src into TL (low half, on
 * the ADCX chain) and TH (high half, on ADOX); r8, r9 scratch */
#define FE64_MAC1(src, off, TL, TH)                                                                \
    "mulxq " off "(" src "), %%r8, %%r9\n\t"                                                       \
    "adcxq %%r8, " TL "\n\t"                                                                       \
    "adoxq %%r9, " TH "\n\t"

/* t[T1..T5] += rdx a: T0..T5 name the accumulator limbs of this step
 * (T5 is zero on entry) */
#define FE64_MAC4(src, T0, T1, T2, T3, T4, T5)                                                     \
    "xorl %%eax, %%eax\n\t" FE64_MAC1(src, "0", T0, T1) FE64_MAC1(src, "8", T1, T2)                \
        FE64_MAC1(src, "16", T2, T3) FE64_MAC1(src, "24", T3, T4) "adcxq %%rax, " T4 "\n\t"        \
                                                                  "adoxq %%rax, " T5 "\n\t"        \
                                                                  "adcxq %%rax, " T5 "\n\t"

/* one step of CIOS for limb off of b: t += a b_i, then t += q m (q from
 * QUOT: the quotient digit into rdx from T0) */
#define FE64_STEP4(off, QUOT, T0, T1, T2, T3, T4, T5)                                              \
    "movq " off                                                                                    \
    "(%[b]), %%rdx\n\t" FE64_MAC4("%[a]", T0, T1, T2, T3, T4,                                      \
                                  T5) "movq " T0                                                   \
                                      ", %%rdx\n\t" QUOT FE64_MAC4("%[m]", T0, T1, T2, T3, T4, T5)

#define FE64_QUOT_ONE ""
/* m0 is read from 6 limbs past m (struct ec64_curve: p_m0 after p[6],
 * n_m0 after n[6]) */
#define FE64_QUOT_M0 "imulq 48(%[m]), %%rdx\n\t"

#define FE64_MONT4(QUOT)                                                                           \
    "xorl %%r10d, %%r10d\n\t"                                                                      \
    "xorl %%r11d, %%r11d\n\t"                                                                      \
    "xorl %%r12d, %%r12d\n\t"                                                                      \
    "xorl %%r13d, %%r13d\n\t"                                                                      \
    "xorl %%r14d, %%r14d\n\t"                                                                      \
    "xorl %%r15d, %%r15d\n\t" FE64_STEP4("0", QUOT, "%%r10", "%%r11", "%%r12", "%%r13", "%%r14",   \
                                         "%%r15")                                                  \
        FE64_STEP4("8", QUOT, "%%r11", "%%r12", "%%r13", "%%r14", "%%r15", "%%r10")                \
            FE64_STEP4("16", QUOT, "%%r12", "%%r13", "%%r14", "%%r15", "%%r10", "%%r11")           \
                FE64_STEP4("24", QUOT, "%%r13", "%%r14", "%%r15", "%%r10", "%%r11", "%%r12")       \
                    FE64_FINAL4

/* t = r14 r15 r10 r11 + r12 2^256 after the four steps: subtract m, keep t
 * on a borrow, store to r */
#define FE64_FINAL4                                                                                \
    "movq %%r14, %%r8\n\t"                                                                         \
    "movq %%r15, %%r9\n\t"                                                                         \
    "movq %%r10, %%rax\n\t"                                                                        \
    "movq %%r11, %%rdx\n\t"                                                                        \
    "subq 0(%[m]), %%r8\n\t"                                                                       \
    "sbbq 8(%[m]), %%r9\n\t"                                                                       \
    "sbbq 16(%[m]), %%rax\n\t"                                                                     \
    "sbbq 24(%[m]), %%rdx\n\t"                                                                     \
    "sbbq $0, %%r12\n\t"                                                                           \
    "cmovcq %%r14, %%r8\n\t"                                                                       \
    "cmovcq %%r15, %%r9\n\t"                                                                       \
    "cmovcq %%r10, %%rax\n\t"                                                                      \
    "cmovcq %%r11, %%rdx\n\t"                                                                      \
    "movq %%r8, 0(%[r])\n\t"                                                                       \
    "movq %%r9, 8(%[r])\n\t"                                                                       \
    "movq %%rax, 16(%[r])\n\t"                                                                     \
    "movq %%rdx, 24(%[r])\n\t"

#define FE64_CLOBBERS                                                                              \
    "rax", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cc", "memory"

/* fe64_mont_mul4: r = a b / R mod m (4 limbs; m0 = -m^-1 mod 2^64 at
 * m[6], as struct ec64_curve holds them). */
static inline void fe64_mont_mul4(uint64_t *r, const uint64_t *a, const uint64_t *b,
                                  const uint64_t *m)
{
    __asm__ volatile(FE64_MONT4(FE64_QUOT_M0)
                     :
                     : [r] "r"(r), [a] "r"(a), [b] "r"(b), [m] "r"(m)
                     : FE64_CLOBBERS);
}

/* fe64_add4: r = a + b mod m (4 limbs, a, b < m). */
static inline void fe64_add4(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *m)
{
    __asm__ volatile("movq 0(%[a]), %%r8\n\t"
                     "movq 8(%[a]), %%r9\n\t"
                     "movq 16(%[a]), %%r10\n\t"
                     "movq 24(%[a]), %%r11\n\t"
                     "xorl %%eax, %%eax\n\t"
                     "addq 0(%[b]), %%r8\n\t"
                     "adcq 8(%[b]), %%r9\n\t"
                     "adcq 16(%[b]), %%r10\n\t"
                     "adcq 24(%[b]), %%r11\n\t"
                     "adcq $0, %%rax\n\t"
                     "movq %%r8, %%rdx\n\t"
                     "movq %%r9, %%rcx\n\t"
                     "movq %%r10, %%rsi\n\t"
                     "movq %%r11, %%rdi\n\t"
                     "subq 0(%[m]), %%r8\n\t"
                     "sbbq 8(%[m]), %%r9\n\t"
                     "sbbq 16(%[m]), %%r10\n\t"
                     "sbbq 24(%[m]), %%r11\n\t"
                     "sbbq $0, %%rax\n\t"
                     "cmovcq %%rdx, %%r8\n\t"
                     "cmovcq %%rcx, %%r9\n\t"
                     "cmovcq %%rsi, %%r10\n\t"
                     "cmovcq %%rdi, %%r11\n\t"
                     "movq %%r8, 0(%[r])\n\t"
                     "movq %%r9, 8(%[r])\n\t"
                     "movq %%r10, 16(%[r])\n\t"
                     "movq %%r11, 24(%[r])\n\t"
                     :
                     : [r] "r"(r), [a] "r"(a), [b] "r"(b), [m] "r"(m)
                     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "cc", "memory");
}

/* FE64_P256_LOAD(P), FE64_P256_STORE(P): r8..r11 from and to the limbs
 * at the pointer operand P */
#define FE64_P256_LOAD(P)                                                                          \
    "movq 0(" P "), %%r8\n\t"                                                                      \
    "movq 8(" P "), %%r9\n\t"                                                                      \
    "movq 16(" P "), %%r10\n\t"                                                                    \
    "movq 24(" P "), %%r11\n\t"
#define FE64_P256_STORE(P)                                                                         \
    "movq %%r8, 0(" P ")\n\t"                                                                      \
    "movq %%r9, 8(" P ")\n\t"                                                                      \
    "movq %%r10, 16(" P ")\n\t"                                                                    \
    "movq %%r11, 24(" P ")\n\t"

/* FE64_P256_SUBFIX(X0, X1, X2, X3): after X = u - v with the borrow in
 * CF, add p back on a borrow, its limbs from the borrow mask (p_0 the
 * mask, p_1 its low half, p_2 zero, p_3 the mask and p_3; rax, rcx and
 * rdx scratch): no loads of p, five instructions fewer than the mask and
 * four loads of a generic form (fewer uops: the doubling is throughput
 * bound) */
#define FE64_P256_SUBFIX(X0, X1, X2, X3)                                                           \
    "sbbq %%rax, %%rax\n\t"                                                                        \
    "movl %%eax, %%ecx\n\t"                                                                        \
    "movabsq $0xffffffff00000001, %%rdx\n\t"                                                       \
    "andq %%rax, %%rdx\n\t"                                                                        \
    "addq %%rax, " X0 "\n\t"                                                                       \
    "adcq %%rcx, " X1 "\n\t"                                                                       \
    "adcq $0, " X2 "\n\t"                                                                          \
    "adcq %%rdx, " X3 "\n\t"

/* FE64_P256_SUB(P): r8..r11 -= the limbs at P mod p */
#define FE64_P256_SUB(P)                                                                           \
    "subq 0(" P "), %%r8\n\t"                                                                      \
    "sbbq 8(" P "), %%r9\n\t"                                                                      \
    "sbbq 16(" P "), %%r10\n\t"                                                                    \
    "sbbq 24(" P "), %%r11\n\t" FE64_P256_SUBFIX("%%r8", "%%r9", "%%r10", "%%r11")

/* fe_p256_sub: r = a - b mod p (a, b < p). */
static inline void fe_p256_sub(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    __asm__ volatile(FE64_P256_LOAD("%[a]") FE64_P256_SUB("%[b]") FE64_P256_STORE("%[r]")
                     :
                     : [r] "r"(r), [a] "r"(a), [b] "r"(b)
                     : "rax", "rcx", "rdx", "r8", "r9", "r10", "r11", "cc", "memory");
}

/* fe_p256_dbl_sub: x = x - 2 b, then t = b - x mod p (x, b < p; t may be
 * b), the steps X' = alpha^2 - 2 B, B - X' of the doubling in one block:
 * x stays in registers, no stores and loads between the three
 * subtractions (they are on the doubling's longest chain). x is both
 * input and output: with four pointers and these eleven registers, -O0
 * builds (rbp the frame pointer) have none left. */
static inline void fe_p256_dbl_sub(uint64_t *x, uint64_t *t, const uint64_t *b)
{
    /* clang-format off */
    __asm__ volatile(FE64_P256_LOAD("%[x]")
                     FE64_P256_SUB("%[b]")
                     FE64_P256_SUB("%[b]")
                     FE64_P256_STORE("%[x]")
                     "movq 0(%[b]), %%rsi\n\t"
                     "movq 8(%[b]), %%rdi\n\t"
                     "movq 16(%[b]), %%r12\n\t"
                     "movq 24(%[b]), %%r13\n\t"
                     "subq %%r8, %%rsi\n\t"
                     "sbbq %%r9, %%rdi\n\t"
                     "sbbq %%r10, %%r12\n\t"
                     "sbbq %%r11, %%r13\n\t"
                     FE64_P256_SUBFIX("%%rsi", "%%rdi", "%%r12", "%%r13")
                     "movq %%rsi, 0(%[t])\n\t"
                     "movq %%rdi, 8(%[t])\n\t"
                     "movq %%r12, 16(%[t])\n\t"
                     "movq %%r13, 24(%[t])\n\t"
                     :
                     : [x] "r"(x), [t] "r"(t), [b] "r"(b)
                     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
                       "cc", "memory");
    /* clang-format on */
}

/* FE64_P256_ADD(A0, A1, A2, A3): r8..r11 += A mod p (as fe64_add4: the
 * sum less p kept unless that borrows past the carry; rax the carry, rcx,
 * rdx, r12, r13 the copies, esi and rdi holding p_1 and p_3) */
#define FE64_P256_ADD(A0, A1, A2, A3)                                                              \
    "xorl %%eax, %%eax\n\t"                                                                        \
    "addq " A0 ", %%r8\n\t"                                                                        \
    "adcq " A1 ", %%r9\n\t"                                                                        \
    "adcq " A2 ", %%r10\n\t"                                                                       \
    "adcq " A3 ", %%r11\n\t"                                                                       \
    "adcq $0, %%rax\n\t"                                                                           \
    "movq %%r8, %%rcx\n\t"                                                                         \
    "movq %%r9, %%rdx\n\t"                                                                         \
    "movq %%r10, %%r12\n\t"                                                                        \
    "movq %%r11, %%r13\n\t"                                                                        \
    "subq $-1, %%r8\n\t"                                                                           \
    "sbbq %%rsi, %%r9\n\t"                                                                         \
    "sbbq $0, %%r10\n\t"                                                                           \
    "sbbq %%rdi, %%r11\n\t"                                                                        \
    "sbbq $0, %%rax\n\t"                                                                           \
    "cmovcq %%rcx, %%r8\n\t"                                                                       \
    "cmovcq %%rdx, %%r9\n\t"                                                                       \
    "cmovcq %%r12, %%r10\n\t"                                                                      \
    "cmovcq %%r13, %%r11\n\t"

/* fe_p256_tri: r = 3 a mod p (a < p): a + a, then + a, in registers (the
 * alpha = 3 (X - delta) (X + delta) of the doubling, on its longest
 * chain). */
static inline void fe_p256_tri(uint64_t *r, const uint64_t *a)
{
    /* clang-format off */
    __asm__ volatile("movl $0xffffffff, %%esi\n\t"
                     "movabsq $0xffffffff00000001, %%rdi\n\t"
                     FE64_P256_LOAD("%[a]")
                     FE64_P256_ADD("%%r8", "%%r9", "%%r10", "%%r11")
                     FE64_P256_ADD("0(%[a])", "8(%[a])", "16(%[a])", "24(%[a])")
                     FE64_P256_STORE("%[r]")
                     :
                     : [r] "r"(r), [a] "r"(a)
                     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
                       "cc", "memory");
    /* clang-format on */
}

/* fe_p256_half: r = a / 2 mod p (a < p), fe64_half's value: a + p when a
 * is odd (p's limbs from the mask as in FE64_P256_SUBFIX), shifted right
 * one bit by SHRD with the carry on top. gcc compiles fe64_half's C into
 * SSE shifts and SETB carry games, about twice the instructions. */
static inline void fe_p256_half(uint64_t *r, const uint64_t *a)
{
    /* clang-format off */
    __asm__ volatile(FE64_P256_LOAD("%[a]")
                     "movl %%r8d, %%eax\n\t"
                     "andl $1, %%eax\n\t"
                     "negq %%rax\n\t"
                     "movl %%eax, %%ecx\n\t"
                     "movabsq $0xffffffff00000001, %%rdx\n\t"
                     "andq %%rax, %%rdx\n\t"
                     "addq %%rax, %%r8\n\t"
                     "adcq %%rcx, %%r9\n\t"
                     "adcq $0, %%r10\n\t"
                     "adcq %%rdx, %%r11\n\t"
                     "sbbq %%rcx, %%rcx\n\t"
                     "shrdq $1, %%r9, %%r8\n\t"
                     "shrdq $1, %%r10, %%r9\n\t"
                     "shrdq $1, %%r11, %%r10\n\t"
                     "shrdq $1, %%rcx, %%r11\n\t"
                     FE64_P256_STORE("%[r]")
                     :
                     : [r] "r"(r), [a] "r"(a)
                     : "rax", "rcx", "rdx", "r8", "r9", "r10", "r11", "cc", "memory");
    /* clang-format on */
}

#else

static inline void fe64_add4(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *m)
{
    fe64_add(r, a, b, m, 4);
}

static inline void fe64_mont_mul4(uint64_t *r, const uint64_t *a, const uint64_t *b,
                                  const uint64_t *m)
{
    fe64_mont_mul(r, a, b, m, m[6], 4);
}

static inline void fe_p256_mul(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    fe64_mont_mul(r, a, b, ec64_p256.p, 1, 4);
}

#endif

#if !defined(MBC_MSAN)
/* one reduction step: q = t_i, t += q p from limb i on (p = 2^256 - 2^224 +
 * 2^192 + 2^96 - 1, -p^-1 = 1 mod 2^64, so q is the limb itself: t_i + q
 * (2^64 - 1) = q 2^64, limb i + 1 gets q + q (2^32 - 1) = q 2^32, limb
 * i + 2 nothing, i + 3 and i + 4 the product q p_3). P3 holds p_3 and
 * S32 the shift count 32 (SHLX / SHRX: no copies of q, no flags; one
 * MULX by 2^32 for both halves was 8% faster on the Xeon family 6 model
 * 167, where the shifts share ports 0 and 6 with the carry chains, but it
 * adds 4 MULX to the 20 of a product, and on Zen 3 the MULX issue rate
 * bounds the product (stop 34's measurements): not taken). The
 * carry out of limb i + 4 is left in rcx as 0 or -1 (SBB) for limb i + 5,
 * the T4 of the next step, which takes it off its high half of q p_3
 * first (that half is at most 2^64 - 2^32: no carry), instead of running
 * it through the limbs above to the top; after the last step -rcx is the
 * top word. */
#define FE64_SQR_RED(P3, S32, T0, T1, T2, T3, T4)                                                  \
    "movq " T0 ", %%rdx\n\t"                                                                       \
    "mulxq " P3 ", %%rax, %%rsi\n\t"                                                               \
    "subq %%rcx, %%rsi\n\t"                                                                        \
    "shlxq " S32 ", %%rdx, %%rcx\n\t"                                                              \
    "shrxq " S32 ", %%rdx, %%rdx\n\t"                                                              \
    "addq %%rcx, " T1 "\n\t"                                                                       \
    "adcq %%rdx, " T2 "\n\t"                                                                       \
    "adcq %%rax, " T3 "\n\t"                                                                       \
    "adcq %%rsi, " T4 "\n\t"                                                                       \
    "sbbq %%rcx, %%rcx\n\t"

/* FE64_SQR4_WIDE: r8..r15 = a^2 (8 limbs): the products a_i a_j (i < j)
 * once, doubled, plus the squares; rax, rcx, rdx, rsi scratch */
#define FE64_SQR4_WIDE                                                                             \
    /* off-diagonal products into r9..r14 */                                                       \
    "movq 0(%[a]), %%rdx\n\t"                                                                      \
    "mulxq 8(%[a]), %%r9, %%r10\n\t"                                                               \
    "mulxq 16(%[a]), %%rax, %%r11\n\t"                                                             \
    "addq %%rax, %%r10\n\t"                                                                        \
    "mulxq 24(%[a]), %%rax, %%r12\n\t"                                                             \
    "adcq %%rax, %%r11\n\t"                                                                        \
    "adcq $0, %%r12\n\t"                                                                           \
    "movq 8(%[a]), %%rdx\n\t"                                                                      \
    "mulxq 16(%[a]), %%rax, %%rcx\n\t"                                                             \
    "mulxq 24(%[a]), %%rsi, %%r13\n\t"                                                             \
    "addq %%rsi, %%rcx\n\t"                                                                        \
    "adcq $0, %%r13\n\t"                                                                           \
    "addq %%rax, %%r11\n\t"                                                                        \
    "adcq %%rcx, %%r12\n\t"                                                                        \
    "adcq $0, %%r13\n\t"                                                                           \
    "movq 16(%[a]), %%rdx\n\t"                                                                     \
    "mulxq 24(%[a]), %%rax, %%r14\n\t"                                                             \
    "addq %%rax, %%r13\n\t"                                                                        \
    "adcq $0, %%r14\n\t" /* doubled into r9..r15 */                                                \
    "xorl %%r15d, %%r15d\n\t"                                                                      \
    "addq %%r9, %%r9\n\t"                                                                          \
    "adcq %%r10, %%r10\n\t"                                                                        \
    "adcq %%r11, %%r11\n\t"                                                                        \
    "adcq %%r12, %%r12\n\t"                                                                        \
    "adcq %%r13, %%r13\n\t"                                                                        \
    "adcq %%r14, %%r14\n\t"                                                                        \
    "adcq $0, %%r15\n\t" /* plus the squares: r8..r15 = a^2 */                                     \
    "movq 0(%[a]), %%rdx\n\t"                                                                      \
    "mulxq %%rdx, %%r8, %%rax\n\t"                                                                 \
    "addq %%rax, %%r9\n\t"                                                                         \
    "movq 8(%[a]), %%rdx\n\t"                                                                      \
    "mulxq %%rdx, %%rax, %%rcx\n\t"                                                                \
    "adcq %%rax, %%r10\n\t"                                                                        \
    "adcq %%rcx, %%r11\n\t"                                                                        \
    "movq 16(%[a]), %%rdx\n\t"                                                                     \
    "mulxq %%rdx, %%rax, %%rcx\n\t"                                                                \
    "adcq %%rax, %%r12\n\t"                                                                        \
    "adcq %%rcx, %%r13\n\t"                                                                        \
    "movq 24(%[a]), %%rdx\n\t"                                                                     \
    "mulxq %%rdx, %%rax, %%rcx\n\t"                                                                \
    "adcq %%rax, %%r14\n\t"                                                                        \
    "adcq %%rcx, %%r15\n\t"

/* FE64_P256_REDC_WIDE(P3, S32, STORE): r8..r15 (< p 2^256) / 2^256 mod p:
 * four reduction steps (P3, S32: two free registers, set here), the top
 * word in -rcx, then one subtraction of p kept unless it borrows (rcx - b
 * borrows exactly when the top word 0 - b does); STORE writes r8, r9,
 * rax, rdx to the result. */
#define FE64_P256_REDC_WIDE(P3, S32, STORE)                                                        \
    "movabsq $0xffffffff00000001, " P3 "\n\t"                                                      \
    "movq $32, " S32 "\n\t"                                                                        \
    "xorl %%ecx, %%ecx\n\t" FE64_SQR_RED(P3, S32, "%%r8", "%%r9", "%%r10", "%%r11", "%%r12")       \
        FE64_SQR_RED(P3, S32, "%%r9", "%%r10", "%%r11", "%%r12", "%%r13")                          \
            FE64_SQR_RED(P3, S32, "%%r10", "%%r11", "%%r12", "%%r13", "%%r14")                     \
                FE64_SQR_RED(P3, S32, "%%r11", "%%r12", "%%r13", "%%r14",                          \
                             "%%r15") "movq %%r12, %%r8\n\t"                                       \
                                      "movq %%r13, %%r9\n\t"                                       \
                                      "movq %%r14, %%rax\n\t"                                      \
                                      "movq %%r15, %%rdx\n\t"                                      \
                                      "movl $0xffffffff, %%esi\n\t"                                \
                                      "subq $-1, %%r8\n\t"                                         \
                                      "sbbq %%rsi, %%r9\n\t"                                       \
                                      "sbbq $0, %%rax\n\t"                                         \
                                      "sbbq " P3 ", %%rdx\n\t"                                     \
                                      "sbbq $0, %%rcx\n\t"                                         \
                                      "cmovcq %%r12, %%r8\n\t"                                     \
                                      "cmovcq %%r13, %%r9\n\t"                                     \
                                      "cmovcq %%r14, %%rax\n\t"                                    \
                                      "cmovcq %%r15, %%rdx\n\t" STORE

/* what fe_p256_mul and fe_p256_sqr clobber (a and the result pointer are
 * operands: a is scratch after the product, r read from memory at the end) */
#define FE64_P256_CLOBBERS                                                                         \
    "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cc", "memory"

#define FE64_STORE4(R)                                                                             \
    "movq %%r8, 0(" R ")\n\t"                                                                      \
    "movq %%r9, 8(" R ")\n\t"                                                                      \
    "movq %%rax, 16(" R ")\n\t"                                                                    \
    "movq %%rdx, 24(" R ")\n\t"

/* fe_p256_sqr: r = a^2 / R mod p: the 8-limb square (the products a_i a_j,
 * i < j, once, doubled, plus the squares), then the reduction. */
static inline void fe_p256_sqr(uint64_t *r, const uint64_t *a)
{
    uint64_t s32;
    __asm__ volatile(FE64_SQR4_WIDE FE64_P256_REDC_WIDE(
                         "%[a]", "%[s32]", "movq %[rp], %%r11\n\t" FE64_STORE4("%%r11"))
                     : [a] "+r"(a), [s32] "=&r"(s32)
                     : [rp] "m"(r)
                     : FE64_P256_CLOBBERS);
}

/* one row i >= 1 of the 8-limb product: T0..T4 (limbs i..i + 4) += a b_i,
 * T4 fresh: the low halves on the ADCX chain, the high ones on ADOX, rsi
 * zero for the carries into T4 */
#define FE64_MUL4_ROW(off, T0, T1, T2, T3, T4)                                                     \
    "movq " off "(%[b]), %%rdx\n\t"                                                                \
    "xorl %%esi, %%esi\n\t"                                                                        \
    "mulxq 0(%[a]), %%rax, %%rcx\n\t"                                                              \
    "adcxq %%rax, " T0 "\n\t"                                                                      \
    "adoxq %%rcx, " T1 "\n\t"                                                                      \
    "mulxq 8(%[a]), %%rax, %%rcx\n\t"                                                              \
    "adcxq %%rax, " T1 "\n\t"                                                                      \
    "adoxq %%rcx, " T2 "\n\t"                                                                      \
    "mulxq 16(%[a]), %%rax, %%rcx\n\t"                                                             \
    "adcxq %%rax, " T2 "\n\t"                                                                      \
    "adoxq %%rcx, " T3 "\n\t"                                                                      \
    "mulxq 24(%[a]), %%rax, " T4 "\n\t"                                                            \
    "adcxq %%rax, " T3 "\n\t"                                                                      \
    "adoxq %%rsi, " T4 "\n\t"                                                                      \
    "adcxq %%rsi, " T4 "\n\t"

/* FE64_MUL4_WIDE: r8..r15 = a b (8 limbs), row by row */
#define FE64_MUL4_WIDE                                                                             \
    "movq 0(%[b]), %%rdx\n\t"                                                                      \
    "mulxq 0(%[a]), %%r8, %%r9\n\t"                                                                \
    "mulxq 8(%[a]), %%rax, %%r10\n\t"                                                              \
    "addq %%rax, %%r9\n\t"                                                                         \
    "mulxq 16(%[a]), %%rax, %%r11\n\t"                                                             \
    "adcq %%rax, %%r10\n\t"                                                                        \
    "mulxq 24(%[a]), %%rax, %%r12\n\t"                                                             \
    "adcq %%rax, %%r11\n\t"                                                                        \
    "adcq $0, %%r12\n\t" FE64_MUL4_ROW("8", "%%r9", "%%r10", "%%r11", "%%r12", "%%r13")            \
        FE64_MUL4_ROW("16", "%%r10", "%%r11", "%%r12", "%%r13", "%%r14")                           \
            FE64_MUL4_ROW("24", "%%r11", "%%r12", "%%r13", "%%r14", "%%r15")

/* fe_p256_mul: r = a b / R mod p: the 8-limb product, then the reduction of
 * the square (separate phases measured faster than the interleaved
 * operand scanning: rdtsc latency 54 -> 42 cycles on the Xeon family 6
 * model 207). The pointer r is read from memory at the end: with a and b
 * every other free register is taken. */
static inline void fe_p256_mul(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
    __asm__ volatile(FE64_MUL4_WIDE FE64_P256_REDC_WIDE(
                         "%[a]", "%[b]", "movq %[rp], %%r11\n\t" FE64_STORE4("%%r11"))
                     : [a] "+r"(a), [b] "+r"(b)
                     : [rp] "m"(r)
                     : FE64_P256_CLOBBERS);
}

#else
static inline void fe_p256_sqr(uint64_t *r, const uint64_t *a)
{
    fe_p256_mul(r, a, a);
}
#endif

#endif /* MBC_SRC_EC_FE_P256_X64_H */
