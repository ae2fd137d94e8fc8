# libFuzzer target for the file reader (make fuzz); its seed corpus comes
# from `build/san/test-tool mkseed` (mk/testtool.mk).
FUZZ_CC := clang
FUZZ_FLAGS := -std=gnu11 -g -O1 -Isrc -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
FORMAT_SRC := $(wildcard src/format/*.c) $(wildcard src/util/*.c)

fuzz: build/fuzz/fuzz-reader build/san/test-tool

build/fuzz/fuzz-reader: tests/fuzz/fuzz-reader.c $(FORMAT_SRC) $(wildcard src/format/*.h src/util/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-reader.c $(FORMAT_SRC) -lzstd -lpthread

# Run the reader fuzzer for FUZZ_SECONDS (default 60) on the seed corpus.
fuzz-run: fuzz
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-60} bash tests/e2e/fuzz-reader.sh

# libFuzzer target for the agent protocol's frame reader and payload decoders.
fuzz: build/fuzz/fuzz-agent
build/fuzz/fuzz-agent: tests/fuzz/fuzz-agent.c src/collect/agent_proto.c $(FORMAT_SRC) $(wildcard src/format/*.h src/util/*.h src/collect/agent_proto.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-agent.c src/collect/agent_proto.c $(FORMAT_SRC) -lzstd -lpthread

# libFuzzer target for the perf.data reader (src/format/perfdata.c);
# seeds from `test-tool gen-perfdata`, run by tests/e2e/fuzz-perfdata.sh.
fuzz: build/fuzz/fuzz-perfdata
build/fuzz/fuzz-perfdata: tests/fuzz/fuzz-perfdata.c $(FORMAT_SRC) $(wildcard src/format/*.h src/util/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-perfdata.c $(FORMAT_SRC) -lzstd -lpthread
