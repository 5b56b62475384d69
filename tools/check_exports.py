#!/usr/bin/env python3
"""Checks that a shared library exports exactly the MBC_API functions of the header.

Usage: check_exports.py include/mbcrypto.h build/libmbcrypto.so
Prints TAP (one case) and exits non-zero on a difference.
"""
import re
import subprocess
import sys


def main():
    header, lib = sys.argv[1], sys.argv[2]
    text = open(header).read()
    declared = set(re.findall(r"MBC_API\b[^;(]*?\b(mbc_\w+)\s*\(", text, re.S))
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    extra = sorted(exported - declared)
    missing = sorted(declared - exported)
    print("1..1")
    if extra or missing:
        print("not ok 1 - exports: extra %s, missing %s" % (extra, missing))
        return 1
    print("ok 1 - exports: the %d MBC_API functions of %s and nothing else" %
          (len(declared), header))
    return 0


if __name__ == "__main__":
    sys.exit(main())
