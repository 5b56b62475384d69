/*
 * gcm_vaes512.c - the _vaes512 implementation table: the nasm kernels of
 * src/asm/gcm_vaes512.asm (prototypes and register use are documented there)
 * plus AES-NI for single blocks.
 */
#include "gcm_internal.h"

#if MBC_HAVE_VAES

/* Faster than OpenSSL's own code: "auto" serves it. */
const struct mbc_gcm_impl mbc_gcm_impl_vaes512 = {
    .base = {.info = {.name = "vaes512", .tier = MBC_TIER_VECTOR, .lanes = 1, .fast_ops = 1},
             .needs = MBC_GCM_VAES512_NEEDS},
    .subword = mbc_gcm_subword_aesni,
    .powers = mbc_gcm_hash_powers_aesni,
    .block = mbc_gcm_block_aesni,
    .ghash = mbc_gcm_ghash_vaes512,
    .enc = mbc_gcm_enc_vaes512,
    .dec = mbc_gcm_dec_vaes512,
    .seal12 = mbc_gcm_seal12_vaes512,
    .open12 = mbc_gcm_open12_vaes512,
};

#else
/* ISO C forbids an empty translation unit. */
typedef int mbc_gcm_vaes512_unused;
#endif
