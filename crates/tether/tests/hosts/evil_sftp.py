#!/usr/bin/env python3
"""A lying SFTP server (version 3) on stdin/stdout, for the test that a
pull refuses names that would leave its directory: every path is a
directory, and every listing holds `fine` and `../escaped` (the names in
EVIL_NAMES, when set, instead). Reads of `fine` give b"fine\\n"."""

import os
import struct
import sys

inp, out = sys.stdin.buffer, sys.stdout.buffer
NAMES = os.environ.get("EVIL_NAMES", "fine,../escaped").split(",")
DIR, FILE = 0o040755, 0o100644


def send(kind, body):
    out.write(struct.pack(">IB", len(body) + 1, kind) + body)
    out.flush()


def string(b):
    return struct.pack(">I", len(b)) + b


def attrs(mode, size=0):
    # flags: size | permissions | times
    return struct.pack(">IQII I", 0x1 | 0x4 | 0x8, size, mode, 0, 0)


def status(rid, code, msg=b""):
    send(101, struct.pack(">II", rid, code) + string(msg) + string(b""))


def read_exact(n):
    b = inp.read(n)
    if len(b) < n:
        sys.exit(0)
    return b


listed = set()
while True:
    (length,) = struct.unpack(">I", read_exact(4))
    packet = read_exact(length)
    kind, rest = packet[0], packet[1:]
    if kind == 1:  # INIT
        send(2, struct.pack(">I", 3))
        continue
    (rid,) = struct.unpack(">I", rest[:4])
    rest = rest[4:]
    if kind in (17, 7):  # STAT, LSTAT
        (n,) = struct.unpack(">I", rest[:4])
        path = rest[4 : 4 + n]
        mode = FILE if path.endswith(b"fine") else DIR
        send(105, struct.pack(">I", rid) + attrs(mode, 5))
    elif kind == 11:  # OPENDIR
        send(102, struct.pack(">I", rid) + string(b"d%d" % rid))
    elif kind == 3:  # OPEN
        send(102, struct.pack(">I", rid) + string(b"f%d" % rid))
    elif kind == 12:  # READDIR
        (n,) = struct.unpack(">I", rest[:4])
        handle = rest[4 : 4 + n]
        if handle in listed:
            status(rid, 1)
        else:
            listed.add(handle)
            body = struct.pack(">II", rid, len(NAMES))
            for name in NAMES:
                b = name.encode()
                mode = FILE if b.endswith(b"fine") else DIR
                body += string(b) + string(b) + attrs(mode, 5)
            send(104, body)
    elif kind == 5:  # READ
        (n,) = struct.unpack(">I", rest[:4])
        offset, _ = struct.unpack(">QI", rest[4 + n : 4 + n + 12])
        if offset == 0:
            send(103, struct.pack(">I", rid) + string(b"fine\n"))
        else:
            status(rid, 1)
    else:  # CLOSE and the rest
        status(rid, 0)
