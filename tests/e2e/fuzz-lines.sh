#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Source lines over crafted DWARF (src/symbols/lines.c: CU range table,
# inline segment tables; src/symbols/dwsect.c: compressed sections)
# under libFuzzer (tests/fuzz/fuzz-lines.c gives what it looks up and
# checks) for FUZZ_SECONDS (default 4). Known answers first, on the lines
# workload (-O1 -g): its text has lines in lines.c and inl_helper's code
# inlined at lines.c:LINE_CALL; the copy with zlib-compressed debug
# sections and the copy without .debug_aranges (lookups through the CU
# range table) answer exactly as the original; control that must fail:
# the copy stripped of its DWARF has no line tables and no lines. Seeds:
# those, and copies with .debug_info, .debug_line, .debug_aranges or
# .debug_rnglists partly overwritten, a CU length made huge, and a
# compressed section whose header claims a huge size. Then any crash,
# sanitizer report, hang, or an answer that changes on a second lookup
# fails.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-lines ] || skip "fuzzer not built (make fuzz needs clang)"
command -v python3 >/dev/null || skip "python3 is missing"
command -v objcopy >/dev/null || skip "objcopy is missing"
need_workload lines
corpus="$OUT/corpus"
mkdir -p "$corpus"
cp "$WL/lines" "$OUT/plain"
objcopy --compress-debug-sections=zlib "$OUT/plain" "$OUT/z"
objcopy --remove-section .debug_aranges "$OUT/plain" "$OUT/noar"
strip -g -o "$OUT/nodw" "$OUT/plain"
cp "$OUT/plain" "$OUT/z" "$OUT/noar" "$corpus/"
python3 - "$OUT/plain" "$OUT/z" "$corpus" <<'PY'
import struct, sys
plain, z, corpus = sys.argv[1], sys.argv[2], sys.argv[3]
def sections(b):
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
    hs = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize) for i in range(shnum)]
    stro = hs[shstrndx][4]
    return {bytes(b[stro + h[0]:stro + h[0] + 40]).split(b'\0')[0].decode(): (shoff + i * shentsize, h)
            for i, h in enumerate(hs)}
src = open(plain, 'rb').read()
sec = sections(src)
def junk(name, frac_lo, frac_hi, tag):
    b = bytearray(src)
    off, size = sec[name][1][4], sec[name][1][5]
    for j in range(int(size * frac_lo), int(size * frac_hi)):
        b[off + j] = (j * 151 + 7) & 0xff
    open(f'{corpus}/{tag}', 'wb').write(b)
junk('.debug_info', 0.5, 0.6, 'info-mid')
junk('.debug_info', 0.0, 0.02, 'info-head')
junk('.debug_line', 0.3, 0.5, 'line-mid')
junk('.debug_aranges', 0.0, 1.0, 'aranges')
if '.debug_rnglists' in sec:
    junk('.debug_rnglists', 0.0, 1.0, 'rnglists')
b = bytearray(src)
struct.pack_into('<I', b, sec['.debug_info'][1][4], 0xfffffff0)   # a CU length past the end
open(f'{corpus}/cu-huge', 'wb').write(b)
zb = bytearray(open(z, 'rb').read())
zs = sections(zb)
off = zs['.debug_info'][1][4]
struct.pack_into('<Q', zb, off + 8, 1 << 40)                      # Chdr ch_size: 1 TiB
open(f'{corpus}/z-huge', 'wb').write(zb)
PY
run() { FUZZ_LINES_VERBOSE=1 build/fuzz/fuzz-lines "$1" 2>&1 | grep -E '^(0x|fuzz-lines:)' || true; }
run "$OUT/plain" >"$OUT/plain.txt"
cat "$OUT/plain.txt"
lc=$(grep -n 'LINE_CALL' tests/workloads/lines.c | tail -n 1 | cut -d: -f1)
grep -Eq '^fuzz-lines: [0-9]+ lookups, [1-9][0-9]* lines, [1-9][0-9]* inlined$' "$OUT/plain.txt" || fail "the lines workload: no lines or no inlined code"
grep -q " lines\.c:[0-9]*$" "$OUT/plain.txt" || fail "the lines workload: no lines.c line"
grep -q "\[inl_helper lines\.c:$lc\]" "$OUT/plain.txt" || fail "inl_helper not inlined at lines.c:$lc"
for v in z noar; do
	run "$OUT/$v" >"$OUT/$v.txt"
	cmp "$OUT/plain.txt" "$OUT/$v.txt" || fail "$v answers differently from the original"
done
run "$OUT/nodw" >"$OUT/nodw.txt"
grep -q '^fuzz-lines: [0-9]* lookups, 0 lines, 0 inlined, no line tables$' "$OUT/nodw.txt" ||
	fail "control: the stripped copy: $(cat "$OUT/nodw.txt")"
for s in "$corpus"/*; do
	FUZZ_LINES_VERBOSE=1 build/fuzz/fuzz-lines "$s" >"$OUT/seed.log" 2>&1 || { tail -20 "$OUT/seed.log"; fail "seed $(basename "$s") crashed"; }
	note "seed $(basename "$s"): $(grep '^fuzz-lines:' "$OUT/seed.log")"
done
build/fuzz/fuzz-lines -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=70000 -timeout=10 \
	-rss_limit_mb=1024 "$corpus" >"$OUT/fuzz.log" 2>&1 || { tail -40 "$OUT/fuzz.log"; fail "fuzzer found a bug"; }
note "$(grep -E '^Done [0-9]+ runs' "$OUT/fuzz.log")"
