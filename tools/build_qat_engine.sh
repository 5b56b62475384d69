#!/usr/bin/env bash
# build_qat_engine.sh SRC CMB_PREFIX DIR: builds Intel's QAT_Engine in its software mode (qat_sw:
# crypto_mb for RSA, ECDSA, ECDH and X25519, intel-ipsec-mb for AES-GCM; no QAT hardware) from
# the source the user gives, as an ENGINE for the system's OpenSSL 3, into DIR/engines, for
# bench/gcm_speed.sh's QAT_Engine column (issue 23's peer):
#
#   tools/build_crypto_mb.sh CP_SRC CMB_DIR
#   tools/build_qat_engine.sh QAT_SRC CMB_DIR/prefix OUT_DIR
#   bash bench/gcm_speed.sh --qat OUT_DIR/engines build
#
# SRC is a checkout of QAT_Engine or a bare git directory of it (its HEAD is exported). Needs
# autoconf, automake, libtool, a C compiler, OpenSSL's headers and intel-ipsec-mb's (Debian:
# libipsec-mb-dev). Nothing is installed outside DIR: QAT_Engine's own install step would write
# into the system's engines directory, so the built qatengine.so is copied instead. Its qat_sw
# code runs only on CPUs with AVX-512 (IFMA for crypto_mb, VAES for AES-GCM), and QAT_Engine 1.9
# also requires the vendor string GenuineIntel (qat_sw_cpu_support in e_qat.c): elsewhere it
# serves nothing and OpenSSL's built-in ciphers run. QAT_ANY_VENDOR=1 drops that vendor test in
# the copy built here (for measuring it as a peer on another vendor's AVX-512 CPU; the features
# are still checked). JOBS (default 2)
# sets the make parallelism. Rerunning with the engine already built does nothing; remove DIR to
# rebuild.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 SRC CMB_PREFIX DIR" >&2
  exit 2
fi
src=$1 cmb=$(cd "$2" && pwd) dir=$3 jobs=${JOBS:-2}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ -f "$dir/engines/qatengine.so" ]; then
  echo "$dir/engines"
  exit 0
fi
[ -f "$cmb/include/crypto_mb/version.h" ] || { echo "$0: no crypto_mb in $cmb" >&2; exit 1; }
rm -rf "$dir/src"
mkdir -p "$dir/src"
if [ -f "$src/configure.ac" ] && [ -f "$src/qat_sw_gcm.c" ]; then
  cp -a "$src"/. "$dir/src"
elif git -C "$src" rev-parse --git-dir >/dev/null 2>&1 && git -C "$src" cat-file -e HEAD:qat_sw_gcm.c 2>/dev/null; then
  git -C "$src" archive HEAD | tar -x -C "$dir/src"
else
  echo "$0: $src holds no QAT_Engine source (qat_sw_gcm.c)" >&2
  exit 1
fi
cd "$dir/src"
if [ "${QAT_ANY_VENDOR:-0}" = 1 ]; then
  grep -q 'if (\*ebx != Genu || \*ecx != ntel || \*edx != ineI)' e_qat.c ||
    { echo "$0: QAT_ANY_VENDOR: no vendor test found in e_qat.c" >&2; exit 1; }
  sed -i 's/if (\*ebx != Genu || \*ecx != ntel || \*edx != ineI)/if (0)/' e_qat.c
fi
# crypto_mb's library directory: lib or lib64, whichever its build used.
cmblib=$(dirname "$(find "$cmb" -name 'libcrypto_mb.so' | head -n 1)")
./autogen.sh > "$dir/autogen.log" 2>&1 || { tail -n 20 "$dir/autogen.log" >&2; exit 1; }
./configure --enable-qat_sw --disable-qat_hw --with-qat_sw_crypto_mb_install_dir="$cmb" \
  LDFLAGS="-L$cmblib -Wl,-rpath,$cmblib" > "$dir/configure.log" 2>&1 ||
  { tail -n 20 "$dir/configure.log" >&2; exit 1; }
make -j "$jobs" > "$dir/make.log" 2>&1 || { grep -m 20 -B 2 -A 5 'error' "$dir/make.log" >&2; exit 1; }
mkdir -p "$dir/engines"
cp .libs/qatengine.so "$dir/engines/qatengine.so"
echo "$dir/engines"
