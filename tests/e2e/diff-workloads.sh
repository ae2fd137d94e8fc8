#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End-to-end test of `domprof diff` on real recordings:
#  - the same workload (threefuncs) recorded twice: similarity >= 0.85
#    (measured 0.96-0.98 on the 2-CPU test machine);
#  - a file against itself: similarity exactly 1.0000, every diff 0;
#  - threefuncs against kernelheavy (its time in the host kernel; which
#    kernel function depends on the CPU, so only the [kernel] image is
#    asserted): similarity <= 0.3 (measured ~0.002), with +++ and ---
#    rows;
#  - text, CSV and JSON agree (rows and similarity); CSV header stable;
#  - --kernel-only and --fold-irq-enable print their extra lines and keep
#    the `similarity:` line last; -t hides rows but not from the score;
#  - cross-domain: in a merged file the host domain compared with a guest
#    domain holding the same workload matches on (image, symbol);
#  - errors: unreadable file and unknown domain exit 1, bad usage exit 2.
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs kernelheavy

record a -F 1000 -- "$WL/threefuncs" 160
record b -F 1000 -- "$WL/threefuncs" 160
record k -F 1000 -- "$WL/kernelheavy" 1.5
A="$OUT/a.data" B="$OUT/b.data" K="$OUT/k.data"
sim() { awk '/^similarity: /{s=$2} END{print s}' "$1"; }
ge() { python3 -c "import sys; sys.exit(0 if float('$1') >= float('$2') else 1)"; }

note "same workload twice"
"$DOMPROF" diff "$A" "$B" >"$OUT/ab.txt" || fail "diff a b exit $?"
head -n 12 "$OUT/ab.txt"
tail -n 1 "$OUT/ab.txt" | grep -Eq '^similarity: [01]\.[0-9]{4}$' || fail "last line is not 'similarity: S'"
s=$(sim "$OUT/ab.txt"); echo "similarity(threefuncs, threefuncs) = $s"
ge "$s" 0.85 || fail "similarity of two threefuncs runs $s < 0.85"
grep -Eq '^[0-9]+ +[0-9.]+ +[0-9]+ +[0-9.]+ +[-+][0-9.]+ +host +threefuncs +func_a$' "$OUT/ab.txt" ||
	fail "no func_a row"

note "a file against itself"
"$DOMPROF" diff "$A" "$A" >"$OUT/aa.txt" || fail "diff a a exit $?"
[ "$(sim "$OUT/aa.txt")" = "1.0000" ] || fail "self similarity $(sim "$OUT/aa.txt")"
grep -E '^[0-9]' "$OUT/aa.txt" | awk '$5 != "+0.0000" {bad=1} END {exit bad}' || fail "self diff not all zero"

note "different workloads"
"$DOMPROF" diff "$A" "$K" >"$OUT/ak.txt" || fail "diff a k exit $?"
head -n 12 "$OUT/ak.txt"
s=$(sim "$OUT/ak.txt"); echo "similarity(threefuncs, kernelheavy) = $s"
ge 0.3 "$s" || fail "similarity of different workloads $s > 0.3"
grep -Eq ' \+\+\+ +host +\[kernel\] +[^ ]+$' "$OUT/ak.txt" || fail "no kernel symbol marked +++"
grep -Eq ' --- +host +threefuncs +func_a$' "$OUT/ak.txt" || fail "func_a not marked ---"

note "csv and json agree with text"
"$DOMPROF" diff --format csv "$A" "$K" >"$OUT/ak.csv" 2>"$OUT/ak.csv.err" || fail "csv exit $?"
[ "$(head -n 1 "$OUT/ak.csv")" = "domain,image,symbol,share_a,share_b,diff,status" ] || fail "csv header: $(head -n 1 "$OUT/ak.csv")"
grep -q "^domprof diff: similarity: $s\$" "$OUT/ak.csv.err" || fail "csv: no similarity on stderr"
"$DOMPROF" diff --format json "$A" "$K" >"$OUT/ak.json" || fail "json exit $?"
python3 - "$OUT/ak.csv" "$OUT/ak.json" "$s" <<'PY' || fail "csv/json content"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))
assert j["format"] == "domprof-diff" and j["version"] == 1
assert abs(j["similarity"] - float(sys.argv[3])) < 1e-4, (j["similarity"], sys.argv[3])
assert len(rows) == len(j["rows"])
for r, x in zip(rows, j["rows"]):
    assert (r["domain"], r["image"], r["symbol"], r["status"]) == (x["domain"], x["image"], x["symbol"], x["status"])
    assert abs(float(r["share_a"]) - x["share_a"]) < 1e-3
sa = sum(float(r["share_a"]) for r in rows); sb = sum(float(r["share_b"]) for r in rows)
assert abs(sa - 100) < 0.05 and abs(sb - 100) < 0.05, (sa, sb)
sim = sum(min(float(r["share_a"]), float(r["share_b"])) for r in rows) / 100
assert abs(sim - j["similarity"]) < 1e-3, (sim, j["similarity"])
st = {r["symbol"]: r["status"] for r in rows}
assert st["func_a"] == "gone", st
# kernelheavy's time: new kernel rows hold most of B (whatever the function)
kb = sum(float(r["share_b"]) for r in rows if r["image"] == "[kernel]" and r["status"] == "new")
assert kb >= 60, ("new [kernel] rows hold only %.1f%% of kernelheavy" % kb)
assert j["a"]["samples"] == sum(x["samples_a"] for x in j["rows"])
print("csv/json ok:", len(rows), "rows; shares sum", round(sa, 3), round(sb, 3))
PY

note "threshold hides rows, not score"
"$DOMPROF" diff -t 5 "$A" "$K" >"$OUT/ak-t.txt" || fail "-t exit $?"
[ "$(sim "$OUT/ak-t.txt")" = "$s" ] || fail "-t changed the similarity"
n_all=$(grep -c '^[0-9]' "$OUT/ak.txt"); n_t=$(grep -c '^[0-9]' "$OUT/ak-t.txt")
[ "$n_t" -lt "$n_all" ] && [ "$n_t" -ge 2 ] || fail "-t 5 shows $n_t of $n_all rows"

note "--kernel-only, --fold-irq-enable, --sort share"
"$DOMPROF" diff --kernel-only "$A" "$B" >"$OUT/ab-k.txt" || fail "-k exit $?"
grep -q '^# compared: kernel symbols' "$OUT/ab-k.txt" || fail "-k header"
grep -E '^[0-9]' "$OUT/ab-k.txt" | awk '$7 != "[kernel]" && $8 != "[kernel]" {bad=1} END {exit bad}' ||
	fail "-k shows a non-kernel row"
"$DOMPROF" diff --fold-irq-enable "$A" "$B" >"$OUT/ab-f.txt" || fail "fold exit $?"
tail -n 3 "$OUT/ab-f.txt"
grep -q '^similarity with interrupt-enable points: ' "$OUT/ab-f.txt" || fail "fold: no unfolded similarity"
[ "$(awk '/^similarity with interrupt-enable points:/{print $NF}' "$OUT/ab-f.txt")" = "$(sim "$OUT/ab.txt")" ] ||
	fail "fold: similarity with the points differs from plain diff"
tail -n 1 "$OUT/ab-f.txt" | grep -Eq '^similarity: ' || fail "fold: last line"
"$DOMPROF" diff -s share "$A" "$B" | grep -E '^[0-9]' | head -n 1 | grep -q ' func_a$' || fail "--sort share: func_a not first"

note "cross-domain: host of one file against a guest domain of a merge"
"$DOMPROF" merge -q -f -o "$OUT/m.data" "$K" vm1=$B || fail "merge exit $?"
"$DOMPROF" diff --domain-a host --domain-b vm1 "$A" "$OUT/m.data" >"$OUT/x.txt" || fail "cross diff exit $?"
head -n 8 "$OUT/x.txt"
s=$(sim "$OUT/x.txt"); echo "similarity(host of a, vm1 of merge) = $s"
ge "$s" 0.85 || fail "cross-domain similarity $s < 0.85"
grep -Eq ' host\|vm1 +threefuncs +func_a$' "$OUT/x.txt" || fail "cross rows not labelled host|vm1"
"$DOMPROF" diff --domain vm1 "$OUT/m.data" "$OUT/m.data" | tail -n 1 | grep -q '^similarity: 1.0000$' ||
	fail "--domain on both sides"

note "errors"
"$DOMPROF" diff "$A" "$OUT/none.data" 2>"$OUT/e1" >/dev/null; rc=$?
[ $rc = 1 ] || fail "missing file: exit $rc"; cat "$OUT/e1"
[ "$(wc -l <"$OUT/e1")" = 1 ] && grep -q '^domprof diff: .*none.data' "$OUT/e1" || fail "missing file: message"
"$DOMPROF" diff --domain nosuch "$A" "$B" 2>"$OUT/e2" >/dev/null; rc=$?
[ $rc = 1 ] || fail "unknown domain: exit $rc"; cat "$OUT/e2"
grep -q "no domain named 'nosuch'" "$OUT/e2" || fail "unknown domain: message"
"$DOMPROF" diff "$A" 2>/dev/null; [ $? = 2 ] || fail "one file: not a usage error"
"$DOMPROF" diff --format xml "$A" "$B" 2>/dev/null; [ $? = 2 ] || fail "bad format: not a usage error"
"$DOMPROF" diff --bogus "$A" "$B" 2>/dev/null; [ $? = 2 ] || fail "bad option: not a usage error"
echo "ok"
