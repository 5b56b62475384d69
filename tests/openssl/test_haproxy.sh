#!/usr/bin/env bash
# test_haproxy.sh 30|35 - Debian 12's stock HAProxy 2.6 terminating TLS 1.3
# on 127.0.0.1 with the mbcrypto provider (ssl-provider-path, ssl-provider
# mbcrypto, ssl-provider default, ssl-propquery, ssl-mode-async) in front of
# its own "http-request return" backend; with 35, HAProxy runs on Debian
# 13's OpenSSL 3.5 libraries. h2load at 1, 8 and 64 concurrent connections
# (bounded counts), on two frontends: an RSA-2048 certificate with X25519
# key shares, and an ECDSA P-256 certificate with P-256 key shares. Every
# request succeeds, the body is right, mbcrypto ran the handshakes'
# signatures, their key exchange and the records' AES-GCM (counters file),
# and HAProxy's fd count is back to its start after every run (no leaked
# wait fd or paused job). Batching is asserted only where the test makes the
# handshakes overlap (8 ClientHellos released together, see load; on a fresh
# HAProxy with the lone-request rule off, see the end); elsewhere
# it is a note, since it depends on the CPU's speed. Then clients that send a
# ClientHello and reset the connection at once; HAProxy must stay up, serve
# again and stop cleanly. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
for tool in haproxy h2load; do
    if ! command -v "$tool" >/dev/null; then
        skip "$tool not installed (apt-get install haproxy nghttp2-client)"
        tap_end
    fi
done
certs
export MBCRYPTO_SERVE=all
ctr="$scratch/haproxy.ctr"
port=$(free_port)
port_ec=$(free_port)
body="hello from mbcrypto"
cat > "$scratch/haproxy.cfg" <<CFG
global
    ssl-provider-path $MBC_PROVIDER_DIR
    ssl-provider mbcrypto
    ssl-provider default
    ssl-propquery ?provider=mbcrypto
    ssl-mode-async
    nbthread 1
defaults
    mode http
    timeout connect 5s
    timeout client 10s
    timeout server 10s
frontend fe
    bind 127.0.0.1:$port ssl crt $MBC_TEST_CERTS/rsa2048.pem alpn h2,http/1.1 ssl-min-ver TLSv1.3
    http-request return status 200 content-type text/plain string "$body"
frontend fe_ec
    bind 127.0.0.1:$port_ec ssl crt $MBC_TEST_CERTS/ec256.pem alpn h2,http/1.1 ssl-min-ver TLSv1.3 curves P-256
    http-request return status 200 content-type text/plain string "$body"
CFG
# start_haproxy [VAR=VALUE...]: HAProxy on the config above, with the
# counters file $ctr and the variables given; its pid in hpid.
start_haproxy() {
    env "$@" MBCRYPTO_COUNTERS_FILE="$ctr" "${OSSL_RUN[@]}" "$(command -v haproxy)" \
        -f "$scratch/haproxy.cfg" -db > "$scratch/haproxy.log" 2>&1 &
    hpid=$!
    pids+=("$hpid")
    if ! wait_port "$port" || ! wait_port "$port_ec"; then
        not_ok "haproxy did not start"
        sed 's/^/#   /' "$scratch/haproxy.log"
        tap_end
    fi
}
# stop_haproxy: a soft stop, which must end cleanly.
stop_haproxy() {
    kill -USR1 "$hpid"
    timeout 20 tail --pid="$hpid" -f /dev/null
    wait "$hpid"
    check "haproxy stopped cleanly" test $? -eq 0
}
start_haproxy
ok "haproxy started ($("${OSSL_RUN[@]}" "$(command -v haproxy)" -vv 2>/dev/null |
    grep 'Running on OpenSSL' | sed 's/.*: //'))"
nfd() { ls "/proc/$hpid/fd" 2>/dev/null | wc -l; }
# settle: until HAProxy's fd count is back to $1 (at most 5 s).
settle() {
    local i
    for i in $(seq 50); do
        [ "$(nfd)" -le "$1" ] && return 0
        sleep 0.1
    done
    return 1
}
fd0=$(nfd)
note "haproxy fds at start: $fd0"

# load C N [PORT SIGN KX [together ALGS]]: h2load, C connections, N requests
# (each connection a full TLS 1.3 handshake) to PORT (default: the RSA
# frontend), whose handshakes must count C signatures SIGN and C key
# exchanges KX. Whether handshakes overlap inside HAProxy depends on the
# CPU's speed (a lone request never waits to be batched), so a plain run
# asserts what holds on any CPU: every request served, every handshake's
# operations by mbcrypto, fds back; the batched count is a note. With
# "together", HAProxy is stopped (SIGSTOP) until the kernel holds all C
# ClientHellos, then resumed, on a HAProxy whose requests wait for others up
# to 100 ms (see the together runs below): their requests meet in the lane
# manager on any CPU, and batching is asserted; but where every family of
# the run (ALGS, mbc_alg numbers) has an implementation of one lane (EC and
# X25519 without IFMA: one_lane), its requests run at once instead, unbatched.
load() {
    local c=$1 n=$2 p=${3:-$port} sig=${4:-ops-rsa-sign} kx=${5:-ops-x25519-derive}
    local together=${6:-} algs=${7:-}
    local out="$scratch/h2load.$1.$p$together"
    local sign0 kx0 gcm0 queued=1
    sign0=$(counter "$ctr" "$sig")
    kx0=$(counter "$ctr" "$kx")
    gcm0=$(counter "$ctr" ops-aes-gcm-encrypt)
    batched0=$(counter "$ctr" async-batched)
    atonce0=$(counter "$ctr" async-at-once)
    if [ -n "$together" ]; then
        kill -STOP "$hpid"
        timeout 120 h2load -n "$n" -c "$c" "https://127.0.0.1:$p/" > "$out" 2>&1 &
        local lpid=$!
        wait_queued "$p" "$c" || queued=0
        kill -CONT "$hpid"
        wait "$lpid"
    else
        timeout 120 h2load -n "$n" -c "$c" "https://127.0.0.1:$p/" > "$out" 2>&1
    fi
    if ! grep -q "requests: $n total, $n started, $n done, $n succeeded, 0 failed" "$out" ||
        ! grep -q "status codes: $n 2xx" "$out"; then
        not_ok "h2load -c $c -n $n $together: $(grep -E 'requests:' "$out")"
        tail -n 5 "$out" | sed 's/^/#   /'
        return
    fi
    local signs kxs gcms batched
    signs=$(($(counter "$ctr" "$sig") - sign0))
    kxs=$(($(counter "$ctr" "$kx") - kx0))
    gcms=$(($(counter "$ctr" ops-aes-gcm-encrypt) - gcm0))
    batched=$(($(counter "$ctr" async-batched) - batched0))
    atonce=$(($(counter "$ctr" async-at-once) - atonce0))
    note "-c $c $together ($sig): $signs signatures, $kxs key exchanges ($kx)," \
        "$gcms records sealed, $batched batched by mbcrypto, $atonce at once"
    check "h2load -c $c -n $n $together ($sig, $kx): all succeeded, signed and keys exchanged by mbcrypto" \
        test "$signs" -ge "$c" -a "$kxs" -ge "$c" -a "$gcms" -ge "$n"
    if [ -n "$together" ]; then
        check "h2load -c $c together: all $c ClientHellos queued while HAProxy was stopped" \
            test "$queued" = 1
        # shellcheck disable=SC2086 # algs: a list of numbers
        if one_lane $algs; then
            check "h2load -c $c together: one lane, requests run at once, none batched" \
                test "$batched" -eq 0 -a "$atonce" -ge "$c"
        else
            check "h2load -c $c together: requests batched" test "$batched" -ge 2
        fi
    fi
    check "h2load -c $c $together: fds back to $fd0" settle "$fd0"
}
load 1 4
load 8 32
load 64 256
for c in 1 8 64; do
    load "$c" $((4 * c)) "$port_ec" ops-ecdsa-sign ops-ecdh
done

# The body, over HTTP/1.1.
resp=$(printf 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' |
    timeout 30 "${OPENSSL[@]}" s_client -connect "127.0.0.1:$port" -quiet -alpn http/1.1 \
        2>/dev/null)
check "response body is \"$body\"" grep -q "^$body" <<< "$resp"

# Handshakes torn down mid-flight.
sign0=$(counter "$ctr" ops-rsa-sign)
pause0=$(counter "$ctr" async-pauses)
if python3 "$MBC_SRC/tests/openssl/abrupt_clients.py" "$port" 32; then
    sleep 1
    note "abrupt clients: $(($(counter "$ctr" ops-rsa-sign) - sign0)) signatures," \
        "$(($(counter "$ctr" async-pauses) - pause0)) pauses"
    check "abrupt clients: haproxy alive" kill -0 "$hpid"
    check "abrupt clients: fds back to $fd0" settle "$fd0"
else
    not_ok "abrupt clients could not connect"
fi
load 8 16

stop_haproxy

# The "together" runs, on a fresh HAProxy with the lone-request rule off and
# a max wait of 100 ms (MBCRYPTO_MAX_WAIT_US). Without the wait, a paused
# job may be resumed, and its partial batch run, before HAProxy has read the
# next queued ClientHello: the order of its event loop decides, and the
# ECDSA runs were seen unbatched. With it, a request waits until its class
# is full or 100 ms have passed, far longer than HAProxy takes to read 8
# queued ClientHellos. The lone-request rule is off as any max wait turns it
# off (the rule itself is test_mbo's).
ctr="$scratch/haproxy-together.ctr"
start_haproxy MBCRYPTO_LONE_AT_ONCE=0 MBCRYPTO_MAX_WAIT_US=100000
fd0=$(nfd)
load 8 8 "$port" ops-rsa-sign ops-x25519-derive together "0 3"
load 8 8 "$port_ec" ops-ecdsa-sign ops-ecdh together 2
stop_haproxy
tap_end
