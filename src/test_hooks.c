/* test_hooks.c - the fault-injection hooks of the test build (test_hooks.h). */
#include "test_hooks.h"

struct mbc_test_hooks mbc_test_hooks;
