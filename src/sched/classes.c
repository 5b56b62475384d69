/*
 * classes.c - the lane manager's class table: one row per operation and key
 * size, with the calls that run a batch of the class and a lone job. This is
 * the only file of src/sched that knows the operations.
 */
#include "sched.h"

/* lane_status: job i gets the error of lane i of st. */
static void lane_status(mbc_job *const jobs[], unsigned n, mbc_status st)
{
    for (unsigned i = 0; i < n; i++) {
        jobs[i]->status = mbc_lane_code_to_err(mbc_lane_code(st, i));
    }
}

/* Lanes n..7 stay NULL and out of the lane mask: they read and write
 * nothing, and no key or input is repeated into them. */

static void rsa_priv_batch(const struct mbc_class *c, mbc_job *const jobs[], unsigned n)
{
    uint8_t *out[MBC_LANES] = {NULL};
    const uint8_t *in[MBC_LANES] = {NULL};
    const mbc_rsa_priv_key *key[MBC_LANES] = {NULL};
    for (unsigned i = 0; i < n; i++) {
        out[i] = jobs[i]->out;
        in[i] = jobs[i]->in;
        key[i] = jobs[i]->key;
    }
    lane_status(jobs, n, mbc_rsa_private_crt_mb8(out, in, key, c->bits, (1u << n) - 1u));
}

static void rsa_priv_one(const struct mbc_class *c, mbc_job *job)
{
    (void)c;
    job->status = mbc_rsa_private_crt(job->out, job->in, job->key);
}

static unsigned rsa_priv_bits(const void *key)
{
    return mbc_rsa_priv_key_bits(key);
}

static void rsa_pub_batch(const struct mbc_class *c, mbc_job *const jobs[], unsigned n)
{
    uint8_t *out[MBC_LANES] = {NULL};
    const uint8_t *in[MBC_LANES] = {NULL};
    const mbc_rsa_pub_key *key[MBC_LANES] = {NULL};
    for (unsigned i = 0; i < n; i++) {
        out[i] = jobs[i]->out;
        in[i] = jobs[i]->in;
        key[i] = jobs[i]->key;
    }
    lane_status(jobs, n, mbc_rsa_public_mb8(out, in, key, c->bits, (1u << n) - 1u));
}

static void rsa_pub_one(const struct mbc_class *c, mbc_job *job)
{
    (void)c;
    job->status = mbc_rsa_public(job->out, job->in, job->key);
}

static unsigned rsa_pub_bits(const void *key)
{
    return mbc_rsa_pub_key_bits(key);
}

/* RSA private runs at 4 jobs: 4 requests fill all 8 lanes of one CRT pass
 * (p halves in lanes 0..3, q halves in 4..7), so 4 at a time gives the
 * throughput of 8 (measured 94-96%, the fault check being paid per batch)
 * at half the wait. Public runs at 8. */
#define RSA_PRIV(b)                                                                                \
    {                                                                                              \
        MBC_OP_RSA_PRIVATE, b, "rsa" #b "-private", b / 8, 0, b / 8, 0, 0, 4, rsa_priv_bits,       \
            rsa_priv_batch, rsa_priv_one                                                           \
    }
#define RSA_PUB(b)                                                                                 \
    {                                                                                              \
        MBC_OP_RSA_PUBLIC, b, "rsa" #b "-public", b / 8, 0, b / 8, 0, 0, MBC_LANES, rsa_pub_bits,  \
            rsa_pub_batch, rsa_pub_one                                                             \
    }

static void x25519_derive_batch(const struct mbc_class *c, mbc_job *const jobs[], unsigned n)
{
    (void)c;
    uint8_t *out[MBC_LANES] = {NULL};
    const uint8_t *scalar[MBC_LANES] = {NULL}, *u[MBC_LANES] = {NULL};
    for (unsigned i = 0; i < n; i++) {
        out[i] = jobs[i]->out;
        scalar[i] = jobs[i]->in;
        u[i] = jobs[i]->in2;
    }
    lane_status(jobs, n, mbc_x25519_mb8(out, scalar, u, (1u << n) - 1u));
}

static void x25519_derive_one(const struct mbc_class *c, mbc_job *job)
{
    (void)c;
    job->status = mbc_x25519(job->out, job->in, job->in2);
}

static void x25519_keygen_batch(const struct mbc_class *c, mbc_job *const jobs[], unsigned n)
{
    (void)c;
    uint8_t *priv[MBC_LANES] = {NULL}, *pub[MBC_LANES] = {NULL};
    for (unsigned i = 0; i < n; i++) {
        priv[i] = jobs[i]->out;
        pub[i] = jobs[i]->out2;
    }
    lane_status(jobs, n, mbc_x25519_keygen_mb8(priv, pub, (1u << n) - 1u));
}

static void x25519_keygen_one(const struct mbc_class *c, mbc_job *job)
{
    (void)c;
    job->status = mbc_x25519_keygen(job->out, job->out2);
}

/* X25519 runs at 8 jobs: on IFMA the kernel's cost is the same for 1 to 8
 * requests (a batch of 8 has 8 times the throughput of 1), and on the
 * portable path each request costs the same alone or in a batch, so a
 * smaller batch would only cost throughput on IFMA. Keyless rows. */
#define X25519_LEN MBC_X25519_LEN

/* EC: the row's bits is the curve (mbc_curve). */

static unsigned ec_priv_curve(const void *key)
{
    return (unsigned)mbc_ec_priv_key_curve(key);
}

static unsigned ec_pub_curve(const void *key)
{
    return (unsigned)mbc_ec_pub_key_curve(key);
}

static void ecdsa_sign_batch(const struct mbc_class *c, mbc_job *const jobs[], unsigned n)
{
    uint8_t *sig[MBC_LANES] = {NULL};
    const uint8_t *digest[MBC_LANES] = {NULL};
    size_t len[MBC_LANES] = {0};
    const mbc_ec_priv_key *key[MBC_LANES] = {NULL};
    for (unsigned i = 0; i < n; i++) {
        sig[i] = jobs[i]->out;
        digest[i] = jobs[i]->in;
        len[i] = jobs[i]->in_len;
        key[i] = jobs[i]->key;
    }
    lane_status(jobs, n,
                mbc_ecdsa_sign_mb8(sig, digest, len, key, (mbc_curve)c->bits, (1u << n) - 1u));
}

static void ecdsa_sign_one(const struct mbc_class *c, mbc_job *job)
{
    (void)c;
    job->status = mbc_ecdsa_sign(job->out, job->in, job->in_len, job->key);
}

static void ecdsa_verify_batch(const struct mbc_class *c, mbc_job *const jobs[], unsigned n)
{
    const uint8_t *sig[MBC_LANES] = {NULL};
    const uint8_t *digest[MBC_LANES] = {NULL};
    size_t len[MBC_LANES] = {0};
    const mbc_ec_pub_key *key[MBC_LANES] = {NULL};
    for (unsigned i = 0; i < n; i++) {
        sig[i] = jobs[i]->in2;
        digest[i] = jobs[i]->in;
        len[i] = jobs[i]->in_len;
        key[i] = jobs[i]->key;
    }
    lane_status(jobs, n,
                mbc_ecdsa_verify_mb8(sig, digest, len, key, (mbc_curve)c->bits, (1u << n) - 1u));
}

static void ecdsa_verify_one(const struct mbc_class *c, mbc_job *job)
{
    (void)c;
    job->status = mbc_ecdsa_verify(job->in2, job->in, job->in_len, job->key);
}

static void ecdh_batch(const struct mbc_class *c, mbc_job *const jobs[], unsigned n)
{
    uint8_t *secret[MBC_LANES] = {NULL};
    const uint8_t *peer[MBC_LANES] = {NULL};
    const mbc_ec_priv_key *key[MBC_LANES] = {NULL};
    for (unsigned i = 0; i < n; i++) {
        secret[i] = jobs[i]->out;
        peer[i] = jobs[i]->in;
        key[i] = jobs[i]->key;
    }
    lane_status(jobs, n, mbc_ecdh_mb8(secret, peer, key, (mbc_curve)c->bits, (1u << n) - 1u));
}

static void ecdh_one(const struct mbc_class *c, mbc_job *job)
{
    (void)c;
    job->status = mbc_ecdh(job->out, job->in, job->in_len, job->key);
}

static void ec_keygen_batch(const struct mbc_class *c, mbc_job *const jobs[], unsigned n)
{
    uint8_t *d[MBC_LANES] = {NULL};
    uint8_t *point[MBC_LANES] = {NULL};
    for (unsigned i = 0; i < n; i++) {
        d[i] = jobs[i]->out;
        point[i] = jobs[i]->out2;
    }
    lane_status(jobs, n, mbc_ec_keygen_mb8(d, point, (mbc_curve)c->bits, (1u << n) - 1u));
}

static void ec_keygen_one(const struct mbc_class *c, mbc_job *job)
{
    job->status = mbc_ec_keygen(job->out, job->out2, (mbc_curve)c->bits);
}

/*
 * Every EC class runs at 8 jobs: one request per lane, nothing to pair (an
 * EC kernel pass costs the same for 2 requests as for 8 on IFMA, and the
 * portable path runs them one by one anyway). L is the scalar length,
 * digests are up to 64 bytes (SHA-512) of any length.
 */
#define EC_ROWS(curve, name, L)                                                                    \
    {MBC_OP_ECDSA_SIGN,                                                                            \
     curve,                                                                                        \
     name "-ecdsa-sign",                                                                           \
     64,                                                                                           \
     0,                                                                                            \
     2 * (L),                                                                                      \
     0,                                                                                            \
     MBC_CLASS_IN_ANY_LEN,                                                                         \
     MBC_LANES,                                                                                    \
     ec_priv_curve,                                                                                \
     ecdsa_sign_batch,                                                                             \
     ecdsa_sign_one},                                                                              \
        {MBC_OP_ECDSA_VERIFY,                                                                      \
         curve,                                                                                    \
         name "-ecdsa-verify",                                                                     \
         64,                                                                                       \
         2 * (L),                                                                                  \
         0,                                                                                        \
         0,                                                                                        \
         MBC_CLASS_IN_ANY_LEN,                                                                     \
         MBC_LANES,                                                                                \
         ec_pub_curve,                                                                             \
         ecdsa_verify_batch,                                                                       \
         ecdsa_verify_one},                                                                        \
    {                                                                                              \
        MBC_OP_ECDH, curve, name "-ecdh", 1 + 2 * (L), 0, (L), 0, 0, MBC_LANES, ec_priv_curve,     \
            ecdh_batch, ecdh_one                                                                   \
    }
#define EC_KEYGEN(op, curve, name, L)                                                              \
    {                                                                                              \
        op, curve, name "-keygen", 0, 0, (L), 1 + 2 * (L), 0, MBC_LANES, NULL, ec_keygen_batch,    \
            ec_keygen_one                                                                          \
    }

const struct mbc_class mbc_classes[] = {
    RSA_PRIV(2048),
    RSA_PRIV(3072),
    RSA_PRIV(4096),
    RSA_PUB(2048),
    RSA_PUB(3072),
    RSA_PUB(4096),
    EC_ROWS(MBC_CURVE_P256, "p256", 32),
    EC_ROWS(MBC_CURVE_P384, "p384", 48),
    EC_KEYGEN(MBC_OP_EC_KEYGEN_P256, MBC_CURVE_P256, "p256", 32),
    EC_KEYGEN(MBC_OP_EC_KEYGEN_P384, MBC_CURVE_P384, "p384", 48),
    {MBC_OP_X25519_DERIVE, 0, "x25519-derive", X25519_LEN, X25519_LEN, X25519_LEN, 0, 0, MBC_LANES,
     NULL, x25519_derive_batch, x25519_derive_one},
    {MBC_OP_X25519_KEYGEN, 0, "x25519-keygen", 0, 0, X25519_LEN, X25519_LEN, 0, MBC_LANES, NULL,
     x25519_keygen_batch, x25519_keygen_one},
};

const unsigned mbc_num_classes = sizeof(mbc_classes) / sizeof(mbc_classes[0]);

int mbc_class_find(mbc_job_op op, const void *key)
{
    for (unsigned i = 0; i < mbc_num_classes; i++) {
        const struct mbc_class *c = &mbc_classes[i];
        if (c->op == op && (c->key_bits == NULL || c->key_bits(key) == c->bits)) {
            return (int)i;
        }
    }
    return -1;
}

const struct mbc_class *mbc_class_of_op(mbc_job_op op)
{
    for (unsigned i = 0; i < mbc_num_classes; i++) {
        if (mbc_classes[i].op == op) {
            return &mbc_classes[i];
        }
    }
    return NULL;
}
