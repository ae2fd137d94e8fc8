#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The guest kernel's ORC tables read from its memory (src/guest/orc.c):
# Debian 12's kernels 6.1 (layout v1: type:2 end:1) and 6.12 (v3: type:3
# signal:1); every kernel of the matrix (5.10 to 7.3, each flavor; v4 from
# 7.1: v3's bits with the registers renumbered) is checked the same way by
# guest-ksyms-matrix.sh. The
# memory is the kernel's own vmlinux (tests/vm/lib.sh vm_vmlinux), the
# symbols its /proc/kallsyms of a nokaslr boot. Known answers: the entry
# count equals both ELF sections' sizes (.orc_unwind_ip / 4 and
# .orc_unwind / 6); the layout told from the table alone (no version
# given) is the kernel series' one; at >= 99% of the text functions'
# first instruction (*.cold parts aside) the table says "the caller's sp
# is sp+8, a CALL frame", the shape every function has there.
# Controls that must fail: the functions shifted by 0x40 bytes (< 50%
# match), and every other layout forced: refused with a line saying why.
# Skips (77) only when a Debian 12 kernel or its ground truth cannot be
# obtained.
source "$(dirname "$0")/../lib/common.bash"
set -o pipefail
[ -x "$TT" ] || fail "$TT missing (run 'make fixtures')"
command -v readelf >/dev/null || skip "readelf (binutils) is missing"

kernel_dir() {
	VM_KMETA=$1 bash -c '
		TEST_OUT=$0
		source "$DOMPROF_TOP/tests/vm/lib.sh"
		vm_kernel >&2 && vm_vmlinux >&2 || exit 1
		if [ ! -s "$VM_KDIR/kallsyms-nokaslr.txt" ]; then
			vm_init guest-orc-gt >&2
			vm_kallsyms_nokaslr >&2
		fi
		[ -s "$VM_KDIR/kallsyms-nokaslr.txt" ] && echo "$VM_KDIR"' "$OUT" 2>>"$OUT/kernel.log"
}
# stat FILE KEY: a key=value of the stats lines
stat() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$1" | head -n 1; }
# pct FILE: call8 / funcs in percent
pct() { echo $(( $(stat "$1" call8) * 100 / $(stat "$1" funcs) )); }
secsize() { echo $((0x$(readelf -SW "$1" | awk -v s="$2" '$2 == s { print $6 }'))); }

# kernel DIR: checks one kernel (vmlinux, kallsyms-nokaslr.txt in DIR)
check_kernel() {
	local dir=$1 v=$1/vmlinux gt=$1/kallsyms-nokaslr.txt k ver want
	k=$(basename "$dir")
	ver=$(sed -n 's/^linux-[a-z]*-\([0-9][0-9.]*\).*/\1/p' <<<"$k")
	case $ver in
	5.*|6.[012].*) want=v1 ;;
	6.3.*) want=v2 ;;
	6.*|7.0.*) want=v3 ;;
	*) want=v4 ;;
	esac
	note "$k (kernel $ver, layout $want)"
	"$TT" guest-orc "vmlinux:$v" "$gt" >"$OUT/$k.txt" 2>"$OUT/$k.err" ||
		fail "$k: reading the ORC tables failed: $(tail -n 1 "$OUT/$k.err")"
	cat "$OUT/$k.err"
	n=$(stat "$OUT/$k.err" entries)
	ipsz=$(secsize "$v" .orc_unwind_ip) esz=$(secsize "$v" .orc_unwind)
	[ "$n" = $((ipsz / 4)) ] && [ "$n" = $((esz / 6)) ] ||
		fail "$k: $n entries, the ELF sections hold $((ipsz / 4)) ips and $((esz / 6)) entries"
	[ "$(stat "$OUT/$k.err" layout)" = $want ] || fail "$k: layout $(stat "$OUT/$k.err" layout), expected $want"
	p=$(pct "$OUT/$k.err")
	echo "  function starts with sp+8 CALL: $p%"
	[ "$p" -ge 99 ] || { head -n 20 "$OUT/$k.txt"; fail "$k: only $p% of function starts are sp+8 CALL"; }
	# Controls.
	"$TT" guest-orc --shift=0x40 "vmlinux:$v" "$gt" >/dev/null 2>"$OUT/$k-shift.err" || fail "$k: shift control did not run"
	ps=$(pct "$OUT/$k-shift.err")
	echo "  control: functions shifted by 0x40: $ps%"
	[ "$ps" -lt 50 ] || fail "$k control: shifted functions still match ($ps%)"
	for other in v1 v2 v3 v4; do
		[ $other = $want ] && continue
		if "$TT" guest-orc --layout=$other "vmlinux:$v" "$gt" >/dev/null 2>"$OUT/$k-$other.err"; then
			fail "$k control: the $other layout forced was taken ($(stat "$OUT/$k-$other.err" layout))"
		fi
		grep -q "ORC layout $other refused\|ORC $other refused" "$OUT/$k-$other.err" ||
			fail "$k control: $other forced failed without saying it was refused: $(tail -n 1 "$OUT/$k-$other.err")"
		echo "  control: $other forced: $(tail -n 1 "$OUT/$k-$other.err" | sed 's/^test-tool guest-orc: //')"
	done
	ran=$((ran + 1))
}

ran=0
for meta in linux-image-amd64 linux-image-6.12-amd64; do
	dir=$(kernel_dir "$meta")
	if [ -z "$dir" ]; then
		tail -n 3 "$OUT/kernel.log"
		skip "no $meta kernel or ground truth (see $OUT/kernel.log)"
	fi
	check_kernel "$dir"
done
[ $ran -ge 2 ] || fail "only $ran kernels checked"
echo "$ran kernels: ORC tables read from memory, layouts told apart from the tables, function starts agree"
