/*
 * fe25519_x64.h - arithmetic mod p = 2^255 - 19 on one field element in
 * radix 2^64 (4 limbs, least significant first), for the scalar X25519
 * kernels (x25519_adx.c, compiled with -mbmi2 -madx and run only where the
 * CPU has BMI2 and ADX).
 *
 * Form: every function takes and returns any 4-limb value below 2^256 (not
 * reduced: congruent mod p); only fe64_canon gives the representative below
 * p. 2^256 = 2 p + 38, so a carry out of bit 256 comes back as 38.
 *
 * The multiply, square, times-a24, add and subtract are GCC inline assembly
 * with MULX and the two carry chains of ADCX (CF) and ADOX (OF): gcc 12
 * gives one serial carry chain for the intrinsics. MemorySanitizer does not
 * see into assembly (it would take every output as initialised), so its
 * builds use the C forms below, which compute the same limbs step by step
 * with unsigned __int128; tests/test_x25519.c checks that the two agree.
 * Every operation reads all of its inputs before it writes its output, so
 * the output may be an input. No branch and no address depends on a value.
 * The assembly reads its operands through their pointers (a "memory"
 * clobber) and is volatile: gcc -O3 took a non-volatile one whose pointer
 * did not change for loop-invariant and hoisted it out of fe64_sqr_n's loop.
 */
#ifndef MBC_SRC_X25519_FE25519_X64_H
#define MBC_SRC_X25519_FE25519_X64_H

#include <stdint.h>

#include "../ct.h"
#include "../internal.h"

typedef uint64_t fe64[4];

#if defined(MBC_MSAN)
#define FE64_ASM 0
#else
#define FE64_ASM 1
#endif

#define FE64_INLINE static inline __attribute__((always_inline))

/* fe64_fold_c: r = t (4 limbs) + 38 c for c < 2^58 (a carry above 2^256 from
 * a previous step), with the second carry folded too: when t + 38 c wraps,
 * the wrapped value is below 38 c, so adding 38 once more cannot wrap. */
FE64_INLINE void fe64_fold_c(fe64 r, const uint64_t t[4], uint64_t c)
{
    unsigned __int128 acc = (unsigned __int128)t[0] + (unsigned __int128)c * 38;
    uint64_t v[4];
    v[0] = (uint64_t)acc;
    for (int i = 1; i < 4; i++) {
        acc = (unsigned __int128)t[i] + (uint64_t)(acc >> 64);
        v[i] = (uint64_t)acc;
    }
    v[0] += 38 & (0 - (uint64_t)(acc >> 64));
    for (int i = 0; i < 4; i++) {
        r[i] = v[i];
    }
}

/* fe64_fold19_c: r = t (4 limbs) + c 2^256 for c < 2^58, folded at bit 255
 * (2^255 = 19 mod p): bit 255 of t and 2 c as 19 (2 c + bit) onto t with bit
 * 255 cleared, which cannot carry out (r < 2^255 + 19 2^59). The products
 * end this way: one instruction less than fe64_fold_c and no second carry,
 * so the low limb is final sooner. */
FE64_INLINE void fe64_fold19_c(fe64 r, const uint64_t t[4], uint64_t c)
{
    const uint64_t top = 2 * c + (t[3] >> 63);
    unsigned __int128 acc = (unsigned __int128)t[0] + (unsigned __int128)top * 19;
    uint64_t v[4];
    v[0] = (uint64_t)acc;
    for (int i = 1; i < 4; i++) {
        acc = (unsigned __int128)(i == 3 ? t[3] & (~0ull >> 1) : t[i]) + (uint64_t)(acc >> 64);
        v[i] = (uint64_t)acc;
    }
    for (int i = 0; i < 4; i++) {
        r[i] = v[i];
    }
}

/* fe64_reduce_c: r = the 8-limb product t folded: t_lo + 38 t_hi (5 limbs,
 * the top one at most 38), then fe64_fold19_c of the top limb. */
FE64_INLINE void fe64_reduce_c(fe64 r, const uint64_t t[8])
{
    uint64_t lo[4];
    unsigned __int128 acc = 0;
    for (int i = 0; i < 4; i++) {
        acc += (unsigned __int128)t[i + 4] * 38 + t[i];
        lo[i] = (uint64_t)acc;
        acc >>= 64;
    }
    fe64_fold19_c(r, lo, (uint64_t)acc);
}

#if FE64_ASM
/*
 * FE64_REDUCE: the end of fe64_mul and fe64_sqr, on the 8-limb product
 * t0..t7 (operands of FE64_PRODUCT_OUTS): t_lo + 38 t_hi with the low
 * halves on CF and the high halves on OF (5 limbs, the top one at most 38),
 * the top limb times 38 into t0..t3, and a last carry as 38.
 */
#define FE64_REDUCE                                                                                \
    "movl $38, %%edx\n\t"                                                                          \
    "xorl %k[x], %k[x]\n\t"                                                                        \
    "mulxq %[t4], %[x], %[y]\n\t"                                                                  \
    "adcxq %[x], %[t0]\n\t"                                                                        \
    "adoxq %[y], %[t1]\n\t"                                                                        \
    "mulxq %[t5], %[x], %[y]\n\t"                                                                  \
    "adcxq %[x], %[t1]\n\t"                                                                        \
    "adoxq %[y], %[t2]\n\t"                                                                        \
    "mulxq %[t6], %[x], %[y]\n\t"                                                                  \
    "adcxq %[x], %[t2]\n\t"                                                                        \
    "adoxq %[y], %[t3]\n\t"                                                                        \
    "mulxq %[t7], %[x], %[t4]\n\t"                                                                 \
    "adcxq %[x], %[t3]\n\t"                                                                        \
    "movl $0, %k[x]\n\t"                                                                           \
    "adoxq %[x], %[t4]\n\t"                                                                        \
    "adcxq %[x], %[t4]\n\t"                                                                        \
    "btrq $63, %[t3]\n\t"                                                                          \
    "adcq %[t4], %[t4]\n\t"                                                                        \
    "imulq $19, %[t4], %[t4]\n\t"                                                                  \
    "addq %[t4], %[t0]\n\t"                                                                        \
    "adcq %[x], %[t1]\n\t"                                                                         \
    "adcq %[x], %[t2]\n\t"                                                                         \
    "adcq %[x], %[t3]\n\t"
#define FE64_PRODUCT_OUTS                                                                          \
    [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),                \
        [t5] "=&r"(t5), [t6] "=&r"(t6), [t7] "=&r"(t7), [x] "=&r"(x), [y] "=&r"(y)
#endif

/*
 * fe64_mul: r = a b mod p (< 2^256). The 512-bit product by rows: row 0 with
 * one carry chain, rows 1..3 adding the low halves on CF and the high halves
 * on OF; then the high 256 bits times 38 onto the low ones the same way, the
 * carry limb (<= 38) times 38 once more, and a last carry as 38.
 * 16 + 4 MULX.
 */
#if FE64_ASM
FE64_INLINE void fe64_mul_asm(fe64 r, const fe64 a, const fe64 b)
{
    uint64_t t0, t1, t2, t3, t4, t5, t6, t7, x, y;
#define FE64_ROW(ai, ti, tj, tk, tl, tm)                                                           \
    "movq " ai "(%[a]), %%rdx\n\t"                                                                 \
    "xorl %k[x], %k[x]\n\t"                                                                        \
    "mulxq 0(%[b]), %[x], %[y]\n\t"                                                                \
    "adcxq %[x], %[" ti "]\n\t"                                                                    \
    "adoxq %[y], %[" tj "]\n\t"                                                                    \
    "mulxq 8(%[b]), %[x], %[y]\n\t"                                                                \
    "adcxq %[x], %[" tj "]\n\t"                                                                    \
    "adoxq %[y], %[" tk "]\n\t"                                                                    \
    "mulxq 16(%[b]), %[x], %[y]\n\t"                                                               \
    "adcxq %[x], %[" tk "]\n\t"                                                                    \
    "adoxq %[y], %[" tl "]\n\t"                                                                    \
    "mulxq 24(%[b]), %[x], %[" tm "]\n\t"                                                          \
    "adcxq %[x], %[" tl "]\n\t"                                                                    \
    "movl $0, %k[x]\n\t"                                                                           \
    "adoxq %[x], %[" tm "]\n\t"                                                                    \
    "adcxq %[x], %[" tm "]\n\t"
    __asm__ volatile("movq 0(%[a]), %%rdx\n\t"
                     "mulxq 0(%[b]), %[t0], %[t1]\n\t"
                     "mulxq 8(%[b]), %[x], %[t2]\n\t"
                     "addq %[x], %[t1]\n\t"
                     "mulxq 16(%[b]), %[x], %[t3]\n\t"
                     "adcq %[x], %[t2]\n\t"
                     "mulxq 24(%[b]), %[x], %[t4]\n\t"
                     "adcq %[x], %[t3]\n\t"
                     "adcq $0, %[t4]\n\t" FE64_ROW("8", "t1", "t2", "t3", "t4", "t5")
                         FE64_ROW("16", "t2", "t3", "t4", "t5", "t6")
                             FE64_ROW("24", "t3", "t4", "t5", "t6", "t7") FE64_REDUCE
:FE64_PRODUCT_OUTS
                     : [a] "r"(a), [b] "r"(b)
                     : "rdx", "cc", "memory");
#undef FE64_ROW
    r[0] = t0;
    r[1] = t1;
    r[2] = t2;
    r[3] = t3;
}
#endif

FE64_INLINE void fe64_mul_c(fe64 r, const fe64 a, const fe64 b)
{
    uint64_t t[8] = {0};
    for (int i = 0; i < 4; i++) {
        unsigned __int128 acc = 0;
        for (int j = 0; j < 4; j++) {
            acc += (unsigned __int128)a[i] * b[j] + t[i + j];
            t[i + j] = (uint64_t)acc;
            acc >>= 64;
        }
        t[i + 4] = (uint64_t)acc;
    }
    fe64_reduce_c(r, t);
}

/*
 * fe64_mul2: r = a b and s = c d mod p, the limbs of two fe64_mul, in one
 * block that takes the rows of the two products in turn, then the two
 * reductions. In the ladder step (two such pairs) a lone derive took about
 * 6% fewer cycles than with fe64_mul twice (Zen 3, rdtsc: 80.5k -> 75.9k
 * TSC ticks; two fe64_mul alone in a loop gained nothing, so the gain is
 * the block's memory operands in place of pointers and a "memory" clobber
 * as much as the interleaving).
 * Each product keeps only the 5 limbs its current row touches in registers
 * (t_k in register k mod 5): the low limb a row finishes goes to a stack
 * slot and comes back as a memory operand of the reduction. With the two
 * shared temporaries and rdx that is 13 registers, which leaves none for
 * pointers: the operands are memory operands (limb pairs, %H is the second
 * limb of a pair), so the callers' values must be locals, as in the ladder.
 * Unoptimised builds give each memory operand its own address register,
 * more than there are: there (no __OPTIMIZE__) fe64_mul2 is fe64_mul
 * twice. The outputs may be inputs (all are read before any is written).
 */
#if FE64_ASM && defined(__OPTIMIZE__)
#define FE64_MUL2_ASM 1
#else
#define FE64_MUL2_ASM 0
#endif
#if FE64_MUL2_ASM
/* FE64_PAIR(v, k): limbs k and k + 1 of v as one memory operand */
#define FE64_PAIR(v, k) (*(uint64_t(*)[2]) & (v)[k])
#define FE64_ROW0(a, b, s, t0, t1, t2, t3, t4)                                                     \
    "movq " a ", %%rdx\n\t"                                                                        \
    "mulxq %[" b "01], %[" t0 "], %[" t1 "]\n\t"                                                   \
    "mulxq %H[" b "01], %[x], %[" t2 "]\n\t"                                                       \
    "addq %[x], %[" t1 "]\n\t"                                                                     \
    "mulxq %[" b "23], %[x], %[" t3 "]\n\t"                                                        \
    "adcq %[x], %[" t2 "]\n\t"                                                                     \
    "mulxq %H[" b "23], %[x], %[" t4 "]\n\t"                                                       \
    "adcq %[x], %[" t3 "]\n\t"                                                                     \
    "adcq $0, %[" t4 "]\n\t"                                                                       \
    "movq %[" t0 "], " s "\n\t"
#define FE64_ROWN(a, b, s, ti, tj, tk, tl, tm)                                                     \
    "movq " a ", %%rdx\n\t"                                                                        \
    "xorl %k[x], %k[x]\n\t"                                                                        \
    "mulxq %[" b "01], %[x], %[y]\n\t"                                                             \
    "adcxq %[x], %[" ti "]\n\t"                                                                    \
    "adoxq %[y], %[" tj "]\n\t"                                                                    \
    "mulxq %H[" b "01], %[x], %[y]\n\t"                                                            \
    "adcxq %[x], %[" tj "]\n\t"                                                                    \
    "adoxq %[y], %[" tk "]\n\t"                                                                    \
    "mulxq %[" b "23], %[x], %[y]\n\t"                                                             \
    "adcxq %[x], %[" tk "]\n\t"                                                                    \
    "adoxq %[y], %[" tl "]\n\t"                                                                    \
    "mulxq %H[" b "23], %[x], %[" tm "]\n\t"                                                       \
    "adcxq %[x], %[" tl "]\n\t"                                                                    \
    "movl $0, %k[x]\n\t"                                                                           \
    "adoxq %[x], %[" tm "]\n\t"                                                                    \
    "adcxq %[x], %[" tm "]\n\t"                                                                    \
    "movq %[" ti "], " s "\n\t"
/* FE64_RED2: FE64_REDUCE on t4..t7 in registers (f free) and t0..t3 in
 * the slots s01, s23, into t4..t7; rdx = 38 */
#define FE64_RED2(s, t4, t5, t6, t7, f)                                                            \
    "xorl %k[" f "], %k[" f "]\n\t"                                                                \
    "mulxq %[" t4 "], %[" t4 "], %[y]\n\t"                                                         \
    "adcxq %[" s "01], %[" t4 "]\n\t"                                                              \
    "mulxq %[" t5 "], %[" t5 "], %[x]\n\t"                                                         \
    "adoxq %[y], %[" t5 "]\n\t"                                                                    \
    "adcxq %H[" s "01], %[" t5 "]\n\t"                                                             \
    "mulxq %[" t6 "], %[" t6 "], %[y]\n\t"                                                         \
    "adoxq %[x], %[" t6 "]\n\t"                                                                    \
    "adcxq %[" s "23], %[" t6 "]\n\t"                                                              \
    "mulxq %[" t7 "], %[" t7 "], %[x]\n\t"                                                         \
    "adoxq %[y], %[" t7 "]\n\t"                                                                    \
    "adcxq %H[" s "23], %[" t7 "]\n\t"                                                             \
    "adoxq %[" f "], %[x]\n\t"                                                                     \
    "adcxq %[" f "], %[x]\n\t"                                                                     \
    "btrq $63, %[" t7 "]\n\t"                                                                      \
    "adcq %[x], %[x]\n\t"                                                                          \
    "imulq $19, %[x], %[x]\n\t"                                                                    \
    "addq %[x], %[" t4 "]\n\t"                                                                     \
    "adcq %[" f "], %[" t5 "]\n\t"                                                                 \
    "adcq %[" f "], %[" t6 "]\n\t"                                                                 \
    "adcq %[" f "], %[" t7 "]\n\t"
FE64_INLINE void fe64_mul2_asm(fe64 r, const fe64 a, const fe64 b, fe64 s, const fe64 c,
                               const fe64 d)
{
    uint64_t p0, p1, p2, p3, p4, q0, q1, q2, q3, q4, x, y, sp[4], sq[4];
    /* one row a line */
    /* clang-format off */
    __asm__(FE64_ROW0("%[a01]", "b", "%[sp01]", "p0", "p1", "p2", "p3", "p4")
            FE64_ROW0("%[c01]", "d", "%[sq01]", "q0", "q1", "q2", "q3", "q4")
            FE64_ROWN("%H[a01]", "b", "%H[sp01]", "p1", "p2", "p3", "p4", "p0")
            FE64_ROWN("%H[c01]", "d", "%H[sq01]", "q1", "q2", "q3", "q4", "q0")
            FE64_ROWN("%[a23]", "b", "%[sp23]", "p2", "p3", "p4", "p0", "p1")
            FE64_ROWN("%[c23]", "d", "%[sq23]", "q2", "q3", "q4", "q0", "q1")
            FE64_ROWN("%H[a23]", "b", "%H[sp23]", "p3", "p4", "p0", "p1", "p2")
            FE64_ROWN("%H[c23]", "d", "%H[sq23]", "q3", "q4", "q0", "q1", "q2")
            "movl $38, %%edx\n\t"
            FE64_RED2("sp", "p4", "p0", "p1", "p2", "p3")
            FE64_RED2("sq", "q4", "q0", "q1", "q2", "q3")
        : [p0] "=&r"(p0), [p1] "=&r"(p1), [p2] "=&r"(p2), [p3] "=&r"(p3), [p4] "=&r"(p4),
          [q0] "=&r"(q0), [q1] "=&r"(q1), [q2] "=&r"(q2), [q3] "=&r"(q3), [q4] "=&r"(q4),
          [x] "=&r"(x), [y] "=&r"(y), [sp01] "=m"(FE64_PAIR(sp, 0)), [sp23] "=m"(FE64_PAIR(sp, 2)),
          [sq01] "=m"(FE64_PAIR(sq, 0)), [sq23] "=m"(FE64_PAIR(sq, 2))
        : [a01] "m"(FE64_PAIR(a, 0)), [a23] "m"(FE64_PAIR(a, 2)), [b01] "m"(FE64_PAIR(b, 0)),
          [b23] "m"(FE64_PAIR(b, 2)), [c01] "m"(FE64_PAIR(c, 0)), [c23] "m"(FE64_PAIR(c, 2)),
          [d01] "m"(FE64_PAIR(d, 0)), [d23] "m"(FE64_PAIR(d, 2))
        : "rdx", "cc");
    /* clang-format on */
    r[0] = p4;
    r[1] = p0;
    r[2] = p1;
    r[3] = p2;
    s[0] = q4;
    s[1] = q0;
    s[2] = q1;
    s[3] = q2;
}
#undef FE64_ROW0
#undef FE64_ROWN
#undef FE64_RED2
#undef FE64_PAIR
#endif

/* FE64_MUL2_SEQ(name, mul): fe64_mul2 as two calls of mul, for the C forms
 * (and unoptimised builds) */
#define FE64_MUL2_SEQ(name, mul)                                                                   \
    FE64_INLINE void name(fe64 r, const fe64 a, const fe64 b, fe64 s, const fe64 c, const fe64 d)  \
    {                                                                                              \
        fe64 u, v;                                                                                 \
        mul(u, a, b);                                                                              \
        mul(v, c, d);                                                                              \
        for (int i = 0; i < 4; i++) {                                                              \
            r[i] = u[i];                                                                           \
            s[i] = v[i];                                                                           \
        }                                                                                          \
    }
FE64_MUL2_SEQ(fe64_mul2_c, fe64_mul_c)
#if FE64_ASM && !FE64_MUL2_ASM
FE64_MUL2_SEQ(fe64_mul2_asm, fe64_mul_asm)
#endif
#undef FE64_MUL2_SEQ

/*
 * fe64_sqr: r = a^2 mod p, the limbs of fe64_mul(a, a): the 6 cross
 * products (two carry chains), doubled on CF while the 4 squares go in on
 * OF, then the reduction of fe64_mul. 10 + 4 MULX.
 */
#if FE64_ASM
FE64_INLINE void fe64_sqr_asm(fe64 r, const fe64 a)
{
    uint64_t t0, t1, t2, t3, t4, t5, t6, t7, x, y;
    __asm__ volatile("movq 0(%[a]), %%rdx\n\t"
                     "xorl %k[t7], %k[t7]\n\t"
                     "mulxq 8(%[a]), %[t1], %[t2]\n\t" /* a0 a1 */
                     "mulxq 16(%[a]), %[x], %[t3]\n\t" /* a0 a2 */
                     "adcxq %[x], %[t2]\n\t"
                     "mulxq 24(%[a]), %[x], %[t4]\n\t" /* a0 a3 */
                     "adcxq %[x], %[t3]\n\t"
                     "movq 8(%[a]), %%rdx\n\t"
                     "mulxq 24(%[a]), %[x], %[t5]\n\t" /* a1 a3 */
                     "adcxq %[x], %[t4]\n\t"
                     "movq 16(%[a]), %%rdx\n\t"
                     "mulxq 24(%[a]), %[x], %[t6]\n\t" /* a2 a3 */
                     "adcxq %[x], %[t5]\n\t"
                     "adcxq %[t7], %[t6]\n\t"
                     "movq 8(%[a]), %%rdx\n\t"
                     "mulxq 16(%[a]), %[x], %[y]\n\t" /* a1 a2 */
                     "adoxq %[x], %[t3]\n\t"
                     "adoxq %[y], %[t4]\n\t"
                     "adoxq %[t7], %[t5]\n\t"
                     "adoxq %[t7], %[t6]\n\t"
                     /* doubled (CF) plus the squares (OF); both flags are clear */
                     "movq 0(%[a]), %%rdx\n\t"
                     "mulxq %%rdx, %[t0], %[x]\n\t"
                     "adcxq %[t1], %[t1]\n\t"
                     "adoxq %[x], %[t1]\n\t"
                     "movq 8(%[a]), %%rdx\n\t"
                     "mulxq %%rdx, %[x], %[y]\n\t"
                     "adcxq %[t2], %[t2]\n\t"
                     "adoxq %[x], %[t2]\n\t"
                     "adcxq %[t3], %[t3]\n\t"
                     "adoxq %[y], %[t3]\n\t"
                     "movq 16(%[a]), %%rdx\n\t"
                     "mulxq %%rdx, %[x], %[y]\n\t"
                     "adcxq %[t4], %[t4]\n\t"
                     "adoxq %[x], %[t4]\n\t"
                     "adcxq %[t5], %[t5]\n\t"
                     "adoxq %[y], %[t5]\n\t"
                     "movq 24(%[a]), %%rdx\n\t"
                     "mulxq %%rdx, %[x], %[y]\n\t"
                     "adcxq %[t6], %[t6]\n\t"
                     "adoxq %[x], %[t6]\n\t"
                     "adcxq %[t7], %[t7]\n\t"
                     "adoxq %[y], %[t7]\n\t" FE64_REDUCE:FE64_PRODUCT_OUTS
                     : [a] "r"(a)
                     : "rdx", "cc", "memory");
    r[0] = t0;
    r[1] = t1;
    r[2] = t2;
    r[3] = t3;
}
#endif

FE64_INLINE void fe64_sqr_c(fe64 r, const fe64 a)
{
    fe64_mul_c(r, a, a);
}

/*
 * fe64_mul_small_add: r = a c + b mod p for a constant c < 2^32 (a24 =
 * 121665): the 4 products on CF while b goes in on OF, 5 limbs (the top one
 * at most c + 1), the top one as 38 times itself, the last carry as 38.
 * 4 MULX.
 */
#if FE64_ASM
FE64_INLINE void fe64_mul_small_add_asm(fe64 r, const fe64 a, uint32_t c, const fe64 b)
{
    uint64_t t0, t1, t2, t3, x, y;
    __asm__ volatile(
        "movl %[c], %%edx\n\t"
        "xorl %k[x], %k[x]\n\t"
        "mulxq 0(%[a]), %[t0], %[x]\n\t"
        "adoxq 0(%[b]), %[t0]\n\t"
        "mulxq 8(%[a]), %[t1], %[y]\n\t"
        "adcxq %[x], %[t1]\n\t"
        "adoxq 8(%[b]), %[t1]\n\t"
        "mulxq 16(%[a]), %[t2], %[x]\n\t"
        "adcxq %[y], %[t2]\n\t"
        "adoxq 16(%[b]), %[t2]\n\t"
        "mulxq 24(%[a]), %[t3], %[y]\n\t"
        "adcxq %[x], %[t3]\n\t"
        "adoxq 24(%[b]), %[t3]\n\t"
        "movl $0, %k[x]\n\t"
        "adcxq %[x], %[y]\n\t"
        "adoxq %[x], %[y]\n\t"
        "btrq $63, %[t3]\n\t"
        "adcq %[y], %[y]\n\t"
        "imulq $19, %[y], %[y]\n\t"
        "addq %[y], %[t0]\n\t"
        "adcq %[x], %[t1]\n\t"
        "adcq %[x], %[t2]\n\t"
        "adcq %[x], %[t3]\n\t"
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [x] "=&r"(x), [y] "=&r"(y)
        : [a] "r"(a), [b] "r"(b), [c] "r"(c)
        : "rdx", "cc", "memory");
    r[0] = t0;
    r[1] = t1;
    r[2] = t2;
    r[3] = t3;
}
#endif

FE64_INLINE void fe64_mul_small_add_c(fe64 r, const fe64 a, uint32_t c, const fe64 b)
{
    uint64_t t[4];
    unsigned __int128 acc = 0;
    for (int i = 0; i < 4; i++) {
        acc += (unsigned __int128)a[i] * c + b[i];
        t[i] = (uint64_t)acc;
        acc >>= 64;
    }
    fe64_fold19_c(r, t, (uint64_t)acc);
}

#if FE64_ASM
/* FE64_ADDSUB(op, opc): the body of fe64_add_asm ("addq", "adcq") and
 * fe64_sub_asm ("subq", "sbbq"): r = a op b on 4 limbs, then the carry or
 * borrow out of 2^256 as 38 by the same op, twice. */
#define FE64_ADDSUB(op, opc)                                                                       \
    uint64_t t0, t1, t2, t3, x;                                                                    \
    __asm__ volatile(                                                                              \
        "movq 0(%[a]), %[t0]\n\t" op " 0(%[b]), %[t0]\n\t"                                         \
        "movq 8(%[a]), %[t1]\n\t" opc " 8(%[b]), %[t1]\n\t"                                        \
        "movq 16(%[a]), %[t2]\n\t" opc " 16(%[b]), %[t2]\n\t"                                      \
        "movq 24(%[a]), %[t3]\n\t" opc " 24(%[b]), %[t3]\n\t"                                      \
        "sbbq %[x], %[x]\n\t"                                                                      \
        "andq $38, %[x]\n\t" op " %[x], %[t0]\n\t" opc " $0, %[t1]\n\t" opc " $0, %[t2]\n\t" opc   \
        " $0, %[t3]\n\t"                                                                           \
        "sbbq %[x], %[x]\n\t"                                                                      \
        "andq $38, %[x]\n\t" op " %[x], %[t0]\n\t"                                                 \
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [x] "=&r"(x)             \
        : [a] "r"(a), [b] "r"(b)                                                                   \
        : "cc", "memory");                                                                         \
    r[0] = t0;                                                                                     \
    r[1] = t1;                                                                                     \
    r[2] = t2;                                                                                     \
    r[3] = t3
#endif

/* fe64_add: r = a + b mod p; the carry out of 2^256 as 38, twice. */
#if FE64_ASM
FE64_INLINE void fe64_add_asm(fe64 r, const fe64 a, const fe64 b)
{
    FE64_ADDSUB("addq", "adcq");
}
#endif

FE64_INLINE void fe64_add_c(fe64 r, const fe64 a, const fe64 b)
{
    uint64_t t[4];
    unsigned __int128 acc = 0;
    for (int i = 0; i < 4; i++) {
        acc += (unsigned __int128)a[i] + b[i];
        t[i] = (uint64_t)acc;
        acc >>= 64;
    }
    fe64_fold_c(r, t, (uint64_t)acc);
}

/*
 * fe64_sub: r = a - b mod p; a borrow out of 2^256 is taken back as 38
 * (2^256 - 38 = 2p), twice: after a second borrow the low limb is at least
 * 2^64 - 38, so the last subtraction cannot borrow.
 */
#if FE64_ASM
FE64_INLINE void fe64_sub_asm(fe64 r, const fe64 a, const fe64 b)
{
    FE64_ADDSUB("subq", "sbbq");
}
#endif

FE64_INLINE void fe64_sub_c(fe64 r, const fe64 a, const fe64 b)
{
    uint64_t t[4];
    uint64_t borrow = 0;
    for (int i = 0; i < 4; i++) {
        const unsigned __int128 d = (unsigned __int128)a[i] - b[i] - borrow;
        t[i] = (uint64_t)d;
        borrow = (uint64_t)(d >> 64) & 1;
    }
    for (int pass = 0; pass < 2; pass++) {
        uint64_t sub = 38 & (0 - borrow);
        borrow = 0;
        for (int i = 0; i < 4; i++) {
            const unsigned __int128 d = (unsigned __int128)t[i] - sub - borrow;
            t[i] = (uint64_t)d;
            borrow = (uint64_t)(d >> 64) & 1;
            sub = 0;
        }
    }
    for (int i = 0; i < 4; i++) {
        r[i] = t[i];
    }
}

/* The forms the kernels use: the assembly, or the C forms (MemorySanitizer). */
#if FE64_ASM
#define fe64_mul fe64_mul_asm
#define fe64_mul2 fe64_mul2_asm
#define fe64_sqr fe64_sqr_asm
#define fe64_mul_small_add fe64_mul_small_add_asm
#define fe64_add fe64_add_asm
#define fe64_sub fe64_sub_asm
#else
#define fe64_mul fe64_mul_c
#define fe64_mul2 fe64_mul2_c
#define fe64_sqr fe64_sqr_c
#define fe64_mul_small_add fe64_mul_small_add_c
#define fe64_add fe64_add_c
#define fe64_sub fe64_sub_c
#endif

/*
 * fe64_canon: r = the representative of a below p. Bit 255 of a comes back
 * as 19 (a value below 2^255 + 19 < 2p is left); then a >= p exactly when
 * a + 19 reaches bit 255, and a - p is a + 19 with bit 255 cleared.
 */
static inline void fe64_canon(fe64 r, const fe64 a)
{
    uint64_t v[4], w[4];
    unsigned __int128 acc = (unsigned __int128)a[0] + 19 * (a[3] >> 63);
    v[0] = (uint64_t)acc;
    for (int i = 1; i < 4; i++) {
        acc = (unsigned __int128)(i == 3 ? a[3] & (~0ull >> 1) : a[i]) + (uint64_t)(acc >> 64);
        v[i] = (uint64_t)acc;
    }
    acc = (unsigned __int128)v[0] + 19;
    w[0] = (uint64_t)acc;
    for (int i = 1; i < 4; i++) {
        acc = (unsigned __int128)v[i] + (uint64_t)(acc >> 64);
        w[i] = (uint64_t)acc;
    }
    const uint64_t ge = mbc_ct_msb_mask(w[3]);
    w[3] &= ~0ull >> 1;
    for (int i = 0; i < 4; i++) {
        r[i] = mbc_ct_select(ge, w[i], v[i]);
    }
}

/* fe64_cswap: (a, b) = (b, a) when mask is all-ones, unchanged when 0. */
static inline void fe64_cswap(uint64_t mask, fe64 a, fe64 b)
{
    for (int i = 0; i < 4; i++) {
        const uint64_t t = mask & (a[i] ^ b[i]);
        a[i] ^= t;
        b[i] ^= t;
    }
}

/* fe64_cmov: r = a when mask is all-ones, unchanged when 0. */
static inline void fe64_cmov(uint64_t mask, fe64 r, const fe64 a)
{
    for (int i = 0; i < 4; i++) {
        r[i] = mbc_ct_select(mask, a[i], r[i]);
    }
}

#endif /* MBC_SRC_X25519_FE25519_X64_H */
