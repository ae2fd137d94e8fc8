#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every analysis command on perf.data files (docs/perfdata.md), without
# perf report (so it may run beside other tests):
#  - perf kvm: `test-tool gen-perfdata guest` writes, from perf's
#    documented format, a recording whose guest machine (QEMU pid 4242)
#    has 3 samples in guest_fn_a and 1 in guest_fn_b of the kallsyms
#    `gen-perfdata --kallsyms` prints (this machine has no KVM or PMU to
#    make a real one). report names them with --guest-kallsyms (and
#    --guest-sysmap, and without a PID), in the domain --guest-name
#    gives, else perf's "[guest/4242]"; control: without the table they
#    are [unknown]. export, flamegraph, info and dump show the domain;
#    import with the options gives a file whose report names them alone.
#  - a perf.data of this machine (perf record -g of threefuncs):
#    import gives the same symbol rows as the perf.data itself, with the
#    kernel symbols embedded; merge joins the import with a domprof
#    recording, and refuses the perf.data itself with the hint (control);
#    diff of the perf.data against domprof's recording of the same
#    workload runs; a cut perf.data reads with a damage warning, and the
#    unknown record type and newer feature of the synthetic file are
#    said in one line; a --call-graph dwarf file relabelled aarch64 keeps
#    its user stacks un-unwound and says so (control: the x86-64 file does
#    not).
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs
D=$DOMPROF
G=$OUT/kvm.perf
"$TT" gen-perfdata "$G" guest || fail "gen-perfdata"
"$TT" gen-perfdata --kallsyms >"$OUT/guest.kallsyms"

note "perf kvm: guest machine as a domain"
"$D" report -q -i "$G" -l --format csv --guest-name 4242=vm1 --guest-kallsyms 4242="$OUT/guest.kallsyms" \
	>"$OUT/kvm.csv" 2>"$OUT/kvm.err" || fail "report of the kvm file: $(cat "$OUT/kvm.err")"
grep -q '^3,.*,vm1,\[guest.kernel\],guest_fn_a$' "$OUT/kvm.csv" || fail_later "guest_fn_a not named: $(cat "$OUT/kvm.csv")"
grep -q '^1,.*,vm1,\[guest.kernel\],guest_fn_b$' "$OUT/kvm.csv" || fail_later "guest_fn_b not named"
"$D" report -q -i "$G" -l --format csv --guest-sysmap "$OUT/guest.kallsyms" >"$OUT/kvm2.csv" 2>/dev/null
grep -q '^3,.*,\[guest/4242\],\[guest.kernel\],guest_fn_a$' "$OUT/kvm2.csv" || fail_later "--guest-sysmap without PID: $(cat "$OUT/kvm2.csv")"
"$D" report -q -i "$G" -l --format csv >"$OUT/kvm0.csv" 2>/dev/null
grep -q '^4,.*,\[guest/4242\],\[guest.kernel\],\[unknown\]$' "$OUT/kvm0.csv" || fail_later "control: guest samples named without a table: $(cat "$OUT/kvm0.csv")"
grep -q 'guest_fn' "$OUT/kvm0.csv" && fail_later "control: guest_fn_* named without a table"
"$D" export -i "$G" --format folded --guest-name 4242=vm1 --guest-kallsyms "$OUT/guest.kallsyms" >"$OUT/kvm.folded" 2>/dev/null ||
	fail_later "export of the kvm file"
grep -q '^vm1;.*;guest_fn_b_\[k\] 1$' "$OUT/kvm.folded" || fail_later "folded guest stack: $(cat "$OUT/kvm.folded")"
"$D" flamegraph -i "$G" -o "$OUT/kvm.html" --guest-name 4242=vm1 --guest-kallsyms "$OUT/guest.kallsyms" 2>/dev/null ||
	fail_later "flamegraph of the kvm file"
grep -q 'guest_fn_a' "$OUT/kvm.html" || fail_later "flame graph lacks guest_fn_a"
"$D" info "$G" >"$OUT/kvm.info" || fail_later "info of the kvm file"
grep -q 'perf.data (perf 6.1.pg, x86_64)' "$OUT/kvm.info" && grep -q '\[guest/4242\].* 4 samples' "$OUT/kvm.info" ||
	fail_later "info: $(head -n 12 "$OUT/kvm.info")"
grep -q '^skipped:     1 records of unknown types skipped (type 99 x1); 1 header features of a newer perf not read$' "$OUT/kvm.info" ||
	fail_later "info does not say what was skipped: $(grep skipped "$OUT/kvm.info")"
"$D" dump "$G" >"$OUT/kvm.dump" 2>/dev/null || fail_later "dump of the kvm file"
[ "$(grep -c ' dom=1 .*SAMPLE .*mode=guest-kernel' "$OUT/kvm.dump")" = 4 ] || fail_later "dump: guest samples"
"$D" import -q "$G" -o "$OUT/kvm.data" --guest-name 4242=vm1 --guest-kallsyms 4242="$OUT/guest.kallsyms" ||
	fail_later "import of the kvm file"
"$D" report -q -i "$OUT/kvm.data" -l --format csv >"$OUT/kvm-imported.csv" 2>/dev/null
grep -q '^3,.*,vm1,\[guest.kernel\],guest_fn_a$' "$OUT/kvm-imported.csv" || fail_later "imported kvm file: $(cat "$OUT/kvm-imported.csv")"

PERF=$(command -v perf || true)
if [ -z "$PERF" ]; then
	[ "$FAILED" = 0 ] || exit 1
	skip "perf is not installed: the perf kvm part passed, the rest needs perf record"
fi
note "a perf.data of this machine: import, merge, diff, damage"
export PERF_BUILDID_DIR="$OUT/buildid"
P=$OUT/tf.perf
"$PERF" record -q -g -o "$P" -- "$WL/threefuncs" 10 >"$OUT/perf-record.log" 2>&1 || { cat "$OUT/perf-record.log"; skip "perf record cannot record here"; }
"$D" report -q -i "$P" -l --format csv >"$OUT/tf.csv" 2>/dev/null || fail "report of the perf.data"
"$D" import "$P" -o "$OUT/tf.data" 2>"$OUT/import.err" || fail "import: $(cat "$OUT/import.err")"
grep -q "kernel symbols embedded" "$OUT/import.err" || fail_later "import did not embed this host's kernel symbols: $(cat "$OUT/import.err")"
"$D" report -q -i "$OUT/tf.data" -l --format csv >"$OUT/tf-imported.csv" 2>/dev/null || fail "report of the import"
cmp -s "$OUT/tf.csv" "$OUT/tf-imported.csv" || fail_later "import reports differently: $(diff "$OUT/tf.csv" "$OUT/tf-imported.csv" | head -n 6)"
record dp -g -- "$WL/threefuncs" 10
"$D" merge -q -o "$OUT/merged.data" "$OUT/dp.data" perf="$OUT/tf.data" || fail_later "merge of an import"
"$D" report -q -i "$OUT/merged.data" --domain perf -l --format csv 2>/dev/null | grep -q ',perf,threefuncs,func_a$' ||
	fail_later "merged file lacks the imported domain"
if "$D" merge -q -o "$OUT/bad.data" "$OUT/dp.data" perf="$P" 2>"$OUT/merge.err"; then
	fail_later "control: merge took a perf.data itself"
fi
grep -q 'is a perf.data: convert it first with `domprof import' "$OUT/merge.err" || fail_later "merge's hint: $(cat "$OUT/merge.err")"
"$D" diff "$P" "$OUT/dp.data" >"$OUT/diff.txt" 2>/dev/null || fail_later "diff of a perf.data against a domprof recording"
grep -q 'func_a' "$OUT/diff.txt" || fail_later "diff lacks func_a"
size=$(stat -c %s "$P")
head -c $((size * 2 / 3)) "$P" >"$OUT/cut.perf"
"$D" report -q -i "$OUT/cut.perf" -l >"$OUT/cut.txt" 2>"$OUT/cut.err" || fail_later "report of a cut perf.data failed"
grep -q 'damaged file:.*perf.data' "$OUT/cut.txt" || fail_later "cut perf.data: no damage said: $(grep WARN "$OUT/cut.txt" | head -n 3)"
"$D" report -q -i "$G" -l >"$OUT/kvm.txt" 2>"$OUT/kvm.txt.err"
grep -q '^# WARNING: perf.data: 1 records of unknown types skipped (type 99 x1); 1 header features of a newer perf not read$' "$OUT/kvm.txt" ||
	fail_later "report does not say what was skipped"
note "another architecture: its user stacks are not unwound, one line says so"
"$PERF" record -q --call-graph dwarf,4096 -c 1000000 -o "$OUT/dw.perf" -- "$WL/threefuncs" 3 >/dev/null 2>&1 ||
	fail "perf record --call-graph dwarf"
python3 - "$OUT/dw.perf" "$OUT/arm.perf" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
doff, dsz = struct.unpack_from('<QQ', b, 40)
flags, at = int.from_bytes(b[72:104], 'little'), doff + dsz
for bit in range(1, 256):
    if flags >> bit & 1:
        off, n = struct.unpack_from('<QQ', b, at)
        at += 16
        if bit == 6:  # HEADER_ARCH: a perf_header_string
            b[off + 4:off + 12] = b'aarch64\0'
open(sys.argv[2], 'wb').write(b)
PY
"$D" report -q -i "$OUT/arm.perf" -l >"$OUT/arm.txt" 2>/dev/null || fail_later "report of the relabelled file"
grep -q '^# WARNING: perf.data: [0-9]* user stacks of aarch64 samples not unwound (x86-64 only)$' "$OUT/arm.txt" ||
	fail_later "no line for another architecture's user stacks: $(grep WARN "$OUT/arm.txt")"
"$D" report -q -i "$OUT/dw.perf" -l >"$OUT/dw.txt" 2>/dev/null
grep -q 'not unwound' "$OUT/dw.txt" && fail_later "control: x86-64 user stacks said not unwound"
# user-mode samples of a DWARF recording carry no call chain at all (the
# chain held only perf's context marker): their unwinding once copied
# from a NULL chain (UBSan: "null pointer passed as argument 2"), also
# for the same samples in a domprof recording (the import)
"$D" report -q -i "$OUT/dw.perf" -l -g >/dev/null 2>"$OUT/dw-g.err" || fail_later "report -g of a DWARF perf.data: $(head -n 2 "$OUT/dw-g.err")"
"$D" import -q -f "$OUT/dw.perf" -o "$OUT/dw.data" && "$D" report -q -i "$OUT/dw.data" -l -g >/dev/null 2>"$OUT/dw-g2.err" ||
	fail_later "report -g of an imported DWARF perf.data: $(head -n 2 "$OUT/dw-g2.err")"
[ "$FAILED" = 0 ] || exit 1
echo "perfdata-commands: passed"
