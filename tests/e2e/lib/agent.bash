# SPDX-License-Identifier: MIT
# Helpers shared by the agent tests (tests/e2e/agent-*.sh); sourced after
# tests/lib/common.bash.

# start_agent LOG ARGS...: `domprof agent --listen tcp:127.0.0.1:PORT ARGS`
# on a free loopback port, its output in $OUT/LOG; sets PORT and APID.
# Returns 1 when five ports in a row did not give a listening agent.
start_agent() {
	local log=$1 try; shift
	for try in 1 2 3 4 5; do
		PORT=$((20000 + RANDOM % 20000))
		"$DOMPROF" agent --listen "tcp:127.0.0.1:$PORT" "$@" >"$OUT/$log" 2>&1 &
		APID=$!; bg_pids+=($APID)
		wait_for "$OUT/$log" 'listening on' 5 $APID && return 0
	done
	return 1
}

# need_attacker: the agent runs as root and the attacker as user nobody;
# defines NOBODY (the command prefix) and as_nobody CMD...
need_attacker() {
	need_root "the agent runs as root, the attacker as nobody"
	id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null || skip "needs user nobody and setpriv"
	NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
}
as_nobody() { "${NOBODY[@]}" "$@"; }

# no_protected_symlinks: fs.protected_symlinks=0 (the default of minimal
# guests, where the attacks work) for this test, restored at exit.
no_protected_symlinks() {
	local old
	old=$(cat /proc/sys/fs/protected_symlinks 2>/dev/null) && sysctl -q -w fs.protected_symlinks=0 2>/dev/null ||
		skip "cannot set fs.protected_symlinks=0 (needed to reproduce the attack)"
	at_exit "sysctl -q -w fs.protected_symlinks=$old"
}

# agent_frames_to DIR: a copy of lib/agent_frames.py (the protocol's
# frame() and recv() in python) in DIR, readable by all, for scripts in
# DIR that nobody runs (python finds a module beside the script).
# Scripts run as root import it from $AGENT_PY (on PYTHONPATH).
AGENT_PY=$TOP/tests/e2e/lib
agent_frames_to() {
	cp "$AGENT_PY/agent_frames.py" "$1/" && chmod 644 "$1/agent_frames.py"
}

# start_fake_agent MODE LOG: lib/fake-agent.py MODE (mute|lost) on a free
# loopback port, its output in $OUT/LOG; sets FPID and FPORT. Returns 1
# when it printed no port within 5 s.
start_fake_agent() {
	python3 "$AGENT_PY/fake-agent.py" "$1" >"$OUT/$2" 2>&1 &
	FPID=$!; bg_pids+=($FPID)
	for _ in $(seq 50); do [ -s "$OUT/$2" ] && break; sleep 0.1; done
	FPORT=$(head -n 1 "$OUT/$2")
	[ -n "$FPORT" ]
}
