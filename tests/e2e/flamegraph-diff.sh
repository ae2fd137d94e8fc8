#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Differential flame graphs (`domprof diff A B --flamegraph OUT`) on two
# real -g recordings of threefuncs with known, different shares:
# A calls func_a, func_b, func_c 5:3:2 times a round (50/30/20%), B 2:6:0
# (25/75/0%): func_b grew, func_a shrank, func_c is only in A.
# - in headless Chromium (tests/browser/check-flamediff.js): func_b's frame
#   is red, func_a's blue, func_c's drawn hatched and "only in A"; each
#   tooltip's self samples, shares and change equal that symbol's row of
#   `diff --format json` (to the two decimals shown); zoom, search, the
#   legend; no errors, no network. --absolute: the change in samples.
#   Controls that must fail: the reversed page (diff B A) fails the colour
#   and number checks; the right page checked against the reversed JSON
#   fails the number checks only.
# - the diff itself is still printed, unchanged, on stdout;
# - SVG: the same colours, dashes for only-in-A, A/B numbers in <title>;
# - domain-aware: host against vm1 of one merged file gives the same
#   frame numbers as the direct diff, under one domain frame "host|vm1";
# - an empty side gives a valid page; flame-graph-only options without
#   --flamegraph are usage errors.
# Screenshots: $TEST_OUT/flamegraph-diff/diff.png (the checked page, the
# tooltip of func_b) and two.png (host and vm1 swapping their workloads:
# docs/flamegraph-diff.png is a copy).
source "$(dirname "$0")/../lib/common.bash"
cd "$TOP"
D="$DOMPROF"; T="$OUT"

"$D" record -F 1000 -g -o "$T/a.data" -- build/workloads/threefuncs 60 >/dev/null 2>"$T/rec.err" || { cat "$T/rec.err"; fail "record a"; }
"$D" record -F 1000 -g -o "$T/b.data" -- build/workloads/threefuncs 60 2 6 0 >/dev/null 2>"$T/rec.err" || { cat "$T/rec.err"; fail "record b"; }
# the diffs run in $T with relative names, so the pages' titles are short
cd "$T" || fail "cd $T"
A=a.data B=b.data
"$D" diff --format json "$A" "$B" >"$T/ab.json" || fail "diff json"
"$D" diff --format json "$B" "$A" >"$T/ba.json" || fail "diff json reversed"
"$D" diff "$A" "$B" >"$T/ab.txt" || fail "diff text"
"$D" diff --flamegraph "$T/ab.html" "$A" "$B" >"$T/ab-fg.txt" 2>"$T/fg.err" || { cat "$T/fg.err"; fail "diff --flamegraph html"; }
"$D" diff --flamegraph "$T/ba.html" "$B" "$A" >/dev/null 2>>"$T/fg.err" || fail "diff --flamegraph reversed"
"$D" diff --flamegraph "$T/abs.html" --absolute "$A" "$B" >/dev/null 2>>"$T/fg.err" || fail "diff --flamegraph --absolute"
"$D" diff --flamegraph "$T/ab.svg" "$A" "$B" >/dev/null 2>>"$T/fg.err" || fail "diff --flamegraph svg"
cmp -s "$T/ab.txt" "$T/ab-fg.txt" || fail_later "--flamegraph changed the printed diff"
head -n 11 "$T/ab.txt"

note "cross-domain: host (A's recording) against vm1 (B's) of one merge"
"$D" merge -q -f -o m.data "$A" vm1="$B" >/dev/null || fail "merge"
"$D" diff --domain-a host --domain-b vm1 --flamegraph "$T/x.html" m.data m.data >"$T/x.txt" 2>>"$T/fg.err" ||
	fail "cross-domain --flamegraph"
"$D" diff --time 100,200 --flamegraph "$T/empty.html" "$A" "$B" >/dev/null 2>"$T/empty.err" || fail_later "empty sides: exit $?"

python3 - "$T" >"$T/data.out" <<'PY' || FAILED=1
import json, re, sys, xml.etree.ElementTree as ET
T = sys.argv[1]
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    if not ok: bad += 1
def page(p):
    s = open(p, encoding="utf-8").read()
    d = json.loads(re.search(r'<script type="application/json" id="fgdata">(.*?)</script>', s, re.S).group(1))
    names = [n[0] for n in d["names"]]
    nodes = [dict(zip(("depth", "name", "kind", "dom", "w", "a", "b", "sa", "sb"), d["nodes"][i:i + 9]))
             for i in range(0, len(d["nodes"]), 9)]
    for n in nodes: n["label"] = names[n["name"]]
    return d, nodes
rows = {r["symbol"]: r for r in json.load(open(f"{T}/ab.json"))["rows"] if r["domain"] == "host"}
for f in ("func_a", "func_b", "func_c"):
    r = rows.get(f, {})
    print(f"{f}: A {r.get('samples_a')} ({r.get('share_a')}%)  B {r.get('samples_b')} ({r.get('share_b')}%)  diff {r.get('diff')}")
check(rows["func_b"]["diff"] > 20 and rows["func_a"]["diff"] < -10 and rows["func_c"]["status"] == "gone",
      "the recordings differ as built: func_b grew, func_a shrank, func_c only in A")
d, nodes = page(f"{T}/ab.html")
check(d["diff"]["totalA"] == json.load(open(f"{T}/ab.json"))["a"]["samples"] and
      d["diff"]["totalB"] == json.load(open(f"{T}/ab.json"))["b"]["samples"], "page totals = the diff's compared samples")
by = {n["label"]: n for n in nodes}
fc = by.get("func_c", {})
check(fc.get("b") == 0 and fc.get("sa") == rows["func_c"]["samples_a"] and fc.get("w", 0) > 0, "func_c: only in A, drawn from A")
root = nodes[0]
# the root: B's samples plus, at least, func_c's drawn width (other
# frames only in A, a kernel path or two, add theirs)
ghost = root["w"] - root["b"]
check(fc.get("w", 0) - 1e-3 <= ghost <= root["a"] * root["b"] / root["a"] + 1e-3,
      f"the root is B's samples plus what only A has ({root['b']} + {ghost:.1f})")
x, xn = page(f"{T}/x.html")
xb = {n["label"]: n for n in xn}
check(any(n["kind"] == 1 and n["label"] == "host|vm1" for n in xn) and sum(n["kind"] == 1 for n in xn) == 1,
      "cross-domain: one domain frame host|vm1")
check(all((xb[f]["a"], xb[f]["b"], xb[f]["sa"], xb[f]["sb"]) == (by[f]["a"], by[f]["b"], by[f]["sa"], by[f]["sb"])
          for f in ("func_a", "func_b")), "cross-domain: func_a and func_b as in the direct diff")
e, en = page(f"{T}/empty.html")
check(e["diff"]["totalA"] == 0 and e["diff"]["totalB"] == 0, "empty sides: a valid page with no samples")
svg = ET.parse(f"{T}/ab.svg").getroot()
ns = "{http://www.w3.org/2000/svg}"
fr = {}
for g in svg.iter(ns + "g"):
    t, r = g.find(ns + "title"), g.find(ns + "rect")
    if t is not None and r is not None: fr[t.text.split(" (")[0]] = (t.text, r.attrib)
hue = lambda a: int(re.match(r"hsl\((\d+),", a["fill"]).group(1)) if a["fill"].startswith("hsl(") and "80%" in a["fill"] else -1
check(hue(fr["func_b"][1]) == 0 and hue(fr["func_a"][1]) == 220, "svg: func_b red, func_a blue")
check("stroke-dasharray" in fr["func_c"][1] and "only in A" in fr["func_c"][0], "svg: func_c dashed, only in A")
m = re.search(r"A (\d+) samples .* B (\d+) samples", fr["func_b"][0])
check(m and int(m.group(2)) >= rows["func_b"]["samples_b"], "svg: func_b's tooltip holds its A and B samples: " + fr["func_b"][0])
sys.exit(1 if bad else 0)
PY
cat "$T/data.out"

note "two domains, for the picture in docs/flamegraph.md: host and vm1 swap their workloads"
"$D" merge -q -f -o ab.data "$A" vm1="$B" >/dev/null && "$D" merge -q -f -o ba.data "$B" vm1="$A" >/dev/null ||
	fail "merge for the picture"
"$D" diff --flamegraph "$T/two.html" ab.data ba.data >/dev/null 2>>"$T/fg.err" || fail "two-domain diff --flamegraph"

note "usage"
"$D" diff --absolute "$A" "$B" >/dev/null 2>"$T/u.err"; rc=$?
[ $rc = 2 ] && grep -q "need --flamegraph" "$T/u.err" || fail_later "--absolute without --flamegraph: exit $rc"
"$D" diff --flamegraph "$T/y.html" --by-pid --no-comm "$A" "$B" >/dev/null 2>"$T/u.err"; rc=$?
[ $rc = 2 ] || fail_later "--by-pid --no-comm: exit $rc"
"$D" diff --flamegraph /nonexistent-dir/x.html "$A" "$B" >/dev/null 2>"$T/u.err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$T/u.err")" = 1 ] || fail_later "unwritable output: exit $rc, $(cat "$T/u.err")"

source "$TOP/tests/browser/lib.sh"
chk() { node "$TOP/tests/browser/check-flamediff.js" "$@"; }
chk "$T/ab.html" "$T/diff.png" --json "$T/ab.json" --grew func_b --shrank func_a --gone func_c --domain host
rc=$?; [ $rc = 3 ] && skip "headless chromium could not start"
[ $rc = 0 ] || fail_later "browser: the differential page"
chk "$T/abs.html" "$T/abs.png" --json "$T/ab.json" --grew func_b --shrank func_a --absolute --domain host ||
	fail_later "browser: the --absolute page"
note "control 1: the reversed page (diff B A), same checks (must fail on colours and numbers)"
chk "$T/ba.html" "$T/ba.png" --json "$T/ab.json" --grew func_b --shrank func_a --domain host >"$T/c1.out" 2>&1
rc=$?; grep -E '^FAIL' "$T/c1.out"
[ $rc = 1 ] && grep -q '^FAIL func_b (grew) is red' "$T/c1.out" && grep -q '^FAIL func_a (shrank) is blue' "$T/c1.out" &&
	grep -q '^FAIL func_b: self samples' "$T/c1.out" || fail_later "control 1 did not fail as it must (exit $rc)"
note "control 2: the right page against the reversed JSON (must fail on numbers only)"
chk "$T/ab.html" "$T/c2.png" --json "$T/ba.json" --grew func_b --shrank func_a --domain host >"$T/c2.out" 2>&1
rc=$?; grep -E '^FAIL' "$T/c2.out"
[ $rc = 1 ] && grep -q '^FAIL func_b: self samples' "$T/c2.out" && grep -q '^FAIL func_a: change' "$T/c2.out" &&
	grep -q '^ok   func_b (grew) is red' "$T/c2.out" || fail_later "control 2 did not fail as it must (exit $rc)"
note "the two-domain page (its screenshot is docs/flamegraph-diff.png)"
node "$TOP/tests/browser/check-roots.js" "$T/two.html" "$T/two.png" --program threefuncs --frames 2 >"$T/two.out" 2>&1 ||
	{ cat "$T/two.out"; fail_later "browser: the two-domain page"; }
[ $FAILED = 0 ] && echo "flamegraph-diff: all checks passed"
exit $FAILED
