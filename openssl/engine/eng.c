/*
 * eng.c - the mbcrypto ENGINE: the dynamic ENGINE entry points and the
 * binding, init and finish (a reference on openssl/common's shared state),
 * and the control commands that `openssl engine -vvv mbcrypto` lists.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "eng.h"

#define ENGINE_ID "mbcrypto"
#define ENGINE_NAME "mbcrypto multi-buffer RSA, ECDSA, ECDH, X25519 and AES-GCM"

enum {
    CMD_SERVE = ENGINE_CMD_BASE,
    CMD_MAX_WAIT_US,
    CMD_PRINT_COUNTERS,
    CMD_GET_COUNTERS,
};

static const ENGINE_CMD_DEFN commands[] = {
    {CMD_SERVE, "SERVE",
     "what mbcrypto runs: auto (the default: what this CPU runs faster than OpenSSL), all, "
     "none, or a list of rsa,ecdsa,ecdh,x25519,aes-gcm; the environment variable MBCRYPTO_SERVE "
     "wins "
     "over it",
     ENGINE_CMD_FLAG_STRING},
    {CMD_MAX_WAIT_US, "MAX_WAIT_US",
     "the longest an async request waits for others to batch with, in microseconds "
     "(0 to 100000; 0, the default: one event-loop round)",
     ENGINE_CMD_FLAG_NUMERIC},
    {CMD_PRINT_COUNTERS, "PRINT_COUNTERS",
     "print the settings and the operation counters on stdout (with MBCRYPTO_COUNTERS_FILE: "
     "that file's, shared with the processes that use it)",
     ENGINE_CMD_FLAG_NO_INPUT},
    {CMD_GET_COUNTERS, "GET_COUNTERS",
     "the operation counters into the uint64_t array p of i entries, in the order of "
     "openssl/common/mbo.h; returns how many were written",
     ENGINE_CMD_FLAG_INTERNAL},
    {0, NULL, NULL, 0},
};

/* The ENGINE implements every family (X25519 before OpenSSL 3.5 only:
 * eng_x25519.c says why). */
const unsigned mbo_offered = MBO_FAM_ALL;

/* The SERVE setting ("" for none) and whether common's state is ours
 * (init calls minus finish calls), under lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char serve_cfg[MBO_POLICY_STR_LEN];
static unsigned inits;

static int eng_init(ENGINE *e)
{
    (void)e;
    char why[256];
    pthread_mutex_lock(&lock);
    const char *cfg = serve_cfg[0] != '\0' ? serve_cfg : NULL;
    if (!mbo_policy_check(cfg, why, sizeof(why)) || !mbo_max_wait_check(NULL, why, sizeof(why))) {
        pthread_mutex_unlock(&lock);
        ERR_raise_data(ERR_LIB_ENGINE, ENGINE_R_INIT_FAILED, "mbcrypto: %s", why);
        mbo_policy_report(why);
        return 0;
    }
    const int ok = mbo_init(cfg);
    if (ok) {
        mbo_max_wait_setup(NULL); /* MBCRYPTO_MAX_WAIT_US, when set; MAX_WAIT_US after */
    }
    inits += ok != 0;
    pthread_mutex_unlock(&lock);
    return ok;
}

static int eng_finish(ENGINE *e)
{
    (void)e;
    pthread_mutex_lock(&lock);
    if (inits > 0) {
        inits--;
        mbo_fini();
    }
    pthread_mutex_unlock(&lock);
    return 1;
}

/* set_serve: the SERVE command: kept for init, applied now if initialised. */
static int set_serve(const char *s)
{
    unsigned fams;
    if (s == NULL || strlen(s) >= sizeof(serve_cfg) || !mbo_policy_parse(s, &fams)) {
        char why[256];
        snprintf(
            why, sizeof(why),
            "SERVE \"%s\" is not auto, all, none or a comma-separated list of " MBO_POLICY_NAMES
            " (nothing else, no spaces, no empty items)",
            s != NULL ? s : "(null)");
        ERR_raise_data(ERR_LIB_ENGINE, ENGINE_R_INVALID_ARGUMENT, "mbcrypto: %s", why);
        mbo_policy_report(why); /* openssl.cnf's engine section drops the error */
        return 0;
    }
    pthread_mutex_lock(&lock);
    strcpy(serve_cfg, s);
    if (inits > 0) {
        mbo_policy_setup(serve_cfg);
    }
    pthread_mutex_unlock(&lock);
    return 1;
}

static int set_max_wait(long us)
{
    if (us < 0 || us > (long)MBO_MAX_WAIT_US_MAX || !mbo_set_max_wait_us((uint32_t)us)) {
        ERR_raise_data(ERR_LIB_ENGINE, ENGINE_R_INVALID_ARGUMENT, "MAX_WAIT_US=%ld: not 0..%u", us,
                       MBO_MAX_WAIT_US_MAX);
        return 0;
    }
    return 1;
}

/* print_counters: one "name value" line each, as tests/openssl/counters.py
 * prints a counters file. */
static int print_counters(void)
{
    char s[MBO_POLICY_STR_LEN];
    mbo_policy_str(mbo_policy(), s, sizeof(s));
    printf("serve %s\nmax-wait-us %u\n", s[0] != '\0' ? s : "none", mbo_max_wait_us());
    for (unsigned c = 0; c < MBO_NUM_COUNTERS; c++) {
        printf("%s %llu\n", mbo_counter_name(c), (unsigned long long)mbo_counter_get(c));
    }
    return fflush(stdout) == 0;
}

static int get_counters(long n, uint64_t *out)
{
    if (n < 0 || (n > 0 && out == NULL)) {
        ERR_raise(ERR_LIB_ENGINE, ENGINE_R_INVALID_ARGUMENT);
        return 0;
    }
    const unsigned num = n < (long)MBO_NUM_COUNTERS ? (unsigned)n : MBO_NUM_COUNTERS;
    for (unsigned c = 0; c < num; c++) {
        out[c] = mbo_counter_get(c);
    }
    return (int)num;
}

static int eng_ctrl(ENGINE *e, int cmd, long i, void *p, void (*f)(void))
{
    (void)e;
    (void)f;
    switch (cmd) {
    case CMD_SERVE:
        return set_serve(p);
    case CMD_MAX_WAIT_US:
        return set_max_wait(i);
    case CMD_PRINT_COUNTERS:
        return print_counters();
    case CMD_GET_COUNTERS:
        return get_counters(i, p);
    default:
        ERR_raise(ERR_LIB_ENGINE, ENGINE_R_CTRL_COMMAND_NOT_IMPLEMENTED);
        return 0;
    }
}

void *mbe_cached(const struct mbe_cache *c, const void *key, int *made)
{
    *made = 0;
    if (!CRYPTO_THREAD_read_lock(c->lock)) {
        return NULL;
    }
    void *k = c->get(key);
    CRYPTO_THREAD_unlock(c->lock);
    if (k != NULL) {
        return k;
    }
    void *mine = c->make(key);
    if (mine == NULL || !CRYPTO_THREAD_write_lock(c->lock)) {
        c->release(mine);
        return NULL;
    }
    k = c->get(key);
    if (k == NULL && c->set((void *)key, mine)) {
        k = mine;
        mine = NULL;
        *made = 1;
    }
    CRYPTO_THREAD_unlock(c->lock);
    c->release(mine);
    return k;
}

static CRYPTO_ONCE setup_once = CRYPTO_ONCE_STATIC_INIT;
static int setup_ok;

static void setup(void)
{
    setup_ok = mbe_rsa_setup() && mbe_ec_setup() && mbe_x25519_setup() && mbe_gcm_setup();
}

static int bind_mbcrypto(ENGINE *e, const char *id)
{
    if (id != NULL && strcmp(id, ENGINE_ID) != 0) {
        return 0;
    }
    if (!CRYPTO_THREAD_run_once(&setup_once, setup) || !setup_ok) {
        return 0;
    }
    return ENGINE_set_id(e, ENGINE_ID) && ENGINE_set_name(e, ENGINE_NAME) &&
           ENGINE_set_init_function(e, eng_init) && ENGINE_set_finish_function(e, eng_finish) &&
           ENGINE_set_ctrl_function(e, eng_ctrl) && ENGINE_set_cmd_defns(e, commands) &&
           ENGINE_set_RSA(e, mbe_rsa_method()) && ENGINE_set_EC(e, mbe_ec_method()) &&
           ENGINE_set_pkey_meths(e, mbe_pkey_meths) && ENGINE_set_ciphers(e, mbe_ciphers);
}

/* The dynamic ENGINE's entry points (OpenSSL's macros), exported. */
#pragma GCC visibility push(default)
IMPLEMENT_DYNAMIC_CHECK_FN()
IMPLEMENT_DYNAMIC_BIND_FN(bind_mbcrypto)
#pragma GCC visibility pop
