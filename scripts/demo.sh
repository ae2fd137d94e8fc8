#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make demo`: the shortest way to see domprof work. Installs what is
# missing (scripts/deps.sh), builds domprof and the threefuncs workload,
# records it at 1000 Hz with call chains and prints `domprof report -l`,
# with a few lines on what to look for. The workload's true profile is
# known: func_a 50%, func_b 30%, func_c 20% of its CPU time.
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh
make -s build/domprof build/workloads/threefuncs
OUT=${DEMO_OUT:-build/demo}
mkdir -p "$OUT"

cat <<'TXT'

== domprof demo ==============================================================
The workload build/workloads/threefuncs calls three functions with the same
inner loop, 5, 3 and 2 times per round, so its CPU time splits exactly
50% / 30% / 20% between func_a, func_b and func_c. domprof samples it 1000
times per second (with call chains) and then names every sample.

$ domprof record -F 1000 -g -o build/demo/domprof.data -- build/workloads/threefuncs
TXT
./build/domprof record -f -F 1000 -g -o "$OUT/domprof.data" -- build/workloads/threefuncs
echo
echo '$ domprof report -l -t 0.5 -i build/demo/domprof.data'
./build/domprof report -l -t 0.5 -i "$OUT/domprof.data"

cat <<'TXT'

What you see:
  - the header: the event (cpu-clock, here no hardware PMU), the rate, how many
    samples were taken and lost, and the domains (only the host here; each VM
    profiled with --domain shows up as its own domain);
  - one row per function: samples, share of all samples, domain, the binary it
    lives in ("image") and the function. func_a, func_b and func_c should be
    close to 50%, 30% and 20% of the workload's samples; the rest is kernel
    work on behalf of the process (timer ticks, scheduling) under
    [kernel.kallsyms]. Rows below 0.5% are hidden here (-t 0.5).

Next:
  domprof report -i build/demo/domprof.data            image summary (like opreport)
  domprof report -i build/demo/domprof.data -l -g      callers/callees: main -> func_a ...
  domprof report -i build/demo/domprof.data -l --format csv|json
  sudo domprof record -a -g -d 5                       the whole machine for 5 s
TXT
