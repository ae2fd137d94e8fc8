# SPDX-License-Identifier: MIT
# The quick unwind step against libdwfl on a real recording
# (src/symbols/unwind_quick.c, docs/dwarf-notes.md "The quick step").
# Sourced after tests/lib/common.bash by the tests that record with
# --call-graph dwarf (dwarf-known, dwarf-python, report-dwarf, xz-perf).
#
#   quick_check FILE MIN_PCT
#       `report -l -g` and `export --format folded` of FILE are the same
#       with the quick step (the default) and with libdwfl alone
#       (DOMPROF_DWARF_UNWIND=libdwfl), but for the count of walks each
#       took alone ("by the quick step", "from the cache"); and the quick
#       step walked at least MIN_PCT% of the stacks alone (so the check
#       compares something). Fails the test otherwise, naming the first
#       line that differs.
#   quick_control FILE
#       the comparison itself can fail: the same outputs with the
#       frame-pointer chains (DOMPROF_DWARF_UNWIND=0) must differ.

quick_outputs() { # FILE TAG [ENV...]: FILE.TAG.report / .folded, normalised
	local f=$1 tag=$2
	shift 2
	env "$@" "$DOMPROF" report -l -g -i "$f" >"$f.$tag.report" 2>"$f.$tag.err" ||
		fail "report -g of $f ($tag): $(head -c 300 "$f.$tag.err")"
	env "$@" "$DOMPROF" export --format folded -i "$f" -o "$f.$tag.folded" 2>>"$f.$tag.err" ||
		fail "export folded of $f ($tag): $(head -c 300 "$f.$tag.err")"
	sed -i -E 's/; [0-9]+ by the quick step, [0-9]+ from the cache$//' "$f.$tag.report"
}

quick_first_diff() { # A B: the first differing line pair, short
	diff "$1" "$2" | head -n 4 | cut -c 1-200 | tr '\n' ' '
}

quick_check() {
	local f=$1 min=$2
	quick_outputs "$f" quick
	quick_outputs "$f" dwfl DOMPROF_DWARF_UNWIND=libdwfl
	local ext
	for ext in report folded; do
		cmp -s "$f.quick.$ext" "$f.dwfl.$ext" ||
			fail "quick step and libdwfl differ ($ext of $(basename "$f")): $(quick_first_diff "$f.quick.$ext" "$f.dwfl.$ext")"
	done
	local line samples quick
	line=$("$DOMPROF" report -l -g -i "$f" 2>/dev/null | grep -m1 'by the quick step' || true)
	quick=$(sed -nE 's/.*; ([0-9]+) by the quick step.*/\1/p' <<<"$line")
	samples=$("$DOMPROF" report -l -g -i "$f" 2>/dev/null |
		sed -nE 's/^# dwarf unwinding: [0-9]+ of ([0-9]+) user stacks.*/\1/p' | head -n 1)
	[ -n "$quick" ] && [ -n "$samples" ] && [ "$samples" -gt 0 ] ||
		fail "no quick-step count in the report of $(basename "$f")"
	[ $((quick * 100)) -ge $((min * samples)) ] ||
		fail "the quick step walked $quick of $samples stacks of $(basename "$f") alone, under $min%"
	note "quick step = libdwfl on $(basename "$f") (report -g, folded); $quick of $samples stacks by the quick step alone"
}

quick_control() {
	local f=$1
	[ -f "$f.quick.folded" ] || quick_outputs "$f" quick
	quick_outputs "$f" fp DOMPROF_DWARF_UNWIND=0
	! cmp -s "$f.quick.folded" "$f.fp.folded" ||
		fail "control: the frame-pointer chains of $(basename "$f") compare equal to the DWARF ones"
	note "control: the frame-pointer chains of $(basename "$f") differ from the DWARF ones (the comparison can fail)"
}

#   delta_check FILE MIN_PCT
#       the user stacks of FILE (a recording, written in delta form:
#       format 1.5, docs/file-format.md "User stacks in delta form")
#       copied whole, as 1.4 stored them (`DOMPROF_USTACK_DELTA=0 merge`
#       of the one file), give the same `report -l -g` and `export
#       --format folded` (but for the header's file and command lines),
#       the same stacks byte for byte (`dump --ustack` but for the
#       delta's ustack_ref= and the copy's own DOMAIN, switch and STATS
#       records); at least MIN_PCT% of the recording's stack bytes were
#       references (so the check compares two encodings). Control: the
#       copy has no reference (its info prints no delta line, its dump
#       no ustack_ref=).
delta_check() {
	local f=$1 min=$2 w=$1.whole
	DOMPROF_USTACK_DELTA=0 "$DOMPROF" merge -q -f -o "$w" "$f" 2>"$f.delta.err" ||
		fail "merge of $(basename "$f") with DOMPROF_USTACK_DELTA=0: $(head -c 300 "$f.delta.err")"
	[ -f "$f.quick.report" ] || quick_outputs "$f" quick
	quick_outputs "$w" quick
	sed -i -E '/^# (file|command): /d' "$f.quick.report" "$w.quick.report"
	local ext
	for ext in report folded; do
		cmp -s "$f.quick.$ext" "$w.quick.$ext" ||
			fail "delta form and whole stacks differ ($ext of $(basename "$f")): $(quick_first_diff "$f.quick.$ext" "$w.quick.$ext")"
	done
	stacks() { "$DOMPROF" dump --ustack --type SAMPLE -i "$1" | sed -E 's/ ustack_ref=[0-9]+//; s/^ *[0-9]+ //'; }
	cmp -s <(stacks "$f") <(stacks "$w") || fail "delta form and whole stacks: dump --ustack differs"
	local refs total
	refs=$("$DOMPROF" info -i "$f" | sed -nE 's/^ +([0-9]+) of these bytes stored as references.*/\1/p')
	total=$("$DOMPROF" info -i "$f" | sed -nE 's/^user stacks: [0-9]+ samples, ([0-9]+) bytes.*/\1/p')
	[ -n "$refs" ] && [ -n "$total" ] && [ "$total" -gt 0 ] && [ $((refs * 100)) -ge $((min * total)) ] ||
		fail "$(basename "$f"): ${refs:-no} of ${total:-?} stack bytes in delta form, under $min%"
	! "$DOMPROF" info -i "$w" | grep -q 'stored as references' &&
		! "$DOMPROF" dump -i "$w" | grep -q 'ustack_ref=' ||
		fail "control: the whole copy of $(basename "$f") holds references"
	note "delta form = whole stacks on $(basename "$f") (report -g, folded, dump --ustack); $((refs * 100 / total))% of its stack bytes were references; control: the copy has none"
}
