# SPDX-License-Identifier: MIT
# --call-graph dwarf (issue 14, docs/dwarf-notes.md): the workload that
# frame pointers cannot unwind is built without them (the generic
# workload rule turns them on); this explicit rule wins over the pattern.
build/workloads/nofp: tests/workloads/nofp.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fomit-frame-pointer -fno-inline -fno-optimize-sibling-calls -o $@ $<

# The same with its call-frame information in .debug_frame only (no
# .eh_frame for its own functions), and a stripped copy of that whose
# .debug_frame is in a separate debug file beside it (.gnu_debuglink):
# the unwinder's .debug_frame paths (tests/e2e/report-dwarf.sh).
workloads: build/workloads/nofp-dbgframe build/workloads/nofp-split build/workloads/threefuncs-nocfi
build/workloads/nofp-dbgframe: tests/workloads/nofp.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fomit-frame-pointer -fno-inline -fno-optimize-sibling-calls \
		-fno-asynchronous-unwind-tables -fno-unwind-tables -o $@ $<

build/workloads/nofp-split: build/workloads/nofp-dbgframe
	objcopy --only-keep-debug $< $@.debug
	objcopy --strip-debug --add-gnu-debuglink=$@.debug $< $@

# threefuncs with frame pointers but no call-frame information for its
# own functions (no -g, no unwind tables): the unwinder finds one frame,
# the recorded frame-pointer chain more, so report keeps the latter.
build/workloads/threefuncs-nocfi: tests/workloads/threefuncs.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls \
		-fno-asynchronous-unwind-tables -fno-unwind-tables -o $@ $<

# libFuzzer target for the unwinder (tests/fuzz/fuzz-unwind.c): the
# session and the reader's sources, built with the fuzzer's sanitizers.
UNWIND_FUZZ_SRC := $(wildcard src/symbols/*.c) $(wildcard src/format/*.c) $(wildcard src/util/*.c)
fuzz: build/fuzz/fuzz-unwind
build/fuzz/fuzz-unwind: tests/fuzz/fuzz-unwind.c $(call fz,$(UNWIND_FUZZ_SRC)) $(wildcard src/symbols/*.h src/format/*.h src/util/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-unwind.c $(call fz,$(UNWIND_FUZZ_SRC)) \
		-ldw -lelf -lzstd -ldeflate -liberty -lz -lpthread

# The known call graph across a program and a shared library
# (tests/workloads/dwknown.c, tests/e2e/dwarf-known.sh): both -O2
# -fomit-frame-pointer as distributions build; noipa in the sources and
# no sibling calls keep the callers' frames; no -g (the .eh_frame that
# x86-64 code always has is what the unwinder uses). The library lives
# in tests/workloads/lib/ so the generic rule does not link it as a
# program; dwknown finds it by rpath $ORIGIN.
DWK_FLAGS := -O2 -fomit-frame-pointer -fno-optimize-sibling-calls
build/workloads/libdwknown.so: tests/workloads/lib/libdwknown.c tests/workloads/lib/dwknown.h
	@mkdir -p $(dir $@)
	$(CC) $(DWK_FLAGS) -fPIC -shared -o $@ $<

build/workloads/dwknown: tests/workloads/dwknown.c tests/workloads/lib/dwknown.h build/workloads/libdwknown.so
	@mkdir -p $(dir $@)
	$(CC) $(DWK_FLAGS) -o $@ $< -Lbuild/workloads -ldwknown '-Wl,-rpath,$$ORIGIN'

EXTRA_WORKLOADS += build/workloads/libdwknown.so

# libFuzzer target for the guest code table (tests/fuzz/fuzz-code.c,
# src/symbols/code.c), the same sources as the unwinder's.
fuzz: build/fuzz/fuzz-code
build/fuzz/fuzz-code: tests/fuzz/fuzz-code.c $(call fz,$(UNWIND_FUZZ_SRC)) $(wildcard src/symbols/*.h src/format/*.h src/util/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-code.c $(call fz,$(UNWIND_FUZZ_SRC)) \
		-ldw -lelf -lzstd -ldeflate -liberty -lz -lpthread

# libFuzzer target for source lines over crafted DWARF (tests/fuzz/fuzz-lines.c:
# lines.c's CU ranges and inline segment tables, dwsect.c's rebuilt file),
# run by tests/e2e/fuzz-lines.sh on seeds made from the lines workload.
fuzz: build/fuzz/fuzz-lines
build/fuzz/fuzz-lines: tests/fuzz/fuzz-lines.c $(call fz,$(UNWIND_FUZZ_SRC)) $(wildcard src/symbols/*.h src/format/*.h src/util/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-lines.c $(call fz,$(UNWIND_FUZZ_SRC)) \
		-ldw -lelf -lzstd -ldeflate -liberty -lz -lpthread
