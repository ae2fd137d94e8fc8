#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `record --switch-output`: a recording of threefuncs (func_a 50%, func_b
# 30%, func_c 20%) switched three times by SIGUSR2 gives exactly 4 files
# OUT.YYYY-MM-DDTHH:MM:SS.mmmZ; each reports alone (no damage, complete,
# its STATS agreeing with its records), names threefuncs' functions with
# their known shares (within 3 sigma + 2 points of each file's count), and
# the files' samples add up to the total the summary line printed (none
# lost between files). Control: the sum without one file differs. Then
# --switch-max-files 2 keeps the newest 2 of 4 files, and the option's
# errors (bad TIME/SIZE, max-files alone, -o a device) are usage errors.
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs

B="$OUT/sw.data"
note "record with three SIGUSR2 switches"
"$DOMPROF" record -F 1000 --switch-output -o "$B" -- "$WL/threefuncs" 100000 \
	>"$OUT/rec.log" 2>&1 &
rec=$!
bg_pids+=($rec)
nfiles() { ls "$B".* 2>/dev/null | grep -c 'Z$'; }
# each switch only once the file before it exists and had time for samples
for n in 1 2 3 4; do
	for _ in $(seq 100); do [ "$(nfiles)" -ge "$n" ] && break; sleep 0.1; done
	[ "$(nfiles)" -ge "$n" ] || { cat "$OUT/rec.log"; fail "file $n did not appear"; }
	sleep 1
	if [ "$n" -lt 4 ]; then kill -USR2 $rec; else kill -INT $rec; fi
done
wait $rec || { cat "$OUT/rec.log"; grep -q 'perf_event_paranoid' "$OUT/rec.log" && skip "perf_event_open refused"; fail "record exit"; }
cat "$OUT/rec.log"
files=$(ls "$B".* | sort)
echo "$files"
[ "$(echo "$files" | wc -l)" = 4 ] || fail "expected 4 files, got: $files"
echo "$files" | grep -Eqv '\.[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$' &&
	fail "a file name is not OUT.YYYY-MM-DDTHH:MM:SS.mmmZ"
grep -Eq ' in 4 files ' "$OUT/rec.log" || fail "summary does not say 4 files"
total=$(sed -En 's/^domprof record: ([0-9]+) samples written.*/\1/p' "$OUT/rec.log")
[ -n "$total" ] || fail "no summary line"

note "each file alone"
sum=0 first=
for f in $files; do
	"$DOMPROF" info "$f" >"$OUT/info.txt" 2>&1 || fail "info $f exit $?"
	grep -q '^damage: *none' "$OUT/info.txt" || { cat "$OUT/info.txt"; fail "$f: damage"; }
	grep -q '^complete: *yes' "$OUT/info.txt" || { cat "$OUT/info.txt"; fail "$f: not complete"; }
	"$DOMPROF" report -i "$f" -l --format csv >"$OUT/r.csv" 2>"$OUT/r.err" || fail "report $f exit $?"
	[ -s "$OUT/r.err" ] && { cat "$OUT/r.err"; fail "report $f warned"; }
	n=$(sed -En 's/^samples: +([0-9]+)$/\1/p' "$OUT/info.txt")
	st=$(sed -En 's/^stats: +([0-9]+) samples.*/\1/p' "$OUT/info.txt")
	[ "$n" = "$st" ] || fail "$f: $n SAMPLE records but STATS says $st"
	echo "$f: $n samples"
	sum=$((sum + n))
	[ -z "$first" ] && first=$n
	python3 - "$OUT/r.csv" <<'PY' || fail "$f: shares off"
import csv, math, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["image"] == "threefuncs"]
n = {s: sum(int(r["samples"]) for r in rows if r["symbol"] == s) for s in ("func_a", "func_b", "func_c")}
three = sum(n.values())
assert three >= 100, "only %d samples in func_a/b/c" % three
for s, want in (("func_a", 50), ("func_b", 30), ("func_c", 20)):
    got = 100.0 * n[s] / three
    tol = 2 + 300 * math.sqrt(want / 100 * (1 - want / 100) / three)
    print("  %s %.1f%% (want %d +- %.1f)" % (s, got, want, tol))
    assert abs(got - want) <= tol, s
PY
done
echo "files: $sum samples, summary: $total"
[ "$sum" = "$total" ] || fail "the files hold $sum samples, the recorder wrote $total"
[ $((sum - first)) != "$total" ] || fail "control: the sum without the first file still matched"

note "--switch-max-files 2"
K="$OUT/keep.data"
"$DOMPROF" record -F 100 --switch-output --switch-max-files 2 -o "$K" -- sleep 30 >"$OUT/keep.log" 2>&1 &
rec=$!
bg_pids+=($rec)
newest() { ls "$K".* 2>/dev/null | grep 'Z$' | sort | tail -n 1; }
# waits until the newest file is another than $1
wait_new() {
	for _ in $(seq 100); do
		local nw
		nw=$(newest)
		[ -n "$nw" ] && [ "$nw" != "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
wait_new "" || fail "no first file"
for n in 1 2 3; do
	prev=$(newest)
	kill -USR2 $rec
	wait_new "$prev" || { cat "$OUT/keep.log"; fail "switch $n made no new file"; }
done
kill -INT $rec
wait $rec || { cat "$OUT/keep.log"; fail "record --switch-max-files exit"; }
cat "$OUT/keep.log"
[ "$(ls "$K".* | wc -l)" = 2 ] || fail "expected the newest 2 files, got: $(ls "$K".*)"
grep -q ' in 4 files ' "$OUT/keep.log" || fail "--switch-max-files run did not write 4 files"
for f in "$K".*; do "$DOMPROF" info "$f" | grep -q '^complete: *yes' || fail "$f not complete"; done

note "usage errors"
for bad in "--switch-output=10x" "--switch-output=100K" "--switch-output=0s" "--switch-output=" \
	   "--switch-max-files=2" "--switch-output=1s --switch-max-files=0"; do
	# shellcheck disable=SC2086
	"$DOMPROF" record $bad -o "$OUT/bad.data" -- true >"$OUT/bad.log" 2>&1
	rc=$?
	[ $rc = 2 ] || { cat "$OUT/bad.log"; fail "record $bad: exit $rc, want 2"; }
	head -n 1 "$OUT/bad.log"
done
"$DOMPROF" record --switch-output=1s -o /dev/null -- true >"$OUT/bad.log" 2>&1
[ $? = 2 ] || fail "--switch-output with -o /dev/null accepted"
grep -q 'not a device' "$OUT/bad.log" || fail "no reason for -o /dev/null: $(cat "$OUT/bad.log")"
ls /dev/null.* 2>/dev/null && fail "files created in /dev"

# A recorder killed while a file of the series starts leaves its
# temporary outside the series' glob (hidden: .OUT.TIME.tmp-PID), so a
# shipper's `OUT.*` never takes it, and report refuses it by name. The
# start is held by a stub that answers its handshake slowly.
if command -v python3 >/dev/null; then
	SOCK=$(mktemp -d /tmp/domprof-switch.XXXXXX)
	at_exit 'rm -rf "$SOCK"'
	python3 "$TOP/tests/e2e/lib/fake-gdbstub.py" "$SOCK/s.sock" slow-hello 0.8 &
	bg_pids+=($!)
	for _ in $(seq 100); do [ -S "$SOCK/s.sock" ] && break; sleep 0.1; done
	K="$OUT/k9.data"
	"$DOMPROF" record --switch-output=1m -o "$K" --domain s=gdb:unix:"$SOCK/s.sock" >"$OUT/k9.log" 2>&1 &
	k9=$!
	for _ in $(seq 50); do ls -a "$OUT" | grep -q 'tmp-' && break; sleep 0.1; done
	kill -KILL $k9; wait $k9 2>/dev/null
	ls -a "$OUT" | grep 'k9' || true
	ls -a "$OUT" | grep -q "^\.k9\.data\.[0-9T:.-]*Z\.tmp-$k9\$" || fail "no hidden temporary .k9.data.TIME.tmp-$k9 left by SIGKILL"
	ls "$OUT"/k9.data.* >/dev/null 2>&1 && fail "the series' glob k9.data.* takes a temporary: $(ls "$OUT"/k9.data.*)"
	tmp=$(ls -a "$OUT" | grep "^\.k9\.data\..*\.tmp-$k9\$")
	"$DOMPROF" report "$OUT/$tmp" >/dev/null 2>"$OUT/k9.err" && fail "report read a temporary"
	grep -q "is a recorder's temporary file" "$OUT/k9.err" || fail "report of a temporary: $(cat "$OUT/k9.err")"
	# control: an older recorder's name (OUT.TIME.tmp-PID) in the glob is skipped
	cp "$OUT/$tmp" "$OUT/k9.data.2026-01-01T00:00:00.000Z.tmp-1"
	"$DOMPROF" info "$OUT/k9.data.*" >/dev/null 2>"$OUT/k9g.err" && fail "a glob of only temporaries was read"
	grep -q "only recorders' temporary files" "$OUT/k9g.err" || fail "glob of temporaries: $(cat "$OUT/k9g.err")"
fi
echo "record-switch: ok"
