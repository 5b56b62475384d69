#!/usr/bin/env bash
# tools/run.sh - the two quick-start commands of the README.
#
#   bash tools/run.sh bench [mbc_bench args]   install, build, run mbc_bench's default suite
#   bash tools/run.sh test                     install, build, run the whole test suite
#   bash tools/run.sh fuzz [target...]         install, build, long libFuzzer runs
#
# All install the Debian 12 packages they need when any is missing (as root,
# or through sudo). "test" builds and runs the suite: a gcc release
# build (with the constant-time checks of the shipped objects: valgrind
# memcheck, about 20 s of CPU, and the instruction scan), a gcc -O2
# (debugoptimized) build of the library's own tests (build-o2: stack scrub
# depths at another optimisation level), a clang-14 build with
# AddressSanitizer + UndefinedBehaviorSanitizer;
# then the constant-time check (tests/ct) in a clang-14 MemorySanitizer build
# (build-msan, about a minute), the lane manager's threads test in a
# clang-14 ThreadSanitizer build (build-tsan, only that test and its control,
# about 20 s), and a smoke run of every libFuzzer target (tests/fuzz, a few
# seconds each) in a clang-14 ASan + UBSan build (build-fuzz); it ends with
# one line "N passed, N failed, N skipped". "fuzz" runs every target (or
# those named) in build-fuzz for MBC_FUZZ_SECONDS (default 600) seconds each,
# one after another, at nice 10.
# Environment: MBC_VECTORS_DIR (default ../shared/vectors beside the source
# tree), MBC_TEST_SOAK=1 for the long differential runs, MBC_JOBS,
# MBC_FUZZ_SECONDS.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"

packages=(build-essential meson ninja-build nasm pkg-config python3 libssl-dev openssl
          libcmocka-dev libjansson-dev clang-14 libclang-rt-14-dev libipsec-mb-dev
          haproxy nghttp2-client valgrind python3-cryptography curl)

install_packages() {
    local missing=()
    for p in "${packages[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
            missing+=("$p")
        fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
        return
    fi
    echo "== installing: ${missing[*]}" >&2
    local sudo=""
    if [ "$(id -u)" != 0 ]; then
        sudo=sudo
    fi
    $sudo apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
        "${missing[@]}" >&2
}

# configure DIR [meson args...]: sets up DIR once (reconfigures if it exists).
configure() {
    local dir=$1
    shift
    if [ -f "$dir/build.ninja" ]; then
        meson setup --reconfigure "$dir" "$@" >/dev/null
    else
        meson setup "$dir" "$@" >/dev/null
    fi
}

jobs=${MBC_JOBS:-$(nproc)}

# build_fuzz: the libFuzzer build (tests/fuzz), every object with ASan + UBSan.
build_fuzz() {
    CC=clang-14 configure build-fuzz -Dfuzz=true -Dtests=false -Dbench=false \
        -Dbuildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fno-sanitize-recover=all
    ninja -C build-fuzz -j "$jobs" fuzz-targets
}

case "${1:-}" in
bench)
    shift
    install_packages
    configure build -Dtests=false -Dbench=true
    ninja -C build -j "$jobs" >/dev/null
    pin=()
    if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then
        pin=(taskset -c 1)
    fi
    exec "${pin[@]}" ./build/bench/mbc_bench "$@"
    ;;
test)
    install_packages
    # openssl_engine=auto: a build directory made before the option's default
    # became auto keeps the old value on reconfigure.
    configure build -Dtests=true -Dbench=true -Dopenssl_engine=auto
    ninja -C build -j "$jobs"
    # OpenSSL 3.5 (Debian 13) for the provider's and the ENGINE's tests,
    # unpacked into build/openssl35; those tests skip when it cannot be had.
    bash tools/openssl35.sh build/openssl35 ||
        echo "== OpenSSL 3.5 not available: its provider and ENGINE tests will skip" >&2
    # gcc -O2 (debugoptimized, as Debian builds packages): the library's own
    # tests, test_wipe's stack depths above all (scrub sizes must hold at
    # every optimisation level), and mbc_bench must compile.
    configure build-o2 -Dtests=true -Dbench=true -Dbuildtype=debugoptimized \
        -Dopenssl_provider=disabled -Dopenssl_engine=disabled
    ninja -C build-o2 -j "$jobs"
    # CXX: the C++ header test (tests/cxx) builds with the C compiler's family.
    CC=clang-14 CXX=clang++-14 configure build-asan -Dtests=true -Dbench=false \
        -Dbuildtype=debugoptimized -Dopenssl_engine=auto \
        -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fno-sanitize-recover=all
    ninja -C build-asan -j "$jobs"
    # MSan needs every linked object instrumented: no cmocka/OpenSSL tests, no
    # nasm kernels. -Wno-pass-failed: a failed unroll hint only costs speed here.
    CC=clang-14 configure build-msan -Dtests=false -Dbench=false -Dct_check=true \
        -Dbuildtype=debugoptimized -Db_sanitize=memory -Db_lundef=false -Dvaes=disabled \
        -Dc_args=-Wno-pass-failed
    ninja -C build-msan -j "$jobs"
    # ThreadSanitizer: only the suite 'tsan' (the lane manager's threads test and
    # a deliberate race that must be reported), so only their targets are built.
    CC=clang-14 configure build-tsan -Dtests=true -Dbench=false -Dbuildtype=debugoptimized \
        -Db_sanitize=thread -Db_lundef=false
    ninja -C build-tsan -j "$jobs" tests/test_sched_threads tests/test_sched_tsan_control
    build_fuzz
    status=0
    meson test -C build --num-processes "$jobs" --print-errorlogs || status=1
    MBC_TEST_QUICK=1 meson test -C build-o2 --no-suite subproject --num-processes "$jobs" \
        --print-errorlogs || status=1
    MBC_TEST_QUICK=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        meson test -C build-asan --num-processes "$jobs" --timeout-multiplier 3 \
        --print-errorlogs || status=1
    meson test -C build-msan --suite ct --num-processes "$jobs" --print-errorlogs || status=1
    TSAN_OPTIONS=halt_on_error=1 meson test -C build-tsan --suite tsan --no-rebuild \
        --num-processes "$jobs" --print-errorlogs || status=1
    # Smoke runs only: MBC_FUZZ_SECONDS is for "fuzz".
    env -u MBC_FUZZ_SECONDS meson test -C build-fuzz --suite fuzz --no-rebuild \
        --num-processes "$jobs" --print-errorlogs || status=1
    python3 tools/test_summary.py gcc-release=build/meson-logs/testlog.json \
        gcc-o2=build-o2/meson-logs/testlog.json \
        clang-asan-ubsan=build-asan/meson-logs/testlog.json \
        clang-msan-ct=build-msan/meson-logs/testlog.json \
        clang-tsan=build-tsan/meson-logs/testlog.json \
        clang-fuzz=build-fuzz/meson-logs/testlog.json || status=1
    exit $status
    ;;
fuzz)
    shift
    install_packages
    build_fuzz
    MBC_FUZZ_SECONDS=${MBC_FUZZ_SECONDS:-600} nice -n 10 meson test -C build-fuzz --suite fuzz \
        --no-rebuild --num-processes 1 --timeout-multiplier 0 --verbose "$@"
    ;;
*)
    echo "usage: bash tools/run.sh bench [mbc_bench args] | test | fuzz [target...]" >&2
    exit 2
    ;;
esac
