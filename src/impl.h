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

/* mbc_op_size: an operation (an mbc_job_op) at a size (mbc_impl_lone's
 * bits; 0: every size). mbc_op_sizes_have: whether rows (ended by a row
 * of op 0; NULL: none) list op at bits. */
struct mbc_op_size {
    unsigned op;
    unsigned bits;
};
int mbc_op_sizes_have(const struct mbc_op_size *rows, unsigned op, unsigned bits);

/* mbc_impl_table: a family's implementations, fastest first (each row a
 * struct whose first member is a struct mbc_impl_base); the last row needs
 * nothing. */
struct mbc_impl_table {
    const void *const *rows;
    size_t n;
};

/* MBC_IMPL_TABLE(name, array): the table name over a static array of
 * implementation pointers. */
#define MBC_IMPL_TABLE(name, array)                                                                \
    const struct mbc_impl_table name = {(const void *const *)(array),                              \
                                        sizeof(array) / sizeof((array)[0])}

/* mbc_impl_pick: the first row of t whose needs are all in features. */
const void *mbc_impl_pick(const struct mbc_impl_table *t, uint64_t features);

/* mbc_impl_table_of: alg's table (tests select each row through its
 * needs), NULL for an unknown alg. */
const struct mbc_impl_table *mbc_impl_table_of(mbc_alg alg);

#endif /* MBC_SRC_IMPL_H */
