/*
 * fuzz_mgr.c - the lane manager (mbc_mgr_*) driven by fuzzed sequences of
 * submit, flush, poll, get_completed, free and NULL-argument calls over a
 * pool of 16 job slots, checked against a model of what the header promises:
 *  - submit accepts every job not in a manager (MBC_ERR_BUSY, job untouched,
 *    for one that is); a job with bad fields completes at once with its
 *    documented error; a class that fills its batch (4 RSA private, 8 jobs
 *    of every other class) runs inside submit; MBC_MGR_SYNC runs every job
 *    at once;
 *  - every accepted job is returned by get_completed exactly once, with the
 *    status and output the model predicts (OpenSSL's result, computed once
 *    per key and input; for random outputs, a signature OpenSSL verifies or
 *    a key pair OpenSSL derives again; zeroed outputs on an error of a
 *    known class; nothing written past the class's lengths, nor at all when
 *    the class is unknown), its user_data untouched;
 *  - jobs complete in batches: each batch's jobs in submission order, batches
 *    in the order they ran (those of one flush or poll in any order, but
 *    each batch together);
 *  - flush and poll return the number of jobs they ran, mbc_mgr_pending the
 *    number waiting, mbc_mgr_next_deadline_us -1 when nothing waits;
 *  - mbc_mgr_free runs what waits and releases every job with its final
 *    status, submittable again.
 * Deadlines are made deterministic: max_wait_us is 0, or so long that no job
 * is ever due, or 1 us with every poll preceded by a 2 us wait (then poll runs
 * every waiting class, as flush does).
 *
 * Jobs: RSA private and public on keys of 2048 (e = 65537 and e = 3), 3072
 * and 4096 bits, inputs below n (random, n - 1, 0) and n itself (MBC_ERR_
 * BAD_PARAM when it runs); bad fields: NULL key, in or out, wrong in_len or
 * out_len, a key of the other type, of another size, a GCM key, garbage, an
 * unknown op. EC and X25519 jobs (job_of_ec): ECDSA sign, verify of a valid
 * and an invalid signature, ECDH with a valid peer point and one off the
 * curve, keygen, on P-256 and P-384; X25519 derive (also with u of small
 * order), keygen (also with out == out2); their bad fields as the RSA
 * ones, and keys the keyless ops must ignore. RSA work is bounded per input
 * (about 0.3 s of the portable kernels under ASan, a 4096-bit private job
 * and a few small ones); submits past the budget are skipped.
 *
 * Input:
 *   0      bits 0-1: RSA implementation; bits 2-3: 0 max_wait_us 0, 1
 *          MBC_MGR_SYNC, 2 max_wait_us UINT32_MAX, 3 max_wait_us 1; bit 4: end
 *          with mbc_mgr_free on what is left (else flush and collect first)
 *   then   operations, one byte each (mod 10): 0-1 submit an RSA job, 2-3
 *          an EC or X25519 job (then a slot byte and a job byte, see job_of
 *          and job_of_ec), 4 flush, 5 poll, 6 collect one,
 *          7 collect all, 8 NULL-argument calls (then a byte), 9 free the
 *          manager and make a new one
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "fuzz_rsa.h"
#include "ossl_ec.h"
#include "ossl_x25519.h"

#define NSLOTS 16
#define NKEYS 4
#define NIN 4 /* inputs per key and op: random, n - 1, 0 (below n), n */
#define CANARY 0xA5
#define BUDGET 30 /* RSA work per input, in units of about 10 ms */
#define MAX_BATCHES 1024

/* ------------------------------------------------------------ the fixture */

struct key {
    unsigned bits;
    size_t len;
    mbc_rsa_priv_key *priv;
    mbc_rsa_pub_key *pub;
    uint8_t *in[2][NIN];  /* [op][i], exactly len bytes; in[op][NIN - 1] = n */
    uint8_t *ref[2][NIN]; /* OpenSSL's result for the inputs below n */
    uint8_t *in_long[2];  /* len + 1 bytes, for jobs with in_len + 1 */
    unsigned cost[2];     /* budget units of a job */
};

static struct key keys[NKEYS];
static mbc_gcm_key *gcm_key; /* a key object of another family */
static uint8_t *garbage;     /* bytes that are no key object at all */
#define GARBAGE_LEN 16384

static void make_key(struct key *k, unsigned bits, uint64_t e)
{
    EVP_PKEY *pkey = mbt_ossl_rsa_keygen(bits, e);
    mbt_rsa_parts parts;
    FZ_CHECK(pkey != NULL && mbt_ossl_rsa_get_parts(&parts, pkey, bits / 8) == 0 &&
                 mbt_rsa_keys_new(&k->priv, &k->pub, &parts) == MBC_OK,
             "RSA-%u key", bits);
    k->bits = bits;
    k->len = bits / 8;
    const uint8_t *n = parts.c[MBT_RSA_N];
    for (int op = 0; op < 2; op++) {
        for (int i = 0; i < NIN; i++) {
            uint8_t *x = k->in[op][i] = fz_alloc(k->len);
            k->ref[op][i] = fz_alloc(k->len);
            if (i == 0) {
                fz_seed_rand(x, k->len);
                x[0] = (uint8_t)(x[0] % n[0]);
            } else if (i == 1 || i == NIN - 1) {
                memcpy(x, n, k->len);
                x[k->len - 1] ^= i == 1; /* n - 1 (n is odd), or n */
            } else {
                memset(x, 0, k->len);
            }
            if (i < NIN - 1) {
                FZ_CHECK(mbt_ossl_rsa_raw(pkey, op == 0, k->ref[op][i], x, k->len) == 0,
                         "OpenSSL raw RSA");
            }
        }
        k->in_long[op] = fz_alloc(k->len + 1);
        memcpy(k->in_long[op], k->in[op][0], k->len);
        k->in_long[op][k->len] = 0;
    }
    k->cost[0] = bits == 2048 ? 4 : bits == 3072 ? 12 : 26;
    k->cost[1] = 1;
    mbt_rsa_parts_free(&parts);
    EVP_PKEY_free(pkey);
}

/* EC and X25519 jobs: per curve a key pair, a digest and a valid and an
 * invalid signature of its first 32 bytes, a peer point with the shared
 * secret, a point off the curve; an X25519 scalar, a peer u with the
 * shared secret, and u = 1 (of small order). */
struct ecfx {
    mbc_curve curve;
    size_t len, plen;
    mbc_ec_priv_key *priv;
    mbc_ec_pub_key *pub;
    EVP_PKEY *pkey;
    uint8_t digest[64], sig[96], bad_sig[96], peer[97], off[97], secret[48];
};
static struct ecfx ecs[2];
static struct {
    uint8_t scalar[32], u[32], low[32], secret[32];
} xfx;

static void make_ec(struct ecfx *e, mbc_curve curve)
{
    e->curve = curve;
    e->len = mbc_ec_scalar_len(curve);
    e->plen = mbc_ec_point_len(curve);
    uint8_t d[48], q[97];
    e->pkey = mbt_ossl_ec_keygen(curve);
    EVP_PKEY *peer = mbt_ossl_ec_keygen(curve);
    FZ_CHECK(e->pkey != NULL && peer != NULL && mbt_ossl_ec_get(e->pkey, curve, d, q) == 0 &&
                 mbt_ossl_ec_get(peer, curve, NULL, e->peer) == 0 &&
                 mbc_ec_priv_key_new(&e->priv, curve, d, e->len) == MBC_OK &&
                 mbc_ec_pub_key_new(&e->pub, curve, q, e->plen) == MBC_OK,
             "EC key");
    fz_seed_rand(e->digest, sizeof(e->digest));
    FZ_CHECK(mbt_ossl_ecdsa_sign(e->pkey, curve, e->digest, 32, e->sig) == 0 &&
                 mbt_ossl_ecdh(e->pkey, peer, e->secret, e->len) == 0,
             "OpenSSL ECDSA / ECDH");
    memcpy(e->bad_sig, e->sig, 2 * e->len);
    e->bad_sig[2 * e->len - 1] ^= 1;
    memcpy(e->off, e->peer, e->plen);
    e->off[e->plen - 1] ^= 1;
    EVP_PKEY *off = mbt_ossl_ec_from_point(curve, e->off, e->plen);
    FZ_CHECK(off == NULL, "the point off the curve is on it");
    EVP_PKEY_free(peer);
    OPENSSL_cleanse(d, sizeof(d));
}

static void init(void)
{
    make_key(&keys[0], 2048, 65537);
    make_key(&keys[1], 3072, 65537);
    make_key(&keys[2], 4096, 65537);
    make_key(&keys[3], 2048, 3);
    /* An AES key that begins as an RSA-2048 private key object used to
     * (issue 9, promise 1: such a GCM key was taken for an RSA key). */
    const uint8_t k[16] = {0x53, 0x41, 0x53, 0x52, 0x00, 0x08, 0x00, 0x00};
    FZ_CHECK(mbc_gcm_key_new(&gcm_key, k, sizeof(k)) == MBC_OK, "GCM key");
    garbage = fz_alloc(GARBAGE_LEN);
    memset(garbage, 0xFF, GARBAGE_LEN);
    make_ec(&ecs[0], MBC_CURVE_P256);
    make_ec(&ecs[1], MBC_CURVE_P384);
    uint8_t other[32];
    fz_seed_rand(xfx.scalar, 32);
    fz_seed_rand(other, 32);
    xfx.low[0] = 1;
    FZ_CHECK(mbt_ossl_x25519_public(xfx.u, other) == 0 &&
                 mbt_ossl_x25519(xfx.secret, xfx.scalar, xfx.u) == 0 &&
                 mbt_ossl_x25519(other, xfx.scalar, xfx.low) == 1,
             "OpenSSL X25519");
    fprintf(stderr, "fuzz_mgr: RSA implementations:");
    for (unsigned i = 0; i < fz_num_impls(MBC_ALG_RSA); i++) {
        fprintf(stderr, " %s", fz_impl(MBC_ALG_RSA, i));
    }
    fprintf(stderr, "\n");
}

/* ------------------------------------------------------------- the model */

/* Model classes, as the header's: RSA op (0 private, 1 public) x size
 * (0-5); per curve sign, verify, ECDH, keygen (6-9 P-256, 10-13 P-384);
 * X25519 derive (14) and keygen (15). */
#define NCLASSES 16
static int class_of(unsigned op, unsigned bits)
{
    return (int)(3 * op + (bits - 2048) / 1024);
}
#define EC_CLASS(curve, i) (6 + 4 * (int)(curve) + (int)(i))
#define X25519_CLASS(i) (14 + (int)(i))
static unsigned class_lanes(int c)
{
    return c < 3 ? 4 : 8;
}

enum where { FREE, WAITING, DONE };

/* How an OK job's output is checked: the bytes want_out, an ECDSA signature
 * of digest (OpenSSL verifies it), an EC key pair (d, d G), an X25519 key
 * pair (clamped, OpenSSL's public key). */
enum check { CHK_BYTES, CHK_SIG, CHK_EC_KEY, CHK_X25519_KEY };

struct slot {
    mbc_job job;
    uint8_t *out;   /* exactly job.out_len bytes (NULL for a NULL out) */
    size_t out_len; /* the buffer's length */
    enum where where;
    int cls; /* model class, -1 when the job fails the manager's checks */
    mbc_err want;
    const uint8_t *want_out; /* MBC_OK: the first len bytes of out */
    size_t len;              /* bytes of out that may be written */
    int zeroed;              /* on error: len bytes of out zeroed, else nothing written */
    uint8_t *out2;           /* exactly out2_len bytes, or NULL (not passed, or out itself) */
    size_t out2_len, len2;
    int zeroed2;
    enum check check;
    const struct ecfx *ec; /* CHK_SIG, CHK_EC_KEY */
    size_t digest_len;     /* CHK_SIG: of ec->digest */
};

struct batch {
    unsigned group; /* batches of one group ran in one call, in an order not promised */
    unsigned n, next;
    uint8_t slot[MBC_LANES];
};

struct model {
    mbc_mgr *mgr;
    mbc_mgr_config cfg;
    int mode;
    struct slot slots[NSLOTS];
    unsigned waiting[NCLASSES][MBC_LANES]; /* slots of each class, oldest first */
    unsigned num_waiting[NCLASSES];
    struct batch done[MAX_BATCHES]; /* completed, not yet fully collected, oldest first */
    unsigned num_done;
    int open; /* the batch being collected (its first job was returned), or -1 */
    unsigned group;
    unsigned budget;
};

enum mode { MODE_NO_WAIT, MODE_SYNC, MODE_NEVER_DUE, MODE_DUE };

static size_t model_pending(const struct model *m)
{
    size_t n = 0;
    for (int c = 0; c < NCLASSES; c++) {
        n += m->num_waiting[c];
    }
    return n;
}

/* complete: a batch of n slots completes now, in group. */
static void complete(struct model *m, const unsigned *slots, unsigned n, unsigned group)
{
    FZ_CHECK(m->num_done < MAX_BATCHES, "model: too many batches");
    fz_count(n == 1 ? "batches of 1 job" : n < 4 ? "batches of 2-3 jobs" : "batches of 4-8 jobs");
    struct batch *b = &m->done[m->num_done++];
    b->group = group;
    b->n = n;
    b->next = 0;
    for (unsigned i = 0; i < n; i++) {
        b->slot[i] = (uint8_t)slots[i];
        m->slots[slots[i]].where = DONE;
    }
}

/* run_class: class c's waiting jobs run as one batch in group. */
static size_t run_class(struct model *m, int c, unsigned group)
{
    const unsigned n = m->num_waiting[c];
    if (n != 0) {
        complete(m, m->waiting[c], n, group);
        m->num_waiting[c] = 0;
    }
    return n;
}

/* run_all: what flush (and a poll when every job is due) does. */
static size_t run_all(struct model *m)
{
    const unsigned group = ++m->group;
    size_t n = 0;
    for (int c = 0; c < NCLASSES; c++) {
        n += run_class(m, c, group);
    }
    return n;
}

/* check_ok: the output of a job that completed with MBC_OK. */
static void check_ok(const struct slot *x)
{
    const mbc_job *j = &x->job;
    switch (x->check) {
    case CHK_BYTES:
        if (x->out != NULL) {
            fz_expect_same("job output", x->out, x->want_out, x->len);
        }
        break;
    case CHK_SIG:
        FZ_CHECK(mbt_ossl_ecdsa_verify(x->ec->pkey, x->ec->curve, x->out, x->ec->digest,
                                       x->digest_len) == 1,
                 "the signature of a sign job does not verify");
        break;
    case CHK_EC_KEY: {
        uint8_t want[97];
        FZ_CHECK(mbt_ossl_ec_mul_g(x->ec->curve, x->out, x->ec->len, want) == 0,
                 "keygen job: d is 0 or >= n");
        fz_expect_same("keygen job: point = d G", x->out2, want, x->ec->plen);
        break;
    }
    default: {
        uint8_t want[32];
        FZ_CHECK((j->out[0] & 7) == 0 && (j->out[31] & 0xC0) == 0x40 &&
                     mbt_ossl_x25519_public(want, j->out) == 0,
                 "X25519 keygen job: private key not clamped");
        fz_expect_same("X25519 keygen job: public key", j->out2, want, 32);
        break;
    }
    }
}

/* check_done: slot s completed as the model says. */
static void check_done(const struct model *m, unsigned s)
{
    const struct slot *x = &m->slots[s];
    const mbc_job *j = &x->job;
    FZ_CHECK(j->user_data == x, "slot %u: user_data changed", s);
    FZ_CHECK(j->status == x->want, "slot %u (class %d): status %s, want %s", s, x->cls,
             mbc_err_str(j->status), mbc_err_str(x->want));
    if (x->want == MBC_OK) {
        check_ok(x);
    }
    for (unsigned i = 0; i < 2; i++) {
        const uint8_t *o = i == 0 ? x->out : x->out2;
        const size_t len = i == 0 ? x->len : x->len2, o_len = i == 0 ? x->out_len : x->out2_len;
        if (o == NULL) {
            continue;
        }
        size_t written = 0;
        if (x->want == MBC_OK) {
            written = len;
        } else if (i == 0 ? x->zeroed : x->zeroed2) {
            FZ_CHECK(fz_all(o, len, 0), "slot %u: output %u of a failed job not zeroed", s, i);
            written = len;
        }
        FZ_CHECK(fz_all(o + written, o_len - written, CANARY),
                 "slot %u: output %u written past %zu bytes", s, i, written);
    }
    (void)m;
}

/* collect: one mbc_mgr_get_completed, checked. Returns 0 when it gave NULL. */
static int collect(struct model *m)
{
    mbc_job *job = mbc_mgr_get_completed(m->mgr);
    if (m->num_done == 0) {
        FZ_CHECK(job == NULL, "get_completed returned a job; none is complete");
        return 0;
    }
    FZ_CHECK(job != NULL, "get_completed returned NULL; %u batches are complete", m->num_done);
    unsigned s = 0;
    while (s < NSLOTS && job != &m->slots[s].job) {
        s++;
    }
    FZ_CHECK(s < NSLOTS, "get_completed returned a job that is not ours");
    FZ_CHECK(m->slots[s].where == DONE, "slot %u returned while %s", s,
             m->slots[s].where == FREE ? "not in the manager" : "waiting");
    /* It must be the next job of the open batch, or the first of a batch of
     * the oldest group. */
    int bi = -1;
    if (m->open >= 0) {
        bi = m->open;
    } else {
        for (unsigned i = 0; i < m->num_done && m->done[i].group == m->done[0].group; i++) {
            if (m->done[i].slot[0] == s) {
                bi = (int)i;
            }
        }
    }
    FZ_CHECK(bi >= 0 && m->done[bi].slot[m->done[bi].next] == s,
             "slot %u returned out of order (class %d)", s, m->slots[s].cls);
    check_done(m, s);
    fz_count("jobs collected");
    m->slots[s].where = FREE;
    struct batch *b = &m->done[bi];
    if (++b->next == b->n) {
        memmove(b, b + 1, (m->num_done - (unsigned)bi - 1) * sizeof(*b));
        m->num_done--;
        m->open = -1;
    } else {
        m->open = bi;
    }
    return 1;
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* check_counts: pending and the next deadline against the model. */
static void check_counts(const struct model *m)
{
    const size_t pending = model_pending(m);
    FZ_CHECK(mbc_mgr_pending(m->mgr) == pending, "pending %zu, want %zu", mbc_mgr_pending(m->mgr),
             pending);
    const int64_t d = mbc_mgr_next_deadline_us(m->mgr);
    if (pending == 0 || m->cfg.max_wait_us == 0) {
        FZ_CHECK(d == -1, "next deadline %lld, want -1", (long long)d);
    } else {
        FZ_CHECK(d >= 0 && d <= (int64_t)m->cfg.max_wait_us, "next deadline %lld of %u",
                 (long long)d, m->cfg.max_wait_us);
        FZ_CHECK(m->mode != MODE_NEVER_DUE || d > 0, "a job is due after %u us",
                 m->cfg.max_wait_us);
    }
}

static void new_mgr(struct model *m)
{
    m->mgr = NULL;
    FZ_CHECK(mbc_mgr_new(&m->mgr, &m->cfg) == MBC_OK && m->mgr != NULL, "mbc_mgr_new");
}

/* free_mgr: mbc_mgr_free with whatever is in it: every job then has its
 * final status and is out of the manager. */
static void free_mgr(struct model *m)
{
    run_all(m);
    mbc_mgr_free(m->mgr);
    m->mgr = NULL;
    for (unsigned s = 0; s < NSLOTS; s++) {
        if (m->slots[s].where != FREE) {
            check_done(m, s);
            fz_count("jobs released by mbc_mgr_free");
            m->slots[s].where = FREE;
        }
    }
    m->num_done = 0;
    m->open = -1;
}

/* ---------------------------------------------------------------- submits */

/*
 * job_of: slot s becomes the job that byte spec describes: bits 0-1 the key,
 * bit 2 the op (0 private, 1 public), bits 3-4 the input (3: n, which fails
 * when it runs), bits 5-7 a variant: 0-2 as is, 3 out_len + 7, 4 a NULL field
 * (by input: key, in, out, key and in), 5 a wrong length (in_len - 1, + 1,
 * out_len - 1, in_len 0), 6 a wrong key (the other type, a GCM key, garbage,
 * a key of another size), 7 an unknown op (0, 3, 99, 2^31 - 1). Only the
 * caller's fields of the job are written.
 */
static void job_of(struct model *m, unsigned s, unsigned spec)
{
    struct slot *x = &m->slots[s];
    const unsigned ki = spec & 3, op = (spec >> 2) & 1, idx = (spec >> 3) & 3, var = spec >> 5;
    const struct key *k = &keys[ki];
    mbc_job *j = &x->job;
    j->op = op ? MBC_OP_RSA_PUBLIC : MBC_OP_RSA_PRIVATE;
    j->key = op ? (const void *)k->pub : (const void *)k->priv;
    j->in = k->in[op][idx];
    j->in_len = k->len;
    j->user_data = x;
    size_t out_len = k->len + (var == 3 ? 7 : 0);
    int out_null = 0;
    x->cls = class_of(op, k->bits);
    x->len = k->len;
    x->want = idx == NIN - 1 ? MBC_ERR_BAD_PARAM : MBC_OK;
    x->want_out = k->ref[op][idx];
    x->zeroed = 1;
    x->check = CHK_BYTES;
    j->in2 = NULL;
    j->in2_len = 0;
    j->out2 = NULL;
    j->out2_len = 0;
    free(x->out2);
    x->out2 = NULL;
    x->out2_len = x->len2 = 0;
    x->zeroed2 = 0;
    static const unsigned bad_ops[4] = {0, 3, 99, 0x7fffffff};
    static const unsigned other_size[NKEYS] = {1, 2, 0, 2};
    if (var >= 4) {
        x->want = var == 4 ? MBC_ERR_NULL_PARAM : MBC_ERR_BAD_PARAM;
        x->zeroed = 0; /* unless the class is known and out long enough */
        x->cls = -1;
    }
    if (var == 4) {
        j->key = idx == 0 || idx == 3 ? NULL : j->key;
        j->in = idx == 1 || idx == 3 ? NULL : j->in;
        out_null = idx == 2;
        x->zeroed = idx == 1;
    } else if (var == 5) {
        if (idx == 0) {
            j->in_len = k->len - 1;
        } else if (idx == 1) {
            j->in = k->in_long[op];
            j->in_len = k->len + 1;
        } else if (idx == 2) {
            out_len = k->len - 1;
        } else {
            j->in_len = 0;
        }
        x->zeroed = idx != 2;
    } else if (var == 6) {
        const struct key *o = &keys[other_size[ki]];
        const void *wrong[4] = {op ? (const void *)k->priv : (const void *)k->pub, gcm_key, garbage,
                                op ? (const void *)o->pub : (const void *)o->priv};
        j->key = wrong[idx];
        if (idx == 3) {
            x->len = o->len; /* its class is known: zeroed if out is long enough */
            x->zeroed = out_len >= o->len;
        }
    } else if (var == 7) {
        j->op = (mbc_job_op)bad_ops[idx];
    }
    free(x->out);
    x->out_len = out_len;
    x->out = out_null ? NULL : fz_alloc(out_len);
    if (x->out != NULL) {
        memset(x->out, CANARY, out_len);
    }
    j->out = x->out;
    j->out_len = out_len;
}

/* new_out: a buffer of len bytes filled with CANARY (NULL when null). */
static uint8_t *new_out(size_t len, int null)
{
    if (null) {
        return NULL;
    }
    uint8_t *b = fz_alloc(len);
    memset(b, CANARY, len);
    return b;
}

/*
 * job_of_ec: slot s becomes the EC or X25519 job that byte spec describes:
 * bits 0-3 the kind: per curve (0-5 P-256, 6-11 P-384) sign, verify of the
 * valid signature, of the invalid one, ECDH with the peer point, with the
 * point off the curve (MBC_ERR_NOT_ON_CURVE when it runs), keygen; 12
 * X25519 derive, 13 with u of small order (MBC_ERR_LOW_ORDER when it
 * runs), 14 X25519 keygen, 15 with out == out2 (MBC_ERR_BAD_PARAM when it
 * runs). Bits 4-6 a variant: 0 as is; 1, 2 (sign) a digest of 0 or 64
 * bytes; 3 out_len + 7; 4 a NULL field (bit 7: key, or for keyless ops
 * out; else in, or out2); 5 a wrong length (a digest of 65 bytes, a
 * signature or point one byte short, an X25519 in_len of 31, a keygen
 * out2_len one short); 6 a key of another type (bit 7: a GCM key; keyless
 * ops ignore it: as is); 7 out one byte short.
 */
static void job_of_ec(struct model *m, unsigned s, unsigned spec)
{
    struct slot *x = &m->slots[s];
    mbc_job *j = &x->job;
    const unsigned kind = spec & 15, var = (spec >> 4) & 7, hi = spec >> 7;
    const struct ecfx *e = &ecs[kind >= 6];
    const unsigned ek = kind % 6; /* EC: 0 sign, 1-2 verify, 3-4 ECDH, 5 keygen */
    const int x25519 = kind >= 12, keyless = x25519 || ek == 5;
    static const mbc_job_op ec_ops[6] = {MBC_OP_ECDSA_SIGN,   MBC_OP_ECDSA_VERIFY,
                                         MBC_OP_ECDSA_VERIFY, MBC_OP_ECDH,
                                         MBC_OP_ECDH,         MBC_OP_EC_KEYGEN_P256};
    size_t out_len, out2_len = 0;
    j->user_data = x;
    j->key = NULL;
    j->in = j->in2 = NULL;
    j->in_len = j->in2_len = 0;
    x->want = MBC_OK;
    x->want_out = NULL;
    x->check = CHK_BYTES;
    x->ec = e;
    if (x25519) {
        j->op = kind < 14 ? MBC_OP_X25519_DERIVE : MBC_OP_X25519_KEYGEN;
        x->cls = X25519_CLASS(kind >= 14);
        out_len = 32;
        if (kind < 14) {
            j->in = xfx.scalar;
            j->in_len = 32;
            j->in2 = kind == 12 ? xfx.u : xfx.low;
            j->in2_len = 32;
            x->want = kind == 12 ? MBC_OK : MBC_ERR_LOW_ORDER;
            x->want_out = xfx.secret;
        } else {
            out2_len = kind == 14 ? 32 : 0; /* 15: out2 is out */
            x->want = kind == 14 ? MBC_OK : MBC_ERR_BAD_PARAM;
            x->check = CHK_X25519_KEY;
        }
    } else {
        j->op = ek == 5
                    ? (e->curve == MBC_CURVE_P256 ? MBC_OP_EC_KEYGEN_P256 : MBC_OP_EC_KEYGEN_P384)
                    : ec_ops[ek];
        x->cls = EC_CLASS(kind >= 6, ek == 0 ? 0 : ek <= 2 ? 1 : ek <= 4 ? 2 : 3);
        out_len = ek == 0 ? 2 * e->len : ek <= 2 ? 0 : e->len;
        if (ek == 0) {
            j->key = e->priv;
            j->in = e->digest;
            j->in_len = var == 1 ? 0 : var == 2 ? 64 : 32;
            x->check = CHK_SIG;
            x->digest_len = j->in_len;
        } else if (ek <= 2) {
            j->key = e->pub;
            j->in = e->digest;
            j->in_len = 32;
            j->in2 = ek == 1 ? e->sig : e->bad_sig;
            j->in2_len = 2 * e->len;
            x->want = ek == 1 ? MBC_OK : MBC_ERR_SIG_INVALID;
        } else if (ek <= 4) {
            j->key = e->priv;
            j->in = ek == 3 ? e->peer : e->off;
            j->in_len = e->plen;
            x->want = ek == 3 ? MBC_OK : MBC_ERR_NOT_ON_CURVE;
            x->want_out = e->secret;
        } else {
            out2_len = e->plen;
            x->check = CHK_EC_KEY;
        }
    }
    /* the class's output lengths: zeroed on an error of a known class */
    const size_t cls_out = out_len, cls_out2 = out2_len;
    int null_out = 0, null_out2 = 0, known = 1;
    if (var == 3 && out_len != 0) {
        out_len += 7;
    } else if (var == 4) {
        x->want = MBC_ERR_NULL_PARAM;
        if (hi && !keyless) {
            j->key = NULL;
            known = 0;
        } else if (hi) {
            null_out = 1;
        } else if (j->in != NULL) {
            j->in = NULL;
        } else {
            null_out2 = out2_len != 0 || kind == 15;
            null_out = !null_out2;
        }
    } else if (var == 5) {
        x->want = MBC_ERR_BAD_PARAM;
        if (x25519 && kind < 14) {
            j->in_len = 31;
        } else if (keyless) {
            out2_len = out2_len != 0 ? out2_len - 1 : out2_len;
            out_len = kind == 15 ? out_len - 1 : out_len;
        } else if (ek == 0) {
            j->in_len = 65;
        } else if (ek <= 2) {
            j->in2_len--;
        } else {
            j->in_len--;
        }
    } else if (var == 6) {
        if (keyless) {
            j->key = gcm_key; /* ignored */
        } else {
            x->want = MBC_ERR_BAD_PARAM;
            known = 0;
            j->key = hi                               ? (const void *)gcm_key
                     : j->key == (const void *)e->pub ? (const void *)e->priv
                                                      : (const void *)e->pub;
        }
    } else if (var == 7 && out_len != 0) {
        x->want = MBC_ERR_BAD_PARAM;
        out_len--;
    }
    free(x->out);
    free(x->out2);
    x->out_len = out_len;
    x->out2_len = kind == 15 ? 0 : out2_len;
    x->out = out_len != 0 ? new_out(out_len, null_out) : NULL;
    x->out2 = kind != 15 && out2_len != 0 ? new_out(out2_len, null_out2) : NULL;
    j->out = x->out;
    j->out_len = out_len;
    j->out2 = kind == 15 ? (null_out2 ? NULL : x->out) : x->out2;
    j->out2_len = kind == 15 ? out_len : out2_len;
    x->len = cls_out;
    x->len2 = cls_out2;
    /* a run-time error zeroes the outputs; a submit error of a known class
     * those long enough */
    x->zeroed = known && out_len >= cls_out;
    x->zeroed2 = known && out2_len >= cls_out2;
    if (x->want == MBC_ERR_NULL_PARAM || (x->want == MBC_ERR_BAD_PARAM && kind != 15) || !known) {
        x->cls = -1; /* completes at submit */
    }
    if (kind == 15 && (var == 4 || var == 5 || var == 7)) {
        x->cls = -1;
    }
}

static void submit(struct model *m, unsigned s, unsigned spec, int ec)
{
    struct slot *x = &m->slots[s];
    if (x->where != FREE) {
        /* in the manager: refused, and the job left as it is */
        const mbc_job before = x->job;
        fz_count("BUSY submits");
        fz_expect("submit of a job in the manager", mbc_mgr_submit(m->mgr, &x->job),
                  FZ_ERR(MBC_ERR_BUSY));
        FZ_CHECK(memcmp(&before, &x->job, sizeof(before)) == 0, "a BUSY submit changed the job");
        return;
    }
    const unsigned cost = ec || (spec >> 5) >= 4 ? 0 : keys[spec & 3].cost[(spec >> 2) & 1];
    if (cost > m->budget) {
        fz_count("submits over the budget");
        return; /* over the RSA budget: this submit does not happen */
    }
    m->budget -= cost;
    if (ec) {
        fz_count("EC and X25519 submits");
        job_of_ec(m, s, spec);
    } else {
        job_of(m, s, spec);
    }
    fz_expect("mbc_mgr_submit", mbc_mgr_submit(m->mgr, &x->job), 0);
    const unsigned one[1] = {s};
    if (x->cls < 0) {
        complete(m, one, 1, ++m->group);
        FZ_CHECK(x->job.status == x->want, "bad job: status %s, want %s",
                 mbc_err_str(x->job.status), mbc_err_str(x->want));
    } else if (m->mode == MODE_SYNC) {
        complete(m, one, 1, ++m->group);
        FZ_CHECK(x->job.status == x->want, "MBC_MGR_SYNC job: status %s, want %s",
                 mbc_err_str(x->job.status), mbc_err_str(x->want));
    } else {
        const int c = x->cls;
        x->where = WAITING;
        m->waiting[c][m->num_waiting[c]++] = s;
        if (m->num_waiting[c] == class_lanes(c)) {
            run_class(m, c, ++m->group);
            FZ_CHECK(x->job.status == x->want, "job of a full batch: status %s, want %s",
                     mbc_err_str(x->job.status), mbc_err_str(x->want));
        } else {
            FZ_CHECK(x->job.status == MBC_ERR_PENDING, "waiting job: status %s",
                     mbc_err_str(x->job.status));
        }
    }
}

/* null_calls: the calls that take a NULL manager or job (which). */
static void null_calls(struct model *m, unsigned which)
{
    struct slot *x = &m->slots[which % NSLOTS];
    const mbc_job before = x->job;
    switch (which % 4) {
    case 0:
        fz_expect("submit(NULL, job)", mbc_mgr_submit(NULL, &x->job), FZ_ERR(MBC_ERR_NULL_PARAM));
        FZ_CHECK(memcmp(&before, &x->job, sizeof(before)) == 0, "submit(NULL) changed the job");
        break;
    case 1:
        fz_expect("submit(mgr, NULL)", mbc_mgr_submit(m->mgr, NULL), FZ_ERR(MBC_ERR_NULL_PARAM));
        break;
    case 2:
        FZ_CHECK(mbc_mgr_flush(NULL) == 0 && mbc_mgr_poll(NULL) == 0 &&
                     mbc_mgr_get_completed(NULL) == NULL && mbc_mgr_pending(NULL) == 0 &&
                     mbc_mgr_next_deadline_us(NULL) == -1,
                 "a call on a NULL manager");
        mbc_mgr_free(NULL);
        break;
    default: {
        mbc_mgr *bad = (mbc_mgr *)m; /* non-NULL: must become NULL */
        const mbc_mgr_config cfg = {0, 2u};
        fz_expect("mbc_mgr_new(unknown flag)", mbc_mgr_new(&bad, &cfg), FZ_ERR(MBC_ERR_BAD_PARAM));
        FZ_CHECK(bad == NULL, "mbc_mgr_new: *mgr not NULL on error");
        fz_expect("mbc_mgr_new(NULL)", mbc_mgr_new(NULL, NULL), FZ_ERR(MBC_ERR_NULL_PARAM));
        break;
    }
    }
}

/* --------------------------------------------------------------- one input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in = {data, size};
    const unsigned cfg = fz_u8(&in);
    fz_use_impl(MBC_ALG_RSA, cfg & 3);
    static struct model model;
    struct model *m = &model;
    memset(m, 0, sizeof(*m));
    m->open = -1;
    m->budget = BUDGET;
    m->mode = (int)((cfg >> 2) & 3);
    m->cfg.flags = m->mode == MODE_SYNC ? MBC_MGR_SYNC : 0;
    m->cfg.max_wait_us = m->mode == MODE_NEVER_DUE ? UINT32_MAX : m->mode == MODE_DUE ? 1 : 0;
    new_mgr(m);

    uint64_t last_submit = 0;
    while (in.len > 0) {
        const unsigned op = fz_u8(&in) % 10;
        if (op <= 3) {
            const unsigned s = fz_u8(&in) % NSLOTS;
            submit(m, s, fz_u8(&in), op >= 2);
            last_submit = now_us();
        } else if (op == 4) {
            const size_t want = run_all(m);
            FZ_CHECK(mbc_mgr_flush(m->mgr) == want, "flush ran another number of jobs");
        } else if (op == 5) {
            size_t want = 0;
            if (m->mode == MODE_DUE) {
                while (now_us() < last_submit + 2) {
                }
                want = run_all(m);
            }
            FZ_CHECK(mbc_mgr_poll(m->mgr) == want, "poll ran another number of jobs");
        } else if (op == 6) {
            collect(m);
        } else if (op == 7) {
            while (collect(m)) {
            }
        } else if (op == 8) {
            null_calls(m, fz_u8(&in));
        } else {
            free_mgr(m);
            new_mgr(m);
        }
        check_counts(m);
    }
    if (!(cfg & 16)) {
        const size_t want = run_all(m);
        FZ_CHECK(mbc_mgr_flush(m->mgr) == want, "flush ran another number of jobs");
        while (collect(m)) {
        }
    }
    free_mgr(m);
    for (unsigned s = 0; s < NSLOTS; s++) {
        free(m->slots[s].out);
        free(m->slots[s].out2);
    }
    return 0;
}

/* ------------------------------------------------------------------- seeds */

static void put_submit(struct fz_out *o, unsigned slot, unsigned key, unsigned op, unsigned in,
                       unsigned var)
{
    fz_put_u8(o, 0);
    fz_put_u8(o, slot);
    fz_put_u8(o, key | op << 2 | in << 3 | var << 5);
}

static void put_submit_ec(struct fz_out *o, unsigned slot, unsigned kind, unsigned var)
{
    fz_put_u8(o, 2);
    fz_put_u8(o, slot);
    fz_put_u8(o, kind | var << 4);
}

static void write_seeds(const char *dir)
{
    unsigned count = 0;
    char name[64];
    /* EC and X25519: a full batch of each class, then one job of every kind
     * and variant */
    for (unsigned kind = 0; kind < 16; kind++) {
        struct fz_out o = {.len = 0};
        fz_put_u8(&o, (kind % 4) << 2); /* each mode in turn */
        for (unsigned s = 0; s < 8; s++) {
            put_submit_ec(&o, s, kind, s == 3 ? 3 : 0);
        }
        fz_put_u8(&o, 7);
        for (unsigned var = 0; var < 16; var++) {
            put_submit_ec(&o, 8 + var % 8, kind, var);
            fz_put_u8(&o, var % 3 == 0 ? 4 : 6);
        }
        snprintf(name, sizeof(name), "seed-ec-%03u", count++);
        fz_seed_write(dir, name, &o);
    }
    for (unsigned mode = 0; mode < 4; mode++) {
        for (unsigned v = 0; v < 5; v++) {
            struct fz_out o = {.len = 0};
            fz_put_u8(&o, mode << 2 | (v & 1) << 4);
            switch (v) {
            case 0: /* a full private batch, then public jobs of two sizes and a flush */
                for (unsigned s = 0; s < 4; s++) {
                    put_submit(&o, s, 0, 0, s % 3, 0);
                }
                put_submit(&o, 4, 0, 1, 0, 0);
                put_submit(&o, 5, 1, 1, 3, 0); /* input n */
                put_submit(&o, 6, 3, 1, 1, 3);
                fz_put_u8(&o, 5);
                fz_put_u8(&o, 4);
                fz_put_u8(&o, 7);
                break;
            case 1: /* every kind of bad job, collected one by one, then a BUSY */
                for (unsigned s = 0; s < NSLOTS; s++) {
                    put_submit(&o, s, s & 2 ? 3 : 0, ((s >> 2) ^ s) & 1, s / 4, 4 + s % 4);
                    fz_put_u8(&o, 6);
                }
                put_submit(&o, 0, 0, 1, 0, 0);
                put_submit(&o, 0, 0, 1, 0, 0); /* BUSY */
                fz_put_u8(&o, 4);
                fz_put_u8(&o, 6);
                break;
            case 2: /* a full public batch with one bad input, and the big keys */
                for (unsigned s = 0; s < 8; s++) {
                    put_submit(&o, s, 3, 1, s == 5 ? 3 : s % 3, 0);
                }
                put_submit(&o, 8, 1, 0, 0, 0);
                put_submit(&o, 9, 2, 1, 1, 0);
                fz_put_u8(&o, 5);
                fz_put_u8(&o, 7);
                break;
            case 3: /* NULL calls, free with jobs inside, resubmit after it */
                for (unsigned w = 0; w < 4; w++) {
                    fz_put_u8(&o, 8);
                    fz_put_u8(&o, w);
                }
                put_submit(&o, 0, 0, 1, 0, 0);
                put_submit(&o, 1, 0, 0, 2, 0);
                fz_put_u8(&o, 9);
                put_submit(&o, 0, 0, 1, 1, 0);
                break;
            default: { /* a deterministic random sequence */
                uint8_t r[96];
                fz_seed_rand(r, sizeof(r));
                for (size_t i = 0; i < sizeof(r); i += 3) {
                    fz_put_u8(&o, r[i] % 10);
                    if (r[i] % 10 <= 3) {
                        fz_put_u8(&o, r[i + 1]);
                        fz_put_u8(&o, r[i + 2]);
                    } else if (r[i] % 10 == 8) {
                        fz_put_u8(&o, r[i + 1]);
                    }
                }
                break;
            }
            }
            snprintf(name, sizeof(name), "seed-%03u", count++);
            fz_seed_write(dir, name, &o);
        }
    }
}

const struct fz_target fz_target = {"fuzz_mgr", init, write_seeds};
