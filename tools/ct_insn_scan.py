#!/usr/bin/env python3
"""Scans built objects for variable-latency x86-64 instructions.

Usage: ct_insn_scan.py [--expect CLASS,...] ALLOWLIST FILE [FILE...]
       (FILE: a shared library, a static archive or an object; objdump -d)

--expect is for the control (tests/ct_insn_control.c): a file then passes
only if exactly those classes are found in it outside the allowlist.

The library's secrets pass through almost all of its code, so every function
is scanned, and an instruction of one of the classes below is an error unless
the allowlist names the function (a glob on the name without gcc's clone
suffixes such as .constprop.0) and the class, with the reason why it sees only
public values there. Classes:

  div     DIV/IDIV: latency depends on the operand values on every x86-64 CPU
          (the quotient's size on Intel up to Ice Lake and on AMD Zen).
  fpdiv   (V)DIV/SQRT on floating point, x87 FDIV/FSQRT and transcendentals:
          variable latency by operand value.
  fp      other floating-point arithmetic (add, mul, FMA, min/max, rcp, ...):
          denormal operands cost a microcode assist of ~100 cycles on Intel.
          The library's arithmetic is integer only, so none is expected.
  pdep    PDEP/PEXT: microcoded on AMD before Zen 3, latency grows with the
          number of set bits of the mask.
  string  REPE/REPNE CMPS and SCAS: they stop at the first difference/match.
  gather  (V)GATHER/SCATTER: the addresses come from vector data (a secret
          index is a secret address; MSan and valgrind do not see it).

Not flagged: MUL/IMUL (constant latency on x86-64), shifts by a variable
count, BSF/BSR/LZCNT/TZCNT (constant latency on current CPUs; used on public
lengths only), CMOV/SETcc (data flow, no branch), REP MOVS/STOS (time depends
on the count: lengths are public). Branches and addresses on secrets are the
job of the MemorySanitizer and valgrind checks, not of this scan.

Prints TAP, one case per file; allowlist entries that matched nothing are
listed as notes (code moved by the compiler, or an entry to delete). Exit
code 1 if anything outside the allowlist was found.
"""
import fnmatch
import re
import subprocess
import sys

CLASSES = [
    ("div", re.compile(r"^i?div[bwlq]?$")),
    ("fpdiv", re.compile(r"^v?(div|sqrt)(ss|sd|ps|pd|sh|ph)$|"
                         r"^f(i?divr?p?|sqrt|prem1?|sin|cos|sincos|ptan|patan|yl2x(p1)?|2xm1|"
                         r"scale|rndint|xtract)[sl]?$")),
    ("fp", re.compile(r"^v?(add|sub|mul|min|max|rcp|rsqrt|rcp14|rsqrt14|rcp28|rsqrt28|round|"
                      r"rndscale|getexp|getmant|scalef|reduce|range|hadd|hsub|addsub|dp)"
                      r"(ss|sd|ps|pd|sh|ph)$|"
                      r"^vfn?m(add|sub|addsub|subadd)(132|213|231)(ss|sd|ps|pd|sh|ph)$|"
                      r"^fi?(add|sub|subr|mul)p?[sl]?$")),
    ("pdep", re.compile(r"^(pdep|pext)[lq]?$")),
    ("gather", re.compile(r"^v(p)?(gather|scatter)\w*$")),
]
STRING = re.compile(r"^(cmps|scas)[bwlq]?$")
PREFIXES = {"rep", "repz", "repe", "repnz", "repne", "lock", "notrack", "bnd", "data16",
            "addr32", "cs", "ds", "es", "ss", "fs", "gs", "rex", "rex.w", "xacquire",
            "xrelease"}
FUNC = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
INSN = re.compile(r"^\s*[0-9a-f]+:\s+(.*)$")


def classify(text):
    """The class of one disassembled instruction, or None."""
    words = text.split()
    rep = False
    while words and words[0] in PREFIXES:
        rep = rep or words[0] in ("repz", "repe", "repnz", "repne")
        words = words[1:]
    if not words:
        return None
    mnem = words[0]
    if STRING.match(mnem):
        return "string" if rep else None
    for name, pattern in CLASSES:
        if pattern.match(mnem):
            return name
    return None


def base_name(func):
    """foo.constprop.0.isra.0, foo.cold, foo@plt -> foo."""
    return func.split("@")[0].split(".")[0]


def load_allowlist(path):
    entries = []
    with open(path) as f:
        for num, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3 or parts[1] not in {c for c, _ in CLASSES} | {"string"}:
                raise SystemExit(f"{path}:{num}: expected 'function-glob class reason'")
            entries.append({"glob": parts[0], "cls": parts[1], "why": parts[2], "used": 0})
    return entries


def scan(path):
    """{(function, class): [instruction text, ...]} of one file."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], check=True,
                         capture_output=True, text=True).stdout
    found = {}
    func = None
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            func = base_name(m.group(1))
            continue
        m = INSN.match(line)
        if m and func is not None:
            cls = classify(m.group(1))
            if cls is not None:
                found.setdefault((func, cls), []).append(m.group(1).strip())
    return found


def main():
    args = sys.argv[1:]
    expect = None
    if len(args) >= 2 and args[0] == "--expect":
        expect = set(args[1].split(","))
        args = args[2:]
    if len(args) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    allow = load_allowlist(args[0])
    files = args[1:]
    print(f"1..{len(files)}")
    failed = 0
    for i, path in enumerate(files, 1):
        outside, allowed = {}, 0
        for (func, cls), insns in sorted(scan(path).items()):
            entry = next((e for e in allow
                          if e["cls"] == cls and fnmatch.fnmatchcase(func, e["glob"])), None)
            if entry is None:
                outside[(func, cls)] = insns
            else:
                entry["used"] += 1
                allowed += len(insns)
        if expect is not None:
            got = {cls for (_, cls) in outside}
            if got == expect:
                print(f"ok {i} - {path}: the control's classes found: {', '.join(sorted(got))}")
            else:
                failed += 1
                print(f"not ok {i} - {path}: found {sorted(got)}, expected {sorted(expect)}")
        elif outside:
            failed += 1
            print(f"not ok {i} - {path}: variable-latency instructions outside the allowlist")
            for (func, cls), insns in outside.items():
                print(f"# {func}: {cls}: {len(insns)} x, e.g. '{insns[0]}'")
        else:
            print(f"ok {i} - {path}: no variable-latency instruction outside the allowlist "
                  f"({allowed} allowed, in {sum(e['used'] > 0 for e in allow)} entries)")
    for e in allow:
        if expect is None and not e["used"]:
            print(f"# note: allowlist entry '{e['glob']} {e['cls']}' matched nothing")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
