/*
 * mlkem.c - ML-KEM-768 key generation, encapsulation and decapsulation,
 * each one request through mbo_run (batched inside an ASYNC job), or, for
 * the deterministic forms (a given seed or m), one call through mbo_call;
 * counted.
 */
#include "mbo_local.h"

mbc_err mbo_mlkem768_keygen(uint8_t *ek, uint8_t *dk)
{
    mbc_job job = {.op = MBC_OP_MLKEM768_KEYGEN,
                   .out = ek,
                   .out_len = MBC_MLKEM768_EK_LEN,
                   .out2 = dk,
                   .out2_len = MBC_MLKEM768_DK_LEN};
    mbo_count(MBO_CTR_MLKEM_KEYGEN, 1);
    return mbo_run(&job);
}

mbc_err mbo_mlkem768_encaps(uint8_t *ct, uint8_t ss[MBC_MLKEM_SS_LEN], const uint8_t *ek)
{
    mbc_job job = {.op = MBC_OP_MLKEM768_ENCAPS,
                   .in = ek,
                   .in_len = MBC_MLKEM768_EK_LEN,
                   .out = ct,
                   .out_len = MBC_MLKEM768_CT_LEN,
                   .out2 = ss,
                   .out2_len = MBC_MLKEM_SS_LEN};
    mbo_count(MBO_CTR_MLKEM_ENCAPS, 1);
    return mbo_run(&job);
}

mbc_err mbo_mlkem768_decaps(uint8_t ss[MBC_MLKEM_SS_LEN], const uint8_t *ct, const uint8_t *dk)
{
    mbc_job job = {.op = MBC_OP_MLKEM768_DECAPS,
                   .in = ct,
                   .in_len = MBC_MLKEM768_CT_LEN,
                   .in2 = dk,
                   .in2_len = MBC_MLKEM768_DK_LEN,
                   .out = ss,
                   .out_len = MBC_MLKEM_SS_LEN};
    mbo_count(MBO_CTR_MLKEM_DECAPS, 1);
    return mbo_run(&job);
}

/* A deterministic call, run by mbo_call: in is the seed or m. */
struct det_call {
    uint8_t *out, *out2;
    const uint8_t *ek, *in;
    mbc_err err;
};

static void keygen_seed(void *arg)
{
    struct det_call *c = arg;
    c->err = mbc_mlkem_keygen_seed(MBC_MLKEM_768, c->out, c->out2, c->in, MBC_MLKEM_SEED_LEN);
}

static void encaps_m(void *arg)
{
    struct det_call *c = arg;
    c->err = mbc_mlkem_encaps_m(MBC_MLKEM_768, c->out, c->out2, c->ek, MBC_MLKEM768_EK_LEN, c->in);
}

static mbc_err det(void (*fn)(void *), struct det_call *c, enum mbo_counter ctr)
{
    c->err = MBC_ERR_NO_MEMORY;
    mbo_count(ctr, 1);
    return mbo_call(fn, c) ? c->err : MBC_ERR_NO_MEMORY;
}

mbc_err mbo_mlkem768_keygen_seed(uint8_t *ek, uint8_t *dk, const uint8_t *seed)
{
    struct det_call c = {.out = ek, .out2 = dk, .in = seed};
    return det(keygen_seed, &c, MBO_CTR_MLKEM_KEYGEN);
}

mbc_err mbo_mlkem768_encaps_m(uint8_t *ct, uint8_t ss[MBC_MLKEM_SS_LEN], const uint8_t *ek,
                              const uint8_t *m)
{
    struct det_call c = {.out = ct, .out2 = ss, .ek = ek, .in = m};
    return det(encaps_m, &c, MBO_CTR_MLKEM_ENCAPS);
}
