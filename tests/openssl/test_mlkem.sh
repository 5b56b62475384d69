#!/usr/bin/env bash
# test_mlkem.sh 30|35 PROGRAM - tests/openssl/mlkem.c (PROGRAM, built
# against the system's OpenSSL 3.0) with the libcrypto of OpenSSL 3.0 or
# 3.5: ML-KEM-768 and X25519MLKEM768 of the provider against the default
# provider of 3.5, and nothing of them offered by 3.0 (issue 24). TAP on
# stdout (the program's).
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
# The lanes of EC's implementation (1 without IFMA): the program's count of
# a SecP256r1MLKEM768 encapsulation's pauses depends on it.
MBC_TEST_EC_LANES=$(lanes 2) exec "${OSSL_RUN[@]}" "$2"
