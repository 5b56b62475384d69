/*
 * var.h - the mb52 Montgomery kernels for a digit count known only at run
 * time (src/mb52/var.c), per backend (MBC_KFN). The RSA kernels use the
 * instantiations compiled for their fixed sizes; these serve the tests'
 * checks at every other k.
 */
#ifndef MBC_SRC_MB52_VAR_H
#define MBC_SRC_MB52_VAR_H

#include "mb52.h"
#include "vec.h"

void MBC_KFN(mb52_amm_var)(mb52_row *r, const mb52_row *a, const mb52_row *b,
                           const mb52_row *m, const mb52_row *m0inv, unsigned k);
void MBC_KFN(mb52_ams_var)(mb52_row *r, const mb52_row *a, const mb52_row *m,
                           const mb52_row *m0inv, unsigned k);
void MBC_KFN(mb52_redc_var)(mb52_row *r, const mb52_row *t, const mb52_row *m,
                            const mb52_row *m0inv, unsigned k);

#endif /* MBC_SRC_MB52_VAR_H */
