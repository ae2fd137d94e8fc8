#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The guest's processes read from guest memory alone (src/guest/layout.c,
# tasks.c): a real guest (Debian's kernel under TCG, VM_KMETA picks the
# series, GUEST_KASLR=1 boots with KASLR) spinning a workload, read
# through its gdbstub by `test-tool guest-tasks` with the kallsyms of the
# same boot. Known answers come from the guest itself: its init prints
# its workloads' pids and its own `ps` (pid, ppid, comm), and every
# process in that list must be in the task list with that comm and
# parent; kthreadd (pid 2) has no address space (asid 0) while init has
# one; the task current on the spinning vCPU is the workload, and its
# asid is the vCPU's cr3 without PCID and PTI bits. Controls that must
# fail: a kallsyms shifted by 2 MiB (another boot's) finds none of those
# names, nor does init_task alone shifted, and a wrong page_offset_base
# breaks the asid match.
# First, the real-kernel part of the layout unit test on the cached
# vmlinux files of both kernel series (a unit test cannot download them).
set -u
. "$(dirname "$0")/lib.sh"
TT=$DOMPROF_TOP/build/san/test-tool
UT=$DOMPROF_TOP/build/san/tests/test-guest-layout
[ -x "$TT" ] && [ -x "$UT" ] || fail "build test-tool and the unit tests first (make fixtures unit)"
series=${VM_KMETA:-linux-image-amd64}
vm_init "guest-tasks-${series#linux-image-}"

# ---- The layout unit test on the real .BTF of 6.1 and 6.12 ---------------
if [ -z "${GUEST_KASLR:-}" ]; then
	list=
	for meta in linux-image-amd64 linux-image-6.12-amd64; do
		VM_KMETA=$meta vm_kernel
		vm_vmlinux
		list+="$VM_VMLINUX:"
	done
	vm_kernel   # back to this test's own series
	DOMPROF_GUEST_VMLINUX=$list "$UT" >"$VM_OUT/unit.log" 2>&1 ||
		{ cat "$VM_OUT/unit.log"; fail "test-guest-layout failed on the real kernels"; }
	grep -c '\.BTF' "$VM_OUT/unit.log" | grep -qx 2 || fail "the unit test did not read both kernels' BTF"
	sed 's/^/    /' "$VM_OUT/unit.log"
fi

# ---- A live guest ------------------------------------------------------------
# Without KASLR the cached kallsyms of a nokaslr boot is this boot's too
# (saves the 20 s UART copy); with KASLR the copy of this very boot (CRLF).
if [ "${GUEST_KASLR:-0}" = 1 ]; then
	vm_boot g1 smp=1 run=spin kaslr=1 kallsyms=1 ps=1
	KS=$(vm_dir g1)/kallsyms.txt
else
	vm_kallsyms_nokaslr
	vm_boot g1 smp=1 run=spin ps=1
	KS=$VM_KALLSYMS
fi
D=$(vm_dir g1)
SOCK=$(vm_sock g1)
tr -d '\r' <"$D/console.log" | sed -n 's/^domprof-guest: ps  *//p' | awk '$1 ~ /^[0-9]+$/' >"$VM_OUT/ps.txt"
wl=$(tr -d '\r' <"$D/console.log" | sed -n 's/^domprof-guest: pids *//p' | head -n 1)
[ -s "$VM_OUT/ps.txt" ] || fail "the guest printed no ps list"
[ -n "$wl" ] || fail "the guest printed no workload pids"
note "guest ps: $(wc -l <"$VM_OUT/ps.txt") processes, workload pids: $wl"

run_tt() { # run_tt LOG ARGS...: test-tool guest-tasks, output in $VM_OUT/LOG
	local log=$VM_OUT/$1; shift
	timeout -k 5 60 "$TT" guest-tasks "$@" >"$log" 2>"$log.err"
}
run_tt tasks.txt --samples=5 "gdb:$SOCK" "$KS" || { cat "$VM_OUT/tasks.txt.err"; fail "test-tool guest-tasks failed"; }
sed 's/^/    /' "$VM_OUT/tasks.txt" | grep -v '^    task ' | head -n 30
grep '^    task ' <(sed 's/^/    /' "$VM_OUT/tasks.txt") | head -n 8
vm_alive g1 || fail "the guest died"
[ "$(vm_status g1)" = running ] || fail "the guest was left paused"

# Every process of the guest's ps is in the task list, with its comm and
# parent. (ps lists thread-group leaders too: the same set.) The ps and
# sed that printed the list have exited since; /proc shows a kworker's
# comm with its workqueue appended ("kworker/0:0-rcu"): task->comm is
# the part before.
tasks() { sed -n 's/^task //p' "$1"; }   # pid tgid ppid asid comm
n=0
while read -r pid ppid comm; do
	[ "$comm" = ps ] || [ "$comm" = sed ] && continue
	got=$(tasks "$VM_OUT/tasks.txt" | awk -v p="$pid" '$1 == p { print $3, $5 }')
	[ "$got" = "$ppid $comm" ] || [[ "$comm" == kworker/* && "$ppid $comm" == "$got"-* ]] ||
		fail "guest ps says pid $pid ppid $ppid '$comm'; the task list says '${got:-nothing}'"
	n=$((n + 1))
done <"$VM_OUT/ps.txt"
[ "$n" -ge 10 ] || fail "only $n processes compared"
tasks "$VM_OUT/tasks.txt" | awk '$1 == 1 && $5 == "init" { f = 1 } END { exit !f }' || fail "no init (pid 1)"
for p in $wl; do
	tasks "$VM_OUT/tasks.txt" | awk -v p="$p" '$1 == p && $5 == "gw" { f = 1 } END { exit !f }' ||
		fail "workload pid $p is not 'gw' in the task list"
done
# Address spaces: kernel threads have none; init and the workload have
# their own, different ones.
asid() { tasks "$VM_OUT/tasks.txt" | awk -v p="$1" '$1 == p { print $4 }'; }
[ "$(asid 2)" = 0x0 ] || fail "kthreadd (pid 2) has asid $(asid 2), expected 0x0"
a1=$(asid 1) aw=$(asid "${wl%% *}")
[ "$a1" != 0x0 ] && [ "$aw" != 0x0 ] && [ "$a1" != "$aw" ] || fail "init asid $a1, workload asid $aw: expected two distinct non-zero ones"
# The current task of the spinning vCPU: the workload, in its own address
# space (cr3 stripped of PCID and PTI's bit 12 equals its mm->pgd).
grep -q "^current 0 [0-9]* [0-9]* $aw gw asid-match=yes$" "$VM_OUT/tasks.txt" ||
	fail "the current task of vCPU 0 is not gw in asid $aw: $(grep '^current' "$VM_OUT/tasks.txt")"
ns=$(grep -c '^sample [0-9]* 0 gw asid-match=yes$' "$VM_OUT/tasks.txt")
[ "$ns" -ge 3 ] || fail "gw was current in only $ns of 5 stops of a vCPU that spins it"
note "task list matches the guest's ps ($n processes), kthreadd asid 0, current = gw in $aw ($ns/5 later stops)"
note "cost: $(grep '^cost' "$VM_OUT/tasks.txt" | tr '\n' ';')"

# ---- Controls ---------------------------------------------------------------
# A kallsyms shifted by 2 MiB: the BTF is not found where it says, or no
# process is named as the guest names them.
run_tt shifted.txt --shift=0x200000 "gdb:$SOCK" "$KS"
if tasks "$VM_OUT/shifted.txt" | awk '$5 == "init" || $5 == "gw" { f = 1 } END { exit !f }'; then
	fail "control: a kallsyms shifted by 2 MiB still names init or gw"
fi
note "control: shifted kallsyms: $(tail -n 1 "$VM_OUT/shifted.txt.err" "$VM_OUT/shifted.txt" 2>/dev/null | grep -v '^==>' | grep . | tail -n 1)"
# Only init_task 2 MiB off (the BTF found): the walk names nobody.
run_tt init.txt --shift=0x200000 --shift-only=init_task "gdb:$SOCK" "$KS"
grep -q '^layout task' "$VM_OUT/init.txt" || fail "control: --shift-only=init_task did not get past the layout"
if tasks "$VM_OUT/init.txt" | awk '$5 == "init" || $5 == "gw" { f = 1 } END { exit !f }'; then
	fail "control: init_task 2 MiB off still names init or gw"
fi
note "control: init_task+2MiB: $(grep -c '^task ' "$VM_OUT/init.txt") tasks, $(cat "$VM_OUT/init.txt.err" "$VM_OUT/init.txt" | grep -E '^walk|guest-tasks:' | head -n 1)"
# A page_offset_base 1 GiB off: the names stay, the asids no longer match cr3.
pob=$(sed -n 's/.*page_offset_base=\(0x[0-9a-f]*\).*/\1/p' "$VM_OUT/tasks.txt")
run_tt pob.txt --pob="$(printf '0x%x' $((pob + (1 << 30))))" "gdb:$SOCK" "$KS" || fail "test-tool with --pob failed"
grep -q '^current 0 .* gw asid-match=no$' "$VM_OUT/pob.txt" ||
	fail "control: a wrong page_offset_base still matches cr3: $(grep '^current' "$VM_OUT/pob.txt")"
note "control: page_offset_base+1GiB: gw found, asid no longer matches cr3"
vm_kill g1
echo ok
