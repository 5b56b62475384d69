#!/usr/bin/env python3
"""Generates src/ec/ec_consts.c from the curve parameters of FIPS 186-5 /
SEC 2 below: first each curve's definition, independent of any radix
(struct ec_curve_def: id, sizes, p, n, b, G as big-endian bytes), for the
glue and for any tier; then the constants of the 52-bit kernels (struct
ec_curve, src/ec/ec_kern.h), derived from that definition. A tier in
another radix adds its own emitter here, from the same CURVES.

    python3 tools/gen_ec_consts.py > src/ec/ec_consts.c

Everything else is derived here and checked: p and n pass a Fermat test,
G is on the curve and n G is the point at infinity; the Montgomery
constants are for R = 2^(52 k). tests/test_ec_field.c checks every constant
of the generated file against OpenSSL's EC_GROUP and BIGNUM.
"""
import sys

CURVES = [
    dict(name="p256", id="MBC_CURVE_P256", k=5, bits=256, gwin=7,
         p=2**256 - 2**224 + 2**192 + 2**96 - 1,
         n=0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
         b=0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B,
         gx=0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
         gy=0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5),
    dict(name="p384", id="MBC_CURVE_P384", k=8, bits=384, gwin=6,
         p=2**384 - 2**128 - 2**96 + 2**32 - 1,
         n=int("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF"
               "581A0DB248B0A77AECEC196ACCC52973", 16),
         b=int("B3312FA7E23EE7E4988E056BE3F82D19181D9C6EFE8141120314088F5013875A"
               "C656398D8A2ED19D2A85C8EDD3EC2AEF", 16),
         gx=int("AA87CA22BE8B05378EB1C71EF320AD746E1D3B628BA79B9859F741E082542A38"
                "5502F25DBF55296C3A545E3872760AB7", 16),
         gy=int("3617DE4A96262C6F5D9E98BF9292DC29F8F41DBD289A147CE9DA3113B5F0B8C0"
                "0A60B1CE1D7E819D7A431D7C90EA0E5F", 16)),
]
P256_P = CURVES[0]["p"]  # the modulus whose digits mb52_p256_lo exploits
P384_P = CURVES[1]["p"]  # the modulus whose digits mb52_p384_step exploits
WIN = 5  # Booth window bits of the variable base (EC_WIN); the fixed base's: gwin
MASK = (1 << 52) - 1


def digits(x, k):
    assert 0 <= x < 1 << (52 * k)
    return [(x >> (52 * j)) & MASK for j in range(k)]


def on_curve(c, x, y):
    p = c["p"]
    return (y * y - (x * x * x - 3 * x + c["b"])) % p == 0


def mul(c, k, pt):
    """k pt in affine coordinates (None: infinity), double and add."""
    p = c["p"]

    def add(a, b):
        if a is None:
            return b
        if b is None:
            return a
        (x1, y1), (x2, y2) = a, b
        if x1 == x2 and (y1 + y2) % p == 0:
            return None
        if a == b:
            lam = (3 * x1 * x1 - 3) * pow(2 * y1, -1, p) % p
        else:
            lam = (y2 - y1) * pow(x2 - x1, -1, p) % p
        x3 = (lam * lam - x1 - x2) % p
        return (x3, (lam * (x1 - x3) - y1) % p)

    r = None
    for bit in bin(k)[2:]:
        r = add(r, r)
        if bit == "1":
            r = add(r, pt)
    return r


def check(c):
    for m in (c["p"], c["n"]):
        for base in (2, 3, 5, 7):
            assert pow(base, m - 1, m) == 1
    assert c["p"].bit_length() == c["bits"] and c["n"].bit_length() == c["bits"]
    assert c["n"] < c["p"] < 2 * c["n"]
    assert on_curve(c, c["gx"], c["gy"])
    assert mul(c, c["n"], (c["gx"], c["gy"])) is None
    assert 16 * c["p"] < 1 << (52 * c["k"])  # inputs up to 4m to the multiply


def rows(vals, k, indent):
    items = ["R8(0x%013x)" % d for d in digits(vals, k)]
    lines, line = [], indent
    for it in items:
        if len(line) + len(it) + 2 > 100:
            lines.append(line.rstrip())
            line = indent
        line += it + ", "
    lines.append(line.rstrip())
    return "{\n" + "\n".join(lines) + "\n" + indent[:-4] + "}"


def plain(vals, k, indent):
    items = ["0x%013xull" % d for d in digits(vals, k)]
    lines, line = [], ""
    for it in items:
        if len(indent) + len(line) + len(it) + 16 > 100:
            lines.append(line.rstrip())
            line = ""
        line += it + ", "
    lines.append(line.rstrip())
    return "{" + ("\n" + indent + "    ").join(lines) + "}"


def sg_params(m, bits):
    """The constants of the divsteps inversion mod m < 2^bits (ec_adx_inv.h):
    m in signed 62-bit limbs (room for bits + 2: the sign and the growth of
    a batch), m^-1 mod 2^62, the limbs, and the batches of 62 steps. Up to
    256 bits the steps are half-delta divsteps, of which 590 reach g = 0 for
    every f and g below 2^256 (the bound computed by Wuille for
    libsecp256k1's safegcd; fe25519_inv.h relies on it too); above, the
    divsteps of Bernstein-Yang's proven bound (their theorem 11.2, d >= 46)."""
    limbs = (bits + 2 + 61) // 62
    steps = 590 if bits <= 256 else -(-(49 * bits + 57) // 17)
    assert bits >= 46 and limbs <= 7 and m < 1 << bits
    return ([(m >> (62 * j)) & (2**62 - 1) for j in range(limbs)], pow(m, -1, 2**62), limbs,
            -(-steps // 62))


def emit_mod(m, k, bits, indent):
    R = 1 << (52 * k)
    sg_m, sg_minv, sg_limbs, sg_batches = sg_params(m, bits)
    m0inv = (-pow(m, -1, 1 << 52)) % (1 << 52)
    out = [
        ".m = " + rows(m, k, indent + "    "),
        ".m2 = " + rows(2 * m, k, indent + "    "),
        ".m0inv = R8(0x%013x)" % m0inv,
        ".one = " + rows(R % m, k, indent + "    "),
        ".rr = " + rows(R * R % m, k, indent + "    "),
        ".r3 = " + rows(R * R * R % m, k, indent + "    "),
        ".digits = " + plain(m, k, indent),
        ".sg_m = {%s}" % ", ".join("%dll" % x for x in sg_m),
        ".sg_minv = 0x%016xull" % sg_minv,
        ".sg_limbs = %d" % sg_limbs,
        ".sg_batches = %d" % sg_batches,
        ".p256 = %d" % (m == P256_P),
        ".p384 = %d" % (m == P384_P),
    ]
    return "{\n" + "".join(indent + o + ",\n" for o in out) + indent[:-4] + "}"


def be_bytes(x, n, indent="        "):
    """x as n big-endian bytes, 12 to a line."""
    b = ["0x%02x" % v for v in x.to_bytes(n, "big")]
    lines = [", ".join(b[i:i + 12]) for i in range(0, n, 12)]
    return "{\n" + "".join(indent + ln + ",\n" for ln in lines) + indent[:-4] + "}"


def emit_def(w, c):
    """The curve's definition: no radix, no Montgomery form."""
    ln = c["bits"] // 8
    w("const struct ec_curve_def mbc_ec_%s_def = {\n" % c["name"])
    w("    .id = %s,\n    .bits = %d,\n    .len = %d,\n" % (c["id"], c["bits"], ln))
    for f in ("p", "n", "b", "gx", "gy"):
        w("    .%s = %s,\n" % (f, be_bytes(c[f], ln)))
    w("};\n\n")


def main():
    w = sys.stdout.write
    w("/* Generated by tools/gen_ec_consts.py: python3 tools/gen_ec_consts.py > "
      "src/ec/ec_consts.c\n * Do not edit: change the generator. Each curve's "
      "definition (struct\n * ec_curve_def, ec_kern.h: radix-independent, big-endian), "
      "then the constants\n * of the 52-bit kernels derived from it (struct ec_curve): "
      "rows of 8 equal\n * lanes, Montgomery constants for R = 2^(52 k). */\n")
    w('#include "ec_kern.h"\n\n')
    w("/* clang-format off */\n")
    w("#define R8(x) {x##ull, x##ull, x##ull, x##ull, x##ull, x##ull, x##ull, x##ull}\n\n")
    for c in CURVES:
        check(c)
        emit_def(w, c)
    for c in CURVES:
        k, p, n = c["k"], c["p"], c["n"]
        R = 1 << (52 * k)
        nwin = (c["bits"] + 1 + WIN - 1) // WIN  # Booth windows: one bit more than n
        ln = c["bits"] // 8
        w("const struct ec_curve mbc_ec_%s = {\n" % c["name"])
        w("    .def = &mbc_ec_%s_def,\n" % c["name"])
        w("    .id = %s,\n    .k = %d,\n    .bits = %d,\n    .len = %d,\n" % (c["id"], k, c["bits"], ln))
        gw = c["gwin"]
        gnwin = (c["bits"] + 1 + gw - 1) // gw
        w("    .nwin = %d,\n    .gwin = %d,\n    .gnwin = %d,\n    .gblocks = %d,\n"
          "    .gsteps = %d,\n" % (nwin, gw, gnwin, (1 << (gw - 1)) // 8, (gnwin + 7) // 8))
        w("    .p = " + emit_mod(p, k, c["bits"], "        ") + ",\n")
        w("    .n = " + emit_mod(n, k, c["bits"], "        ") + ",\n")
        w("    .b = " + rows(c["b"] * R % p, k, "        ") + ",\n")
        w("    .gx = " + rows(c["gx"] * R % p, k, "        ") + ",\n")
        w("    .gy = " + rows(c["gy"] * R % p, k, "        ") + ",\n")
        w("};\n\n")
    w("/* clang-format on */\n")


if __name__ == "__main__":
    main()
