/*
 * policy.c - which families the provider (or engine) serves. "auto" serves
 * what this CPU runs faster than OpenSSL's own code, so that loading mbcrypto
 * never makes a handshake slower; "all" serves everything mbcrypto has, on
 * any CPU (tests, benchmarks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbo_local.h"

static unsigned served; /* set by mbo_policy_setup (atomic: the ENGINE's SERVE
                         * command may change it while operations run) */
static int by_auto;     /* served is "auto"'s choice (atomic, as served) */

/* fast: the implementation selected for alg says it runs op (a bit of
 * mbc_impl_info's fast_ops) at least at OpenSSL's speed. */
static int fast(mbc_alg alg, unsigned op_bit)
{
    const mbc_impl_info *info = mbc_impl_get_info(alg);
    return info != NULL && (info->fast_ops & op_bit) != 0;
}

/* The families "auto" may serve, each with the operation its speed rests
 * on: the one a TLS server spends the family's time in. */
static const struct {
    unsigned fam;
    mbc_alg alg;
    unsigned op_bit;
} auto_rows[] = {
    {MBO_FAM_RSA, MBC_ALG_RSA, 1u << MBC_OP_RSA_PRIVATE},
    {MBO_FAM_GCM, MBC_ALG_GCM, 1u << 0},
    {MBO_FAM_X25519, MBC_ALG_X25519, 1u << MBC_OP_X25519_DERIVE},
    {MBO_FAM_ECDH, MBC_ALG_EC, 1u << MBC_OP_ECDH},
    {MBO_FAM_ECDSA, MBC_ALG_EC, 1u << MBC_OP_ECDSA_SIGN},
    {MBO_FAM_MLKEM, MBC_ALG_MLKEM, 1u << MBC_OP_MLKEM768_ENCAPS},
};

unsigned mbo_policy_auto(void)
{
    unsigned f = 0;
    for (size_t i = 0; i < sizeof(auto_rows) / sizeof(auto_rows[0]); i++) {
        if (fast(auto_rows[i].alg, auto_rows[i].op_bit)) {
            f |= auto_rows[i].fam;
        }
    }
    return f & mbo_offered;
}

static const struct {
    const char *name;
    unsigned fam;
} names[] = {
    {"rsa", MBO_FAM_RSA},   {"aes-gcm", MBO_FAM_GCM}, {"x25519", MBO_FAM_X25519},
    {"ecdh", MBO_FAM_ECDH}, {"ecdsa", MBO_FAM_ECDSA}, {"mlkem", MBO_FAM_MLKEM},
};

#define NUM_NAMES (sizeof(names) / sizeof(names[0]))

/* name_fam: the offered family of the n bytes at s, 0 if none. */
static unsigned name_fam(const char *s, size_t n)
{
    for (size_t i = 0; i < NUM_NAMES; i++) {
        if (strlen(names[i].name) == n && strncmp(names[i].name, s, n) == 0) {
            return names[i].fam & mbo_offered;
        }
    }
    return 0;
}

int mbo_policy_parse(const char *s, unsigned *fams)
{
    if (s == NULL) {
        return 0;
    }
    if (strcmp(s, "auto") == 0) {
        *fams = mbo_policy_auto();
        return 1;
    }
    if (strcmp(s, "all") == 0) {
        *fams = mbo_offered;
        return 1;
    }
    if (strcmp(s, "none") == 0) {
        *fams = 0;
        return 1;
    }
    unsigned f = 0;
    for (const char *p = s;;) {
        const size_t n = strcspn(p, ",");
        const unsigned one = name_fam(p, n);
        if (one == 0) {
            return 0;
        }
        f |= one;
        if (p[n] == '\0') {
            break;
        }
        p += n + 1;
    }
    *fams = f;
    return 1;
}

int mbo_setting_check(const char *env, const char *name, const char *cfg,
                      int (*valid)(const char *), const char *allowed, char *why, size_t len)
{
    const char *e = getenv(env);
    const int from_env = e != NULL && !valid(e);
    const char *bad = from_env ? e : cfg != NULL && !valid(cfg) ? cfg : NULL;
    if (bad == NULL) {
        return 1;
    }
    snprintf(why, len, "%s%s \"%s\" is not %s: mbcrypto is not loaded", from_env ? "" : "the ",
             from_env ? env : name, bad, allowed);
    return 0;
}

static int serve_valid(const char *s)
{
    unsigned f;
    return mbo_policy_parse(s, &f);
}

int mbo_policy_check(const char *cfg, char *why, size_t len)
{
    return mbo_setting_check(MBO_SERVE_ENV, "serve setting", cfg, serve_valid,
                             "auto, all, none or a comma-separated list of " MBO_POLICY_NAMES
                             " (nothing else, no spaces, no empty items)",
                             why, len);
}

void mbo_policy_report(const char *why)
{
    fprintf(stderr, "mbcrypto: %s\n", why);
    fflush(stderr);
}

void mbo_policy_setup(const char *cfg)
{
    unsigned f = mbo_policy_auto();
    const char *env = getenv(MBO_SERVE_ENV);
    const char *set = mbo_policy_parse(env, &f) ? env : mbo_policy_parse(cfg, &f) ? cfg : "auto";
    __atomic_store_n(&by_auto, strcmp(set, "auto") == 0, __ATOMIC_RELAXED);
    __atomic_store_n(&served, f, __ATOMIC_RELAXED);
}

int mbo_hand_off(mbc_alg alg, mbc_job_op op, unsigned bits)
{
    if (!__atomic_load_n(&by_auto, __ATOMIC_RELAXED) || mbc_impl_lone(alg, op, bits) ||
        (mbo_batching() && !mbo_lone_now(alg))) {
        return 0;
    }
    mbo_count(MBO_CTR_HANDED_OFF, 1);
    return 1;
}

unsigned mbo_policy(void)
{
    return __atomic_load_n(&served, __ATOMIC_RELAXED);
}

void mbo_policy_str(unsigned fams, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NUM_NAMES; i++) {
        const size_t n = strlen(names[i].name);
        if ((fams & names[i].fam) == 0 || at + n + 2 > len) {
            continue;
        }
        if (at > 0) {
            buf[at++] = ',';
        }
        memcpy(buf + at, names[i].name, n + 1);
        at += n;
    }
}
