# SPDX-License-Identifier: MIT
# --call-graph dwarf (issue 14, docs/dwarf-notes.md): the workload that
# frame pointers cannot unwind is built without them (the generic
# workload rule turns them on); this explicit rule wins over the pattern.
build/workloads/nofp: tests/workloads/nofp.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fomit-frame-pointer -fno-inline -fno-optimize-sibling-calls -o $@ $<
