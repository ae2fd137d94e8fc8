#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The guest code table annotate reads (SYMTAB kind 7, src/symbols/code.c)
# under libFuzzer (tests/fuzz/fuzz-code.c) for FUZZ_SECONDS (default 4).
# Known answer first: a table of two pages, 0xaa at do_work's page,
# returns 256 bytes starting 0xaa for do_work's first 256; control that
# must fail: the same table with another magic returns nothing. Seeds:
# that table, one cut in an entry, and one of many tiny overlapping
# entries. Then any crash, sanitizer report or over-long read fails.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-code ] || skip "fuzzer not built (make fuzz needs clang)"
command -v python3 >/dev/null || skip "python3 is missing"
corpus="$OUT/corpus"
mkdir -p "$corpus"
python3 - "$corpus" "$OUT" <<'PY'
import struct, sys
corpus, out = sys.argv[1], sys.argv[2]
def entry(addr, data):
    return struct.pack('<QII', addr, len(data), 0) + data
good = b'DPCODE1\0' + entry(0xffffffff81003000, b'\xbb' * 4096) + entry(0xffffffff81002000, b'\xaa' * 4096)
open(f'{out}/known', 'wb').write(good)
open(f'{out}/control', 'wb').write(b'DPCODE2\0' + good[8:])
open(f'{corpus}/good', 'wb').write(good)
open(f'{corpus}/cut', 'wb').write(good[:8 + 16 + 100])
open(f'{corpus}/tiny', 'wb').write(b'DPCODE1\0' + b''.join(entry(0xffffffff81002000 + i % 64, bytes([i % 256])) for i in range(3000)))
PY
FUZZ_CODE_VERBOSE=1 build/fuzz/fuzz-code "$OUT/known" >"$OUT/known.log" 2>&1 || { cat "$OUT/known.log"; fail "known table crashed"; }
grep -q '^fuzz-code: 256 bytes, first aa$' "$OUT/known.log" || fail "known table: $(grep fuzz-code: "$OUT/known.log")"
FUZZ_CODE_VERBOSE=1 build/fuzz/fuzz-code "$OUT/control" >"$OUT/control.log" 2>&1 || { cat "$OUT/control.log"; fail "control crashed"; }
grep -q '^fuzz-code: -2 bytes' "$OUT/control.log" || fail "control: $(grep fuzz-code: "$OUT/control.log")"
build/fuzz/fuzz-code -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=70000 -timeout=10 \
	-rss_limit_mb=1024 "$corpus" >"$OUT/fuzz.log" 2>&1 || { tail -40 "$OUT/fuzz.log"; fail "fuzzer found a bug"; }
note "$(grep -E '^Done [0-9]+ runs' "$OUT/fuzz.log")"
