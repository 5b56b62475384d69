/*
 * sched.h - the lane manager's class table (src/sched/classes.c) as seen by
 * the manager (src/sched/mgr.c). A class is one operation at one key size;
 * the manager knows classes only through this table, so a new operation or
 * size is a new row, not new manager code.
 */
#ifndef MBC_SRC_SCHED_SCHED_H
#define MBC_SRC_SCHED_SCHED_H

#include <stddef.h>

#include "../internal.h"

/*
 * mbc_class: one row of the table.
 *  bits       the key's size in the unit of key_bits; a job belongs to the
 *             row whose op and bits match (rows without a key: op alone).
 *  in_len, in2_len    the exact lengths of in and in2; 0: the op does not
 *             use that input (it is not read and may be NULL). With
 *             MBC_CLASS_IN_ANY_LEN, in_len is the longest in the op takes
 *             (any length up to it, 0 included; in must not be NULL).
 *  out_len, out2_len  what the op's calls write to out and out2 (the
 *             job's buffers must be at least that long); 0: not used.
 *  lanes      the batch size at which the class runs at once (and the most
 *             one batch takes): the number of jobs that fill the kernel.
 *  key_bits   the key's size (0 when key is not a valid key object of this
 *             operation's type); NULL for ops that take no key.
 *  batch      the adapter of the op's _mb8 call: passes a batch (struct
 *             mbc_lanes, classes.c: the fields of n jobs, job i in lane i,
 *             lanes n..7 empty, the lane mask and the row's bits) to it and
 *             returns its status word.
 *  lone       the adapter of the op's single-request call: runs the job in
 *             lane 0 of the lanes on it and returns its error.
 * A row's adapters get only the fields it uses (those of non-zero length,
 * key when key_bits is set); the others are NULL (0). They are called, by
 * mbc_class_run, only with jobs that passed the manager's checks (op, key
 * class, non-NULL buffers, the row's lengths), and their calls write exactly
 * the row's out_len (out2_len) bytes of each job's out (out2).
 */
#define MBC_CLASS_IN_ANY_LEN 1u

struct mbc_lanes;

struct mbc_class {
    mbc_job_op op;
    unsigned bits;
    const char *name;
    size_t in_len, in2_len;
    size_t out_len, out2_len;
    unsigned flags;
    unsigned lanes;
    unsigned (*key_bits)(const void *key);
    mbc_status (*batch)(const struct mbc_lanes *l);
    mbc_err (*lone)(const struct mbc_lanes *l);
};

/* mbc_classes: the table, mbc_num_classes rows. */
extern const struct mbc_class mbc_classes[];
extern const unsigned mbc_num_classes;

/* mbc_class_find: the index of the row of op whose bits match key (key not
 * NULL; any key for ops without one), or -1 when op is unknown or key fits
 * no row. */
int mbc_class_find(mbc_job_op op, const void *key);

/* mbc_class_of_op: the first row of op (every row of an op uses the same
 * buffers and key type, only their sizes differ), NULL for an unknown op. */
const struct mbc_class *mbc_class_of_op(mbc_job_op op);

/* mbc_class_run: runs n (1..c->lanes) checked jobs of class c, job i in lane
 * i and no other lane active: a lone job on c->lone, more on c->batch. Sets
 * every job's status. */
void mbc_class_run(const struct mbc_class *c, mbc_job *const jobs[], unsigned n);

#endif /* MBC_SRC_SCHED_SCHED_H */
