#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Guest kernel symbols read from guest memory agree with the same boot's
# /proc/kallsyms, on Debian 12's two kernels (6.1 and 6.12), KASLR on.
#
# For each kernel: boot a guest with KASLR that copies its own
# /proc/kallsyms to a second serial port, record it passively with no
# symbol option (the table is read from guest memory and embedded), then
#   - every symbol of the copy that is not a module's is in the embedded
#     table at the same address (a few may differ in type letter only);
#   - the same recording with the copy embedded instead (test-tool symtab
#     set: the same samples, the other table) reports like it: diff
#     similarity >= 0.99;
#   - control: the copy moved by 2 MiB (another boot's KASLR) scores < 0.3;
#   - the guest's processes are named from its BTF and task list: dd's
#     user time under "[guest user] dd (PID)", its kernel samples with
#     its pid (the current task read per tick);
#   - a second recording finds the table in the host cache (printed pause
#     times: first scan and cached; no timing assertion).
set -u
. "$(dirname "$0")/lib.sh"
vm_init guest-kernels
export DOMPROF_CACHE=$VM_OUT/cache
TT=$DOMPROF_TOP/build/san/test-tool
[ -x "$TT" ] || fail "no $TT (make fixtures)"

check_kernel() {
	local id=$1 meta=$2
	VM_KMETA=$meta
	vm_kernel
	note "$id: kernel $VM_KERNEL"
	vm_boot "$id" run=dd kaslr=1 kallsyms=1
	local d; d=$(vm_dir "$id")
	tr -d '\r' <"$d/kallsyms.txt" >"$d/copy.txt"
	local data=$d/rec.data
	vm_domprof "$id-record.log" record -f -F 500 -d 3 -o "$data" --domain "$id=gdb:unix:$(vm_sock "$id")"
	grep -q "$id: .*kernel symbols from guest memory" "$VM_OUT/$id-record.log" ||
		fail "$id: kernel symbols were not read from guest memory"
	# control of the cache check below: a fresh cache is not used
	grep -q "$id: .*kernel symbols from guest memory (cached" "$VM_OUT/$id-record.log" &&
		fail "$id: the first recording claims a cached table ($DOMPROF_CACHE is fresh)"
	local p1; p1=$(sed -n 's/.*VM paused \([0-9.]*\) s to read \([0-9.]*\) MB.*/\1 s, \2 MB/p' "$VM_OUT/$id-record.log")
	"$TT" symtab get "$data" "$id" "$d/mem.txt" || fail "$id: no embedded table"
	# the guest's processes too (BTF layouts of this kernel): dd's user
	# time is named, and its kernel time carries its pid (current task)
	"$DOMPROF" report -q -i "$data" -l --by-process --format csv >"$d/procs.csv" 2>&1 || fail "$id: report failed"
	grep -q ',\[guest user\] dd ([0-9]*),' "$d/procs.csv" || { head -n 5 "$d/procs.csv"; fail "$id: no '[guest user] dd (PID)' row"; }
	awk -F, '$4 == "[guest.kernel]" && $NF == "dd" { n += $1 } END { exit !(n > 0) }' "$d/procs.csv" ||
		fail "$id: no guest kernel samples attributed to dd"

	# every non-module symbol of the copy at the same address
	python3 - "$d/copy.txt" "$d/mem.txt" >"$d/agree.txt" <<'EOF' || { cat "$d/agree.txt"; fail "$id: the table from memory disagrees with the copy"; }
import sys
def load(p):
    out = {}
    for line in open(p, errors="replace"):
        f = line.split()
        if len(f) != 3:
            continue          # module symbols have a 4th field
        out.setdefault(f[2], set()).add(int(f[0], 16))
    return out
copy, mem = load(sys.argv[1]), load(sys.argv[2])
miss = [n for n, a in copy.items() if not (a & mem.get(n, set()))]
print("copy %d names, memory %d names, missing or moved %d" % (len(copy), len(mem), len(miss)))
for n in miss[:10]:
    print("  e.g. %s: copy %s, memory %s" % (n, sorted(hex(x) for x in copy[n])[:2],
          sorted(hex(x) for x in mem.get(n, ()))[:2]))
sys.exit(0 if len(copy) > 50000 and not miss else 1)
EOF
	sed 's/^/    /' "$d/agree.txt"

	# two views of the same recording
	"$TT" symtab set "$data" "$id" "$d/copy.txt" "$d/copy.data" || fail "$id: symtab set failed"
	"$DOMPROF" diff --domain-a "$id" --domain-b "$id" --kernel-only "$data" "$d/copy.data" >"$d/diff.txt" 2>&1 ||
		fail "$id: diff failed: $(tail -n 1 "$d/diff.txt")"
	local sim; sim=$(sed -n 's/^similarity: *//p' "$d/diff.txt" | tail -n 1)
	awk -v s="$sim" 'BEGIN { exit !(s >= 0.99) }' || { head -n 20 "$d/diff.txt"; fail "$id: similarity with the same boot's kallsyms $sim < 0.99"; }
	vm_shift_kallsyms "$d/copy.txt" "$d/shifted.txt"
	"$TT" symtab set "$data" "$id" "$d/shifted.txt" "$d/shifted.data" || fail "$id: symtab set (shifted) failed"
	"$DOMPROF" diff --domain-a "$id" --domain-b "$id" --kernel-only "$data" "$d/shifted.data" >"$d/wdiff.txt" 2>&1 ||
		fail "$id: diff (shifted) failed"
	local wsim; wsim=$(sed -n 's/^similarity: *//p' "$d/wdiff.txt" | tail -n 1)
	awk -v s="$wsim" 'BEGIN { exit !(s < 0.3) }' || fail "$id: a table moved by 2 MiB still scores $wsim (>= 0.3)"

	# from the cache the second time
	vm_domprof "$id-record2.log" record -f -F 500 -d 1 -o "$d/rec2.data" --domain "$id=gdb:unix:$(vm_sock "$id")"
	grep -q "$id: .*kernel symbols from guest memory (cached" "$VM_OUT/$id-record2.log" ||
		fail "$id: the second recording did not use the cached table"
	local p2; p2=$(sed -n 's/.*VM paused \([0-9.]*\) s to read \([0-9.]*\) MB.*/\1 s, \2 MB/p' "$VM_OUT/$id-record2.log")
	echo "$id: similarity $sim (shifted table $wsim); VM paused $p1 first, $p2 from the cache"
	vm_kill "$id"
}

check_kernel k61 linux-image-amd64
check_kernel k612 linux-image-6.12-amd64
note "guest kernel symbols from memory agree on 6.1 and 6.12"
