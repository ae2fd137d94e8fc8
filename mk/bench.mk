# SPDX-License-Identifier: MIT
# Benchmark programs under bench/, built like the release binary
# (optimized, not sanitized) against build/libdomprof.a: bench/format
# (the file format's encoder and decoder) and bench/gdb-floor (QEMU's own
# stop/resume cost, the floor bench/passive-overhead compares domprof's
# hold time with).
build/bench/format: bench/format.c build/libdomprof.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O3 -o $@ $< build/libdomprof.a $(LIBS)

build/bench/gdb-floor: bench/gdb-floor.c src/collect/gdb_rsp.h src/util/clock.h build/libdomprof.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< build/libdomprof.a $(LIBS)

# A sanitized copy for tests/e2e/gdb-floor.sh (the tests run sanitized
# binaries); the benchmark uses the optimized one above.
build/san/bench/gdb-floor: bench/gdb-floor.c src/collect/gdb_rsp.h src/util/clock.h build/san/libdomprof.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -o $@ $< build/san/libdomprof.a $(LIBS)

fixtures: build/san/bench/gdb-floor

# bench/scale's recordings (bench/gen-scale.c): 1M/10M/100M samples with
# a busy machine's distributions, through the real writer.
build/bench/gen-scale: bench/gen-scale.c build/libdomprof.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -o $@ $< build/libdomprof.a $(LIBS) -lm
