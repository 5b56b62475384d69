/*
 * thread.c - the shared state of openssl/common: one pair of lane managers
 * per thread (a batching one for ASYNC jobs, a sync one for everything
 * else), created on first use and freed at thread exit; the reference count
 * of mbo_init/mbo_fini; the fork handler.
 *
 * A thread's managers are touched only by that thread, except at mbo_fini
 * (the last user is gone) and in a forked child (the other threads are gone).
 * The list of every thread's state, and its mutex, serve those two cases and
 * the creation and exit of a state.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "mbo.h"
#include "mbo_local.h"

/*
 * The kernels' stack: an 8-lane RSA-4096 batch needs more than 32 KiB of
 * stack, the size of an OpenSSL ASYNC job's stack, so inside a job the
 * manager calls run on a stack of this thread's own (mbo_thread_call).
 * STACK_LEN bytes, below them a guard page.
 */
#define STACK_LEN (256u * 1024u)
#define GUARD_LEN 4096u

/*
 * How a call moves to that stack. On x86-64 a few instructions: keep the
 * stack pointer in a callee-saved register, point it at the top of ours,
 * call, put it back. glibc's getcontext/swapcontext/setcontext save and
 * restore the signal mask with a system call each, three per call and two
 * calls per paused request: 18 of HAProxy's 94 system calls per
 * one-connection TLS handshake. Under the sanitizers, which must be told
 * of stack switches, ucontext (which they intercept) stays.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) ||                         \
    __has_feature(thread_sanitizer)
#define MBO_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MBO_SANITIZED 1
#endif
#if defined(__x86_64__) && !defined(MBO_SANITIZED)
#define MBO_STACK_ASM 1
#endif

struct mbo_thread {
    mbc_mgr *mgr;   /* batches the requests of ASYNC jobs */
    mbc_mgr *sync;  /* MBC_MGR_SYNC: runs every request at once */
    uint8_t *stack; /* GUARD_LEN + STACK_LEN, mapped on first use */
#ifndef MBO_STACK_ASM
    ucontext_t caller, callee;
#endif
    void (*fn)(void *);
    void *arg;
    struct mbo_thread *next;
    struct mbo_thread **pprev;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned refs;          /* mbo_init minus mbo_fini calls */
static int key_made;           /* tkey is valid */
static pthread_key_t tkey;     /* the calling thread's struct mbo_thread */
static struct mbo_thread *all; /* every thread's state */
static size_t live;            /* states in all */

/* state_free: runs what the managers hold (paused jobs' requests complete:
 * their records are marked done), then frees the state. Not in the list. */
static void state_free(struct mbo_thread *t)
{
    if (t->mgr != NULL) {
        mbc_mgr_flush(t->mgr);
        mbo_drain(t->mgr);
        mbc_mgr_free(t->mgr);
    }
    if (t->sync != NULL) {
        mbo_drain(t->sync);
        mbc_mgr_free(t->sync);
    }
    if (t->stack != NULL) {
        munmap(t->stack, GUARD_LEN + STACK_LEN);
    }
    free(t);
}

static void unlink_state(struct mbo_thread *t)
{
    *t->pprev = t->next;
    if (t->next != NULL) {
        t->next->pprev = t->pprev;
    }
    live--;
}

/* thread_exit: the pthread key's destructor. */
static void thread_exit(void *arg)
{
    struct mbo_thread *t = arg;
    pthread_mutex_lock(&lock);
    unlink_state(t);
    pthread_mutex_unlock(&lock);
    state_free(t);
}

/* free_all: frees every state (the caller holds lock). */
static void free_all(void)
{
    while (all != NULL) {
        struct mbo_thread *t = all;
        unlink_state(t);
        state_free(t);
    }
}

static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

/* fork_child: the child has one thread; every state, the forking thread's
 * included, is from the parent: run and free them all, so the child starts
 * with no manager (the next request makes a new one). */
static void fork_child(void)
{
    free_all();
    if (key_made) {
        pthread_setspecific(tkey, NULL);
    }
    pthread_mutex_unlock(&lock);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static int atfork_ok;

static void register_atfork(void)
{
    atfork_ok = pthread_atfork(fork_prepare, fork_parent, fork_child) == 0;
}

int mbo_init(const char *serve_cfg)
{
    pthread_once(&atfork_once, register_atfork);
    if (!atfork_ok) {
        return 0;
    }
    pthread_mutex_lock(&lock);
    int ok = 1;
    if (refs == 0) {
        ok = pthread_key_create(&tkey, thread_exit) == 0;
        if (ok) {
            key_made = 1;
            mbo_policy_setup(serve_cfg);
            mbo_counters_setup();
            const char *lone = getenv(MBO_LONE_ENV);
            if (lone != NULL && strcmp(lone, "0") == 0) {
                mbo_set_lone_at_once(0);
            }
        }
    }
    if (ok) {
        refs++;
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

void mbo_fini(void)
{
    pthread_mutex_lock(&lock);
    if (refs > 0 && --refs == 0) {
        free_all();
        pthread_key_delete(tkey);
        key_made = 0;
        mbo_counters_teardown();
    }
    pthread_mutex_unlock(&lock);
}

struct mbo_thread *mbo_thread_get(void)
{
    if (!key_made) {
        return NULL;
    }
    struct mbo_thread *t = pthread_getspecific(tkey);
    if (t != NULL) {
        return t;
    }
    t = calloc(1, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    const mbc_mgr_config batch = {0}, sync = {.flags = MBC_MGR_SYNC};
    if (mbc_mgr_new(&t->mgr, &batch) != MBC_OK || mbc_mgr_new(&t->sync, &sync) != MBC_OK ||
        pthread_setspecific(tkey, t) != 0) {
        state_free(t);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    t->next = all;
    if (all != NULL) {
        all->pprev = &t->next;
    }
    t->pprev = &all;
    all = t;
    live++;
    pthread_mutex_unlock(&lock);
    return t;
}

mbc_mgr *mbo_thread_mgr(struct mbo_thread *t, int sync)
{
    return sync ? t->sync : t->mgr;
}

size_t mbo_threads_live(void)
{
    pthread_mutex_lock(&lock);
    const size_t n = live;
    pthread_mutex_unlock(&lock);
    return n;
}

#ifdef MBO_STACK_ASM
/* call_on: fn(arg) with the stack pointer at top (16-byte aligned). The
 * old one waits in rbx; fn and top sit in registers the call preserves;
 * every register a call may change is declared changed. */
static void call_on(void (*fn)(void *), void *arg, void *top)
{
    __asm__ volatile("movq %%rsp, %%rbx\n\t"
                     "movq %[top], %%rsp\n\t"
                     "callq *%[fn]\n\t"
                     "movq %%rbx, %%rsp"
                     : "+D"(arg)
                     : [fn] "r"(fn), [top] "r"(top)
                     : "rax", "rbx", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "xmm0", "xmm1",
                       "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                       "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
}
#else
/* The thread whose mbo_thread_call runs on its own stack now. */
static __thread struct mbo_thread *calling;

static void trampoline(void)
{
    calling->fn(calling->arg);
    /* Returns to t->caller through uc_link. */
}
#endif

int mbo_thread_call(struct mbo_thread *t, void (*fn)(void *), void *arg, int own_stack)
{
    if (!own_stack) {
        fn(arg);
        return 1;
    }
    if (t->stack == NULL) {
        void *m = mmap(NULL, GUARD_LEN + STACK_LEN, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (m == MAP_FAILED) {
            return 0;
        }
        if (mprotect(m, GUARD_LEN, PROT_NONE) != 0) {
            munmap(m, GUARD_LEN + STACK_LEN);
            return 0;
        }
        t->stack = m;
    }
#ifdef MBO_STACK_ASM
    call_on(fn, arg, t->stack + GUARD_LEN + STACK_LEN);
    return 1;
#else
    if (getcontext(&t->callee) != 0) {
        return 0;
    }
    t->callee.uc_stack.ss_sp = t->stack + GUARD_LEN;
    t->callee.uc_stack.ss_size = STACK_LEN;
    t->callee.uc_link = &t->caller;
    makecontext(&t->callee, trampoline, 0);
    t->fn = fn;
    t->arg = arg;
    calling = t;
    const int ok = swapcontext(&t->caller, &t->callee) == 0;
    calling = NULL;
    return ok;
#endif
}
