#!/usr/bin/env bash
# bench/sync_bench.sh - requests outside ASYNC jobs (nginx or HAProxy without
# async mode, clients, signing tools): openssl speed without -async_jobs,
# OpenSSL's default provider against mbcrypto's provider and ENGINE with the
# configuration programs get (serve = auto, MBCRYPTO_SERVE unset), on
# OpenSSL 3.0 (the system's) and the 3.5 the tests unpack. Not a test: it
# prints a table of medians and ratios to the default provider.
#
#   bash bench/sync_bench.sh [BUILD_DIR]      (default: build)
#
# Environment: REPS (default 5 runs of each), SECONDS_PER_RUN (default 2),
# PROVIDER_DIR and ENGINE_DIR (where mbcrypto.so is: default BUILD_DIR's;
# give another build's to compare), OPENSSL35_ROOT (default
# build/openssl35/root; skipped when absent), OSSL (30, 35 or "30 35").
# The runs of one operation are interleaved (default, provider, ENGINE,
# default, ...) so that load changing during a run weighs on all three;
# every run is pinned to CPU 1; rates are per CPU second (speed's default).
# Then bench/sync_ab (when built): the same P-256 and X25519 requests in one
# process, the least CPU time of 200 batches each, against the default
# provider: finer than speed's rates on a loaded machine.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$top/tools/ossl35.sh"
build=$(cd "${1:-$top/build}" && pwd)
reps=${REPS:-5}
secs=${SECONDS_PER_RUN:-2}
prov=${PROVIDER_DIR:-$build/openssl}
eng=${ENGINE_DIR:-$build/openssl/engine}
r35=${OPENSSL35_ROOT:-$top/build/openssl35/root}
unset MBCRYPTO_SERVE

# ossl VERSION: the command of that OpenSSL's openssl, in OSSL_CMD.
ossl() {
    if [ "$1" = 35 ]; then
        ossl35_run "$r35"
        OSSL_CMD=("${OSSL35_RUN[@]}" "$r35/usr/bin/openssl")
    else
        OSSL_CMD=(openssl)
    fi
}

# rates VERSION WHO SPEED_ARGS...: one run's rates: for public-key
# operations the second half of the numbers of speed's result line (sign/s
# and verify/s, or op/s), for ciphers the kB/s.
rates() {
    local v=$1 who=$2
    shift 2
    local load=()
    case $who in
    provider) load=(-provider-path "$prov" -provider mbcrypto -provider default
                    -propquery '?provider=mbcrypto') ;;
    engine) load=(-engine mbcrypto) ;;
    *) load=(-provider default) ;;
    esac
    ossl "$v"
    OPENSSL_ENGINES=$eng taskset -c 1 "${OSSL_CMD[@]}" speed -seconds "$secs" "${load[@]}" "$@" \
        2>/dev/null | python3 -c '
import re, sys
for line in sys.stdin:
    if re.match(r"^(rsa\s+\d+\s+bits|\s*\d+\s+bits\s+ec(dsa|dh))", line):
        tail = re.sub(r"\([^)]*\)", " ", line.split("bits", 1)[1])
        nums = [t.rstrip("s") for t in tail.split() if re.fullmatch(r"[\d.]+s?", t)]
        print(",".join(nums[len(nums) // 2:])); break
    if re.match(r"^aes-\d+-gcm", line, re.I):
        print(line.split()[-1].rstrip("k")); break
else:
    print("nan,nan")'
}

# Rows: the labels of the rates (comma-separated), then speed's arguments.
rows=(
    "rsa2048-sign,rsa2048-verify|rsa2048"
    "ecdsap256-sign,ecdsap256-verify|ecdsap256" "ecdhp256|ecdhp256" "ecdhx25519|ecdhx25519"
    "ecdsap384-sign,ecdsap384-verify|ecdsap384" "ecdhp384|ecdhp384"
    "aes-128-gcm-16k|-evp aes-128-gcm -bytes 16384"
    "aes-256-gcm-16k|-evp aes-256-gcm -bytes 16384"
    "aes-128-gcm-1k-aead|-evp aes-128-gcm -aead -bytes 1024"
)

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')" \
    "(family $(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //')," \
    "model $(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | sed 's/.*: //')); load at start:" \
    "$(cut -d' ' -f1-3 /proc/loadavg); $reps runs of ${secs}s each, medians"
for v in ${OSSL:-30 35}; do
    if [ "$v" = 35 ] && [ ! -x "$r35/usr/bin/openssl" ]; then
        echo "(no OpenSSL 3.5 at $r35: skipped)"
        continue
    fi
    echo
    ossl "$v"
    echo "OpenSSL: $("${OSSL_CMD[@]}" version)"
    printf '%-20s %12s %12s %12s %8s %8s\n' op default provider engine prov/def eng/def
    for row in "${rows[@]}"; do
        IFS='|' read -r labels args <<< "$row"
        d=() p=() e=()
        for ((i = 0; i < reps; i++)); do
            # shellcheck disable=SC2086
            d+=("$(rates "$v" default $args)")
            # shellcheck disable=SC2086
            p+=("$(rates "$v" provider $args)")
            # shellcheck disable=SC2086
            e+=("$(rates "$v" engine $args)")
        done
        python3 - "$labels" "${d[*]}" "${p[*]}" "${e[*]}" <<'PY'
import statistics, sys
labels = sys.argv[1].split(",")
runs = [[[float(x) for x in r.split(",")] for r in c.split()] for c in sys.argv[2:]]
for i, label in enumerate(labels):
    col = [[r[i] for r in c] for c in runs]
    med = [statistics.median(c) for c in col]
    print("%-20s %12.1f %12.1f %12.1f %7.2fx %7.2fx" % (label, *med, med[1] / med[0],
                                                       med[2] / med[0]))
    print("%-20s %s" % ("", " | ".join(" ".join("%.0f" % x for x in c) for c in col)))
PY
    done
done
# The same requests in one process (bench/sync_ab.c): the least CPU time
# per operation, provider against the default provider.
if [ -x "$build/bench/sync_ab" ]; then
    for v in ${OSSL:-30 35}; do
        [ "$v" = 35 ] && [ ! -x "$r35/usr/bin/openssl" ] && continue
        ossl "$v"
        echo
        echo "In one process (sync_ab), OpenSSL $("${OSSL_CMD[@]}" version | cut -d' ' -f2):"
        run=()
        [ "$v" = 35 ] && run=("${OSSL_CMD[@]:0:3}")
        taskset -c 1 "${run[@]}" "$build/bench/sync_ab" "$prov"
    done
fi
echo
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
