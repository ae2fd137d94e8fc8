#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# domprof reads the perf.data files the perf installed here writes
# (docs/perfdata.md), checked against perf's own reading of each file:
# `perf record -g`, `-a -g`, `-e cpu-clock,task-clock`, `-c`, `-F`, `-z`,
# pipe mode (`-o -`) and `--call-graph dwarf`, each of a short workload
# with a known profile (threefuncs; kernelheavy for kernel time). For
# each file (tests/e2e/lib/perfdata_check.py):
#  - counts: domprof report's samples per event equal the totals of
#    `perf report --stdio --no-children -g none --sort comm -n`, exactly;
#  - shares: (image, symbol) shares of `domprof report -l` against
#    `perf report --no-children -g none --sort dso,sym`: similarity >=
#    0.99 (names normalised: perf's hex addresses and domprof's FDE names
#    are [unknown], C++ parameter lists dropped, aliases at one address
#    merged - the check prints the rows that differ);
#  - fold: `domprof export --format folded` against `perf script --no-inline -F
#    comm,ip,sym` folded by the check, count per stack: >= 0.99, except
#    system-wide (>= 0.90: stacks of processes that exec'd or exited
#    mid-round, and outermost frames in ld.so's start code, which domprof
#    looks up at the call (return address - 1) and perf at the return
#    address) and DWARF (>= 0.95: two unwinders, libdwfl and perf's).
# Then the flame graph of the -g perf.data equals, as user-frame folded
# stacks, that of `domprof record -g` of the same workload within
# sampling noise (>= 0.90). A process that execs (sh, then threefuncs)
# has its samples under the name each ran under, as perf counts them:
# the counts per command of its perf.data equal perf's, and in domprof's
# own recording of it dash's samples are sh's and threefuncs' its own
# (shares are not compared across runs: a shared CPU's steal time moves
# them by 10 points). Controls, each must fail: domprof's symbol
# names moved one row; every stack's leaf dropped; func_a and func_c
# swapped in the domprof recording's stacks. Runs alone: perf 6.1 cannot
# read its own file while another process records with attr.build_id
# (see perf-crosscheck.sh).
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs kernelheavy
PERF=$(command -v perf || true)
[ -n "$PERF" ] || skip "perf is not installed (Debian package linux-perf)"
CHECK="$TOP/tests/e2e/lib/perfdata_check.py"
# perf's build-id cache for these recordings only: perf 6.1 aborts on
# some entries of a shared ~/.debug, and domprof reads this one
export PERF_BUILDID_DIR="$OUT/buildid"
# long enough that the dynamic loader's start-up, whose frames the two
# tools name apart by a sample or two (perf: dl_start_user; domprof:
# [unknown]), stays well under 1% of the stacks
TF="$WL/threefuncs 30"

# perf_rec NAME PERF-RECORD-ARGS... -- CMD: $OUT/NAME.perf
perf_rec() {
	local name=$1; shift
	if ! "$PERF" record -q "$@" >"$OUT/$name.perf-record.log" 2>&1; then
		cat "$OUT/$name.perf-record.log"
		grep -qi 'paranoid\|permission' "$OUT/$name.perf-record.log" && skip "perf cannot record here"
		fail "perf record $* failed"
	fi
}

# check NAME FOLD-MIN [COMM]: the three checks on $OUT/NAME.perf; with
# COMM, shares and stacks of that command only (a system-wide file holds
# whatever else ran on the machine, and the tools name some of it apart:
# a JIT's code, valgrind's, is perf's memcheck-amd64-linux and domprof's
# [anon]); the counts are the whole file's either way
check() {
	local name=$1 min=$2 f="$OUT/$1.perf" pc=() dc=()
	[ -z "${3:-}" ] || { pc=(--comms "$3"); dc=(--comm "$3"); }
	note "$name: $(basename "$f") ($(stat -c %s "$f") bytes)${3:+, shares and stacks of $3}"
	"$PERF" report -i "$f" --stdio --no-children -g none --sort comm -n >"$OUT/$name.comm" 2>"$OUT/$name.perr" ||
		fail "$name: perf report failed: $(tail -n 2 "$OUT/$name.perr" | tr '\n' ' ')"
	if [ -z "${3:-}" ]; then
		"$PERF" report -i "$f" --stdio --no-children -g none --sort dso,sym -n >"$OUT/$name.dsosym" 2>>"$OUT/$name.perr" ||
			fail "$name: perf report --sort dso,sym failed"
	else
		# perf report --comms counts a process's samples from before
		# its exec under its last name (the perf child waiting in the
		# kernel to exec threefuncs); perf script names each sample
		# by the command it ran: the shares are its, in perf report's
		# row form
		"$PERF" script -i "$f" -F ip,sym,dso -G "${pc[@]}" 2>>"$OUT/$name.perr" | python3 -c '
import collections, re, sys
n = collections.Counter()
for line in sys.stdin:
    m = re.match(r"^\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
    if m:
        n[(m.group(2).rsplit("/", 1)[-1], m.group(1))] += 1
for (dso, sym), c in n.most_common():
    print("  0.00%% %d %s [.] %s" % (c, dso, sym))' >"$OUT/$name.dsosym" || fail "$name: perf script -F ip,sym,dso failed"
	fi
	"$PERF" script -i "$f" -F comm,pid,tid,ip,sym --no-inline "${pc[@]}" >"$OUT/$name.script" 2>>"$OUT/$name.perr" ||
		fail "$name: perf script failed"
	"$DOMPROF" report -q -i "$f" >"$OUT/$name.report" 2>"$OUT/$name.derr" || fail "$name: domprof report failed"
	"$DOMPROF" report -q -i "$f" -l --format csv "${dc[@]}" >"$OUT/$name.csv" 2>>"$OUT/$name.derr" || fail "$name: domprof report -l failed"
	"$DOMPROF" export -i "$f" --format folded "${dc[@]}" >"$OUT/$name.folded" 2>>"$OUT/$name.derr" || fail "$name: domprof export failed"
	grep -q '^# format: perf.data' "$OUT/$name.report" || fail_later "$name: report header does not name perf.data"
	if grep -q 'damaged' "$OUT/$name.report" "$OUT/$name.derr"; then
		fail_later "$name: domprof reports damage in perf's own file: $(grep -h damaged "$OUT/$name.derr" | head -n 2)"
	fi
	python3 "$CHECK" counts "$OUT/$name.comm" "$OUT/$name.report" || fail_later "$name: sample counts per event differ"
	python3 "$CHECK" shares "$OUT/$name.dsosym" "$OUT/$name.csv" || fail_later "$name: symbol shares differ"
	python3 "$CHECK" fold "$OUT/$name.script" "$OUT/$name.folded" "$min" || fail_later "$name: folded stacks differ"
}

perf_rec g -g -o "$OUT/g.perf" -- sh -c "$TF; $WL/kernelheavy 0.3"
check g 0.99
note "controls (each must fail)"
python3 "$CHECK" shares "$OUT/g.dsosym" "$OUT/g.csv" --rotate || fail_later "control: rotated symbol names passed"
python3 "$CHECK" fold "$OUT/g.script" "$OUT/g.folded" 0.99 --rotate || fail_later "control: stacks without leaves passed"

perf_rec a -a -g -o "$OUT/a.perf" -- $TF
check a 0.90 threefuncs
perf_rec ev -e cpu-clock,task-clock -g -o "$OUT/ev.perf" -- $TF
check ev 0.99
perf_rec c -c 200000 -g -o "$OUT/c.perf" -- $TF
check c 0.99
perf_rec F -F 2000 -g -o "$OUT/F.perf" -- $TF
check F 0.99
perf_rec z -z -g -o "$OUT/z.perf" -- $TF
grep -q 'COMPRESSED' <("$PERF" report -i "$OUT/z.perf" --header-only 2>/dev/null | grep -v missing) ||
	note "(perf did not mark z.perf compressed)"
check z 0.99
note "pipe: perf record -o - > file"
"$PERF" record -q -g -o - -- $TF >"$OUT/pipe.perf" 2>"$OUT/pipe.perf-record.log" || fail "perf record -o - failed"
check pipe 0.99
# (3x the samples of threefuncs 4: ld.so's start-up frames, named apart
# by a sample or two, stay under 5% of the stacks)
perf_rec dwarf --call-graph dwarf,8192 -o "$OUT/dwarf.perf" -- $WL/threefuncs 12
check dwarf 0.95

note "exec: sh runs a loop, then execs threefuncs: each sample under the name it ran under"
EX="i=0; while [ \$i -lt 100000 ]; do i=\$((i+1)); done; exec $TF"
perf_rec exec -e cpu-clock -o "$OUT/exec.perf" -- sh -c "$EX"
"$PERF" report -i "$OUT/exec.perf" --stdio --no-children -g none --sort comm -n >"$OUT/exec.comm" 2>/dev/null ||
	fail "exec: perf report failed"
"$DOMPROF" report -q -i "$OUT/exec.perf" -s comm --format csv >"$OUT/exec.csv" 2>/dev/null ||
	fail "exec: domprof report failed"
python3 "$CHECK" comms "$OUT/exec.comm" "$OUT/exec.csv" || fail_later "exec: samples per command differ from perf's"
python3 "$CHECK" comms "$OUT/exec.comm" "$OUT/exec.csv" --merge || fail_later "control: one name per pid passed"
note "exec, recorded by domprof: dash's samples under sh, threefuncs' under threefuncs"
record exec -- sh -c "$EX"
"$DOMPROF" report -q -i "$OUT/exec.data" -s comm --format csv >"$OUT/exec-dp.csv" 2>/dev/null ||
	fail "exec: domprof report of its recording failed"
python3 "$CHECK" imagecomm "$OUT/exec-dp.csv" dash=sh threefuncs=threefuncs ||
	fail_later "exec: domprof's recording names its samples otherwise"
python3 "$CHECK" imagecomm "$OUT/exec-dp.csv" dash=sh threefuncs=threefuncs --merge ||
	fail_later "control: one name per pid passed"

note "the flame graph of a perf.data against domprof's recording of the same workload"
record dp -g -- $TF
"$DOMPROF" export -i "$OUT/dp.data" --format folded >"$OUT/dp.folded" 2>/dev/null || fail "domprof export of dp.data"
"$PERF" record -q -g -o "$OUT/g2.perf" -- $TF >/dev/null 2>&1 || fail "perf record"
"$DOMPROF" export -i "$OUT/g2.perf" --format folded >"$OUT/g2.folded" 2>/dev/null || fail "domprof export of g2.perf"
python3 "$CHECK" same "$OUT/g2.folded" "$OUT/dp.folded" 0.90 || fail_later "perf.data and domprof recording differ"
python3 "$CHECK" same "$OUT/g2.folded" "$OUT/dp.folded" 0.90 --swap || fail_later "control: swapped functions passed"
[ "$FAILED" = 0 ] || exit 1
echo "perfdata-crosscheck: passed"
