#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 34 item 3: a report believes a /tmp/perf-PID.map only when it is
# the reader's or root's and writable by nobody else, read without
# following a link. A recording (test-tool gen-hostile names, no perf map
# embedded) has 20 samples in anonymous memory of pid PID; a map for PID
# is then planted in /tmp:
#   owned by nobody                -> refused, one warning, names absent
#                                     from text and HTML, samples [anon]
#   owned by root (the reader)     -> used (the control: the test sees it)
#   root's but group-writable      -> refused
#   a symbolic link to root's map  -> refused
#   nobody's, read by nobody       -> used (the reader's own)
# Run as root (chown). The pid is far above real ones and unique per run.
source "$(dirname "$0")/lib/report-common.bash"
need_root "chown of the planted map"
[ -x "$TT" ] || fail "$TT missing (run 'make fixtures')"

PID=$((4100000 + $$ % 90000))
MAP=/tmp/perf-$PID.map
[ -e "$MAP" ] && fail "$MAP exists already"
at_exit "rm -f '$MAP' '$OUT/real.map'"
D="$OUT/jit.data"
"$TT" gen-hostile names "$D" "$PID" || fail "generator"

plant() {   # plant OWNER MODE: the forged map at $MAP
	rm -f "$MAP"
	printf '7f0000000000 100 FORGED_JIT_NAME\n' >"$MAP" || fail "cannot write $MAP"
	chown "$1" "$MAP" && chmod "$2" "$MAP" || fail "chown/chmod $MAP"
}

run_report() {   # run_report NAME [runner...]: report -l of $D in $OUT/NAME.txt
	local name=$1; shift
	"$@" "$DOMPROF" report -i "$D" -l >"$OUT/$name.txt" 2>&1 || { cat "$OUT/$name.txt"; fail "$name: report failed"; }
}

refused() {   # refused NAME WHY: the forged name absent, the samples [anon], a warning with WHY
	local name=$1 why=$2
	if grep -q FORGED_JIT_NAME "$OUT/$name.txt"; then
		cat "$OUT/$name.txt"
		fail_later "$name: the planted map named the samples"
	fi
	grep -q "^20 .* \[anon\] " "$OUT/$name.txt" || { cat "$OUT/$name.txt"; fail_later "$name: the 20 JIT samples are not [anon]"; }
	grep -q "$MAP: .*$why.*not used" "$OUT/$name.txt" || { cat "$OUT/$name.txt"; fail_later "$name: no warning saying '$why'"; }
}

used() {   # used NAME: the map names the 20 samples
	grep -q "^20 .*perf-$PID.map  *FORGED_JIT_NAME" "$OUT/$1.txt" ||
		{ cat "$OUT/$1.txt"; fail_later "$1: the map was not used"; }
}

plant nobody 644
run_report nobody-owned
refused nobody-owned "owned by uid $(id -u nobody)"
"$DOMPROF" report -i "$D" --format html -o "$OUT/nobody.html" 2>/dev/null || fail "report --format html failed"
grep -q FORGED_JIT_NAME "$OUT/nobody.html" && fail_later "html: the planted map named the samples"

plant root 644
run_report root-owned
used root-owned

plant root 664
run_report group-writable
refused group-writable "writable by group or others"

rm -f "$MAP"
printf '7f0000000000 100 FORGED_JIT_NAME\n' >"$OUT/real.map"
chmod 644 "$OUT/real.map"
ln -s "$OUT/real.map" "$MAP" || fail "ln -s"
run_report symlink
refused symlink "symbolic link"

# the reader's own file, read by that user
if command -v setpriv >/dev/null; then
	plant nobody 644
	tmp=$(mktemp -d)
	at_exit "rm -rf '$tmp'"
	chmod 755 "$tmp"
	cp "$D" "$tmp/jit.data" && chmod 644 "$tmp/jit.data"
	(cd "$tmp" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$DOMPROF" report -i "$tmp/jit.data" -l) >"$OUT/as-nobody.txt" 2>&1 ||
		{ cat "$OUT/as-nobody.txt"; fail "report as nobody failed"; }
	used as-nobody
else
	note "setpriv missing: the reader-owned case as nobody not run"
fi
[ "$FAILED" = 0 ] || exit 1
echo "report-perfmap-owner: nobody's, group-writable and linked maps refused; root's and the reader's used"
