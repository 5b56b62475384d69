/*
 * ct_rsa_keys.h - the RSA keys of the constant-time checks, shared by
 * tests/ct/ct_rsa.c (MemorySanitizer) and tests/ct_valgrind.c (valgrind
 * memcheck): the components of a Wycheproof private key, the key object
 * built from them with the secret ones marked secret by the checker, and the
 * inconsistent keys derived from it that key creation must refuse. Uses
 * nothing but libc and the library's public API.
 */
#ifndef MBC_TESTS_CT_CT_RSA_KEYS_H
#define MBC_TESTS_CT_CT_RSA_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "mbcrypto.h"

/* The components, in the order of mbc_rsa_priv_components. */
enum { CTK_N, CTK_E, CTK_P, CTK_Q, CTK_DP, CTK_DQ, CTK_QINV, CTK_COUNT };

/* ctk_field_names: their names in a Wycheproof privateKey object. */
extern const char *const ctk_field_names[CTK_COUNT];

#define CTK_MAX_BYTES 512
#define CTK_PAD 3 /* secret leading zero bytes added to each secret component */

struct ctk_material {
    uint8_t v[CTK_COUNT][CTK_MAX_BYTES + 1]; /* big-endian */
    size_t len[CTK_COUNT];
};

/* ctk_mark_fn: marks len bytes at p secret (poisoned, undefined). */
typedef void ctk_mark_fn(const void *p, size_t len);

/*
 * ctk_key_new: mbc_rsa_priv_key_new on km with every component but n and e
 * copied with CTK_PAD leading zero bytes and marked secret as a whole by
 * mark (so that even the size check reads secret bytes); the copies are
 * wiped after. Returns its error.
 */
mbc_err ctk_key_new(mbc_rsa_priv_key **key, const struct ctk_material *km, ctk_mark_fn *mark);

/* Key creation declassifies its verdicts up to the failing one: 4 before
 * the Montgomery set-up (size, parity, p * q == n, range), then p != q,
 * q qinv == 1, e dp == 1, e dq == 1. */
enum { CTK_VERDICTS_RANGE = 4, CTK_VERDICTS_QINV = 6, CTK_VERDICTS_DP = 7, CTK_VERDICTS_ALL = 8 };

#define CTK_NUM_BAD 5

/*
 * ctk_bad: *bad = km made inconsistent in way kind (< CTK_NUM_BAD: dp = 0,
 * dq = 0, qinv = 1, e + 2 (for an odd last byte of e below 0xFE), p and q
 * swapped with dp and dq, the old qinv kept). Returns the name of the kind;
 * *want gets the error key creation must give and *verdicts how many
 * verdicts it declassifies.
 */
const char *ctk_bad(struct ctk_material *bad, const struct ctk_material *km, unsigned kind,
                    mbc_err *want, size_t *verdicts);

#endif /* MBC_TESTS_CT_CT_RSA_KEYS_H */
