#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A flame graph of a large profile stays small and fast: a synthetic
# recording of 1,000,000 samples with several hundred thousand distinct
# stacks in two domains (test-tool gen-profile) becomes a page
# whose root holds every sample, whose data keeps only frames at least
# 0.01% wide, and which headless Chromium loads without errors.
# The page's own render time is printed and saved to
# $TEST_OUT/flamegraph-large/timing.txt (reported, not asserted: tests do
# not judge speed on a shared machine).
source "$(dirname "$0")/../lib/common.bash"
cd "$TOP"
T="$OUT"
# the release binary: this test is about the page, not about sanitizers
D="$DOMPROF_TOP/build/domprof"; [ -x "$D" ] || D="$DOMPROF"
G=("$TT" gen-profile)
[ -x "$TT" ] || make -s build/san/test-tool >/dev/null || fail "cannot build $TT"
N=1000000
s=$(date +%s%N)
"${G[@]}" "$T/big.data" $N || fail "gen-profile"
s2=$(date +%s%N)
"$D" flamegraph -i "$T/big.data" -o "$T/big.html" 2>"$T/fg.err" || { cat "$T/fg.err"; fail "flamegraph"; }
s3=$(date +%s%N)
"$D" flamegraph -i "$T/big.data" -o "$T/big.svg" 2>>"$T/fg.err" || fail_later "flamegraph svg"
echo "recording $(stat -c %s "$T/big.data") bytes ($(( (s2 - s) / 1000000 )) ms to generate);" \
     "html $(stat -c %s "$T/big.html") bytes in $(( (s3 - s2) / 1000000 )) ms; svg $(stat -c %s "$T/big.svg") bytes" | tee "$T/timing.txt"

python3 - "$T/big.html" "$T/big.svg" $N <<'PY' || FAILED=1
import json, re, sys, xml.etree.ElementTree as ET
s = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'<script type="application/json" id="fgdata">(.*?)</script>', s, re.S).group(1))
n = int(sys.argv[3])
nodes = [d["nodes"][i:i + 5] for i in range(0, len(d["nodes"]), 5)]
ok = nodes[0][4] == n == d["total"]
print(("ok   " if ok else "FAIL ") + f"root holds {nodes[0][4]} of {n} samples")
small = [x for x in nodes if x[4] < d["minSamples"]]
ok2 = not small and d["minSamples"] == 100 and d["kept"] < d["treeNodes"] / 50
print(("ok   " if ok2 else "FAIL ") + f"kept {d['kept']} of {d['treeNodes']} tree nodes (min {d['minSamples']} samples)")
doms = {d["names"][x[1]][0] for x in nodes if x[2] == 1}
ok3 = doms == {"host", "vm1"}
print(("ok   " if ok3 else "FAIL ") + f"domains {sorted(doms)}")
ET.parse(sys.argv[2])
sys.exit(0 if ok and ok2 and ok3 else 1)
PY

source tests/browser/lib.sh
browser_check "$T/big.html" "$T/big.png" --timing-only | tee "$T/browser.log"
[ "${PIPESTATUS[0]}" = 0 ] || FAILED=1
grep '^timing:' "$T/browser.log" >>"$T/timing.txt"
ms=$(sed -n 's/.*painted_ms=\([0-9.]*\).*/\1/p' "$T/browser.log")
echo "1M-sample page painted ${ms} ms after navigation start (goal: < 2000 ms)" | tee -a "$T/timing.txt"
[ $FAILED = 0 ] && echo "flamegraph-large: all checks passed"
exit $FAILED
