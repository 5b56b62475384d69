/*
 * rsa_h2.c - horizontal exponentiations for a lone RSA request (AVX-512 IFMA
 * only: built into the _ifma kernel object with its flags):
 *  - "x2": the two CRT half exponentiations of a lone private request
 *    (k = 20, 30, 40 digits: RSA-2048, 3072, 4096), the half mod p and the
 *    half mod q side by side;
 *  - "x1": the public exponentiation mod n of a lone public request, and the
 *    fault check of a lone private one (k = 40, 60, 80).
 *
 * The 8-lane vertical kernels give a lone request 1 or 2 busy lanes out of
 * 8. Here each number of k digits of 52 bits is spread over the lanes of
 * V = ceil(k / 8) zmm registers (8 V digit slots, slots k and up zero); with
 * x2 the two numbers are two independent dependency chains that the core
 * overlaps (for x1 the vector work per digit step, 4 V multiply-adds, already
 * covers the chain's latency at these sizes). The mathematics is that of
 * rsa_kern.c: the same almost-Montgomery multiply (R = 2^(52 k), hence the
 * same digits), for private the same fixed windows and full table scans, for
 * public the same left-to-right binary over e_bits (e is public). The
 * multiply (h_amm) and the table scan (h_lookup) are src/mb52/h52.h's; this
 * file holds the exponentiations.
 */
#include <string.h>

#include "../internal.h"
#include "../mb52/h52.h"
#include "rsa_h2.h"

int mbc_rsa_h2_fits(unsigned k)
{
    return mbc_h52_size(2, k) != NULL;
}

int mbc_rsa_h1_fits(unsigned k)
{
    return mbc_h52_size(1, k) != NULL;
}

void mbc_rsa_h2_exp_ifma(mb52_row *r, const mb52_row *x, const struct mb52_mod *md,
                         const mb52_row *d, unsigned d_bits, mb52_row *scratch)
{
    const struct h52_size *z = mbc_h52_size(2, md->k);
    const unsigned k = md->k;
    const unsigned nt = 1u << RSA_WIN;
    const size_t sz = (size_t)z->nn * 8 * z->nv; /* digits per set */
    uint64_t *table = (uint64_t *)(void *)scratch;
    uint64_t *acc = table + nt * sz;
    uint64_t *w = acc + sz;
    struct h52_mod hm;
    mbc_h52_mod_init(&hm, md, z);

    mbc_h52_from_rows(table, md->r1, z);
    mbc_h52_from_rows(table + sz, x, z);
    for (unsigned i = 2; i < nt; i++) {
        if (i % 2 == 0) {
            z->amm(table + i * sz, table + (i / 2) * sz, table + (i / 2) * sz, &hm);
        } else {
            z->amm(table + i * sz, table + (i - 1) * sz, table + sz, &hm);
        }
    }

    const unsigned nwin = (d_bits + RSA_WIN - 1) / RSA_WIN;
    const unsigned top = d_bits - (nwin - 1) * RSA_WIN;
    z->lookup(acc, table, nt, mb52_window(d, k, (nwin - 1) * RSA_WIN, top));
    for (unsigned wi = nwin - 1; wi-- > 0;) {
        for (unsigned s = 0; s < RSA_WIN; s++) {
            z->amm(acc, acc, acc, &hm);
        }
        z->lookup(w, table, nt, mb52_window(d, k, wi * RSA_WIN, RSA_WIN));
        z->amm(acc, acc, w, &hm);
    }
    mbc_h52_to_rows(r, acc, z);
    mbc_memzero(&hm, sizeof(hm)); /* the primes (scratch is wiped by the glue) */
}

/* h_e_bit: bit b of lane 0 of the public exponent e (ke rows). */
static unsigned h_e_bit(const mb52_row *e, unsigned b)
{
    return (unsigned)(e[b / MB52_BITS][0] >> (b % MB52_BITS)) & 1u;
}

void mbc_rsa_h1_pub_ifma(mb52_row *out, const mb52_row *in, const struct mb52_mod *n,
                         const mb52_row *e, unsigned e_bits, mb52_row *scratch)
{
    const struct h52_size *z = mbc_h52_size(1, n->k);
    const size_t sz = (size_t)8 * z->nv;
    uint64_t *x = (uint64_t *)(void *)scratch;
    uint64_t *r = x + sz;
    uint64_t *t = r + sz;
    struct h52_mod hm;
    mbc_h52_mod_init(&hm, n, z);

    mbc_h52_from_rows(x, in, z);
    mbc_h52_from_rows(t, n->to_mont, z);
    z->amm(x, x, t, &hm); /* x = in R */
    if (h_e_bit(e, e_bits - 1)) {
        memcpy(r, x, sz * sizeof(uint64_t));
    } else {
        mbc_h52_from_rows(r, n->r1, z);
    }
    for (unsigned bit = e_bits - 1; bit-- > 0;) {
        z->amm(r, r, r, &hm);
        if (h_e_bit(e, bit)) {
            z->amm(r, r, x, &hm);
        }
    }
    /* out of the Montgomery domain: a multiply by 1, then one subtraction */
    memset(t, 0, sz * sizeof(uint64_t));
    t[0] = 1;
    z->amm(r, r, t, &hm);
    mbc_h52_to_rows(out, r, z);
    mb52_cond_sub(out, n->m, n->k);
    /* n is public; x, r and t (a private op's check: secret-derived) are in
     * scratch, which the glue wipes */
    mbc_memzero(&hm, sizeof(hm));
}
