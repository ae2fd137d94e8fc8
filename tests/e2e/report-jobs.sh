#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Parallel decoding (-j N, dp_reader_set_threads) changes no output: on a
# real multi-chunk recording (threefuncs with call chains, zstd chunks of
# 250 ms) and on damaged copies of it (a bad CRC, a frame that does not
# decompress under a valid CRC, a chunk repeated, one missing, two
# swapped, the file cut inside its last chunk, a counts part forged under
# valid CRCs: its first group moved to another ip), report -l -g and export
# --format folded, and on the intact one also report (summary, csv, --cpu,
# -s pid,symbol, --time), flamegraph, export json, export --by-tid,
# diff (against the bad-CRC copy) and annotate (func_a, and -n 3), give
# byte-identical stdout and stderr with -j 1, -j 2 and -j 3; all of
# them also with DOMPROF_CHUNK_COUNTS=0 (chunks' counts parts not read,
# format 1.6), and the same as with them.
# Controls: most chunks have a counts part; the forged one shows in the
# report, and not with DOMPROF_CHUNK_COUNTS=0; each damaged copy's report differs from the intact one's (the
# comparison sees the damage), annotate func_a shows func_a, and -j 0 /
# -j 65 are usage errors.
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs
CE="$TOP/tests/e2e/lib/chunk-edit.py"
T="$OUT"

record j -F 2000 -g -- "$WL/threefuncs" 200
D="$T/j.data"
nch=$(python3 "$CE" "$D" list | wc -l)
note "recording: $nch chunks"
[ "$nch" -ge 6 ] || fail "only $nch chunks (want >= 6 to damage some)"

# damaged copies (chunk indices from the list; CRCs valid except 'crc')
python3 "$CE" "$D" "$T/dup.data" dup 2
python3 "$CE" "$D" "$T/drop.data" drop 3
python3 "$CE" "$D" "$T/swap.data" swap 2 4
python3 - "$D" "$T" <<'PY'
import struct, sys
src, out = sys.argv[1], sys.argv[2]
b = bytes(open(src, 'rb').read())

def crc32c(data):
    tab = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82f63b78 if c & 1 else c >> 1
        tab.append(c)
    c = 0xffffffff
    for x in data:
        c = tab[(c ^ x) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff

hlen = struct.unpack_from('<I', b, 16)[0]
offs, off = [], (hlen + 7) & ~7
while off + 32 <= len(b):
    offs.append(off)
    off += 32 + ((struct.unpack_from('<I', b, off + 8)[0] + 7) & ~7)
# a bad CRC: one payload byte of chunk 1 changed
c = bytearray(b); o = offs[1]; c[o + 32 + 100] ^= 0x10
open(out + '/crc.data', 'wb').write(c)
# chunk 3's zstd frame without its magic, its CRCs made right again
c = bytearray(b); o = offs[3]
flags, stored = struct.unpack_from('<II', c, o + 4)
assert flags & 1, 'chunks are zstd'
c[o + 32:o + 36] = b'\0' * 4
struct.pack_into('<I', c, o + 20, crc32c(bytes(c[o + 32:o + 32 + stored])))
struct.pack_into('<I', c, o + 28, crc32c(bytes(c[o:o + 28])))  # the header's own CRC
open(out + '/zstd.data', 'wb').write(c)
# cut inside the last chunk
open(out + '/cut.data', 'wb').write(b[:offs[-1] + 32 + 40])
# the first chunk with a counts part (flag 2, docs/file-format.md): its
# first group's sample moved to ip 0x10, the part compressed again, the
# CRCs made right; the records' frame is untouched
import subprocess
o = next(o for o in offs if struct.unpack_from('<I', b, o + 4)[0] & 2)
stored, = struct.unpack_from('<I', b, o + 8)
pl = b[o + 32:o + 32 + stored]
skip = pl.rfind(struct.pack('<I', 0x184d2a5d))
size, raw = struct.unpack_from('<II', pl, skip + 4)
assert skip > 0 and skip + 8 + size == stored, 'one counts part, last'
part = bytearray(subprocess.run(['zstd', '-d', '-c', '-q'], input=pl[skip + 16:], capture_output=True, check=True).stdout)
assert len(part) == raw and part[:4] == b'CNT1'
n, = struct.unpack_from('<I', part, 4)
rec = 16 + 16 * n
for i in range(n):
    if struct.unpack_from('<I', part, 16 + 16 * i)[0]:
        break
    rec += struct.unpack_from('<I', part, rec + 4)[0]
struct.pack_into('<Q', part, rec + 16, 0x10)
z = subprocess.run(['zstd', '-c', '-q', '-3'], input=bytes(part), capture_output=True, check=True).stdout
npl = pl[:skip] + struct.pack('<IIII', 0x184d2a5d, 8 + len(z), raw, 0) + z
c = bytearray(b[:o + 32]) + npl + b'\0' * (-len(npl) % 8)
struct.pack_into('<I', c, o + 8, len(npl))
struct.pack_into('<I', c, o + 20, crc32c(npl))
struct.pack_into('<I', c, o + 28, crc32c(bytes(c[o:o + 28])))
c += b[o + 32 + ((stored + 7) & ~7):]
open(out + '/cnt.data', 'wb').write(c)
PY

# run NAME J CMD...: stdout and stderr of one command, -j J added
# (nc: the intact recording read without its counts parts)
run() {
	local name=$1 j=$2; shift 2
	local counts=1
	[[ $name = nc.* ]] && counts=0
	DOMPROF_CHUNK_COUNTS=$counts "$DOMPROF" "$@" -j "$j" >"$T/$name.j$j.out" 2>"$T/$name.j$j.err"
	echo "exit $?" >>"$T/$name.j$j.err"
}
# differs A B: the outputs of runs A and B (-j 1) differ, the file's name aside
differs() {
	! { cmp -s <(grep -v '^# file:' "$T/$1.j1.out") <(grep -v '^# file:' "$T/$2.j1.out") &&
		cmp -s "$T/$1.j1.err" "$T/$2.j1.err"; }
}
same() {  # same NAME: -j 2 and -j 3 gave what -j 1 gave
	local j
	for j in 2 3; do
		cmp -s "$T/$1.j1.out" "$T/$1.j$j.out" || fail_later "$1: stdout differs with -j $j"
		cmp -s "$T/$1.j1.err" "$T/$1.j$j.err" || fail_later "$1: stderr differs with -j $j"
	done
}

# every command on the intact recording; report -l -g and the folded
# export (the two loaders' uses: symbols and stacks) on the damaged ones
for v in j nc dup drop swap crc zstd cut cnt; do
	f="$T/$v.data"
	[ $v = nc ] && f="$D"
	kinds="lg folded"
	for j in 1 2 3; do
		run "$v.lg" $j report -q -i "$f" -l -g
		run "$v.folded" $j export --format folded -i "$f"
		[ "$v" = j ] || [ "$v" = nc ] || continue
		kinds="lg folded sum csv fg json diff cpu pid tid time ann ann3"
		run "$v.sum" $j report -q -i "$f"
		run "$v.csv" $j report -q -i "$f" -l --format csv
		run "$v.fg" $j flamegraph -i "$f" -o "$T/$v.fg.j$j.html"
		run "$v.json" $j export --format json -i "$f"
		run "$v.diff" $j diff "$T/crc.data" "$f"
		# the loads whose reader counts samples in groups (-j > 1:
		# DP_READ_GROUPS), keyed by cpu or tid, and one without
		run "$v.cpu" $j report -q -i "$f" -l --cpu 0
		run "$v.pid" $j report -q -i "$f" -s pid,symbol
		run "$v.tid" $j export --format folded --by-tid -i "$f"
		run "$v.time" $j report -q -i "$f" -l --time 10%-60%
		# annotate: by name (the narrowing loader) and the hottest
		run "$v.ann" $j annotate -i "$f" func_a
		run "$v.ann3" $j annotate -i "$f" -n 3
	done
	for k in $kinds; do
		same "$v.$k"
	done
	if [ "$v" = j ] || [ "$v" = nc ]; then
		for j in 2 3; do
			cmp -s "$T/$v.fg.j1.html" "$T/$v.fg.j$j.html" || fail_later "$v: flamegraph page differs with -j $j"
		done
	elif ! differs j.lg "$v.lg"; then
		fail_later "control: $v reports like the intact recording"   # the damage shows
	fi
done
# read without its counts parts, the recording reports the same
for k in $kinds; do
	cmp -s "$T/j.$k.j1.out" "$T/nc.$k.j1.out" || fail_later "$k: stdout differs without counts parts"
	cmp -s "$T/j.$k.j1.err" "$T/nc.$k.j1.err" || fail_later "$k: stderr differs without counts parts"
done
cmp -s "$T/j.fg.j1.html" "$T/nc.fg.j1.html" || fail_later "flamegraph page differs without counts parts"
# the forged part is what a counting read counts (cnt differs above);
# without counts parts the copy reads as the intact recording
run nc.cnt 1 report -q -i "$T/cnt.data" -l -g
differs j.lg nc.cnt && fail_later "the forged counts part was read with DOMPROF_CHUNK_COUNTS=0"
parts=$(python3 "$CE" "$D" list | awk '$6 % 4 >= 2' | wc -l)
[ "$parts" -ge 3 ] || fail_later "only $parts chunks with a counts part (want >= 3)"
note "$parts of $nch chunks have a counts part"
"$DOMPROF" info "$D" | grep -qx "records: *$nch chunks, $parts with a counts part" ||
	fail_later "info: $("$DOMPROF" info "$D" | grep '^records:')"
grep -q "bad CRC in chunk" "$T/crc.lg.j1.err" || fail_later "crc: no CRC damage named"
grep -q "does not decompress" "$T/zstd.lg.j1.err" || fail_later "zstd: no decompression damage named"
grep -q "repeated" "$T/dup.lg.j1.err" || fail_later "dup: no repeat named"
grep -q "func_a" "$T/j.lg.j1.out" || fail_later "the report has no func_a"
grep -q "^# annotate: func_a" "$T/j.ann.j1.out" || fail_later "annotate func_a annotated nothing"
note "$(grep -c . "$T/j.lg.j1.out") lines of report -l -g, the same with -j 1, 2, 3 on 9 reads"

"$DOMPROF" report -i "$D" -j 0 >/dev/null 2>"$T/j0.err"; rc=$?
[ $rc = 2 ] || fail_later "-j 0: exit $rc, expected 2"
grep -q "not a number of threads" "$T/j0.err" || fail_later "-j 0: message"
"$DOMPROF" export --format folded -i "$D" -j 65 >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail_later "-j 65: exit $rc, expected 2"
exit $FAILED
