#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Debian packages the flame graph and export tests need: headless
# Chromium (browser test), Node + node-ws (the test drives Chromium over
# the DevTools protocol; Debian packages only, no npm), Go
# (`go tool pprof` reads our pprof output), xxd (embeds the page script).
# Installs only what is missing; quiet when all is there. Exit 0 when
# everything is present afterwards, 1 otherwise (callers then skip).
# usage: tests/browser/deps.sh [chromium] [node] [go] [xxd]  (default: all)
set -u
want=("$@"); [ ${#want[@]} -eq 0 ] && want=(chromium node go xxd)
pkgs=()
for w in "${want[@]}"; do
	case $w in
	chromium) [ -x /usr/bin/chromium ] || pkgs+=(chromium) ;;
	node) command -v node >/dev/null || pkgs+=(nodejs)
	      [ -f /usr/share/nodejs/ws/package.json ] || pkgs+=(node-ws) ;;
	go) command -v go >/dev/null || pkgs+=(golang-go) ;;
	xxd) command -v xxd >/dev/null || pkgs+=(xxd) ;;
	*) echo "deps.sh: unknown component '$w'" >&2; exit 2 ;;
	esac
done
[ ${#pkgs[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing ${pkgs[*]} and not root to install them" >&2
	exit 1
fi
echo "deps.sh: installing ${pkgs[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A lock held by a parallel apt run: wait for it rather than fail.
for try in 1 2 3 4 5 6; do
	if apt-get install -y -q --no-install-recommends "${pkgs[@]}" >&2; then exit 0; fi
	apt-get update -q >&2 || true
	sleep 5
done
echo "deps.sh: could not install ${pkgs[*]}" >&2
exit 1
