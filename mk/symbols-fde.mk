# SPDX-License-Identifier: MIT
# Names from unwind tables (src/symbols/fde.c): the stripped -O2 shared
# library of the `fdework` workload (tests/workloads/lib/libfde.c, with
# an unstripped copy libfde-full.so for the test's nm), the program, and
# the libFuzzer target on .eh_frame/.eh_frame_hdr/.debug_frame bytes
# (tests/fuzz/fuzz-fde.c, run by tests/e2e/fuzz-fde.sh).

build/workloads/libfde-full.so: tests/workloads/lib/libfde.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared -Wl,--build-id=sha1 -o $@ $<

build/workloads/libfde.so: build/workloads/libfde-full.so
	strip --strip-all -o $@ $<

build/workloads/fdework: tests/workloads/fdework.c build/workloads/libfde.so
	@mkdir -p $(dir $@)
	$(CC) $(WL_FLAGS) -o $@ $< -Lbuild/workloads -lfde '-Wl,-rpath,$$ORIGIN'

EXTRA_WORKLOADS += build/workloads/libfde.so build/workloads/libfde-full.so

# the unit test reads the library and its unstripped copy
build/san/tests/test-symbols-fde build/obj/tests/test-symbols-fde: build/workloads/libfde.so build/workloads/libfde-full.so

FDE_FUZZ_SRC := src/symbols/fde.c src/symbols/elfopen.c src/util/file.c src/util/xalloc.c
fuzz: build/fuzz/fuzz-fde
build/fuzz/fuzz-fde: tests/fuzz/fuzz-fde.c $(call fz,$(FDE_FUZZ_SRC)) src/symbols/internal.h src/util/file.h src/util/xalloc.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-fde.c $(call fz,$(FDE_FUZZ_SRC)) -lelf -lz

# an unsized exported function followed by a static one (stripped)
build/fixtures/libunsized.so: tests/fixtures/fix_unsized.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -fPIC -shared -fno-toplevel-reorder -o $@.full $<
	strip --strip-all -o $@ $@.full
fixtures: build/fixtures/libunsized.so
build/san/tests/test-symbols-fde build/obj/tests/test-symbols-fde: build/fixtures/libunsized.so

# libFuzzer target for the ELF symbol loader (src/symbols/elf.c: notes,
# .symtab/.dynsym, the string table probe), run by tests/e2e/fuzz-elfsyms.sh.
ELFSYMS_FUZZ_SRC := src/symbols/elf.c src/symbols/symtab.c src/symbols/elfopen.c src/symbols/textsyms.c \
	src/symbols/kallsyms.c src/symbols/ktab.c \
	src/format/ksymidx.c src/format/ksymnf.c src/util/crc32c.c src/util/file.c src/util/xalloc.c
fuzz: build/fuzz/fuzz-elfsyms
build/fuzz/fuzz-elfsyms: tests/fuzz/fuzz-elfsyms.c $(call fz,$(ELFSYMS_FUZZ_SRC)) src/symbols/internal.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz-elfsyms.c $(call fz,$(ELFSYMS_FUZZ_SRC)) -lelf -lz -lzstd -liberty
