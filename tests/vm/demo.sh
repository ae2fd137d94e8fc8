#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make demo-vm`: boots the test guest (Debian's kernel, busybox, a loop of
# dd if=/dev/zero of=/dev/null), records the host (-a) and the guest
# through its gdbstub together for a few seconds, and prints the
# whole-system report. Nothing of domprof runs inside the guest, and
# nothing is copied out of it: the guest kernel's symbols, KASLR offset
# and processes are read from its memory through the stub.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
export TEST_OUT=${TEST_OUT:-$TOP/build/demo}
export DOMPROF=${DOMPROF:-$TOP/build/domprof}
. "$TOP/tests/vm/lib.sh"
SECS=${DEMO_SECONDS:-5}
NOTE_QUIET=1
vm_init demo
echo "== booting a guest (qemu TCG, Debian kernel $(basename "$VM_KDIR"), 1 vCPU) that loops dd"
vm_boot vm1 smp=1 run=dd kaslr=1
F=$VM_OUT/demo.dp
SPEC="vm1=gdb:unix:$(vm_sock vm1)"
echo "== domprof record -a --domain $SPEC -d $SECS -o $F"
"$DOMPROF" record -a --domain "$SPEC" -d "$SECS" -o "$F" || fail "record failed"
cat <<'TXT'

== domprof report -l
Each row is one function of one domain. "host" rows are the host's own
processes and kernel: qemu-system-x86_64 is the VMM running the guest
under TCG, and host [anon] is mostly the guest code TCG translated into
qemu's anonymous code buffer. "vm1" rows come from the guest, sampled from outside by
stopping it through QEMU's gdbstub and reading each vCPU's rip/cs/cr3:
[guest.kernel] functions are named with the symbol table the guest kernel
keeps in its own memory, found and decoded from outside (KASLR is on:
the offset follows from it); clear_user_rep_good zeroes dd's read
buffer, the syscall entry/exit path follows. Guest user time is named per
process from the guest's task list: [guest user] dd (PID).

TXT
"$DOMPROF" report -l -i "$F" | head -n "${DEMO_LINES:-45}"
echo
echo "(full report: $DOMPROF report -l -i $F; one domain: --domain vm1)"
