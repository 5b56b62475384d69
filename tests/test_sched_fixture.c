/* test_sched_fixture.c - see test_sched_fixture.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "ossl_rsa.h"
#include "test_sched_fixture.h"

static struct sf_key keys[SF_NKEYS];
static int ready;

/* be_inc: the big-endian x += 1 (x below 2^(8 len) - 1). */
static void be_inc(uint8_t *x, size_t len)
{
    for (size_t i = len; i-- > 0;) {
        if (++x[i] != 0) {
            break;
        }
    }
}

static void make_key(struct sf_key *k, unsigned bits, uint64_t e)
{
    EVP_PKEY *pkey = mbt_ossl_rsa_keygen(bits, e);
    assert_non_null(pkey);
    mbt_rsa_parts parts;
    assert_int_equal(mbt_ossl_rsa_get_parts(&parts, pkey, 0), 0);
    k->bits = bits;
    k->len = bits / 8;
    assert_int_equal(parts.len[MBT_RSA_N], k->len);
    assert_true(k->len <= SF_OUT_MAX);
    assert_int_equal(mbt_rsa_keys_new(&k->priv, &k->pub, &parts), MBC_OK);

    const uint8_t *n = parts.c[MBT_RSA_N];
    for (int op = 0; op < 2; op++) {
        for (int j = 0; j < SF_NIN; j++) {
            uint8_t *x = k->in[op][j];
            if (j == SF_NIN - 2) {
                memcpy(x, n, k->len);
                x[k->len - 1] ^= 1; /* n - 1: n is odd */
            } else if (j == SF_NIN - 1) {
                memset(x, 0, k->len);
            } else {
                mbt_rand_bytes(x, k->len);
                x[0] = (uint8_t)(mbt_rand() % n[0]);
            }
            assert_int_equal(mbt_ossl_rsa_raw(pkey, op == SF_PRIV, k->ref[op][j], x, k->len), 0);
        }
    }
    memcpy(k->bad[0], n, k->len);
    memcpy(k->bad[1], n, k->len);
    be_inc(k->bad[1], k->len);
    memset(k->bad[2], 0xFF, k->len);
    mbt_rsa_parts_free(&parts);
    EVP_PKEY_free(pkey);
}

const struct sf_key *sf_keys(void)
{
    static const uint64_t exps[SF_NKEYS] = {65537, 3, 17, 65537};
    if (!ready) {
        for (int i = 0; i < SF_NKEYS; i++) {
            make_key(&keys[i], i < 3 ? 2048 : 3072, exps[i]);
        }
        ready = 1;
    }
    return keys;
}

void sf_free(void)
{
    for (int i = 0; ready && i < SF_NKEYS; i++) {
        mbc_rsa_priv_key_free(keys[i].priv);
        mbc_rsa_pub_key_free(keys[i].pub);
    }
    ready = 0;
}

uint64_t sf_rand(struct sf_rng *r)
{
    /* splitmix64 */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void sf_set_job(struct sf_rec *rec, enum sf_op op, const struct sf_key *k, unsigned j, int bad,
                size_t extra)
{
    memset(rec->out, SF_CANARY, sizeof(rec->out));
    if (extra > SF_OUT_MAX - k->len) {
        extra = SF_OUT_MAX - k->len;
    }
    rec->job.op = op == SF_PRIV ? MBC_OP_RSA_PRIVATE : MBC_OP_RSA_PUBLIC;
    rec->job.key = op == SF_PRIV ? (const void *)k->priv : (const void *)k->pub;
    rec->job.in = bad >= 0 ? k->bad[bad] : k->in[op][j];
    rec->job.in_len = k->len;
    rec->job.out = rec->out;
    rec->job.out_len = k->len + extra;
    rec->job.user_data = rec;
    rec->want = bad >= 0 ? NULL : k->ref[op][j];
    rec->len = k->len;
    rec->want_status = bad >= 0 ? MBC_ERR_BAD_PARAM : MBC_OK;
    rec->zeroed = 1;
}

static int all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] != v) {
            return 0;
        }
    }
    return 1;
}

int sf_check(const struct sf_rec *rec, char *msg, size_t msg_len)
{
    const mbc_job *job = &rec->job;
    const size_t written = (rec->want_status == MBC_OK || rec->zeroed) ? rec->len : 0;
    const char *err = NULL;
    if (job->user_data != rec) {
        err = "user_data changed";
    } else if (job->status != rec->want_status) {
        snprintf(msg, msg_len, "status %s, want %s", mbc_err_str(job->status),
                 mbc_err_str(rec->want_status));
        return -1;
    } else if (rec->want_status == MBC_OK && memcmp(rec->out, rec->want, rec->len) != 0) {
        err = "output differs from OpenSSL";
    } else if (rec->want_status != MBC_OK && rec->zeroed && !all_bytes(rec->out, rec->len, 0)) {
        err = "failed job's output not zeroed";
    } else if (!all_bytes(rec->out + written, SF_OUT_MAX - written, SF_CANARY)) {
        err = "output written beyond what is allowed";
    }
    if (err != NULL) {
        snprintf(msg, msg_len, "%s", err);
        return -1;
    }
    return 0;
}
