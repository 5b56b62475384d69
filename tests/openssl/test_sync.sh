#!/usr/bin/env bash
# test_sync.sh 30|35 - serve = auto (MBCRYPTO_SERVE unset, as programs
# loading mbcrypto through openssl.cnf get it) and requests outside ASYNC
# jobs, through the provider, then the ENGINE: openssl speed without
# -async_jobs for RSA-2048, ECDSA and ECDH on P-256 and P-384 and X25519.
# Each operation of a family "auto" serves runs on mbcrypto's lone path
# where the selected implementation lists it in lone_ops (mbc_impl_lone),
# and is handed to OpenSSL's own code otherwise (the default provider, the
# ENGINE's saved methods): the counters show which (ops-* against
# sync-handed-off), and speed checks the signatures and secrets it got.
# With -async_jobs 8 the same operations batch in mbcrypto. What to expect
# is read from the library's mbc_impl_get_info on this CPU, so on every CPU
# the routing is checked against the properties it follows. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
unset MBCRYPTO_SERVE

# sync_case NAME SPEED_ARGS "ALG OP BITS FAMILY_OP COUNTER"...: speed
# without async; each operation's counter at least 1 when ours, else 0;
# sync-handed-off at least 1 when some operation is handed off, else 0.
# The provider runs a key's first exchange (ECDH, X25519: OP 5, 8) itself
# and hands off only the next ones (mbp_derived_before; derive_auto.c), so
# there a handed-off exchange's counter is at least 1 too.
sync_case() {
    local name=$1 args=$2 row handed=0 expect=() r
    shift 2
    for row in "$@"; do
        read -r alg op bits fop ctr <<< "$row"
        r=$(route "$alg" "$op" "$bits" "$fop")
        [ "$NO_X25519" = 1 ] && [ "$alg" = 3 ] && r=none
        note "$name: $ctr: $r"
        [ "$r" = handed ] && handed=1
        if [ "$r" = ours ] || { [ "$r" = handed ] && [ "$WHO" = provider ] &&
            { [ "$op" = 5 ] || [ "$op" = 8 ]; }; }; then
            expect+=("$ctr>=1")
        else
            expect+=("$ctr=0")
        fi
    done
    if [ "$handed" = 1 ]; then expect+=("sync-handed-off>=1"); else expect+=("sync-handed-off=0"); fi
    speed_case "$name" "$args" "${expect[@]}" async-pauses=0
}

RSA_ROWS=("0 1 2048 1 ops-rsa-sign" "0 2 2048 1 ops-rsa-verify")
run_all() {
    local who=$1 c b
    WHO=$who
    # 3.5's speed also times RSA key generation and encryption (seconds).
    sync_case "$who-rsa2048-sync" "rsa2048" "${RSA_ROWS[@]}"
    for b in 256 384; do
        c=p$b
        sync_case "$who-ecdsa$c-sync" "ecdsa$c" "2 3 $b 3 ops-ecdsa-sign" \
            "2 4 $b 3 ops-ecdsa-verify"
        sync_case "$who-ecdh$c-sync" "ecdh$c" "2 5 $b 5 ops-ecdh"
    done
    sync_case "$who-ecdhx25519-sync" "ecdhx25519" "3 8 255 8 ops-x25519-derive"
    # Inside ASYNC jobs nothing is handed off: a served family batches (one
    # of one lane runs at once, or is handed off: test_mbo).
    if one_lane 2; then
        skip "$who: EC has one lane on this CPU: nothing batches"
    elif [ "$(route 2 3 256 3)" != none ]; then
        speed_case "$who-ecdsap256-async8" "-async_jobs 8 ecdsap256" ops-ecdsa-sign'>='8 \
            ops-ecdsa-verify'>='8 async-batched'>='2
        speed_case "$who-ecdhp256-async8" "-async_jobs 8 ecdhp256" ops-ecdh'>='8 \
            async-batched'>='2
    else
        skip "$who: auto serves no ECDSA on this CPU"
    fi
}

# cross_case NAME "ROUTE..." GENPKEY_ARGS...: a key pair and a peer's from the default
# provider; through mbcrypto (OURS) a signature of a digest, checked by the
# default provider alone, and a shared secret, equal to the default
# provider's; sync-handed-off at least 1 when a ROUTE (of the operations
# run) is handed (so the results checked are the handed-off ones), else 0.
# pkeyutl's one exchange is its key's first, ours whatever the route
# (mbp_derived_before): the routes given are those of the signature and
# verification; derive_auto.c checks handed-off exchanges.
cross_case() {
    local name=$1 want=$2 d=$scratch/$1 ctr=$scratch/$1.ctr
    shift 2
    mkdir -p "$d"
    rm -f "$ctr"
    local ok=1
    for k in a b; do
        "${OPENSSL[@]}" genpkey "${DEFAULT_ONLY[@]}" "$@" -out "$d/$k.key" 2> /dev/null &&
            "${OPENSSL[@]}" pkey "${DEFAULT_ONLY[@]}" -in "$d/$k.key" -pubout -out "$d/$k.pub" ||
            ok=0
    done
    head -c 32 /dev/urandom > "$d/dgst"
    if [ "$2" != X25519 ]; then
        MBCRYPTO_COUNTERS_FILE=$ctr "${OPENSSL[@]}" pkeyutl "${OURS[@]}" -sign -inkey "$d/a.key" \
            -in "$d/dgst" -out "$d/sig" 2> /dev/null &&
            "${OPENSSL[@]}" pkeyutl "${DEFAULT_ONLY[@]}" -verify -pubin -inkey "$d/a.pub" \
                -in "$d/dgst" -sigfile "$d/sig" > /dev/null || ok=0
    fi
    MBCRYPTO_COUNTERS_FILE=$ctr "${OPENSSL[@]}" pkeyutl "${OURS[@]}" -derive -inkey "$d/a.key" \
        -peerkey "$d/b.pub" -out "$d/s1" 2> /dev/null &&
        "${OPENSSL[@]}" pkeyutl "${DEFAULT_ONLY[@]}" -derive -inkey "$d/b.key" \
            -peerkey "$d/a.pub" -out "$d/s2" && cmp -s "$d/s1" "$d/s2" || ok=0
    local bad
    if grep -qw handed <<< "$want"; then
        bad=$(check_counters "$ctr:sync-handed-off>=1")
    else
        bad=$(check_counters "$ctr:sync-handed-off=0")
    fi
    if [ "$ok" = 1 ] && [ -z "$bad" ]; then ok "$name"; else not_ok "$name: ok=$ok$bad"; fi
}
cross_case provider-p256-cross "$(route 2 3 256 3) $(route 2 4 256 3)" -algorithm EC -pkeyopt ec_paramgen_curve:P-256
cross_case provider-x25519-cross "ours" -algorithm X25519

NO_X25519=0
run_all provider
# The ENGINE's X25519 method is not used from OpenSSL 3.5 on (eng_x25519.c).
use_engine
[ "$1" = 35 ] && NO_X25519=1
if "${OPENSSL[@]}" engine -t mbcrypto 2>&1 | grep -q '\[ available \]'; then
    run_all engine
else
    skip "OpenSSL $1: the ENGINE cannot be loaded"
fi
tap_end
