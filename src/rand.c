/*
 * rand.c - the library's only source of randomness: the OS generator
 * (getrandom(2), blocking until the kernel pool is initialised).
 */
#include <errno.h>
#include <sys/random.h>

#include "ct.h"
#include "internal.h"
#include "test_hooks.h"

mbc_err mbc_random_bytes(void *buf, size_t len)
{
    uint8_t *p = buf;
    size_t done = 0;
    if (mbc_test_hook(random_fail)) {
        mbc_memzero(buf, len);
        return MBC_ERR_UNSUPPORTED;
    }
    while (done < len) {
        /* getrandom never returns weak bytes; it returns at most 33554431
         * bytes at a time, fewer when a signal interrupts a large request */
        const ssize_t got = getrandom(p + done, len - done, 0);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            mbc_memzero(buf, len);
            return MBC_ERR_UNSUPPORTED;
        }
        done += (size_t)got;
    }
    mbc_classify(buf, len);
    return MBC_OK;
}
