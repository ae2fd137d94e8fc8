#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Guests that go away mid-recording: vm1 powers itself off (poweroff -f,
# 4 s after it is ready), vm2 is killed from the host (SIGKILL to qemu)
# 5 s into the recording. The host recording (-a) and the -d 9 recording go on
# to the end, each lost domain gets a message naming it, `domprof info`
# finds no damage, and the samples taken before each guest went away are
# in the report with the right profile.
set -u
. "$(dirname "$0")/lib.sh"
vm_init poweroff
vm_kallsyms_nokaslr
# vm1 boots last: its poweroff timer starts at its "ready" line, and the
# recording must already run when it fires.
vm_boot vm2 smp=1 run=urandom
vm_boot vm1 smp=1 run=dd poweroff=4
F=$VM_OUT/off.dp
start=$SECONDS
timeout -k 10 "$VM_CMD_TIMEOUT" "$DOMPROF" record -a -d 9 -o "$F" \
	--domain "vm1=gdb:unix:$(vm_sock vm1),kallsyms=$VM_KALLSYMS" \
	--domain "vm2=gdb:unix:$(vm_sock vm2),kallsyms=$VM_KALLSYMS" >"$VM_OUT/record.log" 2>&1 &
rec=$!
sleep 5
note "killing vm2 (qemu pid $(vm_pid vm2))"
kill -9 "$(vm_pid vm2)"
wait "$rec"; rc=$?
took=$((SECONDS - start))
sed 's/^/    /' "$VM_OUT/record.log"
[ $rc -eq 0 ] || fail "record exited with $rc"
grep -q 'domprof-guest: powering off' "$(vm_dir vm1)/console.log" || fail "vm1 did not power off"
vm_alive vm1 && fail "vm1's qemu is still running after poweroff"
[ "$took" -ge 8 ] || fail "record ended after ${took}s, before its -d 9"
grep -q 'vm1' "$VM_OUT/record.log" || fail "no message about vm1 ending"
grep -q 'vm2' "$VM_OUT/record.log" || fail "no message about vm2 ending"
"$DOMPROF" info "$F" >"$VM_OUT/info.txt" 2>&1 || fail "domprof info failed: $(tail -n 1 "$VM_OUT/info.txt")"
sed 's/^/    /' "$VM_OUT/info.txt"
grep -q '^damage: *none' "$VM_OUT/info.txt" || fail "domprof info reports damage"
grep -q '^stats: .*samples' "$VM_OUT/info.txt" || fail "the recording has no final stats record"
vm_report_csv "$VM_OUT/all.csv" -l -i "$F"
vm_check_dd "$VM_OUT/all.csv" vm1
vm_check_urandom "$VM_OUT/all.csv" vm2
host=$(awk -F, 'NR > 1 && $3 != "vm1" && $3 != "vm2" { print $3; exit }' "$VM_OUT/all.csv")
[ -n "$host" ] && [ "$(vm_samples "$VM_OUT/all.csv" "$host")" -ge 100 ] || fail "the host recording has too few samples"
echo "PASS: guests going away leave a valid recording"
