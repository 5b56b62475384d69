/* fuzz_util.c - see fuzz_util.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"
#include "impl_select.h"

#define SEEDS_ARG "--mbc-seeds="

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    for (int i = 1; i < *argc; i++) {
        const char *a = (*argv)[i];
        if (strncmp(a, SEEDS_ARG, strlen(SEEDS_ARG)) == 0) {
            const char *dir = a + strlen(SEEDS_ARG);
            if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
                fprintf(stderr, "%s: cannot create %s\n", fz_target.name, dir);
                exit(1);
            }
            fz_target.write_seeds(dir);
            exit(0);
        }
    }
    if (fz_target.init != NULL) {
        fz_target.init();
    }
    return 0;
}

/* ----------------------------------------------------------------- checks */

void fz_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "\n%s: MISMATCH at %s:%d: ", fz_target.name, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    abort();
}

void fz_expect(const char *what, mbc_err got, fz_errs errs)
{
    if (errs == 0) {
        FZ_CHECK(got == MBC_OK, "%s: %s, want MBC_OK", what, mbc_err_str(got));
        return;
    }
    if ((unsigned)got < 32 && (errs & FZ_ERR(got)) != 0) {
        return;
    }
    char want[512] = "";
    for (unsigned e = 0; e < 32; e++) {
        if ((errs & FZ_ERR(e)) != 0) {
            size_t n = strlen(want);
            snprintf(want + n, sizeof(want) - n, "%s%s", n ? " or " : "", mbc_err_str(e));
        }
    }
    fz_fail(__FILE__, __LINE__, "%s: %s, want %s", what, mbc_err_str(got), want);
}

void fz_expect_same(const char *what, const uint8_t *got, const uint8_t *want, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        FZ_CHECK(got[i] == want[i], "%s: byte %zu of %zu is %02x, want %02x", what, i, len, got[i],
                 want[i]);
    }
}

int fz_all(const uint8_t *p, size_t len, uint8_t v)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] != v) {
            return 0;
        }
    }
    return 1;
}

#define MAX_EVENTS 32

static struct {
    const char *name;
    unsigned long long n;
} events[MAX_EVENTS];

static void print_counts(void)
{
    for (unsigned i = 0; i < MAX_EVENTS && events[i].name != NULL; i++) {
        fprintf(stderr, "%s: %s: %llu\n", fz_target.name, events[i].name, events[i].n);
    }
}

void fz_count(const char *event)
{
    for (unsigned i = 0; i < MAX_EVENTS; i++) {
        if (events[i].name == NULL) {
            if (i == 0) {
                atexit(print_counts);
            }
            events[i].name = event;
        }
        if (strcmp(events[i].name, event) == 0) {
            events[i].n++;
            return;
        }
    }
}

/* ---------------------------------------------------------------- reading */

uint8_t fz_u8(struct fz_in *in)
{
    if (in->len == 0) {
        return 0;
    }
    in->len--;
    return *in->p++;
}

uint16_t fz_u16(struct fz_in *in)
{
    const unsigned lo = fz_u8(in);
    return (uint16_t)(lo | (unsigned)fz_u8(in) << 8);
}

void *fz_alloc(size_t len)
{
    void *p = malloc(len);
    if (p == NULL && len != 0) {
        abort();
    }
    return p != NULL ? p : malloc(1);
}

uint8_t *fz_dup(struct fz_in *in, size_t len)
{
    uint8_t *b = fz_alloc(len);
    const size_t n = len < in->len ? len : in->len;
    if (n != 0) {
        memcpy(b, in->p, n);
    }
    if (len > n) {
        memset(b + n, 0, len - n);
    }
    in->p += n;
    in->len -= n;
    return b;
}

const uint8_t *fz_rest(struct fz_in *in, size_t *len)
{
    const uint8_t *p = in->p;
    *len = in->len;
    in->p += in->len;
    in->len = 0;
    return p;
}

/* ---------------------------------------------------------------- writing */

void fz_put(struct fz_out *o, const void *p, size_t len)
{
    if (len > sizeof(o->buf) - o->len) {
        fprintf(stderr, "%s: seed longer than %d bytes\n", fz_target.name, FZ_SEED_MAX);
        abort();
    }
    if (len != 0) {
        memcpy(o->buf + o->len, p, len);
    }
    o->len += len;
}

void fz_put_u8(struct fz_out *o, unsigned v)
{
    const uint8_t b = (uint8_t)v;
    fz_put(o, &b, 1);
}

void fz_put_u16(struct fz_out *o, unsigned v)
{
    fz_put_u8(o, v & 0xff);
    fz_put_u8(o, (v >> 8) & 0xff);
}

void fz_seed_write(const char *dir, const char *name, const struct fz_out *o)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(o->buf, 1, o->len, f) != o->len || fclose(f) != 0) {
        fprintf(stderr, "%s: cannot write %s\n", fz_target.name, path);
        exit(1);
    }
}

void fz_seed_rand(uint8_t *p, size_t len)
{
    static uint64_t s = 0x6d62632d66757a7aull;
    for (size_t i = 0; i < len; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        p[i] = (uint8_t)(s >> 24);
    }
}

/* -------------------------------------------------------- implementations */

/* Every implementation name of each family, most capable first. A new
 * family (a curve, X25519) is a new row. */
static const struct {
    mbc_alg alg;
    const char *names[4];
} families[] = {
    {MBC_ALG_RSA, {"ifma", "c"}},
    {MBC_ALG_GCM, {"vaes512", "aesni", "c"}},
    {MBC_ALG_EC, {"ifma", "adx", "c"}},
    {MBC_ALG_X25519, {"ifma", "adx", "c"}},
    {MBC_ALG_MLKEM, {"avx512", "avx2", "c"}},
};
#define NUM_FAMILIES (sizeof(families) / sizeof(families[0]))

struct impl_list {
    int ready;
    unsigned n;
    const char *name[4];
};

/* impls: the implementations of alg this CPU and build run (found once). */
static const struct impl_list *impls(mbc_alg alg)
{
    static struct impl_list lists[NUM_FAMILIES];
    size_t f = 0;
    while (f < NUM_FAMILIES && families[f].alg != alg) {
        f++;
    }
    FZ_CHECK(f < NUM_FAMILIES, "no implementation names for alg %d", (int)alg);
    struct impl_list *l = &lists[f];
    if (!l->ready) {
        for (size_t i = 0; i < 4 && families[f].names[i] != NULL; i++) {
            if (mbt_select_alg_impl(alg, families[f].names[i])) {
                l->name[l->n++] = families[f].names[i];
            }
        }
        mbc_cpu_restrict(~0ull);
        FZ_CHECK(l->n != 0, "no implementation of alg %d runs here", (int)alg);
        l->ready = 1;
    }
    return l;
}

unsigned fz_num_impls(mbc_alg alg)
{
    return impls(alg)->n;
}

const char *fz_impl(mbc_alg alg, unsigned i)
{
    const struct impl_list *l = impls(alg);
    return l->name[i % l->n];
}

const char *fz_use_impl(mbc_alg alg, unsigned sel)
{
    const char *name = fz_impl(alg, sel);
    FZ_CHECK(mbt_select_alg_impl(alg, name), "cannot select %s again", name);
    FZ_CHECK(strcmp(mbc_impl_name(alg), name) == 0, "selected %s, running %s", name,
             mbc_impl_name(alg));
    return name;
}
