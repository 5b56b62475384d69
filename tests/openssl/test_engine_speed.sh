#!/usr/bin/env bash
# test_engine_speed.sh 30|35 - the mbcrypto ENGINE in the openssl command:
# `openssl engine -t` and `-vvv` (its control commands); openssl speed
# -engine mbcrypto for RSA 2048/3072/4096, ECDSA and ECDH on P-256 and
# P-384 and X25519 (3.0; OpenSSL's own on 3.5) with -async_jobs 8 and
# without, and AES-GCM (-evp, -aead), each
# proven to run through mbcrypto by the counters file (with -async_jobs 8
# to batch, or to run at once where the family's implementation has one
# lane: async_expect); the
# PRINT_COUNTERS command reporting that file's counts; an openssl.cnf
# [engine_section] that loads the ENGINE (dynamic_path), serves all with
# its SERVE command and makes it the default, used by speed without
# -engine; and SERVE none leaving AES-GCM to OpenSSL; malformed serve
# settings reported, in MBCRYPTO_SERVE keeping the ENGINE from init. TAP on
# stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
use_engine

# OpenSSL 3.x keeps the ENGINE API; a build without it cannot load ours.
if ! "${OPENSSL[@]}" engine -t mbcrypto > "$scratch/t.out" 2>&1; then
    if grep -qi "engine.*not.*\(supported\|available\)\|invalid command" "$scratch/t.out"; then
        skip "OpenSSL $1 has no ENGINE support: $(head -n 1 "$scratch/t.out")"
        tap_end
    fi
fi
check "openssl engine -t mbcrypto: available" grep -q '\[ available \]' "$scratch/t.out"
"${OPENSSL[@]}" engine -vvv mbcrypto > "$scratch/v.out" 2>&1
check "openssl engine -vvv lists SERVE, MAX_WAIT_US, PRINT_COUNTERS" \
    bash -c 'for c in SERVE MAX_WAIT_US PRINT_COUNTERS; do grep -q "^ *$c:" "$1" || exit 1; done' \
    _ "$scratch/v.out"

# engine_cnf FILE SERVE: an openssl.cnf that loads the ENGINE from its path
# with that SERVE command and makes it the default for everything it has.
engine_cnf() {
    cat > "$1" <<CNF
openssl_conf = openssl_init
[openssl_init]
engines = engine_section
[engine_section]
mbcrypto = mbcrypto_section
[mbcrypto_section]
engine_id = mbcrypto
dynamic_path = $MBC_ENGINE_DIR/mbcrypto.so
SERVE = $2
default_algorithms = ALL
init = 1
CNF
}

# A serve setting that does not parse (issue 22, item 9): with it in
# MBCRYPTO_SERVE the ENGINE does not init (OpenSSL's methods run) and
# stderr says why; as SERVE in an openssl.cnf engine section (where OpenSSL
# drops the command's error) stderr says it too; valid ones init.
for v in 'none ' bogus '' 'rsa,,ecdsa'; do
    MBCRYPTO_SERVE=$v "${OPENSSL[@]}" engine -t mbcrypto > "$scratch/bad.out" 2> "$scratch/bad.err"
    check "MBCRYPTO_SERVE=\"$v\": unavailable, with the reason on stderr" \
        bash -c 'grep -q "\[ unavailable \]" "$1" && grep -qF "mbcrypto: MBCRYPTO_SERVE \"$3\"" "$2"' \
        _ "$scratch/bad.out" "$scratch/bad.err" "$v"
done
for v in auto none rsa,ecdsa; do
    check "MBCRYPTO_SERVE=$v: available" \
        bash -c 'MBCRYPTO_SERVE=$1 "${@:2}" engine -t mbcrypto 2>&1 | grep -q "\[ available \]"' \
        _ "$v" "${OPENSSL[@]}"
done
engine_cnf "$scratch/bad-serve.cnf" rsa,bogus
OPENSSL_CONF=$scratch/bad-serve.cnf "${OPENSSL[@]}" version > /dev/null 2> "$scratch/bad-cnf.err"
check "openssl.cnf SERVE = rsa,bogus: the reason on stderr" \
    grep -qF 'mbcrypto: SERVE "rsa,bogus"' "$scratch/bad-cnf.err"

export MBCRYPTO_SERVE=all
for b in 2048 3072 4096; do
    speed_case "rsa$b-async8" "-async_jobs 8 rsa$b" ops-rsa-sign'>='8 ops-rsa-verify'>='8 \
        keys-rsa'>='1 async-pauses'>='1 async-batched'>='2
done
# Without async: every size on 3.0; on 3.5, whose speed also times key
# generation and encryption for each size (about 10 s a size here), 2048.
sync_sizes="2048 3072 4096"
[ "$1" = 35 ] && sync_sizes=2048
for b in $sync_sizes; do
    speed_case "rsa$b-sync" "rsa$b" ops-rsa-sign'>='1 ops-rsa-verify'>='1 async-pauses=0
done
read -ra async_ec <<< "$(async_expect "" 2 2)"
read -ra async_x <<< "$(async_expect "" 2 3)"
note "EC ${async_ec[*]}; X25519 ${async_x[*]}"
for c in p256 p384; do
    speed_case "ecdsa$c-async8" "-async_jobs 8 ecdsa$c" ops-ecdsa-sign'>='8 \
        ops-ecdsa-verify'>='8 keys-ec'>='1 "${async_ec[@]}"
    speed_case "ecdsa$c-sync" "ecdsa$c" ops-ecdsa-sign'>='1 ops-ecdsa-verify'>='1 async-pauses=0
    speed_case "ecdh$c-async8" "-async_jobs 8 ecdh$c" ops-ecdh'>='8 keys-ec'>='1 \
        "${async_ec[@]}"
    speed_case "ecdh$c-sync" "ecdh$c" ops-ecdh'>='1 async-pauses=0
done
# X25519: the ENGINE's method before OpenSSL 3.5 only (eng_x25519.c says
# why); on 3.5 OpenSSL's runs.
if [ "$1" = 35 ]; then
    speed_case ecdhx25519-openssl "ecdhx25519" ops-x25519-derive=0
else
    speed_case ecdhx25519-async8 "-async_jobs 8 ecdhx25519" ops-x25519-derive'>='8 \
        "${async_x[@]}"
    speed_case ecdhx25519-sync "ecdhx25519" ops-x25519-derive'>='1 async-pauses=0
fi
speed_case aes128gcm "-evp aes-128-gcm -bytes 1024" ops-aes-gcm-encrypt'>='1
speed_case aes256gcm-aead "-aead -evp aes-256-gcm -bytes 1024" ops-aes-gcm-encrypt'>='100

# PRINT_COUNTERS (in another process, on the same counters file) says what
# the file says.
ctr=$scratch/rsa2048-async8.ctr
MBCRYPTO_COUNTERS_FILE=$ctr "${OPENSSL[@]}" engine -t -post PRINT_COUNTERS mbcrypto \
    > "$scratch/p.out" 2>&1
python3 "$MBC_SRC/tests/openssl/counters.py" "$ctr" > "$scratch/want.out"
check "PRINT_COUNTERS reports the counters file" \
    bash -c 'grep -q "^serve rsa,aes-gcm,x25519,ecdh,ecdsa$" "$1" && grep -Fxf "$2" "$1" | cmp -s - "$2"' \
    _ "$scratch/p.out" "$scratch/want.out"

# openssl.cnf: the ENGINE from its path, SERVE set there (no MBCRYPTO_SERVE),
# default for everything it has; speed without -engine uses it.
unset MBCRYPTO_SERVE
engine_cnf "$scratch/openssl.cnf" all
OURS=()
OPENSSL_CONF=$scratch/openssl.cnf speed_case cnf-rsa2048 "rsa2048" ops-rsa-sign'>='1 \
    ops-rsa-verify'>='1 keys-rsa'>='1
OPENSSL_CONF=$scratch/openssl.cnf speed_case cnf-ecdsap256 "ecdsap256" ops-ecdsa-sign'>='1 \
    ops-ecdsa-verify'>='1 keys-ec'>='1
# SERVE none: OpenSSL's own methods (the built-in cipher through the
# ENGINE's selector); mbcrypto counts nothing.
OURS=(-engine mbcrypto)
sed -i 's/^SERVE = all/SERVE = none/' "$scratch/openssl.cnf"
OPENSSL_CONF=$scratch/openssl.cnf speed_case cnf-none-aes128gcm "-evp aes-128-gcm -bytes 1024" \
    ops-aes-gcm-encrypt=0 ops-rsa-sign=0
OPENSSL_CONF=$scratch/openssl.cnf speed_case cnf-none-ecdhp256 "ecdhp256 ecdhx25519" ops-ecdh=0 \
    keys-ec=0 ops-x25519-derive=0
tap_end
