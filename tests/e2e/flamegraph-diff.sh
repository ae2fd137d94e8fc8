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
#   This runs on two merged files in which host and vm1 swap the two
#   workloads (checked under host; --absolute under vm1, where func_a
#   grew). Control that must fail: the reversed page (diff B A) fails the
#   colour and the number checks.
# - the diff itself is still printed, unchanged, on stdout;
# - SVG: the same colours, dashes for only-in-A, A/B numbers in <title>;
# - domain-aware: host against vm1 of one merged file gives the same
#   frame numbers as the direct diff, under one domain frame "host|vm1"
#   and, by default there, no process level;
# - an empty side gives a valid page; flame-graph-only options without
#   --flamegraph are usage errors.
# Screenshot: $TEST_OUT/flamegraph-diff/diff.png (the two-domain page with
# the tooltip of host's func_b; docs/flamegraph-diff.png is a copy).
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
check(not any(n["kind"] == 2 for n in xn), "cross-domain: no process level by default (as the rows)")
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

note "usage"
"$D" diff --absolute "$A" "$B" >/dev/null 2>"$T/u.err"; rc=$?
[ $rc = 2 ] && grep -q "need --flamegraph" "$T/u.err" || fail_later "--absolute without --flamegraph: exit $rc"
"$D" diff --flamegraph "$T/y.html" --by-pid --no-comm "$A" "$B" >/dev/null 2>"$T/u.err"; rc=$?
[ $rc = 2 ] || fail_later "--by-pid --no-comm: exit $rc"
"$D" diff --flamegraph /nonexistent-dir/x.html "$A" "$B" >/dev/null 2>"$T/u.err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$T/u.err")" = 1 ] || fail_later "unwritable output: exit $rc, $(cat "$T/u.err")"

note "two domains for the browser: host and vm1 swap their workloads (the page's screenshot is docs/flamegraph-diff.png)"
"$D" merge -q -f -o ab.data "$A" vm1="$B" >/dev/null && "$D" merge -q -f -o ba.data "$B" vm1="$A" >/dev/null ||
	fail "merge for the browser"
"$D" diff --format json ab.data ba.data >"$T/two.json" || fail "two-domain diff json"
"$D" diff --flamegraph "$T/two.html" ab.data ba.data >/dev/null 2>>"$T/fg.err" || fail "two-domain diff --flamegraph"
"$D" diff --flamegraph "$T/two-abs.html" --absolute ab.data ba.data >/dev/null 2>>"$T/fg.err" || fail "--absolute"
"$D" diff --flamegraph "$T/two-rev.html" ba.data ab.data >/dev/null 2>>"$T/fg.err" || fail "reversed"

source "$TOP/tests/browser/lib.sh"
chk() { node "$TOP/tests/browser/check-flamediff.js" "$@"; }
chk "$T/two.html" "$T/diff.png" --json "$T/two.json" --grew func_b --shrank func_a --gone func_c --domain host
rc=$?; [ $rc = 3 ] && skip "headless chromium could not start"
[ $rc = 0 ] || fail_later "browser: the differential page"
chk "$T/two-abs.html" "$T/abs.png" --json "$T/two.json" --grew func_a --shrank func_b --absolute --domain vm1 ||
	fail_later "browser: the --absolute page (vm1: func_a grew, func_b shrank)"
note "control: the reversed page (diff B A), same checks (must fail on colours and numbers)"
chk "$T/two-rev.html" "$T/rev.png" --json "$T/two.json" --grew func_b --shrank func_a --domain host >"$T/c1.out" 2>&1
rc=$?; grep -E '^FAIL' "$T/c1.out"
[ $rc = 1 ] && grep -q '^FAIL func_b (grew) is red' "$T/c1.out" && grep -q '^FAIL func_a (shrank) is blue' "$T/c1.out" &&
	grep -q '^FAIL func_b: self samples' "$T/c1.out" && grep -q '^FAIL func_a: change' "$T/c1.out" ||
	fail_later "control did not fail as it must (exit $rc)"
[ $FAILED = 0 ] && echo "flamegraph-diff: all checks passed"
exit $FAILED
