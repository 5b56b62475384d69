#!/usr/bin/env bash
# test_python.sh 30|35 - Debian's python3-cryptography with the provider
# loaded system-wide (OPENSSL_CONF: the README's openssl.cnf,
# MBCRYPTO_SERVE=all) and with the default provider alone, on OpenSSL 3.0
# or 3.5 (the system's python3 run with 3.5's libraries): compat_py.py
# makes AES-GCM, RSA, ECDSA, ECDH and X25519 results with each
# configuration, and each side checks the other's (verify, decrypt, the
# same deterministic outputs). The counters prove mbcrypto computed; ECDSA,
# which python3-cryptography 38 computes with libcrypto's EC_KEY calls
# outside any provider, is crossed with openssl dgst through mbcrypto both
# ways. Skipped when python3-cryptography is not installed. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
PY=/usr/bin/python3
if ! "$PY" -c 'import cryptography' 2> /dev/null; then
    skip "python3-cryptography not installed (apt-get install python3-cryptography)"
    tap_end
fi
certs
export MBCRYPTO_SERVE=all
system_cnfs
d=$scratch
K=$MBC_TEST_CERTS
SCRIPT=$MBC_SRC/tests/openssl/compat_py.py
cp "$K/rsa2048.key" "$K/rsa1024.key" "$K/ec256.key" "$d/"
gen() { OPENSSL_CONF=$theirs_cnf "${OPENSSL[@]}" genpkey "$@" 2> /dev/null; }
gen -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$d/ec384.key"
gen -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/ec256b.key"
gen -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$d/ec384b.key"
gen -algorithm X25519 -out "$d/x25519.key"
gen -algorithm X25519 -out "$d/x25519b.key"
head -c 1000 /dev/urandom > "$d/msg.bin"
note "$("${OSSL_RUN[@]}" "$PY" -c 'from cryptography.hazmat.backends.openssl import backend as b
import cryptography; print("cryptography", cryptography.__version__, b.openssl_version_text())')"

# ECDSA signatures by openssl dgst through mbcrypto, for compat_py.py check.
for c in P-256:ec256:sha256 P-384:ec384:sha384; do
    IFS=: read -r curve key md <<< "$c"
    run ours "cli-$curve" dgst "-$md" -sign "$d/$key.key" -out "$d/cli-$curve.sig" "$d/msg.bin"
    bad=$(check_counters "$d/cli-$curve.ctr:ops-ecdsa-sign>=1")
    [ -z "$bad" ] || not_ok "openssl dgst -sign $curve through mbcrypto:$bad"
done

# make WHO: compat_py.py make with WHO's configuration, into $d/WHO.json.
pymake() {
    if ! run_prog "$1" "make-$1" "$PY" "$SCRIPT" make "$d/$1.json" "$d"; then
        not_ok "python make with the $1 configuration"
        sed 's/^/#   /' "$d/make-$1.err" | tail -n 5
        return 1
    fi
    ok "python make with the $1 configuration"
}
# pycheck WHO PEER: compat_py.py check of PEER's results with WHO's
# configuration: one case per line it prints.
pycheck() {
    local line
    run_prog "$1" "check-$1" "$PY" "$SCRIPT" check "$d/$1.json" "$d/$2.json" "$d" \
        > "$d/check-$1.out" || not_ok "python check with the $1 configuration: exit $?"
    sed 's/^/#   /' "$d/check-$1.err" | tail -n 5
    while read -r line; do
        case $line in
        PASS\ *) ok "$1 checks what $2 made: ${line#PASS }" ;;
        *) not_ok "$1 checks what $2 made: ${line#FAIL }" ;;
        esac
    done < "$d/check-$1.out"
    [ "$(grep -c '^PASS' "$d/check-$1.out")" -ge 12 ] || not_ok "$1: too few cases ran"
}
pymake ours && pymake theirs && {
    bad=$(check_counters "$d/make-ours.ctr:ops-aes-gcm-encrypt>=3" \
        "$d/make-ours.ctr:ops-aes-gcm-decrypt>=3" "$d/make-ours.ctr:ops-rsa-sign>=3" \
        "$d/make-ours.ctr:keys-rsa>=1" "$d/make-ours.ctr:keys-rsa-refused>=1" \
        "$d/make-ours.ctr:ops-ecdh>=2" "$d/make-ours.ctr:ops-x25519-derive>=2" \
        "$d/make-ours.ctr:ops-x25519-keygen>=1")
    if [ -z "$bad" ]; then ok "mbcrypto computed python's make"; else
        not_ok "mbcrypto computed python's make:$bad"; fi
    pycheck theirs ours
    pycheck ours theirs
    bad=$(check_counters "$d/check-ours.ctr:ops-aes-gcm-decrypt>=3" \
        "$d/check-ours.ctr:ops-rsa-verify>=3" "$d/check-ours.ctr:ops-ecdh>=2" \
        "$d/check-ours.ctr:ops-x25519-derive>=1")
    if [ -z "$bad" ]; then ok "mbcrypto computed python's check"; else
        not_ok "mbcrypto computed python's check:$bad"; fi
    # python's ECDSA signatures, verified by openssl dgst through mbcrypto.
    for who in ours theirs; do
        for c in P-256:ec256:sha256 P-384:ec384:sha384; do
            IFS=: read -r curve key md <<< "$c"
            OPENSSL_CONF=$theirs_cnf "${OPENSSL[@]}" pkey -in "$d/$key.key" -pubout \
                -out "$d/$key.pub" 2> /dev/null
            python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 3)' > "$d/MSG"
            if run ours "v-$who-$curve" dgst "-$md" -verify "$d/$key.pub" \
                -signature "$d/$who.json.$curve.sig" "$d/MSG" > /dev/null &&
                [ -z "$(check_counters "$d/v-$who-$curve.ctr:ops-ecdsa-verify>=1")" ]; then
                ok "openssl dgst through mbcrypto verifies python's ECDSA $curve ($who)"
            else
                not_ok "openssl dgst through mbcrypto verifies python's ECDSA $curve ($who)"
            fi
        done
    done
}
tap_end
