# tests/openssl/lib.sh - shared by the provider's and the ENGINE's shell
# tests: TAP output, loopback ports, the OpenSSL under test (3.0 of the
# system, or 3.5 unpacked by tools/openssl35.sh), the flags that load
# mbcrypto (provider or ENGINE) and its counters, openssl speed and
# s_server/s_client cases, cleanup; the README's openssl.cnf against the
# default provider alone (system_cnfs, run_prog, run, both, cross).
#
# Environment (set by tests/meson.build): MBC_PROVIDER_DIR (the directory of
# the provider's mbcrypto.so), MBC_ENGINE_DIR (the ENGINE's), MBC_TEST_CERTS
# (a scratch directory), MBC_OPENSSL35_DIR (where tools/openssl35.sh
# unpacked OpenSSL 3.5), MBC_SRC (the source tree). A test sources this
# file, then calls use_openssl 30|35 and, for the ENGINE, use_engine.

set -u
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/ossl35.sh"
tap_n=0
tap_failed=0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mbc-ossl.XXXXXX")
pids=()

cleanup() {
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null
        kill -CONT "$p" 2>/dev/null # a server a test stopped (SIGSTOP) takes its TERM now
    done
    for p in "${pids[@]}"; do
        wait "$p" 2>/dev/null
    done
    rm -rf "$scratch"
}
trap cleanup EXIT

ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
not_ok() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $*"; }
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $*"; }
# check NAME CMD...: one case, passed when CMD succeeds.
check() {
    local name=$1
    shift
    if "$@"; then ok "$name"; else not_ok "$name"; fi
}
tap_end() {
    echo "1..$tap_n"
    [ "$tap_failed" -eq 0 ]
    exit $?
}
note() { echo "# $*"; }

# free_port: a TCP port on 127.0.0.1 free now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_port PORT: until a socket listens on 127.0.0.1:PORT (at most 20 s);
# looks at /proc/net/tcp, so no connection is used up (s_server -naccept).
wait_port() {
    python3 - "$1" <<'PY'
import sys, time
want = ":%04X" % int(sys.argv[1])
end = time.time() + 20
while time.time() < end:
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        f = line.split()
        if f[1].endswith(want) and f[3] == "0A":
            sys.exit(0)
    time.sleep(0.05)
sys.exit(1)
PY
}

# use_openssl 30|35: OPENSSL (the command, an array) and OSSL_VER; 35 needs
# tools/openssl35.sh to have run (returns 1 otherwise, with a note).
use_openssl() {
    OSSL_VER=$1
    OSSL_RUN=()
    if [ "$1" = 35 ]; then
        local root=${MBC_OPENSSL35_DIR:-}/root
        if [ -z "${MBC_OPENSSL35_DIR:-}" ] || [ ! -x "$root/usr/bin/openssl" ]; then
            note "OpenSSL 3.5 not unpacked (bash tools/openssl35.sh DIR; MBC_OPENSSL35_DIR=DIR)"
            return 1
        fi
        ossl35_run "$root"
        OSSL_RUN=("${OSSL35_RUN[@]}")
        OPENSSL=("${OSSL_RUN[@]}" "$root/usr/bin/openssl")
    else
        OPENSSL=(openssl)
    fi
    local v
    v=$("${OPENSSL[@]}" version) || return 1
    note "openssl: $v"
}

# Provider flags: ours first, the default provider beside it, ours preferred.
PROV=(-provider-path "${MBC_PROVIDER_DIR:-}" -provider mbcrypto -provider default
      -propquery '?provider=mbcrypto')
DEFAULT_ONLY=(-provider default)
# OURS: the flags of a command that loads mbcrypto (the provider's, or the
# ENGINE's after use_engine); the speed and TLS cases below use them.
OURS=("${PROV[@]}")

# use_engine: mbcrypto as the ENGINE (found in MBC_ENGINE_DIR).
use_engine() {
    export OPENSSL_ENGINES=$MBC_ENGINE_DIR
    OURS=(-engine mbcrypto)
}

# wait_queued PORT N: until N connections to 127.0.0.1:PORT have data
# waiting in their receive queue, accepted or not (the kernel queues a
# ClientHello for a connection the server has yet to accept); at most 20 s.
# Read from /proc/net/tcp: no connection of its own.
wait_queued() {
    python3 - "$1" "$2" <<'PY'
import sys, time
want, n = ":%04X" % int(sys.argv[1]), int(sys.argv[2])
end = time.time() + 20
while time.time() < end:
    got = 0
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        f = line.split()
        if f[1].endswith(want) and f[3] == "01" and int(f[4].split(":")[1], 16) > 0:
            got += 1
    if got >= n:
        sys.exit(0)
    time.sleep(0.02)
sys.exit(1)
PY
}

# impl_py MODE ARGS...: the library's own answer on this CPU (under
# MBCRYPTO_CPU_MASK if set), by mbc_impl_get_info and mbc_impl_lone: for
# route and lanes below.
impl_py() {
    python3 - "$(dirname "$MBC_PROVIDER_DIR")/libmbcrypto.so" "$@" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
class Info(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("tier", ctypes.c_int), ("lanes", ctypes.c_uint),
                ("fast_ops", ctypes.c_uint)]
lib.mbc_impl_get_info.restype = ctypes.POINTER(Info)
mode, args = sys.argv[2], list(map(int, sys.argv[3:]))
info = lib.mbc_impl_get_info(args[0]).contents
if mode == "lanes":
    print(info.lanes)
elif not (info.fast_ops >> args[3]) & 1:
    print("none")
else:
    print("ours" if lib.mbc_impl_lone(args[0], args[1], args[2]) else "handed")
PY
}

# route ALG OP BITS FAMILY_OP: "ours", "handed", or "none" when "auto" does
# not serve the family (its FAMILY_OP bit not in fast_ops: policy.c's rows).
route() { impl_py route "$@"; }

# lanes ALG: the lanes of the implementation the library selects for ALG
# (an mbc_alg: 0 RSA, 2 EC, 3 X25519, 4 ML-KEM). 1: every request runs
# alone, and inside ASYNC jobs at once, without a pause (EC and X25519
# without IFMA).
lanes() { impl_py lanes "$1"; }

# one_lane ALG...: whether every ALG's implementation has one lane (lanes).
one_lane() {
    local a
    for a in "$@"; do
        [ "$(lanes "$a")" = 1 ] || return 1
    done
}

# async_expect PREFIX MIN_BATCHED ALG...: the counter expectations (words,
# each with PREFIX: "s:", "c:" or "") of an ASYNC run whose requests are of
# the families ALG alone: when every one has one lane (one_lane), they ran
# at once (no pause, none batched, at-once); otherwise jobs paused (and at
# least MIN_BATCHED requests completed together; 0: not asserted).
async_expect() {
    local p=$1 min=$2
    shift 2
    if one_lane "$@"; then
        echo "${p}async-pauses=0 ${p}async-batched=0 ${p}async-at-once>=1"
    elif [ "$min" -gt 0 ]; then
        echo "${p}async-pauses>=1 ${p}async-batched>=$min"
    else
        echo "${p}async-pauses>=1"
    fi
}

# counter FILE NAME: the value of one counter of a counters file.
counter() { python3 "$MBC_SRC/tests/openssl/counters.py" "$1" "$2"; }

# check_counters EXPECT...: the failed expectations (empty if none), each
# EXPECT FILE:COUNTER>=N or FILE:COUNTER=N.
check_counters() {
    local e bad=""
    for e in "$@"; do
        local file=${e%%:*} rest=${e#*:}
        local cname=${rest%%[>=]*} want=${rest##*[>=]} got
        got=$(counter "$file" "$cname")
        case $rest in
        *'>='*) [ "$got" -ge "$want" ] || bad+=" ${file##*.}:$cname=$got<$want" ;;
        *) [ "$got" -eq "$want" ] || bad+=" ${file##*.}:$cname=$got!=$want" ;;
        esac
    done
    echo "$bad"
}

# speed_case NAME "SPEED ARGS" EXPECT...: openssl speed with OURS, for one
# second per run; passed when it ran, printed no failed (negative) rate and
# its counters meet EXPECT (COUNTER>=N or COUNTER=N). speed checks the
# signatures it made itself.
speed_case() {
    local name=$1 args=$2 ctr="$scratch/$1.ctr" out="$scratch/$1.out"
    shift 2
    if ! MBCRYPTO_COUNTERS_FILE="$ctr" timeout 120 "${OPENSSL[@]}" speed "${OURS[@]}" \
        -seconds 1 $args > "$out" 2> "$scratch/$name.err"; then
        not_ok "$name: openssl speed failed"
        tail -n 5 "$scratch/$name.err" | sed 's/^/#   /'
        return
    fi
    # The result line (the last one) must have no failed (negative) rate.
    local res
    res=$(tail -n 1 "$out")
    note "$name: $res"
    if grep -q -- ' -' <<< "$res" || [ -z "$res" ]; then
        not_ok "$name: $res"
        return
    fi
    local bad
    bad=$(check_counters "${@/#/$ctr:}")
    if [ -n "$bad" ]; then not_ok "$name: counters$bad"; else ok "$name"; fi
}

# Client settings of the TLS cases, and what each side of one must count.
T12="-tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256"
T13_128="-tls1_3 -ciphersuites TLS_AES_128_GCM_SHA256"
T13_256="-tls1_3 -ciphersuites TLS_AES_256_GCM_SHA384"
SRV_OPS=(s:ops-rsa-sign'>='1 s:ops-aes-gcm-encrypt'>='1 s:ops-aes-gcm-decrypt'>='1)
CLI_OPS=(c:ops-rsa-verify'>='1 c:ops-aes-gcm-encrypt'>='1 c:ops-aes-gcm-decrypt'>='1)

# tls_case NAME WHO CERT "SERVER ARGS" "CLIENT ARGS" EXPECT...: openssl
# s_server (-WWW, one connection) and s_client on 127.0.0.1; the client
# fetches data.bin (made by the test in $scratch) and it must arrive byte
# for byte. WHO: srv, cli, both or neither: the side(s) loading mbcrypto with OURS
# (the other one runs the default provider alone). EXPECT: FILE:COUNTER>=N
# or FILE:COUNTER=N with FILE s (server) or c (client).
tls_case() {
    local name=$1 who=$2 cert=$3 sargs=$4 cargs=$5
    shift 5
    local sprov=("${DEFAULT_ONLY[@]}") cprov=("${DEFAULT_ONLY[@]}")
    [ "$who" = srv ] || [ "$who" = both ] && sprov=("${OURS[@]}")
    [ "$who" = cli ] || [ "$who" = both ] && cprov=("${OURS[@]}")
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
    local e expect=()
    for e in "$@"; do
        case $e in
        s:*) expect+=("$sc:${e#s:}") ;;
        *) expect+=("$cc:${e#c:}") ;;
        esac
    done
    local bad
    bad=$(check_counters "${expect[@]}")
    if [ -n "$bad" ]; then not_ok "$name: counters$bad"; else ok "$name"; fi
}

# certs: RSA 2048/3072/4096 (and 1024, 8192 for the fallback) and ECDSA
# P-256 keys and self-signed certificates in MBC_TEST_CERTS, made once, with
# the default provider alone.
certs() {
    mkdir -p "$MBC_TEST_CERTS"
    (
        flock 9
        make_certs
    ) 9>"$MBC_TEST_CERTS/.lock"
}

make_certs() {
    local b
    for b in 1024 2048 3072 4096 8192; do
        if [ ! -s "$MBC_TEST_CERTS/rsa$b.pem" ]; then
            openssl req -x509 -newkey "rsa:$b" -nodes -keyout "$MBC_TEST_CERTS/rsa$b.key" \
                -out "$MBC_TEST_CERTS/rsa$b.crt" -subj /CN=localhost -days 30 2>/dev/null &&
                cat "$MBC_TEST_CERTS/rsa$b.crt" "$MBC_TEST_CERTS/rsa$b.key" \
                    > "$MBC_TEST_CERTS/rsa$b.pem.tmp" &&
                mv "$MBC_TEST_CERTS/rsa$b.pem.tmp" "$MBC_TEST_CERTS/rsa$b.pem"
        fi
    done
    if [ ! -s "$MBC_TEST_CERTS/ec256.crt" ]; then
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -keyout "$MBC_TEST_CERTS/ec256.key" -out "$MBC_TEST_CERTS/ec256.crt.tmp" \
            -subj /CN=localhost -days 30 2>/dev/null &&
            mv "$MBC_TEST_CERTS/ec256.crt.tmp" "$MBC_TEST_CERTS/ec256.crt"
    fi
    if [ ! -s "$MBC_TEST_CERTS/ec256.pem" ]; then
        cat "$MBC_TEST_CERTS/ec256.crt" "$MBC_TEST_CERTS/ec256.key" \
            > "$MBC_TEST_CERTS/ec256.pem.tmp" &&
            mv "$MBC_TEST_CERTS/ec256.pem.tmp" "$MBC_TEST_CERTS/ec256.pem"
    fi
    if [ ! -s "$MBC_TEST_CERTS/rsapss.pem" ]; then
        openssl req -x509 -newkey rsa-pss -pkeyopt rsa_keygen_bits:2048 -nodes \
            -keyout "$MBC_TEST_CERTS/rsapss.key" -out "$MBC_TEST_CERTS/rsapss.crt" \
            -subj /CN=localhost -days 30 2>/dev/null &&
            cat "$MBC_TEST_CERTS/rsapss.crt" "$MBC_TEST_CERTS/rsapss.key" \
                > "$MBC_TEST_CERTS/rsapss.pem"
    fi
}

# ---------------------------------------------- the provider system-wide
# system_cnfs: ours_cnf, the README's openssl.cnf (mbcrypto loaded beside
# the default provider and preferred), with the module from the build tree;
# theirs_cnf, one that loads the default provider alone.
system_cnfs() {
    ours_cnf=$scratch/mbcrypto.cnf
    cat > "$ours_cnf" <<CNF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
alg_section = algorithm_sect
[provider_sect]
default = default_sect
mbcrypto = mbcrypto_sect
[default_sect]
activate = 1
[mbcrypto_sect]
module = $MBC_PROVIDER_DIR/mbcrypto.so
activate = 1
[algorithm_sect]
default_properties = ?provider=mbcrypto
CNF
    theirs_cnf=$scratch/default.cnf
    printf 'openssl_conf = openssl_init\n[openssl_init]\n' > "$theirs_cnf"
}

# run_prog WHO OUT PROG...: the program PROG (with the OpenSSL under test's
# loader, OSSL_RUN) with WHO's configuration (ours or theirs; ours is
# counted into $scratch/OUT.ctr), stderr in $scratch/OUT.err.
run_prog() {
    local who=$1 out=$2 cnf=$theirs_cnf
    shift 2
    [ "$who" = ours ] && cnf=$ours_cnf
    rm -f "$scratch/$out.ctr"
    OPENSSL_CONF=$cnf MBCRYPTO_COUNTERS_FILE="$scratch/$out.ctr" "${OSSL_RUN[@]}" "$@" \
        2> "$scratch/$out.err"
}

# run WHO OUT ARGS...: the openssl command with ARGS, as run_prog.
run() {
    local who=$1 out=$2
    shift 2
    run_prog "$who" "$out" "${OPENSSL[@]:${#OSSL_RUN[@]}}" "$@"
}

# both NAME OUT-OURS OUT-THEIRS CMD...: the openssl command CMD (its
# argument @OUT@ replaced by OUT-OURS or OUT-THEIRS, and @WHO@ in any
# argument by o or t) with each configuration. Returns 0 when both made it;
# 1 when both refused it (a case passed if ours said why on stderr, failed
# if it failed silently); 2 when they differ (a case failed).
both() {
    local name=$1 oo=$2 ot=$3 ro rt
    shift 3
    local ao=("${@//@OUT@/$oo}") at=("${@//@OUT@/$ot}")
    run ours "$name.o" "${ao[@]//@WHO@/o}"
    ro=$?
    run theirs "$name.t" "${at[@]//@WHO@/t}"
    rt=$?
    if [ "$ro" -ne "$rt" ]; then
        not_ok "$name: exit $ro, default provider $rt"
        sed 's/^/#   /' "$scratch/$name.o.err" "$scratch/$name.t.err" | head -n 8
        return 2
    fi
    if [ "$ro" -ne 0 ]; then
        if grep -q . "$scratch/$name.o.err"; then ok "$name (refused by both)"; else
            not_ok "$name: failed silently"; fi
        return 1
    fi
    return 0
}

# cross NAME "MAKE-EXPECT" "VERIFY-EXPECT" MAKE-ARGS... [-- VERIFY-ARGS...]:
# one case. The openssl command MAKE-ARGS makes @OUT@ with each
# configuration (both); made by both, ours' counters meet MAKE-EXPECT
# (COUNTER>=N ..., space separated), and the openssl command VERIFY-ARGS
# (with @IN@ the other side's output, @PT@ a file it writes) succeeds with
# the default provider alone on ours' output and with ours on the default
# provider's, ours' counters meeting VERIFY-EXPECT. SAME=1: the outputs
# must be equal byte for byte; @PT@ must be equal to WANT (default
# $scratch/data).
cross() {
    local name=$1 mk=$2 vf=$3
    shift 3
    local make=() verify=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        make+=("$1")
        shift
    done
    [ $# -gt 0 ] && shift
    verify=("$@")
    local oo=$scratch/$name.o.out ot=$scratch/$name.t.out
    both "$name" "$oo" "$ot" "${make[@]}" || return 0
    local bad="" e who file tag pt
    for e in $mk; do bad+=$(check_counters "$scratch/$name.o.ctr:$e"); done
    if [ "${SAME:-0}" = 1 ] && ! cmp -s "$oo" "$ot"; then bad+=" outputs differ"; fi
    if [ ${#verify[@]} -gt 0 ]; then
        for who in theirs ours; do
            if [ $who = theirs ]; then file=$oo tag=vt; else file=$ot tag=vo; fi
            pt=$scratch/$name.$tag.pt
            rm -f "$pt"
            local args=("${verify[@]//@IN@/$file}")
            if ! run $who "$name.$tag" "${args[@]//@PT@/$pt}" > "$scratch/$name.$tag.stdout"; then
                bad+=" $who: not verified or decrypted"
                sed 's/^/#   /' "$scratch/$name.$tag.err" | head -n 4
            elif [[ "${verify[*]}" == *@PT@* ]] && ! cmp -s "$pt" "${WANT:-$scratch/data}"; then
                bad+=" $who: wrong plaintext"
            fi
        done
        for e in $vf; do bad+=$(check_counters "$scratch/$name.vo.ctr:$e"); done
    fi
    if [ -n "$bad" ]; then not_ok "$name:$bad"; else ok "$name"; fi
}
