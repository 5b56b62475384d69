/*
 * test_cpu.c - CPU feature detection, masking and dispatch: the pure
 * detection and table-filling functions on made-up feature words, the
 * MBCRYPTO_CPU_MASK variable (in a child process, since it is read once),
 * and the dispatch-hit check that the selected kernel really runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch.h"
#include "impl.h"
#include "test_util.h"

enum { EAX, EBX, ECX, EDX };

/* regs for a CPU that reports everything the IFMA path and AVX need. */
static void ifma_cpu(uint32_t regs[2][4])
{
    memset(regs, 0, 2 * 4 * sizeof(uint32_t));
    regs[0][EDX] = 1u << 26;                             /* SSE2 */
    regs[0][ECX] = (1u << 28) | (1u << 27) | (1u << 25); /* AVX, OSXSAVE, AES-NI */
    regs[1][EBX] = (1u << 5) | (1u << 16) | (1u << 17) | (1u << 21) | (1u << 30) |
                   (1u << 31);             /* AVX2, AVX512F, DQ, IFMA, BW, VL */
    regs[1][ECX] = (1u << 9) | (1u << 10); /* VAES, VPCLMULQDQ */
}

static void test_detect_os_state(void **state)
{
    (void)state;
    uint32_t regs[2][4];
    ifma_cpu(regs);
    uint64_t full = mbc_cpu_features_from_regs(regs, 7, 0xE7, 1);
    assert_true((full & MBC_CPU_IFMA_PATH) == MBC_CPU_IFMA_PATH);
    assert_true(full & MBC_CPU_VAES);
    assert_true(full & MBC_CPU_AESNI);

    /* OS saves YMM but not opmask/ZMM: AVX-512 bits go, AVX2 stays. */
    uint64_t no_zmm = mbc_cpu_features_from_regs(regs, 7, 0x07, 1);
    assert_int_equal(no_zmm & MBC_CPU_IFMA_PATH, 0);
    assert_true(no_zmm & MBC_CPU_AVX2);
    assert_true(no_zmm & MBC_CPU_VAES);

    /* No OSXSAVE: nothing that needs AVX state. */
    uint64_t no_xsave = mbc_cpu_features_from_regs(regs, 7, 0xE7, 0);
    assert_int_equal(no_xsave & (MBC_CPU_IFMA_PATH | MBC_CPU_AVX2 | MBC_CPU_VAES), 0);
    assert_true(no_xsave & MBC_CPU_AESNI);

    /* Leaf 7 not supported: its bits are ignored. */
    uint64_t leaf1 = mbc_cpu_features_from_regs(regs, 1, 0xE7, 1);
    assert_int_equal(leaf1 & (MBC_CPU_AVX512F | MBC_CPU_AVX2 | MBC_CPU_VAES), 0);
    assert_true(leaf1 & MBC_CPU_SSE2);
}

static void test_dispatch_fill(void **state)
{
    (void)state;
    struct mbc_dispatch t;
    mbc_dispatch_fill(&t, 0);
    assert_ptr_equal(t.rsa, &mbc_rsa_impl_c);
    assert_string_equal(t.rsa->base.info.name, "c");
    assert_ptr_equal(t.rsa->crt.batch, mbc_rsa_crt_kern_c);
    assert_ptr_equal(t.rsa->pub.batch, mbc_rsa_pub_kern_c);
    assert_ptr_equal(t.rsa->crt.one, mbc_rsa_crt_kern_c2);
    assert_ptr_equal(t.rsa->pub.one, mbc_rsa_pub_kern_c2);
    assert_ptr_equal(t.x25519, &mbc_x25519_impl_c);
    assert_ptr_equal(t.x25519->ladder.one, mbc_x25519_ladder_c1);
    assert_ptr_equal(t.x25519->pubkey.one, mbc_x25519_base_c1);

    /* Every feature the IFMA path needs but one: stays portable. */
    const uint64_t need[] = {MBC_CPU_AVX512F, MBC_CPU_AVX512BW, MBC_CPU_AVX512VL,
                             MBC_CPU_AVX512IFMA};
    for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
        mbc_dispatch_fill(&t, ~0ull & ~need[i]);
        assert_string_equal(t.rsa->base.info.name, "c");
        assert_string_equal(t.x25519->base.info.name, MBC_HAVE_ADX ? "adx" : "c");
    }
    /* X25519's scalar tier: BMI2 and ADX, both */
    mbc_dispatch_fill(&t, MBC_CPU_BMI2 | MBC_CPU_ADX);
#if MBC_HAVE_ADX
    assert_string_equal(t.x25519->base.info.name, "adx");
    assert_int_equal(t.x25519->base.info.tier, MBC_TIER_SCALAR);
    assert_ptr_equal(t.x25519->ladder.one, mbc_x25519_ladder_adx);
    assert_ptr_equal(t.x25519->pubkey.one, mbc_x25519_base_adx);
#endif
    mbc_dispatch_fill(&t, MBC_CPU_BMI2);
    assert_string_equal(t.x25519->base.info.name, "c");
    mbc_dispatch_fill(&t, MBC_CPU_ADX);
    assert_string_equal(t.x25519->base.info.name, "c");
    mbc_dispatch_fill(&t, MBC_CPU_IFMA_PATH);
#if MBC_HAVE_IFMA
    assert_string_equal(t.rsa->base.info.name, "ifma");
    assert_ptr_equal(t.rsa->crt.batch, mbc_rsa_crt_kern_ifma);
    assert_ptr_equal(t.rsa->crt.one, mbc_rsa_crt_kern_h2_ifma);
    assert_ptr_equal(t.rsa->pub.batch, mbc_rsa_pub_kern_ifma);
    assert_ptr_equal(t.rsa->pub.one, mbc_rsa_pub_kern_h1_ifma);
    /* X25519's IFMA row runs a lone request on the scalar kernels, so it
     * needs BMI2 and ADX as well (when built with them) */
    assert_string_equal(t.x25519->base.info.name, MBC_HAVE_ADX ? "c" : "ifma");
    mbc_dispatch_fill(&t, MBC_CPU_IFMA_PATH | MBC_CPU_BMI2 | MBC_CPU_ADX);
    assert_string_equal(t.x25519->base.info.name, "ifma");
    assert_ptr_equal(t.x25519->ladder.batch, mbc_x25519_ladder_ifma);
    assert_ptr_equal(t.x25519->pubkey.batch, mbc_x25519_base_ifma);
#if MBC_HAVE_ADX
    assert_ptr_equal(t.x25519->ladder.one, mbc_x25519_ladder_adx);
    assert_ptr_equal(t.x25519->pubkey.one, mbc_x25519_base_adx);
#else
    assert_ptr_equal(t.x25519->ladder.one, mbc_x25519_ladder_ifma4);
#endif
#else
    assert_string_equal(t.rsa->base.info.name, "c");
    assert_string_equal(t.x25519->base.info.name, "c");
#endif
}

/* mbc_impl_pick: the first row whose needs the features hold, the last
 * (needing nothing) otherwise; a made-up table of three tiers. */
struct dummy_impl {
    struct mbc_impl_base base;
    int id;
};

static void test_impl_pick(void **state)
{
    (void)state;
    static const struct dummy_impl wide = {{{"wide", MBC_TIER_VECTOR, 8, 0}, MBC_CPU_IFMA_PATH}, 1};
    static const struct dummy_impl narrow = {{{"narrow", MBC_TIER_VECTOR, 4, 0}, MBC_CPU_AVX2}, 2};
    static const struct dummy_impl any = {{{"any", MBC_TIER_PORTABLE, 1, 0}, 0}, 3};
    static const struct dummy_impl *const rows[] = {&wide, &narrow, &any};
    static MBC_IMPL_TABLE(table, rows);
    const struct dummy_impl *p = mbc_impl_pick(&table, ~0ull);
    assert_int_equal(p->id, 1);
    p = mbc_impl_pick(&table, MBC_CPU_IFMA_PATH & ~MBC_CPU_AVX512IFMA);
    assert_int_equal(p->id, 3);
    p = mbc_impl_pick(&table, MBC_CPU_AVX2 | MBC_CPU_AVX512F);
    assert_int_equal(p->id, 2);
    p = mbc_impl_pick(&table, 0);
    assert_int_equal(p->id, 3);
    /* every family's own table: the last row runs anywhere, and picking
     * with a row's own needs selects that row (rows above need features
     * it lacks), which is how the tests select each implementation */
    for (mbc_alg alg = MBC_ALG_RSA; alg <= MBC_ALG_MLKEM; alg++) {
        const struct mbc_impl_table *t = mbc_impl_table_of(alg);
        assert_non_null(t);
        assert_true(t->n >= 1);
        assert_int_equal(((const struct mbc_impl_base *)t->rows[t->n - 1])->needs, 0);
        for (size_t i = 0; i < t->n; i++) {
            const struct mbc_impl_base *b = t->rows[i];
            assert_ptr_equal(mbc_impl_pick(t, b->needs), t->rows[i]);
        }
    }
    assert_null(mbc_impl_table_of((mbc_alg)99));
}

/* mbc_impl_get_info: every family's selected implementation describes
 * itself; its name is mbc_impl_name's; the portable ones claim no fast
 * operation (so "auto" serves none of them), and no family's fast_ops
 * names an operation of another family. */
static void test_impl_info(void **state)
{
    (void)state;
    static const struct {
        mbc_alg alg;
        unsigned ops;
    } fams[] = {
        {MBC_ALG_RSA, 1u << MBC_OP_RSA_PRIVATE | 1u << MBC_OP_RSA_PUBLIC},
        {MBC_ALG_GCM, 1u << 0},
        {MBC_ALG_EC, 1u << MBC_OP_ECDSA_SIGN | 1u << MBC_OP_ECDSA_VERIFY | 1u << MBC_OP_ECDH |
                         1u << MBC_OP_EC_KEYGEN_P256 | 1u << MBC_OP_EC_KEYGEN_P384},
        {MBC_ALG_X25519,
         1u << MBC_OP_X25519_DERIVE | 1u << MBC_OP_X25519_KEYGEN | 1u << MBC_OP_X25519_PUBLIC_KEY},
        {MBC_ALG_MLKEM, 1u << MBC_OP_MLKEM768_KEYGEN | 1u << MBC_OP_MLKEM768_KEYGEN_SEED |
                            1u << MBC_OP_MLKEM768_ENCAPS | 1u << MBC_OP_MLKEM768_DECAPS},
    };
    const uint64_t all = mbc_cpu_restrict(~0ull);
    /* Every CPU path, then without IFMA (EC and X25519 on adx where the CPU
     * has it), then the portable one. */
    for (int pass = 0; pass < 3; pass++) {
        mbc_cpu_restrict(pass == 0 ? all : pass == 1 ? all & ~MBC_CPU_AVX512IFMA : 0);
        for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
            const mbc_impl_info *info = mbc_impl_get_info(fams[i].alg);
            assert_non_null(info);
            assert_string_equal(info->name, mbc_impl_name(fams[i].alg));
            assert_true(info->lanes >= 1 && info->lanes <= MBC_LANES);
            assert_int_equal(info->fast_ops & ~fams[i].ops, 0);
            if (info->tier == MBC_TIER_PORTABLE) {
                assert_int_equal(info->fast_ops, 0);
            }
            /* EC and X25519 batch on their vector tier alone; elsewhere
             * every request runs by itself (the provider's async jobs then
             * run it at once). */
            if (fams[i].alg == MBC_ALG_EC || fams[i].alg == MBC_ALG_X25519) {
                assert_int_equal(info->lanes, info->tier == MBC_TIER_VECTOR ? MBC_LANES : 1);
            }
            if (pass == 2) {
                assert_int_equal(info->tier, MBC_TIER_PORTABLE);
            }
        }
    }
    mbc_cpu_restrict(all);
    assert_null(mbc_impl_get_info((mbc_alg)99));
}

/* MBCRYPTO_CPU_MASK values: what they keep, and whether they are malformed
 * (then only the portable paths are kept: the feature word 0). */
static const struct mask_case {
    const char *s;
    uint64_t keep;
    int malformed;
} mask_cases[] = {
    {NULL, ~0ull, 0}, /* unset */
    {"", ~0ull, 0},   /* set to nothing: as unset */
    {"0", 0, 0},
    {"0x0", 0, 0},
    {"0x2000", 0x2000, 0},
    {"0X3e00", 0x3e00, 0},
    {"0x3E00", 0x3e00, 0},
    {"0x00000000000000000001", 1, 0}, /* leading zeros after 0x: hex is hex */
    {"0xffffffffffffffff", ~0ull, 0},
    {"12", 12, 0},
    {"8", 8, 0},
    {"15872", 0x3e00, 0},
    {"18446744073709551615", ~0ull, 0},
    /* Malformed. */
    {"010", 0, 1}, /* not octal 8, not decimal 10: a leading zero is refused */
    {"08", 0, 1},
    {"00", 0, 1},
    {"0x", 0, 1},
    {"0X", 0, 1},
    {"x10", 0, 1},
    {"0x12g", 0, 1},
    {"0x-1", 0, 1},
    {"0x+1", 0, 1},
    {"-1", 0, 1},
    {"+1", 0, 1},
    {"abc", 0, 1},
    {"zz", 0, 1},
    {"ffff", 0, 1},
    {"1e3", 0, 1},
    {"0b101", 0, 1},
    {"12 ", 0, 1},
    {" 12", 0, 1},
    {"0x10 ", 0, 1},
    {"0x10\n", 0, 1},
    {"0x 10", 0, 1},
    {"1,2", 0, 1},
    {"18446744073709551616", 0, 1}, /* 2^64 */
    {"99999999999999999999", 0, 1},
    {"0x10000000000000000", 0, 1},
    {"0x1ffffffffffffffff", 0, 1},
};

static void test_parse_mask(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(mask_cases) / sizeof(mask_cases[0]); i++) {
        const struct mask_case *c = &mask_cases[i];
        int malformed = -1;
        uint64_t keep = mbc_cpu_parse_mask(c->s, &malformed);
        if (keep != c->keep || malformed != c->malformed) {
            fail_msg("MBCRYPTO_CPU_MASK=\"%s\": keep 0x%llx malformed %d, want 0x%llx %d",
                     c->s ? c->s : "(unset)", (unsigned long long)keep, malformed,
                     (unsigned long long)c->keep, c->malformed);
        }
    }
}

static void test_restrict_only_removes(void **state)
{
    (void)state;
    uint64_t detected = mbc_cpu_detect();
    uint64_t all = mbc_cpu_restrict(~0ull);
    assert_true((all & ~detected) == 0);
    assert_int_equal(mbc_cpu_features(), all);

    assert_int_equal(mbc_cpu_restrict(0), 0);
    assert_string_equal(mbc_impl_name(MBC_ALG_RSA), "c");
    assert_string_equal(mbc_impl_name(MBC_ALG_X25519), "c");

    /* Asking for features the CPU lacks adds nothing. */
    assert_true((mbc_cpu_restrict(~0ull) & ~detected) == 0);
    assert_null(mbc_impl_name((mbc_alg)99));
}

/* child_impl: runs this executable with MBCRYPTO_CPU_MASK=mask (no single
 * quote in mask) and returns what it printed, stderr first ("<impl> <features
 * hex>" on stdout, after any message of the library on stderr). */
static void child_impl(const char *mask, char *buf, size_t len)
{
    char self[1024], cmd[1200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    assert_true(n > 0);
    self[n] = '\0';
    snprintf(cmd, sizeof(cmd), "MBCRYPTO_CPU_MASK='%s' '%s' --print-impl 2>&1", mask, self);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t got = fread(buf, 1, len - 1, p);
    buf[got] = '\0';
    assert_int_equal(pclose(p), 0);
}

static void test_env_mask(void **state)
{
    (void)state;
    char buf[512];
    child_impl("0", buf, sizeof(buf));
    assert_string_equal(buf, "c 0x0\n");

    child_impl("0x1", buf, sizeof(buf));
    char expect[64];
    snprintf(expect, sizeof(expect), "c 0x%llx\n",
             (unsigned long long)(mbc_cpu_detect() & MBC_CPU_SSE2));
    assert_string_equal(buf, expect);

    uint64_t detected = mbc_cpu_detect();
    child_impl("0xffffffffffffffff", buf, sizeof(buf));
    int ifma = MBC_HAVE_IFMA && (detected & MBC_CPU_IFMA_PATH) == MBC_CPU_IFMA_PATH;
    snprintf(expect, sizeof(expect), "%s 0x%llx\n", ifma ? "ifma" : "c",
             (unsigned long long)detected);
    assert_string_equal(buf, expect);
    child_impl("", buf, sizeof(buf));
    assert_string_equal(buf, expect);

    /* A malformed value (010: octal 8 to strtoull, decimal 10 to a reader)
     * keeps only the portable paths and says so once (the child asks
     * twice). */
    static const char *const bad[] = {
        "010", "08", "0x", "-1", "abc", "0x3e00 ", "18446744073709551616"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char want[300];
        child_impl(bad[i], buf, sizeof(buf));
        snprintf(want, sizeof(want),
                 "mbcrypto: MBCRYPTO_CPU_MASK=\"%s\" is not a hex (0x...) or decimal number; "
                 "using portable code only\nc 0x0\n",
                 bad[i]);
        assert_string_equal(buf, want);
    }
}

/* The dispatched kernel really runs: its batch counter moves. A lone
 * request takes the single-request kernel (horizontal on IFMA, 2-lane on the
 * portable path), and so does each of a batch of two (few requests run one
 * by one); a batch of five the 8-lane one. */
static void test_dispatch_hit(void **state)
{
    const char *impl = mbt_use_impl(state);
    static const uint8_t n[256] = {0xc5, [1 ... 254] = 0x5a, [255] = 0x01};
    static const uint8_t e[3] = {0x01, 0x00, 0x01};
    uint8_t in[256] = {0x01, 0x02, 0x03}, out[5][256];
    mbc_rsa_pub_key *key = NULL;
    assert_int_equal(mbc_rsa_pub_key_new(&key, n, sizeof(n), e, sizeof(e)), MBC_OK);
    const unsigned long c0 = mbc_rsa_kern_hits_c, c20 = mbc_rsa_kern_hits_c2;
#if MBC_HAVE_IFMA
    const unsigned long i0 = mbc_rsa_kern_hits_ifma, h0 = mbc_rsa_kern_hits_h1;
#endif
    assert_int_equal(mbc_rsa_public(out[0], in, key), MBC_OK);
    uint8_t *const o[8] = {out[0], out[1], out[2], out[3], out[4]};
    const uint8_t *const i[8] = {in, in, in, in, in};
    const mbc_rsa_pub_key *const k[8] = {key, key, key, key, key};
    assert_int_equal(mbc_status_ok_mask(mbc_rsa_public_mb8(o, i, k, 2048, 0x03)), 0x03);
    assert_int_equal(mbc_status_ok_mask(mbc_rsa_public_mb8(o, i, k, 2048, 0x1F)), 0x1F);
    for (unsigned l = 1; l < 5; l++) {
        assert_memory_equal(out[0], out[l], sizeof(out[0]));
    }
    if (strcmp(impl, "c") == 0) {
        assert_int_equal(mbc_rsa_kern_hits_c2, c20 + 3);
        assert_int_equal(mbc_rsa_kern_hits_c, c0 + 1);
#if MBC_HAVE_IFMA
        assert_int_equal(mbc_rsa_kern_hits_ifma, i0);
#endif
    } else {
#if MBC_HAVE_IFMA
        assert_int_equal(mbc_rsa_kern_hits_ifma, i0 + 4);
        assert_int_equal(mbc_rsa_kern_hits_h1, h0 + 3);
#endif
        assert_int_equal(mbc_rsa_kern_hits_c, c0);
        assert_int_equal(mbc_rsa_kern_hits_c2, c20);
    }
    mbc_rsa_pub_key_free(key);
}

static void test_status_helpers(void **state)
{
    (void)state;
    mbc_status st = 0x76543210;
    for (unsigned l = 0; l < 8; l++) {
        assert_int_equal(mbc_lane_code(st, l), l);
    }
    assert_int_equal(mbc_status_ok_mask(st), 0x01);
    assert_int_equal(mbc_status_ok_mask(0), 0xFF);
    assert_string_equal(mbc_lane_code_str(MBC_LANE_FAULT), "MBC_LANE_FAULT");
    assert_string_equal(mbc_lane_code_str(99), "MBC_LANE_(unknown)");
    assert_string_equal(mbc_err_str(MBC_ERR_KEY_MISMATCH), "MBC_ERR_KEY_MISMATCH");
    assert_string_equal(mbc_err_str(MBC_ERR_KEY_SAME_PRIMES), "MBC_ERR_KEY_SAME_PRIMES");
    assert_string_equal(mbc_err_str(MBC_ERR_KEY_DQ), "MBC_ERR_KEY_DQ");
    assert_string_equal(mbc_err_str((mbc_err)99), "MBC_ERR_(unknown)");
    assert_string_equal(mbc_version_string(), "0.1.0");
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--print-impl") == 0) {
        const char *impl = mbc_impl_name(MBC_ALG_RSA);
        printf("%s 0x%llx\n", impl, (unsigned long long)mbc_cpu_features());
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect_os_state), cmocka_unit_test(test_dispatch_fill),
        cmocka_unit_test(test_impl_pick),       cmocka_unit_test(test_impl_info),
        cmocka_unit_test(test_parse_mask),      cmocka_unit_test(test_restrict_only_removes),
        cmocka_unit_test(test_env_mask),        MBT_IMPL_TESTS(test_dispatch_hit),
        cmocka_unit_test(test_status_helpers),
    };
    return mbt_run("cpu", tests);
}
