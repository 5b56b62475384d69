/*
 * hexval.h - the value of one hexadecimal digit, for the test helpers of
 * tests/ (cmocka) and tests/ct/ (MSan, no cmocka): header-only so both link
 * nothing new.
 */
#ifndef MBC_TESTS_HEXVAL_H
#define MBC_TESTS_HEXVAL_H

/* mbt_hexval: 0..15 for [0-9a-fA-F], else -1. */
static inline int mbt_hexval(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

#endif /* MBC_TESTS_HEXVAL_H */
