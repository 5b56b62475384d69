/*
 * ct_rsa.c - the constant-time check of the RSA private operation, for a
 * MemorySanitizer build (meson -Dct_check=true; see tests/ct/meson.build).
 *
 * For 2048, 3072 and 4096 bits it builds the private key of the first test
 * group of the Wycheproof rsa_pkcs1_<bits>_test.json, poisons the key's
 * secret fields (p and q with their Montgomery constants, dp, dq, qinv_r)
 * and the 8 inputs, and runs mbc_rsa_private_crt_mb8 on the ifma kernel and
 * on the c kernel. MemorySanitizer reports every branch and memory address
 * that depends on a poisoned byte; the library unpoisons (mbc_declassify)
 * only the per-lane verdicts and the outputs it releases. Each call must
 * report every lane OK, the outputs must give the inputs back through the
 * public operation, and both kernels must agree. The lone request runs, on
 * ifma, the horizontal CRT halves and the horizontal public exponentiation
 * of its fault check (rsa_h2.c; checked by their counters). A second call
 * per case has
 * lane 7's input equal to n: that lane must be MBC_LANE_BAD_PARAM.
 *
 * Controls, which show that the check can fail: --leaky (a branch on a
 * poisoned key digit) and --leaky-index (a table lookup indexed by a
 * poisoned input byte). MSan must stop the process with a report; if it
 * does not, the program exits 0 and the should_fail test fails.
 *
 * Output: TAP, one case per size and kernel; a kernel this CPU or build
 * cannot run is a "# SKIP" case. Links nothing but the library and libc:
 * uninstrumented libraries would give MSan false reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbcrypto.h"
#include "rsa/rsa_internal.h"
#include "rsa/rsa_kern.h"

#include "ct_util.h"

#define MAX_BYTES 512

/* The privateKey fields of a Wycheproof RSA test group, in this order. */
enum { F_N, F_E, F_P, F_Q, F_DP, F_DQ, F_QINV, F_COUNT };
static const char *const field_names[F_COUNT] = {
    "modulus", "publicExponent", "prime1", "prime2", "exponent1", "exponent2", "coefficient",
};

struct key_material {
    uint8_t v[F_COUNT][MAX_BYTES + 1];
    size_t len[F_COUNT];
};

/* load_key_material: the privateKey of the first test group of
 * rsa_pkcs1_<bits>_test.json. */
static int load_key_material(unsigned bits, struct key_material *km)
{
    char file[64];
    snprintf(file, sizeof(file), "rsa_pkcs1_%u_test.json", bits);
    char *text = ct_read_vectors(file);
    if (text == NULL) {
        return -1;
    }
    int rc = -1;
    const char *obj = text;
    while ((obj = strstr(obj, "\"privateKey\"")) != NULL) {
        const char *s = ct_skip_space(obj + strlen("\"privateKey\""));
        if (*s == ':' && *ct_skip_space(s + 1) == '{') {
            obj = ct_skip_space(s + 1);
            break;
        }
        obj += 1;
    }
    if (obj != NULL) {
        rc = 0;
        for (int f = 0; f < F_COUNT && rc == 0; f++) {
            rc = ct_parse_hex_field(obj, field_names[f], km->v[f], sizeof(km->v[f]), &km->len[f]);
        }
    }
    if (rc != 0) {
        fprintf(stderr, "ct_rsa: no privateKey fields in %s\n", file);
    }
    free(text);
    return rc;
}

/* poison_key: marks every secret field of key as uninitialised for MSan. */
static void poison_key(mbc_rsa_priv_key *key)
{
    __msan_poison(&key->p, sizeof(key->p));
    __msan_poison(&key->q, sizeof(key->q));
    __msan_poison(key->dp, sizeof(key->dp));
    __msan_poison(key->dq, sizeof(key->dq));
    __msan_poison(key->qinv_r, sizeof(key->qinv_r));
}

/* The keys, 8 reference inputs and buffers of one modulus size. */
struct ctx {
    unsigned bits;
    size_t len;
    uint8_t n[MAX_BYTES]; /* the modulus, exactly len bytes */
    mbc_rsa_priv_key *priv;
    mbc_rsa_pub_key *pub;
    uint8_t ref[MBC_LANES][MAX_BYTES]; /* the inputs, never poisoned */
    uint8_t in[MBC_LANES][MAX_BYTES];  /* poisoned copies of ref */
    uint8_t out[MBC_LANES][MAX_BYTES];
    uint8_t first_out[MBC_LANES][MAX_BYTES]; /* the outputs of the first kernel run */
    int have_first;
};

static int ctx_init(struct ctx *c, unsigned bits)
{
    struct key_material km;
    memset(c, 0, sizeof(*c));
    c->bits = bits;
    c->len = bits / 8;
    if (load_key_material(bits, &km) != 0) {
        return -1;
    }
    const uint8_t *n = km.v[F_N];
    size_t n_len = km.len[F_N];
    while (n_len > c->len && n[0] == 0) {
        n++;
        n_len--;
    }
    if (n_len != c->len) {
        fprintf(stderr, "ct_rsa: the %u-bit key has a %zu-byte modulus\n", bits, n_len);
        return -1;
    }
    memcpy(c->n, n, n_len);
    const mbc_rsa_priv_components comp = {
        km.v[F_N],   km.len[F_N],  km.v[F_E],    km.len[F_E],    km.v[F_P],
        km.len[F_P], km.v[F_Q],    km.len[F_Q],  km.v[F_DP],     km.len[F_DP],
        km.v[F_DQ],  km.len[F_DQ], km.v[F_QINV], km.len[F_QINV],
    };
    mbc_err err = mbc_rsa_priv_key_new(&c->priv, &comp);
    if (err == MBC_OK) {
        err = mbc_rsa_pub_key_new(&c->pub, km.v[F_N], km.len[F_N], km.v[F_E], km.len[F_E]);
    }
    if (err != MBC_OK) {
        fprintf(stderr, "ct_rsa: %u-bit key: %s\n", bits, mbc_err_str(err));
        return -1;
    }
    poison_key(c->priv);

    /* lane 0: 0, lane 1: 1, lane 2: n - 1, the others random below n */
    ct_rng_seed(0x9E3779B97F4A7C15ull ^ bits);
    for (unsigned l = 0; l < MBC_LANES; l++) {
        uint8_t *r = c->ref[l];
        if (l == 0 || l == 1) {
            memset(r, 0, c->len);
            r[c->len - 1] = (uint8_t)l;
        } else if (l == 2) {
            memcpy(r, c->n, c->len);
            r[c->len - 1] -= 1; /* n is odd */
        } else {
            for (size_t i = 0; i < c->len; i++) {
                r[i] = ct_rng_byte();
            }
            r[0] = (uint8_t)(r[0] % c->n[0]);
        }
        memcpy(c->in[l], r, c->len);
        __msan_poison(c->in[l], c->len);
    }
    return 0;
}

static void ctx_free(struct ctx *c)
{
    mbc_rsa_priv_key_free(c->priv);
    mbc_rsa_pub_key_free(c->pub);
}

/* run_case: the checks of one size on the selected kernel. Returns 0 when
 * every check passed (MSan stops the process on any report before that). */
static int run_case(struct ctx *c, const char *impl)
{
    uint8_t *out[MBC_LANES];
    const uint8_t *in[MBC_LANES];
    const mbc_rsa_priv_key *priv[MBC_LANES];
    const mbc_rsa_pub_key *pub[MBC_LANES];
    uint8_t back[MBC_LANES][MAX_BYTES];
    uint8_t *back_p[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        memset(c->out[l], 0xA5, c->len);
        out[l] = c->out[l];
        in[l] = c->in[l];
        priv[l] = c->priv;
        pub[l] = c->pub;
        back_p[l] = back[l];
    }

    mbc_status st = mbc_rsa_private_crt_mb8(out, in, priv, c->bits, MBC_LANE_MASK_ALL);
    if (st != 0) {
        printf("# %s %u: status 0x%08x, expected every lane OK\n", impl, c->bits, st);
        return -1;
    }
    st = mbc_rsa_public_mb8(back_p, (const uint8_t *const *)out, pub, c->bits, MBC_LANE_MASK_ALL);
    if (st != 0) {
        printf("# %s %u: public status 0x%08x\n", impl, c->bits, st);
        return -1;
    }
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if (memcmp(back[l], c->ref[l], c->len) != 0) {
            printf("# %s %u lane %u: out^e != in\n", impl, c->bits, l);
            return -1;
        }
        if (c->have_first && memcmp(c->out[l], c->first_out[l], c->len) != 0) {
            printf("# %s %u lane %u: the kernels disagree\n", impl, c->bits, l);
            return -1;
        }
        memcpy(c->first_out[l], c->out[l], c->len);
    }
    c->have_first = 1;

    /* three requests (lanes 0, 1, 3): both CRT halves share one pass; one
     * request (lane 2): the single-request kernel */
    static const unsigned few[] = {0x0B, 0x04};
    for (unsigned f = 0; f < 2; f++) {
        for (unsigned l = 0; l < MBC_LANES; l++) {
            memset(c->out[l], 0xA5, c->len);
        }
#if MBC_HAVE_IFMA
        const unsigned long h2 = mbc_rsa_kern_hits_h2, h1 = mbc_rsa_kern_hits_h1;
#endif
        st = mbc_rsa_private_crt_mb8(out, in, priv, c->bits, few[f]);
#if MBC_HAVE_IFMA
        /* the lone request on ifma ran the horizontal halves and the
         * horizontal public exponentiation of its fault check */
        const unsigned long want_h = strcmp(impl, "ifma") == 0 && few[f] == 0x04 ? 1 : 0;
        if (mbc_rsa_kern_hits_h2 - h2 != want_h || mbc_rsa_kern_hits_h1 - h1 != want_h) {
            printf("# %s %u: %lu horizontal CRT runs and %lu horizontal checks with lanes "
                   "0x%02x, expected %lu\n",
                   impl, c->bits, mbc_rsa_kern_hits_h2 - h2, mbc_rsa_kern_hits_h1 - h1, few[f], want_h);
            return -1;
        }
#endif
        if (mbc_status_ok_mask(st) != few[f]) {
            printf("# %s %u: status 0x%08x with lanes 0x%02x\n", impl, c->bits, st, few[f]);
            return -1;
        }
        for (unsigned l = 0; l < MBC_LANES; l++) {
            if (((few[f] >> l) & 1u) && memcmp(c->out[l], c->first_out[l], c->len) != 0) {
                printf("# %s %u lane %u: lanes 0x%02x differ\n", impl, c->bits, l, few[f]);
                return -1;
            }
        }
    }

    /* lane 7's input is n itself (poisoned too): rejected by the declassified
     * below-n verdict, output zeroed, the other lanes unaffected */
    uint8_t bad[MAX_BYTES];
    memcpy(bad, c->n, c->len);
    __msan_poison(bad, c->len);
    in[7] = bad;
    st = mbc_rsa_private_crt_mb8(out, in, priv, c->bits, MBC_LANE_MASK_ALL);
    const mbc_status want = (mbc_status)MBC_LANE_BAD_PARAM << 28;
    if (st != want) {
        printf("# %s %u: status 0x%08x with in[7] = n, expected 0x%08x\n", impl, c->bits, st, want);
        return -1;
    }
    for (unsigned l = 0; l < MBC_LANES; l++) {
        for (size_t i = 0; i < c->len; i++) {
            uint8_t expect = l == 7 ? 0 : c->first_out[l][i];
            if (c->out[l][i] != expect) {
                printf("# %s %u lane %u: wrong output with in[7] = n\n", impl, c->bits, l);
                return -1;
            }
        }
    }
    return 0;
}

/* select_impl: the RSA kernel name after selecting it, NULL if unavailable. */
static const char *select_impl(const char *want)
{
    return ct_select_impl(MBC_ALG_RSA, want, strcmp(want, "c") == 0 ? 0 : ~(uint64_t)0) ? want
                                                                                        : NULL;
}

static int run_checks(void)
{
    static const unsigned sizes[] = {2048, 3072, 4096};
    static const char *const impls[] = {"ifma", "c"};
    static struct ctx c;
    int failed = 0;
    unsigned tap = 0;
    printf("1..%zu\n", (sizeof(sizes) / sizeof(sizes[0])) * 2);
    printf("# poisoned under MemorySanitizer: p, q (with their Montgomery constants), dp, "
           "dq, qinv_r and the 8 inputs\n");
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        int init_ok = ctx_init(&c, sizes[s]) == 0;
        for (size_t i = 0; i < 2; i++) {
            tap++;
            if (!init_ok) {
                printf("not ok %u - %s %u: key setup\n", tap, impls[i], sizes[s]);
                failed++;
                continue;
            }
            if (select_impl(impls[i]) == NULL) {
                printf("ok %u # SKIP %s %u: kernel not available (CPU features 0x%llx, IFMA "
                       "path needs 0x%llx, or built without it)\n",
                       tap, impls[i], sizes[s], (unsigned long long)mbc_cpu_features(),
                       (unsigned long long)MBC_CPU_IFMA_PATH);
                continue;
            }
            if (run_case(&c, impls[i]) == 0) {
                printf("ok %u - %s %u: 8 poisoned lanes, no MSan report, round trip OK\n", tap,
                       impls[i], sizes[s]);
            } else {
                printf("not ok %u - %s %u\n", tap, impls[i], sizes[s]);
                failed++;
            }
        }
        if (init_ok) {
            ctx_free(&c);
        }
    }
    mbc_cpu_restrict(~(uint64_t)0);
    return failed ? 1 : 0;
}

/* Controls: deliberately leaky functions on the poisoned data. */
static volatile unsigned sink;

/* leaky_dp_bits: the bit length of dp found by skipping its leading zero
 * digits, as rule 1 of DESIGN.md section 5 forbids: the loop branches on
 * secret digits. */
__attribute__((noinline)) static unsigned leaky_dp_bits(const mbc_rsa_priv_key *key)
{
    unsigned j = key->kh;
    while (j > 0 && key->dp[j - 1] == 0) {
        j--;
    }
    return j * MB52_BITS;
}

/* leaky_sbox: an S-box lookup whose address is a secret input byte. */
__attribute__((noinline)) static unsigned leaky_sbox(const uint8_t *secret)
{
    static uint8_t sbox[256];
    for (unsigned i = 0; i < 256; i++) {
        sbox[i] = (uint8_t)(i * 167u + 13u);
    }
    return sbox[secret[1]];
}

static int run_control(int index)
{
    static struct ctx c;
    if (ctx_init(&c, 2048) != 0) {
        return 2;
    }
    printf("# control: %s on the poisoned 2048-bit key/input; MSan must report it\n",
           index ? "an S-box lookup indexed by a secret byte" : "a branch on a secret digit");
    fflush(stdout);
    sink = index ? leaky_sbox(c.in[3]) : leaky_dp_bits(c.priv);
    printf("# control NOT caught: MemorySanitizer reported nothing\n");
    ctx_free(&c);
    return 0;
}

int main(int argc, char **argv)
{
    return ct_main(argc, argv, run_checks, run_control);
}
