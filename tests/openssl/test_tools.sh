#!/usr/bin/env bash
# test_tools.sh 30|35 - the openssl programs with the provider loaded
# system-wide (the README's openssl.cnf, MBCRYPTO_SERVE=all) against the
# default provider alone (issue 22's compatibility suite): genrsa, genpkey,
# req, x509, ca, cms, smime, dgst, pkeyutl and enc, with RSA 2048 and 1024
# (a size mbcrypto does not serve), RSA-PSS, P-256, P-384 and X25519 where
# they apply. Each case (cross in lib.sh) runs one command with each
# configuration: both succeed or both fail (ours saying why); what ours made
# the default provider alone verifies or decrypts, and what it made ours
# does; deterministic outputs (PKCS#1 v1.5 signatures, ECDH and X25519
# secrets, CBC ciphertexts) are equal; the counters prove mbcrypto computed
# what it serves. TAP on stdout.
. "$(dirname "$0")/lib.sh"
use_openssl "$1" || { skip "OpenSSL $1 not available"; tap_end; }
certs
export MBCRYPTO_SERVE=all
system_cnfs
K=$MBC_TEST_CERTS
d=$scratch
head -c 3000 /dev/urandom > "$d/data"
head -c 32 /dev/urandom > "$d/h32"
head -c 20 /dev/urandom > "$d/small"
# dflt ARGS...: openssl ARGS with the default provider alone (the cases'
# keys and certificates); a failure is a failed case.
dflt() {
    OPENSSL_CONF=$theirs_cnf "${OPENSSL[@]}" "$@" > /dev/null 2> "$d/setup.err" ||
        { not_ok "setup: openssl $*"; sed 's/^/#   /' "$d/setup.err" | head -n 3; }
}

# --------------------------------------------------------- key generation
cross genrsa-2048 "keys-rsa>=1" "" genrsa -out @OUT@ 2048 -- pkey -in @IN@ -check -noout
cross genrsa-1024 "keys-rsa-refused>=1" "" genrsa -out @OUT@ 1024 -- pkey -in @IN@ -check -noout
cross genpkey-rsa-pss "" "" genpkey -algorithm RSA-PSS -pkeyopt rsa_keygen_bits:2048 \
    -out @OUT@ -- pkey -in @IN@ -check -noout
for c in P-256 P-384; do
    cross "genpkey-ec-$c" "ops-ec-keygen>=1" "" genpkey -algorithm EC \
        -pkeyopt "ec_paramgen_curve:$c" -out @OUT@ -- pkey -in @IN@ -check -noout
done
cross genpkey-x25519 "ops-x25519-keygen>=1" "" genpkey -algorithm X25519 -out @OUT@ -- \
    pkey -in @IN@ -noout
# The keys of the cases below (the default provider's), with certificates.
dflt genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$d/ec384.key"
dflt req -x509 -new -key "$d/ec384.key" -subj /CN=ec384 -days 2 -out "$d/ec384.crt" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign,cRLSign,digitalSignature
for c in rsa2048 rsa1024 rsapss ec256; do
    cp "$K/$c.key" "$K/$c.crt" "$d/"
done
for k in rsa2048 rsa1024 rsapss ec256 ec384; do
    dflt pkey -in "$d/$k.key" -pubout -out "$d/$k.pub"
done
# sig_ctr KEY: what ours counts when signing with KEY, and verifying.
sig_ctr() {
    case $1 in
    rsa2048) echo "ops-rsa-sign>=1" ;;
    ec*) echo "ops-ecdsa-sign>=1" ;;
    esac
}
ver_ctr() {
    case $1 in
    rsa2048) echo "ops-rsa-verify>=1" ;;
    ec*) echo "ops-ecdsa-verify>=1" ;;
    esac
}

# ------------------------------------------------- requests, certificates
for k in rsa2048 rsa1024 rsapss ec256 ec384; do
    cross "req-x509-$k" "$(sig_ctr $k)" "$(ver_ctr $k)" req -x509 -new -key "$d/$k.key" \
        -subj "/CN=$k" -days 2 -out @OUT@ -- verify -check_ss_sig -CAfile @IN@ @IN@
    cross "req-csr-$k" "$(sig_ctr $k)" "$(ver_ctr $k)" req -new -key "$d/$k.key" \
        -subj "/CN=csr-$k" -out @OUT@ -- req -verify -noout -in @IN@
done
cross req-csr-rsa2048-pss "ops-rsa-sign>=1" "ops-rsa-verify>=1" req -new -key "$d/rsa2048.key" \
    -subj /CN=pss -sigopt rsa_padding_mode:pss -out @OUT@ -- req -verify -noout -in @IN@
# A new key and its self-signed certificate in one command.
for nk in rsa:2048:"keys-rsa>=1 ops-rsa-sign>=1" rsa:1024:"keys-rsa-refused>=1" \
    ec:P-384:"ops-ec-keygen>=1 ops-ecdsa-sign>=1" rsa-pss:2048:""; do
    IFS=: read -r alg arg ctr <<< "$nk"
    opt=(-newkey "$alg:$arg")
    [ "$alg" = ec ] && opt=(-newkey ec -pkeyopt "ec_paramgen_curve:$arg")
    [ "$alg" = rsa-pss ] && opt=(-newkey rsa-pss -pkeyopt "rsa_keygen_bits:$arg")
    cross "req-newkey-$alg-$arg" "$ctr" "" req -x509 "${opt[@]}" -nodes -keyout "@OUT@.key" \
        -subj "/CN=new-$alg" -days 1 -out @OUT@ -- verify -check_ss_sig -CAfile @IN@ @IN@
done
dflt req -new -key "$d/rsa2048.key" -subj /CN=leaf -out "$d/leaf.csr"
# x509 -req: a CA of each kind signs the request.
for k in rsa2048 rsa1024 ec256 ec384; do
    cross "x509-req-ca-$k" "$(sig_ctr $k)" "$(ver_ctr $k)" x509 -req -in "$d/leaf.csr" \
        -CA "$d/$k.crt" -CAkey "$d/$k.key" -set_serial 7 -days 1 -out @OUT@ -- \
        verify -CAfile "$d/$k.crt" @IN@
done
# An X25519 certificate (its key cannot sign: the CA's key does).
dflt genpkey -algorithm X25519 -out "$d/x25519.key"
dflt pkey -in "$d/x25519.key" -pubout -out "$d/x25519.pub"
cross x509-force-pubkey-x25519 "ops-rsa-sign>=1" "" x509 -req -in "$d/leaf.csr" \
    -CA "$d/rsa2048.crt" -CAkey "$d/rsa2048.key" -force_pubkey "$d/x25519.pub" -set_serial 8 \
    -days 1 -out @OUT@ -- verify -CAfile "$d/rsa2048.crt" @IN@
dflt x509 -req -in "$d/leaf.csr" -CA "$d/rsa2048.crt" -CAkey "$d/rsa2048.key" \
    -force_pubkey "$d/x25519.pub" -set_serial 9 -days 1 -out "$d/x25519.crt"

# ----------------------------------------------------------------- ca
# A minimal CA directory per side (@WHO@) and CA key.
for k in rsa2048 ec256; do
    for w in o t; do
        mkdir -p "$d/ca-$k-$w/new"
        : > "$d/ca-$k-$w/index.txt"
        echo 01 > "$d/ca-$k-$w/serial"
        echo 01 > "$d/ca-$k-$w/crlnumber"
        cat > "$d/ca-$k-$w/ca.cnf" <<EOF
[ca]
default_ca = ca_sect
[ca_sect]
dir = $d/ca-$k-$w
database = \$dir/index.txt
new_certs_dir = \$dir/new
certificate = $d/$k.crt
private_key = $d/$k.key
serial = \$dir/serial
crlnumber = \$dir/crlnumber
default_md = sha256
default_days = 1
default_crl_days = 1
unique_subject = no
policy = policy_sect
[policy_sect]
commonName = supplied
EOF
    done
    cross "ca-sign-$k" "$(sig_ctr $k)" "$(ver_ctr $k)" ca -batch -config "$d/ca-$k-@WHO@/ca.cnf" \
        -in "$d/leaf.csr" -out @OUT@ -- verify -CAfile "$d/$k.crt" @IN@
    cross "ca-gencrl-$k" "$(sig_ctr $k)" "$(ver_ctr $k)" ca -batch \
        -config "$d/ca-$k-@WHO@/ca.cnf" -gencrl -out @OUT@ -- \
        crl -in @IN@ -CAfile "$d/$k.crt" -noout
done

# ---------------------------------------------------------------- cms
for k in rsa2048 rsa1024 ec256 ec384; do
    cross "cms-sign-$k" "$(sig_ctr $k)" "$(ver_ctr $k)" cms -sign -nodetach -binary -in "$d/data" \
        -signer "$d/$k.crt" -inkey "$d/$k.key" -outform DER -out @OUT@ -- \
        cms -verify -binary -inform DER -in @IN@ -CAfile "$d/$k.crt" -out @PT@
done
cross cms-sign-rsa2048-pss "ops-rsa-sign>=1" "ops-rsa-verify>=1" cms -sign -nodetach -binary \
    -in "$d/data" -signer "$d/rsa2048.crt" -inkey "$d/rsa2048.key" \
    -keyopt rsa_padding_mode:pss -outform DER -out @OUT@ -- \
    cms -verify -binary -inform DER -in @IN@ -CAfile "$d/rsa2048.crt" -out @PT@
cross cms-sign-rsa1024-pss "" "" cms -sign -nodetach -binary -in "$d/data" \
    -signer "$d/rsa1024.crt" -inkey "$d/rsa1024.key" -keyopt rsa_padding_mode:pss \
    -outform DER -out @OUT@ -- \
    cms -verify -binary -inform DER -in @IN@ -CAfile "$d/rsa1024.crt" -out @PT@
for k in rsa2048 rsa1024; do
    cross "cms-encrypt-gcm-oaep-$k" "ops-aes-gcm-encrypt>=1" "ops-aes-gcm-decrypt>=1" cms \
        -encrypt -binary -aes-256-gcm -in "$d/data" -outform DER -out @OUT@ \
        -recip "$d/$k.crt" -keyopt rsa_padding_mode:oaep -- cms -decrypt -binary -inform DER \
        -in @IN@ -inkey "$d/$k.key" -recip "$d/$k.crt" -out @PT@
done
# AuthEnvelopedData (AES-256-GCM) and EnvelopedData (AES-256-CBC) to each
# kind of recipient.
for k in rsa2048 rsa1024 ec256 ec384 x25519; do
    mk="ops-aes-gcm-encrypt>=1" vf="ops-aes-gcm-decrypt>=1"
    case $k in ec*)
        mk+=" ops-ecdh>=1"
        vf+=" ops-ecdh>=1"
        ;;
    esac
    cross "cms-encrypt-gcm-$k" "$mk" "$vf" cms -encrypt -binary -aes-256-gcm -in "$d/data" \
        -outform DER -out @OUT@ "$d/$k.crt" -- cms -decrypt -binary -inform DER -in @IN@ \
        -inkey "$d/$k.key" -recip "$d/$k.crt" -out @PT@
    cross "cms-encrypt-cbc-$k" "" "" cms -encrypt -binary -aes-256-cbc -in "$d/data" \
        -outform DER -out @OUT@ "$d/$k.crt" -- cms -decrypt -binary -inform DER -in @IN@ \
        -inkey "$d/$k.key" -recip "$d/$k.crt" -out @PT@
done

# -------------------------------------------------------------- smime
for k in rsa2048 ec256; do
    cross "smime-sign-$k" "$(sig_ctr $k)" "$(ver_ctr $k)" smime -sign -nodetach -binary \
        -in "$d/data" \
        -signer "$d/$k.crt" -inkey "$d/$k.key" -out @OUT@ -- \
        smime -verify -binary -in @IN@ -CAfile "$d/$k.crt" -out @PT@
done
for k in rsa2048 ec256; do
    for c in aes-256-gcm aes-256-cbc; do
        cross "smime-encrypt-$c-$k" "" "" smime -encrypt -binary "-$c" -in "$d/data" \
            -out @OUT@ "$d/$k.crt" -- smime -decrypt -binary -in @IN@ -inkey "$d/$k.key" \
            -recip "$d/$k.crt" -out @PT@
    done
done

# --------------------------------------------------------------- dgst
for k in rsa2048 rsa1024 rsapss ec256 ec384; do
    same=0
    case $k in rsa2048 | rsa1024) same=1 ;; esac # PKCS#1 v1.5: deterministic
    for md in sha256 sha384; do
        SAME=$same cross "dgst-$md-$k" "$(sig_ctr $k)" "$(ver_ctr $k)" dgst "-$md" \
            -sign "$d/$k.key" -out @OUT@ "$d/data" -- \
            dgst "-$md" -verify "$d/$k.pub" -signature @IN@ "$d/data"
    done
done
SAME=1 cross dgst-hmac-sha256 "" "" dgst -sha256 -hmac key -binary -out @OUT@ "$d/data"

# ------------------------------------------------------------ pkeyutl
for k in rsa2048 rsa1024; do
    SAME=1 cross "pkeyutl-sign-$k" "$(sig_ctr $k)" "$(ver_ctr $k)" pkeyutl -sign \
        -inkey "$d/$k.key" -pkeyopt digest:sha256 -in "$d/h32" -out @OUT@ -- \
        pkeyutl -verify -pubin -inkey "$d/$k.pub" -pkeyopt digest:sha256 -in "$d/h32" \
        -sigfile @IN@
    cross "pkeyutl-sign-pss-$k" "$(sig_ctr $k)" "$(ver_ctr $k)" pkeyutl -sign \
        -inkey "$d/$k.key" -pkeyopt digest:sha256 -pkeyopt rsa_padding_mode:pss -in "$d/h32" \
        -out @OUT@ -- pkeyutl -verify -pubin -inkey "$d/$k.pub" -pkeyopt digest:sha256 \
        -pkeyopt rsa_padding_mode:pss -in "$d/h32" -sigfile @IN@
    for pad in oaep pkcs1; do
        WANT=$d/small cross "pkeyutl-encrypt-$pad-$k" "" "" pkeyutl -encrypt -pubin \
            -inkey "$d/$k.pub" -pkeyopt "rsa_padding_mode:$pad" -in "$d/small" -out @OUT@ -- \
            pkeyutl -decrypt -inkey "$d/$k.key" -pkeyopt "rsa_padding_mode:$pad" -in @IN@ \
            -out @PT@
    done
done
for k in ec256 ec384; do
    cross "pkeyutl-sign-$k" "$(sig_ctr $k)" "$(ver_ctr $k)" pkeyutl -sign -inkey "$d/$k.key" \
        -in "$d/h32" -out @OUT@ -- pkeyutl -verify -pubin -inkey "$d/$k.pub" -in "$d/h32" \
        -sigfile @IN@
done
# Key agreement with fixed keys: the same secret.
dflt genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/ec256b.key"
dflt genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$d/ec384b.key"
dflt genpkey -algorithm X25519 -out "$d/x25519b.key"
for k in ec256 ec384 x25519; do
    dflt pkey -in "$d/${k}b.key" -pubout -out "$d/${k}b.pub"
    ctr="ops-ecdh>=1"
    [ "$k" = x25519 ] && ctr="ops-x25519-derive>=1"
    SAME=1 cross "pkeyutl-derive-$k" "$ctr" "" pkeyutl -derive -inkey "$d/$k.key" \
        -peerkey "$d/${k}b.pub" -out @OUT@
done

# ---------------------------------------------------------------- enc
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
IV=0f0e0d0c0b0a09080706050403020100
# enc takes no AEAD cipher: both refuse AES-256-GCM.
cross enc-aes-256-gcm "" "" enc -aes-256-gcm -K "$KEY" -iv "${IV:0:24}" -in "$d/data" -out @OUT@
for c in aes-256-cbc aes-128-ctr; do
    SAME=1 cross "enc-$c" "" "" enc "-$c" -K "$KEY" -iv "$IV" -in "$d/data" -out @OUT@ -- \
        enc -d "-$c" -K "$KEY" -iv "$IV" -in @IN@ -out @PT@
done
SAME=1 cross enc-pbkdf2 "" "" enc -aes-256-cbc -pbkdf2 -pass pass:x -S 0102030405060708 \
    -in "$d/data" -out @OUT@ -- enc -d -aes-256-cbc -pbkdf2 -pass pass:x -S 0102030405060708 \
    -in @IN@ -out @PT@
tap_end
