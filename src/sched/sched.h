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
 *  key_bits   the key's size in the unit of bits (0 when key is not a valid
 *             key object of this operation's type); a job belongs to the row
 *             whose op and bits match.
 *  lanes      the batch size at which the class runs at once (and the most
 *             one batch takes): the number of jobs that fill the kernel.
 *  run_batch  runs n (1..lanes) jobs of this class side by side, job i in
 *             lane i, no other lane active; sets every job's status.
 *  run_one    runs one job on the class's fastest single-request path; sets
 *             its status.
 * Both are called only with jobs that passed the manager's checks (op, key
 * class, non-NULL buffers, the row's in_len, at least its out_len) and write
 * exactly the row's out_len bytes of each job's out.
 */
struct mbc_class {
    mbc_job_op op;
    unsigned bits;
    const char *name;
    size_t in_len;
    size_t out_len;
    unsigned lanes;
    unsigned (*key_bits)(const void *key);
    void (*run_batch)(const struct mbc_class *c, mbc_job *const jobs[], unsigned n);
    void (*run_one)(const struct mbc_class *c, mbc_job *job);
};

/* mbc_classes: the table, mbc_num_classes rows. */
extern const struct mbc_class mbc_classes[];
extern const unsigned mbc_num_classes;

/* mbc_class_find: the index of the row of op whose bits match key (key not
 * NULL), or -1 when op is unknown or key fits no row. */
int mbc_class_find(mbc_job_op op, const void *key);

#endif /* MBC_SRC_SCHED_SCHED_H */
