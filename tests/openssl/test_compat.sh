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
# parse keeps mbcrypto out, with a line on stderr (item 9). TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
certs
export MBCRYPTO_SERVE=all

# The README's openssl.cnf, with the module from the build tree; and one
# that loads the default provider alone.
ours_cnf=$scratch/mbcrypto.cnf
cat > "$ours_cnf" <<EOF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
alg_section = algorithm_sect
[provider_sect]
default = default_sect
mbcrypto = mbcrypto_sect
[default_sect]
activate = 1
[mbcrypto_sect]
module = $MBC_PROVIDER_DIR/mbcrypto.so
activate = 1
[algorithm_sect]
default_properties = ?provider=mbcrypto
EOF
theirs_cnf=$scratch/default.cnf
printf 'openssl_conf = openssl_init\n[openssl_init]\n' > "$theirs_cnf"

# run WHO OUT CMD...: the openssl command CMD with WHO's configuration
# (ours: counted into $scratch/OUT.ctr), stderr in $scratch/OUT.err.
run() {
    local who=$1 out=$2 cnf=$theirs_cnf
    shift 2
    [ "$who" = ours ] && cnf=$ours_cnf
    rm -f "$scratch/$out.ctr"
    OPENSSL_CONF=$cnf MBCRYPTO_COUNTERS_FILE="$scratch/$out.ctr" "${OPENSSL[@]}" "$@" \
        2> "$scratch/$out.err"
}

# sigalg FILE: the signature algorithm block of a request or certificate.
sigalg() {
    OPENSSL_CONF=$theirs_cnf "${OPENSSL[@]}" "${2:-req}" -in "$1" -noout -text |
        sed -n '/^    Signature Algorithm/,/Signature Value/p'
}

K=$MBC_TEST_CERTS
head -c 3000 /dev/urandom > "$scratch/data"
"${OPENSSL[@]}" pkey -in "$K/rsa2048.key" -pubout -out "$scratch/rsa.pub" 2>/dev/null

# both NAME OUT-OURS OUT-THEIRS CMD...: the openssl command CMD (its
# argument @OUT@ replaced by OUT-OURS or OUT-THEIRS) with each
# configuration. Returns 0 when both made it; 1 when both refused it (a case
# passed if ours said why on stderr, failed if it failed silently); 2 when
# they differ (a case failed).
both() {
    local name=$1 oo=$2 ot=$3 ro rt
    shift 3
    run ours "$name.o" "${@//@OUT@/$oo}"
    ro=$?
    run theirs "$name.t" "${@//@OUT@/$ot}"
    rt=$?
    if [ "$ro" -ne "$rt" ]; then
        not_ok "$name: exit $ro, default provider $rt"
        sed 's/^/#   /' "$scratch/$name.o.err" | head -n 5
        return 2
    fi
    if [ "$ro" -ne 0 ]; then
        if grep -q . "$scratch/$name.o.err"; then ok "$name (refused by both)"; else
            not_ok "$name: failed silently"; fi
        return 1
    fi
    return 0
}

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
