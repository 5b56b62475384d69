/* rand.c - randomness from the operating system (see internal.h). */
#include <errno.h>
#include <sys/random.h>

#include "internal.h"
#include "test_hooks.h"

int mbc_random_bytes(void *buf, size_t len)
{
    uint8_t *p = buf;
    size_t left = len;
    if (mbc_test_hook(random_fail)) {
        mbc_memzero(buf, len);
        return -1;
    }
    while (left > 0) {
        /* getrandom() with no flags blocks until the kernel's generator is
         * seeded, and never returns weak bytes; it may return fewer bytes
         * than asked (large requests, signals). */
        const ssize_t n = getrandom(p, left, 0);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            mbc_memzero(buf, len);
            return -1;
        }
        p += n;
        left -= (size_t)n;
    }
    return 0;
}
