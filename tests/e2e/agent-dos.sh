#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# Denial of service against `domprof agent` and the host's wait for it,
# on this machine's loopback. The agent runs as root, the attacker as
# nobody (setpriv). Checks:
#  1. zstd bomb HELLOs are refused: 1 GiB of zeros in ~36 KB (too long
#     for a request even compressed) and 100 MiB in ~3.5 KB (short enough
#     to be read, so its decompressed size is what is refused), each once
#     with its content size in the frame header and once without; the
#     agent's peak RSS (VmHWM) stays under 100 MB, and it serves the next
#     controller (HELLO_OK);
#  2. a connection that sends nothing holds the agent only until
#     --idle-timeout (2 s here): meanwhile a controller is "busy", after
#     it the silent one is closed and the next controller is served;
#  3. Ctrl-C during `record`'s wait for an agent that never answers
#     COLLECT (a fake agent in python) ends record in seconds, not after
#     the 300 s collect timeout: that domain ends with "collection
#     interrupted", the file is finished (info shows STATS, no damage);
#  4. a fake agent that claims 2^63 lost samples: the recorder counts at
#     most rate x CPUs x (seconds + 5) and says so; `info` shows a sane
#     lost share and `report --domain host` none of it;
#  5. a fake agent that closes the connection at START (it dies during
#     its start-up): only its domain ends, with one line; record exits 0
#     and the file holds the host's samples (issue 34, item 6).
source "$(dirname "$0")/../lib/common.bash"
source "$(dirname "$0")/lib/agent.bash"
mkdir -p "$OUT/agdir"
# the attacker (nobody) reads its inputs from here
PUB=$(mktemp -d /tmp/agent-dos.XXXXXX); chmod 755 "$PUB"
at_exit 'rm -rf "$PUB"'
fail_hook() { for f in "$OUT"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done; }
need_attacker
command -v zstd >/dev/null || skip "needs the zstd command"
PY=/usr/bin/python3
[ -x $PY ] || skip "needs /usr/bin/python3 (the attacker, nobody, cannot use another)"


# A tiny controller: ctl PORT hello|bomb FILE|silent MAXSECONDS. Prints what
# the agent answered (HELLO_OK, ERROR text, closed).
cat >"$PUB/ctl.py" <<'EOF'
import socket, struct, sys, time
from agent_frames import frame, recv, NAMES
port, what = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=20)
try:
    if what == "hello":
        s.sendall(frame(1, struct.pack("<I", 1)))
    elif what == "bomb":
        s.sendall(frame(1, open(sys.argv[3], "rb").read(), 1))
    elif what == "silent": # send nothing, wait for what the agent says
        s.settimeout(float(sys.argv[3]))
    t, p = recv(s)
except (ConnectionResetError, BrokenPipeError, socket.timeout) as e:
    t, p = None, str(e).encode()
print(NAMES.get(t, "closed" if t is None else "type %d" % t),
      p.decode(errors="replace") if t in (23, None) and p else "")
EOF
chmod 644 "$PUB/ctl.py"
agent_frames_to "$PUB"

# AGENT_DOS_PARTS="2 3" runs only those parts (to show each on an old build)
want() { case " ${AGENT_DOS_PARTS:-1 2 3 4} " in *" $1 "*) return 0 ;; esac; return 1; }
hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }

# 1. zstd bombs
if want 1; then
for b in 1024:sized 1024:stream 100:sized 100:stream; do
	n=$((${b%%:*} << 20)); o=(); [ "${b#*:}" = sized ] && o=(--stream-size=$n)
	head -c $n /dev/zero | zstd -1 -q -c "${o[@]}" >"$PUB/bomb-${b/:/-}.zst" || fail "cannot make the bomb"
	echo "bomb ${b%%:*} MiB (${b#*:}): $(stat -c %s "$PUB/bomb-${b/:/-}.zst") bytes"
done
chmod 644 "$PUB"/*.zst
start_agent agent1.log --dir "$OUT/agdir" || fail "the agent did not start: $(tail -n 1 "$OUT/agent1.log")"
echo "agent VmHWM at start: $(hwm $APID) kB"
for b in 1024-sized 1024-stream 100-sized 100-stream; do
	a=$(timeout 60 "${NOBODY[@]}" $PY "$PUB/ctl.py" "$PORT" bomb "$PUB/bomb-$b.zst" 2>&1)
	echo "bomb ($b): $a"
	kill -0 $APID 2>/dev/null || fail "the agent died of the $b bomb"
	h=$(hwm $APID)
	echo "agent VmHWM after the $b bomb: $h kB"
	[ "${h:-999999}" -lt 102400 ] || fail "the agent's peak RSS reached $h kB after a $b zstd bomb HELLO"
	case $a in HELLO_OK*) fail "the agent answered a $b zstd bomb HELLO" ;; esac
	a=$(timeout 30 "${NOBODY[@]}" $PY "$PUB/ctl.py" "$PORT" hello 2>&1)
	echo "next controller: $a"
	case $a in HELLO_OK*) ;; *) fail "the agent did not serve the controller after the $b bomb: $a" ;; esac
done
grep -q 'too large' "$OUT/agent1.log" || fail "the agent did not say the request was too large"
kill $APID; wait $APID 2>/dev/null
fi

# 2. a silent connection is timed out
if want 2; then
start_agent agent2.log --dir "$OUT/agdir" --idle-timeout 2 || fail "the agent did not start: $(tail -n 1 "$OUT/agent2.log")"
timeout 30 "${NOBODY[@]}" $PY "$PUB/ctl.py" "$PORT" silent 25 >"$OUT/silent.txt" 2>&1 & spid=$!; bg_pids+=($spid)
sleep 0.5
a=$(timeout 30 $PY "$PUB/ctl.py" "$PORT" hello 2>&1)
echo "controller while the silent one holds the agent: $a"
case $a in *busy*) ;; *) fail "expected busy while the silent connection is served, got: $a" ;; esac
# the idle timeout is 2 s; give it up to 10 s before failing
wait_for "$OUT/agent2.log" 'idle' 10
a=$(timeout 30 $PY "$PUB/ctl.py" "$PORT" hello 2>&1)
echo "controller after the idle timeout: $a"
case $a in HELLO_OK*) ;; *) fail "a silent connection still holds the agent: $a" ;; esac
wait $spid 2>/dev/null
echo "the silent connection got: $(cat "$OUT/silent.txt")"
grep -q 'ERROR idle' "$OUT/silent.txt" || fail "the silent connection was not told it idled"
kill $APID; wait $APID 2>/dev/null
fi


# 3. SIGINT during the collect wait
if want 3; then
start_fake_agent mute fake.log || fail "the fake agent did not start"
"$DOMPROF" record -f -a -F 200 -d 1 -o "$OUT/int.data" --domain "mute=agent:127.0.0.1:$FPORT" \
	2>"$OUT/record.log" & rpid=$!
wait_for "$OUT/fake.log" 'COLLECT' 30 || fail "record never asked COLLECT"
sleep 0.5
kill -INT $rpid
ended=0
for _ in $(seq 200); do kill -0 $rpid 2>/dev/null || { ended=1; break; }; sleep 0.1; done
[ $ended = 1 ] || { kill -9 $rpid; fail "record still waits for the agent 20 s after SIGINT"; }
wait $rpid; rc=$?
cat "$OUT/record.log"
echo "record exited $rc after SIGINT in the collect wait"
grep -q 'mute: collection interrupted' "$OUT/record.log" || fail "no message that the collection was interrupted"
"$DOMPROF" info "$OUT/int.data" >"$OUT/info.txt" 2>&1 || fail "info failed: $(tail -n 1 "$OUT/info.txt")"
grep -q '^stats: .* samples' "$OUT/info.txt" || fail "the file has no STATS: $(grep stats "$OUT/info.txt")"
grep -q 'damage: *none' "$OUT/info.txt" || fail "damage in the file"
fi

# 4. a forged lost count
if want 4; then
start_fake_agent lost fake2.log || fail "the fake agent did not start"
"$DOMPROF" record -f -a -F 200 -d 1 -o "$OUT/lost.data" --domain "liar=agent:127.0.0.1:$FPORT" \
	2>"$OUT/record2.log"; rc=$?
cat "$OUT/record2.log"
[ $rc -eq 0 ] || fail "record exited $rc"
"$DOMPROF" info "$OUT/lost.data" >"$OUT/info2.txt" 2>&1 || fail "info failed: $(tail -n 1 "$OUT/info2.txt")"
grep -E '^(samples|lost|stats):' "$OUT/info2.txt"
lost=$(awk '$1 == "lost:" { print $2 }' "$OUT/info2.txt")
# 200 Hz x 1 CPU (what the fake says) x (the few seconds of the run + 5)
[ "${lost:-x}" -le 4000 ] 2>/dev/null || fail "the file counts ${lost:-?} lost samples from a forged claim"
grep -q 'liar: .*claimed 9223372036854775808 lost samples' "$OUT/record2.log" ||
	fail "the recorder did not say it clamped the claim"
"$DOMPROF" report -i "$OUT/lost.data" --domain host >"$OUT/report-host.txt" 2>&1 || fail "report failed"
grep '^# lost samples' "$OUT/report-host.txt"
grep -q '^# lost samples: 0 ' "$OUT/report-host.txt" || fail "the agent's claim changed the host's lost share"

# 5. an agent dying at START ends only its domain
start_fake_agent start-dies fake3.log || fail "the fake agent did not start"
rc=0
"$DOMPROF" record -f -a -F 200 -d 1 -o "$OUT/dies.data" --domain "dies=agent:127.0.0.1:$FPORT" \
	2>"$OUT/record3.log" || rc=$?
cat "$OUT/record3.log"
grep -q 'START: closing' "$OUT/fake3.log" || fail "control: the fake agent was never asked to START"
[ $rc -eq 0 ] || fail "record exited $rc when an agent died at START"
[ "$(grep -c 'dies: .*the recording goes on without this domain' "$OUT/record3.log")" -eq 1 ] ||
	fail "not one line saying the dead agent's domain ended"
n=$("$DOMPROF" report -q -i "$OUT/dies.data" --domain host --format csv 2>/dev/null | awk -F, 'NR > 1 { n += $1 } END { print n + 0 }')
[ "$n" -gt 0 ] || fail "no host samples in the recording of a dead agent's run"
fi
echo "agent-dos: ok"
