/*
 * gcm_c.c - the portable AES-GCM implementation (_c) and the key setup
 * shared by every implementation. Constant time: no table lookups, no
 * secret-dependent branches or addresses.
 *
 * AES: the state of 4 blocks (64 bytes) is transposed into 8 bit-planes
 * (uint64_t word j holds bit j of all 64 bytes), and SubBytes is computed on
 * the planes as inversion in GF(2^8) = x^254 (4 multiplications and 7
 * squarings of bitsliced polynomials modulo x^8 + x^4 + x^3 + x + 1)
 * followed by the affine map. ShiftRows, MixColumns and AddRoundKey work on
 * bytes at public positions.
 *
 * GHASH: Y <- (Y ^ X) * H, bit by bit with all-ones masks (GCM's bit-
 * reflected convention, reduction constant 0xE1 << 120).
 */
#include <string.h>

#include "../ct.h"
#include "gcm_internal.h"

/* ------------------------------------------------------------------------ */
/* Bitsliced S-box on 64 bytes                                               */
/* ------------------------------------------------------------------------ */

/* transpose8: transposes the 8x8 bit matrix x (row i = byte i, column j =
 * bit j); an involution. */
static inline uint64_t transpose8(uint64_t x)
{
    uint64_t t;
    t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
    x ^= t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
    x ^= t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
    x ^= t ^ (t << 28);
    return x;
}

/* to_planes / from_planes: 64 bytes <-> 8 bit-planes (inverse of each
 * other; the byte order inside a plane is some fixed permutation). */
static void to_planes(uint64_t p[8], const uint8_t b[64])
{
    uint8_t t[64];
    for (int r = 0; r < 8; r++) {
        uint64_t w;
        memcpy(&w, b + 8 * r, 8);
        w = transpose8(w);
        memcpy(t + 8 * r, &w, 8);
    }
    for (int j = 0; j < 8; j++) {
        uint8_t col[8];
        for (int r = 0; r < 8; r++) {
            col[r] = t[8 * r + j];
        }
        memcpy(&p[j], col, 8);
    }
}

static void from_planes(uint8_t b[64], const uint64_t p[8])
{
    uint8_t t[64];
    for (int j = 0; j < 8; j++) {
        uint8_t col[8];
        memcpy(col, &p[j], 8);
        for (int r = 0; r < 8; r++) {
            t[8 * r + j] = col[r];
        }
    }
    for (int r = 0; r < 8; r++) {
        uint64_t w;
        memcpy(&w, t + 8 * r, 8);
        w = transpose8(w);
        memcpy(b + 8 * r, &w, 8);
    }
}

/* gf_reduce: p (degree <= 14, bitsliced) modulo x^8 + x^4 + x^3 + x + 1. */
static inline void gf_reduce(uint64_t r[8], uint64_t p[15])
{
    for (int k = 14; k >= 8; k--) {
        p[k - 4] ^= p[k];
        p[k - 5] ^= p[k];
        p[k - 7] ^= p[k];
        p[k - 8] ^= p[k];
    }
    for (int i = 0; i < 8; i++) {
        r[i] = p[i];
    }
}

static void gf_mul(uint64_t r[8], const uint64_t a[8], const uint64_t b[8])
{
    uint64_t p[15] = {0};
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 8; j++) {
            p[i + j] ^= a[i] & b[j];
        }
    }
    gf_reduce(r, p);
}

static void gf_sqr(uint64_t r[8], const uint64_t a[8])
{
    uint64_t p[15] = {0};
    for (int i = 0; i < 8; i++) {
        p[2 * i] = a[i];
    }
    gf_reduce(r, p);
}

/* sbox_planes: the AES S-box on 64 bitsliced bytes. */
static void sbox_planes(uint64_t x[8])
{
    uint64_t x2[8], x3[8], x12[8], x15[8], t[8], inv[8];
    gf_sqr(x2, x);        /* x^2 */
    gf_mul(x3, x2, x);    /* x^3 */
    gf_sqr(t, x3);        /* x^6 */
    gf_sqr(x12, t);       /* x^12 */
    gf_mul(x15, x12, x3); /* x^15 */
    gf_sqr(t, x15);       /* x^30 */
    gf_sqr(t, t);         /* x^60 */
    gf_sqr(t, t);         /* x^120 */
    gf_sqr(t, t);         /* x^240 */
    gf_mul(t, t, x12);    /* x^252 */
    gf_mul(inv, t, x2);   /* x^254 = x^-1 (0 -> 0) */
    for (int i = 0; i < 8; i++) {
        uint64_t c = (0x63u >> i) & 1u ? ~0ull : 0;
        x[i] =
            inv[i] ^ inv[(i + 4) & 7] ^ inv[(i + 5) & 7] ^ inv[(i + 6) & 7] ^ inv[(i + 7) & 7] ^ c;
    }
}

static void sub_bytes64(uint8_t b[64])
{
    uint64_t p[8];
    to_planes(p, b);
    sbox_planes(p);
    from_planes(b, p);
    mbc_memzero(p, sizeof(p));
}

/* ------------------------------------------------------------------------ */
/* AES on 4 blocks                                                           */
/* ------------------------------------------------------------------------ */

static inline uint32_t xtime32(uint32_t x)
{
    return ((x & 0x7f7f7f7fu) << 1) ^ (((x >> 7) & 0x01010101u) * 0x1bu);
}

static void shift_mix(uint8_t s[16], int mix)
{
    uint8_t t[16];
    for (int c = 0; c < 4; c++) {
        for (int r = 0; r < 4; r++) {
            t[r + 4 * c] = s[r + 4 * ((c + r) & 3)];
        }
    }
    if (!mix) {
        memcpy(s, t, 16);
        return;
    }
    for (int c = 0; c < 4; c++) {
        uint32_t a;
        memcpy(&a, t + 4 * c, 4);
        uint32_t a1 = (a >> 8) | (a << 24);  /* byte i = a[i+1] */
        uint32_t a2 = (a >> 16) | (a << 16); /* byte i = a[i+2] */
        uint32_t a3 = (a >> 24) | (a << 8);  /* byte i = a[i+3] */
        uint32_t b = xtime32(a ^ a1) ^ a1 ^ a2 ^ a3;
        memcpy(s + 4 * c, &b, 4);
    }
}

/* aes4_c: out = AES_K(in) for 4 blocks (64 bytes). */
static void aes4_c(const struct mbc_gcm_key *key, const uint8_t in[64], uint8_t out[64])
{
    uint8_t s[64];
    for (int i = 0; i < 64; i++) {
        s[i] = in[i] ^ key->rk[i & 15];
    }
    for (unsigned r = 1; r <= key->rounds; r++) {
        sub_bytes64(s);
        for (int b = 0; b < 4; b++) {
            shift_mix(s + 16 * b, r != key->rounds);
        }
        for (int i = 0; i < 64; i++) {
            s[i] ^= key->rk[16 * r + (i & 15)];
        }
    }
    memcpy(out, s, 64);
    mbc_memzero(s, sizeof(s));
}

static void block_c(const struct mbc_gcm_key *key, const uint8_t in[16], uint8_t out[16])
{
    uint8_t b[64] = {0};
    memcpy(b, in, 16);
    aes4_c(key, b, b);
    memcpy(out, b, 16);
    mbc_memzero(b, sizeof(b));
}

/* ------------------------------------------------------------------------ */
/* Key schedule (the loop shared by every implementation)                    */
/* ------------------------------------------------------------------------ */

void mbc_gcm_expand_key(struct mbc_gcm_key *key, const uint8_t *k, size_t k_len,
                        void (*subword)(uint8_t t[4]))
{
    const unsigned nk = (unsigned)(k_len / 4);
    const unsigned rounds = nk + 6;
    const unsigned words = 4 * (rounds + 1);
    uint8_t *w = key->rk;
    uint8_t rcon = 1;
    memcpy(w, k, k_len);
    /* pos = i mod nk, counted rather than divided: the key schedule has no
     * division (tools/ct_insn_scan.py) */
    for (unsigned i = nk, pos = 0; i < words; i++, pos = pos + 1 == nk ? 0 : pos + 1) {
        uint8_t t[4];
        memcpy(t, w + 4 * (i - 1), 4);
        if (pos == 0 || (nk > 6 && pos == 4)) {
            if (pos == 0) {
                /* RotWord */
                const uint8_t t0 = t[0];
                t[0] = t[1];
                t[1] = t[2];
                t[2] = t[3];
                t[3] = t0;
            }
            subword(t);
            if (pos == 0) {
                t[0] ^= rcon;
                rcon = (uint8_t)((rcon << 1) ^ ((rcon >> 7) * 0x1b));
            }
        }
        for (int j = 0; j < 4; j++) {
            w[4 * i + j] = w[4 * (i - nk) + j] ^ t[j];
        }
        mbc_memzero(t, sizeof(t));
    }
    key->rounds = rounds;
}

/* subword_c: SubWord with the bitsliced S-box. */
static void subword_c(uint8_t t[4])
{
    uint8_t b[64] = {0};
    memcpy(b, t, 4);
    sub_bytes64(b);
    memcpy(t, b, 4);
    mbc_memzero(b, sizeof(b));
}

/* ------------------------------------------------------------------------ */
/* GHASH                                                                     */
/* ------------------------------------------------------------------------ */

static inline uint64_t load_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

static inline void store_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

/* gmult: y = y * h in GF(2^128), GCM bit order; y[0] holds bytes 0..7
 * big-endian. Constant time. */
static void gmult(uint64_t y[2], const uint64_t h[2])
{
    uint64_t z0 = 0, z1 = 0, v0 = h[0], v1 = h[1];
    for (int i = 0; i < 128; i++) {
        uint64_t bit = i < 64 ? (y[0] >> (63 - i)) & 1 : (y[1] >> (127 - i)) & 1;
        uint64_t m = mbc_value_barrier(0 - bit);
        z0 ^= v0 & m;
        z1 ^= v1 & m;
        uint64_t lsb = mbc_value_barrier(0 - (v1 & 1));
        v1 = (v1 >> 1) | (v0 << 63);
        v0 = (v0 >> 1) ^ (0xE100000000000000ull & lsb);
    }
    y[0] = z0;
    y[1] = z1;
}

static void ghash_c(const struct mbc_gcm_key *key, uint8_t xi[16], const uint8_t *in, size_t len)
{
    uint8_t y8[16];
    uint64_t y[2], h[2];
    for (int i = 0; i < 16; i++) {
        y8[i] = xi[15 - i];
    }
    y[0] = load_be64(y8);
    y[1] = load_be64(y8 + 8);
    h[0] = load_be64(key->h);
    h[1] = load_be64(key->h + 8);
    while (len > 0) {
        uint8_t blk[16] = {0};
        size_t n = len < 16 ? len : 16;
        memcpy(blk, in, n);
        y[0] ^= load_be64(blk);
        y[1] ^= load_be64(blk + 8);
        gmult(y, h);
        in += n;
        len -= n;
    }
    store_be64(y8, y[0]);
    store_be64(y8 + 8, y[1]);
    for (int i = 0; i < 16; i++) {
        xi[i] = y8[15 - i];
    }
    mbc_memzero(y8, sizeof(y8));
    mbc_memzero(h, sizeof(h));
}

static void hash_powers_c(struct mbc_gcm_key *key)
{
    uint64_t h[2], p[2];
    h[0] = p[0] = load_be64(key->h);
    h[1] = p[1] = load_be64(key->h + 8);
    for (int n = 1; n <= GCM_NPOW; n++) {
        if (n > 1) {
            gmult(p, h);
        }
        /* v = bswap(H^n) as a 128-bit integer (hi, lo) = (p[1]', p[0]')
         * where bswap reverses the 16 bytes: v's high qword is the byte
         * reversal of bytes 0..7 read little-endian, i.e. p[0] read as a
         * little-endian integer... computed bytewise below. */
        uint8_t b[16], v8[16];
        store_be64(b, p[0]);
        store_be64(b + 8, p[1]);
        for (int i = 0; i < 16; i++) {
            v8[i] = b[15 - i]; /* little-endian integer bytes of bswap(H^n) */
        }
        uint64_t lo = 0, hi = 0;
        for (int i = 7; i >= 0; i--) {
            lo = (lo << 8) | v8[i];
            hi = (hi << 8) | v8[8 + i];
        }
        /* mulX_POLYVAL: v <<= 1; if the top bit was set, xor
         * x^127 + x^126 + x^121 + 1. */
        uint64_t carry = mbc_value_barrier(0 - (hi >> 63));
        hi = (hi << 1) | (lo >> 63);
        lo = lo << 1;
        hi ^= 0xC200000000000000ull & carry;
        lo ^= 1ull & carry;
        uint8_t *dst = key->htab + 16 * (GCM_NPOW - n);
        for (int i = 0; i < 8; i++) {
            dst[i] = (uint8_t)(lo >> (8 * i));
            dst[8 + i] = (uint8_t)(hi >> (8 * i));
        }
        mbc_memzero(b, sizeof(b));
        mbc_memzero(v8, sizeof(v8));
    }
    memset(key->htab + 16 * GCM_NPOW, 0, 64);
    mbc_memzero(h, sizeof(h));
    mbc_memzero(p, sizeof(p));
}

/* ------------------------------------------------------------------------ */
/* CTR + GHASH                                                               */
/* ------------------------------------------------------------------------ */

static void ctr_c(const struct mbc_gcm_key *key, uint8_t ctr[16], const uint8_t *in, uint8_t *out,
                  size_t len)
{
    uint8_t cb[64], ks[64];
    while (len > 0) {
        size_t n = len < 64 ? len : 64;
        size_t nb = (n + 15) / 16;
        memset(cb, 0, sizeof(cb));
        for (size_t b = 0; b < nb; b++) {
            memcpy(cb + 16 * b, ctr, 16);
            gcm_ctr_inc(ctr);
        }
        aes4_c(key, cb, ks);
        for (size_t i = 0; i < n; i++) {
            out[i] = in[i] ^ ks[i];
        }
        in += n;
        out += n;
        len -= n;
    }
    mbc_memzero(ks, sizeof(ks));
}

static void enc_c(const struct mbc_gcm_key *key, uint8_t ctr[16], uint8_t xi[16], const uint8_t *in,
                  uint8_t *out, size_t len)
{
    ctr_c(key, ctr, in, out, len);
    ghash_c(key, xi, out, len);
}

static void dec_c(const struct mbc_gcm_key *key, uint8_t ctr[16], uint8_t xi[16], const uint8_t *in,
                  uint8_t *out, size_t len)
{
    /* GHASH the ciphertext in pieces before it may be overwritten (in-place). */
    while (len > 0) {
        size_t n = len < 4096 ? len : 4096;
        ghash_c(key, xi, in, n);
        ctr_c(key, ctr, in, out, n);
        in += n;
        out += n;
        len -= n;
    }
}

/* scrub_always: the bitsliced AES keeps its state and S-box temporaries in
 * C arrays that the compiler places (and spills) at will. */
/* Below OpenSSL's speed: "auto" serves it nowhere. */
const struct mbc_gcm_impl mbc_gcm_impl_c = {
    .base = {.info = {.name = "c", .tier = MBC_TIER_PORTABLE, .lanes = 1, .fast_ops = 0},
             .needs = 0},
    .subword = subword_c,
    .powers = hash_powers_c,
    .block = block_c,
    .ghash = ghash_c,
    .enc = enc_c,
    .dec = dec_c,
    .scrub_always = 1,
};
