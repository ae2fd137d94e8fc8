# libFuzzer target for the file reader (make fuzz), and its seed corpus.
FUZZ_CC := clang
FUZZ_FLAGS := -std=gnu11 -g -O1 -Isrc -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
FORMAT_SRC := $(wildcard src/format/*.c) $(wildcard src/util/*.c)

fuzz: build/fuzz/fuzz-reader build/fuzz/mkseed

build/fuzz/fuzz-reader: tests/fuzz/fuzz-reader.c $(FORMAT_SRC) $(wildcard src/format/*.h src/util/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-reader.c $(FORMAT_SRC) -lzstd -lpthread

build/fuzz/mkseed: tests/fuzz/mkseed.c build/libdomprof.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< build/libdomprof.a $(LIBS)

# Run the reader fuzzer for FUZZ_SECONDS (default 60) on the seed corpus.
fuzz-run: fuzz
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-60} bash tests/e2e/fuzz-reader.sh
