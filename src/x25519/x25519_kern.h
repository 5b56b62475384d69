/*
 * x25519_kern.h - the interface between the X25519 glue (x25519.c, baseline
 * code) and the X25519 kernels (x25519_kern.c, compiled once per backend:
 * _ifma, _c and _c1). Numbers are 5 mb52 rows (see mb52.h), 64-byte aligned,
 * digits < 2^52.
 */
#ifndef MBC_SRC_X25519_X25519_KERN_H
#define MBC_SRC_X25519_X25519_KERN_H

#include "../impl.h"
#include "../lanes.h"
#include "../mb52/mb52.h"

#define X25519_DIGITS 5

/*
 * x25519_args: one batch, one request per lane.
 *  scalar  clamped scalars (secret), 5 rows, each lane < 2^255
 *  u       (x25519_ladder only) peer u-coordinates, 5 rows, each lane < 2^255
 *          (not necessarily below p: the arithmetic is mod p)
 *  out     5 rows: the results, fully reduced (< p)
 *  nonzero output: the lanes whose result is not 0 (derive: a zero result
 *          means a low-order peer point)
 * Lanes nobody uses compute on whatever their rows hold (zeros from the
 * glue); lanes never mix.
 */
struct x25519_args {
    const mb52_row *scalar;
    const mb52_row *u;
    mb52_row *out;
    unsigned nonzero;
};

typedef void x25519_kern_fn(struct x25519_args *a);
typedef MBC_KSET(struct x25519_args) x25519_kset;

/* mbc_x25519_impl: one X25519 implementation, as dispatch selects it: the
 * kernel sets (lanes.h) of the Montgomery ladder on u (derive) and of the
 * fixed-base public key, and the stack scrub (wipe.h) of a call whose
 * requests all ran on the single-request kernels (plans ONE and
 * ONE_BY_ONE); other plans scrub MBC_WIPE_X25519. */
struct mbc_x25519_impl {
    struct mbc_impl_base base;
    x25519_kset ladder;
    x25519_kset pubkey;
    size_t one_scrub;
    const struct mbc_op_size *lone; /* mbc_impl_lone's rows (NULL: none) */
};

/* mbc_x25519_impl_c: the portable implementation (every CPU). */
extern const struct mbc_x25519_impl mbc_x25519_impl_c;

/* mbc_x25519_impl_for: the fastest implementation features allow. */
const struct mbc_x25519_impl *mbc_x25519_impl_for(uint64_t features);

/* mbc_x25519_impl_table: the implementations mbc_x25519_impl_for picks from. */
extern const struct mbc_impl_table mbc_x25519_impl_table;

/*
 * The kernels of each backend: x25519_ladder computes out = X25519(scalar,
 * u) (RFC 7748: 255 ladder steps, bits 254 down to 0), x25519_base out =
 * X25519(scalar, 9) by a fixed-base method (see x25519_kern.c). _c1 computes
 * lane 0 only, _ifma4 lanes 0..3. In the tests' build (src/test_hooks.h)
 * each call adds 1 to its backend's counter (for the tests that prove which
 * kernel ran).
 */
void mbc_x25519_ladder_c(struct x25519_args *a);
void mbc_x25519_base_c(struct x25519_args *a);
void mbc_x25519_ladder_c1(struct x25519_args *a);
void mbc_x25519_base_c1(struct x25519_args *a);
void mbc_x25519_ladder_ifma(struct x25519_args *a);
void mbc_x25519_base_ifma(struct x25519_args *a);
void mbc_x25519_ladder_ifma4(struct x25519_args *a);
void mbc_x25519_base_ifma4(struct x25519_args *a);
/* The scalar kernels (x25519_adx.c: BMI2 + ADX, radix 2^64): slot 0 only. */
void mbc_x25519_ladder_adx(struct x25519_args *a);
void mbc_x25519_base_adx(struct x25519_args *a);
#if MBC_TEST_HOOKS
extern _Atomic unsigned long mbc_x25519_kern_hits_adx;
extern _Atomic unsigned long mbc_x25519_kern_hits_c;
extern _Atomic unsigned long mbc_x25519_kern_hits_c1;
extern _Atomic unsigned long mbc_x25519_kern_hits_ifma;
extern _Atomic unsigned long mbc_x25519_kern_hits_ifma4;
#endif

/* mbc_x25519_inv1: r = a^-1 mod p (0 -> 0) for a < 2^256, both 5 plain
 * 52-bit digits (one lane; r below p): constant time (x25519_inv1.c). The
 * vector kernels' fe_inv inverts the product of their lanes with it. */
void mbc_x25519_inv1(uint64_t r[X25519_DIGITS], const uint64_t a[X25519_DIGITS]);

/*
 * mbc_x25519_table: the fixed-base table of x25519_base (x25519_table.c,
 * made by tools/gen_x25519_table.py): [i][j] = (j + 1) 256^i B on
 * edwards25519 (B maps to u = 9), affine, as (y + x, y - x, 2 d x y), each
 * fully reduced in 5 digits of 52 bits. 30 KiB, shared by every backend.
 */
extern const uint64_t mbc_x25519_table[32][8][3][X25519_DIGITS];

/*
 * The field operations of src/x25519/fe.h as one entry per backend, for the
 * _c / _ifma digit-equality tests (the tests' build only): r = op(a, b) on
 * 5 rows (b unused by the one-operand ops). Pre- and postconditions are
 * those of fe.h: MUL, SQR, INV and the uncarried MUL_U, SQR_U take F inputs
 * (digits 0..3 < 2^52, digit 4 <= 2^47 + 2^11), MUL_A24 (times 121665) and the
 * uncarried MUL_A24_U L (digits < 2^52); the _U forms give U (digits <
 * 2^56); ADD and SUB take U; CARRY digits < 2^63; CANON F.
 */
enum x25519_fe_op {
    X25519_FE_MUL,
    X25519_FE_SQR,
    X25519_FE_MUL_A24,
    X25519_FE_ADD,
    X25519_FE_SUB,
    X25519_FE_CARRY,
    X25519_FE_CANON,
    X25519_FE_INV,
    X25519_FE_MUL_U,
    X25519_FE_SQR_U,
    X25519_FE_MUL_A24_U,
    X25519_FE_NUM_OPS
};
#if MBC_TEST_HOOKS
void mbc_x25519_fe_test_c(enum x25519_fe_op op, mb52_row *r, const mb52_row *a, const mb52_row *b);
void mbc_x25519_fe_test_ifma(enum x25519_fe_op op, mb52_row *r, const mb52_row *a,
                             const mb52_row *b);
/* mbc_x25519_fe64_test: r = op(a, b) on 4-limb values below 2^256 in the
 * scalar field of fe25519_x64.h (its assembly, or with portable != 0 its C
 * forms); MUL_A24 is a24 a + b there, CARRY the identity. */
void mbc_x25519_fe64_test(enum x25519_fe_op op, int portable, uint64_t r[4], const uint64_t a[4],
                          const uint64_t b[4]);
/* mbc_x25519_fe64_test2: r = op(a, b) (op: MUL) by the two-product form of
 * the assembly (fe64_mul2), in its product `second` (0 or 1), with b b as
 * the other product; the results are written over the first operands, as
 * the ladder does. */
void mbc_x25519_fe64_test2(enum x25519_fe_op op, int second, uint64_t r[4], const uint64_t a[4],
                           const uint64_t b[4]);
#endif

#endif /* MBC_SRC_X25519_X25519_KERN_H */
