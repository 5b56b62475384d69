#!/usr/bin/env bash
# test_curl.sh 30|35 - curl against openssl s_server on 127.0.0.1 with the
# provider loaded system-wide (OPENSSL_CONF: the README's openssl.cnf,
# MBCRYPTO_SERVE=all) on one side at a time, and on neither: RSA-2048 and
# ECDSA P-256 certificates, TLS 1.2 and 1.3 (curl run with 3.5's libraries
# for 35). Each run fetches a file and must get it byte for byte, as the
# run with the default provider alone on both sides does; the side with
# mbcrypto must have signed (server) or verified (client) and run the
# records' AES-GCM; with a certificate it does not trust, curl must refuse
# the server, with mbcrypto as without. The server serves one connection
# and is waited for at most 20 s, then killed. Skipped when curl is not
# installed. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
CURL=/usr/bin/curl
if [ ! -x "$CURL" ]; then
    skip "curl not installed (apt-get install curl)"
    tap_end
fi
certs
export MBCRYPTO_SERVE=all
system_cnfs
d=$scratch
head -c 100000 /dev/urandom > "$d/data.bin"
note "$("${OSSL_RUN[@]}" "$CURL" --version | head -n 1)"

# fetch NAME SRV CLI CERT CA "CURL ARGS": s_server (configuration SRV: ours
# or theirs) with CERT, curl (CLI) trusting CA; curl's exit code in
# $d/NAME.rc, the body in $d/NAME.body, counters in $d/NAME.s.ctr and
# $d/NAME.c.ctr.
fetch() {
    local name=$1 srv=$2 cli=$3 cert=$4 ca=$5 cargs=$6 cnf=$theirs_cnf port
    [ "$srv" = ours ] && cnf=$ours_cnf
    port=$(free_port)
    rm -f "$d/$name.s.ctr"
    (cd "$d" && OPENSSL_CONF=$cnf MBCRYPTO_COUNTERS_FILE="$d/$name.s.ctr" exec "${OPENSSL[@]}" \
        s_server -accept "127.0.0.1:$port" -cert "$MBC_TEST_CERTS/$cert.crt" \
        -key "$MBC_TEST_CERTS/$cert.key" -naccept 1 -WWW) > "$d/$name.slog" 2>&1 &
    local spid=$!
    pids+=("$spid")
    if ! wait_port "$port"; then
        echo 99 > "$d/$name.rc"
        return
    fi
    run_prog "$cli" "$name.c" "$CURL" -sS --max-time 30 --resolve "localhost:$port:127.0.0.1" \
        --cacert "$MBC_TEST_CERTS/$ca.crt" $cargs -o "$d/$name.body" \
        "https://localhost:$port/data.bin"
    echo $? > "$d/$name.rc"
    timeout 20 tail --pid="$spid" -f /dev/null
    kill "$spid" 2> /dev/null
}

for cert in rsa2048 ec256; do
    alg=rsa
    [ "$cert" = ec256 ] && alg=ecdsa
    for tls in 1.2 1.3; do
        cargs="--tlsv$tls --tls-max $tls"
        if [ "$tls" = 1.2 ]; then
            c=ECDHE-RSA-AES128-GCM-SHA256
            [ "$alg" = ecdsa ] && c=ECDHE-ECDSA-AES256-GCM-SHA384
            cargs+=" --ciphers $c"
        fi
        base=$cert-tls$tls
        fetch "$base-none" theirs theirs "$cert" "$cert" "$cargs"
        for who in srv cli; do
            name=$base-$who
            srv=theirs cli=theirs
            [ "$who" = srv ] && srv=ours
            [ "$who" = cli ] && cli=ours
            fetch "$name" "$srv" "$cli" "$cert" "$cert" "$cargs"
            rc=$(cat "$d/$name.rc") brc=$(cat "$d/$base-none.rc")
            if [ "$rc" != 0 ] || [ "$brc" != 0 ] || ! cmp -s "$d/$name.body" "$d/data.bin"; then
                not_ok "$name: curl exit $rc (default provider alone: $brc)"
                sed 's/^/#   /' "$d/$name.c.err" | head -n 3
                tail -n 3 "$d/$name.slog" | sed 's/^/#   /'
                continue
            fi
            if [ "$who" = srv ]; then
                bad=$(check_counters "$d/$name.s.ctr:ops-$alg-sign>=1" \
                    "$d/$name.s.ctr:ops-aes-gcm-encrypt>=1" "$d/$name.s.ctr:ops-aes-gcm-decrypt>=1")
            else
                bad=$(check_counters "$d/$name.c.ctr:ops-$alg-verify>=1" \
                    "$d/$name.c.ctr:ops-aes-gcm-encrypt>=1" "$d/$name.c.ctr:ops-aes-gcm-decrypt>=1")
            fi
            if [ -n "$bad" ]; then not_ok "$name: counters$bad"; else ok "$name"; fi
        done
    done
    # A server certificate curl does not trust: refused the same way
    # (exit 60: peer certificate cannot be authenticated).
    other=ec256
    [ "$cert" = ec256 ] && other=rsa2048
    fetch "$cert-untrusted-none" theirs theirs "$cert" "$other" ""
    fetch "$cert-untrusted-cli" theirs ours "$cert" "$other" ""
    rc=$(cat "$d/$cert-untrusted-cli.rc") brc=$(cat "$d/$cert-untrusted-none.rc")
    check "$cert-untrusted: curl exit $rc, default provider alone $brc" \
        test "$rc" = 60 -a "$brc" = 60
done
tap_end
