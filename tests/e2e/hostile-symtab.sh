#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Decompression bombs in embedded symbol tables are refused, and counted.
# A ~4 KB recording holds six active domains, each with a zstd kallsyms
# and a zstd ELF (for its binary's build-id) of 1 GiB each, and samples
# hitting both; the host has an honest 3-line kallsyms. `report` must
# finish within 60 s with a peak RSS under 300 MB (the limits allow
# 256 MiB per domain, 512 MiB per file, so no table of 1 GiB is ever
# decompressed), say in one warning line that 12 tables (12288 MiB) were
# refused, keep every sample (the bombed domains' under their image
# names, [unknown]) and still name the host's kernel samples. `info`,
# `dump` and `merge` read the file within the same bound. Control: a real
# recording's embedded kallsyms is used (no refusal, kernel samples
# named), and is refused when DOMPROF_MAX_SYMTAB is set below its size.
source "$(dirname "$0")/lib/report-common.bash"
GEN=("$TT" gen-hostile)
[ -x "$TT" ] || fail "$TT missing (run 'make fixtures')"
[ -x /usr/bin/time ] || skip "/usr/bin/time (Debian package time) is not installed"
need_workload kernelheavy
LIMIT_KB=300000

B="$OUT/bomb.data"
"${GEN[@]}" bomb "$B" 6 1024 || fail "generator"
echo "bomb: $(stat -c %s "$B") bytes"

# bounded NAME CMD...: runs CMD with a 60 s timeout, checks exit 0 and peak RSS
bounded() {
	local name=$1; shift
	/usr/bin/time -f %M -o "$OUT/$name.rss" timeout 60 "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err"
	local rc=$? kb
	kb=$(tail -n 1 "$OUT/$name.rss")
	echo "$name: exit $rc, peak RSS ${kb} KB"
	[ $rc = 124 ] && fail "$name: still running after 60 s"
	[ $rc = 0 ] || { cat "$OUT/$name.err"; fail "$name: exit $rc"; }
	[ "$kb" -lt $LIMIT_KB ] || fail "$name: peak RSS ${kb} KB, want < $LIMIT_KB"
}

bounded report "$DOMPROF" report -i "$B" -l
cat "$OUT/report.txt"
n=$(grep -c "symbol table(s) refused" "$OUT/report.txt")
[ "$n" = 1 ] || fail "report: want one refusal line, got $n"
grep -q "WARNING: 12 embedded symbol table(s) refused, 12288 MiB" "$OUT/report.txt" ||
	fail "report: refusal line does not count 12 tables, 12288 MiB"
grep -q "^# samples: 140 total" "$OUT/report.txt" || fail "report: samples lost"
grep -Eq "^20 +[0-9.]+ +host +\[kernel.kallsyms\] +legit_func" "$OUT/report.txt" ||
	fail "report: the host's honest kallsyms is not used"
for d in 1 2 3 4 5 6; do
	grep -Eq "^10 +[0-9.]+ +bomb$d +bomb +\[unknown\]" "$OUT/report.txt" ||
		fail "report: bomb$d's user samples not under their image"
	grep -Eq "^10 +[0-9.]+ +bomb$d +\[kernel.kallsyms\] +\[unknown\]" "$OUT/report.txt" ||
		fail "report: bomb$d's kernel samples lost"
done
bounded info "$DOMPROF" info "$B"
grep -q "SYMTAB *13" "$OUT/info.txt" || fail "info: tables not counted"
bounded dump "$DOMPROF" dump "$B"
bounded merge "$DOMPROF" merge -q -f -o "$OUT/merged.data" "$B" g="$B"
bounded flamegraph "$DOMPROF" flamegraph -i "$OUT/merged.data" -o "$OUT/merged.html"
grep -q "warning: 24 embedded symbol table(s) refused" "$OUT/flamegraph.err" ||
	fail "flamegraph: refusals of the merged file not reported"

note "control: a real recording's embedded kallsyms"
record kh -F 1000 -- "$WL/kernelheavy" 1
"$DOMPROF" report -i "$OUT/kh.data" -l --comm kernelheavy --format csv >"$OUT/kh.csv" 2>"$OUT/kh.err" ||
	fail "report of a real recording"
grep -q "refused" "$OUT/kh.err" && fail "a real kallsyms was refused"
named() {
	python3 - "$1" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["image"] == "[kernel.kallsyms]"]
n = sum(int(r["samples"]) for r in rows)
k = sum(int(r["samples"]) for r in rows if r["symbol"] != "[unknown]")
print("%d kernel samples, %d named" % (n, k))
sys.exit(0 if n >= 50 and k >= 0.9 * n else 1)
PY
}
named "$OUT/kh.csv" || fail "real recording: kernel samples not named"
DOMPROF_MAX_SYMTAB=64K "$DOMPROF" report -i "$OUT/kh.data" -l --comm kernelheavy --format csv \
	>"$OUT/kh-low.csv" 2>"$OUT/kh-low.err" || fail "report with a low limit"
cat "$OUT/kh-low.err"
grep -q "embedded symbol table(s) refused" "$OUT/kh-low.err" ||
	fail "control: DOMPROF_MAX_SYMTAB=64K did not refuse the kallsyms"
named "$OUT/kh-low.csv" && fail "control: kernel samples named with the kallsyms refused"
echo "hostile-symtab: all checks passed"
