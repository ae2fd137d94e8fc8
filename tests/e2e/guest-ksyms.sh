#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A guest kernel's symbols decoded from its memory alone (src/guest/
# ksyms.c), for both of Debian 12's kernels (6.1 and 6.12): the memory is
# the kernel's own vmlinux (unpacked from the cached bzImage, tests/vm/
# lib.sh vm_vmlinux), placed at its link address and at a KASLR-like shift
# of 0x3e00000. Known answers: the kernel's /proc/kallsyms of a nokaslr
# boot (cached per kernel, vm_kallsyms_nokaslr; made once by booting the
# guest when missing): every symbol of it at the same address (plus the
# shift) with the same type, and at most 64 symbols more; the build id
# equals the ELF's own (readelf -n); fewer than 8 MiB of guest memory
# read; the host cache's reuse of the tables at another shift gives the
# same table (and refuses a flipped token table as stale). Controls that
# must fail: the comparison against a wrong shift, a flipped byte in the
# token table and one in the first table (refused,
# or decoded to symbols that disagree). Skips (77) only when a kernel or
# its ground truth cannot be obtained.
#
# KSYMS_KERNELS (from the environment; the whole kernel matrix is
# guest-ksyms-matrix.sh's) names other kernels: "series:6.19" is the
# newest 6.19 of Debian's archive (tests/vm/kernels.sh); each is then
# checked the same way, and the test skips only when the archive cannot
# be reached and the cache has no such kernel.
source "$(dirname "$0")/../lib/common.bash"
set -o pipefail
[ -x "$TT" ] || fail "$TT missing (run 'make fixtures')"
command -v python3 >/dev/null || skip "python3 is missing"
command -v readelf >/dev/null || skip "readelf (binutils) is missing"
SHIFT=0x3e00000
declare -A KSYMS_LAYOUTS   # kernel -> the layout it must decode to (optional)

# kernel_dir META: prints the cache folder of META's kernel with its
# vmlinux and nokaslr kallsyms (booting the guest once if needed), or
# nothing.
kernel_dir() {
	VM_KMETA=$1 bash -c '
		TEST_OUT=$0
		source "$DOMPROF_TOP/tests/vm/lib.sh"
		source "$DOMPROF_TOP/tests/vm/kernels.sh"
		get() {
			case $VM_KMETA in
			series:*) vm_kernel_fetch "${VM_KMETA#series:}" || { echo "$VM_KERR"; exit 3; } ;;
			*) vm_kernel ;;
			esac
		}
		get >&2 && vm_vmlinux >&2 || exit 1
		if [ ! -s "$VM_KDIR/kallsyms-nokaslr.txt" ]; then
			vm_init guest-ksyms-gt >&2
			get >&2
			vm_kallsyms_nokaslr >&2
		fi
		[ -s "$VM_KDIR/kallsyms-nokaslr.txt" ] && echo "$VM_KDIR"' "$OUT" 2>>"$OUT/kernel.log"
}

# compare TRUTH DECODED:SHIFT...: for each pair, whether every truth line
# (non-module) is in DECODED with its address (when in the kernel image
# area) plus SHIFT, and DECODED has at most 64 lines more. One line a
# pair: "agree|disagree missing=N extra=N truth=N decoded=N DECODED:SHIFT"
# (one python run, so the truth is parsed once).
compare() {
	local truth=$1
	shift
	python3 "$TOP/tests/e2e/lib/ksyms-compare.py" "${@/#/$truth=}"
}
# verdict DECODED:SHIFT: compare's word for that pair
verdict() { awk -v p="$1" '$NF == p { print $1; exit }' "$OUT/compare.txt"; }

# stat FILE KEY: a key=value of the stats line
stat() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$1" | head -n 1; }

ran=0 kernels=(${KSYMS_KERNELS:-linux-image-amd64 linux-image-6.12-amd64})
for meta in "${kernels[@]}"; do
	dir=$(kernel_dir "$meta")
	rc=$?
	if [ -z "$dir" ]; then
		tail -n 3 "$OUT/kernel.log"
		if [[ $meta == series:* ]]; then
			# only an unreachable archive (with nothing cached) skips
			[ $rc = 3 ] && grep -q '^archive unreachable:' "$OUT/kernel.log" &&
				skip "Debian's archive is unreachable and no ${meta#series:} kernel is cached: $(tail -n 1 "$OUT/kernel.log")"
			fail "no ${meta#series:} kernel or ground truth (see $OUT/kernel.log)"
		fi
		skip "no $meta kernel or ground truth (see $OUT/kernel.log)"
	fi
	v=$dir/vmlinux gt=$dir/kallsyms-nokaslr.txt k=$(basename "$dir")
	note "$k"
	want_layout=${KSYMS_LAYOUTS[${meta#series:}]:-}
	for sh in 0 $SHIFT; do
		"$TT" guest-ksyms "vmlinux:$v,shift=$sh" >"$OUT/$k-$sh.txt" 2>"$OUT/$k-$sh.err" ||
			fail "$k shift $sh: decoding failed: $(tail -n 1 "$OUT/$k-$sh.err")"
		cat "$OUT/$k-$sh.err"
		b=$(stat "$OUT/$k-$sh.err" bytes)
		[ "$b" -lt $((8 << 20)) ] || fail "$k: $b bytes of guest memory read for kallsyms (bound 8 MiB)"
		want=$(printf '0x%x' $((0xffffffff81000000 + sh)))
		[ "$(stat "$OUT/$k-$sh.err" text)" = "$want" ] ||
			fail "$k: _text $(stat "$OUT/$k-$sh.err" text), expected $want"
		got=$(sed -n 's/.* layout=//p' "$OUT/$k-$sh.err")
		[ -z "$want_layout" ] || [ "$got" = "$want_layout" ] ||
			fail "$k: layout '$got', expected '$want_layout'"
	done
	# The host cache's path (guest_ksyms_reuse): the tables found at
	# shift 0 decoded again where they were, at SHIFT (another boot):
	# the same table; control: a flipped token-table byte there is
	# refused as stale.
	tok0=$(stat "$OUT/$k-$SHIFT.err" tokens)
	"$TT" guest-ksyms "vmlinux:$v,shift=0" --reuse "vmlinux:$v,shift=$SHIFT" >/dev/null 2>"$OUT/$k-reuse.err" ||
		fail "$k: reuse at another shift refused: $(tail -n 1 "$OUT/$k-reuse.err")"
	grep -q "^reuse: ok .* same=1 " "$OUT/$k-reuse.err" || fail "$k: reuse: $(tail -n 1 "$OUT/$k-reuse.err")"
	"$TT" guest-ksyms "vmlinux:$v,shift=0" --reuse "vmlinux:$v,shift=$SHIFT" --flip "$(printf '0x%x' $((tok0 + 40)))" \
		>/dev/null 2>"$OUT/$k-reuse-flip.err" && fail "$k control: reuse accepted a flipped token table"
	grep -q "^reuse: refused (stale)" "$OUT/$k-reuse-flip.err" ||
		fail "$k control: flipped reuse: $(tail -n 1 "$OUT/$k-reuse-flip.err")"
	echo "  reuse at another shift: $(grep -o 'same=1 layout=.*' "$OUT/$k-reuse.err"); flipped: refused as stale"
	# The build id, against the ELF's own note.
	id=$("$TT" guest-ksyms "vmlinux:$v,shift=$SHIFT" --buildid 2>"$OUT/$k-id.err") ||
		fail "$k: build id: $(tail -n 1 "$OUT/$k-id.err")"
	cat "$OUT/$k-id.err"
	want=$(readelf -n "$v" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n 1)
	[ "$id" = "$want" ] || fail "$k: build id $id, the ELF says $want"
	# Controls: a flipped byte in the token table, then in the first
	# table (6.1: offsets; 6.12: num_syms's neighbour, names): refused,
	# or decoded to symbols that must disagree; and the comparison with a
	# wrong shift must disagree.
	tok=$(stat "$OUT/$k-$SHIFT.err" tokens) tab=$(stat "$OUT/$k-$SHIFT.err" tables)
	pairs=("$OUT/$k-0.txt:0" "$OUT/$k-$SHIFT.txt:$SHIFT" "$OUT/$k-$SHIFT.txt:0x3c00000")
	for spot in "token:$((tok + 40))" "first:$((tab + 4000))"; do
		what=${spot%%:*} at=$(printf '0x%x' "${spot#*:}") f=$OUT/$k-flip-${spot%%:*}.txt
		if "$TT" guest-ksyms "vmlinux:$v,shift=$SHIFT" --flip "$at" >"$f" 2>"$f.err"; then
			pairs+=("$f:$SHIFT")
			echo "  control: flipped byte in the $what table at $at: decoded (compared below)"
		else
			echo "  control: flipped byte in the $what table at $at: refused: $(tail -n 1 "$f.err")"
		fi
	done
	compare "$gt" "${pairs[@]}" >"$OUT/compare.txt" || fail "$k: the comparison failed to run"
	sed 's/^/  /' "$OUT/compare.txt"
	[ "$(verdict "${pairs[0]}")" = agree ] || fail "$k: decoded symbols disagree with /proc/kallsyms"
	[ "$(verdict "${pairs[1]}")" = agree ] || fail "$k: shifted: decoded symbols disagree with /proc/kallsyms"
	[ "$(verdict "${pairs[2]}")" = disagree ] ||
		fail "$k control: the decoded symbols also agree with a wrong shift (0x3c00000)"
	for p in "${pairs[@]:3}"; do
		[ "$(verdict "$p")" = disagree ] || fail "$k control: $p: a flipped byte decodes to the same symbols"
	done
	ran=$((ran + 1))
done
[ $ran = ${#kernels[@]} ] || fail "only $ran kernels checked"
echo "${kernels[*]}: kallsyms and build id decoded from memory match"
