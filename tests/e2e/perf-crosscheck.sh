#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cross-check against real perf: the same workload (threefuncs, then
# kernelheavy: user and kernel time) recorded by `perf record -F 1000`
# and by `domprof record -F 1000`; symbol-level distributions from
# `perf report --stdio --no-children --sort sym -F overhead,sym` and
# `domprof report -l --format csv` (symbol shares summed over images).
# similarity = sum over symbols of min(share_perf, share_domprof) must be
# >= 0.90. Skips (77) only where perf is absent or cannot record.
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs kernelheavy
PERF=$(command -v perf || true)
[ -n "$PERF" ] || skip "perf is not installed (Debian package linux-perf)"
CMD="$WL/threefuncs 100; $WL/kernelheavy 1"

# A private build-id cache, and none written: perf 6.x aborts in
# util/build-id.c when its cache in ~/.debug holds certain entries.
export PERF_BUILDID_DIR="$OUT/perf-buildid"
note "perf record"
if ! "$PERF" record -q --no-buildid -N -F 1000 -o "$OUT/perf.data" -- sh -c "$CMD" >"$OUT/perf-record.log" 2>&1; then
	cat "$OUT/perf-record.log"
	fail "perf record failed (see above)"
fi
"$PERF" report -i "$OUT/perf.data" --stdio --no-children --sort sym -F overhead,sym \
	>"$OUT/perf.txt" 2>"$OUT/perf-report.err" || {
	# perf 6.1 aborts ("assertion failed at util/build-id.c") on MMAP2
	# records flagged as carrying a build-id: the kernel sets that flag
	# on every event's copy while any other process holds a perf event
	# with attr.build_id (a concurrent `domprof record`). Name them.
	for p in /proc/[0-9]*; do
		[ "$p" = "/proc/$$" ] && continue
		ls -l "$p/fd" 2>/dev/null | grep -q perf_event &&
			echo "process holding perf events: $(basename "$p") $(tr '\0' ' ' <"$p/cmdline" | head -c 120)"
	done
	fail "perf report failed: $(tail -n 2 "$OUT/perf-report.err" | tr '\n' ' ')(run alone: no other profiler may be recording)"
}

note "domprof record"
record dp -F 1000 -- sh -c "$CMD"
"$DOMPROF" report -i "$OUT/dp.data" -l --format csv >"$OUT/dp.csv" || fail "domprof report"

python3 - "$OUT/perf.txt" "$OUT/dp.csv" <<'PY' || fail "similarity below 0.90"
import csv, re, sys
perf = {}
for line in open(sys.argv[1]):
    m = re.match(r"^\s*([\d.]+)%\s+\[(.)\]\s+(.*?)\s*$", line)
    if m:
        name = m.group(3)
        # perf marks unresolved addresses as hex; domprof calls them [unknown]
        if re.fullmatch(r"0x[0-9a-f]+", name):
            name = "[unknown]"
        perf[name] = perf.get(name, 0.0) + float(m.group(1)) / 100.0
dp = {}
for r in csv.DictReader(open(sys.argv[2])):
    name = r["symbol"]
    # domprof names code no symbol covers by its FDE (IMAGE+0xSTART,
    # docs/symbols.md), where perf prints a hex address
    if re.fullmatch(r".+\+0x[0-9a-f]+", name):
        name = "[unknown]"
    dp[name] = dp.get(name, 0.0) + float(r["percent"]) / 100.0
assert perf and dp, "empty distribution"
syms = set(perf) | set(dp)
sim = sum(min(perf.get(s, 0.0), dp.get(s, 0.0)) for s in syms)
top = sorted(syms, key=lambda s: -max(perf.get(s, 0), dp.get(s, 0)))[:10]
print("%-40s %8s %8s" % ("symbol", "perf", "domprof"))
for s in top:
    print("%-40s %7.2f%% %7.2f%%" % (s[:40], 100 * perf.get(s, 0), 100 * dp.get(s, 0)))
print("similarity: %.4f (need >= 0.90)" % sim)
sys.exit(0 if sim >= 0.90 else 1)
PY
echo "perf-crosscheck: passed"
