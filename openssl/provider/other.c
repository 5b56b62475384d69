/*
 * other.c - what the provider leaves to another provider (the default
 * one) in its child library context, with the property query
 * MBP_NOT_OURS: keys of sizes, curves or forms mbcrypto does not serve
 * (imported, generated, checked there and held inside our key data, see
 * rsa_kmgmt.c and ec_kmgmt.c), and the signatures made with such keys. A
 * delegated signature is one EVP operation of the other provider, set up
 * at our init with the caller's parameters; every later call (parameters
 * set and asked, data, sign, verify, dup) goes to it, so the caller sees
 * that provider's behaviour, errors included.
 */
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "prov.h"

EVP_PKEY *mbp_other_import(struct mbp_ctx *pc, const char *type, int selection,
                           const OSSL_PARAM params[])
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(pc->libctx, type, MBP_NOT_OURS);
    EVP_PKEY *k = NULL;
    if (c == NULL || EVP_PKEY_fromdata_init(c) != 1 ||
        EVP_PKEY_fromdata(c, &k, selection, (OSSL_PARAM *)params) != 1) {
        k = NULL;
    }
    EVP_PKEY_CTX_free(c);
    return k;
}

/* The caller's generation callback, for the other provider's progress. */
struct gen_cb {
    OSSL_CALLBACK *cb;
    void *cbarg;
};

static int gen_progress(EVP_PKEY_CTX *c)
{
    const struct gen_cb *g = EVP_PKEY_CTX_get_app_data(c);
    int potential = EVP_PKEY_CTX_get_keygen_info(c, 0),
        iteration = EVP_PKEY_CTX_get_keygen_info(c, 1);
    OSSL_PARAM p[] = {
        OSSL_PARAM_int(OSSL_GEN_PARAM_POTENTIAL, &potential),
        OSSL_PARAM_int(OSSL_GEN_PARAM_ITERATION, &iteration),
        OSSL_PARAM_END,
    };
    return g->cb(p, g->cbarg);
}

EVP_PKEY *mbp_other_gen(struct mbp_ctx *pc, const char *type, int selection,
                        const OSSL_PARAM *params, EVP_PKEY *templ, OSSL_CALLBACK *cb, void *cbarg)
{
    EVP_PKEY_CTX *c = templ != NULL ? EVP_PKEY_CTX_new_from_pkey(pc->libctx, templ, MBP_NOT_OURS)
                                    : EVP_PKEY_CTX_new_from_name(pc->libctx, type, MBP_NOT_OURS);
    EVP_PKEY *k = NULL;
    struct gen_cb g = {cb, cbarg};
    const int keys = (selection & MBP_SEL_KEYPAIR) != 0;
    if (c != NULL && (keys ? EVP_PKEY_keygen_init(c) : EVP_PKEY_paramgen_init(c)) == 1 &&
        (params == NULL || EVP_PKEY_CTX_set_params(c, params) == 1)) {
        if (cb != NULL) {
            EVP_PKEY_CTX_set_app_data(c, &g);
            EVP_PKEY_CTX_set_cb(c, gen_progress);
        }
        if ((keys ? EVP_PKEY_keygen(c, &k) : EVP_PKEY_paramgen(c, &k)) != 1) {
            k = NULL;
        }
    }
    EVP_PKEY_CTX_free(c);
    return k;
}

int mbp_other_validate(struct mbp_ctx *pc, EVP_PKEY *key, int selection)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(pc->libctx, key, MBP_NOT_OURS);
    int ok = 0;
    if (c != NULL) {
        if ((selection & MBP_SEL_KEYPAIR) == MBP_SEL_KEYPAIR) {
            ok = EVP_PKEY_pairwise_check(c);
        } else if (selection & MBP_SEL_PRIV) {
            ok = EVP_PKEY_private_check(c);
        } else if (selection & MBP_SEL_PUB) {
            ok = EVP_PKEY_public_check(c);
        } else {
            ok = EVP_PKEY_param_check(c);
        }
    }
    EVP_PKEY_CTX_free(c);
    return ok == 1;
}

/* ------------------------------------------------ delegated signatures */

void mbp_other_sig_reset(struct mbp_sigctx *b)
{
    if (b->other_md != NULL) {
        EVP_MD_CTX_free(b->other_md); /* it owns other */
    } else {
        EVP_PKEY_CTX_free(b->other);
    }
    b->other_md = NULL;
    b->other = NULL;
    mbp_sync_reset(&b->sync);
}

int mbp_other_sig_init(struct mbp_sigctx *b, EVP_PKEY *key, int signing, int digest,
                       const char *mdname, const OSSL_PARAM params[])
{
    mbp_other_sig_reset(b);
    OSSL_LIB_CTX *lib = b->pc->libctx;
    int ok;
    b->other_signing = signing;
    if (digest) {
        EVP_PKEY_CTX *pctx = NULL;
        ok = (b->other_md = EVP_MD_CTX_new()) != NULL &&
             (signing ? EVP_DigestSignInit_ex(b->other_md, &pctx, mdname, lib, MBP_NOT_OURS, key,
                                              params)
                      : EVP_DigestVerifyInit_ex(b->other_md, &pctx, mdname, lib, MBP_NOT_OURS, key,
                                                params)) == 1;
        b->other = pctx;
    } else {
        ok = (b->other = EVP_PKEY_CTX_new_from_pkey(lib, key, MBP_NOT_OURS)) != NULL &&
             (signing ? EVP_PKEY_sign_init_ex(b->other, params)
                      : EVP_PKEY_verify_init_ex(b->other, params)) == 1;
    }
    if (!ok || b->other == NULL) {
        mbp_other_sig_reset(b);
        return 0;
    }
    return 1;
}

int mbp_other_sig_sign(struct mbp_sigctx *b, unsigned char *sig, size_t *siglen, size_t sigsize,
                       const unsigned char *tbs, size_t tbslen)
{
    *siglen = sig != NULL ? sigsize : 0;
    return b->other_md == NULL && EVP_PKEY_sign(b->other, sig, siglen, tbs, tbslen) == 1;
}

int mbp_other_sig_verify(struct mbp_sigctx *b, const unsigned char *sig, size_t siglen,
                         const unsigned char *tbs, size_t tbslen)
{
    return b->other_md == NULL && EVP_PKEY_verify(b->other, sig, siglen, tbs, tbslen) == 1;
}

int mbp_other_sig_update(struct mbp_sigctx *b, const unsigned char *data, size_t len)
{
    return b->other_md != NULL &&
           (b->other_signing ? EVP_DigestSignUpdate(b->other_md, data, len)
                             : EVP_DigestVerifyUpdate(b->other_md, data, len)) == 1;
}

int mbp_other_sig_sign_final(struct mbp_sigctx *b, unsigned char *sig, size_t *siglen,
                             size_t sigsize)
{
    *siglen = sig != NULL ? sigsize : 0;
    return b->other_md != NULL && b->other_signing &&
           EVP_DigestSignFinal(b->other_md, sig, siglen) == 1;
}

int mbp_other_sig_verify_final(struct mbp_sigctx *b, const unsigned char *sig, size_t siglen)
{
    return b->other_md != NULL && !b->other_signing &&
           EVP_DigestVerifyFinal(b->other_md, sig, siglen) == 1;
}

int mbp_other_sig_set_params(struct mbp_sigctx *b, const OSSL_PARAM params[])
{
    return params == NULL || params[0].key == NULL ||
           EVP_PKEY_CTX_set_params(b->other, params) == 1;
}

int mbp_other_sig_get_params(struct mbp_sigctx *b, OSSL_PARAM params[])
{
    return EVP_PKEY_CTX_get_params(b->other, params) == 1;
}

int mbp_other_sig_dup(struct mbp_sigctx *copy, const struct mbp_sigctx *src)
{
    copy->other = NULL;
    copy->other_md = NULL;
    copy->sync = NULL;
    if (src->other_md != NULL) {
        if ((copy->other_md = EVP_MD_CTX_new()) == NULL ||
            !EVP_MD_CTX_copy_ex(copy->other_md, src->other_md) ||
            (copy->other = EVP_MD_CTX_get_pkey_ctx(copy->other_md)) == NULL) {
            mbp_other_sig_reset(copy);
            return 0;
        }
        return 1;
    }
    return src->other == NULL || (copy->other = EVP_PKEY_CTX_dup(src->other)) != NULL;
}

const OSSL_PARAM *mbp_other_sig_settable(const struct mbp_sigctx *b, const OSSL_PARAM *ours)
{
    return b != NULL && b->other != NULL ? EVP_PKEY_CTX_settable_params(b->other) : ours;
}

const OSSL_PARAM *mbp_other_sig_gettable(const struct mbp_sigctx *b, const OSSL_PARAM *ours)
{
    return b != NULL && b->other != NULL ? EVP_PKEY_CTX_gettable_params(b->other) : ours;
}

/* ------------------------------------------------ handed-off requests */

EVP_PKEY *mbp_sync_keep(EVP_PKEY **slot, EVP_PKEY *made)
{
    EVP_PKEY *none = NULL;
    if (made == NULL ||
        __atomic_compare_exchange_n(slot, &none, made, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        return made != NULL ? made : __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    }
    EVP_PKEY_free(made);
    return none;
}

void mbp_sync_reset(EVP_PKEY_CTX **slot)
{
    EVP_PKEY_CTX_free(*slot);
    *slot = NULL;
}

EVP_PKEY_CTX *mbp_sync_op(struct mbp_ctx *pc, EVP_PKEY_CTX **slot, EVP_PKEY *key,
                          enum mbp_sync_kind kind, EVP_PKEY *peer)
{
    if (*slot != NULL || key == NULL) {
        return *slot;
    }
    ERR_set_mark();
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(pc->libctx, key, MBP_NOT_OURS);
    int ok = c != NULL;
    switch (kind) {
    case MBP_SYNC_SIGN:
        ok = ok && EVP_PKEY_sign_init(c) == 1;
        break;
    case MBP_SYNC_VERIFY:
        ok = ok && EVP_PKEY_verify_init(c) == 1;
        break;
    case MBP_SYNC_RSA_RAW:
        ok = ok && EVP_PKEY_sign_init(c) == 1 &&
             EVP_PKEY_CTX_set_rsa_padding(c, RSA_NO_PADDING) == 1;
        break;
    case MBP_SYNC_DERIVE:
        ok = ok && peer != NULL && EVP_PKEY_derive_init(c) == 1 &&
             EVP_PKEY_derive_set_peer_ex(c, peer, 0) == 1;
        break;
    }
    if (!ok) {
        EVP_PKEY_CTX_free(c);
        ERR_pop_to_mark(); /* ours runs instead */
        return NULL;
    }
    ERR_clear_last_mark();
    return *slot = c;
}
