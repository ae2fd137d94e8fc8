# SPDX-License-Identifier: MIT
# `domprof report` fragment (report engineer): the shared-library
# workload, report tests' extra workloads, the report benchmark and the
# demo (mk/demo.mk).

# libwork.so lives in tests/workloads/lib/ so the generic *.c rule does
# not link it as a program; shlib links against it with rpath $ORIGIN.
build/workloads/libwork.so: tests/workloads/lib/libwork.c
	@mkdir -p $(dir $@)
	$(CC) $(WL_FLAGS) -fPIC -shared -o $@ $<

build/workloads/shlib: tests/workloads/shlib.c build/workloads/libwork.so
	@mkdir -p $(dir $@)
	$(CC) $(WL_FLAGS) -o $@ $< -Lbuild/workloads -lwork '-Wl,-rpath,$$ORIGIN'

EXTRA_WORKLOADS += build/workloads/libwork.so

.PHONY: bench-report
bench-report: build/domprof build/workloads/threefuncs
	@bench/report-vs-perf
bench: bench-report
