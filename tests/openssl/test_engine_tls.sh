#!/usr/bin/env bash
# test_engine_tls.sh 30|35 - openssl s_server -engine mbcrypto (-async) and
# s_client on 127.0.0.1, with the ENGINE on the server, the client or both:
# TLS 1.2 (ECDHE-RSA-AES128-GCM-SHA256, PSS and PKCS#1 v1.5 signatures;
# ECDHE-ECDSA-AES128-GCM-SHA256 on P-256 and P-384) and TLS 1.3
# (AES-128/256-GCM records, P-256 and X25519 key shares, whose secrets
# mbcrypto computes, X25519 before 3.5 only; OpenSSL generates the X25519
# keys), 3.5's default groups (X25519MLKEM768 first), RSA 2048/3072/4096
# certificates, an
# RSASSA-PSS key (its RSA is the ENGINE's too) and an ECDSA P-256
# certificate, and keys left to OpenSSL (RSA-1024, RSA-8192). Each case
# moves 200 KB from server to client and compares it byte for byte, and the
# counters prove which side's operations mbcrypto ran (the key exchange,
# the signature and its check, the records; and that -async paused, or ran
# the requests at once where every family of the server's has one lane: EC
# and X25519 without IFMA, async_expect). TAP on stdout.
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
# The X25519 secrets: the ENGINE's before OpenSSL 3.5, OpenSSL's on 3.5
# (eng_x25519.c says why).
if [ "$1" = 35 ]; then
    S_X=(s:ops-x25519-derive=0) C_X=(c:ops-x25519-derive=0)
else
    S_X=(s:ops-x25519-derive'>='1) C_X=(c:ops-x25519-derive'>='1)
fi
P256="-groups P-256"
ASYNC=(s:async-pauses'>='1)
# The ECDSA cases' server requests: EC (and X25519 before 3.5) alone.
read -ra ASYNC_EC <<< "$(async_expect s: 0 2)"
if [ "$1" = 35 ]; then
    ASYNC_EC_X=("${ASYNC_EC[@]}")
else
    read -ra ASYNC_EC_X <<< "$(async_expect s: 0 2 3)"
fi
tls_case tls12-rsa2048-async-both both rsa2048 "-async" "$T12 $X25519 -async" "${SRV_OPS[@]}" \
    "${ASYNC[@]}" "${CLI_OPS[@]}"
tls_case tls12-rsa2048-pkcs1-srv srv rsa2048 "-async" "$T12 $P256 -sigalgs RSA+SHA256" \
    "${SRV_OPS[@]}" "${ASYNC[@]}"
tls_case tls12-rsa3072-cli cli rsa3072 "" "$T12" "${CLI_OPS[@]}"
tls_case tls13-aes128-rsa2048-x25519-async-both both rsa2048 "-async" "$T13_128 $X25519" \
    "${SRV_OPS[@]}" "${ASYNC[@]}" "${CLI_OPS[@]}" "${S_X[@]}" "${C_X[@]}"
tls_case tls13-aes256-rsa4096-p256-async-srv srv rsa4096 "-async" "$T13_256 $P256" \
    "${SRV_OPS[@]}" "${ASYNC[@]}"
tls_case tls13-aes256-rsa3072-p256-both both rsa3072 "" "$T13_256 $P256" "${SRV_OPS[@]}" \
    s:async-pauses=0 "${CLI_OPS[@]}"
tls_case tls13-aes128-rsapss-x25519-async-both both rsapss "-async" "$T13_128 $X25519" \
    "${SRV_OPS[@]}" "${ASYNC[@]}" "${CLI_OPS[@]}"
# ECDSA P-256 certificate; ECDHE on P-256 and P-384, X25519. In TLS
# 1.2 the certificate's curve must be among the client's groups too.
ECDSA12="-tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256"
S_EC=(s:ops-ecdsa-sign'>='1 s:ops-ecdh'>='1 s:ops-aes-gcm-encrypt'>='1)
C_EC=(c:ops-ecdsa-verify'>='1 c:ops-ecdh'>='1 c:ops-aes-gcm-decrypt'>='1)
tls_case tls12-ecdsa-p256-async-both both ec256 "-async" "$ECDSA12 $P256" "${S_EC[@]}" \
    "${ASYNC_EC[@]}" "${C_EC[@]}"
tls_case tls12-ecdsa-p384-srv srv ec256 "" "$ECDSA12 -groups P-384:P-256" "${S_EC[@]}" \
    s:async-pauses=0
tls_case tls13-ecdsa-p256-async-both both ec256 "-async" "$T13_128 $P256" "${S_EC[@]}" \
    "${ASYNC_EC[@]}" "${C_EC[@]}"
tls_case tls13-ecdsa-x25519-async-srv srv ec256 "-async" "$T13_256 $X25519" \
    s:ops-ecdsa-sign'>='1 s:ops-ecdh=0 "${S_X[@]}" "${ASYNC_EC_X[@]}"
tls_case tls13-ecdsa-x25519-async-both both ec256 "-async" "$T13_128 $X25519" \
    s:ops-ecdsa-sign'>='1 "${S_X[@]}" "${ASYNC_EC_X[@]}" c:ops-ecdsa-verify'>='1 "${C_X[@]}"
# Keys the ENGINE leaves to OpenSSL: refused once, no RSA operation of ours.
tls_case tls13-rsa1024-fallback-async both rsa1024 "-async -cipher DEFAULT@SECLEVEL=0" \
    "$T13_128 -cipher DEFAULT@SECLEVEL=0" s:keys-rsa-refused'>='1 s:ops-rsa-sign=0 \
    s:ops-aes-gcm-encrypt'>='1
tls_case tls13-rsa8192-fallback both rsa8192 "" "$T13_128" s:keys-rsa-refused'>='1 \
    s:ops-rsa-sign=0 s:ops-aes-gcm-encrypt'>='1
tap_end
