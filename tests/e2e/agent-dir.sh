#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# The root agent creates files only in a private directory of its own
# (docs/active.md, "Where the agent writes"). For real, on loopback,
# with fs.protected_symlinks=0 (set here, restored after): user nobody
# plants symbolic links at the names older agents wrote in /tmp
# (agent-record.log, agent.data) pointing at a root-owned file; an agent
# with the default --dir (/tmp) then records a session for a host
# `domprof record --domain self=agent:...`. Checks:
#  - the session worked (domain self has samples) and the root-owned
#    file is unchanged, the links untouched;
#  - the agent's private directory was mode 0700 and is gone after exit;
#  - a --dir writable by others without the sticky bit, or owned by
#    nobody, is refused with one line and a non-zero exit; a sticky
#    world-writable --dir is accepted;
#  - record itself (what the agent runs, and what root runs in /tmp):
#    `record -f -o STICKY/out.data` where nobody planted a link refuses
#    it and leaves the target alone; a fresh name still works.
source "$(dirname "$0")/../lib/common.bash"
source "$(dirname "$0")/lib/agent.bash"
at_exit 'for l in /tmp/agent-record.log /tmp/agent.data; do [ -L "$l" ] && rm -f "$l"; done'
fail_hook() { for f in "$OUT"/agent*.log "$OUT"/record.err; do [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done; }
[ -x "$WL/threefuncs" ] || skip "workloads not built (make workloads)"
need_attacker
no_protected_symlinks
chmod 755 "$OUT"

# 1. planted links at the old fixed names, then a session with --dir /tmp
target=$OUT/root-owned
echo "root's file $$ $RANDOM" >"$target"; chmod 644 "$target"
sum=$(sha256sum <"$target")
for l in /tmp/agent-record.log /tmp/agent.data; do
	rm -f "$l"
	as_nobody ln -s "$target" "$l" || fail "nobody cannot plant $l"
done
start_agent agent.log --once || fail "the agent did not start: $(tail -n 1 "$OUT/agent.log")"
priv=$(sed -n 's/.*listening on .* (files in \(.*\))$/\1/p' "$OUT/agent.log")
echo "private directory: ${priv:-none said}"
"$WL/threefuncs" 100000 >/dev/null 2>&1 & wl=$!; bg_pids+=($wl)
"$DOMPROF" record -f -a -F 500 -d 1 -o "$OUT/h.data" --domain "self=agent:127.0.0.1:$PORT" 2>"$OUT/record.err"
rc=$?
kill $wl
wait $APID 2>/dev/null
cat "$OUT/record.err"
[ $rc -eq 0 ] || fail "record exited $rc"
grep -Eq 'self: [1-9][0-9]* samples' "$OUT/record.err" || fail "the agent's session recorded nothing"
[ "$(sha256sum <"$target")" = "$sum" ] || fail "the agent wrote through a planted link: $target changed"
for l in /tmp/agent-record.log /tmp/agent.data; do
	[ -L "$l" ] && [ "$(readlink "$l")" = "$target" ] || fail "$l was replaced or removed"
done
[ -n "$priv" ] && [[ "$priv" == /tmp/domprof-agent.* ]] || fail "the agent did not say where its private directory is"
[ ! -e "$priv" ] || fail "the private directory $priv is left after the agent exited"

# the private directory while an agent runs: ours, 0700, and nothing in /tmp
start_agent agent2.log --once || fail "the second agent did not start"
priv=$(sed -n 's/.*listening on .* (files in \(.*\))$/\1/p' "$OUT/agent2.log")
[ "$(stat -c '%a %U' "$priv" 2>/dev/null)" = "700 root" ] || fail "private directory $priv: $(stat -c '%a %U' "$priv" 2>&1)"
kill $APID; wait $APID 2>/dev/null
[ ! -e "$priv" ] || fail "the private directory $priv is left after SIGTERM"

# 2. a --dir others can change is refused, with one line
mkdir -m 777 "$OUT/open"; chmod 777 "$OUT/open"
mkdir -m 755 "$OUT/theirs"; chown nobody:nogroup "$OUT/theirs"
mkdir "$OUT/sticky"; chmod 1777 "$OUT/sticky"
for d in open:'not sticky' theirs:'owned by uid'; do
	timeout 10 "$DOMPROF" agent --listen "tcp:127.0.0.1:1" --once --dir "$OUT/${d%%:*}" >"$OUT/refused.out" 2>&1
	rc=$?
	echo "--dir ${d%%:*}: exit $rc: $(cat "$OUT/refused.out")"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "--dir $OUT/${d%%:*} was accepted (exit $rc)"
	[ "$(wc -l <"$OUT/refused.out")" -eq 1 ] && grep -q "${d#*:}" "$OUT/refused.out" ||
		fail "--dir ${d%%:*}: expected one line saying '${d#*:}'"
done
start_agent agent3.log --once --dir "$OUT/sticky" || fail "a sticky --dir was refused: $(tail -n 1 "$OUT/agent3.log")"
kill $APID; wait $APID 2>/dev/null
# 3. record's own output rule, in a sticky directory nobody can write
target2=$OUT/root-owned2
echo "another root file $$" >"$target2"; chmod 644 "$target2"
sum2=$(sha256sum <"$target2")
as_nobody ln -s "$target2" "$OUT/sticky/out.data" || fail "nobody cannot plant a link in the sticky dir"
"$DOMPROF" record -f -o "$OUT/sticky/out.data" -- true 2>"$OUT/rec-link.err"; rc=$?
echo "record -f -o <nobody's link>: exit $rc: $(tail -n 1 "$OUT/rec-link.err")"
[ "$(sha256sum <"$target2")" = "$sum2" ] || fail "record -f wrote through nobody's link"
[ $rc -ne 0 ] && grep -q 'symbolic link owned by uid' "$OUT/rec-link.err" || fail "record accepted nobody's link (exit $rc)"
"$DOMPROF" record -o "$OUT/sticky/fresh.data" -- true 2>"$OUT/rec-fresh.err" ||
	fail "record to a fresh name failed: $(tail -n 1 "$OUT/rec-fresh.err")"
echo "agent-dir: ok"
