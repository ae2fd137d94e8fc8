#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A recording that lacks its end, or lacks chunks, says so (format 1.1):
#  1. `domprof record` killed by SIGKILL after its first chunks: `info`
#     prints "complete: no: recording incomplete ..." (exit 0); report,
#     flamegraph, export and diff still succeed (exit 0) and print one
#     warning line each on stderr; merge warns and marks its output;
#  2. control: the same workload recorded to its end: "complete: yes", no
#     warning from any of them;
#  3. a chunk cut from the middle of that complete recording (every CRC is
#     still valid, only the sequence is broken): info names the missing
#     chunk and where, and the STATS totals disagree; report warns;
#  4. a chunk repeated: reported, and its samples are counted once;
#     two chunks swapped: reported, nothing lost.
source "$(dirname "$0")/../lib/common.bash"
set -e
EDIT="python3 $TOP/tests/e2e/lib/chunk-edit.py"
[ -x "$WL/threefuncs" ] || skip "workloads not built (make workloads)"
INC='recording incomplete (no end-of-recording STATS record; the recorder was killed?)'

# readers CMD-OUTPUT-PREFIX FILE: report, flamegraph, export, diff; each must exit 0
readers() {
	local p=$1 f=$2 rc
	for c in report flamegraph export diff; do
		rc=0
		case $c in
		report) "$DOMPROF" report -i "$f" >"$p.report" 2>"$p.report.err" || rc=$? ;;
		flamegraph) "$DOMPROF" flamegraph -i "$f" -o "$p.html" 2>"$p.flamegraph.err" || rc=$? ;;
		export) "$DOMPROF" export -f folded -i "$f" -o "$p.folded" 2>"$p.export.err" || rc=$? ;;
		diff) "$DOMPROF" diff "$OUT/full.data" "$f" >"$p.diff" 2>"$p.diff.err" || rc=$? ;;
		esac
		[ $rc -eq 0 ] || { cat "$p.$c.err"; fail "$c on $f exited $rc"; }
	done
}

# 2 recorded first: the control is the base of 3 and 4 and the diff baseline.
# a fixed duration, not a fixed amount of work: chunks are flushed every
# 250 ms, so 1.5 s give at least 4 of them on any machine
"$DOMPROF" record -f -d 1.5 -o "$OUT/full.data" -- "$WL/threefuncs" 100000 >/dev/null 2>"$OUT/full.err" || {
	cat "$OUT/full.err"
	grep -qi 'perf_event_paranoid\|not permitted' "$OUT/full.err" && skip "perf_event_open refused"
	fail "record failed"
}

# 1. SIGKILL once the recorder has written two chunks (bounded wait)
"$DOMPROF" record -f -o "$OUT/k.data" -- "$WL/threefuncs" 1000 >/dev/null 2>"$OUT/k.err" &
rec=$!
for _ in $(seq 100); do
	[ "$($EDIT "$OUT/k.data" list 2>/dev/null | wc -l)" -ge 2 ] && break
	sleep 0.1
done
sleep 0.5
child=$(pgrep -P $rec || true)
kill -KILL $rec
wait $rec 2>/dev/null || true
[ -n "$child" ] && kill $child 2>/dev/null || true
"$DOMPROF" info "$OUT/k.data" >"$OUT/k.info" || fail "info on the killed recording exited $?"
grep -E '^(samples|stats|damage|complete):' "$OUT/k.info"
grep -q "^complete: *no: $INC" "$OUT/k.info" || fail "info does not say the recording is incomplete"
readers "$OUT/k" "$OUT/k.data"
for c in report flamegraph export diff; do
	[ "$(grep -c "domprof $c: warning: .*$INC" "$OUT/k.$c.err")" = 1 ] ||
		fail "$c: no one-line warning: $(cat "$OUT/k.$c.err")"
done
grep -q "^# WARNING: $INC" "$OUT/k.report" || fail "report header does not say it"
grep -q '^# samples: [1-9]' "$OUT/k.report" || fail "the killed recording's samples are not reported"
"$DOMPROF" merge -f -q -o "$OUT/m.data" "$OUT/full.data" vm=$OUT/k.data 2>"$OUT/m.err" || fail "merge exited $?"
grep -q "^domprof merge: warning: .*k.data: $INC" "$OUT/m.err" || fail "merge did not warn: $(cat "$OUT/m.err")"
"$DOMPROF" info "$OUT/m.data" | grep -q '^complete: *no: recording incomplete: merged from' ||
	fail "the merged file does not say it is incomplete"
echo "killed: incomplete, said by info, report, flamegraph, export, diff, merge"

# 2. the control: checked now, so that an old build fails on 1 first
"$DOMPROF" info "$OUT/full.data" >"$OUT/full.info" || fail "info on the complete file"
grep -q '^complete: *yes$' "$OUT/full.info" || fail "complete file: $(grep -A2 '^damage' "$OUT/full.info")"
grep -q '^damage: *none' "$OUT/full.info" || fail "complete file shows damage"
readers "$OUT/full" "$OUT/full.data"
! grep -q 'incomplete' "$OUT"/full.*.err || fail "a complete recording warned: $(cat "$OUT"/full.*.err)"
echo "control: complete, no warning"

# 3. a chunk cut from the middle
$EDIT "$OUT/full.data" list >"$OUT/full.chunks"
n=$(wc -l <"$OUT/full.chunks")
[ "$n" -ge 4 ] || fail "only $n chunks in the complete recording"
mid=$((n / 2))
off=$(awk -v i=$mid '$1 == i { print $2 }' "$OUT/full.chunks")  # the chunk after the gap is where the cut one was
$EDIT "$OUT/full.data" "$OUT/cut.data" drop $mid
"$DOMPROF" info "$OUT/cut.data" >"$OUT/cut.info" || fail "info on the cut file"
sed -n '/^damage/,$p' "$OUT/cut.info"
grep -q "^  offset $off: chunk $mid missing at offset $off" "$OUT/cut.info" || fail "missing chunk $mid not named"
grep -q "STATS counts .* read" "$OUT/cut.info" || fail "STATS totals not compared"
"$DOMPROF" report -i "$OUT/cut.data" >/dev/null 2>"$OUT/cut.err" || fail "report on the cut file"
grep -q "warning: damaged file: chunk $mid missing" "$OUT/cut.err" || fail "report did not warn: $(cat "$OUT/cut.err")"

# 4. a chunk repeated; two swapped
all=$(grep -E '^samples:' "$OUT/full.info")
$EDIT "$OUT/full.data" "$OUT/dup.data" dup $mid
"$DOMPROF" info "$OUT/dup.data" >"$OUT/dup.info"
grep -q "chunk $mid repeated at offset [0-9]*; skipped" "$OUT/dup.info" || fail "repeated chunk not reported"
[ "$(grep -E '^samples:' "$OUT/dup.info")" = "$all" ] || fail "repeated chunk counted twice: $(grep -E '^samples:' "$OUT/dup.info"), not $all"
$EDIT "$OUT/full.data" "$OUT/swap.data" swap $mid $((mid + 1))
"$DOMPROF" info "$OUT/swap.data" >"$OUT/swap.info"
grep -q "chunk $mid out of order" "$OUT/swap.info" || fail "swapped chunks not reported"
[ "$(grep -E '^samples:' "$OUT/swap.info")" = "$all" ] || fail "swapped chunks lost samples"
echo "ok"
