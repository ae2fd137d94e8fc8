# SPDX-License-Identifier: MIT
"""Checks of domprof's reading of a perf.data against perf's own reading
(tests/e2e/perfdata-crosscheck.sh). Subcommands, each exit 0 (pass) or 1:

  counts PERF_COMM.txt DP_REPORT.txt
      the samples per event of `perf report --stdio --no-children -g none
      --sort comm -n` (summed over commands) equal those of domprof's report
      header ("# event: NAME, ..., N samples"), in order.
  shares PERF_DSOSYM.txt DP.csv [--rotate]
      shares of (image, symbol) from `perf report --no-children -g none
      --sort dso,sym -n` against `domprof report -l --format csv`:
      similarity (sum of min shares) >= 0.99. --rotate (the control) gives
      domprof's symbol names to the next row's samples: must fall below.
  fold PERF_SCRIPT.txt DP.folded MIN [--rotate]
      `perf script -F comm,pid,tid,ip,sym` folded here (comm;outermost;...;leaf)
      against `domprof export --format folded` (domain and pid dropped,
      kernel marks dropped): count per stack similarity >= MIN. --rotate
      (the control) drops every domprof stack's leaf: must fall below.
  same DP_A.folded DP_B.folded MIN [--swap]
      two domprof folded profiles of the same workload (a perf.data and a
      domprof recording): user frames only, pids dropped, >= MIN.
      --swap (the control) swaps func_a and func_c in B: must fall below.
  comms PERF_COMM.txt DP.csv [--merge]
      samples per command name of `perf report --sort comm -n` and of
      `domprof report -s comm --format csv` equal. --merge (the control)
      counts all of B's samples under its largest name, as a reader that
      names a process by its last name does: must fail.
  imagecomm DP.csv IMAGE=COMM... [--merge]
      in `domprof report -s comm --format csv`, every sample whose leaf is
      in IMAGE is under COMM, and each IMAGE has samples (no shares
      compared: they depend on the run). --merge (the control) as above.
"""
import collections
import csv
import re
import sys

HEX = re.compile(r"^(0x)?[0-9a-f]+$")
FDE = re.compile(r".+\+0x[0-9a-f]+$")


def sim(a, b):
    ta, tb = sum(a.values()), sum(b.values())
    if not ta or not tb:
        return 0.0
    return sum(min(a.get(k, 0) / ta, b.get(k, 0) / tb) for k in set(a) | set(b))


def show(a, b, n=8, label=("perf", "domprof")):
    ta, tb = sum(a.values()) or 1, sum(b.values()) or 1
    keys = sorted(set(a) | set(b), key=lambda k: -abs(a.get(k, 0) / ta - b.get(k, 0) / tb))
    print("  largest differences (%s vs %s):" % label)
    for k in keys[:n]:
        d = a.get(k, 0) / ta - b.get(k, 0) / tb
        if abs(d) < 1e-9:
            break
        print("    %7.3f%% %7.3f%%  %s" % (100 * a.get(k, 0) / ta, 100 * b.get(k, 0) / tb, str(k)[:110]))


def counts(perf_txt, dp_txt):
    perf, cur = [], None
    for line in open(perf_txt):
        m = re.match(r"^# Samples: .* of event '(.*)'", line)
        if m:
            perf.append([m.group(1), 0])
            continue
        m = re.match(r"^\s*[\d.]+%\s+(\d+)\s+\S", line)
        if m and perf:
            perf[-1][1] += int(m.group(1))
    dp = []
    for line in open(dp_txt):
        m = re.match(r"^# event: (.*?), .*, (\d+) samples$", line)
        if m:
            dp.append([m.group(1), int(m.group(2))])
    # perf leaves out events without samples (the -a file's dummy)
    dp_nz = [e for e in dp if e[1]]
    print("  perf:    %s" % perf)
    print("  domprof: %s" % dp_nz)
    return perf == dp_nz and bool(perf)


def norm_sym(s):
    # perf names code no symbol covers by its address, domprof "[unknown]"
    # or by its FDE (IMAGE+0xSTART); perf's demangled C++ names have no
    # parameter lists, domprof's do
    if HEX.match(s) or FDE.match(s) or s.startswith("[unknown] "):
        return "[unknown]"
    if "(" in s and not s.startswith("("):
        s = s[:s.index("(")]
    # Aliases: symbols at one address that perf and domprof choose among
    # differently (glibc's memmove/memcpy entry points, versioned names
    # like cfree@GLIBC_2.2.5 for free, GCC's .localalias, the kernel's
    # __pi_ copies): one canonical name each.
    s = re.sub(r"@.*$", "", s)
    s = re.sub(r"\.localalias$", "", s)
    s = re.sub(r"^__pi_", "", s)
    s = s.replace("__memcpy_", "__memmove_").replace("__mempcpy_", "__memmove_")
    if s == "cfree":
        s = "free"
    # glibc's internal and weak aliases (__GI___execve, __brk for execve,
    # brk): compared without leading underscores
    s = re.sub(r"^__GI_", "", s).lstrip("_") or s
    return s


def shares(perf_txt, dp_csv, rotate=False):
    perf = collections.Counter()
    for line in open(perf_txt):
        m = re.match(r"^\s*[\d.]+%\s+(\d+)\s+(\S+)\s+\[(.)\]\s+(.*?)\s*$", line)
        if m:
            perf[(m.group(2), norm_sym(m.group(4)))] += int(m.group(1))
    rows = list(csv.DictReader(open(dp_csv)))
    dp = collections.Counter()
    for i, r in enumerate(rows):
        name = rows[(i + 1) % len(rows)]["symbol"] if rotate else r["symbol"]
        dp[(r["image"], norm_sym(name))] += int(r["samples"])
    s = sim(perf, dp)
    print("  dso,symbol similarity%s: %.4f (%d perf rows, %d domprof rows)"
          % (" (control, names rotated)" if rotate else "", s, len(perf), len(dp)))
    if s < 1.0 and not rotate:
        show(perf, dp)
    return (s >= 0.99) != rotate


def fold_perf(path):
    """perf script -F comm,pid,tid,ip,sym: a line 'comm pid/tid' then frame
    lines, a blank line between samples. Stacks are keyed by the process's
    command (its main thread's, as domprof labels processes), not the
    thread's."""
    samples, main_comm = [], {}
    comm, pid, frames = None, None, []

    def flush():
        if comm is not None and frames:
            samples.append((comm, pid, frames))

    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            comm, frames = None, []
            continue
        if not line.startswith("\t") and not line.startswith(" "):
            flush()
            m = re.match(r"^(.*?)\s+(\d+)/(\d+)\s*$", line)
            comm, pid, frames = (m.group(1), m.group(2), []) if m else (line.strip(), None, [])
            if m and m.group(2) == m.group(3):
                main_comm[pid] = comm
            continue
        parts = line.split(None, 1)
        frames.append(parts[1].strip() if len(parts) > 1 else "[unknown]")
    flush()
    out = collections.Counter()
    for c, p, fr in samples:
        out[";".join([main_comm.get(p, c)] + [norm_sym(f) for f in reversed(fr)])] += 1
    return out


def fold_dp(path, user_only=False):
    out = collections.Counter()
    for line in open(path, errors="replace"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        fr = stack.split(";")
        comm = re.sub(r"-\d+$", "", fr[1])
        rest = []
        for f in fr[2:]:
            if f.endswith("_[k]"):
                if user_only:
                    continue
                f = f[:-4]
            rest.append(norm_sym(f))
        out[";".join([comm] + rest)] += int(n)
    return out


def fold(perf_script, dp_folded, minimum, rotate=False):
    perf = fold_perf(perf_script)
    dp = fold_dp(dp_folded)
    if rotate:
        # the control: every stack loses its leaf frame
        cut = collections.Counter()
        for k, v in dp.items():
            cut[k.rsplit(";", 1)[0]] += v
        dp = cut
    s = sim(perf, dp)
    print("  folded stacks similarity%s: %.4f (%d perf stacks, %d domprof stacks; need %s %.2f)"
          % (" (control, leaf frames dropped)" if rotate else "", s, len(perf), len(dp),
             "<" if rotate else ">=", minimum))
    if s < 1.0 and not rotate:
        show(perf, dp, 6)
    return (s >= minimum) != rotate


def same(a_path, b_path, minimum, swap=False):
    a = fold_dp(a_path, user_only=True)
    b = fold_dp(b_path, user_only=True)
    if swap:
        b = collections.Counter({k.replace("func_a", "@").replace("func_c", "func_a").replace("@", "func_c"): v
                                 for k, v in b.items()})
    s = sim(a, b)
    print("  perf.data vs domprof recording, user stacks%s: %.4f (need %s %.2f)"
          % (" (control, func_a and func_c swapped)" if swap else "", s, "<" if swap else ">=", minimum))
    if not swap:
        show(a, b, 5, ("perf.data", "domprof recording"))
    return (s >= minimum) != swap


def comm_counts(path):
    c = collections.Counter()
    with open(path) as f:
        if f.readline().startswith("samples,"):
            f.seek(0)
            for r in csv.DictReader(f):
                c[r["comm"]] += int(r["samples"])
            return c
        f.seek(0)
        for line in f:
            m = re.match(r"^\s*[\d.]+%\s+(\d+)\s+(.*?)\s*$", line)
            if m:
                c[m.group(2)] += int(m.group(1))
    return c


def comms(a_path, b_path, merge=False):
    a, b = comm_counts(a_path), comm_counts(b_path)
    if merge and b:
        b = collections.Counter({b.most_common(1)[0][0]: sum(b.values())})
    print("  samples per command%s: %s vs %s" % (" (control, merged)" if merge else "",
                                                 dict(a.most_common(6)), dict(b.most_common(6))))
    return (a == b and len(a) > 0) != merge


def imagecomm(dp_csv, pairs, merge=False):
    want = dict(p.split("=", 1) for p in pairs)
    rows = list(csv.DictReader(open(dp_csv)))
    if merge and rows:
        top = comm_counts(dp_csv).most_common(1)[0][0]
        for r in rows:
            r["comm"] = top
    got = collections.defaultdict(collections.Counter)
    for r in rows:
        if r["image"] in want:
            got[r["image"]][r["comm"]] += int(r["samples"])
    print("  commands of each image's samples%s: %s" % (" (control, merged)" if merge else "",
                                                       {k: dict(v) for k, v in got.items()}))
    ok = all(got[i] and set(got[i]) == {c} for i, c in want.items())
    return ok != merge


def main(argv):
    cmd = argv[1]
    if cmd == "counts":
        ok = counts(argv[2], argv[3])
    elif cmd == "shares":
        ok = shares(argv[2], argv[3], "--rotate" in argv)
    elif cmd == "fold":
        ok = fold(argv[2], argv[3], float(argv[4]), "--rotate" in argv)
    elif cmd == "same":
        ok = same(argv[2], argv[3], float(argv[4]), "--swap" in argv)
    elif cmd == "comms":
        ok = comms(argv[2], argv[3], "--merge" in argv)
    elif cmd == "imagecomm":
        args = [a for a in argv[3:] if a != "--merge"]
        ok = imagecomm(argv[2], args, "--merge" in argv)
    else:
        raise SystemExit("unknown subcommand " + cmd)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
