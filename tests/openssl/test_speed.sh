#!/usr/bin/env bash
# test_speed.sh 30|35 - openssl speed through the mbcrypto provider:
# RSA 2048/3072/4096 with -async_jobs 8 (sign and verify, one second each)
# and -evp aes-128-gcm, each proven to run through mbcrypto by the counters
# (and the RSA ones to batch: requests that completed together). speed's own
# verify loop checks the signatures it made. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
export MBCRYPTO_SERVE=all

for b in 2048 3072 4096; do
    speed_case "rsa$b-async8" "-async_jobs 8 rsa$b" ops-rsa-sign'>='8 ops-rsa-verify'>='8 \
        keys-rsa'>='1 async-pauses'>='1 async-batched'>='2
done
speed_case rsa2048-sync "rsa2048" ops-rsa-sign'>='1 ops-rsa-verify'>='1
speed_case aes128gcm "-evp aes-128-gcm -bytes 1024" ops-aes-gcm-encrypt'>='1
speed_case aes256gcm-aead "-aead -evp aes-256-gcm -bytes 1024" ops-aes-gcm-encrypt'>='100
tap_end
