#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Flame graphs and folded stacks merge the runs of one program (issue 16):
# a recording of 12 short runs of threefuncs (one shell loop, each run
# its own pid) gives
# - folded (default): one process-level frame, "threefuncs", for all of
#   them, and no line holds a pid; --by-pid: one frame per run,
#   threefuncs-PID (the control: the recording does hold many pids);
#   --by-tid: threefuncs-PID/TID; --no-comm: the chain right on the domain;
#   every variant adds up to the same samples;
# - export json: the tree has one process node "threefuncs" (tree_root
#   "comm"), and per pid with --by-pid; speedscope: one frame "threefuncs";
# - the flame graph page in headless Chromium (screenshot merged.png, copied
#   to docs/flamegraph-merged.png) draws threefuncs as one
#   frame at the process level, whose tooltip holds all its samples; the
#   same check on the --by-pid page must fail (it draws one per run); the
#   --by-pid data handed to the default page (window.fg.load, for pages
#   that embed the graph) draws one per run there too;
# - --by-pid with --no-comm is a usage error (exit 2), in flamegraph and
#   export alike.
source "$(dirname "$0")/../lib/common.bash"
cd "$TOP"
D="$DOMPROF"; T="$OUT"; RUNS=12

"$D" record -F 1000 -g -o "$T/m.data" -- sh -c \
	"for i in \$(seq $RUNS); do build/workloads/threefuncs 4 >/dev/null; done" >"$T/record.out" 2>"$T/record.err" ||
	{ cat "$T/record.err"; fail "record"; }
for v in default:"" bypid:--by-pid bytid:--by-tid nocomm:--no-comm; do
	n=${v%%:*}; o=${v#*:}
	# shellcheck disable=SC2086  # $o is one option or none
	"$D" export --format folded -i "$T/m.data" $o -o "$T/$n.folded" 2>>"$T/export.err" || fail_later "export folded $o"
done
"$D" export --format json -i "$T/m.data" -o "$T/default.json" 2>>"$T/export.err" || fail_later "export json"
"$D" export --format json -i "$T/m.data" --by-pid -o "$T/bypid.json" 2>>"$T/export.err" || fail_later "export json --by-pid"
"$D" export --format speedscope -i "$T/m.data" -o "$T/default.speedscope" 2>>"$T/export.err" || fail_later "export speedscope"

python3 - "$T" "$RUNS" >"$T/checks.out" <<'PY' || FAILED=1
import json, re, sys
T, runs = sys.argv[1], int(sys.argv[2])
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    if not ok: bad += 1
def folded(name):
    out = []
    for l in open(f"{T}/{name}.folded"):
        s, c = l.rstrip("\n").rsplit(" ", 1)
        out.append((s.split(";"), int(c)))
    return out
d, p, t, n = (folded(x) for x in ("default", "bypid", "bytid", "nocomm"))
tf = lambda st, f: {fr[1] for fr, _ in st if f(fr[1])}
pids = {s["pid"] for s in json.load(open(f"{T}/default.json"))["stacks"] if s["comm"] == "threefuncs"}
print(f"{len(pids)} threefuncs pids in the recording")
check(len(pids) >= runs - 2, f"the recording holds many runs of threefuncs ({len(pids)} pids, {runs} started)")
check(tf(d, lambda x: x.startswith("threefuncs")) == {"threefuncs"}, "default: one frame 'threefuncs' for all runs")
check(not any(re.search(r"-\d+$", fr[1]) for fr, _ in d), "default: no process frame carries a pid")
bp = tf(p, lambda x: x.startswith("threefuncs-"))
check(len(bp) == len(pids) and all(re.fullmatch(r"threefuncs-\d+", x) for x in bp), f"--by-pid: one frame threefuncs-PID per run ({len(bp)})")
bt = tf(t, lambda x: x.startswith("threefuncs-"))
check(len(bt) >= len(pids) and all(re.fullmatch(r"threefuncs-(\d+)/(\d+)", x) for x in bt), f"--by-tid: threefuncs-PID/TID ({len(bt)})")
check(all(x.split("/")[0] in bp for x in bt), "--by-tid: each thread under its process's pid")
check(any(fr[1] == "__libc_start_call_main" for fr, _ in n) and not any(fr[1] in ("threefuncs", "sh") for fr, _ in n), "--no-comm: the chain right on the domain")
tot = [sum(c for _, c in x) for x in (d, p, t, n)]
check(len(set(tot)) == 1, f"every variant holds the same samples ({tot})")
check(len({";".join(fr) for fr, _ in d}) == len(d), "default: one line per path (duplicates merged)")
ms = sum(c for fr, c in d if fr[1] == "threefuncs")
open(f"{T}/tf-samples", "w").write(str(ms))
def procs(tree):
    return [c for dom in tree["children"] for c in dom.get("children", []) if c["kind"] == "process"]
j = json.load(open(f"{T}/default.json"))
pj = [c for c in procs(j["tree"]) if c["comm"] == "threefuncs"]
check(j["tree_root"] == "comm" and len(pj) == 1 and pj[0]["name"] == "threefuncs" and "pid" not in pj[0] and pj[0]["total"] == ms,
      "json: one process node threefuncs holding all its samples")
jb = json.load(open(f"{T}/bypid.json"))
check(jb["tree_root"] == "pid" and len([c for c in procs(jb["tree"]) if c["comm"] == "threefuncs"]) == len(pids), "json --by-pid: a node per pid")
ss = json.load(open(f"{T}/default.speedscope"))
check(len([f for f in ss["shared"]["frames"] if f["name"].startswith("threefuncs")]) == 1, "speedscope: one frame threefuncs")
sys.exit(1 if bad else 0)
PY
cat "$T/checks.out"

# usage: the three options exclude each other
for c in flamegraph export; do
	a=(); [ $c = export ] && a=(--format folded)
	"$D" $c "${a[@]}" -i "$T/m.data" --by-pid --no-comm -o "$T/x" 2>"$T/u.err"; rc=$?
	[ $rc = 2 ] && grep -q "exclude each other" "$T/u.err" || fail_later "$c --by-pid --no-comm: exit $rc, $(cat "$T/u.err")"
done

"$D" flamegraph -i "$T/m.data" -o "$T/default.html" 2>"$T/fg.err" || fail "flamegraph"
"$D" flamegraph -i "$T/m.data" -o "$T/bypid.html" --by-pid 2>>"$T/fg.err" || fail "flamegraph --by-pid"
"$D" flamegraph -i "$T/m.data" -o "$T/default.svg" 2>>"$T/fg.err" || fail "flamegraph svg"
grep -q '<title>threefuncs (' "$T/default.svg" || fail_later "svg: no frame threefuncs"
grep -Eq '<title>threefuncs-[0-9]+ \(' "$T/default.svg" && fail_later "svg: a frame threefuncs-PID by default"

source tests/browser/lib.sh
ms=$(cat "$T/tf-samples" 2>/dev/null || echo 0)
node tests/browser/check-roots.js "$T/default.html" "$T/merged.png" --program threefuncs --frames 1 --samples "$ms" \
	--load "$T/bypid.html" --loaded-min $((RUNS - 2))
rc=$?; [ $rc = 3 ] && skip "headless chromium could not start"
[ $rc = 0 ] || fail_later "browser: threefuncs is not one frame at the process level (or fg.load of the --by-pid data)"
note "control: the --by-pid page, same check (must fail: one frame per run)"
node tests/browser/check-roots.js "$T/bypid.html" "$T/bypid.png" --program threefuncs --frames 1 >"$T/control.out" 2>&1
rc=$?; cat "$T/control.out"
[ $rc = 1 ] || fail_later "control: the --by-pid page passed the one-frame check (exit $rc)"
n=$(sed -n 's/^\([0-9]*\) frames of threefuncs at the process level.*/\1/p' "$T/control.out")
[ "${n:-0}" -ge $((RUNS - 2)) ] || fail_later "browser: --by-pid draws ${n:-no} frames of threefuncs, not one per run"
[ $FAILED = 0 ] && echo "flamegraph-merge: all checks passed"
exit $FAILED
