#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `domprof report --format html` on a real two-domain recording: host
# threefuncs -g (func_a 50%, func_b 30%, func_c 20%, called from main)
# merged with piework -g as guest vm1 (pie_hot 90%, pie_cold 10%).
# - the page is self-contained (no external script/style/fetch), under
#   2 MB, and says what it is (its data names both domains);
# - headless Chromium (tests/browser/check-report.js, real input events):
#   the table and image summary equal `report -l -g --format json`'s;
#   a click on a header sorts; the vm1 button filters the table (equal to
#   `report --domain vm1`'s json) and the flame graph together; a click on
#   func_a shows caller main with the json's count; search; no errors, no
#   network. Every check has a control that must fail (printed as
#   "control fails"), and a page whose script throws must fail the check.
# - a short system-wide -a -g recording (root): its page size and the
#   time to paint are printed (no timing assertion), size under 2 MB.
# Screenshots go to $TEST_OUT/report-html/; docs/report-html.png is made
# from the first (DOMPROF_UPDATE_DOCS=1 copies it).
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs piework
D="$DOMPROF" T="$OUT"
MAX_BYTES=$((2 * 1024 * 1024))

record host -F 1000 -g -- "$WL/threefuncs" 80
record g1 -F 1000 -g -- "$WL/piework" 60
# short names in the page (its header shows the file and the merge command)
(cd "$T" && "$D" merge -o m.data host.data vm1=g1.data) 2>"$T/merge.err" || { cat "$T/merge.err"; fail "merge"; }
(cd "$T" && "$D" report -q -i m.data --format html -o m.html) 2>"$T/html.err" || { cat "$T/html.err"; fail "report --format html"; }
"$D" report -q -i "$T/m.data" -l -g --format json >"$T/all.json" || fail "report json"
"$D" report -q -i "$T/m.data" -l -g --format json --domain vm1 >"$T/vm1.json" || fail "report json vm1"
size=$(stat -c %s "$T/m.html")
echo "page: $size bytes"
[ "$size" -lt "$MAX_BYTES" ] || fail_later "page is $size bytes (bound $MAX_BYTES)"

# self-contained: nothing external, nothing loaded by script
grep -Eiq '<(script|link|img|iframe)[^>]+(src|href)=' "$T/m.html" && fail_later "page references an external resource"
grep -Eq 'fetch\(|XMLHttpRequest|import\(' "$T/m.html" && fail_later "page script loads something"
python3 - "$T/m.html" <<'PY' || FAILED=1
import json, re, sys
s = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="rpdata">(.*?)</script>', s, re.S)
d = json.loads(m.group(1))
ok = [d["domains"][0]["name"] == "host", d["domains"][1]["name"] == "vm1",
      "func_a" in d["strs"] and "pie_hot" in d["strs"], d["nodes"] > 0,
      '<script type="application/json" id="fgdata">' in d["fgpage"]]
print(("ok   " if all(ok) else "FAIL ") + f"page data: domains, names, {d['nodes']} tree nodes, the flame graph page {ok}")
sys.exit(0 if all(ok) else 1)
PY

# -o writes any format (the same bytes as standard output)
"$D" report -q -i "$T/m.data" -l -g --format json -o "$T/all-o.json" || fail_later "-o json exit $?"
cmp -s "$T/all.json" "$T/all-o.json" || fail_later "-o json differs from standard output"
# -o on a path that cannot be created: one line, exit 1
"$D" report -q -i "$T/m.data" --format html -o "$T/no/such/dir/x.html" 2>"$T/o.err"; rc=$?
[ $rc = 1 ] && grep -q "cannot create '$T/no/such/dir/x.html'" "$T/o.err" || fail_later "bad -o: exit $rc, $(cat "$T/o.err")"
"$D" report -q -i "$T/m.data" --format html --timeline -o "$T/x.html" 2>"$T/t.err"; rc=$?
[ $rc = 2 ] || fail_later "--format html --timeline: exit $rc (usage error expected)"

source tests/browser/lib.sh
report_check() {
	node "$BROWSER_DIR/check-report.js" "$@"
	local rc=$?
	[ $rc = 3 ] && skip "headless chromium could not start (see messages above)"
	return $rc
}
report_check "$T/m.html" "$T/report-html.png" --json "$T/all.json" --domain vm1 --domain-json "$T/vm1.json" \
	--other host --other-hot func_a --hot func_a --caller main || FAILED=1
if [ -n "${DOMPROF_UPDATE_DOCS:-}" ] && [ -f "$T/report-html.png" ]; then
	cp "$T/report-html.png" "$TOP/docs/report-html.png" && echo "docs/report-html.png updated"
fi

# control of "no errors": a page whose script throws must fail the check
sed 's/^var D = JSON.parse(document.getElementById(.rpdata.)/null.broken; &/' "$T/m.html" >"$T/broken.html"
cmp -s "$T/m.html" "$T/broken.html" && fail_later "could not make the broken page"
report_check "$T/broken.html" "$T/broken.png" --timing-only --wait 5 >"$T/broken.log" 2>&1
grep -q "FAIL no page or console errors: pageerror" "$T/broken.log" &&
	echo "ok   control fails: a page whose script throws is reported" ||
	{ cat "$T/broken.log"; fail_later "a broken page passed the error check"; }

# a small system-wide recording: size and time to paint
if [ "$(id -u)" = 0 ]; then
	"$WL/threefuncs" 200 >/dev/null & bg_pids+=($!)
	"$D" record -f -a -g -F 2000 -d 2 -o "$T/sys.data" >"$T/sys.log" 2>&1 || { cat "$T/sys.log"; fail "record -a"; }
	"$D" report -q -i "$T/sys.data" --format html -o "$T/sys.html" 2>"$T/sys.err" || { cat "$T/sys.err"; fail "sys html"; }
	ssize=$(stat -c %s "$T/sys.html")
	echo "system-wide page: $("$D" info "$T/sys.data" | awk '/^samples:/{print $2}') samples, $ssize bytes"
	[ "$ssize" -lt "$MAX_BYTES" ] || fail_later "system-wide page is $ssize bytes (bound $MAX_BYTES)"
	report_check "$T/sys.html" "$T/sys.png" --timing-only || FAILED=1
else
	echo "note: not root, no system-wide page measured"
fi
[ $FAILED = 0 ] && echo "report-html: all checks passed"
exit $FAILED
