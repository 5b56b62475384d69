#!/usr/bin/env python3
"""Checks the symbols of the installed libraries.

Usage: check_exports.py include/mbcrypto.h build/libmbcrypto.so build/libmbcrypto.a

1. The shared library exports exactly the MBC_API functions of the header.
2. Every global symbol the static archive defines has the mbc_ prefix (so
   that a program linking it statically cannot collide with our internals),
   none is a test hook (mbc_test_*: those live only in the tests' build),
   and every archive member has a name of its own (an `ar x` and repack
   keeps every object).
3. Neither defines test instrumentation, exported or not (the symbol tables,
   local symbols included): no test entry point (_test_), no kernel hit
   counter (_hits) and no rolled any-size Montgomery kernel (mb52_*_var*).
   Those are built only into the library the tests link (mbc_internal,
   MBC_TEST_HOOKS=1).
Prints TAP (three cases) and exits non-zero on a failure.
"""
import collections
import re
import subprocess
import sys


def nm(args):
    return subprocess.run(["nm"] + args, check=True, capture_output=True, text=True).stdout


def check_shared(header, lib):
    text = open(header).read()
    declared = set(re.findall(r"MBC_API\b[^;(]*?\b(mbc_\w+)\s*\(", text, re.S))
    out = nm(["-D", "--defined-only", lib])
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    extra = sorted(exported - declared)
    missing = sorted(declared - exported)
    if extra or missing:
        return False, "exports: extra %s, missing %s" % (extra, missing)
    return True, "exports: the %d MBC_API functions of %s and nothing else" % (
        len(declared), header)


def check_static(archive):
    out = nm(["-g", "--defined-only", archive])
    symbols = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            symbols.add(parts[2])
    unprefixed = sorted(s for s in symbols if not s.startswith("mbc_"))
    hooks = sorted(s for s in symbols if s.startswith("mbc_test_"))
    members = subprocess.run(["ar", "t", archive], check=True, capture_output=True,
                             text=True).stdout.split()
    dups = sorted(m for m, n in collections.Counter(members).items() if n > 1)
    if unprefixed or hooks or dups:
        return False, "static archive: unprefixed %s, test hooks %s, duplicate members %s" % (
            unprefixed, hooks, dups)
    return True, "static archive: %d global symbols, all mbc_, no test hook; %d members, " \
        "all names distinct" % (len(symbols), len(members))


# What only the tests' build may define (point 3 above).
TEST_ONLY = re.compile(r"_test_|_hits|mb52_\w*_var")


def defined_symbols(lib):
    """Every symbol lib defines, local ones included, by name."""
    out = nm(["--defined-only", lib])
    return {parts[2] for parts in (line.split() for line in out.splitlines()) if len(parts) == 3}


def check_no_test_code(shared, static):
    found = {}
    for lib in (shared, static):
        symbols = defined_symbols(lib)
        if not symbols:
            return False, "no test code: %s has no symbol table to check (stripped?)" % lib
        found[lib] = sorted(s for s in symbols if TEST_ONLY.search(s))
    if any(found.values()):
        return False, "no test code: test-only symbols (%s) in the shipped libraries: %s" % (
            TEST_ONLY.pattern, "; ".join("%s: %d %s" % (lib, len(syms), syms)
                                         for lib, syms in found.items() if syms))
    return True, "no test code: no symbol of %s or %s matches %s" % (shared, static,
                                                                     TEST_ONLY.pattern)


def main():
    header, shared, static = sys.argv[1:4]
    results = [check_shared(header, shared), check_static(static),
               check_no_test_code(shared, static)]
    print("1..%d" % len(results))
    for i, (ok, msg) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, msg))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
