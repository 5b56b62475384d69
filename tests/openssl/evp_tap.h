/*
 * evp_tap.h - what the provider's EVP test programs (fromdata.c, mlkem.c,
 * derive_auto.c)
 * share: the library context and the mbcrypto provider they load, TAP
 * lines with the OpenSSL errors of a failed case, the provider's counters
 * and the provider holding a key. Included once, by the program.
 */
#ifndef MBC_TESTS_OPENSSL_EVP_TAP_H
#define MBC_TESTS_OPENSSL_EVP_TAP_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

static OSSL_LIB_CTX *lib;
static OSSL_PROVIDER *mbc, *dflt;
static int n_tests, n_failed;

/* tap_start_serve: MBCRYPTO_SERVE=serve (NULL: unset, "auto" as
 * openssl.cnf gives it), the OpenSSL version noted, lib with mbcrypto (from
 * MBC_PROVIDER_DIR) and the default provider loaded; 0 after a "Bail out!"
 * line when they could not be. tap_start: with serve=all. */
static int tap_start_serve(const char *serve)
{
    const char *dir = getenv("MBC_PROVIDER_DIR");
    if (serve != NULL) {
        setenv("MBCRYPTO_SERVE", serve, 1);
    } else {
        unsetenv("MBCRYPTO_SERVE");
    }
    printf("# %s\n", OpenSSL_version(OPENSSL_VERSION));
    if (dir == NULL || (lib = OSSL_LIB_CTX_new()) == NULL ||
        !OSSL_PROVIDER_set_default_search_path(lib, dir) ||
        (mbc = OSSL_PROVIDER_load(lib, "mbcrypto")) == NULL ||
        (dflt = OSSL_PROVIDER_load(lib, "default")) == NULL) {
        ERR_print_errors_fp(stdout);
        printf("Bail out! providers not loaded (MBC_PROVIDER_DIR)\n");
        return 0;
    }
    return 1;
}

static __attribute__((unused)) int tap_start(void)
{
    return tap_start_serve("all");
}

/* check: one TAP line for name (printf format), passed when ok. */
static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s %d - ", ok ? "ok" : "not ok", ++n_tests);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!ok) {
        n_failed++;
        unsigned long e;
        while ((e = ERR_get_error()) != 0) {
            char buf[256];
            ERR_error_string_n(e, buf, sizeof(buf));
            printf("#   %s\n", buf);
        }
    }
    ERR_clear_error();
}

/* counter: the mbcrypto counter name ("ops-mlkem-encaps"...), UINT64_MAX
 * when it cannot be read. */
static uint64_t counter(const char *name)
{
    uint64_t v = 0;
    char full[64];
    snprintf(full, sizeof(full), "mbcrypto-%s", name);
    OSSL_PARAM p[] = {OSSL_PARAM_uint64(full, &v), OSSL_PARAM_END};
    return OSSL_PROVIDER_get_params(mbc, p) ? v : UINT64_MAX;
}

/* provider_of: the name of the provider holding k. */
static const char *provider_of(const EVP_PKEY *k)
{
    const OSSL_PROVIDER *p = k != NULL ? EVP_PKEY_get0_provider(k) : NULL;
    return p != NULL ? OSSL_PROVIDER_get0_name(p) : "(none)";
}

#endif /* MBC_TESTS_OPENSSL_EVP_TAP_H */
