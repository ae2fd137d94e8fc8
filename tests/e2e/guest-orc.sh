#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The guest kernel's ORC tables read from its memory (src/guest/orc.c) for
# both of Debian 12's kernels: 6.1 (the v1 layout: type:2 end:1) and 6.12
# (v3: type:3 signal:1). The memory is the kernel's own vmlinux (tests/vm/
# lib.sh vm_vmlinux), the symbols its /proc/kallsyms of a nokaslr boot
# (vm_kallsyms_nokaslr, cached). Known answers: the entry count equals
# both ELF sections' sizes (.orc_unwind_ip / 4 and .orc_unwind / 6); the
# layout is the one the kernel's version has; at >= 99% of the text
# functions' first instruction (*.cold parts aside) the table says "the
# caller's sp is sp+8, a CALL frame", the shape every function has there.
# Controls that must fail: the functions shifted by 0x40 bytes (< 50%
# match), the other layout forced (refused, or < 10% match), the other
# kernel's version (refused). Skips (77) only when a kernel or its ground
# truth cannot be obtained.
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

ran=0
for meta in linux-image-amd64 linux-image-6.12-amd64; do
	dir=$(kernel_dir "$meta")
	if [ -z "$dir" ]; then
		tail -n 3 "$OUT/kernel.log"
		skip "no $meta kernel or ground truth (see $OUT/kernel.log)"
	fi
	v=$dir/vmlinux gt=$dir/kallsyms-nokaslr.txt k=$(basename "$dir")
	ver=$(sed -n 's/^linux-image-\([^_]*\)_.*/\1/p' <<<"$k")
	case $ver in 6.1.*) want=v1 other=v3 otherver=6.12.0 ;; *) want=v3 other=v1 otherver=6.1.0 ;; esac
	note "$k (kernel $ver, layout $want)"
	"$TT" guest-orc --version="$ver" "vmlinux:$v" "$gt" >"$OUT/$k.txt" 2>"$OUT/$k.err" ||
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
	if "$TT" guest-orc --layout=$other "vmlinux:$v" "$gt" >/dev/null 2>"$OUT/$k-other.err"; then
		po=$(pct "$OUT/$k-other.err")
		echo "  control: $other layout forced: decoded, $po% match"
		[ "$po" -lt 10 ] || fail "$k control: the $other layout decodes to $po% matching starts"
	else
		echo "  control: $other layout forced: refused: $(tail -n 1 "$OUT/$k-other.err")"
	fi
	if "$TT" guest-orc --version=$otherver "vmlinux:$v" "$gt" >/dev/null 2>"$OUT/$k-ver.err"; then
		fail "$k control: the table was taken for a $otherver kernel"
	fi
	echo "  control: as a $otherver kernel: refused: $(tail -n 1 "$OUT/$k-ver.err")"
	ran=$((ran + 1))
done
[ $ran = 2 ] || fail "only $ran kernels checked"
echo "both kernels: ORC tables read from memory, layouts told apart, function starts agree"
