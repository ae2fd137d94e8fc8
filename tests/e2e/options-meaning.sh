#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One meaning per option across commands (docs/options.md), on the golden
# fixture: the new spellings give the same output as the older ones they
# replace (report --call-graph = --callgraph = -g; export --format = -f;
# dump --type = -t; diff --mode kernel = -k), --mode all is the default
# everywhere, and diff --mode user compares only user-mode symbols.
# Options may follow the file in info and dump (info FILE --no-debuginfod,
# dump FILE --type LOST) as in report; after `--` it is a name again.
# Control: --mode user and --mode kernel must give different outputs.
source "$(dirname "$0")/../lib/common.bash"
F=$TOP/tests/fixtures/golden/merged.data
# same NAME CMD1 -- CMD2: both commands succeed with the same stdout
same() {
	local name=$1; shift
	local a=() b=()
	while [ "$1" != -- ]; do a+=("$1"); shift; done; shift; b=("$@")
	"$DOMPROF" "${a[@]}" >"$OUT/$name.a" 2>/dev/null || fail "$name: '${a[*]}' exit $?"
	"$DOMPROF" "${b[@]}" >"$OUT/$name.b" 2>/dev/null || fail "$name: '${b[*]}' exit $?"
	cmp -s "$OUT/$name.a" "$OUT/$name.b" || fail "$name: '${a[*]}' and '${b[*]}' differ"
	echo "same: $name"
}
same call-graph report -q -i "$F" -l --call-graph -- report -q -i "$F" -l --callgraph
same g report -q -i "$F" -l -g -- report -q -i "$F" -l --call-graph
same export-format export -i "$F" --format folded -- export -i "$F" -f folded
same dump-type dump --type STATS "$F" -- dump -t STATS "$F"
same diff-kernel diff --mode kernel "$F" "$F" -- diff -k "$F" "$F"
same mode-all-report report -q -i "$F" -l --mode all -- report -q -i "$F" -l
same mode-all-diff diff --mode all "$F" "$F" -- diff "$F" "$F"
same mode-all-export export -i "$F" --format folded --mode all -- export -i "$F" --format folded
# options may follow the file in info and dump, as in report (the
# original took `--no-debuginfod` and `--type` for file names)
same info-after info --no-debuginfod "$F" -- info "$F" --no-debuginfod
same dump-after dump --type LOST "$F" -- dump "$F" --type LOST
same dump-after-t dump --type STATS "$F" -- dump "$F" -t STATS
# control: after `--` it is a file name again
"$DOMPROF" info "$F" -- --no-debuginfod >/dev/null 2>"$OUT/dd.err" && fail "info FILE -- --no-debuginfod read no such file"
grep -q -- "--no-debuginfod" "$OUT/dd.err" || fail "info FILE -- --no-debuginfod: $(cat "$OUT/dd.err")"
# flamegraph writes a file: compare the two files
"$DOMPROF" flamegraph -i "$F" --title t --mode all -o "$OUT/fa.svg" && "$DOMPROF" flamegraph -i "$F" --title t -o "$OUT/fb.svg" &&
	cmp -s "$OUT/fa.svg" "$OUT/fb.svg" || fail "flamegraph --mode all differs from the default"

"$DOMPROF" diff --mode user "$F" "$F" >"$OUT/user.txt" || fail "diff --mode user exit $?"
"$DOMPROF" diff --mode kernel "$F" "$F" >"$OUT/kernel.txt" || fail "diff --mode kernel exit $?"
grep -q '^# compared: user symbols' "$OUT/user.txt" || fail "diff --mode user: header"
grep -E '^[0-9]' "$OUT/user.txt" | grep -q '\[kernel\]' && fail "diff --mode user shows kernel rows"
grep -E '^[0-9]' "$OUT/user.txt" | grep -q ' pie_hot$' || fail "diff --mode user: no pie_hot row"
cmp -s "$OUT/user.txt" "$OUT/kernel.txt" && fail "control: --mode user and --mode kernel give the same diff"
"$DOMPROF" diff --mode user -k "$F" "$F" 2>/dev/null; [ $? = 2 ] || fail "--mode user -k: not a usage error"
for c in report export flamegraph diff; do
	"$DOMPROF" $c --mode bogus "$F" "$F" 2>"$OUT/bogus.err" >/dev/null; rc=$?
	[ $rc = 2 ] && grep -q 'user, kernel or all' "$OUT/bogus.err" || fail "$c --mode bogus: exit $rc, $(cat "$OUT/bogus.err")"
done
echo ok
