/* impl_select.c - see impl_select.h. */
#include <string.h>

#include "impl_select.h"

/* Feature words tried in order: everything, then without the widest
 * extensions, then nothing (every portable path). */
static const uint64_t alg_masks[] = {
    ~0ull,
    ~(MBC_CPU_VAES | MBC_CPU_VPCLMULQDQ),
    ~(MBC_CPU_VAES | MBC_CPU_VPCLMULQDQ | MBC_CPU_AVX512F | MBC_CPU_AVX512BW | MBC_CPU_AVX512VL |
      MBC_CPU_AVX512IFMA | MBC_CPU_AVX512DQ | MBC_CPU_AVX512VBMI),
    ~(MBC_CPU_VAES | MBC_CPU_VPCLMULQDQ | MBC_CPU_AESNI | MBC_CPU_PCLMULQDQ),
    0,
};

int mbt_select_alg_impl(mbc_alg alg, const char *impl)
{
    for (size_t i = 0; i < sizeof(alg_masks) / sizeof(alg_masks[0]); i++) {
        mbc_cpu_restrict(alg_masks[i]);
        const char *name = mbc_impl_name(alg);
        if (name != NULL && strcmp(name, impl) == 0) {
            return 1;
        }
    }
    mbc_cpu_restrict(~0ull);
    return 0;
}
