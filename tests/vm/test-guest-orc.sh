#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The guest kernel's stacks unwound from the host (src/guest/orc.c) on a
# real guest: Debian's kernel (VM_KMETA picks the series) under TCG with
# KASLR, running dd (read/write syscalls). The kallsyms come from guest
# memory (test-tool guest-ksyms), the ORC tables too; then 40 times the VM
# runs ~20 ms and stops, and the stopped vCPU's kernel stack is unwound
# (test-tool guest-orc --stops) and printed symbolized. Known answers: at
# least 10 stops in the kernel; at least 80% of their chains complete
# (an end-of-stack entry or a user-mode pt_regs; measured 35-40 of 37-40:
# a stop in a retpoline thunk is cut on 6.12, ~5% of stops, so 90% would
# fail about one run in ten); every chain ending at
# the user boundary passes through entry_SYSCALL_64 or an asm_* entry
# just before the user rip. Control that must fail: a table that does not
# fit the code (every ip moved by 4 KiB: --orc-shift) completes fewer than
# half of the chains at 40 other stops.
set -u
. "$(dirname "$0")/lib.sh"
TT=$DOMPROF_TOP/build/san/test-tool
[ -x "$TT" ] || fail "build test-tool first (make fixtures)"
series=${VM_KMETA:-linux-image-amd64}
vm_init "guest-orc-${series#linux-image-}"
vm_boot g1 smp=1 run=dd kaslr=1
SOCK=$(vm_sock g1)
KS=$VM_OUT/kallsyms.txt
timeout -k 5 60 "$TT" guest-ksyms "gdb:$SOCK" >"$KS" 2>"$VM_OUT/ks.err" ||
	{ cat "$VM_OUT/ks.err"; fail "kallsyms from guest memory failed"; }
cat "$VM_OUT/ks.err"
ver=$(sed -n 's/.* version=\([^ ]*\).*/\1/p' "$VM_OUT/ks.err")
timeout -k 5 120 "$TT" guest-orc --version="$ver" --stops=40 "gdb:$SOCK" "$KS" >"$VM_OUT/chains.txt" \
	2>"$VM_OUT/orc.err" || { cat "$VM_OUT/orc.err"; fail "test-tool guest-orc failed"; }
cat "$VM_OUT/orc.err"
sed 's/^/    /' "$VM_OUT/chains.txt" | grep '^    chain' | head -n 40
vm_alive g1 || fail "the guest died"
[ "$(vm_status g1)" = running ] || fail "the guest was left paused"
st() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$VM_OUT/orc.err" | tail -n 1; }
kernel=$(st kernel) complete=$(st complete)
note "stops in the kernel: $kernel, complete chains: $complete"
[ "$kernel" -ge 10 ] || fail "only $kernel stops in the kernel"
[ $((complete * 100)) -ge $((kernel * 80)) ] || fail "only $complete of $kernel chains complete"
bad=$(grep '^chain user' "$VM_OUT/chains.txt" | grep -Ev '(entry_SYSCALL_64[a-z_]*|asm_[a-z_]*)\+0x[0-9a-f]+ <- 0x[0-9a-f]+$' | head -n 3)
[ -z "$bad" ] || fail "user-ended chains not through a syscall or interrupt entry: $bad"

timeout -k 5 120 "$TT" guest-orc --version="$ver" --orc-shift=0x1000 --stops=40 "gdb:$SOCK" "$KS" \
	>"$VM_OUT/chains-shift.txt" 2>"$VM_OUT/orc-shift.err" || { cat "$VM_OUT/orc-shift.err"; fail "the control run failed"; }
cat "$VM_OUT/orc-shift.err"
grep '^chain' "$VM_OUT/chains-shift.txt" | awk '{ print $2 }' | sort | uniq -c | sed 's/^/    control: /'
sk=$(sed -n "s/.* kernel=\([0-9]*\).*/\1/p" "$VM_OUT/orc-shift.err") sc=$(sed -n "s/.* complete=\([0-9]*\).*/\1/p" "$VM_OUT/orc-shift.err")
note "control (table shifted by 4 KiB): $sc of $sk chains complete"
[ "$sk" -ge 10 ] || fail "control: only $sk stops in the kernel"
[ $((sc * 2)) -lt "$sk" ] || fail "control: a table shifted by 4 KiB still completes $sc of $sk chains"
vm_alive g1 || fail "the guest died"
echo "guest kernel stacks unwound from the host: $complete of $kernel chains complete"
