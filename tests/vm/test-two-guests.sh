#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two guests sampled at once stay apart: vm1 loops dd (clear_user* on
# top), vm2 reads /dev/urandom (chacha_permute on top). Neither
# domain's profile may carry the other's signature.
set -u
. "$(dirname "$0")/lib.sh"
vm_init two-guests
vm_kallsyms_nokaslr
vm_boot vm1 smp=1 run=dd
vm_boot vm2 smp=1 run=urandom
F=$VM_OUT/two.dp
vm_domprof record.log record \
	--domain "vm1=gdb:unix:$(vm_sock vm1),kallsyms=$VM_KALLSYMS" \
	--domain "vm2=gdb:unix:$(vm_sock vm2),kallsyms=$VM_KALLSYMS" -d 5 -o "$F"
vm_report_csv "$VM_OUT/all.csv" -l -i "$F"
vm_check_dd "$VM_OUT/all.csv" vm1
vm_check_urandom "$VM_OUT/all.csv" vm2
# --domain picks one: the same rows as in the full report.
vm_report_csv "$VM_OUT/vm2.csv" -l --domain vm2 -i "$F"
[ "$(vm_samples "$VM_OUT/vm2.csv" vm2)" = "$(vm_samples "$VM_OUT/all.csv" vm2)" ] ||
	fail "--domain vm2 counts $(vm_samples "$VM_OUT/vm2.csv" vm2) samples, the full report $(vm_samples "$VM_OUT/all.csv" vm2)"
[ "$(vm_samples "$VM_OUT/vm2.csv" vm1)" = 0 ] || fail "--domain vm2 shows vm1 rows"
echo "PASS: two guests kept apart"
