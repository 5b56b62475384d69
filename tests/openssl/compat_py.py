#!/usr/bin/python3
"""python3-cryptography with and without mbcrypto (tests/openssl/test_python.sh).

Usage: compat_py.py make OUT.json KEYDIR
       compat_py.py check MINE.json PEER.json KEYDIR

make: AES-GCM (one-shot AEAD and the streaming API with the tag given
before and after the data, truncated tags, forged ones), RSA PKCS#1 v1.5 and
PSS signatures, OAEP and PKCS#1 v1.5 encryption (2048 and 1024 bits, and a
generated 2048-bit key), ECDSA on P-256 and P-384, ECDH on both curves and
X25519 with the fixed keys of KEYDIR, and generated EC and X25519 keys; the
results in OUT.json, the ECDSA signatures also as KEYDIR-independent DER
files beside it (OUT.json's name + .NAME.sig) for openssl dgst.
check: what PEER made verifies and decrypts here, and what is deterministic
(GCM, PKCS#1 v1.5, ECDH, X25519, the self-checks' results) is the same as
MINE; openssl dgst's ECDSA signatures in KEYDIR (cli-CURVE.sig, of
KEYDIR/msg.bin) verify. Prints one line per case: "PASS name" or
"FAIL name: why".
"""
import json
import os
import sys

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, x25519
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

MSG = bytes(range(256)) * 3
AAD = b"associated data"
CURVES = {"P-256": (ec.SECP256R1(), hashes.SHA256(), "ec256"),
          "P-384": (ec.SECP384R1(), hashes.SHA384(), "ec384")}
RSA_KEYS = ("rsa2048", "rsa1024")


def load(keydir, name):
    with open(os.path.join(keydir, name + ".key"), "rb") as f:
        return serialization.load_pem_private_key(f.read(), None)


def pub_pem(key):
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).hex()


def pss(salt):
    return padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=salt)


def oaep(h):
    return padding.OAEP(mgf=padding.MGF1(h), algorithm=h, label=None)


def gcm_selfchecks(key, iv):
    """What decryption gives for good and bad tags, as booleans."""
    ct_tag = AESGCM(key).encrypt(iv, MSG, AAD)
    ct, tag = ct_tag[:-16], ct_tag[-16:]
    out = {}

    def opens(tag_first, t, min_len=16):
        try:
            if tag_first:  # the tag before the key and IV (issue 22 item 1)
                d = Cipher(algorithms.AES(key), modes.GCM(iv, t, min_tag_length=min_len)).decryptor()
                d.authenticate_additional_data(AAD)
                return d.update(ct) + d.finalize() == MSG
            d = Cipher(algorithms.AES(key), modes.GCM(iv)).decryptor()
            d.authenticate_additional_data(AAD)
            return d.update(ct) + d.finalize_with_tag(t) == MSG
        except InvalidTag:
            return False

    forged = bytes([tag[0] ^ 1]) + tag[1:]
    out["tag-first"] = opens(True, tag)
    out["tag-last"] = opens(False, tag)
    out["tag-first-12"] = opens(True, tag[:12], 12)
    out["tag-first-4"] = opens(True, tag[:4], 4)
    out["forged-first"] = opens(True, forged)
    out["forged-last"] = opens(False, forged)
    try:
        AESGCM(key).decrypt(iv, ct_tag[:-1] + bytes([ct_tag[-1] ^ 0x80]), AAD)
        out["aead-forged"] = True
    except InvalidTag:
        out["aead-forged"] = False
    out["aead"] = AESGCM(key).decrypt(iv, ct_tag, AAD) == MSG
    return out


def make(out_path, keydir):
    r = {"gcm": {}, "rsa": {}, "ecdsa": {}, "ecdh": {}, "x25519": {}}
    for bits in (128, 192, 256):
        key, iv = bytes(range(bits // 8)), bytes(range(100, 112))
        e = Cipher(algorithms.AES(key), modes.GCM(iv)).encryptor()
        e.authenticate_additional_data(AAD)
        stream = e.update(MSG[:100]) + e.update(MSG[100:]) + e.finalize() + e.tag
        r["gcm"][str(bits)] = {"aead": AESGCM(key).encrypt(iv, MSG, AAD).hex(),
                               "stream": stream.hex(), "checks": gcm_selfchecks(key, iv)}
    for name in RSA_KEYS:
        k = load(keydir, name)
        r["rsa"][name] = {
            "pkcs1": k.sign(MSG, padding.PKCS1v15(), hashes.SHA256()).hex(),
            "pss-max": k.sign(MSG, pss(padding.PSS.MAX_LENGTH), hashes.SHA256()).hex(),
            "pss-digest": k.sign(MSG, pss(padding.PSS.DIGEST_LENGTH), hashes.SHA256()).hex(),
            "oaep-sha256": k.public_key().encrypt(MSG[:32], oaep(hashes.SHA256())).hex(),
            "oaep-sha1": k.public_key().encrypt(MSG[:32], oaep(hashes.SHA1())).hex(),
            "pkcs1-enc": k.public_key().encrypt(MSG[:32], padding.PKCS1v15()).hex(),
        }
    g = rsa.generate_private_key(65537, 2048)
    r["rsa"]["generated"] = {"pub": pub_pem(g),
                             "pkcs1": g.sign(MSG, padding.PKCS1v15(), hashes.SHA256()).hex(),
                             "bits": g.key_size}
    for cname, (curve, h, kname) in CURVES.items():
        k = load(keydir, kname)
        sig = k.sign(MSG, ec.ECDSA(h))
        with open(out_path + "." + cname + ".sig", "wb") as f:
            f.write(sig)
        gk = ec.generate_private_key(curve)
        peer = load(keydir, kname + "b")
        r["ecdsa"][cname] = {"sig": sig.hex(), "gen-pub": pub_pem(gk),
                             "gen-sig": gk.sign(MSG, ec.ECDSA(h)).hex()}
        r["ecdh"][cname] = {"fixed": k.exchange(ec.ECDH(), peer.public_key()).hex(),
                            "gen-pub": pub_pem(gk),
                            "gen": gk.exchange(ec.ECDH(), peer.public_key()).hex()}
    a, b = load(keydir, "x25519"), load(keydir, "x25519b")
    gx = x25519.X25519PrivateKey.generate()
    r["x25519"] = {"fixed": a.exchange(b.public_key()).hex(),
                   "gen-pub": gx.public_key().public_bytes(serialization.Encoding.Raw,
                                                           serialization.PublicFormat.Raw).hex(),
                   "gen": gx.exchange(b.public_key()).hex()}
    with open(out_path, "w") as f:
        json.dump(r, f)


def result(name, fn):
    try:
        why = fn()
    except (InvalidSignature, InvalidTag, ValueError) as e:
        why = "%s %s" % (type(e).__name__, e)
    print("PASS " + name if not why else "FAIL %s: %s" % (name, why))


def check(mine_path, peer_path, keydir):
    mine, peer = (json.load(open(p)) for p in (mine_path, peer_path))
    for bits in peer["gcm"]:
        def gcm(bits=bits):
            m, p = mine["gcm"][bits], peer["gcm"][bits]
            key, iv = bytes(range(int(bits) // 8)), bytes(range(100, 112))
            want = {"tag-first": True, "tag-last": True, "tag-first-12": True,
                    "tag-first-4": True, "forged-first": False, "forged-last": False,
                    "aead-forged": False, "aead": True}
            if p["aead"] != m["aead"] or p["stream"] != m["aead"]:
                return "ciphertexts differ"
            if AESGCM(key).decrypt(iv, bytes.fromhex(p["aead"]), AAD) != MSG:
                return "peer's ciphertext not decrypted"
            if p["checks"] != m["checks"] or m["checks"] != want:
                return "tag checks: here %s, peer %s" % (m["checks"], p["checks"])
            return None
        result("gcm-aes%s" % bits, gcm)
    for name in RSA_KEYS:
        k = load(keydir, name)
        p = peer["rsa"][name]

        def sigs(k=k, p=p, name=name):
            if p["pkcs1"] != mine["rsa"][name]["pkcs1"]:
                return "PKCS#1 v1.5 signatures differ"
            k.public_key().verify(bytes.fromhex(p["pkcs1"]), MSG, padding.PKCS1v15(),
                                  hashes.SHA256())
            for s, salt in (("pss-max", padding.PSS.MAX_LENGTH),
                            ("pss-digest", padding.PSS.DIGEST_LENGTH)):
                k.public_key().verify(bytes.fromhex(p[s]), MSG, pss(salt), hashes.SHA256())
            try:
                k.public_key().verify(bytes.fromhex(p["pss-max"]), MSG[1:], pss(
                    padding.PSS.MAX_LENGTH), hashes.SHA256())
                return "a signature of another message verified"
            except InvalidSignature:
                return None
        result("rsa-%s-signatures" % name, sigs)

        def dec(k=k, p=p):
            for s, pad in (("oaep-sha256", oaep(hashes.SHA256())),
                           ("oaep-sha1", oaep(hashes.SHA1())), ("pkcs1-enc", padding.PKCS1v15())):
                if k.decrypt(bytes.fromhex(p[s]), pad) != MSG[:32]:
                    return s + ": wrong plaintext"
            return None
        result("rsa-%s-decrypt" % name, dec)

    def gen_rsa():
        p = peer["rsa"]["generated"]
        pub = serialization.load_pem_public_key(bytes.fromhex(p["pub"]))
        pub.verify(bytes.fromhex(p["pkcs1"]), MSG, padding.PKCS1v15(), hashes.SHA256())
        return None if p["bits"] == 2048 == pub.key_size else "key of %d bits" % pub.key_size
    result("rsa-generated", gen_rsa)
    for cname, (curve, h, kname) in CURVES.items():
        k = load(keydir, kname)
        p = peer["ecdsa"][cname]

        def ecdsa(k=k, p=p, h=h, cname=cname):
            k.public_key().verify(bytes.fromhex(p["sig"]), MSG, ec.ECDSA(h))
            gpub = serialization.load_pem_public_key(bytes.fromhex(p["gen-pub"]))
            gpub.verify(bytes.fromhex(p["gen-sig"]), MSG, ec.ECDSA(h))
            with open(os.path.join(keydir, "cli-%s.sig" % cname), "rb") as f:
                cli = f.read()
            with open(os.path.join(keydir, "msg.bin"), "rb") as f:
                k.public_key().verify(cli, f.read(), ec.ECDSA(h))
            return None
        result("ecdsa-%s" % cname, ecdsa)

        def ecdh(k=k, cname=cname, kname=kname):
            p, m = peer["ecdh"][cname], mine["ecdh"][cname]
            if p["fixed"] != m["fixed"]:
                return "secrets differ"
            peer_key = load(keydir, kname + "b")
            gpub = serialization.load_pem_public_key(bytes.fromhex(p["gen-pub"]))
            if peer_key.exchange(ec.ECDH(), gpub).hex() != p["gen"]:
                return "the peer's generated key's secret differs"
            return None
        result("ecdh-%s" % cname, ecdh)

    def x():
        p, m = peer["x25519"], mine["x25519"]
        if p["fixed"] != m["fixed"]:
            return "secrets differ"
        b = load(keydir, "x25519b")
        gpub = x25519.X25519PublicKey.from_public_bytes(bytes.fromhex(p["gen-pub"]))
        return None if b.exchange(gpub).hex() == p["gen"] else "generated key's secret differs"
    result("x25519", x)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
