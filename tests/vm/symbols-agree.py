#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A live guest's kernel symbols read from its memory against the same
# boot's /proc/kallsyms copy (tests/vm/test-guest-kernels.sh,
# guest-matrix.sh). usage: symbols-agree.py COPY MEMORY
# Every non-module name of COPY must have one of its addresses in MEMORY
# (a few may differ in type letter only: types are not compared); prints
# "copy N names, memory N names, missing or moved N" and up to 10
# examples; exit 0 when COPY has over 50,000 names and none is missing.
import sys
def load(p):
    out = {}
    for line in open(p, errors="replace"):
        f = line.split()
        if len(f) != 3:
            continue          # module symbols have a 4th field
        out.setdefault(f[2], set()).add(int(f[0], 16))
    return out
copy, mem = load(sys.argv[1]), load(sys.argv[2])
miss = [n for n, a in copy.items() if not (a & mem.get(n, set()))]
print("copy %d names, memory %d names, missing or moved %d" % (len(copy), len(mem), len(miss)))
for n in miss[:10]:
    print("  e.g. %s: copy %s, memory %s" % (n, sorted(hex(x) for x in copy[n])[:2],
          sorted(hex(x) for x in mem.get(n, ()))[:2]))
sys.exit(0 if len(copy) > 50000 and not miss else 1)
