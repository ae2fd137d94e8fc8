#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A live guest's kernel symbols from its memory alone: Debian's 6.1 guest
# booted with KASLR on, idle; test-tool guest-ksyms reads its memory
# through the gdbstub (the VM is stopped while connected), finds the
# kernel image from the vCPU's rip and decodes the kallsyms tables the
# kernel relocated at boot. Known answers: the same boot's /proc/kallsyms
# (copied out through ttyS1, CRLF endings): every non-module symbol at the
# same address with the same type; _text at the KASLR offset found from
# that copy; the build id equals the vmlinux ELF's. Prints the time the
# VM was stopped and the bytes read. Control: the comparison against the
# nokaslr table (unrelocated) must disagree.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is missing"
command -v readelf >/dev/null || skip "readelf (binutils) is missing"
TT=$DOMPROF_TOP/build/san/test-tool
[ -x "$TT" ] || fail "$TT missing (run 'make fixtures')"
vm_init guest-ksyms
vm_vmlinux
vm_boot g1 smp=1 run=idle kaslr=1 kallsyms=1
KS=$(vm_dir g1)/kallsyms.txt
sock=$(vm_sock g1)
text=$(tr -d '\r' <"$KS" | awk '$3 == "_text" { print $1; exit }')
[ -n "$text" ] || fail "no _text in the guest's kallsyms copy"
[ "$text" != ffffffff81000000 ] || fail "the guest booted without KASLR: the test would prove nothing"
note "_text at 0x$text in this boot"

timeout 60 "$TT" guest-ksyms "gdb:$sock" >"$VM_OUT/decoded.txt" 2>"$VM_OUT/decoded.err" ||
	fail "decoding through the gdbstub failed: $(tail -n 1 "$VM_OUT/decoded.err")"
cat "$VM_OUT/decoded.err"
st() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$1" | head -n 1; }
[ "$(st "$VM_OUT/decoded.err" text)" = "0x$text" ] ||
	fail "image found at $(st "$VM_OUT/decoded.err" text), the guest's _text is 0x$text"
[ "$(st "$VM_OUT/decoded.err" delta)" = 0x0 ] ||
	fail "the live guest's tables were not relocated (delta $(st "$VM_OUT/decoded.err" delta))"
note "VM stopped $(st "$VM_OUT/decoded.err" ms) ms for $(st "$VM_OUT/decoded.err" bytes) bytes in $(st "$VM_OUT/decoded.err" reads) reads"

# compare DECODED TRUTH: prints counts; 0 when every truth symbol is there.
compare() {
	python3 - "$1" "$2" <<'EOF'
import sys
def lines(p):
    out = set()
    for l in open(p, encoding="latin-1"):
        l = l.rstrip("\r\n")
        if l and "[" not in l:
            out.add(tuple(l.split(" ", 2)))
    return out
d, g = lines(sys.argv[1]), lines(sys.argv[2])
print(f"missing={len(g - d)} extra={len(d - g)} truth={len(g)} decoded={len(d)}")
for x in sorted(g - d)[:3]:
    print("  missing:", *x)
sys.exit(0 if not g - d and len(d - g) <= 64 else 1)
EOF
}
r=$(compare "$VM_OUT/decoded.txt" "$KS") || fail "decoded symbols disagree with this boot's /proc/kallsyms: $r"
note "this boot's kallsyms: $r"
vm_kallsyms_nokaslr
compare "$VM_OUT/decoded.txt" "$VM_KALLSYMS" >/dev/null &&
	fail "control: the decoded symbols also agree with the unrelocated nokaslr table"

id=$(timeout 60 "$TT" guest-ksyms "gdb:$sock" --buildid 2>"$VM_OUT/id.err") ||
	fail "build id through the gdbstub: $(tail -n 1 "$VM_OUT/id.err")"
cat "$VM_OUT/id.err"
want=$(readelf -n "$VM_VMLINUX" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n 1)
[ "$id" = "$want" ] || fail "build id $id from memory, the vmlinux says $want"
note "build id $id (VM stopped $(st "$VM_OUT/id.err" ms) ms, $(st "$VM_OUT/id.err" bytes) bytes)"
vm_alive g1 || fail "the guest died"
[ "$(vm_status g1)" = running ] || fail "the guest was left $(vm_status g1)"
echo "live guest: kallsyms and build id decoded from memory match"
