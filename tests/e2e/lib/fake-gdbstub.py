#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A fake QEMU gdbstub for the passive domain's start-up tests.

    fake-gdbstub.py SOCKET MODE [DELAY]

Listens on the unix socket SOCKET and serves one connection after the
other with one x86_64 vCPU stopped in kernel mode (cs 0x10, rip in the
kernel's text), the register layout of QEMU 7.2 (tests/fixtures/gdb/)
and just enough of the remote protocol for `domprof record --domain`:
qSupported, QStartNoAckMode, ?, qXfer:features:read, g, Hg,
qfThreadInfo/qsThreadInfo, m, c, 0x03 and D. Guest memory (m) is what
the MODE makes it:

  plain  every read is refused (E14): the start-up finds no kernel and
         the domain is recorded by address, at once
  die    the connection is closed at the first Hg after the target was
         learned: the start-up's first look at the vCPUs (a guest that
         dies while its start-up reads it)
  die-mem  the same at the first read of guest memory
  slow   every read is answered after DELAY seconds (default 0.3) with
         zero bytes: a start-up that reads for as long as it is let
  slow-hello  as plain, but qSupported, ? and each qXfer are answered
         after DELAY seconds: a recorder that takes long to start

Started by the tests; stops when killed.
"""
import os
import socket
import sys
import time

TOP = os.path.dirname(os.path.abspath(__file__)) + "/../../.."
FIXTURES = TOP + "/tests/fixtures/gdb"


def checksum(data):
    return sum(data) & 0xff


def frame(payload):
    body = bytearray()
    for b in payload:
        if b in b"#$}*":
            body += bytes([0x7d, b ^ 0x20])
        else:
            body.append(b)
    return b"$" + bytes(body) + b"#%02x" % checksum(body)


def registers():
    g = bytearray(608)
    g[128:136] = (0xffffffff81234560).to_bytes(8, "little")   # rip
    g[140:144] = (0x10).to_bytes(4, "little")                 # cs: ring 0
    g[204:212] = (0x1000000).to_bytes(8, "little")            # cr3
    return g.hex().encode()


class Conn:
    def __init__(self, sock, mode, delay):
        self.sock = sock
        self.mode = mode
        self.delay = delay
        self.buf = b""
        self.noack = False
        self.running = False
        self.regs = registers()

    def send(self, payload):
        self.sock.sendall(frame(payload))

    def xfer(self, args):
        # features:read:ANNEX:OFF,LEN
        parts = args.split(b":")
        annex = parts[3].decode()
        off, length = (int(x, 16) for x in parts[4].split(b","))
        if "/" in annex or annex.startswith("."):
            return b"E00"
        try:
            with open(os.path.join(FIXTURES, annex), "rb") as f:
                data = f.read()
        except OSError:
            return b"E00"
        chunk = data[off:off + length]
        return (b"l" if off + length >= len(data) else b"m") + chunk

    def packet(self, p):
        """The reply to packet p, None for none; raises EOFError to close."""
        if self.mode == "slow-hello" and (p.startswith(b"qSupported") or p == b"?" or
                                          p.startswith(b"qXfer")):
            time.sleep(self.delay)
        if p.startswith(b"qSupported"):
            return b"PacketSize=1000;qXfer:features:read+;QStartNoAckMode+"
        if p == b"QStartNoAckMode":
            self.send(b"OK")
            self.noack = True
            return None
        if p == b"?":
            return b"T05thread:01;"
        if p.startswith(b"qXfer:features:read:"):
            return self.xfer(p)
        if p == b"g":
            return self.regs
        if p.startswith(b"Hg") or p.startswith(b"Hc"):
            if self.mode == "die":
                raise EOFError
            return b"OK"
        if p == b"qfThreadInfo":
            return b"m01"
        if p == b"qsThreadInfo":
            return b"l"
        if p.startswith(b"m"):
            if self.mode == "die-mem":
                raise EOFError
            if self.mode == "slow":
                time.sleep(self.delay)
                length = int(p[1:].split(b",")[1], 16)
                return b"00" * min(length, 0x7f0)
            return b"E14"
        if p == b"c":
            self.running = True
            return None
        if p.startswith(b"D"):
            self.send(b"OK")
            raise EOFError
        return b""

    def serve(self):
        while True:
            while True:
                if not self.buf:
                    break
                c = self.buf[:1]
                if c in (b"+", b"-"):
                    self.buf = self.buf[1:]
                    continue
                if c == b"\x03":
                    self.buf = self.buf[1:]
                    if self.running:
                        self.running = False
                        self.send(b"T02thread:01;")
                    continue
                if c != b"$":
                    self.buf = self.buf[1:]
                    continue
                end = self.buf.find(b"#")
                if end < 0 or len(self.buf) < end + 3:
                    break
                p = self.buf[1:end]
                self.buf = self.buf[end + 3:]
                if not self.noack:
                    self.sock.sendall(b"+")
                r = self.packet(p)
                if r is not None:
                    self.send(r)
            data = self.sock.recv(65536)
            if not data:
                return
            self.buf += data


def main():
    path, mode = sys.argv[1], sys.argv[2]
    delay = float(sys.argv[3]) if len(sys.argv) > 3 else 0.3
    try:
        os.unlink(path)
    except OSError:
        pass
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)
    while True:
        s, _ = srv.accept()
        try:
            Conn(s, mode, delay).serve()
        except (EOFError, OSError):
            pass
        s.close()


if __name__ == "__main__":
    main()
