#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The seed's experiment (../shared/seed/, issue 6): one 1-vCPU TCG guest
# streams TCP over its loopback (netbench) with `domprof agent` running
# inside; the host records it passively (gdbstub, with no symbol file:
# the guest kernel's table is read from guest memory, KASLR on) and
# actively (the agent) in the same run, and `domprof diff` compares the
# two views of the guest kernel. Prints both top-10 lists, the similarity
# and each view's user/kernel split. Requires:
#  - similarity >= 0.6;
#  - the copy routine (copy_user_generic*) is the passive view's top
#    function and in the active view's top 3, shares within 3 points;
#  - >= 6 of the active top 10 in the passive top 20, both with the
#    interrupt-enable points set aside (--fold-irq-enable: the active
#    view's cpu-clock samples pile up where interrupts are enabled again,
#    which the passive view sees elsewhere; docs/active.md). Ranks below
#    the top few are shares of ~1%, so a plain top-10-in-top-15 count
#    varied from 5 to 9 between runs on a busy host;
#  - and that the check can fail: the same passive samples resolved
#    against the table moved by 0x200000 (another KASLR boot's table;
#    test-tool symtab set) against the active view give similarity < 0.3.
# runs alone
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent-lib.sh"
vm_init seed
agent_init
export DOMPROF_CACHE=$VM_OUT/cache
agent_boot g run=netbench kaslr=1

# The agent build must dispatch agent: specs (collect/domain_source.c).
SECS=${SEED_SECS:-10}
sock=$(vm_sock g); port=$(agent_port g)
data=$VM_OUT/seed.data
echo "+ domprof record -F 1000 -d $SECS --domain vmp=gdb:unix:$sock --domain vma=agent:127.0.0.1:$port,key=$AGENT_KEY" >>"$VM_OUT/commands.log"
"$DOMPROF" record -f -F 1000 -d "$SECS" -o "$data" \
	--domain "vmp=gdb:unix:$sock" \
	--domain "vma=agent:127.0.0.1:$port,key=$AGENT_KEY" >"$VM_OUT/record.log" 2>&1; rc=$?
sed 's/^/    /' "$VM_OUT/record.log"
if grep -q 'agent domains are not supported' "$VM_OUT/record.log"; then
	skip "this build's domain_source.c does not dispatch agent: specs yet"
fi
[ $rc -eq 0 ] || fail "record exited $rc"
grep -a 'domprof agent' "$VM_OUT/g/console.log" | sed 's/^/    guest| /'
grep -a 'netbench' "$VM_OUT/g/console.log" | tail -n 1

# Each view: samples, user/kernel split, kernel top 15.
for v in vmp vma; do
	vm_report_csv "$VM_OUT/$v.csv" -q -i "$data" -l --domain $v
	vm_report_csv "$VM_OUT/$v-k.csv" -q -i "$data" -l --domain $v --mode kernel
	n=$(vm_samples "$VM_OUT/$v.csv" $v); k=$(vm_samples "$VM_OUT/$v-k.csv" $v)
	[ "$n" -ge 1000 ] || fail "$v: only $n samples"
	printf '%s: %d samples, kernel %d (%.1f%%), user %d (%.1f%%)\n' $v "$n" "$k" \
		"$(echo "100 * $k / $n" | bc -l)" $((n - k)) "$(echo "100 * ($n - $k) / $n" | bc -l)"
	awk -F, 'NR > 1 && c < 15 { print $5; c++ }' "$VM_OUT/$v-k.csv" >"$VM_OUT/$v.top15"
done

"$DOMPROF" diff --domain-a vmp --domain-b vma --kernel-only "$data" "$data" >"$VM_OUT/diff.txt" 2>"$VM_OUT/diff.err" ||
	fail "diff failed: $(tail -n 1 "$VM_OUT/diff.err")"
"$DOMPROF" diff --domain-a vmp --domain-b vma --kernel-only --format csv "$data" "$data" >"$VM_OUT/diff.csv" 2>/dev/null ||
	fail "diff --format csv failed"
"$DOMPROF" diff --domain-a vmp --domain-b vma --kernel-only --fold-irq-enable --format csv "$data" "$data" \
	>"$VM_OUT/diff-fold.csv" 2>/dev/null || fail "diff --fold-irq-enable --format csv failed"
sim=$(sed -n 's/^similarity: *//p' "$VM_OUT/diff.txt" | tail -n 1)
# top N of one side from the diff csv (domain,image,symbol,share_a,share_b,diff,status)
top() { awk -F, -v c="$1" 'NR > 1 && $c > 0 { print $c "," $3 }' "$VM_OUT/diff.csv" | sort -t, -k1,1gr | head -n "$2"; }
echo "passive view (vmp), guest kernel top 10:"; top 4 10 | awk -F, '{ printf "    %6.2f%%  %s\n", $1, $2 }'
echo "active view (vma), guest kernel top 10:";  top 5 10 | awk -F, '{ printf "    %6.2f%%  %s\n", $1, $2 }'
echo "similarity (kernel symbols, vmp vs vma): $sim"
grep -i 'fold\|without' "$VM_OUT/diff.txt" | head -n 3

ptop=$(top 4 1 | cut -d, -f2)
[[ "$ptop" == copy_user_generic* ]] || fail "passive top function is '$ptop', expected the copy routine copy_user_generic*"
top 5 3 | cut -d, -f2 | grep -qx "$ptop" || fail "$ptop is not in the active view's top 3"
pa=$(awk -F, -v s="$ptop" 'NR > 1 && $3 == s { print $4 }' "$VM_OUT/diff.csv")
pb=$(awk -F, -v s="$ptop" 'NR > 1 && $3 == s { print $5 }' "$VM_OUT/diff.csv")
echo "$ptop: passive $pa%, active $pb%"
awk -v a="$pa" -v b="$pb" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 3) }' ||
	fail "$ptop shares differ by more than 3 points ($pa vs $pb)"
# the same from the folded comparison (interrupt-enable points set aside)
ftop() { awk -F, -v c="$1" 'NR > 1 && $c > 0 && $7 != "folded" { print $c "," $3 }' "$VM_OUT/diff-fold.csv" |
	sort -t, -k1,1gr | head -n "$2"; }
common=$(ftop 5 10 | cut -d, -f2 | grep -cxF -f <(ftop 4 20 | cut -d, -f2))
echo "active top 10 in passive top 20 (interrupt-enable points set aside): $common"
[ "$common" -ge 6 ] || fail "only $common of the active top 10 are in the passive top 20"
awk -v s="$sim" 'BEGIN { exit !(s >= 0.6) }' || fail "similarity $sim < 0.6"

# The check must be able to fail: the passive view resolved against the
# symbol table of another boot, one whose kernel was placed 2 MiB higher
# (KASLR): the same kallsyms with every address moved by 0x200000.
grep -q 'vmp: .*kernel symbols from guest memory' "$VM_OUT/record.log" ||
	fail "the passive view's kernel symbols were not read from guest memory"
"$DOMPROF_TOP/build/san/test-tool" symtab get "$data" vmp "$VM_OUT/kallsyms-mem.txt" ||
	fail "no kallsyms table embedded for vmp"
vm_shift_kallsyms "$VM_OUT/kallsyms-mem.txt" "$VM_OUT/kallsyms-shifted.txt"
"$DOMPROF_TOP/build/san/test-tool" symtab set "$data" vmp "$VM_OUT/kallsyms-shifted.txt" "$VM_OUT/wrong.data" ||
	fail "cannot embed the shifted table"
"$DOMPROF" diff --domain-a vmp --domain-b vma --kernel-only "$VM_OUT/wrong.data" "$data" >"$VM_OUT/wrong-diff.txt" 2>&1 ||
	fail "diff against the wrong view failed"
wsim=$(sed -n 's/^similarity: *//p' "$VM_OUT/wrong-diff.txt" | tail -n 1)
echo "similarity with a table moved by 0x200000 (another KASLR boot): $wsim"
sed -n "8,12p" "$VM_OUT/wrong-diff.txt"
awk -v s="$wsim" 'BEGIN { exit !(s < 0.3) }' || fail "a wrong view still gives similarity $wsim (>= 0.3)"
note "seed experiment ok: similarity $sim (wrong view $wsim)"
