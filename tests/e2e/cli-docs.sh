#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The documents made from the option tables (src/cli/opt.h, docs/options.md
# "How the option lists are made") and what the tables promise:
#  1. docs/options.md's option lists, docs/man/*.1 and
#     scripts/domprof-completion.bash are what scripts/gen-cli-docs writes
#     now (not stale);
#  2. every long option of every command is in its --help, in its section of
#     docs/options.md and in its man page (aliases in the aliases table and
#     the man page's OLDER SPELLINGS);
#  3. no letter means two things across the commands (aliases aside);
#     control: a doctored list with export's -f as a primary --format fails;
#  4. the completion completes commands, options, --format/--mode values,
#     --domain kinds of record and files;
#  5. every man page renders without a warning (man --warnings);
#  6. options may follow operands (info, dump, report, merge), `--` ends the
#     options, the wording of a missing value is one.
source "$(dirname "$0")/../lib/common.bash"
cd "$TOP"
D=$DOMPROF

# 1. not stale: generate into a copy and compare
mkdir -p "$OUT/top/docs" "$OUT/top/scripts"
cp docs/options.md "$OUT/top/docs/"
scripts/gen-cli-docs "$D" "$OUT/top" || fail "gen-cli-docs failed"
cmp -s "$OUT/top/docs/options.md" docs/options.md || { diff docs/options.md "$OUT/top/docs/options.md" | head; fail "docs/options.md is stale: run scripts/gen-cli-docs"; }
diff -r docs/man "$OUT/top/docs/man" >"$OUT/man.diff" || { head "$OUT/man.diff"; fail "docs/man is stale: run scripts/gen-cli-docs"; }
cmp -s scripts/domprof-completion.bash "$OUT/top/scripts/domprof-completion.bash" || fail "the completion is stale: run scripts/gen-cli-docs"
echo "generated documents current"

# 2. every entry complete (a handler, a help line), spellings unique per
# command; every long option documented in three places
"$D" help-options check || fail "an option table has incomplete or repeated entries"
"$D" help-options names >"$OUT/names" || fail "help-options names"
[ "$(wc -l <"$OUT/names")" -gt 100 ] || fail "too few options listed: $(wc -l <"$OUT/names")"
n=0
while read -r cmd letter long kind; do
	[ "$long" = - ] && continue
	[ -f "$OUT/help-$cmd" ] || "$D" "$cmd" --help >"$OUT/help-$cmd" || fail "$cmd --help: exit $?"
	sect=$(awk -v c="### domprof $cmd" '$0 == c {on=1; next} /^### / {on=0} on' docs/options.md)
	man=docs/man/domprof-$cmd.1
	manlong=$(printf '%s' "--$long" | sed 's/-/\\-/g')   # roff's \-
	if [ "$kind" = primary ]; then
		grep -q -- "--$long\b" "$OUT/help-$cmd" || fail "$cmd --$long: not in --help"
		grep -q -- "\`.*--$long\b" <<<"$sect" || fail "$cmd --$long: not in docs/options.md"
		grep -qF -- "$manlong" "$man" || fail "$cmd --$long: not in $man"
	else
		grep -q -- "^| $cmd | \`.*--$long\b" docs/options.md || fail "$cmd --$long (alias): not in docs/options.md"
		sed -n '/^\.SH OLDER SPELLINGS/,$p' "$man" | grep -qF -- "$manlong" || fail "$cmd --$long (alias): not in $man"
	fi
	n=$((n + 1))
done <"$OUT/names"
echo "$n long options documented in --help, docs/options.md and the man pages"

# 3. one meaning per letter
letters() {  # the letters given two long names by primary entries
	awk '$2 != "-" && $4 == "primary" { if (($2) in m && m[$2] != $3) { print $2 ": --" m[$2] " and --" $3; bad = 1 } m[$2] = $3 } END { exit bad }' "$1"
}
letters "$OUT/names" || fail "a letter means two things"
{ cat "$OUT/names"; echo "export f format primary"; } >"$OUT/names.doctored"
letters "$OUT/names.doctored" >"$OUT/doctored.out" && fail "control: a doubled letter (-f) not caught"
grep -q "^f: --force and --format" "$OUT/doctored.out" || fail "control: $(cat "$OUT/doctored.out")"
echo "one meaning per letter (control: a doubled -f is caught)"

# 4. completion
complete_words() {  # complete_words WORD... : the completions of the last word
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _domprof; printf "%s\n" "${COMPREPLY[@]}"' \
		_ scripts/domprof-completion.bash domprof "$@"
}
complete_words re | grep -qx record || fail "completion: commands ($(complete_words re | tr '\n' ' '))"
complete_words re | grep -qx report || fail "completion: commands"
complete_words report --by- | grep -qx -- --by-pid || fail "completion: report --by-"
complete_words report --by- | grep -qx -- --by-process && fail "completion offers the alias --by-process first"
complete_words export --format p | grep -qx pprof || fail "completion: export --format p"
complete_words report --mode "" | sort | tr '\n' ' ' | grep -qx "all kernel user " || fail "completion: --mode: $(complete_words report --mode '')"
complete_words record --domain vm1=g | grep -qx "vm1=gdb:" || fail "completion: record --domain vm1=g: $(complete_words record --domain vm1=g)"
complete_words record --domain vm1= | sort | tr '\n' ' ' | grep -qx "vm1=agent: vm1=gdb: " || fail "completion: record --domain kinds"
complete_words report --domain h | grep -qx host || fail "completion: report --domain h"
complete_words report -i docs/opt | grep -qx docs/options.md || fail "completion: -i FILE"
# control: an unknown command completes nothing
[ -z "$(complete_words frobnicate --)" ] || fail "control: frobnicate completed"
echo "completion: commands, options, values, --domain kinds, files"

# 5. man pages render without warnings
command -v man >/dev/null || fail "man is not installed (scripts/deps.sh installs man-db)"
for p in docs/man/*.1; do
	w=$(MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null)
	[ -z "$w" ] || fail "$p: $w"
	MANWIDTH=80 man -l "$p" 2>/dev/null | grep -q "^NAME" || fail "$p: no NAME section"
done
# control: a page with a bad request warns
printf '.TH X 1\n.SH NAME\nx \\- y\n.badrequest\n' >"$OUT/bad.1"
[ -n "$(MANWIDTH=80 man --warnings -l "$OUT/bad.1" 2>&1 >/dev/null)" ] || fail "control: a bad page gives no warning"
echo "$(ls docs/man/*.1 | wc -l) man pages render without warnings (control: a bad one warns)"

# 6. options after operands, `--`, one wording
F=$TOP/tests/fixtures/golden/merged.data
"$D" report -q "$F" -l >"$OUT/r1" && "$D" report -q -l "$F" >"$OUT/r2" && cmp -s "$OUT/r1" "$OUT/r2" || fail "report FILE -l"
"$D" merge "$F" -q -o "$OUT/m.data" || fail "merge FILE -q -o OUT: exit $?"
[ -s "$OUT/m.data" ] || fail "merge FILE -o OUT wrote nothing"
"$D" dump "$F" --type STATS | grep -q STATS || fail "dump FILE --type STATS"
"$D" info -- "$F" >/dev/null || fail "info -- FILE"
# every -i: info's own entry, dump's and annotate's single file, the shared block
"$D" info -i "$F" -i "$F" | grep -q '^total: *2 files' || fail "info -i F -i F"
"$D" dump -i "$F" --type STATS | grep -q STATS || fail "dump -i FILE"
"$D" annotate -i "$F" >/dev/null || fail "annotate -i FILE"
for c in "report -q" "export --format folded" "flamegraph -o $OUT/fg.svg"; do
	$D $c -i "$F" >/dev/null || fail "$c -i FILE"
done
for c in report info dump diff export flamegraph annotate merge import agent record; do
	"$D" $c --bogus-option >/dev/null 2>"$OUT/e"; rc=$?
	[ $rc = 2 ] || fail "$c --bogus-option: exit $rc"
	grep -qx "domprof $c: unknown option '--bogus-option' (see 'domprof $c --help')" "$OUT/e" || fail "$c: $(cat "$OUT/e")"
done
for c in report:-o export:-o flamegraph:-o merge:-o import:-o record:-o annotate:-n agent:--listen; do
	"$D" ${c%%:*} ${c#*:} >/dev/null 2>"$OUT/e"; rc=$?
	[ $rc = 2 ] && grep -q "^domprof ${c%%:*}: option '${c#*:}' needs a value (see" "$OUT/e" || fail "${c%%:*} ${c#*:}: exit $rc, $(cat "$OUT/e")"
done
"$D" report --threshold=5 -q -l -i "$F" >/dev/null || fail "--name=VALUE"
"$D" report --thresh 5 -q -l -i "$F" >/dev/null || fail "a unique prefix"
"$D" report --s 5 -i "$F" >/dev/null 2>"$OUT/e"; grep -q "ambiguous option '--s'" "$OUT/e" || fail "an ambiguous prefix: $(cat "$OUT/e")"
echo ok
