# SPDX-License-Identifier: MIT
# The kernels the fuzz tests cut real seeds from (tests/e2e/fuzz-ksyms.sh,
# fuzz-guest.sh, fuzz-orc.sh, with tests/e2e/lib/kernel-seeds.py); sourced
# after tests/lib/common.bash. Nothing is fetched or booted here: only
# kernels already in the VM cache with their vmlinux (tests/vm/lib.sh
# vm_vmlinux) and nokaslr kallsyms (the matrix tests' ground truth) are
# used.

KSEEDS="$TOP/tests/e2e/lib/kernel-seeds.py"

# kernel_seed_dirs [FLAVOR]: one cache folder a line, each holding vmlinux
# and kallsyms-nokaslr.txt (FLAVOR, e.g. amd64: only that flavor's). The kernel matrix's (tests/vm/matrix.sh:
# vm_matrix_list, and vm_matrix_dir for the folders the matrix tests have
# found; nothing is fetched here, a kernel not found yet is left out),
# else every such folder of the VM cache.
kernel_seed_dirs() {
	local c=${DOMPROF_VM_CACHE:-/var/cache/domprof-vm} d found= only=${1:-}
	if [ -f "$TOP/tests/vm/matrix.sh" ]; then
		found=$(
			source "$TOP/tests/vm/matrix.sh" >/dev/null 2>&1 || exit 0
			# the fuzz tests never download: a folder vm_matrix_dir
			# would have to fetch is left out
			vm_kernel_fetch() { VM_KERR="not fetched for fuzz seeds"; return 1; }
			vm_matrix_list | while read -r s f; do
				[ -z "$only" ] || [ "$f" = "$only" ] || continue
				d=$(vm_matrix_dir "$s" "$f" </dev/null 2>/dev/null) || continue
				if [ -s "$d/vmlinux" ] && [ -s "$d/kallsyms-nokaslr.txt" ]; then
					echo "$d"
				fi
			done | awk '!seen[$0]++'
		) || true
	fi
	if [ -n "$found" ]; then
		echo "$found"
		return 0
	fi
	for d in "$c"/*/; do
		d=${d%/}
		case ${only:-all}:$d in
		all:*) ;;
		amd64:*-cloud-amd64*|amd64:*-rt-amd64*) continue ;;
		amd64:*) ;;
		*) [[ $d == *"-$only"* ]] || continue ;;
		esac
		if [ -s "$d/vmlinux" ] && [ -s "$d/kallsyms-nokaslr.txt" ]; then
			echo "$d"
		fi
	done
	return 0
}

# kernel_seed_name DIR: sets KSEED_NAME, a short seed name for a cache folder
# (linux-binary-7.3.4+deb13-cloud-amd64_7.3.4-1~bpo13+1 -> 7.3.4+deb13-cloud-amd64;
# the package version is added when two folders share that).
declare -A _kseed_names
kernel_seed_name() {
	local b=${1##*/} n
	n=${b#linux-image-} n=${n#linux-binary-} n=${n%%_*}
	if [ -n "${_kseed_names[$n]:-}" ] && [ "${_kseed_names[$n]}" != "$1" ]; then
		n=${b#linux-image-} n=${n#linux-binary-}
	fi
	_kseed_names[$n]=$1
	KSEED_NAME=${n//[^A-Za-z0-9.+-]/_}
}

# kernel_seed_args [FLAVOR]: sets KSEED_ARGS to kernel-seeds.py's NAME=KDIR
# arguments, one for each of kernel_seed_dirs (NAME: real-KSEED_NAME).
kernel_seed_args() {
	local kdir
	KSEED_ARGS=()
	while read -r kdir; do
		kernel_seed_name "$kdir"
		KSEED_ARGS+=("real-$KSEED_NAME=$kdir")
	done < <(kernel_seed_dirs "${1:-}")
}
