# SPDX-License-Identifier: MIT
# The guest-kernel call-chain checks of test-guest-chains.sh (Debian's 6.1;
# test-guest-chains-6.12.sh: 6.12): one guest recorded in
# one run with `record -g`, passively (PASSIVE, a gdb domain: chains
# unwound from outside with the guest's ORC tables) and actively (ACTIVE,
# the agent: the guest kernel's own unwinder, the ground truth). Sourced
# after lib.sh; uses $DOMPROF, $VM_OUT, fail/note.
#
#   chains_check DATA PASSIVE ACTIVE
#       folded exports of both views' kernel samples; tests/vm/chains-
#       compare.py: for the 5 hottest guest kernel functions (passive
#       self samples, >= 40 in both views; the interrupt-enable points
#       of `diff --fold-irq-enable` set aside) the most frequent caller agrees
#       and the caller distributions have similarity >= 0.8; >= 90% of the
#       passive chains end at an entry point. The recording's COUNTERS
#       (unwind.*) are shown. Control: the same passive chains, each
#       leaf's caller dropped (an unwinder that skips a frame), must not
#       agree.
#   chains_control DATA PASSIVE SOCK
#       the check that must fail: the same guest's stacks unwound with a
#       table that does not fit its code (every ORC ip moved by 4 KiB;
#       test-tool guest-orc --orc-shift, the same unwinder, live at 30
#       stops) complete fewer than half of their chains; the symbols come
#       from the kallsyms table embedded for PASSIVE in DATA.

chains_check() {
	local data=$1 p=$2 a=$3 v
	for v in "$p" "$a"; do
		"$DOMPROF" export --format folded --domain "$v" --mode kernel -i "$data" -o "$VM_OUT/$v-k.folded" \
			2>"$VM_OUT/export-$v.err" || fail "export --domain $v failed: $(tail -n 1 "$VM_OUT/export-$v.err")"
	done
	"$DOMPROF" info "$data" 2>&1 | grep -i "unwind" | sed 's/^/    /' | head -n 4
	# the interrupt-enable points are not compared (chains-compare.py)
	"$DOMPROF" diff --domain-a "$p" --domain-b "$a" --kernel-only --fold-irq-enable --format csv "$data" "$data" \
		2>/dev/null | awk -F, '$7 == "folded" { print $3 }' >"$VM_OUT/irq-enable.txt" || fail "diff --fold-irq-enable failed"
	python3 "$DOMPROF_TOP/tests/vm/chains-compare.py" --skip "$VM_OUT/irq-enable.txt" \
		"$VM_OUT/$p-k.folded" "$VM_OUT/$a-k.folded" \
		>"$VM_OUT/chains-compare.txt" 2>&1; local rc=$?
	sed 's/^/    /' "$VM_OUT/chains-compare.txt"
	[ $rc -eq 0 ] || fail "passive call chains do not agree with the guest's own ($p vs $a)"
	# control: the same comparison of chains that lost one frame fails
	python3 "$DOMPROF_TOP/tests/vm/chains-compare.py" --drop-caller --skip "$VM_OUT/irq-enable.txt" \
		"$VM_OUT/$p-k.folded" "$VM_OUT/$a-k.folded" >"$VM_OUT/chains-control.txt" 2>&1; rc=$?
	[ $rc -eq 1 ] || { cat "$VM_OUT/chains-control.txt"; fail "control: chains missing a frame still agree (exit $rc)"; }
	note "control: chains with each leaf's caller dropped do not agree: $(grep -c 'DIFFER' "$VM_OUT/chains-control.txt") top callers differ"
}

chains_control() {
	local data=$1 p=$2 sock=$3 tt=$DOMPROF_TOP/build/san/test-tool k c
	"$tt" symtab get "$data" "$p" "$VM_OUT/control-kallsyms.txt" || fail "no kallsyms table embedded for $p"
	timeout -k 5 120 "$tt" guest-orc --orc-shift=0x1000 --stops=30 "gdb:$sock" "$VM_OUT/control-kallsyms.txt" \
		>"$VM_OUT/control-chains.txt" 2>"$VM_OUT/control.err" ||
		{ cat "$VM_OUT/control.err"; fail "the wrong-table control run failed"; }
	k=$(sed -n 's/.* kernel=\([0-9]*\).*/\1/p' "$VM_OUT/control.err")
	c=$(sed -n 's/.* complete=\([0-9]*\).*/\1/p' "$VM_OUT/control.err")
	note "control (ORC table moved by 4 KiB): ${c:-?} of ${k:-?} chains complete"
	[ "${k:-0}" -ge 10 ] || fail "control: only ${k:-0} stops in the kernel"
	[ $((c * 2)) -lt "$k" ] || fail "control: a table moved by 4 KiB still completes $c of $k chains"
}
