#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages domprof's build, tests and demos need.
# Idempotent: installs only what is missing; runs apt-get update at most once.
set -eu
PKGS="gcc make pkg-config libelf-dev libdw-dev libdebuginfod-dev libzstd-dev libdeflate-dev libbpf-dev zlib1g-dev libiberty-dev libcapstone-dev
      clang libclang-rt-14-dev valgrind linux-perf zstd debuginfod
      qemu-system-x86 busybox-static cpio node-ws nodejs chromium golang-go
      groff-base"
missing=()
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# man (tests/e2e/cli-docs.sh renders the man pages): man-db, unless a man is there
command -v man >/dev/null || missing+=(man-db)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "domprof deps: installing ${missing[*]}"
SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
