# libFuzzer target for the file reader (make fuzz); its seed corpus comes
# from `build/san/test-tool mkseed` (mk/testtool.mk).
FUZZ_CC := clang
FUZZ_FLAGS := -std=gnu11 -g -O1 -Isrc -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
FORMAT_SRC := $(wildcard src/format/*.c) $(wildcard src/util/*.c)

# Every source a fuzz target links is compiled once into build/fuzzobj/
# with the fuzzer's instrumentation ($(call fz,SRCS) names the objects):
# each target used to compile all its sources itself, 65 s of make
# test's build on 2 CPUs for the twelve targets.
FUZZ_OBJ_FLAGS = $(filter-out -fsanitize=%,$(FUZZ_FLAGS)) -fsanitize=fuzzer-no-link,address,undefined \
	$(shell pkg-config --cflags libbpf 2>/dev/null) -I/usr/include/capstone
build/fuzzobj/%.o: %.c $(wildcard src/*.h src/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_OBJ_FLAGS) -c -o $@ $<

fuzz: build/fuzz/fuzz-reader build/san/test-tool

build/fuzz/fuzz-reader: tests/fuzz/fuzz-reader.c $(call fz,$(FORMAT_SRC)) $(wildcard src/format/*.h src/util/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-reader.c $(call fz,$(FORMAT_SRC)) -lzstd -lpthread

# Run the reader fuzzer for FUZZ_SECONDS (default 60) on the seed corpus.
fuzz-run: fuzz
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-60} bash tests/e2e/fuzz-reader.sh

# libFuzzer target for the agent protocol's frame reader and payload decoders.
fuzz: build/fuzz/fuzz-agent
build/fuzz/fuzz-agent: tests/fuzz/fuzz-agent.c $(call fz,src/collect/agent_proto.c) $(call fz,$(FORMAT_SRC)) $(wildcard src/format/*.h src/util/*.h src/collect/agent_proto.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-agent.c $(call fz,src/collect/agent_proto.c) $(call fz,$(FORMAT_SRC)) -lzstd -lpthread

# libFuzzer target for the perf.data reader (src/format/perfdata.c);
# seeds from `test-tool gen-perfdata`, run by tests/e2e/fuzz-perfdata.sh.
fuzz: build/fuzz/fuzz-perfdata
build/fuzz/fuzz-perfdata: tests/fuzz/fuzz-perfdata.c $(call fz,$(FORMAT_SRC)) $(wildcard src/format/*.h src/util/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-perfdata.c $(call fz,$(FORMAT_SRC)) -lzstd -lpthread

# libFuzzer target for the kernel symbol cache file (src/symbols/kcache.c);
# seeds from `test-tool kcache`, run by tests/e2e/fuzz-kcache.sh.
KCACHE_FUZZ_SRC := src/symbols/kcache.c src/symbols/kallsyms.c $(FORMAT_SRC)
fuzz: build/fuzz/fuzz-kcache
build/fuzz/fuzz-kcache: tests/fuzz/fuzz-kcache.c $(call fz,$(KCACHE_FUZZ_SRC)) $(wildcard src/format/*.h src/util/*.h src/symbols/kcache.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-kcache.c $(call fz,$(KCACHE_FUZZ_SRC)) -lzstd -lpthread

# libFuzzer target for the kernel symbol name filter (src/format/ksymnf.c);
# its seed from the target itself, run by tests/e2e/fuzz-ksymnf.sh.
fuzz: build/fuzz/fuzz-ksymnf
build/fuzz/fuzz-ksymnf: tests/fuzz/fuzz-ksymnf.c $(call fz,$(KCACHE_FUZZ_SRC)) $(wildcard src/format/*.h src/util/*.h src/symbols/kcache.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-ksymnf.c $(call fz,$(KCACHE_FUZZ_SRC)) -lzstd -lpthread

# libFuzzer target for the source line cache file (src/symbols/lcache.c);
# seeds from a report's cache, run by tests/e2e/fuzz-lcache.sh.
LCACHE_FUZZ_SRC := src/symbols/lcache.c $(FORMAT_SRC)
fuzz: build/fuzz/fuzz-lcache
build/fuzz/fuzz-lcache: tests/fuzz/fuzz-lcache.c $(call fz,$(LCACHE_FUZZ_SRC)) $(wildcard src/util/*.h src/symbols/lcache.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-lcache.c $(call fz,$(LCACHE_FUZZ_SRC)) -lzstd -lpthread


# libFuzzer target for a chunk's counts part (src/format/counts.c);
# seeds from a real recording, run by tests/e2e/fuzz-counts.sh.
fuzz: build/fuzz/fuzz-counts
build/fuzz/fuzz-counts: tests/fuzz/fuzz-counts.c $(call fz,$(FORMAT_SRC)) $(wildcard src/format/*.h src/util/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-counts.c $(call fz,$(FORMAT_SRC)) -lzstd -lpthread
