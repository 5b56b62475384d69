/*
 * rsa_kern.c - RSA kernels on mb52 rows, compiled once per backend: with
 * MBC_VEC_IFMA=1 and the AVX-512 IFMA flags (symbols _ifma), portable
 * (_c, 8 lanes) and portable on lanes 0 and 1 (_c2, a lone request's two
 * CRT halves). All compute identical digits. Each is built again for the
 * tests (MBC_TEST_HOOKS=1, src/test_hooks.h) with the hit counters, the
 * fault injection and mbc_rsa_crt_halves_test_ifma.
 *
 * Private exponentiation: fixed windows of RSA_WIN bits over exactly
 * half_bits exponent bits, a full masked scan of the table per window, the
 * same sequence of operations for every key and input.
 * Public exponentiation: left-to-right binary over e_bits; e is public, so a
 * multiply is skipped when no active lane has that bit set.
 */
#include "../mb52/mont.h"
#include "../test_hooks.h"
#include "rsa_kern.h"
#if MBC_VEC_IFMA
#include "rsa_h2.h"
#endif

#if MBC_TEST_HOOKS
/* Batches this backend ran: lets a test prove the dispatched kernel ran. */
_Atomic unsigned long MBC_KFN(rsa_kern_hits);
#endif

/*
 * pub_exp: out = in^e mod n per lane, fully reduced. scratch: 4 k rows.
 * Pre: in < n. Time depends on e (public) only.
 */
static void pub_exp(mb52_row *out, const mb52_row *in, const struct mb52_mod *n, const mb52_row *e,
                    unsigned e_bits, unsigned lanes, mb52_row *scratch)
{
    const unsigned k = n->k;
    const unsigned ke = mb52_digits(e_bits);
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(k);
    const vec n0 = v_load(*n->m0inv);
    mb52_row *x = scratch;
    mb52_row *r = scratch + k;
    mb52_row *t = scratch + 2 * k;
    mb52_row *one = scratch + 3 * k;

    ops->mul(x, in, n->to_mont, n->m, n0); /* x = in R */
    /* r = x where the top bit of e is set, else R (one) */
    const vmask top = v_nonzero(mb52_window(e, ke, e_bits - 1, 1));
    for (unsigned j = 0; j < k; j++) {
        v_store(r[j], v_blend(top, v_load(n->r1[j]), v_load(x[j])));
    }
    for (unsigned bit = e_bits - 1; bit-- > 0;) {
        ops->sqr(r, r, n->m, n0);
        const vmask set = v_nonzero(mb52_window(e, ke, bit, 1));
        if ((vm_bits(set) & lanes) == 0) {
            continue; /* public: no active lane has this exponent bit */
        }
        ops->mul(t, r, x, n->m, n0);
        for (unsigned j = 0; j < k; j++) {
            v_store(r[j], v_blend(set, v_load(r[j]), v_load(t[j])));
        }
    }
    MBC_KFN(mb52_from_mont)(out, r, n, one);
}

/* pub_fn: pub_exp's interface; pub_exp_h (IFMA) runs a lone lane 0
 * horizontally. */
typedef void pub_fn(mb52_row *out, const mb52_row *in, const struct mb52_mod *n, const mb52_row *e,
                    unsigned e_bits, unsigned lanes, mb52_row *scratch);

void MBC_KFN(rsa_pub_kern)(struct rsa_pub_args *a)
{
    mbc_test_count(MBC_KFN(rsa_kern_hits));
    pub_exp(a->out, a->in, &a->n, a->e, a->e_bits, a->lanes, a->scratch);
}

/*
 * exp_fn: r = x^d R^(1-d) mod m per lane (Montgomery form, < 2m), fixed
 * windows of RSA_WIN bits over exactly d_bits bits, a full masked scan of the
 * table per window. x (k rows) < 2m; d has k rows. scratch: the
 * (2^RSA_WIN + 1) k rows of crt_half's table area.
 * win_exp: the vertical one (every lane); mbc_rsa_h2_exp_ifma (rsa_h2.c): the
 * horizontal one of lanes 0 and 1 at k = 20, 30, 40, the same digits.
 */
typedef void exp_fn(mb52_row *r, const mb52_row *x, const struct mb52_mod *md, const mb52_row *d,
                    unsigned d_bits, mb52_row *scratch);

static void win_exp(mb52_row *r, const mb52_row *x, const struct mb52_mod *md, const mb52_row *d,
                    unsigned d_bits, mb52_row *scratch)
{
    const unsigned k = md->k;
    const unsigned nt = 1u << RSA_WIN;
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(k);
    const vec m0 = v_load(*md->m0inv);
    mb52_row *table = scratch;
    mb52_row *w = scratch + (size_t)nt * k;

    /* table[i] = x^i R (the layout of mb52_table_put), each entry made in w:
     * the square of entry i / 2 or, for odd i, entry i - 1 (still in w)
     * times x */
    mb52_table_put(table, nt, 0, md->r1, k);
    mb52_table_put(table, nt, 1, x, k);
    for (unsigned i = 2; i < nt; i++) {
        if (i % 2 == 0) {
            mb52_table_get(w, table, nt, i / 2, k);
            ops->sqr(w, w, md->m, m0);
        } else {
            ops->mul(w, w, x, md->m, m0);
        }
        mb52_table_put(table, nt, i, w, k);
    }

    const unsigned nwin = (d_bits + RSA_WIN - 1) / RSA_WIN;
    const unsigned top = d_bits - (nwin - 1) * RSA_WIN;
    mb52_lookup(r, table, nt, mb52_window(d, k, (nwin - 1) * RSA_WIN, top), k);
    /* The next entry is looked up in pieces (k is a multiple of
     * MB52_LOOKUP_PIECE), one share after each squaring: the blends and the
     * loads of tables larger than the L1 cache (3072, 4096) overlap the
     * squaring's serial carry tail and the next one's start. */
    const unsigned pieces = k / MB52_LOOKUP_PIECE;
    vmask hit[1u << RSA_WIN];
    for (unsigned wi = nwin - 1; wi-- > 0;) {
        mb52_lookup_hits(hit, mb52_window(d, k, wi * RSA_WIN, RSA_WIN), nt);
        for (unsigned s = 0; s < RSA_WIN; s++) {
            ops->sqr(r, r, md->m, m0);
            for (unsigned p = s * pieces / RSA_WIN; p < (s + 1) * pieces / RSA_WIN; p++) {
                mb52_lookup_piece(w, table, nt, hit, k, p);
            }
        }
        ops->mul(r, r, w, md->m, m0);
    }
}

/*
 * crt_half: out = in^d mod m per lane, fully reduced (< m), constant time,
 * the exponentiation done by exp. in has 2k rows (< n < R m); d has k rows
 * and at most d_bits bits. scratch: (2^RSA_WIN + 4) k rows.
 */
static void crt_half(mb52_row *out, const mb52_row *in, const struct mb52_mod *md,
                     const mb52_row *d, unsigned d_bits, mb52_row *scratch, exp_fn *exp)
{
    const unsigned k = md->k;
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(k);
    const vec m0 = v_load(*md->m0inv);
    mb52_row *x = scratch + ((size_t)(1u << RSA_WIN) + 1) * k;
    mb52_row *r = x + k;
    mb52_row *one = r + k;

    /* x = in R mod m: REDC gives in / R, times R^3 gives in R. */
    ops->redc(x, in, md->m, m0);
    ops->mul(x, x, md->to_mont, md->m, m0);
    exp(r, x, md, d, d_bits, scratch);
    MBC_KFN(mb52_from_mont)(out, r, md, one);
}

/*
 * crt_halves: mp = in^dp mod p and mq = in^dq mod q in the lanes of their
 * requests (see rsa_crt_args: paired), fully reduced.
 */
static void crt_halves(mb52_row *mp, mb52_row *mq, const struct rsa_crt_args *a, mb52_row *scratch,
                       exp_fn *exp)
{
    const unsigned kh = a->p.k;
    crt_half(mp, a->in, &a->p, a->dp, a->half_bits, scratch, exp);
    if (a->paired != 0) {
        /* The q halves came out in lanes n..2n-1: move them under their p. */
        const unsigned n = a->paired;
        for (unsigned j = 0; j < kh; j++) {
            for (unsigned l = 0; l < n; l++) {
                mq[j][l] = mp[j][l + n];
            }
        }
    } else {
        crt_half(mq, a->in, &a->q, a->dq, a->half_bits, scratch, exp);
    }
}

/* crt_kern: the private operation with the half exponentiations done by exp
 * and the fault check's public exponentiation by pub. */
static void crt_kern(struct rsa_crt_args *a, exp_fn *exp, pub_fn *pub)
{
    const unsigned kh = a->p.k;
    const unsigned kn = 2 * kh;
    mb52_row *half_scratch = a->scratch;
    mb52_row *mp = a->scratch + ((1u << RSA_WIN) + 4) * kh;
    mb52_row *mq = mp + kh;
    mb52_row *check = mq + kh;
    mb52_row *pub_scratch = check + kn;

    crt_halves(mp, mq, a, half_scratch, exp);

#if MBC_TEST_HOOKS
    /* Test hook: flip one bit of the p half in the selected lanes. */
    const vec flip = v_blend(vm_from_bits(a->fault_lanes), v_zero(), v_set1(1));
    v_store(mp[0], v_xor(v_load(mp[0]), flip));
#endif

    /* Garner: h = (mp - mq) qinv mod p; out = mq + h q. q < 2p because both
     * primes have exactly half_bits bits, so one subtraction reduces mq. */
    const struct mb52_mont_ops *ops = MBC_KFN(mb52_mont_for)(kh);
    mb52_row *mqp = check; /* check is free until the verification */
    mb52_row *h = check + kh;
    mb52_copy(mqp, mq, kh);
    mb52_cond_sub(mqp, a->p.m, kh);
    mb52_mod_sub(h, mp, mqp, a->p.m, kh);
    ops->mul(h, h, a->qinv_r, a->p.m, v_load(*a->p.m0inv));
    mb52_cond_sub(h, a->p.m, kh);
    mb52_mul_add(a->out, h, a->q.m, mq, kh);

    /* Fault check: out^e mod n must give the input back. */
    pub(check, a->out, &a->n, a->e, a->e_bits, a->lanes, pub_scratch);
    vec diff = v_zero();
    for (unsigned j = 0; j < kn; j++) {
        diff = v_or(diff, v_xor(v_load(check[j]), v_load(a->in[j])));
    }
    a->ok_lanes = vm_bits(vm_not(v_nonzero(diff))) & a->lanes;
}

void MBC_KFN(rsa_crt_kern)(struct rsa_crt_args *a)
{
    mbc_test_count(MBC_KFN(rsa_kern_hits));
    crt_kern(a, win_exp, pub_exp);
}

#if MBC_VEC_IFMA
/* mbc_rsa_h2_exp_ifma works in crt_half's table area; mbc_rsa_h1_pub_ifma in
 * pub_exp's scratch. */
#define H2_FITS(KH) (RSA_H2_SCRATCH_ROWS(KH) <= ((1u << RSA_WIN) + 1) * (KH))
_Static_assert(H2_FITS(20) && H2_FITS(30) && H2_FITS(40),
               "rsa_h2 scratch exceeds crt_half's table area");
#undef H2_FITS
#define H1_FITS(KN) (RSA_H1_SCRATCH_ROWS(KN) <= RSA_PUB_SCRATCH_ROWS(KN))
_Static_assert(H1_FITS(40) && H1_FITS(60) && H1_FITS(80),
               "rsa_h1 scratch exceeds pub_exp's scratch");
#undef H1_FITS

#if MBC_TEST_HOOKS
_Atomic unsigned long mbc_rsa_kern_hits_h2;
_Atomic unsigned long mbc_rsa_kern_hits_h1;
#endif

/* rsa_h2_usable: the horizontal CRT halves fit a: one request (its two
 * halves in lanes 0 and 1) of a size rsa_h2 handles. */
static int rsa_h2_usable(const struct rsa_crt_args *a)
{
    return a->paired == 1 && mbc_rsa_h2_fits(a->p.k);
}

/* pub_exp_h: pub_exp, horizontal (mbc_rsa_h1_pub_ifma) when only lane 0 is
 * active and its size fits; the same digits either way. */
static void pub_exp_h(mb52_row *out, const mb52_row *in, const struct mb52_mod *n,
                      const mb52_row *e, unsigned e_bits, unsigned lanes, mb52_row *scratch)
{
    if (lanes == 1 && mbc_rsa_h1_fits(n->k)) {
        mbc_test_count(mbc_rsa_kern_hits_h1);
        mbc_rsa_h1_pub_ifma(out, in, n, e, e_bits, scratch);
    } else {
        pub_exp(out, in, n, e, e_bits, lanes, scratch);
    }
}

void mbc_rsa_crt_kern_h2_ifma(struct rsa_crt_args *a)
{
    if (!rsa_h2_usable(a)) {
        mbc_rsa_crt_kern_ifma(a);
        return;
    }
    mbc_test_count(mbc_rsa_kern_hits_ifma);
    mbc_test_count(mbc_rsa_kern_hits_h2);
    crt_kern(a, mbc_rsa_h2_exp_ifma, pub_exp_h);
}

void mbc_rsa_pub_kern_h1_ifma(struct rsa_pub_args *a)
{
    mbc_test_count(mbc_rsa_kern_hits_ifma);
    pub_exp_h(a->out, a->in, &a->n, a->e, a->e_bits, a->lanes, a->scratch);
}

#if MBC_TEST_HOOKS
int mbc_rsa_crt_halves_test_ifma(mb52_row *mp, mb52_row *mq, const struct rsa_crt_args *a, int h2)
{
    const int horizontal = h2 && rsa_h2_usable(a);
    crt_halves(mp, mq, a, a->scratch, horizontal ? mbc_rsa_h2_exp_ifma : win_exp);
    return horizontal;
}
#endif /* MBC_TEST_HOOKS */
#endif /* MBC_VEC_IFMA */
