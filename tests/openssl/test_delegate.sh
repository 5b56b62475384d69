#!/usr/bin/env bash
# test_delegate.sh 30|35 - what the provider leaves to the default provider
# in its child library context, through the openssl command (issue 22):
# RSA key generation (genrsa of a size mbcrypto serves and of one it does
# not, req -newkey rsa:2048 -x509 signed by mbcrypto), and CMS to P-256
# and P-384 recipients (ECDH with the X9.63 KDF by mbcrypto), each checked
# by the default provider alone and, for CMS, both ways. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
export MBCRYPTO_SERVE=all
d=$scratch
ossl() { "${OPENSSL[@]}" "$@" 2>> "$d/err.log"; }

# ours NAME EXPECT... -- ARGS...: openssl ARGS with mbcrypto, its counters
# in $d/NAME.ctr checked against EXPECT (COUNTER>=N or COUNTER=N); the
# failures are printed (empty when none).
ours() {
    local name=$1 ctr="$d/$1.ctr"
    shift
    local want=()
    while [ "$1" != -- ]; do want+=("$ctr:$1"); shift; done
    shift
    local sub=$1
    shift
    MBCRYPTO_COUNTERS_FILE="$ctr" ossl "$sub" "${PROV[@]}" "$@" || { echo " $sub failed"; return; }
    check_counters "${want[@]}"
}

# case_ok NAME FAILURES: ok when FAILURES is empty.
case_ok() {
    if [ -z "$2" ]; then ok "$1"; else not_ok "$1:$2"; tail -n 3 "$d/err.log" | sed 's/^/#   /'; fi
}

# RSA key generation: the key is the default provider's generation, valid,
# of the asked size; 2048 bits become mbcrypto's key (keys-rsa).
for bits in 2048 1024; do
    want=(keys-rsa'>='1)
    [ "$bits" = 1024 ] && want=(keys-rsa-refused'>='1)
    bad=$(ours "genrsa$bits" "${want[@]}" -- genrsa -out "$d/rsa$bits.pem" "$bits")
    ossl rsa "${DEFAULT_ONLY[@]}" -check -noout -in "$d/rsa$bits.pem" > /dev/null ||
        bad+=" check failed"
    ossl pkey "${DEFAULT_ONLY[@]}" -in "$d/rsa$bits.pem" -text_pub -noout |
        grep -q "($bits bit)" || bad+=" not $bits bits"
    case_ok "genrsa-$bits" "$bad"
done
bad=$(ours genpkey-rsa3072 keys-rsa'>='1 -- genpkey -algorithm RSA \
    -pkeyopt rsa_keygen_bits:3072 -pkeyopt rsa_keygen_pubexp:3 -out "$d/rsa3072.pem")
ossl pkey "${DEFAULT_ONLY[@]}" -in "$d/rsa3072.pem" -text_pub -noout |
    grep -q "Exponent: 3 " || bad+=" exponent not 3"
case_ok genpkey-rsa3072-e3 "$bad"

# A self-signed certificate with a new RSA key: generated, then signed by
# mbcrypto; the default provider verifies it.
bad=$(ours req-rsa2048 keys-rsa'>='1 ops-rsa-sign'>='1 -- req -newkey rsa:2048 -nodes -x509 \
    -subj /CN=mbcrypto-test -keyout "$d/req.key" -out "$d/req.crt")
ossl verify "${DEFAULT_ONLY[@]}" -CAfile "$d/req.crt" "$d/req.crt" > /dev/null ||
    bad+=" verify failed"
case_ok req-newkey-rsa2048-x509 "$bad"

# CMS to an EC recipient: encrypted with mbcrypto's ECDH and the X9.63 KDF
# (the ephemeral key is made from the certificate's key, by its provider),
# decrypted by each side; and the other way.
head -c 3000 /dev/urandom > "$d/msg.bin"
for curve in P-256 P-384; do
    ossl req "${DEFAULT_ONLY[@]}" -newkey ec -pkeyopt ec_paramgen_curve:$curve -nodes -x509 \
        -subj /CN=ec -keyout "$d/$curve.key" -out "$d/$curve.crt" || not_ok "cms-$curve: cert"
    bad=$(ours "cms-enc-$curve" ops-ecdh'>='1 -- cms -encrypt -binary \
        -aes-256-cbc -in "$d/msg.bin" -out "$d/$curve.cms" "$d/$curve.crt")
    ossl cms "${DEFAULT_ONLY[@]}" -decrypt -binary -in "$d/$curve.cms" -inkey "$d/$curve.key" \
        -recip "$d/$curve.crt" -out "$d/$curve.dflt" && cmp -s "$d/msg.bin" "$d/$curve.dflt" ||
        bad+=" default provider's decryption differs"
    bad+=$(ours "cms-dec-$curve" ops-ecdh'>='1 -- cms -decrypt -binary -in "$d/$curve.cms" \
        -inkey "$d/$curve.key" -recip "$d/$curve.crt" -out "$d/$curve.ours")
    cmp -s "$d/msg.bin" "$d/$curve.ours" || bad+=" our decryption differs"
    ossl cms "${DEFAULT_ONLY[@]}" -encrypt -binary -aes-128-cbc -in "$d/msg.bin" \
        -out "$d/$curve.d.cms" "$d/$curve.crt" || bad+=" default encryption failed"
    bad+=$(ours "cms-dec2-$curve" ops-ecdh'>='1 -- cms -decrypt -binary -in "$d/$curve.d.cms" \
        -inkey "$d/$curve.key" -recip "$d/$curve.crt" -out "$d/$curve.ours2")
    cmp -s "$d/msg.bin" "$d/$curve.ours2" || bad+=" our decryption of theirs differs"
    case_ok "cms-ec-$curve" "$bad"
done
tap_end
