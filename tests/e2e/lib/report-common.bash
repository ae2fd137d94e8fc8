# SPDX-License-Identifier: MIT
# Helpers shared by the report tests (tests/e2e/report-*.sh, perf-crosscheck.sh).
# Sourced, not run: tests/run.sh only runs tests/e2e/*.sh. The set-up,
# fail/skip/note and need_workload come from tests/lib/common.bash.
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/common.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"

# record NAME ARGS... -> $OUT/NAME.data; skips when perf_event_open is refused.
record() {
	local name=$1; shift
	local log="$OUT/$name.record.log"
	if ! "$DOMPROF" record -f -o "$OUT/$name.data" "$@" >"$log" 2>&1; then
		cat "$log" >&2
		if grep -qi 'perf_event_paranoid\|not permitted\|EACCES' "$log"; then
			skip "perf_event_open refused on this machine"
		fi
		fail "domprof record $* failed"
	fi
}

# csv_share FILE.csv SYMBOL... : prints each symbol's percent (0 if absent)
csv_share() {
	local f=$1; shift
	python3 - "$f" "$@" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = {}
for r in rows:
    tot[r["symbol"]] = tot.get(r["symbol"], 0.0) + float(r["percent"])
print(" ".join("%.2f" % tot.get(s, 0.0) for s in sys.argv[2:]))
PY
}
