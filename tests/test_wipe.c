/*
 * test_wipe.c - no secret is left behind on the stack or in a register when
 * an entry point that handled one returns (issue 9, promise 2).
 *
 * Each operation runs through a probe (wt_probe, asm below) that paints the
 * PAINT_LEN bytes below its own stack pointer, clears the vector registers
 * (and k0-k7 with AVX-512) and the scratch GPRs, calls the operation, then at
 * once copies the scratch GPRs, the vector registers (xmm0-15 with SSE only,
 * ymm0-15 with AVX, zmm0-31 and k0-k7 with AVX-512) and the painted region
 * (the dead stack: everything the call wrote below its caller's frame) into
 * static memory. That copy is scanned for key material, as 8-byte windows at
 * every byte offset: the 52-bit digits of the RSA components p, q, dp, dq,
 * qinv (and qinv * R mod p, the Montgomery constants of p and q, the CRT
 * halves of a private operation's inputs), every 8 bytes of their
 * big-endian byte strings and of those strings reversed; the AES key, its round keys, H and the
 * hash-key powers (read from the key object), J0 (for IVs other than 12 bytes), E_K(J0), the GHASH
 * result and the first keystream blocks, in both byte orders. Each operation runs once before it is
 * probed, so that one-time work (lazy binding, dispatch) is not measured.
 *
 * Operations: RSA key creation (2048/3072/4096, and an error found after
 * the secret work); RSA private 8-lane calls (8 lanes: two passes; 4:
 * paired; 2: one by one on the single-request path), a single call and a
 * batch with a fault caught by the check, on every RSA kernel the CPU runs;
 * AES-GCM key creation, one-shot seal and open (12- and 60-byte IVs, 8-byte
 * tags, a failed open) and every streaming call, on every GCM
 * implementation the CPU runs (vaes512 and ifma skip here without AVX-512);
 * P-256 and P-384 key creation, signatures (given and random nonces), ECDH
 * and key generation, 8-lane (on the batch kernel and on the
 * implementation's plan), 3 and 1 lanes, single calls and a fault, with d,
 * the nonces (k, k R, k^-1, k^-1 R mod n) and d R mod n as needles; the
 * random nonces and generated scalars, known only after the call, are
 * recovered from its outputs.
 *
 * The probe also measures how deep the call wrote: with the test hook that
 * skips the library's stack scrubs (mbc_test_hooks.no_stack_wipe) the depth
 * of the operation alone, which must stay below the scrub size its entry
 * point uses (the constants of src/wipe.h), checked as "the scrub reaches
 * deeper than the operation did".
 *
 * Skipped under AddressSanitizer and MemorySanitizer (their instrumented
 * frames and shadow stacks are not what ships); run in the release build.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>

#include "dispatch.h"
#include "gcm/gcm_internal.h"
#include "hash/keccak.h"
#include "mlkem/mlkem_internal.h"
#include "ossl_ec.h"
#include "ossl_rsa.h"
#include "test_hooks.h"
#include "ec_impls.h"
#include "test_util.h"
#include "wipe.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define WT_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WT_SANITIZED 1
#endif

#define PAINT_LEN 262144
#define PAINT_BYTE 0xA5

/* probe: what wt_probe records (offsets are used by the asm). */
struct probe {
    uint64_t level;      /* 0: in: 0 SSE, 1 AVX, 2 AVX-512 */
    uint64_t sp;         /* 8: rsp at the call; the dead stack ends here */
    uint64_t gpr[9];     /* 16: rax, rcx, rdx, rsi, rdi, r8, r9, r10, r11 after the call */
    uint64_t paint_len;  /* 88: in: PAINT_LEN */
    uint64_t paint_byte; /* 96: in: PAINT_BYTE */
    uint64_t pad[3];
    uint8_t vec[32][64];      /* 128: vector register n at vec[n] (16, 32 or 64 bytes) */
    uint64_t k[8];            /* 2176: k0-k7 */
    uint8_t stack[PAINT_LEN]; /* 2240: [sp - PAINT_LEN, sp) after the call */
};
_Static_assert(offsetof(struct probe, vec) == 128 && offsetof(struct probe, k) == 2176 &&
                   offsetof(struct probe, stack) == 2240,
               "probe layout (the asm's offsets)");

/* wt_probe(fn, arg, probe): see the file comment. */
void wt_probe(void (*fn)(void *), void *arg, struct probe *p);

__asm__(
    ".intel_syntax noprefix\n"
    ".text\n"
    ".globl wt_probe\n"
    ".type wt_probe, @function\n"
    "wt_probe:\n"
    "  push rbx\n"
    "  push rbp\n"
    "  push r12\n"
    "  push r13\n"
    "  push r14\n"
    "  push r15\n"
    "  sub rsp, 8\n"
    "  mov r12, rdi\n"
    "  mov r13, rsi\n"
    "  mov r14, rdx\n"
    "  mov [r14 + 8], rsp\n"
    "  mov rcx, [r14 + 88]\n"
    "  mov rdi, rsp\n"
    "  sub rdi, rcx\n"
    "  mov rax, [r14 + 96]\n"
    "  rep stosb\n"
    "  mov rax, [r14]\n"
    "  cmp rax, 2\n"
    "  jb 1f\n"
    ".irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
    "  vpxord zmm\\n, zmm\\n, zmm\\n\n"
    ".endr\n"
    ".irp n,0,1,2,3,4,5,6,7\n"
    "  kxorw k\\n, k\\n, k\\n\n"
    ".endr\n"
    "  jmp 3f\n"
    "1:\n"
    "  cmp rax, 1\n"
    "  jb 2f\n"
    "  vzeroall\n"
    "  jmp 3f\n"
    "2:\n"
    ".irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
    "  pxor xmm\\n, xmm\\n\n"
    ".endr\n"
    "3:\n"
    "  xor eax, eax\n"
    "  xor ecx, ecx\n"
    "  xor edx, edx\n"
    "  xor esi, esi\n"
    "  xor ebx, ebx\n"
    "  xor ebp, ebp\n"
    "  xor r8d, r8d\n"
    "  xor r9d, r9d\n"
    "  xor r10d, r10d\n"
    "  xor r11d, r11d\n"
    "  xor r15d, r15d\n"
    "  mov rdi, r13\n"
    "  call r12\n"
    "  mov [r14 + 16], rax\n"
    "  mov [r14 + 24], rcx\n"
    "  mov [r14 + 32], rdx\n"
    "  mov [r14 + 40], rsi\n"
    "  mov [r14 + 48], rdi\n"
    "  mov [r14 + 56], r8\n"
    "  mov [r14 + 64], r9\n"
    "  mov [r14 + 72], r10\n"
    "  mov [r14 + 80], r11\n"
    "  mov rax, [r14]\n"
    "  cmp rax, 2\n"
    "  jb 1f\n"
    ".irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
    "  vmovdqu64 [r14 + 128 + 64 * \\n], zmm\\n\n"
    ".endr\n"
    ".irp n,0,1,2,3,4,5,6,7\n"
    "  kmovq [r14 + 2176 + 8 * \\n], k\\n\n"
    ".endr\n"
    "  vzeroupper\n"
    "  jmp 3f\n"
    "1:\n"
    "  cmp rax, 1\n"
    "  jb 2f\n"
    ".irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
    "  vmovdqu [r14 + 128 + 64 * \\n], ymm\\n\n"
    ".endr\n"
    "  vzeroupper\n"
    "  jmp 3f\n"
    "2:\n"
    ".irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
    "  movdqu [r14 + 128 + 64 * \\n], xmm\\n\n"
    ".endr\n"
    "3:\n"
    "  mov rcx, [r14 + 88]\n"
    "  mov rsi, [r14 + 8]\n"
    "  sub rsi, rcx\n"
    "  lea rdi, [r14 + 2240]\n"
    "  rep movsb\n"
    "  add rsp, 8\n"
    "  pop r15\n"
    "  pop r14\n"
    "  pop r13\n"
    "  pop r12\n"
    "  pop rbp\n"
    "  pop rbx\n"
    "  ret\n"
    ".size wt_probe, .-wt_probe\n"
    ".att_syntax prefix\n");

static struct probe pr;

/* cpu_level: what the probe clears and dumps on this CPU. */
static uint64_t cpu_level(void)
{
    const uint64_t f = mbc_cpu_detect();
    if ((f & (MBC_CPU_AVX512F | MBC_CPU_AVX512BW)) == (MBC_CPU_AVX512F | MBC_CPU_AVX512BW)) {
        return 2;
    }
    return (f & MBC_CPU_AVX) != 0 ? 1 : 0;
}

static void skip_if_sanitized(void)
{
#if defined(WT_SANITIZED)
    print_message("SKIP: a sanitizer build (instrumented frames, shadow stacks); the release "
                  "build runs this test\n");
    skip();
#endif
}

/* ------------------------------------------------------------------------ */
/* Needles                                                                   */
/* ------------------------------------------------------------------------ */

struct needle {
    uint64_t v;
    const char *name;
};

static struct needles {
    struct needle *a;
    size_t n, cap;
    char names[64][48];
    unsigned num_names;
} nd;

static void needles_reset(void)
{
    nd.n = 0;
    nd.num_names = 0;
}

/* name_of: a stored copy of name (the needles point at it). */
static const char *name_of(const char *name)
{
    for (unsigned i = 0; i < nd.num_names; i++) {
        if (strcmp(nd.names[i], name) == 0) {
            return nd.names[i];
        }
    }
    assert_true(nd.num_names < 64);
    snprintf(nd.names[nd.num_names], sizeof(nd.names[0]), "%s", name);
    return nd.names[nd.num_names++];
}

/* add_word: v is a needle unless it has fewer than 4 non-zero bytes (too
 * likely to occur by chance). */
static void add_word(uint64_t v, const char *name)
{
    unsigned nz = 0;
    for (int i = 0; i < 8; i++) {
        nz += ((v >> (8 * i)) & 0xFF) != 0;
    }
    if (nz < 4) {
        return;
    }
    if (nd.n == nd.cap) {
        nd.cap = nd.cap ? 2 * nd.cap : 4096;
        nd.a = realloc(nd.a, nd.cap * sizeof(nd.a[0]));
        assert_non_null(nd.a);
    }
    nd.a[nd.n++] = (struct needle){v, name_of(name)};
}

/* add_bytes: every 8-byte window of b and of b reversed. */
static void add_bytes(const char *name, const uint8_t *b, size_t len)
{
    uint8_t *r = malloc(len);
    assert_non_null(r);
    for (size_t i = 0; i < len; i++) {
        r[i] = b[len - 1 - i];
    }
    for (size_t i = 0; i + 8 <= len; i++) {
        uint64_t v;
        memcpy(&v, b + i, 8);
        add_word(v, name);
        memcpy(&v, r + i, 8);
        add_word(v, name);
    }
    free(r);
}

/* add_digits: the 52-bit digits of the big-endian number b. */
static void add_digits(const char *name, const uint8_t *b, size_t len)
{
    uint64_t acc = 0;
    unsigned have = 0;
    for (size_t i = len; i-- > 0;) {
        acc |= (uint64_t)b[i] << have;
        have += 8;
        if (have >= 52) {
            add_word(acc & ((1ull << 52) - 1), name);
            acc = have > 52 ? (uint64_t)b[i] >> (8 - (have - 52)) : 0;
            have -= 52;
        }
    }
    add_word(acc, name);
}

/* add_number: digits and byte windows of a component. */
static void add_number(const char *name, const uint8_t *b, size_t len)
{
    char dn[48];
    snprintf(dn, sizeof(dn), "%s (52-bit digit)", name);
    add_digits(dn, b, len);
    snprintf(dn, sizeof(dn), "%s (bytes)", name);
    add_bytes(dn, b, len);
}

static void add_bn(const char *name, const BIGNUM *x)
{
    uint8_t buf[512];
    const int len = BN_bn2bin(x, buf);
    assert_true(len > 0);
    add_number(name, buf, (size_t)len);
}

static int needle_cmp(const void *a, const void *b)
{
    const uint64_t x = ((const struct needle *)a)->v, y = ((const struct needle *)b)->v;
    return x < y ? -1 : x > y;
}

static void needles_sort(void)
{
    qsort(nd.a, nd.n, sizeof(nd.a[0]), needle_cmp);
}

static const struct needle *needle_find(uint64_t v)
{
    size_t lo = 0, hi = nd.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (nd.a[mid].v < v) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < nd.n && nd.a[lo].v == v ? &nd.a[lo] : NULL;
}

/* ------------------------------------------------------------------------ */
/* Probing                                                                   */
/* ------------------------------------------------------------------------ */

/* scan: prints and counts the needles found in buf (len bytes). where(i)
 * names the place of offset i. */
static unsigned scan(const uint8_t *buf, size_t len, const char *what, const char *place,
                     size_t (*where)(size_t), unsigned shown)
{
    unsigned hits = 0;
    for (size_t i = 0; i + 8 <= len; i++) {
        uint64_t v;
        memcpy(&v, buf + i, 8);
        const struct needle *h = needle_find(v);
        if (h == NULL) {
            continue;
        }
        if (hits + shown < 12) {
            print_message("  %s: %s left at %s %zu\n", what, h->name, place, where(i));
        }
        hits++;
        i += 7;
    }
    return hits;
}

static size_t stack_depth_of(size_t i)
{
    return PAINT_LEN - i;
}

static size_t reg_of(size_t i)
{
    return i;
}

/* used_depth: bytes below the probe's stack pointer that the call wrote. */
static size_t used_depth(void)
{
    for (size_t i = 0; i < PAINT_LEN; i++) {
        if (pr.stack[i] != PAINT_BYTE) {
            return PAINT_LEN - i;
        }
    }
    return 0;
}

/* probe_once: runs fn(arg) under the probe; returns the depth it wrote. */
static size_t probe_once(void (*fn)(void *), void *arg)
{
    pr.level = cpu_level();
    pr.paint_len = PAINT_LEN;
    pr.paint_byte = PAINT_BYTE;
    wt_probe(fn, arg, &pr);
    return used_depth();
}

/* scan_probe: the needles found in what the last probe saw (dead stack,
 * scratch GPRs, vector and k registers), printed (the first few) and
 * counted; *on_stack gets the stack's share. */
static unsigned scan_probe(const char *what, unsigned *on_stack)
{
    unsigned hits = scan(pr.stack, PAINT_LEN, what, "stack depth", stack_depth_of, 0);
    *on_stack = hits;
    hits +=
        scan((const uint8_t *)pr.gpr, sizeof(pr.gpr), what, "GPR byte (rax..r11)", reg_of, hits);
    const size_t vlen = pr.level == 2 ? 64 : pr.level == 1 ? 32 : 16;
    const unsigned nvec = pr.level == 2 ? 32 : 16;
    for (unsigned r = 0; r < nvec; r++) {
        char place[32];
        snprintf(place, sizeof(place), "%smm%u byte", vlen == 64 ? "z" : vlen == 32 ? "y" : "x", r);
        hits += scan(pr.vec[r], vlen, what, place, reg_of, hits);
    }
    if (pr.level == 2) {
        hits += scan((const uint8_t *)pr.k, sizeof(pr.k), what, "k0..k7 byte", reg_of, hits);
    }
    return hits;
}

/* probe_check: probes fn(arg) and fails the test if any needle is left;
 * returns the depth the call wrote. */
static size_t probe_check(const char *what, void (*fn)(void *), void *arg)
{
    const size_t depth = probe_once(fn, arg);
    unsigned on_stack;
    const unsigned hits = scan_probe(what, &on_stack);
    print_message("%s: %u secret copies (%u on the stack), %zu stack bytes written\n", what, hits,
                  on_stack, depth);
    if (hits != 0) {
        fail_msg("%s left %u copies of secrets behind", what, hits);
    }
    return depth;
}

/*
 * check_call: runs fn(arg) once unprobed, then probed (probe_check); each
 * run is preceded by prepare(arg) when prepare is not NULL (to put arg back
 * in the state fn expects). When the entry point scrubs scrub bytes of stack
 * (wipe.h; 0: none), probes it once more with the scrubs off: the depth the
 * work writes must be less than the depth the scrub reached (the work's
 * frames all lie inside it).
 */
static void check_call(const char *what, void (*prepare)(void *), void (*fn)(void *), void *arg,
                       size_t scrub)
{
    if (prepare != NULL) {
        prepare(arg);
    }
    fn(arg);
    if (prepare != NULL) {
        prepare(arg);
    }
    const size_t depth = probe_check(what, fn, arg);
    if (scrub == 0) {
        return;
    }
    if (prepare != NULL) {
        prepare(arg);
    }
    mbc_test_hooks.no_stack_wipe = 1;
    const size_t bare = probe_once(fn, arg);
    mbc_test_hooks.no_stack_wipe = 0;
    print_message("  without the %zu-byte scrubs: %zu stack bytes written\n", scrub, bare);
    if (bare >= depth) {
        fail_msg("%s: the work wrote %zu bytes deep, the %zu-byte scrub reached %zu: raise it "
                 "in src/wipe.h",
                 what, bare, scrub, depth);
    }
}

/* ------------------------------------------------------------------------ */
/* RSA                                                                       */
/* ------------------------------------------------------------------------ */

struct rsa_fix {
    unsigned bits;
    EVP_PKEY *pkey;
    mbt_rsa_parts parts;
    mbc_rsa_priv_key *priv;
    mbc_rsa_pub_key *pub;
};

static struct rsa_fix rsa_fx[3];

static struct rsa_fix *rsa_key(unsigned bits)
{
    struct rsa_fix *f = &rsa_fx[(bits - 2048) / 1024];
    if (f->pkey == NULL) {
        f->bits = bits;
        f->pkey = mbt_ossl_rsa_keygen(bits, 65537);
        assert_non_null(f->pkey);
        assert_int_equal(mbt_ossl_rsa_get_parts(&f->parts, f->pkey, 0), 0);
        assert_int_equal(mbt_rsa_keys_new(&f->priv, &f->pub, &f->parts), MBC_OK);
    }
    return f;
}

static BIGNUM *bn_of(const struct rsa_fix *f, enum mbt_rsa_part part)
{
    BIGNUM *x = BN_bin2bn(f->parts.c[part], (int)f->parts.len[part], NULL);
    assert_non_null(x);
    return x;
}

/* rsa_needles: the private components of f, qinv R mod p, and for each of
 * the num_in inputs its CRT halves in^dp mod p and in^dq mod q. */
static void rsa_needles(const struct rsa_fix *f, const uint8_t *const *in, unsigned num_in)
{
    static const char *const names[MBT_RSA_NUM_PARTS] = {"n", "e", "p", "q", "dp", "dq", "qinv"};
    needles_reset();
    for (int part = MBT_RSA_P; part <= MBT_RSA_QINV; part++) {
        add_number(names[part], f->parts.c[part], f->parts.len[part]);
    }
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *p = bn_of(f, MBT_RSA_P), *q = bn_of(f, MBT_RSA_Q);
    BIGNUM *dp = bn_of(f, MBT_RSA_DP), *dq = bn_of(f, MBT_RSA_DQ);
    BIGNUM *qinv = bn_of(f, MBT_RSA_QINV), *t = BN_new(), *r = BN_new();
    assert_true(ctx != NULL && t != NULL && r != NULL);
    const int kh = (int)((f->bits / 2 + 51) / 52);
    assert_true(BN_lshift(t, qinv, 52 * kh) && BN_mod(r, t, p, ctx));
    add_bn("qinv R mod p", r);
    /* The Montgomery constants of p and q (R = 2^(52 kh)): R mod m, R^3 mod m
     * and -m^-1 mod 2^52 (which gives away m's low digit). */
    BIGNUM *const pq[2] = {p, q};
    BIGNUM *two52 = BN_new();
    assert_true(two52 != NULL && BN_set_word(two52, 1) && BN_lshift(two52, two52, 52));
    for (int i = 0; i < 2; i++) {
        assert_true(BN_set_word(t, 1) && BN_lshift(t, t, 52 * kh) && BN_mod(r, t, pq[i], ctx));
        add_bn(i ? "R mod q" : "R mod p", r);
        assert_true(BN_set_word(t, 1) && BN_lshift(t, t, 3 * 52 * kh) && BN_mod(r, t, pq[i], ctx));
        add_bn(i ? "R^3 mod q" : "R^3 mod p", r);
        assert_true(BN_nnmod(t, pq[i], two52, ctx) && BN_mod_inverse(r, t, two52, ctx) != NULL &&
                    BN_sub(r, two52, r));
        add_bn(i ? "-q^-1 mod 2^52" : "-p^-1 mod 2^52", r);
    }
    BN_free(two52);
    for (unsigned i = 0; i < num_in; i++) {
        BIGNUM *x = BN_bin2bn(in[i], (int)(f->bits / 8), NULL);
        assert_non_null(x);
        assert_true(BN_mod_exp(r, x, dp, p, ctx));
        add_bn("in^dp mod p", r);
        assert_true(BN_mod_exp(r, x, dq, q, ctx));
        add_bn("in^dq mod q", r);
        BN_free(x);
    }
    BN_free(p);
    BN_free(q);
    BN_free(dp);
    BN_free(dq);
    BN_free(qinv);
    BN_free(t);
    BN_free(r);
    BN_CTX_free(ctx);
    needles_sort();
}

struct keygen_arg {
    mbc_rsa_priv_components c;
    mbc_err want;
};

static void run_keygen(void *a)
{
    struct keygen_arg *k = a;
    mbc_rsa_priv_key *key = NULL;
    const mbc_err err = mbc_rsa_priv_key_new(&key, &k->c);
    if (err != k->want) {
        abort();
    }
    mbc_rsa_priv_key_free(key);
}

static void test_rsa_key_new(void **state)
{
    (void)state;
    skip_if_sanitized();
    static const unsigned sizes[] = {2048, 3072, 4096};
    for (size_t s = 0; s < 3; s++) {
        struct rsa_fix *f = rsa_key(sizes[s]);
        rsa_needles(f, NULL, 0);
        struct keygen_arg k = {mbt_rsa_components(&f->parts), MBC_OK};
        char what[64];
        snprintf(what, sizeof(what), "mbc_rsa_priv_key_new RSA-%u", f->bits);
        check_call(what, NULL, run_keygen, &k, MBC_WIPE_RSA_KEY_NEW);
        /* An error found after the secret work: dq >= q (KEY_RANGE). */
        k.c.dq = k.c.q;
        k.c.dq_len = k.c.q_len;
        k.want = MBC_ERR_KEY_RANGE;
        snprintf(what, sizeof(what), "mbc_rsa_priv_key_new RSA-%u, dq = q", f->bits);
        check_call(what, NULL, run_keygen, &k, MBC_WIPE_RSA_KEY_NEW);
        /* The last consistency check fails, after all of the secret work
         * (Montgomery set-up, qinv and dp checks): dq = 0 (KEY_DQ). */
        static const uint8_t zero[1] = {0};
        k.c.dq = zero;
        k.c.dq_len = sizeof(zero);
        k.want = MBC_ERR_KEY_DQ;
        snprintf(what, sizeof(what), "mbc_rsa_priv_key_new RSA-%u, dq = 0", f->bits);
        check_call(what, NULL, run_keygen, &k, MBC_WIPE_RSA_KEY_NEW);
    }
}

struct priv_arg {
    const struct rsa_fix *f;
    unsigned mask;
    uint8_t in[8][512], out[8][512];
};

static void run_priv_mb8(void *a)
{
    struct priv_arg *p = a;
    uint8_t *o[8];
    const uint8_t *i[8];
    const mbc_rsa_priv_key *k[8];
    for (unsigned l = 0; l < 8; l++) {
        o[l] = p->out[l];
        i[l] = p->in[l];
        k[l] = p->f->priv;
    }
    const mbc_status st = mbc_rsa_private_crt_mb8(o, i, k, p->f->bits, p->mask);
    for (unsigned l = 0; l < 8; l++) {
        if (((p->mask >> l) & 1u) && mbc_lane_code(st, l) != MBC_LANE_OK &&
            !((mbc_test_hooks.rsa_fault_lanes >> l) & 1u)) {
            abort();
        }
    }
}

static void run_priv_one(void *a)
{
    struct priv_arg *p = a;
    if (mbc_rsa_private_crt(p->out[0], p->in[0], p->f->priv) != MBC_OK) {
        abort();
    }
}

static void test_rsa_private(void **state)
{
    const char *impl = mbt_use_impl(state);
    skip_if_sanitized();
    static const unsigned sizes[] = {2048, 3072, 4096};
    /* 8 lanes (a batch of two passes), 4 (one paired pass), 2 (one by one) */
    static const unsigned masks[] = {0xFF, 0x0F, 0x03};
    struct priv_arg *p = calloc(1, sizeof(*p));
    assert_non_null(p);
    for (size_t s = 0; s < 3; s++) {
        const struct rsa_fix *f = rsa_key(sizes[s]);
        const size_t len = f->bits / 8;
        const uint8_t *ins[8];
        for (unsigned l = 0; l < 8; l++) {
            mbt_rand_bytes(p->in[l], len);
            p->in[l][0] = (uint8_t)(f->parts.c[MBT_RSA_N][0] - 1);
            ins[l] = p->in[l];
        }
        rsa_needles(f, ins, 8);
        p->f = f;
        char what[96];
        for (size_t m = 0; m < 3; m++) {
            p->mask = masks[m];
            snprintf(what, sizeof(what), "%s: mbc_rsa_private_crt_mb8 RSA-%u, lanes 0x%02x", impl,
                     f->bits, masks[m]);
            check_call(what, NULL, run_priv_mb8, p, MBC_WIPE_RSA_PRIVATE);
        }
        snprintf(what, sizeof(what), "%s: mbc_rsa_private_crt RSA-%u", impl, f->bits);
        check_call(what, NULL, run_priv_one, p, MBC_WIPE_RSA_PRIVATE);
        /* The fault path (a corrupted CRT half in lane 2, caught by the check). */
        mbc_test_hooks.rsa_fault_lanes = 0x04;
        p->mask = 0xFF;
        snprintf(what, sizeof(what), "%s: mbc_rsa_private_crt_mb8 RSA-%u, a fault in lane 2", impl,
                 f->bits);
        check_call(what, NULL, run_priv_mb8, p, MBC_WIPE_RSA_PRIVATE);
        mbc_test_hooks.rsa_fault_lanes = 0;
    }
    free(p);
    mbc_cpu_restrict(~0ull);
}

/* ------------------------------------------------------------------------ */
/* AES-GCM                                                                   */
/* ------------------------------------------------------------------------ */

#define GCM_TESTS(fn)                                                                              \
    {#fn "/c", fn, NULL, NULL, (void *)"c"}, {#fn "/aesni", fn, NULL, NULL, (void *)"aesni"},      \
    {                                                                                              \
#fn "/vaes512", fn, NULL, NULL, (void *)"vaes512"                                          \
    }

static void aes_block(const uint8_t *k, size_t k_len, const uint8_t in[16], uint8_t out[16])
{
    const EVP_CIPHER *c = k_len == 16   ? EVP_aes_128_ecb()
                          : k_len == 24 ? EVP_aes_192_ecb()
                                        : EVP_aes_256_ecb();
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n = 0;
    assert_non_null(ctx);
    assert_int_equal(EVP_EncryptInit_ex(ctx, c, NULL, k, NULL), 1);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    assert_int_equal(EVP_EncryptUpdate(ctx, out, &n, in, 16), 1);
    EVP_CIPHER_CTX_free(ctx);
}

static void ctr_inc(uint8_t c[16])
{
    for (int i = 15; i >= 12 && ++c[i] == 0; i--) {
    }
}

#define GCM_MSG 600 /* bytes: the 8-block loop of aesni and a partial tail */
#define GCM_AAD 40

struct gcm_arg {
    uint8_t k[32];
    size_t k_len, iv_len;
    mbc_gcm_key *key;
    uint8_t iv[60], aad[GCM_AAD], pt[GCM_MSG], ct[GCM_MSG], out[GCM_MSG], tag[16];
    size_t off, piece; /* streaming: the bytes of this step */
    mbc_gcm_ctx ctx;
    int expect_auth; /* open with a wrong tag */
};

/* gcm_needles: the AES key, round keys, H and its powers (from the key
 * object), J0 unless iv_len is 12, E_K(J0), the GHASH of the message and the
 * first 4 keystream blocks, each in both byte orders. */
static void gcm_needles(const struct gcm_arg *g)
{
    const struct mbc_gcm_key *key = g->key;
    needles_reset();
    add_bytes("AES key", g->k, g->k_len);
    add_bytes("round keys", key->rk, 16 * (key->rounds + 1));
    add_bytes("round keys x4", key->rk512, sizeof(key->rk512));
    add_bytes("H", key->h, 16);
    add_bytes("H powers", key->htab, 16 * GCM_NPOW);
    for (unsigned i = 0; i < GCM_NPOW; i++) {
        add_bytes("H powers lo^hi", key->htabk + 16 * i, 8);
    }
    uint8_t j0[16] = {0}, ek[16], s[16] = {0}, len_block[16] = {0};
    if (g->iv_len == 12) {
        memcpy(j0, g->iv, 12);
        j0[15] = 1;
    } else {
        mbt_ghash(j0, key->h, g->iv, g->iv_len);
        for (int i = 0; i < 8; i++) {
            len_block[15 - i] = (uint8_t)(((uint64_t)g->iv_len * 8) >> (8 * i));
        }
        mbt_ghash(j0, key->h, len_block, 16);
        add_bytes("J0", j0, 16);
        uint8_t c[16];
        memcpy(c, j0, 16);
        ctr_inc(c);
        add_bytes("J0 + 1", c, 16);
    }
    aes_block(g->k, g->k_len, j0, ek);
    add_bytes("E_K(J0)", ek, 16);
    mbt_ghash(s, key->h, g->aad, GCM_AAD);
    mbt_ghash(s, key->h, g->ct, GCM_MSG);
    memset(len_block, 0, 16);
    for (int i = 0; i < 8; i++) {
        len_block[7 - i] = (uint8_t)(((uint64_t)GCM_AAD * 8) >> (8 * i));
        len_block[15 - i] = (uint8_t)(((uint64_t)GCM_MSG * 8) >> (8 * i));
    }
    mbt_ghash(s, key->h, len_block, 16);
    add_bytes("GHASH", s, 16);
    uint8_t c[16], ks[16];
    memcpy(c, j0, 16);
    for (int i = 0; i < 4; i++) {
        ctr_inc(c);
        aes_block(g->k, g->k_len, c, ks);
        add_bytes("keystream", ks, 16);
    }
    needles_sort();
}

static void run_gcm_key_new(void *a)
{
    struct gcm_arg *g = a;
    mbc_gcm_key *key = NULL;
    if (mbc_gcm_key_new(&key, g->k, g->k_len) != MBC_OK) {
        abort();
    }
    mbc_gcm_key_free(key);
}

static void run_seal(void *a)
{
    struct gcm_arg *g = a;
    if (mbc_gcm_seal(g->key, g->out, g->tag, 16, g->iv, g->iv_len, g->aad, GCM_AAD, g->pt,
                     GCM_MSG) != MBC_OK) {
        abort();
    }
}

static void run_seal_short(void *a)
{
    struct gcm_arg *g = a;
    uint8_t tag[8];
    if (mbc_gcm_seal_short_tag(g->key, g->out, tag, 8, g->iv, g->iv_len, g->aad, GCM_AAD, g->pt,
                               GCM_MSG) != MBC_OK) {
        abort();
    }
}

static void run_open(void *a)
{
    struct gcm_arg *g = a;
    uint8_t tag[16];
    memcpy(tag, g->tag, 16);
    tag[0] ^= (uint8_t)g->expect_auth;
    const mbc_err err =
        mbc_gcm_open(g->key, g->out, tag, 16, g->iv, g->iv_len, g->aad, GCM_AAD, g->ct, GCM_MSG);
    if (err != (g->expect_auth ? MBC_ERR_AUTH : MBC_OK)) {
        abort();
    }
}

/* The streaming steps; each is one probed call on g->ctx. */
static void run_init(void *a)
{
    struct gcm_arg *g = a;
    if (mbc_gcm_init(&g->ctx, g->key, g->iv, g->iv_len, 0) != MBC_OK) {
        abort();
    }
}

static void run_aad(void *a)
{
    struct gcm_arg *g = a;
    if (mbc_gcm_aad(&g->ctx, g->aad, GCM_AAD) != MBC_OK) {
        abort();
    }
}

static void run_encrypt(void *a)
{
    struct gcm_arg *g = a;
    if (mbc_gcm_encrypt(&g->ctx, g->out + g->off, g->pt + g->off, g->piece) != MBC_OK) {
        abort();
    }
}

static void run_decrypt(void *a)
{
    struct gcm_arg *g = a;
    if (mbc_gcm_decrypt(&g->ctx, g->out + g->off, g->ct + g->off, g->piece) != MBC_OK) {
        abort();
    }
}

static void run_finish(void *a)
{
    struct gcm_arg *g = a;
    uint8_t tag[16];
    if (mbc_gcm_finish(&g->ctx, tag, 16) != MBC_OK) {
        abort();
    }
}

static void run_verify(void *a)
{
    struct gcm_arg *g = a;
    if (mbc_gcm_verify(&g->ctx, g->tag, 16) != MBC_OK) {
        abort();
    }
}

/* stream_arg: step s of a streaming operation on g (enc: encryption). */
struct stream_arg {
    struct gcm_arg *g;
    int enc, s;
};

static void (*stream_fn(int enc, int s))(void *)
{
    static void (*const enc_steps[5])(void *) = {run_init, run_aad, run_encrypt, run_encrypt,
                                                 run_finish};
    static void (*const dec_steps[5])(void *) = {run_init, run_aad, run_decrypt, run_decrypt,
                                                 run_verify};
    return (enc ? enc_steps : dec_steps)[s];
}

/* stream_piece: g's data piece for step s (2: 37 bytes, 3: the rest). */
static void stream_piece(struct gcm_arg *g, int s)
{
    g->off = s == 2 ? 0 : 37;
    g->piece = s == 2 ? 37 : GCM_MSG - 37;
}

/* stream_prepare: a new operation up to step s (excluded). */
static void stream_prepare(void *a)
{
    struct stream_arg *st = a;
    mbc_memzero(&st->g->ctx, sizeof(st->g->ctx));
    for (int t = 0; t < st->s; t++) {
        stream_piece(st->g, t);
        stream_fn(st->enc, t)(st->g);
    }
    stream_piece(st->g, st->s);
}

static void run_stream_step(void *a)
{
    struct stream_arg *st = a;
    stream_fn(st->enc, st->s)(st->g);
}

/* check_stream: the streaming steps, each probed on its own: init, aad, a
 * piece of 37 bytes, the rest, then finish (encryption) or verify. */
static void check_stream(struct gcm_arg *g, int enc, const char *impl, size_t scrub)
{
    static const char *const step_names[5] = {"init", "aad", "piece 1", "piece 2", "final"};
    for (int s = 0; s < 5; s++) {
        struct stream_arg st = {g, enc, s};
        char what[96];
        snprintf(what, sizeof(what), "%s: streaming %s, %zu-byte IV: %s", impl,
                 enc ? "encryption" : "decryption", g->iv_len, step_names[s]);
        check_call(what, stream_prepare, run_stream_step, &st, scrub);
    }
}

static void test_gcm(void **state)
{
    const char *impl = mbt_use_alg_impl(MBC_ALG_GCM, (const char *)*state);
    skip_if_sanitized();
    struct gcm_arg *g = calloc(1, sizeof(*g));
    assert_non_null(g);
    static const size_t k_lens[] = {16, 32};
    static const size_t iv_lens[] = {12, 60};
    for (size_t kl = 0; kl < 2; kl++) {
        g->k_len = k_lens[kl];
        mbt_rand_bytes(g->k, sizeof(g->k));
        assert_int_equal(mbc_gcm_key_new(&g->key, g->k, g->k_len), MBC_OK);
        assert_string_equal(mbc_gcm_key_impl(g->key), impl);
        char what[96];
        for (size_t v = 0; v < 2; v++) {
            g->iv_len = iv_lens[v];
            mbt_rand_bytes(g->iv, sizeof(g->iv));
            mbt_rand_bytes(g->aad, sizeof(g->aad));
            mbt_rand_bytes(g->pt, sizeof(g->pt));
            assert_int_equal(mbc_gcm_seal(g->key, g->ct, g->tag, 16, g->iv, g->iv_len, g->aad,
                                          GCM_AAD, g->pt, GCM_MSG),
                             MBC_OK);
            gcm_needles(g);
            /* what the calls scrub (gcm.c: gcm_scrub_len) */
            const size_t scrub = g->key->impl.scrub_always || g->iv_len != 12 ? MBC_WIPE_GCM : 0;
            if (v == 0) {
                snprintf(what, sizeof(what), "%s: mbc_gcm_key_new AES-%zu", impl, 8 * g->k_len);
                check_call(what, NULL, run_gcm_key_new, g, MBC_WIPE_GCM);
            }
            snprintf(what, sizeof(what), "%s: AES-%zu seal, %zu-byte IV", impl, 8 * g->k_len,
                     g->iv_len);
            check_call(what, NULL, run_seal, g, scrub);
            snprintf(what, sizeof(what), "%s: AES-%zu seal, 8-byte tag, %zu-byte IV", impl,
                     8 * g->k_len, g->iv_len);
            check_call(what, NULL, run_seal_short, g, scrub);
            g->expect_auth = 0;
            snprintf(what, sizeof(what), "%s: AES-%zu open, %zu-byte IV", impl, 8 * g->k_len,
                     g->iv_len);
            check_call(what, NULL, run_open, g, scrub);
            g->expect_auth = 1;
            snprintf(what, sizeof(what), "%s: AES-%zu open, wrong tag, %zu-byte IV", impl,
                     8 * g->k_len, g->iv_len);
            check_call(what, NULL, run_open, g, scrub);
            check_stream(g, 1, impl, scrub);
            check_stream(g, 0, impl, scrub);
        }
        mbc_gcm_key_free(g->key);
    }
    free(g);
    mbc_cpu_restrict(~0ull);
}

/* ------------------------------------------------------------------------ */
/* X25519                                                                    */
/* ------------------------------------------------------------------------ */

struct x25519_arg {
    unsigned mask;
    uint8_t k[8][32], u[8][32], out[8][32], priv[8][32];
};

/* x25519_needles: the clamped scalars (little-endian bytes, and the 52-bit
 * digits of their values) and the shared secrets of every lane. */
static void x25519_needles(struct x25519_arg *x, int with_secret)
{
    needles_reset();
    for (unsigned l = 0; l < 8; l++) {
        uint8_t be[32];
        uint8_t c[32];
        memcpy(c, x->k[l], 32);
        c[0] &= 248;
        c[31] = (uint8_t)((c[31] & 127) | 64);
        for (unsigned i = 0; i < 32; i++) {
            be[i] = c[31 - i];
        }
        add_number("scalar", be, 32);
        if (with_secret) {
            const uint8_t *const kk[8] = {x->k[l]};
            const uint8_t *const uu[8] = {x->u[l]};
            uint8_t *const oo[8] = {be};
            assert_int_equal(mbc_lane_code(mbc_x25519_mb8(oo, kk, uu, 1), 0), MBC_LANE_OK);
            uint8_t rev[32];
            for (unsigned i = 0; i < 32; i++) {
                rev[i] = be[31 - i];
            }
            add_number("shared secret", rev, 32);
        }
    }
    needles_sort();
}

static void x25519_ptrs(struct x25519_arg *x, uint8_t *o[8], const uint8_t *k[8],
                        const uint8_t *u[8])
{
    for (unsigned l = 0; l < 8; l++) {
        o[l] = x->out[l];
        k[l] = x->k[l];
        u[l] = x->u[l];
    }
}

/* all_ok: the status of a call where every lane of mask is OK. */
static mbc_status all_ok(unsigned mask)
{
    mbc_status st = 0;
    for (unsigned l = 0; l < 8; l++) {
        st |= (mbc_status)(((mask >> l) & 1u) ? MBC_LANE_OK : MBC_LANE_EMPTY) << (4 * l);
    }
    return st;
}

static void run_x25519(void *a)
{
    struct x25519_arg *x = a;
    uint8_t *o[8];
    const uint8_t *k[8], *u[8];
    x25519_ptrs(x, o, k, u);
    if (mbc_x25519_mb8(o, k, u, x->mask) != all_ok(x->mask)) {
        abort();
    }
}

static void run_x25519_public(void *a)
{
    struct x25519_arg *x = a;
    uint8_t *o[8];
    const uint8_t *k[8], *u[8];
    x25519_ptrs(x, o, k, u);
    if (mbc_x25519_public_key_mb8(o, k, x->mask) != all_ok(x->mask)) {
        abort();
    }
}

static void run_x25519_keygen(void *a)
{
    struct x25519_arg *x = a;
    uint8_t *p[8], *o[8];
    for (unsigned l = 0; l < 8; l++) {
        p[l] = x->priv[l];
        o[l] = x->out[l];
    }
    if (mbc_x25519_keygen_mb8(p, o, x->mask) != all_ok(x->mask)) {
        abort();
    }
}

static void test_x25519(void **state)
{
    const char *impl = mbt_use_alg_impl(MBC_ALG_X25519, *state);
    skip_if_sanitized();
    struct x25519_arg *x = calloc(1, sizeof(*x));
    assert_non_null(x);
    for (unsigned l = 0; l < 8; l++) {
        mbt_rand_bytes(x->k[l], 32);
        mbt_rand_bytes(x->u[l], 32);
    }
    /* 8 lanes (a batch), 1 (the lone-request kernel), 3 (one by one or a
     * batch, as the implementation decides) */
    static const unsigned masks[] = {0xFF, 0x01, 0x07};
    char what[96];
    for (size_t m = 0; m < 3; m++) {
        x->mask = masks[m];
        x25519_needles(x, 1);
        snprintf(what, sizeof(what), "%s: mbc_x25519_mb8, lanes 0x%02x", impl, masks[m]);
        check_call(what, NULL, run_x25519, x, MBC_WIPE_X25519);
        x25519_needles(x, 0);
        snprintf(what, sizeof(what), "%s: mbc_x25519_public_key_mb8, lanes 0x%02x", impl, masks[m]);
        check_call(what, NULL, run_x25519_public, x, MBC_WIPE_X25519);
    }
    /* keygen: the scalars it draws are only known afterwards, so the scan
     * of a probed run looks for the private keys that run returned */
    x->mask = 0xFF;
    run_x25519_keygen(x);
    probe_once(run_x25519_keygen, x);
    needles_reset();
    for (unsigned l = 0; l < 8; l++) {
        uint8_t be[32];
        for (unsigned i = 0; i < 32; i++) {
            be[i] = x->priv[l][31 - i];
        }
        add_number("generated scalar", be, 32);
    }
    needles_sort();
    unsigned on_stack;
    const unsigned hits = scan_probe("mbc_x25519_keygen_mb8", &on_stack);
    print_message("%s: mbc_x25519_keygen_mb8: %u secret copies (%u on the stack)\n", impl, hits,
                  on_stack);
    if (hits != 0) {
        fail_msg("mbc_x25519_keygen_mb8 left %u copies of secrets behind", hits);
    }
    free(x);
    mbc_cpu_restrict(~0ull);
}

/* ------------------------------------------------------------------------ */
/* ML-KEM                                                                    */
/* ------------------------------------------------------------------------ */

#define MLK_EK MBC_MLKEM768_EK_LEN
#define MLK_DK MBC_MLKEM768_DK_LEN
#define MLK_CT MBC_MLKEM768_CT_LEN

struct mlkem_arg {
    unsigned mask;
    uint8_t seed[8][64], m[8][32], ek[8][MLK_EK], dk[8][MLK_DK], ct[8][MLK_CT], ss[8][32];
};

/* mlkem_secret_poly: the needles of the secret vector s of dk: its bytes,
 * and its coefficients as the library holds them (int16, in (-q/2, q/2)). */
static void mlkem_needles_dk(const uint8_t *dk)
{
    add_bytes("ML-KEM dk_PKE", dk, 384 * 3);
    for (unsigned i = 0; i < 3; i++) {
        int16_t a[256];
        mbc_mlkem_decode12(a, dk + 384 * i);
        for (unsigned j = 0; j < 256; j++) {
            a[j] = (int16_t)(a[j] > MLKEM_Q / 2 ? a[j] - MLKEM_Q : a[j]);
        }
        add_bytes("ML-KEM s (int16)", (const uint8_t *)a, sizeof(a));
    }
    add_bytes("ML-KEM z", dk + MLK_DK - 32, 32);
}

/* mlkem_needles: seeds and sigma = G(d || 3)[32..] (keygen), m, G(m ||
 * H(ek)) = (K, r) and the secrets (encaps, decaps), the secret vector of
 * each dk. */
static void mlkem_needles(struct mlkem_arg *x, int keygen)
{
    needles_reset();
    for (unsigned l = 0; l < 8; l++) {
        uint8_t g[64], in[64];
        if (keygen) {
            add_bytes("ML-KEM d", x->seed[l], 32);
            memcpy(in, x->seed[l], 32);
            in[32] = 3;
            mbc_sha3_512(g, in, 33);
            add_bytes("ML-KEM sigma", g + 32, 32);
        } else {
            add_bytes("ML-KEM m", x->m[l], 32);
            memcpy(in, x->m[l], 32);
            mbc_sha3_256(in + 32, x->ek[l], MLK_EK);
            mbc_sha3_512(g, in, 64);
            add_bytes("ML-KEM (K, r)", g, 64);
        }
        mlkem_needles_dk(x->dk[l]);
    }
    needles_sort();
}

static void mlkem_ptrs(struct mlkem_arg *x, uint8_t *e[8], uint8_t *d[8], uint8_t *c[8],
                       uint8_t *s[8])
{
    for (unsigned l = 0; l < 8; l++) {
        e[l] = x->ek[l];
        d[l] = x->dk[l];
        c[l] = x->ct[l];
        s[l] = x->ss[l];
    }
}

static void run_mlkem_keygen(void *a)
{
    struct mlkem_arg *x = a;
    uint8_t *e[8], *d[8], *c[8], *s[8];
    mlkem_ptrs(x, e, d, c, s);
    const uint8_t *sd[8];
    for (unsigned l = 0; l < 8; l++) {
        sd[l] = x->seed[l];
    }
    if (mbc_mlkem_keygen_seed_mb8(MBC_MLKEM_768, e, d, sd, x->mask) != all_ok(x->mask)) {
        abort();
    }
}

static void run_mlkem_encaps(void *a)
{
    struct mlkem_arg *x = a;
    uint8_t *e[8], *d[8], *c[8], *s[8];
    mlkem_ptrs(x, e, d, c, s);
    const uint8_t *ce[8], *mm[8];
    for (unsigned l = 0; l < 8; l++) {
        ce[l] = x->ek[l];
        mm[l] = x->m[l];
    }
    if (mbc_mlkem_encaps_m_mb8(MBC_MLKEM_768, c, s, ce, mm, x->mask) != all_ok(x->mask)) {
        abort();
    }
}

static void run_mlkem_decaps(void *a)
{
    struct mlkem_arg *x = a;
    uint8_t *e[8], *d[8], *c[8], *s[8];
    mlkem_ptrs(x, e, d, c, s);
    const uint8_t *cc[8], *cd[8];
    for (unsigned l = 0; l < 8; l++) {
        cc[l] = x->ct[l];
        cd[l] = x->dk[l];
    }
    if (mbc_mlkem_decaps_mb8(MBC_MLKEM_768, s, cc, cd, x->mask) != all_ok(x->mask)) {
        abort();
    }
}

/* ML-KEM-768 key generation, encapsulation and decapsulation with 8 lanes
 * and 1; the scrub is the one mlkem_api.c computes for the call's lanes
 * (MLKEM_WIPE_BASE and MLKEM_WIPE_PER_REQ a request), given here as the
 * lower bound of 8 lanes' (the test checks the work stays inside the
 * scrub). */
static void test_mlkem(void **state)
{
    const char *impl = mbt_use_alg_impl(MBC_ALG_MLKEM, *state);
    skip_if_sanitized();
    struct mlkem_arg *x = calloc(1, sizeof(*x));
    assert_non_null(x);
    mbt_rand_bytes(&x->seed[0][0], sizeof(x->seed));
    mbt_rand_bytes(&x->m[0][0], sizeof(x->m));
    static const unsigned masks[] = {0xFF, 0x01};
    char what[96];
    for (size_t i = 0; i < 2; i++) {
        x->mask = masks[i];
        const size_t scrub =
            MLKEM_WIPE_BASE + MLKEM_WIPE_PER_REQ * (size_t)__builtin_popcount(masks[i]);
        run_mlkem_keygen(x);
        mlkem_needles(x, 1);
        snprintf(what, sizeof(what), "%s: mbc_mlkem_keygen_seed_mb8, lanes 0x%02x", impl, masks[i]);
        check_call(what, NULL, run_mlkem_keygen, x, scrub);
        mlkem_needles(x, 0);
        snprintf(what, sizeof(what), "%s: mbc_mlkem_encaps_m_mb8, lanes 0x%02x", impl, masks[i]);
        check_call(what, NULL, run_mlkem_encaps, x, scrub);
        snprintf(what, sizeof(what), "%s: mbc_mlkem_decaps_mb8, lanes 0x%02x", impl, masks[i]);
        check_call(what, NULL, run_mlkem_decaps, x, scrub);
    }
    free(x);
    mbc_cpu_restrict(~0ull);
}

/* ------------------------------------------------------------------------ */
/* EC                                                                        */
/* ------------------------------------------------------------------------ */

#define EC_LEN 48
#define EC_POINT 97

struct ec_fix {
    mbc_curve curve;
    size_t len, plen;
    EVP_PKEY *pkey;
    uint8_t d[EC_LEN], point[EC_POINT];
    mbc_ec_priv_key *priv;
};

static struct ec_fix ec_fx[2];

static struct ec_fix *ec_key(mbc_curve curve)
{
    struct ec_fix *f = &ec_fx[curve == MBC_CURVE_P256 ? 0 : 1];
    if (f->pkey == NULL) {
        f->curve = curve;
        f->len = mbc_ec_scalar_len(curve);
        f->plen = mbc_ec_point_len(curve);
        f->pkey = mbt_ossl_ec_keygen(curve);
        assert_non_null(f->pkey);
        assert_int_equal(mbt_ossl_ec_get(f->pkey, curve, f->d, f->point), 0);
        assert_int_equal(mbc_ec_priv_key_new(&f->priv, curve, f->d, f->len), MBC_OK);
    }
    return f;
}

/* ec_add_scalar: a secret scalar x mod n of curve: its digits and bytes,
 * x R mod n (its Montgomery form: R = 2^(52 k)), and for a nonce x^-1 mod
 * n and x^-1 R mod n. */
static void ec_add_scalar(const char *name, mbc_curve curve, const uint8_t *x, size_t len,
                          int nonce)
{
    EC_GROUP *g =
        EC_GROUP_new_by_curve_name(curve == MBC_CURVE_P256 ? NID_X9_62_prime256v1 : NID_secp384r1);
    BN_CTX *ctx = BN_CTX_new();
    const BIGNUM *n = EC_GROUP_get0_order(g);
    BIGNUM *v = BN_bin2bn(x, (int)len, NULL), *r = BN_new(), *t = BN_new();
    assert_true(g != NULL && ctx != NULL && v != NULL && r != NULL && t != NULL);
    const int k = (int)(len * 8 + 51) / 52;
    char nm[48];
    add_number(name, x, len);
    assert_true(BN_lshift(t, v, 52 * k) && BN_nnmod(r, t, n, ctx));
    snprintf(nm, sizeof(nm), "%s R mod n", name);
    add_bn(nm, r);
    if (nonce) {
        assert_non_null(BN_mod_inverse(r, v, n, ctx));
        snprintf(nm, sizeof(nm), "%s^-1 mod n", name);
        add_bn(nm, r);
        assert_true(BN_lshift(t, r, 52 * k) && BN_nnmod(r, t, n, ctx));
        snprintf(nm, sizeof(nm), "%s^-1 R mod n", name);
        add_bn(nm, r);
    }
    BN_free(v);
    BN_free(r);
    BN_free(t);
    BN_CTX_free(ctx);
    EC_GROUP_free(g);
}

/* ec_nonce_of: the nonce k = (z + r d) / s mod n of signature sig (r || s)
 * of digest z under d. */
static void ec_nonce_of(const struct ec_fix *f, const uint8_t *sig, const uint8_t *z, uint8_t *k)
{
    EC_GROUP *g = EC_GROUP_new_by_curve_name(f->curve == MBC_CURVE_P256 ? NID_X9_62_prime256v1
                                                                        : NID_secp384r1);
    BN_CTX *ctx = BN_CTX_new();
    const BIGNUM *n = EC_GROUP_get0_order(g);
    BIGNUM *r = BN_bin2bn(sig, (int)f->len, NULL), *sv = BN_bin2bn(sig + f->len, (int)f->len, NULL);
    BIGNUM *d = BN_bin2bn(f->d, (int)f->len, NULL), *zb = BN_bin2bn(z, (int)f->len, NULL);
    BIGNUM *t = BN_new();
    assert_true(BN_mod_mul(t, r, d, n, ctx) && BN_mod_add(t, t, zb, n, ctx) &&
                BN_mod_inverse(sv, sv, n, ctx) != NULL && BN_mod_mul(t, t, sv, n, ctx) &&
                BN_bn2binpad(t, k, (int)f->len) == (int)f->len);
    BN_free(r);
    BN_free(sv);
    BN_free(d);
    BN_free(zb);
    BN_free(t);
    BN_CTX_free(ctx);
    EC_GROUP_free(g);
}

struct ec_arg {
    struct ec_fix *f;
    unsigned op, mask; /* op: 0 sign_k, 1 sign (random nonces), 2 ecdh, 3 keygen, 4 single
                          sign_k, 5 single ecdh, 6 key creation */
    uint8_t digest[8][EC_LEN], k[8][EC_LEN], peer[8][EC_POINT];
    uint8_t out[8][2 * EC_LEN], out2[8][EC_POINT];
};

static void run_ec(void *a)
{
    struct ec_arg *e = a;
    const struct ec_fix *f = e->f;
    uint8_t *o[8], *o2[8];
    const uint8_t *dg[8], *kp[8], *peer[8];
    size_t dl[8];
    const mbc_ec_priv_key *key[8];
    for (unsigned l = 0; l < 8; l++) {
        o[l] = e->out[l];
        o2[l] = e->out2[l];
        dg[l] = e->digest[l];
        kp[l] = e->k[l];
        peer[l] = e->peer[l];
        dl[l] = f->len;
        key[l] = f->priv;
    }
    mbc_status st = 0;
    mbc_err err = MBC_OK;
    mbc_ec_priv_key *nk = NULL;
    switch (e->op) {
    case 0:
        st = mbc_ecdsa_sign_k_mb8(o, dg, dl, key, kp, f->curve, e->mask);
        break;
    case 1:
        st = mbc_ecdsa_sign_mb8(o, dg, dl, key, f->curve, e->mask);
        break;
    case 2:
        st = mbc_ecdh_mb8(o, peer, key, f->curve, e->mask);
        break;
    case 3:
        st = mbc_ec_keygen_mb8(o, o2, f->curve, e->mask);
        break;
    case 4:
        err = mbc_ecdsa_sign_k(e->out[0], e->digest[0], f->len, f->priv, e->k[0]);
        break;
    case 5:
        err = mbc_ecdh(e->out[0], e->peer[0], f->plen, f->priv);
        break;
    case 6:
        err = mbc_ec_priv_key_new(&nk, f->curve, f->d, f->len);
        mbc_ec_priv_key_free(nk);
        break;
    default:
        err = mbc_ec_priv_key_new_pair(&nk, f->curve, f->d, f->len, f->point, f->plen);
        mbc_ec_priv_key_free(nk);
        break;
    }
    for (unsigned l = 0; l < 8; l++) {
        if (((e->mask >> l) & 1u) && mbc_lane_code(st, l) != MBC_LANE_OK &&
            !((mbc_test_hooks.ec_fault_lanes >> l) & 1u)) {
            abort();
        }
    }
    if (err != MBC_OK && !(mbc_test_hooks.ec_fault_lanes & 1u)) {
        abort();
    }
}

/* ec_late_needles: the secrets a call made itself, known from its outputs:
 * the random nonces of signatures, the scalars of new key pairs. */
static void ec_late_needles(struct ec_arg *e)
{
    for (unsigned l = 0; l < 8; l++) {
        if (!((e->mask >> l) & 1u)) {
            continue;
        }
        uint8_t k[EC_LEN];
        if (e->op == 1) {
            ec_nonce_of(e->f, e->out[l], e->digest[l], k);
            ec_add_scalar("random nonce", e->f->curve, k, e->f->len, 1);
        } else if (e->op == 3) {
            ec_add_scalar("generated d", e->f->curve, e->out[l], e->f->len, 0);
        }
    }
    needles_sort();
}

/* ec_check: check_call for an EC operation; the operations that make their
 * own secrets (random nonces, key generation) have their needles added
 * after the probe, from the outputs. */
static void ec_check(const char *what, struct ec_arg *e)
{
    if (e->op != 1 && e->op != 3) {
        check_call(what, NULL, run_ec, e, MBC_WIPE_EC);
        return;
    }
    run_ec(e);
    const size_t depth = probe_once(run_ec, e);
    ec_late_needles(e);
    unsigned on_stack;
    const unsigned hits = scan_probe(what, &on_stack);
    print_message("%s: %u secret copies (%u on the stack), %zu stack bytes written\n", what, hits,
                  on_stack, depth);
    if (hits != 0) {
        fail_msg("%s left %u copies of secrets behind", what, hits);
    }
    mbc_test_hooks.no_stack_wipe = 1;
    const size_t bare = probe_once(run_ec, e);
    mbc_test_hooks.no_stack_wipe = 0;
    print_message("  without the %d-byte scrubs: %zu stack bytes written\n", MBC_WIPE_EC, bare);
    if (bare >= depth) {
        fail_msg("%s: the work wrote %zu bytes deep, the scrub reached %zu: raise MBC_WIPE_EC",
                 what, bare, depth);
    }
}

static void test_ec(void **state)
{
    const char *impl = mbt_use_ec_impl(state);
    skip_if_sanitized();
    static const mbc_curve curves[] = {MBC_CURVE_P256, MBC_CURVE_P384};
    static const char *const names[] = {
        "mbc_ecdsa_sign_k_mb8", "mbc_ecdsa_sign_mb8",       "mbc_ecdh_mb8",
        "mbc_ec_keygen_mb8",    "mbc_ecdsa_sign_k",         "mbc_ecdh",
        "mbc_ec_priv_key_new",  "mbc_ec_priv_key_new_pair",
    };
    struct ec_arg *e = calloc(1, sizeof(*e));
    assert_non_null(e);
    for (size_t ci = 0; ci < 2; ci++) {
        struct ec_fix *f = ec_key(curves[ci]);
        e->f = f;
        needles_reset();
        ec_add_scalar("d", f->curve, f->d, f->len, 0);
        for (unsigned l = 0; l < 8; l++) {
            mbt_rand_bytes(e->digest[l], f->len);
            mbt_rand_bytes(e->k[l], f->len);
            e->k[l][0] &= 0x7F; /* below n */
            ec_add_scalar("k", f->curve, e->k[l], f->len, 1);
            memcpy(e->peer[l], ec_key(curves[ci])->point, f->plen);
        }
        needles_sort();
        char what[96];
        /* 8 lanes on the batch kernel (hook ec_batch_plan), 8, 3 and 1 on the
         * implementation's plan */
        static const unsigned masks[] = {0xFF, 0xFF, 0x23, 0x01};
        for (unsigned op = 0; op < 8; op++) {
            for (size_t m = 0; m < 4; m++) {
                if (op >= 4 && m > 0) {
                    continue;
                }
                e->op = op;
                e->mask = op >= 4 ? 1 : masks[m];
                mbc_test_hooks.ec_batch_plan = m == 0;
                snprintf(what, sizeof(what), "%s: P-%zu %s, lanes 0x%02x%s", impl, f->len * 8,
                         names[op], e->mask, m == 0 && op < 4 ? " (batch plan)" : "");
                ec_check(what, e);
                mbc_test_hooks.ec_batch_plan = 0;
                if (op == 3 || op == 1) {
                    /* the late needles go: back to d and the nonces */
                    needles_reset();
                    ec_add_scalar("d", f->curve, f->d, f->len, 0);
                    for (unsigned l = 0; l < 8; l++) {
                        ec_add_scalar("k", f->curve, e->k[l], f->len, 1);
                    }
                    needles_sort();
                }
            }
        }
        /* a fault caught by the check, in lane 2 */
        mbc_test_hooks.ec_fault_lanes = 0x04;
        e->op = 0;
        e->mask = 0xFF;
        snprintf(what, sizeof(what), "%s: P-%zu mbc_ecdsa_sign_k_mb8, a fault in lane 2", impl,
                 f->len * 8);
        ec_check(what, e);
        mbc_test_hooks.ec_fault_lanes = 0;
    }
    free(e);
    mbc_cpu_restrict(~0ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rsa_key_new),
        MBT_IMPL_TESTS(test_rsa_private),
        GCM_TESTS(test_gcm),
        MBT_IMPL_TESTS(test_x25519),
        {"test_x25519/adx", test_x25519, NULL, NULL, (void *)"adx"},
        {"test_mlkem/c", test_mlkem, NULL, NULL, (void *)"c"},
        {"test_mlkem/avx2", test_mlkem, NULL, NULL, (void *)"avx2"},
        {"test_mlkem/avx512", test_mlkem, NULL, NULL, (void *)"avx512"},
        MBT_EC_IMPL_TESTS(test_ec),
    };
    const int rc = mbt_run("wipe", tests);
    for (int i = 0; i < 3; i++) {
        EVP_PKEY_free(rsa_fx[i].pkey);
        mbt_rsa_parts_free(&rsa_fx[i].parts);
        mbc_rsa_priv_key_free(rsa_fx[i].priv);
        mbc_rsa_pub_key_free(rsa_fx[i].pub);
    }
    for (int i = 0; i < 2; i++) {
        EVP_PKEY_free(ec_fx[i].pkey);
        mbc_ec_priv_key_free(ec_fx[i].priv);
    }
    free(nd.a);
    return rc;
}
