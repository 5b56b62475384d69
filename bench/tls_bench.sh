#!/usr/bin/env bash
# bench/tls_bench.sh - TLS the way operators count it: full handshakes and
# response bytes per second of the server's own CPU time, HAProxy with the
# default provider alone against HAProxy with mbcrypto's provider (issue 23).
# Not a test: it prints tables (and JSON with --json).
#
#   bash bench/tls_bench.sh [options] [BUILD_DIR]        (default: build)
#     --json FILE       also write every row as JSON to FILE ("-": stdout)
#     --duration S      seconds of load per row (default 4)
#     --reps N          run each row N times, the two providers alternating
#                       (default 1); the tables give the median of the N
#                       runs of each, the ratio of those medians and the
#                       range of the N per-repetition ratios
#     --conns "1 8 64"  the concurrent connections of the handshake rows
#     --only LIST       comma-separated row names (default: all; see --list)
#     --list            print the row names and exit
#     --profile         also sample HAProxy (perf record -e cpu-clock) during
#                       each 64-connection row (--profile-at), with either
#                       provider, and
#                       split its CPU into mbcrypto, libcrypto, libssl,
#                       HAProxy, kernel, with its hottest symbols
#     --no-async        HAProxy with mbcrypto without ssl-mode-async (every
#                       request at once, on the calling thread: no batching)
#     --profile-at "C"  the connection counts --profile samples (default 64;
#                       e.g. "1 64"; the bulk rows run at 1 and 64);
#                       PERF_FREQ: samples per second (default 2000)
#     --perf-dir DIR    keep the perf reports (perf-ROW-WITH-CONNS.txt) in DIR
#
# HAProxy (Debian's stock package, one thread, ssl-mode-async with mbcrypto)
# runs pinned to CPU 1 and h2load to CPU 0, both on 127.0.0.1. For each row:
#   hs/cpu-s   full handshakes (no resumption: every h2load run is a new
#              client) per second of HAProxy's CPU time, read from the
#              scheduler's per-thread run time (/proc/PID/task/*/schedstat,
#              the nanosecond form of utime + stime);
#   MB/cpu-s   for the bulk rows, response bytes per server CPU second;
#   wall/s     the same per wall second, and "client": h2load's CPU share of
#              the wall time. A client near 100% is the limit of the wall
#              rate, not of the per-CPU-second one.
# Rows:
#   rsa-x25519     TLS 1.3, RSA-2048 certificate, X25519 key share
#   ecdsa-x25519   TLS 1.3, ECDSA P-256 certificate, X25519 key share
#   ecdsa-p256     TLS 1.3, ECDSA P-256 certificate, P-256 key share
#   tls12-rsa      TLS 1.2 ECDHE-RSA-AES128-GCM-SHA256 (X25519)
#   tls12-ecdsa    TLS 1.2 ECDHE-ECDSA-AES256-GCM-SHA384 (X25519)
#   bulk-1k        TLS 1.3 (RSA-2048, X25519), 1 KiB responses over kept-alive
#   bulk-64k       connections (1 and 64 of them), 64 KiB responses
# The client's key share is fixed by its own OpenSSL configuration (Groups),
# so no row pays a HelloRetryRequest. MBCRYPTO_SERVE is passed through
# (unset: the provider's "auto", as a system-wide installation runs).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
json=""
dur=4
reps=1
conns="1 8 64"
only=""
profile=0
profile_at=64
async=1
perf_dir=""
all_rows="rsa-x25519 ecdsa-x25519 ecdsa-p256 tls12-rsa tls12-ecdsa bulk-1k bulk-64k"
build=""
while [ $# -gt 0 ]; do
    case $1 in
    --json) json=$2; shift 2 ;;
    --duration) dur=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    --only) only=${2//,/ }; shift 2 ;;
    --list) echo "$all_rows"; exit 0 ;;
    --profile) profile=1; shift ;;
    --profile-at) profile_at=$2; shift 2 ;;
    --perf-dir) perf_dir=$2; shift 2 ;;
    --no-async) async=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tls_bench: unknown option $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
case $reps in '' | *[!0-9]* | 0) echo "tls_bench: --reps needs a positive count" >&2; exit 2 ;; esac
build=$(cd "${build:-$top/build}" && pwd)
rows=${only:-$all_rows}
for r in $rows; do
    case " $all_rows " in *" $r "*) ;; *) echo "tls_bench: unknown row $r (--list)" >&2; exit 2 ;; esac
done
for tool in haproxy h2load openssl python3 taskset; do
    command -v "$tool" >/dev/null || {
        echo "tls_bench: $tool missing (apt-get install haproxy nghttp2-client openssl python3)" >&2
        exit 1
    }
done
[ "$profile" = 1 ] && ! command -v perf >/dev/null && { echo "tls_bench: --profile needs perf" >&2; exit 1; }
[ -f "$build/openssl/mbcrypto.so" ] || { echo "tls_bench: no $build/openssl/mbcrypto.so" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tls_bench.XXXXXX")
hpid=""
cleanup() {
    if [ -n "$hpid" ]; then
        kill "$hpid" 2>/dev/null || true
        wait "$hpid" 2>/dev/null || true
    fi
    if [ -n "$perf_dir" ]; then
        mkdir -p "$perf_dir" && cp "$tmp"/perf-*.txt "$perf_dir"/ 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# Certificates: RSA-2048 and ECDSA P-256, self-signed, made by the default provider.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/rk" -out "$tmp/rc" -subj /CN=localhost \
    -days 2 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/ek" \
    -out "$tmp/ec" -subj /CN=localhost -days 2 2>/dev/null
cat "$tmp/rc" "$tmp/rk" > "$tmp/rsa.pem"
cat "$tmp/ec" "$tmp/ek" > "$tmp/ecdsa.pem"
head -c 1024 /dev/zero | tr '\0' a > "$tmp/1k"
head -c 65536 /dev/zero | tr '\0' b > "$tmp/64k"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# client_cnf GROUP: an OpenSSL configuration for h2load offering only GROUP.
client_cnf() {
    cat > "$tmp/client-$1.cnf" <<CNF
openssl_conf = openssl_init
[openssl_init]
ssl_conf = ssl_sect
[ssl_sect]
system_default = system_default_sect
[system_default_sect]
Groups = $1
CNF
    echo "$tmp/client-$1.cnf"
}

# row_params ROW: sets cert, group, tls ("13" or "12"), cipher, path.
row_params() {
    cert=rsa group=X25519 tls=13 cipher="" path=/
    case $1 in
    rsa-x25519) ;;
    ecdsa-x25519) cert=ecdsa ;;
    ecdsa-p256) cert=ecdsa group=P-256 ;;
    tls12-rsa) tls=12 cipher=ECDHE-RSA-AES128-GCM-SHA256 ;;
    tls12-ecdsa) cert=ecdsa tls=12 cipher=ECDHE-ECDSA-AES256-GCM-SHA384 ;;
    bulk-1k) path=/1k ;;
    bulk-64k) path=/64k ;;
    esac
}

# haproxy_cfg WITH_MBCRYPTO: the configuration of the current row.
haproxy_cfg() {
    local ver curves
    if [ "$tls" = 12 ]; then
        ver="ssl-min-ver TLSv1.2 ssl-max-ver TLSv1.2 ciphers $cipher"
    else
        ver="ssl-min-ver TLSv1.3"
    fi
    curves=$group
    echo "global"
    echo "    nbthread 1"
    echo "    tune.bufsize 73728"  # a 64 KiB response fits; below malloc's mmap threshold
    if [ "$1" = 1 ]; then
        echo "    ssl-provider-path $build/openssl"
        echo "    ssl-provider mbcrypto"
        echo "    ssl-provider default"
        echo "    ssl-propquery ?provider=mbcrypto"
        if [ "$async" = 1 ]; then echo "    ssl-mode-async"; fi
    fi
    cat <<CFG
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend fe
    bind 127.0.0.1:$port ssl crt $tmp/$cert.pem alpn h2 $ver curves $curves
    http-request return status 200 content-type text/plain file $tmp/1k if { path /1k }
    http-request return status 200 content-type text/plain file $tmp/64k if { path /64k }
    http-request return status 200 content-type text/plain string "hello"
CFG
}

# server_ns: nanoseconds of CPU HAProxy's threads have run so far.
server_ns() {
    cat /proc/"$hpid"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

now_ns() { date +%s%N; }

# start_haproxy WITH: starts HAProxy on CPU 1 and waits for its port.
start_haproxy() {
    haproxy_cfg "$1" > "$tmp/h.cfg"
    MBCRYPTO_COUNTERS_FILE=$tmp/ctr-$row taskset -c 1 haproxy -f "$tmp/h.cfg" -db \
        > "$tmp/h.log" 2>&1 &
    hpid=$!
    local i
    for i in $(seq 100); do
        if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),0.2)" \
            2>/dev/null; then
            return 0
        fi
        kill -0 "$hpid" 2>/dev/null || break
        sleep 0.05
    done
    echo "tls_bench: HAProxy did not start:" >&2
    cat "$tmp/h.log" >&2
    exit 1
}

stop_haproxy() {
    kill "$hpid" 2>/dev/null || true
    wait "$hpid" 2>/dev/null || true
    hpid=""
}

# h2load_loop MODE C: load for $dur seconds. MODE hs: h2load -c C -n C runs
# (one full handshake and one request per connection) one after another;
# MODE bulk: one h2load of C kept-alive connections for $dur seconds. Prints
# "requests wall_ns server_ns client_ns".
h2load_loop() {
    local mode=$1 c=$2 reqs=0 out n t0 s0 t1 s1 c0 c1 me=$BASHPID
    local url="https://127.0.0.1:$port$path"
    local env=(env OPENSSL_CONF="$(client_cnf "$group")")
    # one warm-up connection, not counted
    "${env[@]}" taskset -c 0 h2load -c 1 -n 1 "$url" > /dev/null 2>&1 || true
    c0=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$me/stat)
    t0=$(now_ns)
    s0=$(server_ns)
    if [ "$mode" = hs ]; then
        local end=$((t0 + dur * 1000000000)) runs=0
        while [ "$(now_ns)" -lt "$end" ] && [ $runs -lt 100000 ]; do
            out=$("${env[@]}" taskset -c 0 h2load -c "$c" -n "$c" "$url" 2>&1) || true
            n=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' <<< "$out")
            [ "${n:-0}" = "$c" ] || { echo "tls_bench: h2load failed: $out" >&2; exit 1; }
            reqs=$((reqs + n))
            runs=$((runs + 1))
        done
    else
        out=$("${env[@]}" taskset -c 0 h2load -c "$c" -m 1 -D "$dur" "$url" 2>&1) || true
        n=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' <<< "$out")
        [ "${n:-0}" -gt 0 ] || { echo "tls_bench: h2load failed: $out" >&2; exit 1; }
        grep -q ' 0 failed, 0 errored' <<< "$out" || { echo "tls_bench: h2load: $out" >&2; exit 1; }
        reqs=$n
    fi
    s1=$(server_ns)
    t1=$(now_ns)
    c1=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$me/stat)
    echo "$reqs $((t1 - t0)) $((s1 - s0)) $(((c1 - c0) * 1000000000 / $(getconf CLK_TCK)))"
}

# profile_split: perf record HAProxy for $dur seconds (while a load runs) and
# print the shares of its samples by object.
profile_split() {
    perf record -q -e cpu-clock -F "${PERF_FREQ:-2000}" -p "$hpid" -o "$tmp/perf.data" -- sleep "$dur" \
        > /dev/null 2>&1 || return 0
    perf report -i "$tmp/perf.data" --no-children --sort dso,sym --stdio 2> /dev/null |
        tee "$tmp/perf-$row-$with-$c.txt" |
        python3 -c '
import re, sys
shares = {}
for line in sys.stdin:
    m = re.match(r"\s*([0-9.]+)%\s+(\S+)", line)
    if not m:
        continue
    pct, dso = float(m.group(1)), m.group(2)
    if "mbcrypto" in dso:
        k = "mbcrypto"
    elif "libcrypto" in dso:
        k = "libcrypto"
    elif "libssl" in dso:
        k = "libssl"
    elif "haproxy" in dso:
        k = "haproxy"
    elif "kernel" in dso:
        k = "kernel"
    else:
        k = "other"
    shares[k] = shares.get(k, 0.0) + pct
print(" ".join("%s=%.1f" % (k, shares.get(k, 0.0))
               for k in ("mbcrypto", "libcrypto", "libssl", "haproxy", "kernel", "other")))
'
}

: > "$tmp/results"
for row in $rows; do
    row_params "$row"
    case $row in
    bulk-*) mode=bulk cl="1 64" ;;
    *) mode=hs cl=$conns ;;
    esac
    for rep in $(seq "$reps"); do
    for with in 0 1; do
        start_haproxy "$with"
        for c in $cl; do
            prof=""
            if [ "$profile" = 1 ] && [ "$rep" = 1 ] && [[ " $profile_at " == *" $c "* ]]; then
                profile_split > "$tmp/prof" &
                ppid=$!
                res=$(h2load_loop "$mode" "$c")
                wait "$ppid" || true
                prof=$(cat "$tmp/prof")
            else
                res=$(h2load_loop "$mode" "$c")
            fi
            size=0
            case $path in /1k) size=1024 ;; /64k) size=65536 ;; esac
            echo "$row $c $with $rep $size $res ${prof:--}" >> "$tmp/results"
        done
        stop_haproxy
    done
    done
done

cpu="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') (family $(grep -m1 'cpu family' \
    /proc/cpuinfo | sed 's/.*: //'), model $(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo |
    sed 's/.*: //'))"
MBC_TOP=$top python3 - "$tmp/results" "$json" "$cpu" "$(haproxy -v | head -1)" "$(openssl version)" \
    "${MBCRYPTO_SERVE:-auto}" "$dur" "$tmp" "$reps" <<'PY'
import json, statistics, sys
results, json_out, cpu, hap, ossl, serve, dur, tmp, reps = sys.argv[1:10]
reps = int(reps)
rows = []
for line in open(results):
    f = line.split(None, 9)
    row, c, with_, rep, size, reqs, wall, srv, cli = f[:9]
    prof = f[9].strip() if len(f) > 9 else "-"
    reqs, wall, srv, cli, size = int(reqs), int(wall), int(srv), int(cli), int(size)
    rows.append({
        "row": row, "connections": int(c), "rep": int(rep),
        "provider": "mbcrypto" if with_ == "1" else "default",
        "requests": reqs, "wall_s": wall / 1e9, "server_cpu_s": srv / 1e9,
        "client_cpu_share": cli / wall if wall else 0.0,
        "per_server_cpu_s": reqs / (srv / 1e9) if srv else 0.0,
        "per_wall_s": reqs / (wall / 1e9) if wall else 0.0,
        "server_us_per_request": srv / 1e3 / reqs if reqs else 0.0,
        "response_bytes": reqs * size,
        "bytes_per_server_cpu_s": reqs * size / (srv / 1e9) if srv else 0.0,
        "profile": prof,
    })
print("CPU: %s, %s, %s; MBCRYPTO_SERVE=%s; %s s per row%s" %
      (cpu, hap, ossl, serve, dur, ", %d repetitions (medians)" % reps if reps > 1 else ""))
print("HAProxy on CPU 1 (one thread), h2load on CPU 0; per server CPU second = HAProxy's own CPU time")
print()
hdr = "%-13s %5s | %11s %11s %6s%s | %9s %9s | %7s %7s | %s"
spread_hdr = " %11s" % "range" if reps > 1 else ""
print(hdr % ("row", "conns", "default", "mbcrypto", "ratio", spread_hdr, "us/req d", "us/req m",
             "cli d", "cli m", "wall/s d -> m"))
by = {}
for r in rows:
    by.setdefault((r["row"], r["connections"], r["provider"]), {})[r["rep"]] = r
seen = []
for r in rows:
    k = (r["row"], r["connections"])
    if k not in seen:
        seen.append(k)
summary = []
med = statistics.median
for row, c in seen:
    d, m = by.get((row, c, "default")), by.get((row, c, "mbcrypto"))
    if not d or not m:
        continue
    bulk = row.startswith("bulk")
    unit = (lambda r: r["bytes_per_server_cpu_s"] / 1e6) if bulk else (lambda r: r["per_server_cpu_s"])
    fmt = "%8.1f MB" if bulk else "%8.0f hs"
    ud, um = med([unit(r) for r in d.values()]), med([unit(r) for r in m.values()])
    ratio = um / ud if ud else 0.0
    # the ratio of each repetition (its default run, then its mbcrypto run)
    per = sorted(unit(m[k]) / unit(d[k]) for k in d if k in m and unit(d[k]))
    spread = " %11s" % ("%.2f-%.2fx" % (per[0], per[-1]) if per else "-") if reps > 1 else ""
    print(hdr % (row, c, fmt % ud, fmt % um, "%.2fx" % ratio if ud else "-", spread,
                 "%.0f" % med([r["server_us_per_request"] for r in d.values()]),
                 "%.0f" % med([r["server_us_per_request"] for r in m.values()]),
                 "%.0f%%" % (100 * med([r["client_cpu_share"] for r in d.values()])),
                 "%.0f%%" % (100 * med([r["client_cpu_share"] for r in m.values()])),
                 "%.0f -> %.0f" % (med([r["per_wall_s"] for r in d.values()]),
                                   med([r["per_wall_s"] for r in m.values()]))))
    summary.append({"row": row, "connections": c, "default_median": ud, "mbcrypto_median": um,
                    "ratio": ratio, "rep_ratios": per,
                    "unit": "MB per server CPU s" if bulk else "handshakes per server CPU s"})
print("(hs: full handshakes per server CPU second, one request each; MB: response MB per server")
print(" CPU second over kept-alive connections; us/req: server CPU per handshake or request;")
print(" cli: h2load's CPU share of wall time, near 100% = the client limits the wall rate)")
if reps > 1:
    print("(each figure the median of %d runs; ratio = mbcrypto's median / default's; range: the" % reps)
    print(" lowest and highest ratio of one repetition's pair of runs)")
import glob, os, subprocess
profs = [r for r in rows if r["profile"] != "-"]
if profs:
    print()
    print("HAProxy's CPU split (perf record -e cpu-clock, % of samples):")
    for r in profs:
        print("  %-13s %2d conns %-8s %s" % (r["row"], r["connections"], r["provider"],
                                           r["profile"]))
    for r in profs:
        path = os.path.join(tmp, "perf-%s-%d-%d.txt" % (r["row"], r["provider"] == "mbcrypto",
                                                        r["connections"]))
        if not os.path.exists(path):
            continue
        print("  %s, %d conns, %s, hottest symbols:" % (r["row"], r["connections"],
                                                       r["provider"]))
        top = [l.rstrip() for l in open(path) if l.strip() and not l.startswith("#")][:10]
        for l in top:
            print("    " + " ".join(l.split()))
ctr = sorted(glob.glob(os.path.join(tmp, "ctr-*")))
if ctr:
    print()
    print("mbcrypto counters (what our kernels did, per row%s):" %
          (", its last repetition" if reps > 1 else ""))
    for f in ctr:
        if os.path.getsize(f):
            out = subprocess.run([sys.executable, os.path.join(os.environ["MBC_TOP"],
                                  "tests/openssl/counters.py"), f],
                                 capture_output=True, text=True).stdout
            print("  %s: %s" % (os.path.basename(f)[4:], " ".join(out.split())))
if json_out:
    doc = {"cpu": cpu, "haproxy": hap, "openssl": ossl, "serve": serve, "seconds": float(dur),
           "repetitions": reps, "rows": rows, "summary": summary}
    if json_out == "-":
        print(json.dumps(doc, indent=1))
    else:
        with open(json_out, "w") as fh:
            json.dump(doc, fh, indent=1)
PY
