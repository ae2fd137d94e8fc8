#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every `domprof record` failure that a test can produce gives one line
# that names the cause, with the documented exit status:
# unknown event / modifier, empty event, bad -m/-F/-c value (the limit is
# named, the user's text echoed), domain name twice or 'host', bad pid (2);
# unreadable symbol file, -m over the mlock limit as a user (not blamed on
# paranoid), paranoid 3 with the :u hint when the kernel allows :u,
# hardware event without a PMU,
# pid that does not exist, unwritable output, CPU not online, -F above the
# kernel limit, not permitted (as user nobody), disk full during recording
# (1, file readable up to the last complete chunk); command not found (127).
# Also: an existing output is moved to FILE.old, -f overwrites it.
source "$(dirname "$0")/../lib/common.bash"

# expect RC REGEX ARGS... : run record, check exit status and its one line
expect() {
	local want=$1 re=$2; shift 2
	local rc=0
	"$DOMPROF" record "$@" >/dev/null 2>"$OUT/err" || rc=$?
	echo "record $*  -> $rc: $(cat "$OUT/err")"
	[ "$rc" -eq "$want" ] || fail "record $*: exit $rc, expected $want"
	[ "$(wc -l <"$OUT/err")" -eq 1 ] || fail "record $*: expected one line, got: $(cat "$OUT/err")"
	grep -Eq "$re" "$OUT/err" || fail "record $*: message does not match /$re/"
}

expect 2 "^domprof record: unknown event 'bogus' \(known: cpu-clock, " -e bogus -o "$OUT/e.data" -- true
expect 2 "^domprof record: unknown modifier in event 'cpu-clock:x'" -e cpu-clock:x -o "$OUT/e.data" -- true
expect 2 "^domprof record: bad pid 'abc'" -p abc -o "$OUT/e.data"
expect 2 "^domprof record: nothing to record" -o "$OUT/e.data"
expect 2 "^domprof record: give one target" -a -p 1 -o "$OUT/e.data"
expect 2 "^domprof record: -F and -c exclude each other" -F 100 -c 1000 -a -o "$OUT/e.data"
if [ ! -e /sys/bus/event_source/devices/cpu ]; then
	# this machine has no PMU: cycles must be refused with the hint
	expect 1 "^domprof record: event 'cycles' is not supported: this machine has no hardware PMU event .*use -e cpu-clock$" \
		-e cycles -o "$OUT/e.data" -- true
	expect 1 "^domprof record: event 'instructions:u' is not supported" -e instructions:u -o "$OUT/e.data" -- true
fi
expect 1 "^domprof record: no such process: 999999999$" -p 999999999 -o "$OUT/e.data"
expect 127 "^domprof record: cannot run 'no-such-command-xyz': command not found$" -o "$OUT/e.data" -- no-such-command-xyz
expect 1 "^domprof record: cannot create output '/nonexistent-dir/x.data': No such file or directory$" -o /nonexistent-dir/x.data -- true
expect 1 "^domprof record: CPU 4000 is not online$" -a -C 4000 -d 1 -o "$OUT/e.data"
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
expect 1 "^domprof record: -F $((max + 1)) is above kernel.perf_event_max_sample_rate \($max\)" -F $((max + 1)) -a -d 1 -o "$OUT/e.data"
# option values: the real limit, the user's own text, no raw errno
expect 2 "^domprof record: bad --mmap-pages '134217728': at most 1048576 pages per CPU" -m 134217728 -o "$OUT/e.data" -- true
expect 2 "^domprof record: bad --mmap-pages '3' \(a power of two\)" -m 3 -o "$OUT/e.data" -- true
expect 2 "^domprof record: bad frequency '99999999999999999999' \(Hz, 1 to [0-9]+\)" -F 99999999999999999999 -o "$OUT/e.data" -- true
expect 2 "^domprof record: bad period '18446744073709551615' \(1 to 9223372036854775807\)" -c 18446744073709551615 -o "$OUT/e.data" -- true
expect 2 "^domprof record: empty event name in -e ''" -e '' -o "$OUT/e.data" -- true
expect 2 "^domprof record: empty event name in -e ',,,'" -e ,,, -o "$OUT/e.data" -- true
expect 2 "^domprof record: empty event name in -e 'cpu-clock,,page-faults'" -e cpu-clock,,page-faults -o "$OUT/e.data" -- true
# domain names: unique, and not the host's
expect 2 "^domprof record: bad --domain 'host=agent:127.0.0.1:1': the name 'host' is the host's own domain" \
	--domain host=agent:127.0.0.1:1 -d 1 -o "$OUT/e.data"
expect 2 "^domprof record: bad --domain 'vm1=gdb:127.0.0.1:1': domain name 'vm1' is given twice" \
	--domain vm1=agent:127.0.0.1:1 --domain vm1=gdb:127.0.0.1:1 -d 1 -o "$OUT/e.data"
# a symbol file that cannot be read is named with the reason
expect 1 "^domprof record: vm1: cannot read kallsyms=/nonexistent: No such file or directory$" \
	--domain vm1=gdb:127.0.0.1:1,kallsyms=/nonexistent -d 1 -o "$OUT/e.data"
[ ! -e "$OUT/e.data" ] || fail "a failed start left $OUT/e.data behind"

# not permitted: an unprivileged user with perf_event_paranoid >= 1 cannot do -a
par=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ "$par" -ge 1 ]; then
	chmod 777 "$OUT"
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$DOMPROF" record -a -d 1 -o "$OUT/nobody.data" 2>"$OUT/err" || rc=$?
	echo "as nobody -> $rc: $(cat "$OUT/err")"
	[ $rc -eq 1 ] || fail "unprivileged -a: exit $rc"
	grep -Eq "^domprof record: not permitted to open event 'cpu-clock' .*kernel.perf_event_paranoid is $par; set it to -1 .* or run with CAP_PERFMON$" "$OUT/err" \
		|| fail "not-permitted message"
fi

# as nobody: a ring over the locked-memory limit is named as such (it was
# blamed on perf_event_paranoid); with paranoid 3 the user-space hint is
# given when the kernel allows user-space sampling (3 means 2 on upstream
# kernels, "nothing" on some distributions' kernels)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ "$par" -ge 1 ] && [ "$(ulimit -l)" != unlimited ]; then
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$DOMPROF" record "$@"; }
	rc=0
	nobody -e cpu-clock:u -m 65536 -o "$OUT/nobody.data" -- true 2>"$OUT/err" || rc=$?
	echo "as nobody, -m 65536 -> $rc: $(cat "$OUT/err")"
	[ $rc -eq 1 ] || fail "-m 65536 as nobody: exit $rc"
	grep -Eq "^domprof record: cannot map the ring buffer of CPU [0-9]+ \(-m 65536 = 262144 KiB per CPU\): .*locked-memory limit \(kernel.perf_event_mlock_kb is [0-9]+ per CPU, ulimit -l is [0-9]+ KiB\)" "$OUT/err" \
		|| fail "-m 65536 as nobody: message"
	grep -q paranoid "$OUT/err" && fail "-m 65536 as nobody blamed on perf_event_paranoid"
	if [ "$par" -le 2 ]; then
		# restored at exit too if the test dies in between (common.bash's at_exit)
		restore_par() { [ -n "${par_set:-}" ] && echo "$par" >/proc/sys/kernel/perf_event_paranoid; par_set=; }
		at_exit restore_par
		par_set=1; echo 3 >/proc/sys/kernel/perf_event_paranoid
		rc=0; nobody -e cpu-clock:u -o "$OUT/nobody.data" -- true 2>/dev/null || rc=$?
		nobody -o "$OUT/nobody.data" -- true 2>"$OUT/err"
		restore_par
		echo "as nobody, paranoid 3 (:u allowed: $([ $rc -eq 0 ] && echo yes || echo no)): $(cat "$OUT/err")"
		if [ $rc -eq 0 ]; then
			grep -Eq "kernel.perf_event_paranoid is 3; .*, or sample user space only with -e cpu-clock:u$" "$OUT/err" \
				|| fail "paranoid 3: no :u hint although the kernel allows :u"
		else
			grep -q "sample user space only" "$OUT/err" && fail "paranoid 3: :u hinted although the kernel refuses it"
		fi
	fi
	rm -f "$OUT/nobody.data"
fi

# existing output moved to .old; -f overwrites
"$DOMPROF" record -o "$OUT/o.data" -- true 2>/dev/null || fail "first recording"
cp "$OUT/o.data" "$OUT/first"
"$DOMPROF" record -o "$OUT/o.data" -- true 2>/dev/null || fail "second recording"
cmp -s "$OUT/first" "$OUT/o.data.old" || fail "existing file not moved to .old"
"$DOMPROF" info "$OUT/o.data" >/dev/null || fail "new file unreadable"
rm -f "$OUT/o.data.old"
"$DOMPROF" record -f -o "$OUT/o.data" -- true 2>/dev/null || fail "recording with -f"
[ ! -e "$OUT/o.data.old" ] || fail "-f still made a .old"

# a device as output is used, never moved aside or removed, even when
# the recording fails (it once unlinked /dev/null)
"$DOMPROF" record -d 0.1 -o /dev/null --domain probe=agent:127.0.0.1:1 2>/dev/null && fail "unreachable agent accepted"
"$DOMPROF" record -o /dev/null -- true 2>/dev/null || fail "recording to /dev/null"
[ -c /dev/null ] && [ ! -e /dev/null.old ] || fail "/dev/null was replaced or moved"

# disk full during recording: a 1.6 MB tmpfs fills after a few seconds
if [ "$(id -u)" = 0 ] && mkdir -p "$OUT/small" && mount -t tmpfs -o size=1600k tmpfs "$OUT/small" 2>/dev/null; then
	rc=0
	# Keep both CPUs busy so samples flow whatever else the machine does
	# (an idle machine gives cpu-clock few samples and never fills it).
	busy=()
	for _ in 1 2; do ( while :; do :; done ) & busy+=($!); done
	"$DOMPROF" record -a -g -F 10000 -d 25 -o "$OUT/small/x.data" 2>"$OUT/err" || rc=$?
	kill "${busy[@]}" 2>/dev/null; wait "${busy[@]}" 2>/dev/null
	echo "disk full -> $rc: $(cat "$OUT/err")"
	"$DOMPROF" info "$OUT/small/x.data" >"$OUT/full.info" 2>&1
	info_rc=$?
	umount "$OUT/small"
	[ $rc -eq 1 ] || fail "disk full: exit $rc"
	grep -Eq "^domprof record: writing '.*x.data' failed: No space left on device; recording stopped, the file is readable up to the last complete chunk$" "$OUT/err" \
		|| fail "disk-full message"
	[ $info_rc -eq 0 ] && grep -q 'damage: *none' "$OUT/full.info" || fail "disk full: file not readable: $(cat "$OUT/full.info")"
	grep -Eq '^  SAMPLE +[1-9]' "$OUT/full.info" || fail "disk full: no samples kept"
else
	echo "disk-full case not run (needs root and tmpfs)"
fi
echo "ok"
