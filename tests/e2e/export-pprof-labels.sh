#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `domprof export --format pprof --labels k=v,...`: on the golden
# multi-domain recording, the pprof file decoded by hand
# (lib/pprof_decode.py) carries host=web1 and cluster=eu-1 on every
# sample, next to its domain, comm and pid labels (all three domains'
# samples), and its sample counts are those of the export without
# labels. Control: the export without --labels has none of them. Go's
# pprof (when installed) lists the labels with -tags. Bad labels are
# usage errors (exit 2) that name the label.
source "$(dirname "$0")/../lib/common.bash"
G="$TOP/tests/fixtures/golden/merged.data"
DEC="$TOP/tests/e2e/lib/pprof_decode.py"

"$DOMPROF" export --format pprof -i "$G" -o "$OUT/plain.pb.gz" 2>"$OUT/plain.err" || { cat "$OUT/plain.err"; fail "export"; }
"$DOMPROF" export --format pprof -i "$G" --labels host=web1,cluster=eu-1 --labels zone=b \
	-o "$OUT/lab.pb.gz" 2>"$OUT/lab.err" || { cat "$OUT/lab.err"; fail "export --labels"; }
python3 "$DEC" "$OUT/plain.pb.gz" >"$OUT/plain.json" || fail "decode plain"
python3 "$DEC" "$OUT/lab.pb.gz" >"$OUT/lab.json" || fail "decode labelled"
python3 - "$OUT/lab.json" "$OUT/plain.json" <<'PY' || fail "labels"
import json, sys
def check(path):
    d = json.load(open(path))
    s = d["samples"]
    assert s, "no samples"
    bad = [x for x in s if x["labels"].get("host") != "web1" or x["labels"].get("cluster") != "eu-1"
           or x["labels"].get("zone") != "b"]
    doms = sorted({x["labels"].get("domain") for x in s})
    assert all({"domain", "comm", "pid"} <= set(x["labels"]) for x in s), "a sample lost domain/comm/pid"
    return s, bad, doms
s, bad, doms = check(sys.argv[1])
print("labelled: %d samples, %d without the labels, domains %s" % (len(s), len(bad), doms))
assert not bad, bad[:2]
assert len(doms) >= 2, doms
p, pbad, _ = check(sys.argv[2])
print("control (no --labels): %d of %d samples without them" % (len(pbad), len(p)))
assert len(pbad) == len(p), "control: the plain export carries the labels"
assert sorted(x["values"] for x in s) == sorted(x["values"] for x in p), "values differ"
PY
if command -v go >/dev/null; then
	export GOCACHE="${GOCACHE:-$HOME/.cache/go-build}" HOME="${HOME:-/root}"
	go tool pprof -tags "$OUT/lab.pb.gz" >"$OUT/tags.txt" 2>&1 || { cat "$OUT/tags.txt"; fail "go tool pprof -tags"; }
	grep -A2 '^ *host:' "$OUT/tags.txt" | grep -q web1 || { cat "$OUT/tags.txt"; fail "go pprof: no host: web1"; }
	grep -A2 '^ *cluster:' "$OUT/tags.txt" | grep -q eu-1 || fail "go pprof: no cluster: eu-1"
	echo "go tool pprof -tags: host and cluster listed"
fi
for bad in "host" "=x" "1a=b" "host=" "domain=x" "a=b,a=c" "a-b=c" "a=b,,c=d"; do
	"$DOMPROF" export --format pprof -i "$G" --labels "$bad" -o "$OUT/bad.pb.gz" >"$OUT/bad.log" 2>&1
	rc=$?
	[ $rc = 2 ] || { cat "$OUT/bad.log"; fail "--labels '$bad': exit $rc, want 2"; }
	head -n 1 "$OUT/bad.log"
done
"$DOMPROF" export --format folded -i "$G" --labels a=b >/dev/null 2>"$OUT/bad.log"
[ $? = 2 ] || fail "--labels with folded accepted"
echo "export-pprof-labels: ok"
