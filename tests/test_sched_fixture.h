/*
 * test_sched_fixture.h - keys, inputs and OpenSSL reference results shared by
 * the lane manager tests (test_sched.c, test_sched_threads.c), and the job
 * records both use.
 */
#ifndef MBC_TESTS_TEST_SCHED_FIXTURE_H
#define MBC_TESTS_TEST_SCHED_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "test_util.h"

#define SF_NKEYS 4 /* keys 0..2: 2048 bits (e = 65537, 3, 17); key 3: 3072 bits */
#define SF_NIN 6   /* good inputs per key and op: 4 random, n - 1, 0 */
#define SF_NBAD 3  /* inputs >= n per key: n, n + 1, all 0xFF */
#define SF_OUT_MAX 512
#define SF_CANARY 0xA5

enum sf_op { SF_PRIV, SF_PUB };

struct sf_key {
    unsigned bits;
    size_t len; /* bits / 8 */
    mbc_rsa_priv_key *priv;
    mbc_rsa_pub_key *pub;
    uint8_t in[2][SF_NIN][SF_OUT_MAX];  /* [op][j], below n */
    uint8_t ref[2][SF_NIN][SF_OUT_MAX]; /* OpenSSL's raw result for in */
    uint8_t bad[SF_NBAD][SF_OUT_MAX];   /* inputs >= n */
};

/* sf_keys: the keys, built once per process (from the main thread). */
const struct sf_key *sf_keys(void);
void sf_free(void);

/*
 * sf_rec: one job with its own output buffer and what it must complete with:
 * want_status, and for MBC_OK the first len bytes of out equal to want; on an
 * error, zeroed len bytes when zeroed is set, else untouched. Bytes of out
 * past len (past 0 when nothing may be written) keep SF_CANARY.
 */
struct sf_rec {
    mbc_job job;
    uint8_t out[SF_OUT_MAX];
    const uint8_t *want;
    size_t len;
    mbc_err want_status;
    int zeroed;
};

/* sf_rng: a small per-thread generator (the mbt_rand state is not shared
 * between threads). */
struct sf_rng {
    uint64_t s;
};
uint64_t sf_rand(struct sf_rng *r);

/*
 * sf_set_job: rec becomes a good job of op on key k with input j (or, when
 * bad >= 0, the input >= n number bad, which must fail with
 * MBC_ERR_BAD_PARAM), out_len = len + extra. Only the caller's fields of the
 * job are written: its private fields are left as they are.
 */
void sf_set_job(struct sf_rec *rec, enum sf_op op, const struct sf_key *k, unsigned j, int bad,
                size_t extra);

/* sf_check: 0 when rec (just returned by the manager) completed as expected;
 * otherwise writes a message to msg and returns -1. Thread-safe. */
int sf_check(const struct sf_rec *rec, char *msg, size_t msg_len);

#endif /* MBC_TESTS_TEST_SCHED_FIXTURE_H */
