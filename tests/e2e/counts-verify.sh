#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 34 item 8: a chunk's two views (its records and its counts part,
# format 1.6, docs/file-format.md "Counts part") must not disagree
# silently. A recording of threefuncs (-g); in a chunk with a counts
# part, one bit of its largest group's record flipped (the sample's mode:
# user becomes hypervisor) and the CRCs sealed again
# (tests/e2e/lib/chunk-edit.py counts-flip). Then:
# - info names the disagreement in its damage line (exit 0, as for any
#   damage: docs/info-dump.md), and dump warns of it on stderr while its
#   samples are the intact file's;
# - report --verify warns of it on stderr and in its header (exit 0), and
#   reports what the records hold: the intact file's report -l, -j 1, 2
#   and 3 alike; its total is dump's, no [hypervisor] sample as in dump;
# - merge warns of it and writes the records (the merged file reports
#   as the intact one, without damage);
# - a part that does not hold up (its magic changed, counts-break) is
#   damage for info too, and is not what plain report counts.
# Controls: the intact file has "damage: none" in info and no warning
# with report --verify, whose output equals plain report's; the forged
# file's plain report and folded export do change (the group's N
# samples under [hypervisor]), so the edit did something.
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs
CE="$TOP/tests/e2e/lib/chunk-edit.py"
T="$OUT"

record tf -g -F 2000 -- "$WL/threefuncs" 100
D="$T/tf.data"
# the first chunk with a counts part (flag 2) whose largest group is of
# user-mode samples (threefuncs' loops: every one in practice)
moved= coff=
while read -r i off len seq nrec flags; do
	[ $((flags & 2)) = 2 ] || continue
	line=$(python3 "$CE" "$D" "$T/flip.data" counts-flip "$i") || fail "chunk-edit counts-flip $i"
	if [[ $line =~ ^group\ [0-9]+\ count\ ([0-9]+)\ mode\ 1$ ]]; then
		moved=${BASH_REMATCH[1]} coff=$off ci=$i
		break
	fi
done < <(python3 "$CE" "$D" list)
[ -n "$moved" ] || fail "no chunk with a counts part whose largest group is user-mode samples"
note "chunk $ci at offset $coff: a group of $moved samples made hypervisor ones in its counts part"
python3 "$CE" "$D" "$T/break.data" counts-break "$ci" >/dev/null || fail "chunk-edit counts-break"

# strip FILE: a report without its file line and warnings (for comparing)
strip() { grep -v -e '^# file:' -e '^# WARNING:' "$1"; }
hyp() {  # samples under [hypervisor] in a report -l --format csv
	python3 -c 'import csv,sys; print(sum(int(r["samples"]) for r in csv.DictReader(open(sys.argv[1])) if r["image"] == "[hypervisor]"))' "$1"
}

# --- the intact file (controls)
"$DOMPROF" info "$D" >"$T/info.tf" 2>&1 || fail "info intact: exit $?"
grep -qx 'damage: *none' "$T/info.tf" || fail "info intact: $(grep -A2 '^damage' "$T/info.tf")"
"$DOMPROF" report -q -l "$D" >"$T/plain.tf" 2>"$T/plain.tf.err" || fail "report intact: exit $?"
"$DOMPROF" report -q -l --verify "$D" >"$T/verify.tf" 2>"$T/verify.tf.err" || fail "report --verify intact: exit $?"
[ ! -s "$T/verify.tf.err" ] || fail "report --verify intact warns: $(cat "$T/verify.tf.err")"
cmp -s "$T/plain.tf" "$T/verify.tf" || fail "report --verify of the intact file differs from report"
grep -Eq '^[0-9]+ +[0-9.]+ +host +threefuncs +func_c$' "$T/plain.tf" || fail "intact report has no func_c row"

# --- the forged counts part
"$DOMPROF" info "$T/flip.data" >"$T/info.flip" 2>&1; rc=$?
[ $rc = 0 ] || fail "info forged: exit $rc (damage is exit 0)"
grep -Eq '^damage: +[0-9]+ place\(s\)$' "$T/info.flip" || fail "info forged: $(grep '^damage' "$T/info.flip")"
grep -Eq "^  offset $coff: counts part of chunk at offset $coff disagrees with its records: item [0-9]+/[0-9]+: $moved samples, mode differs$" \
	"$T/info.flip" || fail "info forged does not name the disagreement: $(grep -A3 '^damage' "$T/info.flip")"
note "info: $(grep -A1 '^damage' "$T/info.flip" | tail -n 1)"

# the edit did something: plain report (which counts from the parts) moved them
"$DOMPROF" report -q -l "$T/flip.data" >"$T/plain.flip" 2>"$T/plain.flip.err" || fail "report forged: exit $?"
! cmp -s <(strip "$T/plain.tf") <(strip "$T/plain.flip") || fail "control: the forged part changes nothing in report"
"$DOMPROF" report -q -l --format csv "$T/flip.data" >"$T/plain.flip.csv" 2>/dev/null || fail "report csv forged"
[ "$(hyp "$T/plain.flip.csv")" = "$moved" ] || fail "control: report counts $(hyp "$T/plain.flip.csv") [hypervisor] samples, expected $moved"
"$DOMPROF" export --format folded -i "$D" >"$T/tf.folded" 2>/dev/null || fail "export intact"
"$DOMPROF" export --format folded -i "$T/flip.data" >"$T/flip.folded" 2>/dev/null || fail "export forged"
grep -q 'hypervisor' "$T/flip.folded" && ! grep -q 'hypervisor' "$T/tf.folded" ||
	fail "control: the folded export does not show the forged part"

# report --verify: the disagreement on stderr, the records' numbers
for j in 1 2 3; do
	"$DOMPROF" report -q -l --verify -j $j "$T/flip.data" >"$T/verify.flip.j$j" 2>"$T/verify.flip.j$j.err"; rc=$?
	[ $rc = 0 ] || fail "report --verify -j $j forged: exit $rc"
	grep -q "^domprof report: warning: damaged file: counts part of chunk at offset $coff disagrees with its records" \
		"$T/verify.flip.j$j.err" || fail "report --verify -j $j: no warning: $(cat "$T/verify.flip.j$j.err")"
	cmp -s <(strip "$T/plain.tf") <(strip "$T/verify.flip.j$j") ||
		fail "report --verify -j $j: not the records' numbers: $(diff <(strip "$T/plain.tf") <(strip "$T/verify.flip.j$j") | head)"
done
grep -q "^# WARNING: damaged file: counts part of chunk at offset $coff disagrees" "$T/verify.flip.j1" ||
	fail "report --verify: no warning in the header"
note "report --verify: $(cat "$T/verify.flip.j1.err")"
"$DOMPROF" report -q -l --verify --format csv "$T/flip.data" >"$T/verify.flip.csv" 2>/dev/null || fail "report --verify csv"

# dump's view (the records): the intact file's samples, the damage on stderr
"$DOMPROF" dump --type SAMPLE "$D" 2>/dev/null | sed 's/^ *[0-9]* //' >"$T/dump.tf" || fail "dump intact"
"$DOMPROF" dump --type SAMPLE "$T/flip.data" 2>"$T/dump.flip.err" | sed 's/^ *[0-9]* //' >"$T/dump.flip" || fail "dump forged"
cmp -s "$T/dump.tf" "$T/dump.flip" || fail "dump: the forged file's samples differ from the intact one's"
grep -q "counts part of chunk at offset $coff disagrees" "$T/dump.flip.err" || fail "dump: no warning: $(cat "$T/dump.flip.err")"
total=$(grep -c . "$T/dump.flip")
dhyp=$(grep -c 'mode=hypervisor' "$T/dump.flip" || true)
grep -Eq "^# samples: $total total" "$T/verify.flip.j1" || fail "report --verify total is not dump's $total: $(grep '^# samples' "$T/verify.flip.j1")"
[ "$(hyp "$T/verify.flip.csv")" = "$dhyp" ] || fail "report --verify: $(hyp "$T/verify.flip.csv") [hypervisor] samples, dump $dhyp"
note "dump: $total samples, $dhyp hypervisor; report --verify the same, plain report $moved hypervisor"

# merge copies the records: it warns of the part, and the merged file
# (its parts made afresh) reports what the records hold, without damage
"$DOMPROF" merge -q -f -o "$T/merged.data" "$T/flip.data" 2>"$T/merge.err" || fail "merge forged: exit $?"
grep -q "counts part of chunk at offset $coff disagrees" "$T/merge.err" || fail "merge: no warning: $(cat "$T/merge.err")"
"$DOMPROF" info "$T/merged.data" | grep -qx 'damage: *none' || fail "merged file: damage"
"$DOMPROF" report -q -l "$T/merged.data" >"$T/plain.merged" 2>/dev/null || fail "report merged"
cmp -s <(strip "$T/plain.tf" | grep -v '^# command:') <(strip "$T/plain.merged" | grep -v '^# command:') ||
	fail "the merged file does not report the records' numbers"

# --- a counts part that does not hold up: damage for info, never counted
"$DOMPROF" info "$T/break.data" >"$T/info.break" 2>&1 || fail "info broken part: exit $?"
grep -q "^  offset $coff: counts part of chunk at offset $coff does not hold up" "$T/info.break" ||
	fail "info broken part: $(grep -A2 '^damage' "$T/info.break")"
"$DOMPROF" report -q -l "$T/break.data" >"$T/plain.break" 2>/dev/null || fail "report broken part"
cmp -s <(strip "$T/plain.tf") <(strip "$T/plain.break") || fail "report counted a part that does not hold up"
exit 0
