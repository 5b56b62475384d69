/* fuzz_rsa.c - see fuzz_rsa.h. */
#include <stdlib.h>

#include <openssl/core_names.h>
#include <openssl/param_build.h>

#include "fuzz_rsa.h"

const unsigned fz_rsa_bits[FZ_RSA_NUM_SIZES] = {2048, 3072, 4096};

BN_CTX *fz_bn_ctx(void)
{
    static BN_CTX *ctx;
    if (ctx == NULL) {
        ctx = BN_CTX_new();
        FZ_CHECK(ctx != NULL, "BN_CTX_new");
    }
    return ctx;
}

BIGNUM *fz_bn(const uint8_t *p, size_t len)
{
    BIGNUM *x = BN_bin2bn(p, (int)len, NULL);
    FZ_CHECK(x != NULL, "BN_bin2bn");
    return x;
}

void fz_bn_be(const BIGNUM *x, uint8_t *out, size_t len)
{
    FZ_CHECK(BN_bn2binpad(x, out, (int)len) == (int)len, "BN_bn2binpad: %d bits in %zu bytes",
             BN_num_bits(x), len);
}

void fz_bn_add_delta(BIGNUM *x, int delta)
{
    FZ_CHECK(delta >= 0 ? BN_add_word(x, (BN_ULONG)delta) == 1
                        : BN_sub_word(x, (BN_ULONG)-delta) == 1,
             "x + delta");
}

void fz_bn_flip_bit(BIGNUM *x, int bit)
{
    FZ_CHECK((BN_is_bit_set(x, bit) ? BN_clear_bit(x, bit) : BN_set_bit(x, bit)) == 1, "bit flip");
}

void fz_bn_wrap(BIGNUM *x, int bits)
{
    if (BN_is_negative(x)) {
        BIGNUM *m = BN_new();
        FZ_CHECK(m != NULL && BN_set_bit(m, bits) == 1 && BN_add(x, x, m) == 1, "x + 2^bits");
        BN_free(m);
    }
    if (BN_num_bits(x) > bits) {
        FZ_CHECK(BN_mask_bits(x, bits) == 1, "BN_mask_bits");
    }
}

int fz_rsa_supported(int bits)
{
    return bits == 2048 || bits == 3072 || bits == 4096;
}

fz_errs fz_rsa_pub_errs(const BIGNUM *n, const BIGNUM *e)
{
    fz_errs errs = 0;
    if (!fz_rsa_supported(BN_num_bits(n))) {
        errs |= FZ_ERR(MBC_ERR_KEY_SIZE);
    }
    if (!BN_is_odd(n)) {
        errs |= FZ_ERR(MBC_ERR_EVEN_MODULUS);
    }
    if (!BN_is_odd(e) || BN_num_bits(e) < 2 || BN_cmp(e, n) >= 0) {
        errs |= FZ_ERR(MBC_ERR_BAD_EXPONENT); /* odd e >= 3 has at least 2 bits */
    }
    return errs;
}

int fz_ossl_rsa_takes(const BIGNUM *n, const BIGNUM *e)
{
    return BN_cmp(e, n) < 0 && (BN_num_bits(n) <= 3072 || BN_num_bits(e) <= 64);
}

EVP_PKEY *fz_ossl_rsa_pub(const BIGNUM *n, const BIGNUM *e)
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    EVP_PKEY *pkey = NULL;
    FZ_CHECK(
        bld != NULL && ctx != NULL && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) == 1 &&
            OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) == 1 &&
            (params = OSSL_PARAM_BLD_to_param(bld)) != NULL && EVP_PKEY_fromdata_init(ctx) == 1 &&
            EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) == 1,
        "OpenSSL refused the public key");
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

EVP_PKEY *fz_seed_key(unsigned i, mbt_rsa_parts *parts)
{
    static EVP_PKEY *keys[FZ_RSA_NUM_SIZES];
    static mbt_rsa_parts key_parts[FZ_RSA_NUM_SIZES];
    if (keys[i] == NULL) {
        keys[i] = mbt_ossl_rsa_keygen(fz_rsa_bits[i], 65537);
        FZ_CHECK(keys[i] != NULL && mbt_ossl_rsa_get_parts(&key_parts[i], keys[i], 0) == 0,
                 "OpenSSL RSA-%u key generation", fz_rsa_bits[i]);
    }
    *parts = key_parts[i];
    return keys[i];
}
