#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Image and name resolution end to end:
#  - shlib: lib_work_burn() in a shared library is named with libwork.so as
#    its image and holds 75% +- 7 of the workload's samples (3 of 4 calls),
#    main_work_burn() in the executable 25% +- 7;
#  - piework: a PIE executable (checked with readelf) -- pie_hot() 90% +- 5
#    and pie_cold() 10% +- 5 of the workload's samples, image piework;
#  - cppwork: the C++ method is shown demangled,
#    cppwork::Burner::spin(unsigned long), image cppwork, >= 80%.
# Shares are of the samples in the workload's own images (executable and
# libwork.so), so kernel ticks do not move them.
source "$(dirname "$0")/lib/report-common.bash"
need_workload shlib libwork.so piework cppwork

check() { # DATA IMAGES(|-separated) SYMBOL@IMAGE=WANT:TOL...
	local data=$1 imgs=$2; shift 2
	"$DOMPROF" report -i "$data" -l --format csv >"$data.csv" || fail "report $data"
	head -n 12 "$data.csv"
	python3 - "$data.csv" "$imgs" "$@" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
imgs = sys.argv[2].split("|")
mine = [r for r in rows if r["image"] in imgs]
tot = sum(int(r["samples"]) for r in mine)
assert tot >= 300, "only %d samples in %s" % (tot, imgs)
bad = False
for spec in sys.argv[3:]:
    key, rng = spec.rsplit("=", 1)
    sym, img = key.rsplit("@", 1)
    want, tol = map(float, rng.split(":"))
    n = sum(int(r["samples"]) for r in mine if r["symbol"] == sym and r["image"] == img)
    got = 100.0 * n / tot
    ok = abs(got - want) <= tol
    print("%-45s %-12s %6.2f%% (want %g +- %g) %s" % (sym, img, got, want, tol, "ok" if ok else "FAIL"))
    bad |= not ok
sys.exit(1 if bad else 0)
PY
}

note "shared library"
record shlib -F 1000 -- "$WL/shlib" 300
check "$OUT/shlib.data" "shlib|libwork.so" "lib_work_burn@libwork.so=75:7" "main_work_burn@shlib=25:7" ||
	fail "shared library attribution"
"$DOMPROF" report -i "$OUT/shlib.data" | tee "$OUT/shlib.img" | sed -n '/^samples/,$p' | head
grep -Eq '^  [0-9]+ +[0-9.]+ +libwork\.so$' "$OUT/shlib.img" || fail "libwork.so not a dependent image of shlib"

note "PIE executable"
readelf -h "$WL/piework" | grep -q 'DYN' || fail "piework is not PIE"
record pie -F 1000 -- "$WL/piework" 150
check "$OUT/pie.data" "piework" "pie_hot@piework=90:5" "pie_cold@piework=10:5" || fail "PIE attribution"

note "C++ demangling"
record cpp -F 1000 -- "$WL/cppwork" 1500
check "$OUT/cpp.data" "cppwork" "cppwork::Burner::spin(unsigned long)@cppwork=100:20" || fail "C++ method"
grep -q '_ZN7cppwork' "$OUT/cpp.data.csv" && fail "mangled name in report"
echo "report-images: all checks passed"
