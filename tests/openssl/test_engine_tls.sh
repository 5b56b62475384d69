#!/usr/bin/env bash
# test_engine_tls.sh 30|35 - openssl s_server -engine mbcrypto (-async) and
# s_client on 127.0.0.1, with the ENGINE on the server, the client or both:
# TLS 1.2 (ECDHE-RSA-AES128-GCM-SHA256, PSS and PKCS#1 v1.5 signatures) and
# TLS 1.3 (AES-128/256-GCM records, X25519 and P-256 key shares, which
# OpenSSL computes), RSA 2048/3072/4096 certificates and an RSASSA-PSS key
# (its RSA is the ENGINE's too), and keys left to OpenSSL (RSA-1024,
# RSA-8192). Each case moves 200 KB from server to client and compares it
# byte for byte, and the counters prove which side's operations mbcrypto
# ran (and that -async paused). TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
use_engine
if ! "${OPENSSL[@]}" engine -t mbcrypto 2>&1 | grep -q '\[ available \]'; then
    skip "OpenSSL $1 cannot load the mbcrypto ENGINE"
    tap_end
fi
certs
export MBCRYPTO_SERVE=all
head -c 200000 /dev/urandom > "$scratch/data.bin"

X25519="-groups X25519"
P256="-groups P-256"
ASYNC=(s:async-pauses'>='1)
tls_case tls12-rsa2048-async-both both rsa2048 "-async" "$T12 $X25519 -async" "${SRV_OPS[@]}" \
    "${ASYNC[@]}" "${CLI_OPS[@]}"
tls_case tls12-rsa2048-pkcs1-srv srv rsa2048 "-async" "$T12 $P256 -sigalgs RSA+SHA256" \
    "${SRV_OPS[@]}" "${ASYNC[@]}"
tls_case tls12-rsa3072-cli cli rsa3072 "" "$T12" "${CLI_OPS[@]}"
tls_case tls13-aes128-rsa2048-x25519-async-both both rsa2048 "-async" "$T13_128 $X25519" \
    "${SRV_OPS[@]}" "${ASYNC[@]}" "${CLI_OPS[@]}"
tls_case tls13-aes256-rsa4096-p256-async-srv srv rsa4096 "-async" "$T13_256 $P256" \
    "${SRV_OPS[@]}" "${ASYNC[@]}"
tls_case tls13-aes256-rsa3072-p256-both both rsa3072 "" "$T13_256 $P256" "${SRV_OPS[@]}" \
    s:async-pauses=0 "${CLI_OPS[@]}"
tls_case tls13-aes128-rsapss-x25519-async-both both rsapss "-async" "$T13_128 $X25519" \
    "${SRV_OPS[@]}" "${ASYNC[@]}" "${CLI_OPS[@]}"
# Keys the ENGINE leaves to OpenSSL: refused once, no RSA operation of ours.
tls_case tls13-rsa1024-fallback-async both rsa1024 "-async -cipher DEFAULT@SECLEVEL=0" \
    "$T13_128 -cipher DEFAULT@SECLEVEL=0" s:keys-rsa-refused'>='1 s:ops-rsa-sign=0 \
    s:ops-aes-gcm-encrypt'>='1
tls_case tls13-rsa8192-fallback both rsa8192 "" "$T13_128" s:keys-rsa-refused'>='1 \
    s:ops-rsa-sign=0 s:ops-aes-gcm-encrypt'>='1
tap_end
