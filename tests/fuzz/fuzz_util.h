/*
 * fuzz_util.h - what every libFuzzer target of tests/fuzz shares: reading the
 * fuzzer's input, writing seed inputs in the same format, choosing the
 * implementation an input runs on, and checking error codes against the set
 * the header documents.
 *
 * A target defines fz_target (its name and its seed writer) and
 * LLVMFuzzerTestOneInput; fuzz_util.c defines LLVMFuzzerInitialize, which
 * handles the one argument of our own: `--mbc-seeds=DIR` writes the target's
 * seed corpus into DIR and exits (libFuzzer ignores arguments that start
 * with "--", and runs LLVMFuzzerInitialize before anything else).
 *
 * A mismatch is reported with FZ_CHECK: a message on stderr, then abort(),
 * which libFuzzer turns into a crash artifact holding the input.
 */
#ifndef MBC_TESTS_FUZZ_FUZZ_UTIL_H
#define MBC_TESTS_FUZZ_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "mbcrypto.h"

/* ---------------------------------------------------------------- targets */

/* fz_target: defined once by each target. init (may be NULL) runs once
 * before the first input (not in seed mode); write_seeds writes the seed
 * inputs into dir with fz_seed_write. */
struct fz_target {
    const char *name;
    void (*init)(void);
    void (*write_seeds)(const char *dir);
};
extern const struct fz_target fz_target;

/* ----------------------------------------------------------------- checks */

__attribute__((noreturn, format(printf, 3, 4))) void fz_fail(const char *file, int line,
                                                             const char *fmt, ...);

/* FZ_CHECK: fails the input (abort) with the message when cond is false. */
#define FZ_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fz_fail(__FILE__, __LINE__, __VA_ARGS__);                                              \
        }                                                                                          \
    } while (0)

/* fz_errs: a set of mbc_err codes, bit e for code e. */
typedef uint32_t fz_errs;
#define FZ_ERR(e) ((fz_errs)1u << (e))

/*
 * fz_expect: checks the result got of the call named what. errs is the set
 * of documented errors that apply to the call's arguments: when it is empty
 * the call must return MBC_OK; otherwise it must return one of them (the
 * header does not say which check comes first when several fail).
 */
void fz_expect(const char *what, mbc_err got, fz_errs errs);

/* fz_expect_same: FZ_CHECK that len bytes at got equal want. */
void fz_expect_same(const char *what, const uint8_t *got, const uint8_t *want, size_t len);

/* fz_all: 1 if the len bytes at p all equal v. */
int fz_all(const uint8_t *p, size_t len, uint8_t v);

/* fz_count: counts one event (a static string) of this process; the counts
 * are printed on stderr at exit ("<target>: <event>: <n>"), to show how deep
 * the inputs reach. */
void fz_count(const char *event);

/* ---------------------------------------------------------------- reading */

/* fz_in: a cursor over the fuzzer's input. Reading past the end gives
 * zeros, so every input is a valid one. */
struct fz_in {
    const uint8_t *p;
    size_t len;
};

uint8_t fz_u8(struct fz_in *in);
uint16_t fz_u16(struct fz_in *in); /* little-endian */

/* fz_dup: the next len bytes in a new malloc'ed buffer of exactly len bytes
 * (so AddressSanitizer sees any access past it), zero-filled past the end of
 * the input. Never NULL (aborts when out of memory). */
uint8_t *fz_dup(struct fz_in *in, size_t len);

/* fz_rest: the rest of the input (*len bytes), consumed. */
const uint8_t *fz_rest(struct fz_in *in, size_t *len);

/* fz_alloc: malloc(len), never NULL, exactly len bytes (len may be 0). */
void *fz_alloc(size_t len);

/* ---------------------------------------------------------------- writing */

#define FZ_SEED_MAX 8192

/* fz_out: a seed input being built, in the format fz_in reads. */
struct fz_out {
    uint8_t buf[FZ_SEED_MAX];
    size_t len;
};

void fz_put_u8(struct fz_out *o, unsigned v);
void fz_put_u16(struct fz_out *o, unsigned v);
void fz_put(struct fz_out *o, const void *p, size_t len);

/* fz_seed_write: writes o as the file "<dir>/<name>" (aborts on failure). */
void fz_seed_write(const char *dir, const char *name, const struct fz_out *o);

/* fz_seed_rand: deterministic bytes for seeds (a fixed xorshift stream). */
void fz_seed_rand(uint8_t *p, size_t len);

/* -------------------------------------------------------- implementations */

/* fz_num_impls: how many implementations of alg this CPU and build run;
 * fz_impl: the name of the i-th (i taken modulo fz_num_impls). */
unsigned fz_num_impls(mbc_alg alg);
const char *fz_impl(mbc_alg alg, unsigned i);

/* fz_use_impl: selects the implementation number sel (modulo fz_num_impls)
 * of alg with mbc_cpu_restrict() and returns its name. */
const char *fz_use_impl(mbc_alg alg, unsigned sel);

#endif /* MBC_TESTS_FUZZ_FUZZ_UTIL_H */
