/*
 * test_sched_tsan_control.c - the control of the ThreadSanitizer run: one
 * thread reads a manager's pending count while another submits to it, with
 * no synchronisation, which the header forbids (a manager belongs to one
 * thread at a time). ThreadSanitizer must report it: registered with
 * should_fail in the 'tsan' suite, so a TSan build that stopped seeing races
 * fails the run. Exits 0 when nothing is reported.
 *
 * The race is made once and in a fixed order: the reader reads once and then
 * only spins, and the owner writes after it has seen the read. A reader that
 * kept reading while the owner ran kernels let ThreadSanitizer miss the race
 * in about one run in three (the racing access could not be restored from a
 * trace still being written), which made the control flaky.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "mbcrypto.h"

/* Relaxed atomics: they order nothing for ThreadSanitizer, so the reader's
 * load stays unordered with the owner's store. */
static atomic_int read_done, stop;
static size_t seen;

static void *reader(void *arg)
{
    seen = mbc_mgr_pending(arg);
    atomic_store_explicit(&read_done, 1, memory_order_relaxed);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    }
    return NULL;
}

int main(void)
{
    /* a valid 2048-bit public key: n = 2^2048 - 1 (odd), e = 3 */
    static uint8_t n[256], in[256], out[256];
    const uint8_t e = 3;
    memset(n, 0xFF, sizeof(n));
    mbc_rsa_pub_key *key = NULL;
    mbc_mgr *mgr = NULL;
    if (mbc_rsa_pub_key_new(&key, n, sizeof(n), &e, 1) != MBC_OK ||
        mbc_mgr_new(&mgr, NULL) != MBC_OK) {
        fprintf(stderr, "setup failed\n");
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, reader, mgr) != 0) {
        return 2;
    }
    while (!atomic_load_explicit(&read_done, memory_order_relaxed)) {
    }
    mbc_job job = {.op = MBC_OP_RSA_PUBLIC,
                   .key = key,
                   .in = in,
                   .in_len = sizeof(in),
                   .out = out,
                   .out_len = sizeof(out)};
    mbc_mgr_submit(mgr, &job); /* writes the pending count the reader read */
    atomic_store_explicit(&stop, 1, memory_order_relaxed);
    pthread_join(t, NULL);
    mbc_mgr_flush(mgr);
    mbc_mgr_get_completed(mgr);
    mbc_mgr_free(mgr);
    mbc_rsa_pub_key_free(key);
    printf("no race reported\n");
    return 0;
}
