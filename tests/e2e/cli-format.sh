#!/usr/bin/env bash
# The command line convention and the damaged-file behaviour of info/dump:
# help and version exit 0, unknown commands/options exit 2 with one line,
# runtime failures exit 1 with one line naming the cause, a cut file and a
# file with a bad chunk are read up to the damage and the damage is named.
source "$(dirname "$0")/../lib/common.bash"
cd "$TOP"
D="$DOMPROF"; T="$OUT"
expect() { # expect CODE DESCRIPTION -- CMD...
	local code=$1 what=$2; shift 3
	"$@" >"$T/out" 2>"$T/err"; local rc=$?
	if [ "$rc" != "$code" ]; then fail_later "$what: exit $rc, expected $code"; cat "$T/err"; fi
}
one_line() { [ "$(wc -l <"$T/err")" -eq 1 ] || { fail_later "$1: stderr is not one line:"; cat "$T/err"; }; }

expect 0 "--help" -- "$D" --help; grep -q "usage: domprof" "$T/out" || fail_later "--help text"
expect 0 "--version" -- "$D" --version; grep -Eq "^domprof [0-9]+\.[0-9]+" "$T/out" || fail_later "version"
for c in record report info dump; do
	expect 0 "help $c" -- "$D" help "$c"; grep -q "usage: domprof $c" "$T/out" || fail_later "help $c"
	expect 0 "$c --help" -- "$D" "$c" --help; grep -q "usage: domprof $c" "$T/out" || fail_later "$c --help"
done
expect 2 "unknown command" -- "$D" frobnicate; one_line "unknown command"
expect 2 "help unknown" -- "$D" help frobnicate; one_line "help unknown"
expect 2 "unknown option" -- "$D" info --bogus; one_line "unknown option"
grep -q -- "--bogus" "$T/err" || fail_later "option not named"
expect 1 "missing file" -- "$D" info "$T/nope.data"; one_line "missing file"
grep -q "No such file" "$T/err" || fail_later "cause not named"
echo "not a profile at all, just some text, long enough to be read as a header" > "$T/text.data"
expect 1 "not domprof" -- "$D" dump "$T/text.data"; one_line "not domprof"
grep -q "not a domprof file" "$T/err" || fail_later "not-domprof message"

"$TT" mkseed "$T" || fail "mkseed failed"
f="$T/seed-0.data"
expect 0 "info" -- "$D" info "$f"
grep -q "damage:      none" "$T/out" || { fail_later "clean file shows damage"; cat "$T/out"; }
grep -Eq "vm1 +passive +6 samples" "$T/out" || { fail_later "domain counts"; cat "$T/out"; }
expect 0 "dump" -- "$D" dump "$f"
[ "$(grep -c ' SAMPLE ' "$T/out")" = 12 ] || fail_later "dump sample count"
grep -q "dom=1 .*SAMPLE" "$T/out" || fail_later "dump shows no guest domain"

# Cut the file in the middle: a prefix, a warning, exit 0.
size=$(stat -c %s "$f"); head -c $((size * 2 / 3)) "$f" > "$T/cut.data"
expect 0 "dump cut" -- "$D" dump "$T/cut.data"
n=$(grep -c ' SAMPLE ' "$T/out"); [ "$n" -gt 0 ] && [ "$n" -lt 12 ] || fail_later "cut file gave $n samples"
grep -q "file truncated" "$T/err" || { fail_later "truncation not reported"; cat "$T/err"; }
expect 0 "info cut" -- "$D" info "$T/cut.data"
grep -q "damage:      1 place" "$T/out" || { fail_later "info damage"; cat "$T/out"; }

# Flip a byte inside the second chunk's payload: bad CRC named with offset.
python3 - "$f" "$T/flip.data" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
hlen = struct.unpack_from('<I', b, 16)[0]
off = (hlen + 7) & ~7
stored = struct.unpack_from('<I', b, off + 8)[0]
second = off + 32 + ((stored + 7) & ~7)
b[second + 32 + 12] ^= 0x40
open(sys.argv[2], 'wb').write(b)
print(second)
PY
expect 0 "dump flipped" -- "$D" dump "$T/flip.data"
grep -q "bad CRC in chunk at offset" "$T/err" || { fail_later "CRC damage not reported"; cat "$T/err"; }
n=$(grep -c ' SAMPLE ' "$T/out"); [ "$n" -lt 12 ] && [ "$n" -gt 0 ] || fail_later "flipped file gave $n samples"

exit $FAILED
