#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `domprof record -- CMD`: record the two workloads with known profiles and
# check the file against what they are known to do:
#  - threefuncs: samples carry its pid, a COMM record names it, an MMAP
#    maps its binary with the binary's own build-id, and its samples split
#    50/30/20 between func_a/func_b/func_c (+-8 points, from nm);
#  - with -g, most samples in the three functions have main as caller;
#  - kernelheavy: most of its samples are in kernel mode;
#  - STATS count == SAMPLE records, no damage;
#  - -h and --help after COMMAND are the command's (record grep -h ...,
#    record ls --help run it), before it record's.
source "$(dirname "$0")/../lib/common.bash"
set -e
command -v python3 >/dev/null || skip "python3 not installed"
[ -x "$WL/threefuncs" ] && [ -x "$WL/kernelheavy" ] || skip "workloads not built (make workloads)"

# 1. threefuncs, no call chains
"$DOMPROF" record -f -o "$OUT/tf.data" -- "$WL/threefuncs" >"$OUT/tf.out" 2>"$OUT/tf.err" || fail "record exited $?: $(cat "$OUT/tf.err")"
cat "$OUT/tf.err"
grep -Eq '^domprof record: [0-9]+ samples written, 0 lost \(0\.00%\), [0-9]+ bytes, [0-9.]+ s; command exited with status 0$' "$OUT/tf.err" \
	|| fail "summary line: $(cat "$OUT/tf.err")"
pid=$(sed -n 's/^threefuncs: pid \([0-9]*\) done$/\1/p' "$OUT/tf.out")
[ -n "$pid" ] || fail "workload did not run"
"$DOMPROF" dump "$OUT/tf.data" >"$OUT/tf.dump"
"$DOMPROF" info "$OUT/tf.data" >"$OUT/tf.info"
grep -q 'damage: *none' "$OUT/tf.info" || fail "damage reported: $(grep damage "$OUT/tf.info")"
grep -Eq "TASK +comm pid=$pid .*comm=threefuncs$" "$OUT/tf.dump" || fail "no COMM record for pid $pid"
bid=$(readelf -n "$WL/threefuncs" | sed -n 's/.*Build ID: *//p')
grep -Eq "MMAP +pid=$pid .*buildid=$bid path=$WL/threefuncs$" "$OUT/tf.dump" || fail "no MMAP of the workload with build-id $bid"

python3 - "$OUT/tf.dump" "$OUT/tf.info" "$pid" "$WL/threefuncs" <<'PY' || fail "profile check"
import re, subprocess, sys
dump, info, pid, binpath = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
syms = {}
for l in subprocess.run(["nm", "-n", binpath], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if len(f) == 3 and f[2] in ("func_a", "func_b", "func_c", "consume", "main"):
        syms[f[2]] = int(f[0], 16)
order = sorted(syms.items(), key=lambda kv: kv[1])
def sym(off):
    name = None
    for n, a in order:
        if off >= a:
            name = n
    return name
maps, counts, total_samples, pid_samples = [], {}, 0, 0
for l in open(dump):
    kv = dict(re.findall(r'(\w+)=(\S+)', l))
    if ' MMAP ' in l and kv.get('pid') == pid and l.rstrip().endswith(binpath):
        maps.append((int(kv['start'], 16), int(kv['len'], 16), int(kv['pgoff'], 16)))
    elif ' SAMPLE ' in l:
        total_samples += 1
        if kv.get('pid') != pid or kv.get('mode') != 'user':
            continue
        pid_samples += 1
        ip = int(kv['ip'], 16)
        for s, n, o in maps:
            if s <= ip < s + n:
                k = sym(ip - s + o)
                counts[k] = counts.get(k, 0) + 1
stats = int(re.search(r'stats: +(\d+) samples', open(info).read()).group(1))
print("samples:", total_samples, "stats:", stats, "pid samples:", pid_samples, "by function:", counts)
assert stats == total_samples, "STATS count != SAMPLE records"
n = sum(counts.get(f, 0) for f in ("func_a", "func_b", "func_c"))
assert pid_samples > 1000 and n > 0.9 * pid_samples, "too few samples in the three functions"
for f, want in (("func_a", 50), ("func_b", 30), ("func_c", 20)):
    got = 100.0 * counts.get(f, 0) / n
    print(f"{f}: {got:.1f}% (expected {want}%)")
    assert abs(got - want) <= 8, f"{f} share {got:.1f}% not within 8 points of {want}%"
PY

# 2. call chains: the caller of each function is main
"$DOMPROF" record -f -g -o "$OUT/tfg.data" -- "$WL/threefuncs" 60 >"$OUT/tfg.out" 2>"$OUT/tfg.err" || fail "record -g exited $?"
pid=$(sed -n 's/^threefuncs: pid \([0-9]*\) done$/\1/p' "$OUT/tfg.out")
"$DOMPROF" dump "$OUT/tfg.data" >"$OUT/tfg.dump"
python3 - "$OUT/tfg.dump" "$pid" "$WL/threefuncs" <<'PY' || fail "call chain check"
import re, subprocess, sys
dump, pid, binpath = sys.argv[1], sys.argv[2], sys.argv[3]
syms = {}
for l in subprocess.run(["nm", "-n", binpath], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if len(f) == 3 and f[1] in "Tt":
        syms[int(f[0], 16)] = f[2]
addrs = sorted(syms)
def sym(off):
    best = None
    for a in addrs:
        if off >= a:
            best = syms[a]
    return best
maps, inner, with_main = [], 0, 0
for l in open(dump):
    kv = dict(re.findall(r'(\w+)=(\S+)', l))
    if ' MMAP ' in l and kv.get('pid') == pid and l.rstrip().endswith(binpath):
        maps.append((int(kv['start'], 16), int(kv['len'], 16), int(kv['pgoff'], 16)))
    elif ' SAMPLE ' in l and kv.get('pid') == pid and kv.get('mode') == 'user' and 'chain' in kv:
        chain = [int(x, 16) for x in kv['chain'].split(':', 1)[1].split(',')]
        def name(ip):
            for s, n, o in maps:
                if s <= ip < s + n:
                    return sym(ip - s + o)
        if name(chain[0]) in ("func_a", "func_b", "func_c"):
            inner += 1
            if len(chain) > 1 and name(chain[1]) == "main":
                with_main += 1
print("samples in func_*:", inner, "with main as caller:", with_main)
assert inner > 200 and with_main >= 0.9 * inner
PY

# 3. kernelheavy: most samples in the kernel
"$DOMPROF" record -f -o "$OUT/kh.data" -- "$WL/kernelheavy" 1.5 >"$OUT/kh.out" 2>"$OUT/kh.err" || fail "record kernelheavy exited $?"
pid=$(sed -n 's/^kernelheavy: pid \([0-9]*\) .*/\1/p' "$OUT/kh.out")
"$DOMPROF" dump "$OUT/kh.data" >"$OUT/kh.dump"
k=$(grep -Ec " SAMPLE .* pid=$pid .*mode=kernel" "$OUT/kh.dump" || true)
u=$(grep -Ec " SAMPLE .* pid=$pid .*mode=user" "$OUT/kh.dump" || true)
echo "kernelheavy: $k kernel samples, $u user samples"
[ "$k" -ge 20 ] && [ "$k" -gt $((4 * u)) ] || fail "kernelheavy: expected mostly kernel samples"
grep -Eq "TASK +comm pid=$pid .*comm=kernelheavy$" "$OUT/kh.dump" || fail "no COMM for kernelheavy"
grep -q ' SYMTAB .*name=kallsyms' "$OUT/kh.dump" || fail "no embedded kallsyms"
grep -Eq ' MMAP +pid=-1 .*path=\[kernel.kallsyms\]$' "$OUT/kh.dump" || fail "no kernel MMAP"
# 4. what follows COMMAND is the command's, -h and --help too: run, not
# record's help (the original printed record's help, exit 0, and ran nothing)
"$DOMPROF" record -f -o "$OUT/h.data" grep -h root /etc/passwd >"$OUT/h.out" 2>"$OUT/h.err" ||
	fail "record grep -h root: exit $?: $(cat "$OUT/h.err")"
grep -q '^root:' "$OUT/h.out" || fail "record grep -h root /etc/passwd did not run grep: $(head -3 "$OUT/h.out")"
grep -q 'usage: domprof record' "$OUT/h.out" && fail "record's help printed for the command's -h"
"$DOMPROF" record -f -o "$OUT/h2.data" -- grep -h root /etc/passwd >"$OUT/h2.out" 2>/dev/null || fail "record -- grep -h"
grep -q '^root:' "$OUT/h2.out" || fail "record -- grep -h root did not run grep"
"$DOMPROF" record -f -o "$OUT/ls.data" ls --help >"$OUT/ls.out" 2>"$OUT/ls.err" || fail "record ls --help: exit $?"
grep -q 'usage: domprof record' "$OUT/ls.out" && fail "record ls --help printed record's help"
grep -qi '^usage: ls' "$OUT/ls.out" || fail "record ls --help did not run ls: $(head -3 "$OUT/ls.out")"
grep -q 'command exited with status 0' "$OUT/ls.err" || fail "record ls --help: no command summary"
# control: before COMMAND, --help is record's (exit 0, nothing run)
"$DOMPROF" record --help ls >"$OUT/rh.out" || fail "record --help: exit $?"
grep -q '^usage: domprof record' "$OUT/rh.out" || fail "record --help: no usage"
"$DOMPROF" record -f -o "$OUT/rh2.data" -h >"$OUT/rh2.out" && grep -q '^usage: domprof record' "$OUT/rh2.out" ||
	fail "record -o F -h: no usage"
echo "ok"
