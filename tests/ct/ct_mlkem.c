/*
 * ct_mlkem.c - the MemorySanitizer constant-time check of ML-KEM-768: the
 * seeds of key generation, the m of encapsulation and the secret parts of
 * dk (dk_PKE and z; its ek and H(ek) are public) are poisoned, then key
 * generation, encapsulation and decapsulation (of valid ciphertexts and of
 * changed ones: the implicit rejection) run on the "avx512", "avx2" and "c"
 * implementations with 8 lanes and with one. MSan reports any branch or
 * memory address that depends on a secret; the library unpoisons only what
 * it releases (the outputs, the verdicts). Results are checked for
 * consistency (decapsulation gives encapsulation's secret, a changed
 * ciphertext another) and must come back public.
 *
 * Controls, which show that the check can fail: --leaky (a ciphertext
 * comparison that stops at the first difference, the comparison
 * decapsulation must not make) and --leaky-index (a table lookup indexed by
 * a secret seed byte). MSan must stop the process with a report.
 *
 * Output: TAP, one case per implementation; one this CPU or build cannot
 * run is a "# SKIP" case. Links nothing but the library and libc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbcrypto.h"

#include "ct_util.h"

#define EK MBC_MLKEM768_EK_LEN
#define DK MBC_MLKEM768_DK_LEN
#define CT MBC_MLKEM768_CT_LEN
#define SS MBC_MLKEM_SS_LEN

struct ctx {
    uint8_t seed[MBC_LANES][64], m[MBC_LANES][32];
    uint8_t ek[MBC_LANES][EK], dk[MBC_LANES][DK], ct[MBC_LANES][CT];
    uint8_t ss[MBC_LANES][SS], ss2[MBC_LANES][SS];
};

static void ctx_fill(struct ctx *c)
{
    for (unsigned l = 0; l < MBC_LANES; l++) {
        for (unsigned i = 0; i < 64; i++) {
            c->seed[l][i] = ct_rng_byte();
        }
        for (unsigned i = 0; i < 32; i++) {
            c->m[l][i] = ct_rng_byte();
        }
    }
    __msan_poison(c->seed, sizeof(c->seed));
    __msan_poison(c->m, sizeof(c->m));
}

/* run_one: keygen, encaps and decaps on the lanes of mask; 0 or -1. */
static int run_one(struct ctx *c, unsigned mask, const char *impl)
{
    uint8_t *e[MBC_LANES], *d[MBC_LANES], *ct[MBC_LANES], *s[MBC_LANES], *s2[MBC_LANES];
    const uint8_t *sd[MBC_LANES], *mm[MBC_LANES], *ce[MBC_LANES], *cc[MBC_LANES], *cd[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        e[l] = c->ek[l];
        d[l] = c->dk[l];
        ct[l] = c->ct[l];
        s[l] = c->ss[l];
        s2[l] = c->ss2[l];
        sd[l] = c->seed[l];
        mm[l] = c->m[l];
        ce[l] = c->ek[l];
        cc[l] = c->ct[l];
        cd[l] = c->dk[l];
    }
    ctx_fill(c);
    if (mbc_status_ok_mask(mbc_mlkem_keygen_seed_mb8(MBC_MLKEM_768, e, d, sd, mask)) != mask) {
        printf("# %s keygen failed\n", impl);
        return -1;
    }
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if ((mask >> l) & 1u) {
            if (!ct_is_public(c->ek[l], EK) || !ct_is_public(c->dk[l], DK)) {
                printf("# %s keygen lane %u: the keys are not public to their caller\n", impl, l);
                return -1;
            }
            __msan_poison(c->dk[l], 384 * 3);
            __msan_poison(c->dk[l] + DK - 32, 32);
        }
    }
    if (mbc_status_ok_mask(mbc_mlkem_encaps_m_mb8(MBC_MLKEM_768, ct, s, ce, mm, mask)) != mask) {
        printf("# %s encaps failed\n", impl);
        return -1;
    }
    const unsigned first = (unsigned)__builtin_ctz(mask);
    c->ct[first][7] ^= 0x20; /* rejected implicitly */
    if (mbc_status_ok_mask(mbc_mlkem_decaps_mb8(MBC_MLKEM_768, s2, cc, cd, mask)) != mask) {
        printf("# %s decaps failed\n", impl);
        return -1;
    }
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if ((mask >> l) & 1u) {
            if (!ct_is_public(c->ct[l], CT) || !ct_is_public(c->ss[l], SS) ||
                !ct_is_public(c->ss2[l], SS)) {
                printf("# %s lane %u: an output is not public to its caller\n", impl, l);
                return -1;
            }
            if ((memcmp(c->ss[l], c->ss2[l], SS) == 0) != (l != first)) {
                printf("# %s lane %u: decapsulation gave the wrong secret\n", impl, l);
                return -1;
            }
        }
    }
    return 0;
}

static int run_checks(void)
{
    static const char *const impls[] = {"avx512", "avx2", "c"};
    static struct ctx c;
    int failed = 0;
    unsigned tap = 0;
    ct_rng_seed(0x4d4c4b454d373638ull);
    printf("1..3\n");
    printf("# poisoned under MemorySanitizer: ML-KEM-768 seeds, m, dk_PKE and z\n");
    for (size_t i = 0; i < 3; i++) {
        /* avx2: every feature but AVX-512 */
        const uint64_t allowed = i == 0   ? ~(uint64_t)0
                                 : i == 1 ? ~(uint64_t)(MBC_CPU_AVX512F | MBC_CPU_AVX512VL)
                                          : 0;
        const int have = ct_select_impl(MBC_ALG_MLKEM, impls[i], allowed);
        tap++;
        if (!have) {
            printf("ok %u # SKIP %s: not available (CPU features 0x%llx)\n", tap, impls[i],
                   (unsigned long long)mbc_cpu_features());
            continue;
        }
        if (run_one(&c, 0xFF, impls[i]) == 0 && run_one(&c, 0x04, impls[i]) == 0) {
            printf("ok %u - %s keygen, encaps, decaps (8 lanes and 1): no MSan report, results "
                   "right and public\n",
                   tap, impls[i]);
        } else {
            printf("not ok %u - %s\n", tap, impls[i]);
            failed++;
        }
    }
    mbc_cpu_restrict(~(uint64_t)0);
    return failed ? 1 : 0;
}

static volatile unsigned sink;

/* leaky_compare: a comparison that stops at the first differing byte. */
__attribute__((noinline)) static unsigned leaky_compare(const uint8_t *a, const uint8_t *b,
                                                        size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (a[i] != b[i]) {
            return 0;
        }
    }
    return 1;
}

/* leaky_lookup: a table lookup whose address is a secret byte. */
__attribute__((noinline)) static unsigned leaky_lookup(const uint8_t *k)
{
    static uint8_t table[256];
    for (unsigned i = 0; i < 256; i++) {
        table[i] = (uint8_t)(i * 29u + 7u);
    }
    return table[k[5]];
}

static int run_control(int index)
{
    static struct ctx c;
    ct_rng_seed(1);
    ctx_fill(&c);
    printf("# control: %s; MSan must report it\n",
           index ? "a table lookup indexed by a seed byte" : "an early-exit compare of m");
    fflush(stdout);
    sink = index ? leaky_lookup(c.seed[0]) : leaky_compare(c.m[0], c.m[1], 32);
    printf("# control NOT caught: MemorySanitizer reported nothing\n");
    return 0;
}

int main(int argc, char **argv)
{
    return ct_main(argc, argv, run_checks, run_control);
}
