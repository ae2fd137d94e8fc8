#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# Active domains without a VM: the host acts as its own "guest". A
# `domprof agent --listen tcp:127.0.0.1:PORT` runs on this machine and
# `domprof record -a --domain self=agent:127.0.0.1:PORT` records the host
# directly and through the agent at the same time, while two copies of
# threefuncs (50/30/20% in func_a/b/c) keep both CPUs busy. Checks:
#  - the agent's domain is in the file (active, its address, embedded
#    symbols) with the threefuncs ELF embedded by build-id, and its
#    samples name func_a/b/c in the known ratio (within 10 points);
#  - both views see the same work: threefuncs' sample counts within 30%,
#    `domprof diff --domain-a host --domain-b self` similarity >= 0.6;
#  - security: a second controller is refused while one is served, an
#    unknown request is answered with ERROR and the connection closed;
#  - an agent killed during the recording ends only its domain: the
#    recorder says so and the host's samples are intact.
source "$(dirname "$0")/../lib/common.bash"
source "$(dirname "$0")/lib/agent.bash"
mkdir -p "$OUT/agdir"
fail_hook() { for f in "$OUT"/agent*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done; }
[ -x "$WL/threefuncs" ] || skip "workloads not built (make workloads)"
[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ] || [ "$(id -u)" -eq 0 ] ||
	skip "needs root or kernel.perf_event_paranoid <= 0 for record -a"


"$WL/threefuncs" 1500 >/dev/null & bg_pids+=($!)
"$WL/threefuncs" 1500 >/dev/null & bg_pids+=($!)
sleep 0.3

# 1. record the host and the agent together; a second controller during it
start_agent agent.log --dir "$OUT/agdir" --once || fail "the agent did not start: $(tail -n 1 "$OUT/agent.log")"
"$DOMPROF" record -f -a -F 1000 -d 4 -o "$OUT/h.data" --domain "self=agent:127.0.0.1:$PORT" \
	2>"$OUT/record.err" & rpid=$!
# the second controller comes once the first is served (the agent's
# recorder runs), not after a fixed time: start-up takes 1-2 s under load
wait_for "$OUT/record.err" 'recording at' 30 || fail "the agent domain did not start within 30 s"
"$DOMPROF" record -f -d 1 -o "$OUT/second.data" --domain "other=agent:127.0.0.1:$PORT" \
	2>"$OUT/second.err"; rc2=$?
wait $rpid; rc=$?
cat "$OUT/record.err"
[ $rc -eq 0 ] || fail "record exited $rc"
echo "second controller: $(tail -n 1 "$OUT/second.err")"
[ $rc2 -ne 0 ] && grep -q 'busy' "$OUT/second.err" || fail "a second controller was not refused (exit $rc2)"
wait $APID 2>/dev/null

"$DOMPROF" info "$OUT/h.data" >"$OUT/info.txt" || fail "info failed"
cat "$OUT/info.txt"
grep -Eq "^ +1 +self +active .*via agent:127.0.0.1:$PORT +symbols embedded" "$OUT/info.txt" ||
	fail "no active domain 'self' in info"
grep -q 'damage: *none' "$OUT/info.txt" || fail "damage reported"
"$DOMPROF" dump "$OUT/h.data" >"$OUT/dump.txt" || fail "dump failed"
bid=$(readelf -n "$WL/threefuncs" | sed -n 's/.*Build ID: *//p')
grep -Eq "dom=1 +SYMTAB +kind=4 name=$bid " "$OUT/dump.txt" || fail "threefuncs ELF ($bid) not embedded in domain self"
grep -Eq "dom=1 +SYMTAB +kind=(1|6|8) name=kallsyms" "$OUT/dump.txt" || fail "the agent's kallsyms is not embedded"

for d in host self; do
	"$DOMPROF" report -q -i "$OUT/h.data" -l --domain $d --comm threefuncs --format csv >"$OUT/$d.csv" 2>"$OUT/$d.err" ||
		fail "report --domain $d failed: $(tail -n 1 "$OUT/$d.err")"
done
share() { awk -F, -v s="$2" 'NR > 1 { t += $1; if ($5 == s) m += $1 } END { printf "%d\n", t ? 100 * m / t + 0.5 : 0 }' "$1"; }
total() { awk -F, 'NR > 1 { t += $1 } END { print t + 0 }' "$1"; }
nh=$(total "$OUT/host.csv"); ns=$(total "$OUT/self.csv")
echo "threefuncs samples: host view $nh, agent view $ns"
for d in host self; do
	printf '%-5s func_a %d%%  func_b %d%%  func_c %d%%\n' $d "$(share "$OUT/$d.csv" func_a)" \
		"$(share "$OUT/$d.csv" func_b)" "$(share "$OUT/$d.csv" func_c)"
done
[ "$ns" -ge 500 ] || fail "the agent's view has only $ns threefuncs samples"
[ $((ns * 10)) -ge $((nh * 7)) ] && [ $((ns * 10)) -le $((nh * 13)) ] ||
	fail "threefuncs samples differ by more than 30% between the views ($nh vs $ns)"
for f in func_a:50 func_b:30 func_c:20; do
	s=$(share "$OUT/self.csv" "${f%%:*}")
	[ $((s - ${f#*:})) -le 10 ] && [ $((${f#*:} - s)) -le 10 ] ||
		fail "agent view: ${f%%:*} has $s%, expected ${f#*:} +- 10"
done
"$DOMPROF" diff --domain-a host --domain-b self "$OUT/h.data" "$OUT/h.data" >"$OUT/diff.txt" 2>"$OUT/diff.err" ||
	fail "diff failed: $(tail -n 1 "$OUT/diff.err")"
sim=$(sed -n 's/^similarity: *//p' "$OUT/diff.txt")
echo "similarity host view vs agent view: $sim"
awk -v s="$sim" 'BEGIN { exit !(s >= 0.6) }' || fail "similarity $sim < 0.6"

# 2. only HELLO, START, STOP and COLLECT exist: anything else is refused
start_agent agent2.log --dir "$OUT/agdir" --once || fail "the agent did not start: $(tail -n 1 "$OUT/agent2.log")"
PYTHONPATH=$AGENT_PY python3 - "$PORT" >"$OUT/proto.txt" 2>&1 <<'EOF' || { cat "$OUT/proto.txt"; fail "unknown request was not refused"; }
import socket, struct, sys
from agent_frames import frame, recv
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(frame(1, struct.pack("<I", 1)))
t, p = recv(s); assert t == 16, t           # HELLO_OK
s.sendall(frame(9, b"/bin/sh -c reboot"))   # not a request the agent knows
t, p = recv(s); assert t == 23, t           # ERROR
print("refused:", p.decode())
t, p = recv(s); assert t is None            # and the connection is closed
EOF
cat "$OUT/proto.txt"
wait $APID 2>/dev/null

# 3. the agent dies during the recording: only its domain ends
start_agent agent3.log --dir "$OUT/agdir" --once || fail "the agent did not start: $(tail -n 1 "$OUT/agent3.log")"
"$DOMPROF" record -f -a -F 500 -d 3 -o "$OUT/k.data" --domain "self=agent:127.0.0.1:$PORT" \
	2>"$OUT/kill.err" & rpid=$!
wait_for "$OUT/kill.err" 'recording at' 30
# killed once its START is answered: a death before that ends the domain
# at its start, which record-domain.sh checks
wait_for "$OUT/agent3.log" 'recording the guest at' 30
sleep 0.5
kill -9 $APID
wait $rpid; rc=$?
cat "$OUT/kill.err"
[ $rc -eq 0 ] || fail "record exited $rc after the agent died"
grep -q 'self: agent closed the connection during the recording' "$OUT/kill.err" || fail "no message about the lost agent"
"$DOMPROF" info "$OUT/k.data" >"$OUT/kinfo.txt" || fail "info of k.data failed"
grep -q 'damage: *none' "$OUT/kinfo.txt" || fail "damage after the agent died"
hs=$(awk '$2 == "host" { print $4 }' "$OUT/kinfo.txt")
echo "host samples with a dead agent: $hs"
[ "${hs:-0}" -ge 1000 ] || fail "host has only ${hs:-0} samples"
echo "agent-loopback: ok"
