#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End-to-end test of `domprof merge`: three recordings made separately
# (host: threefuncs; "guest" vm1: piework; "guest" vm2: kernelheavy,
# recorded with another event, task-clock) merged into one file.
# Checks: domain ids 0,1,2 named host/vm1/vm2, kind active, address
# merge:PATH; `report -l --domain NAME --format csv` shows each
# workload's functions only in its own domain (kernelheavy: its command
# and the [kernel.kallsyms] image, never a host kernel symbol by name:
# which one does the work depends on the CPU); per-domain and total
# sample counts equal the inputs'; the second event gets id 1 and vm2's
# samples carry it; a merged file merged again as a guest gives NAME and
# NAME.SUB domains; OUT -> OUT.old unless -f; a truncated guest file
# merges its readable prefix with a warning and exit 0; an unreadable one
# fails with one line and exit 1 leaving no output; usage errors exit 2.
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs piework kernelheavy

record host -F 1000 -- "$WL/threefuncs" 120
record g1 -F 1000 -- "$WL/piework" 120
record g2 -F 1000 -e task-clock -- "$WL/kernelheavy" 1.5
H="$OUT/host.data" G1="$OUT/g1.data" G2="$OUT/g2.data" M="$OUT/m.data"
samples() { "$DOMPROF" info "$1" | awk '/^samples:/{print $2}'; }
nh=$(samples "$H") n1=$(samples "$G1") n2=$(samples "$G2")
echo "input samples: host $nh, g1 $n1, g2 $n2"

note "merge"
rm -f "$M" "$M.old"
"$DOMPROF" merge -o "$M" "$H" vm1="$G1" vm2="$G2" 2>"$OUT/merge.err" || { cat "$OUT/merge.err"; fail "merge exit $?"; }
cat "$OUT/merge.err"
"$DOMPROF" info "$M" >"$OUT/info.txt" || fail "info exit $?"
cat "$OUT/info.txt"
grep -Eq "^  0 +host +host +$nh samples" "$OUT/info.txt" || fail "host domain line"
grep -Eq "^  1 +vm1 +active +$n1 samples +via merge:$G1 +symbols embedded" "$OUT/info.txt" || fail "vm1 domain line"
grep -Eq "^  2 +vm2 +active +$n2 samples +via merge:$G2 +symbols embedded" "$OUT/info.txt" || fail "vm2 domain line"
[ "$(samples "$M")" = $((nh + n1 + n2)) ] || fail "total $(samples "$M") != $nh+$n1+$n2"
grep -Eq '^stats: +'$((nh + n1 + n2))' samples' "$OUT/info.txt" || fail "STATS samples"
grep -q 'damage: *none' "$OUT/info.txt" || fail "merged file damaged"

note "events: cpu-clock keeps id 0, task-clock gets id 1"
grep -Eq '^  id 0: cpu-clock' "$OUT/info.txt" && grep -Eq '^  id 1: task-clock' "$OUT/info.txt" || fail "event ids"
"$DOMPROF" dump "$M" >"$OUT/dump.txt" || fail "dump exit $?"
ev=$(awk '/ SAMPLE /{split($2, d, "="); for (i = 1; i <= NF; i++) if ($i ~ /^event=/) print d[2], $i}' "$OUT/dump.txt" | sort | uniq -c)
echo "$ev"
[ "$(echo "$ev" | grep -c .)" = 3 ] && echo "$ev" | grep -q "$n2 2 event=1" &&
	echo "$ev" | grep -q "$nh 0 event=0" && echo "$ev" | grep -q "$n1 1 event=0" || fail "sample event ids per domain"

note "each workload's functions in its own domain only"
for d in host vm1 vm2; do
	"$DOMPROF" report -i "$M" -l --domain $d --format csv >"$OUT/$d.csv" 2>"$OUT/$d.err" || fail "report --domain $d exit $?"
	head -n 4 "$OUT/$d.csv"
done
"$DOMPROF" report -i "$M" -l --format csv >"$OUT/all.csv" || fail "report exit $?"
python3 - "$OUT" "$nh" "$n1" "$n2" <<'PY' || fail "per-domain content"
import csv, sys
out = sys.argv[1]
want = {"host": int(sys.argv[2]), "vm1": int(sys.argv[3]), "vm2": int(sys.argv[4])}
# vm2's work is in the host kernel: which kernel function does it depends
# on the CPU (clear_user is inlined into read_zero or not, FSRM), so only
# the image is known; its leak check is by command name below.
own = {"host": ("threefuncs", {"func_a", "func_b", "func_c"}),
       "vm1": ("piework", {"pie_hot", "pie_cold"}),
       "vm2": ("[kernel.kallsyms]", None)}
rows = {d: list(csv.DictReader(open("%s/%s.csv" % (out, d)))) for d in want}
allrows = list(csv.DictReader(open(out + "/all.csv")))
for d, rs in rows.items():
    n = sum(int(r["samples"]) for r in rs)
    assert n == want[d], (d, n, want[d])
    assert all(r["domain"] == d for r in rs), d
    img, syms = own[d]
    mine = sum(int(r["samples"]) for r in rs if r["image"] == img and (syms is None or r["symbol"] in syms))
    print("%s: %d samples, %d (%.1f%%) in %s %s" % (d, n, mine, 100.0 * mine / n, img, sorted(syms) if syms else "(any symbol)"))
    assert mine >= 0.7 * n, (d, mine, n)
    for other, (oimg, osyms) in own.items():
        if other != d and osyms:
            leak = [r for r in rs if r["symbol"] in osyms]
            assert not leak, (d, "has", other, "symbols", leak)
# the host and vm1 hold little kernel time of their own (user-space loops)
for d in ("host", "vm1"):
    k = sum(int(r["samples"]) for r in rows[d] if r["image"] == "[kernel.kallsyms]")
    assert k < 0.3 * want[d], (d, "kernel share", k, want[d])
assert sum(int(r["samples"]) for r in allrows) == sum(want.values())
for d in want:
    assert sum(int(r["samples"]) for r in allrows if r["domain"] == d) == want[d], d
print("domains separate, totals add up:", sum(want.values()))
PY

note "kernelheavy's samples are vm2's only (by command name)"
for d in host vm1 vm2; do
	n=$("$DOMPROF" report -i "$M" -l --domain $d --comm kernelheavy --format json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["matched_samples"])') || fail "report --comm $d"
	echo "$d: $n kernelheavy samples"
	case $d in vm2) [ "$n" = "$n2" ] || fail "vm2 has $n of $n2 kernelheavy samples" ;;
	*) [ "$n" = 0 ] || fail "$d has $n kernelheavy samples" ;; esac
done

note "merged file merged again as a guest: NAME, NAME.SUB"
"$DOMPROF" merge -q -f -o "$OUT/m2.data" "$G1" vmx="$M" || fail "re-merge exit $?"
"$DOMPROF" info "$OUT/m2.data" | tee "$OUT/info2.txt" | sed -n '/^domains:/,/^records:/p'
for l in "0 +host +host +$n1" "1 +vmx +active +$nh" "2 +vmx.vm1 +active +$n1" "3 +vmx.vm2 +active +$n2"; do
	grep -Eq "^  $l samples" "$OUT/info2.txt" || fail "re-merge: no domain line '$l'"
done

note "OUT.old and -f"
"$DOMPROF" merge -q -o "$M" "$H" vm1="$G1" || fail "second merge exit $?"
[ -f "$M.old" ] || fail "existing OUT not moved to OUT.old"
[ "$(samples "$M.old")" = $((nh + n1 + n2)) ] || fail "OUT.old is not the previous file"
[ "$(samples "$M")" = $((nh + n1)) ] || fail "new OUT content"
rm -f "$M.old"
"$DOMPROF" merge -q -f -o "$M" "$H" vm1="$G1" || fail "merge -f exit $?"
[ ! -e "$M.old" ] || fail "-f still made OUT.old"
ls "$OUT"/m.data.tmp-* "$OUT"/.m.data.tmp-* 2>/dev/null && fail "temporary file left behind"

note "damaged guest file: readable prefix merged, warning, exit 0"
# cut inside the last chunk(s): chunks are flushed every second, so
# some cut keeps the earlier sample chunks and loses the later ones
size=$(stat -c %s "$G1")
for cut in 3000 6000 12000 24000; do
	head -c $((size - cut)) "$G1" >"$OUT/g1cut.data"
	ncut=$(samples "$OUT/g1cut.data")
	echo "cut g1 at $((size - cut)) of $size bytes: $ncut readable samples of $n1"
	[ "$ncut" -gt 0 ] && [ "$ncut" -lt "$n1" ] && break
done
[ "$ncut" -gt 0 ] && [ "$ncut" -lt "$n1" ] || fail "cut file: $ncut samples (want 0 < n < $n1)"
"$DOMPROF" merge -f -o "$OUT/md.data" "$H" vm1="$OUT/g1cut.data" 2>"$OUT/md.err"; rc=$?
cat "$OUT/md.err"
[ $rc = 0 ] || fail "damaged input: exit $rc"
# a cut inside a chunk is damage; a cut that falls on a chunk boundary
# leaves whole chunks and no STATS: incomplete. Either is said.
grep -Eq "^domprof merge: warning: .*g1cut.data.*(damaged|incomplete)" "$OUT/md.err" || fail "damaged input: no warning"
"$DOMPROF" info "$OUT/md.data" | grep -Eq "^  1 +vm1 +active +$ncut samples" || fail "damaged input: vm1 samples"

note "unreadable input: one line, exit 1, no output"
head -c 100 "$G1" >"$OUT/g1bad.data"
rm -f "$OUT/mu.data"
"$DOMPROF" merge -o "$OUT/mu.data" "$H" vm1="$OUT/g1bad.data" 2>"$OUT/mu.err"; rc=$?
cat "$OUT/mu.err"
[ $rc = 1 ] || fail "unreadable input: exit $rc"
[ "$(wc -l <"$OUT/mu.err")" = 1 ] && grep -q '^domprof merge: .*g1bad.data' "$OUT/mu.err" || fail "unreadable: message"
[ ! -e "$OUT/mu.data" ] || fail "unreadable input: output written"
"$DOMPROF" merge -o "$OUT/mu.data" "$OUT/none.data" vm1="$G1" 2>/dev/null; [ $? = 1 ] || fail "missing host: exit"

note "usage errors"
"$DOMPROF" merge "$H" vm1="$G1" 2>/dev/null; [ $? = 2 ] || fail "no -o: exit"
"$DOMPROF" merge -o "$OUT/mu.data" "$H" "vm1=" 2>/dev/null; [ $? = 2 ] || fail "not NAME=FILE: exit"
# two plain files are one host series now (record --switch-output's
# files; docs/merge-diff.md): the samples add up, no guest domain
"$DOMPROF" merge -q -o "$OUT/ms.data" "$H" "$G1" 2>/dev/null || fail "host series: exit"
n=$("$DOMPROF" info "$OUT/ms.data" | awk '$2 == "host" && $3 == "host" { print $4 }')
[ "$n" = $(($(samples "$H") + $(samples "$G1"))) ] || fail "host series: $n samples"
"$DOMPROF" merge -o "$OUT/mu.data" "$H" vm1="$G1" vm1="$G2" 2>/dev/null; [ $? = 2 ] || fail "duplicate name: exit"
"$DOMPROF" merge -o "$OUT/mu.data" "$H" host="$G1" 2>/dev/null; [ $? = 2 ] || fail "name 'host': exit"
"$DOMPROF" merge -o "$OUT/mu.data" 2>/dev/null; [ $? = 2 ] || fail "no input: exit"
[ ! -e "$OUT/mu.data" ] || fail "usage error wrote output"
# one host file alone is copied (format 1.5: its user stacks re-encoded)
"$DOMPROF" merge -q -o "$OUT/m1.data" "$H" 2>/dev/null || fail "one host file: exit"
[ "$(samples "$OUT/m1.data")" = "$(samples "$H")" ] || fail "one host file: samples differ"
echo "ok"
