#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The layers of src/ (scripts/check-layers, docs/architecture.md
# "Layers"): this tree keeps them. Controls that must fail: a copy of
# src/ with one upward include (format/ including output/), and one with
# a folder no layer names.
source "$(dirname "$0")/../lib/common.bash"
set -o pipefail
"$TOP/scripts/check-layers" "$TOP/src" 2>"$OUT/tree.err" || fail "the tree breaks its layers: $(head -n 3 "$OUT/tree.err")"
cp -r "$TOP/src" "$OUT/up"
echo '#include "output/report.h"' >>"$OUT/up/format/scan.c"
"$TOP/scripts/check-layers" "$OUT/up" 2>"$OUT/up.err"; rc=$?
[ $rc = 1 ] || fail "control: an upward include passed (exit $rc)"
grep -q '^check-layers: format/scan.c:[0-9]* includes "output/report.h": format may include only from util and itself$' "$OUT/up.err" ||
	fail "control: no line names the upward include: $(cat "$OUT/up.err")"
cp -r "$TOP/src" "$OUT/new" && mkdir "$OUT/new/stray"
"$TOP/scripts/check-layers" "$OUT/new" 2>"$OUT/new.err"; rc=$?
[ $rc = 2 ] && grep -q 'src/stray is in no layer' "$OUT/new.err" || fail "control: a folder in no layer passed (exit $rc)"
echo "layers kept: $(ls -d "$TOP"/src/*/ | wc -l) folders; upward include and unlisted folder refused"
