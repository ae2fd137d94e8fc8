#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `domprof export --format pprof` read back by Go's own pprof (`go tool
# pprof`, Debian package golang-go): on a -g recording of threefuncs,
# pprof's top function and its flat share equal the first row of
# `domprof report -l --format csv` (within 0.1 percentage point: pprof
# rounds to two decimals), in both sample types (samples and cpu
# nanoseconds); the labels domain/comm/pid and the call chain
# (main -> func_a) survive; an empty profile is still a profile pprof reads.
source "$(dirname "$0")/../lib/common.bash"
cd "$TOP"
D="$DOMPROF"; T="$OUT"
if ! bash tests/browser/deps.sh go; then
	skip "go (package golang-go) missing and could not be installed"
fi
export GOCACHE="${GOCACHE:-$HOME/.cache/go-build}" HOME="${HOME:-/root}"

"$D" record -F 1000 -g -o "$T/t.data" -- build/workloads/threefuncs 100 >"$T/record.out" 2>"$T/record.err" ||
	{ cat "$T/record.err"; fail "record"; }
"$D" export --format pprof -i "$T/t.data" -o "$T/t.pb.gz" 2>"$T/export.err" || { cat "$T/export.err"; fail "export"; }
gzip -t "$T/t.pb.gz" || fail_later "not gzip"
echo "pprof file: $(stat -c %s "$T/t.pb.gz") bytes"
"$D" report -i "$T/t.data" -l --format csv >"$T/report.csv" 2>/dev/null || fail_later "report"
IFS=, read -r r_samples r_pct r_domain r_image r_symbol < <(sed -n 2p "$T/report.csv")
echo "report top: $r_symbol $r_pct% ($r_samples samples)"

for idx in samples cpu; do
	go tool pprof -top -sample_index=$idx "$T/t.pb.gz" >"$T/top-$idx.txt" 2>"$T/top-$idx.err" ||
		{ cat "$T/top-$idx.err"; fail_later "go tool pprof -top -sample_index=$idx"; continue; }
	# first row after the header "flat  flat%   sum%  cum   cum%"
	row=$(awk '/flat%/ {getline; print; exit}' "$T/top-$idx.txt")
	echo "pprof top ($idx): $row"
	p_pct=$(echo "$row" | awk '{print $2}' | tr -d %)
	p_sym=$(echo "$row" | awk '{print $6}')
	[ "$p_sym" = "$r_symbol" ] || fail_later "$idx: pprof top '$p_sym' != report top '$r_symbol'"
	awk -v a="$p_pct" -v b="$r_pct" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.1) }' ||
		fail_later "$idx: pprof share $p_pct% != report $r_pct%"
done
grep -q "Type: samples" "$T/top-samples.txt" || fail_later "sample type samples not shown"
# flat samples of the top row equal report's count
flat=$(awk '/flat%/ {getline; print $1; exit}' "$T/top-samples.txt")
[ "$flat" = "$r_samples" ] || fail_later "pprof flat $flat != report $r_samples"

go tool pprof -tags "$T/t.pb.gz" >"$T/tags.txt" 2>&1 || fail_later "pprof -tags"
grep -q "domain" "$T/tags.txt" && grep -q "host" "$T/tags.txt" || fail_later "domain label missing"
grep -q "comm" "$T/tags.txt" && grep -q "threefuncs" "$T/tags.txt" || fail_later "comm label missing"
grep -q "pid" "$T/tags.txt" || fail_later "pid label missing"
go tool pprof -traces "$T/t.pb.gz" >"$T/traces.txt" 2>&1 || fail_later "pprof -traces"
awk '/func_a/ {getline; print; exit}' "$T/traces.txt" | grep -q "main" || fail_later "func_a's caller main not in traces"

"$D" export --format pprof -i "$T/t.data" --comm no-such-command -o "$T/empty.pb.gz" 2>"$T/empty.err" || fail_later "empty export exit"
grep -q "profile is empty (0 samples match)" "$T/empty.err" || fail_later "empty warning"
go tool pprof -top "$T/empty.pb.gz" >"$T/empty-top.txt" 2>&1 || { cat "$T/empty-top.txt"; fail_later "pprof cannot read the empty profile"; }
[ $FAILED = 0 ] && echo "export-pprof: all checks passed"
exit $FAILED
