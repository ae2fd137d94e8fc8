#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Debug files from debuginfod servers (docs/symbols.md, "Debug files from
# debuginfod"), with a real server: threefuncs (50% / 30% / 20% in
# func_a, func_b, func_c) is copied, its debug information separated
# with `objcopy --only-keep-debug` and the copy stripped with
# `strip --strip-all`, so the functions' names exist only in the debug
# file. One recording (real perf_event_open, --call-graph dwarf) runs it
# and then nofp-split, whose debug file beside it (.gnu_debuglink, the
# .debug_frame the unwinder needs) is replaced by one with another
# build-id: libdwfl rejects it and would ask debuginfod itself.
#
#  - Debian's `debuginfod -F` on 127.0.0.1 serves the debug file: with
#    DEBUGINFOD_URLS and an empty private cache, report names func_a/b/c
#    with the known shares (within 5 points) and the file is in the cache.
#  - Controls that must not name them (FDE names threefuncs+0x...):
#    without DEBUGINFOD_URLS; with --no-debuginfod (also export,
#    flamegraph, diff), which also makes no request at all.
#  - A server that is down (a closed port): exit 0, one note, FDE names.
#  - A slow server (accepts, never answers): report -g finishes within 3x
#    the 5 s bound with one note, and only one connection was made (the
#    unwinder's libdwfl goes through the same bounded client).
#  - Servers that answer junk, or a valid ELF of another build-id: one
#    note each, refused, FDE names, no crash.
source "$(dirname "$0")/lib/report-common.bash"
need_workload threefuncs nofp-split nofp-split.debug
command -v debuginfod >/dev/null || skip "no debuginfod server (apt-get install debuginfod)"
command -v objcopy >/dev/null && command -v strip >/dev/null && command -v readelf >/dev/null ||
	skip "binutils (objcopy, strip, readelf) not installed"
ldconfig -p | grep -q 'libdebuginfod\.so\.1 ' || skip "no libdebuginfod.so.1 (apt-get install libdebuginfod1)"
unset DEBUGINFOD_URLS DEBUGINFOD_MAXTIME DEBUGINFOD_TIMEOUT DEBUGINFOD_VERBOSE DEBUGINFOD_PROGRESS \
	DEBUGINFOD_MAXSIZE DEBUGINFOD_RETRY_LIMIT
BOUND=5     # DBGFD_DEFAULT_BOUND_S

freeport() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# listening PORT: true once something accepts connections on 127.0.0.1:PORT (<= 20 s)
listening() {
	python3 - "$1" <<'PY'
import socket, sys, time
for _ in range(200):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)
PY
}

note "a stripped binary and its separate debug file"
B="$OUT/bin"
mkdir -p "$B" "$OUT/srv"
objcopy --only-keep-debug "$WL/threefuncs" "$OUT/srv/threefuncs.debug"
strip --strip-all -o "$B/threefuncs" "$WL/threefuncs"
bid() { readelf -n "$1" 2>/dev/null | awk '/Build ID/ { print $3 }'; }
BID=$(bid "$B/threefuncs")
[ -n "$BID" ] && [ "$BID" = "$(bid "$OUT/srv/threefuncs.debug")" ] || fail "no build-id, or the debug file's differs"
[ -z "$(nm "$B/threefuncs" 2>/dev/null)" ] && ! nm -D "$B/threefuncs" | grep -q func_a ||
	fail "the copy is not stripped"
# nofp-split with a stale debug file: same name, one build-id byte changed
cp "$WL/nofp-split" "$WL/nofp-split.debug" "$B/"
python3 - "$B/nofp-split.debug" "$(bid "$B/nofp-split")" <<'PY' || fail "could not patch the debug file"
import sys
p, bid = sys.argv[1], bytes.fromhex(sys.argv[2])
b = bytearray(open(p, "rb").read())
i = b.find(bid)
assert i > 0 and b.find(bid, i + 1) < 0
b[i + len(bid) - 1] ^= 0xff
open(p, "wb").write(b)
PY
echo "threefuncs build-id $BID"
record both -F 1000 --call-graph dwarf -- bash -c "'$B/threefuncs' 150 && '$B/nofp-split' 300"

# rep NAME URLS [report args...]: report -l --format csv with an empty
# private cache into $OUT/NAME.{csv,err}; sets RC and MS (wall time)
rep() {
	local name=$1 urls=$2; shift 2
	local t0=$EPOCHREALTIME
	if [ -n "$urls" ]; then
		DEBUGINFOD_URLS=$urls DEBUGINFOD_CACHE_PATH="$OUT/cache-$name" \
			timeout $((6 * BOUND)) "$DOMPROF" report -i "$OUT/both.data" -l --format csv "$@" >"$OUT/$name.csv" 2>"$OUT/$name.err"
	else
		DEBUGINFOD_CACHE_PATH="$OUT/cache-$name" \
			timeout $((6 * BOUND)) "$DOMPROF" report -i "$OUT/both.data" -l --format csv "$@" >"$OUT/$name.csv" 2>"$OUT/$name.err"
	fi
	RC=$?
	local t1=$EPOCHREALTIME
	MS=$(( (${t1/./} - ${t0/./}) / 1000 ))
	echo "$name: exit $RC, ${MS} ms, stderr: $(tr '\n' '|' <"$OUT/$name.err")"
}
# names NAME named|fde: threefuncs' three functions by name (shares within
# 5 points of 50/30/20) or only as threefuncs+0x... FDE rows
names() {
	python3 - "$OUT/$1.csv" "$2" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["image"] == "threefuncs"]
n = {}
for r in rows:
    n[r["symbol"]] = n.get(r["symbol"], 0) + int(r["samples"])
tot = sum(n.values())
named = {f: n.get(f, 0) for f in ("func_a", "func_b", "func_c")}
fde = sorted(((c, s) for s, c in n.items() if s.startswith("threefuncs+0x")), reverse=True)
if sys.argv[2] == "named":
    three = sum(named.values())
    assert three >= 0.95 * tot and three >= 500, "func_a/b/c hold %d of threefuncs' %d samples: %s" % (three, tot, n)
    for f, w in (("func_a", 50), ("func_b", 30), ("func_c", 20)):
        got = 100.0 * named[f] / three
        print("  %s: %.2f%% (want %d%% +- 5)" % (f, got, w))
        assert abs(got - w) <= 5.0, f
else:
    assert not any(named.values()), "named without the debug file: %s" % named
    three = sum(c for c, _ in fde[:3])
    assert len(fde) >= 3 and three >= 0.95 * tot and three >= 500, "FDE rows: %s" % fde
    print("  FDE names: %s" % ", ".join("%s %d" % (s, c) for c, s in fde[:3]))
PY
}
# one_note NAME PATTERN: exactly one debuginfod line on stderr, matching PATTERN
one_note() {
	local n
	n=$(grep -c 'debuginfod' "$OUT/$1.err")
	[ "$n" = 1 ] || fail "$1: $n debuginfod lines on stderr, want 1"
	grep -q "warning: debuginfod: .*$2" "$OUT/$1.err" || fail "$1: the note does not say '$2'"
}
no_note() {
	! grep -q 'debuginfod' "$OUT/$1.err" || fail "$1: a debuginfod note where none is due"
}

note "a debuginfod server serving the debug file"
PORT=$(freeport)
debuginfod -F -d "$OUT/db.sqlite" -p "$PORT" -t 0 -g 0 "$OUT/srv" >"$OUT/debuginfod.log" 2>&1 &
bg_pids+=($!)
fail_hook() { tail -n 20 "$OUT/debuginfod.log"; }
# ready once it has scanned the file: the build-id URL answers 200
python3 - "$PORT" "$BID" <<'PY' || fail "debuginfod did not serve the debug file within 20 s"
import sys, time, urllib.request
url = "http://127.0.0.1:%s/buildid/%s/debuginfo" % (sys.argv[1], sys.argv[2])
for _ in range(100):
    try:
        urllib.request.urlopen(url, timeout=2).read()
        sys.exit(0)
    except Exception:
        time.sleep(0.2)
sys.exit(1)
PY
SERVER=http://127.0.0.1:$PORT
rep served "$SERVER"
[ "$RC" = 0 ] || fail "report exit $RC"
names served named || fail "the report did not name the functions from the served debug file"
no_note served
[ -s "$OUT/cache-served/$BID/debuginfo" ] || fail "the debug file is not in the private cache"

note "controls: no DEBUGINFOD_URLS, --no-debuginfod"
rep nourls ""
[ "$RC" = 0 ] && names nourls fde || fail "without DEBUGINFOD_URLS"
no_note nourls
rep off "$SERVER" --no-debuginfod
[ "$RC" = 0 ] && names off fde || fail "with --no-debuginfod"
[ ! -e "$OUT/cache-off/$BID" ] || fail "--no-debuginfod: the cache has the build-id"

note "a server that answers junk; one that answers an ELF of another build-id"
cat >"$OUT/answer.py" <<'PY'
# answer.py PORT FILE LOG: every GET gets 200 and FILE's bytes; paths logged
import http.server, sys
port, body, log = int(sys.argv[1]), open(sys.argv[2], "rb").read(), sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(log, "a") as f:
            f.write(self.path + "\n")
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
head -c 65536 /dev/urandom >"$OUT/junk.bin"
for kind in junk liar; do
	body=$OUT/junk.bin; [ $kind = liar ] && body=$WL/nofp-split.debug
	P=$(freeport)
	: >"$OUT/$kind.requests"
	python3 "$OUT/answer.py" "$P" "$body" "$OUT/$kind.requests" &
	bg_pids+=($!)
	listening "$P" || fail "the $kind server did not start"
	rep $kind "http://127.0.0.1:$P"
	[ "$RC" = 0 ] || fail "$kind: report exit $RC"
	if [ $kind = junk ]; then one_note junk "not an ELF file: refused"
	else one_note liar "without the build-id asked for: refused"; fi
	names $kind fde || fail "$kind: names from a refused file"
	grep -q "/buildid/$BID/debuginfo" "$OUT/$kind.requests" || fail "$kind: threefuncs' build-id not asked"
	[ -z "$(sort "$OUT/$kind.requests" | uniq -d)" ] || fail "$kind: a build-id asked twice: $(sort "$OUT/$kind.requests" | uniq -d)"
	echo "  $kind: $(wc -l <"$OUT/$kind.requests") requests, each build-id once"
done
# --no-debuginfod asks nothing, in every command that loads symbols
: >"$OUT/junk.requests"
DEBUGINFOD_URLS=http://127.0.0.1:$P DEBUGINFOD_CACHE_PATH="$OUT/cache-off2" sh -c '
	"$1" report -i "$2" -g --no-debuginfod >/dev/null &&
	"$1" export --format folded -i "$2" -o /dev/null --no-debuginfod &&
	"$1" flamegraph -i "$2" -o "$3" --no-debuginfod &&
	"$1" diff --no-debuginfod "$2" "$2" >/dev/null' sh "$DOMPROF" "$OUT/both.data" "$OUT/fg.html" 2>"$OUT/off2.err" ||
	{ cat "$OUT/off2.err"; fail "report/export/flamegraph/diff --no-debuginfod failed"; }
[ ! -s "$OUT/junk.requests" ] || fail "--no-debuginfod: the server was asked: $(cat "$OUT/junk.requests")"
no_note off2

note "a server that is down"
rep down "http://127.0.0.1:$(freeport)"
[ "$RC" = 0 ] || fail "down: report exit $RC"
one_note down "cannot reach .*not asked again"
names down fde || fail "down: names"
[ "$MS" -lt $((BOUND * 1000)) ] || fail "down: ${MS} ms, not quickly"

note "a slow server (accepts, never answers), report -g"
cat >"$OUT/slow.py" <<'PY'
# slow.py PORT LOG: accepts connections and never answers; counts them
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    with open(sys.argv[2], "a") as f:
        f.write("connection\n")
PY
P=$(freeport)
: >"$OUT/slow.conns"
python3 "$OUT/slow.py" "$P" "$OUT/slow.conns" &
bg_pids+=($!)
listening "$P" || fail "the slow server did not start"
: >"$OUT/slow.conns"   # not the probe's
rep slow "http://127.0.0.1:$P" -g
[ "$RC" = 0 ] || fail "slow: report exit $RC"
[ "$MS" -le $((3 * BOUND * 1000)) ] || fail "slow: ${MS} ms, over 3x the ${BOUND} s bound"
one_note slow "no answer from .* within $BOUND s"
names slow fde || fail "slow: names"
n=$(wc -l <"$OUT/slow.conns")
[ "$n" = 1 ] || fail "slow: $n connections to the server, want 1 (each build-id once, none after a timeout)"
echo "PASS"
