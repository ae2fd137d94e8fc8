#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ELF symbol loader (src/symbols/elf.c: ELF64 tables read in place,
# names from the string table's bytes, the annotate name probe) under
# libFuzzer for a short time (FUZZ_SECONDS, default 4). Seeds: the
# threefuncs workload (.symtab), libfde-full.so (.symtab and .dynsym)
# and this machine's libz.so.1 (.dynsym only), and a copy of each cut
# in half. Known answers first: each whole seed loads as many symbols as
# readelf lists distinct addresses of defined FUNC/IFUNC symbols in its
# two tables, and its probe finds a name it loaded; control that must
# fail: a stripped threefuncs loads none (its count differs from the
# unstripped one's). Then any crash, sanitizer report or broken table
# while fuzzing fails the test.
source "$(dirname "$0")/../lib/common.bash"
set -eo pipefail
cd "$TOP"
[ -x build/fuzz/fuzz-elfsyms ] || skip "fuzzer not built (make fuzz needs clang)"
command -v readelf >/dev/null && command -v objcopy >/dev/null || skip "binutils missing"
need_workload threefuncs
need_workload libfde-full.so
corpus="$OUT/corpus"
mkdir -p "$corpus"

seeds=("$WL/threefuncs" "$WL/libfde-full.so")
lz=$(readlink -f /lib/x86_64-linux-gnu/libz.so.1 2>/dev/null || true)
[ -n "$lz" ] && [ -f "$lz" ] && seeds+=("$lz")
# loaded: the symbols the target reports for FILE (-1 when it prints none)
loaded() {
	FUZZ_ELFSYMS_VERBOSE=1 build/fuzz/fuzz-elfsyms "$1" >"$OUT/one.log" 2>&1 || { cat "$OUT/one.log"; fail "$1 crashed"; }
	# (libFuzzer may run a lone input more than once: the last line)
	sed -n 's/^fuzz-elfsyms: \([0-9]*\) symbols.*/\1/p' "$OUT/one.log" | tail -n 1
}
for s in "${seeds[@]}"; do
	name=$(basename "$s")
	cp "$s" "$corpus/$name"
	head -c $(($(stat -c %s "$s") / 2)) "$s" >"$corpus/$name.cut"
	want=$(readelf -W --syms "$s" | awk '($4 == "FUNC" || $4 == "IFUNC") && $7 != "UND" && $2 !~ /^0+$/ { print $2 }' |
		sort -u | wc -l)
	got=$(loaded "$corpus/$name")
	probe=$(sed -n 's/.*, probe \(-\?[0-9]*\)$/\1/p' "$OUT/one.log" | tail -n 1)
	echo "  $name: $got symbols (readelf: $want), probe $probe"
	[ "$want" -gt 0 ] || fail "$name: readelf lists no function"
	[ "$got" = "$want" ] || fail "$name: $got symbols, readelf lists $want"
	[ "$probe" = 1 ] || fail "$name: the probe did not find a name it loaded"
	loaded "$corpus/$name.cut" >/dev/null
done
# control: a stripped copy's count is not the unstripped one's
objcopy --strip-all "$WL/threefuncs" "$OUT/stripped"
ns=$(loaded "$OUT/stripped")
want=$(readelf -W --syms "$WL/threefuncs" | awk '($4 == "FUNC" || $4 == "IFUNC") && $7 != "UND" && $2 !~ /^0+$/ { print $2 }' |
	sort -u | wc -l)
echo "  control: stripped threefuncs loads $ns symbols (unstripped: $want)"
[ "$ns" != "$want" ] || fail "control: a stripped copy loads as many symbols as the original"
build/fuzz/fuzz-elfsyms -error_exitcode=1 -max_total_time="${FUZZ_SECONDS:-4}" -max_len=262144 -timeout=10 \
	-artifact_prefix="$OUT/" "$corpus" 2>&1 | tail -n 5
