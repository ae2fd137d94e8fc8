#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# runs alone
# An active domain's --call-graph dwarf (docs/active.md, docs/dwarf-notes.md
# "Active guests"), on the loopback: a `domprof agent` on this machine is
# the "guest" (`--domain self=agent:127.0.0.1:PORT`; its recorder is
# system-wide, hence "runs alone") while the host runs a private copy of
# nofp (no frame pointers, junk in rbp; main -> walk -> spin) as the
# recorded command. Checks:
#  - the host asks for DWARF stacks and the agent's recorder takes them
#    (`--call-graph dwarf,8192`): the agent domain's samples keep their
#    user registers and stacks; nofp's ELF and libc's (the image of the
#    return addresses below main, which no sampled ip needs) are embedded
#    in the domain by build-id, before the domain's first sample;
#  - with the copy of nofp deleted before the report (only the shipped
#    blob can serve), the agent domain's folded export has
#    __libc_start_call_main;main;walk;spin in >= 95% of spin's samples,
#    report -g names walk as spin's caller and counts >= 95% of nofp's
#    stacks unwound;
#  - controls (each <= 5%): the same file with DOMPROF_DWARF_UNWIND=0; a
#    -g recording through the agent; a recording whose nofp copy was
#    deleted before the agent collected (not shipped: the agent says so,
#    no blob, nothing on disk to unwind against; its samples have no
#    names then, so the measure is the share of its stacks that reach
#    libc's __libc_start_call_main, >= 95% in the first recording).
source "$(dirname "$0")/../lib/common.bash"
source "$(dirname "$0")/lib/agent.bash"
[ "$(uname -m)" = x86_64 ] || skip "user registers are only known on x86-64"
command -v python3 >/dev/null || skip "python3 not installed"
[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ] || [ "$(id -u)" -eq 0 ] ||
	skip "needs root or kernel.perf_event_paranoid <= 0 for the agent's record -a"
need_workload nofp
mkdir -p "$OUT/agdir" "$OUT/bin"
fail_hook() { for f in "$OUT"/*.log "$OUT"/*.err; do [ -f "$f" ] && { echo "--- $f"; tail -n 8 "$f"; }; done; }
BIN=$OUT/bin/nofp-agent    # comm "nofp-agent": no other process has it
bid=$(readelf -n "$WL/nofp" | sed -n 's/.*Build ID: *//p')
libc=$(ldd "$WL/nofp" | awk '$1 ~ /^libc\.so/ { print $3 }')
libc_bid=$(readelf -n "$(readlink -f "$libc")" | sed -n 's/.*Build ID: *//p')
[ -n "$bid" ] && [ -n "$libc_bid" ] || fail "no build-id in nofp ($bid) or libc ($libc_bid)"

# rec NAME MODE CMD...: one recording through a fresh agent, as NAME.data
rec() {
	local name=$1 mode=$2
	shift 2
	start_agent "$name-agent.log" --dir "$OUT/agdir" --once ||
		fail "the agent did not start: $(tail -n 1 "$OUT/$name-agent.log")"
	"$DOMPROF" record -f --call-graph "$mode" -o "$OUT/$name.data" \
		--domain "self=agent:127.0.0.1:$PORT" -- "$@" >"$OUT/$name.err" 2>&1 ||
		fail "record $name: $(tail -n 2 "$OUT/$name.err")"
	wait "$APID" 2>/dev/null
	grep 'samples written' "$OUT/$name.err"
}
folded() { # FILE [ENV...]: the agent domain's nofp-agent stacks
	local f=$1
	shift
	env "$@" "$DOMPROF" export --format folded -i "$f" --domain self --comm nofp-agent -o - \
		2>"$OUT/folded.err" || fail "export folded $f: $(cat "$OUT/folded.err")"
}
# share PAT LEAF FILE: percent of the samples whose stack holds LEAF that
# contain the ;-separated frames PAT, and their number
share() {
	python3 - "$@" <<'PY'
import sys
pat, leaf, path = sys.argv[1], sys.argv[2], sys.argv[3]
tot = hit = 0
for l in open(path):
    st, n = l.rstrip('\n').rsplit(' ', 1)
    if leaf not in st.split(';'):
        continue
    tot += int(n)
    if (';' + pat + ';') in (';' + st + ';'):
        hit += int(n)
print(f"{100.0 * hit / tot:.1f} {tot}" if tot else "0 0")
PY
}
check() { # WHAT PAT LEAF FILE OP LIMIT
	local r
	r=$(share "$2" "$3" "$4")
	note "$1: $r (percent of samples, samples)"
	set -- "$1" "${r%% *}" "${r##* }" "$5" "$6"
	[ "$3" -ge 20 ] || fail "$1: only $3 samples"
	python3 -c "import sys; sys.exit(0 if float('$2') $4 $5 else 1)" ||
		fail "$1: $2% (wanted $4 $5)"
}

# 1. --call-graph dwarf through the agent; the copy deleted before the report
cp "$WL/nofp" "$BIN"
rec dw dwarf "$BIN" 300
rm -f "$BIN"
grep -q 'self: agent on .* with call chains and user stacks (--call-graph dwarf)' "$OUT/dw.err" ||
	fail "the host did not ask the agent for DWARF stacks: $(grep 'self:' "$OUT/dw.err" | head -n 1)"
grep -q 'recording the guest at 1000 Hz with call chains and 8192-byte user stacks' "$OUT/dw-agent.log" ||
	fail "the agent's recorder did not record user stacks"
grep -E 'symbol files|libc|nofp-agent' "$OUT/dw-agent.log"
"$DOMPROF" dump "$OUT/dw.data" >"$OUT/dw.dump" || fail "dump failed"
# the stacks are checked on nofp's own user-mode samples: the agent
# records the whole machine, whose kernel threads have no user stack
# (a run with other tests busy had 451 of 886 samples with stacks)
wpid=$(sed -n 's/^nofp: pid \([0-9]*\) done$/\1/p' "$OUT/dw.err" | head -n 1)
[ -n "$wpid" ] || fail "nofp's pid not found"
python3 - "$OUT/dw.dump" "$bid" "$libc_bid" "$wpid" <<'PY' || fail "the agent domain's records: see above"
import re, sys
dump, bid, libc, wpid = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
first_sample = None
blobs = {}
stacks = samples = 0
for i, l in enumerate(open(dump)):
    if not re.search(r'\bdom=1 ', l):
        continue
    m = re.search(r'SYMTAB +kind=4 name=(\S+)', l)
    if m:
        blobs.setdefault(m.group(1), i)
    if re.search(r'\bSAMPLE ', l):
        if first_sample is None:
            first_sample = i
        if f' pid={wpid} ' in l and ' mode=user ' in l:
            samples += 1
            stacks += ' ustack=' in l
print(f"agent domain, nofp's user samples: {samples}, {stacks} with user stacks; nofp blob {bid in blobs}, libc blob {libc in blobs}")
assert samples >= 100 and stacks * 100 >= 90 * samples, "the agent's samples lost their user stacks"
assert bid in blobs, "nofp's ELF is not embedded in the agent domain"
assert libc in blobs, "libc's ELF (return addresses below main) is not embedded"
assert blobs[bid] < first_sample and blobs[libc] < first_sample, "blobs come after the domain's samples"
PY
folded "$OUT/dw.data" >"$OUT/dw.folded"
folded "$OUT/dw.data" DOMPROF_DWARF_UNWIND=0 >"$OUT/dw-off.folded"
check "agent dwarf, nofp deleted (the shipped blob): __libc_start_call_main;main;walk;spin" \
	"__libc_start_call_main;main;walk;spin" spin "$OUT/dw.folded" '>=' 95
check "the same, DOMPROF_DWARF_UNWIND=0 (control): walk;spin" "walk;spin" spin "$OUT/dw-off.folded" '<=' 5

# --pid: the header counts the stacks of the samples shown (--comm
# filters later, so it would count every process of the domain)
pid=$(sed -n 's/^nofp: pid \([0-9]*\) done$/\1/p' "$OUT/dw.err")
[ -n "$pid" ] || fail "no pid of nofp in the recorder's output"
"$DOMPROF" report -q -g -i "$OUT/dw.data" --domain self --pid "$pid" >"$OUT/dw.report" 2>"$OUT/report.err" ||
	fail "report -g: $(cat "$OUT/report.err")"
grep -m1 'dwarf unwinding' "$OUT/dw.report"
python3 - "$OUT/dw.report" <<'PY' || fail "report -g of the agent domain: see above"
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r'^# dwarf unwinding: (\d+) of (\d+) user stacks unwound', t, re.M)
assert m and int(m.group(2)) >= 20 and int(m.group(1)) * 100 >= 95 * int(m.group(2)), m
blocks = t.split('-' * 79)
spin = [b for b in blocks if re.search(r'^\d+\s+[\d.]+\s+self\s+nofp-agent\s+spin  \[total', b, re.M)]
assert spin, "no spin entry in the agent domain"
assert re.search(r'nofp-agent\s+walk\s*$', spin[0].split('spin  [total')[0], re.M), "walk is not spin's caller"
PY

# 2. control: frame pointers (-g) through the agent
cp "$WL/nofp" "$BIN"
rec fp fp "$BIN" 300
rm -f "$BIN"
folded "$OUT/fp.data" >"$OUT/fp.folded"
check "agent -g (control): walk;spin" "walk;spin" spin "$OUT/fp.folded" '<=' 5

# 3. control: the copy is gone before the agent collects: not shipped
cp "$WL/nofp" "$BIN"
rec gone dwarf sh -c "'$BIN' 300 && rm -f '$BIN'"
grep "not shipped: $BIN" "$OUT/gone-agent.log" || fail "the agent did not say it could not ship $BIN"
"$DOMPROF" dump "$OUT/gone.data" | grep -Eq "dom=1 +SYMTAB +kind=4 name=$bid " &&
	fail "nofp's ELF is embedded although it was gone"
# its samples have no names now (no file, no blob): whether a stack
# reaches libc's __libc_start_call_main below main is the measure
folded "$OUT/gone.data" >"$OUT/gone.folded"
check "agent dwarf, nofp not shipped (control): __libc_start_call_main" "__libc_start_call_main" \
	"[unknown] nofp-agent" "$OUT/gone.folded" '<=' 5
echo "agent-dwarf: ok"
