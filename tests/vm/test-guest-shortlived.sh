#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Short-lived guest processes named right in a passive recording (issue
# 34, item 7). The guest (1 vCPU, KASLR on, the agent inside) loops a
# shell script named "looper" that runs two names of gw spinning, alpha
# for 2N rounds then beta for N (work 2:1, N sized by the guest's own
# rate for ~300 and ~150 ms): a new process every ~150-300 ms, each
# forked under the shell's name and renamed by its exec, its task_struct
# and page tables reused from the last ones. One `record -g` takes the
# guest passively (gdbstub, names from guest memory) and actively (the
# agent: perf inside the guest, its COMM and fork records are the truth
# for pid and name) at once; shortlived-check.py then checks
#   - per command: alpha and beta shares within 5 points of the active
#     view's (the truth measured), the shell under 5% (a fork named by its
#     name before exec, or a task pointer taken for the process that had
#     it before, breaks these); over the processes both views saw whole,
#     the active alpha:beta split within 10 points of the 2:1 work (the
#     measurement is sound) and the passive one within 5 of the active;
#   - per pid: each process the two views share has the same name and a
#     share within 5 points;
#   - one process per sample: every "[guest user] NAME (PID)" user frame
#     of the passive folded stacks is under process NAME-PID.
# Controls that must fail the same checker: the passive CSV relabeled as
# the original recorder named it (each sample under the first pid that
# had its task_struct, the two alternating; the shell's name for the
# first three alphas), and the folded stacks with each user frame naming
# the previous pid.
# Not an extra boot of test-guest-procs.sh's guest: its two endless
# workloads would take two thirds of this one's CPU.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent-lib.sh"
vm_init guest-shortlived
agent_init
export DOMPROF_CACHE=$VM_OUT/cache
agent_boot g run=alt kaslr=1
sock=$(vm_sock g); port=$(agent_port g)
line=$(tr -d '\r' <"$VM_OUT/g/console.log" | grep -a 'agent-guest: alt looper' | head -n 1)
[ -n "$line" ] || fail "the guest did not start its workload"
note "guest: ${line#agent-guest: }"

data=$VM_OUT/alt.data
vm_domprof record.log record -f -g -F 500 -d 6 -o "$data" \
	--domain "vmp=gdb:unix:$sock" \
	--domain "vma=agent:127.0.0.1:$port,key=$AGENT_KEY"
grep -q 'vmp: .*current task per sample' "$VM_OUT/record.log" ||
	fail "the passive domain does not read the current task per sample"
for d in vmp vma; do
	"$DOMPROF" report -q -i "$data" --domain $d -s pid,comm --format csv >"$VM_OUT/$d.csv" 2>"$VM_OUT/$d.err" ||
		fail "report --domain $d failed: $(tail -n 1 "$VM_OUT/$d.err")"
done
"$DOMPROF" export --format folded --by-pid -i "$data" --domain vmp -o "$VM_OUT/vmp.folded" 2>"$VM_OUT/folded.err" ||
	fail "export --format folded failed: $(tail -n 1 "$VM_OUT/folded.err")"
CHECK=$(dirname "$0")/shortlived-check.py
python3 "$CHECK" "$VM_OUT/vmp.csv" "$VM_OUT/vma.csv" "$VM_OUT/vmp.folded" >"$VM_OUT/check.txt" 2>&1
rc=$?
sed 's/^/    /' "$VM_OUT/check.txt"
[ $rc -eq 0 ] || fail "short-lived processes misattributed (see above)"
"$DOMPROF" dump --type TASK "$data" | grep -q 'comm=alpha asid=0x' || fail "no TASK record names alpha"

# ---- Controls: the checker rejects the original recorder's naming ------------
# pid column and comm column of the passive CSV
hdr=$(head -n 1 "$VM_OUT/vmp.csv")
ip=$(echo "$hdr" | tr ',' '\n' | grep -nx pid | cut -d: -f1)
ic=$(echo "$hdr" | tr ',' '\n' | grep -nx comm | cut -d: -f1)
first=$(awk -F, -v p="$ip" -v c="$ic" 'NR > 1 && $c == "alpha" { print $p }' "$VM_OUT/vmp.csv" | sort -n | head -n 1)
# stale task pointers: each workload sample under the first pid that had
# its task_struct (the two alternate: alpha's and beta's)
awk -F, -v OFS=, -v p="$ip" -v c="$ic" -v f="$first" \
	'NR > 1 && ($c == "alpha" || $c == "beta") && $p >= f + 2 { $p = f + ($p - f) % 2 } { print }' \
	"$VM_OUT/vmp.csv" >"$VM_OUT/ctl-stale.csv"
# the name read before exec: the first three alphas keep the shell's name
awk -F, -v OFS=, -v p="$ip" -v c="$ic" -v f="$first" \
	'NR > 1 && $p <= f + 4 && $c == "alpha" { $c = "looper" } { print }' "$VM_OUT/vmp.csv" >"$VM_OUT/ctl-name.csv"
# the user frame of the process before
sed -E 's/\[guest user\] ([a-z]+) \(([0-9]+)\)/[guest user] \1 (PREV\2)/' "$VM_OUT/vmp.folded" |
	awk '{ while (match($0, /PREV[0-9]+/)) { n = substr($0, RSTART + 4, RLENGTH - 4) - 1;
		$0 = substr($0, 1, RSTART - 1) n substr($0, RSTART + RLENGTH) } print }' >"$VM_OUT/ctl.folded"
for c in "ctl-stale.csv vmp.folded" "ctl-name.csv vmp.folded" "vmp.csv ctl.folded"; do
	set -- $c
	if python3 "$CHECK" "$VM_OUT/$1" "$VM_OUT/vma.csv" "$VM_OUT/$2" >"$VM_OUT/ctl.txt" 2>&1; then
		cat "$VM_OUT/ctl.txt"
		fail "control: the checker accepts $1 with $2"
	fi
	note "control $1 $2 rejected: $(grep -m 1 '^FAIL' "$VM_OUT/ctl.txt")"
done

# The walk budget (issue 34, item 5): without the current task
# (current=0) each new process's address space triggers a task-list
# walk; with walk-ms=1 every walk is cut, and the end line counts them.
# Control: the same recording with walk-ms=10000 (a ~20-task walk takes
# milliseconds on any machine) cuts none.
for b in 1 10000; do
	vm_domprof "walk$b.log" record -f -F 200 -d 3 -o "$VM_OUT/walk$b.data" \
		--domain "vmp=gdb:unix:$sock,current=0,walk-ms=$b"
	cut=$(sed -n 's/.*vmp: .* \([0-9]*\) task-list walks\{0,1\} cut by the walk budget.*/\1/p' "$VM_OUT/walk$b.log")
	note "walk-ms=$b: ${cut:-0} walks cut"
	if [ "$b" = 1 ]; then
		[ "${cut:-0}" -gt 0 ] || { cat "$VM_OUT/walk$b.log"; fail "walk-ms=1 cut no task-list walk"; }
		"$DOMPROF" report -q -i "$VM_OUT/walk$b.data" --domain vmp -l >"$VM_OUT/walk$b.txt" 2>&1 ||
			fail "report of the walk-ms=1 recording failed"
	else
		[ -z "$cut" ] || fail "control: walk-ms=10000 cut $cut walks of a ~20-task guest"
	fi
done
vm_kill g
echo ok
