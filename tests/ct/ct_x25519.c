/*
 * ct_x25519.c - the MemorySanitizer constant-time check of X25519: the 8
 * scalars are poisoned (secret), then mbc_x25519_mb8 (derive, with good and
 * low-order peers), mbc_x25519_public_key_mb8 and mbc_x25519_keygen_mb8
 * (whose private keys come from the OS generator and are marked secret by
 * the library itself) run on the "ifma", "adx" and "c" implementations, with all 8
 * lanes, with 3 lanes and with one lane (the single-request kernels). MSan
 * reports any branch or memory address that depends on a scalar; the
 * library unpoisons only what it releases (the outputs, the per-lane
 * verdicts). The results are checked against RFC 7748's vectors and across
 * the kernels, and they must come back public.
 *
 * Controls, which show that the check can fail: --leaky (a ladder that
 * branches on the scalar's bits) and --leaky-index (a table lookup indexed
 * by a scalar byte). MSan must stop the process with a report; if it does
 * not, the program exits 0 and the should_fail test fails.
 *
 * Output: TAP, one case per operation and implementation; one this CPU or
 * build cannot run is a "# SKIP" case. Links nothing but the library and
 * libc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbcrypto.h"

#include "ct_util.h"

#define LEN MBC_X25519_LEN

/* RFC 7748 section 5.2 (vector 1) and 6.1 (Alice). */
static const char rfc_k[] = "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4";
static const char rfc_u[] = "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c";
static const char rfc_r[] = "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552";
static const char alice_k[] = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
static const char alice_p[] = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";

static void unhex(uint8_t out[LEN], const char *s)
{
    for (int i = 0; i < LEN; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

struct ctx {
    uint8_t k[MBC_LANES][LEN];  /* the scalars, never poisoned */
    uint8_t ks[MBC_LANES][LEN]; /* poisoned copies */
    uint8_t u[MBC_LANES][LEN];  /* peers: lane 5 is u = 1 (low order) */
    uint8_t out[MBC_LANES][LEN];
    uint8_t first[2][MBC_LANES][LEN]; /* derive and public key of the first kernel */
    int have_first;
};

static void ctx_init(struct ctx *c)
{
    memset(c, 0, sizeof(*c));
    ct_rng_seed(0x7848323535313921ull);
    for (unsigned l = 0; l < MBC_LANES; l++) {
        for (int i = 0; i < LEN; i++) {
            c->k[l][i] = ct_rng_byte();
            c->u[l][i] = ct_rng_byte();
        }
    }
    unhex(c->k[0], rfc_k);
    unhex(c->u[0], rfc_u);
    unhex(c->k[1], alice_k);
    memset(c->u[5], 0, LEN);
    c->u[5][0] = 1;
    for (unsigned l = 0; l < MBC_LANES; l++) {
        memcpy(c->ks[l], c->k[l], LEN);
        __msan_poison(c->ks[l], LEN);
    }
}

/* released: the output bytes of the lanes of mask are public. */
static int released(const struct ctx *c, unsigned mask, const char *what)
{
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if (((mask >> l) & 1u) && !ct_is_public(c->out[l], LEN)) {
            printf("# %s: lane %u's output is not public\n", what, l);
            return -1;
        }
    }
    return 0;
}

/*
 * run_calls: derive (pub == 0) or public key (pub == 1) with every lane
 * mask of masks: codes (lane 5's peer u = 1 is low order), lane 0's derive
 * (RFC 7748 5.2) and lane 1's public key (6.1), and every lane against the
 * first kernel's results.
 */
static int run_calls(struct ctx *c, const char *impl, int pub)
{
    static const unsigned masks[] = {0xFF, 0x29, 0x20, 0x02, 0x01};
    const char *what = pub ? "public key" : "derive";
    uint8_t *o[MBC_LANES];
    const uint8_t *k[MBC_LANES], *u[MBC_LANES];
    uint8_t want[LEN];
    const unsigned want_lane = pub ? 1 : 0;
    unhex(want, pub ? alice_p : rfc_r);
    for (unsigned l = 0; l < MBC_LANES; l++) {
        o[l] = c->out[l];
        k[l] = c->ks[l];
        u[l] = c->u[l];
    }
    for (unsigned m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
        memset(c->out, 0xA5, sizeof(c->out));
        const mbc_status st =
            pub ? mbc_x25519_public_key_mb8(o, k, masks[m]) : mbc_x25519_mb8(o, k, u, masks[m]);
        if (!ct_is_public(&st, sizeof(st))) {
            printf("# %s %s: the status word is not public\n", impl, what);
            return -1;
        }
        if (released(c, masks[m], impl) != 0) {
            return -1;
        }
        for (unsigned l = 0; l < MBC_LANES; l++) {
            if (!((masks[m] >> l) & 1u)) {
                continue;
            }
            const unsigned want_code = l == 5 && !pub ? MBC_LANE_LOW_ORDER : MBC_LANE_OK;
            if (mbc_lane_code(st, l) != want_code) {
                printf("# %s %s mask 0x%02x lane %u: %s\n", impl, what, masks[m], l,
                       mbc_lane_code_str(mbc_lane_code(st, l)));
                return -1;
            }
            if ((l == want_lane && memcmp(c->out[l], want, LEN) != 0) ||
                (c->have_first && memcmp(c->out[l], c->first[pub][l], LEN) != 0)) {
                printf("# %s %s mask 0x%02x lane %u: wrong result\n", impl, what, masks[m], l);
                return -1;
            }
            if (m == 0) {
                memcpy(c->first[pub][l], c->out[l], LEN);
            }
        }
    }
    return 0;
}

static int run_derive(struct ctx *c, const char *impl)
{
    return run_calls(c, impl, 0);
}

static int run_public(struct ctx *c, const char *impl)
{
    return run_calls(c, impl, 1);
}

/* keygen: the library poisons the fresh private keys itself; both halves
 * of every pair must come back public, and the public key must be the
 * private key's (checked with the public-key call on the returned bytes). */
static int run_keygen(struct ctx *c, const char *impl)
{
    static const unsigned masks[] = {0xFF, 0x44, 0x80};
    uint8_t priv[MBC_LANES][LEN], check[LEN];
    uint8_t *sp[MBC_LANES], *pp[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        sp[l] = priv[l];
        pp[l] = c->out[l];
    }
    for (unsigned m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
        const mbc_status st = mbc_x25519_keygen_mb8(sp, pp, masks[m]);
        if (mbc_status_ok_mask(st) != masks[m]) {
            printf("# %s keygen mask 0x%02x: status 0x%08x\n", impl, masks[m], st);
            return -1;
        }
        if (released(c, masks[m], impl) != 0) {
            return -1;
        }
        for (unsigned l = 0; l < MBC_LANES; l++) {
            if (!((masks[m] >> l) & 1u)) {
                continue;
            }
            if (!ct_is_public(priv[l], LEN)) {
                printf("# %s keygen lane %u: the private key is not public to its caller\n", impl,
                       l);
                return -1;
            }
            if (mbc_x25519_public_key(check, priv[l]) != MBC_OK ||
                memcmp(check, c->out[l], LEN) != 0) {
                printf("# %s keygen lane %u: public key does not match\n", impl, l);
                return -1;
            }
        }
    }
    return 0;
}

static int run_checks(void)
{
    static const char *const impls[] = {"ifma", "adx", "c"};
    /* the feature words that select them: everything; no AVX-512 (the
     * scalar tier); nothing */
    static const uint64_t words[] = {
        ~(uint64_t)0,
        ~(uint64_t)(MBC_CPU_AVX512F | MBC_CPU_AVX512BW | MBC_CPU_AVX512VL | MBC_CPU_AVX512IFMA), 0};
    static const char *const ops[] = {"derive", "public key", "keygen"};
    int (*const fns[])(struct ctx *, const char *) = {run_derive, run_public, run_keygen};
    static struct ctx c;
    int failed = 0;
    unsigned tap = 0;
    ctx_init(&c);
    printf("1..9\n");
    printf("# poisoned under MemorySanitizer: the 8 scalars (derive, public key) and the "
           "private keys keygen draws\n");
    for (size_t i = 0; i < 3; i++) {
        const int have = ct_select_impl(MBC_ALG_X25519, impls[i], words[i]);
        for (size_t o = 0; o < 3; o++) {
            tap++;
            if (!have) {
                printf("ok %u # SKIP %s %s: kernel not available (CPU features 0x%llx, IFMA "
                       "path needs 0x%llx, adx 0x%llx, or built without it)\n",
                       tap, impls[i], ops[o], (unsigned long long)mbc_cpu_features(),
                       (unsigned long long)MBC_CPU_IFMA_PATH,
                       (unsigned long long)(MBC_CPU_BMI2 | MBC_CPU_ADX));
                continue;
            }
            if (fns[o](&c, impls[i]) == 0) {
                printf("ok %u - %s %s: poisoned scalars, no MSan report, results right and "
                       "public\n",
                       tap, impls[i], ops[o]);
            } else {
                printf("not ok %u - %s %s\n", tap, impls[i], ops[o]);
                failed++;
            }
        }
        c.have_first |= have;
    }
    mbc_cpu_restrict(~(uint64_t)0);
    return failed ? 1 : 0;
}

/* Controls: deliberately leaky functions on the poisoned scalars. */
static volatile unsigned sink;

/* leaky_ladder_bits: what a naive ladder does, a branch per scalar bit
 * (here: a volatile store only when the bit is set, which no compiler can
 * turn into arithmetic). */
__attribute__((noinline)) static unsigned leaky_ladder_bits(const uint8_t *k)
{
    for (int bit = 254; bit >= 0; bit--) {
        if ((k[bit / 8] >> (bit % 8)) & 1u) {
            sink = (unsigned)bit;
        }
    }
    return sink;
}

/* leaky_window: a table lookup whose address is a secret scalar byte. */
__attribute__((noinline)) static unsigned leaky_window(const uint8_t *k)
{
    static uint8_t table[256];
    for (unsigned i = 0; i < 256; i++) {
        table[i] = (uint8_t)(i * 29u + 7u);
    }
    return table[k[3]];
}

static int run_control(int index)
{
    static struct ctx c;
    ctx_init(&c);
    printf("# control: %s on a poisoned scalar; MSan must report it\n",
           index ? "a table lookup indexed by a scalar byte" : "a branch on each scalar bit");
    fflush(stdout);
    sink = index ? leaky_window(c.ks[2]) : leaky_ladder_bits(c.ks[2]);
    printf("# control NOT caught: MemorySanitizer reported nothing\n");
    return 0;
}

int main(int argc, char **argv)
{
    return ct_main(argc, argv, run_checks, run_control);
}
