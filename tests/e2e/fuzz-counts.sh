#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A chunk's counts part (src/format/counts.c, format 1.6) under libFuzzer
# (tests/fuzz/fuzz-counts.c) for FUZZ_SECONDS (default 4). Known answer
# first: every chunk with a counts part (flag 2) in a real recording of
# threefuncs passes, its groups hold fewer items than the chunk's
# records, and it agrees with the chunk's records (cnt_agrees); control that must fail: the same chunk with its record count
# one higher is refused (the counts no longer add up). Seeds: those
# chunks, a cut one, one with a byte of its part flipped. Then any
# crash, sanitizer report or broken promise fails.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-counts ] || skip "fuzzer not built (make fuzz needs clang)"
need_workload threefuncs
corpus="$OUT/corpus"
mkdir -p "$corpus"
"$DOMPROF" record -f -g -F 2000 -o "$OUT/tf.data" -- "$WL/threefuncs" 100 >"$OUT/record.log" 2>&1 ||
	{ cat "$OUT/record.log"; fail "record failed"; }
# each chunk with flag 2 as u32 nrec, u32 raw, its stored payload
python3 - "$OUT/tf.data" "$corpus" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
n = 0
for o in range(0, len(b) - 32, 8):
    if b[o:o + 4] != b'CHNK':
        continue
    flags, stored, raw, nrec = struct.unpack_from('<IIII', b, o + 4)
    if not flags & 2 or o + 32 + stored > len(b):
        continue
    pl = b[o + 32:o + 32 + stored]
    open('%s/chunk%03d' % (sys.argv[2], n), 'wb').write(struct.pack('<II', nrec, raw) + pl)
    n += 1
    if n == 40:
        break
print(n)
PY
seeds=$(ls "$corpus" | wc -l)
[ "$seeds" -ge 1 ] || fail "the recording has no chunk with a counts part"
ok=0
for f in "$corpus"/chunk*; do
	FUZZ_COUNTS_VERBOSE=1 build/fuzz/fuzz-counts "$f" >"$OUT/known.log" 2>&1 || { cat "$OUT/known.log"; fail "$f crashed"; }
	line=$(grep -E "^fuzz-counts: (ok|refused)" "$OUT/known.log" | tail -n 1)
	[[ $line =~ ^fuzz-counts:\ ok\ ([0-9]+)\ items,\ ([0-9]+)\ groups,\ ([0-9]+)\ samples$ ]] ||
		fail "$(basename "$f"): $line"
	nrec=$(python3 -c "import struct,sys; print(struct.unpack_from('<I', open(sys.argv[1],'rb').read())[0])" "$f")
	[ "${BASH_REMATCH[1]}" -lt "$nrec" ] || fail "$(basename "$f"): ${BASH_REMATCH[1]} items for $nrec records"
	grep -qx "fuzz-counts: agrees with its records" "$OUT/known.log" ||
		fail "$(basename "$f"): the part is not what its records fold into: $(grep "^fuzz-counts: [ad]" "$OUT/known.log")"
	ok=$((ok + 1))
done
note "$ok chunks with counts parts pass ($line)"
first=$(ls "$corpus"/chunk* | head -n 1)
python3 -c "import struct,sys; b=bytearray(open(sys.argv[1],'rb').read()); struct.pack_into('<I', b, 0, struct.unpack_from('<I', b)[0] + 1); open(sys.argv[2],'wb').write(b)" "$first" "$OUT/control"
FUZZ_COUNTS_VERBOSE=1 build/fuzz/fuzz-counts "$OUT/control" >"$OUT/control.log" 2>&1 || true
grep -q '^fuzz-counts: refused$' "$OUT/control.log" ||
	fail "control: a record count one higher was not refused: $(grep "^fuzz-counts:" "$OUT/control.log")"
head -c 300 "$first" >"$corpus/cut"
python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[-7]^=0x10; open(sys.argv[2],'wb').write(b)" "$first" "$corpus/flipped"
build/fuzz/fuzz-counts -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=1048576 \
	-artifact_prefix="$OUT/" "$corpus" >"$OUT/fuzz.log" 2>&1 || { tail -40 "$OUT/fuzz.log"; fail "fuzzer found a bug"; }
note "$(grep -E '^Done [0-9]+ runs' "$OUT/fuzz.log")"
