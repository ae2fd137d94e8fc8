#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The kernel symbol cache (src/symbols/kcache.h, docs/perfdata.md): a
# perf.data recorded here names kernel samples from this machine's
# kallsyms, through the cache's index once it holds this boot's.
#  - known answer: with the cache off (DOMPROF_KSYM_CACHE=0) the report
#    and the folded export of `perf record -g` of kernelheavy name kernel
#    symbols; cold (the cache is written, mode 0600) and warm (read) they
#    are byte-identical to that;
#  - control that must fail: a forged cache that passes every check
#    (this key, good checksums) but renames the hottest kernel symbol is
#    read and shows the new name, so the comparison above sees what the
#    cache holds;
#  - hostile or stale files fall back to the live kallsyms, same output:
#    a flipped byte (checksum), a cut file, a file of another key, a
#    directory that cannot be made; a recording that names another
#    kernel build-id does not use the cache;
#  - perf's build-id cache copy of the kallsyms (a renamed symbol in it
#    shows which table is read): off, cold and warm the same; the copy
#    changed (another name) is read anew, not the stale index (control).
source "$(dirname "$0")/lib/report-common.bash"
need_root "kallsyms addresses"
need_workload kernelheavy
PERF=$(command -v perf || true)
[ -n "$PERF" ] || skip "perf is not installed"
D=$DOMPROF
export DOMPROF_CACHE="$OUT/cache"
P=$OUT/k.perf
PERF_BUILDID_DIR="$OUT/perf-bid" "$PERF" record -q -g -o "$P" -- "$WL/kernelheavy" 0.3 >"$OUT/perf-record.log" 2>&1 ||
	{ cat "$OUT/perf-record.log"; skip "perf record cannot record here"; }
# never perf's build-id cache: the live kallsyms path is the one cached
export PERF_BUILDID_DIR="$OUT/no-bid"
[ -r /sys/kernel/notes ] || skip "no /sys/kernel/notes (no running kernel build-id)"

# run NAME MODE: report -l -g and folded export into $OUT/NAME.{txt,folded,err}
run() {
	DOMPROF_KSYM_CACHE=$2 "$D" report -q -i "$P" -l -g >"$OUT/$1.txt" 2>"$OUT/$1.err" || fail "$1: report: $(cat "$OUT/$1.err")"
	DOMPROF_KSYM_CACHE=$2 "$D" export -i "$P" --format folded -o "$OUT/$1.folded" 2>>"$OUT/$1.err" ||
		fail "$1: export: $(cat "$OUT/$1.err")"
}
same() {
	cmp -s "$OUT/off.txt" "$OUT/$1.txt" || fail_later "$1: report differs from the live kallsyms: $(diff "$OUT/off.txt" "$OUT/$1.txt" | head -n 6)"
	cmp -s "$OUT/off.folded" "$OUT/$1.folded" || fail_later "$1: folded differs from the live kallsyms"
}
says() {
	DOMPROF_KSYM_CACHE=verbose "$D" report -q -i "$P" -l >"$OUT/$1.v.txt" 2>&1 || fail "$1: verbose report"
	grep -q "^# WARNING: kernel symbol cache: $2" "$OUT/$1.v.txt" ||
		fail_later "$1: expected 'kernel symbol cache: $2', got: $(grep 'symbol cache' "$OUT/$1.v.txt")"
}

note "cache off, cold, warm"
run off 0
[ ! -e "$OUT/cache" ] || fail "the cache was written with DOMPROF_KSYM_CACHE=0"
hot=$(awk '$4 == "[kernel.kallsyms]" && $5 != "[unknown]" { print $5; exit }' "$OUT/off.txt")
[ -n "$hot" ] || fail "no named kernel symbol in the report: $(head -n 20 "$OUT/off.txt")"
note "hottest kernel symbol: $hot"
run cold 1
C=$(ls "$OUT"/cache/host-kernel/*.idx 2>/dev/null | head -n 1)
[ -n "$C" ] || fail "cold: no cache file written"
[ "$(stat -c %a "$C")" = 600 ] && [ "$(stat -c %a "$(dirname "$C")")" = 700 ] || fail_later "cache modes: $(stat -c '%a %n' "$C" "$(dirname "$C")")"
same cold
run warm 1
same warm
says warm-v "read "

note "control: a forged cache is what the report reads"
# the same length and no other alias at its address, so it ranks first
new=${hot%?}Q
[ "$new" != "$hot" ] || new=${hot%?}R
awk -v h="$hot" -v n="$new" 'NF == 3 && $3 == h { a = $1 } { l[NR] = $0; f1[NR] = $1; f3[NR] = $3; nf[NR] = NF }
	END { for (i = 1; i <= NR; i++) { if (nf[i] == 3 && f1[i] == a) { if (f3[i] == h) { sub(/[^ ]+$/, n, l[i]); print l[i] } }
	      else print l[i] } }' /proc/kallsyms >"$OUT/forged.ksyms"
grep -q " $new\$" "$OUT/forged.ksyms" || fail "forged kallsyms lacks $new"
cp "$C" "$OUT/good.idx"
"$TT" kcache "$OUT/good.idx" "$OUT/forged.ksyms" "$C" || fail "test-tool kcache"
run forged 1
grep -q " $new\$" "$OUT/forged.txt" || fail_later "control: the forged cache was not read ($new not in the report)"
cmp -s "$OUT/off.txt" "$OUT/forged.txt" && fail_later "control: a report from a forged cache equals the live one"

note "hostile and stale cache files: the live kallsyms, same output"
python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[len(b)//2]^=0x40; open(sys.argv[2],'wb').write(b)" "$OUT/good.idx" "$C"
run flipped 1
same flipped
cp "$OUT/good.idx" "$C"
python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[len(b)//2]^=0x40; open(sys.argv[2],'wb').write(b)" "$OUT/good.idx" "$C"
says flipped-v "refused, /proc/kallsyms read instead: .*index checksum mismatch"
head -c 1000 "$OUT/good.idx" >"$C"
run cut 1
same cut
head -c 1000 "$OUT/good.idx" >"$C"
says cut-v "refused, /proc/kallsyms read instead: .*does not match the file"
"$TT" kcache "$OUT/good.idx" /proc/kallsyms "$C" zero-key || fail "test-tool kcache zero-key"
says stale-v "refused, /proc/kallsyms read instead: .*made for another boot"
says rewritten-v "read "
run rewritten 1
same rewritten
: >"$OUT/afile"
DOMPROF_CACHE="$OUT/afile/sub" run nodir 1
same nodir
DOMPROF_CACHE="$OUT/afile/sub" says nodir-v "not written: "

note "perf's build-id cache copy of the kallsyms, through the cache"
bid=$(python3 - <<'PY'
import struct
notes = open('/sys/kernel/notes', 'rb').read()
off = 0
while off + 12 <= len(notes):
    nsz, dsz, typ = struct.unpack_from('<III', notes, off)
    na, da = (nsz + 3) & ~3, (dsz + 3) & ~3
    if typ == 3 and notes[off + 12:off + 12 + nsz] == b'GNU\0':
        print(notes[off + 12 + na:off + 12 + na + dsz].hex())
        break
    off += 12 + na + da
PY
)
copy="$OUT/pbid/[kernel.kallsyms]/$bid/kallsyms"
mkdir -p "$(dirname "$copy")"
cp "$OUT/forged.ksyms" "$copy"
PERF_BUILDID_DIR="$OUT/pbid" run pcopy-off 0
grep -q " $new\$" "$OUT/pcopy-off.txt" || fail "perf's copy not read with the cache off"
PERF_BUILDID_DIR="$OUT/pbid" run pcopy-cold 1
PERF_BUILDID_DIR="$OUT/pbid" run pcopy-warm 1
cmp -s "$OUT/pcopy-off.txt" "$OUT/pcopy-cold.txt" && cmp -s "$OUT/pcopy-off.txt" "$OUT/pcopy-warm.txt" &&
	cmp -s "$OUT/pcopy-off.folded" "$OUT/pcopy-warm.folded" || fail_later "perf's copy: cached reports differ"
PERF_BUILDID_DIR="$OUT/pbid" says pcopy-v "read .*/perf-$bid.idx"
sed "s/ $new\$/ ${new}2/" "$OUT/forged.ksyms" >"$copy"
PERF_BUILDID_DIR="$OUT/pbid" run pcopy-changed 1
grep -q " ${new}2\$" "$OUT/pcopy-changed.txt" || fail_later "control: a changed copy of perf's was not read anew"

note "a recording of another kernel build-id does not use the cache"
python3 - "$P" "$OUT/other.perf" <<'PY'
import struct, sys
notes = open('/sys/kernel/notes', 'rb').read()
off, bid = 0, None
while off + 12 <= len(notes):
    nsz, dsz, typ = struct.unpack_from('<III', notes, off)
    na, da = (nsz + 3) & ~3, (dsz + 3) & ~3
    if typ == 3 and notes[off + 12:off + 12 + nsz] == b'GNU\0':
        bid = notes[off + 12 + na:off + 12 + na + dsz]
        break
    off += 12 + na + da
b = bytearray(open(sys.argv[1], 'rb').read())
at = b.find(bid)
if bid is None or at < 0:
    sys.exit("the running kernel's build-id is not in the perf.data")
b[at] ^= 0xff
open(sys.argv[2], 'wb').write(b)
PY
[ -s "$OUT/other.perf" ] || fail "could not make the other-kernel perf.data"
DOMPROF_KSYM_CACHE=verbose "$D" report -q -i "$OUT/other.perf" -l >"$OUT/other.txt" 2>&1 || fail "report of the other-kernel file"
grep -q "^# WARNING: kernel symbol cache: not used: the recording's kernel build-id is not the running kernel's" "$OUT/other.txt" ||
	fail_later "other kernel: $(grep 'symbol cache' "$OUT/other.txt")"
exit "$FAILED"
