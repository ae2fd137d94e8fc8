#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The unwind-table reader (src/symbols/fde.c) under libFuzzer for a
# short time (FUZZ_SECONDS, default 4). Seeds: whole ELF files
# (build/workloads/libfde.so, this machine's liblzma.so.5) and their raw
# .eh_frame_hdr/.eh_frame sections in the fuzzer's section format
# (tests/fuzz/fuzz-fde.c), with the header and without. Known answers
# first: each seed decodes to as many ranges as `readelf
# --debug-dump=frames` lists FDEs, the first starting where readelf's
# lowest does; a seed whose header claims 10^6 entries still decodes
# them all (the walk); control that must fail: a seed whose CIE has an
# unknown version decodes to no range. Then any crash, sanitizer report
# or broken table while fuzzing fails the test.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-fde ] || skip "fuzzer not built (make fuzz needs clang)"
command -v python3 >/dev/null || skip "python3 is missing"
command -v objcopy >/dev/null && command -v readelf >/dev/null || skip "binutils missing"
need_workload libfde.so
corpus="$OUT/corpus"
mkdir -p "$corpus"

libs=("$WL/libfde.so")
lz=$(readlink -f /lib/x86_64-linux-gnu/liblzma.so.5 2>/dev/null || true)
[ -n "$lz" ] && [ -f "$lz" ] && libs+=("$lz")
i=0
for lib in "${libs[@]}"; do
	name=$(basename "$lib")
	readelf --debug-dump=frames "$lib" | sed -n 's/.* FDE .* pc=0*\([0-9a-f]*\)\.\..*/\1/p' | sort -u >"$OUT/$name.starts"
	n=$(wc -l <"$OUT/$name.starts")
	first=$(python3 -c "import sys; print(hex(min(int(l, 16) for l in open(sys.argv[1]))))" "$OUT/$name.starts")
	cp "$lib" "$corpus/elf-$name"
	echo "$n $first" >"$OUT/elf-$name.want"
	# the same without section headers: read through PT_GNU_EH_FRAME
	python3 -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[0x28:0x30] = bytes(8); b[0x3c:0x40] = bytes(4); open(sys.argv[2], 'wb').write(b)" \
		"$lib" "$corpus/noshdr-$name"
	echo "$n $first" >"$OUT/noshdr-$name.want"
	objcopy -O binary --only-section=.eh_frame_hdr "$lib" "$OUT/$name.hdr"
	objcopy -O binary --only-section=.eh_frame "$lib" "$OUT/$name.eh"
	sec=$(readelf -SW "$lib" | awk '$2 == ".eh_frame_hdr" { h = $4 } $2 == ".eh_frame" { e = $4 } END { print h, e }')
	python3 - "$OUT/$name.hdr" "$OUT/$name.eh" $sec "$corpus" "$name" <<'PY'
import struct, sys
hdr, eh = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
ha, ea, out, name = int(sys.argv[3], 16), int(sys.argv[4], 16), sys.argv[5], sys.argv[6]
def seed(fl, h, e):
    return bytes([fl]) + struct.pack("<HHII", len(h), len(e), ha, ea) + h + e
open("%s/raw-hdr-%s" % (out, name), "wb").write(seed(1, hdr, eh))
open("%s/raw-walk-%s" % (out, name), "wb").write(seed(0, hdr, eh))
big = hdr[:8] + struct.pack("<I", 1000000) + hdr[12:]
open("%s/raw-bigcount-%s" % (out, name), "wb").write(seed(1, big, eh))
bad = bytearray(eh); bad[8] = 9          # the first CIE's version byte
open("%s/bad-version-%s" % (out, name), "wb").write(seed(1, hdr, bytes(bad)))
PY
	for k in raw-hdr raw-walk raw-bigcount; do cp "$OUT/elf-$name.want" "$OUT/$k-$name.want"; done
	echo "0 -" >"$OUT/bad-version-$name.want"
	i=$((i + 1))
done

for s in "$OUT"/*.want; do
	name=$(basename "${s%.want}")
	FUZZ_FDE_VERBOSE=1 build/fuzz/fuzz-fde "$corpus/$name" >"$OUT/$name.log" 2>&1 || { cat "$OUT/$name.log"; fail "$name crashed"; }
	n=$(sed -n 's/^fuzz-fde: \([0-9]*\) ranges$/\1/p' "$OUT/$name.log")
	first=$(sed -n 's/^range \(0x[0-9a-f]*\) .*/\1/p' "$OUT/$name.log" | head -n 1)
	read -r wn wfirst <"$s"
	echo "  $name: $n ranges, first ${first:--} (want $wn, ${wfirst})"
	[ "$n" = "$wn" ] && [ "${first:--}" = "$wfirst" ] || fail "$name: $n ranges from ${first:--}, want $wn from $wfirst"
done
build/fuzz/fuzz-fde -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=65536 -timeout=10 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
