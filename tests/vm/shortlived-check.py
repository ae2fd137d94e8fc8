#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the attribution of short-lived guest processes (test-guest-shortlived.sh).

usage: shortlived-check.py PASSIVE.csv ACTIVE.csv PASSIVE.folded

The CSVs are `report -s pid,comm --format csv` of one domain each (the
passive view of the guest and the active view of the same guest, same
run); the folded file is `export --format folded --by-pid` of the passive
domain. The guest loops alpha (2N rounds of gw spin) and beta (N rounds),
forked by a shell script named looper. Checks (P: passive, A: active):
  - per command: P's alpha and beta shares (of the domain's samples) are
    within 5 points of A's;
  - the shell: looper < 5% in P;
  - the truth: over the workload processes both views saw whole (the
    views start and stop at slightly different times, and a window of a
    few seconds cuts a 300 ms process at either end: the first two and
    last two of each view are left out, as a process that ends within a
    sample or two of a view's start leaves the next one cut there too), A's alpha:beta split (the truth measured)
    is within 10 points of the 2:1 work (a sanity check: per-process
    start-up costs pull it toward 50%), and P's within 5 points of A's;
  - per pid: over those processes, each with >= 1% has the same command
    in P as in A (its main one: a fork shows the shell's name until it
    execs), and its share within 5 points;
  - one process per sample: in P's folded stacks, each user frame
    "[guest user] NAME (PID)" is under the process NAME-PID.
Prints one line per failed check and a summary; exit 1 if any failed.
"""
import re
import sys
from collections import defaultdict


def load(path):
    """{(pid, comm): samples} of a report CSV with pid and comm columns."""
    out = defaultdict(int)
    with open(path) as f:
        head = f.readline().strip().split(',')
        ip, ic = head.index('pid'), head.index('comm')
        for line in f:
            c = line.rstrip('\n').split(',')
            if len(c) < len(head):
                continue
            out[(int(c[ip]), c[ic])] += int(c[0])
    return out


def by_comm(d):
    t = sum(d.values()) or 1
    r = defaultdict(float)
    for (_, comm), n in d.items():
        r[comm] += 100.0 * n / t
    return r


def by_pid(d, pids):
    """{pid: (share among pids, main comm)} over the given pids."""
    n = defaultdict(int)
    names = defaultdict(lambda: defaultdict(int))
    for (pid, comm), k in d.items():
        if pid in pids:
            n[pid] += k
            names[pid][comm] += k
    t = sum(n.values()) or 1
    return {p: (100.0 * n[p] / t, max(names[p], key=names[p].get)) for p in n}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    P, A = load(sys.argv[1]), load(sys.argv[2])
    errs = []
    pc, ac = by_comm(P), by_comm(A)
    for comm in ('alpha', 'beta'):
        if abs(pc[comm] - ac[comm]) > 5:
            errs.append(f'{comm}: passive {pc[comm]:.1f}% vs active {ac[comm]:.1f}% (more than 5 points apart)')
    if pc['looper'] >= 5:
        errs.append(f'the shell (looper) has {pc["looper"]:.1f}% of the passive samples (>= 5%)')
    wl = {pid for (pid, comm) in A if comm in ('alpha', 'beta')}
    both = {pid for (pid, _) in P} & {pid for (pid, _) in A} & wl
    for d in (P, A):
        ends = sorted({pid for (pid, _) in d} & wl)
        both -= set(ends[:2] + ends[-2:])
    pp, ap = by_pid(P, both), by_pid(A, both)
    split = {}
    for who, d in (('active', ap), ('passive', pp)):
        a = sum(x for x, n in d.values() if n == 'alpha')
        b = sum(x for x, n in d.values() if n == 'beta')
        split[who] = 100.0 * a / (a + b) if a + b else 0.0
    # the measurement's sanity, not the claim under test: each process's
    # exec and page faults, the same for both names, pull the split
    # toward 50% the slower the guest runs, so 10 points here; the
    # passive view is held to 5 points of the active one below
    if abs(split['active'] - 200.0 / 3) > 10:
        errs.append(f'active: alpha is {split["active"]:.1f}% of alpha+beta (whole processes), the work says 66.7%')
    if abs(split['passive'] - split['active']) > 5:
        errs.append(f'alpha is {split["passive"]:.1f}% of alpha+beta (whole processes) in the passive view, '
                    f'{split["active"]:.1f}% in the active one')
    for pid in sorted(both):
        (ps, pn), (as_, an) = pp[pid], ap[pid]
        if max(ps, as_) < 1:
            continue
        if pn != an:
            errs.append(f'pid {pid}: passive names it {pn}, active {an}')
        if abs(ps - as_) > 5:
            errs.append(f'pid {pid} ({an}): passive {ps:.1f}% vs active {as_:.1f}% of the common pids')
    if len(both) < 6:
        errs.append(f'only {len(both)} workload pids in both views (expected a new process every ~150-300 ms)')
    bad = tot = 0
    with open(sys.argv[3]) as f:
        for line in f:
            stack, _, n = line.rstrip('\n').rpartition(' ')
            fr = stack.split(';')
            if len(fr) < 3 or not n.isdigit():
                continue
            for x in fr[2:]:
                m = re.search(r'\[guest user\] (.*) \((\d+)\)$', x)
                if m:
                    tot += int(n)
                    if f'{m.group(1)}-{m.group(2)}' != fr[1]:
                        bad += int(n)
                    break
    if tot == 0:
        errs.append('no passive stack has a "[guest user] NAME (PID)" frame')
    elif bad:
        errs.append(f'{bad} of {tot} passive stacks name another process in their user frame than their own')
    for e in errs:
        print('FAIL ' + e)
    print(f'per command (passive | active): alpha {pc["alpha"]:.1f} | {ac["alpha"]:.1f}, beta {pc["beta"]:.1f} | '
          f'{ac["beta"]:.1f}, looper {pc["looper"]:.1f} | {ac["looper"]:.1f}; alpha of alpha+beta '
          f'{split["passive"]:.1f} | {split["active"]:.1f} (work: 66.7); {len(both)} whole processes compared; '
          f'user frames {tot - bad}/{tot} agree')
    sys.exit(1 if errs else 0)


main()
