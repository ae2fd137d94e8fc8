#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# The guest-domain hook of `domprof record` (--domain), with a real QEMU
# that runs only its firmware (no guest OS needed to be sampled):
#  - host (-a) and vm1 together: samples in domain 0 and domain 1, the
#    summary names vm1's count, STATS counts both domains' SAMPLE records;
#  - the VM dies mid-recording: the recorder prints why once and goes on
#    until -d, then finishes the file;
#  - --domain alone (no host target) records only the VM.
source "$(dirname "$0")/../lib/common.bash"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
qpid=
at_exit '[ -n "$qpid" ] && kill "$qpid" 2>/dev/null'
port=$((20000 + $$ % 20000))
start_vm() {
	qemu-system-x86_64 -display none -nodefaults -m 64 -monitor none -serial none \
		-gdb tcp:127.0.0.1:$port >"$OUT/qemu.log" 2>&1 &
	qpid=$!
	for _ in $(seq 50); do
		(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && return 0
		sleep 0.1
	done
	fail "qemu gdbstub did not come up"
}

# 1. host + vm1, the VM killed 0.7 s after its start-up (reading guest
# memory: no kernel there) ended, within an 8 s recording (the start-up's
# length depends on the host's load: waited for, not assumed)
start_vm
"$DOMPROF" record -f -a -d 8 --domain vm1=gdb:127.0.0.1:$port -o "$OUT/hv.data" 2>"$OUT/hv.err" &
rec=$!
wait_for "$OUT/hv.err" '^domprof record: vm1: 1 vCPU at' 7 $rec || fail "no start info for vm1 within 7 s: $(cat "$OUT/hv.err")"
sleep 0.7
kill "$qpid"; wait "$qpid" 2>/dev/null; qpid=
rc=0; wait $rec || rc=$?
cat "$OUT/hv.err"
[ $rc -eq 0 ] || fail "record exited $rc"
[ "$(grep -c '^domprof record: vm1: ' "$OUT/hv.err")" -ge 2 ] || fail "no start info and end message for vm1"
grep -Eq '^domprof record: [0-9]+ samples written, .* s; host: [0-9]+ samples, vm1: [1-9][0-9]* samples( \(held [0-9.]+ ms a tick(, [0-9]+ chains [0-9.]+% complete)?(, [0-9]+ lost)?\))?$' "$OUT/hv.err" \
	|| fail "summary line without per-domain counts"
"$DOMPROF" info "$OUT/hv.data" >"$OUT/hv.info" || fail "info"
"$DOMPROF" dump "$OUT/hv.data" >"$OUT/hv.dump" || fail "dump"
grep -q 'damage: *none' "$OUT/hv.info" || fail "damage"
h=$(grep -c ' dom=0 .* SAMPLE ' "$OUT/hv.dump")
v=$(grep -c ' dom=1 .* SAMPLE ' "$OUT/hv.dump")
echo "host samples $h, vm1 samples $v"
[ "$h" -gt 100 ] && [ "$v" -gt 10 ] || fail "samples missing from a domain"
grep -Eq "^stats: +$((h + v)) samples" "$OUT/hv.info" || fail "STATS does not count $((h + v)) samples"
grep -q "vm1: $v samples" "$OUT/hv.err" || fail "summary count for vm1 != $v"

# 2. only the VM
start_vm
"$DOMPROF" record -f -d 1 --domain vm1=gdb:127.0.0.1:$port -o "$OUT/v.data" 2>"$OUT/v.err" || fail "VM-only record exited $?"
cat "$OUT/v.err"
"$DOMPROF" dump "$OUT/v.data" >"$OUT/v.dump" || fail "dump"
grep -q ' dom=1 .* SAMPLE ' "$OUT/v.dump" || fail "no vm1 samples"
grep -q ' dom=0 .* SAMPLE ' "$OUT/v.dump" && fail "host samples in a VM-only recording"
echo "ok"
