#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Several input files read as one (analysis/inputs.h, profile_load_files):
# two recordings of threefuncs, A and B. report A B (arguments), -i A -i
# B, -i 'DIR/*.data' (a quoted glob the command expands) and -i A,B give
# the same rows, whose counts are A's plus B's (func_a/b/c and the total);
# export folded of both is the sum of each stack's counts; flamegraph
# reads both; info describes each and prints their total; diff compares
# two sets ('A,B' against a glob of both: similarity 1; A against A,B:
# above 0.9 and below 1); merge -o M A B (a host series) reports the same rows as A B,
# with one kernel table and one source line table per image. Controls: report A alone differs from A B; a
# glob that matches nothing is an error naming it (exit 1).
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs
mkdir -p "$OUT/set"
record set/a -F 1000 -- "$WL/threefuncs" 40
record set/b -F 1000 -- "$WL/threefuncs" 40
A="$OUT/set/a.data" B="$OUT/set/b.data"
rows() { "$DOMPROF" report -l -q --format csv "$@" | sort; }

note "report: the same rows however the two are named"
rows "$A" "$B" >"$OUT/ab.csv" || fail "report A B"
rows -i "$A" -i "$B" >"$OUT/ii.csv" || fail "report -i A -i B"
rows -i "$OUT/set/*.data" >"$OUT/glob.csv" || fail "report -i 'glob'"
rows -i "$A,$B" >"$OUT/comma.csv" || fail "report -i A,B"
for f in ii glob comma; do cmp -s "$OUT/ab.csv" "$OUT/$f.csv" || { diff "$OUT/ab.csv" "$OUT/$f.csv" | head; fail "$f differs from A B"; }; done
rows "$A" >"$OUT/a.csv"; rows "$B" >"$OUT/b.csv"
cmp -s "$OUT/a.csv" "$OUT/ab.csv" && fail "control: A alone reports as A B"
python3 - "$OUT/a.csv" "$OUT/b.csv" "$OUT/ab.csv" <<'PY' || fail "counts of A B are not A's plus B's"
import csv, sys
def load(p):
    d = {}
    for r in csv.DictReader(open(p), fieldnames=["samples", "percent", "domain", "image", "symbol"]):
        if r["samples"] == "samples":
            continue
        k = (r["domain"], r["image"], r["symbol"])
        d[k] = d.get(k, 0) + int(r["samples"])
    return d
a, b, ab = (load(p) for p in sys.argv[1:])
for s in ("func_a", "func_b", "func_c"):
    k = ("host", "threefuncs", s)
    print(s, a.get(k, 0), "+", b.get(k, 0), "=", ab.get(k, 0))
    assert a.get(k, 0) + b.get(k, 0) == ab[k] > 0
keys = set(a) | set(b)
assert all(a.get(k, 0) + b.get(k, 0) == ab.get(k, 0) for k in keys), "a row does not add up"
assert sum(a.values()) + sum(b.values()) == sum(ab.values())
PY
ta=$("$DOMPROF" report -q -i "$A" | sed -En 's/^# samples: ([0-9]+) total/\1/p')
tb=$("$DOMPROF" report -q -i "$B" | sed -En 's/^# samples: ([0-9]+) total/\1/p')
tab=$("$DOMPROF" report -q "$A" "$B" | sed -En 's/^# samples: ([0-9]+) total/\1/p')
echo "total: $ta + $tb = $tab"
[ $((ta + tb)) = "$tab" ] || fail "total $tab != $ta + $tb"
"$DOMPROF" report -q "$A" "$B" | grep -q "^# file: $A (and 1 more)" || fail "header does not name the files"

note "export, flamegraph, info"
"$DOMPROF" export --format folded "$A" "$B" >"$OUT/ab.folded" || fail "export A B"
"$DOMPROF" export --format folded "$A" >"$OUT/a.folded"; "$DOMPROF" export --format folded "$B" >"$OUT/b.folded"
python3 - "$OUT/a.folded" "$OUT/b.folded" "$OUT/ab.folded" <<'PY' || fail "folded counts do not add up"
import sys, re
def load(p):
    d = {}
    for l in open(p):
        s, n = l.rstrip("\n").rsplit(" ", 1)
        s = re.sub(r"-[0-9]+;", "-PID;", s, count=1)   # the two runs' pids differ
        d[s] = d.get(s, 0) + int(n)
    return d
a, b, ab = (load(p) for p in sys.argv[1:])
assert all(a.get(k, 0) + b.get(k, 0) == ab.get(k, 0) for k in set(a) | set(b) | set(ab))
print("folded: %d stacks, %d samples" % (len(ab), sum(ab.values())))
PY
"$DOMPROF" flamegraph -o "$OUT/ab.html" "$A" "$B" 2>/dev/null || fail "flamegraph A B"
grep -q func_a "$OUT/ab.html" || fail "flamegraph of A B without func_a"
"$DOMPROF" info "$A" "$B" >"$OUT/info.txt" || fail "info A B"
[ "$(grep -c '^file:' "$OUT/info.txt")" = 2 ] || fail "info did not describe both"
grep -Eq "^total: +2 files \(2 read, 2 complete\), [0-9]+ bytes, $tab samples" "$OUT/info.txt" ||
	{ tail -n 1 "$OUT/info.txt"; fail "info total line"; }

note "diff of two sets, merge of a series"
"$DOMPROF" diff "$A,$B" "$OUT/set/*.data" >"$OUT/same.txt" || fail "diff A,B glob"
tail -n 1 "$OUT/same.txt"
grep -q '^similarity: 1.0000' "$OUT/same.txt" || fail "the same set twice is not similarity 1"
"$DOMPROF" diff "$A" "$A,$B" >"$OUT/d.txt" 2>/dev/null || fail "diff A A,B"
tail -n 1 "$OUT/d.txt"
grep -q '^similarity: 1.0000' "$OUT/d.txt" && fail "control: A against A,B is similarity 1"
grep -q '^similarity: 0\.9' "$OUT/d.txt" || fail "A against A,B: not the same workload"
"$DOMPROF" merge -q -f -o "$OUT/m.data" "$A" "$B" || fail "merge A B"
rows -i "$OUT/m.data" >"$OUT/m.csv"
cmp -s "$OUT/m.csv" "$OUT/ab.csv" || { diff "$OUT/m.csv" "$OUT/ab.csv" | head; fail "merged series reports otherwise than A B"; }
# the kernel's index and its name filter (kinds 8 and 9), once each
"$DOMPROF" dump -i "$OUT/m.data" | grep -Eo 'SYMTAB +kind=[0-9]+ name=[^ ]+' | sort | uniq -c >"$OUT/symtabs.txt"
for k in 8 9; do
	[ "$(grep -c " kind=$k " "$OUT/symtabs.txt")" = 1 ] && grep -Eq "^ +1 SYMTAB +kind=$k " "$OUT/symtabs.txt" ||
		fail "merged series: kernel table kind $k not once: $(cat "$OUT/symtabs.txt")"
done
# and each image's source line table (kind 10) once, united
! grep -Eqv '^ +1 ' "$OUT/symtabs.txt" || fail "merged series: a table more than once: $(cat "$OUT/symtabs.txt")"

note "errors"
"$DOMPROF" report -i "$OUT/set/nothing*" >/dev/null 2>"$OUT/err.txt"
rc=$?
[ $rc = 1 ] || fail "a glob matching nothing: exit $rc"
grep -q "no file matches '$OUT/set/nothing\*'" "$OUT/err.txt" || fail "message: $(cat "$OUT/err.txt")"
"$DOMPROF" report "$A" "$OUT/set/missing.data" >/dev/null 2>"$OUT/err.txt" && fail "a missing second file accepted"
grep -q "missing.data" "$OUT/err.txt" || fail "the missing file is not named: $(cat "$OUT/err.txt")"
echo "multi-input: ok"
