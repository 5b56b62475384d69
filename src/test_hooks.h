/*
 * test_hooks.h - fault injection and kernel hit counters for the tests,
 * compiled only into the library the tests link (MBC_TEST_HOOKS=1: the glue
 * with src/test_hooks.c and the kernels' test builds, see meson.build); the
 * installed shared and static libraries are built with MBC_TEST_HOOKS=0, so
 * they carry no hook, mbc_test_hook() reads as 0 there and mbc_test_count()
 * is no code.
 */
#ifndef MBC_SRC_TEST_HOOKS_H
#define MBC_SRC_TEST_HOOKS_H

#if defined(MBC_TEST_HOOKS) && MBC_TEST_HOOKS
#include <stdatomic.h>

/* mbc_test_hooks: lanes (of a call, by lane number) whose result the kernel
 * corrupts on purpose, so that the self-check before release must catch it;
 * and a switch that turns the stack scrubs off, so that a test can measure
 * how deep the work under them writes. */
struct mbc_test_hooks {
    unsigned rsa_fault_lanes; /* the CRT p-half result gets one bit flipped */
    unsigned ec_fault_lanes;  /* the EC result point gets one bit of X flipped */
    unsigned ec_batch_plan;   /* non-zero: EC calls of 2+ requests take the batch kernel,
                                 whatever the implementation's one-by-one threshold */
    int no_stack_wipe;        /* mbc_wipe_secrets skips the stack (tests/test_wipe.c) */
    unsigned random_fail;     /* mbc_random_bytes fails as if the OS could not give bytes */
};
extern struct mbc_test_hooks mbc_test_hooks;
#define mbc_test_hook(field) (mbc_test_hooks.field)
/* mbc_test_count: adds 1 to an _Atomic unsigned long counter, relaxed (a
 * kernel's hit counter: the tests read it to prove which kernel ran). */
#define mbc_test_count(counter)                                                                    \
    ((void)atomic_fetch_add_explicit(&(counter), 1, memory_order_relaxed))
#else
#define mbc_test_hook(field) 0u
#define mbc_test_count(counter) ((void)0)
#endif

#endif /* MBC_SRC_TEST_HOOKS_H */
