#!/usr/bin/env python3
"""Prints a one-line apt sources entry for another suite of this machine's
own Debian archive, read from its apt configuration.

Usage: apt_suite_source.py SUITE [COMPONENT]

Reads /etc/apt/sources.list.d/*.sources (deb822), /etc/apt/sources.list and
/etc/apt/sources.list.d/*.list (one-line form), or the files named by
APT_SOURCES (colon-separated, for tests). The archive is the first "deb"
entry whose suites include the machine's own release (VERSION_CODENAME of
/etc/os-release, or APT_CODENAME) exactly: not its -updates or -security
suites, nor third-party repositories with suites of their own. Prints
"deb [signed-by=KEYRING] URI SUITE COMPONENT" with that entry's URI and
keyring (no signed-by when the entry has none: apt's trusted keys then).
Exits 1 with a reason on stderr when no such entry exists. No host name is
written anywhere: the URI is the machine's own.
"""
import glob
import os
import re
import sys


def codename():
    if os.environ.get("APT_CODENAME"):
        return os.environ["APT_CODENAME"]
    try:
        for line in open("/etc/os-release"):
            if line.startswith("VERSION_CODENAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return ""


def deb822(path):
    """The entries of a .sources file: dicts of lower-case field -> value."""
    entries, cur, key = [], {}, None
    for raw in open(path):
        line = raw.rstrip("\n")
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                entries.append(cur)
            cur, key = {}, None
            continue
        if line[0] in " \t" and key:
            cur[key] += "\n" + line.strip()
            continue
        if ":" in line:
            key, val = line.split(":", 1)
            key = key.strip().lower()
            cur[key] = val.strip()
    if cur:
        entries.append(cur)
    out = []
    for e in entries:
        if e.get("enabled", "yes").lower() == "no":
            continue
        signed = e.get("signed-by", "")
        if "\n" in signed or "BEGIN PGP" in signed:
            signed = ""  # an inline key: cannot be passed as a path
        for uri in e.get("uris", "").split():
            out.append({"types": e.get("types", "").split(), "uri": uri,
                        "suites": e.get("suites", "").split(), "signed": signed})
    return out


ONE_LINE = re.compile(r"^\s*(deb|deb-src)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)")


def one_line(path):
    out = []
    for line in open(path):
        line = line.split("#", 1)[0]
        m = ONE_LINE.match(line)
        if not m:
            continue
        opts = dict(o.split("=", 1) for o in (m.group(2) or "").split() if "=" in o)
        out.append({"types": [m.group(1)], "uri": m.group(3), "suites": [m.group(4)],
                    "signed": opts.get("signed-by", "")})
    return out


def sources():
    if os.environ.get("APT_SOURCES"):
        files = os.environ["APT_SOURCES"].split(":")
    else:
        files = sorted(glob.glob("/etc/apt/sources.list.d/*.sources"))
        files += ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list"))
    out = []
    for f in files:
        if not os.path.isfile(f):
            continue
        out += deb822(f) if f.endswith(".sources") else one_line(f)
    return out


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: apt_suite_source.py SUITE [COMPONENT]")
    suite = sys.argv[1]
    comp = sys.argv[2] if len(sys.argv) == 3 else "main"
    own = codename()
    if not own:
        sys.exit("apt_suite_source: no VERSION_CODENAME in /etc/os-release")
    for e in sources():
        if "deb" in e["types"] and own in e["suites"]:
            signed = f"[signed-by={e['signed']}] " if e["signed"] else ""
            print(f"deb {signed}{e['uri']} {suite} {comp}")
            return
    sys.exit(f"apt_suite_source: no apt source for the suite {own} in this machine's apt "
             "configuration")


if __name__ == "__main__":
    main()
