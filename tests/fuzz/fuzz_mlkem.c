/*
 * fuzz_mlkem.c - libFuzzer target: ML-KEM (every parameter set) on every
 * implementation this CPU runs, each against the first (the tiers must
 * agree byte for byte), and against the algebra: a ciphertext made from a
 * key decapsulates to its secret with that key.
 *
 * Input: param byte (2..4 after mod 3), seed (64), m (32), then edits: up
 * to 8 of (target u8, position u16, xor u8), target mod 3 picking ek (before
 * encapsulation), ct (before decapsulation) or dk, then a lane byte: lane
 * mask of an _mb8 decapsulation of the edited inputs in every lane (a lane
 * whose ek or dk was edited to fail its check must fail alone).
 * Checks: the calls' codes are the documented ones (an edited ek may fail
 * the modulus check, an edited dk the hash check: BAD_PARAM); outputs and
 * codes are the same on every implementation; unedited, decaps(encaps) is
 * the secret; an edited ct gives a secret independent of the others'
 * results on every tier alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#define MAXEK MBC_MLKEM1024_EK_LEN
#define MAXDK MBC_MLKEM1024_DK_LEN
#define MAXCT MBC_MLKEM1024_CT_LEN
#define SS MBC_MLKEM_SS_LEN

struct result {
    mbc_err kg, enc, dec;
    mbc_status dec8;
    uint8_t ek[MAXEK], dk[MAXDK], ct[MAXCT], ss[SS], ss2[SS], ss8[MBC_LANES][SS];
};

static void sizes(mbc_mlkem_param p, size_t *ek, size_t *dk, size_t *ct)
{
    *ek = p == MBC_MLKEM_512   ? MBC_MLKEM512_EK_LEN
          : p == MBC_MLKEM_768 ? MBC_MLKEM768_EK_LEN
                               : MBC_MLKEM1024_EK_LEN;
    *dk = p == MBC_MLKEM_512   ? MBC_MLKEM512_DK_LEN
          : p == MBC_MLKEM_768 ? MBC_MLKEM768_DK_LEN
                               : MBC_MLKEM1024_DK_LEN;
    *ct = p == MBC_MLKEM_512   ? MBC_MLKEM512_CT_LEN
          : p == MBC_MLKEM_768 ? MBC_MLKEM768_CT_LEN
                               : MBC_MLKEM1024_CT_LEN;
}

struct edit {
    unsigned target, pos;
    uint8_t x;
};

static void run(struct result *r, mbc_mlkem_param p, const uint8_t *seed, const uint8_t *m,
                const struct edit *ed, unsigned ne, unsigned lanes)
{
    size_t ekl, dkl, ctl;
    sizes(p, &ekl, &dkl, &ctl);
    memset(r, 0, sizeof(*r));
    r->kg = mbc_mlkem_keygen_seed(p, r->ek, r->dk, seed, 64);
    fz_expect("mbc_mlkem_keygen_seed", r->kg, 0);
    for (unsigned i = 0; i < ne; i++) {
        if (ed[i].target == 0) {
            r->ek[ed[i].pos % ekl] ^= ed[i].x;
        } else if (ed[i].target == 2) {
            r->dk[ed[i].pos % dkl] ^= ed[i].x;
        }
    }
    r->enc = mbc_mlkem_encaps_m(p, r->ct, r->ss, r->ek, ekl, m);
    fz_expect("mbc_mlkem_encaps_m", r->enc, FZ_ERR(MBC_OK) | FZ_ERR(MBC_ERR_BAD_PARAM));
    for (unsigned i = 0; i < ne; i++) {
        if (ed[i].target == 1) {
            r->ct[ed[i].pos % ctl] ^= ed[i].x;
        }
    }
    r->dec = mbc_mlkem_decaps(p, r->ss2, r->ct, ctl, r->dk, dkl);
    fz_expect("mbc_mlkem_decaps", r->dec, FZ_ERR(MBC_OK) | FZ_ERR(MBC_ERR_BAD_PARAM));
    uint8_t *o[MBC_LANES];
    const uint8_t *c[MBC_LANES], *d[MBC_LANES];
    for (unsigned l = 0; l < MBC_LANES; l++) {
        o[l] = r->ss8[l];
        c[l] = r->ct;
        d[l] = r->dk;
    }
    r->dec8 = mbc_mlkem_decaps_mb8(p, o, c, d, lanes);
    for (unsigned l = 0; l < MBC_LANES; l++) {
        if ((lanes >> l) & 1u) {
            const unsigned code = mbc_lane_code(r->dec8, l);
            FZ_CHECK((code == MBC_LANE_OK && r->dec == MBC_OK) ||
                         (code == MBC_LANE_BAD_PARAM && r->dec == MBC_ERR_BAD_PARAM),
                     "lane %u of the 8-lane decapsulation differs from the single call", l);
            fz_expect_same("8-lane secret", r->ss8[l], r->ss2, SS);
        } else {
            FZ_CHECK(mbc_lane_code(r->dec8, l) == MBC_LANE_EMPTY, "lane %u not EMPTY", l);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in = {data, size};
    const mbc_mlkem_param p = (mbc_mlkem_param)(2 + fz_u8(&in) % 3);
    uint8_t seed[64], m[32];
    for (unsigned i = 0; i < 64; i++) {
        seed[i] = fz_u8(&in);
    }
    for (unsigned i = 0; i < 32; i++) {
        m[i] = fz_u8(&in);
    }
    const unsigned ne = fz_u8(&in) % 9;
    struct edit ed[8];
    unsigned edited[3] = {0};
    for (unsigned i = 0; i < ne; i++) {
        ed[i].target = fz_u8(&in) % 3;
        ed[i].pos = fz_u16(&in);
        ed[i].x = fz_u8(&in);
        edited[ed[i].target] |= ed[i].x != 0;
    }
    const unsigned lanes = fz_u8(&in);
    static struct result ref, got;
    for (unsigned impl = 0; impl < fz_num_impls(MBC_ALG_MLKEM); impl++) {
        fz_use_impl(MBC_ALG_MLKEM, impl);
        run(impl == 0 ? &ref : &got, p, seed, m, ed, ne, lanes);
        if (impl == 0) {
            continue;
        }
        FZ_CHECK(got.enc == ref.enc && got.dec == ref.dec && got.dec8 == ref.dec8,
                 "%s: codes differ from %s", fz_impl(MBC_ALG_MLKEM, impl),
                 fz_impl(MBC_ALG_MLKEM, 0));
        fz_expect_same("ek", got.ek, ref.ek, sizeof(ref.ek));
        fz_expect_same("dk", got.dk, ref.dk, sizeof(ref.dk));
        fz_expect_same("ct", got.ct, ref.ct, sizeof(ref.ct));
        fz_expect_same("ss", got.ss, ref.ss, SS);
        fz_expect_same("ss2", got.ss2, ref.ss2, SS);
    }
    if (!edited[0] && !edited[1] && !edited[2]) {
        FZ_CHECK(ref.enc == MBC_OK && ref.dec == MBC_OK, "unedited keys refused");
        fz_expect_same("decaps(encaps)", ref.ss2, ref.ss, SS);
        fz_count("round trip");
    } else {
        fz_count(ref.enc != MBC_OK ? "ek refused" : ref.dec != MBC_OK ? "dk refused" : "edited");
    }
    return 0;
}

static void write_seeds(const char *dir)
{
    char name[64];
    unsigned count = 0;
    for (unsigned p = 0; p < 3; p++) {
        for (unsigned kind = 0; kind < 5; kind++) {
            struct fz_out o = {.len = 0};
            uint8_t b[96];
            fz_put_u8(&o, p);
            fz_seed_rand(b, sizeof(b));
            fz_put(&o, b, sizeof(b));
            /* 0 none, 1 a ct bit, 2 an ek coefficient to 4095, 3 dk's H(ek), 4 all */
            const unsigned ne = kind == 0 ? 0 : kind == 4 ? 3 : 1;
            fz_put_u8(&o, ne);
            for (unsigned i = 0; i < ne; i++) {
                const unsigned t = kind == 4 ? i : kind == 1 ? 1 : kind == 2 ? 0 : 2;
                fz_put_u8(&o, t);
                fz_put_u16(&o, t == 2 ? 384u * (p + 2) * 2 + 32u * 1 + 40u : 1000u + i);
                fz_put_u8(&o, t == 0 ? 0xFF : 0x01);
            }
            fz_put_u8(&o, kind == 0 ? 0xFF : 0x25);
            snprintf(name, sizeof(name), "seed-%03u", count++);
            fz_seed_write(dir, name, &o);
        }
    }
}

const struct fz_target fz_target = {"fuzz_mlkem", NULL, write_seeds};
