#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/gdb-floor (the bare stop/resume client bench/passive-overhead
# measures QEMU's floor with) against a REAL qemu gdbstub with no guest
# (started paused with -S; it runs its firmware once resumed):
# - it ticks (at most HZ*SECS stops, loosely > 20 in 1 s at 200 Hz: the
#   rate depends on the machine's load) and prints its held time;
# - it detaches so the VM keeps running: QEMU's monitor says "running"
#   after it (control: "paused" before it, from -S), and a second run
#   (with --reads=2: two `g` round trips a stop) connects and ticks again;
# - usage errors exit 2; no stub and a socket that does not speak the
#   protocol exit 1 with one line.
source "$(dirname "$0")/../lib/common.bash"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
command -v python3 >/dev/null || skip "python3 not installed (QEMU monitor queries)"
FLOOR=${GDB_FLOOR:-$DOMPROF_TOP/build/san/bench/gdb-floor}
[ -x "$FLOOR" ] || fail "$FLOOR not built (make build/san/bench/gdb-floor)"
SOCKDIR=$(mktemp -d /tmp/dp-gdbfloor.XXXXXX)
at_exit 'rm -rf "$SOCKDIR"'
G=$SOCKDIR/gdb.sock M=$SOCKDIR/mon.sock

qemu-system-x86_64 -accel tcg -display none -S -m 64 -smp 1 -nodefaults -serial none \
	-gdb "unix:$G,server=on,wait=off" -monitor "unix:$M,server=on,wait=off" >/dev/null 2>&1 &
bg_pids+=($!)
for _ in $(seq 100); do [ -S "$G" ] && [ -S "$M" ] && break; sleep 0.1; done
[ -S "$G" ] || fail "qemu did not create its gdb socket"

# status: the monitor's "running" or "paused".
status() {
	timeout -k 2 10 python3 - "$M" <<'PY'
import re, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
def until_prompt():
    buf, end = b"", time.time() + 5
    while not buf.endswith(b"(qemu) ") and time.time() < end:
        b = s.recv(4096)
        if not b:
            break
        buf += b
    return buf.decode(errors="replace")
until_prompt(); s.sendall(b"info status\n")
m = re.search(r"VM status: ([a-z]+)", until_prompt())
print(m.group(1) if m else "unknown")
PY
}

st=$(status)
[ "$st" = paused ] || fail "control: a -S VM should be paused before gdb-floor, the monitor says '$st'"

# run N [OPTION]: gdb-floor at 200 Hz for 1 s; checks its line and that
# the VM runs.
run() {
	"$FLOOR" ${2:-} "$G" 200 1 >"$OUT/floor$1.out" 2>"$OUT/floor$1.err" ||
		fail "run $1: gdb-floor failed: $(cat "$OUT/floor$1.err")"
	cat "$OUT/floor$1.out"
	local line n k
	line=$(cat "$OUT/floor$1.out")
	[[ $line =~ ^gdb-floor:\ ([0-9]+)\ ticks\ in\ [0-9.]+\ s,\ ([0-9]+)\ skipped\ \(held\ [0-9]+\.[0-9]{3}\ ms\ a\ tick,\ [0-9]+\.[0-9]{3}\ ms\ of\ it\ until\ the\ stop\ reply\)$ ]] ||
		fail "run $1: unexpected output: $line"
	n=${BASH_REMATCH[1]} k=${BASH_REMATCH[2]}
	[ "$n" -gt 20 ] || fail "run $1: only $n ticks"
	[ $((n + k)) -le 200 ] || fail "run $1: $n ticks + $k skipped is more than 200 Hz x 1 s"
	[ -s "$OUT/floor$1.err" ] && fail "run $1: stderr not empty: $(cat "$OUT/floor$1.err")"
	st=$(status)
	[ "$st" = running ] || fail "run $1: the VM is '$st' after gdb-floor detached"
}
run 1
run 2 --reads=2   # two `g` round trips in each stop

# expect RC REGEX ARGS...: gdb-floor exits RC with one line matching REGEX
expect() {
	local want=$1 re=$2 rc=0; shift 2
	"$FLOOR" "$@" >/dev/null 2>"$OUT/err" || rc=$?
	echo "gdb-floor $* -> $rc: $(cat "$OUT/err")"
	[ "$rc" -eq "$want" ] || fail "exit $rc, expected $want"
	[ "$(wc -l <"$OUT/err")" -eq 1 ] || fail "expected one line, got: $(cat "$OUT/err")"
	grep -Eq "$re" "$OUT/err" || fail "message does not match /$re/"
}
expect 2 '^usage: gdb-floor ' "$G" 0 1
expect 2 '^usage: gdb-floor ' "$G" 100 1x
expect 2 '^usage: gdb-floor ' "$G" 100
expect 2 '^usage: gdb-floor ' --reads=x "$G" 100 1
expect 2 '^usage: gdb-floor ' --reads=65 "$G" 100 1
expect 1 "^gdb-floor: $SOCKDIR/none.sock: " "$SOCKDIR/none.sock" 100 1
python3 - "$SOCKDIR/junk.sock" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept(); c.sendall(b"SSH-2.0-OpenSSH_9.2\r\n"); c.recv(100)
PY
bg_pids+=($!)
for _ in $(seq 50); do [ -S "$SOCKDIR/junk.sock" ] && break; sleep 0.1; done
expect 1 "^gdb-floor: $SOCKDIR/junk.sock: " "$SOCKDIR/junk.sock" 100 1
st=$(status)
[ "$st" = running ] || fail "the VM is '$st' at the end"
echo "gdb-floor: ticks, detach, errors ok"
