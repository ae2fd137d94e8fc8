# SPDX-License-Identifier: MIT
"""A small Python program with a recursive function, for DWARF call
chains through a real interpreter (tests/e2e/dwarf-python.sh,
docs/dwarf-notes.md "Proof"). Run by Debian's python3, which is built
without frame pointers.

usage: python3 recurse.py GOFILE [ROUNDS [dict]]

Writes its pid to stdout, then waits (at most 30 s) until GOFILE exists
so that profilers attaching with -p see the same work, then computes
fib(20) by naive recursion ROUNDS times (default 60) and exits. With
"dict" it does other work instead (the tests' control): ROUNDS x 1000
strings into a dict, sorted.
"""
import os
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def main():
    go = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    print("pid %d" % os.getpid(), flush=True)
    end = time.monotonic() + 30
    while not os.path.exists(go) and time.monotonic() < end:
        time.sleep(0.01)
    total = 0
    if len(sys.argv) > 3 and sys.argv[3] == "dict":
        d = {}
        for i in range(rounds * 1000):
            d[str(i)] = i
        total = len(sorted(d, key=len))
    else:
        for _ in range(rounds):
            total += fib(20)
    print("recurse: done %d" % total, flush=True)


main()
