#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 34 item 4: names never reach a terminal as escape sequences. A
# recording (test-tool gen-hostile names) holds a process named
# "\x1b]0;PWNED-TITLE" (an OSC that sets the window title), a perf-map
# symbol "jit_evil\x1b]0;TERMTITLE\x07", a kernel symbol ending in an
# OSC 52 (clipboard), a library path and a domain with CSIs and a guest
# process whose name clears the screen. Every text command (report in
# its views, dump, info, annotate, diff, and their warnings and errors on
# stderr) must print no ESC, BEL or other control byte but the names in
# their escaped form (`\x1b`); the control: CSV keeps the raw names (so
# the recording really holds them and the test can fail).
source "$(dirname "$0")/lib/report-common.bash"
[ -x "$TT" ] || fail "$TT missing (run 'make fixtures')"

D="$OUT/names.data"
"$TT" gen-hostile names "$D" 4000123 perfmap || fail "generator"

# control: the raw bytes are in the recording, and CSV passes them on
"$DOMPROF" report -i "$D" --format csv --by-process -l >"$OUT/control.csv" 2>/dev/null ||
	fail "report --format csv failed"
grep -q $'\x1b]0;PWNED-TITLE' "$OUT/control.csv" || fail "control: the raw process name is not in the CSV"
grep -q $'jit_evil\x1b]0;TERMTITLE\x07' "$OUT/control.csv" || fail "control: the raw perf-map symbol is not in the CSV"

n=0
check() {   # check NAME WANT CMD... : no control byte but newline in stdout+stderr; WANT (fixed) there
	local name=$1 want=$2; shift 2
	n=$((n + 1))
	"$@" >"$OUT/$name.out" 2>&1
	local rc=$?
	[ $rc -le 1 ] || { cat "$OUT/$name.out"; fail "$name: exit $rc"; }
	if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$OUT/$name.out"; then
		LC_ALL=C grep -n $'[\x01-\x09\x0b-\x1f\x7f]' "$OUT/$name.out" | cat -v | head -5
		fail_later "$name: a raw control byte reached the output"
	fi
	if [ -n "$want" ] && ! grep -qF -- "$want" "$OUT/$name.out"; then
		cat "$OUT/$name.out"
		fail_later "$name: '$want' (the escaped form) is missing"
	fi
}

check report         '\x1b]0;PWNED-TITLE'                  "$DOMPROF" report -i "$D"
check by-process     '\x1b]0;PWNED-TITLE'                  "$DOMPROF" report -i "$D" --by-process
check symbols        'jit_evil\x1b]0;TERMTITLE\x07'        "$DOMPROF" report -i "$D" -l
check by-process-l   'kevil\x1b]52;c;UFdORUQ=\x07'         "$DOMPROF" report -i "$D" --by-process -l
check callgraph      'lib\x1b[31mred.so'                   "$DOMPROF" report -i "$D" -g
check timeline       'g\x1b[5mbl'                          "$DOMPROF" report -i "$D" --timeline=1
check dump           'comm=\x1b]0;PWNED-TITLE'             "$DOMPROF" dump "$D"
check dump-guest     'comm=gproc\x1b[2J'                   "$DOMPROF" dump "$D"
check info           'g\x1b[5mblink'                       "$DOMPROF" info "$D"
check annotate       '<jit_evil\x1b]0;TERMTITLE\x07+0x10>' "$DOMPROF" annotate -i "$D" -n 3
check annotate-miss  'nearest: '                           "$DOMPROF" annotate -i "$D" no_such_function
check diff           'jit_evil\x1b]0;TERMTITLE\x07'        "$DOMPROF" diff "$D" "$D"
check warning        '/bin/g\x1b[7mapp'                    "$DOMPROF" export -i "$D" --format folded -o "$OUT/x.folded"
check flamegraph     '/bin/g\x1b[7mapp'                    "$DOMPROF" flamegraph -i "$D" -o "$OUT/x.html"

# a real process that names itself so (prctl PR_SET_NAME), recorded
umask 022
if [ -x "$WL/jitwork" ] && "$DOMPROF" record -f -o "$OUT/real.data" -- \
	"$WL/jitwork" 0.3 "$OUT/real.pid" $'\x1b]0;PWNED-TITLE' >"$OUT/real.log" 2>&1; then
	at_exit "rm -f /tmp/perf-\$(cat '$OUT/real.pid').map"
	"$DOMPROF" report -i "$OUT/real.data" --format csv --by-process >"$OUT/real.csv" 2>/dev/null
	grep -q $'\x1b]0;PWNED-TITLE' "$OUT/real.csv" || fail_later "real: the raw name is not in the recording (control)"
	check real-by-process '\x1b]0;PWNED-TITLE'   "$DOMPROF" report -i "$OUT/real.data" --by-process
	check real-dump       'comm=\x1b]0;PWNED-TITLE' "$DOMPROF" dump "$OUT/real.data"
else
	note "jitwork not built or recording refused: the recorded process not checked"
fi

# widths count the escaped form: the columns after a long escaped name line up
python3 - "$OUT/by-process-l.out" <<'PY' || fail "report --by-process -l: columns do not line up"
import sys
rows = [l.rstrip("\n") for l in open(sys.argv[1]) if l[:1].isdigit() or l.startswith("samples")]
head = rows[0]
col = head.index("image name")
for r in rows[1:]:
    assert r[col - 2:col] == "  " and r[col] != " ", (r, col)
PY
[ "$FAILED" = 0 ] || exit 1
echo "report-escapes: $n commands checked, no raw control byte"
