#!/usr/bin/env bash
# test_tls.sh 30|35 - openssl s_server and s_client on 127.0.0.1 with the
# mbcrypto provider on the server, the client or both, with and without
# -async: TLS 1.2 and 1.3, AES-128/256-GCM records, RSA 2048/3072/4096
# certificates (PSS in TLS 1.3, PKCS#1 v1.5 and PSS in TLS 1.2), and keys
# the provider leaves to the default provider (RSA-1024, RSA-8192, an
# RSASSA-PSS key). Each case moves 200 KB from server to client (s_server
# -WWW) and compares it byte for byte, and reads the provider's counters to
# prove which side's operations mbcrypto ran; key exchange on X25519,
# P-256 and P-384 and an ECDSA P-256 certificate served by mbcrypto, P-521
# left to the default provider. -async cases pause, but one whose server
# requests are all of families with one lane (EC and X25519 without IFMA:
# async_expect) runs them at once. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
certs
export MBCRYPTO_SERVE=all
head -c 200000 /dev/urandom > "$scratch/data.bin"

tls_case tls12-rsa2048-both both rsa2048 "" "$T12" "${SRV_OPS[@]}" "${CLI_OPS[@]}"
tls_case tls12-rsa2048-pkcs1-both both rsa2048 "" "$T12 -sigalgs RSA+SHA256" \
    "${SRV_OPS[@]}" "${CLI_OPS[@]}"
tls_case tls12-rsa3072-srv srv rsa3072 "" "$T12" "${SRV_OPS[@]}"
tls_case tls12-rsa2048-cli cli rsa2048 "" "$T12" "${CLI_OPS[@]}"
tls_case tls12-rsa2048-async both rsa2048 "-async" "$T12 -async" "${SRV_OPS[@]}" \
    s:async-pauses'>='1 "${CLI_OPS[@]}"
tls_case tls13-aes128-rsa2048-both both rsa2048 "" "$T13_128" "${SRV_OPS[@]}" "${CLI_OPS[@]}"
tls_case tls13-aes256-rsa4096-both both rsa4096 "" "$T13_256" "${SRV_OPS[@]}" "${CLI_OPS[@]}"
tls_case tls13-aes256-rsa2048-srv srv rsa2048 "" "$T13_256" "${SRV_OPS[@]}"
tls_case tls13-aes128-rsa3072-cli cli rsa3072 "" "$T13_128" "${CLI_OPS[@]}"
tls_case tls13-rsa2048-async-srv srv rsa2048 "-async" "$T13_128" "${SRV_OPS[@]}" \
    s:async-pauses'>='1
tls_case tls13-rsa2048-async-both both rsa2048 "-async" "$T13_256 -async" "${SRV_OPS[@]}" \
    s:async-pauses'>='1 "${CLI_OPS[@]}"
# TLS 1.3 key shares: X25519 served by mbcrypto on both sides (each
# generates its share and derives the secret), also inside ASYNC jobs.
X25519_OPS=(s:ops-x25519-keygen'>='1 s:ops-x25519-derive'>='1 c:ops-x25519-keygen'>='1
            c:ops-x25519-derive'>='1)
tls_case tls13-x25519-both both rsa2048 "-groups X25519" "$T13_128 -groups X25519" \
    "${X25519_OPS[@]}" "${SRV_OPS[@]}"
tls_case tls13-x25519-async-both both rsa2048 "-async -groups X25519" \
    "$T13_128 -async -groups X25519" "${X25519_OPS[@]}" s:async-pauses'>='1
# P-256 and P-384 key shares: ECDH (and the share's key generation).
EC_OPS=(s:ops-ec-keygen'>='1 s:ops-ecdh'>='1 c:ops-ec-keygen'>='1 c:ops-ecdh'>='1)
tls_case tls13-p256-both both rsa2048 "-groups P-256" "$T13_128 -groups P-256" \
    "${EC_OPS[@]}" "${SRV_OPS[@]}"
tls_case tls13-p384-async-both both rsa2048 "-async -groups P-384" \
    "$T13_256 -async -groups P-384" "${EC_OPS[@]}" s:async-pauses'>='1
tls_case tls12-p256-srv srv rsa2048 "-groups P-256" "$T12 -groups P-256" \
    s:ops-ec-keygen'>='1 s:ops-ecdh'>='1 "${SRV_OPS[@]}"
# An ECDSA P-256 certificate: the server's CertificateVerify signed, the
# client's check of it, by mbcrypto (TLS 1.3 with X25519, TLS 1.2 ECDHE).
tls_case tls13-ecdsa-p256-both both ec256 "" "$T13_128 -groups X25519" \
    s:ops-ecdsa-sign'>='1 c:ops-ecdsa-verify'>='1 s:ops-rsa-sign=0 "${X25519_OPS[@]}"
read -ra S_ASYNC_EC <<< "$(async_expect s: 0 2)"
tls_case tls12-ecdsa-p256-async-both both ec256 "-async" \
    "-tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256 -groups P-256 -async" \
    s:ops-ecdsa-sign'>='1 c:ops-ecdsa-verify'>='1 "${S_ASYNC_EC[@]}" "${EC_OPS[@]}"
tls_case tls12-ecdsa-p256-aes256-both both ec256 "" \
    "-tls1_2 -cipher ECDHE-ECDSA-AES256-GCM-SHA384 -groups P-256" \
    s:ops-ecdsa-sign'>='1 c:ops-ecdsa-verify'>='1 "${EC_OPS[@]}" s:ops-aes-gcm-encrypt'>='1 \
    c:ops-aes-gcm-decrypt'>='1
# P-521, a curve mbcrypto does not have: its key shares are generated and
# used by the default provider through our EC key management.
tls_case tls13-p521-fallback both rsa2048 "-groups P-521" "$T13_128 -groups P-521" \
    s:ops-ec-keygen=0 s:ops-ecdh=0 s:keys-ec-other'>='1 "${SRV_OPS[@]}"
# What the provider leaves to the default provider: the handshake works, the
# key is refused by our key management, no RSA operation of ours ran on it.
tls_case tls13-rsa1024-fallback both rsa1024 "-cipher DEFAULT@SECLEVEL=0" \
    "$T13_128 -cipher DEFAULT@SECLEVEL=0" s:keys-rsa-refused'>='1 \
    s:ops-rsa-sign=0 s:ops-aes-gcm-encrypt'>='1
tls_case tls13-rsa8192-fallback-async both rsa8192 "-async" "$T13_128" \
    s:keys-rsa-refused'>='1 s:ops-rsa-sign=0 s:ops-aes-gcm-encrypt'>='1
tls_case tls13-rsapss-key-fallback both rsapss "" "$T13_128" s:ops-rsa-sign=0 \
    s:ops-aes-gcm-encrypt'>='1
tap_end
