#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# List every SYMTAB blob of a domprof file, one line each, and write the
# small ones (<= 1 MiB) to OUTDIR as DOM-NAME-N, for tests that must look
# at the bytes an agent shipped; with MARKER, the line of a blob that
# contains it (a secret that must not be there) ends in "MARKER-FOUND". It reads the file by docs/file-format.md on
# its own, with the zstd command for compressed chunks and blobs, so a
# bug in src/format/ cannot hide what is in the file. Bad chunks stop it
# with an error (the tests give it undamaged files).
# usage: symtab-blobs.py FILE OUTDIR [MARKER]
import os, re, struct, subprocess, sys

def unzstd(b):
    return subprocess.run(["zstd", "-dcq"], input=b, stdout=subprocess.PIPE, check=True).stdout

def al8(n):
    return (n + 7) & ~7

data = open(sys.argv[1], "rb").read()
out = sys.argv[2]
marker = sys.argv[3].encode() if len(sys.argv) > 3 else None
os.makedirs(out, exist_ok=True)
assert data[:8] == b"DOMPROF\n", "not a domprof file"
off = al8(struct.unpack_from("<I", data, 16)[0])
n = 0
while off + 32 <= len(data):
    magic, flags, stored, raw = struct.unpack_from("<4sIII", data, off)
    assert magic == b"CHNK", "bad chunk at %d" % off
    payload = data[off + 32: off + 32 + stored]
    off = al8(off + 32 + stored)
    if flags & 1:
        payload = unzstd(payload)
    dom, p = 0, 0
    while p + 8 <= len(payload):
        typ, _, rlen = struct.unpack_from("<HHI", payload, p)
        assert rlen >= 8 and rlen % 8 == 0, "bad record"
        if typ == 3:
            dom = struct.unpack_from("<I", payload, p + 8)[0]
        elif typ == 8:
            kind, comp, size, zn = struct.unpack_from("<IIQQ", payload, p + 8)
            sl = struct.unpack_from("<H", payload, p + 32)[0]
            name = payload[p + 34: p + 34 + sl - 1].decode("utf-8", "replace")
            head = al8(34 + sl)
            blob = payload[p + head: p + head + zn]
            if comp == 1:
                blob = unzstd(blob)
            fn = "%d-%s-%d" % (dom, re.sub(r"[^A-Za-z0-9_.]", "_", name), n)
            if len(blob) <= (1 << 20):
                open(os.path.join(out, fn), "wb").write(blob)
            print("dom=%d kind=%d name=%s size=%d file=%s%s" % (dom, kind, name, len(blob), fn,
                  " MARKER-FOUND" if marker and marker in blob else ""))
            n += 1
        p += rlen
