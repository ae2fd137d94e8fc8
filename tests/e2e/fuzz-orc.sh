#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The guest ORC tables and unwinder (src/guest/orc.c) under libFuzzer for
# a short time (FUZZ_SECONDS, default 4) on fake guests made here: a
# small table in the v3 layout (and the same in v1, 6.3's v2 and 7.1's
# v4 with its renumbered registers, each told from the table) with a stack holding
# CALL frames to an end-of-stack entry, a syscall's user-mode pt_regs, an
# sp that does not move, a deep recursion. Known answers first: each seed
# unwinds to its chain; the control, the same table with one ip out of
# order, is refused; a correct fast lookup table (orc_lookup) is used and a
# wrong one (the control) is not. Real seeds: for each kernel of the VM
# cache (tests/e2e/lib/kernel-seeds.bash), its ORC entries for vfs_read
# and its callers down to entry_SYSCALL_64 with their real return
# addresses on a stack; each must be told as its release's layout and
# unwind to user mode; controls: every other layout forced is refused.
# Then any crash, sanitizer report or chain over its bounds while fuzzing
# fails the test.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-orc ] || skip "fuzzer not built (make fuzz needs clang)"
command -v python3 >/dev/null || skip "python3 is missing"
corpus="$OUT/corpus"
mkdir -p "$corpus"
python3 - "$corpus" <<'EOF_PY'
import struct, sys
out = sys.argv[1]
TEXT, IPT, STK = 0xffffffff81000000, 0xffffffff82000000, 0xffffc90000010000
SP, BP, PREV = 5, 4, 1
U, END, CALL, REGS, PART = 0, 1, 2, 3, 4
tab = [(0x000, 0, 0, 0, 0, U), (0x100, SP, 8, 0, 0, CALL), (0x104, SP, 24, 0, 0, CALL),
       (0x200, SP, 8, 0, 0, CALL), (0x210, SP, 16, PREV, -16, CALL), (0x300, SP, 8, 0, 0, CALL),
       (0x400, 0, 0, 0, 0, END), (0x500, 0, 0, 0, 0, U), (0x510, SP, 0, 0, 0, REGS),
       (0x600, SP, 0, 0, 0, PART), (0x610, SP, 0, 0, 0, REGS), (0x700, 0, 0, 0, 0, U),
       (0x800, SP, 0, 0, 0, CALL), (0xa00, SP, 8, 0, 0, CALL), (0xf00, 0, 0, 0, 0, U)]
V4 = {SP: 3, PREV: 8}   # 7.1's numbers of the registers used here (BP, UNDEFINED keep theirs)
def tables(v1=False, unsorted=False, lay=None):
    ipt, ent = b"", b""
    for i, (ip, sr, so, br, bo, t) in enumerate(tab):
        if unsorted and i == 5:
            ip = 0x100
        ipt += struct.pack("<i", TEXT + ip - (IPT + 4 * i))
        f = (4 if t == END else t - CALL if t >= CALL else 0) if v1 else t | (8 if t >= REGS else 0)
        if lay == "v2":
            f = 8 if t == END else (t - CALL) | 4 if t > CALL else 0
        if lay == "v4":
            sr, br = V4.get(sr, sr), V4.get(br, br)
        ent += struct.pack("<hhBB", so, bo, sr | br << 4, f)
    return ipt + ent
def lookup(wrong=False):
    """The kernel's orc_lookup for 64 KiB of text: per 256-byte block the
    last entry at or below its start, then the one for _etext."""
    v = [max(i for i, t in enumerate(tab) if t[0] <= b * 256) for b in range(256)] + [len(tab) - 1]
    if wrong:
        v[3] = 0
    return {0: 257 | v[0] << 32, **{4 + 4 * k: v[k] | v[k + 1] << 32 for k in range(1, 257, 2)}}
def seed(name, want, ip, sp, stack, v1=False, unsorted=False, flags=0, lay=None):
    st = bytearray(0x1000)
    for a, v in stack.items():
        struct.pack_into("<Q", st, a, v)
    hdr = struct.pack("<BHHHBHHHH", flags, len(tab), 512, 0, 0, ip, sp, 0, 0)   # 512-byte windows
    open("%s/%s" % (out, name), "wb").write(hdr + tables(v1, unsorted, lay) + bytes(st))
    open("%s/%s.want" % (out, name), "w").write(want + "\n")
calls = {0x810: TEXT + 0x215, 0x818: 0xbb, 0x820: TEXT + 0x315, 0x828: TEXT + 0x405}
seed("call-end-v3", "chain end frames=4 bytes=512: 0x108 0x215 0x315 0x405", 0x108, 0x800, calls)
seed("call-end-v1", "chain end frames=4 bytes=512: 0x108 0x215 0x315 0x405", 0x108, 0x800, calls, v1=True)
seed("call-end-v2", "chain end frames=4 bytes=512: 0x108 0x215 0x315 0x405", 0x108, 0x800, calls, lay="v2")
seed("call-end-v4", "chain end frames=4 bytes=512: 0x108 0x215 0x315 0x405", 0x108, 0x800, calls, lay="v4")
# control: the v4 table with v3 forced (flags bits 0-1 = 2) is refused
seed("bad-v4-as-v3", "refused", 0x108, 0x800, calls, lay="v4", flags=2)
P = 0xe00
user = {P: 0xdd, P + 8: TEXT + 0x515, P + 16 + 8 * 16: 0x401000, P + 16 + 8 * 17: 0x33}
seed("syscall-user", "chain user frames=3 bytes=512: 0x215 0x515 0x401000", 0x215, P, user)
seed("loop", "chain loop frames=1 bytes=512: 0x805", 0x805, 0x800, {0x7f8: TEXT + 0x805})
seed("recursion", "chain depth frames=64 bytes=512:" + " 0xa05" * 64, 0xa05, 8,
     {a: TEXT + 0xa05 for a in range(0, 0x1000, 8)})
seed("bad-unsorted", "refused", 0x108, 0x800, calls, unsorted=True)
# the fast lookup table (flag 32), right and (control) with one value wrong
seed("lookup", "chain end frames=4 bytes=512: 0x108 0x215 0x315 0x405", 0x108, 0x800, {**calls, **lookup()}, flags=32)
seed("bad-lookup", "chain end frames=4 bytes=512: 0x108 0x215 0x315 0x405", 0x108, 0x800,
     {**calls, **lookup(True)}, flags=32)
EOF_PY
for s in "$corpus"/*.want; do
	seed=${s%.want} name=$(basename "${s%.want}")
	want=$(cat "$s")
	mv "$s" "$OUT/"
	FUZZ_ORC_VERBOSE=1 build/fuzz/fuzz-orc "$seed" >"$OUT/$name.log" 2>&1 || { cat "$OUT/$name.log"; fail "$name crashed"; }
	got=$(sed -n 's/^fuzz-orc: \(chain .*\|refused\): *.*$/&/p' "$OUT/$name.log" | head -n 1 | sed 's/^fuzz-orc: //')
	echo "  $name: $got"
	case $name in
	bad-lookup) [ "$got" = "$want" ] || fail "$name: got '$got', expected '$want'"
		! grep -q 'fast lookup table' "$OUT/$name.log" || fail "control: a wrong orc_lookup was used" ;;
	bad-*) [[ "$got" == refused:* ]] || fail "control $name was not refused: $got" ;;
	*) [ "$got" = "$want" ] || fail "$name: got '$got', expected '$want'" ;;
	esac
	[ "$name" != lookup ] || grep -q 'fast lookup table' "$OUT/$name.log" || fail "lookup: the orc_lookup table was not used"
done
# Real seeds: each cached kernel's ORC entries for a read(2) stack
# (kernel-seeds.py orc: vfs_read, its callers down to entry_SYSCALL_64,
# moved into the fuzzer's text, their real return addresses on the
# stack). Known answers: the layout told is the one the kernel's release
# has, and the chain is the one kernel-seeds.py placed, ending in user
# mode (or, where it found no call site further down, at least vfs_read
# and its caller); controls: each other layout forced on it is refused.
source "$TOP/tests/e2e/lib/kernel-seeds.bash"
kernel_seed_args
real=${#KSEED_ARGS[@]} runs=()
if [ $real -gt 0 ]; then
	python3 "$KSEEDS" orc "$corpus" --controls "$OUT" "${KSEED_ARGS[@]}" >"$OUT/real-want.txt" ||
		fail "no seeds cut from the kernels: $(tail -n 1 "$OUT/real-want.txt")"
	while read -r name _; do
		runs+=("$corpus/$name" "$OUT/$name"-as-*)
	done <"$OUT/real-want.txt"
fi
if [ $real -gt 0 ]; then
	# one run for all (a process each is seconds on a loaded machine),
	# its output cut into a log per input
	FUZZ_ORC_VERBOSE=1 build/fuzz/fuzz-orc "${runs[@]}" >"$OUT/real.log" 2>&1 || { tail -n 20 "$OUT/real.log"; fail "a real seed crashed"; }
	awk -v out="$OUT" '/^Running: / { n = split($2, p, "/"); f = out "/" p[n] ".log"; printf "" >f; next }
		f && /^fuzz-orc: / { print >>f }' "$OUT/real.log"
	while read -r name lay stop ips; do
		got=$(sed -n 's/^fuzz-orc: \(.* entries, .*\|refused: .*\)$/\1/p' "$OUT/$name.log" | head -n 1)
		chain=$(sed -n 's/^fuzz-orc: \(chain .*\)$/\1/p' "$OUT/$name.log" | head -n 1)
		echo "  $name: $got; $chain"
		[[ $got == *" entries, $lay" ]] || fail "$name: $got, expected the layout $lay"
		if [ "$stop" = user ]; then
			[[ $chain == "chain user frames="*": $ips" ]] || fail "$name: $chain, expected the chain $ips ending in user mode"
		else
			# a call site kernel-seeds.py did not find: the frames it placed
			[[ $ips == *" "* ]] || fail "$name: kernel-seeds.py placed no caller of vfs_read ($stop $ips)"
			[[ $chain == *": $ips"* ]] || fail "$name: $chain, expected the chain to start $ips"
			echo "    (the stack placed stops after $ips)"
		fi
		for l in v1 v3 v4; do
			[ "$l" != "$lay" ] || continue
			bad=$(sed -n 's/^fuzz-orc: \(.* entries, .*\|refused: .*\)$/\1/p' "$OUT/$name-as-$l.log" | head -n 1)
			echo "    control, $l forced: $bad"
			[[ $bad == refused:* ]] || fail "control $name: the $lay table with $l forced was not refused: $bad"
		done
	done <"$OUT/real-want.txt"
	echo "  $real real kernels' ORC seeds"
else
	echo "  no kernel with its vmlinux and kallsyms in the VM cache: synthetic seeds only"
fi
build/fuzz/fuzz-orc -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=65536 -timeout=10 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
