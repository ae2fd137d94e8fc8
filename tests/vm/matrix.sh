# SPDX-License-Identifier: MIT
# The kernel matrix: every kernel series Debian's archive carries, in each
# of its flavors, with the layouts each kernel's tables must decode to.
# The one list the matrix tests read (tests/e2e/guest-ksyms-matrix.sh,
# the fuzz seeds). Sourced, not run; sources lib.sh and
# kernels.sh when they are not sourced yet.
#
#   vm_matrix_list              prints "SERIES FLAVOR" lines, the matrix
#   vm_matrix_dir SERIES FLAVOR prints the kernel's cache folder (vmlinuz,
#                               vmlinux unpacked by lib.sh's vm_vmlinux,
#                               release, and kallsyms-nokaslr.txt once
#                               captured) or returns 1 with the reason
#                               (one line) on stderr; offline, the newest
#                               cached kernel of the series and flavor
#   vm_matrix_prep [JOBS]       makes sure every matrix kernel is fetched,
#                               unpacked and has its nokaslr /proc/kallsyms
#                               (ground truth: one boot each, JOBS at a
#                               time, default 2). Prints one line per
#                               kernel: "ok SERIES FLAVOR DIR" or
#                               "missing SERIES FLAVOR REASON"; returns 0
#                               when every kernel is there, 3 when the
#                               missing ones are all kernels the archive
#                               could not be reached for (none cached), 1
#                               otherwise. Safe to run from
#                               two tests at once: downloads under the
#                               cache's lock, each file written to a temp
#                               name and renamed, each kernel's boot under
#                               its own lock (a second caller waits, then
#                               finds the file).
#   VM_MATRIX_KSYMS[SERIES]     the kallsyms layout (src/guest/ksyms.c's
#                               out->layout) every flavor of SERIES decodes to
#   VM_MATRIX_ORC[SERIES]       its ORC layout (src/guest/orc.c: v1 type:2
#                               end:1; v3 type:3 signal:1; v4 v3's bits with
#                               the 7.1 register numbers)
#
# The layouts are the ones measured on the archive's kernels (docs/
# passive.md has the table); the decoders do not read them: they find the
# layout from the tables, and the tests check that the one found is this.

if ! declare -F vm_boot >/dev/null; then
	source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi
if ! declare -F vm_kernel_fetch >/dev/null; then
	source "$(dirname "${BASH_SOURCE[0]}")/kernels.sh"
fi

VM_MATRIX_SERIES=${VM_MATRIX_SERIES:-"5.10 6.1 6.12 6.16 6.17 6.18 6.19 7.0 7.1 7.2 7.3"}
VM_MATRIX_FLAVORS=${VM_MATRIX_FLAVORS:-"amd64 cloud-amd64 rt-amd64"}
declare -A VM_MATRIX_KSYMS=(
	[5.10]="base-relative abs-percpu, offsets first, markers u32"
	[6.1]="base-relative abs-percpu, offsets first, markers u32, seqs"
	[6.12]="base-relative abs-percpu, names first, markers u32"
	[6.16]="base-relative, names first, markers u32"
	[6.17]="base-relative, names first, markers u32"
	[6.18]="base-relative, names first, markers u32"
	[6.19]="base-relative, names first, markers u32"
	[7.0]="place-relative, names first, num_syms u32, markers u32"
	[7.1]="place-relative, names first, num_syms u32, markers u32"
	[7.2]="place-relative, names first, num_syms u32, markers u32"
	[7.3]="place-relative, names first, num_syms u32, markers u32"
)
declare -A VM_MATRIX_ORC=(
	[5.10]=v1 [6.1]=v1
	[6.12]=v3 [6.16]=v3 [6.17]=v3 [6.18]=v3 [6.19]=v3 [7.0]=v3
	[7.1]=v4 [7.2]=v4 [7.3]=v4
)

vm_matrix_list() {
	local s f
	for s in $VM_MATRIX_SERIES; do
		for f in $VM_MATRIX_FLAVORS; do
			echo "$s $f"
		done
	done
}

# vm_matrix_fetch SERIES FLAVOR: vm_kernel_fetch and vm_vmlinux; sets
# VM_KDIR, VM_KERNEL, VM_VMLINUX or returns 1 with VM_KERR.
vm_matrix_fetch() {
	vm_kernel_fetch "$1" "$2" || return 1
	# vm_vmlinux fails (exits) on an image it cannot unpack: a subshell
	if ! (vm_vmlinux) >&2; then
		VM_KERR="cannot unpack vmlinux from $VM_KERNEL"
		return 1
	fi
	VM_VMLINUX=$VM_KDIR/vmlinux
}

# A folder found is remembered in $cache/matrix/SERIES_FLAVOR (the archive's
# lists are read again when that note is older than the lists' stamp, or a
# day old): asking apt takes seconds per kernel, the matrix has 33.
vm_matrix_dir() {
	local cache note d stamp
	cache=$(vm_cache_dir)
	note=$cache/matrix/$1_$2
	stamp=$(vm_kapt_dir "$cache")/stamp
	if [ -n "$(find "$note" -mmin -1440 2>/dev/null)" ] && { [ ! -e "$stamp" ] || [ "$note" -nt "$stamp" ]; }; then
		d=$cache/$(cat "$note")
		if [ -s "$d/vmlinuz" ] && [ -s "$d/vmlinux" ]; then
			echo "$d"
			return 0
		fi
	fi
	vm_matrix_fetch "$1" "$2" || { echo "vm_matrix_dir $1 $2: $VM_KERR" >&2; return 1; }
	mkdir -p "$cache/matrix" && basename "$VM_KDIR" >"$note.$BASHPID" && mv "$note.$BASHPID" "$note"
	echo "$VM_KDIR"
}

# vm_matrix_truth DIR NAME: (in a subshell of its own) boots DIR's kernel
# once to capture its nokaslr /proc/kallsyms; the boot's files go to
# $TEST_OUT/vm-matrix-NAME.
vm_matrix_truth() {
	# this subshell's own exit work (the caller's is not to run twice)
	_at_exit=() bg_pids=()
	trap _common_exit EXIT
	# vm_init without its vm_kernel (that waits for the cache's lock,
	# which the downloads of the other matrix kernels hold)
	test_out "vm-matrix-$2"
	VM_OUT=$OUT
	at_exit vm_cleanup
	trap 'exit 130' INT TERM
	vm_packages
	VM_KDIR=$1 VM_KERNEL=$1/vmlinuz
	# a copy through the UART of a loaded machine: boots of up to 200,000
	# lines each, two at a time, beside a test run
	VM_BOOT_TIMEOUT=${VM_MATRIX_BOOT_TIMEOUT:-300}
	vm_kallsyms_nokaslr >/dev/null
	[ -s "$VM_KDIR/kallsyms-nokaslr.txt" ] || fail "no kallsyms from $VM_KDIR"
}

# _vm_matrix_pump JOBS: reaps the finished ground-truth boots (one line
# each) and starts queued ones while fewer than JOBS run (vm_matrix_prep's
# queue _vmm_boot, running _vmm_pids, next index _vmm_i).
_vm_matrix_pump() {
	local jobs=$1 p s f d left=()
	for p in "${_vmm_pids[@]}"; do
		if kill -0 "${p%%:*}" 2>/dev/null; then
			left+=("$p")
			continue
		fi
		wait "${p%%:*}" 2>/dev/null
		read -r s f d <<<"${p#*:}"
		if [ -s "$d/kallsyms-nokaslr.txt" ]; then
			echo "ok $s $f $d"
		else
			echo "missing $s $f no ground truth: $(grep -m1 'FAIL' "$_vmm_out/matrix-truth-$s-$f.log" || tail -n 1 "$_vmm_out/matrix-truth-$s-$f.log")"
			_vmm_rc=1 _vmm_other=1
		fi
	done
	_vmm_pids=("${left[@]}")
	while [ "$_vmm_i" -lt ${#_vmm_boot[@]} ] && [ ${#_vmm_pids[@]} -lt "$jobs" ]; do
		read -r s f d <<<"${_vmm_boot[$_vmm_i]}"
		( vm_matrix_truth "$d" "$s-$f" ) >"$_vmm_out/matrix-truth-$s-$f.log" 2>&1 &
		_vmm_pids+=("$!:$s $f $d")
		_vmm_i=$((_vmm_i + 1))
	done
}

vm_matrix_prep() {
	local jobs=${1:-2} s f d unreach= err made=
	_vmm_rc=0 _vmm_i=0 _vmm_boot=() _vmm_pids=() _vmm_other=
	_vmm_out=${TEST_OUT:-$DOMPROF_TOP/build/test-out}
	mkdir -p "$_vmm_out"
	# fetch and unpack one at a time (the downloads share the cache's
	# lock); the boots start as their kernels arrive
	while read -r s f; do
		if ! d=$(vm_matrix_dir "$s" "$f" 2>"$_vmm_out/matrix-fetch.err"); then
			err=$(grep -m1 '^vm_matrix_dir' "$_vmm_out/matrix-fetch.err")
			echo "missing $s $f ${err#*: }"
			if [[ ${err#*: } == "archive unreachable:"* ]]; then unreach=1; else _vmm_other=1; fi
			_vmm_rc=1
		elif [ -s "$d/kallsyms-nokaslr.txt" ]; then
			echo "ok $s $f $d"
		else
			if [ -z "$made" ]; then
				make -s -C "$DOMPROF_TOP" vm-guest >"$_vmm_out/matrix-make.log" 2>&1 ||
					{ echo "missing * * cannot build the guest initramfs (make vm-guest)"; return 1; }
				made=1
			fi
			_vmm_boot+=("$s $f $d")
		fi
		_vm_matrix_pump "$jobs"
	done < <(vm_matrix_list)
	while [ "$_vmm_i" -lt ${#_vmm_boot[@]} ] || [ ${#_vmm_pids[@]} -gt 0 ]; do
		wait -n 2>/dev/null || sleep 1
		_vm_matrix_pump "$jobs"
	done
	# 3 only when every missing kernel is one the archive could not give
	[ $_vmm_rc = 1 ] && [ -n "$unreach" ] && [ -z "$_vmm_other" ] && _vmm_rc=3
	return $_vmm_rc
}
