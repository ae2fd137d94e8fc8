# SPDX-License-Identifier: MIT
# Guest kernel symbols from guest memory (src/guest/ksyms.c): a libFuzzer
# target feeding it fake guest memory (and the host cache's kallsyms
# entry, guest/cache.c, the same bytes after a header), built with clang;
# tests/e2e/fuzz-ksyms.sh runs it briefly on synthetic kallsyms layouts.
KSYMS_FUZZ_SRC := src/guest/ksyms.c src/guest/kbuildid.c src/guest/mem.c src/guest/cache.c src/symbols/kallsyms.c \
		  src/util/cachedir.c src/util/file.c src/util/sha256.c src/util/xalloc.c
KSYMS_FUZZ_HDR := src/guest/ksyms.h src/guest/mem.h src/guest/cache.h src/symbols/kallsyms.h \
		  src/util/cachedir.h src/util/file.h src/util/le.h src/util/sha256.h src/util/xalloc.h

fuzz: build/fuzz/fuzz-ksyms

build/fuzz/fuzz-ksyms: tests/fuzz/fuzz-ksyms.c $(call fz,$(KSYMS_FUZZ_SRC)) $(KSYMS_FUZZ_HDR)
	@mkdir -p $(dir $@)
	clang -std=gnu11 -g -O1 -Isrc -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		-o $@ tests/fuzz/fuzz-ksyms.c $(call fz,$(KSYMS_FUZZ_SRC))
