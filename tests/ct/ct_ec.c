/*
 * ct_ec.c - the constant-time check of P-256 and P-384 signing, ECDH and key
 * generation, for a MemorySanitizer build (meson -Dct_check=true; see
 * tests/ct/meson.build).
 *
 * Per curve and kernel (ifma; adx, the scalar 64-bit tier; c): the private
 * scalars d are poisoned before mbc_ec_priv_key_new (key creation, with its
 * range check and Q = d G, is under the check too), the caller's nonces k
 * and the ECDH peer points (their format, range and curve checks included)
 * are poisoned before the calls; the library's own random nonces and keys
 * are poisoned where they are drawn (mbc_random_bytes, mbc_classify).
 * MemorySanitizer reports every branch and memory address that depends on a
 * poisoned byte; the library unpoisons (mbc_declassify) only the per-lane
 * verdicts and the outputs it releases. Every lane must come out OK
 * (signatures verify, ECDH is symmetric, generated pairs rebuild), the
 * kernels must agree, a lone request runs the single-request path (on ifma
 * the spread fixed-base kernel), the portable kernel runs both its plans
 * (8-lane batch, lanes one by one), and a poisoned off-curve peer and a
 * poisoned nonce n fail their lane alone. The key's d must still be
 * poisoned after all that (nothing declassified it). The adx kernels' inline
 * assembly is invisible to MSan: its build takes their C form (fe64.h).
 *
 * Controls: --leaky (a branch on a poisoned digit of d) and --leaky-index
 * (a table lookup indexed by a poisoned nonce byte) must be stopped by
 * MSan; if not, the program exits 0 and the should_fail test fails.
 *
 * Output: TAP, one case per curve and kernel; a kernel this CPU or build
 * cannot run is a "# SKIP" case. Links nothing but the library and libc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ec/ec_internal.h"
#include "mbcrypto.h"
#include "test_hooks.h"

#include "ct_util.h"

#define MAX_LEN 48
#define MAX_POINT 97

struct ctx {
    mbc_curve curve;
    size_t len, plen, slen;
    mbc_ec_priv_key *priv[MBC_LANES];
    mbc_ec_pub_key *pub[MBC_LANES];
    uint8_t point[MBC_LANES][MAX_POINT]; /* public, never poisoned */
    uint8_t digest[MBC_LANES][MAX_LEN];
    uint8_t k[MBC_LANES][MAX_LEN];      /* poisoned */
    uint8_t peer[MBC_LANES][MAX_POINT]; /* poisoned copies of the next lane's point */
    struct first *first;                /* the first kernel's results on this curve */
};

/* first: the results of the first full run on a curve, which every other
 * run (kernel, plan, lane mask) must give again. */
struct first {
    int have;
    uint8_t sig[MBC_LANES][2 * MAX_LEN]; /* with the nonces k */
    uint8_t secret[MBC_LANES][MAX_LEN];
};

/* ct_scalar: len bytes below n (top bit clear), never zero. */
static void ct_scalar(uint8_t *out, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        out[i] = ct_rng_byte();
    }
    out[0] &= 0x7F;
    out[len - 1] |= 1;
}

static int ctx_init(struct ctx *c, mbc_curve curve, struct first *first)
{
    memset(c, 0, sizeof(*c));
    c->first = first;
    c->curve = curve;
    c->len = mbc_ec_scalar_len(curve);
    c->plen = mbc_ec_point_len(curve);
    c->slen = mbc_ec_sig_len(curve);
    ct_rng_seed(0x5EC0DE ^ (uint64_t)curve);
    for (unsigned l = 0; l < MBC_LANES; l++) {
        uint8_t d[MAX_LEN];
        ct_scalar(d, c->len);
        if (l == 0) {
            memset(d, 0, c->len);
            d[c->len - 1] = 1; /* d = 1 */
        }
        __msan_poison(d, c->len);
        mbc_err err = mbc_ec_priv_key_new(&c->priv[l], curve, d, c->len);
        if (err == MBC_OK) {
            err = mbc_ec_priv_key_public(c->priv[l], c->point[l], sizeof(c->point[l]));
        }
        if (err == MBC_OK) {
            err = mbc_ec_pub_key_new(&c->pub[l], curve, c->point[l], c->plen);
        }
        if (err != MBC_OK || !ct_is_public(c->point[l], c->plen)) {
            fprintf(stderr, "ct_ec: key %u: %s\n", l, mbc_err_str(err));
            return -1;
        }
        for (size_t i = 0; i < c->len; i++) {
            c->digest[l][i] = ct_rng_byte();
        }
        ct_scalar(c->k[l], c->len);
        __msan_poison(c->k[l], c->len);
    }
    for (unsigned l = 0; l < MBC_LANES; l++) {
        memcpy(c->peer[l], c->point[(l + 1) % MBC_LANES], c->plen);
        __msan_poison(c->peer[l], c->plen);
    }
    return 0;
}

static void ctx_free(struct ctx *c)
{
    for (unsigned l = 0; l < MBC_LANES; l++) {
        mbc_ec_priv_key_free(c->priv[l]);
        mbc_ec_pub_key_free(c->pub[l]);
    }
}

/* verify_all: every lane of sigs (lanes in mask) verifies under its key. */
static int verify_all(const struct ctx *c, uint8_t (*sigs)[2 * MAX_LEN], unsigned mask)
{
    const uint8_t *s[MBC_LANES], *d[MBC_LANES];
    size_t dl[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        s[l] = sigs[l];
        d[l] = c->digest[l];
        dl[l] = c->len;
    }
    return mbc_status_ok_mask(mbc_ecdsa_verify_mb8(s, d, dl, (const mbc_ec_pub_key *const *)c->pub,
                                                   c->curve, mask)) == mask;
}

/* run_plan: every check on the selected kernel and plan. 0 on success. */
static int run_plan(struct ctx *c, const char *impl, int batch_plan)
{
    uint8_t sig[MBC_LANES][2 * MAX_LEN], secret[MBC_LANES][MAX_LEN];
    uint8_t d[MBC_LANES][MAX_LEN], point[MBC_LANES][MAX_POINT];
    uint8_t *sp[MBC_LANES], *xp[MBC_LANES], *dp[MBC_LANES], *pp[MBC_LANES];
    const uint8_t *dg[MBC_LANES], *kp[MBC_LANES], *peer[MBC_LANES];
    size_t dl[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        sp[l] = sig[l];
        xp[l] = secret[l];
        dp[l] = d[l];
        pp[l] = point[l];
        dg[l] = c->digest[l];
        kp[l] = c->k[l];
        peer[l] = c->peer[l];
        dl[l] = c->len;
    }
    const mbc_ec_priv_key *const *priv = (const mbc_ec_priv_key *const *)c->priv;
    mbc_test_hooks.ec_batch_plan = (unsigned)batch_plan;
    /* all lanes, a lone request, a partial batch (the batch plan: all) */
    static const unsigned masks[] = {0xFF, 0x04, 0x6B};
    for (unsigned m = 0; m < (batch_plan ? 1u : 3u); m++) {
        const unsigned mask = masks[m];
        /* signatures with the caller's (poisoned) nonces */
        mbc_status st = mbc_ecdsa_sign_k_mb8(sp, dg, dl, priv, kp, c->curve, mask);
        if (mbc_status_ok_mask(st) != mask || !verify_all(c, sig, mask)) {
            printf("# %s P-%zu: sign_k status 0x%08x with lanes 0x%02x\n", impl, c->len * 8, st,
                   mask);
            return -1;
        }
        /* ECDH with (poisoned) peer points */
        st = mbc_ecdh_mb8(xp, peer, priv, c->curve, mask);
        if (mbc_status_ok_mask(st) != mask) {
            printf("# %s P-%zu: ecdh status 0x%08x with lanes 0x%02x\n", impl, c->len * 8, st,
                   mask);
            return -1;
        }
        for (unsigned l = 0; l < MBC_LANES; l++) {
            if (!((mask >> l) & 1u)) {
                continue;
            }
            if (!ct_is_public(sig[l], c->slen) || !ct_is_public(secret[l], c->len)) {
                printf("# %s P-%zu lane %u: a released output is still secret\n", impl, c->len * 8,
                       l);
                return -1;
            }
            struct first *f = c->first;
            if (f->have && (memcmp(sig[l], f->sig[l], c->slen) != 0 ||
                            memcmp(secret[l], f->secret[l], c->len) != 0)) {
                printf("# %s P-%zu lane %u: the kernels or plans disagree\n", impl, c->len * 8, l);
                return -1;
            }
            if (!f->have && mask == 0xFF) {
                memcpy(f->sig[l], sig[l], c->slen);
                memcpy(f->secret[l], secret[l], c->len);
            }
        }
        c->first->have |= mask == 0xFF;
        /* ECDH is symmetric: lane l's secret is d_l Q_(l+1), so the next
         * lane with this lane's point gives it back */
        if (mask == 0xFF) {
            for (unsigned l = 0; l < MBC_LANES; l++) {
                uint8_t back[MAX_LEN], q[MAX_POINT];
                memcpy(q, c->point[l], c->plen);
                __msan_poison(q, c->plen);
                if (mbc_ecdh(back, q, c->plen, c->priv[(l + 1) % MBC_LANES]) != MBC_OK ||
                    memcmp(back, secret[l], c->len) != 0) {
                    printf("# %s P-%zu lane %u: ECDH is not symmetric\n", impl, c->len * 8, l);
                    return -1;
                }
            }
        }
        /* random nonces, drawn and poisoned by the library */
        st = mbc_ecdsa_sign_mb8(sp, dg, dl, priv, c->curve, mask);
        if (mbc_status_ok_mask(st) != mask || !verify_all(c, sig, mask)) {
            printf("# %s P-%zu: sign status 0x%08x with lanes 0x%02x\n", impl, c->len * 8, st,
                   mask);
            return -1;
        }
        /* key generation: the pairs rebuild */
        st = mbc_ec_keygen_mb8(dp, pp, c->curve, mask);
        if (mbc_status_ok_mask(st) != mask) {
            printf("# %s P-%zu: keygen status 0x%08x\n", impl, c->len * 8, st);
            return -1;
        }
        for (unsigned l = 0; l < MBC_LANES; l++) {
            if (!((mask >> l) & 1u)) {
                continue;
            }
            mbc_ec_priv_key *k = NULL;
            uint8_t q[MAX_POINT];
            __msan_poison(d[l], c->len); /* released, but a private key's d */
            if (mbc_ec_priv_key_new(&k, c->curve, d[l], c->len) != MBC_OK ||
                mbc_ec_priv_key_public(k, q, sizeof(q)) != MBC_OK ||
                memcmp(q, point[l], c->plen) != 0) {
                printf("# %s P-%zu lane %u: generated pair does not rebuild\n", impl, c->len * 8,
                       l);
                mbc_ec_priv_key_free(k);
                return -1;
            }
            mbc_ec_priv_key_free(k);
        }
    }
    /* a poisoned off-curve peer and a poisoned nonce n: their lanes fail
     * alone, on declassified verdicts */
    uint8_t bad_peer[MAX_POINT], bad_k[MAX_LEN];
    memcpy(bad_peer, c->point[0], c->plen);
    bad_peer[c->plen - 1] ^= 1;
    __msan_poison(bad_peer, c->plen);
    peer[3] = bad_peer;
    memcpy(bad_k, mbc_ec_curve(c->curve)->def->n, c->len);
    __msan_poison(bad_k, c->len);
    kp[6] = bad_k;
    mbc_status st = mbc_ecdh_mb8(xp, peer, priv, c->curve, 0xFF);
    if (st != (mbc_status)MBC_LANE_NOT_ON_CURVE << 12) {
        printf("# %s P-%zu: ecdh status 0x%08x with an off-curve peer in lane 3\n", impl,
               c->len * 8, st);
        return -1;
    }
    st = mbc_ecdsa_sign_k_mb8(sp, dg, dl, priv, kp, c->curve, 0xFF);
    if (st != (mbc_status)MBC_LANE_BAD_PARAM << 24) {
        printf("# %s P-%zu: sign_k status 0x%08x with k = n in lane 6\n", impl, c->len * 8, st);
        return -1;
    }
    mbc_test_hooks.ec_batch_plan = 0;
    return 0;
}

static int run_case(struct ctx *c, const char *impl)
{
    if (run_plan(c, impl, 0) != 0) {
        return -1;
    }
    if (strcmp(impl, "c") == 0 && run_plan(c, impl, 1) != 0) {
        return -1;
    }
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if (ct_is_public(c->priv[l]->d, c->len)) {
            printf("# %s P-%zu key %u: d was declassified\n", impl, c->len * 8, l);
            return -1;
        }
    }
    return 0;
}

static int run_checks(void)
{
    static const mbc_curve curves[] = {MBC_CURVE_P256, MBC_CURVE_P384};
    static const char *const impls[] = {"ifma", "adx", "c"};
    static const uint64_t masks[] = {~0ull, ~MBC_CPU_IFMA_PATH, 0};
    static struct ctx c;
    static struct first first[2];
    int failed = 0;
    unsigned tap = 0;
    printf("1..6\n");
    printf("# poisoned under MemorySanitizer: d (before key creation), the caller's nonces, "
           "the ECDH peer points, the library's random nonces and keys\n");
    for (size_t ci = 0; ci < 2; ci++) {
        for (size_t i = 0; i < 3; i++) {
            tap++;
            if (!ct_select_impl(MBC_ALG_EC, impls[i], masks[i])) {
                printf("ok %u # SKIP %s P-%zu: kernel not available (CPU features 0x%llx, IFMA "
                       "path needs 0x%llx, or built without it)\n",
                       tap, impls[i], mbc_ec_scalar_len(curves[ci]) * 8,
                       (unsigned long long)mbc_cpu_features(),
                       (unsigned long long)MBC_CPU_IFMA_PATH);
                continue;
            }
            /* keys are built on the selected kernel */
            if (ctx_init(&c, curves[ci], &first[ci]) != 0) {
                printf("not ok %u - %s P-%zu: key setup\n", tap, impls[i],
                       mbc_ec_scalar_len(curves[ci]) * 8);
                failed++;
                continue;
            }
            if (run_case(&c, impls[i]) == 0) {
                printf("ok %u - %s P-%zu: sign, ECDH, keygen on poisoned data, no MSan report\n",
                       tap, impls[i], c.len * 8);
            } else {
                printf("not ok %u - %s P-%zu\n", tap, impls[i], c.len * 8);
                failed++;
            }
            ctx_free(&c);
        }
    }
    mbc_cpu_restrict(~(uint64_t)0);
    return failed ? 1 : 0;
}

/* Controls: deliberately leaky functions on the poisoned data. */
static volatile unsigned sink;

/* leaky_d_digits: the length of d found by skipping its zero top digits:
 * a loop that branches on secret digits. */
__attribute__((noinline)) static unsigned leaky_d_digits(const mbc_ec_priv_key *key)
{
    unsigned j = EC_MAX_K;
    while (j > 0 && key->d[j - 1] == 0) {
        j--;
    }
    return j;
}

/* leaky_window: a precomputed-table read indexed by a secret nonce byte. */
__attribute__((noinline)) static unsigned leaky_window(const uint8_t *k)
{
    static uint8_t table[16];
    for (unsigned i = 0; i < 16; i++) {
        table[i] = (uint8_t)(i * 7u + 1u);
    }
    return table[k[0] & 15];
}

static int run_control(int index)
{
    static struct ctx c;
    static struct first first;
    if (ctx_init(&c, MBC_CURVE_P256, &first) != 0) {
        return 2;
    }
    printf("# control: %s on the poisoned P-256 key/nonce; MSan must report it\n",
           index ? "a table lookup indexed by a nonce byte" : "a branch on a digit of d");
    fflush(stdout);
    sink = index ? leaky_window(c.k[3]) : leaky_d_digits(c.priv[3]);
    printf("# control NOT caught: MemorySanitizer reported nothing\n");
    ctx_free(&c);
    return 0;
}

int main(int argc, char **argv)
{
    return ct_main(argc, argv, run_checks, run_control);
}
