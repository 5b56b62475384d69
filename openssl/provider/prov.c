/*
 * prov.c - the mbcrypto OpenSSL 3 provider: entry point, provider
 * parameters (counters included), the algorithms it offers.
 *
 * Only what the serve policy (openssl/common/policy.c) says this CPU does
 * better is offered; everything else is left to the other providers loaded
 * beside it (the default provider). Configuration: the "serve" key of the
 * provider's openssl.cnf section, or MBCRYPTO_SERVE (which wins).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>

#include "prov.h"

/* Core functions, from the dispatch table given at init. */
static OSSL_FUNC_core_get_params_fn *c_get_params;
static OSSL_FUNC_core_new_error_fn *c_new_error;
static OSSL_FUNC_core_set_error_debug_fn *c_set_error_debug;
static OSSL_FUNC_core_vset_error_fn *c_vset_error;

void mbp_err(const struct mbp_ctx *pc, enum mbp_reason reason, const char *fmt, ...)
{
    if (c_new_error == NULL || c_vset_error == NULL || pc == NULL) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    c_new_error(pc->handle);
    if (c_set_error_debug != NULL) {
        c_set_error_debug(pc->handle, NULL, 0, NULL);
    }
    c_vset_error(pc->handle, (uint32_t)reason, fmt, ap);
    va_end(ap);
}

static const OSSL_ITEM reason_strings[] = {
    {MBP_R_INIT, "mbcrypto: operation not initialised"},
    {MBP_R_BAD_KEY, "mbcrypto: key cannot do this operation"},
    {MBP_R_BAD_PADDING, "mbcrypto: padding mode not supported"},
    {MBP_R_BAD_DIGEST, "mbcrypto: digest not supported"},
    {MBP_R_BAD_SALT, "mbcrypto: invalid PSS salt length"},
    {MBP_R_BAD_LENGTH, "mbcrypto: invalid length"},
    {MBP_R_BAD_SIGNATURE, "mbcrypto: bad signature"},
    {MBP_R_MBCRYPTO, "mbcrypto: operation failed"},
    {MBP_R_BAD_PARAM, "mbcrypto: invalid parameter"},
    {MBP_R_CIPHER, "mbcrypto: cipher operation refused"},
    {0, NULL},
};

static const OSSL_ITEM *get_reason_strings(void *provctx)
{
    (void)provctx;
    return reason_strings;
}

/* ------------------------------------------------------------ parameters */

#define PARAM_PREFIX "mbcrypto-"
#define PARAM_SERVE PARAM_PREFIX "serve"
#define PARAM_MAX (4 + 1 + MBO_NUM_COUNTERS + 1)

static OSSL_PARAM gettable[PARAM_MAX];
static char counter_param[MBO_NUM_COUNTERS][64];
static CRYPTO_ONCE gettable_once = CRYPTO_ONCE_STATIC_INIT;

/* make_gettable: the table, with one "mbcrypto-<counter>" per counter. */
static void make_gettable(void)
{
    size_t i = 0;
    gettable[i++] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_NAME, NULL, 0);
    gettable[i++] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_VERSION, NULL, 0);
    gettable[i++] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, NULL, 0);
    gettable[i++] = OSSL_PARAM_construct_int(OSSL_PROV_PARAM_STATUS, NULL);
    gettable[i++] = OSSL_PARAM_construct_utf8_string(PARAM_SERVE, NULL, 0);
    for (unsigned c = 0; c < MBO_NUM_COUNTERS; c++) {
        snprintf(counter_param[c], sizeof(counter_param[c]), PARAM_PREFIX "%s",
                 mbo_counter_name(c));
        gettable[i++] = OSSL_PARAM_construct_uint64(counter_param[c], NULL);
    }
    gettable[i] = OSSL_PARAM_construct_end();
}

static const OSSL_PARAM *gettable_params(void *provctx)
{
    (void)provctx;
    CRYPTO_THREAD_run_once(&gettable_once, make_gettable);
    return gettable;
}

static int get_params(void *provctx, OSSL_PARAM params[])
{
    (void)provctx;
    CRYPTO_THREAD_run_once(&gettable_once, make_gettable);
    OSSL_PARAM *p;
    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_NAME)) != NULL &&
        !OSSL_PARAM_set_utf8_ptr(p, "mbcrypto multi-buffer provider")) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_VERSION)) != NULL &&
        !OSSL_PARAM_set_utf8_ptr(p, mbc_version_string())) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_BUILDINFO)) != NULL &&
        !OSSL_PARAM_set_utf8_ptr(p, mbc_version_string())) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_STATUS)) != NULL &&
        !OSSL_PARAM_set_int(p, 1)) {
        return 0;
    }
    if ((p = OSSL_PARAM_locate(params, PARAM_SERVE)) != NULL) {
        char s[MBO_POLICY_STR_LEN];
        mbo_policy_str(mbo_policy(), s, sizeof(s));
        if (!OSSL_PARAM_set_utf8_string(p, s)) {
            return 0;
        }
    }
    for (unsigned c = 0; c < MBO_NUM_COUNTERS; c++) {
        if ((p = OSSL_PARAM_locate(params, counter_param[c])) != NULL &&
            !OSSL_PARAM_set_uint64(p, mbo_counter_get(c))) {
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------ algorithms */

#define RSA_NAMES "RSA:rsaEncryption:1.2.840.113549.1.1.1"

static const OSSL_ALGORITHM rsa_keymgmt[] = {
    {RSA_NAMES, MBP_PROPS, mbp_rsa_keymgmt, "mbcrypto RSA 2048/3072/4096 keys"},
    {NULL, NULL, NULL, NULL},
};
static const OSSL_ALGORITHM rsa_signature[] = {
    {RSA_NAMES, MBP_PROPS, mbp_rsa_signature, "mbcrypto RSA PKCS#1 v1.5 and PSS"},
    {NULL, NULL, NULL, NULL},
};
static const OSSL_ALGORITHM gcm_ciphers[] = {
    {"AES-128-GCM:id-aes128-GCM:2.16.840.1.101.3.4.1.6", MBP_PROPS, mbp_aes128gcm, NULL},
    {"AES-192-GCM:id-aes192-GCM:2.16.840.1.101.3.4.1.26", MBP_PROPS, mbp_aes192gcm, NULL},
    {"AES-256-GCM:id-aes256-GCM:2.16.840.1.101.3.4.1.46", MBP_PROPS, mbp_aes256gcm, NULL},
    {NULL, NULL, NULL, NULL},
};

static const OSSL_ALGORITHM *query_operation(void *provctx, int operation_id, int *no_cache)
{
    (void)provctx;
    *no_cache = 0;
    const unsigned served = mbo_policy();
    switch (operation_id) {
    case OSSL_OP_KEYMGMT:
        return (served & MBO_FAM_RSA) ? rsa_keymgmt : NULL;
    case OSSL_OP_SIGNATURE:
        return (served & MBO_FAM_RSA) ? rsa_signature : NULL;
    case OSSL_OP_CIPHER:
        return (served & MBO_FAM_GCM) ? gcm_ciphers : NULL;
    default:
        return NULL;
    }
}

static void teardown(void *provctx)
{
    struct mbp_ctx *pc = provctx;
    OSSL_LIB_CTX_free(pc->libctx);
    OPENSSL_free(pc);
    mbo_fini();
}

static const OSSL_DISPATCH provider_functions[] = {
    {OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))teardown},
    {OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, (void (*)(void))gettable_params},
    {OSSL_FUNC_PROVIDER_GET_PARAMS, (void (*)(void))get_params},
    {OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))query_operation},
    {OSSL_FUNC_PROVIDER_GET_REASON_STRINGS, (void (*)(void))get_reason_strings},
    {0, NULL},
};

/* serve_setting: the "serve" key of our openssl.cnf section, or NULL. */
static const char *serve_setting(const OSSL_CORE_HANDLE *handle)
{
    if (c_get_params == NULL) {
        return NULL;
    }
    const char *serve = NULL;
    OSSL_PARAM p[] = {OSSL_PARAM_utf8_ptr("serve", (char **)&serve, 0), OSSL_PARAM_END};
    if (!c_get_params(handle, p) || !OSSL_PARAM_modified(&p[0])) {
        return NULL;
    }
    return serve;
}

__attribute__((visibility("default"))) int OSSL_provider_init(const OSSL_CORE_HANDLE *handle,
                                                              const OSSL_DISPATCH *in,
                                                              const OSSL_DISPATCH **out,
                                                              void **provctx)
{
    for (const OSSL_DISPATCH *f = in; f->function_id != 0; f++) {
        switch (f->function_id) {
        case OSSL_FUNC_CORE_GET_PARAMS:
            c_get_params = OSSL_FUNC_core_get_params(f);
            break;
        case OSSL_FUNC_CORE_NEW_ERROR:
            c_new_error = OSSL_FUNC_core_new_error(f);
            break;
        case OSSL_FUNC_CORE_SET_ERROR_DEBUG:
            c_set_error_debug = OSSL_FUNC_core_set_error_debug(f);
            break;
        case OSSL_FUNC_CORE_VSET_ERROR:
            c_vset_error = OSSL_FUNC_core_vset_error(f);
            break;
        default:
            break;
        }
    }
    struct mbp_ctx *pc = OPENSSL_zalloc(sizeof(*pc));
    if (pc == NULL) {
        return 0;
    }
    pc->handle = handle;
    pc->libctx = OSSL_LIB_CTX_new_child(handle, in);
    if (pc->libctx == NULL || !mbo_init(serve_setting(handle))) {
        OSSL_LIB_CTX_free(pc->libctx);
        OPENSSL_free(pc);
        return 0;
    }
    *out = provider_functions;
    *provctx = pc;
    return 1;
}
