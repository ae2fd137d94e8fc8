#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# The real case of FDE names: `xz -9` spends nearly all its time in
# static functions of Debian's stripped liblzma.so.5 (only its exported
# API is in .dynsym), which the report used to show as one
# "liblzma.so.5.4.1 [unknown]" row (93-99%). Recorded with real
# perf_event_open, the report must give liblzma at least 5 distinct
# function rows, each named IMAGE+0xSTART with START an FDE start of
# the library (readelf --debug-dump=frames), and its top row must hold
# < 60% of all samples; [unknown] in liblzma < 5%. If perf is installed
# and can record, `perf report --sort sym` of the same command is
# printed for comparison (not checked). Skips when xz or liblzma is
# not installed.
source "$(dirname "$0")/lib/report-common.bash"
XZ=$(command -v xz || true)
[ -n "$XZ" ] || skip "xz is not installed (Debian package xz-utils)"
LZMA=$(ldd "$XZ" 2>/dev/null | awk '$1 ~ /^liblzma/ { print $3 }')
[ -n "$LZMA" ] && [ -f "$LZMA" ] || skip "xz is not linked against a liblzma shared library"
command -v readelf >/dev/null || skip "readelf (binutils) not installed"
IMG=$(basename "$(readlink -f "$LZMA")")
echo "liblzma: $LZMA ($IMG)"

# ~4.5 MB of data xz -9 works on for ~3 s: compressible text and noise
{ seq 1 400000; head -c 1500000 /dev/urandom | base64; } >"$OUT/in.txt"
record xz -F 1000 -- "$XZ" -9 -T1 -k -f "$OUT/in.txt"
rm -f "$OUT/in.txt.xz"
"$DOMPROF" report -i "$OUT/xz.data" -l --format csv >"$OUT/xz.csv" || fail "report exit $?"
"$DOMPROF" report -i "$OUT/xz.data" -l | sed -n '/^samples/,$p' | head -12
readelf --debug-dump=frames "$(readlink -f "$LZMA")" | sed -n 's/.* FDE .* pc=0*\([0-9a-f]*\)\.\..*/\1/p' >"$OUT/fde-starts.txt"
python3 - "$OUT/xz.csv" "$IMG" "$OUT/fde-starts.txt" <<'PY' || fail "liblzma not named per function"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
img = sys.argv[2]
starts = {"0x" + l.strip() for l in open(sys.argv[3]) if l.strip()}
total = sum(int(r["samples"]) for r in rows)
lib = [r for r in rows if r["image"] == img]
named = [r for r in lib if r["symbol"].startswith(img + "+0x")]
unk = sum(int(r["samples"]) for r in lib if r["symbol"] == "[unknown]")
top = max(int(r["samples"]) for r in rows)
print("samples: %d, %s: %d in %d rows (%d FDE-named), [unknown] %d, top row %.1f%%"
      % (total, img, sum(int(r["samples"]) for r in lib), len(lib), len(named), unk, 100.0 * top / total))
assert total >= 1000, "too few samples"
bad = [r["symbol"] for r in named if r["symbol"][len(img) + 1:] not in starts]
assert not bad, "names that are no FDE start: %s" % bad[:5]
assert len(named) >= 5, "only %d FDE-named liblzma rows" % len(named)
assert top < 0.60 * total, "top row holds %.1f%%" % (100.0 * top / total)
assert unk < 0.05 * total, "[unknown] in liblzma holds %d of %d" % (unk, total)
PY

PERF=$(command -v perf || true)
if [ -n "$PERF" ]; then
	export PERF_BUILDID_DIR="$OUT/perf-buildid"
	if "$PERF" record -q --no-buildid -N -F 1000 -o "$OUT/perf.data" -- "$XZ" -9 -T1 -k -f "$OUT/in.txt" \
		>/dev/null 2>"$OUT/perf-record.log" &&
	   ( "$PERF" report -i "$OUT/perf.data" --stdio --no-children --sort dso,sym -F overhead,dso,sym \
		>"$OUT/perf.txt" ) 2>/dev/null; then
		note "for comparison, perf report --sort dso,sym (not checked):"
		grep -v '^#' "$OUT/perf.txt" | grep -v '^$' | sort -rn | head -8
		echo "perf: $(grep -c " $IMG " "$OUT/perf.txt") rows for $IMG (one per address)"
	else
		# perf 6.1's report aborts while another process records with
		# build-ids (see perf-crosscheck.sh): only the comparison is lost
		echo "(perf could not record or report here: no comparison)"
	fi
fi
rm -f "$OUT/in.txt" "$OUT/in.txt.xz"
echo "report-fde-xz: all checks passed"
