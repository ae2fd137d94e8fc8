#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `domprof record --domain NAME=gdb:...` against REAL qemu gdbstubs with no
# guest (the VM starts paused with -S and runs its firmware once resumed):
# - a 1-vCPU and a 2-vCPU VM give a passive DOMAIN record (name, address,
#   vcpus) and samples in that domain only, from every vCPU;
# - a 32-bit qemu-system-i386 is refused as "not x86_64";
# - no stub, a stub address that is not loopback, and a socket that does
#   not speak the protocol each give one line naming the domain (exit 1);
# - -g with no kernel in the VM records flat with one note, with a symbol
#   file too (its names locate what is read from guest memory; nothing
#   is found in firmware: no chains, no processes).
# Sample counts are checked loosely (> 20 in 2 s at 1000 Hz): the rate
# depends on the machine's load.
source "$(dirname "$0")/../lib/common.bash"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
SOCKDIR=$(mktemp -d /tmp/dp-gdbstub.XXXXXX)
at_exit 'rm -rf "$SOCKDIR"'

# start_vm BIN SOCK SMP: qemu paused, gdbstub on a unix socket
start_vm() {
	rm -f "$2"
	"$1" -accel tcg -display none -S -m 64 -smp "$3" -nodefaults -monitor none \
		-serial none -gdb "unix:$2,server=on,wait=off" >/dev/null 2>&1 &
	bg_pids+=($!)
	for _ in $(seq 100); do [ -S "$2" ] && return 0; sleep 0.1; done
	fail "$1 did not create its gdb socket"
}

# check_recording FILE VCPUS
check_recording() {
	"$DOMPROF" dump "$1" >"$OUT/dump.txt" || fail "dump $1 failed"
	grep -q "DOMAIN .*id=1 name=vm kind=passive vcpus=$2 .*address=gdb:unix:$SOCKDIR/" "$OUT/dump.txt" ||
		fail "no passive DOMAIN record with vcpus=$2: $(grep DOMAIN "$OUT/dump.txt" | head -2)"
	local n
	n=$(grep -c ' SAMPLE ' "$OUT/dump.txt")
	echo "$1: $n samples"
	[ "$n" -gt 20 ] || fail "only $n samples"
	grep ' SAMPLE ' "$OUT/dump.txt" | grep -vq '^ *[0-9]* *dom=1 ' && fail "a sample outside domain 1"
	grep ' SAMPLE ' "$OUT/dump.txt" | grep -v 'pid=0 tid=0' | grep -q . && fail "a sample with a pid"
	local c
	for ((c = 0; c < $2; c++)); do
		grep ' SAMPLE ' "$OUT/dump.txt" | grep -q " cpu=$c " || fail "no sample from vCPU $c"
	done
	return 0
}

start_vm qemu-system-x86_64 "$SOCKDIR/a.sock" 1
"$DOMPROF" record --domain "vm=gdb:unix:$SOCKDIR/a.sock" -F 1000 -d 2 -o "$OUT/one.data" 2>"$OUT/one.err" ||
	fail "record failed: $(cat "$OUT/one.err")"
cat "$OUT/one.err"
grep -q 'vm: 1 vCPU at unix:' "$OUT/one.err" || fail "no info line for vm"
check_recording "$OUT/one.data" 1

# -g on a VM with no kernel yet (firmware): no chains, said in one info
# line, and the domain is recorded flat (never a failed recording)
"$DOMPROF" record -g --domain "vm=gdb:unix:$SOCKDIR/a.sock" -F 1000 -d 2 -o "$OUT/g.data" 2>"$OUT/g.err" ||
	fail "record -g failed: $(cat "$OUT/g.err")"
grep -q 'vm: .*no call chains (no kernel symbols)' "$OUT/g.err" || fail "record -g: no 'no call chains' note: $(cat "$OUT/g.err")"
check_recording "$OUT/g.data" 1
grep ' SAMPLE ' "$OUT/dump.txt" | grep -q 'chain=' && fail "record -g: a chain without a kernel"

# -g with a symbol file: accepted (the ORC tables and BTF are located by
# its names and read from guest memory); a firmware VM has none of them
printf 'ffffffff81000000 T _text\nffffffff81000000 T _stext\nffffffff81e00000 T _etext\n' >"$OUT/k.txt"
"$DOMPROF" record -g --domain "vm=gdb:unix:$SOCKDIR/a.sock,kallsyms=$OUT/k.txt" -F 1000 -d 2 -o "$OUT/gf.data" \
	2>"$OUT/gf.err" || fail "record -g with kallsyms= failed: $(cat "$OUT/gf.err")"
cat "$OUT/gf.err"
grep -q 'vm: .*guest memory read by the symbols of the kallsyms file' "$OUT/gf.err" ||
	fail "record -g with kallsyms=: no note of the file's symbols: $(cat "$OUT/gf.err")"
check_recording "$OUT/gf.data" 1
# firmware runs in ring 0: its samples get one-frame chains (their ip,
# no ORC table and no kernel to unwind), never more
grep ' SAMPLE ' "$OUT/dump.txt" | grep 'chain=' | grep -vq 'chain=1:' && fail "record -g with kallsyms=: a chain of more than one frame without a kernel"

start_vm qemu-system-x86_64 "$SOCKDIR/b.sock" 2
"$DOMPROF" record --domain "vm=gdb:unix:$SOCKDIR/b.sock" -F 1000 -d 2 -o "$OUT/two.data" 2>"$OUT/two.err" ||
	fail "record failed: $(cat "$OUT/two.err")"
check_recording "$OUT/two.data" 2

# expect REGEX ARGS...: record fails with exit 1 and one line matching REGEX
expect() {
	local re=$1; shift
	local rc=0
	"$DOMPROF" record "$@" -d 1 -o "$OUT/bad.data" >/dev/null 2>"$OUT/err" || rc=$?
	echo "record $* -> $rc: $(cat "$OUT/err")"
	[ "$rc" -eq 1 ] || fail "exit $rc, expected 1"
	[ "$(wc -l <"$OUT/err")" -eq 1 ] || fail "expected one line, got: $(cat "$OUT/err")"
	grep -Eq "$re" "$OUT/err" || fail "message does not match /$re/"
}

if command -v qemu-system-i386 >/dev/null; then
	start_vm qemu-system-i386 "$SOCKDIR/c.sock" 1
	expect "vm32: not x86_64 \(the stub says architecture 'i386'\)" --domain "vm32=gdb:unix:$SOCKDIR/c.sock"
fi
expect "nostub: cannot connect to unix:$SOCKDIR/none.sock: " --domain "nostub=gdb:unix:$SOCKDIR/none.sock"
expect "far: 192\.0\.2\.1 is not a loopback address.*--allow-remote-stub" --domain "far=gdb:192.0.2.1:1234"
# A listening socket that answers with something else than the protocol.
if command -v python3 >/dev/null; then
	python3 - "$SOCKDIR/junk.sock" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept(); c.sendall(b"SSH-2.0-OpenSSH_9.2\r\n"); c.recv(100)
PY
	bg_pids+=($!)
	for _ in $(seq 50); do [ -S "$SOCKDIR/junk.sock" ] && break; sleep 0.1; done
	expect "junk: unix:$SOCKDIR/junk.sock is not a GDB stub \(malformed packet\)" --domain "junk=gdb:unix:$SOCKDIR/junk.sock"
fi
echo "gdb-stub: ok"
