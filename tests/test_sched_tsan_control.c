/*
 * test_sched_tsan_control.c - the control of the ThreadSanitizer run: one
 * thread uses a manager while another reads its pending count without any
 * synchronisation, which the header forbids (a manager belongs to one thread
 * at a time). ThreadSanitizer must report it: registered with should_fail in
 * the 'tsan' suite, so a TSan build that stopped seeing races fails the run.
 * The racy reader only loads a counter, so the race cannot crash the test
 * instead of being reported. Exits 0 when nothing is reported.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "mbcrypto.h"

/* Relaxed atomics: they order nothing for ThreadSanitizer, so the reader's
 * loads stay unordered with the owner's stores. */
static atomic_int started, stop;

static void *reader(void *arg)
{
    const mbc_mgr *mgr = arg;
    size_t sum = 0;
    do {
        sum += mbc_mgr_pending(mgr);
        atomic_store_explicit(&started, 1, memory_order_relaxed);
    } while (!atomic_load_explicit(&stop, memory_order_relaxed));
    return (void *)sum;
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
    while (!atomic_load_explicit(&started, memory_order_relaxed)) {
    }
    for (int i = 0; i < 200; i++) {
        mbc_job job = {.op = MBC_OP_RSA_PUBLIC,
                       .key = key,
                       .in = in,
                       .in_len = sizeof(in),
                       .out = out,
                       .out_len = sizeof(out)};
        mbc_mgr_submit(mgr, &job);
        mbc_mgr_flush(mgr);
        mbc_mgr_get_completed(mgr);
    }
    atomic_store_explicit(&stop, 1, memory_order_relaxed);
    pthread_join(t, NULL);
    mbc_mgr_free(mgr);
    mbc_rsa_pub_key_free(key);
    printf("no race reported\n");
    return 0;
}
