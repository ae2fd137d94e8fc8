#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The golden check: the outputs of report, info, dump, diff, export and
# flamegraph on the recordings kept in tests/fixtures/golden/ are byte for
# byte what they were when the expected outputs were made (see the
# commands file there). A refactor must not change them; an intended
# change regenerates them with `tests/e2e/golden.sh --regen`, and the diff
# of expected/ is reviewed with it.
# Control: a copy of the fixture with one sample's ip changed must differ
# (the check can fail).
source "$(dirname "$0")/../lib/common.bash"
G=$TOP/tests/fixtures/golden
regen=0; [ "${1:-}" = --regen ] && regen=1
BIG=65536

# run NAME ARGS: the command's output in $OUT/NAME
run() {
	local name=$1 args=$2 rc
	local out="$OUT/$name.file"
	args=${args//@OUT@/$out}
	# shellcheck disable=SC2086  # ARGS are words, as in the commands file
	(cd "$G" && "$DOMPROF" $args >"$OUT/$name.stdout" 2>"$OUT/$name.stderr"); rc=$?
	[ $rc = 0 ] || { cat "$OUT/$name.stderr"; fail "$name: exit $rc"; }
	local f
	f=$(ls "$out"* 2>/dev/null | head -n 1)
	if [ -n "$f" ]; then mv "$f" "$OUT/$name"; else mv "$OUT/$name.stdout" "$OUT/$name"; fi
}

names=()
while IFS='|' read -r name args; do
	case $name in ''|'#'*) continue ;; esac
	run "$name" "$args"
	names+=("$name")
done <"$G/commands"

if [ $regen = 1 ]; then
	rm -rf "$G/expected"; mkdir -p "$G/expected"
	: >"$G/expected/SHA256SUMS"
	for n in "${names[@]}"; do
		if [ "$(stat -c %s "$OUT/$n")" -le $BIG ]; then cp "$OUT/$n" "$G/expected/$n"
		else (cd "$OUT" && sha256sum "$n") >>"$G/expected/SHA256SUMS"; fi
	done
	echo "regenerated ${#names[@]} expected outputs in $G/expected"
	exit 0
fi

bad=0
for n in "${names[@]}"; do
	if [ -f "$G/expected/$n" ]; then
		cmp -s "$G/expected/$n" "$OUT/$n" && continue
		echo "--- $n differs:"; diff "$G/expected/$n" "$OUT/$n" | head -n 20
	else
		want=$(awk -v n="$n" '$2 == n {print $1}' "$G/expected/SHA256SUMS")
		[ -n "$want" ] || { echo "--- $n: no expected output"; bad=1; continue; }
		[ "$(sha256sum <"$OUT/$n" | cut -d' ' -f1)" = "$want" ] && continue
		echo "--- $n differs from its expected hash ($(stat -c %s "$OUT/$n") bytes, in $OUT/$n)"
	fi
	bad=1
done
[ $bad = 0 ] || fail "outputs differ from tests/fixtures/golden/expected (an intended change: --regen and review)"
echo "${#names[@]} outputs identical"

# control: the comparison notices a changed recording (one byte of the
# first chunk flipped: that chunk is skipped as damaged, so its samples go)
python3 - "$G/merged.data" "$OUT/changed.data" <<'PY' || fail "control: cannot make the changed copy"
import sys
b = bytearray(open(sys.argv[1], "rb").read())
hl = int.from_bytes(b[16:20], "little")
b[(hl + 7) // 8 * 8 + 32 + 100] ^= 0xff
open(sys.argv[2], "wb").write(b)
PY
(cd "$OUT" && "$DOMPROF" report -q -i changed.data -l >"$OUT/changed.out" 2>/dev/null)
cmp -s "$OUT/changed.out" "$OUT/report-l" && fail "control: a damaged copy gives the same report"
echo "control: a changed copy reports differently"
echo ok
