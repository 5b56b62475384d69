/*
 * counters.c - operation counters: in this process, or in the shared file
 * named by MBCRYPTO_COUNTERS_FILE (layout in mbo.h), so that a test reads
 * the counters of a server (HAProxy, s_server) while it runs.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mbo_local.h"

static const char *const names[MBO_NUM_COUNTERS] = {
    [MBO_CTR_RSA_SIGN] = "ops-rsa-sign",
    [MBO_CTR_RSA_VERIFY] = "ops-rsa-verify",
    [MBO_CTR_GCM_ENCRYPT] = "ops-aes-gcm-encrypt",
    [MBO_CTR_GCM_DECRYPT] = "ops-aes-gcm-decrypt",
    [MBO_CTR_RSA_KEYS] = "keys-rsa",
    [MBO_CTR_RSA_REFUSED] = "keys-rsa-refused",
    [MBO_CTR_ASYNC_PAUSES] = "async-pauses",
    [MBO_CTR_ASYNC_FLUSHES] = "async-flushes",
    [MBO_CTR_BATCHED] = "async-batched",
    [MBO_CTR_X25519_DERIVE] = "ops-x25519-derive",
    [MBO_CTR_X25519_KEYGEN] = "ops-x25519-keygen",
    [MBO_CTR_ECDH] = "ops-ecdh",
    [MBO_CTR_EC_KEYGEN] = "ops-ec-keygen",
    [MBO_CTR_ECDSA_SIGN] = "ops-ecdsa-sign",
    [MBO_CTR_ECDSA_VERIFY] = "ops-ecdsa-verify",
    [MBO_CTR_EC_KEYS] = "keys-ec",
    [MBO_CTR_EC_REFUSED] = "keys-ec-refused",
    [MBO_CTR_EC_OTHER] = "keys-ec-other",
    [MBO_CTR_MLKEM_KEYGEN] = "ops-mlkem-keygen",
    [MBO_CTR_MLKEM_ENCAPS] = "ops-mlkem-encaps",
    [MBO_CTR_MLKEM_DECAPS] = "ops-mlkem-decaps",
    [MBO_CTR_ASYNC_AT_ONCE] = "async-at-once",
    [MBO_CTR_HANDED_OFF] = "sync-handed-off",
};

#define NAME_LEN 56

struct file_ctr {
    char name[NAME_LEN];
    uint64_t value;
};

struct ctr_file {
    char magic[8];
    uint64_t count;
    struct file_ctr ctr[MBO_NUM_COUNTERS];
};

static const char magic[8] = "MBOCTR1\n";

static uint64_t local[MBO_NUM_COUNTERS];
static struct ctr_file *mapped; /* the file, when there is one */

const char *mbo_counter_name(unsigned i)
{
    return i < MBO_NUM_COUNTERS ? names[i] : NULL;
}

static uint64_t *slot(enum mbo_counter c)
{
    struct ctr_file *f = __atomic_load_n(&mapped, __ATOMIC_ACQUIRE);
    return f != NULL ? &f->ctr[c].value : &local[c];
}

void mbo_count(enum mbo_counter c, uint64_t n)
{
    __atomic_fetch_add(slot(c), n, __ATOMIC_RELAXED);
}

uint64_t mbo_counter_get(enum mbo_counter c)
{
    return __atomic_load_n(slot(c), __ATOMIC_RELAXED);
}

void mbo_counters_setup(void)
{
    const char *path = getenv(MBO_COUNTERS_ENV);
    if (path == NULL || path[0] == '\0') {
        return;
    }
    const int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        return;
    }
    const off_t size = lseek(fd, 0, SEEK_END);
    if ((size != (off_t)sizeof(struct ctr_file) && ftruncate(fd, 0) != 0) ||
        ftruncate(fd, sizeof(struct ctr_file)) != 0) {
        close(fd);
        return;
    }
    struct ctr_file *f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (f == MAP_FAILED) {
        return;
    }
    if (memcmp(f->magic, magic, sizeof(magic)) != 0 || f->count != MBO_NUM_COUNTERS) {
        memset(f, 0, sizeof(*f));
        for (unsigned i = 0; i < MBO_NUM_COUNTERS; i++) {
            strncpy(f->ctr[i].name, names[i], NAME_LEN - 1);
        }
        f->count = MBO_NUM_COUNTERS;
        memcpy(f->magic, magic, sizeof(magic));
    }
    /* What was counted before the file was there goes into it. */
    for (unsigned i = 0; i < MBO_NUM_COUNTERS; i++) {
        __atomic_fetch_add(&f->ctr[i].value, __atomic_exchange_n(&local[i], 0, __ATOMIC_RELAXED),
                           __ATOMIC_RELAXED);
    }
    __atomic_store_n(&mapped, f, __ATOMIC_RELEASE);
}

void mbo_counters_teardown(void)
{
    struct ctr_file *f = __atomic_exchange_n(&mapped, NULL, __ATOMIC_ACQ_REL);
    if (f != NULL) {
        munmap(f, sizeof(*f));
    }
}
