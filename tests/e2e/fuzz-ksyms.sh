#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The guest kallsyms decoder (src/guest/ksyms.c) under libFuzzer for a
# short time (FUZZ_SECONDS, default 4) on fake guest memories made here:
# synthetic kallsyms tables in each layout the decoder knows (offsets
# before num_syms with seqs_of_names, as Debian's 6.1; names first with
# offsets after the token index, as 6.12; absolute kallsyms_addresses;
# offsets without absolute per-cpu; 2-byte name lengths), each with a
# kernel banner and a build-id note. Known answers first: each seed
# decodes to its symbol count and build id; controls: a seed with a
# flipped token-table byte and one with unsorted addresses are refused;
# one whose probes point past the tables (a names-like decoy at 128 KiB)
# still decodes (the scan falls back to the start of rodata).
# Then any crash or sanitizer report while fuzzing fails the test.
# Real seeds, in a corpus of their own, fuzzed for a quarter of
# FUZZ_SECONDS (at least their first run): each kernel of the matrix in
# the VM cache with its vmlinux and nokaslr kallsyms (tests/e2e/lib/
# kernel-seeds.bash) gives its read-only data, .rodata through .notes, at
# its own place after _text; each must decode to its /proc/kallsyms
# count and the ELF's build id; control: a flipped token-table byte.
# With no such kernel, synthetic seeds only.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-ksyms ] || skip "fuzzer not built (make fuzz needs clang)"
command -v python3 >/dev/null || skip "python3 is missing"
corpus="$OUT/corpus"
mkdir -p "$corpus"
python3 - "$corpus" <<'EOF'
import struct, sys
out = sys.argv[1]
TEXT = 0xffffffff81000000
def a8(b):
    return b + b"\0" * (-len(b) % 8)
def a4(b):
    return b + b"\0" * (-len(b) % 4)
RO = TEXT + 0x200000   # where the fuzzer maps the seed's memory
def make(order="old", mode="abspcpu", seqs=True, n=600, longname=False, flip=None, unsorted=False,
         decoy=False, s64far=False, tt4=False):
    syms = [(0, "A", "fixed_percpu_data"), (0x1000, "A", "cpu_debug_store"),
            (TEXT, "T", "startup_64"), (TEXT, "T", "_stext"), (TEXT, "T", "_text")]
    if s64far:   # 6.19+: startup_64 40 MiB after _text
        syms = [s for s in syms if s[2] != "startup_64"]
    for i in range(n):
        syms.append((TEXT + 0x1000 + 0x40 * i, "t" if i % 3 else "T", "fn_%d_%s" % (i, "x" * (i % 40))))
    if s64far:
        syms.append((TEXT + 0x289f120, "T", "startup_64"))
    if longname:
        syms.append((TEXT + 0x100000, "T", "L" * 300))
    if mode != "abspcpu":
        syms = [s for s in syms if s[0] >= TEXT]
    if unsorted:
        syms[-1], syms[-3] = syms[-3], syms[-1]
    N = len(syms)
    # tokens: printable bytes stand for themselves, the others are "_z<i>".
    toks = [bytes([i]) if 0x21 <= i < 0x7f else b"_z%d" % i for i in range(256)]
    tt = b"".join(t + b"\0" for t in toks)
    idx, o = [], 0
    for t in toks:
        idx.append(o); o += len(t) + 1
    ti = struct.pack("<256H", *idx)
    names, marks = b"", []
    for i, (a, t, nm) in enumerate(syms):
        if i % 256 == 0:
            marks.append(len(names))
        e = (t + nm).encode()
        L = len(e)
        names += (bytes([L]) if L < 0x80 else bytes([(L & 0x7f) | 0x80, L >> 7])) + e
    rb = TEXT
    if order == "v7":   # 7.2+: u32 num_syms, place-relative offsets after the token index
        head = struct.pack("<I", N) + a4(names) + struct.pack("<%dI" % len(marks), *marks)
        if tt4 and len(head) % 8 == 0:   # 7.3: the token table only 4-aligned
            head += b"\0" * 4
        tabs = head + a4(tt) + ti
        if not tt4:
            tabs = a8(head) + a8(tt) + ti
        ttoff = len(tabs) - len(ti) - len(a4(tt) if tt4 else a8(tt))
        at = RO + 0x1000 + len(tabs)
        offs = [(a - (at + 4 * i)) & 0xffffffff for i, (a, _, _) in enumerate(syms)]
        tables = tabs + struct.pack("<%dI" % N, *offs)
        addrs = None
    elif mode == "absolute":
        addrs = a8(b"".join(struct.pack("<Q", a) for a, _, _ in syms))
    else:
        offs = []
        for a, _, _ in syms:
            if mode == "abspcpu":
                offs.append(a if a < TEXT else (rb - 1 - a) & 0xffffffff)
            else:
                offs.append(a - rb)
        addrs = a8(struct.pack("<%dI" % N, *offs)) + struct.pack("<Q", rb)
    sq = a8(b"".join(struct.pack(">I", i)[1:] for i in range(N))) if seqs else b""
    num = a8(struct.pack("<I", N))
    mk = a8(struct.pack("<%dI" % len(marks), *marks))
    if order == "v7":
        pass
    elif order == "old":
        tables = addrs + num + a8(names) + mk + sq + a8(tt) + ti
        ttoff = len(addrs + num + a8(names) + mk + sq)
    else:
        tables = num + a8(names) + mk + a8(tt) + ti + addrs + sq
        ttoff = len(num + a8(names) + mk)
    mem = bytearray(0x1000)
    banner = b"Linux version 6.99.0-fuzz (fuzz@example) #1 SMP\n\0"
    mem[0x100:0x100 + len(banner)] = banner
    mem += tables
    mem += b"\0" * (-len(mem) % 4)
    mem += struct.pack("<III", 4, 8, 6) + b"Xen\0" + b"linux\0\0\0"
    mem += struct.pack("<III", 4, 20, 3) + b"GNU\0" + bytes(range(0xa0, 0xb4))
    mem += b"\0" * 64
    if decoy:   # names-like bytes after the tables: the probes start too late
        mem += b"\0" * (0x20000 - len(mem)) + b"\x01" * 4096
    if flip is not None:
        mem[0x1000 + ttoff + flip] ^= 0xff
    return bytes(mem), N
seeds = {
    "old-abspcpu-seqs": make(),
    "new-abspcpu": make(order="new", seqs=False),
    "new-abspcpu-seqs-long": make(order="new", longname=True),
    "old-absolute": make(mode="absolute", seqs=False, n=300),
    "new-relative": make(order="new", mode="relative", n=1000),
    "old-small": make(n=20, seqs=False),
    "decoy-after": make(order="new", decoy=True),
    "s64-far": make(order="new", mode="relative", s64far=True),
    "v72-prel": make(order="v7", mode="relative", n=700, s64far=True),
    "v73-prel-tt4": make(order="v7", mode="relative", n=900, s64far=True, tt4=True),
    "bad-v7-token": make(order="v7", mode="relative", n=700, tt4=True, flip=3),
    "bad-token": make(flip=3),
    "bad-order": make(order="new", unsorted=True),
}
for name, (mem, n) in seeds.items():
    with open("%s/%s" % (out, name), "wb") as f:
        f.write(b"\x00" + mem)
    with open("%s/%s.want" % (out, name), "w") as f:
        f.write("%d\n" % n)
EOF
# Known answers: each good seed decodes (its symbol count, the build id);
# the two controls are refused.
want_id=a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3
for s in "$corpus"/*.want; do
	seed=${s%.want} name=$(basename "${s%.want}")
	FUZZ_KSYMS_VERBOSE=1 build/fuzz/fuzz-ksyms "$seed" >"$OUT/$name.log" 2>&1 || { cat "$OUT/$name.log"; fail "$name crashed"; }
	mv "$s" "$OUT/"
	got=$(sed -n 's/^fuzz-ksyms: \(decoded .*\|refused: .*\)$/\1/p' "$OUT/$name.log")
	echo "  $name: $got"
	case $name in
	bad-*) [[ "$got" == refused:* ]] || fail "control $name was not refused: $got" ;;
	*) [[ "$got" == "decoded $(cat "$OUT/$name.want") symbols"* ]] || fail "$name: $got, expected $(cat "$OUT/$name.want") symbols"
	   grep -q "^fuzz-ksyms: build id $want_id$" "$OUT/$name.log" || fail "$name: build id not found: $(grep 'build id' "$OUT/$name.log")" ;;
	esac
done
build/fuzz/fuzz-ksyms -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=65536 -timeout=10 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
# Real seeds: each cached kernel's read-only data (kernel-seeds.py ksyms),
# a corpus of their own, fuzzed for a quarter of FUZZ_SECONDS (the
# synthetic session keeps its time): a decode takes a second or more, so
# that session runs each once (its known answer) and mutates them only
# when a long FUZZ_SECONDS outlasts that. Known answers, from that first
# run (told apart by the build id): each decodes to the kernel's own
# symbol count (its nokaslr /proc/kallsyms without modules; at most 64
# more, as guest-ksyms-matrix.sh allows) and build id. Control, on the smallest:
# the same seed with a flipped byte in the token table is refused or
# decodes to another text.
source "$TOP/tests/e2e/lib/kernel-seeds.bash"
mkdir -p "$OUT/real"
# the generic flavor of each series: a cloud or rt kernel has its
# series' layout (guest-ksyms-matrix.sh checks every flavor), and each
# real seed costs 1-2 s of decoding here
kernel_seed_args amd64
real=${#KSEED_ARGS[@]} maxlen=0 small=
if [ $real -gt 0 ]; then
	python3 "$KSEEDS" ksyms "$OUT/real" "${KSEED_ARGS[@]}" >"$OUT/real-want.txt" || fail "no seeds cut from the kernels"
	for s in "$OUT"/real/*; do
		size=$(stat -c %s "$s")
		[ "$size" -le $maxlen ] || maxlen=$size
		[ -n "$small" ] && [ "$size" -ge "$(stat -c %s "$OUT/real/$small")" ] || small=${s##*/}
	done
fi
[ $real -gt 0 ] || { echo "  no kernel with its vmlinux and kallsyms in the VM cache: synthetic seeds only"; exit 0; }
FUZZ_KSYMS_VERBOSE=1 build/fuzz/fuzz-ksyms -error_exitcode=1 -max_total_time=$(((${FUZZ_SECONDS:-4} + 3) / 4)) -max_len=$maxlen \
	-timeout=60 -artifact_prefix="$OUT/" "$OUT/real" >"$OUT/real.log" 2>&1 ||
	{ grep -v '^fuzz-ksyms:' "$OUT/real.log" | tail -n 20; fail "fuzzing the real seeds failed"; }
grep -v '^fuzz-ksyms:' "$OUT/real.log" | tail -n 3
# "BUILDID decoded ..." for each input of the first run (before INITED)
sed '/INITED/q' "$OUT/real.log" | awk '/^fuzz-ksyms: (decoded|refused)/ { d = substr($0, 13) }
	/^fuzz-ksyms: build id / { print $4, d; d = "" }' >"$OUT/real-first.txt"
while read -r name nsyms id; do
	got=$(awk -v id="$id" '$1 == id { $1 = ""; print substr($0, 2); exit }' "$OUT/real-first.txt")
	echo "  $name: ${got:-no decode with build id $id}"
	n=$(sed -n 's/^decoded \([0-9]*\) symbols.*/\1/p' <<<"$got")
	[ -n "$n" ] && [ "$n" -ge "$nsyms" ] && [ "$n" -le $((nsyms + 64)) ] ||
		fail "$name: ${got:-no decode with build id $id}, expected $nsyms symbols (its /proc/kallsyms)"
	if [ "$name" = "$small" ]; then
		tok=$(sed -n 's/.* tokens at +\(0x[0-9a-f]*\)$/\1/p' <<<"$got")
		sum=$(sed -n 's/.* text sha256 \([0-9a-f]*\),.*/\1/p' <<<"$got")
	fi
done <"$OUT/real-want.txt"
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[2 + int(sys.argv[3], 0) + 40] ^= 0xff
open(sys.argv[2], "wb").write(b)' "$OUT/real/$small" "$OUT/$small-flip" "$tok"
FUZZ_KSYMS_VERBOSE=1 build/fuzz/fuzz-ksyms "$OUT/$small-flip" >"$OUT/$small-flip.log" 2>&1 || fail "$small-flip crashed"
bad=$(sed -n 's/^fuzz-ksyms: \(decoded .*\|refused: .*\)$/\1/p' "$OUT/$small-flip.log")
echo "  control $small, a flipped token-table byte: $bad"
[[ $bad == refused:* ]] || { [[ $bad == decoded* ]] && [[ $bad != *" text sha256 $sum,"* ]]; } ||
	fail "control $small: a flipped token-table byte decodes to the same text"
echo "  $real real kernels' seeds decoded"
