# SPDX-License-Identifier: MIT
# The guest's ORC tables and unwinder (src/guest/orc.c): a libFuzzer
# target on a fake guest memory (tables and a stack);
# tests/e2e/fuzz-orc.sh runs it briefly.
ORC_FUZZ_SRC := src/guest/orc.c src/guest/mem.c src/util/xalloc.c
ORC_FUZZ_HDR := src/guest/orc.h src/guest/layout.h src/guest/mem.h src/util/le.h src/util/xalloc.h

fuzz: build/fuzz/fuzz-orc

build/fuzz/fuzz-orc: tests/fuzz/fuzz-orc.c $(call fz,$(ORC_FUZZ_SRC)) $(ORC_FUZZ_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-orc.c $(call fz,$(ORC_FUZZ_SRC))
