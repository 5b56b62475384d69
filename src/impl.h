/*
 * impl.h - the head every implementation of a family starts with, and the
 * one selection rule of every family: the first row of the family's table
 * (fastest first) whose CPU features are all present.
 */
#ifndef MBC_SRC_IMPL_H
#define MBC_SRC_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "mbcrypto.h"

/* mbc_impl_base: the first member of every implementation struct. */
struct mbc_impl_base {
    mbc_impl_info info; /* what mbc_impl_get_info gives */
    uint64_t needs;     /* the MBC_CPU_* features it runs on (0: any CPU) */
};

/* mbc_impl_pick: the first of the n implementations (each a struct whose
 * first member is a struct mbc_impl_base) whose needs are all in features;
 * the last row must need nothing. */
const void *mbc_impl_pick(const void *const impls[], size_t n, uint64_t features);

#define MBC_IMPL_PICK(table, features)                                                             \
    mbc_impl_pick((const void *const *)(table), sizeof(table) / sizeof((table)[0]), (features))

#endif /* MBC_SRC_IMPL_H */
