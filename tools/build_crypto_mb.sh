#!/usr/bin/env bash
# build_crypto_mb.sh SRC DIR: builds Intel's crypto_mb (the multi-buffer library of
# intel/cryptography-primitives, formerly ipp-crypto) from the source the user gives and installs
# it into DIR/prefix, for mbc_bench's crypto_mb column:
#
#   tools/build_crypto_mb.sh SRC_TREE OUT_DIR
#   meson setup build -Dcrypto_mb=OUT_DIR/prefix
#
# SRC is a checkout of cryptography-primitives (or of its sources/ippcp/crypto_mb directory), or a
# bare git directory of it (its HEAD is exported). Needs cmake, a C compiler and OpenSSL's headers
# (crypto_mb's _ssl_ calls take BIGNUMs). crypto_mb builds on any x86-64 machine; its kernels run
# only where AVX-512 IFMA is present. JOBS (default 2) sets the make parallelism. Rerunning with the
# library already installed does nothing; remove DIR to rebuild.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 SRC DIR" >&2
  exit 2
fi
src=$1 dir=$2 jobs=${JOBS:-2}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
prefix=$dir/prefix
if find "$prefix" -name 'libcrypto_mb.so*' 2>/dev/null | grep -q .; then
  echo "$prefix"
  exit 0
fi
sub=sources/ippcp/crypto_mb
if [ -f "$src/CMakeLists.txt" ] && [ -d "$src/src" ] && [ -d "$src/include/crypto_mb" ]; then
  top=$src
elif [ -d "$src/$sub" ]; then
  top=$src/$sub
elif git -C "$src" rev-parse --git-dir >/dev/null 2>&1 && git -C "$src" cat-file -e "HEAD:$sub" 2>/dev/null; then
  rm -rf "$dir/src"
  mkdir -p "$dir/src"
  git -C "$src" archive HEAD "$sub" | tar -x -C "$dir/src"
  top=$dir/src/$sub
else
  echo "$0: $src holds no crypto_mb source ($sub)" >&2
  exit 1
fi
echo "building crypto_mb from $top into $prefix (logs in $dir)" >&2
cmake -S "$top" -B "$dir/build" -DARCH=intel64 -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" >"$dir/cmake.log" 2>&1 || { tail -20 "$dir/cmake.log" >&2; exit 1; }
make -C "$dir/build" -j"$jobs" >"$dir/make.log" 2>&1 || { tail -20 "$dir/make.log" >&2; exit 1; }
make -C "$dir/build" install >"$dir/install.log" 2>&1 || { tail -20 "$dir/install.log" >&2; exit 1; }
echo "$prefix"
