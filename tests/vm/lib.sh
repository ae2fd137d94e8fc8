# SPDX-License-Identifier: MIT
# Shared helpers of the VM tests (tests/vm/test-*.sh), `make demo-vm` and
# bench/passive-overhead. Sourced, not run. It boots real guests: Debian's
# own kernel (package linux-image-amd64, cached outside the repo) with the
# busybox initramfs that mk/vm.mk builds (build/vm/initramfs.gz), under
# qemu-system-x86_64 with TCG and the gdbstub on a unix socket.
#
#   vm_init NAME          per-test folder $VM_OUT=$TEST_OUT/vm-NAME (fresh),
#                         packages, kernel, initramfs; exit 77 only when qemu
#                         cannot be installed; kills every guest on exit
#   vm_boot ID [smp=N] [run=W] [kaslr=1] [kallsyms=1|gz] [poweroff=S] [rate=1] [ps=1] [cpu=MODEL] [append=ARG]
#                         boots guest ID in $VM_OUT/ID/ and waits for its
#                         "ready" line; then $(vm_sock ID) (gdbstub),
#                         $(vm_mon_sock ID) (QEMU monitor), $(vm_dir ID);
#                         cpu=max: QEMU's -cpu max (under TCG it offers
#                         LA57: Debian's kernels then use 5-level paging);
#                         append=ARG: one more kernel command-line word;
#                         kallsyms=1: the guest's /proc/kallsyms copied to
#                         $(vm_dir ID)/kallsyms.txt (gz: sent compressed,
#                         4x faster through the emulated UART); a guest
#                         kernel that panics while booting boots once more
#   vm_kill ID            stops one guest (waits for qemu to exit)
#   vm_kallsyms_nokaslr   sets VM_KALLSYMS: the cached nokaslr /proc/kallsyms
#   vm_pid ID, vm_alive ID
#   vm_monitor ID CMD     one command in guest ID's QEMU monitor (HMP, on the
#                         unix socket $(vm_mon_sock ID)); prints its answer
#   vm_status ID          "running" or "paused" (the monitor's info status)
#   vm_domprof LOG ARGS / vm_report_csv CSV ARGS   run domprof (with a timeout)
#   vm_shift_kallsyms IN OUT    a kallsyms text moved by 2 MiB (controls)
#   VM_KMETA=linux-image-6.12-amd64 vm_kernel; vm_vmlinux   another kernel series,
#                         its uncompressed ELF (offline decoding tests)
#   (tests/vm/kernels.sh, sourced after this file: vm_kernel_fetch SERIES
#                         sets VM_KERNEL/VM_KDIR to any series of Debian's
#                         archive, 5.10 to 7.3, through a private apt config)
#   vm_samples / vm_top / vm_share / vm_show CSV DOMAIN ...   query a csv report
#   vm_check_dd / vm_check_urandom CSV DOMAIN   known answers of the workloads
#   vm_dump_cpus DUMP NAME                      samples per vCPU from `dump`
#   fail MSG / skip MSG / note MSG   from tests/lib/common.bash (sourced
#                         here); fail also prints every guest's console
#                         (fail_hook), note prints "vm: MSG" unless NOTE_QUIET
#
# VM_MEM: each guest's memory in MiB (default 512; agent-lib.sh's guests too).
#
# Cache: ${DOMPROF_VM_CACHE:-/var/cache/domprof-vm}/<package>_<version>/
# holds vmlinuz, config and kallsyms-nokaslr.txt; a lock file serializes
# concurrent runs that fill it.

# vm_init names the output folder (vm-NAME), not the script's name.
TEST_NO_OUT=1 source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.bash"
NOTE_PREFIX="vm: "   # NOTE_QUIET=1: demo, bench
VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-90}
VM_QEMU=${DOMPROF_VM_QEMU:-qemu-system-x86_64}
# Upper bound for one domprof command: a hung sampler fails the test
# instead of hanging `make test`.
VM_CMD_TIMEOUT=${VM_CMD_TIMEOUT:-90}
VM_INITRD=$DOMPROF_TOP/build/vm/initramfs.gz
# Guest memory in MiB (bench/many-vms boots ten guests with 256).
VM_MEM=${VM_MEM:-512}
declare -A VM_PIDS=()

# common.bash's fail calls this after its "FAIL: MSG" line.
fail_hook() {
	local d
	for d in "${!VM_PIDS[@]}"; do
		[ -f "$VM_OUT/$d/console.log" ] || continue
		echo "--- console of $d (last lines) ---"
		tail -n 15 "$VM_OUT/$d/console.log"
		[ -s "$VM_OUT/$d/qemu.log" ] && { echo "--- qemu.log of $d ---"; tail -n 5 "$VM_OUT/$d/qemu.log"; }
	done
	return 0
}

# Installs what is missing (as root, through apt-get). Only a qemu that
# cannot be installed makes the tests skip.
vm_packages() {
	local want=() sudo=
	command -v "$VM_QEMU" >/dev/null || want+=(qemu-system-x86)
	file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' || want+=(busybox-static)
	command -v cpio >/dev/null || want+=(cpio)
	[ ${#want[@]} -eq 0 ] && return 0
	[ "$(id -u)" -ne 0 ] && sudo=sudo
	note "installing ${want[*]}"
	export DEBIAN_FRONTEND=noninteractive
	{ $sudo apt-get install -y -qq --no-install-recommends "${want[@]}" ||
	  { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${want[@]}"; }; } >/dev/null 2>&1
	command -v "$VM_QEMU" >/dev/null ||
		skip "$VM_QEMU is missing and 'apt-get install qemu-system-x86' failed: VM tests need qemu"
	file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
		fail "no static busybox at /bin/busybox ('apt-get install busybox-static' failed)"
	command -v cpio >/dev/null || fail "cpio is missing ('apt-get install cpio' failed)"
}

vm_cache_dir() {
	local c=${DOMPROF_VM_CACHE:-/var/cache/domprof-vm}
	if ! mkdir -p "$c" 2>/dev/null || [ ! -w "$c" ]; then
		c=${XDG_CACHE_HOME:-$HOME/.cache}/domprof-vm
		mkdir -p "$c" || fail "cannot create a VM cache folder ($c)"
	fi
	echo "$c"
}

# Sets VM_KERNEL (vmlinuz) and VM_KDIR (its cache folder, keyed by the
# Debian package name and version). Downloads the package once. The kernel
# is the one Debian's meta package $VM_KMETA depends on: linux-image-amd64
# (6.1 in Debian 12) unless a test asks for another, e.g.
# VM_KMETA=linux-image-6.12-amd64 (also in Debian 12's archive).
VM_KMETA=${VM_KMETA:-linux-image-amd64}
vm_kernel() {
	local cache pkg ver dir tmp meta=$VM_KMETA
	cache=$(vm_cache_dir)
	exec 8>"$cache/lock"
	flock 8
	pkg=$(apt-cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
	# A fresh machine may have no package lists yet.
	if [ -z "$pkg" ] && [ "$(id -u)" -eq 0 ]; then
		apt-get update -qq >/dev/null 2>&1
		pkg=$(apt-cache depends "$meta" 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
	fi
	[ -n "$pkg" ] && ver=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null |
		sed -n 's/^Version: //p' | head -n 1)
	if [ -n "$pkg" ] && [ -n "$ver" ]; then
		dir=$cache/${pkg}_${ver}
		if [ ! -s "$dir/vmlinuz" ]; then
			echo "vm: downloading guest kernel $pkg $ver (about 70-110 MB, once)"
			tmp=$(mktemp -d "$cache/dl.XXXXXX")
			if (cd "$tmp" && apt-get download "$pkg=$ver" >/dev/null 2>&1) &&
			   dpkg -x "$tmp"/*.deb "$tmp/x"; then
				mkdir -p "$dir"
				cp "$tmp"/x/boot/config-* "$dir/config" 2>/dev/null
				cp "$tmp"/x/boot/vmlinuz-* "$dir/vmlinuz.tmp" && mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
			fi
			rm -rf "$tmp"
		fi
	fi
	# Offline: the newest cached kernel of that series, else a Debian
	# kernel in /boot (only for the default series).
	local series=
	[ "$meta" != linux-image-amd64 ] && series=$(echo "$meta" | sed -n 's/^linux-image-\([0-9.]*\)-amd64$/\1/p')
	[ -n "$dir" ] && [ -s "$dir/vmlinuz" ] ||
		dir=$(ls -d "$cache"/linux-image-"$series"*/ 2>/dev/null | sort -V | tail -n 1)
	dir=${dir%/}
	if [ -n "$dir" ] && [ -s "$dir/vmlinuz" ]; then
		VM_KDIR=$dir
		VM_KERNEL=$dir/vmlinuz
	elif [ "$meta" = linux-image-amd64 ]; then
		local b
		b=$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -n 1)
		[ -r "$b" ] || fail "no guest kernel: 'apt-get download ${pkg:-linux-image-amd64}' failed and /boot has no readable Debian kernel"
		VM_KDIR=$cache/boot-$(basename "$b" | sed 's/^vmlinuz-//')
		mkdir -p "$VM_KDIR"
		VM_KERNEL=$b
	else
		fail "no guest kernel: 'apt-get download ${pkg:-$meta}' failed"
	fi
	flock -u 8
}

# Sets VM_VMLINUX: the uncompressed kernel ELF (with its .symtab stripped,
# but with the kallsyms tables and .BTF) unpacked from $VM_KERNEL's
# compressed payload, cached next to it. For offline tests of what is read
# from guest memory. Needs vm_kernel first.
vm_vmlinux() {
	VM_VMLINUX=$VM_KDIR/vmlinux
	[ -s "$VM_VMLINUX" ] && return 0
	exec 8>"$VM_KDIR/.vmlinux.lock"
	flock 8
	if [ ! -s "$VM_VMLINUX" ]; then
		python3 "$DOMPROF_TOP/tests/vm/extract-vmlinux.py" "$VM_KERNEL" "$VM_VMLINUX.tmp" &&
			mv "$VM_VMLINUX.tmp" "$VM_VMLINUX" ||
			{ rm -f "$VM_VMLINUX.tmp"; fail "cannot unpack vmlinux from $VM_KERNEL"; }
	fi
	flock -u 8
}

vm_init() {
	test_out "vm-$1"
	VM_OUT=$OUT
	at_exit vm_cleanup
	trap 'exit 130' INT TERM
	vm_packages
	make -s -C "$DOMPROF_TOP" vm-guest >"$VM_OUT/make.log" 2>&1 ||
		{ cat "$VM_OUT/make.log"; fail "cannot build the guest initramfs (make vm-guest)"; }
	vm_kernel
	note "kernel $VM_KERNEL"
}

vm_dir() { echo "$VM_OUT/$1"; }
vm_pid() { echo "${VM_PIDS[$1]}"; }
vm_alive() { [ -n "${VM_PIDS[$1]:-}" ] && kill -0 "${VM_PIDS[$1]}" 2>/dev/null; }

# A unix socket path must fit in 108 bytes: long $TEST_OUT paths get a
# short /tmp folder instead.
vm_sock() {
	local s="$VM_OUT/$1/gdb.sock"
	if [ ${#s} -gt 100 ]; then
		[ -n "${VM_SOCKDIR:-}" ] || VM_SOCKDIR=$(mktemp -d /tmp/domprof-vm.XXXXXX)
		s=$VM_SOCKDIR/$1.sock
	fi
	echo "$s"
}

# The QEMU monitor of guest ID, next to its gdbstub socket.
vm_mon_sock() { local s; s=$(vm_sock "$1"); echo "${s%.sock}.mon"; }

# vm_monitor ID CMD: sends CMD to the monitor, prints its answer (without
# banner, echo, prompt and terminal escapes). Gives up after 5 s.
vm_monitor() {
	timeout -k 2 10 python3 - "$(vm_mon_sock "$1")" "$2" <<'EOF'
import re, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
def until_prompt():
    buf, end = b"", time.time() + 5
    while not buf.endswith(b"(qemu) ") and time.time() < end:
        b = s.recv(4096)
        if not b:
            break
        buf += b
    return buf.decode(errors="replace")
until_prompt()
s.sendall(sys.argv[2].encode() + b"\n")
out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", until_prompt()).replace("\r", "")
for line in out.split("\n"):
    if line.strip() and "(qemu)" not in line and line.strip() != sys.argv[2]:
        print(line)
EOF
}

vm_status() { vm_monitor "$1" "info status" | sed -n 's/^VM status: \([a-z]*\).*/\1/p'; }

# vm_wait_line ID REGEX TIMEOUT: waits until the console shows REGEX.
vm_wait_line() {
	local id=$1 re=$2 t=$3
	wait_for "$VM_OUT/$id/console.log" "$re" "$t" "${VM_PIDS[$id]:-}" && return 0
	vm_alive "$id" || fail "guest $id exited before printing '$re'"
	fail "guest $id: no '$re' on its console within ${t}s"
}

vm_boot() {
	local id=$1; shift
	local smp=1 run=dd kaslr=0 kallsyms=0 extra="" a cpu=()
	for a in "$@"; do
		case $a in
		smp=*) smp=${a#smp=} ;;
		cpu=*) cpu=(-cpu "${a#cpu=}") ;;
		run=*) run=${a#run=} ;;
		kaslr=*) kaslr=${a#kaslr=} ;;
		kallsyms=*) kallsyms=${a#kallsyms=} ;;
		poweroff=*|rate=*|jobs=*|ps=*) extra+=" domprof.$a" ;;
		append=*) extra+=" ${a#append=}" ;;
		*) fail "vm_boot: unknown option $a" ;;
		esac
	done
	local d="$VM_OUT/$id" sock
	sock=$(vm_sock "$id")
	# Fresh files for every boot: a stale console could show an old "ready".
	rm -rf "$d"; mkdir -p "$d"; rm -f "$sock" "$(vm_mon_sock "$id")"
	# no_timer_check: under TCG on a loaded host the kernel's IO-APIC
	# timer check can miss its ticks and panic ("IO-APIC + timer doesn't
	# work!", seen booting the tenth guest of bench/many-vms)
	# noirqdebug: on PREEMPT_RT kernels (Debian's rt flavor) the serial
	# ports' interrupt handlers run in threads and, under TCG, mostly find
	# the interrupt already served; the kernel's unhandled-interrupt check
	# then disables IRQ 3 ("nobody cared") and ttyS1's kallsyms copy stops
	local append="console=ttyS0 quiet panic=-1 no_timer_check noirqdebug domprof.run=$run domprof.kallsyms=$kallsyms$extra"
	[ "$kaslr" = 1 ] || append+=" nokaslr"
	local serial2=/dev/null
	[ "$kallsyms" = 1 ] && serial2=$d/kallsyms.txt
	[ "$kallsyms" = gz ] && serial2=$d/kallsyms.gz
	echo "$append" >"$d/cmdline"
	local t=$VM_BOOT_TIMEOUT first='domprof-guest: ready' try
	[ "$kallsyms" != 0 ] && t=$((t + 120)) && first='domprof-guest: kallsyms done'
	# A guest kernel that panics while booting boots once more: under TCG
	# a 4-vCPU guest can trip on code another vCPU is patching (an int3
	# oops at a jump label, seen once in five boots of 7.3): not what a
	# test checks
	for try in 1 2; do
		"$VM_QEMU" -accel tcg "${cpu[@]}" -m "$VM_MEM" -smp "$smp" -display none -no-reboot \
			-nodefaults -no-user-config \
			-kernel "$VM_KERNEL" -initrd "$VM_INITRD" -append "$append" \
			-serial "file:$d/console.log" -serial "file:$serial2" \
			-gdb "unix:$sock,server=on,wait=off" \
			-monitor "unix:$(vm_mon_sock "$id"),server=on,wait=off" \
			>"$d/qemu.log" 2>&1 </dev/null &
		VM_PIDS[$id]=$!
		wait_for "$d/console.log" "$first" "$t" "${VM_PIDS[$id]}" && break
		[ $try = 1 ] && ! vm_alive "$id" && grep -qa 'Kernel panic' "$d/console.log" || break
		note "guest $id panicked while booting ($(grep -a -m1 -E 'Oops|BUG|Kernel panic' "$d/console.log" | tr -d '\r')): booting it once more"
		vm_kill "$id"
		mv "$d/console.log" "$d/console-panic.log"
		rm -f "$sock" "$(vm_mon_sock "$id")" "$d/kallsyms.gz" "$d/kallsyms.txt"
	done
	if [ "$kallsyms" != 0 ]; then
		vm_wait_line "$id" 'domprof-guest: kallsyms done' "$t"
		local want got i
		# the UART may still drain the stream's end
		for i in $(seq 20); do
			[ "$kallsyms" != gz ] || gzip -t "$d/kallsyms.gz" 2>/dev/null && break
			sleep 0.5
		done
		[ "$kallsyms" != gz ] || gzip -dc "$d/kallsyms.gz" >"$d/kallsyms.txt" ||
			fail "guest $id: its gzip'ed kallsyms copy does not decompress"
		want=$(sed -n 's/.*kallsyms done lines=\([0-9]*\).*/\1/p' "$d/console.log" | head -n 1)
		got=$(wc -l <"$d/kallsyms.txt")
		[ "$want" = "$got" ] || fail "guest $id: kallsyms copy has $got lines, the guest has $want"
	fi
	vm_wait_line "$id" 'domprof-guest: ready' "$t"
	[ -S "$sock" ] || fail "guest $id: no gdbstub socket at $sock"
	note "guest $id up (pid ${VM_PIDS[$id]}, smp=$smp run=$run kaslr=$kaslr): $sock"
}

vm_kill() {
	local id=$1 pid=${VM_PIDS[$1]:-} i
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null
	for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	unset 'VM_PIDS[$id]'
}

vm_cleanup() {
	local id
	for id in "${!VM_PIDS[@]}"; do vm_kill "$id"; done
	[ -n "${VM_SOCKDIR:-}" ] && rm -rf "$VM_SOCKDIR"
	return 0
}

# The guest kernel's /proc/kallsyms of a nokaslr boot, cached per kernel
# package (the same addresses on every such boot). It is also the
# unrelocated symbol table for the KASLR tests.
vm_kallsyms_nokaslr() {
	local f="$VM_KDIR/kallsyms-nokaslr.txt"
	exec 7>"$VM_KDIR/.kallsyms.lock"
	flock 7
	if [ ! -s "$f" ]; then
		echo "vm: dumping the guest's kallsyms once (about 15-30 s through the UART)"
		vm_boot ksyms run=idle kallsyms=1
		cp "$VM_OUT/ksyms/kallsyms.txt" "$f.tmp" && mv "$f.tmp" "$f"
		vm_kill ksyms
	fi
	flock -u 7
	VM_KALLSYMS=$f
}

# Report helpers. csv rows: samples,percent,domain,image,symbol
# vm_top CSV DOMAIN N: the N top symbols of DOMAIN, one per line.
vm_top() {
	awk -F, -v d="$2" -v n="$3" 'NR > 1 && $3 == d && c < n { print $5; c++ }' "$1"
}

# vm_domprof LOG ARGS...: runs $DOMPROF ARGS, output to $VM_OUT/LOG
# (and shown); fails the test on a non-zero exit.
# vm_shift_kallsyms IN OUT: kallsyms text IN with every kernel-image
# address moved by 0x200000, as another boot's KASLR would place it (the
# control of the symbol checks: such a table must score low).
vm_shift_kallsyms() {
	python3 - "$1" "$2" <<'EOF' || fail "cannot write the shifted kallsyms $2"
import sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as o:
    for line in f:
        a, rest = line.split(" ", 1)
        v = int(a, 16)
        o.write("%016x %s" % (v + 0x200000 if v >= 0xffffffff80000000 else v, rest))
EOF
}

vm_domprof() {
	local log="$VM_OUT/$1" rc; shift
	echo "+ domprof $*" >>"$VM_OUT/commands.log"
	timeout -k 10 "$VM_CMD_TIMEOUT" "$DOMPROF" "$@" >"$log" 2>&1
	rc=$?
	[ $rc -eq 124 ] && fail "domprof $1 did not finish within ${VM_CMD_TIMEOUT}s"
	sed 's/^/    /' "$log" | head -n 40
	[ $rc -eq 0 ] || fail "domprof $1 exited with $rc: $(tail -n 1 "$log")"
}

# vm_report_csv CSV ARGS...: domprof report ... --format csv into CSV;
# checks the header.
vm_report_csv() {
	local csv=$1; shift
	echo "+ domprof report $*" >>"$VM_OUT/commands.log"
	timeout -k 10 "$VM_CMD_TIMEOUT" "$DOMPROF" report "$@" --format csv >"$csv" 2>"$csv.err" ||
		{ cat "$csv.err"; fail "domprof report $* failed: $(tail -n 1 "$csv.err")"; }
	[ "$(head -n 1 "$csv")" = "samples,percent,domain,image,symbol" ] ||
		fail "unexpected csv header in $csv: $(head -n 1 "$csv")"
}

# Queries on a report csv (rows: samples,percent,domain,image,symbol).
# vm_samples CSV DOMAIN [IMAGE]: total samples of DOMAIN (of IMAGE).
vm_samples() {
	awk -F, -v d="$2" -v i="${3:-}" 'NR > 1 && $3 == d && (i == "" || $4 == i) { n += $1 } END { print n + 0 }' "$1"
}
# vm_top CSV DOMAIN N: the N top guest kernel symbols of DOMAIN.
vm_top() {
	awk -F, -v d="$2" -v n="$3" 'NR > 1 && $3 == d && $4 == "[guest.kernel]" && c < n { print $5; c++ }' "$1"
}
# vm_share CSV DOMAIN REGEX: percent (integer) of DOMAIN's samples whose
# symbol matches REGEX.
vm_share() {
	awk -F, -v d="$2" -v re="$3" 'NR > 1 && $3 == d { t += $1; if ($5 ~ re) m += $1 }
		END { printf "%d\n", t ? 100 * m / t : 0 }' "$1"
}
# vm_show CSV DOMAIN N: prints the N first rows of DOMAIN for the log.
vm_show() {
	awk -F, -v d="$2" -v n="$3" 'NR > 1 && $3 == d && c < n { printf "    %8s %6s %-6s %-18s %s\n", $1, $2, $3, $4, $5; c++ }' "$1"
}

# The guest kernel's syscall entry/exit path and the read/write plumbing
# a dd loop spends its time in beside clear_user (measured on Debian's
# 6.1 kernel under TCG; any three of them among the top ten).
VM_SYSCALL_PATH='^(entry_SYSCALL_64.*|do_syscall_64|syscall_(enter|exit)_.*|exit_to_user_mode_prepare|x64_sys_call|syscall_return_via_sysret|ksys_(read|write)|vfs_(read|write)|__fdget_pos|__fget_light|security_file_permission|apparmor_file_permission|aa_file_perm|rw_verify_area|read_zero|__x64_sys_(read|write)|__x86_indirect_thunk_.*|fpregs_assert_state_consistent)$'

# vm_check_dd CSV DOMAIN: the profile of a guest looping dd.
vm_check_dd() {
	local csv=$1 d=$2 top n sh
	top=$(vm_top "$csv" "$d" 10)
	echo "top guest kernel functions of $d:"; vm_show "$csv" "$d" 12
	[ "$(vm_samples "$csv" "$d")" -ge 100 ] || fail "$d: only $(vm_samples "$csv" "$d") samples"
	[[ "$(head -n 1 <<<"$top")" == clear_user* ]] ||
		fail "$d: top guest kernel function is '$(head -n 1 <<<"$top")', expected clear_user* (dd reads /dev/zero)"
	sh=$(vm_share "$csv" "$d" '^clear_user')
	[ "$sh" -ge 10 ] || fail "$d: clear_user* has ${sh}% of the samples, expected >= 10%"
	n=$(grep -cE "$VM_SYSCALL_PATH" <<<"$top")
	[ "$n" -ge 3 ] || fail "$d: only $n of the top 10 are on the syscall/read/write path"
	sh=$(vm_share "$csv" "$d" '^chacha')
	[ "$sh" -le 2 ] || fail "$d: chacha* has ${sh}% of a dd guest's samples"
	note "$d: dd profile ok (clear_user* $(vm_share "$csv" "$d" '^clear_user')%, $n syscall-path functions in the top 10)"
}

# vm_check_urandom CSV DOMAIN: the profile of a guest reading /dev/urandom.
vm_check_urandom() {
	local csv=$1 d=$2 top sh
	top=$(vm_top "$csv" "$d" 3)
	echo "top guest kernel functions of $d:"; vm_show "$csv" "$d" 8
	[ "$(vm_samples "$csv" "$d")" -ge 100 ] || fail "$d: only $(vm_samples "$csv" "$d") samples"
	[ "$(head -n 1 <<<"$top")" = chacha_permute ] ||
		fail "$d: top guest kernel function is '$(head -n 1 <<<"$top")', expected chacha_permute (urandom)"
	grep -qx chacha_block_generic <<<"$top" || fail "$d: chacha_block_generic is not in the top 3"
	sh=$(vm_share "$csv" "$d" '^clear_user')
	[ "$sh" -le 2 ] || fail "$d: clear_user* has ${sh}% of a urandom guest's samples"
	note "$d: urandom profile ok (chacha* $(vm_share "$csv" "$d" '^chacha')%)"
}

# vm_dump_cpus DUMP NAME: "C0 C1 OTHER", the SAMPLE records of domain NAME
# in `domprof dump` output with cpu=0, cpu=1 and any other cpu. The
# domain's id comes from its DOMAIN record ("id=N name=NAME").
vm_dump_cpus() {
	awk -v name="$2" '
		/ DOMAIN / {
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^id=/) id = substr($i, 4)
				if ($i == "name=" name) want = id
			}
		}
		/ SAMPLE / && want != "" {
			if (!match($0, /dom=[0-9]+/)) next
			if (substr($0, RSTART + 4, RLENGTH - 4) != want) next
			match($0, /cpu=[0-9]+/); c = substr($0, RSTART + 4, RLENGTH - 4)
			if (c == "0") c0++; else if (c == "1") c1++; else o++
		}
		END { print c0 + 0, c1 + 0, o + 0 }' "$1"
}
