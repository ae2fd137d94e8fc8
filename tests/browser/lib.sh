# SPDX-License-Identifier: MIT
# Sourced by the flame graph tests: makes sure Chromium, Node and
# playwright-core are there (npm install once into a cache that survives
# `make clean`), or exits 77 naming what is missing.
# After sourcing: NODE_PATH points at the cached node_modules, and
# browser_check PAGE SHOT [ARGS...] runs tests/browser/check-flamegraph.js.
BROWSER_DIR="$DOMPROF_TOP/tests/browser"
BROWSER_CACHE="${DOMPROF_BROWSER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/domprof-browser}"

if ! bash "$BROWSER_DIR/deps.sh" chromium node; then
	echo "SKIP: chromium or node/npm missing and could not be installed (see tests/browser/deps.sh)"
	exit 77
fi
if [ ! -f "$BROWSER_CACHE/node_modules/playwright-core/package.json" ] ||
   ! cmp -s "$BROWSER_DIR/package.json" "$BROWSER_CACHE/package.json"; then
	mkdir -p "$BROWSER_CACHE"
	cp "$BROWSER_DIR/package.json" "$BROWSER_CACHE/package.json"
	if ! (cd "$BROWSER_CACHE" && timeout 300 npm install --no-audit --no-fund --loglevel=error >&2); then
		rm -f "$BROWSER_CACHE/package.json"
		echo "SKIP: npm install playwright-core failed (registry unreachable?)"
		exit 77
	fi
fi
export NODE_PATH="$BROWSER_CACHE/node_modules"

browser_check() {
	node "$BROWSER_DIR/check-flamegraph.js" "$@"
	local rc=$?
	if [ $rc = 3 ]; then
		echo "SKIP: headless chromium could not start (see messages above)"
		exit 77
	fi
	return $rc
}
