# SPDX-License-Identifier: MIT
# domprof build. `make` -> build/domprof; `make test` -> sanitized build + all tests.
# Every src/**/*.c except src/cli/main.c goes into one static library, so unit
# tests link exactly the code the binary runs.

CC      ?= gcc
PREFIX  ?= /usr/local
PKGS    := libelf libdw libzstd libdeflate libbpf capstone
# libdebuginfod-dev gives <elfutils/debuginfod.h> only: the library is dlopen'ed
# at run time (src/symbols/debuginfod.c), so it and libcurl are not linked.
VERSION := 0.1.0

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# capstone's header only: the library is dlopen'ed by annotate
# (src/output/disasm.c), linked it cost every command ~3 MB resident.
PKG_LIBS   := $(shell pkg-config --libs $(filter-out capstone,$(PKGS)) 2>/dev/null)

WARN    := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) -Isrc -D_GNU_SOURCE -DDOMPROF_VERSION='"$(VERSION)"' $(PKG_CFLAGS)
LIBS    := $(PKG_LIBS) -liberty -lz -lpthread -lm

SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

SRC     := $(filter-out src/cli/main.c,$(shell find src -name '*.c' | sort))
HDR     := $(shell find src -name '*.h')
UNIT    := $(sort $(wildcard tests/unit/test-*.c))

OBJ       := $(SRC:%.c=build/obj/%.o)
SAN_OBJ   := $(SRC:%.c=build/san/%.o)
UNIT_BIN  := $(UNIT:tests/unit/%.c=build/san/tests/%)
UNIT_VG   := $(UNIT:tests/unit/%.c=build/obj/tests/%)
WORKLOADS := $(patsubst tests/workloads/%.c,build/workloads/%,$(wildcard tests/workloads/*.c)) \
             $(patsubst tests/workloads/%.cc,build/workloads/%,$(wildcard tests/workloads/*.cc))


.PHONY: cli-docs
.PHONY: all test unit check-valgrind fuzz fuzz-run install demo deps static clean bench workloads fixtures

all: build/domprof

build/obj/%.o: %.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

build/san/%.o: %.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -O1 -c $< -o $@

build/libdomprof.a: $(OBJ)
	@rm -f $@; ar rcs $@ $^

build/san/libdomprof.a: $(SAN_OBJ)
	@rm -f $@; ar rcs $@ $^

# The release binary takes elfutils, libbpf and the compression libraries
# from their static archives when all are installed (the -dev packages of
# mk/static.mk ship them), libc and libpthread staying shared (annotate and
# debuginfod dlopen their libraries). Every command is a short process: the
# dynamic loader mapping and relocating those 8 libraries was ~10% of a
# report of a 3000-sample recording (12.6% of its samples in _dl_start,
# 0.6 M instructions; `--version` 1.0-1.4 -> 0.6-0.8 ms). Without the
# archives it links shared, as the tests' binaries always do.
REL_STATIC := bpf dw elf bz2 lzma zstd deflate z
REL_STATIC_OK := $(shell for l in $(REL_STATIC); do f=$$($(CC) -print-file-name=lib$$l.a); \
	[ "$$f" != "lib$$l.a" ] || { echo no; break; }; done)
ifeq ($(REL_STATIC_OK),)
REL_LIBS := -Wl,-Bstatic -lbpf -ldw -lelf -lbz2 -llzma -lzstd -ldeflate -lz -liberty \
	-Wl,-Bdynamic -lpthread -lm
else
REL_LIBS := $(LIBS)
endif

build/domprof: build/obj/src/cli/main.o $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(REL_LIBS)

# The sanitized binary the end-to-end tests run.
build/san/domprof: build/san/src/cli/main.o $(SAN_OBJ)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -o $@ $^ $(LIBS)

build/san/tests/%: tests/unit/%.c build/san/libdomprof.a tests/unit/unit.h tests/unit/fixture.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests/unit -o $@ $< build/san/libdomprof.a $(LIBS)

build/obj/tests/%: tests/unit/%.c build/libdomprof.a tests/unit/unit.h tests/unit/fixture.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< build/libdomprof.a $(LIBS)

# Workloads with known profiles: frame pointers on, so -g call chains work.
WL_FLAGS := -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls
build/workloads/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) $(WL_FLAGS) -o $@ $< $(shell sed -n 's|^// *LDFLAGS: *||p' $<) -lm -lpthread
build/workloads/%: tests/workloads/%.cc
	@mkdir -p $(dir $@)
	g++ $(WL_FLAGS) -o $@ $<
workloads: $(WORKLOADS) $(EXTRA_WORKLOADS)

# The objects of a fuzz target's sources (mk/fuzz.mk: each compiled once
# for all targets); defined before mk/*.mk, whose rules use it.
fz = $(patsubst %.c,build/fuzzobj/%.o,$(1))
-include mk/*.mk

unit: $(UNIT_BIN)

deps:
	@./scripts/deps.sh

# The build runs on every CPU (it was a third of `make test` serially).
test: deps
	@$(MAKE) --no-print-directory -j$$(nproc) build/domprof build/san/domprof unit $(UNIT_VG) workloads fixtures fuzz vm-guest static
	@./tests/run.sh

check-valgrind: $(UNIT_VG)
	@# two at a time (each test is single-threaded under valgrind's lock)
	@printf '%s\n' $(UNIT_VG) | xargs -P 2 -I{} sh -c \
	  'UNIT_VALGRIND=1 valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite {} >/dev/null || { echo "valgrind: {} FAILED"; exit 1; }' \
	  && echo "valgrind: all unit tests clean"

install: build/domprof
	install -D -m 755 build/domprof $(DESTDIR)$(PREFIX)/bin/domprof
	install -d $(DESTDIR)$(PREFIX)/share/doc/domprof
	install -m 644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/domprof/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -D -m 644 scripts/domprof-completion.bash \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/domprof

# The man pages, the completion and the option lists of docs/options.md
# are made from the commands' option tables (src/cli/opt.h); checked in,
# and tests/e2e/cli-docs.sh fails when they are stale.
cli-docs: build/domprof
	scripts/gen-cli-docs $(CURDIR)/build/domprof

clean:
	rm -rf build

# Targets that mk/*.mk fragments extend with prerequisites.
fixtures:
fuzz:
