/*
 * var.c - see var.h. Compiled once per backend, like rsa_kern.c, but with
 * the kernels' unroll hints off: "unroll 80" on a loop whose trip count is
 * unknown copies its body 80 times, and the nested loops of the wide
 * kernels grew the IFMA object from 0.4 to 2.8 MB that way.
 */
#define MB52_NO_UNROLL 1
#include "arith.h"
#include "var.h"

void MBC_KFN(mb52_amm_var)(mb52_row *r, const mb52_row *a, const mb52_row *b,
                           const mb52_row *m, const mb52_row *m0inv, unsigned k)
{
    mb52_amm_any_k(r, a, b, m, v_load(*m0inv), k);
}

void MBC_KFN(mb52_ams_var)(mb52_row *r, const mb52_row *a, const mb52_row *m,
                           const mb52_row *m0inv, unsigned k)
{
    mb52_ams_any_k(r, a, m, v_load(*m0inv), k);
}

void MBC_KFN(mb52_redc_var)(mb52_row *r, const mb52_row *t, const mb52_row *m,
                            const mb52_row *m0inv, unsigned k)
{
    mb52_redc_k(r, t, m, v_load(*m0inv), k);
}
