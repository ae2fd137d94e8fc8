#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The kernel matrix, offline: every kernel series Debian's archive carries
# in each flavor (tests/vm/matrix.sh: 5.10 to 7.3 x generic, cloud, rt),
# each kernel's image (its vmlinux, unpacked from the vmlinuz) decoded as
# guest memory, nothing booted for the check. Known answers per kernel:
#   kallsyms (src/guest/ksyms.c) at the link address: every line of the
#     kernel's own /proc/kallsyms (one nokaslr boot, cached next to it) at
#     the same address with the same type, at most 64 lines more; _text at
#     0xffffffff81000000; < 12 MiB read; the layout found is the series'
#     one (VM_MATRIX_KSYMS); the build id equals readelf -n's;
#   ORC (src/guest/orc.c): the entry count equals both ELF sections'
#     (.orc_unwind_ip / 4, .orc_unwind / 6); the layout told from the
#     tables is the series' one (VM_MATRIX_ORC); >= 99% of the text
#     functions' first instruction say "sp+8, a CALL frame";
#   BTF (src/guest/layout.c, test-tool guest-layout): the structure
#     layouts the passive domain reads processes with resolve from the
#     kernel's .BTF, each offset (task_struct's tasks, pid, tgid, comm,
#     mm, real_parent, flags; mm_struct.pgd) equal to the one a small
#     BTF reader in this script finds, comm 16 bytes, a per-CPU current
#     task named.
# Controls that must fail, once per distinct layout: the kallsyms decode
# at a KASLR-like shift (0x3e00000) compared with a wrong shift
# (0x3c00000), a flipped byte in the token table and in the first table
# (refused, or decoded to symbols that disagree), the host cache's reuse of
# a flipped token table (refused as stale, the unflipped one taken); ORC's
# functions shifted by 0x40 (< 50%) and every other ORC layout forced
# (refused with a line saying so); per flavor, the BTF truncated to half
# and with its magic flipped (refused with one line).
# Ground truth is made once per kernel (vm_matrix_prep: a nokaslr boot,
# two at a time). Skips (77) only when Debian's archive cannot be reached
# and a kernel is not cached; any other missing kernel fails.
source "$(dirname "$0")/../lib/common.bash"
set -o pipefail
[ -x "$TT" ] || fail "$TT missing (run 'make fixtures')"
command -v python3 >/dev/null || skip "python3 is missing"
command -v readelf >/dev/null || skip "readelf (binutils) is missing"
source "$TOP/tests/vm/matrix.sh"
SHIFT=0x3e00000
t0=$SECONDS

# The matrix's kernels with their ground truth.
(TEST_OUT=$OUT; vm_matrix_prep 2) >"$OUT/prep.txt" 2>"$OUT/prep.err"
rc=$?
if [ $rc != 0 ]; then
	grep -v '^ok ' "$OUT/prep.txt" | head -n 8
	[ $rc = 3 ] && skip "Debian's archive is unreachable and $(grep -c '^missing' "$OUT/prep.txt") matrix kernels are not cached"
	fail "$(grep -c '^missing' "$OUT/prep.txt") matrix kernels missing (see $OUT/prep.txt)"
fi
mapfile -t kernels < <(awk '$1 == "ok" { print $2, $3, $4 }' "$OUT/prep.txt")
[ ${#kernels[@]} = "$(vm_matrix_list | wc -l)" ] || fail "only ${#kernels[@]} of $(vm_matrix_list | wc -l) matrix kernels ready"
note "matrix: ${#kernels[@]} kernels ready ($((SECONDS - t0)) s)"

# stat FILE KEY: a key=value of a stats line
stat() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$1" | head -n 1; }
secsize() { echo $((0x$(readelf -SW "$1" | awk -v s="$2" '$2 == s { print $6 }'))); }

# decode S F DIR: the per-kernel decodes into $OUT/S-F/ (no verdicts here)
decode() {
	local o=$OUT/$1-$2 v=$3/vmlinux
	mkdir -p "$o"
	"$TT" guest-ksyms "vmlinux:$v" >"$o/ksyms.txt" 2>"$o/ksyms.err"; echo $? >"$o/ksyms.rc"
	"$TT" guest-ksyms "vmlinux:$v" --buildid >"$o/id.txt" 2>"$o/id.err"; echo $? >"$o/id.rc"
	readelf -n "$v" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -n 1 >"$o/id.want"
	"$TT" guest-orc "vmlinux:$v" "$3/kallsyms-nokaslr.txt" >"$o/orc.txt" 2>"$o/orc.err"; echo $? >"$o/orc.rc"
	echo "$(($(secsize "$v" .orc_unwind_ip) / 4)) $(($(secsize "$v" .orc_unwind) / 6))" >"$o/orc.want"
	"$TT" guest-layout "$v" >"$o/btf.txt" 2>"$o/btf.err"; echo $? >"$o/btf.rc"
}
pids=()
for k in "${kernels[@]}"; do
	read -r s f d <<<"$k"
	decode "$s" "$f" "$d" &
	pids+=($!)
	if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
wait
note "decoded ($((SECONDS - t0)) s)"

# compare PAIR...: PAIR is TRUTH=DECODED:SHIFT; whether every truth line
# (non-module) is in DECODED with its address (when in the kernel image
# area) plus SHIFT and the same type, and DECODED has at most 64 lines
# more. One line a pair: "agree|disagree missing=N extra=N truth=N
# decoded=N DECODED:SHIFT". Consecutive pairs of one truth parse it once.
compare() { python3 "$TOP/tests/e2e/lib/ksyms-compare.py" "$@"; }
verdict() { awk -v p="$1" '$NF == p { print $1; exit }' "$OUT/compare.txt"; }
pct() { echo $(( $(stat "$1" call8) * 100 / $(stat "$1" funcs) )); }

# btf_offsets VMLINUX...: the known answer of the BTF check, read from
# the .BTF section by this script alone (not libbpf, not layout.c):
# "task tasks=.. pid=.. tgid=.. comm=.. mm=.. real_parent=.. flags=..
# pgd=.. VMLINUX", members inside anonymous structs and unions included.
btf_offsets() {
	python3 - "$@" <<'PY'
import struct, sys
def btf_of(path):
    b = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
    def sh(i):
        return struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize)
    stro = sh(shstrndx)[4]
    for i in range(shnum):
        s = sh(i)
        name = b[stro + s[0]: b.index(b"\0", stro + s[0])]
        if name == b".BTF":
            return b[s[4]: s[4] + s[5]]
    raise SystemExit(path + ": no .BTF")
EXTRA = {1: 4, 3: 12, 14: 4, 17: 4}
PERV = {4: 12, 5: 12, 6: 8, 13: 8, 15: 12, 19: 12}
def offsets(path):
    d = btf_of(path)
    magic, ver, fl, hl, to, tl, so, sl = struct.unpack_from("<HBBIIIII", d, 0)
    assert magic == 0xeb9f
    types, strs = d[hl + to: hl + to + tl], d[hl + so: hl + so + sl]
    name = lambda o: strs[o: strs.index(b"\0", o)].decode()
    T = [None]
    p = 0
    while p < len(types):
        no, info, st = struct.unpack_from("<III", types, p)
        kind, vlen, kflag = (info >> 24) & 0x1f, info & 0xffff, info >> 31
        p += 12
        mem = []
        if kind in (4, 5):
            for j in range(vlen):
                mn, mt, mo = struct.unpack_from("<III", types, p + 12 * j)
                mem.append((mn, mt, (mo & 0xffffff) if kflag else mo))
        p += EXTRA.get(kind, 0) + PERV.get(kind, 0) * vlen
        T.append((no, kind, st, mem))
    def find(sname, fields):
        for t in T[1:]:
            if t[1] == 4 and t[0] and name(t[0]) == sname and t[3]:
                out = {}
                def walk(members, base):
                    for mn, mt, mo in members:
                        if mn:
                            n = name(mn)
                            if n in fields and n not in out:
                                out[n] = (base + mo) // 8
                        else:
                            u = T[mt]
                            while u[1] in (8, 9, 10, 11, 18):
                                u = T[u[2]]
                            if u[1] in (4, 5):
                                walk(u[3], base + mo)
                walk(t[3], 0)
                return out
        return {}
    ts = find("task_struct", ("tasks", "pid", "tgid", "comm", "mm", "real_parent", "flags"))
    mm = find("mm_struct", ("pgd",))
    return ts, mm
for path in sys.argv[1:]:
    ts, mm = offsets(path)
    print("task tasks=%d pid=%d tgid=%d comm=%d mm=%d real_parent=%d flags=%d pgd=%d %s" % (
        ts["tasks"], ts["pid"], ts["tgid"], ts["comm"], ts["mm"], ts["real_parent"], ts["flags"], mm["pgd"], path))
PY
}
# The kernels' comparisons and the BTF answers run in the background
# (python, the other CPU) while the controls run.
mains=() vms=()
for k in "${kernels[@]}"; do
	read -r s f d <<<"$k"
	mains+=("$d/kallsyms-nokaslr.txt=$OUT/$s-$f/ksyms.txt:0") vms+=("$d/vmlinux")
done
{ btf_offsets "${vms[@]}" >"$OUT/btf-known.txt" && compare "${mains[@]}" >"$OUT/compare1.txt"; } & p1=$!
bg_pids+=($p1)

# Controls, once per distinct kallsyms layout, ORC layout and flavor.
declare -A seen_ks seen_orc seen_fl
shifted=() ctl=()
for k in "${kernels[@]}"; do
	read -r s f d <<<"$k"
	o=$OUT/$s-$f v=$d/vmlinux gt=$d/kallsyms-nokaslr.txt
	[ "$(cat "$o/ksyms.rc")" = 0 ] || fail "$s $f: kallsyms decoding failed: $(tail -n 1 "$o/ksyms.err")"
	lay=$(sed -n 's/.* layout=//p' "$o/ksyms.err")
	[ -n "$lay" ] && [ -z "${seen_ks[$lay]:-}" ] || continue
	seen_ks[$lay]=1
	note "kallsyms layout '$lay': controls on $s $f"
	"$TT" guest-ksyms "vmlinux:$v,shift=$SHIFT" >"$o/shift.txt" 2>"$o/shift.err" ||
		fail "$s $f shift $SHIFT: decoding failed: $(tail -n 1 "$o/shift.err")"
	want=$(printf '0x%x' $((0xffffffff81000000 + SHIFT)))
	[ "$(stat "$o/shift.err" text)" = "$want" ] || fail "$s $f: _text $(stat "$o/shift.err" text) at shift $SHIFT, expected $want"
	[ "$(sed -n 's/.* layout=//p' "$o/shift.err")" = "$lay" ] || fail "$s $f: another layout at shift $SHIFT"
	shifted+=("$gt=$o/shift.txt:$SHIFT") ctl+=("$gt=$o/shift.txt:0x3c00000")
	# the host cache's reuse at another shift; a flipped token table there
	tok=$(stat "$o/shift.err" tokens) tab=$(stat "$o/shift.err" tables)
	"$TT" guest-ksyms "vmlinux:$v" --reuse "vmlinux:$v,shift=$SHIFT" >/dev/null 2>"$o/reuse.err" ||
		fail "$s $f: reuse at another shift refused: $(tail -n 1 "$o/reuse.err")"
	grep -q "^reuse: ok .* same=1 " "$o/reuse.err" || fail "$s $f: reuse: $(tail -n 1 "$o/reuse.err")"
	"$TT" guest-ksyms "vmlinux:$v" --reuse "vmlinux:$v,shift=$SHIFT" --flip "$(printf '0x%x' $((tok + 40)))" \
		>/dev/null 2>"$o/reuse-flip.err" && fail "$s $f control: reuse accepted a flipped token table"
	grep -q "^reuse: refused (stale)" "$o/reuse-flip.err" || fail "$s $f control: flipped reuse: $(tail -n 1 "$o/reuse-flip.err")"
	echo "  reuse at another shift: same table; flipped token table: refused as stale"
	for spot in "token:$((tok + 40))" "first:$((tab + 4000))"; do
		at=$(printf '0x%x' "${spot#*:}") x=$o/flip-${spot%%:*}.txt
		if "$TT" guest-ksyms "vmlinux:$v,shift=$SHIFT" --flip "$at" >"$x" 2>"$x.err"; then
			ctl+=("$gt=$x:$SHIFT")
			echo "  control: flipped byte in the ${spot%%:*} table at $at: decoded (compared below)"
		else
			echo "  control: flipped byte in the ${spot%%:*} table at $at: refused: $(tail -n 1 "$x.err")"
		fi
	done
done
for k in "${kernels[@]}"; do
	read -r s f d <<<"$k"
	o=$OUT/$s-$f v=$d/vmlinux gt=$d/kallsyms-nokaslr.txt
	lay=$(stat "$o/orc.err" layout)
	[ "$(cat "$o/orc.rc")" = 0 ] && [ -n "$lay" ] || fail "$s $f: reading the ORC tables failed: $(tail -n 1 "$o/orc.err")"
	if [ -z "${seen_orc[$lay]:-}" ]; then
		seen_orc[$lay]=1
		note "ORC layout $lay: controls on $s $f"
		"$TT" guest-orc --shift=0x40 "vmlinux:$v" "$gt" >/dev/null 2>"$o/orc-shift.err" || fail "$s $f: ORC shift control did not run"
		ps=$(pct "$o/orc-shift.err")
		echo "  control: functions shifted by 0x40: $ps% sp+8 CALL"
		[ "$ps" -lt 50 ] || fail "$s $f control: shifted functions still match ($ps%)"
		for other in v1 v2 v3 v4; do
			[ $other = "$lay" ] && continue
			"$TT" guest-orc --layout=$other "vmlinux:$v" "$gt" >/dev/null 2>"$o/orc-$other.err" &&
				fail "$s $f control: ORC layout $other forced was taken"
			grep -q "ORC layout $other refused\|ORC $other refused" "$o/orc-$other.err" ||
				fail "$s $f control: ORC $other forced failed without saying it was refused: $(tail -n 1 "$o/orc-$other.err")"
			echo "  control: $other forced: $(tail -n 1 "$o/orc-$other.err" | sed 's/^test-tool guest-orc: //')"
		done
	fi
	if [ -z "${seen_fl[$f]:-}" ]; then
		seen_fl[$f]=1
		note "BTF controls on $s $f"
		n=$(stat "$o/btf.txt" bytes)
		for c in "--truncate=$((n / 2))" "--flip=0"; do
			"$TT" guest-layout "$c" "$v" >/dev/null 2>"$o/btf-ctl.err" && fail "$s $f control: BTF with $c resolved"
			[ "$(wc -l <"$o/btf-ctl.err")" = 1 ] && grep -q '^test-tool guest-layout: ' "$o/btf-ctl.err" ||
				fail "$s $f control: BTF with $c: not one line saying why: $(cat "$o/btf-ctl.err")"
			echo "  control: BTF $c: $(sed 's/^test-tool guest-layout: //' "$o/btf-ctl.err")"
		done
	fi
done
# the shifted decodes and the controls, beside the kernels' comparisons
compare "${shifted[@]}" "${ctl[@]}" >"$OUT/compare2.txt" || fail "the comparison failed to run"
wait $p1 || fail "the comparison or the BTF reading failed to run"
cat "$OUT/compare1.txt" "$OUT/compare2.txt" >"$OUT/compare.txt"
for c in "${ctl[@]}"; do
	[ "$(verdict "${c#*=}")" = disagree ] || fail "control: ${c#*=} agrees with /proc/kallsyms ($(grep -F "${c#*=}" "$OUT/compare.txt"))"
done
note "compared ($((SECONDS - t0)) s)"

# The verdicts, one line per kernel.
printf '%-5s %-12s %-62s %8s %-4s %s\n' series flavor "kallsyms layout" symbols orc "btf task_struct: tasks pid comm mm"
for k in "${kernels[@]}"; do
	read -r s f d <<<"$k"
	o=$OUT/$s-$f
	lay=$(sed -n 's/.* layout=//p' "$o/ksyms.err")
	[ "$(verdict "$o/ksyms.txt:0")" = agree ] ||
		fail "$s $f: decoded symbols disagree with /proc/kallsyms: $(grep -F "$o/ksyms.txt:0" "$OUT/compare.txt")"
	if [ "$(verdict "$o/shift.txt:$SHIFT")" = disagree ]; then
		fail "$s $f: decoded at shift $SHIFT, the symbols disagree with /proc/kallsyms"
	fi
	[ "$(stat "$o/ksyms.err" text)" = 0xffffffff81000000 ] || fail "$s $f: _text $(stat "$o/ksyms.err" text)"
	# (7.1 rt reads 10.4 MB: its first scan, from where the probes put the
	# tables, does not decode, and the second from the start of rodata does)
	b=$(stat "$o/ksyms.err" bytes)
	[ "$b" -lt $((12 << 20)) ] || fail "$s $f: $b bytes of guest memory read for kallsyms (bound 12 MiB)"
	want=${VM_MATRIX_KSYMS[$s]:-}
	[ -n "$want" ] || fail "$s $f: decodes to kallsyms layout '$lay', the matrix names none for $s"
	[ "$lay" = "$want" ] || fail "$s $f: kallsyms layout '$lay', expected '$want'"
	[ "$(cat "$o/id.rc")" = 0 ] || fail "$s $f: build id: $(tail -n 1 "$o/id.err")"
	[ -s "$o/id.want" ] && [ "$(cat "$o/id.txt")" = "$(cat "$o/id.want")" ] ||
		fail "$s $f: build id $(cat "$o/id.txt"), the ELF says $(cat "$o/id.want")"
	read -r nip nent <"$o/orc.want"
	n=$(stat "$o/orc.err" entries) ol=$(stat "$o/orc.err" layout)
	[ "$n" = "$nip" ] && [ "$n" = "$nent" ] || fail "$s $f: $n ORC entries, the ELF sections hold $nip ips and $nent entries"
	[ "$ol" = "${VM_MATRIX_ORC[$s]}" ] || fail "$s $f: ORC layout $ol, expected ${VM_MATRIX_ORC[$s]}"
	p=$(pct "$o/orc.err")
	[ "$p" -ge 99 ] || fail "$s $f: only $p% of function starts are sp+8 CALL in the ORC table"
	[ "$(cat "$o/btf.rc")" = 0 ] || fail "$s $f: BTF: $(tail -n 1 "$o/btf.err")"
	read -r -a t < <(sed -n 's/^task //p' "$o/btf.txt" | tr ' =/' '   ')
	# task tasks A pid B tgid C comm D LEN mm E real_parent F flags G start_time H
	[ "${t[8]}" = 16 ] || fail "$s $f: BTF: comm is ${t[8]} bytes"
	got="task tasks=${t[1]} pid=${t[3]} tgid=${t[5]} comm=${t[7]} mm=${t[10]} real_parent=${t[12]} flags=${t[14]} pgd=$(stat "$o/btf.txt" pgd)"
	known=$(grep -F " $d/vmlinux" "$OUT/btf-known.txt" | sed 's/ [^ ]*$//')
	[ "$got" = "$known" ] || fail "$s $f: BTF: layout.c says '$got', the BTF read here says '$known'"
	cur=$(sed -n 's/^current //p' "$o/btf.txt")
	[ "$cur" != "none+0" ] || fail "$s $f: BTF: no per-CPU current task"
	printf '%-5s %-12s %-62s %8s %-4s %s\n' "$s" "$f" "$lay" "$(stat "$o/ksyms.err" symbols)" "$ol" \
		"ok: ${t[1]} ${t[3]} ${t[7]} ${t[10]} ($p% sp+8)"
done
echo "${#kernels[@]} matrix kernels: kallsyms, build id, ORC and BTF decoded from the image match ($((SECONDS - t0)) s)"
