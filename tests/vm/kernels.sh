# SPDX-License-Identifier: MIT
# Kernels of any series Debian's archive carries, fetched into the VM cache
# (the same cache, layout and lock as lib.sh's vm_kernel). Sourced, not run;
# needs lib.sh's vm_cache_dir (source lib.sh first).
#
#   vm_kernel_fetch SERIES [FLAVOR]
#       SERIES: "6.19" (the newest 6.19.x the archive has), or an exact
#       upstream version "6.19.11"; FLAVOR: amd64 (default, generic),
#       cloud-amd64 or rt-amd64. Sets VM_KERNEL (vmlinuz), VM_KDIR (its
#       cache folder <package>_<version>, with config) and VM_KVER (the
#       kernel's release, e.g. 6.19.11+deb13-amd64). Offline, the newest
#       cached kernel of that series. Returns 1 with VM_KERR set (one line)
#       when neither the archive nor the cache has one; VM_KERR starts
#       with "archive unreachable:" when the archive could not be read.
#
# The archive is read through a private apt configuration under the cache
# ($cache/apt/s-<checksum of the suites>: a sources list and a lists
# folder, refreshed when older than a day): the machine's own /etc/apt is neither read for sources nor
# changed. Suites: bullseye (5.10), bookworm and bookworm-security (6.1,
# 6.12; a suite named *-security is read from the security archive,
# VM_KSECMIRROR), trixie (6.12), trixie-backports (6.16 ... 7.3), sid and
# experimental (7.2, 7.3).
#
# Package layouts handled: linux-image-X-unsigned or linux-image-X with
# boot/vmlinuz-X (up to 6.18); from 6.19 linux-image-X is a small package
# that depends on linux-binary-X, which holds boot/vmlinuz-X (6.19) or
# usr/lib/modules/X/vmlinuz (7.x).

VM_KSUITES=${VM_KSUITES:-"bullseye bookworm bookworm-security trixie trixie-backports sid experimental"}
VM_KMIRROR=${VM_KMIRROR:-http://deb.debian.org/debian}
VM_KSECMIRROR=${VM_KSECMIRROR:-http://deb.debian.org/debian-security}

# vm_kapt_dir CACHE: the private apt folder of these suites and mirrors
# (one per set: runs that read other suites do not undo each other's lists).
vm_kapt_dir() {
	echo "$1/apt/s-$(printf '%s' "$VM_KMIRROR $VM_KSECMIRROR $VM_KSUITES" | cksum | cut -d' ' -f1)"
}

# Prints the apt options of the private configuration.
vm_kapt_opts() {
	local k
	k=$(vm_kapt_dir "$1")
	# the package cache files are kept (some images turn them off: each
	# apt-cache call then parses every list again, seconds each)
	echo "-o Dir::Etc::sourcelist=$k/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$k/lists -o Dir::Cache=$k/cache -o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=srcpkgcache.bin -o Debug::NoLocking=1"
}

# Refreshes the private lists when missing or older than a day (quietly).
# Returns 0 (fresh), 2 (the archive could not be reached: the lists are
# the last ones read) or 1 (not reached, no lists).
vm_kapt_update() {
	local cache=$1 k s
	k=$(vm_kapt_dir "$1")
	mkdir -p "$k/lists/partial" "$k/cache/archives/partial" || return 1
	: >"$k/sources.list.new"
	for s in $VM_KSUITES; do
		case $s in
		*-security) printf 'deb %s %s main\n' "$VM_KSECMIRROR" "$s" ;;
		*) printf 'deb %s %s main\n' "$VM_KMIRROR" "$s" ;;
		esac >>"$k/sources.list.new"
	done
	cmp -s "$k/sources.list.new" "$k/sources.list" || rm -f "$k/stamp"
	mv "$k/sources.list.new" "$k/sources.list"
	local rc=0
	if [ -z "$(find "$k/stamp" -mmin -1440 2>/dev/null)" ]; then
		# shellcheck disable=SC2046
		if timeout 300 apt-get $(vm_kapt_opts "$cache") -qq update >"$k/update.log" 2>&1 &&
		   ! grep -q '^[WE]:' "$k/update.log"; then
			touch "$k/stamp"
		else
			rc=2
		fi
	fi
	ls "$k"/lists/*_Packages* >/dev/null 2>&1 || rc=1
	return $rc
}

vm_kernel_fetch() {
	local series=$1 flavor=${2:-amd64} cache opts rel= pkg= ver= dir= tmp v
	VM_KERR=
	cache=$(vm_cache_dir)
	opts=$(vm_kapt_opts "$cache")
	exec 8>"$cache/lock"
	flock 8
	local up=0
	vm_kapt_update "$cache" || up=$?
	if [ $up != 1 ]; then
		# Releases of the series: linux-image-<rel>-<flavor>, rel starting
		# with the series then ".", "-" or "+" (6.19 must not match 6.190).
		# shellcheck disable=SC2086
		rel=$(apt-cache $opts search --names-only "^linux-image-${series//./\\.}[-.+].*-${flavor}(-unsigned)?\$" 2>/dev/null |
			sed -n "s/^linux-image-\(${series//./\\.}[-.+][^ ]*\)-${flavor}\(-unsigned\)\{0,1\} .*/\1/p" |
			grep -v -- '-\(cloud\|rt\)$' | sort -u | sort -V | tail -n 1)
		# an exact release asked for: "7.3" also names 7.3-rc builds
		[ -z "$rel" ] && [ -n "$(apt-cache $opts show "linux-image-${series}-${flavor}" 2>/dev/null)" ] && rel=$series
		rel=${rel:+$rel-$flavor}
		# The first package of the release the archive has, unless another
		# one of the same release is cached already (lib.sh's vm_kernel
		# caches the signed linux-image-X: the same kernel).
		local p pv
		for p in "linux-binary-$rel" "linux-image-$rel-unsigned" "linux-image-$rel"; do
			[ -n "$rel" ] || break
			# shellcheck disable=SC2086
			pv=$(apt-cache $opts show --no-all-versions "$p" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
			[ -n "$pv" ] || continue
			[ -z "$ver" ] && pkg=$p ver=$pv
			[ -s "$cache/${p}_${pv}/vmlinuz" ] && { pkg=$p ver=$pv; break; }
		done
		if [ -n "$ver" ]; then
			dir=$cache/${pkg}_${ver}
			[ -s "$dir/vmlinuz" ] && [ ! -s "$dir/release" ] && echo "$rel" >"$dir/release"
			if [ ! -s "$dir/vmlinuz" ]; then
				echo "vm: downloading guest kernel $pkg $ver (about 70-110 MB, once)" >&2
				tmp=$(mktemp -d "$cache/dl.XXXXXX")
				# shellcheck disable=SC2086
				if (cd "$tmp" && apt-get $opts -qq download "$pkg=$ver" >"$tmp/log" 2>&1) &&
				   dpkg -x "$tmp"/*.deb "$tmp/x"; then
					mkdir -p "$dir"
					v=$(ls "$tmp"/x/boot/vmlinuz-* "$tmp"/x/usr/lib/modules/*/vmlinuz 2>/dev/null | head -n 1)
					cp "$tmp"/x/boot/config-* "$dir/config" 2>/dev/null ||
						cp "$tmp"/x/usr/lib/modules/*/config "$dir/config" 2>/dev/null
					echo "$rel" >"$dir/release"
					[ -n "$v" ] && cp "$v" "$dir/vmlinuz.tmp" && mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
				fi
				if [ ! -s "$dir/vmlinuz" ]; then
					VM_KERR="'apt-get download $pkg=$ver' gave no vmlinuz: $(tail -n 1 "$tmp/log" 2>/dev/null)"
					[ $up = 2 ] && VM_KERR="archive unreachable: $VM_KERR"
				fi
				rm -rf "$tmp"
			fi
		else
			VM_KERR="no linux-image-$series*-$flavor in $VM_KSUITES"
			[ $up = 2 ] && VM_KERR="archive unreachable: $VM_KERR (lists not refreshed)"
		fi
	else
		VM_KERR="archive unreachable: cannot read the package lists of $VM_KMIRROR ($VM_KSUITES): $(grep -m1 '^[WE]:' "$(vm_kapt_dir "$cache")/update.log" 2>/dev/null)"
	fi
	# Offline: the newest cached kernel of that series and flavor.
	if [ -z "$dir" ] || [ ! -s "$dir/vmlinuz" ]; then
		dir=$(grep -lx -- "${series//./\\.}\([-.+].*\)\{0,1\}-$flavor" "$cache"/*/release 2>/dev/null |
			{ if [ "$flavor" = amd64 ]; then grep -v -- '-\(cloud\|rt\)-amd64_'; else cat; fi; } |
			xargs -r -n1 dirname | sort -V | tail -n 1)
		[ -n "$dir" ] && VM_KERR=
	fi
	flock -u 8
	if [ -z "$dir" ] || [ ! -s "$dir/vmlinuz" ]; then
		VM_KERR=${VM_KERR:-no kernel $series ($flavor)}
		return 1
	fi
	VM_KDIR=$dir
	VM_KERNEL=$dir/vmlinuz
	VM_KVER=$(cat "$dir/release" 2>/dev/null)
	return 0
}
