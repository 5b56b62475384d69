/*
 * dispatch.h - the table of implementations, at batch-operation granularity.
 * mbc_dispatch_fill() is a pure function of a feature word; the global table
 * is filled once on first use (portable until then) and refilled only by
 * mbc_cpu_restrict().
 */
#ifndef MBC_SRC_DISPATCH_H
#define MBC_SRC_DISPATCH_H

#include <stdint.h>

#include "internal.h"
#include "ec/ec_kern.h"
#include "rsa/rsa_kern.h"
#include "gcm/gcm_internal.h"
#include "x25519/x25519_kern.h"
#include "mlkem/mlkem_internal.h"

/*
 * mbc_dispatch: one implementation per family, each chosen by the family's
 * own mbc_<family>_impl_for(features) from its table (impl.h) and starting
 * with its struct mbc_impl_base. Adding a family is a member here and a case
 * in dispatch.c's family_base; adding an implementation to a family is a
 * row in the family's table.
 */
struct mbc_dispatch {
    const struct mbc_rsa_impl *rsa;
    const struct mbc_gcm_impl *gcm;
    const struct mbc_ec_impl *ec;
    const struct mbc_x25519_impl *x25519;
    const struct mbc_mlkem_impl *mlkem;
};

/* mbc_dispatch_fill: t gets, family by family, the fastest implementation
 * that features allows; each falls back on its own. */
void mbc_dispatch_fill(struct mbc_dispatch *t, uint64_t features);

/* mbc_dispatch_get: the global table (filled on first call). */
const struct mbc_dispatch *mbc_dispatch_get(void);

/* mbc_cpu_detect: the CPU's own feature word (CPUID + XGETBV), unmasked. */
uint64_t mbc_cpu_detect(void);

/* mbc_cpu_features_from_regs: the pure part of detection, for tests: regs[0]
 * is CPUID leaf 1 and regs[1] leaf 7 subleaf 0 (eax, ebx, ecx, edx). */
uint64_t mbc_cpu_features_from_regs(uint32_t (*regs)[4], uint32_t max_leaf, uint64_t xcr0,
                                    int osxsave);

/* mbc_cpu_parse_mask: the features a MBCRYPTO_CPU_MASK value s keeps (pure).
 * Accepted: "0x" or "0X" and one or more hex digits, or decimal digits with
 * no leading zero ("0" itself is fine: no octal, no 010 read as 10); no sign,
 * no space, at most 2^64 - 1. NULL or empty (unset): every feature. Anything
 * else sets *malformed to 1 and keeps none (portable paths only); otherwise
 * *malformed is 0. */
uint64_t mbc_cpu_parse_mask(const char *s, int *malformed);

#endif /* MBC_SRC_DISPATCH_H */
