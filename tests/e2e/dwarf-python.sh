#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# DWARF call chains of a real program no one here wrote (issue 14
# "Proof", docs/dwarf-notes.md "Proof"): Debian's python3 (built without
# frame pointers) running tests/workloads/recurse.py (naive recursive
# fib), recorded at the same time by `domprof record --call-graph dwarf`
# and `perf record --call-graph dwarf`, both attached with -p to the
# waiting interpreter (after its start-up, for the reason in
# tests/e2e/lib/perf-attach.bash: perf 6.1 cannot read MMAP2 records
# the kernel wrote while a system-wide domprof recording, anyone's, was
# open); the script
# starts its work once both record (perf acknowledges on its control
# fifo, domprof's file appears), so both see the same work and neither
# the interpreter's start-up.
#  - >= 90% of python3's user samples (domprof export --mode user) have
#    a chain that reaches _start through libc's __libc_start_main and
#    __libc_start_call_main and the interpreter's Py_BytesMain and
#    Py_RunMain (python3's main tail-calls Py_BytesMain, so main itself
#    is on no stack); control: the frame-pointer chains of the same file
#    (DOMPROF_DWARF_UNWIND=0) reach it in < 90% (measured 0%);
#  - the top 10 user symbols of `perf report --no-children --sort
#    dso,sym` and of `domprof report -l --mode user`: similarity (sum
#    over them of the smaller share of user samples) >= 0.9; python3.11
#    is stripped (its static functions only in .eh_frame): perf's
#    addresses in it are grouped by readelf's FDE ranges
#    (tests/e2e/lib/fde_ranges.py) into domprof's IMAGE+0xSTART names,
#    other unnamed addresses are [unknown] on both sides; control: perf's
#    distribution of another Python program (a dict of strings) scores
#    < 0.5 against domprof's;
#  - whole user stacks (root to leaf, perf's from `perf script
#    --no-inline`, its [unknown] frames in python3.11 named by FDE as
#    above): similarity of the two stack distributions >= 0.9; control:
#    the frame-pointer chains (DOMPROF_DWARF_UNWIND=0) score < 0.5.
# Skips (77) only where perf is absent or cannot record.
source "$(dirname "$0")/lib/report-common.bash"
set -e
# the analysis scripts run with the system's interpreter: a python3
# shim first in PATH (pyenv) costs ~0.7 s a start
PY3=/usr/bin/python3
[ -x "$PY3" ] || PY3=$(command -v python3 || true)
[ -n "$PY3" ] || skip "python3 not installed"
[ "$(uname -m)" = x86_64 ] || skip "user registers are only known on x86-64"
# Debian's interpreter, not whatever python3 is first in PATH (a pyenv
# or venv build would have other symbols and flags)
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3 (Debian package python3)"
source "$TOP/tests/e2e/lib/perf-attach.bash"
perf_setup

# start_py NAME [ARGS...]: the interpreter, waiting for $OUT/NAME.go;
# PY_PID is its pid
start_py() {
	local n=$1
	shift
	"$PY" "$TOP/tests/workloads/recurse.py" "$OUT/$n.go" "$@" >"$OUT/$n.out" 2>&1 &
	bg_pids+=($!)
	wait_for "$OUT/$n.out" '^pid ' 10 $! || fail "python3 did not start: $(cat "$OUT/$n.out")"
	PY_PID=$(awk '/^pid /{ print $2; exit }' "$OUT/$n.out")
}
start_py py 2000   # ~2 s on a quiet machine (800 gave 482 samples there, under the minimum)
note "python3 pid $PY_PID"
"$DOMPROF" record -f --call-graph dwarf -F 1000 -p "$PY_PID" -o "$OUT/dp.data" >"$OUT/dp-record.log" 2>&1 &
DP_PID=$!
bg_pids+=("$DP_PID")
for ((i = 0; i < 200; i++)); do # its file appears once it records
	[ -e "$OUT/dp.data" ] || ! kill -0 $DP_PID 2>/dev/null && break
	sleep 0.1
done
[ -e "$OUT/dp.data" ] || fail "domprof record did not start: $(cat "$OUT/dp-record.log")"
perf_attach perf "$PY_PID" --call-graph dwarf -F 1000
: >"$OUT/py.go"
wait "$DP_PID" || fail "domprof record: $(cat "$OUT/dp-record.log")"
perf_wait perf
grep -q 'recurse: done' "$OUT/py.out" || fail "python3 did not finish: $(cat "$OUT/py.out")"
tail -n 1 "$OUT/dp-record.log"

# 1. the chains reach libc's start through the interpreter
folded() { # NAME [ENV...]
	local n=$1
	shift
	env "$@" "$DOMPROF" export --format folded -i "$OUT/dp.data" --comm python3 --mode user \
		-o "$OUT/$n.folded" 2>"$OUT/$n.err" || fail "export folded: $(cat "$OUT/$n.err")"
}
folded dwarf
folded fp DOMPROF_DWARF_UNWIND=0
reach() { # NAME -> "percent samples"
	"$PY3" - "$OUT/$1.folded" <<'PY'
import re, sys
# root first: domain;comm;_start;__libc_start_main..;<libc's
# __libc_start_call_main, by whatever name>;[main;]Py_BytesMain;Py_RunMain
pat = re.compile(r'^[^;]*;[^;]*;_start;[^;]*__libc_start_main[^;]*;[^;]+;(?:main;)?Py_BytesMain;Py_RunMain;')
tot = hit = 0
for line in open(sys.argv[1]):
    st, n = line.rstrip('\n').rsplit(' ', 1)
    tot += int(n)
    if pat.match(st):
        hit += int(n)
print("%.1f %d" % (100.0 * hit / tot if tot else 0.0, tot))
PY
}
r=$(reach dwarf)
note "dwarf: ${r%% *}% of ${r##* } python3 user samples reach __libc_start_call_main through Py_RunMain"
"$PY3" -c "import sys; p, n = '$r'.split(); sys.exit(0 if float(p) >= 90 and int(n) >= 300 else 1)" ||
	fail "dwarf chains reach the start in only ${r%% *}% of ${r##* } samples"
r=$(reach fp)
note "control (frame-pointer chains, DOMPROF_DWARF_UNWIND=0): ${r%% *}% of ${r##* }"
"$PY3" -c "import sys; sys.exit(0 if float('${r%% *}') < 90 else 1)" ||
	fail "control: the frame-pointer chains reach the start in ${r%% *}%"

# 2. perf agrees on the top 10 user symbols
perf_syms() { # PERF.DATA OUT.txt
	"$PERF" report -i "$1" --stdio --no-children --sort dso,sym -g none -F overhead,dso,sym >"$2" 2>"$2.err" ||
		fail "perf report failed: $(tail -n 2 "$2.err" | tr '\n' ' ')"
}
perf_syms "$OUT/perf.data" "$OUT/perf.txt"
"$DOMPROF" report -i "$OUT/dp.data" -l --mode user --comm python3 --format csv >"$OUT/dp.csv" ||
	fail "domprof report"
# the control: perf's distribution of another Python program
start_py other 150 dict
perf_attach other "$PY_PID" -F 1000
: >"$OUT/other.go"
perf_wait other
perf_syms "$OUT/other.data" "$OUT/other.txt"

similar() { # PERF.txt MIN|-MAX: top-10 user-symbol similarity against domprof's
	PYTHONPATH="$TOP/tests/e2e/lib" "$PY3" - "$1" "$OUT/dp.csv" "$2" "$PY" <<'PY'
import csv, re, sys
import fde_ranges
# perf prints code no symbol covers as its file offset in the dso;
# domprof names it IMAGE+0xSTART by the FDE that covers it: group
# perf's addresses in the interpreter by the same FDEs (readelf's)
exe = fde_ranges.Table(sys.argv[4])
def perf_name(dso, sym):
    if re.fullmatch(r"0x[0-9a-f]+", sym):
        n = exe.name_of_offset(int(sym, 16)) if dso == exe.name else None
        return n or "[unknown]"
    return sym
perf = {}
for line in open(sys.argv[1]):
    m = re.match(r"^\s*([\d.]+)%\s+(\S+)\s+\[\.\]\s+(.*?)\s*$", line)  # [.] = user
    if m:
        s = perf_name(m.group(2), m.group(3))
        perf[s] = perf.get(s, 0.0) + float(m.group(1))
dp = {}
for r in csv.DictReader(open(sys.argv[2])):
    s = r["symbol"]
    dp[s] = dp.get(s, 0.0) + int(r["samples"])
def shares(d):
    t = sum(d.values())
    return {k: v / t for k, v in d.items()} if t else {}
perf, dp = shares(perf), shares(dp)
top = lambda d: sorted(d, key=lambda s: -d[s])[:10]
syms = sorted(set(top(perf)) | set(top(dp)), key=lambda s: -max(perf.get(s, 0), dp.get(s, 0)))
sim = sum(min(perf.get(s, 0.0), dp.get(s, 0.0)) for s in syms)
print("  %-40s %8s %8s" % ("user symbol", "perf", "domprof"))
for s in syms:
    print("  %-40s %7.2f%% %7.2f%%" % (s[:40], 100 * perf.get(s, 0), 100 * dp.get(s, 0)))
print("  similarity over the top 10 of each: %.3f" % sim)
lim = float(sys.argv[3])
sys.exit(0 if (sim >= lim if lim >= 0 else sim < -lim) else 1)
PY
}
note "perf --call-graph dwarf vs domprof, python3's user symbols"
similar "$OUT/perf.txt" 0.9 || fail "perf and domprof disagree on the top 10 user symbols (< 0.9)"
note "control: perf's distribution of another Python program"
similar "$OUT/other.txt" -0.5 || fail "control: another program's distribution scores >= 0.5"

# 3. the chains themselves: perf's and domprof's user stacks agree
"$PERF" script -i "$OUT/perf.data" -F ip,sym,dso --no-inline >"$OUT/perf.stacks" 2>"$OUT/perf-script.err" ||
	fail "perf script failed: $(tail -n 2 "$OUT/perf-script.err" | tr '\n' ' ')"
stacks() { # FOLDED MIN|-MAX: similarity of whole user stacks against perf's
	PYTHONPATH="$TOP/tests/e2e/lib" "$PY3" - "$OUT/perf.stacks" "$1" "$2" "$PY" <<'PY'
import re, sys
import fde_ranges
exe = fde_ranges.Table(sys.argv[4])
perf, cur = {}, []
def flush():
    # user-mode samples only (no kernel frame), root first; perf prints
    # a frame no symbol covers as [unknown] at its file offset: name it
    # by the FDE, callers looked up one byte early as domprof does
    if cur and not any(d.startswith("[kernel") for _, _, d in cur):
        fr = []
        for i, (ip, sym, dso) in enumerate(cur):
            if sym == "[unknown]" and dso.split("/")[-1] == exe.name:
                sym = exe.name_of_offset(int(ip, 16) - (1 if i else 0)) or sym
            fr.append(sym)
        k = ";".join(reversed(fr))
        perf[k] = perf.get(k, 0) + 1
    cur.clear()
for line in open(sys.argv[1]):
    m = re.match(r"^\s+([0-9a-f]+) (.*) \((.*)\)$", line)
    if m:
        cur.append(m.groups())
    elif not line.strip():
        flush()
flush()
dp = {}
for line in open(sys.argv[2]):
    st, n = line.rstrip("\n").rsplit(" ", 1)
    k = ";".join(st.split(";")[2:])  # without domain;comm
    dp[k] = dp.get(k, 0) + int(n)
P, D = sum(perf.values()), sum(dp.values())
sim = sum(min(perf.get(k, 0) / P, v / D) for k, v in dp.items()) if P and D else 0.0
for k in sorted(set(perf) | set(dp), key=lambda k: -max(perf.get(k, 0) / P, dp.get(k, 0) / D))[:3]:
    print("  perf %5.1f%% domprof %5.1f%%  ...%s" % (100 * perf.get(k, 0) / P, 100 * dp.get(k, 0) / D, k[-110:]))
print("  stacks: perf %d in %d distinct, domprof %d in %d; similarity %.3f" % (P, len(perf), D, len(dp), sim))
lim = float(sys.argv[3])
sys.exit(0 if (sim >= lim if lim >= 0 else sim < -lim) else 1)
PY
}
note "whole user stacks: perf --call-graph dwarf vs domprof"
stacks "$OUT/dwarf.folded" 0.9 || fail "perf's and domprof's DWARF stacks differ (similarity < 0.9)"
note "control: domprof's frame-pointer chains"
stacks "$OUT/fp.folded" -0.5 || fail "control: the frame-pointer chains agree with perf's DWARF stacks"
source "$(dirname "$0")/lib/quick.bash"
quick_check "$OUT/dp.data" 90
delta_check "$OUT/dp.data" 50
echo "dwarf-python: all checks passed"
