# SPDX-License-Identifier: MIT
# Guest module symbols (src/guest/modules.c): a libFuzzer target on a fake
# guest memory and a fuzzed layout; tests/e2e/fuzz-guest-modules.sh runs it
# briefly.
GM_FUZZ_SRC := src/guest/modules.c src/guest/mem.c src/util/xalloc.c
GM_FUZZ_HDR := src/guest/modules.h src/guest/layout.h src/guest/mem.h src/util/le.h src/util/xalloc.h

fuzz: build/fuzz/fuzz-guest-modules

build/fuzz/fuzz-guest-modules: tests/fuzz/fuzz-guest-modules.c $(call fz,$(GM_FUZZ_SRC)) $(GM_FUZZ_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-guest-modules.c $(call fz,$(GM_FUZZ_SRC))
