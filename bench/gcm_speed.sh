#!/usr/bin/env bash
# bench/gcm_speed.sh - AES-GCM records through OpenSSL, issue 23's table:
# openssl speed -elapsed, -evp at 16 KiB and -aead at 1 KiB and 64 B, for
# the default provider, mbcrypto's provider, mbcrypto's ENGINE and, given
# its directory, QAT_Engine (tools/build_qat_engine.sh), under the system's
# OpenSSL (3.0) and Debian 13's 3.5 (tools/openssl35.sh, when unpacked).
# Not a test: it prints a table.
#
#   bash bench/gcm_speed.sh [options] [BUILD_DIR]        (default: build)
#     --reps N         runs of each cell, interleaved (default 5); the median
#     --seconds S      seconds per run (default 1)
#     --cipher NAME    default aes-256-gcm
#     --qat DIR        QAT_Engine's qatengine.so is in DIR (engines dir)
#     --ossl35 DIR     the unpacked 3.5 (default BUILD_DIR/openssl35)
#     --only 30|35     one OpenSSL only
#     --base DIR       also another build's provider and ENGINE (columns
#                      prov0, eng0: before and after a change, same runs)
#     --cpu            rates per CPU second (speed without -elapsed): on a
#                      loaded machine wall-clock rates say little
#
# Every run is pinned to CPU 1; the load average is printed before and
# after, since on a shared machine wall-clock rates move with it: compare
# the ratios (each cell against the default provider and QAT_Engine of the
# same OpenSSL), which are medians of interleaved runs.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$top/tools/ossl35.sh"
reps=5 secs=1 cipher=aes-256-gcm qat="" o35="" only="" build="" base="" timing=-elapsed
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --cipher) cipher=$2; shift 2 ;;
    --qat) qat=$(cd "$2" && pwd); shift 2 ;;
    --ossl35) o35=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --base) base=$(cd "$2" && pwd); shift 2 ;;
    --cpu) timing=""; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "gcm_speed: unknown option $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
build=$(cd "${build:-$top/build}" && pwd)
o35=${o35:-$build/openssl35}
[ -f "$build/openssl/mbcrypto.so" ] || { echo "gcm_speed: no $build/openssl/mbcrypto.so" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcm_speed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The OpenSSLs: a name and the command prefix that runs its openssl.
versions=()
[ "$only" != 35 ] && versions+=(30)
if [ "$only" != 30 ] && [ -x "$o35/root/usr/bin/openssl" ]; then
    versions+=(35)
fi
# ossl V: sets cmd to the command that runs OpenSSL V's openssl (3.5
# through its own loader: Debian 13's libraries need its C library).
ossl() {
    if [ "$1" = 35 ]; then
        ossl35_run "$o35/root"
        cmd=("${OSSL35_RUN[@]}" "$o35/root/usr/bin/openssl")
    else
        cmd=(openssl)
    fi
}

# The peers: a name and the flags (and engines directory) that select it.
peers=(default provider engine)
[ -n "$base" ] && peers+=(prov0 eng0)
[ -n "$qat" ] && peers+=(qat)
flags_of() {
    case $1 in
    default) echo "-provider default" ;;
    provider) echo "-provider-path $build/openssl -provider mbcrypto -provider default" \
        "-propquery ?provider=mbcrypto" ;;
    prov0) echo "-provider-path $base/openssl -provider mbcrypto -provider default" \
        "-propquery ?provider=mbcrypto" ;;
    engine | eng0) echo "-engine mbcrypto" ;;
    qat) echo "-engine qatengine" ;;
    esac
}
engines_of() {
    case $1 in
    engine) echo "$build/openssl/engine" ;;
    eng0) echo "$base/openssl/engine" ;;
    qat) echo "$qat" ;;
    *) echo "" ;;
    esac
}
rows=("16k:-bytes 16384" "aead-1k:-aead -bytes 1024" "aead-64:-aead -bytes 64")

# one V PEER ROW: one run's rate in MB/s (speed prints kB/s, 1000 bytes),
# or "-" when the run failed.
one() {
    local peer=$2 mode=${3#*:} e out cmd
    ossl "$1"
    e=$(engines_of "$peer")
    # shellcheck disable=SC2046
    out=$(OPENSSL_ENGINES=${e:-${OPENSSL_ENGINES:-}} taskset -c 1 "${cmd[@]}" speed $timing \
        -seconds "$secs" $(flags_of "$peer") $mode -evp "$cipher" 2> "$tmp/err") || true
    awk -v c="$cipher" 'tolower($1) == c && $NF ~ /k$/ { sub(/k$/, "", $NF); v = $NF }
        END { if (v == "") print "-"; else printf "%.1f\n", v / 1000 }' <<< "$out"
}

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') (family" \
    "$(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //'), model" \
    "$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | sed 's/.*: //')), $(nproc) CPUs;" \
    "MBCRYPTO_SERVE=${MBCRYPTO_SERVE:-auto}"
for v in "${versions[@]}"; do
    ossl "$v"
    echo "OpenSSL $v: $("${cmd[@]}" version)"
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < reps; r++)); do
    for v in "${versions[@]}"; do
        for row in "${rows[@]}"; do
            for p in "${peers[@]}"; do
                echo "$v ${row%%:*} $p $(one "$v" "$p" "$row")" >> "$tmp/runs"
            done
        done
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 - "$tmp/runs" "$cipher" "$reps" "$secs" "${peers[*]}" "${timing:-per CPU second}" <<'PY'
import statistics, sys
runs, cipher, reps, secs, peers, timing = sys.argv[1:7]
peers = peers.split()
cells = {}
for line in open(runs):
    v, row, peer, rate = line.split()
    cells.setdefault((v, row, peer), []).append(rate)
def med(k):
    vals = [float(x) for x in cells.get(k, []) if x != "-"]
    return statistics.median(vals) if vals else None
print("openssl speed %s -evp %s, MB/s (10^6 bytes), median of %s runs of %s s, CPU 1"
      % (timing, cipher, reps, secs))
hdr = "%-4s %-8s" + " %9s" * len(peers) + " | %s"
print(hdr % (("ossl", "row") + tuple(peers) + ("ratios",)))
for v in sorted({k[0] for k in cells}):
    for row in ("16k", "aead-1k", "aead-64"):
        m = {p: med((v, row, p)) for p in peers}
        rat = []
        for p in ("provider", "engine"):
            for base in ("default", "qat", "prov0" if p == "provider" else "eng0"):
                if base in m and m[p] and m[base]:
                    rat.append("%s/%s %.2fx" % (p[:4], base[:4], m[p] / m[base]))
        if "qat" in m and m["qat"] and m["default"]:
            rat.append("qat/defa %.2fx" % (m["qat"] / m["default"]))
        print(hdr % ((v, row) + tuple("%.0f" % m[p] if m[p] else "-" for p in peers)
                     + ("  ".join(rat),)))
PY
