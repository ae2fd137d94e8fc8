# SPDX-License-Identifier: MIT
# libFuzzer target for the guest's BTF layouts and task list
# (src/guest/layout.c, tasks.c): tests/fuzz/fuzz-guest.c, run by
# tests/e2e/fuzz-guest.sh. libbpf itself is the system's (not
# instrumented): its crashes still show, its out-of-bounds reads may not.
fuzz: build/fuzz/fuzz-guest
GUEST_FUZZ_SRC := src/guest/layout.c src/guest/tasks.c src/guest/mem.c src/util/hmap.c src/util/xalloc.c
build/fuzz/fuzz-guest: tests/fuzz/fuzz-guest.c $(call fz,$(GUEST_FUZZ_SRC)) $(wildcard src/guest/*.h src/util/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(shell pkg-config --cflags libbpf) -o $@ tests/fuzz/fuzz-guest.c $(call fz,$(GUEST_FUZZ_SRC)) \
		$(shell pkg-config --libs libbpf) -lelf -lz
