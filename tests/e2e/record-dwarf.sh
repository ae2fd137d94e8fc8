#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `domprof record --call-graph dwarf` (real perf_event_open) on threefuncs:
#  - >= 95% of the workload's user-mode samples carry user registers with
#    the sample's ip as their ip, a non-zero sp and a stack of 1..16384
#    bytes; run with an empty environment, its stacks are not cut
#    (len < size), and >= 95% end at the same page-aligned address
#    (sp + len: the top of the stack), so what is stored is what the
#    kernel copied (dyn_size), not the size asked;
#  - the stack bytes are the stack: at bp - sp + 8 lies the return
#    address the kernel's frame-pointer walk put second in the chain
#    (>= 95%); control: the chain's third entry is not there (<= 5%);
#  - nofp (built without frame pointers, junk in rbp): >= 95% of its
#    samples in spin hold return addresses into walk and main in their
#    stack; control: -g's chains name walk for <= 5%;
#  - kernelheavy's kernel-mode samples carry its user context (user-half
#    ip and sp, a stack);
#  - report -g and flamegraph work on the file as on a -g recording
#    (main calls func_a);
#  - control: -g and --call-graph fp record no user registers; SIZE is
#    rounded up as perf does (dwarf,100 -> 104), bad SIZEs and modes
#    give one usage line (exit 2).
# Prints bytes per sample of the file against -g and, when perf is
# installed, against `perf record --call-graph dwarf` (with and without
# -z); nothing is asserted about them.
source "$(dirname "$0")/../lib/common.bash"
set -e
command -v python3 >/dev/null || skip "python3 not installed"
need_workload threefuncs
[ "$(uname -m)" = x86_64 ] || skip "user registers are only known on x86-64"

# usage errors: one line, exit 2
for bad in "dwarf,0" "dwarf,65536" "dwarf,-8" "dwarf,8k" "dwarf," "lbr" "fp,8" "dwarfx"; do
	rc=0
	"$DOMPROF" record --call-graph "$bad" -o "$OUT/bad.data" -- true >/dev/null 2>"$OUT/bad.err" || rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$OUT/bad.err")" = 1 ] && grep -q "^domprof record: bad --call-graph '$bad'" "$OUT/bad.err" ||
		fail "--call-graph $bad: exit $rc: $(cat "$OUT/bad.err")"
done
[ ! -e "$OUT/bad.data" ] || fail "a refused --call-graph left a file"

# an empty environment: what lies above main's frame (argv, auxv, the
# environment strings) stays well under 8192 bytes; the kernel also moves
# the initial stack pointer down by a random 0..8 KiB (arch_align_stack),
# which cut every 8 KiB stack of a run now and then (a fresh-clone `make
# test` failed so): 16 KiB stacks end uncut whatever the offset.
# (setarch -R is no way out: without randomisation the stack sits at the
# top of the address space and the kernel shrinks the size asked.)
"$DOMPROF" record -f --call-graph dwarf,16384 -o "$OUT/dw.data" -- env -i "$WL/threefuncs" 100 >"$OUT/dw.out" 2>"$OUT/dw.err" ||
	fail "record --call-graph dwarf exited $?: $(cat "$OUT/dw.err")"
cat "$OUT/dw.err"
pid=$(sed -n 's/^threefuncs: pid \([0-9]*\) done$/\1/p' "$OUT/dw.out")
[ -n "$pid" ] || fail "workload did not run"
"$DOMPROF" dump --type SAMPLE --ustack "$OUT/dw.data" >"$OUT/dw.dump"
"$DOMPROF" info "$OUT/dw.data" >"$OUT/dw.info"
grep -q 'damage: *none' "$OUT/dw.info" || fail "damage: $(grep -A3 damage "$OUT/dw.info")"
grep -Eq '^file: .*format 1\.6)$' "$OUT/dw.info" || fail "not a 1.6 file: $(head -1 "$OUT/dw.info")"
grep -Eq '^user stacks: [1-9][0-9]* samples, [0-9]+ bytes' "$OUT/dw.info" || fail "info counts no user stacks"

python3 - "$OUT/dw.dump" "$pid" <<'PY' || fail "user registers and stacks"
import re, sys
dump, pid = sys.argv[1], sys.argv[2]
user = with_regs = good = 0
tops, ret_ok, ret_ctl, ret_n = [], 0, 0, 0
for l in open(dump):
    kv = dict(re.findall(r'(\w+)=(\S+)', l))
    if kv.get('pid') != pid or kv.get('mode') != 'user':
        continue
    user += 1
    if 'uregs' not in kv:
        continue
    with_regs += 1
    assert kv['uregs'] == '0xff0fff', "register mask " + kv['uregs']
    regs = [int(v, 16) for v in kv['uregs_v'].split(',')]
    ip, sp, bp = regs[8], regs[7], regs[6]
    assert int(kv['uip'], 16) == ip and int(kv['usp'], 16) == sp
    n, size = map(int, re.fullmatch(r'(\d+)/(\d+)B', kv['ustack']).groups())
    stack = bytes.fromhex(kv.get('ustack_hex', ''))
    assert len(stack) == n and size == 16384, (n, size, len(stack))
    if ip == int(kv['ip'], 16) and sp and 0 < n <= size:
        good += 1
    if n < size:
        tops.append(sp + n)
    chain = [int(v, 16) for v in kv.get('chain', '0:').split(':')[1].split(',') if v]
    if len(chain) >= 3 and sp <= bp and bp - sp + 16 <= n:
        ret_n += 1
        at = int.from_bytes(stack[bp - sp + 8:bp - sp + 16], 'little')
        ret_ok += at == chain[1]
        ret_ctl += at == chain[2]
print(f"user samples {user}, with registers {with_regs}, good {good}; stack tops",
      {hex(t): tops.count(t) for t in set(tops)})
print(f"return address at bp+8: {ret_ok}/{ret_n}; control (third chain entry there): {ret_ctl}/{ret_n}")
assert user > 200, "too few user samples"
assert good >= 0.95 * user, "too few user samples with ip, sp and a stack"
# (env's own samples, before its exec, have another stack: a few)
top = max(set(tops), key=tops.count) if tops else 1
assert top % 4096 == 0 and tops.count(top) >= 0.95 * with_regs, "uncut stacks do not end at one page-aligned top"
assert ret_n >= 0.9 * user and ret_ok >= 0.95 * ret_n, "stack bytes do not hold the frame's return address"
assert ret_ctl <= 0.05 * ret_n, "control: the wrong return address matched"
PY

# kernelheavy: a sample in the kernel carries the task's user context
# (where it entered the kernel), a user-half ip and sp and its stack
if [ -x "$WL/kernelheavy" ]; then
	"$DOMPROF" record -f --call-graph dwarf -o "$OUT/kh.data" -- "$WL/kernelheavy" 1 >/dev/null 2>"$OUT/kh.err" ||
		fail "record kernelheavy: $(cat "$OUT/kh.err")"
	"$DOMPROF" dump --type SAMPLE "$OUT/kh.data" >"$OUT/kh.dump"
	python3 - "$OUT/kh.dump" <<'PY' || fail "kernel-mode samples without their user context"
import re, sys
k = ok = 0
for l in open(sys.argv[1]):
    kv = dict(re.findall(r'(\w+)=(\S+)', l))
    if kv.get('mode') != 'kernel':
        continue
    k += 1
    if 'uregs' in kv:
        uip, usp = int(kv['uip'], 16), int(kv['usp'], 16)
        n = int(kv['ustack'].split('/')[0])
        ok += 0 < uip < 1 << 47 and 0 < usp < 1 << 47 and n > 0 and int(kv['ip'], 16) >= 1 << 63
print(f"kernel-mode samples {k}, with a user context {ok}")
assert k > 200 and ok >= 0.9 * k
PY
fi

# nofp (no frame pointers, junk rbp in spin): the stacks hold what a DWARF
# unwinder needs, return addresses into walk and main, where -g's chain
# (the control) has none
if [ -x "$WL/nofp" ]; then
	for m in dwarf fp; do
		"$DOMPROF" record -f --call-graph $m -o "$OUT/nofp-$m.data" -- "$WL/nofp" >"$OUT/nofp-$m.out" 2>&1 ||
			fail "record nofp $m: $(cat "$OUT/nofp-$m.out")"
		"$DOMPROF" dump --ustack "$OUT/nofp-$m.data" >"$OUT/nofp-$m.dump"
	done
	python3 - "$OUT/nofp-dwarf.dump" "$OUT/nofp-fp.dump" "$WL/nofp" <<'PY' || fail "nofp: stacks or chains"
import re, subprocess, sys
syms = {}
for l in subprocess.run(["nm", "-S", sys.argv[3]], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if len(f) == 4 and f[3] in ("main", "walk", "spin"):
        syms[f[3]] = (int(f[0], 16), int(f[0], 16) + int(f[1], 16))
def load(path):
    maps, out = [], []
    for l in open(path):
        kv = dict(re.findall(r'(\w+)=(\S+)', l))
        if ' MMAP ' in l and l.rstrip().endswith(sys.argv[3]):
            maps.append((int(kv['start'], 16), int(kv['len'], 16), int(kv['pgoff'], 16)))
        elif ' SAMPLE ' in l and kv.get('mode') == 'user':
            out.append(kv)
    def fn(a):  # the function of address a, by the binary's symbols
        for s, n, o in maps:
            if s <= a < s + n:
                for name, (lo, hi) in syms.items():
                    if lo <= a - s + o < hi:
                        return name
    return out, fn
dw, fn = load(sys.argv[1])
spin = [kv for kv in dw if fn(int(kv['ip'], 16)) == 'spin']
found = 0
for kv in spin:
    st = bytes.fromhex(kv.get('ustack_hex', ''))
    words = {fn(int.from_bytes(st[i:i + 8], 'little')) for i in range(0, min(len(st), 512) - 7, 8)}
    found += 'walk' in words and 'main' in words
fp, fn2 = load(sys.argv[2])
fspin = [kv for kv in fp if fn2(int(kv['ip'], 16)) == 'spin']
called = sum(1 for kv in fspin if 'chain' in kv and len(kv['chain'].split(',')) > 1 and
             fn2(int(kv['chain'].split(',')[1], 16)) == 'walk')
print(f"nofp dwarf: {found}/{len(spin)} spin samples hold return addresses into walk and main; "
      f"-g (control): {called}/{len(fspin)} chains name walk")
assert len(spin) > 200 and found >= 0.95 * len(spin), "the stacks lack walk's or main's return address"
assert len(fspin) > 200 and called <= 0.05 * len(fspin), "control: frame pointers unwound nofp"
PY
fi

# report and flamegraph ignore the stacks: the chains are -g's
"$DOMPROF" report -q -i "$OUT/dw.data" -l -g >"$OUT/dw.report" || fail "report -g exited $?"
grep -B1 -E '^[0-9]+ .* func_a  \[total' "$OUT/dw.report" | head -n 1 | grep -Eq ' main$' || fail "report -g: main is not func_a's caller"
"$DOMPROF" flamegraph -i "$OUT/dw.data" -o "$OUT/dw.svg" || fail "flamegraph exited $?"
grep -q 'func_a' "$OUT/dw.svg" || fail "flame graph without func_a"

# controls: -g and fp record none; SIZE rounded up to a multiple of 8
"$DOMPROF" record -f -g -o "$OUT/g.data" -- "$WL/threefuncs" 100 >/dev/null 2>"$OUT/g.err" || fail "record -g: $(cat "$OUT/g.err")"
"$DOMPROF" record -f --call-graph fp -o "$OUT/fp.data" -- "$WL/threefuncs" 10 >/dev/null 2>&1 || fail "record --call-graph fp"
for f in g fp; do
	"$DOMPROF" dump --type SAMPLE "$OUT/$f.data" >"$OUT/$f.dump"
	grep -q ' chain=' "$OUT/$f.dump" || fail "$f: no call chains"
	! grep -q ' uregs=' "$OUT/$f.dump" || fail "$f: samples with user registers"
	! "$DOMPROF" info "$OUT/$f.data" | grep -q '^user stacks:' || fail "$f: info counts user stacks"
done
"$DOMPROF" record -f --call-graph dwarf,100 -e task-clock -o "$OUT/s.data" -- "$WL/threefuncs" 10 >/dev/null 2>&1 ||
	fail "record dwarf,100"
"$DOMPROF" dump --type SAMPLE "$OUT/s.data" >"$OUT/s.dump"
grep -q ' ustack=[0-9]*/104B' "$OUT/s.dump" || fail "dwarf,100 is not 104 bytes"
! grep -Eq ' ustack=(10[5-9]|1[1-9][0-9]|[2-9][0-9][0-9]|[0-9]{4,})/' "$OUT/s.dump" ||
	fail "dwarf,100 stored more than 104 bytes"

# merge keeps the blocks, written again (format 1.5: a stack in delta
# form refers to its chunk; how much of each is a reference depends on
# where the merge's chunks begin, so ustack_ref= is not compared), also
# where the event changes (s: task-clock becomes event 1 of the merge)
"$DOMPROF" merge -q -f -o "$OUT/m.data" "$OUT/dw.data" vm1="$OUT/s.data" >/dev/null 2>&1 || fail "merge"
"$DOMPROF" dump --type SAMPLE "$OUT/m.data" >"$OUT/m.dump"
for f in dw s; do
	want=$(grep -o ' uregs=.*' "$OUT/$f.dump" | sed 's/ uregs_v=.*//; s/ ustack_ref=[0-9]*//' | sort | md5sum)
	got=$(grep "dom=$([ $f = dw ] && echo 0 || echo 1) " "$OUT/m.dump" | grep -o ' uregs=.*' |
		sed 's/ ustack_ref=[0-9]*//' | sort | md5sum)
	[ "$want" = "$got" ] || fail "merge: the user blocks of $f.data differ"
done
grep -q 'dom=1 .* event=1 .* ustack=[0-9]*/104B' "$OUT/m.dump" || fail "merge: no rewritten sample with its block"

# bytes per sample (printed, not asserted): file bytes over samples, less
# what a recording of `true` holds (domprof embeds the kernel's symbols,
# ~0.6 MB; perf.data its header and features), so the fixed part does
# not hide the per-sample cost of a short recording
bps() { python3 -c "import sys; print('%.0f' % ((int(sys.argv[1]) - int(sys.argv[2])) / max(1, int(sys.argv[3]))))" "$@"; }
samples() { "$DOMPROF" info "$1" | sed -n 's/^samples: *\([0-9]*\)$/\1/p'; }
"$DOMPROF" record -f --call-graph dwarf -o "$OUT/t.data" -- true >/dev/null 2>&1 || fail "record true"
t=$(stat -c %s "$OUT/t.data")
note "domprof -g: $(bps "$(stat -c %s "$OUT/g.data")" "$t" "$(samples "$OUT/g.data")") bytes/sample;" \
	"--call-graph dwarf: $(bps "$(stat -c %s "$OUT/dw.data")" "$t" "$(samples "$OUT/dw.data")") bytes/sample" \
	"(user stacks: $(sed -n 's/^user stacks: //p' "$OUT/dw.info"))"
PERF=$(command -v perf || true)
if [ -n "$PERF" ]; then
	export PERF_BUILDID_DIR="$OUT/perf-buildid"
	for z in "" "-z"; do
		"$PERF" record -q --no-buildid -N --call-graph dwarf,16384 $z -o "$OUT/perf-t.data" -- true >/dev/null 2>&1 || true
		if "$PERF" record -q --no-buildid -N -F 1000 --call-graph dwarf,16384 $z -o "$OUT/perf.data" -- \
			env -i "$WL/threefuncs" 100 >/dev/null 2>"$OUT/perf.err"; then
			n=$("$PERF" report -i "$OUT/perf.data" --stats 2>/dev/null | sed -n 's/^ *SAMPLE events: *\([0-9]*\).*/\1/p' | head -n 1)
			note "perf record --call-graph dwarf $z: $(bps "$(stat -c %s "$OUT/perf.data")" \
				"$(stat -c %s "$OUT/perf-t.data" 2>/dev/null || echo 0)" "${n:-0}") bytes/sample ($n samples)"
		else
			note "perf record --call-graph dwarf $z failed: $(tail -n 1 "$OUT/perf.err")"
		fi
	done
fi
echo ok
