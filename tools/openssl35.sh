#!/usr/bin/env bash
# tools/openssl35.sh DIR - OpenSSL 3.5 for the provider's and the ENGINE's
# tests: Debian 13's libssl3t64 and openssl packages, with the libc6 its
# libraries need, downloaded with apt-get download from the trixie suite and
# unpacked with dpkg-deb -x into DIR/root. Nothing is installed over the system's. The
# tests run DIR/root/usr/bin/openssl (and the system's haproxy) through
# DIR/root/usr/lib64/ld-linux-x86-64.so.2 --library-path
# DIR/root/usr/lib/x86_64-linux-gnu.
#
# apt state: DIR/apt (its own sources.list, lists and cache; the system's
# package state is not touched). The sources line is the machine's own
# Debian archive with the suite replaced by trixie: URI and keyring come
# from this machine's apt configuration (tools/apt_suite_source.py), so no
# host is named here. Exits 0 with DIR/root ready, 1 (with a reason on
# stderr) when the packages cannot be had.
set -euo pipefail
dir=${1:?usage: openssl35.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ -x "$dir/root/usr/bin/openssl" ] && [ -e "$dir/root/usr/lib64/ld-linux-x86-64.so.2" ]; then
    exit 0
fi
pkgs=(libssl3t64 openssl libc6)
state=$dir/apt
mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
. "$(dirname "${BASH_SOURCE[0]}")/ossl35.sh"
src=$(python3 "$(dirname "${BASH_SOURCE[0]}")/apt_suite_source.py" trixie main) || {
    echo "openssl35: no Debian source in this machine's apt configuration" >&2
    exit 1
}
if [ "$(cat "$state/sources.list" 2>/dev/null)" != "$src" ]; then
    echo "$src" > "$state/sources.list"
    rm -f "$state/lists/"*Packages* 2>/dev/null || true
fi
apt_opts=(-o "Dir::Etc::SourceList=$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache"
          -o Dir::State::status=/dev/null -o APT::Sandbox::User=root -q)
if ! ls "$state/lists/"*trixie*Packages* >/dev/null 2>&1; then
    apt-get "${apt_opts[@]}" update >&2 || { echo "openssl35: apt-get update failed" >&2; exit 1; }
fi
mkdir -p "$dir/debs"
if ! (cd "$dir/debs" && apt-get "${apt_opts[@]}" download "${pkgs[@]}" >&2); then
    echo "openssl35: apt-get download ${pkgs[*]} failed" >&2
    exit 1
fi
rm -rf "$dir/root.tmp"
for deb in "$dir/debs/"*.deb; do
    dpkg-deb -x "$deb" "$dir/root.tmp"
done
rm -rf "$dir/root"
mv "$dir/root.tmp" "$dir/root"
ossl35_run "$dir/root"
"${OSSL35_RUN[@]}" "$dir/root/usr/bin/openssl" version >&2
