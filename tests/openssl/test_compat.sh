#!/usr/bin/env bash
# test_compat.sh 30|35 - the provider loaded system-wide through the
# README's openssl.cnf changes nothing for the openssl command but who
# computes (issue 22): each case runs one command with that configuration
# (MBCRYPTO_SERVE=all) and with the default provider alone, and both must
# end the same way. Certificate requests and self-signed certificates with
# RSA-PSS and with ECDSA and SHA-3 carry the default provider's signature
# AlgorithmIdentifier and verify with it (item 4; where it has none, both
# fail and ours says why); PSS salt lengths "-1", "-2", "-3" and OpenSSL's
# names are taken as the version under test takes them (item 7); RSA
# signatures with SHAKE, SM3 or BLAKE2 are refused as it refuses them (item
# 8). The counters prove mbcrypto signed. A serve setting that does not
# parse keeps mbcrypto out, with a line on stderr (item 9). ECDSA takes and
# refuses the digests the default provider of the version under test takes
# and refuses, every one it lists; deterministic ECDSA (nonce-type) is the
# default provider's signature byte for byte. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
certs
export MBCRYPTO_SERVE=all

system_cnfs

# sigalg FILE: the signature algorithm block of a request or certificate.
sigalg() {
    OPENSSL_CONF=$theirs_cnf "${OPENSSL[@]}" "${2:-req}" -in "$1" -noout -text |
        sed -n '/^    Signature Algorithm/,/Signature Value/p'
}

K=$MBC_TEST_CERTS
head -c 3000 /dev/urandom > "$scratch/data"
"${OPENSSL[@]}" pkey -in "$K/rsa2048.key" -pubout -out "$scratch/rsa.pub" 2>/dev/null

# sign_case NAME KEY COUNTER ARGS...: a request and a self-signed
# certificate (openssl req) made with ARGS: ours and the default provider's
# succeed or fail together; made, ours has the same signature algorithm
# block and verifies with the default provider alone, and mbcrypto signed
# (COUNTER); failed, ours put an error on stderr.
sign_case() {
    local name=$1 key=$2 ctr=$3
    shift 3
    local o=$scratch/$name.o.csr t=$scratch/$name.t.csr
    both "$name" "$o" "$t" req -new -key "$key" -subj /CN=compat "$@" -out @OUT@ || return
    local bad
    bad=$(check_counters "$scratch/$name.o.ctr:$ctr>=1")
    if [ -n "$bad" ]; then not_ok "$name: counters$bad"; return; fi
    if [ "$(sigalg "$o")" != "$(sigalg "$t")" ] || [ -z "$(sigalg "$o")" ]; then
        not_ok "$name: signature algorithm differs"
        diff <(sigalg "$o") <(sigalg "$t") | sed 's/^/#   /'
        return
    fi
    # The default provider verifies ours as it verifies its own (3.0 knows
    # no ecdsa-with-SHA3 when verifying: neither then).
    local vo=0 vt=0
    run theirs "$name.v" req -in "$o" -verify -noout > /dev/null || vo=1
    run theirs "$name.vt" req -in "$t" -verify -noout > /dev/null || vt=1
    if [ "$vo" -ne "$vt" ]; then
        not_ok "$name: the default provider verifies ours: $vo, its own: $vt"
        return
    fi
    # The same as a self-signed certificate.
    local c=$scratch/$name.crt
    if ! run ours "$name.x" req -x509 -new -key "$key" -subj /CN=compat -days 1 "$@" -out "$c" ||
        { [ "$vo" -eq 0 ] && ! run theirs "$name.xv" verify -CAfile "$c" "$c" > /dev/null; } ||
        [ "$(sigalg "$c" x509)" != "$(sigalg "$o")" ]; then
        not_ok "$name: self-signed certificate"
        sed 's/^/#   /' "$scratch/$name.x.err" | head -n 5
        return
    fi
    ok "$name"
}

PSS=(-sigopt rsa_padding_mode:pss)
sign_case csr-rsa-pss-sha256 "$K/rsa2048.key" ops-rsa-sign -sha256 "${PSS[@]}"
sign_case csr-rsa-pss-sha384-digest "$K/rsa2048.key" ops-rsa-sign -sha384 "${PSS[@]}" \
    -sigopt rsa_pss_saltlen:digest
sign_case csr-rsa-pss-sha512-mgf1-sha256 "$K/rsa2048.key" ops-rsa-sign -sha512 "${PSS[@]}" \
    -sigopt rsa_mgf1_md:sha256 -sigopt rsa_pss_saltlen:20
sign_case csr-rsa-pss-sha1 "$K/rsa2048.key" ops-rsa-sign -sha1 "${PSS[@]}"
sign_case csr-rsa-pss-sha3-256 "$K/rsa2048.key" ops-rsa-sign -sha3-256 "${PSS[@]}"
sign_case csr-rsa-sha3-256 "$K/rsa2048.key" ops-rsa-sign -sha3-256
sign_case csr-rsa-sha256 "$K/rsa2048.key" ops-rsa-sign -sha256
for md in sha3-256 sha3-384 sha3-512 sha256 sha384; do
    sign_case "csr-ecdsa-$md" "$K/ec256.key" ops-ecdsa-sign "-$md"
done

# dgst_case NAME DGST-ARGS...: openssl dgst -sign with DGST-ARGS (an RSA
# key): ours and the default provider's succeed or fail together (failed,
# ours says why); made,
# mbcrypto signed it and the default provider verifies it (PSS: any salt).
dgst_case() {
    local name=$1
    shift
    both "$name" "$scratch/$name.sig" "$scratch/$name.tsig" dgst -sign "$K/rsa2048.key" "$@" \
        -out @OUT@ "$scratch/data" || return
    local vargs=() a
    for a in "$@"; do
        case $a in rsa_pss_saltlen:*) vargs+=(rsa_pss_saltlen:auto) ;; *) vargs+=("$a") ;; esac
    done
    local bad vo=0 vt=0
    bad=$(check_counters "$scratch/$name.o.ctr:ops-rsa-sign>=1")
    run theirs "$name.v" dgst -verify "$scratch/rsa.pub" "${vargs[@]}" \
        -signature "$scratch/$name.sig" "$scratch/data" > /dev/null || vo=1
    run theirs "$name.vt" dgst -verify "$scratch/rsa.pub" "${vargs[@]}" \
        -signature "$scratch/$name.tsig" "$scratch/data" > /dev/null || vt=1
    if [ -n "$bad" ]; then
        not_ok "$name: counters$bad"
    elif [ "$vo" -ne 0 ] || [ "$vt" -ne 0 ]; then
        not_ok "$name: the default provider verifies ours: $vo, its own: $vt"
    else
        ok "$name"
    fi
}

for s in -1 -2 -3 -4 -5 digest max auto auto-digestmax 0 32 222 223; do
    dgst_case "pss-saltlen-$s" -sha256 "${PSS[@]}" -sigopt "rsa_pss_saltlen:$s"
done
for md in shake128 shake256 sm3 blake2b512 blake2s256 sha3-256 sha512-256 md5 ripemd160; do
    dgst_case "pkcs1-$md" "-$md"
    dgst_case "pss-$md" "-$md" "${PSS[@]}"
done
# The ECDSA digest set (item 3 of the follow-up): every digest the
# version under test knows, with P-256 and P-384 keys, through openssl dgst
# (a digest-and-sign) and pkeyutl with a digest set on a digest of its size
# (the digest parameter): ours and the default provider's succeed or fail
# together (failed: ours says why), and the default provider verifies what
# ours made; the counters prove mbcrypto signed.
"${OPENSSL[@]}" genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$scratch/ec384.key" \
    2> /dev/null
for c in ec256 ec384; do
    k=$K/$c.key
    [ "$c" = ec384 ] && k=$scratch/ec384.key
    "${OPENSSL[@]}" pkey -in "$k" -pubout -out "$scratch/$c.pub" 2> /dev/null
done
# One name of each digest the version under test provides (its first that
# is not an OID).
mapfile -t digests < <(OPENSSL_CONF=$theirs_cnf "${OPENSSL[@]}" list -digest-algorithms |
    sed -n '/^Provided:/,$p' | sed '1d; s/ @ .*//; s/[{}]//g' | tr -d ' ' |
    awk -F, '{n=$1; for (i = 1; i <= NF; i++) if ($i !~ /^[0-9.]+$/) { n = $i; break }; print n}')
note "digests: ${digests[*]}"
[ "${#digests[@]}" -ge 10 ] || not_ok "ecdsa digests: only ${#digests[@]} listed"
ecdsa_md_case() {
    local md=$1 c name bad="" made=0 len f=${1//\//_}
    for c in ec256 ec384; do
        local k=$K/$c.key
        [ "$c" = ec384 ] && k=$scratch/ec384.key
        name=ecdsa-$c-dgst-$f
        if both "$name" "$scratch/$name.sig" "$scratch/$name.tsig" dgst "-$md" -sign "$k" \
            -out @OUT@ "$scratch/data"; then
            made=$((made + 1))
            run theirs "$name.v" dgst "-$md" -verify "$scratch/$c.pub" -signature \
                "$scratch/$name.sig" "$scratch/data" > /dev/null || bad+=" $c: dgst not verified"
            bad+=$(check_counters "$scratch/$name.o.ctr:ops-ecdsa-sign>=1")
        elif [ $? -eq 2 ]; then
            return
        fi
        # A digest of md's size (20 bytes for one without a size), signed
        # with the digest parameter set.
        len=$("${OPENSSL[@]}" dgst "-$md" -binary < /dev/null 2> /dev/null | wc -c)
        [ "$len" -gt 0 ] || len=20
        head -c "$len" "$scratch/data" > "$scratch/$name.h"
        name=ecdsa-$c-pkeyutl-$f
        if both "$name" "$scratch/$name.sig" "$scratch/$name.tsig" pkeyutl -sign -inkey "$k" \
            -pkeyopt "digest:$md" -in "$scratch/ecdsa-$c-dgst-$f.h" -out @OUT@; then
            made=$((made + 1))
            run theirs "$name.v" pkeyutl -verify -pubin -inkey "$scratch/$c.pub" -pkeyopt \
                "digest:$md" -in "$scratch/ecdsa-$c-dgst-$f.h" -sigfile "$scratch/$name.sig" \
                > /dev/null || bad+=" $c: pkeyutl not verified"
            bad+=$(check_counters "$scratch/$name.o.ctr:ops-ecdsa-sign>=1")
        elif [ $? -eq 2 ]; then
            return
        fi
    done
    if [ -n "$bad" ]; then not_ok "ecdsa-$md:$bad"; elif [ "$made" -gt 0 ]; then
        ok "ecdsa-$md (made by both: $made of 4)"; fi
}
for md in "${digests[@]}"; do
    ecdsa_md_case "$md"
done
# Deterministic ECDSA (nonce-type 1, RFC 6979, from 3.2 on): the default
# provider's signature byte for byte (mbcrypto's nonces are random, so it
# passes these on); nonce-type 0 is mbcrypto's. 3.0 knows no nonce-type:
# both refuse.
head -c 32 "$scratch/data" > "$scratch/h32"
for c in ec256 ec384; do
    k=$K/$c.key
    [ "$c" = ec384 ] && k=$scratch/ec384.key
    SAME=1 cross "ecdsa-$c-deterministic-dgst" "" "" dgst -sha384 -sign "$k" \
        -sigopt nonce-type:1 -out @OUT@ "$scratch/data" -- \
        dgst -sha384 -verify "$scratch/$c.pub" -signature @IN@ "$scratch/data"
    SAME=1 cross "ecdsa-$c-deterministic-pkeyutl" "" "" pkeyutl -sign -inkey "$k" \
        -pkeyopt digest:sha256 -pkeyopt nonce-type:1 -in "$scratch/h32" -out @OUT@ -- \
        pkeyutl -verify -pubin -inkey "$scratch/$c.pub" -pkeyopt digest:sha256 \
        -in "$scratch/h32" -sigfile @IN@
    cross "ecdsa-$c-nonce-type-0" "ops-ecdsa-sign>=1" "ops-ecdsa-verify>=1" dgst -sha256 \
        -sign "$k" -sigopt nonce-type:0 -out @OUT@ "$scratch/data" -- \
        dgst -sha256 -verify "$scratch/$c.pub" -signature @IN@ "$scratch/data"
done

quiet() { "$@" > /dev/null 2>&1; }

# serve_case NAME WANT-STDERR CNF [VAR=VALUE]: openssl list -providers with
# configuration CNF (and the environment setting): with WANT-STDERR (a
# malformed setting, item 9) mbcrypto is not loaded, OpenSSL's own code
# runs (openssl dgst works) and stderr says why; with "" it is loaded.
serve_case() {
    local name=$1 want=$2 cnf=$3 out
    shift 3
    out=$(env "$@" OPENSSL_CONF="$cnf" "${OPENSSL[@]}" list -providers 2> "$scratch/$name.err")
    local listed=0
    grep -q mbcrypto <<< "$out" && listed=1
    if [ -z "$want" ]; then
        check "$name" [ "$listed" -eq 1 ]
    elif [ "$listed" -eq 1 ] || ! grep -qF "mbcrypto: $want" "$scratch/$name.err"; then
        not_ok "$name: loaded $listed, stderr: $(head -c 300 "$scratch/$name.err")"
    else
        check "$name" quiet env "$@" OPENSSL_CONF="$cnf" "${OPENSSL[@]}" dgst -sha256 "$scratch/data"
    fi
}

bad_cnf=$scratch/bad-serve.cnf
sed '/^module = /a serve = rsa,,ecdsa' "$ours_cnf" > "$bad_cnf"
serve_case serve-env-trailing-space 'MBCRYPTO_SERVE "none "' "$ours_cnf" 'MBCRYPTO_SERVE=none '
serve_case serve-env-bogus 'MBCRYPTO_SERVE "bogus"' "$ours_cnf" MBCRYPTO_SERVE=bogus
serve_case serve-env-empty 'MBCRYPTO_SERVE ""' "$ours_cnf" MBCRYPTO_SERVE=
serve_case serve-cnf-empty-item 'the serve setting "rsa,,ecdsa"' "$bad_cnf" -u MBCRYPTO_SERVE
for v in auto all none rsa,ecdsa; do
    serve_case "serve-env-$v" "" "$ours_cnf" "MBCRYPTO_SERVE=$v"
done
tap_end
