/*
 * ct_valgrind_x25519.c - the valgrind memcheck constant-time check of the
 * shipped scalar X25519 kernels (src/x25519/x25519_adx.c, the gcc release
 * objects of libmbcrypto.a), called directly.
 *
 * Why not through the library's calls, as tests/ct_valgrind.c does for the
 * portable path: valgrind 3.19 executes MULX, ADCX and ADOX, but the CPUID
 * it shows its guest clears the ADX bit, so the library never selects the
 * scalar tier under valgrind (and a test may only remove features). This
 * program links the static library, whose hidden kernel symbols a static
 * link still resolves, and runs the kernels on scalars marked undefined:
 * memcheck reports every conditional jump and every address computed from
 * them. The outputs are declassified (as the glue does) before they are
 * compared with the same kernels' results on defined scalars and with RFC
 * 7748's vectors.
 *
 * Cases: 16 derives (u of RFC 7748 5.2, random u, u = 1 of low order, u =
 * 9) and 16 public keys, with random clamped scalars and RFC 7748's. The
 * memcheck error count must not grow. Output: TAP; exit 77 (skip) when the
 * build has no scalar kernels or the CPU lacks BMI2/ADX; every case fails
 * when not under valgrind.
 */
#include <stdio.h>
#include <string.h>

#include <valgrind/memcheck.h>

#include "mbcrypto.h"
#include "x25519/x25519_kern.h"

#define LEN MBC_X25519_LEN
#define CASES 16

#if MBC_HAVE_ADX
static void unhex(uint8_t out[LEN], const char *s)
{
    for (int i = 0; i < LEN; i++) {
        unsigned v = 0;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) {
            v = 0;
        }
        out[i] = (uint8_t)v;
    }
}

/* to_rows: slot 0 of 5 mb52 rows from a 32-byte little-endian string. */
static void to_rows(mb52_row *r, const uint8_t x[LEN])
{
    memset(r, 0, X25519_DIGITS * sizeof(mb52_row));
    for (unsigned bit = 0; bit < 256; bit++) {
        r[bit / 52][0] |= (uint64_t)((x[bit / 8] >> (bit % 8)) & 1u) << (bit % 52);
    }
}

static void from_rows(uint8_t x[LEN], const mb52_row *r)
{
    memset(x, 0, LEN);
    for (unsigned bit = 0; bit < 256; bit++) {
        x[bit / 8] |= (uint8_t)(((r[bit / 52][0] >> (bit % 52)) & 1u) << (bit % 8));
    }
}

static uint64_t rng = 0x6164785f76616c67ull;
static uint8_t rnd_byte(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint8_t)(rng >> 24);
}

/* run: the kernel fn on (k, u), secret: k marked undefined first; the result
 * and the nonzero bit declassified. Returns 1 when the result of a secret
 * run held no undefined bit (memcheck lost track of the scalar). */
static int run(x25519_kern_fn *fn, uint8_t out[LEN], unsigned *nonzero, const uint8_t k[LEN],
               const uint8_t u[LEN], int secret)
{
    MBC_ALIGN64 mb52_row kr[X25519_DIGITS], ur[X25519_DIGITS], r[X25519_DIGITS];
    to_rows(kr, k);
    to_rows(ur, u);
    memset(r, 0, sizeof(r));
    if (secret) {
        (void)VALGRIND_MAKE_MEM_UNDEFINED(kr, sizeof(kr));
    }
    struct x25519_args a = {kr, ur, r, 0};
    fn(&a);
    /* the result derives from the scalar: memcheck must see it (else the
     * check would pass for a kernel it cannot follow) */
    int lost = 0;
    if (secret) {
        uint8_t vbits[X25519_DIGITS * sizeof(uint64_t)];
        uint64_t digits[X25519_DIGITS];
        for (unsigned j = 0; j < X25519_DIGITS; j++) {
            memcpy(&digits[j], &r[j][0], sizeof(uint64_t));
        }
        unsigned undefined = 0;
        if (VALGRIND_GET_VBITS(digits, vbits, sizeof(digits)) == 1) {
            for (size_t i = 0; i < sizeof(vbits); i++) {
                undefined += (unsigned)__builtin_popcount(vbits[i]);
            }
        }
        lost = undefined == 0;
    }
    (void)VALGRIND_MAKE_MEM_DEFINED(r, sizeof(r));
    (void)VALGRIND_MAKE_MEM_DEFINED(&a.nonzero, sizeof(a.nonzero));
    from_rows(out, r);
    *nonzero = a.nonzero & 1u;
    return lost;
}

int main(void)
{
    if ((mbc_cpu_features() & (MBC_CPU_BMI2 | MBC_CPU_ADX)) != (MBC_CPU_BMI2 | MBC_CPU_ADX) &&
        !RUNNING_ON_VALGRIND) {
        printf("1..0 # SKIP the CPU lacks BMI2 or ADX\n");
        return 77;
    }
    static const char rfc_k[] = "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4";
    static const char rfc_u[] = "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c";
    static const char rfc_r[] = "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552";
    static const char alice_k[] =
        "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
    static const char alice_p[] =
        "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
    int failed = 0;
    printf("1..2\n");
    if (!RUNNING_ON_VALGRIND) {
        printf("not ok 1 - not under valgrind: run through meson test\n");
        printf("not ok 2 - not under valgrind\n");
        return 1;
    }
    for (int pub = 0; pub < 2; pub++) {
        const unsigned long before = (unsigned long)VALGRIND_COUNT_ERRORS;
        int bad = 0;
        for (unsigned c = 0; c < CASES; c++) {
            uint8_t k[LEN], u[LEN], want[LEN], ref[LEN], out[LEN];
            for (int i = 0; i < LEN; i++) {
                k[i] = rnd_byte();
                u[i] = rnd_byte();
            }
            memset(want, 0, LEN);
            if (c == 0) {
                unhex(k, pub ? alice_k : rfc_k);
                unhex(u, rfc_u);
                unhex(want, pub ? alice_p : rfc_r);
            } else if (c == 1) {
                memset(u, 0, LEN);
                u[0] = 1; /* low order: the result is 0 */
            } else if (c == 2 || pub) {
                memset(u, 0, LEN);
                u[0] = 9;
            }
            k[0] &= 248; /* the glue's clamping and u masking */
            k[31] = (uint8_t)((k[31] & 127) | 64);
            u[31] &= 127;
            unsigned nz, nz_ref;
            x25519_kern_fn *fn = pub ? mbc_x25519_base_adx : mbc_x25519_ladder_adx;
            run(fn, ref, &nz_ref, k, u, 0);
            if (run(fn, out, &nz, k, u, 1) && c != 1) {
                printf("# %s case %u: the result holds no undefined bit\n",
                       pub ? "public key" : "derive", c);
                bad = 1;
            }
            if (memcmp(out, ref, LEN) != 0 || nz != nz_ref ||
                (c == 0 && memcmp(out, want, LEN) != 0) || (c == 1 && !pub && nz != 0)) {
                printf("# %s case %u: wrong result\n", pub ? "public key" : "derive", c);
                bad = 1;
            }
        }
        const unsigned long reports = (unsigned long)VALGRIND_COUNT_ERRORS - before;
        if (bad || reports != 0) {
            printf("not ok %d - adx %s: %lu memcheck report(s) (see stderr)%s\n", pub + 1,
                   pub ? "public key" : "derive", reports, bad ? ", wrong results" : "");
            failed++;
        } else {
            printf("ok %d - adx %s: %u undefined scalars, no memcheck report, results right\n",
                   pub + 1, pub ? "public key" : "derive", CASES);
        }
    }
    return failed ? 1 : 0;
}
#else
int main(void)
{
    printf("1..0 # SKIP built without the scalar X25519 kernels\n");
    return 77;
}
#endif
