#!/usr/bin/env bash
# test_tls_mlkem.sh 30|35 - the post-quantum TLS 1.3 groups of OpenSSL 3.5
# through the provider (issue 24): openssl s_server and s_client on
# 127.0.0.1 with -groups X25519MLKEM768 (or MLKEM768, the only group each
# side allows, so a finished handshake used it) and mbcrypto on the server,
# the client, both or neither, with and without -async; a client with
# OpenSSL's default group list against our server; the groups left to the
# default provider when the mlkem family is not served; openssl speed with
# 8 ASYNC jobs batching the hybrid's encapsulations. The counters show
# which side's ML-KEM and X25519 mbcrypto computed. With OpenSSL 3.0 (no
# ML-KEM): the provider loads and offers no KEM. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
export MBCRYPTO_SERVE=all
if [ "$OSSL_VER" = 30 ]; then
    out=$("${OPENSSL[@]}" list -kem-algorithms "${OURS[@]}" 2>&1)
    check "3.0: the provider loads and offers no KEM" \
        bash -c '! grep -q "@ mbcrypto" <<< "$1" && [ -n "$1" ]' _ "$out"
    tap_end
fi
certs
head -c 200000 /dev/urandom > "$scratch/data.bin"

H="-groups X25519MLKEM768"
# The server encapsulates (ML-KEM encaps, an X25519 key pair and secret),
# the client generates its key share and decapsulates.
SRV_H=(s:ops-mlkem-encaps'>='1 s:ops-x25519-keygen'>='1 s:ops-x25519-derive'>='1
       s:ops-mlkem-decaps=0)
CLI_H=(c:ops-mlkem-keygen'>='1 c:ops-x25519-keygen'>='1 c:ops-mlkem-decaps'>='1
       c:ops-x25519-derive'>='1)
tls_case x25519mlkem768-both both rsa2048 "$H" "$T13_128 $H" "${SRV_H[@]}" "${CLI_H[@]}"
tls_case x25519mlkem768-srv srv rsa2048 "$H" "$T13_128 $H" "${SRV_H[@]}"
tls_case x25519mlkem768-cli cli rsa2048 "$H" "$T13_256 $H" "${CLI_H[@]}"
tls_case x25519mlkem768-neither neither rsa2048 "$H" "$T13_128 $H"
tls_case x25519mlkem768-async-both both ec256 "-async $H" "$T13_128 -async $H" \
    "${SRV_H[@]}" "${CLI_H[@]}" s:async-pauses'>='1 c:async-pauses'>='1
tls_case x25519mlkem768-async-srv srv rsa2048 "-async $H" "$T13_128 $H" "${SRV_H[@]}" \
    s:async-pauses'>='1
# OpenSSL 3.5's own default groups on the client (it sends the hybrid's
# key share first) against our server.
tls_case x25519mlkem768-default-client srv rsa2048 "" "$T13_128" "${SRV_H[@]}"
M="-groups MLKEM768"
tls_case mlkem768-both both rsa2048 "$M" "$T13_128 $M" s:ops-mlkem-encaps'>='1 \
    s:ops-x25519-keygen=0 c:ops-mlkem-keygen'>='1 c:ops-mlkem-decaps'>='1
tls_case mlkem768-async-srv srv rsa2048 "-async $M" "$T13_128 $M" s:ops-mlkem-encaps'>='1 \
    s:async-pauses'>='1
# Not served (the mlkem family off): the default provider's hybrid does
# the key exchange (its X25519 half fetched with the preference, so ours
# computes that); ours signs.
MBCRYPTO_SERVE=rsa,aes-gcm,x25519 tls_case x25519mlkem768-not-served both rsa2048 "$H" \
    "$T13_128 $H" s:ops-mlkem-encaps=0 c:ops-mlkem-keygen=0 c:ops-mlkem-decaps=0 \
    s:ops-rsa-sign'>='1
# Eight ASYNC jobs: encapsulations batched in the lane manager.
speed_case x25519mlkem768-async8 "-async_jobs 8 X25519MLKEM768" ops-mlkem-encaps'>='8 \
    ops-mlkem-decaps'>='8 ops-mlkem-keygen'>='8 async-batched'>='2
speed_case mlkem768-sync "ML-KEM-768" ops-mlkem-encaps'>='1 async-pauses=0
tap_end
