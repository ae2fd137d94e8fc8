#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `domprof export` folded, speedscope and json on a real -g recording of
# threefuncs (func_a 50%, func_b 30%, func_c 20%) and on a synthetic
# two-domain recording, and on empty and filtered-to-nothing profiles:
# - folded: every line parses by flamegraph.pl's rule (/^(.*)\s+(\d+)$/,
#   frames split on ';') and speedscope's folded importer rule
#   (/^(.*) (\d+)$/, no empty frame); domain and process come first; the
#   counts add up to the samples and give func_a ~50%;
# - speedscope: valid JSON with $schema, shared.frames, one "sampled"
#   profile per domain, samples and weights of equal length, indexes in
#   range, weights summing to the domain's samples;
# - json: valid JSON; tree totals = children + self; symbol totals match;
# - empty/filtered: exit 0, a valid file, and the warning on stderr.
source "$(dirname "$0")/../lib/common.bash"
cd "$TOP"
D="$DOMPROF"; T="$OUT"
G=("$TT" gen-profile)
[ -x "$TT" ] || make -s build/san/test-tool >/dev/null || fail "cannot build $TT"

"$D" record -F 1000 -g -o "$T/t.data" -- build/workloads/threefuncs 100 >"$T/record.out" 2>"$T/record.err" ||
	{ cat "$T/record.err"; fail "record"; }
"${G[@]}" "$T/multi.data" 20000 || fail "gen-profile"
"${G[@]}" "$T/empty.data" 0 || fail "gen-profile empty"

for in in t multi; do
	for f in folded speedscope json; do
		"$D" export --format $f -i "$T/$in.data" -o "$T/$in.$f" 2>"$T/$in.$f.err" || fail_later "export $f of $in"
		grep -q "profile is empty" "$T/$in.$f.err" && fail_later "$in.$f: empty warning on a full profile"
	done
done
"$D" export --format folded -i "$T/t.data" >"$T/stdout.folded" 2>/dev/null || fail_later "export to stdout"
cmp -s "$T/stdout.folded" "$T/t.folded" || fail_later "stdout and -o differ"
matched=$("$D" report -i "$T/t.data" -l --format csv 2>/dev/null | awk -F, 'NR>1 {s+=$1} END {print s+0}')
echo "threefuncs: $matched samples; sizes: folded $(stat -c %s "$T/t.folded"), speedscope $(stat -c %s "$T/t.speedscope"), json $(stat -c %s "$T/t.json") bytes"

python3 - "$T" "$matched" <<'PY' || FAILED=1
import json, re, sys
T, matched = sys.argv[1], int(sys.argv[2])
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    if not ok: bad += 1

def folded(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    stacks = []
    for l in lines:
        m = re.match(r"^(.*)\s+?(\d+)$", l)          # flamegraph.pl
        s = re.match(r"^(.*) (\d+)$", l)              # speedscope importFromBGFlameGraph
        if not m or not s or m.group(1) != s.group(1):
            return None, l
        fr = s.group(1).split(";")
        if any(f == "" for f in fr):
            return None, l
        stacks.append((fr, int(s.group(2))))
    return stacks, None

st, badline = folded(f"{T}/t.folded")
check(st is not None, "threefuncs folded parses by flamegraph.pl and speedscope rules" + (f" (bad line {badline!r})" if badline else ""))
st = st or []
check(sum(c for _, c in st) == matched, f"folded counts add up to {matched}")
check(all(f[0] == "host" and f[1] == "threefuncs" for f, _ in st if "func_a" in f), "domain and command name are the first frames")
fa = sum(c for f, c in st if f[-1] == "func_a")
check(abs(100.0 * fa / max(matched, 1) - 50) <= 6, f"func_a leaf share {100.0 * fa / max(matched, 1):.1f}% ~ 50%")
check(any(f[-2:] == ["main", "func_a"] for f, _ in st), "func_a called from main")
ms, _ = folded(f"{T}/multi.folded")
check(ms is not None and {f[0] for f, _ in ms} == {"host", "vm1"} and sum(c for _, c in ms) == 20000, "synthetic folded: two domains, 20000 samples")
check(ms is not None and any(x.endswith("_[k]") for f, _ in ms for x in f), "kernel frames carry _[k]")

for name, total in (("t", matched), ("multi", 20000)):
    ss = json.load(open(f"{T}/{name}.speedscope"))
    ok = ss["$schema"] == "https://www.speedscope.app/file-format-schema.json" and isinstance(ss["shared"]["frames"], list)
    nf = len(ss["shared"]["frames"])
    for p in ss["profiles"]:
        ok &= p["type"] == "sampled" and len(p["samples"]) == len(p["weights"]) and p["unit"] in ("none", "nanoseconds")
        ok &= all(0 <= i < nf for s in p["samples"] for i in s)
        ok &= sum(p["weights"]) == p["endValue"] - p["startValue"]
        ok &= all("name" in ss["shared"]["frames"][i] for s in p["samples"] for i in s)
    check(ok, f"{name}.speedscope follows the file format")
    check(sum(sum(p["weights"]) for p in ss["profiles"]) == total, f"{name}.speedscope weights sum to {total}")
    want = {"host"} if name == "t" else {"host", "vm1"}
    check({p["name"] for p in ss["profiles"]} == want, f"{name}.speedscope one profile per domain {sorted(want)}")

    js = json.load(open(f"{T}/{name}.json"))
    check(js["format"] == "domprof-profile" and js["version"] == 1 and js["matched"] == total, f"{name}.json header, matched {total}")
    def walk(n):
        s = sum(c["total"] for c in n.get("children", []))
        return n["total"] == s + n["self"] and all(walk(c) for c in n.get("children", []))
    check(js["tree"]["name"] == "all" and js["tree"]["total"] == total and walk(js["tree"]), f"{name}.json tree totals consistent")
    check(sum(s["count"] for s in js["stacks"]) == total and sum(s["self"] for s in js["symbols"]) == total, f"{name}.json stacks and symbol self counts sum to {total}")
    nsym = len(js["symbols"])
    check(all(0 <= f < nsym for s in js["stacks"] for f in s["frames"]), f"{name}.json frame indexes in range")
sys.exit(1 if bad else 0)
PY

# empty recording and filtered-to-nothing: valid outputs + the warning
for case in "empty:-i $T/empty.data" "filtered:-i $T/t.data --comm no-such-command" "nodomain:-i $T/multi.data --pid 4242"; do
	name=${case%%:*}; args=${case#*:}
	for f in folded speedscope json pprof; do
		"$D" export --format $f $args -o "$T/$name.$f" 2>"$T/$name.$f.err"; rc=$?
		[ $rc = 0 ] || fail_later "$name $f: exit $rc"
		grep -qx "domprof export: warning: profile is empty (0 samples match)" "$T/$name.$f.err" || { cat "$T/$name.$f.err"; fail_later "$name $f: no empty warning"; }
		case $f in
		folded) [ -s "$T/$name.folded" ] && fail_later "$name folded not empty" ;;
		speedscope | json) python3 -m json.tool "$T/$name.$f" >/dev/null || fail_later "$name $f: invalid JSON" ;;
		pprof) gzip -t "$T/$name.pprof" || fail_later "$name pprof: not gzip" ;;
		esac
	done
done
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['matched']==0 and d['tree']['total']==0" "$T/filtered.json" || fail_later "filtered json counts"

# usage errors
"$D" export -i "$T/t.data" >/dev/null 2>"$T/u.err"; [ $? = 2 ] || fail_later "missing --format not a usage error"
"$D" export --format svg -i "$T/t.data" >/dev/null 2>"$T/u.err"; [ $? = 2 ] || fail_later "bad --format not a usage error"
"$D" export --format json -i "$T/nope.data" >/dev/null 2>"$T/u.err"; [ $? = 1 ] || fail_later "missing file not exit 1"
[ "$(wc -l <"$T/u.err")" = 1 ] || fail_later "missing file: not one line"
[ $FAILED = 0 ] && echo "export-formats: all checks passed"
exit $FAILED
