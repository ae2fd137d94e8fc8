#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The guest's module symbols read from the VM alone: a TCG guest (KASLR
# on) loads Debian's e1000.ko before it copies /proc/kallsyms to ttyS1;
# then `test-tool guest-modules` reads the `modules` list and e1000's
# mod_kallsyms through the gdbstub (struct offsets from the guest's own
# BTF, guest_layout_read) and must name every [e1000] symbol of the copy
# at the same address, and nothing the copy lacks. Control: the same walk
# with struct module.kallsyms's offset shifted by 8 (it then reads
# core_kallsyms, whose symbol 0 is null) must name no e1000 symbol and
# count the module as skipped.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent-lib.sh"
vm_init guest-modules
[ -x "$TT" ] || make -s -C "$DOMPROF_TOP" build/san/test-tool >/dev/null || fail "cannot build $TT"
exec 9>"$VM_KDIR/.e1000.lock"
flock 9
agent_e1000
flock -u 9

# The test guest's initramfs plus a second archive (the kernel unpacks
# concatenated archives in order, a later file replaces an earlier one):
# e1000.ko and an /init that loads it, then runs the usual init.
r=$VM_OUT/overlay
mkdir -p "$r/lib"
cp "$AGENT_E1000" "$r/lib/e1000.ko"
cp "$DOMPROF_TOP/tests/vm/guest/init" "$r/init.test"
cat >"$r/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox insmod /lib/e1000.ko
exec /bin/busybox sh /init.test
EOF
chmod 755 "$r/init" "$r/init.test"
(cd "$r" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 | gzip -1) >"$VM_OUT/overlay.gz" ||
	fail "cannot build the overlay archive"
cat "$VM_INITRD" "$VM_OUT/overlay.gz" >"$VM_OUT/initramfs-e1000.gz"
VM_INITRD=$VM_OUT/initramfs-e1000.gz

vm_boot vm1 run=idle kaslr=1 kallsyms=1
KS=$(vm_dir vm1)/kallsyms.txt
sock=$(vm_sock vm1)

# "addr type name" of e1000's lines, type in lower case (/proc/kallsyms
# upper-cases exported symbols; the guest's tables do not say which).
e1000_lines() { tr -d '\r' <"$1" | awk -F'\t' '$2 == "[e1000]" { split($1, f, " "); print f[1], tolower(f[2]), f[3] }' | LC_ALL=C sort -u; }
e1000_lines "$KS" >"$VM_OUT/want.txt"
nwant=$(wc -l <"$VM_OUT/want.txt")
ntext=$(awk '$2 == "t"' "$VM_OUT/want.txt" | wc -l)
[ "$ntext" -ge 50 ] || fail "the kallsyms copy has $ntext [e1000] text symbols (insmod e1000 failed in the guest?)"
note "the copy has $nwant [e1000] symbols, $ntext of them text"

timeout -k 5 60 "$TT" guest-modules "gdb:$sock" "$KS" >"$VM_OUT/got-raw.txt" 2>"$VM_OUT/walk.log" ||
	{ cat "$VM_OUT/walk.log"; fail "guest-modules failed: $(tail -n 1 "$VM_OUT/walk.log")"; }
cat "$VM_OUT/walk.log"
e1000_lines "$VM_OUT/got-raw.txt" >"$VM_OUT/got.txt"
missing=$(awk '$2 == "t"' "$VM_OUT/want.txt" | LC_ALL=C comm -23 - "$VM_OUT/got.txt" | wc -l)
[ "$missing" -eq 0 ] || { LC_ALL=C comm -23 "$VM_OUT/want.txt" "$VM_OUT/got.txt" | head -n 5
	fail "$missing of $ntext [e1000] text symbols of the copy not found at the same address"; }
extra=$(LC_ALL=C comm -13 "$VM_OUT/want.txt" "$VM_OUT/got.txt" | wc -l)
[ "$extra" -eq 0 ] || { LC_ALL=C comm -13 "$VM_OUT/want.txt" "$VM_OUT/got.txt" | head -n 5
	fail "$extra [e1000] lines read from guest memory are not in the copy"; }
lost=$(LC_ALL=C comm -23 "$VM_OUT/want.txt" "$VM_OUT/got.txt" | wc -l)
note "all $ntext text symbols found; $((nwant - lost)) of $nwant [e1000] symbols in all, none the copy lacks"

# Control: a wrong layout names nothing.
timeout -k 5 60 "$TT" guest-modules --shift-kallsyms 8 "gdb:$sock" "$KS" >"$VM_OUT/control.txt" 2>"$VM_OUT/control.log"
cat "$VM_OUT/control.log"
n=$(grep -c $'\t\[e1000\]' "$VM_OUT/control.txt")
[ "$n" -eq 0 ] || fail "a shifted mod_kallsyms offset still gave $n e1000 symbols"
grep -q ' [1-9][0-9]* skipped' "$VM_OUT/control.log" || fail "a shifted mod_kallsyms offset: e1000 not counted as skipped"
echo "PASS: guest-modules named all $ntext [e1000] text symbols of the guest's /proc/kallsyms from its memory"
