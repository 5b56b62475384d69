#!/usr/bin/env bash
# test_fromdata.sh 30|35 FROMDATA - tests/openssl/fromdata.c (the program
# FROMDATA, built against the system's OpenSSL 3.0) with the libcrypto of
# OpenSSL 3.0 or 3.5: RSA keys of every size made by EVP_PKEY_fromdata
# with mbcrypto preferred behave as the default provider's (issue 22 item
# 5). TAP on stdout (the program's).
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
exec "${OSSL_RUN[@]}" "$2"
