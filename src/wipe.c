/*
 * wipe.c - scrubbing the dead stack and the registers after an entry point
 * that handled secrets (see wipe.h). Baseline code: the AVX and AVX-512
 * instructions are inline assembly, run only when the CPU has them, so the
 * compiler is given no ISA flag and cannot use those registers itself
 * (hence no clobbers beyond xmm0-15).
 */
#include <stdatomic.h>
#include <stdint.h>

#include "dispatch.h"
#include "test_hooks.h"
#include "wipe.h"

enum { LEVEL_UNKNOWN, LEVEL_SSE, LEVEL_AVX, LEVEL_AVX512 };

/* The register file of this CPU (not of the masked feature word: glibc's
 * memcpy uses AVX2 or EVEX registers whatever MBCRYPTO_CPU_MASK says).
 * Computed on first use; racing threads compute the same value. */
static _Atomic unsigned g_level;

static unsigned cpu_level(void)
{
    unsigned level = atomic_load_explicit(&g_level, memory_order_relaxed);
    if (level == LEVEL_UNKNOWN) {
        const uint64_t f = mbc_cpu_detect();
        level = (f & MBC_CPU_AVX512F) ? LEVEL_AVX512 : (f & MBC_CPU_AVX) ? LEVEL_AVX : LEVEL_SSE;
        atomic_store_explicit(&g_level, level, memory_order_relaxed);
    }
    return level;
}

#define XMM_CLOBBERS                                                                               \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",       \
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

void mbc_wipe_regs(void)
{
    const unsigned level = cpu_level();
    if (level == LEVEL_SSE) {
        __asm__ __volatile__(".irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
                             "pxor %%xmm\\n, %%xmm\\n\n"
                             ".endr\n"
                             :
                             :
                             : XMM_CLOBBERS);
    } else {
        /* VEX zero idioms: each clears its whole register (zmm with AVX-512) */
        __asm__ __volatile__(".irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
                             "vpxor %%xmm\\n, %%xmm\\n, %%xmm\\n\n"
                             ".endr\n"
                             :
                             :
                             : XMM_CLOBBERS);
    }
    if (level == LEVEL_AVX512) {
        __asm__ __volatile__(".irp n,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
                             "vpxord %%zmm\\n, %%zmm\\n, %%zmm\\n\n"
                             ".endr\n"
                             ".irp n,0,1,2,3,4,5,6,7\n"
                             "kxorw %%k\\n, %%k\\n, %%k\\n\n"
                             ".endr\n"
                             :
                             :
                             :);
    }
    __asm__ __volatile__("xorl %%eax, %%eax\n"
                         "xorl %%ecx, %%ecx\n"
                         "xorl %%edx, %%edx\n"
                         "xorl %%esi, %%esi\n"
                         "xorl %%edi, %%edi\n"
                         "xorl %%r8d, %%r8d\n"
                         "xorl %%r9d, %%r9d\n"
                         "xorl %%r10d, %%r10d\n"
                         "xorl %%r11d, %%r11d\n"
                         :
                         :
                         : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "cc");
}

__attribute__((noinline)) void mbc_wipe_secrets(size_t stack_bytes)
{
    if (stack_bytes != 0 && !mbc_test_hook(no_stack_wipe)) {
        /* Starts right below this frame: where the work's frames were. */
        uint8_t dead[stack_bytes];
        mbc_memzero(dead, stack_bytes);
    }
    mbc_wipe_regs();
}
