#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The source lines `record` embeds (SYMTAB kind 10, docs/file-format.md;
# docs/record.md "Source lines"), on a real recording of the lines
# workload (a copy of it, with its DWARF):
#  - known answer: report -s srcline, -s symbol,srcline, --inline (CSV),
#    --no-inline, -g -s symbol,srcline and annotate's interleaved source
#    are byte-identical with the tables and without them
#    (DOMPROF_EMBEDDED_LINES=0, the line cache off: the DWARF answers);
#    the record line says how many addresses it embedded, `dump` shows
#    the table named by the image's build-id;
#  - the tables are what answers: the copy's DWARF stripped after the
#    recording (build-id kept), the report still has LINE_A and LINE_B
#    at 3:1 and is the same as before; control that must fail: without
#    the tables (DOMPROF_EMBEDDED_LINES=0) the same report has no line;
#  - merge unites the tables of one image: a copy of threefuncs recorded
#    running func_a only, then func_b only, its DWARF stripped, the two
#    merged: one table of it, and the merged file's report names the
#    lines of both functions (copied as they were, the report would ask
#    the first table only: no line of func_b); control: without the
#    tables, none of them;
#  - --no-lines: no table, no record line about them.
source "$(dirname "$0")/../lib/common.bash"
need_workload lines
SRC=$TOP/tests/workloads/lines.c
la=$(grep -n 'LINE_A:' "$SRC" | cut -d: -f1)
lb=$(grep -n 'LINE_B:' "$SRC" | cut -d: -f1)
export DOMPROF_CACHE=$OUT/cache
D=$OUT/lines.data
cp "$WL/lines" "$OUT/lw"
"$DOMPROF" record -f -g -F 2000 -o "$D" -- "$OUT/lw" 150 >"$OUT/record.log" 2>&1 ||
	{ cat "$OUT/record.log"; fail "record failed"; }
grep -Eq '^domprof record: source lines of [1-9][0-9]* address(es)? in [1-9][0-9]* images? embedded' "$OUT/record.log" ||
	fail "no line about the embedded lines: $(cat "$OUT/record.log")"
bid=$(readelf -n "$OUT/lw" | sed -n 's/.*Build ID: *//p')
"$DOMPROF" dump -i "$D" | grep -q "SYMTAB *kind=10 name=$bid " || fail "no kind 10 table named $bid: $("$DOMPROF" dump -i "$D" | grep SYMTAB)"

# run NAME: every srcline output into $OUT/NAME.* (environment: the caller's)
run() {
	local n=$1 r=0
	"$DOMPROF" report -q -i "$D" -l -s srcline >"$OUT/$n.srcline" 2>"$OUT/$n.err" || r=1
	"$DOMPROF" report -q -i "$D" -l -s symbol,srcline >"$OUT/$n.symsrc" 2>>"$OUT/$n.err" || r=1
	"$DOMPROF" report -q -i "$D" -l -s srcline --inline --format csv >"$OUT/$n.inl" 2>>"$OUT/$n.err" || r=1
	"$DOMPROF" report -q -i "$D" -l -s srcline --no-inline >"$OUT/$n.noinl" 2>>"$OUT/$n.err" || r=1
	"$DOMPROF" report -q -i "$D" -l -g -s symbol,srcline >"$OUT/$n.graph" 2>>"$OUT/$n.err" || r=1
	"$DOMPROF" annotate -i "$D" two_lines >"$OUT/$n.ann" 2>>"$OUT/$n.err" || r=1
	[ $r = 0 ] || fail "$n: $(cat "$OUT/$n.err")"
}
# share FILE LINE: the percent of the row of lines.c:LINE
share() { awk -v k="lines.c:$2" '$0 ~ k" " {print $2; exit}' "$1"; }

note "with the tables and without: the same reports"
run emb
DOMPROF_EMBEDDED_LINES=0 DOMPROF_LINE_CACHE=0 run dwarf
for k in srcline symsrc inl noinl graph ann; do
	cmp -s "$OUT/dwarf.$k" "$OUT/emb.$k" ||
		fail_later "$k differs with the recording's lines: $(diff "$OUT/dwarf.$k" "$OUT/emb.$k" | head -n 6)"
done
grep -q "lines.c:$la " "$OUT/emb.srcline" || fail "no LINE_A row (lines.c:$la): $(head -n 20 "$OUT/emb.srcline")"

note "the copy's DWARF stripped: the lines come from the recording"
strip --strip-debug "$OUT/lw"
[ "$(readelf -n "$OUT/lw" | sed -n 's/.*Build ID: *//p')" = "$bid" ] || fail "strip changed the build-id"
! readelf -S "$OUT/lw" | grep -q debug_line || fail "the copy still has .debug_line"
"$DOMPROF" report -q -i "$D" -l -s srcline >"$OUT/strip.srcline" 2>"$OUT/strip.err" || fail "report: $(cat "$OUT/strip.err")"
cmp -s "$OUT/emb.srcline" "$OUT/strip.srcline" ||
	fail_later "stripped: the report changed: $(diff "$OUT/emb.srcline" "$OUT/strip.srcline" | head -n 6)"
a=$(share "$OUT/strip.srcline" "$la"); b=$(share "$OUT/strip.srcline" "$lb")
python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); r = a / (a + b) * 100
sys.exit(0 if abs(r - 75) <= 5 else 1)" "${a:-0}" "${b:-1e9}" ||
	fail_later "stripped: LINE_A:LINE_B is $a:$b, not 3:1 within 5 points"
# control: the same report without the tables has no line of the copy
DOMPROF_EMBEDDED_LINES=0 DOMPROF_LINE_CACHE=0 "$DOMPROF" report -q -i "$D" -l -s srcline >"$OUT/strip-off.srcline" 2>/dev/null
! grep -q "lines.c:" "$OUT/strip-off.srcline" || fail_later "control: lines without the tables and the DWARF"
grep -Eq '\[no line info\] +lw ' "$OUT/strip-off.srcline" || fail_later "control: no [no line info] row of lw"

note "merge: one table per image, the union of both"
need_workload threefuncs
cp "$WL/threefuncs" "$OUT/tf"
for f in a b; do
	[ $f = a ] && calls="1 0 0" || calls="0 1 0"
	"$DOMPROF" record -f -F 1000 -o "$OUT/tf-$f.data" -- "$OUT/tf" 30 $calls >"$OUT/tf-$f.log" 2>&1 ||
		{ cat "$OUT/tf-$f.log"; fail "record tf $calls failed"; }
done
strip --strip-debug "$OUT/tf"
tbid=$(readelf -n "$OUT/tf" | sed -n 's/.*Build ID: *//p')
"$DOMPROF" merge -q -f -o "$OUT/tf.data" "$OUT/tf-a.data" "$OUT/tf-b.data" || fail "merge"
n=$("$DOMPROF" dump -i "$OUT/tf.data" | grep -c "SYMTAB *kind=10 name=$tbid ")
[ "$n" = 1 ] || fail_later "merged: $n line tables of tf, not 1"
# fnline FILE FUNC: the line of FUNC's row in a -s symbol,srcline report
fnline() { awk -v f="$2" '$NF == f && /threefuncs\.c:[0-9]+/ {print; exit}' "$1"; }
"$DOMPROF" report -q -i "$OUT/tf.data" -l -s symbol,srcline --comm tf >"$OUT/tf.symsrc" 2>"$OUT/tf.err" ||
	fail "report merged: $(cat "$OUT/tf.err")"
for fn in func_a func_b; do
	[ -n "$(fnline "$OUT/tf.symsrc" $fn)" ] ||
		fail_later "merged: no line of $fn: $(head -n 12 "$OUT/tf.symsrc")"
done
DOMPROF_EMBEDDED_LINES=0 DOMPROF_LINE_CACHE=0 "$DOMPROF" report -q -i "$OUT/tf.data" -l -s symbol,srcline --comm tf \
	>"$OUT/tf-off.symsrc" 2>/dev/null
! grep -q "threefuncs\.c:" "$OUT/tf-off.symsrc" || fail_later "control: merged lines without the tables and the DWARF"

note "--no-lines"
"$DOMPROF" record --no-lines -f -F 1000 -o "$OUT/nolines.data" -- "$WL/lines" 50 >"$OUT/record-nolines.log" 2>&1 ||
	{ cat "$OUT/record-nolines.log"; fail "record --no-lines failed"; }
! grep -q "source lines" "$OUT/record-nolines.log" || fail_later "--no-lines: $(cat "$OUT/record-nolines.log")"
! "$DOMPROF" dump -i "$OUT/nolines.data" | grep -q "kind=10" || fail_later "--no-lines: a kind 10 table"
exit "$FAILED"
