# bench/ossl_speed.sh - sourced by provider_bench.sh and engine_bench.sh:
# openssl speed through mbcrypto (the flags in OURS) next to OpenSSL alone
# and mbc_bench's raw 8-lane rate. Not a test: it prints tables.
#
# The caller sets: top (source tree), build (build dir), secs (seconds per
# run), OURS (the flags that load mbcrypto), ELAPSED (1: wall-clock rates,
# openssl speed -elapsed and mbc_bench's wall time; 0: per CPU second, speed's
# default and mbc_bench --cpu-time). Every run is pinned to CPU 1.

# speed_header: the CPU, the kernels mbcrypto runs, the OpenSSL.
speed_header() {
    echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')" \
        "(family $(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //')," \
        "model $(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | sed 's/.*: //')), $(nproc) CPUs;" \
        "mbcrypto kernels: $(python3 - "$build" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1] + "/libmbcrypto.so")
lib.mbc_impl_name.restype = ctypes.c_char_p
names = [lib.mbc_impl_name(a).decode() for a in range(4)]
print("RSA %s, AES-GCM %s, EC %s, X25519 %s" % tuple(names))
PY
)"
    echo "OpenSSL: $(openssl version)"
    echo
}

# speed ARGS...: openssl speed pinned, with the chosen timing.
speed() {
    local timing=()
    [ "$ELAPSED" = 1 ] && timing=(-elapsed)
    taskset -c 1 openssl speed "${timing[@]}" -seconds "$secs" "$@" 2>/dev/null
}

# speed_rsa BITS ARGS...: "sign/s verify/s" of openssl speed.
speed_rsa() {
    local bits=$1
    shift
    speed "$@" "rsa$bits" | awk -v b="$bits" '$1 == "rsa" && $2 == b { print $(NF-1), $NF }'
}

# raw_case CASE/OP: mbc_bench's 8-lane rate (ops/s); raw BITS OP for RSA.
raw_case() {
    local timing=(--cpu-time)
    [ "$ELAPSED" = 1 ] && timing=()
    taskset -c 1 "$build/bench/mbc_bench" "$1" --seconds "$secs" --reps 3 "${timing[@]}" \
        --compare none --json --quiet 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("%.0f" % d["passes"][0]["results"][0]["ops_per_s"]["median"])'
}
raw() { raw_case "rsa$1/$2"; }

# ratio A B: A/B in percent.
ratio() { python3 -c "print('%.0f%%' % (100 * $1 / $2))"; }

# rsa_table: RSA 2048/3072/4096 sign and verify: ours with -async_jobs 8,
# -async_jobs 1 and no async; OpenSSL alone; the raw 8-lane rate; then ours
# at 8 as a share of raw, and each of ours as a share of OpenSSL.
rsa_table() {
    local fmt='%-8s %-6s %9s %9s %9s %9s %9s %6s %6s %6s %6s\n'
    printf "$fmt" "op" "" "async 8" "async 1" "no async" "OpenSSL" "raw 8" "8/raw" "8/OS" \
        "1/OS" "0/OS"
    local bits s8 v8 s1 v1 s0 v0 so vo rs rv
    for bits in 2048 3072 4096; do
        read -r s8 v8 <<< "$(speed_rsa "$bits" "${OURS[@]}" -async_jobs 8)"
        read -r s1 v1 <<< "$(speed_rsa "$bits" "${OURS[@]}" -async_jobs 1)"
        read -r s0 v0 <<< "$(speed_rsa "$bits" "${OURS[@]}")"
        read -r so vo <<< "$(speed_rsa "$bits" -provider default)"
        rs=$(raw "$bits" private)
        rv=$(raw "$bits" public)
        printf "$fmt" "rsa$bits" sign "$s8" "$s1" "$s0" "$so" "$rs" "$(ratio "$s8" "$rs")" \
            "$(ratio "$s8" "$so")" "$(ratio "$s1" "$so")" "$(ratio "$s0" "$so")"
        printf "$fmt" "rsa$bits" verify "$v8" "$v1" "$v0" "$vo" "$rv" "$(ratio "$v8" "$rv")" \
            "$(ratio "$v8" "$vo")" "$(ratio "$v1" "$vo")" "$(ratio "$v0" "$vo")"
    done
    local per="CPU second"
    [ "$ELAPSED" = 1 ] && per="wall-clock second, one CPU"
    echo "(operations per $per; raw 8: mbc_bench, 8 lanes full; OS: OpenSSL alone;"
    echo " 8/1/0: ours with -async_jobs 8, -async_jobs 1, no async)"
    echo
}

# speed_pk NAME ARGS...: the rates of openssl speed NAME (ecdsap256: "sign/s
# verify/s"; ecdhp256, ecdhx25519: "ops/s").
speed_pk() {
    local name=$1
    shift
    speed "$@" "$name" | awk '/ bits ec(dsa|dh) \(/ { if ($0 ~ /ecdsa/) print $(NF-1), $NF; else print $NF }'
}

# ec_table: ECDSA and ECDH on P-256 and P-384, and X25519, with the columns
# of rsa_table (raw 8: mbc_bench's p256/sign ... x25519/derive).
ec_table() {
    local fmt='%-10s %-6s %9s %9s %9s %9s %9s %6s %6s %6s %6s\n'
    printf "$fmt" "op" "" "async 8" "async 1" "no async" "OpenSSL" "raw 8" "8/raw" "8/OS" \
        "1/OS" "0/OS"
    local row name op col c8 c1 c0 co rw
    for row in "ecdsap256 sign 1 p256/sign" "ecdsap256 verify 2 p256/verify" \
        "ecdsap384 sign 1 p384/sign" "ecdsap384 verify 2 p384/verify" \
        "ecdhp256 derive 1 p256/ecdh" "ecdhp384 derive 1 p384/ecdh" \
        "ecdhx25519 derive 1 x25519/derive"; do
        read -r name op col rw <<< "$row"
        c8=$(speed_pk "$name" "${OURS[@]}" -async_jobs 8 | cut -d' ' -f"$col")
        c1=$(speed_pk "$name" "${OURS[@]}" -async_jobs 1 | cut -d' ' -f"$col")
        c0=$(speed_pk "$name" "${OURS[@]}" | cut -d' ' -f"$col")
        co=$(speed_pk "$name" -provider default | cut -d' ' -f"$col")
        rw=$(raw_case "$rw")
        printf "$fmt" "$name" "$op" "$c8" "$c1" "$c0" "$co" "$rw" "$(ratio "$c8" "$rw")" \
            "$(ratio "$c8" "$co")" "$(ratio "$c1" "$co")" "$(ratio "$c0" "$co")"
    done
    echo "(columns as in the RSA table)"
    echo
}

# speed_gcm ARGS...: the rate in kB/s of the one size asked.
speed_gcm() { speed "$@" | awk '/^AES-/ { print $NF }'; }

# gcm_table: AES-128/256-GCM (-evp at 16 KiB; -aead at 1 KiB and 64 B:
# TLS-like messages, re-keyed as speed does) through mbcrypto and OpenSSL
# alone. With SAME_PATH_SERVE set (an MBCRYPTO_SERVE value without aes-gcm),
# also OpenSSL's cipher reached the way ours is (through OURS, mbcrypto
# serving only SAME_PATH_SERVE): the same EVP path, OpenSSL's crypto.
gcm_table() {
    local same=${SAME_PATH_SERVE:-}
    printf '%-12s %-17s %13s %13s %6s' "cipher" "run" "mbcrypto" "OpenSSL" "ratio"
    [ -n "$same" ] && printf ' %13s %6s' "OSSL same path" "ratio"
    echo
    local c mode ours theirs path
    for c in aes-128-gcm aes-256-gcm; do
        for mode in "-bytes 16384" "-aead -bytes 1024" "-aead -bytes 64"; do
            ours=$(speed_gcm "${OURS[@]}" $mode -evp "$c")
            theirs=$(speed_gcm -provider default $mode -evp "$c")
            printf '%-12s %-17s %13s %13s %5.2fx' "$c" "$mode" "$ours" "$theirs" \
                "$(python3 -c "print(float('${ours%k}')/float('${theirs%k}'))")"
            if [ -n "$same" ]; then
                path=$(MBCRYPTO_SERVE=$same speed_gcm "${OURS[@]}" $mode -evp "$c")
                printf ' %13s %5.2fx' "$path" \
                    "$(python3 -c "print(float('${ours%k}')/float('${path%k}'))")"
            fi
            echo
        done
    done
    [ "$ELAPSED" = 1 ] && echo "(kB per wall-clock second)" || echo "(kB per CPU second)"
    echo
}
