/*
 * x25519_kern.c - X25519 kernels on mb52 rows, compiled once per backend:
 * with MBC_VEC_IFMA=1 and the AVX-512 IFMA flags (symbols _ifma), portable
 * (_c, 8 lanes), portable on lane 0 only (_c1, a lone request) and IFMA
 * on 4 lanes of ymm (_ifma4, lone and few requests). All compute identical
 * digits. Field arithmetic: fe.h. Each is built again for the tests
 * (MBC_TEST_HOOKS=1, src/test_hooks.h) with the hit counters and, on the
 * 8-lane backends, mbc_x25519_fe_test_*.
 *
 * Both kernels run the same sequence of operations for every scalar and
 * every u: the scalar only flows into masks and blends (the ladder's
 * doubling selections, the table scans' selections), never into a branch or an
 * address.
 *
 * Multiply-adds per call (counted from fe.h: multiply 59 uncarried, 60
 * carried; square 39 / 40; times a24 11 uncarried; every carry, so every
 * add and subtract, 1; fe_canon 1; inversion 8 carried multiplies and
 * fe_canon on 8 lanes, 481, and one scalar inversion, mbc_x25519_inv1):
 *  - ladder step: 5 uncarried multiplies, 3 uncarried squares and 1
 *    carried, 1 times a24, 10 carries: 295 + 117 + 40 + 11 + 10 = 473; the
 *    ladder (255 steps, 2 carries, inversion, the last multiply and
 *    fe_canon) 120,615 + 2 + 481 + 60 + 1 = 121,159.
 *  - fixed base: 64 table additions of 6 uncarried multiplies, 1 carried and
 *    8 adds/subtracts (the negation of a selected entry included), 422 each;
 *    4 doublings of 3 carries, 4 uncarried squares, 3 uncarried multiplies, 1
 *    carried and 7 adds/subtracts, 403 each; then u = (Z + Y) / (Z - Y):
 *    27,008 + 1,612 + 2 + 481 + 60 + 1 = 29,164.
 * (Both totals are those of tools/count_ops, which runs the kernels on a
 * counting backend; Fermat's inversion, 254 squares and 11 multiplies,
 * took 10,820 of them.)
 * Each zmm multiply-add serves 8 requests.
 */
/*
 * GCC schedules the instructions of a ladder step (one basic block once
 * every field operation is inlined) before register allocation only when
 * asked: without it the 4 independent products of a step stay one after
 * another, each a chain of 4-cycle multiply-adds, and the Intel part ran
 * 1.44 of its 2 vector operations per cycle (PERF.md); scheduled, the
 * 8-lane derive ran about 20% faster there (mbc_bench, X25519 derive
 * against crypto_mb: 0.69x -> 0.83x in one run). The same operations in
 * another order: the digits and the instruction counts do not change.
 * Clang schedules before allocation by default.
 */
#if MBC_VEC_IFMA && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("schedule-insns", "sched-pressure")
#endif
#include "../internal.h"
#include "../test_hooks.h"
#include "fe.h"
#include "x25519_kern.h"

#if MBC_TEST_HOOKS
/* Kernel calls of this backend: lets a test prove the dispatched kernel ran. */
_Atomic unsigned long MBC_KFN(x25519_kern_hits);
#endif

#define A24 121665 /* (486662 - 2) / 4 */

/* ------------------------------------------------------------------------ */
/* The Montgomery ladder (RFC 7748 section 5)                                */
/* ------------------------------------------------------------------------ */

/*
 * ladder_step: one step of the ladder on the state (x2 : z2), (x3 : z3) (the
 * two points, whose difference has u = x1; RFC 7748's formulas), doubling
 * the one that m names per lane ((x2 : z2) where m is clear, (x3 : z3) where
 * it is set) and adding the two: the double goes to (x2 : z2) and the sum to
 * (x3 : z3) in every lane. The sum needs da + cb and (da - cb)^2, the same
 * whichever point is doubled (da and cb trade places, da - cb changes sign),
 * so only the doubling's inputs are blended: (a, b) or (c, d), 10 blends
 * where a conditional swap of both points took 20.
 *
 * x2, z2, x3 and z3 come in and go out in U (fe.h), x2 and x3 biased by
 * 1024 p (fe_bias): each is the uncarried product of a multiply or square
 * whose only uses are the adds and subtracts of the next step, which
 * carry, and x2 and x3 are the minuends, so their products start at the
 * bias and the subtractions take one operation per digit. The products
 * that are multiplied again (aa, bb, the square of da - cb) are carried;
 * da, cb and a24 e stay uncarried, as only adds and subtracts read them.
 * The minuends da and aa are biased as well, aa + a24 e is a24 e added
 * onto aa's digits by the multiply-adds, and e is taken from the uncarried
 * aa and bb: 25 operations per step fewer than subtracting and adding
 * carried values. Every carry of a step feeds only multiplies and squares,
 * so each is fe_carry_m (M, fe.h), 4 operations fewer.
 */
MB52_INLINE void ladder_step(fe *x2, fe *z2, fe *x3, fe *z3, fe x1, vmask m)
{
    const fe a = fe_add_m(*x2, *z2);
    const fe b = fe_sub_biased_m(*x2, *z2);
    const fe c = fe_add_m(*x3, *z3);
    const fe d = fe_sub_biased_m(*x3, *z3);
    const fe aak = fe_sqr_biased_u(fe_blend(m, a, c)); /* aa + 1024 p */
    const fe bbu = fe_sqr_u(fe_blend(m, b, d));
    const fe dak = fe_mul_biased_u(d, a); /* da + 1024 p */
    const fe cb = fe_mul_u(c, b);
    const fe e = fe_sub_biased_m(aak, bbu);
    *x3 = fe_sqr_biased_u(fe_add_m(dak, cb));
    *z3 = fe_mul_u(x1, fe_sqr_m(fe_sub_biased_m(dak, cb)));
    *x2 = fe_mul_biased_u(fe_carry_m(aak), fe_carry_m(bbu));
    *z2 = fe_mul_u(e, fe_carry_m(fe_mul_small_add_u(aak, e, A24)));
}

/* finish: out = canonical x / z, and the lanes where it is not 0. */
static void finish(struct x25519_args *a, fe x, fe z)
{
    const fe r = fe_canon(fe_mul(x, fe_inv(z)));
    fe_store(a->out, r);
    a->nonzero = vm_bits(fe_nonzero(r));
}

void MBC_KFN(x25519_ladder)(struct x25519_args *a)
{
    mbc_test_count(MBC_KFN(x25519_kern_hits));
    const fe x1 = fe_load(a->u);
    /* in U, x2 and x3 biased (ladder_step) */
    fe x2 = fe_add_bias(fe_small(1)), z2 = fe_small(0), x3 = fe_add_bias(x1), z3 = fe_small(1);
    /* (x2 : z2) is the point of the previous bit (k_(t+1), 0 at the start),
     * (x3 : z3) the other one; 255 steps over bits 254..0 of the clamped
     * scalar, each doubling the point of its bit: the other one in the lanes
     * where the bit differs from the previous one. */
    vec prev = v_zero();
    for (unsigned t = 255; t-- > 0;) {
        const vec bit = mb52_window(a->scalar, X25519_DIGITS, t, 1);
        const vmask m = v_nonzero(v_xor(prev, bit));
        prev = bit;
        ladder_step(&x2, &z2, &x3, &z3, x1, m);
    }
    /* the result is the point of bit 0's side: (x3 : z3) where bit 0 is 1 */
    const vmask m = v_nonzero(prev);
    finish(a, fe_carry(fe_blend(m, x2, x3)), fe_carry(fe_blend(m, z2, z3)));
    mbc_memzero(&x2, sizeof(x2));
    mbc_memzero(&z2, sizeof(z2));
    mbc_memzero(&x3, sizeof(x3));
    mbc_memzero(&z3, sizeof(z3));
    mbc_memzero(&prev, sizeof(prev));
}

/* ------------------------------------------------------------------------ */
/* Fixed base: edwards25519, signed 4-bit digits, mbc_x25519_table            */
/* ------------------------------------------------------------------------ */

/*
 * The scalar s (< 2^255) is written as s = sum e_i 16^i, i < 64, with
 * -8 <= e_i < 8 (e_63 in 0..8), and s B = 16 (sum over odd i of e_i 16^(i-1)
 * B) + sum over even i of e_i 16^i B on edwards25519, where every 16^(2m) B
 * multiple comes from row m of the table: 64 additions of a selected entry
 * and 4 doublings. The twisted Edwards formulas (a = -1, d not a square) are
 * complete: no input is exceptional, the identity included. s B is never the
 * identity for a clamped scalar (8 <= s / 8 < 2^252 < the order of B), so
 * Z - Y is invertible; a scalar of 0 would give u = 0, as the ladder does.
 */

/* ge: a point in extended coordinates: x = X / Z, y = Y / Z, x y = T / Z. */
struct ge {
    fe x, y, z, t;
};

/* niels: an affine point as (y + x, y - x, 2 d x y). */
struct niels {
    fe ypx, ymx, xy2d;
};

/*
 * select_niels: e (-8..8 per lane) times row m's point, read by a scan of
 * all 8 entries (every lane reads every entry; a lane keeps the one its
 * |e| names, or the identity (1, 1, 0) for 0), negated where e < 0: y + x
 * and y - x trade places and 2 d x y changes sign.
 */
MB52_INLINE struct niels select_niels(unsigned m, vec e)
{
    const vec sign = v_sra63(e);
    const vec mag = v_sub(v_xor(e, sign), sign);
    struct niels q = {fe_small(1), fe_small(1), fe_small(0)};
    for (unsigned j = 0; j < 8; j++) {
        const vmask hit = v_eq(mag, v_set1(j + 1));
        q.ypx = fe_blend(hit, q.ypx, fe_const(mbc_x25519_table[m][j][0]));
        q.ymx = fe_blend(hit, q.ymx, fe_const(mbc_x25519_table[m][j][1]));
        q.xy2d = fe_blend(hit, q.xy2d, fe_const(mbc_x25519_table[m][j][2]));
    }
    const vmask neg = v_nonzero(sign);
    const fe ypx = q.ypx;
    q.ypx = fe_blend(neg, q.ypx, q.ymx);
    q.ymx = fe_blend(neg, q.ymx, ypx);
    q.xy2d = fe_blend(neg, q.xy2d, fe_sub(fe_small(0), q.xy2d));
    return q;
}

/*
 * ge_add: p + q (mixed addition, "madd-2008-hwcd-3"): 7 multiplies. X, Y and
 * Z come in and go out in U (fe.h), T in F: the next addition only adds and
 * subtracts X, Y and Z, and multiplies T. The products a, b and c are only
 * added and subtracted, so they stay uncarried as well.
 */
MB52_INLINE struct ge ge_add(struct ge p, struct niels q)
{
    const fe a = fe_mul_u(fe_sub(p.y, p.x), q.ymx);
    const fe b = fe_mul_u(fe_add(p.y, p.x), q.ypx);
    const fe c = fe_mul_u(p.t, q.xy2d);
    const fe d = fe_add(p.z, p.z);
    const fe e = fe_sub(b, a), f = fe_sub(d, c), g = fe_add(d, c), h = fe_add(b, a);
    return (struct ge){fe_mul_u(e, f), fe_mul_u(g, h), fe_mul_u(f, g), fe_mul(e, h)};
}

/*
 * ge_dbl: 2 p ("dbl-2008-hwcd" with a = -1): 4 squares, 4 multiplies. Takes
 * and returns the forms of ge_add (X, Y, Z in U, T in F); X, Y and Z are
 * carried first, as they are squared. The squares are only added and
 * subtracted, so they stay uncarried.
 */
MB52_INLINE struct ge ge_dbl(struct ge p)
{
    p.x = fe_carry(p.x);
    p.y = fe_carry(p.y);
    p.z = fe_carry(p.z);
    const fe a = fe_sqr_u(p.x);
    const fe b = fe_sqr_u(p.y);
    const fe zz = fe_sqr_u(p.z);
    const fe c = fe_add(zz, zz);
    const fe ab = fe_add(a, b);
    const fe e = fe_sub(fe_sqr_u(fe_add(p.x, p.y)), ab); /* 2 x y */
    const fe g = fe_sub(b, a);                           /* y^2 - x^2 */
    const fe f = fe_sub(g, c);
    const fe h = fe_sub(fe_small(0), ab);
    return (struct ge){fe_mul_u(e, f), fe_mul_u(g, h), fe_mul_u(f, g), fe_mul(e, h)};
}

void MBC_KFN(x25519_base)(struct x25519_args *a)
{
    mbc_test_count(MBC_KFN(x25519_kern_hits));
    /* signed digits: e = nibble + carry; a digit of 8 or more borrows 16
     * from the next one */
    vec e[64];
    vec carry = v_zero();
    for (unsigned i = 0; i < 63; i++) {
        const vec x = v_add(mb52_window(a->scalar, X25519_DIGITS, 4 * i, 4), carry);
        carry = v_srl(v_add(x, v_set1(8)), 4);
        e[i] = v_sub(x, v_sll(carry, 4));
    }
    e[63] = v_add(mb52_window(a->scalar, X25519_DIGITS, 252, 4), carry);

    struct ge p = {fe_small(0), fe_small(1), fe_small(1), fe_small(0)};
    for (unsigned i = 1; i < 64; i += 2) {
        p = ge_add(p, select_niels(i / 2, e[i]));
    }
    for (unsigned i = 0; i < 4; i++) {
        p = ge_dbl(p);
    }
    for (unsigned i = 0; i < 64; i += 2) {
        p = ge_add(p, select_niels(i / 2, e[i]));
    }
    /* u = (1 + y) / (1 - y) = (Z + Y) / (Z - Y) */
    finish(a, fe_add(p.z, p.y), fe_sub(p.z, p.y));
    mbc_memzero(e, sizeof(e));
    mbc_memzero(&carry, sizeof(carry));
    mbc_memzero(&p, sizeof(p));
}

#if MBC_TEST_HOOKS && MBC_VEC_LANES == 8
/* ------------------------------------------------------------------------ */
/* The field operations, for the tests                                       */
/* ------------------------------------------------------------------------ */

void MBC_KFN(x25519_fe_test)(enum x25519_fe_op op, mb52_row *r, const mb52_row *a,
                             const mb52_row *b)
{
    const fe x = fe_load(a), y = fe_load(b);
    fe z;
    switch (op) {
    case X25519_FE_MUL:
        z = fe_mul(x, y);
        break;
    case X25519_FE_SQR:
        z = fe_sqr(x);
        break;
    case X25519_FE_MUL_A24:
        z = fe_mul_small(x, A24);
        break;
    case X25519_FE_ADD:
        z = fe_add(x, y);
        break;
    case X25519_FE_SUB:
        z = fe_sub(x, y);
        break;
    case X25519_FE_CARRY:
        z = fe_carry(x);
        break;
    case X25519_FE_CANON:
        z = fe_canon(x);
        break;
    case X25519_FE_MUL_U:
        z = fe_mul_u(x, y);
        break;
    case X25519_FE_SQR_U:
        z = fe_sqr_u(x);
        break;
    case X25519_FE_MUL_A24_U:
        z = fe_mul_small_u(x, A24);
        break;
    default:
        z = fe_inv(x);
        break;
    }
    fe_store(r, z);
}
#endif
