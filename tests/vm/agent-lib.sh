# SPDX-License-Identifier: MIT
# Helpers of the active-domain VM tests (test-seed-experiment.sh,
# test-active.sh), built on tests/vm/lib.sh (source that first and call
# vm_init). Sourced, not run.
#
#   agent_init            static domprof (make static), the guest kernel's
#                         e1000 module (cached beside the kernel), and an
#                         initramfs $AGENT_INITRD: lib.sh's guest programs
#                         (gw, netbench) + /bin/domprof + /lib/e1000.ko +
#                         tests/vm/agent-guest/init, and a fresh shared key
#                         $AGENT_KEY (0600, also the guest's
#                         /etc/domprof-agent.key): host specs say
#                         agent:127.0.0.1:PORT,key=$AGENT_KEY
#   agent_boot ID [run=W] [agent=0|1] [kaslr=1]
#                         boots guest ID (1 vCPU, TCG) with the gdbstub on
#                         $(vm_sock ID) and QEMU user networking that
#                         forwards 127.0.0.1:$(agent_port ID) on the host to
#                         the agent's 10.0.2.15:7000; waits for "ready"
#   agent_port ID         the host loopback port of guest ID's agent
#
# Transport: TCP through QEMU's user network (slirp). restrict=on cuts the
# guest off from the host's network: only the forwarded port connects,
# and only from the host's loopback. The agent listens on the guest's NIC
# address, never on a port the guest's other programs could reach from
# outside. See docs/active.md for the measured throughput.

# fail/skip/note and the set-up: tests/lib/common.bash (lib.sh sourced it).
TEST_NO_OUT=1 source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.bash"

declare -A AGENT_PORTS=()

# The e1000 module of the guest kernel: the kernel package is fetched once
# more (lib.sh keeps only vmlinuz) and the module cached in $VM_KDIR.
agent_e1000() {
	local ko="$VM_KDIR/e1000.ko" pkgver tmp
	[ -s "$ko" ] && { AGENT_E1000=$ko; return 0; }
	pkgver=$(basename "$VM_KDIR")
	case $pkgver in linux-image-*_*) ;; *) fail "cannot tell the kernel package of $VM_KDIR (needed for e1000.ko)" ;; esac
	note "fetching ${pkgver%%_*} once more for e1000.ko"
	tmp=$(mktemp -d "$VM_KDIR/e1000.XXXXXX")
	(cd "$tmp" && apt-get download "${pkgver%%_*}=${pkgver#*_}" >/dev/null 2>&1) ||
		{ rm -rf "$tmp"; fail "apt-get download ${pkgver%%_*}=${pkgver#*_} failed (needed for e1000.ko)"; }
	# 6.1 ships e1000.ko, 6.12 e1000.ko.xz (busybox's unxz: the initramfs
	# busybox is there anyway)
	dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp" --wildcards '*/net/ethernet/intel/e1000/e1000.ko*' &&
		for f in "$tmp"/lib/modules/*/kernel/drivers/net/ethernet/intel/e1000/e1000.ko*; do
			case $f in *.xz) busybox unxz -c "$f" >"$ko.tmp" ;; *) cp "$f" "$ko.tmp" ;; esac
		done && [ -s "$ko.tmp" ] && mv "$ko.tmp" "$ko"
	rm -rf "$tmp" "$ko.tmp"
	[ -s "$ko" ] || fail "no e1000.ko in the kernel package"
	AGENT_E1000=$ko
}

agent_init() {
	make -s -C "$DOMPROF_TOP" static >"$VM_OUT/make-static.log" 2>&1 ||
		{ cat "$VM_OUT/make-static.log"; fail "make static failed"; }
	[ -x "$DOMPROF_TOP/build/static/domprof" ] || fail "no build/static/domprof"
	[ -x "$DOMPROF_TOP/build/vm/guest/netbench" ] || fail "no build/vm/guest/netbench (make vm-guest)"
	exec 9>"$VM_KDIR/.e1000.lock"
	flock 9
	agent_e1000
	flock -u 9
	local r=$VM_OUT/agent-rootfs
	rm -rf "$r"; mkdir -p "$r/bin" "$r/lib" "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/etc"
	# the agent listens on the guest's NIC address (not loopback), so it
	# demands a key; the host reads the same file
	AGENT_KEY=$VM_OUT/agent.key
	rm -f "$AGENT_KEY"
	(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$AGENT_KEY") ||
		fail "cannot make the agent key"
	install -m 600 "$AGENT_KEY" "$r/etc/domprof-agent.key"
	cp /bin/busybox "$r/bin/busybox"
	cp "$DOMPROF_TOP"/build/vm/guest/* "$r/bin/"
	cp "$DOMPROF_TOP/build/static/domprof" "$r/bin/domprof"
	cp "$AGENT_E1000" "$r/lib/e1000.ko"
	install -m 755 "$DOMPROF_TOP/tests/vm/agent-guest/init" "$r/init"
	AGENT_INITRD=$VM_OUT/agent-initramfs.gz
	(cd "$r" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 | gzip -1 >"$AGENT_INITRD") ||
		fail "cannot build the agent initramfs"
	note "agent initramfs $(du -k "$AGENT_INITRD" | cut -f1) KB, e1000 $AGENT_E1000"
}

# A free host loopback port (best effort: bind-test with python).
agent_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

agent_port() { echo "${AGENT_PORTS[$1]}"; }

agent_boot() {
	local id=$1; shift
	local run=netbench agent=1 kaslr=0 a
	for a in "$@"; do
		case $a in
		run=*) run=${a#run=} ;;
		agent=*) agent=${a#agent=} ;;
		kaslr=*) kaslr=${a#kaslr=} ;;
		*) fail "agent_boot: unknown option $a" ;;
		esac
	done
	local d="$VM_OUT/$id" sock port
	sock=$(vm_sock "$id")
	port=$(agent_free_port)
	AGENT_PORTS[$id]=$port
	rm -rf "$d"; mkdir -p "$d"; rm -f "$sock"
	local append="console=ttyS0 quiet panic=-1 no_timer_check domprof.run=$run domprof.agent=$agent" # no_timer_check: see lib.sh
	[ "$kaslr" = 1 ] || append+=" nokaslr"
	echo "$append" >"$d/cmdline"
	local net=()
	[ "$agent" = 1 ] && net=(-netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$port-10.0.2.15:7000"
				 -device e1000,netdev=n0)
	qemu-system-x86_64 -accel tcg -m "$VM_MEM" -smp 1 -display none -no-reboot \
		-nodefaults -no-user-config \
		-kernel "$VM_KERNEL" -initrd "$AGENT_INITRD" -append "$append" \
		-serial "file:$d/console.log" "${net[@]}" \
		-gdb "unix:$sock,server=on,wait=off" \
		>"$d/qemu.log" 2>&1 </dev/null &
	VM_PIDS[$id]=$!
	vm_wait_line "$id" 'agent-guest: ready' "$VM_BOOT_TIMEOUT"
	[ -S "$sock" ] || fail "guest $id: no gdbstub socket at $sock"
	if [ "$agent" = 1 ]; then
		# the agent may say so just after "ready" (TCG is slow); an agent
		# that exited has said why by then
		wait_for "$d/console.log" \
			'domprof agent: listening on\|domprof agent: exiting\|domprof agent: .*\(refusing\|cannot\|key file\)' 30
		grep -qa 'domprof agent: listening on' "$d/console.log" ||
			fail "guest $id: the agent did not start: $(grep -a 'domprof agent' "$d/console.log" | tail -n 1)"
	fi
	note "guest $id up (pid ${VM_PIDS[$id]}, run=$run agent=$agent): gdb $sock, agent 127.0.0.1:$port"
}
