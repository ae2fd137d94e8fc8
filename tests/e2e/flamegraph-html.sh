#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `domprof flamegraph` on a real recording of threefuncs (func_a 50%,
# func_b 30%, func_c 20%, called from main) made with -g:
# - the HTML page is self-contained (no external script/style/fetch) and
#   its inline data is valid JSON whose root is all samples;
# - the SVG is well-formed XML with the frames and <title> tooltips;
# - --inverted puts the leaf functions right under the process;
# - in headless Chromium the page has no errors, draws "all" and func_a,
#   zooms on click, resets, and search prints func_a's share (50% +- 6).
#   A screenshot goes to $TEST_OUT/flamegraph-html/.
source "$(dirname "$0")/../lib/common.bash"
cd "$TOP"
D="$DOMPROF"; T="$OUT"

"$D" record -F 1000 -g -o "$T/t.data" -- build/workloads/threefuncs 120 >"$T/record.out" 2>"$T/record.err" ||
	{ cat "$T/record.err"; fail "record"; }
"$D" flamegraph -i "$T/t.data" -o "$T/t.html" 2>"$T/fg.err" || { cat "$T/fg.err"; fail "flamegraph html"; }
"$D" flamegraph -i "$T/t.data" -o "$T/t.svg" --title "threefuncs <svg>" 2>>"$T/fg.err" || fail_later "flamegraph svg"
"$D" flamegraph -i "$T/t.data" -o "$T/inv.html" --inverted 2>>"$T/fg.err" || fail_later "flamegraph --inverted"
echo "sizes: html $(stat -c %s "$T/t.html") bytes, svg $(stat -c %s "$T/t.svg") bytes"

# self-contained: no external resources of any kind
grep -Eiq '<(script|link|img|iframe)[^>]+(src|href)=' "$T/t.html" && fail_later "page references an external resource"
grep -Eq 'fetch\(|XMLHttpRequest|import\(' "$T/t.html" && fail_later "page script loads something"

python3 - "$T/t.html" "$T/inv.html" "$T/t.svg" <<'PY' || FAILED=1
import json, re, sys, xml.etree.ElementTree as ET
def data(path):
    s = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="fgdata">(.*?)</script>', s, re.S)
    return json.loads(m.group(1))
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    if not ok: bad += 1
d = data(sys.argv[1])
nodes = [d["nodes"][i:i + 5] for i in range(0, len(d["nodes"]), 5)]
names = [n[0] for n in d["names"]]
check(nodes[0][0] == 0 and names[nodes[0][1]] == "all" and nodes[0][4] == d["total"] > 0, "root 'all' holds all samples")
check(any(names[n[1]] == "host" and n[2] == 1 for n in nodes), "domain frame 'host'")
check(any(n[2] == 2 and names[n[1]] == "threefuncs" for n in nodes), "process frame threefuncs (runs merged by command name)")
tot = {names[n[1]]: n[4] for n in nodes if n[2] >= 3}
for f, share in (("func_a", 50), ("func_b", 30), ("func_c", 20)):
    pct = 100.0 * tot.get(f, 0) / d["total"]
    check(abs(pct - share) <= 6, f"{f} {pct:.1f}% (expected {share} +- 6)")
fa = [n for n in nodes if names[n[1]] == "func_a"][0]
mn = [n for n in nodes if names[n[1]] == "main"][0]
check(fa[0] == mn[0] + 1, "func_a sits on main (call chains used)")
inv = data(sys.argv[2])
inodes = [inv["nodes"][i:i + 5] for i in range(0, len(inv["nodes"]), 5)]
inames = [n[0] for n in inv["names"]]
check(inv["inverted"] and any(inames[n[1]] == "func_a" and n[0] == 3 for n in inodes), "inverted: func_a right under the process")
root = ET.parse(sys.argv[3]).getroot()
ns = "{http://www.w3.org/2000/svg}"
titles = [t.text for t in root.iter(ns + "title")]
check(any(t.startswith("all (") for t in titles), "svg: root frame with tooltip")
check(any(t.startswith("func_a (") and "samples" in t and "%" in t for t in titles), "svg: func_a with samples and percent")
check(root.find(ns + "script") is not None, "svg: zoom script")
check(any((t.text or "") == "threefuncs <svg>" for t in root.iter(ns + "text")), "svg: title escaped")
sys.exit(1 if bad else 0)
PY

# filters: a pid that does not exist gives a valid empty page and the warning
"$D" flamegraph -i "$T/t.data" -o "$T/empty.html" --pid 1 2>"$T/empty.err" || fail_later "empty flamegraph exit"
grep -q "profile is empty (0 samples match)" "$T/empty.err" || fail_later "no empty warning"
grep -q '"total":0' "$T/empty.html" || fail_later "empty page total"

source tests/browser/lib.sh
browser_check "$T/t.html" "$T/flamegraph.png" --hot func_a --share 50 --tol 6 || FAILED=1
browser_check "$T/empty.html" "$T/empty.png" --timing-only >"$T/empty-browser.log" 2>&1
grep -q "FAIL no page" "$T/empty-browser.log" && { cat "$T/empty-browser.log"; fail_later "empty page has errors"; }
[ $FAILED = 0 ] && echo "flamegraph-html: all checks passed"
exit $FAILED
