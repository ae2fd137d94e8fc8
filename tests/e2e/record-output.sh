#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The output-file rule of `record -o` (and `merge -o`, the same module):
#  1. two recorders with the same -o: the second is refused with one line
#     naming the first's pid, the first's file stays in place (no .old) and
#     its summary size is the size of its own file;
#     merge onto that live recording is refused the same way;
#  2. a dangling symlink as -o and a start-up error (unreachable agent,
#     command not found): the link stays, no target and no temp file is left;
#     a recording through the link writes the link's target;
#  3. a disk already full at start: exit 1, nothing left behind.
source "$(dirname "$0")/../lib/common.bash"
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] || skip "needs root or perf_event_paranoid <= 1"
leftovers() { ls -A "$1" | grep -v -x -e "${2:-}" || true; }

# 1. two recorders, one -o
"$DOMPROF" record -o "$OUT/two.data" -- sleep 4 2>"$OUT/first.err" &
first=$!
for _ in $(seq 100); do [ -e "$OUT/two.data" ] && break; sleep 0.1; done
[ -e "$OUT/two.data" ] || fail_later "the first recording did not start: $(cat "$OUT/first.err")"
rc=0
"$DOMPROF" record -o "$OUT/two.data" -- true 2>"$OUT/second.err" || rc=$?
echo "second recorder -> $rc: $(cat "$OUT/second.err")"
[ $rc -eq 1 ] || fail_later "second recorder on the same -o: exit $rc, expected 1"
[ "$(wc -l <"$OUT/second.err")" -eq 1 ] &&
	grep -Eq "^domprof record: '.*two.data' is being written by process $first " "$OUT/second.err" ||
	fail_later "second recorder: message does not name the first ($first)"
rc=0
"$DOMPROF" record -o "$OUT/host.data" -- true 2>/dev/null
"$DOMPROF" merge -o "$OUT/two.data" "$OUT/host.data" vm="$OUT/host.data" 2>"$OUT/merge.err" || rc=$?
echo "merge onto the live recording -> $rc: $(cat "$OUT/merge.err")"
[ $rc -eq 1 ] && grep -Eq "^domprof merge: '.*two.data' is being written by process $first " "$OUT/merge.err" ||
	fail_later "merge onto a live recording was not refused"
rc=0; wait $first || rc=$?
cat "$OUT/first.err"
[ $rc -eq 0 ] || fail_later "first recorder exited $rc"
[ ! -e "$OUT/two.data.old" ] || fail_later "the first recording was moved to two.data.old"
"$DOMPROF" info "$OUT/two.data" >"$OUT/two.info" 2>&1
grep -Eq '^command: +domprof record -o .*two.data -- sleep 4$' "$OUT/two.info" ||
	fail_later "two.data is not the first recording: $(grep command: "$OUT/two.info")"
grep -Eq '^stats: +[0-9]+ samples' "$OUT/two.info" || fail_later "first file has no STATS"
size=$(stat -c %s "$OUT/two.data" 2>/dev/null)
grep -Eq "^domprof record: .* $size bytes, " "$OUT/first.err" || fail_later "first summary does not give its file's size $size"
l=$(leftovers "$OUT" 'two.data\|host.data\|.*\.err\|two.info')
[ -z "$l" ] || fail_later "left behind: $l"

# 2. a dangling symlink as -o
mkdir -p "$OUT/ln"
ln -s "$OUT/ln/target.data" "$OUT/ln/link.data"
"$DOMPROF" record -d 0.1 -o "$OUT/ln/link.data" --domain probe=agent:127.0.0.1:1 2>"$OUT/ln.err" &&
	fail_later "unreachable agent accepted"
echo "start-up error through a dangling link: $(cat "$OUT/ln.err")"
"$DOMPROF" record -o "$OUT/ln/link.data" -- no-such-command-xyz 2>>"$OUT/ln.err" && fail_later "missing command accepted"
[ -L "$OUT/ln/link.data" ] || fail_later "the symlink -o was removed"
l=$(leftovers "$OUT/ln" link.data)
[ -z "$l" ] || fail_later "a failed start left behind: $l"
"$DOMPROF" record -o "$OUT/ln/link.data" -- true 2>/dev/null || fail_later "recording through the link"
[ -L "$OUT/ln/link.data" ] && [ -f "$OUT/ln/target.data" ] || fail_later "recording through the link did not write its target"
"$DOMPROF" info "$OUT/ln/link.data" >/dev/null 2>&1 || fail_later "the target is not readable"

# 3. a disk already full at start (a small tmpfs with 8 KiB free)
if [ "$(id -u)" = 0 ] && mkdir -p "$OUT/full" && mount -t tmpfs -o size=256k tmpfs "$OUT/full" 2>/dev/null; then
	dd if=/dev/zero of="$OUT/full/filler" bs=4k count=62 2>/dev/null
	rc=0
	"$DOMPROF" record -o "$OUT/full/x.data" -- sleep 0.5 2>"$OUT/full.err" || rc=$?
	echo "disk full at start -> $rc: $(cat "$OUT/full.err")"
	l=$(leftovers "$OUT/full" filler)
	umount "$OUT/full"
	[ $rc -eq 1 ] || fail_later "disk full at start: exit $rc"
	grep -q "No space left on device" "$OUT/full.err" || fail_later "disk full at start: message"
	[ -z "$l" ] || fail_later "disk full at start left behind: $l"
else
	echo "disk-full case not run (needs root and tmpfs)"
fi
[ $FAILED -eq 0 ] && echo "ok"
exit $FAILED
