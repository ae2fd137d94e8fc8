# SPDX-License-Identifier: MIT
# Passive domains (gdbstub sampler): a libFuzzer target for the GDB remote
# serial protocol parsers (packets, target descriptions, stop replies,
# symbol text), built with clang; tests/e2e/fuzz-gdb.sh runs it briefly.
GDB_FUZZ_SRC := src/collect/gdb_rsp.c src/collect/kaslr.c src/symbols/kallsyms.c src/symbols/vmlinux.c \
                src/util/file.c src/util/xalloc.c
GDB_FUZZ_HDR := src/collect/gdb_rsp.h src/collect/kaslr.h src/symbols/kallsyms.h src/symbols/vmlinux.h \
                src/util/file.h src/util/xalloc.h

fuzz: build/fuzz/fuzz-gdb

build/fuzz/fuzz-gdb: tests/fuzz/fuzz-gdb.c $(call fz,$(GDB_FUZZ_SRC)) $(GDB_FUZZ_HDR)
	@mkdir -p $(dir $@)
	clang -std=gnu11 -g -O1 -Isrc -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		-o $@ tests/fuzz/fuzz-gdb.c $(call fz,$(GDB_FUZZ_SRC)) -lelf
