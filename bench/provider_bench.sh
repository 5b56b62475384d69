#!/usr/bin/env bash
# bench/provider_bench.sh - the provider's speed next to mbcrypto's raw rates
# and OpenSSL alone (issue 13's speed section). Not a test: it prints tables.
#
#   bash bench/provider_bench.sh [BUILD_DIR]      (default: build)
#
# 1. openssl speed, pinned to CPU 1 (bench/ossl_speed.sh), RSA 2048/3072/4096
#    sign and verify: through mbcrypto with -async_jobs 8, -async_jobs 1 and
#    no async; the default provider alone; and mbc_bench's raw 8-lane rate
#    (mbc_rsa_*_mb8, every lane full) with the provider's share of it.
#    AES-128/256-GCM (-evp, 16 KiB, and -aead at 1 KiB and 64 B: TLS-like
#    messages, re-keyed as speed does) through mbcrypto and the default
#    provider.
# 2. HAProxy TLS 1.3 full handshakes per server CPU second, RSA-2048
#    certificate and X25519, at 1 and 64 connections: bench/tls_bench.sh's
#    first row (that script has every other configuration and bulk).
#
# The provider runs with MBCRYPTO_SERVE=all so that it serves on any CPU (on
# one without IFMA, RSA then runs mbcrypto's portable code). Rates are per
# CPU second (openssl speed's default, mbc_bench --cpu-time) so that other
# load on a shared machine weighs less; so are the HAProxy rates (HAProxy's
# own CPU time). Environment: SECONDS_PER_RUN (default 2).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
secs=${SECONDS_PER_RUN:-2}
OURS=(-provider-path "$build/openssl" -provider mbcrypto -provider default
      -propquery '?provider=mbcrypto')
ELAPSED=0
export MBCRYPTO_SERVE=all
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/bench/ossl_speed.sh"

speed_header
rsa_table
ec_table
gcm_table

# ---------------------------------------------------------------- HAProxy
# Handshakes per server CPU second: bench/tls_bench.sh's RSA row.
echo
bash "$top/bench/tls_bench.sh" --only rsa-x25519 --conns "1 64" "$build"
