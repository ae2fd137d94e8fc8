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
#    with the known shares (within 5 points) and the file is in the cache;
#    export finds it there again with the server gone (closed port: the
#    other build-ids fail, the cached one still names func_a).
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

# five free ports at once (python starts slowly on a loaded machine):
# the server, a closed one, the junk, lying and slow servers
read -r PORT PDOWN PJUNK PLIAR PSLOW < <(python3 -c '
import socket
s = [socket.socket() for _ in range(5)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
[ -n "$PSLOW" ] || fail "no free ports"
# listening PORT: true once something accepts connections on 127.0.0.1:PORT (<= 20 s)
listening() {
	local i
	for i in $(seq 200); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# http_status PORT PATH: the status code a GET of PATH gets (nothing if none)
http_status() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1" || exit
	 printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
	 read -r -t 5 _ code _ <&3 && echo "$code") 2>/dev/null
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
echo "threefuncs build-id $BID"
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

note "the servers (they start while the workload is recorded)"
debuginfod -F -d "$OUT/db.sqlite" -p "$PORT" -t 0 -g 0 "$OUT/srv" >"$OUT/debuginfod.log" 2>&1 &
bg_pids+=($!)
fail_hook() { tail -n 20 "$OUT/debuginfod.log"; }
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
head -c 65536 /dev/urandom >"$OUT/junk.bin"
: >"$OUT/junk.requests"; : >"$OUT/liar.requests"; : >"$OUT/slow.conns"
python3 "$OUT/answer.py" "$PJUNK" "$OUT/junk.bin" "$OUT/junk.requests" &
bg_pids+=($!)
python3 "$OUT/answer.py" "$PLIAR" "$WL/nofp-split.debug" "$OUT/liar.requests" &
bg_pids+=($!)
python3 "$OUT/slow.py" "$PSLOW" "$OUT/slow.conns" &
bg_pids+=($!)

record both -F 1000 --call-graph dwarf -- bash -c "'$B/threefuncs' 150 && '$B/nofp-split' 300"

for p in $PJUNK $PLIAR $PSLOW; do
	listening "$p" || fail "a test server (port $p) did not start"
done
# debuginfod is ready once it has scanned the file: the build-id URL answers 200
for i in $(seq 100); do
	[ "$(http_status "$PORT" "/buildid/$BID/debuginfo")" = 200 ] && break
	[ "$i" = 100 ] && fail "debuginfod did not serve the debug file within 20 s"
	sleep 0.2
done
: >"$OUT/junk.requests"; : >"$OUT/liar.requests"; : >"$OUT/slow.conns"   # not the probes'

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
	[ "$RC" = 0 ] || fail "$name: report exit $RC"
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
# names NAME:named|fde...: threefuncs' three functions by name (shares
# within 5 points of 50/30/20) or only as threefuncs+0x... FDE rows; one
# python for all the reports
names() {
	python3 - "$OUT" "$@" <<'PY'
import csv, sys
out, bad = sys.argv[1], []
for arg in sys.argv[2:]:
    name, want = arg.split(":")
    rows = [r for r in csv.DictReader(open("%s/%s.csv" % (out, name))) if r["image"] == "threefuncs"]
    n = {}
    for r in rows:
        n[r["symbol"]] = n.get(r["symbol"], 0) + int(r["samples"])
    tot = sum(n.values())
    named = {f: n.get(f, 0) for f in ("func_a", "func_b", "func_c")}
    fde = sorted(((c, s) for s, c in n.items() if s.startswith("threefuncs+0x")), reverse=True)
    try:
        if want == "named":
            three = sum(named.values())
            assert three >= 0.95 * tot and three >= 500, "func_a/b/c hold %d of threefuncs' %d samples: %s" % (three, tot, n)
            got = {f: 100.0 * named[f] / three for f in named}
            print("%s: %s" % (name, ", ".join("%s %.2f%%" % (f, got[f]) for f in sorted(got))))
            for f, w in (("func_a", 50), ("func_b", 30), ("func_c", 20)):
                assert abs(got[f] - w) <= 5.0, "%s %.2f%%, want %d%% +- 5" % (f, got[f], w)
        else:
            assert not any(named.values()), "named without the debug file: %s" % named
            three = sum(c for c, _ in fde[:3])
            assert len(fde) >= 3 and three >= 0.95 * tot and three >= 500, "FDE rows: %s" % fde
            print("%s: FDE names %s" % (name, ", ".join("%s %d" % (s, c) for c, s in fde[:3])))
    except AssertionError as e:
        bad.append("%s: %s" % (name, e))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
}

note "the server serves the debug file"
SERVER=http://127.0.0.1:$PORT
rep served "$SERVER"
no_note served
names served:named || fail "the report did not name the functions from the served debug file"
[ -s "$OUT/cache-served/$BID/debuginfo" ] || fail "the debug file is not in the private cache"
# the cache is libdebuginfod's: a second run finds the file there without
# asking (the URL is now a closed port), here through export
DEBUGINFOD_URLS=http://127.0.0.1:$PDOWN DEBUGINFOD_CACHE_PATH="$OUT/cache-served" \
	"$DOMPROF" export --format folded -i "$OUT/both.data" -o "$OUT/cached.folded" 2>"$OUT/cached.err" ||
	fail "export from the cache: exit $?"
grep -q ';func_a [0-9]*$' "$OUT/cached.folded" || fail "export: func_a not named from the cached debug file"
# (other images' build-ids are not cached: the closed port is noted)
echo "cached: export folded names func_a from the cache; stderr: $(cat "$OUT/cached.err")"

note "controls: no DEBUGINFOD_URLS; --no-debuginfod"
rep nourls ""
no_note nourls
rep off "$SERVER" --no-debuginfod
no_note off
[ ! -e "$OUT/cache-off/$BID" ] || fail "--no-debuginfod: the cache has the build-id"
# in every command that loads symbols, and no request at all
DEBUGINFOD_URLS=http://127.0.0.1:$PJUNK DEBUGINFOD_CACHE_PATH="$OUT/cache-off2" sh -c '
	"$1" report -i "$2" -g --no-debuginfod >/dev/null &&
	"$1" export --format folded -i "$2" -o /dev/null --no-debuginfod &&
	"$1" flamegraph -i "$2" -o "$3" --no-debuginfod &&
	"$1" diff --no-debuginfod "$2" "$2" >/dev/null' sh "$DOMPROF" "$OUT/both.data" "$OUT/fg.html" 2>"$OUT/off2.err" ||
	{ cat "$OUT/off2.err"; fail "report/export/flamegraph/diff --no-debuginfod failed"; }
no_note off2
[ ! -s "$OUT/junk.requests" ] || fail "--no-debuginfod: the server was asked: $(cat "$OUT/junk.requests")"

note "servers that answer junk, or an ELF of another build-id"
rep junk "http://127.0.0.1:$PJUNK"
one_note junk "not an ELF file: refused"
rep liar "http://127.0.0.1:$PLIAR"
one_note liar "without the build-id asked for: refused"
for kind in junk liar; do
	grep -q "/buildid/$BID/debuginfo" "$OUT/$kind.requests" || fail "$kind: threefuncs' build-id not asked"
	[ -z "$(sort "$OUT/$kind.requests" | uniq -d)" ] ||
		fail "$kind: a build-id asked twice: $(sort "$OUT/$kind.requests" | uniq -d)"
	echo "$kind: $(wc -l <"$OUT/$kind.requests") requests, each build-id once"
done

note "a server that is down (a closed port)"
rep down "http://127.0.0.1:$PDOWN"
one_note down "cannot reach .*not asked again"
[ "$MS" -lt $((BOUND * 1000)) ] || fail "down: ${MS} ms, not quickly"

note "a slow server (accepts, never answers), report -g"
rep slow "http://127.0.0.1:$PSLOW" -g
[ "$MS" -le $((3 * BOUND * 1000)) ] || fail "slow: ${MS} ms, over 3x the ${BOUND} s bound"
one_note slow "no answer from .* within $BOUND s"
n=$(wc -l <"$OUT/slow.conns")
[ "$n" = 1 ] || fail "slow: $n connections to the server, want 1 (each build-id once, none after a timeout)"

note "names"
names nourls:fde off:fde junk:fde liar:fde down:fde slow:fde || fail "names where there should be FDE names"
echo "PASS"
