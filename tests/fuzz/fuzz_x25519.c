/*
 * fuzz_x25519.c - X25519 (RFC 7748) on fuzzed scalars and u-coordinates,
 * checked against OpenSSL's EVP X25519:
 *  - mbc_x25519 and mbc_x25519_mb8: any scalar; u raw, near the points of
 *    small order (0, 1, the two of order 8, p - 1, p, p + 1), u >= p, the
 *    top bit set: OpenSSL's shared secret, or, where OpenSSL refuses the
 *    all-zero result, MBC_ERR_LOW_ORDER / MBC_LANE_LOW_ORDER with the output
 *    zeroed; out equal to scalar or u (in place);
 *  - mbc_x25519_public_key and _mb8: OpenSSL's public key;
 *  - mbc_x25519_keygen and _mb8: a clamped private key and its public key
 *    (OpenSSL's), priv == pub refused;
 *  - in the _mb8 calls a fuzzed lane mask (also above 0xFF), NULL arrays and
 *    pointers: every lane's code is one the header documents, an OK lane
 *    holds OpenSSL's result whatever the other lanes hold, a failed active
 *    lane's output is zeroed, an inactive lane's (or a malformed call's)
 *    untouched; inactive lanes get pointers that crash when used.
 *
 * Input:
 *   0      implementation (modulo the X25519 implementations the CPU runs)
 *   1      bits 0-1: operation (0 derive, 1 public key, 2 keygen); bit 2:
 *          _mb8; bit 3: a byte of flags (F_*) of a single call follows
 *   then   single: a scalar (32 bytes) and u (u_of()); _mb8: a mask byte, a
 *          flags byte (M_*), 8 lanes: a lane byte (L_*), a scalar, u
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/err.h>

#include "fuzz_rsa.h"
#include "ossl_x25519.h"

#define LEN MBC_X25519_LEN
#define CANARY 0xA5

enum op { OP_DERIVE, OP_PUBLIC, OP_KEYGEN };

/* flags of single calls, and lane bytes of _mb8 calls (with bit 7 set) */
#define F_NULL_OUT 1    /* out (keygen: priv) NULL */
#define F_NULL_SCALAR 2 /* scalar (keygen: pub) NULL */
#define F_NULL_U 4      /* u NULL */
#define F_OUT_SCALAR 8  /* out is the scalar's buffer (keygen: priv == pub) */
#define F_OUT_U 16      /* out is u's buffer */

/* flags byte of an _mb8 call */
#define M_NULL_ARRAY 4 /* bits 0-1 pick the array (mod their number) passed as NULL */
#define M_BIG_MASK 8   /* lane_mask | 0x100 */

/* ---------------------------------------------------------------- reading */

/* The points of small order as u (RFC 7748 section 6.1, Wycheproof), then
 * p - 1, p = 2^255 - 19, and the base point 9; big-endian hex. */
static const char *const bases[] = {
    "0",
    "1",
    "00b8495f16056286fdb1329ceb8d09da6ac49ff1fae35616aeb8413b7c7aebe0",
    "57119fd0dd4e22d8868e1c58c45c44045bef839c55b1d0b1248c50a3bc959c5f",
    "7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffec",
    "7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed",
    "9",
};
#define NUM_BASES (sizeof(bases) / sizeof(bases[0]))

/*
 * u_of: a u-coordinate (32 bytes little-endian) from the input. A kind
 * byte: bits 0-3 the base (below NUM_BASES: bases[], else 32 raw bytes);
 * bit 4 plus a signed delta byte; bit 5 plus p; bit 6 the top bit (255)
 * flipped; the sum mod 2^256.
 */
static void u_of(struct fz_in *in, uint8_t u[LEN])
{
    const unsigned kind = fz_u8(in);
    BIGNUM *x = NULL;
    if ((kind & 15) < NUM_BASES) {
        FZ_CHECK(BN_hex2bn(&x, bases[kind & 15]) != 0, "BN_hex2bn");
    } else {
        uint8_t *b = fz_dup(in, LEN);
        x = BN_lebin2bn(b, LEN, NULL);
        free(b);
        FZ_CHECK(x != NULL, "BN_lebin2bn");
    }
    if (kind & 16) {
        fz_bn_add_delta(x, (int8_t)fz_u8(in));
    }
    if (kind & 32) {
        BIGNUM *p = NULL;
        FZ_CHECK(BN_hex2bn(&p, bases[5]) != 0 && BN_add(x, x, p) == 1, "plus p");
        BN_free(p);
    }
    if (kind & 64) {
        fz_bn_flip_bit(x, 255);
    }
    fz_bn_wrap(x, 256);
    FZ_CHECK(BN_bn2lebinpad(x, u, LEN) == LEN, "BN_bn2lebinpad");
    BN_free(x);
}

static void scalar_of(struct fz_in *in, uint8_t s[LEN])
{
    uint8_t *b = fz_dup(in, LEN);
    memcpy(s, b, LEN);
    free(b);
}

/* ------------------------------------------------------------- the oracle */

/* ref: OpenSSL's result of op on (scalar, u) in want; returns the code
 * mbcrypto must give: MBC_LANE_OK or MBC_LANE_LOW_ORDER (want zero). */
static unsigned ref(enum op op, const uint8_t *scalar, const uint8_t *u, uint8_t want[LEN])
{
    if (op == OP_PUBLIC) {
        FZ_CHECK(mbt_ossl_x25519_public(want, scalar) == 0, "OpenSSL public key");
        return MBC_LANE_OK;
    }
    const int rc = mbt_ossl_x25519(want, scalar, u);
    ERR_clear_error();
    FZ_CHECK(rc >= 0, "OpenSSL X25519 failed");
    fz_count(rc == 0 ? "shared secrets" : "low-order results");
    return rc == 0 ? MBC_LANE_OK : MBC_LANE_LOW_ORDER;
}

/* keygen_check: priv is clamped and pub its public key (OpenSSL's). */
static void keygen_check(const uint8_t *priv, const uint8_t *pub)
{
    uint8_t want[LEN];
    FZ_CHECK((priv[0] & 7) == 0 && (priv[31] & 0xC0) == 0x40, "private key not clamped");
    FZ_CHECK(mbt_ossl_x25519_public(want, priv) == 0, "OpenSSL public key");
    fz_expect_same("keygen: public key", pub, want, LEN);
}

/* ------------------------------------------------------------ single calls */

static void single(struct fz_in *in, enum op op, unsigned flags)
{
    uint8_t s[LEN], u[LEN], want[LEN];
    scalar_of(in, s);
    u_of(in, u);
    uint8_t *sb = fz_alloc(LEN), *ub = fz_alloc(LEN), *ob = fz_alloc(LEN);
    memcpy(sb, s, LEN);
    memcpy(ub, u, LEN);
    memset(ob, CANARY, LEN);
    if (op == OP_KEYGEN) {
        /* priv = ob, pub = sb (or ob itself) */
        uint8_t *priv = (flags & F_NULL_OUT) ? NULL : ob;
        uint8_t *pub = (flags & F_NULL_SCALAR) ? NULL : (flags & F_OUT_SCALAR) ? ob : sb;
        memset(sb, CANARY, LEN);
        fz_errs errs = 0;
        if (priv == NULL || pub == NULL) {
            errs |= FZ_ERR(MBC_ERR_NULL_PARAM);
        } else if (priv == pub) {
            errs |= FZ_ERR(MBC_ERR_BAD_PARAM);
        }
        const mbc_err err = mbc_x25519_keygen(priv, pub);
        fz_expect("mbc_x25519_keygen", err, errs);
        if (err == MBC_OK) {
            keygen_check(ob, sb);
        } else if (err == MBC_ERR_NULL_PARAM) {
            FZ_CHECK(fz_all(ob, LEN, CANARY) && fz_all(sb, LEN, CANARY),
                     "mbc_x25519_keygen wrote after MBC_ERR_NULL_PARAM");
        } else {
            FZ_CHECK(fz_all(ob, LEN, 0), "mbc_x25519_keygen: keys not zeroed after %s",
                     mbc_err_str(err));
        }
    } else {
        const unsigned code = ref(op, s, op == OP_DERIVE ? u : NULL, want);
        uint8_t *out = (flags & F_NULL_OUT)                   ? NULL
                       : (flags & F_OUT_SCALAR)               ? sb
                       : (flags & F_OUT_U) && op == OP_DERIVE ? ub
                                                              : ob;
        const uint8_t *sp = (flags & F_NULL_SCALAR) ? NULL : sb;
        const uint8_t *up = (flags & F_NULL_U) ? NULL : ub;
        const int nulls = out == NULL || sp == NULL || (op == OP_DERIVE && up == NULL);
        fz_errs errs = nulls                 ? FZ_ERR(MBC_ERR_NULL_PARAM)
                       : code == MBC_LANE_OK ? 0
                                             : FZ_ERR(MBC_ERR_LOW_ORDER);
        const mbc_err err =
            op == OP_DERIVE ? mbc_x25519(out, sp, up) : mbc_x25519_public_key(out, sp);
        fz_expect(op == OP_DERIVE ? "mbc_x25519" : "mbc_x25519_public_key", err, errs);
        if (err == MBC_OK) {
            fz_expect_same("X25519 result", out, want, LEN);
        } else if (err == MBC_ERR_LOW_ORDER) {
            FZ_CHECK(fz_all(out, LEN, 0), "mbc_x25519: out not zeroed for a low-order u");
        } else {
            /* nothing written */
            FZ_CHECK(fz_all(ob, LEN, CANARY) && memcmp(sb, s, LEN) == 0 && memcmp(ub, u, LEN) == 0,
                     "written after MBC_ERR_NULL_PARAM");
        }
        /* the inputs are never changed, unless they are out */
        FZ_CHECK(out == sb || memcmp(sb, s, LEN) == 0, "scalar changed");
        FZ_CHECK(out == ub || memcmp(ub, u, LEN) == 0, "u changed");
    }
    free(sb);
    free(ub);
    free(ob);
}

/* ------------------------------------------------------------- _mb8 calls */

#define LC(code) (1u << (code))

struct lane {
    uint8_t s[LEN], u[LEN], want[LEN];
    uint8_t *sb, *ub, *ob;  /* the lane's buffers */
    uint8_t *out;           /* passed as out (keygen: priv) */
    const uint8_t *sp, *up; /* passed as scalar (keygen: pub), u */
    unsigned codes;
};

static void mb8(struct fz_in *in, enum op op)
{
    static const char *const names[] = {"mbc_x25519_mb8", "mbc_x25519_public_key_mb8",
                                        "mbc_x25519_keygen_mb8"};
    unsigned mask = fz_u8(in);
    const unsigned mf = fz_u8(in);
    if (mf & M_BIG_MASK) {
        mask |= 0x100;
    }
    const unsigned narrays = op == OP_DERIVE ? 3 : 2;
    const int null_array = (mf & M_NULL_ARRAY) ? (int)((mf & 3) % narrays) : -1;
    uint8_t *const wild = (uint8_t *)(uintptr_t)64;
    struct lane L[MBC_LANES];
    uint8_t *outs[MBC_LANES], *pubs[MBC_LANES];
    const uint8_t *ss[MBC_LANES], *us[MBC_LANES];
    for (unsigned i = 0; i < MBC_LANES; i++) {
        struct lane *l = &L[i];
        const unsigned sb = fz_u8(in), spec = (sb & 128) ? sb : 0;
        const int active = (mask >> i) & 1;
        scalar_of(in, l->s);
        u_of(in, l->u);
        l->sb = fz_alloc(LEN);
        l->ub = fz_alloc(LEN);
        l->ob = fz_alloc(LEN);
        memcpy(l->sb, l->s, LEN);
        memcpy(l->ub, l->u, LEN);
        memset(l->ob, CANARY, LEN);
        unsigned bad = 0;
        if (op == OP_KEYGEN) {
            memset(l->sb, CANARY, LEN);
            l->out = (spec & F_NULL_OUT) ? NULL : l->ob;
            l->sp = (spec & F_NULL_SCALAR) ? NULL : (spec & F_OUT_SCALAR) ? l->ob : l->sb;
            if (l->out == NULL || l->sp == NULL || null_array >= 0) {
                bad |= LC(MBC_LANE_NULL_PARAM);
            }
            if (l->out != NULL && l->out == l->sp) {
                bad |= LC(MBC_LANE_BAD_PARAM);
            }
        } else {
            const unsigned code = ref(op, l->s, l->u, l->want);
            l->out = (spec & F_NULL_OUT)                   ? NULL
                     : (spec & F_OUT_SCALAR)               ? l->sb
                     : (spec & F_OUT_U) && op == OP_DERIVE ? l->ub
                                                           : l->ob;
            l->sp = (spec & F_NULL_SCALAR) ? NULL : l->sb;
            l->up = (spec & F_NULL_U) ? NULL : l->ub;
            if (l->out == NULL || l->sp == NULL || (op == OP_DERIVE && l->up == NULL) ||
                null_array >= 0) {
                bad |= LC(MBC_LANE_NULL_PARAM);
            } else if (code != MBC_LANE_OK) {
                bad |= LC(code);
            }
        }
        if (mask > 0xFF) {
            l->codes = LC(MBC_LANE_BAD_PARAM);
        } else if (!active) {
            l->codes = LC(MBC_LANE_EMPTY);
        } else {
            l->codes = bad != 0 ? bad : LC(MBC_LANE_OK);
        }
        const int hide = !active && mask <= 0xFF;
        outs[i] = hide ? wild : l->out;
        pubs[i] = hide ? wild : (uint8_t *)(uintptr_t)l->sp;
        ss[i] = hide ? wild : l->sp;
        us[i] = hide ? wild : l->up;
    }
#define ARR(j, a) (null_array == (j) ? NULL : (a))
    const mbc_status st =
        op == OP_DERIVE   ? mbc_x25519_mb8(ARR(0, outs), ARR(1, ss), ARR(2, us), mask)
        : op == OP_PUBLIC ? mbc_x25519_public_key_mb8(ARR(0, outs), ARR(1, ss), mask)
                          : mbc_x25519_keygen_mb8(ARR(0, outs), ARR(1, pubs), mask);
#undef ARR
    for (unsigned i = 0; i < MBC_LANES; i++) {
        struct lane *l = &L[i];
        const unsigned code = mbc_lane_code(st, i);
        FZ_CHECK(code < 16 && (l->codes & LC(code)), "%s: lane %u is %s (allowed: %#x)", names[op],
                 i, mbc_lane_code_str(code), l->codes);
        fz_count(code == MBC_LANE_OK ? "mb8 lanes OK" : "mb8 lanes failed");
        const int active_failed = code != MBC_LANE_OK && code != MBC_LANE_EMPTY && mask <= 0xFF;
        if (op == OP_KEYGEN) {
            uint8_t *pub = (uint8_t *)(uintptr_t)l->sp;
            if (code == MBC_LANE_OK) {
                keygen_check(l->out, pub);
            } else {
                /* failed: the keys of an active lane that were passed (in
                 * an array that was passed) are zeroed; priv may be pub */
                const int zpriv = active_failed && l->out != NULL && null_array != 0;
                const int zpub = active_failed && pub != NULL && null_array != 1;
                FZ_CHECK(fz_all(l->ob, LEN, zpriv || (zpub && pub == l->ob) ? 0 : CANARY),
                         "%s: lane %u (%s): priv %s", names[op], i, mbc_lane_code_str(code),
                         zpriv ? "not zeroed" : "written");
                FZ_CHECK(fz_all(l->sb, LEN, zpub && pub == l->sb ? 0 : CANARY),
                         "%s: lane %u (%s): pub %s", names[op], i, mbc_lane_code_str(code),
                         zpub ? "not zeroed" : "written");
            }
        } else {
            if (code == MBC_LANE_OK) {
                fz_expect_same(names[op], l->out, l->want, LEN);
            } else {
                const int z = active_failed && l->out != NULL && null_array != 0;
                FZ_CHECK(l->out == NULL || fz_all(l->out, LEN, z ? 0 : CANARY) ||
                             (!z && l->out != l->ob &&
                              memcmp(l->out, l->out == l->sb ? l->s : l->u, LEN) == 0),
                         "%s: lane %u (%s): out %s", names[op], i, mbc_lane_code_str(code),
                         z ? "not zeroed" : "written");
            }
            FZ_CHECK(l->out == l->sb || memcmp(l->sb, l->s, LEN) == 0, "lane %u: scalar changed",
                     i);
            FZ_CHECK(l->out == l->ub || memcmp(l->ub, l->u, LEN) == 0, "lane %u: u changed", i);
        }
        free(l->sb);
        free(l->ub);
        free(l->ob);
    }
}

/* --------------------------------------------------------------- one input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in = {data, size};
    fz_use_impl(MBC_ALG_X25519, fz_u8(&in));
    const unsigned b = fz_u8(&in);
    const enum op op = (b & 3) == 3 ? OP_DERIVE : (enum op)(b & 3);
    if (b & 4) {
        mb8(&in, op);
    } else {
        single(&in, op, (b & 8) ? fz_u8(&in) : 0);
    }
    return 0;
}

/* ------------------------------------------------------------------- seeds */

static void put_u(struct fz_out *o, unsigned ukind)
{
    uint8_t u[LEN];
    fz_put_u8(o, ukind);
    if ((ukind & 15) >= NUM_BASES) {
        fz_seed_rand(u, LEN);
        fz_put(o, u, LEN);
    }
    if (ukind & 16) {
        fz_put_u8(o, 1);
    }
}

static void put_scalar(struct fz_out *o)
{
    uint8_t s[LEN];
    fz_seed_rand(s, LEN);
    fz_put(o, s, LEN);
}

static void write_seeds(const char *dir)
{
    unsigned count = 0;
    char name[64];
    /* every base, + 1, + p, top bit; raw */
    const unsigned ukinds[] = {0,  1,       2,      3,      4,      5,      6,
                               15, 15 | 64, 0 | 32, 1 | 32, 5 | 16, 2 | 64, 6 | 16 | 32};
    const size_t nk = sizeof(ukinds) / sizeof(ukinds[0]);
    for (unsigned impl = 0; impl < fz_num_impls(MBC_ALG_X25519); impl++) {
        for (size_t k = 0; k < nk; k++) {
            for (unsigned op = 0; op < 3; op++) {
                struct fz_out o = {.len = 0};
                fz_put_u8(&o, impl);
                fz_put_u8(&o, op | (k == 3 || k == 4 ? 8 : 0));
                if (k == 3 || k == 4) {
                    fz_put_u8(&o, k == 3 ? F_OUT_SCALAR : F_OUT_U);
                }
                put_scalar(&o);
                put_u(&o, ukinds[k]);
                snprintf(name, sizeof(name), "seed-%03u", count++);
                fz_seed_write(dir, name, &o);
            }
        }
        for (unsigned op = 0; op < 3; op++) {
            for (unsigned v = 0; v < 3; v++) {
                struct fz_out o = {.len = 0};
                fz_put_u8(&o, impl);
                fz_put_u8(&o, op | 4);
                fz_put_u8(&o, v == 1 ? 0x6D : 0xFF);
                fz_put_u8(&o, 0);
                for (unsigned i = 0; i < MBC_LANES; i++) {
                    const unsigned spec = v == 2 && i == 3   ? 128 | F_NULL_SCALAR
                                          : v == 2 && i == 5 ? 128 | F_OUT_SCALAR
                                                             : 0;
                    fz_put_u8(&o, spec);
                    put_scalar(&o);
                    put_u(&o, ukinds[(i * 3 + v) % nk]);
                }
                snprintf(name, sizeof(name), "seed-%03u", count++);
                fz_seed_write(dir, name, &o);
            }
        }
    }
}

const struct fz_target fz_target = {"fuzz_x25519", NULL, write_seeds};
