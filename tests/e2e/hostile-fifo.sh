#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Paths that are not regular files never hang an analysis command: a
# recording whose MMAP records name a FIFO, a device and a directory
# (with a real binary and an embedded kallsyms beside them) gives report,
# flamegraph and export at once, the odd images unnamed with one warning
# each and the rest named; `info FIFO` and `report -i FIFO` fail at once
# with a one-line "not a regular file" (exit 1). Each command runs under
# `timeout 20`: on a build that opens these paths blocking, the FIFO
# hangs until the timeout and the test fails.
source "$(dirname "$0")/lib/report-common.bash"
GEN=("$TT" gen-hostile)
[ -x "$TT" ] || fail "$TT missing (run 'make fixtures')"

rm -f "$OUT/fifo"
mkfifo "$OUT/fifo" || fail "mkfifo"
mkdir -p "$OUT/adir"
D="$OUT/odd-paths.data"
"${GEN[@]}" fifo "$D" "$OUT/fifo" /dev/urandom "$OUT/adir" "$TT" || fail "generator"

run() {   # run NAME CMD... : exit status in $rc, stdout+stderr in $OUT/NAME.txt
	local name=$1; shift
	timeout 20 "$@" >"$OUT/$name.txt" 2>&1
	rc=$?
	[ $rc = 124 ] && fail "$name: still running after 20 s (blocked on a FIFO?)"
}

run report "$DOMPROF" report -i "$D" -l
[ $rc = 0 ] || { cat "$OUT/report.txt"; fail "report exit $rc"; }
grep -q "legit_func" "$OUT/report.txt" || fail "report: the embedded kallsyms no longer names kernel samples"
grep -q "$OUT/fifo: not a regular file" "$OUT/report.txt" || fail "report: no warning for the FIFO"
grep -q "/dev/urandom: not a regular file" "$OUT/report.txt" || fail "report: no warning for the device"
grep -q "adir: not a regular file" "$OUT/report.txt" || fail "report: no warning for the directory"
python3 - "$OUT/report.txt" <<'PY' || fail "report: samples of the odd images lost or named"
import sys
rows = [l.split() for l in open(sys.argv[1]) if l[:1].isdigit()]
by_img = {}
for r in rows:
    by_img[r[3]] = (int(r[0]), r[4])
print(by_img)
for img in ("fifo", "urandom", "adir"):
    assert by_img.get(img) == (10, "[unknown]"), img
assert by_img["[kernel.kallsyms]"] == (10, "legit_func")
assert sum(v[0] for v in by_img.values()) == 50
PY

run flamegraph "$DOMPROF" flamegraph -i "$D" -o "$OUT/odd.html"
[ $rc = 0 ] && [ -s "$OUT/odd.html" ] || { cat "$OUT/flamegraph.txt"; fail "flamegraph exit $rc"; }
run export "$DOMPROF" export --format folded -i "$D" -o "$OUT/odd.folded"
[ $rc = 0 ] || { cat "$OUT/export.txt"; fail "export exit $rc"; }
grep -q "legit_func_\[k\] 10" "$OUT/odd.folded" || fail "export: kernel stack missing"

for cmd in "info" "report -i" "flamegraph -o $OUT/x.html -i" "export --format folded -i"; do
	run named $DOMPROF $cmd "$OUT/fifo"
	cat "$OUT/named.txt"
	[ $rc = 1 ] || fail "$cmd FIFO: exit $rc, want 1"
	[ "$(wc -l <"$OUT/named.txt")" = 1 ] || fail "$cmd FIFO: want a one-line error"
	grep -q "not a regular file" "$OUT/named.txt" || fail "$cmd FIFO: error does not say why"
done
echo "hostile-fifo: all checks passed"
