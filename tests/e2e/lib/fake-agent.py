# SPDX-License-Identifier: MIT
# A fake `domprof agent` for tests/e2e/agent-dos.sh: fake-agent.py MODE
# listens on a free loopback port, prints the port, serves one
# controller and prints "got TYPE" for every frame it receives.
# MODE mute: never answers COLLECT; lost: answers it with LOST 2^63 and
# an empty END; start-dies: closes the connection when asked to START
# (an agent that dies during its start-up).
import socket, struct, sys, time
from agent_frames import frame, recv
mode = sys.argv[1]
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", 0)); l.listen(1)
print(l.getsockname()[1], flush=True)
c, _ = l.accept()
def name(s): return struct.pack("<H", len(s)) + s
while True:
    t, p = recv(c)
    if t is None: sys.exit(0)
    print("got", t, flush=True)
    if t == 1: c.sendall(frame(16, struct.pack("<II", 1, 1) + name(b"fake") + name(b"6.1")))
    elif t == 2 and mode == "start-dies": print("START: closing", flush=True); sys.exit(0)
    elif t == 2: c.sendall(frame(17))
    elif t == 3: c.sendall(frame(18, b"stopped"))
    elif t == 4 and mode == "mute": print("COLLECT: not answering", flush=True); time.sleep(600)
    elif t == 4:
        c.sendall(frame(21, struct.pack("<Q", 1 << 63)) + frame(22, struct.pack("<QQQ", 0, 0, 1 << 63)))
