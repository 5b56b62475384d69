/*
 * ec_adx_curve.h - the scalar 64-bit EC kernels of one curve, included by
 * ec_adx.c once per curve with:
 *   EC64_N       the limbs of p and n (4, 6)
 *   EC64_CV      the curve's struct ec64_curve (ec_adx_tab.h)
 *   EC64_FN(x)   x with the curve's suffix (x##_p256)
 *   EC64_P_MUL, EC64_P_SQR, EC64_N_MUL, EC64_ADD, EC64_SUB, EC64_HALF,
 *   EC64_TRI, EC64_DBL_SUB
 *                (optional): the curve's own multiply and square mod p,
 *                multiply mod n, add, subtract, halving, tripling and
 *                the two subtractions of p_dbl_sub mod p
 *                (fe_p256_x64.h); fe64.h's generic ones else
 * Field elements: N limbs, Montgomery form (R = 2^(64 N)), fully reduced.
 *
 * Points: projective (X : Y : Z) in and out of the scalar multiplications,
 * with the complete addition of Renes, Costello and Batina for a = -3
 * (algorithm 4, as the 52-bit kernels of ec_kern.c); inside them Jacobian
 * coordinates (jdbl_n, jadd, jmadd), whose additions are used only where
 * their doubling case cannot occur (shown at mul_base and mul_var), the
 * identity handled by masks.
 *
 * Scalar multiplication:
 *  - fixed base (k G, key generation and signing): the comb of ec64_curve
 *    (signed 7-bit windows, digits -64..64): per window one scan of all 64
 *    entries (masks), a masked negation of y, one mixed addition whose
 *    result a zero digit discards; no doubling;
 *  - variable base (d P, ECDH): signed 5-bit windows over a table of
 *    0..16 P, 5 doublings, a scan of the 17 entries and one addition per
 *    window (the last one complete);
 *  - verification (public data): the comb indexed directly, and the
 *    width-5 NAF of u2 over 8 odd multiples of Q (mul_var_vt).
 * Inversions: the constant-time divsteps of ec_adx_inv.h.
 */

#define N EC64_N
#define CV (&EC64_CV)
#define FN EC64_FN

typedef uint64_t FN(fe)[N];

struct FN(pt) {
    uint64_t x[N], y[N], z[N];
};

/* ------------------------------------------------------------------------ */
/* Field                                                                     */
/* ------------------------------------------------------------------------ */

static void FN(p_mul)(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
#ifdef EC64_P_MUL
    EC64_P_MUL(r, a, b);
#else
    fe64_mont_mul(r, a, b, CV->p, CV->p_m0, N);
#endif
}

static void FN(p_sqr)(uint64_t *r, const uint64_t *a)
{
#ifdef EC64_P_SQR
    EC64_P_SQR(r, a);
#else
    fe64_mont_sqr(r, a, CV->p, CV->p_m0, N);
#endif
}

static void FN(n_mul)(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
#ifdef EC64_N_MUL
    EC64_N_MUL(r, a, b);
#else
    fe64_mont_mul(r, a, b, CV->n, CV->n_m0, N);
#endif
}

static inline void FN(p_add)(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
#ifdef EC64_ADD
    EC64_ADD(r, a, b, CV->p);
#else
    fe64_add(r, a, b, CV->p, N);
#endif
}

static inline void FN(p_sub)(uint64_t *r, const uint64_t *a, const uint64_t *b)
{
#ifdef EC64_SUB
    EC64_SUB(r, a, b, CV->p);
#else
    fe64_sub(r, a, b, CV->p, N);
#endif
}

/* p_tri: r = 3 a; p_dbl_sub: x = x - 2 b, then t = b - x (t may be b).
 * The curve's fused forms keep the values in registers between the
 * steps, which are on the longest chains of the doubling and addition. */
static inline void FN(p_tri)(uint64_t *r, const uint64_t *a)
{
#ifdef EC64_TRI
    EC64_TRI(r, a);
#else
    FN(fe) t;
    FN(p_add)(t, a, a);
    FN(p_add)(r, t, a);
#endif
}

static inline void FN(p_dbl_sub)(uint64_t *x, uint64_t *t, const uint64_t *b)
{
#ifdef EC64_DBL_SUB
    EC64_DBL_SUB(x, t, b);
#else
    FN(p_sub)(x, x, b);
    FN(p_sub)(x, x, b);
    FN(p_sub)(t, b, x);
#endif
}

/* p_inv: r = a^-1 R (a R in; 0 -> 0) by divsteps (ec_adx_inv.h), which
 * give (a R)^-1 = a^-1 R^-1, times R^3 in a Montgomery product. n_inv: the
 * same mod n. */
static void FN(p_inv)(uint64_t *r, const uint64_t *a)
{
    FN(fe) t;
    sg_inv(t, a, CV->p_s62, CV->p_minv62, N, CV->sg_limbs, CV->sg_batches);
    FN(p_mul)(r, t, CV->p_r3);
    mbc_memzero(t, sizeof(t));
}

static void FN(n_inv)(uint64_t *r, const uint64_t *a)
{
    FN(fe) t;
    sg_inv(t, a, CV->n_s62, CV->n_minv62, N, CV->sg_limbs, CV->sg_batches);
    FN(n_mul)(r, t, CV->n_r3);
    mbc_memzero(t, sizeof(t));
}

/* reduce_n: r = a mod n for a < 2n (x(R) < p, or z < 2^bits). */
static void FN(reduce_n)(uint64_t *r, const uint64_t *a)
{
    fe64_reduce_once(r, a, 0, CV->n, N);
}

/* n_inv_vt: r = a^-1 mod n, plain in and out (a < 2^bits < 2n, public:
 * verification's s, which its caller has checked in [1, n-1]), by the
 * binary extended Euclid algorithm: u = x1 a, v = x2 a mod n throughout,
 * halving the even one of u, v (and its x mod n) and taking the smaller
 * from the larger until one is 1. Variable time: about half the cost of
 * the constant-time divsteps here. a = 0 mod n gives 0 (the loop needs
 * u != 0). */
static void FN(n_inv_vt)(uint64_t *r, const uint64_t *a)
{
    static const uint64_t one[N] = {1};
    FN(fe) u, v, x1, x2, t;
    FN(reduce_n)(u, a);
    if (fe64_is_zero(u, N)) {
        memset(r, 0, sizeof(FN(fe)));
        return;
    }
    memcpy(v, CV->n, sizeof(v));
    memcpy(x1, one, sizeof(x1));
    memset(x2, 0, sizeof(x2));
    while (!fe64_eq(u, one, N) && !fe64_eq(v, one, N)) {
        while ((u[0] & 1) == 0) {
            ec64_shr1(u, N);
            fe64_half(x1, x1, CV->n, N);
        }
        while ((v[0] & 1) == 0) {
            ec64_shr1(v, N);
            fe64_half(x2, x2, CV->n, N);
        }
        if (!fe64_sub_borrow(t, u, v, N)) {
            memcpy(u, t, sizeof(u));
            fe64_sub(x1, x1, x2, CV->n, N);
        } else {
            (void)fe64_sub_borrow(v, v, u, N);
            fe64_sub(x2, x2, x1, CV->n, N);
        }
    }
    memcpy(r, fe64_eq(u, one, N) ? x1 : x2, sizeof(FN(fe)));
}

/* ------------------------------------------------------------------------ */
/* Points                                                                    */
/* ------------------------------------------------------------------------ */

#define FP_MUL(r, a, b) FN(p_mul)(r, a, b)
#define FP_SQR(r, a) FN(p_sqr)(r, a)
#define FP_ADD(r, a, b) FN(p_add)(r, a, b)
#define FP_SUB(r, a, b) FN(p_sub)(r, a, b)
#define FP_TRI(r, a) FN(p_tri)(r, a)
#define FP_DBL_SUB(x, t, b) FN(p_dbl_sub)(x, t, b)
#ifdef EC64_HALF
#define FP_HALF(r, a) EC64_HALF(r, a)
#else
#define FP_HALF(r, a) fe64_half(r, a, CV->p, N)
#endif

/* add_tail: the common end of RCB algorithms 4 and 5 (see ec_kern.c's
 * add_tail, the same steps): r may alias P or Q. */
static void FN(add_tail)(struct FN(pt) * r, uint64_t *t0, uint64_t *t1, uint64_t *t2,
                         const uint64_t *t3, const uint64_t *t4, uint64_t *y3)
{
    FN(fe) x3, z3;
    FP_MUL(z3, CV->b, t2);
    FP_SUB(x3, y3, z3);
    FP_ADD(z3, x3, x3);
    FP_ADD(x3, x3, z3);
    FP_SUB(z3, t1, x3);
    FP_ADD(x3, t1, x3);
    FP_MUL(y3, CV->b, y3);
    FP_ADD(t1, t2, t2);
    FP_ADD(t2, t1, t2);
    FP_SUB(y3, y3, t2);
    FP_SUB(y3, y3, t0);
    FP_ADD(t1, y3, y3);
    FP_ADD(y3, t1, y3);
    FP_ADD(t1, t0, t0);
    FP_ADD(t0, t1, t0);
    FP_SUB(t0, t0, t2);
    FP_MUL(t1, t4, y3);
    FP_MUL(t2, t0, y3);
    FP_MUL(y3, x3, z3);
    FP_ADD(y3, y3, t2);
    FP_MUL(x3, t3, x3);
    FP_SUB(r->x, x3, t1);
    FP_MUL(z3, t4, z3);
    FP_MUL(t1, t3, t0);
    FP_ADD(r->z, z3, t1);
    memcpy(r->y, y3, sizeof(FN(fe)));
}

/* pt_add: r = p + q for any points (RCB algorithm 4). r may alias p or q. */
static void FN(pt_add)(struct FN(pt) * r, const struct FN(pt) * p, const struct FN(pt) * q)
{
    FN(fe) t0, t1, t2, t3, t4, u, y3;
    FP_MUL(t0, p->x, q->x);
    FP_MUL(t1, p->y, q->y);
    FP_MUL(t2, p->z, q->z);
    FP_ADD(t3, p->x, p->y);
    FP_ADD(t4, q->x, q->y);
    FP_MUL(t3, t3, t4);
    FP_ADD(t4, t0, t1);
    FP_SUB(t3, t3, t4);
    FP_ADD(t4, p->y, p->z);
    FP_ADD(u, q->y, q->z);
    FP_MUL(t4, t4, u);
    FP_ADD(u, t1, t2);
    FP_SUB(t4, t4, u);
    FP_ADD(u, p->x, p->z);
    FP_ADD(y3, q->x, q->z);
    FP_MUL(u, u, y3);
    FP_ADD(y3, t0, t2);
    FP_SUB(y3, u, y3);
    FN(add_tail)(r, t0, t1, t2, t3, t4, y3);
}

/* The scalar multiplications run in Jacobian coordinates (x = X / Z^2,
 * y = Y / Z^3; the identity has Z = 0), which double at 4M + 4S and add at
 * 12M + 4S (7M + 4S to an affine point), against 7M + 3S and 12M of the
 * projective formulas, with fewer additions. These formulas are not
 * complete: the identity (Z = 0) is handled by masks, and the doubling
 * case (p = q) gives a wrong result, so they are only used where it cannot
 * occur (mul_base, mul_var); to_proj takes a result back to the projective
 * coordinates of the complete pt_add. */

/* jdbl_n: r = 2^n p (Jacobian, a = -3; r may alias p), n doublings in
 * 4M + 4S: delta = Z^2, S = (2 Y)^2 = 4 gamma, alpha = 3 (X - delta)
 * (X + delta), B = X S = 4 beta, X' = alpha^2 - 2 B, Z' = 2 Y Z,
 * Y' = alpha (B - X') - S^2 / 2 (= 8 gamma^2). Against the 3M + 5S of
 * Z' = (Y + Z)^2 - gamma - delta and 8 gamma^2 by three additions, one
 * multiplication more and six additions fewer (the same values: every
 * element is fully reduced). The identity (Z = 0) stays Z = 0. */
static void FN(jdbl_n)(struct FN(pt) * r, const struct FN(pt) * p, unsigned n)
{
    FN(fe) x, y, z, delta, y2, s, alpha, b, t;
    memcpy(x, p->x, sizeof(x));
    memcpy(y, p->y, sizeof(y));
    memcpy(z, p->z, sizeof(z));
    for (unsigned i = 0; i < n; i++) {
        FP_SQR(delta, z);
        FP_ADD(y2, y, y);
        FP_SUB(t, x, delta);
        FP_ADD(alpha, x, delta);
        FP_MUL(z, y2, z);
        FP_SQR(s, y2);
        FP_MUL(alpha, alpha, t);
        FP_MUL(b, x, s);
        FP_TRI(alpha, alpha);
        FP_SQR(s, s);
        FP_HALF(s, s); /* 8 gamma^2 */
        FP_SQR(x, alpha);
        FP_DBL_SUB(x, t, b);
        FP_MUL(t, alpha, t);
        FP_SUB(y, t, s);
    }
    memcpy(r->x, x, sizeof(x));
    memcpy(r->y, y, sizeof(y));
    memcpy(r->z, z, sizeof(z));
    mbc_memzero(alpha, sizeof(alpha));
    mbc_memzero(b, sizeof(b));
}

/* jadd_tail: r = (u1, s1) + (u2, s2) with Z = zz H: H = u2 - u1,
 * R = s2 - s1, X = R^2 - H^3 - 2 u1 H^2, Y = R (u1 H^2 - X) - s1 H^3.
 * r may alias the inputs' point. */
static void FN(jadd_tail)(struct FN(pt) * r, const uint64_t *u1, const uint64_t *u2,
                          const uint64_t *s1, const uint64_t *s2, const uint64_t *zz)
{
    FN(fe) h, rr, hh, hhh, v, x3;
    FP_SUB(h, u2, u1);
    FP_SUB(rr, s2, s1);
    FP_SQR(hh, h);
    FP_MUL(hhh, h, hh);
    FP_MUL(v, u1, hh);
    FP_SQR(x3, rr);
    FP_SUB(x3, x3, hhh);
    FP_DBL_SUB(x3, v, v);
    FP_MUL(v, rr, v);
    FP_MUL(hhh, s1, hhh);
    FP_SUB(r->y, v, hhh);
    FP_MUL(r->z, zz, h);
    memcpy(r->x, x3, sizeof(x3));
}

/* jsel: r = mask ? q : r (all three coordinates). */
static void FN(jsel)(struct FN(pt) * r, uint64_t mask, const struct FN(pt) * q)
{
    fe64_select(r->x, mask, q->x, r->x, N);
    fe64_select(r->y, mask, q->y, r->y, N);
    fe64_select(r->z, mask, q->z, r->z, N);
}

/* jadd_uv: the inputs of jadd_tail for p + q (Jacobian): u1 = X1 Z2^2,
 * u2 = X2 Z1^2, s1 = Y1 Z2^3, s2 = Y2 Z1^3, zz = Z1 Z2. */
static void FN(jadd_uv)(uint64_t *u1, uint64_t *u2, uint64_t *s1, uint64_t *s2, uint64_t *zz,
                        const struct FN(pt) * p, const struct FN(pt) * q)
{
    FN(fe) z1z1, z2z2;
    FP_SQR(z1z1, p->z);
    FP_SQR(z2z2, q->z);
    FP_MUL(u1, p->x, z2z2);
    FP_MUL(u2, q->x, z1z1);
    FP_MUL(s1, q->z, z2z2);
    FP_MUL(s1, p->y, s1);
    FP_MUL(s2, p->z, z1z1);
    FP_MUL(s2, q->y, s2);
    FP_MUL(zz, p->z, q->z);
}

/* jadd: r = p + q (Jacobian, p != q unless either is the identity; r may
 * alias p or q). */
static void FN(jadd)(struct FN(pt) * r, const struct FN(pt) * p, const struct FN(pt) * q)
{
    FN(fe) u1, u2, s1, s2, zz;
    struct FN(pt) s;
    const uint64_t pinf = fe64_is_zero(p->z, N), qinf = fe64_is_zero(q->z, N);
    FN(jadd_uv)(u1, u2, s1, s2, zz, p, q);
    FN(jadd_tail)(&s, u1, u2, s1, s2, zz);
    FN(jsel)(&s, qinf, p);
    FN(jsel)(&s, pinf, q);
    *r = s;
}

/* jmadd: r = p + (qx, qy) (an affine point, not the identity; p != q;
 * r may alias p). */
static void FN(jmadd)(struct FN(pt) * r, const struct FN(pt) * p, const uint64_t *qx,
                      const uint64_t *qy)
{
    FN(fe) z1z1, u2, s2;
    struct FN(pt) q;
    const uint64_t pinf = fe64_is_zero(p->z, N);
    memcpy(q.x, qx, sizeof(q.x));
    memcpy(q.y, qy, sizeof(q.y));
    memcpy(q.z, CV->p_one, sizeof(q.z));
    FP_SQR(z1z1, p->z);
    FP_MUL(u2, qx, z1z1);
    FP_MUL(s2, p->z, z1z1);
    FP_MUL(s2, qy, s2);
    FN(jadd_tail)(r, p->x, u2, p->y, s2, p->z);
    FN(jsel)(r, pinf, &q);
}

/* to_proj: r = p in projective coordinates (X Z, Y, Z^3), the identity as
 * (0 : 1 : 0). r may alias p. */
static void FN(to_proj)(struct FN(pt) * r, const struct FN(pt) * p)
{
    FN(fe) t;
    const uint64_t inf = fe64_is_zero(p->z, N);
    FP_SQR(t, p->z);
    FP_MUL(r->x, p->x, p->z);
    FP_MUL(r->z, t, p->z);
    fe64_select(r->y, inf, CV->p_one, p->y, N);
}

/* on_curve: all-ones if the affine (x, y) (Montgomery) is on the curve. */
static uint64_t FN(on_curve)(const uint64_t *x, const uint64_t *y)
{
    FN(fe) lhs, rhs;
    FP_SQR(lhs, y);
    FP_SQR(rhs, x);
    FP_MUL(rhs, rhs, x);
    FP_SUB(rhs, rhs, x);
    FP_SUB(rhs, rhs, x);
    FP_SUB(rhs, rhs, x);
    FP_ADD(rhs, rhs, CV->b);
    return fe64_eq(lhs, rhs, N);
}

/* to_affine: (x, y) = (X / Z, Y / Z); (0, 0) for the identity. */
static void FN(to_affine)(uint64_t *x, uint64_t *y, const struct FN(pt) * p)
{
    FN(fe) zi;
    FN(p_inv)(zi, p->z);
    FP_MUL(x, p->x, zi);
    FP_MUL(y, p->y, zi);
}

static void FN(pt_identity)(struct FN(pt) * r)
{
    memset(r->x, 0, sizeof(r->x));
    memcpy(r->y, CV->p_one, sizeof(r->y));
    memset(r->z, 0, sizeof(r->z));
}

/* cneg_y: y = -y mod p where mask is set. */
static void FN(cneg)(uint64_t *y, uint64_t mask)
{
    static const uint64_t zero[N];
    FN(fe) ny;
    FP_SUB(ny, zero, y);
    fe64_select(y, mask, ny, y, N);
}

#undef FP_MUL
#undef FP_SQR
#undef FP_ADD
#undef FP_SUB
#undef FP_TRI
#undef FP_DBL_SUB
#undef FP_HALF

/* ------------------------------------------------------------------------ */
/* Scalar multiplication                                                     */
/* ------------------------------------------------------------------------ */

/* win: the w + 1 bits of signed window i of width w of the scalar e (N
 * limbs): bits w i - 1 .. w i + w - 1 (bit -1 is 0; bits past N limbs 0). */
static uint64_t FN(win)(const uint64_t *e, unsigned i, unsigned w)
{
    if (i == 0) {
        return (e[0] << 1) & ((2u << w) - 1);
    }
    const unsigned pos = w * i - 1, li = pos / 64, sh = pos % 64;
    if (li >= N) {
        return 0;
    }
    uint64_t v = e[li] >> sh;
    if (sh + w + 1 > 64 && li + 1 < N) {
        v |= e[li + 1] << (64 - sh);
    }
    return v & ((2u << w) - 1);
}

/* mul_base: r = e G (e plain, < n; r projective) on the comb, in Jacobian
 * coordinates. vartime (verification, public e): the entry is read
 * directly and zero digits skipped; else every entry of every window is
 * read. No addition meets its doubling case: before window i the sum is
 * s G with |s| < 2^(7 i) / 1.98 and the entry is d 2^(7 i) G with
 * 1 <= |d| <= 64, so s = +-d 2^(7 i) mod n needs a wrap past n, which only
 * the top window could reach, and there d 2^(7 i) + s = e < n for d >= 0
 * (the top digit of e < n is never negative). */
static void FN(mul_base)(struct FN(pt) * r, const uint64_t *e, int vartime)
{
    FN(pt_identity)(r);
    struct FN(pt) t;
    uint64_t xy[2 * N];
    uint64_t *const x = xy, *const y = xy + N;
    for (unsigned i = 0; i < CV->nwin_comb; i++) {
        uint64_t neg;
        const uint64_t absd = ec64_booth(FN(win)(e, i, EC64_COMB_WIN), EC64_COMB_WIN, &neg);
        const uint64_t *tab = CV->comb + (size_t)i * EC64_COMB_ENTRIES * 2 * N;
        if (vartime) {
            if (absd == 0) {
                continue;
            }
            memcpy(xy, tab + (absd - 1) * 2 * N, sizeof(xy));
        } else {
            ec64_scan(xy, tab, EC64_COMB_ENTRIES, 2 * N, absd - 1);
        }
        FN(cneg)(y, neg);
        if (i == 0) { /* r is the identity: r + (x, y) is (x : y : 1) */
            memcpy(t.x, x, sizeof(t.x));
            memcpy(t.y, y, sizeof(t.y));
            memcpy(t.z, CV->p_one, sizeof(t.z));
        } else {
            FN(jmadd)(&t, r, x, y);
        }
        FN(jsel)(r, ~mbc_ct_is_zero_mask(absd), &t);
    }
    FN(to_proj)(r, r);
    mbc_memzero(&t, sizeof(t));
    mbc_memzero(xy, sizeof(xy));
}

#define EC64_VT_ENTRIES 17 /* 0..16 P */

/* mul_var: r = e P (e plain, < n, secret; P = (px, py) affine, Montgomery
 * form, on the curve; r projective): signed 5-bit windows over 0..16 P in
 * Jacobian coordinates, every entry of every window read. Before window
 * i > 0 the sum is 32 a P with 0 <= 32 a < e / 2^(5 i - 5) + 16 < n - 16
 * and the entry d P, |d| <= 16: equal only when both are the identity,
 * which the masks of jadd handle. The last window can meet the doubling
 * case (e = n - 2 |d|), so its addition is the complete pt_add. */
static void FN(mul_var)(struct FN(pt) * r, const uint64_t *e, const uint64_t *px,
                        const uint64_t *py)
{
    struct FN(pt) tab[EC64_VT_ENTRIES], t;
    FN(pt_identity)(&tab[0]);
    memcpy(tab[1].x, px, sizeof(tab[1].x));
    memcpy(tab[1].y, py, sizeof(tab[1].y));
    memcpy(tab[1].z, CV->p_one, sizeof(tab[1].z));
    for (unsigned i = 2; i < EC64_VT_ENTRIES; i++) {
        if (i % 2 == 0) {
            FN(jdbl_n)(&tab[i], &tab[i / 2], 1);
        } else {
            FN(jmadd)(&tab[i], &tab[i - 1], px, py);
        }
    }
    const unsigned nwin = (N * 64 + 1 + EC_WIN - 1) / EC_WIN;
    for (unsigned i = nwin; i-- > 0;) {
        uint64_t neg;
        const uint64_t absd = ec64_booth(FN(win)(e, i, EC_WIN), EC_WIN, &neg);
        ec64_scan((uint64_t *)&t, (const uint64_t *)tab, EC64_VT_ENTRIES, 3 * N, absd);
        FN(cneg)(t.y, neg);
        if (i == nwin - 1) {
            *r = t;
            continue;
        }
        FN(jdbl_n)(r, r, EC_WIN);
        if (i == 0) {
            FN(to_proj)(r, r);
            FN(to_proj)(&t, &t);
        }
        if (i == 0) {
            FN(pt_add)(r, r, &t);
        } else {
            FN(jadd)(r, r, &t);
        }
    }
    mbc_memzero(tab, sizeof(tab));
    mbc_memzero(&t, sizeof(t));
}

/* wnaf: the width-5 NAF of e (N limbs, public): d[i] odd in -15..15 or 0,
 * each nonzero digit followed by at least 4 zeros, sum d[i] 2^i = e; the
 * digit count returned (at most 64 N + 1). Variable time. */
static unsigned FN(wnaf)(int8_t *d, const uint64_t *e)
{
    uint64_t k[N + 1];
    memcpy(k, e, sizeof(uint64_t) * N);
    k[N] = 0;
    unsigned len = 0;
    for (;;) {
        uint64_t any = 0;
        for (unsigned j = 0; j <= N; j++) {
            any |= k[j];
        }
        if (any == 0) {
            return len;
        }
        int v = 0;
        if (k[0] & 1) {
            v = (int)(k[0] & 31);
            v -= v > 15 ? 32 : 0;
            /* k -= v: k's low 5 bits become 0, so only a carry or borrow
             * past limb 0 needs the other limbs */
            const uint64_t k0 = k[0];
            k[0] = k0 - (uint64_t)(int64_t)v;
            unsigned char c = v < 0 ? k[0] < k0 : k[0] > k0;
            for (unsigned j = 1; c && j <= N; j++) {
                k[j] += v < 0 ? 1 : (uint64_t)-1;
                c = v < 0 ? k[j] == 0 : k[j] == (uint64_t)-1;
            }
        }
        d[len++] = (int8_t)v;
        ec64_shr1(k, N + 1);
    }
}

/* jadd_vt: r = p + q (Jacobian) for public points, any case: the identity
 * and the doubling case are branched on. r may alias p or q. */
static void FN(jadd_vt)(struct FN(pt) * r, const struct FN(pt) * p, const struct FN(pt) * q)
{
    if (fe64_is_zero(p->z, N)) {
        *r = *q;
        return;
    }
    if (fe64_is_zero(q->z, N)) {
        *r = *p;
        return;
    }
    FN(fe) u1, u2, s1, s2, zz;
    FN(jadd_uv)(u1, u2, s1, s2, zz, p, q);
    if (fe64_eq(u1, u2, N)) {
        if (fe64_eq(s1, s2, N)) {
            FN(jdbl_n)(r, p, 1);
        } else {
            FN(pt_identity)(r); /* Z = 0 */
        }
        return;
    }
    FN(jadd_tail)(r, u1, u2, s1, s2, zz);
}

/* mul_var_vt: r = e P (e plain, < n, public: verification; P affine,
 * Montgomery form, on the curve; r projective): the width-5 NAF of e over
 * the odd multiples P, 3 P, ..., 15 P (Jacobian), about one addition per
 * 6 bits against one per 5 of mul_var's windows, and a table of 8 points
 * built with one doubling instead of 17 with 8. */
static void FN(mul_var_vt)(struct FN(pt) * r, const uint64_t *e, const uint64_t *px,
                           const uint64_t *py)
{
    struct FN(pt) tab[8], p2, t;
    int8_t d[64 * N + 1];
    const unsigned len = FN(wnaf)(d, e);
    memcpy(tab[0].x, px, sizeof(tab[0].x));
    memcpy(tab[0].y, py, sizeof(tab[0].y));
    memcpy(tab[0].z, CV->p_one, sizeof(tab[0].z));
    FN(jdbl_n)(&p2, &tab[0], 1);
    for (unsigned j = 1; j < 8; j++) {
        FN(jadd_vt)(&tab[j], &tab[j - 1], &p2);
    }
    FN(pt_identity)(r);
    unsigned dbl = 0;
    for (unsigned i = len; i-- > 0;) {
        if (d[i] == 0) {
            dbl++;
            continue;
        }
        t = tab[(d[i] < 0 ? -d[i] : d[i]) / 2];
        FN(cneg)(t.y, d[i] < 0 ? ~0ull : 0);
        if (fe64_is_zero(r->z, N)) {
            *r = t; /* the top digit: no doublings before it */
        } else {
            FN(jdbl_n)(r, r, dbl + 1); /* the zeros and this digit */
            FN(jadd_vt)(r, r, &t);
        }
        dbl = 0;
    }
    if (dbl && !fe64_is_zero(r->z, N)) {
        FN(jdbl_n)(r, r, dbl);
    }
    FN(to_proj)(r, r);
}

/* ------------------------------------------------------------------------ */
/* Operations (slot 0 of the args)                                           */
/* ------------------------------------------------------------------------ */

/* from_mont: r = a / R, plain (< p). */
static void FN(from_mont)(uint64_t *r, const uint64_t *a)
{
    static const uint64_t one[N] = {1};
    FN(p_mul)(r, a, one);
}

static void FN(base)(struct ec_base_args *a)
{
    struct FN(pt) q;
    FN(fe) d, x, y;
    ec64_from52(d, a->d, a->c->k, N);
    FN(mul_base)(&q, d, 0);
    ec64_fault(q.x, a->fault_lanes);
    FN(to_affine)(x, y, &q);
    const uint64_t ok = FN(on_curve)(x, y);
    FN(from_mont)(x, x);
    FN(from_mont)(y, y);
    ec64_to52(a->x, x, a->c->k, N);
    ec64_to52(a->y, y, a->c->k, N);
    a->ok_lanes = (unsigned)(ok & 1) & a->lanes;
    mbc_memzero(&q, sizeof(q));
    mbc_memzero(d, sizeof(d));
}

/* sign: R = k G; r = x(R) mod n; s = k^-1 (z + r d) mod n (Montgomery
 * mod n: k^-1 R by divsteps, products that leave plain values). */
static void FN(sign)(struct ec_sign_args *a)
{
    const unsigned k52 = a->c->k;
    struct FN(pt) q;
    FN(fe) kk, d, z, x, y, r, t, u, kinv;
    ec64_from52(kk, a->k, k52, N);
    ec64_from52(d, a->d, k52, N);
    ec64_from52(z, a->z, k52, N);
    FN(mul_base)(&q, kk, 0);
    ec64_fault(q.x, a->fault_lanes);
    FN(to_affine)(x, y, &q);
    const uint64_t ok = FN(on_curve)(x, y);
    FN(from_mont)(t, x);
    FN(reduce_n)(r, t);
    FN(n_mul)(t, kk, CV->n_rr); /* k R */
    FN(n_inv)(kinv, t);         /* k^-1 R */
    FN(n_mul)(t, d, CV->n_rr);  /* d R */
    FN(n_mul)(u, r, t);         /* r d */
    FN(reduce_n)(t, z);         /* z mod n: z < 2^bits < 2n */
    fe64_add(u, t, u, CV->n, N);
    FN(n_mul)(u, u, kinv); /* (z + r d) k^-1 */
    const uint64_t zero = fe64_is_zero(r, N) | fe64_is_zero(u, N);
    ec64_to52(a->r, r, k52, N);
    ec64_to52(a->s, u, k52, N);
    a->ok_lanes = (unsigned)(ok & 1) & a->lanes;
    a->zero_lanes = (unsigned)(zero & 1) & a->lanes;
    mbc_memzero(&q, sizeof(q));
    mbc_memzero(kk, sizeof(kk));
    mbc_memzero(d, sizeof(d));
    mbc_memzero(kinv, sizeof(kinv));
    mbc_memzero(t, sizeof(t));
    mbc_memzero(u, sizeof(u));
    mbc_memzero(x, sizeof(x));
    mbc_memzero(y, sizeof(y));
}

/* verify: w = s^-1, u1 = z w, u2 = r w, R = u1 G + u2 Q; valid when R is
 * not the identity and X = r Z, or X = (r + n) Z when r + n < p. Public
 * data only. */
static void FN(verify)(struct ec_verify_args *a)
{
    const unsigned k52 = a->c->k;
    struct FN(pt) r1, r2;
    FN(fe) r, s, z, qx, qy, w, u1, u2, t, rn, rz;
    ec64_from52(r, a->r, k52, N);
    ec64_from52(s, a->s, k52, N);
    ec64_from52(z, a->z, k52, N);
    ec64_from52(qx, a->qx, k52, N);
    ec64_from52(qy, a->qy, k52, N);
    FN(n_inv_vt)(t, s);
    FN(n_mul)(w, t, CV->n_rr); /* s^-1 R */
    FN(reduce_n)(t, z);
    FN(n_mul)(u1, t, w);
    FN(n_mul)(u2, r, w);
    FN(mul_base)(&r1, u1, 1);
    FN(p_mul)(qx, qx, CV->p_rr);
    FN(p_mul)(qy, qy, CV->p_rr);
    FN(mul_var_vt)(&r2, u2, qx, qy);
    FN(pt_add)(&r1, &r1, &r2);
    const uint64_t finite = ~fe64_is_zero(r1.z, N);
    FN(p_mul)(t, r, CV->p_rr);
    FN(p_mul)(rz, t, r1.z);
    const uint64_t eq1 = fe64_eq(rz, r1.x, N);
    const uint64_t carry = fe64_add_carry(rn, r, CV->n, N);
    const uint64_t below_p = ~(0 - carry) & (0 - fe64_sub_borrow(t, rn, CV->p, N));
    FN(p_mul)(t, rn, CV->p_rr);
    FN(p_mul)(rz, t, r1.z);
    const uint64_t eq2 = below_p & fe64_eq(rz, r1.x, N);
    a->ok_lanes = (unsigned)(finite & (eq1 | eq2) & 1) & a->lanes;
}

/* ecdh: x(d P), P checked on the curve first (G instead when it is not),
 * the result checked on the curve after. */
static void FN(ecdh)(struct ec_ecdh_args *a)
{
    const unsigned k52 = a->c->k;
    struct FN(pt) q;
    FN(fe) d, px, py, x, y;
    ec64_from52(d, a->d, k52, N);
    ec64_from52(px, a->px, k52, N);
    ec64_from52(py, a->py, k52, N);
    FN(p_mul)(px, px, CV->p_rr);
    FN(p_mul)(py, py, CV->p_rr);
    const uint64_t peer = FN(on_curve)(px, py);
    fe64_select(px, peer, px, CV->gx, N);
    fe64_select(py, peer, py, CV->gy, N);
    FN(mul_var)(&q, d, px, py);
    ec64_fault(q.x, a->fault_lanes);
    FN(to_affine)(x, y, &q);
    const uint64_t ok = peer & FN(on_curve)(x, y);
    FN(from_mont)(x, x);
    ec64_to52(a->x, x, k52, N);
    a->peer_ok = (unsigned)(peer & 1) & a->lanes;
    a->ok_lanes = (unsigned)(ok & 1) & a->lanes;
    mbc_memzero(&q, sizeof(q));
    mbc_memzero(d, sizeof(d));
    mbc_memzero(x, sizeof(x));
    mbc_memzero(y, sizeof(y));
}

#undef N
#undef CV
#undef FN
