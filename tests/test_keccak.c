/*
 * test_keccak.c - src/hash: SHA3-256, SHA3-512, SHAKE128 and SHAKE256
 * against OpenSSL's EVP (the oracle) on every length from 0 to 3 blocks and
 * beyond, incremental absorbing and squeezing in random pieces (across rate
 * boundaries), and the 4-way AVX2 permutation and SHAKE calls against the
 * portable ones (skipped when the CPU has no AVX2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "hash/keccak.h"
#include "test_util.h"

/* ossl: EVP's digest md over in, out_len bytes (XOF for the SHAKEs). */
static void ossl(const char *md, uint8_t *out, size_t out_len, const uint8_t *in, size_t len)
{
    EVP_MD *m = EVP_MD_fetch(NULL, md, NULL);
    assert_non_null(m);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    assert_non_null(c);
    assert_int_equal(EVP_DigestInit_ex(c, m, NULL), 1);
    assert_int_equal(EVP_DigestUpdate(c, in, len), 1);
    if (EVP_MD_get_flags(m) & EVP_MD_FLAG_XOF) {
        assert_int_equal(EVP_DigestFinalXOF(c, out, out_len), 1);
    } else {
        unsigned n = 0;
        assert_int_equal(EVP_DigestFinal_ex(c, out, &n), 1);
        assert_int_equal(n, out_len);
    }
    EVP_MD_CTX_free(c);
    EVP_MD_free(m);
}

#define MAX_IN 700
#define MAX_OUT 700

/* The one-shot functions on every input length up to MAX_IN (three or more
 * blocks of every rate, each rate boundary and its neighbours). */
static void test_one_shot(void **state)
{
    (void)state;
    uint8_t in[MAX_IN], a[MAX_OUT], b[MAX_OUT];
    mbt_rand_bytes(in, sizeof(in));
    for (size_t len = 0; len <= MAX_IN; len++) {
        mbc_sha3_256(a, in, len);
        ossl("SHA3-256", b, 32, in, len);
        assert_memory_equal(a, b, 32);
        mbc_sha3_512(a, in, len);
        ossl("SHA3-512", b, 64, in, len);
        assert_memory_equal(a, b, 64);
        const size_t out_len = 1 + (len * 7) % MAX_OUT;
        mbc_shake128(a, out_len, in, len);
        ossl("SHAKE128", b, out_len, in, len);
        assert_memory_equal(a, b, out_len);
        mbc_shake256(a, out_len, in, len);
        ossl("SHAKE256", b, out_len, in, len);
        assert_memory_equal(a, b, out_len);
    }
    /* output lengths across squeeze boundaries */
    for (size_t out_len = 0; out_len <= MAX_OUT; out_len++) {
        mbc_shake128(a, out_len, in, 34);
        ossl("SHAKE128", b, out_len, in, 34);
        assert_memory_equal(a, b, out_len);
        mbc_shake256(a, out_len, in, 33);
        ossl("SHAKE256", b, out_len, in, 33);
        assert_memory_equal(a, b, out_len);
    }
}

/* Absorbing and squeezing in random pieces gives the one-shot bytes. */
static void test_incremental(void **state)
{
    (void)state;
    static const struct {
        const char *md;
        unsigned rate;
        uint8_t dom;
        size_t out_len; /* 0: XOF, random length */
    } fns[] = {
        {"SHA3-256", MBC_SHA3_256_RATE, 0x06, 32},
        {"SHA3-512", MBC_SHA3_512_RATE, 0x06, 64},
        {"SHAKE128", MBC_SHAKE128_RATE, 0x1F, 0},
        {"SHAKE256", MBC_SHAKE256_RATE, 0x1F, 0},
    };
    uint8_t in[4 * MAX_IN], a[4 * MAX_OUT], b[4 * MAX_OUT];
    for (size_t iter = 0; iter < mbt_scale(400); iter++) {
        for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
            const size_t len = mbt_rand() % sizeof(in);
            const size_t out_len =
                fns[f].out_len != 0 ? fns[f].out_len : (size_t)(mbt_rand() % sizeof(a));
            mbt_rand_bytes(in, len);
            struct mbc_keccak k;
            mbc_keccak_init(&k, fns[f].rate);
            for (size_t done = 0; done < len;) {
                size_t take = mbt_rand() % (2 * fns[f].rate + 2);
                if (take > len - done) {
                    take = len - done;
                }
                mbc_keccak_absorb(&k, in + done, take);
                done += take;
            }
            mbc_keccak_finish(&k, fns[f].dom);
            for (size_t done = 0; done < out_len;) {
                size_t take = mbt_rand() % (2 * fns[f].rate + 2);
                if (take > out_len - done) {
                    take = out_len - done;
                }
                mbc_keccak_squeeze(&k, a + done, take);
                done += take;
            }
            ossl(fns[f].md, b, out_len, in, len);
            assert_memory_equal(a, b, out_len);
        }
    }
}

#if MBC_HAVE_AVX2
/* check_hash_tasks: hash(1..max_n tasks of mixed lengths, output lengths
 * and domains, at each rate) equals the portable tasks. */
static void check_hash_tasks(void (*hash)(const struct mbc_hash_task *, unsigned, unsigned),
                             unsigned max_n)
{
    static const unsigned hrates[] = {MBC_SHA3_256_RATE, MBC_SHA3_512_RATE, MBC_SHAKE128_RATE};
    static uint8_t hin[20][1700], hout[20][200], href[20][200];
    assert_true(max_n <= 20);
    for (size_t iter = 0; iter < mbt_scale(200); iter++) {
        const unsigned rate = hrates[iter % 3], n = 1 + (unsigned)(mbt_rand() % max_n);
        struct mbc_hash_task t[20], r[20];
        for (unsigned i = 0; i < n; i++) {
            const size_t len = mbt_rand() % sizeof(hin[i]);
            const size_t out_len = 1 + mbt_rand() % rate;
            const uint8_t dom = (mbt_rand() & 1) ? 0x06 : 0x1F;
            mbt_rand_bytes(hin[i], len);
            t[i] = (struct mbc_hash_task){hin[i], len, hout[i], out_len, dom};
            r[i] = (struct mbc_hash_task){hin[i], len, href[i], out_len, dom};
        }
        memset(hout, 0, sizeof(hout));
        hash(t, n, rate);
        mbc_keccak_hash_c(r, n, rate);
        for (unsigned i = 0; i < n; i++) {
            assert_memory_equal(hout[i], href[i], t[i].out_len);
        }
    }
}
#endif

/* The 4-way AVX2 calls: permutation and SHAKE against the portable ones. */
static void test_keccak4(void **state)
{
    (void)state;
#if MBC_HAVE_AVX2
    if ((mbc_cpu_features() & MBC_CPU_AVX2) == 0) {
        skip();
    }
    const uint64_t need512 = MBC_CPU_AVX512F | MBC_CPU_AVX512VL;
    const int have512 = (mbc_cpu_features() & need512) == need512;
    (void)have512;
    uint64_t s4[25][4], s1[4][25];
#if MBC_HAVE_AVX512
    uint64_t s5[25][4];
#endif
    for (unsigned i = 0; i < 4; i++) {
        mbt_rand_bytes((uint8_t *)s1[i], sizeof(s1[i]));
        for (unsigned j = 0; j < 25; j++) {
            s4[j][i] = s1[i][j];
        }
    }
#if MBC_HAVE_AVX512
    memcpy(s5, s4, sizeof(s4));
#endif
    for (unsigned r = 0; r < 3; r++) {
        mbc_keccak4_f1600_avx2(s4);
#if MBC_HAVE_AVX512
        if (have512) {
            mbc_keccak4_f1600_avx512(s5);
            assert_memory_equal(s5, s4, sizeof(s4));
        }
#endif
        for (unsigned i = 0; i < 4; i++) {
            mbc_keccak_f1600(s1[i]);
            for (unsigned j = 0; j < 25; j++) {
                assert_true(s4[j][i] == s1[i][j]);
            }
        }
    }
    static const struct {
        unsigned rate;
    } rates[] = {{MBC_SHAKE128_RATE}, {MBC_SHAKE256_RATE}};
    uint8_t in[4][MBC_SHAKE128_RATE], out[4][5 * MBC_SHAKE128_RATE], ref[5 * MBC_SHAKE128_RATE];
    for (size_t r = 0; r < 2; r++) {
        const unsigned rate = rates[r].rate;
        for (size_t len = 0; len < rate; len++) {
            mbt_rand_bytes(&in[0][0], sizeof(in));
            const uint8_t *ip[4] = {in[0], in[1], in[2], in[3]};
            uint8_t *op[4] = {out[0], out[1], out[2], out[3]};
            uint8_t *op2[4] = {out[0] + 2 * rate, out[1] + 2 * rate, out[2] + 2 * rate,
                               out[3] + 2 * rate};
            struct mbc_keccak4 k;
            mbc_shake4_absorb_avx2(&k, rate, ip, len, 0x1F);
            mbc_shake4_squeeze_avx2(&k, op, 2);
            mbc_shake4_squeeze_avx2(&k, op2, 3);
            for (unsigned i = 0; i < 4; i++) {
                if (rate == MBC_SHAKE128_RATE) {
                    mbc_shake128(ref, 5 * rate, in[i], len);
                } else {
                    mbc_shake256(ref, 5 * rate, in[i], len);
                }
                assert_memory_equal(out[i], ref, 5 * rate);
            }
        }
    }
    /* the fixed-output tasks: 1..9 tasks of mixed lengths (different
     * block counts in one group) and domains, against the portable ones */
    check_hash_tasks(mbc_keccak4_hash_avx2, 9);
#if MBC_HAVE_AVX512
    if (have512) {
        check_hash_tasks(mbc_keccak4_hash_avx512, 9);
    }
#endif
    /* and the portable tasks are the one-shot functions */
    static uint8_t msg[1184];
    uint8_t one[32], task[32];
    mbt_rand_bytes(msg, sizeof(msg));
    struct mbc_hash_task h = {msg, sizeof(msg), task, 32, 0x06};
    mbc_keccak_hash_c(&h, 1, MBC_SHA3_256_RATE);
    mbc_sha3_256(one, msg, sizeof(msg));
    assert_memory_equal(one, task, 32);
#else
    skip();
#endif
}

/* The 8-way AVX-512 calls: permutation, SHAKE and the fixed-output tasks
 * (1..20 of them: full groups of eight, then a rest of 1..8) against the
 * portable ones. */
static void test_keccak8(void **state)
{
    (void)state;
#if MBC_HAVE_AVX512
    const uint64_t need = MBC_CPU_AVX2 | MBC_CPU_AVX512F | MBC_CPU_AVX512VL;
    if ((mbc_cpu_features() & need) != need) {
        skip();
    }
    uint64_t s8[25][8], s1[8][25];
    for (unsigned i = 0; i < 8; i++) {
        mbt_rand_bytes((uint8_t *)s1[i], sizeof(s1[i]));
        for (unsigned j = 0; j < 25; j++) {
            s8[j][i] = s1[i][j];
        }
    }
    for (unsigned r = 0; r < 3; r++) {
        mbc_keccak8_f1600_avx512(s8);
        for (unsigned i = 0; i < 8; i++) {
            mbc_keccak_f1600(s1[i]);
            for (unsigned j = 0; j < 25; j++) {
                assert_true(s8[j][i] == s1[i][j]);
            }
        }
    }
    static const unsigned rates[] = {MBC_SHAKE128_RATE, MBC_SHAKE256_RATE};
    static uint8_t in[8][MBC_SHAKE128_RATE], out[8][5 * MBC_SHAKE128_RATE];
    uint8_t ref[5 * MBC_SHAKE128_RATE];
    for (size_t r = 0; r < 2; r++) {
        const unsigned rate = rates[r];
        for (size_t len = 0; len < rate; len += 1 + len / 8) {
            mbt_rand_bytes(&in[0][0], sizeof(in));
            const uint8_t *ip[8];
            uint8_t *op[8], *op2[8];
            for (unsigned i = 0; i < 8; i++) {
                ip[i] = in[i];
                op[i] = out[i];
                op2[i] = out[i] + 2 * rate;
            }
            struct mbc_keccak8 k;
            mbc_shake8_absorb_avx512(&k, rate, ip, len, 0x1F);
            mbc_shake8_squeeze_avx512(&k, op, 2);
            mbc_shake8_squeeze_avx512(&k, op2, 3);
            for (unsigned i = 0; i < 8; i++) {
                if (rate == MBC_SHAKE128_RATE) {
                    mbc_shake128(ref, 5 * rate, in[i], len);
                } else {
                    mbc_shake256(ref, 5 * rate, in[i], len);
                }
                assert_memory_equal(out[i], ref, 5 * rate);
            }
        }
    }
    check_hash_tasks(mbc_keccak8_hash_avx512, 20);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_shot),
        cmocka_unit_test(test_incremental),
        cmocka_unit_test(test_keccak4),
        cmocka_unit_test(test_keccak8),
    };
    return mbt_run("keccak", tests);
}
