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
# The recorder's rate per domain (issue 18): a line per domain at the end
# of record, and info's rates section from the file's rate COUNTERS,
# whose sample count is the domain's samples in the file and whose
# requested rate is record's default 1000 Hz per vCPU. Control: the
# committed golden recording (made before these counters) has none.
vm_domprof info.txt info "$F"
rates_ok() { # rates_ok INFO DOMAIN: info's rates line agrees with the file
	local n c
	n=$(awk -v d="$2" '/^domains:/ { on = 1; next } on && /^[a-z]/ { on = 0 }
		on && $2 == d { print $4 }' "$1")
	c=$(sed -n "s/^  $2: requested 1000 Hz, achieved [0-9.]* Hz ([0-9.]*%) x 1 vCPU over [0-9.]* s, \([0-9]*\) samples, [0-9]* lost, recorder CPU [0-9.]* s .*/\1/p" "$1")
	[ -n "$n" ] && [ "$n" = "$c" ]
}
for d in vm1 vm2; do
	grep -q "^domprof record: rate $d: requested 1000 Hz, achieved " "$VM_OUT/record.log" ||
		fail "record printed no rate line for $d"
	rates_ok "$VM_OUT/info.txt" $d || { cat "$VM_OUT/info.txt"; fail "info: no rates line for $d matching its samples"; }
done
"$DOMPROF" info "$DOMPROF_TOP/tests/fixtures/golden/merged.data" >"$VM_OUT/golden-info.txt" 2>&1
rates_ok "$VM_OUT/golden-info.txt" vm1 && fail "control: the golden recording (no rate counters) passes the rates check"
note "rates: $(grep -h '^domprof record: rate' "$VM_OUT/record.log" | sed 's/^domprof record: rate //' | cut -d, -f1-2 | tr '\n' ';')"
vm_check_dd "$VM_OUT/all.csv" vm1
vm_check_urandom "$VM_OUT/all.csv" vm2
# --domain picks one: the same rows as in the full report.
vm_report_csv "$VM_OUT/vm2.csv" -l --domain vm2 -i "$F"
[ "$(vm_samples "$VM_OUT/vm2.csv" vm2)" = "$(vm_samples "$VM_OUT/all.csv" vm2)" ] ||
	fail "--domain vm2 counts $(vm_samples "$VM_OUT/vm2.csv" vm2) samples, the full report $(vm_samples "$VM_OUT/all.csv" vm2)"
[ "$(vm_samples "$VM_OUT/vm2.csv" vm1)" = 0 ] || fail "--domain vm2 shows vm1 rows"
echo "PASS: two guests kept apart"
