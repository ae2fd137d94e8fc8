#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The host cache's checks against a guest's own memory (src/guest/
# ksyms.c guest_ksyms_reuse, src/guest/orc.c guest_orc_verify_raw;
# docs/passive.md "Cache"), offline: the memory is Debian 6.1's own
# vmlinux (tests/vm/lib.sh vm_vmlinux) placed at two KASLR-like shifts.
#  - kallsyms: the tables decoded at one shift are decoded again where
#    the entry says, at the other shift (another boot): accepted, the
#    same table as a full decode there, with fewer bytes read (printed:
#    the span against the full decode);
#  - a byte flipped inside the span (the names table) in that memory:
#    refused as stale (a guest whose tables are not the entry's);
#    control: a byte flipped outside the span is not read, so accepted;
#  - ORC: the raw tables read pass the sampled check, reading under a
#    tenth of the tables; a copy with one byte of the first packet
#    changed, and one with every byte changed, are refused.
# Skips (77) only when the kernel cannot be obtained.
source "$(dirname "$0")/../lib/common.bash"
[ -x "$TT" ] || fail "$TT missing (run 'make fixtures')"
command -v python3 >/dev/null || skip "python3 is missing"
kdir=$(bash -c '
	TEST_OUT=$0
	source "$DOMPROF_TOP/tests/vm/lib.sh"
	vm_kernel >&2 && vm_vmlinux >&2 && echo "$VM_KDIR"' "$OUT" 2>>"$OUT/kernel.log")
[ -n "$kdir" ] && [ -s "$kdir/vmlinux" ] || skip "no Debian 6.1 kernel: $(tail -n 1 "$OUT/kernel.log")"
V=$kdir/vmlinux
A=0x3e00000 B=0x200000

"$TT" guest-ksyms "vmlinux:$V,shift=$B" >"$OUT/direct.txt" 2>"$OUT/direct.err" || fail "decode at $B: $(cat "$OUT/direct.err")"
"$TT" guest-ksyms "vmlinux:$V,shift=$A" --reuse "vmlinux:$V,shift=$B" >"$OUT/reuse.txt" 2>"$OUT/reuse.err" ||
	fail "reuse at another shift refused: $(tail -n 1 "$OUT/reuse.err")"
grep -q "^reuse: ok .* same=1 " "$OUT/reuse.err" || fail "reuse: $(tail -n 1 "$OUT/reuse.err")"
cmp -s "$OUT/direct.txt" "$OUT/reuse.txt" || fail "the table decoded where the entry says differs from a full decode"
full=$(sed -n 's/^guest-ksyms: .* bytes=\([0-9]*\) .*/\1/p' "$OUT/direct.err")
span=$(sed -n 's/^reuse: ok .* bytes=\([0-9]*\) .*/\1/p' "$OUT/reuse.err")
[ -n "$full" ] && [ -n "$span" ] && [ "$span" -lt "$full" ] || fail "the check read $span bytes, a full decode $full"
echo "kallsyms: the check read $span bytes, a full decode $full ($(wc -l <"$OUT/reuse.txt") symbols, same table)"

# a byte inside the span (the names, after the offsets: mid-span) and one
# outside (the first page after the banner's)
tables=$(sed -n 's/.* tables=\(0x[0-9a-f]*\) .*/\1/p' "$OUT/direct.err")
rodata=$(sed -n 's/.* rodata=\(0x[0-9a-f]*\) .*/\1/p' "$OUT/direct.err")
in=$(printf '0x%x' $((tables + span / 2)))
out=$(printf '0x%x' $((rodata + 8192)))
if "$TT" guest-ksyms "vmlinux:$V,shift=$A" --reuse "vmlinux:$V,shift=$B" --flip "$in" >/dev/null 2>"$OUT/flip-in.err"; then
	fail "a byte flipped in the tables at $in: accepted ($(tail -n 1 "$OUT/flip-in.err"))"
fi
grep -q "^reuse: refused (stale)" "$OUT/flip-in.err" || fail "flip in the span: $(tail -n 1 "$OUT/flip-in.err")"
"$TT" guest-ksyms "vmlinux:$V,shift=$A" --reuse "vmlinux:$V,shift=$B" --flip "$out" >/dev/null 2>"$OUT/flip-out.err" ||
	fail "control: a byte flipped outside the tables at $out was refused: $(tail -n 1 "$OUT/flip-out.err")"
echo "kallsyms: a byte changed in the tables is refused; control: one outside is not read"

"$TT" guest-orc --verify-raw "vmlinux:$V,shift=$B" "$OUT/direct.txt" >/dev/null 2>"$OUT/orc.err" ||
	fail "guest-orc --verify-raw: $(tail -n 1 "$OUT/orc.err")"
line=$(grep '^verify-raw:' "$OUT/orc.err")
echo "ORC: $line"
read -r ob ot < <(echo "$line" | sed -n 's/.* bytes=\([0-9]*\) tables=\([0-9]*\) .*/\1 \2/p')
echo "$line" | grep -q 'clean=ok .* first=stale all=stale' || fail "ORC check: $line"
[ -n "$ob" ] && [ $((ob * 10)) -lt "$ot" ] || fail "the ORC check read $ob of $ot bytes (a tenth or more)"
