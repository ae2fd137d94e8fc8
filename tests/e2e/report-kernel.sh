#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A kernel-heavy workload (kernelheavy reads /dev/zero) is attributed to
# kernel symbols under [kernel.kallsyms]: of the workload's samples
# (--comm kernelheavy), at least 60% are in [kernel.kallsyms], at least
# 90% of those have a known symbol name, and the top row is a kernel
# symbol. --mode kernel/user split the same samples without loss.
# The recording carries the kernel symbol index (SYMTAB kind 8) and, by
# DOMPROF_RECORD_KSYMS=both, the kind-6 text beside it: reports from the
# index are byte-identical to reports from the text
# (DOMPROF_IGNORE_KSYMIDX=1, which really reads the text: without it, a
# recording with only the index falls back to this machine's kallsyms
# and says so). A recording with only the kind-6 text (as older
# recorders wrote) still names kernel code.
source "$(dirname "$0")/lib/report-common.bash"
need_workload kernelheavy

DOMPROF_RECORD_KSYMS=both record kh -F 1000 -- "$WL/kernelheavy" 2
D="$OUT/kh.data"
"$DOMPROF" dump -i "$D" --type SYMTAB >"$OUT/kh.symtab" || fail "dump"
grep -q 'kind=8 name=kallsyms' "$OUT/kh.symtab" || fail "no kernel symbol index (kind 8)"
grep -q 'kind=6 name=kallsyms' "$OUT/kh.symtab" || fail "no kind-6 text beside it"
for args in "-l" "-l -g" "--format csv" "--sort symbol -g"; do
	# shellcheck disable=SC2086
	"$DOMPROF" report -i "$D" $args >"$OUT/kh.ix.txt" 2>&1 || fail "report $args"
	# shellcheck disable=SC2086
	DOMPROF_IGNORE_KSYMIDX=1 "$DOMPROF" report -i "$D" $args >"$OUT/kh.text.txt" 2>&1 ||
		fail "report $args from the text"
	cmp "$OUT/kh.ix.txt" "$OUT/kh.text.txt" || fail "report $args: index and text differ"
done
record idx -- "$WL/kernelheavy" 0.3
"$DOMPROF" dump -i "$OUT/idx.data" --type SYMTAB | grep -q 'kind=6' && fail "kind 6 written by default"
"$DOMPROF" report -l -i "$OUT/idx.data" >"$OUT/idx.err" 2>&1 || fail "report idx"
grep -q 'no kallsyms in the recording' "$OUT/idx.err" && fail "the index was not used"
DOMPROF_IGNORE_KSYMIDX=1 "$DOMPROF" report -l -i "$OUT/idx.data" >"$OUT/idx.err" 2>&1 || fail "report idx"
grep -q 'no kallsyms in the recording' "$OUT/idx.err" || fail "DOMPROF_IGNORE_KSYMIDX=1 did not ignore the index"
# a recording as older recorders made it (kind 6 only) still names kernel code
DOMPROF_RECORD_KSYMS=text record old -- "$WL/kernelheavy" 0.3
"$DOMPROF" dump -i "$OUT/old.data" --type SYMTAB | grep -q 'kind=8' && fail "kind 8 written with =text"
"$DOMPROF" report -l -i "$OUT/old.data" >"$OUT/old.txt" 2>&1 || fail "report old"
grep -q 'no kallsyms in the recording' "$OUT/old.txt" && fail "the kind-6 table was not used"
grep -q '\[kernel.kallsyms\] *read_zero' "$OUT/old.txt" || fail "no kernel names from the kind-6 table"
"$DOMPROF" report -i "$D" -l --comm kernelheavy >"$OUT/kh.txt" || fail "report"
sed -n '/^samples/,+12p' "$OUT/kh.txt"
"$DOMPROF" report -i "$D" -l --comm kernelheavy --format csv >"$OUT/kh.csv" || fail "csv"
python3 - "$OUT/kh.csv" <<'PY' || fail "kernel attribution"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = sum(int(r["samples"]) for r in rows)
k = [r for r in rows if r["image"] == "[kernel.kallsyms]"]
kn = sum(int(r["samples"]) for r in k)
known = sum(int(r["samples"]) for r in k if r["symbol"] != "[unknown]")
print("samples %d, kernel %d (%.1f%%), named %d" % (tot, kn, 100.0 * kn / max(tot, 1), known))
assert tot >= 200, "too few samples (%d)" % tot   # 2 s of a CPU shared with other tests
assert kn >= 0.6 * tot, "kernel share too low"
assert known >= 0.9 * kn, "too many unnamed kernel samples"
assert rows[0]["image"] == "[kernel.kallsyms]", rows[0]
PY
k=$("$DOMPROF" report -i "$D" -l --comm kernelheavy --mode kernel --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["matched_samples"])')
u=$("$DOMPROF" report -i "$D" -l --comm kernelheavy --mode user --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["matched_samples"])')
a=$("$DOMPROF" report -i "$D" -l --comm kernelheavy --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["matched_samples"])')
echo "kernel $k + user $u = all $a"
[ $((k + u)) = "$a" ] || fail "--mode kernel + --mode user != all"
echo "report-kernel: all checks passed"
