# SPDX-License-Identifier: MIT
# The agent protocol's frames for the shell tests' controllers and fake
# agents (tests/e2e/agent-*.sh), written from docs/active.md and
# independent of src/: a 12-byte header (magic "DPAG", type u16, flags
# u16, payload length u32, little-endian) and the payload.
import struct

MAGIC = 0x47415044
NAMES = {16: "HELLO_OK", 23: "ERROR", 24: "AUTH_CHALLENGE", 25: "AUTH_OK"}


def frame(t, p=b"", f=0):
    return struct.pack("<IHHI", MAGIC, t, f, len(p)) + p


def recv(s, reset_closes=False):
    """(type, payload) of the next frame on socket s, or (None, b"") when
    the peer closed (also on a reset with reset_closes) or closed in the
    middle of a frame."""
    def read(n):
        b = b""
        while len(b) < n:
            try:
                c = s.recv(n - len(b))
            except ConnectionResetError:
                if not reset_closes:
                    raise
                c = b""
            if not c:
                return None
            b += c
        return b
    h = read(12)
    if h is None:
        return None, b""
    m, t, f, n = struct.unpack("<IHHI", h)
    p = read(n)
    if p is None:
        return None, b""
    return t, p
