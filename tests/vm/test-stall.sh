#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# domprof never leaves a passive guest paused without saying so. The guest
# runs gw, which prints "gw count ..." ten times per second of guest time,
# so its console shows whether it runs; QEMU's monitor (info status) says
# "running" or "paused". One boot, three recordings:
#  1. QEMU is stopped (SIGSTOP) for 3 s in the middle of a recording. The
#     stub does not answer within 1 s, and the 0x03 domprof sent is already
#     queued: QEMU pauses the VM as soon as it continues. domprof must read
#     the late replies and detach: after the recording the VM runs, and the
#     message says it was resumed.
#  2. QEMU is still stopped when the recording ends (SIGCONT only after
#     record exits): domprof cannot resume it. The message must say that
#     the VM may be left paused and to run `cont`; the VM is paused, and
#     `cont` in the monitor makes it run again.
#  3. A debugger that negotiated multiprocess (gdb does) was attached and
#     detached before: QEMU then answers a bare `D` with E22 and keeps the
#     VM paused. After a plain recording the VM must run.
# runs alone
set -u
. "$(dirname "$0")/lib.sh"
vm_init stall
vm_boot vm1 smp=1 run=spin rate=1
SOCK=$(vm_sock vm1)
QEMU=$(vm_pid vm1)

counter() { grep -ac 'gw count' "$(vm_dir vm1)/console.log"; }

# check_runs WHEN: the monitor says running and the counter advances in 2 s.
check_runs() {
	local st a b
	st=$(vm_status vm1)
	a=$(counter); sleep 2; b=$(counter)
	[ "$st" = running ] && [ "$b" -gt "$a" ] ||
		fail "$1: the VM does not run (monitor: '$st', console counter $a -> $b lines in 2 s)"
	note "$1: the VM runs (monitor: $st, console counter $a -> $b lines in 2 s)"
}

# record_bg LOG SECS: record vm1 in the background ($REC), return once it
# samples (its info line is out).
record_bg() {
	local log=$VM_OUT/$1
	echo "+ domprof record -d $2 --domain vm1=gdb:unix:$SOCK" >>"$VM_OUT/commands.log"
	timeout -k 10 "$VM_CMD_TIMEOUT" "$DOMPROF" record -d "$2" -o "$VM_OUT/$1.dp" \
		--domain "vm1=gdb:unix:$SOCK" >"$log" 2>&1 &
	REC=$!
	wait_for "$log" 'vm1: 1 vCPU at' 30 "$REC" && return 0
	kill -0 "$REC" 2>/dev/null || { cat "$log"; fail "record ended before sampling"; }
	fail "record did not start sampling within 30 s"
}

# finish LOG: wait for record, show its output, set MSG to vm1's end line.
finish() {
	local log=$VM_OUT/$1 rc
	wait "$REC"; rc=$?
	sed 's/^/    /' "$log"
	[ $rc -eq 0 ] || fail "record exited with $rc"
	MSG=$(grep '^domprof record: vm1: ' "$log" | grep -v 'vm1: 1 vCPU at' | head -n 1)
}

# 1. A 3 s stall inside a 6 s recording.
record_bg stall1.log 6
sleep 1
note "stopping qemu (pid $QEMU) for 3 s"
kill -STOP "$QEMU"; sleep 3; kill -CONT "$QEMU"
finish stall1.log
[[ $MSG == *"stub did not answer within 1 s"* ]] ||
	fail "the stall did not end vm1 with a timeout (message: '${MSG:-none}')"
check_runs "after a 3 s stall inside the recording"
[[ $MSG == *"the VM was resumed"* ]] || fail "the VM runs, but the message does not say it was resumed: $MSG"

# 2. Still stalled when the recording ends.
record_bg stall2.log 2
sleep 0.5
note "stopping qemu until record has exited"
kill -STOP "$QEMU"
finish stall2.log
kill -CONT "$QEMU"
sleep 0.5
[[ $MSG == *"the VM may be left paused"*"cont"* ]] ||
	fail "record could not resume vm1, but its message does not say it may be left paused: '${MSG:-none}'"
st=$(vm_status vm1)
[ "$st" = paused ] || fail "the message says vm1 may be left paused; expected paused here, the monitor says '$st'"
vm_monitor vm1 cont >/dev/null
st=$(vm_status vm1)
[ "$st" = running ] || fail "after 'cont' in the monitor, vm1 is '$st'"
note "after 'cont' in the monitor: $st"

# 3. After a debugger that negotiated multiprocess.
python3 - "$SOCK" <<'EOF' || fail "the multiprocess debugger session failed"
import socket, sys, time
def pkt(p):
    return ("$%s#%02x" % (p, sum(p.encode()) & 0xff)).encode()
def reply(s):
    buf, end = b"", time.time() + 5
    while not (b"#" in buf and len(buf) >= buf.index(b"#") + 3) and time.time() < end:
        b = s.recv(4096)
        if not b:
            break
        buf += b
    return buf.decode(errors="replace")
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
time.sleep(0.3)   # the stop reply QEMU queues on connect, if any
s.setblocking(False)
try:
    s.recv(4096)
except BlockingIOError:
    pass
s.settimeout(5)
s.sendall(pkt("qSupported:multiprocess+;xmlRegisters=i386"))
r = reply(s)
s.sendall(b"+" + pkt("D;1"))
d = reply(s)
s.close()
print("    debugger: multiprocess+ %s, D;1 -> %s" % ("multiprocess+" in r, d.strip("+")))
sys.exit(0 if "multiprocess+" in r and "OK" in d else 1)
EOF
st=$(vm_status vm1)
[ "$st" = running ] || fail "the debugger's detach left vm1 '$st'"
record_bg mp.log 1
finish mp.log
[ -z "$MSG" ] || fail "a plain recording ended vm1 with a message: $MSG"
check_runs "after a recording that followed a multiprocess debugger"
echo "PASS: domprof resumes a stalled passive guest, or says it may be left paused"
