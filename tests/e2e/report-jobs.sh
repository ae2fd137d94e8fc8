#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Parallel decoding (-j N, dp_reader_set_threads) changes no output: on a
# real multi-chunk recording (threefuncs with call chains, zstd chunks of
# 250 ms) and on damaged copies of it (a bad CRC, a frame that does not
# decompress under a valid CRC, a chunk repeated, one missing, two
# swapped, the file cut inside its last chunk), report -l -g and export
# --format folded, and on the intact one also report (summary, csv, --cpu,
# -s pid,symbol, --time), flamegraph, export json, export --by-tid,
# diff (against the bad-CRC copy) and annotate (func_a, and -n 3), give
# byte-identical stdout and stderr with -j 1, -j 2 and -j 3.
# Controls: each damaged copy's report differs from the intact one's (the
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
PY

# run NAME J CMD...: stdout and stderr of one command, -j J added
run() {
	local name=$1 j=$2; shift 2
	"$DOMPROF" "$@" -j "$j" >"$T/$name.j$j.out" 2>"$T/$name.j$j.err"
	echo "exit $?" >>"$T/$name.j$j.err"
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
for v in j dup drop swap crc zstd cut; do
	f="$T/$v.data"
	kinds="lg folded"
	for j in 1 2 3; do
		run "$v.lg" $j report -q -i "$f" -l -g
		run "$v.folded" $j export --format folded -i "$f"
		[ "$v" = j ] || continue
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
	if [ "$v" = j ]; then
		for j in 2 3; do
			cmp -s "$T/j.fg.j1.html" "$T/j.fg.j$j.html" || fail_later "flamegraph page differs with -j $j"
		done
	else
		# control: the damage shows in the report
		if cmp -s "$T/j.lg.j1.out" "$T/$v.lg.j1.out" && cmp -s "$T/j.lg.j1.err" "$T/$v.lg.j1.err"; then
			fail_later "control: $v reports like the intact recording"
		fi
	fi
done
grep -q "bad CRC in chunk" "$T/crc.lg.j1.err" || fail_later "crc: no CRC damage named"
grep -q "does not decompress" "$T/zstd.lg.j1.err" || fail_later "zstd: no decompression damage named"
grep -q "repeated" "$T/dup.lg.j1.err" || fail_later "dup: no repeat named"
grep -q "func_a" "$T/j.lg.j1.out" || fail_later "the report has no func_a"
grep -q "^# annotate: func_a" "$T/j.ann.j1.out" || fail_later "annotate func_a annotated nothing"
note "$(grep -c . "$T/j.lg.j1.out") lines of report -l -g, the same with -j 1, 2, 3 on 7 files"

"$DOMPROF" report -i "$D" -j 0 >/dev/null 2>"$T/j0.err"; rc=$?
[ $rc = 2 ] || fail_later "-j 0: exit $rc, expected 2"
grep -q "not a number of threads" "$T/j0.err" || fail_later "-j 0: message"
"$DOMPROF" export --format folded -i "$D" -j 65 >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail_later "-j 65: exit $rc, expected 2"
exit $FAILED
