#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# `make static` (mk/static.mk): build/static/domprof is statically linked,
# prints its version, and works where there is no C library at all: in a
# chroot holding only busybox-static, the static domprof and a static
# test program (like the busybox initramfs of a test guest), with /proc
# mounted in a private mount namespace. Inside it, `record -a -d 1`
# while the program spins, then `report -l` must name the program's hot
# function (user symbols from the ELF) and kernel functions (kallsyms
# embedded at record time).
source "$(dirname "$0")/lib/report-common.bash"
S="$TOP/build/static/domprof"
[ -x "$S" ] || make -s -C "$TOP" static >"$OUT/make.log" 2>&1 || { cat "$OUT/make.log"; fail "make static failed"; }

note "file and --version"
file "$S" | tee "$OUT/file.txt"
grep -q 'statically linked' "$OUT/file.txt" || fail "build/static/domprof is not statically linked"
"$S" --version | grep -Eq '^domprof [0-9]+\.[0-9]+' || fail "--version"
ls -l "$S"

note "a root with no C library"
command -v unshare >/dev/null && command -v chroot >/dev/null || skip "no unshare/chroot"
[ "$(id -u)" = 0 ] || skip "needs root for chroot"
BB=$(command -v busybox || true)
[ -n "$BB" ] && file -L "$BB" | grep -q 'statically linked' || skip "no static busybox (apt-get install busybox-static)"
R="$OUT/root"
rm -rf "$R"; mkdir -p "$R/bin" "$R/proc" "$R/tmp" "$R/dev"
mknod -m 666 "$R/dev/null" c 1 3 || skip "cannot create a /dev/null for the chroot"
cp "$BB" "$R/bin/busybox"; cp "$S" "$R/bin/domprof"
cat >"$OUT/spin.c" <<'EOF'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) void static_hot(void) { for (unsigned i = 0; i < 1000000; i++) sink += i * 7; }
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do { static_hot(); clock_gettime(CLOCK_MONOTONIC, &b); }
	while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return 0;
}
EOF
cc -static -O1 -o "$R/bin/spin" "$OUT/spin.c" || fail "cannot build a static test program"
unshare -m true 2>/dev/null || skip "unshare -m not permitted here"
unshare -m sh -c "mount -t proc proc '$R/proc' &&
	chroot '$R' /bin/busybox sh -c '/bin/spin 60 & p=\$!; /bin/busybox sleep 0.3; /bin/domprof record -a -d 1 -F 1000 -o /tmp/s.data; r=\$?; kill \$p; exit \$r' &&
	chroot '$R' /bin/domprof report -i /tmp/s.data -l --format csv >'$OUT/all.csv' &&
	chroot '$R' /bin/domprof report -i /tmp/s.data -l --comm spin --format csv" >"$OUT/report.csv" 2>"$OUT/chroot.err"
rc=$?
grep -v 'No such file' "$OUT/chroot.err"  # the host's binaries are not in the chroot
head -n 5 "$OUT/report.csv"
grep -q 'perf_event_paranoid\|not permitted' "$OUT/chroot.err" && skip "perf_event_open refused"
[ $rc = 0 ] || fail "record/report inside the chroot: exit $rc"
python3 - "$OUT/report.csv" "$OUT/all.csv" <<'PY' || fail "static profile content"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
allrows = list(csv.DictReader(open(sys.argv[2])))
tot = sum(int(r["samples"]) for r in rows)
hot = sum(int(r["samples"]) for r in rows if r["image"] == "spin" and r["symbol"] == "static_hot")
kern = [r for r in allrows if r["image"] == "[kernel.kallsyms]" and r["symbol"] != "[unknown]"]
print("spin: %d samples, static_hot %d; whole system %d samples, %d named kernel rows"
      % (tot, hot, sum(int(r["samples"]) for r in allrows), len(kern)))
assert tot >= 100, tot
assert hot >= 0.8 * tot, (hot, tot)
assert kern, "no kernel symbol named"
PY
echo "ok"
