#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Report-time DWARF unwinding of `record --call-graph dwarf` stacks
# (src/symbols/unwind.c, docs/dwarf-notes.md), real perf_event_open:
#  - nofp (no frame pointers, junk in rbp; main -> walk -> spin): in the
#    folded export of its dwarf recording >= 95% of the samples in spin
#    have walk as spin's caller and main as walk's; report -g names walk
#    as spin's caller and its header counts >= 95% of the stacks unwound;
#    flamegraph, speedscope, pprof and json exports name walk too (and
#    differ from the exports of the recorded chains);
#  - controls: the same file read with DOMPROF_DWARF_UNWIND=0 (the
#    recorded frame-pointer chains) and a -g recording of nofp have walk
#    in <= 5% of those samples;
#  - kernelheavy's kernel-mode samples keep their recorded kernel frames
#    (read_zero under the syscall entry) and get main as the caller of
#    libc's read (>= 95% of the stacks through read); control: the
#    frame-pointer chains of the same file skip main (<= 5%: libc's read
#    keeps no frame pointer, so its caller's frame is lost);
#  - .debug_frame: nofp-dbgframe (its functions' CFI only in
#    .debug_frame) and nofp-split (that stripped, its .debug_frame in a
#    separate debug file beside it, found by .gnu_debuglink) unwind as
#    nofp does (>= 95%); control: a copy of nofp-split without its debug
#    file has walk in <= 5%.
#  - fallback: threefuncs-nocfi (frame pointers, no CFI for its own
#    functions) keeps its recorded chains: main;func_a in >= 95% of
#    func_a's samples and the header counts >= 95% of the stacks as
#    "kept the frame-pointer chain"; control: nofp's header counts <= 5%.
#  - info unwinds as report does: >= 95% of nofp's walks end at the
#    outermost frame; control: 8-byte stacks (dwarf,8) end there in
#    <= 5% and are counted stopped (>= 95%).
# Hostile stacks and registers are tests/unit/test-unwind.c's.
source "$(dirname "$0")/../lib/common.bash"
set -e
command -v python3 >/dev/null || skip "python3 not installed"
[ "$(uname -m)" = x86_64 ] || skip "user registers are only known on x86-64"
need_workload nofp kernelheavy nofp-dbgframe nofp-split threefuncs-nocfi

rec() { # MODE FILE CMD...: record, fail with its output
	local m=$1 f=$2
	shift 2
	"$DOMPROF" record -f --call-graph "$m" -o "$f" -- "$@" >"$f.out" 2>&1 ||
		fail "record $m $*: $(cat "$f.out")"
}
rec dwarf "$OUT/nofp.data" "$WL/nofp" 300
rec fp "$OUT/nofp-fp.data" "$WL/nofp" 300
rec dwarf "$OUT/kh.data" "$WL/kernelheavy" 0.5
rec dwarf "$OUT/dbgframe.data" "$WL/nofp-dbgframe" 300
rec dwarf "$OUT/split.data" "$WL/nofp-split" 300
rec dwarf "$OUT/nocfi.data" "$WL/threefuncs-nocfi" 60
mkdir "$OUT/nodebug"
cp "$WL/nofp-split" "$OUT/nodebug/nofp-split"
rec dwarf "$OUT/nodebug.data" "$OUT/nodebug/nofp-split" 300

folded() { # FILE COMM [ENV...] -> stdout
	local f=$1 c=$2
	shift 2
	env "$@" "$DOMPROF" export --format folded -i "$f" --comm "$c" -o - 2>"$OUT/folded.err" ||
		fail "export folded $f: $(cat "$OUT/folded.err")"
}
folded "$OUT/nofp.data" nofp >"$OUT/nofp.folded"
folded "$OUT/nofp.data" nofp DOMPROF_DWARF_UNWIND=0 >"$OUT/nofp-off.folded"
folded "$OUT/nofp-fp.data" nofp >"$OUT/nofp-fp.folded"
folded "$OUT/kh.data" kernelheavy >"$OUT/kh.folded"
folded "$OUT/kh.data" kernelheavy DOMPROF_DWARF_UNWIND=0 >"$OUT/kh-off.folded"
folded "$OUT/dbgframe.data" nofp-dbgframe >"$OUT/dbgframe.folded"
folded "$OUT/nocfi.data" threefuncs-nocf >"$OUT/nocfi.folded"
folded "$OUT/split.data" nofp-split >"$OUT/split.folded"
folded "$OUT/nodebug.data" nofp-split >"$OUT/nodebug.folded"

# share PAT LEAF FILE: percent of the samples whose stack ends in LEAF
# (or passes through it) that contain the ;-separated frames PAT
share() {
	python3 - "$@" <<'PY'
import sys
pat, leaf, path = sys.argv[1], sys.argv[2], sys.argv[3]
tot = hit = 0
for l in open(path):
    st, n = l.rstrip('\n').rsplit(' ', 1)
    fr = st.split(';')
    if leaf not in fr:
        continue
    tot += int(n)
    if (';' + pat + ';') in (';' + st + ';'):
        hit += int(n)
print(f"{100.0 * hit / tot:.1f} {tot}" if tot else "0 0")
PY
}
check() { # WHAT PAT LEAF FILE OP LIMIT
	local r
	r=$(share "$2" "$3" "$4")
	note "$1: $r (percent of samples, samples)"
	set -- "$1" "${r%% *}" "${r##* }" "$5" "$6"
	[ "$3" -ge 20 ] || fail "$1: only $3 samples"
	python3 -c "import sys; sys.exit(0 if float('$2') $4 $5 else 1)" ||
		fail "$1: $2% (wanted $4 $5)"
}
check "nofp dwarf: main;walk;spin" "main;walk;spin" spin "$OUT/nofp.folded" '>=' 95
check "nofp DOMPROF_DWARF_UNWIND=0 (control): walk;spin" "walk;spin" spin "$OUT/nofp-off.folded" '<=' 5
check "nofp -g (control): walk;spin" "walk;spin" spin "$OUT/nofp-fp.folded" '<=' 5
check "nofp-dbgframe (.debug_frame): main;walk;spin" "main;walk;spin" spin "$OUT/dbgframe.folded" '>=' 95
check "nofp-split (debug file): main;walk;spin" "main;walk;spin" spin "$OUT/split.folded" '>=' 95
check "nofp-split without its debug file (control): walk;spin" "walk;spin" spin "$OUT/nodebug.folded" '<=' 5
check "threefuncs-nocfi (fallback to frame pointers): main;func_a" "main;func_a" func_a "$OUT/nocfi.folded" '>=' 95
check "kernelheavy dwarf: main;read;...;read_zero" "main;read" read_zero_[k] "$OUT/kh.folded" '>=' 95
check "kernelheavy kernel frames kept" "ksys_read_[k];vfs_read_[k];read_zero_[k]" read_zero_[k] "$OUT/kh.folded" '>=' 95
check "kernelheavy DOMPROF_DWARF_UNWIND=0 (control): main;read" "main;read" read_zero_[k] "$OUT/kh-off.folded" '<=' 5

# report -g: walk is spin's caller; the header counts the unwound stacks
"$DOMPROF" report -q -g -i "$OUT/nofp.data" --comm nofp >"$OUT/nofp.report" 2>"$OUT/report.err" ||
	fail "report -g: $(cat "$OUT/report.err")"
# spin_caller FILE want|not: walk is (not) among the caller lines of
# spin's entry block (a sample whose leaf is walk is no caller line)
spin_caller() {
	python3 - "$@" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
blocks = t.split('-' * 79)
spin = [b for b in blocks if re.search(r'^\d+\s+[\d.]+\s+host\s+nofp\s+spin  \[total', b, re.M)]
assert spin, "no spin entry"
callers = spin[0].split('spin  [total')[0]
found = bool(re.search(r'nofp\s+walk\s*$', callers, re.M))
sys.exit(0 if found == (sys.argv[2] == 'want') else 1)
PY
}
grep -Eq '^# dwarf unwinding: [0-9]+ of [0-9]+ user stacks unwound' "$OUT/nofp.report" || fail "report -g: no dwarf unwinding line"
python3 - "$OUT/nofp.report" <<'PY' || fail "report -g: $(grep -m1 'dwarf unwinding' "$OUT/nofp.report")"
import re, sys
m = re.search(r'^# dwarf unwinding: (\d+) of (\d+) user stacks unwound', open(sys.argv[1]).read(), re.M)
assert m and int(m.group(2)) >= 20 and int(m.group(1)) * 100 >= 95 * int(m.group(2)), m
PY
spin_caller "$OUT/nofp.report" want || fail "report -g: walk is not spin's caller"
DOMPROF_DWARF_UNWIND=0 "$DOMPROF" report -q -g -i "$OUT/nofp.data" --comm nofp >"$OUT/nofp-off.report"
! grep -q 'dwarf unwinding' "$OUT/nofp-off.report" || fail "DOMPROF_DWARF_UNWIND=0 still unwinds"
spin_caller "$OUT/nofp-off.report" not || fail "control: the frame-pointer report has walk as spin's caller"

# the header's count of stacks that kept the frame-pointer chain
kept() { # FILE COMM -> percent
	"$DOMPROF" report -q -g -i "$1" --comm "$2" | python3 -c "
import re, sys
m = re.search(r'^# dwarf unwinding: \d+ of (\d+) user stacks unwound .*, (\d+) kept the frame-pointer chain', sys.stdin.read(), re.M)
print(f'{100.0 * int(m.group(2)) / int(m.group(1)):.1f}' if m and int(m.group(1)) else 'none')"
}
k=$(kept "$OUT/nocfi.data" threefuncs-nocf)
note "threefuncs-nocfi: $k% kept the frame-pointer chain"
python3 -c "import sys; sys.exit(0 if '$k' != 'none' and float('$k') >= 95 else 1)" || fail "nocfi: $k% kept"
k=$(kept "$OUT/nofp.data" nofp)
note "nofp (control): $k% kept the frame-pointer chain"
python3 -c "import sys; sys.exit(0 if '$k' != 'none' and float('$k') <= 5 else 1)" || fail "nofp: $k% kept"

# info unwinds too and says where the walks ended: nofp's reach the
# outermost frame; control: a recording that kept 8 bytes of each stack
# (dwarf,8) cannot, and its walks are counted as stopped, not complete
# (libdwfl takes a return address it cannot read for the outermost frame)
walks() { # FILE -> "outermost stopped samples"
	"$DOMPROF" info "$1" | python3 -c "
import re, sys
t = sys.stdin.read()
m = re.search(r'^dwarf unwinding: \d+ of (\d+) user stacks', t, re.M)
w = re.search(r'^  walks ended: (\d+) outermost, \d+ no FDE for a pc, (\d+) stopped', t, re.M)
print(w.group(1), w.group(2), m.group(1)) if m and w else print('0 0 0')"
}
read -r o st n < <(walks "$OUT/nofp.data")
note "info, nofp: $o of $n walks outermost, $st stopped"
[ "$n" -ge 20 ] && [ $((o * 100)) -ge $((95 * n)) ] || fail "info: nofp's walks: $o of $n outermost"
rec dwarf,8 "$OUT/nofp8.data" "$WL/nofp" 200
read -r o st n < <(walks "$OUT/nofp8.data")
note "info, nofp with 8-byte stacks (control): $o of $n walks outermost, $st stopped"
[ "$n" -ge 20 ] && [ $((o * 100)) -le $((5 * n)) ] && [ $((st * 100)) -ge $((95 * n)) ] ||
	fail "control: 8-byte stacks: $o of $n walks outermost, $st stopped"

# every other consumer sees the same chains
names_walk() { # FILE (pprof is gzip'd)
	if [ "$(head -c2 "$1" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then
		gzip -dc "$1" | grep -aq walk
	else
		grep -aq walk "$1"
	fi
}
"$DOMPROF" flamegraph -i "$OUT/nofp.data" -o "$OUT/nofp.svg" 2>/dev/null || fail "flamegraph"
grep -q '>walk' "$OUT/nofp.svg" || grep -q 'walk (' "$OUT/nofp.svg" || fail "flamegraph names no walk"
for fmt in speedscope pprof json; do
	"$DOMPROF" export --format $fmt -i "$OUT/nofp.data" -o "$OUT/nofp.$fmt" 2>/dev/null || fail "export $fmt"
	names_walk "$OUT/nofp.$fmt" || fail "export $fmt names no walk"
	DOMPROF_DWARF_UNWIND=0 "$DOMPROF" export --format $fmt -i "$OUT/nofp.data" -o "$OUT/nofp-off.$fmt"
	# control: the recorded chains give another export (walk itself
	# may be named there: a sample or two fall in walk's own code)
	! cmp -s "$OUT/nofp.$fmt" "$OUT/nofp-off.$fmt" || fail "control: export $fmt is the same without unwinding"
done

# the quick step walks these as libdwfl does (tests/e2e/lib/quick.bash):
# whole stacks, a kernel-heavy run, cut stacks, and the images whose CFI
# is libdwfl's alone (.debug_frame only, split debug file, no CFI)
source "$(dirname "$0")/lib/quick.bash"
quick_check "$OUT/nofp.data" 90
quick_check "$OUT/kh.data" 50
quick_check "$OUT/nofp8.data" 90
for f in dbgframe split nocfi nodebug; do
	quick_check "$OUT/$f.data" 0
done
quick_control "$OUT/nofp.data"
delta_check "$OUT/nofp.data" 50
delta_check "$OUT/kh.data" 20

exit 0
