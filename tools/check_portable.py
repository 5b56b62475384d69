#!/usr/bin/env python3
"""Fails when the repository names a network host or an absolute path of one
machine: the project runs on machines whose apt sources and layout are
their own (scripts read them from the machine, and keep state under the
build directory or $TMPDIR).

Usage: check_portable.py SRCDIR

Two TAP cases: the scan of SRCDIR's tracked files, and a self-test (the
scanner must flag each bad sample and pass each good one, and
apt_suite_source.py must read both apt formats and refuse a machine whose
release it does not list).

Flagged: a URL whose host is not loopback (127.x, localhost, ::1); a bare
domain name (word.word.org and the like); a path that starts at /work,
/home, /root, /mnt, /srv, /opt, /scratch or /tmp. Prints each hit as
FILE:LINE: TEXT and exits 1 if there is any. A line that says
"guest path" is passed over: the emulator's guest (tools/emu) has a root
file system of its own, made by the script.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\[?([A-Za-z0-9_.:-]*)")
LOOPBACK = re.compile(r"^(127\.[0-9.]+|localhost|::1|)(:\d*)?$")
TLDS = "org|com|net|io|edu|gov|dev|cloud|de|uk|fr|cn|jp|ru|eu"
DOMAIN = re.compile(r"(?<![\w@/.-])(?:[a-z0-9-]+\.)+(?:%s)\b(?![\w(-])" % TLDS)
ROOTS = "work|home|root|mnt|srv|opt|scratch|tmp"
ABSPATH = re.compile(r"(?:^|(?<=[\s\"'=(:,\[]))/(?:%s)(?=/|\b)" % ROOTS)


def hits(text):
    """(line number, text) of every flagged line of text."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        bad = any(not LOOPBACK.match(m.group(1)) for m in URL.finditer(line))
        bad = bad or DOMAIN.search(line) is not None or ABSPATH.search(line) is not None
        if bad and "guest path" not in line:
            out.append((n, line.strip()))
    return out


def tracked(src):
    try:
        files = subprocess.run(["git", "-C", src, "ls-files", "-z"], check=True,
                               capture_output=True).stdout.decode().split("\0")
        files = [f for f in files if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(src):
            dirs[:] = [d for d in dirs if not d.startswith((".git", "build"))]
            files += [os.path.relpath(os.path.join(root, f), src) for f in names]
    return files


def scan(src):
    me = os.path.relpath(os.path.abspath(__file__), os.path.abspath(src))
    bad = 0
    for f in tracked(src):
        if f == me:
            continue
        try:
            text = open(os.path.join(src, f), encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in hits(text):
            print(f"# {f}:{n}: {line}")
            bad += 1
    return bad


def self_test():
    host = "deb" + ".debian" + ".org"
    bad = ["echo deb http://" + host + "/debian trixie main",
           "mirror=" + "ftp.de" + ".debian" + ".org",
           "state=" + "/work" + "/trixie",
           'cp x "' + "/home" + '/me/y"',
           "open(" + "/tmp" + "/test.XXXXXX)"]
    good = ["h2load https://127.0.0.1:$port/", "curl http://localhost:8080/x",
            'state=$dir/apt', "DIR/root/usr/lib64/ld-linux-x86-64.so.2",
            "see openssl.cnf and mbcrypto.h", "/usr/share/keyrings/x.gpg"]
    fails = 0
    for s in bad:
        if not hits(s):
            print(f"# not flagged: {s}")
            fails += 1
    for s in good:
        if hits(s):
            print(f"# flagged: {s}")
            fails += 1
    # apt_suite_source.py on both formats: the machine's archive, suite replaced
    uri = "http://" + "archive.example" + ".org/debian"
    with tempfile.TemporaryDirectory() as d:
        a = os.path.join(d, "a.sources")
        with open(a, "w") as f:
            f.write("Types: deb\nURIs: %s-security\nSuites: bookworm-security\n"
                    "Components: main\n\nTypes: deb\nURIs: %s\n"
                    "Suites: bookworm bookworm-updates\nComponents: main\n"
                    "Signed-By: /k.gpg\n" % (uri, uri))
        b = os.path.join(d, "b.list")
        with open(b, "w") as f:
            f.write("# x\ndeb http://other/x cloud-bookworm main\ndeb %s bookworm main\n" % uri)
        for files, want in ((a, "deb [signed-by=/k.gpg] %s trixie main" % uri),
                            (b, "deb %s trixie main" % uri)):
            env = dict(os.environ, APT_SOURCES=files, APT_CODENAME="bookworm")
            got = subprocess.run([sys.executable, os.path.join(HERE, "apt_suite_source.py"),
                                  "trixie"], env=env, capture_output=True, text=True)
            if got.stdout.strip() != want:
                print(f"# apt_suite_source {os.path.basename(files)}: {got.stdout.strip()!r}"
                      f" != {want!r}")
                fails += 1
        env = dict(os.environ, APT_SOURCES=b, APT_CODENAME="trixie")
        got = subprocess.run([sys.executable, os.path.join(HERE, "apt_suite_source.py"),
                              "forky"], env=env, capture_output=True, text=True)
        if got.returncode != 1:
            print("# apt_suite_source: no entry for the release must fail")
            fails += 1
    return fails


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print("1..2")
    bad = scan(sys.argv[1])
    print("%s 1 - %s" % ("not ok" if bad else "ok", f"{bad} lines name a host or a machine "
                         "path" if bad else "no host name, no machine path in the tracked files"))
    fails = self_test()
    print("%s 2 - %s" % ("not ok" if fails else "ok", f"self-test: {fails} failures" if fails
                         else "self-test: every bad sample flagged, every good one passed, "
                         "both apt formats read"))
    return 1 if bad or fails else 0


if __name__ == "__main__":
    sys.exit(main())
