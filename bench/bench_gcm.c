/*
 * bench_gcm.c - the AES-GCM workloads of mbc_bench.
 *
 * One operation = one one-shot seal (or open, tag checked) of a message of
 * the case's size with a 12-byte IV, no AAD and a 16-byte tag, the key set
 * up once. mbcrypto: mbc_gcm_seal / mbc_gcm_open. OpenSSL: EVP with the key
 * set once; IV, update, final and tag per message. intel-ipsec-mb: its
 * one-shot IMB_AESxxx_GCM_ENC/DEC on the architecture init_mb_mgr_auto()
 * picks. The key objects are shared by the threads (all three libraries
 * allow that); contexts and output buffers are per thread.
 *
 * Setup checks mbcrypto's ciphertext and tag against OpenSSL and
 * intel-ipsec-mb and that every open returns the plaintext; while timing,
 * every call's return code is checked and every open checks its tag. Small
 * messages are timed in runs of calls (16 KiB per run), so that reading the
 * clock costs everyone the same small share.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#if MBT_HAVE_IPSEC_MB
#include <intel-ipsec-mb.h>
#endif

#include "bench.h"

struct gcm_thread {
    const gcm_case *c;
    uint8_t *out;
    uint8_t tag[16];
    EVP_CIPHER_CTX *enc, *dec;
#if MBT_HAVE_IPSEC_MB
    IMB_MGR *imb;
    struct gcm_context_data ictx;
#endif
};

struct gcm_case {
    unsigned bits;
    size_t len;
    unsigned batch; /* operations between two clock reads */
    uint8_t key[32], iv[12], tag[16];
    uint8_t *pt, *ct;
    mbc_gcm_key *mkey;
    const EVP_CIPHER *cipher;
#if MBT_HAVE_IPSEC_MB
    struct gcm_key_data *ikey;
#endif
    struct gcm_thread *th[BENCH_MAX_THREADS];
};

const char *gcm_ipsec_mb(void)
{
#if MBT_HAVE_IPSEC_MB
    static char buf[64];
    static const char *const arch[] = {"none", "no-aesni", "sse", "avx", "avx2", "avx512"};
    IMB_MGR *mgr = alloc_mb_mgr(0);
    IMB_ARCH a = IMB_ARCH_NONE;
    if (mgr != NULL) {
        init_mb_mgr_auto(mgr, &a);
        free_mb_mgr(mgr);
    }
    snprintf(buf, sizeof(buf), "intel-ipsec-mb %s (%s)", imb_get_version_str(),
             (unsigned)a < sizeof(arch) / sizeof(arch[0]) ? arch[a] : "?");
    return buf;
#else
    return NULL;
#endif
}

/* ------------------------------------------------------------------------ */
/* One operation of each implementation; 0 or -1                             */
/* ------------------------------------------------------------------------ */

static int mbc_seal_one(struct gcm_thread *t)
{
    const gcm_case *c = t->c;
    return mbc_gcm_seal(c->mkey, t->out, t->tag, 16, c->iv, 12, NULL, 0, c->pt, c->len) == MBC_OK
               ? 0
               : -1;
}

static int mbc_open_one(struct gcm_thread *t)
{
    const gcm_case *c = t->c;
    return mbc_gcm_open(c->mkey, t->out, c->tag, 16, c->iv, 12, NULL, 0, c->ct, c->len) == MBC_OK
               ? 0
               : -1;
}

static int ossl_seal_one(struct gcm_thread *t)
{
    const gcm_case *c = t->c;
    int n;
    return EVP_EncryptInit_ex(t->enc, NULL, NULL, NULL, c->iv) == 1 &&
                   EVP_EncryptUpdate(t->enc, t->out, &n, c->pt, (int)c->len) == 1 &&
                   EVP_EncryptFinal_ex(t->enc, t->out + n, &n) == 1 &&
                   EVP_CIPHER_CTX_ctrl(t->enc, EVP_CTRL_GCM_GET_TAG, 16, t->tag) == 1
               ? 0
               : -1;
}

static int ossl_open_one(struct gcm_thread *t)
{
    const gcm_case *c = t->c;
    int n;
    return EVP_DecryptInit_ex(t->dec, NULL, NULL, NULL, c->iv) == 1 &&
                   EVP_DecryptUpdate(t->dec, t->out, &n, c->ct, (int)c->len) == 1 &&
                   EVP_CIPHER_CTX_ctrl(t->dec, EVP_CTRL_GCM_SET_TAG, 16, (void *)c->tag) == 1 &&
                   EVP_DecryptFinal_ex(t->dec, t->out + n, &n) == 1
               ? 0
               : -1;
}

#if MBT_HAVE_IPSEC_MB
static int imb_seal_one(struct gcm_thread *t)
{
    const gcm_case *c = t->c;
    if (c->bits == 128) {
        IMB_AES128_GCM_ENC(t->imb, c->ikey, &t->ictx, t->out, c->pt, c->len, c->iv, NULL, 0, t->tag,
                           16);
    } else if (c->bits == 192) {
        IMB_AES192_GCM_ENC(t->imb, c->ikey, &t->ictx, t->out, c->pt, c->len, c->iv, NULL, 0, t->tag,
                           16);
    } else {
        IMB_AES256_GCM_ENC(t->imb, c->ikey, &t->ictx, t->out, c->pt, c->len, c->iv, NULL, 0, t->tag,
                           16);
    }
    return 0;
}

static int imb_open_one(struct gcm_thread *t)
{
    const gcm_case *c = t->c;
    if (c->bits == 128) {
        IMB_AES128_GCM_DEC(t->imb, c->ikey, &t->ictx, t->out, c->ct, c->len, c->iv, NULL, 0, t->tag,
                           16);
    } else if (c->bits == 192) {
        IMB_AES192_GCM_DEC(t->imb, c->ikey, &t->ictx, t->out, c->ct, c->len, c->iv, NULL, 0, t->tag,
                           16);
    } else {
        IMB_AES256_GCM_DEC(t->imb, c->ikey, &t->ictx, t->out, c->ct, c->len, c->iv, NULL, 0, t->tag,
                           16);
    }
    /* Like the others, the tag is checked (in constant time). */
    return CRYPTO_memcmp(t->tag, c->tag, 16) == 0 ? 0 : -1;
}
#endif

typedef int (*gcm_one_fn)(struct gcm_thread *t);

/* one_fns[impl][op] */
static const gcm_one_fn one_fns[3][2] = {
    {mbc_seal_one, mbc_open_one},
    {ossl_seal_one, ossl_open_one},
#if MBT_HAVE_IPSEC_MB
    {imb_seal_one, imb_open_one},
#else
    {NULL, NULL},
#endif
};

static const char *const impl_names[3] = {"mbcrypto", "OpenSSL", "intel-ipsec-mb"};

int gcm_run(void *ts, const void *arg, double seconds, run_out *out)
{
    struct gcm_thread *t = ts;
    const gcm_case *c = t->c;
    const gcm_arg *a = arg;
    const gcm_one_fn fn = one_fns[a->impl][a->op];
    const uint64_t start = bench_now_ns(), end = start + (uint64_t)(seconds * 1e9);
    uint64_t now;
    do {
        for (unsigned i = 0; i < c->batch; i++) {
            if (fn(t) != 0) {
                ERR_print_errors_fp(stderr);
                return bench_fail("AES-%u-GCM %zu B: %s %s failed", c->bits, c->len,
                                  impl_names[a->impl], a->op == GCM_OP_SEAL ? "seal" : "open");
            }
        }
        out->ops += c->batch;
        now = bench_now_ns();
    } while (now < end);
    out->elapsed = (double)(now - start) * 1e-9;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Setup                                                                     */
/* ------------------------------------------------------------------------ */

void gcm_case_free(gcm_case *c)
{
    if (c == NULL) {
        return;
    }
    for (unsigned i = 0; i < BENCH_MAX_THREADS; i++) {
        struct gcm_thread *t = c->th[i];
        if (t == NULL) {
            continue;
        }
        EVP_CIPHER_CTX_free(t->enc);
        EVP_CIPHER_CTX_free(t->dec);
#if MBT_HAVE_IPSEC_MB
        if (t->imb != NULL) {
            free_mb_mgr(t->imb);
        }
#endif
        free(t->out);
        free(t);
    }
    mbc_gcm_key_free(c->mkey);
#if MBT_HAVE_IPSEC_MB
    free(c->ikey);
#endif
    free(c->pt);
    free(c->ct);
    OPENSSL_cleanse(c, sizeof(*c));
    free(c);
}

static int thread_new(gcm_case *c, unsigned i)
{
    struct gcm_thread *t = calloc(1, sizeof(*t));
    c->th[i] = t;
    if (t == NULL || (t->out = malloc(c->len + 64)) == NULL) {
        return bench_fail("out of memory");
    }
    t->c = c;
    t->enc = EVP_CIPHER_CTX_new();
    t->dec = EVP_CIPHER_CTX_new();
    if (t->enc == NULL || t->dec == NULL ||
        EVP_EncryptInit_ex(t->enc, c->cipher, NULL, c->key, c->iv) != 1 ||
        EVP_DecryptInit_ex(t->dec, c->cipher, NULL, c->key, c->iv) != 1) {
        ERR_print_errors_fp(stderr);
        return bench_fail("OpenSSL GCM setup failed");
    }
#if MBT_HAVE_IPSEC_MB
    t->imb = alloc_mb_mgr(0);
    if (t->imb == NULL) {
        return bench_fail("intel-ipsec-mb: alloc_mb_mgr failed");
    }
    init_mb_mgr_auto(t->imb, NULL);
#endif
    return 0;
}

/* check_seal: impl's seal gives mbcrypto's ciphertext and tag, and its open
 * gives the plaintext back. */
static int check_impl(gcm_case *c, unsigned impl)
{
    struct gcm_thread *t = c->th[0];
    if (one_fns[impl][GCM_OP_SEAL] == NULL) {
        return 0;
    }
    memset(t->out, 0, c->len);
    memset(t->tag, 0, 16);
    if (one_fns[impl][GCM_OP_SEAL](t) != 0 || memcmp(t->out, c->ct, c->len) != 0 ||
        memcmp(t->tag, c->tag, 16) != 0) {
        return bench_fail("AES-%u-GCM %zu B: %s's ciphertext or tag differs from mbcrypto's",
                          c->bits, c->len, impl_names[impl]);
    }
    memset(t->out, 0, c->len);
    if (one_fns[impl][GCM_OP_OPEN](t) != 0 || memcmp(t->out, c->pt, c->len) != 0) {
        return bench_fail("AES-%u-GCM %zu B: %s's open does not return the plaintext", c->bits,
                          c->len, impl_names[impl]);
    }
    return 0;
}

gcm_case *gcm_case_new(unsigned bits, size_t len, const bench_opts *opts)
{
    gcm_case *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        bench_fail("out of memory");
        return NULL;
    }
    c->bits = bits;
    c->len = len;
    c->batch = len >= 16384 ? 1 : (unsigned)(16384 / len);
    c->pt = malloc(len + 64);
    c->ct = malloc(len + 64);
    c->cipher = bits == 128   ? EVP_aes_128_gcm()
                : bits == 192 ? EVP_aes_192_gcm()
                              : EVP_aes_256_gcm();
    int rc = 0;
    mbc_err err = MBC_OK;
    if (c->pt == NULL || c->ct == NULL) {
        rc = bench_fail("out of memory");
    } else if (RAND_bytes(c->key, sizeof(c->key)) != 1 || RAND_bytes(c->iv, sizeof(c->iv)) != 1 ||
               RAND_bytes(c->pt, (int)len) != 1) {
        rc = bench_fail("RAND_bytes failed");
    } else if ((err = mbc_gcm_key_new(&c->mkey, c->key, bits / 8)) != MBC_OK ||
               (err = mbc_gcm_seal(c->mkey, c->ct, c->tag, 16, c->iv, 12, NULL, 0, c->pt, len)) !=
                   MBC_OK) {
        rc = bench_fail("AES-%u-GCM: %s", bits, mbc_err_str(err));
    }
#if MBT_HAVE_IPSEC_MB
    if (rc == 0) {
        c->ikey = aligned_alloc(64, (sizeof(*c->ikey) + 63) & ~(size_t)63);
        IMB_MGR *mgr = alloc_mb_mgr(0);
        if (c->ikey == NULL || mgr == NULL) {
            rc = bench_fail("intel-ipsec-mb setup failed");
        } else {
            init_mb_mgr_auto(mgr, NULL);
            if (bits == 128) {
                IMB_AES128_GCM_PRE(mgr, c->key, c->ikey);
            } else if (bits == 192) {
                IMB_AES192_GCM_PRE(mgr, c->key, c->ikey);
            } else {
                IMB_AES256_GCM_PRE(mgr, c->key, c->ikey);
            }
        }
        if (mgr != NULL) {
            free_mb_mgr(mgr);
        }
    }
#endif
    for (unsigned i = 0; i < opts->threads && rc == 0; i++) {
        rc = thread_new(c, i);
    }
    for (unsigned impl = 0; impl < 3 && rc == 0; impl++) {
        rc = check_impl(c, impl);
    }
    if (rc != 0) {
        gcm_case_free(c);
        return NULL;
    }
    return c;
}

void *const *gcm_case_threads(const gcm_case *c)
{
    return (void *const *)c->th;
}

const char *gcm_case_impl(const gcm_case *c)
{
    return mbc_gcm_key_impl(c->mkey);
}
