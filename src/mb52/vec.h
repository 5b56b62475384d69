/*
 * vec.h - selects the backend of the mb52 vector API for a kernel object:
 * MBC_VEC_IFMA=1 (built with the AVX-512 IFMA flags) or the portable one.
 */
#ifndef MBC_SRC_MB52_VEC_H
#define MBC_SRC_MB52_VEC_H

#if defined(MBC_VEC_IFMA) && MBC_VEC_IFMA
#include "vec_ifma.h"
#else
#include "vec_c.h"
#endif

#include "mb52.h"

#endif /* MBC_SRC_MB52_VEC_H */
