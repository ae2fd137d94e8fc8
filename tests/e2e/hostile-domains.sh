#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Work grows linearly with the number of domains. Two generated
# recordings: 500 domains with 2,000 samples and 2,000 domains with
# 8,000 samples, every sample after a DOMAIN_SWITCH (each domain with a
# task, a mapping, user and kernel samples). Each analysis command is
# counted in machine instructions under valgrind's callgrind (the same
# count on any machine, whatever its speed) on both files: with indexed
# lookups the bigger file costs ~4x; a linear lookup per record or per
# row makes it ~16x. The test asks for less than 7x. callgrind cannot run
# the sanitized binary, so the plain build beside $DOMPROF is used (for
# .../build/san/domprof that is .../build/domprof). The same for one
# domain with 2,000 vs 8,000 embedded tables and as many images (each
# image finds its table by build-id). Also checks that the
# report still counts every sample and caps its warnings, and that forks
# share mapping lists and copies of them are bounded (memory of a fork
# bomb, with and without a mapping in each child).
source "$(dirname "$0")/lib/report-common.bash"
GEN=("$TT" gen-hostile)
[ -x "$TT" ] || fail "$TT missing (run 'make fixtures')"
command -v valgrind >/dev/null || skip "valgrind is not installed"
PLAIN="${DOMPROF_PLAIN:-}"
if [ -z "$PLAIN" ]; then
	case "$DOMPROF" in
	*/san/domprof) PLAIN="${DOMPROF%/san/domprof}/domprof" ;;
	*) PLAIN="$DOMPROF" ;;
	esac
fi
[ -x "$PLAIN" ] || fail "$PLAIN missing (make build/domprof)"
echo "counting with $PLAIN"

"${GEN[@]}" domains "$OUT/small.data" 500 2000 || fail "generator"
"${GEN[@]}" domains "$OUT/big.data" 2000 8000 || fail "generator"

# insns FILE ARGS...: instructions of one run (callgrind's "Collected")
insns() {
	local f=$1; shift
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$PLAIN" "$@" >/dev/null 2>"$OUT/cg.err" ||
		{ cat "$OUT/cg.err"; fail "$PLAIN $* failed"; }
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$OUT/cg.err"
}

check() {   # check NAME ARGS-with-@ : @ is replaced by the file
	local name=$1; shift
	local a=() b=()
	for x in "$@"; do a+=("${x//@/$SMALL}"); b+=("${x//@/$BIG}"); done
	local s l
	s=$(insns small "${a[@]}")
	l=$(insns big "${b[@]}")
	python3 - "$name" "$s" "$l" <<'PY' || fail "$name: work grows faster than the number of domains"
import sys
name, s, l = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = l / s
print("%-12s %12d -> %12d instructions: x%.2f for 4x the domains" % (name, s, l, r))
sys.exit(0 if r < 7 else 1)
PY
}
SMALL="$OUT/small.data" BIG="$OUT/big.data"
check report report -i @
check flamegraph flamegraph -i @ -o "$OUT/fg.html"
check export export --format speedscope -i @ -o "$OUT/x.json"
check diff diff @ @
check info info @
check merge merge -q -f -o "$OUT/m.data" @ g=@
# one domain with 2,000 vs 8,000 embedded tables and images matched by build-id
"${GEN[@]}" tables "$OUT/tables-small.data" 2000 || fail "generator"
"${GEN[@]}" tables "$OUT/tables-big.data" 8000 || fail "generator"
SMALL="$OUT/tables-small.data" BIG="$OUT/tables-big.data"
check tables report -i @
"$DOMPROF" report -i "$OUT/big.data" >"$OUT/big.txt" 2>&1 || fail "report (sanitized)"
grep -q "^# samples: 8000 total" "$OUT/big.txt" || fail "report: samples lost"
w=$(grep -c "WARNING" "$OUT/big.txt")
[ "$w" -le 101 ] || fail "report prints $w warning lines, want at most 101"
grep -q "WARNING: 901 more symbol warnings not shown" "$OUT/big.txt" || fail "report: capped warnings not counted"

# Forks share their parent's mapping list: a 450 KB file forking a process
# with 4,000 mappings 50,000 times (before: 2 GB resident) stays small.
"${GEN[@]}" forks "$OUT/forks.data" 4000 50000 || fail "generator"
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f %M -o "$OUT/forks.rss" timeout 60 "$DOMPROF" report -i "$OUT/forks.data" \
		>"$OUT/forks.txt" 2>&1 || fail "report of the fork file"
	kb=$(tail -n 1 "$OUT/forks.rss")
	echo "forks: peak RSS $kb KB"
	[ "$kb" -lt 300000 ] || fail "forks: peak RSS $kb KB, want < 300000"
	grep -q "^# samples: 50000 total" "$OUT/forks.txt" || fail "forks: samples lost"
	grep -Eq "^  50000 +100.0000 +\[forkmap\]" "$OUT/forks.txt" ||
		{ cat "$OUT/forks.txt"; fail "forks: children lost the parent's mappings"; }
	# each child maps a page of its own: its list is copied, within a
	# budget of 16 M entries in all (200 M wanted here), then dropped
	"${GEN[@]}" forks "$OUT/remap.data" 4000 50000 remap || fail "generator"
	/usr/bin/time -f %M -o "$OUT/remap.rss" timeout 60 "$DOMPROF" report -i "$OUT/remap.data" \
		>"$OUT/remap.txt" 2>&1 || fail "report of the remapping fork file"
	kb=$(tail -n 1 "$OUT/remap.rss")
	echo "forks with remaps: peak RSS $kb KB"
	[ "$kb" -lt 300000 ] || fail "forks with remaps: peak RSS $kb KB, want < 300000"
	grep -q "WARNING: mapping records dropped" "$OUT/remap.txt" || fail "remap: drops not reported"
	grep -Eq "^  50000 +100.0000 +\[forkmap\]" "$OUT/remap.txt" || fail "remap: samples lost"
fi
echo "hostile-domains: all checks passed"
