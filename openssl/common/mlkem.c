/*
 * mlkem.c - ML-KEM-768 key generation from a seed, encapsulation and
 * decapsulation as jobs for mbo_run_jobs (batched inside an ASYNC job,
 * with the other requests of the call), and encapsulation with a given m
 * as one call through mbo_call; counted.
 */
#include "mbo_local.h"

void mbo_mlkem768_keygen_seed_job(mbc_job *job, uint8_t *ek, uint8_t *dk, const uint8_t *seed)
{
    *job = (mbc_job){.op = MBC_OP_MLKEM768_KEYGEN_SEED,
                     .in = seed,
                     .in_len = MBC_MLKEM_SEED_LEN,
                     .out = ek,
                     .out_len = MBC_MLKEM768_EK_LEN,
                     .out2 = dk,
                     .out2_len = MBC_MLKEM768_DK_LEN};
    mbo_count(MBO_CTR_MLKEM_KEYGEN, 1);
}

void mbo_mlkem768_encaps_job(mbc_job *job, uint8_t *ct, uint8_t ss[MBC_MLKEM_SS_LEN],
                             const uint8_t *ek)
{
    *job = (mbc_job){.op = MBC_OP_MLKEM768_ENCAPS,
                     .in = ek,
                     .in_len = MBC_MLKEM768_EK_LEN,
                     .out = ct,
                     .out_len = MBC_MLKEM768_CT_LEN,
                     .out2 = ss,
                     .out2_len = MBC_MLKEM_SS_LEN};
    mbo_count(MBO_CTR_MLKEM_ENCAPS, 1);
}

void mbo_mlkem768_decaps_job(mbc_job *job, uint8_t ss[MBC_MLKEM_SS_LEN], const uint8_t *ct,
                             const uint8_t *dk)
{
    *job = (mbc_job){.op = MBC_OP_MLKEM768_DECAPS,
                     .in = ct,
                     .in_len = MBC_MLKEM768_CT_LEN,
                     .in2 = dk,
                     .in2_len = MBC_MLKEM768_DK_LEN,
                     .out = ss,
                     .out_len = MBC_MLKEM_SS_LEN};
    mbo_count(MBO_CTR_MLKEM_DECAPS, 1);
}

/* An encapsulation with a given m, run by mbo_call. */
struct encaps_m_call {
    uint8_t *ct, *ss;
    const uint8_t *ek, *m;
    mbc_err err;
};

static void encaps_m(void *arg)
{
    struct encaps_m_call *c = arg;
    c->err = mbc_mlkem_encaps_m(MBC_MLKEM_768, c->ct, c->ss, c->ek, MBC_MLKEM768_EK_LEN, c->m);
}

mbc_err mbo_mlkem768_encaps_m(uint8_t *ct, uint8_t ss[MBC_MLKEM_SS_LEN], const uint8_t *ek,
                              const uint8_t *m)
{
    struct encaps_m_call c = {ct, ss, ek, m, MBC_ERR_NO_MEMORY};
    mbo_count(MBO_CTR_MLKEM_ENCAPS, 1);
    return mbo_call(encaps_m, &c) ? c.err : MBC_ERR_NO_MEMORY;
}
