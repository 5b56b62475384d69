/*
 * classes.c - the lane manager's class table, mbc_classes: one row per
 * operation and key size (or curve). A row says which job fields the
 * operation uses and their lengths, how many jobs fill a batch, how to size
 * a job's key, and its two adapters: `batch` for the operation's _mb8 call,
 * `lone` for its single-request call. One marshaller, mbc_class_run, serves
 * every row: it copies the fields the row uses from each job into per-lane
 * arrays (struct mbc_lanes) and hands them to an adapter, which only passes
 * them on in the order its call takes them. A new operation is a row, plus
 * two one-line adapters when its calls are new. This is the only file of
 * src/sched that knows the operations.
 */
#include "sched.h"

/*
 * mbc_lanes: a batch as the adapters see it: the fields of its jobs, job i
 * in lane i, the lane mask and the row's bits (the modulus size or the
 * curve). Fields the row does not use, and lanes n..7, stay NULL (0) and
 * out of mask: they read and write nothing, and no key or input is repeated
 * into them. A lone job is lane 0.
 */
struct mbc_lanes {
    uint8_t *out[MBC_LANES], *out2[MBC_LANES];
    const uint8_t *in[MBC_LANES], *in2[MBC_LANES];
    size_t in_len[MBC_LANES];
    const void *key[MBC_LANES];
    unsigned mask;
    unsigned bits;
};

/* The marshaller: the only code that copies job fields to lanes and lane
 * codes back to jobs. */
void mbc_class_run(const struct mbc_class *c, mbc_job *const jobs[], unsigned n)
{
    struct mbc_lanes l = {.mask = (1u << n) - 1u, .bits = c->bits};
    for (unsigned i = 0; i < n; i++) {
        const mbc_job *j = jobs[i];
        l.out[i] = c->out_len != 0 ? j->out : NULL;
        l.out2[i] = c->out2_len != 0 ? j->out2 : NULL;
        l.in[i] = c->in_len != 0 ? j->in : NULL;
        l.in_len[i] = c->in_len != 0 ? j->in_len : 0;
        l.in2[i] = c->in2_len != 0 ? j->in2 : NULL;
        l.key[i] = c->key_bits != NULL ? j->key : NULL;
    }
    if (n == 1) {
        jobs[0]->status = c->lone(&l);
        return;
    }
    const mbc_status st = c->batch(&l);
    for (unsigned i = 0; i < n; i++) {
        jobs[i]->status = mbc_lane_code_to_err(mbc_lane_code(st, i));
    }
}

/* The key sizes (key_bits): RSA's modulus bits, EC's curve. */

static unsigned rsa_priv_bits(const void *key)
{
    return mbc_rsa_priv_key_bits(key);
}

static unsigned rsa_pub_bits(const void *key)
{
    return mbc_rsa_pub_key_bits(key);
}

static unsigned ec_priv_curve(const void *key)
{
    return (unsigned)mbc_ec_priv_key_curve(key);
}

static unsigned ec_pub_curve(const void *key)
{
    return (unsigned)mbc_ec_pub_key_curve(key);
}

/* KEYS(T, l): the keys of l as the array of T pointers an _mb8 call takes
 * (each converted from const void *, not the array reinterpreted). */
_Static_assert(MBC_LANES == 8, "KEYS names every lane");
#define KEYS(T, l)                                                                                 \
    ((const T *const[MBC_LANES]){(l)->key[0], (l)->key[1], (l)->key[2], (l)->key[3], (l)->key[4],  \
                                 (l)->key[5], (l)->key[6], (l)->key[7]})

/* The adapters, batch and lone for each operation: each passes the lanes on
 * in the order its call takes them. */

static mbc_status rsa_priv_batch(const struct mbc_lanes *l)
{
    return mbc_rsa_private_crt_mb8(l->out, l->in, KEYS(mbc_rsa_priv_key, l), l->bits, l->mask);
}

static mbc_err rsa_priv_lone(const struct mbc_lanes *l)
{
    return mbc_rsa_private_crt(l->out[0], l->in[0], l->key[0]);
}

static mbc_status rsa_pub_batch(const struct mbc_lanes *l)
{
    return mbc_rsa_public_mb8(l->out, l->in, KEYS(mbc_rsa_pub_key, l), l->bits, l->mask);
}

static mbc_err rsa_pub_lone(const struct mbc_lanes *l)
{
    return mbc_rsa_public(l->out[0], l->in[0], l->key[0]);
}

static mbc_status ecdsa_sign_batch(const struct mbc_lanes *l)
{
    return mbc_ecdsa_sign_mb8(l->out, l->in, l->in_len, KEYS(mbc_ec_priv_key, l),
                              (mbc_curve)l->bits, l->mask);
}

static mbc_err ecdsa_sign_lone(const struct mbc_lanes *l)
{
    return mbc_ecdsa_sign(l->out[0], l->in[0], l->in_len[0], l->key[0]);
}

/* Verification: the signature is in2, the digest in. */
static mbc_status ecdsa_verify_batch(const struct mbc_lanes *l)
{
    return mbc_ecdsa_verify_mb8(l->in2, l->in, l->in_len, KEYS(mbc_ec_pub_key, l),
                                (mbc_curve)l->bits, l->mask);
}

static mbc_err ecdsa_verify_lone(const struct mbc_lanes *l)
{
    return mbc_ecdsa_verify(l->in2[0], l->in[0], l->in_len[0], l->key[0]);
}

static mbc_status ecdh_batch(const struct mbc_lanes *l)
{
    return mbc_ecdh_mb8(l->out, l->in, KEYS(mbc_ec_priv_key, l), (mbc_curve)l->bits, l->mask);
}

static mbc_err ecdh_lone(const struct mbc_lanes *l)
{
    return mbc_ecdh(l->out[0], l->in[0], l->in_len[0], l->key[0]);
}

/* Key generation: d to out, the point to out2. */
static mbc_status ec_keygen_batch(const struct mbc_lanes *l)
{
    return mbc_ec_keygen_mb8(l->out, l->out2, (mbc_curve)l->bits, l->mask);
}

static mbc_err ec_keygen_lone(const struct mbc_lanes *l)
{
    return mbc_ec_keygen(l->out[0], l->out2[0], (mbc_curve)l->bits);
}

/* X25519 derive: the scalar is in, the peer's u in2. */
static mbc_status x25519_derive_batch(const struct mbc_lanes *l)
{
    return mbc_x25519_mb8(l->out, l->in, l->in2, l->mask);
}

static mbc_err x25519_derive_lone(const struct mbc_lanes *l)
{
    return mbc_x25519(l->out[0], l->in[0], l->in2[0]);
}

/* X25519 key generation: the private key to out, the public key to out2. */
static mbc_status x25519_keygen_batch(const struct mbc_lanes *l)
{
    return mbc_x25519_keygen_mb8(l->out, l->out2, l->mask);
}

static mbc_err x25519_keygen_lone(const struct mbc_lanes *l)
{
    return mbc_x25519_keygen(l->out[0], l->out2[0]);
}

/* X25519 public key: the scalar is in, the public key to out. */
static mbc_status x25519_public_batch(const struct mbc_lanes *l)
{
    return mbc_x25519_public_key_mb8(l->out, l->in, l->mask);
}

static mbc_err x25519_public_lone(const struct mbc_lanes *l)
{
    return mbc_x25519_public_key(l->out[0], l->in[0]);
}

/* ML-KEM-768 key generation: ek to out, dk to out2. */
static mbc_status mlkem_keygen_batch(const struct mbc_lanes *l)
{
    return mbc_mlkem_keygen_mb8(MBC_MLKEM_768, l->out, l->out2, l->mask);
}

static mbc_err mlkem_keygen_lone(const struct mbc_lanes *l)
{
    return mbc_mlkem_keygen(MBC_MLKEM_768, l->out[0], l->out2[0]);
}

/* ML-KEM-768 key generation from a seed: the seed is in, ek to out, dk to
 * out2. */
static mbc_status mlkem_keygen_seed_batch(const struct mbc_lanes *l)
{
    return mbc_mlkem_keygen_seed_mb8(MBC_MLKEM_768, l->out, l->out2, l->in, l->mask);
}

static mbc_err mlkem_keygen_seed_lone(const struct mbc_lanes *l)
{
    return mbc_mlkem_keygen_seed(MBC_MLKEM_768, l->out[0], l->out2[0], l->in[0], l->in_len[0]);
}

/* ML-KEM-768 encapsulation: ek is in, the ciphertext to out, the secret
 * to out2. */
static mbc_status mlkem_encaps_batch(const struct mbc_lanes *l)
{
    return mbc_mlkem_encaps_mb8(MBC_MLKEM_768, l->out, l->out2, l->in, l->mask);
}

static mbc_err mlkem_encaps_lone(const struct mbc_lanes *l)
{
    return mbc_mlkem_encaps(MBC_MLKEM_768, l->out[0], l->out2[0], l->in[0], l->in_len[0]);
}

/* ML-KEM-768 decapsulation: the ciphertext is in, dk in2, the secret to
 * out. */
static mbc_status mlkem_decaps_batch(const struct mbc_lanes *l)
{
    return mbc_mlkem_decaps_mb8(MBC_MLKEM_768, l->out, l->in, l->in2, l->mask);
}

static mbc_err mlkem_decaps_lone(const struct mbc_lanes *l)
{
    return mbc_mlkem_decaps(MBC_MLKEM_768, l->out[0], l->in[0], l->in_len[0], l->in2[0],
                            MBC_MLKEM768_DK_LEN);
}

/*
 * The rows, one macro per operation (its size as the arguments). Lengths
 * left out are 0: the field is not used (see sched.h).
 *
 * RSA: bits is the modulus size; in and out are bits/8 bytes. Private runs
 * at 4 jobs: 4 requests fill all 8 lanes of one CRT pass (p halves in lanes
 * 0..3, q halves in 4..7), so 4 at a time gives the throughput of 8
 * (measured 94-96%, the fault check being paid per batch) at half the wait.
 * Public runs at 8.
 */
#define RSA_PRIVATE(b)                                                                             \
    {                                                                                              \
        .op = MBC_OP_RSA_PRIVATE, .bits = (b), .name = "rsa" #b "-private", .in_len = (b) / 8,     \
        .out_len = (b) / 8, .lanes = 4, .key_bits = rsa_priv_bits, .batch = rsa_priv_batch,        \
        .lone = rsa_priv_lone                                                                      \
    }
#define RSA_PUBLIC(b)                                                                              \
    {                                                                                              \
        .op = MBC_OP_RSA_PUBLIC, .bits = (b), .name = "rsa" #b "-public", .in_len = (b) / 8,       \
        .out_len = (b) / 8, .lanes = MBC_LANES, .key_bits = rsa_pub_bits, .batch = rsa_pub_batch,  \
        .lone = rsa_pub_lone                                                                       \
    }

/*
 * EC: bits is the curve, L its scalar length. Every EC class runs at 8
 * jobs: one request per lane, nothing to pair (an EC kernel pass costs the
 * same for 2 requests as for 8 on IFMA, and the portable path runs them
 * one by one anyway). Digests are up to 64 bytes (SHA-512) of any length.
 */
#define ECDSA_SIGN(curve, prefix, L)                                                               \
    {                                                                                              \
        .op = MBC_OP_ECDSA_SIGN, .bits = curve, .name = prefix "-ecdsa-sign", .in_len = 64,        \
        .out_len = 2 * (L), .flags = MBC_CLASS_IN_ANY_LEN, .lanes = MBC_LANES,                     \
        .key_bits = ec_priv_curve, .batch = ecdsa_sign_batch, .lone = ecdsa_sign_lone              \
    }
#define ECDSA_VERIFY(curve, prefix, L)                                                             \
    {                                                                                              \
        .op = MBC_OP_ECDSA_VERIFY, .bits = curve, .name = prefix "-ecdsa-verify", .in_len = 64,    \
        .in2_len = 2 * (L), .flags = MBC_CLASS_IN_ANY_LEN, .lanes = MBC_LANES,                     \
        .key_bits = ec_pub_curve, .batch = ecdsa_verify_batch, .lone = ecdsa_verify_lone           \
    }
#define ECDH(curve, prefix, L)                                                                     \
    {                                                                                              \
        .op = MBC_OP_ECDH, .bits = curve, .name = prefix "-ecdh", .in_len = 1 + 2 * (L),           \
        .out_len = (L), .lanes = MBC_LANES, .key_bits = ec_priv_curve, .batch = ecdh_batch,        \
        .lone = ecdh_lone                                                                          \
    }
#define EC_KEYGEN(o, curve, prefix, L)                                                             \
    {                                                                                              \
        .op = o, .bits = curve, .name = prefix "-keygen", .out_len = (L), .out2_len = 1 + 2 * (L), \
        .lanes = MBC_LANES, .batch = ec_keygen_batch, .lone = ec_keygen_lone                       \
    }

/*
 * X25519: keyless rows, one each. They run at 8 jobs: on IFMA the kernel's
 * cost is the same for 1 to 8 requests (a batch of 8 has 8 times the
 * throughput of 1), and on the portable path each request costs the same
 * alone or in a batch, so a smaller batch would only cost throughput on
 * IFMA.
 */
#define X25519_DERIVE                                                                              \
    {                                                                                              \
        .op = MBC_OP_X25519_DERIVE, .name = "x25519-derive", .in_len = MBC_X25519_LEN,             \
        .in2_len = MBC_X25519_LEN, .out_len = MBC_X25519_LEN, .lanes = MBC_LANES,                  \
        .batch = x25519_derive_batch, .lone = x25519_derive_lone                                   \
    }
#define X25519_KEYGEN                                                                              \
    {                                                                                              \
        .op = MBC_OP_X25519_KEYGEN, .name = "x25519-keygen", .out_len = MBC_X25519_LEN,            \
        .out2_len = MBC_X25519_LEN, .lanes = MBC_LANES, .batch = x25519_keygen_batch,              \
        .lone = x25519_keygen_lone                                                                 \
    }
#define X25519_PUBLIC_KEY                                                                          \
    {                                                                                              \
        .op = MBC_OP_X25519_PUBLIC_KEY, .name = "x25519-public-key", .in_len = MBC_X25519_LEN,     \
        .out_len = MBC_X25519_LEN, .lanes = MBC_LANES, .batch = x25519_public_batch,               \
        .lone = x25519_public_lone                                                                 \
    }

/*
 * ML-KEM-768: keyless rows. They run at 8 jobs: a batch hashes the SHAKE
 * streams of all its requests side by side (four at a time on AVX2), so
 * more requests fill the 4-way groups better.
 */
#define MLKEM768_KEYGEN                                                                            \
    {                                                                                              \
        .op = MBC_OP_MLKEM768_KEYGEN, .name = "mlkem768-keygen", .out_len = MBC_MLKEM768_EK_LEN,   \
        .out2_len = MBC_MLKEM768_DK_LEN, .lanes = MBC_LANES, .batch = mlkem_keygen_batch,          \
        .lone = mlkem_keygen_lone                                                                  \
    }
#define MLKEM768_KEYGEN_SEED                                                                       \
    {                                                                                              \
        .op = MBC_OP_MLKEM768_KEYGEN_SEED, .name = "mlkem768-keygen-seed",                         \
        .in_len = MBC_MLKEM_SEED_LEN, .out_len = MBC_MLKEM768_EK_LEN,                              \
        .out2_len = MBC_MLKEM768_DK_LEN, .lanes = MBC_LANES, .batch = mlkem_keygen_seed_batch,     \
        .lone = mlkem_keygen_seed_lone                                                             \
    }
#define MLKEM768_ENCAPS                                                                            \
    {                                                                                              \
        .op = MBC_OP_MLKEM768_ENCAPS, .name = "mlkem768-encaps", .in_len = MBC_MLKEM768_EK_LEN,    \
        .out_len = MBC_MLKEM768_CT_LEN, .out2_len = MBC_MLKEM_SS_LEN, .lanes = MBC_LANES,          \
        .batch = mlkem_encaps_batch, .lone = mlkem_encaps_lone                                     \
    }
#define MLKEM768_DECAPS                                                                            \
    {                                                                                              \
        .op = MBC_OP_MLKEM768_DECAPS, .name = "mlkem768-decaps", .in_len = MBC_MLKEM768_CT_LEN,    \
        .in2_len = MBC_MLKEM768_DK_LEN, .out_len = MBC_MLKEM_SS_LEN, .lanes = MBC_LANES,           \
        .batch = mlkem_decaps_batch, .lone = mlkem_decaps_lone                                     \
    }

const struct mbc_class mbc_classes[] = {
    RSA_PRIVATE(2048),
    RSA_PRIVATE(3072),
    RSA_PRIVATE(4096),
    RSA_PUBLIC(2048),
    RSA_PUBLIC(3072),
    RSA_PUBLIC(4096),
    ECDSA_SIGN(MBC_CURVE_P256, "p256", 32),
    ECDSA_VERIFY(MBC_CURVE_P256, "p256", 32),
    ECDH(MBC_CURVE_P256, "p256", 32),
    ECDSA_SIGN(MBC_CURVE_P384, "p384", 48),
    ECDSA_VERIFY(MBC_CURVE_P384, "p384", 48),
    ECDH(MBC_CURVE_P384, "p384", 48),
    EC_KEYGEN(MBC_OP_EC_KEYGEN_P256, MBC_CURVE_P256, "p256", 32),
    EC_KEYGEN(MBC_OP_EC_KEYGEN_P384, MBC_CURVE_P384, "p384", 48),
    X25519_DERIVE,
    X25519_KEYGEN,
    X25519_PUBLIC_KEY,
    MLKEM768_KEYGEN,
    MLKEM768_KEYGEN_SEED,
    MLKEM768_ENCAPS,
    MLKEM768_DECAPS,
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
