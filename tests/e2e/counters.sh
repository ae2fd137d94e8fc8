#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# COUNTERS records (format 1.3), end to end: files written with the real
# writer (test-tool gen-counters), then `info` lists each domain's totals
# (several records of one domain add up), `dump` prints the records,
# `report` gives the unwind summary line, and `merge` keeps every input's
# counters under that domain's new id and name. Controls: the same checks
# on an input alone (its partner's counters missing) must fail, and the
# writer refuses a bad name.
source "$(dirname "$0")/../lib/common.bash"
D=$DOMPROF

"$TT" gen-counters "$OUT/h.data" \
	"1:unwind.chains=10,unwind.stop.end=6,unwind.stop.unreadable=4" \
	"1:unwind.chains=5,unwind.stop.end=5" "0:host.thing=1" || fail "gen-counters h.data"
"$TT" gen-counters "$OUT/g.data" \
	"1:unwind.chains=7,unwind.stop.user=7" "1:unwind.chains=1,unwind.stop.loop=1" \
	"0:unwind.chains=3,unwind.stop.end=3" || fail "gen-counters g.data"

# has FILE LINE: FILE holds LINE exactly (whitespace runs as one space)
has() { tr -s ' ' <"$1" | grep -qxF -- "$2"; }

# info: one line per (domain, counter), summed over the records
"$D" info "$OUT/h.data" >"$OUT/h.info" 2>&1 || fail "info h.data: $(cat "$OUT/h.info")"
for line in " 0 host host.thing 1" " 1 vm1 unwind.chains 15" " 1 vm1 unwind.stop.end 11" \
	    " 1 vm1 unwind.stop.unreadable 4" " COUNTERS 3"; do
	has "$OUT/h.info" "$line" || { cat "$OUT/h.info"; fail "info h.data: no line '$line'"; }
done
grep -Eq "format 1\.([3-9]|[1-9][0-9])\)" "$OUT/h.info" || fail "info h.data: not format 1.3 or later"

# dump: each record with its domain
"$D" dump --type COUNTERS "$OUT/h.data" >"$OUT/h.dump" 2>&1 || fail "dump h.data"
[ "$(wc -l <"$OUT/h.dump")" = 3 ] || { cat "$OUT/h.dump"; fail "dump: not 3 COUNTERS lines"; }
grep -q "dom=1 *COUNTERS *n=3 unwind.chains=10 unwind.stop.end=6 unwind.stop.unreadable=4$" \
	"$OUT/h.dump" || { cat "$OUT/h.dump"; fail "dump: first record"; }

# report: the unwind summary of vm1, none for the host (no unwind.chains)
"$D" report -q -i "$OUT/h.data" >"$OUT/h.report" 2>&1 || fail "report h.data"
grep -qxF "# vm1: 15 call chains unwound from outside, 73.3% complete (end 73.3%); cut: unreadable 26.7%" \
	"$OUT/h.report" || { cat "$OUT/h.report"; fail "report: no unwind line for vm1"; }
[ "$(grep -c "call chains unwound" "$OUT/h.report")" = 1 ] || fail "report: an unwind line too many"

# merge: g.data's domain 0 becomes "g", its vm1 "g.vm1"; each keeps its sums
"$D" merge -o "$OUT/m.data" "$OUT/h.data" g="$OUT/g.data" >/dev/null 2>&1 || fail "merge"
"$D" info "$OUT/m.data" >"$OUT/m.info" 2>&1 || fail "info m.data"
want=(" 0 host host.thing 1" " 1 vm1 unwind.chains 15" " 1 vm1 unwind.stop.end 11"
      " 1 vm1 unwind.stop.unreadable 4" " 2 g unwind.chains 3" " 2 g unwind.stop.end 3"
      " 3 g.vm1 unwind.chains 8" " 3 g.vm1 unwind.stop.loop 1" " 3 g.vm1 unwind.stop.user 7")
check_merged() {
	for line in "${want[@]}"; do has "$1" "$line" || { echo "no line '$line'"; return 1; }; done
	[ "$(sed -n '/^counters:/,/^stats:/p' "$1" | grep -c '^  ')" = ${#want[@]} ] ||
		{ echo "not ${#want[@]} counter lines"; return 1; }
}
check_merged "$OUT/m.info" || { cat "$OUT/m.info"; fail "info m.data: counters not kept per domain"; }
"$D" report -q -i "$OUT/m.data" >"$OUT/m.report" 2>&1 || fail "report m.data"
for line in "# g: 3 call chains unwound from outside, 100.0% complete (end 100.0%)" \
	    "# g.vm1: 8 call chains unwound from outside, 87.5% complete (user 87.5%); cut: loop 12.5%"; do
	grep -qxF "$line" "$OUT/m.report" || { cat "$OUT/m.report"; fail "report m.data: no '$line'"; }
done
"$D" report -q -l --format json -i "$OUT/m.data" >"$OUT/m.json" 2>"$OUT/m.json.err" || fail "report json"
python3 - "$OUT/m.json" <<'PY' || fail "report json: counters"
import json, sys
d = {x["name"]: x.get("counters") for x in json.load(open(sys.argv[1]))["domains"]}
assert d["g.vm1"] == {"unwind.chains": 8, "unwind.stop.loop": 1, "unwind.stop.user": 7}, d
assert d["vm1"]["unwind.chains"] == 15 and d["host"] == {"host.thing": 1}, d
PY
echo "merged: every input's counters under its domain"

# controls: the merged checks fail on an input alone, and on a merge of
# h.data with itself (its sums, not g's)
"$D" info "$OUT/g.data" >"$OUT/g.info" 2>&1
check_merged "$OUT/g.info" >/dev/null && fail "control: g.data alone passes the merged check"
"$D" merge -o "$OUT/hh.data" "$OUT/h.data" g="$OUT/h.data" >/dev/null 2>&1 || fail "merge hh"
"$D" info "$OUT/hh.data" >"$OUT/hh.info" 2>&1
check_merged "$OUT/hh.info" >/dev/null && fail "control: h+h passes the merged check"
# and the writer refuses a name outside [a-z0-9._-]
"$TT" gen-counters "$OUT/bad.data" "1:Unwind.chains=1" 2>"$OUT/bad.err" &&
	fail "control: the writer took an upper-case name"
grep -q "refused by the writer" "$OUT/bad.err" || fail "control: refusal not said"
echo "controls: an input alone and h+h fail the merged check; a bad name is refused"
echo ok
