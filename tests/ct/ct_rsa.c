/*
 * ct_rsa.c - the constant-time check of RSA private keys and the private
 * operation, for a MemorySanitizer build (meson -Dct_check=true; see
 * tests/ct/meson.build).
 *
 * For 2048, 3072 and 4096 bits it takes the private key of the first test
 * group of the Wycheproof rsa_pkcs1_<bits>_test.json and poisons its secret
 * components (p, q, dp, dq, qinv, each given with CTK_PAD poisoned leading zero
 * bytes) before mbc_rsa_priv_key_new, so key creation is checked too: the
 * conversions, the size, parity, p * q == n and range checks, the Montgomery
 * constants and the consistency checks (p != q, q qinv == 1 mod p, e dp == 1
 * mod (p-1), e dq == 1 mod (q-1)). n and e are public. Bad keys (dp = 0,
 * dq = 0, qinv = 1, a wrong e, p and q swapped) must get their error with no
 * report either. Then the 8 poisoned inputs go through
 * mbc_rsa_private_crt_mb8 on the ifma kernel and on the c kernel.
 * MemorySanitizer reports every branch and memory address that depends on a
 * poisoned byte; the library unpoisons (mbc_declassify) only the verdicts of
 * the key checks, the per-lane verdicts of an operation and the outputs it
 * releases. Each call must report every lane OK, the outputs must give the
 * inputs back through the public operation, and both kernels must agree.
 * The lone request runs, on ifma, the horizontal CRT halves and the
 * horizontal public exponentiation of its fault check (rsa_h2.c; checked by
 * their counters). A second call per case has lane 7's input equal to n:
 * that lane must be MBC_LANE_BAD_PARAM.
 *
 * The check is not vacuous: every secret field of the key object (p, q and
 * their Montgomery constants, dp, dq, qinv_r) must come out of key creation
 * poisoned, and what the library declassifies must have been secret just
 * before (recorded through mbc_msan_release_hook): each verdict of key
 * creation, each released output byte and, in both verdict words of an
 * operation (input below n, fault check passed), the bit of every request.
 * MSan drops carries and borrows, so without the library's spreading
 * (mbc_msan_spread*) some of these would read as public, and a branch on
 * them would go unreported.
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

#include "ct_rsa_keys.h"
#include "ct_util.h"

#define MAX_BYTES CTK_MAX_BYTES

/* load_key_material: the privateKey of the first test group of
 * rsa_pkcs1_<bits>_test.json. */
static int load_key_material(unsigned bits, struct ctk_material *km)
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
        for (int f = 0; f < CTK_COUNT && rc == 0; f++) {
            rc = ct_parse_hex_field(obj, ctk_field_names[f], km->v[f], sizeof(km->v[f]),
                                    &km->len[f]);
        }
    }
    if (rc != 0) {
        fprintf(stderr, "ct_rsa: no privateKey fields in %s\n", file);
    }
    free(text);
    return rc;
}

static void poison(const void *p, size_t len)
{
    __msan_poison(p, len);
}

/* new_key: ctk_key_new on km (the secret components poisoned). Checks that
 * it returns want and that each of the verdicts declassified (verdicts of
 * them) was secret. Returns 0 if so. */
static int new_key(mbc_rsa_priv_key **key, const struct ctk_material *km, mbc_err want,
                   size_t verdicts, const char *what)
{
    ct_record(1);
    mbc_err err = ctk_key_new(key, km, poison);
    ct_record(0);
    size_t count;
    const struct ct_release *rel = ct_releases(&count);
    if (err != want) {
        printf("# %s: key creation gave %s, expected %s\n", what, mbc_err_str(err),
               mbc_err_str(want));
        return -1;
    }
    if (rel == NULL || count != verdicts) {
        printf("# %s: %zu verdicts declassified, expected %zu\n", what, count, verdicts);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        if (rel[i].len != sizeof(uint64_t) || ct_is_public(rel[i].copy, rel[i].len)) {
            printf("# %s: key-creation verdict %zu (%zu bytes) was public before its "
                   "release\n",
                   what, i, rel[i].len);
            return -1;
        }
    }
    return 0;
}

/* digits_secret: 1 if each of the k digits at d holds a poisoned bit. */
static int digits_secret(const uint64_t *d, unsigned k)
{
    int all = 1;
    for (unsigned j = 0; j < k; j++) {
        all &= !ct_is_public(&d[j], sizeof(d[j]));
    }
    return all;
}

static int mod_secret(const struct rsa_mod_consts *c, unsigned k)
{
    return !ct_is_public(&c->m0inv, sizeof(c->m0inv)) && digits_secret(c->m, k) &&
           digits_secret(c->r1, k) && digits_secret(c->to_mont, k);
}

/* key_secret: 1 if every secret field of key came out of key creation
 * poisoned (the poison propagated through it). */
static int key_secret(const mbc_rsa_priv_key *key)
{
    const unsigned k = key->kh;
    return mod_secret(&key->p, k) && mod_secret(&key->q, k) && digits_secret(key->dp, k) &&
           digits_secret(key->dq, k) && digits_secret(key->qinv_r, k);
}

/* check_bad_keys: the inconsistent keys built from km are refused with
 * their error, with no report and secret verdicts. Returns 0 if so. */
static int check_bad_keys(const struct ctk_material *km, unsigned bits)
{
    static struct ctk_material bad;
    for (unsigned kind = 0; kind < CTK_NUM_BAD; kind++) {
        mbc_err want;
        size_t verdicts;
        char what[64];
        snprintf(what, sizeof(what), "%u-bit key, %s", bits,
                 ctk_bad(&bad, km, kind, &want, &verdicts));
        mbc_rsa_priv_key *key = NULL;
        int rc = new_key(&key, &bad, want, verdicts, what);
        mbc_rsa_priv_key_free(key);
        if (rc != 0) {
            return -1;
        }
    }
    return 0;
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
    struct ctk_material km;
    memset(c, 0, sizeof(*c));
    c->bits = bits;
    c->len = bits / 8;
    if (load_key_material(bits, &km) != 0) {
        return -1;
    }
    const uint8_t *n = km.v[CTK_N];
    size_t n_len = km.len[CTK_N];
    while (n_len > c->len && n[0] == 0) {
        n++;
        n_len--;
    }
    if (n_len != c->len) {
        fprintf(stderr, "ct_rsa: the %u-bit key has a %zu-byte modulus\n", bits, n_len);
        return -1;
    }
    memcpy(c->n, n, n_len);
    char what[32];
    snprintf(what, sizeof(what), "%u-bit key", bits);
    if (new_key(&c->priv, &km, MBC_OK, CTK_VERDICTS_ALL, what) != 0 ||
        check_bad_keys(&km, bits) != 0) {
        return -1;
    }
    if (!key_secret(c->priv)) {
        printf("# %s: a secret field of the key object is public after key creation (the "
               "poison did not propagate)\n",
               what);
        return -1;
    }
    mbc_err err =
        mbc_rsa_pub_key_new(&c->pub, km.v[CTK_N], km.len[CTK_N], km.v[CTK_E], km.len[CTK_E]);
    if (err != MBC_OK) {
        fprintf(stderr, "ct_rsa: %u-bit public key: %s\n", bits, mbc_err_str(err));
        return -1;
    }

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

/*
 * check_releases: what the last recorded call declassified was secret just
 * before: every byte of each output it released (the lanes in released) and,
 * in each of its two verdict words (input below n, fault check passed), the
 * bit of each of its slots requests (slot s: the s-th lane of the call).
 * Returns 0 if so.
 */
static int check_releases(const struct ctx *c, const char *impl, uint8_t *const out[MBC_LANES],
                          unsigned released, unsigned slots)
{
    size_t count;
    const struct ct_release *rel = ct_releases(&count);
    unsigned outs = 0, verdicts = 0;
    if (rel == NULL) {
        printf("# %s %u: too many or too long releases to record\n", impl, c->bits);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        int lane = -1;
        for (unsigned l = 0; l < MBC_LANES; l++) {
            lane = rel[i].at == out[l] ? (int)l : lane;
        }
        if (lane >= 0) {
            if (!((released >> lane) & 1u) || rel[i].len != c->len ||
                !ct_all_bytes_secret(rel[i].copy, c->len)) {
                printf("# %s %u: the output of lane %d was released with public bytes\n", impl,
                       c->bits, lane);
                return -1;
            }
            outs++;
            continue;
        }
        if (rel[i].len != sizeof(unsigned)) {
            printf("# %s %u: a release of %zu bytes that is no output\n", impl, c->bits,
                   rel[i].len);
            return -1;
        }
        for (unsigned s = 0; s < slots; s++) {
            if (!ct_bit_is_secret(rel[i].copy, s)) {
                printf("# %s %u: verdict word %u: the bit of request %u was public before its "
                       "release\n",
                       impl, c->bits, verdicts, s);
                return -1;
            }
        }
        verdicts++;
    }
    if (outs != (unsigned)__builtin_popcount(released) || verdicts != 2) {
        printf("# %s %u: %u outputs and %u verdict words released, expected %d and 2\n", impl,
               c->bits, outs, verdicts, __builtin_popcount(released));
        return -1;
    }
    return 0;
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

    ct_record(1);
    mbc_status st = mbc_rsa_private_crt_mb8(out, in, priv, c->bits, MBC_LANE_MASK_ALL);
    ct_record(0);
    if (st != 0) {
        printf("# %s %u: status 0x%08x, expected every lane OK\n", impl, c->bits, st);
        return -1;
    }
    if (check_releases(c, impl, out, MBC_LANE_MASK_ALL, MBC_LANES) != 0) {
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
        ct_record(1);
        st = mbc_rsa_private_crt_mb8(out, in, priv, c->bits, few[f]);
        ct_record(0);
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
        if (check_releases(c, impl, out, few[f], (unsigned)__builtin_popcount(few[f])) != 0) {
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
    printf("# poisoned under MemorySanitizer: p, q, dp, dq, qinv before key creation, and "
           "the 8 inputs\n");
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
        ctx_free(&c);
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
