#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `domprof record` finishes its file whatever happens to its terminal:
#  1. stderr is a pipe whose reader is gone (what `record ... 2>&1 | head -c1`
#     becomes once head exited) and a message is written during the
#     recording: SIGPIPE stops it like SIGINT, exit 0, STATS written, no damage;
#  2. stderr closed (`2>&-`): the message must not end up inside the file;
#  3. SIGHUP to a recorder started under setsid with a command (a closed
#     terminal): the file is finished and the workload is not left running.
source "$(dirname "$0")/../lib/common.bash"
command -v python3 >/dev/null || skip "python3 not installed"
command -v setsid >/dev/null || skip "setsid not installed"
[ -x "$WL/threefuncs" ] || skip "workloads not built (make workloads)"
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ] || skip "needs root or perf_event_paranoid <= 0 (-p)"

finished() { # FILE: STATS present, no damage, STATS counts the SAMPLE records
	"$DOMPROF" info "$1" >"$1.info" 2>&1 || { fail_later "info failed on $1: $(cat "$1.info")"; return; }
	grep -q 'damage: *none' "$1.info" || fail_later "damage in $1: $(grep -A2 damage: "$1.info")"
	grep -Eq '^stats: +[0-9]+ samples' "$1.info" || fail_later "no STATS in $1: $(grep stats: "$1.info")"
	local n
	n=$("$DOMPROF" dump "$1" | grep -c ' SAMPLE ' || true)
	grep -Eq "^stats: +$n samples" "$1.info" || fail_later "STATS of $1 does not count its $n samples"
	echo "$1: $n samples, $(grep stats: "$1.info")"
}

# 1. broken stderr pipe, message during the recording ("pid N exited")
# short_lived NAME: a process that exits once the recording of
# $OUT/NAME has begun (its temporary file holds the header, written once
# the events are open): a sanitized recorder on a loaded machine can take
# seconds to start, and it refuses a pid already gone. Sets $short.
short_lived() {
	( for _ in $(seq 600); do
		for f in "$OUT/.$1.tmp-"*; do [ -s "$f" ] && exit 0; done
		sleep 0.05
	  done ) & short=$!
}
( while :; do :; done ) & busy=$!; bg_pids+=($busy)
short_lived pipe.data
rc=$(python3 - "$DOMPROF" "$OUT/pipe.data" "$short,$busy" <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)                      # the reader is gone, as after `| head -c1`
p = subprocess.run([sys.argv[1], "record", "-F", "2000", "-o", sys.argv[2], "-p", sys.argv[3], "-d", "20"],
                   stdout=subprocess.DEVNULL, stderr=w)
print(p.returncode)
PY
)
kill $busy 2>/dev/null
echo "record with a broken stderr pipe -> $rc"
[ "$rc" = 0 ] || fail_later "record with a broken stderr pipe exited $rc (-13 = killed by SIGPIPE)"
finished "$OUT/pipe.data"

# 2. stderr closed: the pid-exited message must not land in the file
short_lived closed.data
rc=0
"$DOMPROF" record -o "$OUT/closed.data" -p "$short,1" -d 1.5 2>&- || rc=$?
[ $rc -eq 0 ] || fail_later "record with stderr closed exited $rc"
finished "$OUT/closed.data"

# 3. SIGHUP: a closed terminal finishes the file and stops the workload
setsid "$DOMPROF" record -o "$OUT/hup.data" -- "$WL/threefuncs" 997 >/dev/null 2>"$OUT/hup.err" &
rec=$!; bg_pids+=($rec)
for _ in $(seq 100); do [ -e "$OUT/hup.data" ] && break; sleep 0.1; done
[ -e "$OUT/hup.data" ] || fail "the recording did not start: $(cat "$OUT/hup.err")"
[ "$(cat /proc/$rec/comm 2>/dev/null)" = domprof ] || fail "setsid forked: pid $rec is not the recorder"
wl=$(pgrep -P $rec | head -n 1)
[ -n "$wl" ] || fail "no workload under the recorder"
bg_pids+=($wl)
running() { grep -q threefuncs /proc/$wl/cmdline 2>/dev/null && ! grep -q '^State:.*Z' /proc/$wl/status 2>/dev/null; }
sleep 1
kill -HUP $rec
rc=0; wait $rec || rc=$?
cat "$OUT/hup.err"
[ $rc -eq 0 ] || fail_later "record exited $rc after SIGHUP"
for _ in $(seq 50); do running || break; sleep 0.1; done
running && fail_later "the workload (pid $wl) is still running after the recorder's SIGHUP"
grep -Eq '^domprof record: [0-9]+ samples written, .*; command killed by signal 15 .*\(hangup\)$' "$OUT/hup.err" \
	|| fail_later "summary line after SIGHUP"
finished "$OUT/hup.data"
[ $FAILED -eq 0 ] && echo "ok"
exit $FAILED
