#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host and guest recorded together (`-a` plus --domain): the report has
# both domains; among the host's samples is the VMM itself
# (qemu-system-x86_64 running the guest under TCG), and the guest domain
# still shows dd's kernel profile.
set -u
. "$(dirname "$0")/lib.sh"
vm_init host-guest
vm_kallsyms_nokaslr
vm_boot vm1 smp=1 run=dd
F=$VM_OUT/hg.dp
vm_domprof record.log record -a --domain "vm1=gdb:unix:$(vm_sock vm1),kallsyms=$VM_KALLSYMS" -d 5 -o "$F"
vm_report_csv "$VM_OUT/all.csv" -l -i "$F"
domains=$(awk -F, 'NR > 1 { print $3 }' "$VM_OUT/all.csv" | sort -u | tr '\n' ' ')
note "domains in the report: $domains"
host=$(awk -F, 'NR > 1 && $3 != "vm1" { print $3; exit }' "$VM_OUT/all.csv")
[ -n "$host" ] || fail "no host domain rows in the report"
[ "$(vm_samples "$VM_OUT/all.csv" "$host")" -ge 100 ] || fail "host domain has only $(vm_samples "$VM_OUT/all.csv" "$host") samples"
echo "top of the host domain ($host):"; vm_show "$VM_OUT/all.csv" "$host" 10
# The guest runs inside qemu: with two host CPUs and the guest busy, the
# VMM's own code is a large part of the host profile.
q=$(awk -F, -v d="$host" 'NR > 1 && $3 == d && $4 ~ /qemu-system-x86_64/ { n += $1 } END { print n + 0 }' "$VM_OUT/all.csv")
note "host samples in qemu-system-x86_64: $q"
[ "$q" -ge 20 ] || fail "the VMM (qemu-system-x86_64) is not visible among the host's samples"
# Guest kernel symbols never leak into the host domain and vice versa.
awk -F, -v d="$host" 'NR > 1 && $3 == d && $4 == "[guest.kernel]"' "$VM_OUT/all.csv" | grep -q . &&
	fail "[guest.kernel] rows in the host domain"
vm_check_dd "$VM_OUT/all.csv" vm1
echo "PASS: host and guest recorded together"
