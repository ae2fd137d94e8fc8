#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Guest kernel call chains unwound from outside (record -g on a passive
# domain, collect/gdb_chains.c) against the guest kernel's own unwinder,
# on Debian's 6.12 kernel (the v3 ORC layout; 6.1's v1 layout is checked
# the same way by test-seed-experiment.sh, whose guest is the same). One
# 1-vCPU TCG guest, KASLR on, streams TCP over its loopback (netbench)
# with `domprof agent` inside; one `record -g` takes it passively (vmp)
# and actively (vma). Known answers (tests/vm/chains-lib.sh): the five
# hottest guest kernel functions have the same most frequent caller in
# both views and caller distributions of similarity >= 0.8; >= 90% of the
# passive chains end at an entry point; the recorder counted its chains.
# Control that must fail: a table moved by 4 KiB completes < 50%.
set -u
export VM_KMETA=${VM_KMETA:-linux-image-6.12-amd64}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent-lib.sh"
. "$(dirname "$0")/chains-lib.sh"
vm_init "guest-chains-${VM_KMETA#linux-image-}"
agent_init
export DOMPROF_CACHE=$VM_OUT/cache
agent_boot g run=netbench kaslr=1
sock=$(vm_sock g); port=$(agent_port g)
data=$VM_OUT/chains.data
echo "+ domprof record -g -F 1000 -d 10 --domain vmp=gdb:unix:$sock --domain vma=agent:..." >>"$VM_OUT/commands.log"
"$DOMPROF" record -g -f -F 1000 -d 10 -o "$data" --domain "vmp=gdb:unix:$sock" \
	--domain "vma=agent:127.0.0.1:$port,key=$AGENT_KEY" >"$VM_OUT/record.log" 2>&1 ||
	{ cat "$VM_OUT/record.log"; fail "record -g failed"; }
sed 's/^/    /' "$VM_OUT/record.log"
grep -q 'vmp: .*call chains by ORC (v3 .*, fast lookup table;' "$VM_OUT/record.log" || fail "vmp: the 6.12 ORC table (v3) and its fast lookup table were not read"
chains_check "$data" vmp vma
chains_control "$data" vmp "$sock"
vm_alive g || fail "the guest died"
[ "$(vm_status g)" = running ] || fail "the guest was left paused"
note "passive call chains agree with the guest kernel's own on ${VM_KMETA#linux-image-}"
