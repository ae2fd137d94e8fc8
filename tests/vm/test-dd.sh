#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A passive domain: a 1-vCPU guest loops `dd if=/dev/zero of=/dev/null
# bs=4k`; domprof samples it through the gdbstub for 5 s with the
# guest's own kallsyms. Known answer: the guest kernel's clear_user*
# (zeroing the read buffer) on top of that domain, the syscall entry/exit
# and read/write path among the next ones, all as [guest.kernel].
set -u
. "$(dirname "$0")/lib.sh"
vm_init dd
vm_kallsyms_nokaslr
vm_boot vm1 smp=1 run=dd
F=$VM_OUT/dd.dp
vm_domprof record.log record --domain "vm1=gdb:unix:$(vm_sock vm1),kallsyms=$VM_KALLSYMS" -d 5 -o "$F"
vm_report_csv "$VM_OUT/report.csv" -l --domain vm1 -i "$F"
awk -F, 'NR > 1 && $3 != "vm1"' "$VM_OUT/report.csv" | grep -q . &&
	fail "--domain vm1 shows rows of other domains"
[ "$(awk -F, 'NR == 2 { print $4 }' "$VM_OUT/report.csv")" = "[guest.kernel]" ] ||
	fail "top row's image is not [guest.kernel]: $(sed -n 2p "$VM_OUT/report.csv")"
vm_check_dd "$VM_OUT/report.csv" vm1
echo "PASS: dd guest profiled from the host"
