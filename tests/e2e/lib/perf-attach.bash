# SPDX-License-Identifier: MIT
# Real perf next to domprof on the same run (tests/e2e/dwarf-python.sh,
# tests/e2e/xz-perf.sh). Sourced after tests/lib/common.bash.
#
# Why attach (-p) to a process that waits, rather than `perf record --
# CMD`: while a system-wide perf event with attr.build_id is open (any
# `domprof record -a`: another test's or another user's on this
# machine), the kernel marks the MMAP2 records it writes for *other*
# tools' events as carrying a build-id too (their contents are device
# and inode), and perf 6.1's report and script abort on them
# ("assertion failed at util/build-id.c"; see perf-crosscheck.sh). A
# process that maps its images first and then waits gets its mappings
# from /proc (perf writes those records itself, unmarked), and maps no
# code while it is recorded.
#
#   perf_setup          PERF=perf's path, or skip; a private build-id
#                       cache, none written
#   perf_attach NAME PID [ARGS...]
#                       perf record ARGS -p PID -o $OUT/NAME.data, started
#                       disabled (-D -1) and enabled through its --control
#                       fifo, returning once perf acknowledged (so it
#                       samples from then on); PERF_PID is its pid (in
#                       bg_pids). Skips when perf cannot record.
#   perf_wait           waits for PERF_PID (it ends with the process);
#                       skips when perf failed

perf_setup() {
	PERF=$(command -v perf || true)
	[ -n "$PERF" ] || skip "perf is not installed (Debian package linux-perf)"
	export PERF_BUILDID_DIR="$OUT/perf-buildid"
}

perf_attach() {
	local name=$1 pid=$2 ack
	shift 2
	mkfifo "$OUT/$name.ctl" "$OUT/$name.ack"
	"$PERF" record -q --no-buildid -N "$@" -D -1 --control "fifo:$OUT/$name.ctl,$OUT/$name.ack" \
		-p "$pid" -o "$OUT/$name.data" >"$OUT/$name.log" 2>&1 &
	PERF_PID=$!
	bg_pids+=("$PERF_PID")
	# both ends opened here: neither open blocks if perf died early
	exec 8<>"$OUT/$name.ack" 9<>"$OUT/$name.ctl"
	echo enable >&9
	ack=$(timeout 10 head -c 4 <&8 || true)
	exec 8<&- 9>&-
	[ "$ack" = ack ] || skip "perf cannot record here (no ack on its control fifo): $(cat "$OUT/$name.log")"
}

perf_wait() {
	local rc=0
	wait "$PERF_PID" || rc=$?
	[ "$rc" -eq 0 ] || skip "perf record failed (exit $rc): $(cat "$OUT/$1.log")"
}
