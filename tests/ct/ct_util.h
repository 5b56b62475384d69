/*
 * ct_util.h - helpers shared by the constant-time checks of tests/ct (built
 * only with MemorySanitizer): reading a Wycheproof file, hex fields of its
 * JSON text, a deterministic byte generator, selecting an implementation,
 * and asking MSan whether bytes are public. Like the checks, it uses nothing
 * but the library and libc.
 */
#ifndef MBC_TESTS_CT_CT_UTIL_H
#define MBC_TESTS_CT_CT_UTIL_H

#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define CT_MSAN 1
#endif
#endif
#if !defined(CT_MSAN)
#error "tests/ct is built only with -fsanitize=memory (meson -Db_sanitize=memory -Dct_check=true)"
#endif

#include <sanitizer/msan_interface.h>
#include <stddef.h>
#include <stdint.h>

#include "mbcrypto.h"

/* ct_read_vectors: the text of "<dir>/wycheproof/<file>" (dir: the
 * MBC_VECTORS_DIR environment variable, else the build-time default), NUL-
 * terminated and malloc'ed; NULL, with a message on stderr, if unreadable. */
char *ct_read_vectors(const char *file);

/* ct_skip_space: s past any JSON white space. */
const char *ct_skip_space(const char *s);

/*
 * ct_parse_hex_field: the first "name": "<hex>" at or after obj, decoded into
 * out (cap bytes at most; an odd digit count has an implicit leading zero
 * nibble), its length in *len ("" gives 0). Returns 0, or -1 if the field is
 * missing, not hex or too long.
 */
int ct_parse_hex_field(const char *obj, const char *name, uint8_t *out, size_t cap, size_t *len);

/* ct_rng_seed, ct_rng_byte: a xorshift64 byte stream (public test data). */
void ct_rng_seed(uint64_t seed);
uint8_t ct_rng_byte(void);

/* ct_select_impl: restricts the CPU features to allowed and returns 1 if the
 * implementation then selected for alg is want, else 0 (CPU or build lacks
 * it). */
int ct_select_impl(mbc_alg alg, const char *want, uint64_t allowed);

/* ct_is_public: 1 if MSan considers all len bytes at p initialised, i.e. not
 * derived from a poisoned secret (or declassified since). */
int ct_is_public(const void *p, size_t len);

/* ct_bit_is_secret: 1 if bit (0 = the low bit of byte 0) of the bytes at p
 * is poisoned, i.e. derived from a secret. */
int ct_bit_is_secret(const void *p, size_t bit);

/* ct_all_bytes_secret: 1 if each of the len bytes at p holds a poisoned bit
 * (len > 0). */
int ct_all_bytes_secret(const void *p, size_t len);

/*
 * Releases: what the library declassifies (mbc_declassify), recorded
 * through mbc_msan_release_hook just before it is made public, shadow
 * included (a copy made by memcpy keeps it), so a check can see that a
 * released value really derives from the poisoned secrets. ct_record(1)
 * clears the record and starts recording, ct_record(0) stops.
 */
#define CT_MAX_RELEASES 32
#define CT_RELEASE_BYTES 512
struct ct_release {
    const void *at; /* where the library declassified it */
    size_t len;
    uint8_t copy[CT_RELEASE_BYTES];
};
void ct_record(int on);

/* ct_releases: the releases recorded since ct_record(1), in order, their
 * count in *count; NULL if one was longer than CT_RELEASE_BYTES or there
 * were more than CT_MAX_RELEASES. */
const struct ct_release *ct_releases(size_t *count);

/*
 * ct_main: the main() of a check. With no argument, runs run_checks (TAP on
 * stdout; returns its exit code); with --leaky or --leaky-index, the control
 * run_control(0) or run_control(1), which must be stopped by an MSan report
 * and returns 0 if it is not. stdout is line-buffered, since a report ends
 * the process without flushing stdio. Anything else: usage, exit code 2.
 */
int ct_main(int argc, char **argv, int (*run_checks)(void), int (*run_control)(int index));

#endif /* MBC_TESTS_CT_CT_UTIL_H */
