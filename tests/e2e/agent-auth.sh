#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# Authentication of `domprof agent` (docs/active.md, Security), on this
# machine's loopback. The agent runs as root, the attacker as nobody
# (setpriv). Checks:
#  1. without a key the agent refuses to listen on tcp:0.0.0.0 and
#     tcp:[::] (not loopback); with --insecure it listens and warns;
#  2. --key-file creates a missing key (mode 0600, owned by root) that
#     nobody cannot read; the agent refuses a key file others can read;
#  3. a controller without the key (nobody, raw frames) is refused before
#     its HELLO is answered; one that guesses the key's MAC is refused;
#  4. `record` without key=, with a wrong key, or with a key file others
#     can read fails with a one-line reason; with the right key a real
#     `record -a -d 2 --domain self=agent:127.0.0.1:PORT,key=FILE` records
#     the agent's domain (its address in the file carries no key);
#  5. a unix socket is created mode 0600: nobody cannot connect.
source "$(dirname "$0")/../lib/common.bash"
source "$(dirname "$0")/lib/agent.bash"
mkdir -p "$OUT/agdir"
PUB=$(mktemp -d /tmp/agent-auth.XXXXXX); chmod 755 "$PUB"
at_exit 'rm -rf "$PUB"'
fail_hook() { for f in "$OUT"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done; }
need_attacker
[ -x "$WL/threefuncs" ] || skip "workloads not built (make workloads)"
PY=/usr/bin/python3
[ -x $PY ] || skip "needs /usr/bin/python3 (the attacker, nobody, cannot use another)"


# 1. no key, not loopback
for addr in "tcp:0.0.0.0" "tcp:[::]"; do
	P=$((20000 + RANDOM % 20000))
	timeout 10 "$DOMPROF" agent --listen "$addr:$P" --dir "$OUT/agdir" --once >"$OUT/open.log" 2>&1 & opid=$!
	sleep 1
	if kill -0 $opid 2>/dev/null; then
		kill $opid; wait $opid 2>/dev/null
		fail "the agent listened on $addr:$P without a key: $(head -n 1 "$OUT/open.log")"
	fi
	wait $opid; rc=$?
	echo "--listen $addr:$P without a key: exit $rc: $(head -n 1 "$OUT/open.log")"
	[ $rc -ne 0 ] && grep -q 'refusing to listen' "$OUT/open.log" || fail "no refusal for $addr"
done
P=$((20000 + RANDOM % 20000))
"$DOMPROF" agent --listen "tcp:0.0.0.0:$P" --insecure --dir "$OUT/agdir" >"$OUT/insecure.log" 2>&1 & ipid=$!; bg_pids+=($ipid)
wait_for "$OUT/insecure.log" 'listening on' 5
cat "$OUT/insecure.log"
grep -q 'listening on' "$OUT/insecure.log" || fail "--insecure did not listen"
grep -q 'WARNING.*without a key' "$OUT/insecure.log" || fail "--insecure gave no warning"
kill $ipid; wait $ipid 2>/dev/null

# 2. the key file
KEY=$OUT/agent.key
start_agent agent.log --dir "$OUT/agdir" --key-file "$KEY" || fail "the agent did not start: $(tail -n 1 "$OUT/agent.log")"
head -n 2 "$OUT/agent.log"
grep -q 'created key file' "$OUT/agent.log" || fail "the agent did not say it created the key"
[ "$(stat -c '%a %U' "$KEY")" = "600 root" ] || fail "key file is $(stat -c '%a %U' "$KEY"), not 600 root"
"${NOBODY[@]}" cat "$KEY" >/dev/null 2>&1 && fail "nobody can read the key file"
cp "$KEY" "$OUT/open.key"; chmod 644 "$OUT/open.key"
"$DOMPROF" agent --listen none --key-file "$OUT/open.key" >"$OUT/openkey.log" 2>&1 &&
	fail "the agent used a key file others can read"
echo "agent with a 0644 key: $(cat "$OUT/openkey.log")"
grep -q 'chmod 600' "$OUT/openkey.log" || fail "no reason for refusing the 0644 key"

# 3. the attacker speaks raw frames
cat >"$PUB/attack.py" <<'EOF'
import hashlib, hmac, os, socket, struct, sys
import agent_frames
from agent_frames import frame, NAMES as names
port, what = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=20)
def recv(): return agent_frames.recv(s, reset_closes=True)  # closed with our START unread
def say(t, p): print(names.get(t, "closed" if t is None else "type %d" % t), p.decode(errors="replace") if t == 23 else "")
if what == "hello":          # the old protocol: HELLO, START
    s.sendall(frame(1, struct.pack("<I", 1)) + frame(2, struct.pack("<II", 1000, 0)))
elif what == "guess":        # AUTH, then a MAC made with a guessed key
    nh = os.urandom(32)
    s.sendall(frame(5, nh))
    t, na = recv(); say(t, na)
    if t != 24: sys.exit(0)
    mac = hmac.new(b"guessed-key-guessed-key", b"domprof-agent host\0" + nh + na, hashlib.sha256).digest()
    s.sendall(frame(6, mac))
t, p = recv(); say(t, p)
t, p = recv(); say(t, p)   # then: closed
EOF
chmod 644 "$PUB/attack.py"
agent_frames_to "$PUB"
a=$(timeout 30 "${NOBODY[@]}" $PY "$PUB/attack.py" "$PORT" hello 2>&1)
echo "attacker's HELLO: $(echo $a)"
case $a in *HELLO_OK*) fail "a controller without the key got HELLO_OK" ;; esac
case $a in "ERROR authentication required"*closed*) ;; *) fail "HELLO without the key was not refused: $a" ;; esac
a=$(timeout 30 "${NOBODY[@]}" $PY "$PUB/attack.py" "$PORT" guess 2>&1)
echo "attacker's guessed key: $(echo $a)"
case $a in *AUTH_OK*) fail "a guessed key was accepted" ;; esac
case $a in "AUTH_CHALLENGE"*"ERROR authentication failed"*closed*) ;; *) fail "a wrong MAC was not refused: $a" ;; esac
grep -q 'refused a controller without the key' "$OUT/agent.log" || fail "the agent did not log the refusal"

# 4. the host's record: no key, wrong key, open key file, right key
"$WL/threefuncs" 1500 >/dev/null & bg_pids+=($!)
"$DOMPROF" agent --listen none --key-file "$OUT/wrong.key" >/dev/null 2>&1 # makes a key, then refuses the address
[ -s "$OUT/wrong.key" ] || fail "no second key"
for k in none wrong open; do
	spec="self=agent:127.0.0.1:$PORT"
	[ $k = wrong ] && spec+=",key=$OUT/wrong.key"
	[ $k = open ] && spec+=",key=$OUT/open.key"
	"$DOMPROF" record -f -d 1 -o "$OUT/$k.data" --domain "$spec" 2>"$OUT/rec-$k.log"; rc=$?
	echo "record with key $k: exit $rc: $(tail -n 1 "$OUT/rec-$k.log")"
	[ $rc -ne 0 ] || fail "record with key $k succeeded"
	[ "$(wc -l <"$OUT/rec-$k.log")" -eq 1 ] || fail "record with key $k: not one line"
done
grep -q 'authentication required' "$OUT/rec-none.log" || fail "no reason without key"
grep -q 'wrong key' "$OUT/rec-wrong.log" || fail "no reason with the wrong key"
grep -q 'chmod 600' "$OUT/rec-open.log" || fail "no reason with the open key file"
"$DOMPROF" record -f -a -F 500 -d 2 -o "$OUT/h.data" --domain "self=agent:127.0.0.1:$PORT,key=$KEY" \
	2>"$OUT/record.log"; rc=$?
cat "$OUT/record.log"
[ $rc -eq 0 ] || fail "record with the right key exited $rc"
"$DOMPROF" info "$OUT/h.data" >"$OUT/info.txt" || fail "info failed"
grep -E "^ +1 +self +active" "$OUT/info.txt"
grep -Eq "^ +1 +self +active +[0-9]+ samples +via agent:127.0.0.1:$PORT +symbols embedded" "$OUT/info.txt" ||
	fail "no active domain 'self' (address without the key) in info"
ns=$(awk '$2 == "self" { print $4 }' "$OUT/info.txt")
[ "${ns:-0}" -ge 100 ] || fail "the agent's domain has only ${ns:-0} samples"
grep -q 'damage: *none' "$OUT/info.txt" || fail "damage reported"
grep -q 'controller connected' "$OUT/agent.log" || fail "the agent did not serve the keyed controller"

# 5. a unix socket is only for its owner
kill $APID; wait $APID 2>/dev/null
"$DOMPROF" agent --listen "unix:$PUB/agent.sock" --dir "$OUT/agdir" >"$OUT/unix.log" 2>&1 & upid=$!; bg_pids+=($upid)
for _ in $(seq 50); do [ -S "$PUB/agent.sock" ] && break; sleep 0.1; done
[ "$(stat -c %a "$PUB/agent.sock")" = 600 ] || fail "unix socket has mode $(stat -c %a "$PUB/agent.sock")"
a=$(timeout 10 "${NOBODY[@]}" $PY -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("connected")' \
	"$PUB/agent.sock" 2>&1 | tail -n 1)
echo "nobody connecting to the unix socket: $a"
case $a in *Permission*) ;; *) fail "nobody could connect to the agent's unix socket: $a" ;; esac
echo "agent-auth: ok"
