/*
 * ct_valgrind_ec.c - the constant-time check of the shipped scalar EC
 * kernels (src/ec/ec_adx.c, the gcc release objects of libmbcrypto) under
 * valgrind memcheck (meson test ct_valgrind_ec).
 *
 * Valgrind 3.19 runs MULX, ADCX and ADOX but its CPUID hides ADX, so under
 * it the library never dispatches to the adx kernels and ct_valgrind's
 * ec/adx case skips. This program links the shipped objects (the static
 * library mbc_ship, no test hooks) and calls the kernels directly, in slot
 * 0 of the kernels' argument structs, as the glue does: for P-256 and
 * P-384, key generation (d G) with d undefined, signing with d and the nonce
 * k undefined, ECDH with d and the peer point undefined. Memcheck must
 * report nothing (its error count must not grow), and every result must
 * equal the portable one-lane kernels' (_c1) on the same inputs.
 * Verification handles public data and runs too (its verdict must be OK).
 *
 * --control: a branch on an undefined byte of d, which memcheck must
 * report (the error count must grow).
 *
 * Output: TAP. Not under valgrind, it fails: it checks nothing there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/memcheck.h>

#include "ec/ec_adx.h"
#include "ec/ec_internal.h"

static void secret(const void *p, size_t len)
{
    (void)VALGRIND_MAKE_MEM_UNDEFINED(p, len);
}

static void public(const void *p, size_t len)
{
    (void)VALGRIND_MAKE_MEM_DEFINED(p, len);
}

/* rand_bytes: xorshift bytes (a fixed seed: the same run every time). */
static uint64_t seed = 0x9e3779b97f4a7c15ull;
static void rand_bytes(uint8_t *out, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        out[i] = (uint8_t)(seed >> 32);
    }
}

/* scalar: rows of a random value below n (top bit clear, not zero). */
static void scalar(const struct ec_curve *c, mb52_row *r)
{
    uint8_t b[EC_MAX_LEN];
    rand_bytes(b, c->len);
    b[0] &= 0x7F;
    b[c->len - 1] |= 1;
    const uint8_t *const in[8] = {b};
    mbc_mb52_from_be8(r, c->k, in, c->len, 1);
}

static int same(const mb52_row *a, const mb52_row *b, unsigned k)
{
    for (unsigned j = 0; j < k; j++) {
        if (a[j][0] != b[j][0]) {
            return 0;
        }
    }
    return 1;
}

struct rows {
    EC_ALIGN mb52_row d[EC_MAX_K];
    mb52_row k[EC_MAX_K], z[EC_MAX_K], x[EC_MAX_K], y[EC_MAX_K];
    mb52_row r[EC_MAX_K], s[EC_MAX_K], x2[EC_MAX_K], y2[EC_MAX_K], r2[EC_MAX_K], s2[EC_MAX_K];
    struct ec_pt vtab[EC_VT_ENTRIES];
};

/* run_curve: the checks on c; 0 when they pass. */
static int run_curve(const struct ec_curve *c, struct rows *w)
{
    const mb52_row *gtab = mbc_ec_gtab(c);
    const unsigned k = c->k;
    memset(w, 0, sizeof(*w));
    scalar(c, w->d);
    scalar(c, w->k);
    scalar(c, w->z);
    const unsigned long before = VALGRIND_COUNT_ERRORS;
    secret(w->d, sizeof(w->d));
    secret(w->k, sizeof(w->k));
    /* key generation: Q = d G */
    struct ec_base_args b = {c, gtab, w->d, w->x, w->y, 1, 0, 0};
    mbc_ec_base_kern_adx(&b);
    /* signing */
    struct ec_sign_args sg = {c, gtab, w->k, w->d, w->z, w->r, w->s, 1, 0, 0, 0};
    mbc_ec_sign_kern_adx(&sg);
    /* ECDH with the peer point Q undefined */
    memcpy(w->x2, w->x, sizeof(w->x2));
    memcpy(w->y2, w->y, sizeof(w->y2));
    struct ec_ecdh_args e = {c, w->k, w->x2, w->y2, w->r2, w->vtab, 1, 0, 0, 0};
    mbc_ec_ecdh_kern_adx(&e);
    const unsigned long reports = VALGRIND_COUNT_ERRORS - before;
    public(w, sizeof(*w));
    public(&b, sizeof(b));
    public(&sg, sizeof(sg));
    public(&e, sizeof(e));
    if (reports != 0) {
        printf("# P-%u: memcheck reported %lu error(s) in the adx kernels (see stderr)\n", c->bits,
               reports);
        return -1;
    }
    if (b.ok_lanes != 1 || sg.ok_lanes != 1 || sg.zero_lanes != 0 || e.peer_ok != 1 ||
        e.ok_lanes != 1) {
        printf("# P-%u: a kernel's verdict is wrong\n", c->bits);
        return -1;
    }
    /* the portable one-lane kernels on the same (now public) inputs */
    struct rows *o = aligned_alloc(64, sizeof(*o));
    if (o == NULL) {
        return -1;
    }
    memcpy(o, w, sizeof(*o));
    struct ec_base_args b1 = {c, gtab, o->d, o->x, o->y, 1, 0, 0};
    mbc_ec_base_kern_c1(&b1);
    struct ec_sign_args s1 = {c, gtab, o->k, o->d, o->z, o->r, o->s, 1, 0, 0, 0};
    mbc_ec_sign_kern_c1(&s1);
    struct ec_ecdh_args e1 = {c, o->k, w->x2, w->y2, o->r2, o->vtab, 1, 0, 0, 0};
    mbc_ec_ecdh_kern_c1(&e1);
    int ok = same(o->x, w->x, k) && same(o->y, w->y, k) && same(o->r, w->r, k) &&
             same(o->s, w->s, k) && same(o->r2, w->r2, k);
    free(o);
    if (!ok) {
        printf("# P-%u: adx and c1 kernels disagree\n", c->bits);
        return -1;
    }
    /* verification of the signature (public data) */
    struct ec_verify_args v = {c, gtab, w->r, w->s, w->z, w->x, w->y, w->vtab, 1, 0};
    mbc_ec_verify_kern_adx(&v);
    if (v.ok_lanes != 1) {
        printf("# P-%u: the signature does not verify\n", c->bits);
        return -1;
    }
    return 0;
}

/* leaky: the number of leading zero bytes of d: a branch on each. */
static volatile unsigned leaky_steps;
__attribute__((noinline)) static unsigned leaky(const uint8_t *d, size_t len)
{
    size_t i = 0;
    while (i < len && d[i] == 0) {
        leaky_steps++;
        i++;
    }
    return (unsigned)i;
}

int main(int argc, char **argv)
{
    if (!RUNNING_ON_VALGRIND) {
        printf("1..1\nnot ok 1 - not under valgrind: run it through meson test\n");
        return 1;
    }
    if (argc == 2 && strcmp(argv[1], "--control") == 0) {
        uint8_t d[32];
        rand_bytes(d, sizeof(d));
        d[0] = 0;
        const unsigned long before = VALGRIND_COUNT_ERRORS;
        secret(d, sizeof(d));
        leaky_steps = leaky(d, sizeof(d));
        const int caught = VALGRIND_COUNT_ERRORS != before;
        printf("1..1\n%s 1 - control: a branch on an undefined byte of d %s\n",
               caught ? "ok" : "not ok", caught ? "was reported" : "was NOT reported");
        return caught ? 0 : 1;
    }
    static const mbc_curve curves[] = {MBC_CURVE_P256, MBC_CURVE_P384};
    static struct rows w;
    int failed = 0;
    printf("1..2\n");
    for (unsigned i = 0; i < 2; i++) {
        const struct ec_curve *c = mbc_ec_curve(curves[i]);
        const int bad = run_curve(c, &w) != 0;
        printf("%s %u - P-%u adx kernels: key generation, signing, ECDH on undefined secrets, "
               "no memcheck report, same results as c1\n",
               bad ? "not ok" : "ok", i + 1, c->bits);
        failed += bad;
    }
    return failed ? 1 : 0;
}
