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
