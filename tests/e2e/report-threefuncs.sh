#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Known-profile end-to-end test of `domprof report` with the threefuncs
# workload (func_a 50%, func_b 30%, func_c 20% of its CPU time).
# Checks: the three shares, measured among the three functions, are each
# within 5 percentage points of 50/30/20, and the three hold >= 80% of
# the workload's samples; the header lines; -g shows main calling func_a
# and a [self] line; CSV header and JSON well-formed (python3 -m json.tool)
# and agreeing with each other; every filter, --sort and -t; the image
# summary; error exits (1 runtime, 2 usage).
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs

record tf -F 1000 -g -- "$WL/threefuncs" 160
D="$OUT/tf.data"
R() { "$DOMPROF" report -i "$D" "$@"; }

note "report -l"
R -l >"$OUT/l.txt" || fail "report -l exit $?"
cat "$OUT/l.txt" | head -30
for pat in '^# event: cpu-clock, sampled at 1000 Hz' '^# samples: [0-9]+ total' \
	   '^# lost samples: [0-9]+' '^# domains:' '^#   host +id 0 +host' \
	   '^samples +% +domain +image name +symbol name'; do
	grep -Eq "$pat" "$OUT/l.txt" || fail "text header: no line matching '$pat'"
done
grep -Eq '^[0-9]+ +[0-9.]+ +host +threefuncs +func_a$' "$OUT/l.txt" || fail "no func_a row under image threefuncs"

note "shares (among func_a, func_b, func_c)"
R -l --format csv >"$OUT/l.csv" 2>"$OUT/csv.err" || fail "csv exit $?"
[ "$(head -n 1 "$OUT/l.csv")" = "samples,percent,domain,image,symbol" ] || fail "csv header: $(head -n 1 "$OUT/l.csv")"
python3 - "$OUT/l.csv" <<'PY' || fail "shares off"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
wl = [r for r in rows if r["image"] == "threefuncs"]
n = {s: sum(int(r["samples"]) for r in wl if r["symbol"] == s) for s in ("func_a", "func_b", "func_c")}
three = sum(n.values())
allwl = sum(int(r["samples"]) for r in rows)
print("samples:", n, "three:", three, "all rows:", allwl)
assert three >= 0.8 * allwl, "func_a/b/c hold only %d of %d samples" % (three, allwl)
assert three >= 500, "too few samples"
for s, want in (("func_a", 50), ("func_b", 30), ("func_c", 20)):
    got = 100.0 * n[s] / three
    print("%s: %.2f%% (want %d%% +- 5)" % (s, got, want))
    assert abs(got - want) <= 5.0, s
PY

note "json"
R -l -g --format json >"$OUT/l.json" || fail "json exit $?"
python3 -m json.tool "$OUT/l.json" >/dev/null || fail "json not well-formed"
python3 - "$OUT/l.json" "$OUT/l.csv" <<'PY' || fail "json content"
import json, csv, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert j["format"] == "domprof-report" and j["version"] == 1
assert j["events"][0]["name"] == "cpu-clock" and j["events"][0]["frequency_hz"] == 1000
assert j["domains"][0]["name"] == "host" and j["domains"][0]["kind"] == "host"
assert j["total_samples"] == j["matched_samples"] > 0
assert len(j["rows"]) == len(rows), (len(j["rows"]), len(rows))
for a, b in zip(j["rows"], rows):
    assert (str(a["samples"]), a["domain"], a["image"], a["symbol"]) == (b["samples"], b["domain"], b["image"], b["symbol"])
assert sum(r["samples"] for r in j["rows"]) == j["matched_samples"]
cg = {e["symbol"]: e for e in j["callgraph"]}
assert any(c["symbol"] == "main" for c in cg["func_a"]["callers"]), cg["func_a"]["callers"]
assert any(c["symbol"] == "func_a" for c in cg["main"]["callees"])
print("json ok:", len(j["rows"]), "rows")
PY

note "call graph"
R -l -g >"$OUT/g.txt" || fail "-g exit $?"
python3 - "$OUT/g.txt" <<'PY' || fail "call graph"
import sys, re
blocks = open(sys.argv[1]).read().split("-" * 79 + "\n")
for b in blocks:
    lines = [l for l in b.splitlines() if l.strip()]
    entry = [i for i, l in enumerate(lines) if re.match(r"^\d", l) and re.search(r"\sfunc_a  \[total", l)]
    if not entry:
        continue
    e = entry[0]
    callers = lines[:e]
    print("\n".join(lines))
    assert any(re.search(r"\bmain$", l) for l in callers), "main is not a caller of func_a"
    assert any(l.rstrip().endswith("func_a [self]") for l in lines[e + 1:]), "no [self] line"
    m = re.match(r"^\s+(\d+)\s+([\d.]+).*main$", [l for l in callers if l.rstrip().endswith("main")][0])
    assert float(m.group(2)) > 90, "main -> func_a share of func_a's total is %s" % m.group(2)
    sys.exit(0)
sys.exit("no func_a entry")
PY

note "image summary"
R >"$OUT/img.txt" || fail "image summary exit $?"
sed -n '/^samples/,$p' "$OUT/img.txt" | head -8
grep -Eq '^[0-9]+ +[0-9.]+ +host +threefuncs$' "$OUT/img.txt" || fail "no application line for threefuncs"
grep -Eq '^  [0-9]+ +[0-9.]+ +threefuncs$' "$OUT/img.txt" || fail "no dependent image line threefuncs"

note "filters"
pid=$(grep -o 'pid [0-9]*' "$OUT/tf.record.log" | head -n1 | cut -d' ' -f2)
[ -n "$pid" ] || pid=$(R -l --sort pid --format csv | awk -F, 'NR>1 && $4=="threefuncs"{print $6; exit}')
rows_of() { R -l --format csv "$@" 2>/dev/null | tail -n +2; }
[ -z "$(rows_of --comm threefuncs | awk -F, '$4!="threefuncs" && $4!="[kernel.kallsyms]" && $4 !~ /^(libc|ld-linux)/')" ] || fail "--comm leaks other images"
[ "$(rows_of --comm no-such-comm | wc -l)" = 0 ] || fail "--comm no-such-comm has rows"
R -l --comm no-such-comm 2>&1 | grep -q 'no samples match the filter' || fail "empty filter not announced"
[ -z "$(rows_of --mode kernel | awk -F, '$4=="threefuncs"')" ] || fail "--mode kernel shows user image"
[ -z "$(rows_of --mode user | awk -F, '$4=="[kernel.kallsyms]"')" ] || fail "--mode user shows kernel"
[ -z "$(rows_of --image threefuncs | awk -F, '$4!="threefuncs"')" ] || fail "--image shows other images"
[ "$(rows_of --image threefuncs | wc -l)" -ge 3 ] || fail "--image threefuncs lost rows"
[ "$(rows_of --pid "$pid" | grep -c ',func_')" = 3 ] || fail "--pid $pid misses func rows"
[ "$(rows_of --pid 1 | grep -c ',func_')" = 0 ] || fail "--pid 1 shows threefuncs rows"
[ "$(rows_of --domain host | wc -l)" -ge 3 ] || fail "--domain host empty"
R -l --domain nosuchvm >/dev/null 2>"$OUT/dom.err"; rc=$?
[ $rc = 1 ] && grep -q "no domain named 'nosuchvm'" "$OUT/dom.err" || fail "--domain nosuchvm: rc $rc $(cat "$OUT/dom.err")"

note "sort and threshold"
rows_of --sort symbol | cut -d, -f5 >"$OUT/sym.txt"
LC_ALL=C sort -c "$OUT/sym.txt" || fail "--sort symbol not sorted"
rows_of --sort samples | cut -d, -f1 | sort -nrc || fail "--sort sample not sorted"
R -l --sort comm,pid --format csv | head -n1 | grep -qx 'samples,percent,domain,image,symbol,pid,comm' || fail "--sort pid header"
R -l --sort pid | grep -Eq "^[0-9]+ +[0-9.]+ +host +$pid +threefuncs +threefuncs +func_a" || fail "--sort pid text columns"
[ -z "$(rows_of -t 10 | awk -F, '$2 < 10')" ] || fail "-t 10 shows rows below 10%"
[ "$(rows_of -t 10 | wc -l)" -ge 3 ] || fail "-t 10 lost the big rows"

note "errors"
"$DOMPROF" report -i "$OUT/no-such-file" >/dev/null 2>"$OUT/e1"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$OUT/e1")" = 1 ] || fail "missing file: rc $rc: $(cat "$OUT/e1")"
head -c 4096 /dev/urandom >"$OUT/garbage.data"
"$DOMPROF" report -i "$OUT/garbage.data" >/dev/null 2>"$OUT/e2"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$OUT/e2")" = 1 ] || fail "garbage file: rc $rc: $(cat "$OUT/e2")"
for bad in "--sort bogus" "--format xml" "--mode x" "-t abc" "--bogus"; do
	# shellcheck disable=SC2086
	R $bad >/dev/null 2>&1; rc=$?
	[ $rc = 2 ] || fail "'report $bad' exit $rc, want 2"
done
# a further argument is a further input (docs/options.md): one that does
# not exist is a runtime error naming it, not a usage error
R extra-arg >/dev/null 2>"$OUT/e3"; rc=$?
[ $rc = 1 ] && grep -q "extra-arg" "$OUT/e3" || fail "'report extra-arg' exit $rc, want 1 naming it: $(cat "$OUT/e3")"
echo "report-threefuncs: all checks passed"
