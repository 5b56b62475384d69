#!/usr/bin/env python3
"""Counts the cmocka cases of one or more meson test runs.

Usage: test_summary.py LABEL=build/meson-logs/testlog.json [...]

Each test executable prints TAP (CMOCKA_MESSAGE_OUTPUT=TAP). A case is passed
("ok N - name"), skipped ("not ok N # SKIP name", cmocka's spelling, or
"ok N # SKIP") or failed ("not ok N - name"). A should_fail test is one case,
passed when meson reports EXPECTEDFAIL. An executable that exits non-zero
without a failing case, or prints fewer cases than its plan, counts the
missing ones (at least one) as failed. The last line printed is
"N passed, N failed, N skipped"; the exit code is 1 if anything failed.
"""
import json
import re
import sys

PLAN = re.compile(r"^1\.\.(\d+)\s*$")
SKIP = re.compile(r"^(?:not )?ok (\d+) # SKIP\s*(.*)$", re.I)
OK = re.compile(r"^ok (\d+)(?: - (.*))?$")
NOT_OK = re.compile(r"^not ok (\d+)(?: - (.*))?$")


def count(label, path):
    passed = failed = skipped = 0
    failures = []
    with open(path) as f:
        for line in f:
            run = json.loads(line)
            name = run["name"]
            # should_fail tests (the constant-time controls): meson's verdict
            # is the one case; their output is a sanitizer report, not TAP.
            if run["result"] == "EXPECTEDFAIL":
                passed += 1
                continue
            if run["result"] == "UNEXPECTEDPASS":
                failed += 1
                failures.append(f"{label}: {name}: passed but must fail")
                continue
            plan, seen, run_failed = None, 0, 0
            for text in run.get("stdout", "").splitlines():
                m = PLAN.match(text)
                if m and plan is None:
                    plan = int(m.group(1))
                    continue
                m = SKIP.match(text)
                if m:
                    skipped += 1
                    seen += 1
                    continue
                m = OK.match(text)
                if m:
                    passed += 1
                    seen += 1
                    continue
                m = NOT_OK.match(text)
                if m:
                    failed += 1
                    run_failed += 1
                    seen += 1
                    failures.append(f"{label}: {name}: {m.group(2) or m.group(1)}")
            missing = (plan - seen) if plan is not None and plan > seen else 0
            if run["returncode"] != 0 and run_failed == 0:
                missing = max(missing, 1)
            if missing:
                failed += missing
                failures.append(f"{label}: {name}: {run['result']} (exit {run['returncode']}),"
                                f" {missing} case(s) not reported")
    return passed, failed, skipped, failures


def main():
    total = [0, 0, 0]
    failures = []
    for arg in sys.argv[1:]:
        label, _, path = arg.partition("=")
        p, f, s, fl = count(label, path)
        print(f"{label}: {p} passed, {f} failed, {s} skipped")
        total = [total[0] + p, total[1] + f, total[2] + s]
        failures += fl
    for line in failures:
        print("FAILED " + line)
    print(f"{total[0]} passed, {total[1]} failed, {total[2]} skipped")
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main())
