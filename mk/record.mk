# SPDX-License-Identifier: MIT
# domprof record: the recorder's overhead benchmark (bench/record-overhead),
# run by `make bench` next to the other benchmarks.
.PHONY: bench-record-overhead
bench: bench-record-overhead
bench-record-overhead: build/domprof workloads
	bench/record-overhead
