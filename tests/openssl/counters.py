#!/usr/bin/env python3
"""Prints the counters of an mbcrypto counters file (MBCRYPTO_COUNTERS_FILE,
layout in openssl/common/mbo.h), one "name value" per line.

Usage: counters.py FILE [NAME]   (with NAME: only that counter's value; 0 if
the file is missing)
"""
import struct
import sys

MAGIC = b"MBOCTR1\n"


def read(path):
    try:
        data = open(path, "rb").read()
    except FileNotFoundError:
        return {}
    if data[:8] != MAGIC:
        raise SystemExit(f"{path}: not an mbcrypto counters file")
    (count,) = struct.unpack_from("<Q", data, 8)
    out = {}
    for i in range(count):
        off = 16 + i * 64
        name = data[off:off + 56].split(b"\0", 1)[0].decode()
        (value,) = struct.unpack_from("<Q", data, off + 56)
        out[name] = value
    return out


def main():
    ctr = read(sys.argv[1])
    if len(sys.argv) > 2:
        print(ctr.get(sys.argv[2], 0))
    else:
        for k, v in ctr.items():
            print(k, v)


if __name__ == "__main__":
    main()
