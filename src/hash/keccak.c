/*
 * keccak.c - Keccak-f[1600] (FIPS 202 section 3) in portable C and the
 * sponge on it: SHA3-256, SHA3-512, SHAKE128, SHAKE256. Baseline x86-64
 * code; the state is read and written as little-endian bytes.
 */
#include <string.h>

#include "../internal.h"
#include "keccak.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "keccak.c reads the state as little-endian bytes"
#endif

static inline uint64_t rol64(uint64_t x, unsigned n)
{
    return n == 0 ? x : (x << n) | (x >> (64 - n));
}

void mbc_keccak_f1600(uint64_t s[25])
{
    for (unsigned round = 0; round < 24; round++) {
        uint64_t c[5], b[25];
        /* theta */
#pragma GCC unroll 5
        for (unsigned x = 0; x < 5; x++) {
            c[x] = s[x] ^ s[x + 5] ^ s[x + 10] ^ s[x + 15] ^ s[x + 20];
        }
#pragma GCC unroll 5
        for (unsigned x = 0; x < 5; x++) {
            const uint64_t d = c[(x + 4) % 5] ^ rol64(c[(x + 1) % 5], 1);
#pragma GCC unroll 5
            for (unsigned y = 0; y < 25; y += 5) {
                s[x + y] ^= d;
            }
        }
        /* rho and pi */
#pragma GCC unroll 25
        for (unsigned i = 0; i < 25; i++) {
            b[mbc_keccak_pi[i]] = rol64(s[i], mbc_keccak_rho[i]);
        }
        /* chi */
#pragma GCC unroll 5
        for (unsigned y = 0; y < 25; y += 5) {
#pragma GCC unroll 5
            for (unsigned x = 0; x < 5; x++) {
                s[x + y] = b[x + y] ^ (~b[(x + 1) % 5 + y] & b[(x + 2) % 5 + y]);
            }
        }
        /* iota */
        s[0] ^= mbc_keccak_rc[round];
    }
}

void mbc_keccak_init(struct mbc_keccak *k, unsigned rate)
{
    memset(k->s, 0, sizeof(k->s));
    k->rate = rate;
    k->pos = 0;
}

/* xor_bytes: the state's bytes at off ^= in (len bytes, off + len <= 200). */
static void xor_bytes(uint64_t s[25], unsigned off, const uint8_t *in, size_t len)
{
    uint8_t *sb = (uint8_t *)s;
    size_t i = 0;
    while (i < len && ((off + i) & 7u) != 0) {
        sb[off + i] ^= in[i];
        i++;
    }
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, in + i, 8);
        s[(off + i) / 8] ^= w;
    }
    for (; i < len; i++) {
        sb[off + i] ^= in[i];
    }
}

void mbc_keccak_absorb(struct mbc_keccak *k, const uint8_t *in, size_t len)
{
    while (len > 0) {
        size_t take = k->rate - k->pos;
        if (take > len) {
            take = len;
        }
        xor_bytes(k->s, k->pos, in, take);
        k->pos += (unsigned)take;
        in += take;
        len -= take;
        if (k->pos == k->rate) {
            mbc_keccak_f1600(k->s);
            k->pos = 0;
        }
    }
}

void mbc_keccak_finish(struct mbc_keccak *k, uint8_t dom)
{
    uint8_t *sb = (uint8_t *)k->s;
    sb[k->pos] ^= dom;
    sb[k->rate - 1] ^= 0x80;
    mbc_keccak_f1600(k->s);
    k->pos = 0;
}

void mbc_keccak_squeeze(struct mbc_keccak *k, uint8_t *out, size_t len)
{
    const uint8_t *sb = (const uint8_t *)k->s;
    while (len > 0) {
        if (k->pos == k->rate) {
            mbc_keccak_f1600(k->s);
            k->pos = 0;
        }
        size_t take = k->rate - k->pos;
        if (take > len) {
            take = len;
        }
        memcpy(out, sb + k->pos, take);
        k->pos += (unsigned)take;
        out += take;
        len -= take;
    }
}

/* one_shot: out = the sponge of rate and domain byte dom over in. */
static void one_shot(unsigned rate, uint8_t dom, uint8_t *out, size_t out_len, const uint8_t *in,
                     size_t len)
{
    struct mbc_keccak k;
    mbc_keccak_init(&k, rate);
    mbc_keccak_absorb(&k, in, len);
    mbc_keccak_finish(&k, dom);
    mbc_keccak_squeeze(&k, out, out_len);
    mbc_memzero(&k, sizeof(k));
}

void mbc_sha3_256(uint8_t out[32], const uint8_t *in, size_t len)
{
    one_shot(MBC_SHA3_256_RATE, 0x06, out, 32, in, len);
}

void mbc_sha3_512(uint8_t out[64], const uint8_t *in, size_t len)
{
    one_shot(MBC_SHA3_512_RATE, 0x06, out, 64, in, len);
}

void mbc_shake128(uint8_t *out, size_t out_len, const uint8_t *in, size_t len)
{
    one_shot(MBC_SHAKE128_RATE, 0x1F, out, out_len, in, len);
}

void mbc_shake256(uint8_t *out, size_t out_len, const uint8_t *in, size_t len)
{
    one_shot(MBC_SHAKE256_RATE, 0x1F, out, out_len, in, len);
}

void mbc_keccak_hash_c(const struct mbc_hash_task *t, unsigned n, unsigned rate)
{
    for (unsigned i = 0; i < n; i++) {
        one_shot(rate, t[i].dom, t[i].out, t[i].out_len, t[i].in, t[i].len);
    }
}

void mbc_keccak_hash_ways(const struct mbc_keccak_ways *w, const struct mbc_hash_task *t,
                          unsigned n, unsigned rate)
{
    uint8_t block[MBC_KECCAK_MAX_WAYS][200], out[MBC_KECCAK_MAX_WAYS][200];
    MBC_ALIGN64 uint64_t state[25 * MBC_KECCAK_MAX_WAYS];
    for (unsigned g = 0; g < n; g += w->ways) {
        const unsigned m = n - g < w->ways ? n - g : w->ways;
        size_t blocks[MBC_KECCAK_MAX_WAYS] = {0}, most = 0;
        for (unsigned i = 0; i < m; i++) {
            /* the padding needs a byte: len / rate + 1 blocks (counted
             * without division: the scan of the built objects allows none) */
            blocks[i] = 1;
            for (size_t rem = t[g + i].len; rem >= rate; rem -= rate) {
                blocks[i]++;
            }
            most = blocks[i] > most ? blocks[i] : most;
        }
        memset(state, 0, sizeof(state));
        for (size_t b = 0; b < most; b++) {
            /* the block of each sponge (zeros for one already finished or
             * absent: its output is out, what it absorbs now is never read) */
            memset(block, 0, sizeof(block));
            unsigned last = 0;
            for (unsigned i = 0; i < m; i++) {
                const struct mbc_hash_task *ti = &t[g + i];
                if (b >= blocks[i]) {
                    continue;
                }
                const size_t off = b * rate;
                const size_t take = ti->len - off < rate ? ti->len - off : rate;
                memcpy(block[i], ti->in + off, take);
                if (b + 1 == blocks[i]) {
                    block[i][take] ^= ti->dom;
                    block[i][rate - 1] ^= 0x80;
                    last |= 1u << i;
                }
            }
            w->absorb(state, (const uint8_t(*)[200])block, rate);
            /* the outputs of the sponges whose last block this was (public
             * lengths decide) */
            if (last != 0) {
                w->read(state, out, rate);
                for (unsigned i = 0; i < m; i++) {
                    if ((last >> i) & 1u) {
                        memcpy(t[g + i].out, out[i], t[g + i].out_len);
                    }
                }
            }
        }
    }
    mbc_memzero(state, sizeof(state));
    mbc_memzero(block, sizeof(block));
    mbc_memzero(out, sizeof(out));
}

void mbc_keccak_absorb_lanes(uint64_t *s, unsigned ways, unsigned rate, const uint8_t *const in[],
                             size_t len, uint8_t dom)
{
    memset(s, 0, 25 * ways * sizeof(uint64_t));
    const size_t whole = len & ~(size_t)7;
    for (unsigned i = 0; i < ways; i++) {
        for (size_t j = 0; j < whole; j += 8) {
            memcpy(&s[(j >> 3) * ways + i], in[i] + j, 8);
        }
        /* the last bytes, the domain byte after them, and rate's final bit */
        uint64_t last = 0;
        memcpy(&last, in[i] + whole, len - whole);
        s[(whole >> 3) * ways + i] = last ^ ((uint64_t)dom << (8 * (len - whole)));
        s[(rate / 8 - 1) * ways + i] ^= 0x80ull << 56;
        mbc_memzero(&last, sizeof(last));
    }
}
