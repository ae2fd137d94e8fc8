#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report --sort srcline (src/symbols/lines.c, libdw line tables) on a real
# recording of the lines workload (built -O1 -g: two_lines's LINE_A does
# 3x the work of LINE_B; inl_helper is always inlined into with_inline):
#  - LINE_A : LINE_B is 75:25 within 5 points (of the two);
#  - inline (default): rows at inl_helper's own lines, named
#    "inl_helper (inlined into with_inline)", hold >= 50% of the samples
#    in with_inline's code; --no-inline: no inl_helper row, with_inline's call
#    line (LINE_CALL) holds them; CSV and JSON carry the srcline;
#  - -s symbol,srcline splits two_lines per line as well;
#  - annotate two_lines shows the source lines with their shares (LINE_A
#    75% of the two within 5 points, its text from the file) and the
#    hottest instruction under one of them; control: --source-prefix
#    elsewhere finds no source;
#  - controls: a copy stripped of its DWARF (strip -g) gives "[no line
#    info]" rows and one warning naming it; a copy whose .debug_line is
#    overwritten with junk still reports (exit 0) and names no LINE_A
#    row; the kernel's rows say [no line info];
#  - compressed debug sections (objcopy --compress-debug-sections=zlib,
#    as libc6-dbg ships them: lines.c reads them through dwsect.c's
#    rebuilt file, not libdw's own inflation): one recording of such a
#    copy reports byte for byte the same srcline rows (inline and
#    --no-inline, JSON, annotate) as when the file at its path is
#    swapped for the uncompressed original (same build-id, same code);
#    control: swapped for the junk-.debug_line copy, the rows differ;
#  - one CPU (taskset -c 0: the images' lines looked up on one thread,
#    sym_srcline_prefetch) gives the same rows as all CPUs.
source "$(dirname "$0")/../lib/common.bash"
need_workload lines
SRC=$TOP/tests/workloads/lines.c
la=$(grep -n 'LINE_A:' "$SRC" | cut -d: -f1)
lb=$(grep -n 'LINE_B:' "$SRC" | cut -d: -f1)
# inl_helper's own lines: from its definition to its closing brace
i0=$(grep -n '^static inline.*inl_helper(' "$SRC" | cut -d: -f1)
i1=$(awk -v s="$i0" 'NR > s && /^}/ { print NR; exit }' "$SRC")
lc=$(grep -n 'LINE_CALL' "$SRC" | tail -n 1 | cut -d: -f1)

rec() { # BIN DATA
	"$DOMPROF" record -f -F 1000 -o "$2" -- "$1" 200 >"$2.log" 2>&1 || { cat "$2.log"; fail "record $1 failed"; }
}
cp "$WL/lines" "$OUT/lines"
D=$OUT/lines.data
rec "$OUT/lines" "$D"
"$DOMPROF" report -i "$D" -l -s srcline | sed -n '/^samples/,+6p'

csv() { "$DOMPROF" report -q -i "$1" -l -s srcline --format csv "${@:2}" 2>/dev/null; }
read -r a b < <(csv "$D" | awk -F, -v a="lines.c:$la" -v b="lines.c:$lb" '
	$6 == a { x += $1 } $6 == b { y += $1 } END { print x + 0, y + 0 }')
note "LINE_A (lines.c:$la) $a, LINE_B (lines.c:$lb) $b samples"
[ $((a + b)) -ge 200 ] || fail "only $((a + b)) samples on the two lines"
python3 -c "import sys; s = 100.0 * $a / ($a + $b); print(f'LINE_A share {s:.1f}%'); sys.exit(0 if abs(s - 75) <= 5 else 1)" ||
	fail "LINE_A : LINE_B is not 75:25 within 5 points"

# inlining
csv "$D" >"$OUT/inl.csv"
read -r own call < <(awk -F, -v i0="$i0" -v i1="$i1" '
	$5 == "inl_helper" && $7 == "with_inline" { n += $1; split($6, f, ":"); if (f[1] == "lines.c" && f[2] + 0 >= i0 && f[2] + 0 <= i1) o += $1 }
	$5 == "with_inline" { n += $1 } END { print o + 0, n + 0 }' "$OUT/inl.csv")
note "inline: inl_helper's lines (lines.c:$i0-$i1) hold $own of the $call samples in with_inline's code"
[ "$call" -ge 20 ] && [ $((own * 2)) -ge "$call" ] || fail "inline: inl_helper's line holds $own of $call"
csv "$D" --no-inline >"$OUT/noinl.csv"
! grep -q ',inl_helper,' "$OUT/noinl.csv" || fail "--no-inline still has an inl_helper row"
read -r at all < <(awk -F, -v c="lines.c:$lc" '$5 == "with_inline" { n += $1; if ($6 == c) o += $1 } END { print o + 0, n + 0 }' "$OUT/noinl.csv")
note "--no-inline: with_inline's call line lines.c:$lc holds $at of $all"
[ "$all" -ge 20 ] && [ $((at * 2)) -ge "$all" ] || fail "--no-inline: the call line holds $at of $all"
"$DOMPROF" report -q -i "$D" -l -s srcline --format json | python3 -c "
import json, sys
rows = json.load(sys.stdin)['rows']
assert any(r.get('srcline') == 'lines.c:$la' for r in rows)
assert any(r.get('inlined_into') == 'with_inline' for r in rows)
" || fail "JSON rows carry no srcline / inlined_into"
n=$("$DOMPROF" report -q -i "$D" -l -s symbol,srcline --format csv | awk -F, '$5 == "two_lines"' | wc -l)
[ "$n" -ge 2 ] || fail "-s symbol,srcline: two_lines in $n rows"
"$DOMPROF" report -i "$D" -l -s srcline | grep -q '\[no line info\] *\[kernel.kallsyms\]' ||
	note "(no kernel samples in this recording)"

# annotate interleaves the source: LINE_A's row (its text from the
# file) holds 75% of the two lines within 5 points, and the hottest
# instruction is under it; control: sources looked for elsewhere are
# "not found", and no source text is shown
"$DOMPROF" annotate -i "$D" two_lines >"$OUT/ann.txt" || fail "annotate two_lines"
python3 - "$OUT/ann.txt" "$la" "$lb" <<'PY' || fail "annotate's source lines"
import re, sys
t = open(sys.argv[1]).read().splitlines()
rows = {}
hot_lines, cur = [], None
for l in t:
    m = re.match(r'^\s+(?:([\d.]+)\s+(\d+))?\s+lines\.c:(\d+)  (.*)$', l)
    if m:
        cur = int(m.group(3))
        rows[cur] = (int(m.group(2) or 0), m.group(4))
    elif l.startswith('==>'):
        hot_lines.append(cur)   # several when the hottest count is tied
a, b = rows[int(sys.argv[2])], rows[int(sys.argv[3])]
share = 100.0 * a[0] / (a[0] + b[0])
print(f"annotate: LINE_A {a[0]}, LINE_B {b[0]} ({share:.1f}%), hottest under line(s) {hot_lines}")
assert 'LINE_A' in a[1] and 'LINE_B' in b[1], (a, b)
# a tie (a fresh-clone run: 32 samples on an imul of LINE_A and on the
# loop's subl, line 34) marks both: one of them is under the two lines
assert abs(share - 75) <= 5 and any(h in (int(sys.argv[2]), int(sys.argv[3])) for h in hot_lines)
PY
"$DOMPROF" annotate -i "$D" two_lines --source-prefix /nonexistent >"$OUT/ann-nosrc.txt" || fail "annotate --source-prefix"
grep -q '^# source /nonexistent/.* not found' "$OUT/ann-nosrc.txt" && ! grep -q 'LINE_A' "$OUT/ann-nosrc.txt" ||
	fail "control: sources under a wrong prefix were found"

# controls: no DWARF; a damaged line table
strip -g -o "$OUT/lines-nodwarf" "$OUT/lines"
rec "$OUT/lines-nodwarf" "$OUT/nodwarf.data"
"$DOMPROF" report -i "$OUT/nodwarf.data" -l -s srcline >"$OUT/nodwarf.txt" 2>&1 || fail "report of the stripped copy exit $?"
grep -q '^# WARNING: no line information for lines-nodwarf' "$OUT/nodwarf.txt" || fail "no warning for the image without lines"
grep -Eq '\[no line info\] +lines-nodwarf +two_lines' "$OUT/nodwarf.txt" || fail "the stripped copy's rows are not [no line info]"
cp "$OUT/lines" "$OUT/lines-junk"
python3 - "$OUT/lines-junk" <<'PY' || fail "could not damage .debug_line"
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
shoff, = struct.unpack_from('<Q', b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
def sh(i):
    return struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize)
stroff = sh(shstrndx)[4]
for i in range(shnum):
    s = sh(i)
    name = bytes(b[stroff + s[0]:stroff + s[0] + 32]).split(b'\0')[0]
    if name == b'.debug_line':
        off, size = s[4], s[5]
        for j in range(size):
            b[off + j] = (j * 151 + 7) & 0xff
        open(p, 'wb').write(b)
        sys.exit(0)
sys.exit(1)
PY
rec "$OUT/lines-junk" "$OUT/junk.data"
"$DOMPROF" report -i "$OUT/junk.data" -l -s srcline >"$OUT/junk.txt" 2>&1 || fail "report with a junk .debug_line: exit $?"
! grep -q "lines.c:$la " "$OUT/junk.txt" || fail "control: a junk line table still names LINE_A"
grep -Eq 'lines-junk +two_lines' "$OUT/junk.txt" || fail "a junk line table lost the symbol rows"

# compressed debug sections: the same answers as the uncompressed file
objcopy --compress-debug-sections=zlib "$OUT/lines" "$OUT/lines-z"
readelf -SW "$OUT/lines-z" | grep -q ' \.debug_info .* C ' || fail "objcopy did not compress .debug_info"
cp "$OUT/lines-z" "$OUT/lines-z.keep"
rec "$OUT/lines-z" "$OUT/z.data"
TS=
zrows() { # OUTFILE: every srcline view of z.data ($TS: a command in front)
	{ $TS "$DOMPROF" report -q -i "$OUT/z.data" -l -s srcline
	  $TS "$DOMPROF" report -q -i "$OUT/z.data" -l -s srcline --no-inline
	  $TS "$DOMPROF" report -q -i "$OUT/z.data" -l -s srcline --format json
	  $TS "$DOMPROF" annotate -i "$OUT/z.data" two_lines; } >"$1" 2>&1 || fail "report of the compressed copy: exit $?"
}
zrows "$OUT/z-compressed.txt"
grep -q "lines.c:$la " "$OUT/z-compressed.txt" || fail "the compressed copy names no LINE_A row"
if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then
	TS="taskset -c 0" zrows "$OUT/z-onecpu.txt"
	cmp "$OUT/z-compressed.txt" "$OUT/z-onecpu.txt" || fail "one CPU answers differently from $(nproc)"
fi
cp "$OUT/lines" "$OUT/lines-z"
zrows "$OUT/z-plain.txt"
cmp "$OUT/z-compressed.txt" "$OUT/z-plain.txt" || fail "compressed debug sections answer differently from the uncompressed file"
cp "$OUT/lines-junk" "$OUT/lines-z"
zrows "$OUT/z-junk.txt"
! cmp -s "$OUT/z-compressed.txt" "$OUT/z-junk.txt" || fail "control: the junk line table answers like the real one"
"$DOMPROF" report -i "$D" -s nosuch >/dev/null 2>&1; [ $? -eq 2 ] || fail "-s nosuch: not a usage error"
exit 0
