# tests/openssl/lib.sh - shared by the provider's shell tests: TAP output,
# loopback ports, the OpenSSL under test (3.0 of the system, or 3.5 unpacked
# by tools/openssl35.sh), the provider's flags and counters, cleanup.
#
# Environment (set by tests/meson.build): MBC_PROVIDER_DIR (the directory of
# mbcrypto.so), MBC_TEST_CERTS (a scratch directory), MBC_OPENSSL35_DIR (where
# tools/openssl35.sh unpacked OpenSSL 3.5), MBC_SRC (the source tree).
# A test sources this file, then calls use_openssl 30|35.

set -u
tap_n=0
tap_failed=0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mbc-ossl.XXXXXX")
pids=()

cleanup() {
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null
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
        # Debian 13's libraries need its C library: run through its loader.
        OSSL_RUN=("$root/usr/lib64/ld-linux-x86-64.so.2" --library-path
                  "$root/usr/lib/x86_64-linux-gnu")
        OPENSSL=("${OSSL_RUN[@]}" "$root/usr/bin/openssl")
    else
        OPENSSL=(openssl)
    fi
    local v
    v=$("${OPENSSL[@]}" version) || return 1
    note "openssl: $v"
}

# Provider flags: ours first, the default provider beside it, ours preferred.
PROV=(-provider-path "$MBC_PROVIDER_DIR" -provider mbcrypto -provider default
      -propquery '?provider=mbcrypto')
DEFAULT_ONLY=(-provider default)

# counter FILE NAME: the value of one counter of a counters file.
counter() { python3 "$MBC_SRC/tests/openssl/counters.py" "$1" "$2"; }

# certs: RSA 2048/3072/4096 (and 1024, 8192 for the fallback) keys and
# self-signed certificates in MBC_TEST_CERTS, made once, with the default
# provider alone.
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
    if [ ! -s "$MBC_TEST_CERTS/rsapss.pem" ]; then
        openssl req -x509 -newkey rsa-pss -pkeyopt rsa_keygen_bits:2048 -nodes \
            -keyout "$MBC_TEST_CERTS/rsapss.key" -out "$MBC_TEST_CERTS/rsapss.crt" \
            -subj /CN=localhost -days 30 2>/dev/null &&
            cat "$MBC_TEST_CERTS/rsapss.crt" "$MBC_TEST_CERTS/rsapss.key" \
                > "$MBC_TEST_CERTS/rsapss.pem"
    fi
}
