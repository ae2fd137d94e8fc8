#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# domprof annotate (src/cli/cmd-annotate.c, analysis/hits.c, output/annotate.c)
# on a real recording of nofp (spin: a 4-instruction loop, then ret):
#  - the instruction addresses annotate prints for spin are objdump's
#    (code bytes read from the file, disassembled by capstone);
#  - >= 90% of spin's samples are on the loop (from the jump target '>'
#    to the jne back to it), and the hottest instruction (==>) is in it;
#  - the jne names its target as <spin+0x..>, the target line is marked;
#  - --format json: every sample placed (instructions' samples + unplaced
#    = the function's samples), one object per function;
#  - without a name, -n 2: two functions; a kernel function (no file)
#    lists its hot addresses and says why; annotate of kernel functions
#    reads the same with the kernel's name filter as without it (the
#    filter's control, a forged one, is in unit/test-profile);
#  - controls: the binary replaced since the recording (another build-id)
#    is neither named nor disassembled (exit 1); an unknown name exits 1
#    with one line suggesting the nearest (spn -> spin); bad -n: exit 2.
source "$(dirname "$0")/../lib/common.bash"
need_workload nofp threefuncs kernelheavy
command -v objdump >/dev/null || skip "objdump (binutils) not installed"

cp "$WL/nofp" "$OUT/nofp"
D=$OUT/nofp.data
"$DOMPROF" record -f -F 1000 -o "$D" -- "$OUT/nofp" 300 >"$OUT/record.log" 2>&1 || { cat "$OUT/record.log"; fail "record failed"; }
"$DOMPROF" annotate -i "$D" spin >"$OUT/spin.txt" 2>"$OUT/spin.err" || { cat "$OUT/spin.err"; fail "annotate spin exit $?"; }
head -n 20 "$OUT/spin.txt"

# the addresses, against objdump's listing of the same file
objdump -d --no-show-raw-insn "$OUT/nofp" | awk '/<spin>:/ { on = 1; next } on && /^$/ { exit } on { sub(":", "", $1); print "0x" $1 }' |
	sed 's/^0x0*/0x/' >"$OUT/objdump.addrs"
awk '!/^#/ { for (i = 1; i <= NF; i++) if ($i ~ /^0x/) { print $i; break } }' "$OUT/spin.txt" | sed 's/^0x0*/0x/' >"$OUT/annotate.addrs"
# objdump also lists the padding after ret: compare annotate's lines with its first ones
n=$(wc -l <"$OUT/annotate.addrs")
[ "$n" -ge 8 ] || fail "annotate listed $n instructions"
head -n "$n" "$OUT/objdump.addrs" | cmp -s - "$OUT/annotate.addrs" ||
	{ paste "$OUT/objdump.addrs" "$OUT/annotate.addrs" | head; fail "annotate's instructions are not objdump's"; }
note "spin: $n instructions, the same addresses as objdump"

python3 - "$OUT/spin.txt" <<'PY' || fail "the loop does not hold spin's samples"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
rows = []
for l in lines:
    m = re.match(r'^(==>| \* |   )\s*(?:([\d.]+)\s+(\d+))?\s+([> ])\s+(0x[0-9a-f]+)\s+(\S+)\s*(.*)$', l)
    if m:
        rows.append((m.group(1), int(m.group(3) or 0), m.group(4) == '>', int(m.group(5), 16), m.group(6), m.group(7)))
total = sum(r[1] for r in rows)
first = next(i for i, r in enumerate(rows) if r[2])
back = next(i for i, r in enumerate(rows) if r[4].startswith('j') and '<spin+' in r[5])
assert first < back, (first, back)
loop = sum(r[1] for r in rows[first:back + 1])
hot = next(i for i, r in enumerate(rows) if r[0] == '==>')
print(f"loop {loop} of {total} samples; hottest at line {hot} (loop {first}..{back})")
assert total >= 100 and loop * 100 >= 90 * total and first <= hot <= back
assert f"<spin+{hex(rows[first][3] - rows[0][3])}>" in rows[back][5], rows[back]
PY

"$DOMPROF" annotate -i "$D" --format json spin >"$OUT/spin.json" || fail "annotate --format json"
python3 - "$OUT/spin.json" <<'PY' || fail "annotate --format json: samples not all placed"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d) == 1 and d[0]['symbol'] == 'spin' and d[0]['code'] == 'file', d[0].get('code')
placed = sum(i['samples'] for i in d[0]['instructions'])
assert placed + d[0]['unplaced'] == d[0]['samples'], (placed, d[0]['unplaced'], d[0]['samples'])
assert any(i.get('branch_inside') for i in d[0]['instructions'])
PY

"$DOMPROF" record -f -F 1000 -o "$OUT/kh.data" -- "$WL/kernelheavy" 1 >/dev/null 2>&1 || fail "record kernelheavy"
"$DOMPROF" annotate -i "$OUT/kh.data" -n 2 >"$OUT/top2.txt" || fail "annotate -n 2"
[ "$(grep -c '^# annotate: ' "$OUT/top2.txt")" -eq 2 ] || fail "annotate -n 2 did not show two functions"
"$DOMPROF" annotate -i "$OUT/kh.data" --mode kernel >"$OUT/k.txt" || fail "annotate --mode kernel"
grep -q '^# no instructions: no code bytes for this kernel' "$OUT/k.txt" || { head -n 5 "$OUT/k.txt"; fail "kernel: no reason given"; }
grep -Eq '^ +[0-9.]+ +[0-9]+  0xffff[0-9a-f]+  <[^+]+\+0x[0-9a-f]+>$' "$OUT/k.txt" || fail "kernel: no hot addresses"
# the kernel's name filter (SYMTAB kind 9) is in the recording, and
# annotate NAME of the hottest kernel functions reads the same with it
# as without it (DOMPROF_IGNORE_KSYMNF=1: as a reader that knows no kind 9)
"$DOMPROF" dump -i "$OUT/kh.data" | grep -q 'SYMTAB *kind=9 name=kallsyms' || fail "no kernel name filter recorded"
"$DOMPROF" report -q -i "$OUT/kh.data" -l --mode kernel --format csv -t 1 | awk -F, 'NR > 1 && NR <= 4 { print $5 }' >"$OUT/ksyms.txt"
[ -s "$OUT/ksyms.txt" ] || fail "no kernel functions to annotate"
while read -r ks; do
	"$DOMPROF" annotate -i "$OUT/kh.data" "$ks" >"$OUT/nf1.txt" || fail "annotate $ks"
	DOMPROF_IGNORE_KSYMNF=1 "$DOMPROF" annotate -i "$OUT/kh.data" "$ks" >"$OUT/nf0.txt" || fail "annotate $ks without the filter"
	cmp -s "$OUT/nf0.txt" "$OUT/nf1.txt" || { diff "$OUT/nf0.txt" "$OUT/nf1.txt" | head; fail "annotate $ks: the name filter changed the output"; }
	grep -q "^# annotate: $ks in \[kernel.kallsyms\]" "$OUT/nf1.txt" || fail "annotate $ks: not the kernel's"
done <"$OUT/ksyms.txt"

# controls
"$DOMPROF" annotate -i "$D" spn >"$OUT/nosuch.out" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "annotate spn: exit $rc"
[ "$(wc -l <"$OUT/nosuch.out")" -eq 1 ] && grep -q "^domprof annotate: no function 'spn' has samples; nearest: spin" "$OUT/nosuch.out" ||
	fail "annotate spn: $(cat "$OUT/nosuch.out")"
cp "$WL/threefuncs" "$OUT/nofp"
"$DOMPROF" annotate -i "$D" spin >"$OUT/stale.txt" 2>&1 && fail "control: a replaced binary still annotates spin"
grep -q 'build-id differs from the recording' "$OUT/stale.txt" && ! grep -q 'addq' "$OUT/stale.txt" ||
	{ head -n 5 "$OUT/stale.txt"; fail "control: a replaced binary was disassembled"; }
"$DOMPROF" annotate -i "$D" -n 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "annotate -n 0: not a usage error"
exit 0
