/*
 * cpuprobe.c - proves that a CPU (real or emulated) runs the AVX-512
 * instructions mbcrypto's ifma and vaes512 paths use, and that the OS enabled
 * their register state. tools/emu/run_avx512.sh builds it statically against
 * the build's libmbcrypto.a and runs it first inside the emulator.
 *
 * Prints CPUID leaf 7 feature bits and XCR0, then executes vpmadd52luq,
 * vpmadd52huq, vaesenc (zmm) and vpclmulqdq (zmm) on pseudo-random inputs and
 * compares every lane with a portable C computation; then prints what the
 * library detects (mbc_cpu_features, mbc_impl_name). Exit status 0 only if
 * every feature is present, every result matches and the library selects
 * "ifma" for RSA and "vaes512" for GCM.
 */
#include <cpuid.h>
#include <immintrin.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mbcrypto.h"

#define TARGET __attribute__((target("avx512f,avx512ifma,vaes,vpclmulqdq")))

static int failures;

static void check(const char *what, int ok)
{
    printf("%-44s %s\n", what, ok ? "ok" : "FAILED");
    if (!ok) {
        failures++;
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* ---- portable references ------------------------------------------------ */

#define MASK52 ((1ull << 52) - 1)

static uint64_t ref_madd52lo(uint64_t a, uint64_t b, uint64_t c)
{
    unsigned __int128 p = (unsigned __int128)(b & MASK52) * (c & MASK52);
    return a + ((uint64_t)p & MASK52);
}

static uint64_t ref_madd52hi(uint64_t a, uint64_t b, uint64_t c)
{
    unsigned __int128 p = (unsigned __int128)(b & MASK52) * (c & MASK52);
    return a + (uint64_t)(p >> 52);
}

static uint8_t gf_mul(uint8_t a, uint8_t b)
{
    uint8_t r = 0;
    for (int i = 0; i < 8; i++) {
        if (b & 1) {
            r ^= a;
        }
        b >>= 1;
        a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
    }
    return r;
}

static uint8_t sbox(uint8_t x)
{
    uint8_t inv = 0; /* x^254 = x^-1, 0 -> 0 */
    if (x != 0) {
        inv = 1;
        for (int i = 0; i < 254; i++) {
            inv = gf_mul(inv, x);
        }
    }
    uint8_t s = 0x63;
    for (int k = 0; k < 5; k++) {
        s ^= (uint8_t)((inv << k) | (inv >> ((8 - k) & 7)));
    }
    return s;
}

/* One AES encryption round on a 16-byte column-major state. */
static void ref_aesenc(uint8_t out[16], const uint8_t in[16], const uint8_t rk[16])
{
    uint8_t t[16];
    for (int c = 0; c < 4; c++) {
        for (int r = 0; r < 4; r++) {
            t[4 * c + r] = sbox(in[4 * ((c + r) % 4) + r]); /* ShiftRows + SubBytes */
        }
    }
    for (int c = 0; c < 4; c++) {
        const uint8_t *s = &t[4 * c];
        for (int r = 0; r < 4; r++) {
            uint8_t v = (uint8_t)(gf_mul(s[r], 2) ^ gf_mul(s[(r + 1) % 4], 3) ^ s[(r + 2) % 4] ^
                                  s[(r + 3) % 4]);
            out[4 * c + r] = v ^ rk[4 * c + r];
        }
    }
}

static void ref_clmul(uint64_t out[2], uint64_t a, uint64_t b)
{
    uint64_t lo = 0, hi = 0;
    for (int i = 0; i < 64; i++) {
        if ((b >> i) & 1) {
            lo ^= a << i;
            hi ^= i ? a >> (64 - i) : 0;
        }
    }
    out[0] = lo;
    out[1] = hi;
}

/* ---- the instructions --------------------------------------------------- */

TARGET static void run_ifma(uint64_t lo[8], uint64_t hi[8], const uint64_t a[8],
                            const uint64_t b[8], const uint64_t c[8])
{
    __m512i va = _mm512_loadu_si512(a), vb = _mm512_loadu_si512(b);
    __m512i vc = _mm512_loadu_si512(c);
    _mm512_storeu_si512(lo, _mm512_madd52lo_epu64(va, vb, vc));
    _mm512_storeu_si512(hi, _mm512_madd52hi_epu64(va, vb, vc));
}

TARGET static void run_vaes(uint8_t out[64], const uint8_t in[64], const uint8_t rk[64])
{
    __m512i r = _mm512_aesenc_epi128(_mm512_loadu_si512(in), _mm512_loadu_si512(rk));
    _mm512_storeu_si512(out, r);
}

TARGET static void run_clmul(uint64_t out[8], const uint64_t a[8], const uint64_t b[8])
{
    /* imm 0x10: a's low qword times b's high qword in each 128-bit lane. */
    __m512i r = _mm512_clmulepi64_epi128(_mm512_loadu_si512(a), _mm512_loadu_si512(b), 0x10);
    _mm512_storeu_si512(out, r);
}

static void fill(uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = rnd();
    }
}

int main(void)
{
    uint32_t a1, b1, c1, d1, a7 = 0, b7 = 0, c7 = 0, d7 = 0;
    __cpuid_count(1, 0, a1, b1, c1, d1);
    if (__get_cpuid_max(0, NULL) >= 7) {
        __cpuid_count(7, 0, a7, b7, c7, d7);
    }
    uint64_t xcr0 = 0;
    if ((c1 >> 27) & 1) {
        uint32_t lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = ((uint64_t)hi << 32) | lo;
    }
    printf("cpuid.1: ecx=%08" PRIx32 " edx=%08" PRIx32 "\n", c1, d1);
    printf("cpuid.7.0: ebx=%08" PRIx32 " ecx=%08" PRIx32 " edx=%08" PRIx32 "\n", b7, c7, d7);
    printf("xcr0=%" PRIx64 "\n", xcr0);

    static const struct {
        const char *name;
        int reg; /* 1 = ebx, 2 = ecx */
        int bit;
    } feats[] = {
        {"AVX512F", 1, 16},  {"AVX512DQ", 1, 17},   {"AVX512IFMA", 1, 21}, {"AVX512BW", 1, 30},
        {"AVX512VL", 1, 31}, {"AVX512VBMI", 2, 1},  {"VAES", 2, 9},        {"VPCLMULQDQ", 2, 10},
        {"GFNI", 2, 8},      {"AVX512VBMI2", 2, 6},
    };
    int all = 1;
    for (size_t i = 0; i < sizeof(feats) / sizeof(feats[0]); i++) {
        uint32_t r = feats[i].reg == 1 ? b7 : c7;
        int on = (int)((r >> feats[i].bit) & 1);
        printf("  %-12s %s\n", feats[i].name, on ? "yes" : "NO");
        if (!on && strcmp(feats[i].name, "AVX512VBMI2") != 0 &&
            strcmp(feats[i].name, "GFNI") != 0) {
            all = 0;
        }
    }
    check("CPUID: AVX512F/DQ/BW/VL/IFMA/VBMI, VAES, VPCLMULQDQ", all);
    check("XCR0: SSE|AVX|opmask|ZMM_Hi256|Hi16_ZMM", (xcr0 & 0xE6) == 0xE6);
    if (failures) {
        printf("cpuprobe: missing features, instructions not run\n");
        return 1;
    }

    int ok_ifma = 1, ok_aes = 1, ok_clmul = 1;
    for (int iter = 0; iter < 64; iter++) {
        uint64_t a[8], b[8], c[8], lo[8], hi[8];
        fill(a, 8);
        fill(b, 8);
        fill(c, 8);
        run_ifma(lo, hi, a, b, c);
        for (int i = 0; i < 8; i++) {
            ok_ifma &= lo[i] == ref_madd52lo(a[i], b[i], c[i]);
            ok_ifma &= hi[i] == ref_madd52hi(a[i], b[i], c[i]);
        }

        uint64_t in[8], rk[8], out[8], want[8];
        fill(in, 8);
        fill(rk, 8);
        run_vaes((uint8_t *)out, (const uint8_t *)in, (const uint8_t *)rk);
        for (int l = 0; l < 4; l++) {
            ref_aesenc((uint8_t *)&want[2 * l], (const uint8_t *)&in[2 * l],
                       (const uint8_t *)&rk[2 * l]);
        }
        ok_aes &= memcmp(out, want, sizeof(out)) == 0;

        run_clmul(out, in, rk);
        for (int l = 0; l < 4; l++) {
            ref_clmul(&want[2 * l], in[2 * l], rk[2 * l + 1]);
        }
        ok_clmul &= memcmp(out, want, sizeof(out)) == 0;
    }
    check("vpmadd52luq/vpmadd52huq zmm vs C (64x8)", ok_ifma);
    check("vaesenc zmm vs C (64x4 blocks)", ok_aes);
    check("vpclmulqdq zmm vs C (64x4)", ok_clmul);

    printf("mbc_cpu_features=%#" PRIx64 "\n", mbc_cpu_features());
    printf("mbc_impl_name(RSA)=%s mbc_impl_name(GCM)=%s\n", mbc_impl_name(MBC_ALG_RSA),
           mbc_impl_name(MBC_ALG_GCM));
    check("library selects ifma for RSA", strcmp(mbc_impl_name(MBC_ALG_RSA), "ifma") == 0);
    check("library selects vaes512 for GCM", strcmp(mbc_impl_name(MBC_ALG_GCM), "vaes512") == 0);
    printf("cpuprobe: %s\n", failures ? "FAILED" : "all ok");
    return failures ? 1 : 0;
}
