#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A guest with 5-level paging, read passively from its own memory.
#
# Debian's 6.1 kernel booted with QEMU's -cpu max (under TCG it offers
# LA57, and the kernel uses it: its direct map, vmalloc'd stacks and
# per-CPU areas then lie below 0xffff800000000000), KASLR on, 1 vCPU
# looping dd. The guest says it uses 5-level paging (la57 stays in its
# /proc/cpuinfo only then). One `record -g` with no symbol option:
#   - the kernel's symbols come from guest memory and the dd profile is
#     the known one (vm_check_dd: clear_user* on top, the syscall path);
#   - the info line says 5-level paging (from cr4.LA57) and a task list
#     with the current task per sample;
#   - processes are named: dd has >= 50% of the guest's samples (by the
#     current task), a "[guest user] dd (PID)" row with the pid the
#     guest printed, and its TASK record carries its asid (cr3);
#   - chains: >= 90% of the clear_user* samples go through vfs_read up to
#     entry_SYSCALL_64.
# Control that must fail: the same recording with paging=4 (the guest
# taken for a 4-level one, as before 5-level support) names no process
# (page_offset_base refused) and completes no such chain.
set -u
. "$(dirname "$0")/lib.sh"
vm_init guest-la57
export DOMPROF_CACHE=$VM_OUT/cache
vm_boot g smp=1 run=dd kaslr=1 ps=1 cpu=max
D=$(vm_dir g)
sock=$(vm_sock g)
grep -q '^domprof-guest: la57' <(tr -d '\r' <"$D/console.log") ||
	fail "the guest does not use 5-level paging (no la57 flag in its /proc/cpuinfo)"
dpid=$(tr -d '\r' <"$D/console.log" | sed -n 's/^domprof-guest: pids *//p' | head -n 1)
[ -n "$dpid" ] || fail "the guest printed no workload pid"
note "guest uses 5-level paging; dd pid $dpid"

# rec NAME EXTRA: record -g the guest for 5 s (spec options EXTRA)
rec() {
	vm_domprof "$1.log" record -g -f -F 500 -d 5 -o "$VM_OUT/$1.data" --domain "vmp=gdb:unix:$sock$2"
}
# dd_share NAME: dd's percent of the domain's samples (by comm)
dd_share() {
	"$DOMPROF" report -q -i "$VM_OUT/$1.data" --domain vmp -s comm --format csv >"$VM_OUT/$1.comm.csv" 2>&1 ||
		fail "report -s comm of $1 failed"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "comm") c = i; next }
		{ t += $1; if ($c == "dd") d += $1 } END { printf "%d\n", t ? 100 * d / t : 0 }' "$VM_OUT/$1.comm.csv"
}
# chains NAME: "THROUGH LEAVES": clear_user* leaf samples, and those of
# them whose chain has vfs_read and entry_SYSCALL_64
chains() {
	"$DOMPROF" export --format folded --domain vmp --mode kernel -i "$VM_OUT/$1.data" -o "$VM_OUT/$1.folded" \
		2>"$VM_OUT/$1.folded.err" || fail "export of $1 failed: $(tail -n 1 "$VM_OUT/$1.folded.err")"
	awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
	       if (f[k] !~ /^clear_user/) next
	       l += n; if (s ~ /(^|;)entry_SYSCALL_64[a-z_]*(_\[k\])?;/ && s ~ /;vfs_read(_\[k\])?;/) t += n }
	     END { print t + 0, l + 0 }' "$VM_OUT/$1.folded"
}

rec la57 ""
log=$VM_OUT/la57.log
grep -q 'vmp: .*kernel symbols from guest memory' "$log" || fail "kernel symbols were not read from guest memory"
grep -q 'vmp: .*5-level paging (cr4.LA57)' "$log" || fail "the info line does not say 5-level paging (cr4.LA57)"
grep -q 'vmp: .*[1-9][0-9]* tasks, current task per sample' "$log" || fail "no task list or no current task per sample"
vm_report_csv "$VM_OUT/la57.csv" -l --domain vmp -i "$VM_OUT/la57.data"
vm_check_dd "$VM_OUT/la57.csv" vmp
sh=$(dd_share la57)
[ "$sh" -ge 50 ] || fail "dd has only $sh% of the guest's samples (processes not named?)"
"$DOMPROF" report -q -i "$VM_OUT/la57.data" --domain vmp -l >"$VM_OUT/la57.txt" 2>&1 || fail "report failed"
grep -q "\[guest user\] dd ($dpid)" "$VM_OUT/la57.txt" ||
	{ head -n 20 "$VM_OUT/la57.txt"; fail "no '[guest user] dd ($dpid)' row"; }
"$DOMPROF" dump --type TASK "$VM_OUT/la57.data" | grep -q "comm=dd asid=0x[1-9a-f]" ||
	fail "the TASK record of dd carries no asid"
read -r thr leaves < <(chains la57)
note "5-level guest: dd $sh% of samples; clear_user* chains through vfs_read to entry_SYSCALL_64: $thr of $leaves"
[ "$leaves" -ge 50 ] || fail "only $leaves clear_user* samples with chains"
[ $((thr * 10)) -ge $((leaves * 9)) ] || fail "only $thr of $leaves clear_user* chains reach entry_SYSCALL_64 through vfs_read"

# Control: the guest taken for a 4-level one.
rec ctl ",paging=4"
grep -q 'vmp: .*processes not named on Linux [0-9][^ ]* (page_offset_base is 0x[0-9a-f]*: not a kernel direct-map base with 4-level paging' \
	"$VM_OUT/ctl.log" || fail "control: paging=4 did not refuse the 5-level page_offset_base"
sh=$(dd_share ctl)
[ "$sh" -lt 50 ] || fail "control: with paging=4 dd still has $sh% of the samples"
read -r thr leaves < <(chains ctl)
[ $((thr * 10)) -lt $((leaves * 9)) ] || fail "control: with paging=4 $thr of $leaves chains are still complete"
note "control (paging=4): processes not named, dd $sh%, $thr of $leaves clear_user* chains complete"
vm_alive g || fail "the guest died"
vm_kill g
echo "PASS: a 5-level paging guest read passively"
