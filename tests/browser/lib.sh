# SPDX-License-Identifier: MIT
# Sourced by the flame graph tests: makes sure headless Chromium, Node and
# Node's WebSocket module are there (Debian packages chromium, nodejs,
# node-ws: nothing from npm, so this works where only the Debian archive is
# reachable), or exits 77 naming what is missing.
# After sourcing: NODE_PATH reaches Debian's node modules, and
# browser_check PAGE SHOT [ARGS...] runs tests/browser/check-flamegraph.js
# (exits the test with 77 when the browser cannot start).
# skip and the set-up: tests/lib/common.bash (the flame graph tests source
# it first; sourcing it again is a no-op).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.bash"
BROWSER_DIR="$TOP/tests/browser"

if ! bash "$BROWSER_DIR/deps.sh" chromium node; then
	skip "chromium, nodejs or node-ws missing and could not be installed (see tests/browser/deps.sh)"
fi
# Debian's own nodejs searches /usr/share/nodejs; other builds of node
# (e.g. nodesource) do not, so name it explicitly.
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"
if ! node -e "require('ws')" 2>/dev/null; then
	skip "node cannot load the ws module (package node-ws, NODE_PATH=$NODE_PATH)"
fi

browser_check() {
	node "$BROWSER_DIR/check-flamegraph.js" "$@"
	local rc=$?
	if [ $rc = 3 ]; then
		skip "headless chromium could not start (see messages above)"
	fi
	return $rc
}
