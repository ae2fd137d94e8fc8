#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# The root agent ships only the files that were mapped (docs/active.md,
# "What the agent ships"). The attack, for real, on loopback: the agent
# runs as root; user nobody runs three copies of threefuncs (tfA, tfB,
# tfC, each with its own build-id) from a directory it owns while
# `domprof record -a --domain self=agent:...` records; after tfA has
# exited and while tfC still runs, nobody replaces the paths of tfA and
# tfC by symbolic links to root-only "secrets": copies of tfA/tfC (same
# build-ids) with a marker string appended. With fs.protected_symlinks=0
# (set here, restored after) root follows such links. Checks:
#  - no SYMTAB blob in the recording contains the marker (the blobs are
#    read by tests/e2e/lib/symtab-blobs.py, independent of src/format/);
#  - tfA is not shipped and the agent says why (a symbolic link);
#  - tfC is shipped through its live mapping, byte for byte the file
#    nobody ran; tfB (path intact, exited) is shipped by path, byte for
#    byte; their functions are named in `report --domain self` (the
#    controls: the agent does ship what was really mapped);
#  - tfD, mode 0700 (not readable by all), exited, path intact, is
#    shipped by path: the recorder recorded its identity (device, inode,
#    size, mtime) through /proc/PID/map_files and the file still has it;
#  - tfE, a copy of tfB (the same build-id) run after it from another
#    path, is not shipped again: one blob under that build-id.
source "$(dirname "$0")/../lib/common.bash"
source "$(dirname "$0")/lib/agent.bash"
fail_hook() { for f in "$OUT"/agent.log "$OUT"/record.err; do [ -f "$f" ] && { echo "--- $f"; tail -n 25 "$f"; }; done; }
[ -x "$WL/threefuncs" ] || skip "workloads not built (make workloads)"
need_attacker
command -v zstd >/dev/null && command -v python3 >/dev/null || skip "needs zstd and python3"
no_protected_symlinks
mkdir -p "$OUT/agdir" "$OUT/secrets"

# nobody's directory (under /tmp: every user can reach it) and programs
W=$(mktemp -d /tmp/agent-files-nobody.XXXXXX); chmod 755 "$W"; chown nobody:nogroup "$W"
at_exit 'rm -rf "$W"'
bid=$(readelf -n "$WL/threefuncs" | sed -n 's/.*Build ID: *//p')
[ ${#bid} -eq 40 ] || skip "threefuncs has no 20-byte build-id"
for t in A:a1 B:b2 C:c3 D:d4; do
	n=tf${t%%:*}
	# the same code with another build-id: the last byte of the note
	python3 - "$WL/threefuncs" "$W/$n" "$bid" "${t#*:}" <<'EOF'
import sys
b = open(sys.argv[1], "rb").read(); old = bytes.fromhex(sys.argv[3])
new = old[:-1] + bytes.fromhex(sys.argv[4])
assert b.count(old) == 1
open(sys.argv[2], "wb").write(b.replace(old, new))
EOF
	chmod 755 "$W/$n"; chown nobody:nogroup "$W/$n"
done
cp -p "$W/tfB" "$W/tfE"
bidof() { readelf -n "$1" | sed -n 's/.*Build ID: *//p'; }
chmod 700 "$W/tfD"
bA=$(bidof "$W/tfA"); bB=$(bidof "$W/tfB"); bC=$(bidof "$W/tfC"); bD=$(bidof "$W/tfD")
[ "$bA" != "$bB" ] && [ "$bB" != "$bC" ] && [ "$bA" != "$bC" ] || fail "the copies' build-ids are not distinct"
MARK="DOMPROF-AGENT-SECRET-$$-$RANDOM$RANDOM"
for n in tfA tfC; do
	{ cat "$W/$n"; printf '%s\n' "$MARK"; } >"$OUT/secrets/$n"
	chmod 600 "$OUT/secrets/$n"
done
[ "$(bidof "$OUT/secrets/tfA")" = "$bA" ] || fail "the secret does not carry tfA's build-id"
for n in tfA tfB tfC tfD; do cp "$W/$n" "$OUT/$n.orig"; done

# the agent (root) on a free loopback port
start_agent agent.log --dir "$OUT/agdir" --once || fail "the agent did not start"

"$DOMPROF" record -f -a -F 500 -o "$OUT/h.data" --domain "self=agent:127.0.0.1:$PORT" 2>"$OUT/record.err" &
rpid=$!; bg_pids+=($rpid)
wait_for "$OUT/record.err" 'recording at' 60 || fail "the agent did not start recording"
# its recorder runs once START is answered: the programs below must run after that
wait_for "$OUT/agent.log" 'recording the guest at' 60 || fail "the agent did not start recording"

# nobody: tfC keeps running, tfA and tfB run and exit, then the swap
# (setpriv directly, not as_nobody: $! must be the program itself)
setpriv --reuid=nobody --regid=nogroup --clear-groups "$W/tfC" 100000 >/dev/null 2>&1 & cpid=$!; bg_pids+=($cpid)
as_nobody "$W/tfA" 30 >/dev/null & a=$!
as_nobody "$W/tfB" 30 >/dev/null & b=$!
as_nobody "$W/tfD" 30 >/dev/null & d=$!
wait $a $b $d
as_nobody "$W/tfE" 30 >/dev/null
as_nobody ln -s "$OUT/secrets/tfA" "$W/tfA.new" && as_nobody mv -T "$W/tfA.new" "$W/tfA" ||
	fail "nobody could not swap tfA"
as_nobody ln -s "$OUT/secrets/tfC" "$W/tfC.new" && as_nobody mv -T "$W/tfC.new" "$W/tfC" ||
	fail "nobody could not swap tfC"
[ -L "$W/tfA" ] && [ -L "$W/tfC" ] && kill -0 $cpid || fail "swap set-up"
echo "swapped after $SECONDS s"; kill -INT $rpid
wait $rpid; rc=$?
kill $cpid 2>/dev/null
wait $APID 2>/dev/null
cat "$OUT/record.err"
grep -E 'not shipped|sent /tmp/agent-files|symbol files' "$OUT/agent.log"
[ $rc -eq 0 ] || fail "record exited $rc"

python3 "$TOP/tests/e2e/lib/symtab-blobs.py" "$OUT/h.data" "$OUT/blobs" "$MARK" >"$OUT/blobs.txt" ||
	fail "cannot read the SYMTAB blobs"
echo "blobs in domain self: $(grep -c '^dom=1 ' "$OUT/blobs.txt")"
grep MARKER-FOUND "$OUT/blobs.txt" && fail "the root-only secret was shipped to the controller"
grep -q "not shipped: $W/tfA: its path now goes through a symbolic link" "$OUT/agent.log" ||
	fail "the agent did not say why tfA was not shipped"
grep -q "^dom=1 kind=4 name=$bA " "$OUT/blobs.txt" && fail "something was shipped under tfA's build-id"
for n in tfB:$bB tfC:$bC tfD:$bD; do
	f=$(sed -n "s/^dom=1 kind=4 name=${n#*:} .* file=\([^ ]*\).*/\1/p" "$OUT/blobs.txt" | head -n 1)
	[ -n "$f" ] || fail "${n%%:*} (${n#*:}) was not shipped"
	cmp -s "$OUT/blobs/$f" "$OUT/${n%%:*}.orig" || fail "the blob shipped for ${n%%:*} is not the file nobody ran"
	"$DOMPROF" report -q -i "$OUT/h.data" --domain self --comm "${n%%:*}" --format csv >"$OUT/${n%%:*}.csv" 2>&1 ||
		fail "report --comm ${n%%:*} failed: $(tail -n 1 "$OUT/${n%%:*}.csv")"
	grep -q ',func_a' "$OUT/${n%%:*}.csv" || fail "${n%%:*}'s functions are not named in domain self"
done
grep -q "sent $W/tfB (.*by path)" "$OUT/agent.log" || fail "tfB was not shipped by path"
grep -q "sent $W/tfC (.*through its mapping)" "$OUT/agent.log" || fail "tfC was not shipped through its mapping"
grep -q "sent $W/tfD (.*by path)" "$OUT/agent.log" || fail "tfD (0700, identity recorded) was not shipped by path"
[ "$(grep -c "^dom=1 kind=4 name=$bB " "$OUT/blobs.txt")" -eq 1 ] ||
	fail "tfB's build-id was shipped $(grep -c "^dom=1 kind=4 name=$bB " "$OUT/blobs.txt") times (tfE is a copy)"
grep -q "sent $W/tfE " "$OUT/agent.log" && fail "tfE (tfB's build-id) was shipped again"
echo "agent-files: ok"
