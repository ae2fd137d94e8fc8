# SPDX-License-Identifier: MIT
# The one set-up and helper set of the shell tests (tests/e2e/*.sh,
# tests/vm/test-*.sh and the libraries they source). Sourced, never run:
# tests/run.sh runs only tests/e2e/*.sh and tests/vm/test-*.sh, so this
# folder is never taken for a test. Sourcing it twice is harmless.
#
# After `source "$(dirname "$0")/../lib/common.bash"`:
#   set -u
#   TOP (= DOMPROF_TOP, exported)  the source tree: $DOMPROF_TOP, else the
#                       folder two levels above this file
#   DOMPROF             the binary under test, default $TOP/build/san/domprof
#   WL                  $TOP/build/workloads (programs with known profiles)
#   TT                  $TOP/build/san/test-tool (tests/tool/, test data)
#   OUT                 ${TEST_OUT:-$TOP/build/test-out}/NAME, removed and
#                       created fresh; NAME is the script's name without
#                       .sh. A library that names its own folder sets
#                       TEST_NO_OUT=1 before sourcing and calls test_out.
#   fail MSG...         "FAIL: MSG" on stderr, then fail_hook if the script
#                       defines one (e.g. to print its daemons' logs), exit 1
#   fail_later MSG...   "FAIL: MSG" on stdout, sets FAILED=1 and goes on
#                       (tests whose every case reports; they end with
#                       `exit $FAILED`)
#   skip MSG...         "SKIP: MSG" as the last line, exit 77
#   note MSG...         "$NOTE_PREFIX MSG" (default "--- "); silent when
#                       NOTE_QUIET is set
#   need_workload W...  fails when $WL/W is not built
#   need_root [WHY]     skips unless root: "needs root (WHY)"
#   wait_for FILE PATTERN SECONDS [PID]
#                       polls FILE for the grep pattern (binary files
#                       too: a guest console) every 0.1 s for SECONDS
#                       (an integer; at most one more); returns 1 on
#                       timeout or as soon as PID (if given) has ended
#   bg_pids+=($!)       background processes killed (TERM, KILL after 5 s)
#                       and reaped when the script exits
#   at_exit CMD         run CMD (one eval'd string) at exit, after bg_pids
#                       are gone, in the order registered. Scripts never set
#                       their own EXIT trap: it would replace this one.

[ -n "${_DOMPROF_COMMON:-}" ] && return 0
_DOMPROF_COMMON=1

set -u
TOP=${DOMPROF_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
DOMPROF_TOP=$TOP
export DOMPROF_TOP
DOMPROF=${DOMPROF:-$TOP/build/san/domprof}
WL=$TOP/build/workloads
TT=$TOP/build/san/test-tool
NOTE_PREFIX=${NOTE_PREFIX-"--- "}
FAILED=0
bg_pids=()
_at_exit=()

fail() {
	echo "FAIL: $*" >&2
	# the hook may itself call fail: run it once
	if declare -F fail_hook >/dev/null && [ -z "${_in_fail_hook:-}" ]; then
		_in_fail_hook=1
		fail_hook >&2
	fi
	exit 1
}
fail_later() { echo "FAIL: $*"; FAILED=1; }
skip() { echo "SKIP: $*"; exit 77; }
note() { [ -n "${NOTE_QUIET:-}" ] || echo "$NOTE_PREFIX$*"; }

need_workload() {
	local w
	for w in "$@"; do
		[ -x "$WL/$w" ] || fail "workload $WL/$w missing (run 'make workloads')"
	done
}

need_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root${1:+ ($1)}"
}

wait_for() {
	local file=$1 pat=$2 end=$((SECONDS + $3 + 1)) pid=${4:-}   # at least $3 s
	while [ "$SECONDS" -lt "$end" ]; do
		grep -qa -- "$pat" "$file" 2>/dev/null && return 0
		[ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.1
	done
	grep -qa -- "$pat" "$file" 2>/dev/null
}

# test_out NAME: OUT=${TEST_OUT:-$TOP/build/test-out}/NAME, fresh.
test_out() {
	OUT=${TEST_OUT:-$TOP/build/test-out}/$1
	rm -rf "$OUT"
	mkdir -p "$OUT" || { echo "FAIL: cannot create $OUT" >&2; exit 1; }
}

at_exit() { _at_exit+=("$1"); }

# alive PID: running (a zombie, dead but not yet reaped, is not).
_alive() { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z ' "/proc/$1/stat" 2>/dev/null; }

# Kills what the script left running (bounded: KILL after 5 s), reaps it,
# then runs the at_exit commands. Keeps the script's exit status; nothing
# here may fail under set -e.
_common_exit() {
	local rc=$? p live=() c i
	for p in "${bg_pids[@]}"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null && live+=("$p") || true
	done
	for ((i = 0; i < 50 && ${#live[@]} > 0; i++)); do
		c=
		for p in "${live[@]}"; do _alive "$p" && c=1 || true; done
		[ -n "$c" ] || break
		sleep 0.1
	done
	for p in "${live[@]}"; do
		_alive "$p" && kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	for c in "${_at_exit[@]}"; do eval "$c" || true; done
	return $rc
}
trap _common_exit EXIT

[ -n "${TEST_NO_OUT:-}" ] || test_out "$(basename "$0" .sh)"
