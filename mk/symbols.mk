# SPDX-License-Identifier: MIT
# Symbol-resolution fixtures (symbols engineer): small ELF files in
# build/fixtures/ for tests/unit/test-symbols-elf.c — a non-PIE and a PIE
# executable, a shared library, a C++ program, and stripped binaries
# whose symbols live in separate debug files found via .gnu_debuglink
# (one beside the binary, one in a .debug/ subdirectory) or by build-id
# (in build/fixtures/debugroot/.build-id/).

FIX_DIR   := build/fixtures
FIX_FLAGS := -O1 -g -fno-inline -fno-omit-frame-pointer
SYM_FIXTURES := $(FIX_DIR)/nopie $(FIX_DIR)/pie $(FIX_DIR)/libfix.so $(FIX_DIR)/cxx \
                $(FIX_DIR)/stripped $(FIX_DIR)/stripped2 $(FIX_DIR)/stripped3

$(FIX_DIR)/nopie: tests/fixtures/fix_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(FIX_FLAGS) -fno-pie -no-pie -o $@ $<

$(FIX_DIR)/pie: tests/fixtures/fix_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(FIX_FLAGS) -fPIE -pie -o $@ $<

$(FIX_DIR)/libfix.so: tests/fixtures/fix_lib.c
	@mkdir -p $(dir $@)
	$(CC) $(FIX_FLAGS) -fPIC -shared -o $@ $<

$(FIX_DIR)/cxx: tests/fixtures/fix_cxx.cc
	@mkdir -p $(dir $@)
	g++ $(FIX_FLAGS) -fPIE -pie -o $@ $<

# debug file beside the binary
$(FIX_DIR)/stripped: tests/fixtures/fix_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(FIX_FLAGS) -fPIE -pie -o $@.full $<
	objcopy --only-keep-debug $@.full $@.debug
	objcopy --strip-all --add-gnu-debuglink=$@.debug $@.full $@
	rm -f $@.full

# debug file in the .debug/ subdirectory
$(FIX_DIR)/stripped2: tests/fixtures/fix_prog.c
	@mkdir -p $(dir $@) $(FIX_DIR)/.debug
	$(CC) $(FIX_FLAGS) -fno-pie -no-pie -o $@.full $<
	objcopy --only-keep-debug $@.full $(FIX_DIR)/.debug/stripped2.debug
	objcopy --strip-all --add-gnu-debuglink=$(FIX_DIR)/.debug/stripped2.debug $@.full $@
	rm -f $@.full

# no debuglink: the debug file is found only by build-id, under a debug
# root the test passes to sym_set_debug_dir()
$(FIX_DIR)/stripped3: tests/fixtures/fix_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(FIX_FLAGS) -fPIE -pie -Wl,--build-id=sha1 -o $@.full $<
	bid=$$(readelf -n $@.full | sed -n 's/.*Build ID: *//p'); \
	  d=$(FIX_DIR)/debugroot/.build-id/$$(echo $$bid | cut -c1-2); mkdir -p $$d && \
	  objcopy --only-keep-debug $@.full $$d/$$(echo $$bid | cut -c3-).debug
	objcopy --strip-all $@.full $@
	rm -f $@.full

fixtures: $(SYM_FIXTURES)

# the ELF unit test needs them; `make unit` alone builds them too
build/san/tests/test-symbols-elf build/obj/tests/test-symbols-elf: $(SYM_FIXTURES)
