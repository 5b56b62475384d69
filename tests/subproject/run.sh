#!/usr/bin/env bash
# tests/subproject/run.sh SRC MESON - mbcrypto as a meson subproject.
#
# Copies tests/subproject/parent to a temporary directory, links SRC (the
# mbcrypto source tree) in as its subprojects/mbcrypto, configures the parent
# with the default options (--force-fallback-for=mbcrypto only makes sure an
# installed mbcrypto is not picked instead), builds it and runs its three
# programs: dependency('mbcrypto') (shared), dependency('mbcrypto', static:
# true) and dependency('mbcrypto-static'). Prints TAP (tools/test_summary.py
# counts the cases); exits 1 if any failed.
set -u
src=$1
meson=$2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/tests/subproject/parent" "$tmp/parent"
mkdir "$tmp/parent/subprojects"
ln -s "$src" "$tmp/parent/subprojects/mbcrypto"
build=$tmp/build

n=0
failed=0
# case STATUS NAME [LOG]: one TAP line; a failure shows the end of LOG.
case_result() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=$((failed + 1))
        if [ -n "${3:-}" ] && [ -f "$3" ]; then
            tail -n 30 "$3" | sed 's/^/# /'
        fi
    fi
}

echo "1..6"
"$meson" setup --force-fallback-for=mbcrypto "$build" "$tmp/parent" >"$tmp/setup.log" 2>&1
case_result $? "configure the parent with the default options" "$tmp/setup.log"

# tests and bench resolve off in a subproject: nothing of theirs is looked up
# or configured.
looked_up=$(grep -iE "dependency (cmocka|jansson|libcrypto)|IPSec_MB|intel-ipsec-mb" \
    "$tmp/setup.log")
status=0
if [ -n "$looked_up" ] || [ -d "$build/subprojects/mbcrypto/tests" ] ||
    [ -d "$build/subprojects/mbcrypto/bench" ] || ! [ -f "$build/build.ninja" ]; then
    status=1
    echo "$looked_up" | sed 's/^/# looked up: /'
fi
case_result $status "no tests, bench, cmocka, jansson, libcrypto or ipsec-mb in the parent"

"$meson" compile -C "$build" -j 2 >"$tmp/build.log" 2>&1
case_result $? "build the parent and mbcrypto" "$tmp/build.log"

# run PROG WANT_SHARED: runs the program and checks how it is linked.
run() {
    local prog=$build/$1 needed
    "$prog" >"$tmp/$1.log" 2>&1 || return 1
    sed 's/^/# /' "$tmp/$1.log"
    needed=$(readelf -d "$prog" 2>/dev/null | grep -c 'NEEDED.*libmbcrypto\.so')
    if [ "$2" = shared ]; then
        [ "$needed" -eq 1 ]
    else
        [ "$needed" -eq 0 ]
    fi
}
run parent_shared shared
case_result $? "dependency('mbcrypto'): links libmbcrypto.so and runs" "$tmp/parent_shared.log"
run parent_static static
case_result $? "dependency('mbcrypto', static: true): links libmbcrypto.a and runs" \
    "$tmp/parent_static.log"
run parent_static_by_name static
case_result $? "dependency('mbcrypto-static'): links libmbcrypto.a and runs" \
    "$tmp/parent_static_by_name.log"

[ "$failed" -eq 0 ]
