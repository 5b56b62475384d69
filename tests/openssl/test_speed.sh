#!/usr/bin/env bash
# test_speed.sh 30|35 - openssl speed through the mbcrypto provider:
# RSA 2048/3072/4096, ECDSA and ECDH on P-256 and P-384 and X25519 with
# -async_jobs 8 (one second per operation) and without, and -evp
# aes-128-gcm, each proven to run through mbcrypto by the counters (and the
# async ones to batch: requests that completed together; or, for a family
# whose implementation has one lane, EC and X25519 without IFMA, to run at
# once: async_expect). speed's own verify loop checks the signatures it
# made. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
export MBCRYPTO_SERVE=all

for b in 2048 3072 4096; do
    speed_case "rsa$b-async8" "-async_jobs 8 rsa$b" ops-rsa-sign'>='8 ops-rsa-verify'>='8 \
        keys-rsa'>='1 async-pauses'>='1 async-batched'>='2
done
speed_case rsa2048-sync "rsa2048" ops-rsa-sign'>='1 ops-rsa-verify'>='1
read -ra async_ec <<< "$(async_expect "" 2 2)"
read -ra async_x <<< "$(async_expect "" 2 3)"
note "EC ${async_ec[*]}; X25519 ${async_x[*]}"
for c in p256 p384; do
    speed_case "ecdsa$c-async8" "-async_jobs 8 ecdsa$c" ops-ecdsa-sign'>='8 \
        ops-ecdsa-verify'>='8 ops-ec-keygen'>='1 "${async_ec[@]}"
    speed_case "ecdsa$c-sync" "ecdsa$c" ops-ecdsa-sign'>='1 ops-ecdsa-verify'>='1 async-pauses=0
    speed_case "ecdh$c-async8" "-async_jobs 8 ecdh$c" ops-ecdh'>='8 ops-ec-keygen'>='1 \
        "${async_ec[@]}"
    speed_case "ecdh$c-sync" "ecdh$c" ops-ecdh'>='1 async-pauses=0
done
speed_case ecdhx25519-async8 "-async_jobs 8 ecdhx25519" ops-x25519-derive'>='8 \
    "${async_x[@]}"
speed_case ecdhx25519-sync "ecdhx25519" ops-x25519-derive'>='1 async-pauses=0
speed_case aes128gcm "-evp aes-128-gcm -bytes 1024" ops-aes-gcm-encrypt'>='1
speed_case aes256gcm-aead "-aead -evp aes-256-gcm -bytes 1024" ops-aes-gcm-encrypt'>='100
tap_end
