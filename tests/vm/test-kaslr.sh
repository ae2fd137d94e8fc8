#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A guest booted with KASLR on (no nokaslr): its kernel runs at a random
# offset. It is resolved twice: (a) with kallsyms copied from this very
# boot (through ttyS1), which needs no offset; (b) with kaslr=auto and the
# cached kallsyms of a nokaslr boot given as a System.map (the same
# symbols, unrelocated): the offset domprof finds must be the true one
# (difference of _stext in the two tables), and both give dd's profile
# with the same top functions.
set -u
. "$(dirname "$0")/lib.sh"
vm_init kaslr
vm_kallsyms_nokaslr
vm_boot vm1 smp=1 run=dd kaslr=1 kallsyms=1
KS=$(vm_dir vm1)/kallsyms.txt
stext() { awk '$3 == "_stext" { print $1; exit }' "$1"; }
a=$(stext "$KS") b=$(stext "$VM_KALLSYMS")
[ -n "$a" ] && [ -n "$b" ] || fail "no _stext in the kallsyms copies"
off=$(printf '0x%x' $((0x$a - 0x$b)))
note "_stext at 0x$a, unrelocated 0x$b: KASLR offset $off"
[ "$off" != 0x0 ] || fail "the guest booted without KASLR (offset 0): the test would prove nothing"
sock=$(vm_sock vm1)

vm_domprof record-a.log record --domain "vm1=gdb:unix:$sock,kallsyms=$KS" -d 4 -o "$VM_OUT/a.dp"
vm_report_csv "$VM_OUT/a.csv" -l --domain vm1 -i "$VM_OUT/a.dp"
vm_check_dd "$VM_OUT/a.csv" vm1

vm_domprof record-b.log record --domain "vm1=gdb:unix:$sock,sysmap=$VM_KALLSYMS,kaslr=auto" -d 4 -o "$VM_OUT/b.dp"
grep -qi -- "$off" "$VM_OUT/record-b.log" ||
	fail "record with kaslr=auto did not report the offset $off: $(grep -i kaslr "$VM_OUT/record-b.log")"
vm_report_csv "$VM_OUT/b.csv" -l --domain vm1 -i "$VM_OUT/b.dp"
vm_check_dd "$VM_OUT/b.csv" vm1

# Same workload, same kernel: the two kernel profiles agree (diff's
# similarity, the sum of the smaller shares; two runs of dd measured
# 0.8-0.9), while the unrelocated table without the offset (kaslr=0) names
# other functions and must score far lower: the check can fail.
sim() { "$DOMPROF" diff --domain vm1 --kernel-only "$1" "$2" 2>/dev/null | sed -n 's/^similarity: //p' | tail -n 1; }
s_ab=$(sim "$VM_OUT/a.dp" "$VM_OUT/b.dp")
note "top 5 with kallsyms: $(vm_top "$VM_OUT/a.csv" vm1 5 | tr '\n' ' ')"
note "top 5 with kaslr=auto: $(vm_top "$VM_OUT/b.csv" vm1 5 | tr '\n' ' ')"
note "similarity kallsyms vs kaslr=auto: $s_ab"
awk -v s="$s_ab" 'BEGIN { exit !(s != "" && s >= 0.6) }' || fail "the two views differ: similarity $s_ab < 0.6"
vm_domprof record-c.log record --domain "vm1=gdb:unix:$sock,sysmap=$VM_KALLSYMS,kaslr=0" -d 2 -o "$VM_OUT/c.dp"
s_ac=$(sim "$VM_OUT/a.dp" "$VM_OUT/c.dp")
note "similarity kallsyms vs the unrelocated table with kaslr=0: $s_ac"
awk -v s="$s_ac" 'BEGIN { exit !(s != "" && s < 0.3) }' || fail "a wrong offset still scores $s_ac (>= 0.3)"
echo "PASS: KASLR guest resolved with same-boot kallsyms and with kaslr=auto ($off)"
