#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cache directory's one rule (src/util/cachedir.h, docs/report.md "The
# line cache"), exercised through the source line cache on a real
# recording of the lines workload: a cache file is used only from a
# directory chain of this user's (or root's, not writable by others,
# sticky ones excepted for the way), opened without following links, and
# only when the file is this user's and not writable by others. As root,
# with files and links planted by user nobody (setpriv).
#  - control that must fail: a forged cache file (test-tool lcache: every
#    check passes but LINE_A says line 9999) in a proper directory of
#    ours is read: the report shows line 9999; a proper directory inside
#    a sticky world-writable one is used (written cold);
#  - the same forged file is not used (the report names the true line)
#    when: its directory is owned by nobody, or is 0777 or 0770; the file
#    is owned by nobody, or is 0666; the file is a symbolic link to it;
#    it was planted by nobody in a directory nobody made inside a sticky
#    world-writable cache directory (the /tmp case);
#  - a symbolic link planted by nobody (in a sticky world-writable cache
#    directory) to a root-only directory does not make root write there.
source "$(dirname "$0")/../lib/common.bash"
need_root "files owned by another user"
need_workload lines
command -v setpriv >/dev/null || skip "setpriv (util-linux) is missing"
id nobody >/dev/null 2>&1 || skip "no user nobody"
FAILED=0
SRC=$TOP/tests/workloads/lines.c
la=$(grep -n 'LINE_A:' "$SRC" | cut -d: -f1)
D=$OUT/lines.data
cp "$WL/lines" "$OUT/lines"
chmod 755 "$OUT"
"$DOMPROF" record --no-lines -f -F 1000 -o "$D" -- "$OUT/lines" 150 >"$OUT/record.log" 2>&1 ||
	{ cat "$OUT/record.log"; fail "record failed"; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# rep NAME CACHEDIR: report -s srcline through the cache at CACHEDIR
rep() {
	DOMPROF_CACHE=$2 DOMPROF_LINE_CACHE=1 "$DOMPROF" report -q -i "$D" -l -s srcline >"$OUT/$1.srcline" 2>"$OUT/$1.err" ||
		fail "$1: report failed: $(cat "$OUT/$1.err")"
	DOMPROF_CACHE=$2 DOMPROF_LINE_CACHE=verbose "$DOMPROF" report -q -i "$D" -l -s srcline >"$OUT/$1.v" 2>&1 || true
}
# not_used NAME: the report named the true line, not the forged one
not_used() {
	grep -q "lines.c:$la " "$OUT/$1.srcline" && ! grep -q "lines.c:9999" "$OUT/$1.srcline" ||
		fail_later "$1: the forged cache file was used: $(grep -m 2 'lines.c' "$OUT/$1.srcline") ($(grep 'line cache' "$OUT/$1.v"))"
}

note "the cache file of the recording's image, forged"
mkdir -m 700 "$OUT/good"
rep cold "$OUT/good"
bid=$(readelf -n "$OUT/lines" | awk '/Build ID/ { print $3 }')
h=$(python3 -c "import hashlib, sys; print(hashlib.sha256(b'own\0' + sys.argv[1].encode()).hexdigest()[:16])" "$(realpath "$OUT/lines")")
N=$bid-$h.lines
[ -s "$OUT/good/lines/$N" ] || fail "cold: no cache file $OUT/good/lines/$N ($(grep 'line cache' "$OUT/cold.v"))"
"$TT" lcache "$OUT/good/lines/$N" "$OUT/forged.lines" "$la" 9999 >"$OUT/forge.log" || fail "test-tool lcache: $(cat "$OUT/forge.log")"
chmod 644 "$OUT/forged.lines"

# place DIR: DIR/lines/N is a copy of the forged file (root's, 0600)
place() { mkdir -p "$1/lines" && chmod 700 "$1" "$1/lines" && cp "$OUT/forged.lines" "$1/lines/$N" && chmod 600 "$1/lines/$N"; }

note "control: the forged file in a proper directory is read"
place "$OUT/c0"
rep c0 "$OUT/c0"
grep -q "lines.c:9999" "$OUT/c0.srcline" || fail "control: the forged file was not read: $(grep -m 2 'lines.c' "$OUT/c0.srcline")"

note "directories and files that are not this user's alone"
place "$OUT/c1"; chown -R nobody "$OUT/c1/lines"
rep dir-nobody "$OUT/c1"; not_used dir-nobody
[ "$(stat -c %U "$OUT/c1/lines/$N")" = nobody ] && [ "$(ls "$OUT/c1/lines" | wc -l)" = 1 ] ||
	fail_later "dir-nobody: root wrote into nobody's directory: $(ls -l "$OUT/c1/lines")"
place "$OUT/c2"; chmod 777 "$OUT/c2/lines"
rep dir-777 "$OUT/c2"; not_used dir-777
place "$OUT/c3"; chmod 770 "$OUT/c3/lines"
rep dir-770 "$OUT/c3"; not_used dir-770
place "$OUT/c4"; chmod 777 "$OUT/c4"
rep parent-777 "$OUT/c4"; not_used parent-777
place "$OUT/c5"; chown nobody "$OUT/c5/lines/$N"
rep file-nobody "$OUT/c5"; not_used file-nobody
place "$OUT/c6"; chmod 666 "$OUT/c6/lines/$N"
rep file-666 "$OUT/c6"; not_used file-666
mkdir -p -m 700 "$OUT/c7/lines"; ln -s "$OUT/forged.lines" "$OUT/c7/lines/$N"
rep file-link "$OUT/c7"; not_used file-link
grep -q "lines.c:9999" "$OUT/file-link.srcline" || [ -L "$OUT/c7/lines/$N" ] ||
	note "file-link: the link was replaced by a file of ours (not written through)"
cmp -s "$OUT/forged.lines" "$OUT/good/lines/$N" && fail_later "file-link: root wrote through the link"

note "a sticky world-writable cache directory (the /tmp case)"
P=$OUT/pub
mkdir -m 1777 "$P"
as_nobody mkdir "$P/lines" && as_nobody cp "$OUT/forged.lines" "$P/lines/$N" ||
	fail "nobody could not plant in $P"
rep planted "$P"; not_used planted
[ "$(find "$P/lines" -user root | wc -l)" = 0 ] || fail_later "planted: root wrote into nobody's directory: $(ls -l "$P/lines")"
P2=$OUT/pub2
mkdir -m 1777 "$P2"
mkdir -m 700 "$OUT/secret"
as_nobody ln -s "$OUT/secret" "$P2/lines" || fail "nobody could not plant a link in $P2"
rep link-planted "$P2"
[ -z "$(ls -A "$OUT/secret")" ] || fail_later "link-planted: root wrote through nobody's link: $(ls -l "$OUT/secret")"
# control: a directory of ours inside the sticky one is used
mkdir -m 700 "$P/mine"
rep sticky-ok "$P/mine"
[ -s "$P/mine/lines/$N" ] || fail_later "sticky-ok: no cache file written in a proper directory under a sticky one ($(grep 'line cache' "$OUT/sticky-ok.v"))"
grep -q "lines.c:$la " "$OUT/sticky-ok.srcline" || fail_later "sticky-ok: no LINE_A row"
[ "$FAILED" = 0 ] && echo "lines.c:$la read from the true DWARF in 9 refused places; the forged file read in the control"
exit $FAILED
