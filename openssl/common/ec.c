/*
 * ec.c - P-256/P-384 ECDSA, ECDH and key generation, and X25519, each one
 * request through mbo_run (see mbo.h), counted; the requests a hybrid KEM
 * runs together also as jobs for mbo_run_jobs (the _job builders).
 */
#include "mbo_local.h"

/* run: job through mbo_run, counted as c. */
static mbc_err run(enum mbo_counter c, mbc_job *job)
{
    mbo_count(c, 1);
    return mbo_run(job);
}

/* A key object call, run by mbo_call. */
struct key_call {
    mbc_ec_priv_key *priv;
    mbc_ec_pub_key *pub;
    mbc_curve curve;
    const uint8_t *in;
    size_t len;
    const uint8_t *point; /* priv_new: the pair's point, or NULL */
    size_t point_len;
    uint8_t *out;
    mbc_err err;
};

static mbc_err call(void (*fn)(void *), struct key_call *c)
{
    c->err = MBC_ERR_NO_MEMORY;
    if (!mbo_call(fn, c)) {
        return MBC_ERR_NO_MEMORY;
    }
    return c->err;
}

static void priv_new(void *arg)
{
    struct key_call *c = arg;
    c->err = c->point != NULL ? mbc_ec_priv_key_new_pair(&c->priv, c->curve, c->in, c->len,
                                                         c->point, c->point_len)
                              : mbc_ec_priv_key_new(&c->priv, c->curve, c->in, c->len);
}

static void pub_new(void *arg)
{
    struct key_call *c = arg;
    c->err = mbc_ec_pub_key_new(&c->pub, c->curve, c->in, c->len);
}

static void x25519_pub(void *arg)
{
    struct key_call *c = arg;
    c->err = mbc_x25519_public_key(c->out, c->in);
}

mbc_err mbo_ec_priv_key_new(mbc_ec_priv_key **key, mbc_curve curve, const uint8_t *d, size_t d_len)
{
    struct key_call c = {.curve = curve, .in = d, .len = d_len};
    const mbc_err err = call(priv_new, &c);
    *key = c.priv;
    return err;
}

mbc_err mbo_ec_priv_key_new_pair(mbc_ec_priv_key **key, mbc_curve curve, const uint8_t *d,
                                 size_t d_len, const uint8_t *point, size_t point_len)
{
    struct key_call c = {
        .curve = curve, .in = d, .len = d_len, .point = point, .point_len = point_len};
    const mbc_err err = point != NULL ? call(priv_new, &c) : MBC_ERR_NULL_PARAM;
    *key = c.priv;
    return err;
}

mbc_err mbo_ec_pub_key_new(mbc_ec_pub_key **key, mbc_curve curve, const uint8_t *point,
                           size_t point_len)
{
    struct key_call c = {.curve = curve, .in = point, .len = point_len};
    const mbc_err err = call(pub_new, &c);
    *key = c.pub;
    return err;
}

mbc_err mbo_x25519_public_key(uint8_t out[MBC_X25519_LEN], const uint8_t scalar[MBC_X25519_LEN])
{
    struct key_call c = {.in = scalar, .out = out};
    return call(x25519_pub, &c);
}

void mbo_x25519_keygen_job(mbc_job *job, uint8_t priv[MBC_X25519_LEN], uint8_t pub[MBC_X25519_LEN])
{
    *job = (mbc_job){.op = MBC_OP_X25519_KEYGEN,
                     .out = priv,
                     .out_len = MBC_X25519_LEN,
                     .out2 = pub,
                     .out2_len = MBC_X25519_LEN};
    mbo_count(MBO_CTR_X25519_KEYGEN, 1);
}

void mbo_x25519_public_key_job(mbc_job *job, uint8_t pub[MBC_X25519_LEN],
                               const uint8_t priv[MBC_X25519_LEN])
{
    *job = (mbc_job){.op = MBC_OP_X25519_PUBLIC_KEY,
                     .in = priv,
                     .in_len = MBC_X25519_LEN,
                     .out = pub,
                     .out_len = MBC_X25519_LEN};
    mbo_count(MBO_CTR_X25519_KEYGEN, 1);
}

void mbo_x25519_derive_job(mbc_job *job, uint8_t out[MBC_X25519_LEN],
                           const uint8_t priv[MBC_X25519_LEN], const uint8_t peer[MBC_X25519_LEN])
{
    *job = (mbc_job){.op = MBC_OP_X25519_DERIVE,
                     .in = priv,
                     .in_len = MBC_X25519_LEN,
                     .in2 = peer,
                     .in2_len = MBC_X25519_LEN,
                     .out = out,
                     .out_len = MBC_X25519_LEN};
    mbo_count(MBO_CTR_X25519_DERIVE, 1);
}

void mbo_ec_keygen_job(mbc_job *job, mbc_curve curve, uint8_t *d, uint8_t *point)
{
    *job = (mbc_job){.op = curve == MBC_CURVE_P256 ? MBC_OP_EC_KEYGEN_P256 : MBC_OP_EC_KEYGEN_P384,
                     .out = d,
                     .out_len = mbc_ec_scalar_len(curve),
                     .out2 = point,
                     .out2_len = mbc_ec_point_len(curve)};
    mbo_count(MBO_CTR_EC_KEYGEN, 1);
}

void mbo_ecdh_job(mbc_job *job, const mbc_ec_priv_key *key, uint8_t *out, const uint8_t *peer,
                  size_t peer_len)
{
    *job = (mbc_job){.op = MBC_OP_ECDH,
                     .key = key,
                     .in = peer,
                     .in_len = peer_len,
                     .out = out,
                     .out_len = mbc_ec_scalar_len(mbc_ec_priv_key_curve(key))};
    mbo_count(MBO_CTR_ECDH, 1);
}

mbc_err mbo_x25519_keygen(uint8_t priv[MBC_X25519_LEN], uint8_t pub[MBC_X25519_LEN])
{
    mbc_job job;
    mbo_x25519_keygen_job(&job, priv, pub);
    return mbo_run(&job);
}

mbc_err mbo_x25519_derive(uint8_t out[MBC_X25519_LEN], const uint8_t priv[MBC_X25519_LEN],
                          const uint8_t peer[MBC_X25519_LEN])
{
    mbc_job job;
    mbo_x25519_derive_job(&job, out, priv, peer);
    return mbo_run(&job);
}

mbc_err mbo_ec_keygen(mbc_curve curve, uint8_t *d, uint8_t *point)
{
    if (mbc_ec_scalar_len(curve) == 0) {
        return MBC_ERR_BAD_PARAM;
    }
    mbc_job job;
    mbo_ec_keygen_job(&job, curve, d, point);
    return mbo_run(&job);
}

mbc_err mbo_ecdh(const mbc_ec_priv_key *key, uint8_t *out, const uint8_t *peer, size_t peer_len)
{
    mbc_job job;
    mbo_ecdh_job(&job, key, out, peer, peer_len);
    return mbo_run(&job);
}

mbc_err mbo_ecdsa_sign(const mbc_ec_priv_key *key, uint8_t *sig, const uint8_t *dgst, size_t dlen)
{
    mbc_job job = {.op = MBC_OP_ECDSA_SIGN,
                   .key = key,
                   .in = dgst,
                   .in_len = dlen,
                   .out = sig,
                   .out_len = mbc_ec_sig_len(mbc_ec_priv_key_curve(key))};
    return run(MBO_CTR_ECDSA_SIGN, &job);
}

mbc_err mbo_ecdsa_verify(const mbc_ec_pub_key *key, const uint8_t *sig, const uint8_t *dgst,
                         size_t dlen)
{
    mbc_job job = {.op = MBC_OP_ECDSA_VERIFY,
                   .key = key,
                   .in = dgst,
                   .in_len = dlen,
                   .in2 = sig,
                   .in2_len = mbc_ec_sig_len(mbc_ec_pub_key_curve(key))};
    return run(MBO_CTR_ECDSA_VERIFY, &job);
}
