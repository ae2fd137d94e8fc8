#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# Stopping `domprof record` by a signal finishes the file:
#  - SIGINT while profiling a command: exit 0, the command is terminated,
#    the file has no damage and its STATS count equals the SAMPLE records;
#  - SIGTERM during `-a -g`: the same, with call chains.
source "$(dirname "$0")/../lib/common.bash"
set -e
[ -x "$WL/threefuncs" ] || skip "workloads not built (make workloads)"

check_file() { # FILE
	"$DOMPROF" info "$1" >"$1.info" || fail "info failed on $1"
	"$DOMPROF" dump "$1" >"$1.dump" || fail "dump failed on $1"
	grep -q 'damage: *none' "$1.info" || fail "damage in $1: $(grep -A3 damage "$1.info")"
	grep -q '^complete: *yes' "$1.info" || fail "$1 is not complete: $(grep complete: "$1.info")"
	local n
	n=$(grep -c ' SAMPLE ' "$1.dump" || true)
	[ "$n" -gt 100 ] || fail "only $n samples in $1"
	grep -Eq "^stats: +$n samples" "$1.info" || fail "STATS in $1 does not count $n samples: $(grep stats: "$1.info")"
	echo "$1: $n samples, STATS agrees"
}

# 1. SIGINT while profiling a command (about 11 s of work, stopped after 2)
"$DOMPROF" record -f -F 4000 -o "$OUT/int.data" -- "$WL/threefuncs" 1000 >/dev/null 2>"$OUT/int.err" &
rec=$!
sleep 2
kill -INT $rec
rc=0; wait $rec || rc=$?
cat "$OUT/int.err"
[ $rc -eq 0 ] || fail "record exited $rc after SIGINT"
grep -Eq '^domprof record: [0-9]+ samples written, .*; command killed by signal 15 .*\(interrupted\)$' "$OUT/int.err" \
	|| fail "summary line after SIGINT"
pgrep -f "$WL/threefuncs 1000" >/dev/null && fail "the command still runs"
check_file "$OUT/int.data"

# 2. SIGTERM during a system-wide recording with call chains
"$WL/threefuncs" 1000 >/dev/null & w=$!
"$DOMPROF" record -f -a -g -o "$OUT/term.data" 2>"$OUT/term.err" &
rec=$!
sleep 2
kill -TERM $rec
rc=0; wait $rec || rc=$?
kill $w 2>/dev/null || true
cat "$OUT/term.err"
[ $rc -eq 0 ] || fail "record -a exited $rc after SIGTERM"
grep -q '(terminated)$' "$OUT/term.err" || fail "summary line after SIGTERM"
check_file "$OUT/term.data"
grep -q ' SAMPLE .* chain=' "$OUT/term.data.dump" || fail "no call chains with -g"
echo "ok"
