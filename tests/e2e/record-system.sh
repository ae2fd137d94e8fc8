#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# `domprof record -a` and `-p`: while a workload runs,
#  - -a -d 3 gives samples from both CPUs (two workload copies keep both
#    busy) and from the workload's pid, plus the start-up snapshot (COMM
#    and MMAP of the already running workload);
#  - -C 0 keeps only CPU 0;
#  - -p PID samples that pid only, and when the pid exits during the
#    recording the recorder says so and finishes the file.
source "$(dirname "$0")/../lib/common.bash"
set -e
[ -x "$WL/threefuncs" ] || skip "workloads not built (make workloads)"
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || skip "needs at least 2 CPUs"

"$WL/threefuncs" 1000 >/dev/null & w1=$!; bg_pids+=($w1)
"$WL/threefuncs" 1000 >/dev/null & w2=$!; bg_pids+=($w2)
sleep 0.3

# 1. system wide
"$DOMPROF" record -f -a -d 3 -o "$OUT/a.data" 2>"$OUT/a.err" || fail "record -a exited $?: $(cat "$OUT/a.err")"
cat "$OUT/a.err"
"$DOMPROF" dump "$OUT/a.data" >"$OUT/a.dump"
"$DOMPROF" info "$OUT/a.data" >"$OUT/a.info"
grep -q 'damage: *none' "$OUT/a.info" || fail "damage reported"
cpus=$(grep ' SAMPLE ' "$OUT/a.dump" | grep -o ' cpu=[0-9]*' | sort -u | wc -l)
echo "CPUs with samples: $cpus"
[ "$cpus" -ge 2 ] || fail "samples from $cpus CPU(s), expected >= 2"
n1=$(grep -c " SAMPLE .* pid=$w1 " "$OUT/a.dump" || true)
echo "samples of pid $w1: $n1"
[ "$n1" -gt 30 ] || fail "too few samples from the workload pid $w1"
grep -Eq "TASK +comm pid=$w1 tid=$w1 .*comm=threefuncs$" "$OUT/a.dump" || fail "no snapshot COMM for $w1"
grep -Eq "MMAP +pid=$w1 .*path=$WL/threefuncs$" "$OUT/a.dump" || fail "no snapshot MMAP for $w1"
total=$(grep -c ' SAMPLE ' "$OUT/a.dump")
grep -Eq "stats: +$total samples" "$OUT/a.info" || fail "STATS != $total SAMPLE records"

# 2. one CPU only
"$DOMPROF" record -f -a -C 0 -d 1 -o "$OUT/c.data" 2>"$OUT/c.err" || fail "record -C 0 exited $?"
"$DOMPROF" dump "$OUT/c.data" >"$OUT/c.dump"
other=$(grep ' SAMPLE ' "$OUT/c.dump" | grep -vc ' cpu=0 ' || true)
[ "$other" -eq 0 ] || fail "-C 0 recorded $other samples on other CPUs"
grep -q ' SAMPLE .* cpu=0 ' "$OUT/c.dump" || fail "-C 0 recorded nothing"

# 3. -p: only that pid
"$DOMPROF" record -f -p "$w2" -d 1 -o "$OUT/p.data" 2>"$OUT/p.err" || fail "record -p exited $?"
"$DOMPROF" dump "$OUT/p.data" >"$OUT/p.dump"
mine=$(grep -c " SAMPLE .* pid=$w2 " "$OUT/p.dump" || true)
others=$(grep ' SAMPLE ' "$OUT/p.dump" | grep -vc " pid=$w2 " || true)
echo "-p $w2: $mine samples of it, $others of others"
[ "$mine" -gt 30 ] && [ "$others" -eq 0 ] || fail "-p recorded the wrong samples"
grep -Eq "MMAP +pid=$w2 .*path=$WL/threefuncs$" "$OUT/p.dump" || fail "no snapshot MMAP for -p"

# 4. -p on a pid that exits during the recording: noted, file finished
"$WL/threefuncs" 40 >/dev/null & w3=$!; bg_pids+=($w3)
"$DOMPROF" record -f -p "$w3" -d 20 -o "$OUT/x.data" 2>"$OUT/x.err" || fail "record -p (exiting pid) exited $?"
cat "$OUT/x.err"
grep -q "^domprof record: pid $w3 exited during recording$" "$OUT/x.err" || fail "exit of pid not reported"
"$DOMPROF" info "$OUT/x.data" >"$OUT/x.info"
grep -q 'damage: *none' "$OUT/x.info" && grep -Eq 'stats: +[0-9]+ samples' "$OUT/x.info" || fail "file not finished"
echo "ok"
