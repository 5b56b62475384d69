/*
 * ec_adx_curve.h - the scalar 64-bit EC kernels of one curve, included by
 * ec_adx.c once per curve with:
 *   EC64_N       the limbs of p and n (4, 6)
 *   EC64_CV      the curve's struct ec64_curve (ec_adx_tab.h)
 *   EC64_FN(x)   x with the curve's suffix (x##_p256)
 *   EC64_P_MUL, EC64_P_SQR, EC64_N_MUL, EC64_ADD, EC64_SUB
 *                (optional): the curve's own multiply and square mod p,
 *                multiply mod n, add and subtract
 *                (fe_p256_x64.h); fe64.h's generic ones else
 * Field elements: N limbs, Montgomery form (R = 2^(64 N)), fully reduced.
 *
 * Points: projective (X : Y : Z) with the formulas of the 52-bit kernels
 * (ec_kern.c, where they are described): the complete additions of Renes,
 * Costello and Batina for a = -3 (algorithms 4 and 5) and the a = -3
 * projective doubling with the identity kept by a mask. No exceptional
 * case depends on the points.
 *
 * Scalar multiplication:
 *  - fixed base (k G, key generation and signing): the comb of ec64_curve
 *    (signed 7-bit windows, digits -64..64): per window one scan of all 64
 *    entries (masks), a masked negation of y, one mixed addition whose
 *    result a zero digit discards; no doubling;
 *  - variable base (d P, ECDH): signed 5-bit windows over a table of
 *    0..16 P, 5 doublings (in Jacobian coordinates, dbl_n), a scan of the
 *    17 entries and one addition per window;
 *  - verification (public data): the comb indexed directly, and the
 *    variable-base ladder.
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

/* ------------------------------------------------------------------------ */
/* Points                                                                    */
/* ------------------------------------------------------------------------ */

#define FP_MUL(r, a, b) FN(p_mul)(r, a, b)
#define FP_SQR(r, a) FN(p_sqr)(r, a)
#define FP_ADD(r, a, b) FN(p_add)(r, a, b)
#define FP_SUB(r, a, b) FN(p_sub)(r, a, b)

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

/* pt_madd: r = p + (qx, qy) for any p and an affine q that is not the
 * identity (RCB algorithm 5). r may alias p. */
static void FN(pt_madd)(struct FN(pt) * r, const struct FN(pt) * p, const uint64_t *qx,
                        const uint64_t *qy)
{
    FN(fe) t0, t1, t2, t3, t4, y3;
    FP_MUL(t0, p->x, qx);
    FP_MUL(t1, p->y, qy);
    FP_ADD(t3, qx, qy);
    FP_ADD(t4, p->x, p->y);
    FP_MUL(t3, t3, t4);
    FP_ADD(t4, t0, t1);
    FP_SUB(t3, t3, t4);
    FP_MUL(t4, qy, p->z);
    FP_ADD(t4, t4, p->y);
    FP_MUL(y3, qx, p->z);
    FP_ADD(y3, y3, p->x);
    memcpy(t2, p->z, sizeof(t2));
    FN(add_tail)(r, t0, t1, t2, t3, t4, y3);
}

/* pt_dbl: r = 2 p (ec_kern.c's pt_dbl: a = -3 projective doubling, the
 * identity kept by a mask). r may alias p. */
static void FN(pt_dbl)(struct FN(pt) * r, const struct FN(pt) * p)
{
    FN(fe) w, t, s, ss, rr, b, h;
    const uint64_t inf = fe64_is_zero(p->z, N);
    FP_SUB(w, p->x, p->z);
    FP_ADD(t, p->x, p->z);
    FP_MUL(w, w, t);
    FP_ADD(t, w, w);
    FP_ADD(w, t, w);
    FP_MUL(s, p->y, p->z);
    FP_ADD(s, s, s);
    FP_SQR(ss, s);
    FP_MUL(t, p->y, s);
    FP_SQR(rr, t);
    FP_MUL(b, p->x, t);
    FP_ADD(b, b, b);
    FP_SQR(h, w);
    FP_SUB(h, h, b);
    FP_SUB(h, h, b);
    FP_MUL(r->x, h, s);
    FP_MUL(r->z, s, ss);
    FP_SUB(t, b, h);
    FP_MUL(t, w, t);
    FP_SUB(t, t, rr);
    FP_SUB(t, t, rr);
    fe64_select(r->y, inf, CV->p_one, t, N);
}

/* dbl_n: r = 2^n p (r may alias p) in Jacobian coordinates, which double
 * at 4M + 4S against 7M + 3S: p is taken to (X Z, Y Z^2, Z) (x = X / Z^2,
 * y = Y / Z^3), doubled n times by the a = -3 formulas (delta = Z^2,
 * gamma = Y^2, beta = X gamma, alpha = 3 (X - delta)(X + delta):
 * X' = alpha^2 - 8 beta, Y' = alpha (4 beta - X') - 8 gamma^2, Z' = 2 Y Z)
 * and taken back to (X Z, Y, Z^3). The identity (Z = 0) stays Z = 0 through
 * the doublings and is given Y = 1 by a mask at the end, as pt_dbl does. */
static void FN(dbl_n)(struct FN(pt) * r, const struct FN(pt) * p, unsigned n)
{
    FN(fe) x, y, z, delta, gamma, beta, alpha, t;
    FP_SQR(t, p->z);
    FP_MUL(x, p->x, p->z);
    FP_MUL(y, p->y, t);
    memcpy(z, p->z, sizeof(z));
    for (unsigned i = 0; i < n; i++) {
        FP_SQR(delta, z);
        FP_SQR(gamma, y);
        FP_MUL(beta, x, gamma);
        FP_SUB(t, x, delta);
        FP_ADD(alpha, x, delta);
        FP_MUL(alpha, alpha, t);
        FP_ADD(t, alpha, alpha);
        FP_ADD(alpha, alpha, t);
        FP_MUL(z, y, z);
        FP_ADD(z, z, z);
        FP_ADD(beta, beta, beta);
        FP_ADD(beta, beta, beta); /* 4 beta */
        FP_SQR(x, alpha);
        FP_SUB(x, x, beta);
        FP_SUB(x, x, beta);
        FP_SUB(t, beta, x);
        FP_MUL(t, alpha, t);
        FP_SQR(gamma, gamma);
        FP_ADD(gamma, gamma, gamma);
        FP_ADD(gamma, gamma, gamma);
        FP_ADD(gamma, gamma, gamma); /* 8 gamma^2 */
        FP_SUB(y, t, gamma);
    }
    const uint64_t inf = fe64_is_zero(z, N);
    FP_SQR(t, z);
    FP_MUL(r->x, x, z);
    FP_MUL(r->z, t, z);
    fe64_select(r->y, inf, CV->p_one, y, N);
    mbc_memzero(y, sizeof(y));
    mbc_memzero(alpha, sizeof(alpha));
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

/* mul_base: r = e G (e plain, < n) on the comb. vartime (verification,
 * public e): the entry is read directly and zero digits skipped; else
 * every entry of every window is read. */
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
        FN(pt_madd)(&t, r, x, y);
        const uint64_t keep = mbc_ct_is_zero_mask(absd);
        fe64_select(r->x, keep, r->x, t.x, N);
        fe64_select(r->y, keep, r->y, t.y, N);
        fe64_select(r->z, keep, r->z, t.z, N);
    }
    mbc_memzero(&t, sizeof(t));
    mbc_memzero(xy, sizeof(xy));
}

#define EC64_VT_ENTRIES 17 /* 0..16 P */

/* mul_var: r = e P (e plain, < n; P = (px, py) affine, Montgomery form, on
 * the curve): signed 5-bit windows over 0..16 P. vartime (verification,
 * public e): the entry is read directly and the additions of zero digits
 * skipped; else every entry of every window is read. */
static void FN(mul_var)(struct FN(pt) * r, const uint64_t *e, const uint64_t *px,
                        const uint64_t *py, int vartime)
{
    struct FN(pt) tab[EC64_VT_ENTRIES], t;
    FN(pt_identity)(&tab[0]);
    memcpy(tab[1].x, px, sizeof(tab[1].x));
    memcpy(tab[1].y, py, sizeof(tab[1].y));
    memcpy(tab[1].z, CV->p_one, sizeof(tab[1].z));
    for (unsigned i = 2; i < EC64_VT_ENTRIES; i++) {
        if (i % 2 == 0) {
            FN(pt_dbl)(&tab[i], &tab[i / 2]);
        } else {
            FN(pt_madd)(&tab[i], &tab[i - 1], px, py);
        }
    }
    const unsigned nwin = (N * 64 + 1 + EC_WIN - 1) / EC_WIN;
    for (unsigned i = nwin; i-- > 0;) {
        uint64_t neg;
        const uint64_t absd = ec64_booth(FN(win)(e, i, EC_WIN), EC_WIN, &neg);
        if (vartime) {
            t = tab[absd];
        } else {
            ec64_scan((uint64_t *)&t, (const uint64_t *)tab, EC64_VT_ENTRIES, 3 * N, absd);
        }
        FN(cneg)(t.y, neg);
        if (i == nwin - 1) {
            *r = t;
            continue;
        }
        FN(dbl_n)(r, r, EC_WIN);
        if (!vartime || absd != 0) { /* vartime: a public digit */
            FN(pt_add)(r, r, &t);
        }
    }
    mbc_memzero(tab, sizeof(tab));
    mbc_memzero(&t, sizeof(t));
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
 * mod n: k^-1 R by Fermat, products that leave plain values). */
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
    FN(n_mul)(t, s, CV->n_rr);
    FN(n_inv)(w, t);
    FN(reduce_n)(t, z);
    FN(n_mul)(u1, t, w);
    FN(n_mul)(u2, r, w);
    FN(mul_base)(&r1, u1, 1);
    FN(p_mul)(qx, qx, CV->p_rr);
    FN(p_mul)(qy, qy, CV->p_rr);
    FN(mul_var)(&r2, u2, qx, qy, 1);
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
    FN(mul_var)(&q, d, px, py, 0);
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
