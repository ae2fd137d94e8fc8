#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every test: unit binaries (sanitized), end-to-end shell tests
# (tests/e2e/*.sh), VM tests (tests/vm/test-*.sh). A test passes with exit
# 0, is skipped with exit 77 (it must print why), fails otherwise.
# Ends with the line "N passed, N failed, N skipped".
# Usage: tests/run.sh [PATTERN]   (substring filter on test names)
#
# Unit tests and end-to-end tests (tests/e2e/*.sh) run $VM_JOBS at a
# time, the fuzz tests (tests/e2e/fuzz-*.sh, a fixed time each) last
# among them; end-to-end tests marked "# runs alone" afterwards, one by
# one.
# VM tests spend their time in TCG guests; they run $VM_JOBS at a time
# (default 2), except those whose script holds a line "# runs alone"
# (measurements a busy host would disturb), which run afterwards, one by
# one.
set -u
cd "$(dirname "$0")/.."
export DOMPROF="${DOMPROF:-$PWD/build/san/domprof}"
export DOMPROF_TOP="$PWD"
# no test asks a real debuginfod server (tests/e2e/debuginfod.sh starts its own)
unset DEBUGINFOD_URLS
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
OUT="${TEST_OUT:-$PWD/build/test-out}"
mkdir -p "$OUT"
export TEST_OUT="$OUT"
pat="${1:-}"
pass=0 fail=0 skip=0 failed=()

# report NAME RC SECONDS: counts and prints one result.
report() {
	local name=$1 rc=$2 dt=$3 log="$OUT/${1//\//_}.log"
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS %-40s %3ds\n' "$name" "$dt" ;;
	77) skip=$((skip + 1)); printf 'SKIP %-40s %3ds  %s\n' "$name" "$dt" "$(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); failed+=("$name"); printf 'FAIL %-40s %3ds (exit %d)\n' "$name" "$dt" "$rc"
	   sed 's/^/    | /' "$log" | tail -n 30 ;;
	esac
}

run_one() {
	local name=$1; shift
	[ -n "$pat" ] && [[ "$name" != *"$pat"* ]] && return
	local log="$OUT/${name//\//_}.log" start=$SECONDS rc
	"$@" >"$log" 2>&1; rc=$?
	report "$name" "$rc" $((SECONDS - start))
}

# Runs "$@" in the background; its result is reported by reap.
declare -A BG_NAME=()
run_bg() {
	local name=$1; shift
	[ -n "$pat" ] && [[ "$name" != *"$pat"* ]] && return
	while [ "$(jobs -rp | wc -l)" -ge "${VM_JOBS:-2}" ]; do
		wait -n 2>/dev/null || true
		reap
	done
	local log="$OUT/${name//\//_}.log" res="$OUT/${name//\//_}.rc"
	rm -f "$res"
	( start=$SECONDS; "$@" >"$log" 2>&1; echo "$? $((SECONDS - start))" >"$res" ) &
	BG_NAME[$!]=$name
}
# Reports the background tests that have finished.
reap() {
	local p name res
	for p in "${!BG_NAME[@]}"; do
		name=${BG_NAME[$p]}
		res="$OUT/${name//\//_}.rc"
		kill -0 "$p" 2>/dev/null && continue
		[ -s "$res" ] || continue
		read -r rc dt <"$res"
		report "$name" "$rc" "$dt"
		unset "BG_NAME[$p]"
	done
}

for t in build/san/tests/test-*; do
	[ -x "$t" ] && run_bg "unit/$(basename "$t")" "$t"
done
# "# runs alone" in an end-to-end test: a system-wide recording (it sees
# every process on the host) or a test that keeps both CPUs busy itself.
alone=()
for t in $(ls tests/e2e/*.sh | grep -v /fuzz-) tests/e2e/fuzz-*.sh; do
	[ -f "$t" ] || continue
	if grep -qx '# runs alone' "$t"; then
		alone+=("$t")
	else
		run_bg "e2e/$(basename "$t" .sh)" bash "$t"
	fi
done
wait
reap
for t in "${alone[@]}"; do
	run_one "e2e/$(basename "$t" .sh)" bash "$t"
done
alone=()
for t in tests/vm/test-*.sh; do
	[ -f "$t" ] || continue
	if grep -qx '# runs alone' "$t"; then
		alone+=("$t")
	else
		run_bg "vm/$(basename "$t" .sh)" bash "$t"
	fi
done
wait
reap
for t in "${alone[@]}"; do
	run_one "vm/$(basename "$t" .sh)" bash "$t"
done

echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "logs: $OUT"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
