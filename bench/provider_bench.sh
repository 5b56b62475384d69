#!/usr/bin/env bash
# bench/provider_bench.sh - the provider's speed next to mbcrypto's raw rates
# and OpenSSL alone (issue 13's speed section). Not a test: it prints tables.
#
#   bash bench/provider_bench.sh [BUILD_DIR]      (default: build)
#
# 1. openssl speed, pinned to CPU 1 (bench/ossl_speed.sh), RSA 2048/3072/4096
#    sign and verify: through mbcrypto with -async_jobs 8, -async_jobs 1 and
#    no async; the default provider alone; and mbc_bench's raw 8-lane rate
#    (mbc_rsa_*_mb8, every lane full) with the provider's share of it.
#    AES-128/256-GCM (-evp, 16 KiB, and -aead at 1 KiB and 64 B: TLS-like
#    messages, re-keyed as speed does) through mbcrypto and the default
#    provider.
# 2. HAProxy TLS 1.3 full handshakes per second, HAProxy pinned to CPU 1 and
#    h2load to CPU 0, RSA-2048 certificate, at 1 and 64 concurrent
#    connections: the default provider alone, then mbcrypto beside it; with
#    the p50 of one handshake-plus-request at 1 connection and the client's
#    CPU share (is the client the limit?).
#
# The provider runs with MBCRYPTO_SERVE=all so that it serves on any CPU (on
# one without IFMA, RSA then runs mbcrypto's portable code). Rates are per
# CPU second (openssl speed's default, mbc_bench --cpu-time) so that other
# load on a shared machine weighs less; the HAProxy rates are wall-clock.
# Environment: SECONDS_PER_RUN (default 2), HANDSHAKE_RUNS (default 30).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
secs=${SECONDS_PER_RUN:-2}
runs=${HANDSHAKE_RUNS:-30}
OURS=(-provider-path "$build/openssl" -provider mbcrypto -provider default
      -propquery '?provider=mbcrypto')
ELAPSED=0
export MBCRYPTO_SERVE=all
tmp=$(mktemp -d)
hpid=""
trap '[ -n "$hpid" ] && kill "$hpid" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$top/bench/ossl_speed.sh"

speed_header
rsa_table
ec_table
gcm_table

# ---------------------------------------------------------------- HAProxy
if ! command -v haproxy >/dev/null || ! command -v h2load >/dev/null; then
    echo "HAProxy or h2load missing (apt-get install haproxy nghttp2-client): no handshake table"
    exit 0
fi
key=$tmp/rsa2048.pem
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/k" -out "$tmp/c" -subj /CN=localhost \
    -days 2 2>/dev/null
cat "$tmp/c" "$tmp/k" > "$key"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# haproxy_cfg WITH_MBCRYPTO: the configuration.
haproxy_cfg() {
    echo "global"
    echo "    nbthread 1"
    if [ "$1" = 1 ]; then
        echo "    ssl-provider-path $build/openssl"
        echo "    ssl-provider mbcrypto"
        echo "    ssl-provider default"
        echo "    ssl-propquery ?provider=mbcrypto"
        echo "    ssl-mode-async"
    fi
    cat <<CFG
defaults
    mode http
    timeout connect 5s
    timeout client 10s
    timeout server 10s
frontend fe
    bind 127.0.0.1:$port ssl crt $key alpn h2 ssl-min-ver TLSv1.3 curves X25519
    http-request return status 200 content-type text/plain string "hello"
CFG
}

# handshakes C: runs h2load -c C -n C (one full handshake and one request
# per connection) $runs times; prints handshakes/s, p50 ms of a run, the
# client's CPU share.
handshakes() {
    local c=$1 i
    : > "$tmp/times"
    local TIMEFORMAT='%U %S %R'
    { time (
        for i in $(seq "$runs"); do
            out=$(taskset -c 0 h2load -c "$c" -n "$c" "https://127.0.0.1:$port/" 2>&1)
            grep -q "$c succeeded" <<< "$out" || { echo "h2load failed: $out" >&2; exit 1; }
            sed -n 's/^finished in \([0-9.]*\)\(m\?s\),.*/\1 \2/p' <<< "$out" >> "$tmp/times"
        done
    ); } 2> "$tmp/cpu"
    python3 - "$tmp/times" "$((runs * c))" "$tmp/cpu" <<'PY'
import statistics, sys
t = []
for line in open(sys.argv[1]):
    v, unit = line.split()
    t.append(float(v) / (1000.0 if unit == "ms" else 1.0))
u, s, r = map(float, open(sys.argv[3]).read().split()[-3:])
print("%8.0f %10.2f %8.0f%%" % (int(sys.argv[2]) / sum(t), 1000 * statistics.median(t),
                                100 * (u + s) / r))
PY
}

printf '\n%-24s %11s %8s %7s %12s %8s %7s\n' "HAProxy TLS 1.3 RSA-2048" "1 conn hs/s" "p50 ms" \
    "client" "64 conn hs/s" "run ms" "client"
for with in 0 1; do
    haproxy_cfg "$with" > "$tmp/h.cfg"
    MBCRYPTO_COUNTERS_FILE=$tmp/ctr taskset -c 1 haproxy -f "$tmp/h.cfg" -db > "$tmp/h.log" 2>&1 &
    hpid=$!
    sleep 1
    read -r r1 p1 c1 <<< "$(handshakes 1)"
    read -r r64 p64 c64 <<< "$(handshakes 64)"
    kill "$hpid"
    wait "$hpid" 2>/dev/null || true
    hpid=""
    label=$([ "$with" = 1 ] && echo "mbcrypto + default" || echo "default provider alone")
    printf '%-24s %11s %8s %7s %12s %8s %7s\n' "$label" "$r1" "$p1" "$c1" "$r64" "$p64" "$c64"
done
echo "(full handshakes per wall second, h2load on CPU 0, HAProxy on CPU 1, X25519 key share;"
echo " p50 ms: median h2load run (1 conn: one handshake and request), client: h2load's CPU share)"
if [ -s "$tmp/ctr" ]; then
    echo "mbcrypto counters of the HAProxy runs:"
    python3 "$top/tests/openssl/counters.py" "$tmp/ctr" | sed 's/^/  /'
fi
