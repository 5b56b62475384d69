#!/usr/bin/env bash
# test_mlkem.sh 30|35 PROGRAM - tests/openssl/mlkem.c (PROGRAM, built
# against the system's OpenSSL 3.0) with the libcrypto of OpenSSL 3.0 or
# 3.5: ML-KEM-768 and X25519MLKEM768 of the provider against the default
# provider of 3.5, and nothing of them offered by 3.0 (issue 24). TAP on
# stdout (the program's).
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
exec "${OSSL_RUN[@]}" "$2"
