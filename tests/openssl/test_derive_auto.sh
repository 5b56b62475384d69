#!/usr/bin/env bash
# test_derive_auto.sh 30|35 DERIVE_AUTO - tests/openssl/derive_auto.c (the
# program DERIVE_AUTO, built against the system's OpenSSL 3.0) with the
# libcrypto of OpenSSL 3.0 or 3.5: under serve = auto, a key's first
# exchange is ours, the next ones are handed off where mbcrypto's lone path
# is not claimed (route, lib.sh), and every secret is right. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
p256=$(route 2 5 256 5)
x25519=$(route 3 8 255 8)
if [ "$p256" = none ] || [ "$x25519" = none ]; then
    skip "auto serves no ECDH or no X25519 on this CPU (P-256: $p256, X25519: $x25519)"
    tap_end
fi
exec "${OSSL_RUN[@]}" "$2" "$p256" "$x25519"
