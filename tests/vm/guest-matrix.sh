#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The live kernel matrix: guests booted from kernels of Debian's archive
# (tests/vm/kernels.sh) chosen to cover the layouts the other live tests
# do not, each recorded passively with no symbol option (everything from
# guest memory) in ONE boot:
#   k510: 5.10 generic, KASLR off, 4 vCPUs (kallsyms "base-relative
#         abs-percpu, offsets first", ORC v1, no pcpu_hot);
#   k619: 6.19 rt-amd64, KASLR on, 1 vCPU, 5-level paging (kallsyms
#         "base-relative, names first" without absolute per-cpu, ORC v3,
#         PREEMPT_RT task_struct);
#   k73:  7.3 cloud-amd64, KASLR on, 4 vCPUs, 5-level paging
#         (place-relative kallsyms, ORC v4).
# 5-level paging: QEMU's `-cpu max` offers LA57 and Debian's kernels use
# it; the guest says so (la57 in its /proc/cpuinfo), and the record's
# line must say "5-level paging (cr4.LA57)" (test-guest-la57.sh has the
# control: the same guest taken for a 4-level one names no process).
# The guest copies its own /proc/kallsyms to a second serial port, prints
# its `ps`, and loops dd (one per vCPU, each pinned to its vCPU). One
# `record -g` of a few seconds, then:
#   (a) symbols: every non-module symbol of the copy is in the table read
#       from memory at the same address; the recording with the copy
#       embedded instead reports alike (diff similarity >= 0.99); control:
#       the copy moved by 2 MiB scores < 0.3;
#   (b) processes: every process of the guest's ps (pid, ppid, comm) has
#       a TASK record with that pid, parent and comm; each dd is a "[guest user] dd (PID)"
#       row with the pid the guest printed, and its kernel samples carry
#       that pid; control: a pid no process has selects no sample;
#   (c) chains: of the dd loop's chains whose leaf is its clear_user-style
#       function (leaf clear_user*/rep_stos*, or a chain through read_zero
#       or iov_iter_zero), >= 90% pass through vfs_read and end at
#       entry_SYSCALL_64*; control: the same guest's stacks unwound by the
#       same unwinder with every ORC ip moved by 4 KiB (test-tool
#       guest-orc --orc-shift, 80 stops) pass the same check in < 50%,
#       where test-tool with the guest's own table passes it (>= 90%);
#   (d) with 4 vCPUs: samples on every vCPU, and the current task read per
#       vCPU: on vCPU c most kernel samples carry the pid of the dd pinned
#       to c (the guest's init pins dd number i to vCPU i); control: the
#       pid of vCPU 0's dd is on (almost) no sample of the other vCPUs.
# A kernel is left out, with a note, only when Debian's archive cannot be
# reached and it is not cached.
# Usage: guest-matrix.sh ID... (run by test-guest-matrix-ID.sh, one boot
# each, so that tests/run.sh runs them beside the other VM tests)
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernels.sh"
[ $# -gt 0 ] || { echo "usage: $0 k510|k619|k73 ..." >&2; exit 2; }
vm_init "guest-matrix-$(echo "$*" | tr ' ' -)"
export DOMPROF_CACHE=$VM_OUT/cache
TT=$DOMPROF_TOP/build/san/test-tool
[ -x "$TT" ] || fail "no $TT (make fixtures)"

# The check of (c) on chains given leaf first, one per line, "a;b;c N"
# (N samples): prints "PASS LEAVES".
CHAIN_CHECK='
	{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
	  for (i = 1; i <= k; i++) sub(/(_\[k\]|\+0x[0-9a-f]+)$/, "", f[i])
	  leaf = f[1]; rd = 0
	  for (i = 1; i <= k; i++) if (f[i] ~ /^(read_zero|iov_iter_zero)$/) rd = 1
	  if (leaf !~ /^(clear_user|__clear_user|rep_stos)/ && !rd) next
	  l += n; v = 0
	  for (i = 2; i <= k; i++) if (f[i] == "vfs_read") v = 1
	  if (v && f[k] ~ /^entry_SYSCALL_64/) p += n }
	END { print p + 0, l + 0 }'

check_kernel() {
	local id=$1 series=$2 flavor=$3 kaslr=$4 smp=$5 dur=${6:-5} cpu=${7:-}
	if ! vm_kernel_fetch "$series" "$flavor"; then
		[[ $VM_KERR == "archive unreachable:"* ]] || fail "$id: $VM_KERR"
		note "$id: not checked: $VM_KERR"
		return 0
	fi
	note "$id: kernel $VM_KVER ($VM_KERNEL), kaslr=$kaslr smp=$smp${cpu:+ cpu=$cpu}"
	# noirqdebug: the rt kernel (interrupt handlers in threads) otherwise
	# disables the second serial port's IRQ ("irq 3: nobody cared") and the
	# kallsyms copy crawls by polling
	vm_boot "$id" run=dd kaslr="$kaslr" kallsyms=gz ps=1 smp="$smp" append=noirqdebug ${cpu:+cpu=$cpu}
	local d sock data; d=$(vm_dir "$id"); sock=$(vm_sock "$id"); data=$d/rec.data
	tr -d '\r' <"$d/kallsyms.txt" >"$d/copy.txt"
	tr -d '\r' <"$d/console.log" | sed -n 's/^domprof-guest: ps  *//p' | awk '$1 ~ /^[0-9]+$/' >"$d/ps.txt"
	local pids; pids=$(tr -d '\r' <"$d/console.log" | sed -n 's/^domprof-guest: pids *//p' | head -n 1)
	[ -s "$d/ps.txt" ] && [ "$(wc -w <<<"$pids")" = "$smp" ] || fail "$id: the guest printed no ps list or not $smp dd pids ($pids)"

	vm_domprof "$id-record.log" record -g -f -F 500 -d "$dur" -o "$data" --domain "$id=gdb:unix:$sock"
	# The start-up (tables, BTF, task list: 9-16 MB with the VM paused)
	# counts in -d; on a host loaded enough that it took about all of it,
	# once more for twice as long (the places of the tables then come
	# from the host cache: a shorter start-up)
	local ns; ns=$(sed -n "s/.* $id: \([0-9]*\) samples (.*/\1/p" "$VM_OUT/$id-record.log" | head -n 1)
	if [ "${ns:-0}" -lt $((smp > 1 ? 200 * smp : 400)) ]; then
		note "$id: only ${ns:-0} samples in $dur s (the start-up took most of it): recording again for $((2 * dur)) s"
		vm_domprof "$id-record.log" record -g -f -F 500 -d $((2 * dur)) -o "$data" --domain "$id=gdb:unix:$sock"
	fi
	grep -q "$id: .*kernel symbols from guest memory" "$VM_OUT/$id-record.log" ||
		fail "$id: kernel symbols were not read from guest memory"
	grep -q "$id: .*call chains by ORC (" "$VM_OUT/$id-record.log" || fail "$id: no ORC call chains"
	local info; info=$(grep -m1 "$id: " "$VM_OUT/$id-record.log")
	if [ "$cpu" = max ]; then
		grep -q '^domprof-guest: la57' <(tr -d '\r' <"$d/console.log") ||
			fail "$id: the guest does not use 5-level paging (no la57 in its /proc/cpuinfo)"
		grep -q "$id: .*5-level paging (cr4.LA57)" "$VM_OUT/$id-record.log" ||
			fail "$id: the record's line does not say 5-level paging: $info"
	fi

	# ---- (a) symbols ----
	"$TT" symtab get "$data" "$id" "$d/mem.txt" || fail "$id: no embedded table"
	python3 "$DOMPROF_TOP/tests/vm/symbols-agree.py" "$d/copy.txt" "$d/mem.txt" >"$d/agree.txt" || { cat "$d/agree.txt"; fail "$id: the table from memory disagrees with the copy"; }
	sed 's/^/    /' "$d/agree.txt"
	local nsyms; nsyms=$(sed -n 's/^copy \([0-9]*\) names.*/\1/p' "$d/agree.txt")
	"$TT" symtab set "$data" "$id" "$d/copy.txt" "$d/copy.data" || fail "$id: symtab set failed"
	"$DOMPROF" diff --domain-a "$id" --domain-b "$id" --kernel-only "$data" "$d/copy.data" >"$d/diff.txt" 2>&1 ||
		fail "$id: diff failed: $(tail -n 1 "$d/diff.txt")"
	local sim; sim=$(sed -n 's/^similarity: *//p' "$d/diff.txt" | tail -n 1)
	awk -v s="$sim" 'BEGIN { exit !(s >= 0.99) }' || { head -n 20 "$d/diff.txt"; fail "$id: similarity with the same boot's kallsyms $sim < 0.99"; }
	vm_shift_kallsyms "$d/copy.txt" "$d/shifted.txt"
	"$TT" symtab set "$data" "$id" "$d/shifted.txt" "$d/shifted.data" || fail "$id: symtab set (shifted) failed"
	"$DOMPROF" diff --domain-a "$id" --domain-b "$id" --kernel-only "$data" "$d/shifted.data" >"$d/wdiff.txt" 2>&1 ||
		fail "$id: diff (shifted) failed"
	local wsim; wsim=$(sed -n 's/^similarity: *//p' "$d/wdiff.txt" | tail -n 1)
	awk -v s="$wsim" 'BEGIN { exit !(s < 0.3) }' || fail "$id: control: a table moved by 2 MiB still scores $wsim (>= 0.3)"

	# ---- (b) processes ----
	"$DOMPROF" dump --type TASK "$data" >"$d/tasks.txt" 2>&1 || fail "$id: dump --type TASK failed"
	local n=0 pid ppid comm
	while read -r pid ppid comm; do
		# ps and sed printed the list and have exited since
		[ "$comm" = ps ] || [ "$comm" = sed ] || [ "$comm" = sleep ] && continue
		# /proc shows a kworker's comm with its workqueue appended after a
		# "-" (task->comm is the part before, which may hold a "-" itself:
		# "kworker/R-kthro")
		local pre=0
		[[ $comm == kworker/* ]] && { comm=${comm%%-*}; pre=1; }
		awk -v p="$pid" -v pp="$ppid" -v c="$comm" -v pre=$pre '{ for (i = 1; i <= NF; i++) {
				if ($i == "pid=" p) fp = 1; if ($i == "ppid=" pp) fpp = 1
				if ($i == "comm=" c || (pre && index($i, "comm=" c "-") == 1)) fc = 1 }
			if (fp && fpp && fc) f = 1; fp = fpp = fc = 0 } END { exit !f }' "$d/tasks.txt" ||
			fail "$id: the guest's ps says pid $pid ppid $ppid '$comm'; no TASK record has all three"
		n=$((n + 1))
	done <"$d/ps.txt"
	[ "$n" -ge 10 ] || fail "$id: only $n processes of the guest's ps compared"
	"$DOMPROF" report -q -i "$data" --domain "$id" -l --by-process --format csv >"$d/procs.csv" 2>&1 || fail "$id: report --by-process failed"
	local p ks
	for p in $pids; do
		grep -q ",\[guest user\] dd ($p)," "$d/procs.csv" || { head -n 8 "$d/procs.csv"; fail "$id: no '[guest user] dd ($p)' row"; }
		"$DOMPROF" report -q -i "$data" --domain "$id" --mode kernel --pid "$p" --format csv >"$d/pid-$p.csv" 2>&1 ||
			fail "$id: report --pid $p failed"
		ks=$(awk -F, 'NR > 1 { n += $1 } END { print n + 0 }' "$d/pid-$p.csv")
		[ "$ks" -gt 0 ] || fail "$id: no guest kernel samples carry dd's pid $p"
	done
	# control: a pid no process of the guest has
	local bad=$(( $(sort -n "$d/ps.txt" | tail -n 1 | cut -d' ' -f1) + 1000 ))
	"$DOMPROF" report -q -i "$data" --domain "$id" --pid "$bad" --format csv >"$d/pid-bad.csv" 2>&1 || : >"$d/pid-bad.csv"
	ks=$(awk -F, 'NR > 1 { n += $1 } END { print n + 0 }' "$d/pid-bad.csv")
	[ "$ks" -eq 0 ] || fail "$id: control: $ks samples carry pid $bad, which no process has"

	# ---- (c) chains ----
	"$DOMPROF" export --format folded --domain "$id" --mode kernel -i "$data" -o "$d/k.folded" 2>"$d/export.err" ||
		fail "$id: export failed: $(tail -n 1 "$d/export.err")"
	# folded stacks are root first (domain, comm, the user part, then the
	# kernel frames marked _[k]): the kernel frames, reversed to leaf first
	local thr leaves
	read -r thr leaves < <(awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";"); o = ""
		for (i = k; i >= 1; i--) if (f[i] ~ /_\[k\]$/) o = o (o == "" ? "" : ";") f[i]
		if (o != "") print o, n }' "$d/k.folded" | awk "$CHAIN_CHECK")
	note "$id: clear_user-style chains through vfs_read to entry_SYSCALL_64: $thr of $leaves"
	[ "$leaves" -ge 30 ] || { sort -t' ' -k2,2nr "$d/k.folded" | head -n 5; fail "$id: only $leaves dd read chains"; }
	[ $((thr * 10)) -ge $((leaves * 9)) ] || { sort -t' ' -k2,2nr "$d/k.folded" | head -n 5; fail "$id: only $thr of $leaves dd read chains reach entry_SYSCALL_64 through vfs_read"; }
	local chains=$((100 * thr / leaves))

	# ---- (d) vCPUs ----
	local cpus=1
	if [ "$smp" -gt 1 ]; then
		"$DOMPROF" dump --type SAMPLE "$data" >"$d/samples.txt" 2>&1 || fail "$id: dump --type SAMPLE failed"
		# pids of the dd pinned to vCPU 0..smp-1
		local c=0 line
		cpus=0
		for p in $pids; do
			read -r line < <(awk -v c="$c" -v p="$p" '
				{ cpu = pid = mode = ""
				  for (i = 1; i <= NF; i++) { if ($i ~ /^cpu=/) cpu = substr($i, 5); if ($i ~ /^pid=/) pid = substr($i, 5); if ($i ~ /^mode=/) mode = substr($i, 6) }
				  if (cpu != c) next
				  t++; if (mode ~ /kernel/) { k++; if (pid == p) m++ } }
				END { print t + 0, k + 0, m + 0 }' "$d/samples.txt")
			read -r tot kern mine <<<"$line"
			note "$id: vCPU $c: $tot samples, $kern in the kernel, $mine of them with the pid of its dd ($p)"
			[ "$tot" -ge 20 ] || fail "$id: vCPU $c has only $tot samples"
			[ $((mine * 2)) -gt "$kern" ] || fail "$id: vCPU $c: only $mine of its $kern kernel samples carry the pid of the dd pinned to it ($p)"
			cpus=$((cpus + 1)); c=$((c + 1))
		done
		# control: pinned elsewhere, dd does not run there
		p=${pids%% *}
		read -r line < <(awk -v p="$p" '{ cpu = pid = ""
			for (i = 1; i <= NF; i++) { if ($i ~ /^cpu=/) cpu = substr($i, 5); if ($i ~ /^pid=/) pid = substr($i, 5) }
			if (cpu != "0" && pid == p) w++ } END { print w + 0 }' "$d/samples.txt")
		[ "$line" -le 2 ] || fail "$id: control: $line samples of vCPUs other than 0 carry the pid of the dd pinned to vCPU 0 ($p)"
	fi

	# ---- (c) control, last: test-tool leaves the VM stopped ----
	# stop_chains NAME ARGS: test-tool guest-orc ARGS --stops=80 on this
	# guest; sets cthr and cleaves (the check of (c) on its chains, leaf
	# first, without the user frame: an address test-tool does not name)
	local cthr cleaves
	stop_chains() {
		local nm=$1; shift
		timeout -k 5 150 "$TT" guest-orc "$@" --stops=80 "gdb:$sock" "$d/mem.txt" \
			>"$d/$nm-chains.txt" 2>"$d/$nm.err" || { cat "$d/$nm.err"; fail "$id: test-tool guest-orc $* failed"; }
		read -r cthr cleaves < <(sed -n 's/^chain [^:]*: //p' "$d/$nm-chains.txt" |
			awk '{ while (sub(/ <- 0x[0-9a-f]+$/, "")); gsub(/ <- /, ";"); print $0, 1 }' | awk "$CHAIN_CHECK")
	}
	# the same tool and check with the guest's table pass
	stop_chains stops
	note "$id: test-tool's unwinder, 80 stops: $cthr of $cleaves dd read chains pass"
	[ "$cleaves" -ge 3 ] || fail "$id: only $cleaves dd read chains in 80 stops"
	[ $((cthr * 10)) -ge $((cleaves * 9)) ] || fail "$id: test-tool's unwinder: only $cthr of $cleaves dd read chains pass"
	stop_chains control --orc-shift=0x1000
	note "$id: control (ORC ips moved by 4 KiB): $cthr of $cleaves dd read chains pass"
	[ "$cleaves" -ge 3 ] || fail "$id: control: only $cleaves dd read chains in 80 stops"
	[ $((cthr * 2)) -lt "$cleaves" ] || fail "$id: control: with the ORC ips moved by 4 KiB $cthr of $cleaves chains still pass"
	vm_kill "$id"
	echo "$id ($VM_KVER): $nsyms names at their addresses (similarity $sim, shifted $wsim); $n processes of ps named; chains $thr/$leaves ($chains%) to entry; $cpus vCPUs with their dd current"
	sed 's/^/    /' <<<"$info"
}

for id in "$@"; do
	case $id in
	k510) check_kernel k510 5.10 amd64 0 4 6 ;;
	k619) check_kernel k619 6.19 rt-amd64 1 1 10 max ;;
	k73) check_kernel k73 7.3 cloud-amd64 1 4 10 max ;;
	*) fail "unknown kernel $id" ;;
	esac
done
note "live kernel matrix ok: $*"
