#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# A passive domain's start-up (reading guest memory) costs only that
# domain, against fake gdbstubs (tests/e2e/lib/fake-gdbstub.py):
#  - a guest that closes the connection during its start-up ends that
#    domain with one line: with -a the recording goes on, exit 0, the file
#    has the host's samples, and the rate line says it ended at its start
#    (no rate, no share of a CPU over a few ms);
#  - a guest whose memory reads take 0.3 s each (a start-up that would
#    read for minutes) does not hold the others: -d 3 ends in a few
#    seconds, another passive domain keeps its samples (against a run
#    without the slow guest, loosely), and the slow one says its
#    start-up was cut by the recording's end;
#  - its budget (start-time=1; start-mb=1 on a stub answering zeros at
#    once): the start-up is cut after it, said in one line, and the
#    domain samples on;
#  - three stubs that stop answering (SIGSTOP) during -d 2: their 2 s
#    stop graces run together, the recording ends in ~4 s, not 8;
#  - control: no stub at all is still a start-up error (exit 1, no file).
source "$(dirname "$0")/../lib/common.bash"
command -v python3 >/dev/null || skip "python3 not installed (the fake stub)"
STUB="$TOP/tests/e2e/lib/fake-gdbstub.py"
SOCK=$(mktemp -d /tmp/domprof-gdbstart.XXXXXX)
at_exit 'rm -rf "$SOCK"'
for m in plain die die-mem slow; do
	python3 "$STUB" "$SOCK/$m.sock" "$m" 0.3 &
	bg_pids+=($!)
done
for m in plain die die-mem slow; do
	for _ in $(seq 100); do [ -S "$SOCK/$m.sock" ] && break; sleep 0.1; done
	[ -S "$SOCK/$m.sock" ] || fail "fake stub '$m' did not come up"
done
# samples of domain NAME in FILE (info's domains section)
dsamples() { "$DOMPROF" info "$1" | awk -v n="$2" '$2 == n && $5 == "samples" { print $4 }'; }

# 1. a guest that dies during its start-up, with -a: at its first look at
# the vCPUs, and at its first read of guest memory
for m in die die-mem; do
	rc=0
	"$DOMPROF" record -f -a -d 2 -F 200 --domain evil=gdb:unix:"$SOCK/$m.sock" -o "$OUT/$m.data" \
		2>"$OUT/$m.err" || rc=$?
	cat "$OUT/$m.err"
	[ $rc -eq 0 ] || fail "$m: a guest dying during its start-up: record exited $rc (expected 0)"
	[ -s "$OUT/$m.data" ] || fail "$m: no file written"
	[ "$(grep -c 'evil: stub closed the connection during its start-up' "$OUT/$m.err")" -eq 1 ] ||
		fail "$m: not one line naming the guest that died"
	h=$(dsamples "$OUT/$m.data" host)
	[ "${h:-0}" -gt 0 ] || fail "$m: no host samples in the file"
	grep -q '^domprof record: rate evil: .*% of a CPU' "$OUT/$m.err" &&
		fail "$m: a share of a CPU for a domain that ended at its start"
	grep -Eq '^domprof record: rate evil: (ended at its start|no span sampled)' "$OUT/$m.err" ||
		fail "$m: the rate line does not say the domain ended at its start"
done

# 2. a slow start-up and another passive domain
"$DOMPROF" record -f -d 3 -F 100 --domain p=gdb:unix:"$SOCK/plain.sock" -o "$OUT/alone.data" \
	2>"$OUT/alone.err" || { cat "$OUT/alone.err"; fail "record of the plain domain alone"; }
alone=$(dsamples "$OUT/alone.data" p)
t0=$(date +%s%N)
rc=0
# start-time=20: a start-up the others waited for would make this >= 23 s,
# far from the ~3.5 s it takes, whatever the machine's speed
timeout -k 2 40 "$DOMPROF" record -f -d 3 -F 100 --domain slow=gdb:unix:"$SOCK/slow.sock",start-time=20 \
	--domain p=gdb:unix:"$SOCK/plain.sock" -o "$OUT/slow.data" 2>"$OUT/slow.err" || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
cat "$OUT/slow.err"
echo "-d 3 with a slow start-up: ${ms} ms, exit $rc; p: ${alone} samples alone"
[ $rc -eq 0 ] || fail "record with a slow start-up exited $rc"
[ "$ms" -lt 15000 ] || fail "-d 3 took ${ms} ms with a slow start-up (the others waited for it)"
both=$(dsamples "$OUT/slow.data" p)
echo "p: ${both} samples beside the slow start-up"
[ "${both:-0}" -ge $(( alone / 2 )) ] || fail "the other domain lost its samples: ${both} against ${alone}"
grep -q 'slow: .*start-up cut after .* (the recording ended): skipped ' "$OUT/slow.err" ||
	fail "the slow domain does not say what its cut start-up skipped"

# 3. the budget: cut after 1 s, then sampled
"$DOMPROF" record -f -d 4 -F 100 --domain slow=gdb:unix:"$SOCK/slow.sock",start-time=1 -o "$OUT/budget.data" \
	2>"$OUT/budget.err" || { cat "$OUT/budget.err"; fail "record with start-time=1"; }
cat "$OUT/budget.err"
[ "$(grep -c 'slow: .*start-up cut after .* (its time budget, start-time=): skipped ' "$OUT/budget.err")" -eq 1 ] ||
	fail "no one line for the spent budget"
n=$(dsamples "$OUT/budget.data" slow)
[ "${n:-0}" -gt 0 ] || fail "the domain did not sample on after its budget"
# and the byte budget (start-mb=1), on a stub answering zeros at once
python3 "$STUB" "$SOCK/zeros.sock" slow 0 &
bg_pids+=($!)
for _ in $(seq 100); do [ -S "$SOCK/zeros.sock" ] && break; sleep 0.1; done
"$DOMPROF" record -f -d 2 -F 100 --domain z=gdb:unix:"$SOCK/zeros.sock",start-mb=1 -o "$OUT/mb.data" \
	2>"$OUT/mb.err" || { cat "$OUT/mb.err"; fail "record with start-mb=1"; }
cat "$OUT/mb.err"
[ "$(grep -c 'z: .*start-up cut after .* and 1.0 MB (its byte budget, start-mb=): skipped ' "$OUT/mb.err")" -eq 1 ] ||
	fail "no one line for the spent byte budget"
"$DOMPROF" record -f -d 1 --domain slow=gdb:unix:"$SOCK/slow.sock",start-time=0 -o "$OUT/bad.data" \
	2>"$OUT/bad.err" && fail "start-time=0 accepted"
grep -q 'start-time= must be a number from 1 to 600' "$OUT/bad.err" || fail "start-time=0: $(cat "$OUT/bad.err")"

# 4. five stubs that stop answering during the recording: their stop
# graces (2 s) run together, not one after the other, so -d 2 ends in
# about 4 s (one after the other: 12 s)
for i in 1 2 3 4 5; do
	python3 "$STUB" "$SOCK/h$i.sock" plain &
	hp[$i]=$!
	bg_pids+=($!)
done
at_exit 'kill -CONT ${hp[*]} 2>/dev/null'
for i in 1 2 3 4 5; do
	for _ in $(seq 100); do [ -S "$SOCK/h$i.sock" ] && break; sleep 0.1; done
done
t0=$(date +%s%N)
"$DOMPROF" record -f -d 2 -F 100 --domain h1=gdb:unix:"$SOCK/h1.sock" --domain h2=gdb:unix:"$SOCK/h2.sock" \
	--domain h3=gdb:unix:"$SOCK/h3.sock" --domain h4=gdb:unix:"$SOCK/h4.sock" \
	--domain h5=gdb:unix:"$SOCK/h5.sock" -o "$OUT/hang.data" 2>"$OUT/hang.err" &
rec=$!
sleep 1
kill -STOP ${hp[*]}
rc=0; wait $rec || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill -CONT ${hp[*]}
cat "$OUT/hang.err"
echo "-d 2 with five hanging stubs: ${ms} ms, exit $rc"
[ $rc -eq 0 ] || fail "record with hanging stubs exited $rc"
[ "$ms" -lt 9000 ] || fail "-d 2 took ${ms} ms with five hanging stubs (their graces one after the other?)"
[ "$(grep -c '^domprof record: h[1-5]: stub did not answer' "$OUT/hang.err")" -eq 5 ] ||
	fail "not one line per hanging stub"

# 5. control: nothing listening is still an error before the recording
rc=0
"$DOMPROF" record -f -a -d 1 --domain none=gdb:unix:"$SOCK/none.sock" -o "$OUT/none.data" 2>"$OUT/none.err" || rc=$?
cat "$OUT/none.err"
[ $rc -eq 1 ] || fail "no stub: exit $rc, expected 1"
[ ! -e "$OUT/none.data" ] || fail "no stub: a file was left"
grep -q '^domprof record: none: cannot connect to unix:' "$OUT/none.err" || fail "no stub: no one-line reason"
echo "PASS"
