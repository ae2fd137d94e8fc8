# SPDX-License-Identifier: MIT
"""Decode a gzip-compressed pprof profile.proto (the fields domprof
writes: sample 2 with location_id 1, value 2, label 3; string_table 6) by
hand, without the protobuf package, and print one JSON object:
{"samples": [{"values": [...], "labels": {key: str or num}}], "strings": n}.
Used by tests/e2e/export-pprof-labels.sh. Bounded: a field length past the
buffer is an error."""
import gzip
import json
import sys


def varint(b, i):
    v = s = 0
    while True:
        if i >= len(b) or s > 63:
            raise ValueError("bad varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("length past the end")
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def packed(v):
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def main(path):
    data = gzip.open(path).read()
    strings, raw = [], []
    for f, wt, v in fields(data):
        if f == 6:
            strings.append(v.decode())
        elif f == 2:
            raw.append(v)
    samples = []
    for s in raw:
        vals, labels = [], []
        for f, wt, v in fields(s):
            if f == 2:
                vals += packed(v) if wt == 2 else [v]
            elif f == 3:
                labels.append({g: x for g, _, x in fields(v)})
        lab = {}
        for l in labels:
            k = strings[l.get(1, 0)]
            if k in lab:
                raise ValueError("label %s twice in one sample" % k)
            lab[k] = strings[l[2]] if 2 in l else l.get(3, 0)
        samples.append({"values": vals, "labels": lab})
    json.dump({"samples": samples, "strings": len(strings)}, sys.stdout)


main(sys.argv[1])
