#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A 2-vCPU guest runs one dd per vCPU (pinned with taskset). The sampler
# must read every vCPU: the dump has samples of domain vm1 with cpu 0 and
# with cpu 1, in comparable numbers, and the profile is dd's.
set -u
. "$(dirname "$0")/lib.sh"
vm_init smp
vm_kallsyms_nokaslr
vm_boot vm1 smp=2 run=dd
F=$VM_OUT/smp.dp
vm_domprof record.log record --domain "vm1=gdb:unix:$(vm_sock vm1),kallsyms=$VM_KALLSYMS" -d 5 -o "$F"
timeout -k 10 "$VM_CMD_TIMEOUT" "$DOMPROF" dump "$F" >"$VM_OUT/dump.txt" 2>&1 || fail "domprof dump failed: $(tail -n 1 "$VM_OUT/dump.txt")"
# Count SAMPLE records per cpu while the current domain is vm1's.
read -r c0 c1 other < <(vm_dump_cpus "$VM_OUT/dump.txt" vm1)
note "vm1 samples per vCPU: cpu0=$c0 cpu1=$c1 other=$other"
[ "$c0" -ge 50 ] || fail "vCPU 0 has $c0 samples"
[ "$c1" -ge 50 ] || fail "vCPU 1 has $c1 samples"
[ "$other" -eq 0 ] || fail "$other samples of vm1 name a vCPU other than 0 and 1"
# Both vCPUs are sampled at each stop, so they get about the same count.
[ $((c0 * 2)) -ge "$c1" ] && [ $((c1 * 2)) -ge "$c0" ] || fail "vCPU sample counts too far apart: $c0 vs $c1"
vm_report_csv "$VM_OUT/report.csv" -l --domain vm1 -i "$F"
vm_check_dd "$VM_OUT/report.csv" vm1
echo "PASS: both vCPUs sampled"
