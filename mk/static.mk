# SPDX-License-Identifier: MIT
# `make static`: build/static/domprof, a fully static binary for guests
# that have no C library or elfutils (a busybox initramfs): copy it in and
# run `domprof record -a` or `domprof agent` there.
#
# It links the same objects as build/domprof (build/obj/, position
# independent code links fine into a static executable) against the
# static archives of elfutils and its compression libraries, taken from
# `pkg-config --static` (libdw pulls in libbz2, liblzma, libz, libzstd),
# plus libiberty (demangling). Debian: libelf-dev libdw-dev libzstd-dev
# zlib1g-dev liblzma-dev libbz2-dev libiberty-dev libdeflate-dev ship the
# .a files (libdeflate: lines.c inflates compressed debug sections with it).
# Debug info is stripped to keep the initramfs small; symbols stay.
# capstone is not linked (annotate dlopens it, src/output/disasm.h).

STATIC_PKG_LIBS := $(shell pkg-config --static --libs libbpf libdw libelf libzstd libdeflate 2>/dev/null)
ifeq ($(strip $(STATIC_PKG_LIBS)),)
STATIC_PKG_LIBS := -ldw -lelf -lbz2 -llzma -lzstd -ldeflate -lz
endif
STATIC_LIBS := $(STATIC_PKG_LIBS) -liberty -lz -lpthread -lm

.PHONY: static static-check

static: build/static/domprof

build/static/domprof: build/obj/src/cli/main.o $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) -static -Wl,--strip-debug -o $@.tmp $^ $(STATIC_LIBS)
	@mv $@.tmp $@

# Proves the result is static and runs: used by tests/e2e/static-build.sh.
static-check: build/static/domprof
	@file $< | grep -q 'statically linked' || { file $<; echo "static-check: not statically linked"; exit 1; }
	@$< --version

# `make test` runs tests/e2e/static-build.sh against a fresh static binary.
fixtures: build/static/domprof
