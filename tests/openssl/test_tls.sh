#!/usr/bin/env bash
# test_tls.sh 30|35 - openssl s_server and s_client on 127.0.0.1 with the
# mbcrypto provider on the server, the client or both, with and without
# -async: TLS 1.2 and 1.3, AES-128/256-GCM records, RSA 2048/3072/4096
# certificates (PSS in TLS 1.3, PKCS#1 v1.5 and PSS in TLS 1.2), and keys
# the provider leaves to the default provider (RSA-1024, RSA-8192, an
# RSASSA-PSS key). Each case moves 200 KB from server to client (s_server
# -WWW) and compares it byte for byte, and reads the provider's counters to
# prove which side's operations mbcrypto ran. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
certs
export MBCRYPTO_SERVE=all
head -c 200000 /dev/urandom > "$scratch/data.bin"

# tls_case NAME WHO CERT "SERVER ARGS" "CLIENT ARGS" EXPECT...
#  WHO: srv, cli or both: the side(s) loading mbcrypto (the other one runs
#  the default provider alone). EXPECT: FILE:COUNTER>=N or FILE:COUNTER=N
#  with FILE s (server) or c (client).
tls_case() {
    local name=$1 who=$2 cert=$3 sargs=$4 cargs=$5
    shift 5
    local sprov=("${DEFAULT_ONLY[@]}") cprov=("${DEFAULT_ONLY[@]}")
    [ "$who" != cli ] && sprov=("${PROV[@]}")
    [ "$who" != srv ] && cprov=("${PROV[@]}")
    local port sc="$scratch/$name.s" cc="$scratch/$name.c" out="$scratch/$name.out"
    rm -f "$sc" "$cc"
    port=$(free_port)
    (cd "$scratch" && MBCRYPTO_COUNTERS_FILE="$sc" exec "${OPENSSL[@]}" s_server "${sprov[@]}" \
        -accept "127.0.0.1:$port" -cert "$MBC_TEST_CERTS/$cert.crt" \
        -key "$MBC_TEST_CERTS/$cert.key" -naccept 1 -WWW $sargs) \
        > "$scratch/$name.slog" 2>&1 &
    local spid=$!
    pids+=("$spid")
    if ! wait_port "$port"; then
        not_ok "$name: server did not start"
        return
    fi
    printf 'GET /data.bin HTTP/1.0\r\n\r\n' |
        MBCRYPTO_COUNTERS_FILE="$cc" timeout 60 "${OPENSSL[@]}" s_client "${cprov[@]}" \
            -connect "127.0.0.1:$port" -quiet $cargs > "$out" 2> "$scratch/$name.clog"
    timeout 20 tail --pid="$spid" -f /dev/null
    kill "$spid" 2>/dev/null
    # The body after the header must be the file.
    if ! python3 - "$out" "$scratch/data.bin" <<'PY'; then
import sys
got = open(sys.argv[1], "rb").read()
want = open(sys.argv[2], "rb").read()
sys.exit(0 if got.split(b"\r\n\r\n", 1)[-1] == want else 1)
PY
        not_ok "$name: data not received intact ($(wc -c < "$out") bytes)"
        tail -n 5 "$scratch/$name.clog" "$scratch/$name.slog" | sed 's/^/#   /'
        return
    fi
    local e bad=""
    for e in "$@"; do
        local f=${e%%:*} rest=${e#*:} file
        [ "$f" = s ] && file=$sc || file=$cc
        local cname=${rest%%[>=]*} want=${rest##*[>=]} got
        got=$(counter "$file" "$cname")
        case $rest in
        *'>='*) [ "$got" -ge "$want" ] || bad+=" $f:$cname=$got<$want" ;;
        *) [ "$got" -eq "$want" ] || bad+=" $f:$cname=$got!=$want" ;;
        esac
    done
    if [ -n "$bad" ]; then
        not_ok "$name: counters$bad"
    else
        ok "$name"
    fi
}

T12="-tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256"
T13_128="-tls1_3 -ciphersuites TLS_AES_128_GCM_SHA256"
T13_256="-tls1_3 -ciphersuites TLS_AES_256_GCM_SHA384"
SRV_OPS=(s:ops-rsa-sign'>='1 s:ops-aes-gcm-encrypt'>='1 s:ops-aes-gcm-decrypt'>='1)
CLI_OPS=(c:ops-rsa-verify'>='1 c:ops-aes-gcm-encrypt'>='1 c:ops-aes-gcm-decrypt'>='1)

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
