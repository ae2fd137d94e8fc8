#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 34 item 3, the recorder's half: `record` embeds the JIT perf maps
# of the processes it saw map anonymous code, read at the end with the
# owner checks, so a report never reads /tmp afterwards. Workload jitwork
# runs a loop in anonymous memory and writes its own map.
#   1. map written by the process (root's): embedded; a forged map planted
#      afterwards (root's, the reader's own) or none at all leaves the
#      names as recorded (jit_hot_loop), never the forged one;
#   2. a map file planted by nobody before the process writes into it:
#      never embedded, the recorder says why, and the report does not
#      take the /tmp file;
#   3. the process run as nobody writes a map owned by nobody: embedded
#      (the process's own user), named after the file is gone.
source "$(dirname "$0")/lib/report-common.bash"
need_root "chown of the perf map, a process run as nobody"
need_workload jitwork
umask 022   # the maps jitwork writes: not group-writable, whatever the caller's umask
"$WL/jitwork" 0 "$OUT/probe.pid" >/dev/null 2>&1
rc=$?
rm -f "/tmp/perf-$(cat "$OUT/probe.pid" 2>/dev/null).map"
[ $rc = 77 ] && skip "jitwork is x86-64 only"

maps=()
at_exit 'rm -f "${maps[@]}"'

share() {   # share NAME SYMBOL: percent of SYMBOL in report -l of $OUT/NAME.data
	"$DOMPROF" report -i "$OUT/$1.data" -l --format csv >"$OUT/$1.csv" 2>"$OUT/$1.report.err" ||
		{ cat "$OUT/$1.report.err"; fail "$1: report failed"; }
	csv_share "$OUT/$1.csv" "$2"
}
atleast() { python3 -c "import sys; sys.exit(0 if float('$1') >= float('$2') else 1)"; }

# 1. embedded at record time, /tmp no longer read
record own "$WL/jitwork" 1 "$OUT/own.pid"
P=$(cat "$OUT/own.pid"); MAP=/tmp/perf-$P.map; maps+=("$MAP")
"$DOMPROF" dump --type SYMTAB "$OUT/own.data" | grep -q "kind=5 name=$MAP " ||
	fail_later "own: the perf map is not embedded"
s=$(share own jit_hot_loop)
atleast "$s" 50 || fail_later "own: jit_hot_loop $s%, want >= 50%"
printf '0 ffffffffffff FORGED_AFTER_RECORDING\n' >"$MAP"   # root's: the reader's own
s=$(share own jit_hot_loop); f=$(share own FORGED_AFTER_RECORDING)
atleast "$s" 50 && [ "$f" = 0.00 ] || fail_later "own, forged map planted: jit_hot_loop $s%, forged $f%"
rm -f "$MAP"
s=$(share own jit_hot_loop)
atleast "$s" 50 || fail_later "own, map removed: jit_hot_loop $s%"

# 2. nobody's file at the map's path: refused at every read
rm -f "$OUT/go"
JITWORK_WAIT=$OUT/go "$DOMPROF" record -f -o "$OUT/stolen.data" -- "$WL/jitwork" 1 "$OUT/stolen.pid" \
	>"$OUT/stolen.log" 2>&1 &
rpid=$!
bg_pids+=($rpid)
wait_for "$OUT/stolen.pid" . 20 || fail "stolen: jitwork did not start"
P=$(cat "$OUT/stolen.pid"); MAP=/tmp/perf-$P.map; maps+=("$MAP")
: >"$MAP" && chown nobody "$MAP" && chmod 644 "$MAP" || fail "cannot plant $MAP"
touch "$OUT/go"
wait $rpid || { cat "$OUT/stolen.log"; fail "stolen: record failed"; }
grep -q jit_hot_loop "$MAP" || fail "stolen: jitwork did not write into the planted file"
grep -q "$MAP: owned by uid $(id -u nobody).*not used" "$OUT/stolen.log" ||
	{ cat "$OUT/stolen.log"; fail_later "stolen: the recorder did not say why the map was left out"; }
"$DOMPROF" dump --type SYMTAB "$OUT/stolen.data" | grep -q "kind=5" &&
	fail_later "stolen: a map owned by another user was embedded"
s=$(share stolen jit_hot_loop)
[ "$s" = 0.00 ] || fail_later "stolen: jit_hot_loop $s%, want 0 (nobody's map is not believed)"

# 3. the process's own user
if command -v setpriv >/dev/null; then
	tmp=$(mktemp -d)
	at_exit "rm -rf '$tmp'"
	chmod 777 "$tmp"
	record asnobody setpriv --reuid=nobody --regid=nogroup --clear-groups "$WL/jitwork" 1 "$tmp/pid"
	P=$(cat "$tmp/pid"); MAP=/tmp/perf-$P.map; maps+=("$MAP")
	[ "$(stat -c %U "$MAP")" = nobody ] || fail "asnobody: the map is not nobody's"
	rm -f "$MAP"
	s=$(share asnobody jit_hot_loop)
	atleast "$s" 50 || fail_later "asnobody: jit_hot_loop $s% (the process's own map not embedded?)"
else
	note "setpriv missing: the process's own user case not run"
fi
[ "$FAILED" = 0 ] || exit 1
echo "record-perfmap: maps embedded at record time, other users' refused"
