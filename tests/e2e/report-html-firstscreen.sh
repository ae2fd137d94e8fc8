#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a reader sees first of a flame graph whose height is set by a few
# deep, narrow stacks: deepnarrow -g (flat_a ~55% and flat_b ~40% called
# from main, deep_rec recursing 200 levels ~5%; the call chain bound of
# 127 frames makes it ~130 levels tall). The pages of `domprof flamegraph`
# and `report --format html` (its flame graph section, where a reader
# scrolls to) and the SVG are loaded in headless Chromium at 1280x800
# (tests/browser/check-firstscreen.js):
# - the first screen shows a frame wider than 10% of the window (from the
#   DOM: frame boxes inside the window, on top at their centre; and from
#   the screenshot's pixels, tests/e2e/lib/png_runs.py: a coloured band
#   wider than 10%); flat_a is on it;
# - the deep stack is cut at the levels that fit, its frame marked; a
#   click on it zooms and draws the levels above it; a real click on "All
#   levels" draws every level with the base kept in place on the screen;
#   a click on flat_a zooms it to the full width; no page errors.
# - the SVG picture (all levels: a picture cannot draw fewer) opens
#   scrolled to its base: the same first screen checks.
# Control (must fail, DOM and pixels): the same page with every level
# drawn and opened at the same place, as the previous builds drew it; the
# SVG opened at its top.
# Nothing depends on the host's kernel functions, CPU or timing: the
# shares come from the workload's call counts and only their order of
# magnitude is used. Screenshots go to $TEST_OUT/report-html-firstscreen/.
source "$(dirname "$0")/lib/report-common.bash"
need_workload deepnarrow
source "$TOP/tests/browser/lib.sh"
D="$DOMPROF" T="$OUT"

record d -F 1000 -g -- "$WL/deepnarrow" 30
(cd "$T" && "$D" flamegraph -i d.data -o fg.html) 2>"$T/fg.err" || { cat "$T/fg.err"; fail "flamegraph"; }
(cd "$T" && "$D" flamegraph -i d.data -o fg.svg) 2>"$T/fg.err" || { cat "$T/fg.err"; fail "flamegraph svg"; }
(cd "$T" && "$D" report -q -i d.data --format html -o rp.html) 2>"$T/rp.err" || { cat "$T/rp.err"; fail "report --format html"; }

# the recording has the shape the test is about: a tall narrow stack,
# wide frames at the base
python3 - "$T/fg.html" <<'PY' || fail "the recording is not deep-and-narrow plus wide-and-shallow"
import json, re, sys
s = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'<script type="application/json" id="fgdata">(.*?)</script>', s, re.S).group(1))
nodes = [d["nodes"][i:i + 5] for i in range(0, len(d["nodes"]), 5)]
names = [n[0] for n in d["names"]]
total = nodes[0][4]
deep_top = max(n[0] for n in nodes if names[n[1]] == "deep_rec")
tower = max((n[4] for n in nodes if names[n[1]] == "deep_rec"), default=0)
fa = sum(n[4] for n in nodes if names[n[1]] == "flat_a")
ok = deep_top >= 60 and fa > 0.3 * total and tower < 0.09 * total
print(("ok   " if ok else "FAIL ") + f"recording: {total} samples, flat_a {100 * fa / total:.1f}%, "
      f"deep_rec tower {100 * tower / total:.1f}% up to level {deep_top}")
sys.exit(0 if ok else 1)
PY

screen() {   # NAME PAGE [--report|--svg]
	local name=$1 page=$2; shift 2
	node "$BROWSER_DIR/check-firstscreen.js" "$page" "$T/$name.png" "$T/$name-old.png" \
		--deep deep_rec --wide flat_a "$@"
	local rc=$?
	[ $rc = 3 ] && skip "headless chromium could not start (see messages above)"
	[ $rc = 0 ] || fail_later "$name: the first screen checks"
}
screen flamegraph "$T/fg.html"
screen report "$T/rp.html" --report
screen svg "$T/fg.svg" --svg

# the screenshots' pixels: a coloured band wider than 10% on each first
# screen, none on the controls'
python3 "$TOP/tests/e2e/lib/png_runs.py" 0.1 "$T"/{flamegraph,report,svg}{,-old}.png >"$T/pixels.log" ||
	{ cat "$T/pixels.log"; fail "png_runs.py could not read the screenshots"; }
cat "$T/pixels.log"
for name in flamegraph report svg; do
	if grep -q "/$name.png: .*: wide$" "$T/pixels.log"; then
		echo "ok   $name: the screenshot has a coloured band wider than 10%"
	else
		fail_later "$name: no coloured band wider than 10% in $T/$name.png: $(grep "/$name.png" "$T/pixels.log")"
	fi
	if grep -q "/$name-old.png: .*: narrow$" "$T/pixels.log"; then
		echo "ok   control fails: the $name control's screenshot has no band wider than 10%"
	else
		fail_later "$name: control passed: $(grep "/$name-old.png" "$T/pixels.log")"
	fi
done
[ $FAILED = 0 ] && echo "report-html-firstscreen: all checks passed"
exit $FAILED
