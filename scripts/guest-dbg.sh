#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fetch the debug vmlinux (DWARF) of the VM tests' guest kernel once, for
# `report --vmlinux` and the source-line check of tests/vm/test-guest-chains.sh:
# Debian's linux-image-<version>-dbg (859 MB for 6.1; ~5 min to unpack the
# one file) into the kernel's cache folder as vmlinux.dbg. Not run by
# `make test` (too large); run it by hand, as root, after one VM test has
# cached the guest kernel.
#
# usage: scripts/guest-dbg.sh [linux-image-6.1.0-NN-amd64]
set -eu
cache=${DOMPROF_VM_CACHE:-/var/cache/domprof-vm}
pkg=${1:-$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)}
[ -n "$pkg" ] || { echo "guest-dbg: cannot tell the guest kernel package (apt-get update?)"; exit 1; }
ver=$(apt-cache show --no-all-versions "$pkg" | sed -n 's/^Version: //p' | head -n 1)
dir=$cache/${pkg}_${ver}
kver=${pkg#linux-image-}
[ -s "$dir/vmlinux.dbg" ] && { echo "guest-dbg: $dir/vmlinux.dbg is there"; exit 0; }
mkdir -p "$dir"
tmp=$(mktemp -d "$cache/dbg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "guest-dbg: downloading $pkg-dbg $ver"
(cd "$tmp" && apt-get download "$pkg-dbg=$ver")
echo "guest-dbg: unpacking usr/lib/debug/boot/vmlinux-$kver"
dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp" "./usr/lib/debug/boot/vmlinux-$kver"
mv "$tmp/usr/lib/debug/boot/vmlinux-$kver" "$dir/vmlinux.dbg"
echo "guest-dbg: $dir/vmlinux.dbg"
