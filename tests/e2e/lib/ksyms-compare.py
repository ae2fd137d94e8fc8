#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Kernel symbols decoded from guest memory against a kernel's own
# /proc/kallsyms (tests/e2e/guest-ksyms-matrix.sh).
# usage: ksyms-compare.py TRUTH=DECODED:SHIFT...
# For each pair: whether every truth line (non-module) is in DECODED with
# its address (when in the kernel image area) plus SHIFT and the same
# type, and DECODED has at most 64 lines more. One line a pair:
# "agree|disagree missing=N extra=N truth=N decoded=N DECODED:SHIFT".
# Consecutive pairs of one truth parse it once.
import sys
def lines(p):
    out = []
    for l in open(p, encoding="latin-1"):
        l = l.rstrip("\r\n")
        if l and "[" not in l:
            a, t, n = l.split(" ", 2)
            out.append((int(a, 16), t, n))
    return out
truths = {}
for arg in sys.argv[1:]:
    truth, pair = arg.split("=", 1)
    if truth not in truths:
        truths = {truth: lines(truth)}
    dec, shift = pair.rsplit(":", 1)
    sh = int(shift, 0)
    g = {(v + sh if v >= 0xffffffff80000000 else v, t, n) for v, t, n in truths[truth]}
    d = set(lines(dec))
    miss, extra = len(g - d), len(d - g)
    ok = miss == 0 and extra <= 64
    print(f"{'agree' if ok else 'disagree'} missing={miss} extra={extra} truth={len(g)} decoded={len(d)} {pair}", flush=True)
