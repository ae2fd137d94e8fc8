#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GDB remote-protocol parsers under libFuzzer for a short time
# (FUZZ_SECONDS, default 8) on a seed corpus built here from real QEMU
# replies (tests/fixtures/gdb/) and hand-made packets; any crash or
# sanitizer report fails the test.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-gdb ] || skip "fuzzer not built (make fuzz needs clang)"
corpus="$OUT/corpus"
mkdir -p "$corpus"
# mode 0: packet streams (first byte selects the parser)
printf '\000+$OK#9a' > "$corpus/ok"
printf '\000$T05thread:p01.01;#06+$mp01.01,p01.02#00$l#6c' > "$corpus/stop-threads"
printf '\000$0* 1*!}]x#00$f0ff000000000000#00' > "$corpus/rle-esc"
printf '\000$E14#aa$W00#b7$O414243#00' > "$corpus/errors"
# mode 1: target descriptions (QEMU 7.2's, as saved from its stub)
{ printf '\001'; cat tests/fixtures/gdb/target.xml; } > "$corpus/target"
{ printf '\001'; cat tests/fixtures/gdb/i386-64bit.xml; } > "$corpus/i386-64bit"
# mode 2: symbol text
printf '\002ffffffff81000000 T _text\nffffffff81e00000 T _etext\nffffffffc0001000 t f\t[mod]\nffffffff83400000 B _end\n' > "$corpus/sysmap"
build/fuzz/fuzz-gdb -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-8}" -max_len=16384 -timeout=10 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
