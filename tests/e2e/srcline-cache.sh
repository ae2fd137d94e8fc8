#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The source line cache (src/symbols/lcache.h, docs/report.md "The line
# cache") on a real recording of the lines workload, run as two images:
# a copy with its own DWARF and a stripped copy whose lines come from its
# debug file (a debuglink beside it), the two key kinds.
#  - known answer: with the cache off (DOMPROF_LINE_CACHE=0) the report
#    -s srcline, -s symbol,srcline, --inline and --no-inline, the CSV,
#    and annotate's interleaved source are what they are; cold (an empty
#    cache: the files are written, 0600 in a 0700 directory) and warm
#    (read: verbose says every address came from the cache, none from
#    DWARF, nothing written) they are byte-identical to that; annotate
#    cold then warm too, and a report after annotate (a cache that holds
#    only some addresses: the others are looked up and merged in);
#  - control that must fail: a forged cache that passes every check but
#    says another line (test-tool lcache) is read: the report shows it;
#  - hostile or stale files fall back to the DWARF, same output: a
#    flipped byte, a cut file, a file of another key (refused, then
#    written anew), the image touched (its identity changed), a cache
#    directory that cannot be made (not written, said so);
#  - an image without a build-id gets no cache file (the same rows).
# Recorded with --no-lines: the recording's own line tables
# (srcline-embedded.sh) would answer before the cache.
source "$(dirname "$0")/../lib/common.bash"
need_workload lines
command -v objcopy >/dev/null || skip "objcopy is missing"
SRC=$TOP/tests/workloads/lines.c
la=$(grep -n 'LINE_A:' "$SRC" | cut -d: -f1)
export DOMPROF_CACHE=$OUT/cache
D=$OUT/lines.data
cp "$WL/lines" "$OUT/lines"
objcopy --only-keep-debug "$OUT/lines" "$OUT/lines-s.debug"
objcopy --strip-all --add-gnu-debuglink="$OUT/lines-s.debug" "$OUT/lines" "$OUT/lines-s"
"$DOMPROF" record --no-lines -f -F 1000 -o "$D" -- sh -c "'$OUT/lines' 150; '$OUT/lines-s' 150" >"$OUT/record.log" 2>&1 ||
	{ cat "$OUT/record.log"; fail "record failed"; }

# run NAME MODE: every srcline output into $OUT/NAME.*
run() {
	local n=$1 m=$2 r=0
	DOMPROF_LINE_CACHE=$m "$DOMPROF" report -q -i "$D" -l -s srcline >"$OUT/$n.srcline" 2>"$OUT/$n.err" || r=1
	DOMPROF_LINE_CACHE=$m "$DOMPROF" report -q -i "$D" -l -s symbol,srcline >"$OUT/$n.symsrc" 2>>"$OUT/$n.err" || r=1
	DOMPROF_LINE_CACHE=$m "$DOMPROF" report -q -i "$D" -l -s srcline --inline --format csv >"$OUT/$n.inl" 2>>"$OUT/$n.err" || r=1
	DOMPROF_LINE_CACHE=$m "$DOMPROF" report -q -i "$D" -l -s srcline --no-inline >"$OUT/$n.noinl" 2>>"$OUT/$n.err" || r=1
	DOMPROF_LINE_CACHE=$m "$DOMPROF" annotate -i "$D" two_lines >"$OUT/$n.ann" 2>>"$OUT/$n.err" || r=1
	[ $r = 0 ] || fail "$n: $(cat "$OUT/$n.err")"
}
same() {
	for k in srcline symsrc inl noinl ann; do
		cmp -s "$OUT/off.$k" "$OUT/$1.$k" || fail_later "$1: $k differs from the cache off: $(diff "$OUT/off.$k" "$OUT/$1.$k" | head -n 6)"
	done
}
# says NAME PATTERN: the verbose line of a report matches
says() {
	DOMPROF_LINE_CACHE=verbose "$DOMPROF" report -q -i "$D" -l -s srcline >"$OUT/$1.v" 2>&1 || fail "$1: verbose report"
	grep -Eq "^# WARNING: line cache: $2" "$OUT/$1.v" ||
		fail_later "$1: expected 'line cache: $2', got: $(grep 'line cache' "$OUT/$1.v")"
}

note "cache off, cold, warm"
run off 0
[ ! -e "$OUT/cache" ] || fail "the cache was written with DOMPROF_LINE_CACHE=0"
grep -q "lines.c:$la " "$OUT/off.srcline" || fail "no LINE_A row (lines.c:$la): $(head -n 20 "$OUT/off.srcline")"
grep -Eq "lines.c:$la +lines-s " "$OUT/off.srcline" || fail "the stripped copy has no LINE_A row from its debug file"
grep -q "inlined into with_inline" "$OUT/off.srcline" || fail "no inlined row"
grep -q "LINE_A" "$OUT/off.ann" || fail "annotate shows no source"
says cold-v "[0-9]+ images: 0 addresses from 0 cache files, [1-9][0-9]* looked up in DWARF, [2-9][0-9]* files written"
rm -rf "$OUT/cache"
run cold 1
same cold
L=$OUT/cache/lines
files=$(ls "$L"/*.lines 2>/dev/null | wc -l)
[ "$files" -ge 2 ] || fail "cold: $files cache files in $L"
[ "$(stat -c %a "$L")" = 700 ] || fail_later "cache directory mode $(stat -c %a "$L")"
for f in "$L"/*.lines; do [ "$(stat -c %a "$f")" = 600 ] || fail_later "mode $(stat -c %a "$f"): $f"; done
run warm 1
same warm
says warm-v "[0-9]+ images: [1-9][0-9]* addresses from [2-9][0-9]* cache files, 0 looked up in DWARF, 0 files written$"

note "annotate alone cold, then the report merges in the rest"
rm -rf "$OUT/cache"
DOMPROF_LINE_CACHE=1 "$DOMPROF" annotate -i "$D" two_lines >"$OUT/ann-cold.ann" || fail "annotate cold"
cmp -s "$OUT/off.ann" "$OUT/ann-cold.ann" || fail_later "annotate cold differs"
# (lines-s: annotate finds no code in it, its debug file's .text is empty)
[ "$(ls "$L"/*.lines 2>/dev/null | wc -l)" -ge 1 ] || fail "annotate wrote no cache file"
DOMPROF_LINE_CACHE=1 "$DOMPROF" annotate -i "$D" two_lines >"$OUT/ann-warm.ann" || fail "annotate warm"
cmp -s "$OUT/off.ann" "$OUT/ann-warm.ann" || fail_later "annotate warm differs"
says partial-v "[0-9]+ images: [1-9][0-9]* addresses from [1-9][0-9]* cache files, [1-9][0-9]* looked up in DWARF, [1-9][0-9]* files written"
run merged 1
same merged
says merged-v "[0-9]+ images: [1-9][0-9]* addresses from [2-9][0-9]* cache files, 0 looked up in DWARF, 0 files written$"

# the cache file of the copy with its own DWARF: its build-id's
# (lines/BUILDID-HASH.lines, HASH of "own" and the image's path: the
# stripped copy has the same build-id and its own file)
bid=$(readelf -n "$OUT/lines" | awk '/Build ID/ { print $3 }')
h=$(python3 -c "import hashlib, sys; print(hashlib.sha256(b'own\0' + sys.argv[1].encode()).hexdigest()[:16])" "$(realpath "$OUT/lines")")
C=$L/$bid-$h.lines
[ -s "$C" ] || fail "no cache file $C"
cp "$C" "$OUT/good.lines"

note "control: a forged cache is what the report reads"
"$TT" lcache "$OUT/good.lines" "$C" "$la" 9999 >"$OUT/forge.log" || fail "test-tool lcache: $(cat "$OUT/forge.log")"
grep -q ' [1-9][0-9]* changed$' "$OUT/forge.log" || fail "forged no entry: $(cat "$OUT/forge.log")"
run forged 1
grep -Eq "lines.c:9999 +lines " "$OUT/forged.srcline" || fail_later "control: the forged line was not read: $(head -n 14 "$OUT/forged.srcline")"
cmp -s "$OUT/off.srcline" "$OUT/forged.srcline" && fail_later "control: a report from a forged cache equals the DWARF's"
grep -q "lines.c:9999" "$OUT/forged.ann" || fail_later "control: annotate did not read the forged line"

note "hostile and stale cache files: the DWARF, same output"
# flip AT: good.lines with the byte at AT (a Python expression of n, the
# length) flipped, as the cache file
flip() { python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); n=len(b); b[eval(sys.argv[3])]^=0x40; open(sys.argv[2],'wb').write(b)" "$OUT/good.lines" "$C" "$1"; }
flip n//2
run flipped 1
same flipped
flip n//2
says flipped-v ".*refused: .*payload checksum mismatch"
flip 12
says header-v ".*refused: .*header checksum mismatch"
head -c 100 "$OUT/good.lines" >"$C"
run cut 1
same cut
head -c 100 "$OUT/good.lines" >"$C"
says cut-v ".*refused: .*sizes do not match"
"$TT" lcache "$OUT/good.lines" "$C" 0 0 zero-key >/dev/null || fail "test-tool lcache zero-key"
run stale 1
same stale
"$TT" lcache "$OUT/good.lines" "$C" 0 0 zero-key >/dev/null
says stale-v ".*refused: .*made from another file"
says rewritten-v "[0-9]+ images: [1-9][0-9]* addresses from [2-9][0-9]* cache files, 0 looked up in DWARF, 0 files written$"
"$TT" lcache "$OUT/good.lines" "$C" "$la" 9999 >/dev/null
touch "$OUT/lines"
run touched 1
same touched
cp "$OUT/good.lines" "$C"
touch "$OUT/lines"
says touched-v ".*refused: .*made from another file"
: >"$OUT/afile"
DOMPROF_CACHE=$OUT/afile/sub run nodir 1
same nodir
DOMPROF_CACHE=$OUT/afile/sub says nodir-v ".*not written: "

note "an image without a build-id: no cache file, lines all the same"
objcopy --remove-section=.note.gnu.build-id "$OUT/lines" "$OUT/lines-nobid"
"$DOMPROF" record --no-lines -f -F 1000 -o "$OUT/nobid.data" -- "$OUT/lines-nobid" 100 >"$OUT/record-nobid.log" 2>&1 ||
	{ cat "$OUT/record-nobid.log"; fail "record of the copy without a build-id failed"; }
DOMPROF_LINE_CACHE=0 "$DOMPROF" report -q -i "$OUT/nobid.data" -l -s srcline >"$OUT/nobid-off.txt" 2>/dev/null
"$DOMPROF" report -q -i "$OUT/nobid.data" -l -s srcline >"$OUT/nobid-1.txt" 2>/dev/null
"$DOMPROF" report -q -i "$OUT/nobid.data" -l -s srcline >"$OUT/nobid-2.txt" 2>/dev/null
grep -Eq "lines.c:$la +lines-nobid " "$OUT/nobid-off.txt" || fail "the copy without a build-id has no LINE_A row"
cmp -s "$OUT/nobid-off.txt" "$OUT/nobid-1.txt" && cmp -s "$OUT/nobid-off.txt" "$OUT/nobid-2.txt" ||
	fail_later "the copy without a build-id: reports differ"
hn=$(python3 -c "import hashlib, sys; print(hashlib.sha256(b'own\0' + sys.argv[1].encode()).hexdigest()[:16])" "$(realpath "$OUT/lines-nobid")")
! ls "$L"/*-"$hn".lines >/dev/null 2>&1 || fail_later "a cache file for an image without a build-id: $(ls "$L"/*-"$hn".lines)"
exit "$FAILED"
