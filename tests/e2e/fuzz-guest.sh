#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The guest's BTF layouts and task-list walk (what a passive domain reads
# from guest memory to name processes) under libFuzzer for a short time
# (FUZZ_SECONDS, default 4) on seeds made here: a small BTF with
# task_struct's fields inside an anonymous union, and a fake guest
# memory holding a three-task list; and, in a corpus of their own, the
# real .BTF of each kernel of the VM cache (tests/e2e/lib/
# kernel-seeds.bash), whose task_struct and mm_struct offsets must be the
# ones kernel-seeds.py's own BTF walk finds (control: task_struct
# renamed, refused). Any crash or sanitizer report fails the test.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-guest ] || skip "fuzzer not built (make fuzz needs clang)"
corpus="$OUT/corpus"
mkdir -p "$corpus"
python3 - "$corpus" <<'PY'
import struct, sys
d = sys.argv[1]
strs = b"\0"
def s(name):
    global strs
    off = len(strs); strs += name.encode() + b"\0"; return off
types = b""
def t(name, kind, vlen, size_or_type, extra=b""):
    global types
    types += struct.pack("<III", s(name) if name else 0, (kind << 24) | vlen, size_or_type) + extra
def members(*ms):
    return b"".join(struct.pack("<III", s(n) if n else 0, ty, bits) for n, ty, bits in ms)
t("int", 1, 0, 4, struct.pack("<I", (1 << 24) | 32))             # 1
t("char", 1, 0, 1, struct.pack("<I", 8))                          # 2
t(None, 2, 0, 0)                                                  # 3 void *
t(None, 3, 0, 0, struct.pack("<III", 2, 1, 16))                   # 4 char[16]
t("list_head", 4, 2, 16, members(("next", 3, 0), ("prev", 3, 64)))          # 5
t(None, 4, 2, 8, members(("pid", 1, 0), ("tgid", 1, 32)))                   # 6
t(None, 5, 1, 8, members((None, 6, 0),))                                     # 7
t("task_struct", 4, 6, 128, members(("flags", 1, 32), (None, 7, 64), ("tasks", 5, 128),
                                     ("mm", 3, 256), ("real_parent", 3, 320), ("comm", 4, 512)))  # 8
t("mm_struct", 4, 1, 64, members(("pgd", 3, 64),))                           # 9
t("pcpu_hot", 4, 1, 8, members(("current_task", 3, 0),))                     # 10
hdr = struct.pack("<HBBIIIII", 0xeB9F, 1, 0, 24, 0, len(types), len(types), len(strs))
open(d + "/btf", "wb").write(b"\x01" + hdr + types + strs)
# Tasks: init_task at the base, tasks at 128 and 256, an mm at 384.
B = 0xffff888000000000
lay = bytes([0, 16, 8, 12, 64, 32, 40, 4, 8, 16, 255, 0x31, 0, 0, 0, 0])
mem = bytearray(512)
def task(at, nxt, pid, comm, mm, parent):
    struct.pack_into("<Q", mem, at + 16, B + nxt + 16)
    struct.pack_into("<II", mem, at + 8, pid, pid)
    mem[at + 64:at + 64 + len(comm)] = comm
    struct.pack_into("<QQ", mem, at + 32, mm and B + mm, B + parent)
task(0, 128, 0, b"swapper/0", 0, 0)
task(128, 256, 1, b"init", 384, 0)
task(256, 0, 2, b"kthreadd", 0, 0)
struct.pack_into("<Q", mem, 384 + 8, B + 0x1234000)
struct.pack_into("<Q", mem, 0x31, B + 128)   # the per-CPU slot
open(d + "/tasks", "wb").write(lay + bytes(mem))
PY
build/fuzz/fuzz-guest -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=65536 -timeout=10 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
# Real seeds: each cached kernel's .BTF (kernel-seeds.py btf), a corpus of
# their own, fuzzed for a quarter of FUZZ_SECONDS (their first run
# included; the synthetic session keeps its time). Known
# answers, from that first run: task_struct's and mm_struct's offsets as
# kernel-seeds.py's own walk of the BTF finds them, once for each kernel
# that has them. Control, on the smallest: the same BTF with the name
# task_struct changed is refused. (The task-walk seed kind holds one byte
# a field offset: real offsets, 2-3 KiB into task_struct, do not fit.)
source "$TOP/tests/e2e/lib/kernel-seeds.bash"
mkdir -p "$OUT/real"
kernel_seed_args
real=${#KSEED_ARGS[@]} maxlen=0 small=
if [ $real -gt 0 ]; then
	python3 "$KSEEDS" btf "$OUT/real" "${KSEED_ARGS[@]}" | sed 's/ / btf: /' >"$OUT/real-want.txt" ||
		fail "no seeds cut from the kernels"
	for s in "$OUT"/real/*; do
		size=$(stat -c %s "$s")
		[ "$size" -le $maxlen ] || maxlen=$size
		[ -n "$small" ] && [ "$size" -ge "$(stat -c %s "$OUT/real/$small")" ] || small=${s##*/}
	done
fi
[ $real -gt 0 ] || { echo "  no kernel with its vmlinux and kallsyms in the VM cache: synthetic seeds only"; echo ok; exit 0; }
FUZZ_GUEST_VERBOSE=1 build/fuzz/fuzz-guest -error_exitcode=1 -max_total_time=$(((${FUZZ_SECONDS:-4} + 3) / 4)) -max_len=$maxlen \
	-timeout=60 -artifact_prefix="$OUT/" "$OUT/real" >"$OUT/real.log" 2>&1 ||
	{ grep -v '^fuzz-guest:' "$OUT/real.log" | tail -n 20; fail "fuzzing the real seeds failed"; }
grep -v '^fuzz-guest:' "$OUT/real.log" | tail -n 3
sed '/INITED/q' "$OUT/real.log" | sed -n 's/^fuzz-guest: //p' >"$OUT/real-first.txt"
while read -r name want; do
	echo "  $name: $want"
	[ "$(grep -cxF "$want" "$OUT/real-first.txt")" -ge "$(grep -c " ${want}$" "$OUT/real-want.txt")" ] ||
		fail "$name: its BTF did not give $want (first runs: $(sort -u "$OUT/real-first.txt" | tr '\n' ';'))"
done <"$OUT/real-want.txt"
python3 -c 'import sys; b = open(sys.argv[1], "rb").read(); i = b.index(b"\0task_struct\0")
open(sys.argv[2], "wb").write(b[:i + 11] + b"X" + b[i + 12:])' "$OUT/real/$small" "$OUT/$small-renamed"
FUZZ_GUEST_VERBOSE=1 build/fuzz/fuzz-guest "$OUT/$small-renamed" >"$OUT/$small-renamed.log" 2>&1 || fail "$small-renamed crashed"
bad=$(sed -n 's/^fuzz-guest: \(btf.*\)$/\1/p' "$OUT/$small-renamed.log")
echo "  control $small, task_struct renamed: $bad"
[[ $bad == "btf refused: "* ]] || fail "control $small: a BTF without task_struct was not refused: $bad"
echo "  $real real kernels' BTF decoded"
echo ok
