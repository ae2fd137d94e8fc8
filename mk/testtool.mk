# SPDX-License-Identifier: MIT
# tests/tool/test-tool: the one helper binary for internals the shell
# tests need (git's test-tool pattern): embed-elf, and the test-data
# generators mkseed (fuzz seeds), gen-profile (flame graph / export
# profiles) and gen-hostile (hostile recordings), one source file per
# subcommand. Sanitized, like the binary the tests run.
TT_SRC := $(sort $(wildcard tests/tool/*.c))

build/san/test-tool: $(TT_SRC) tests/tool/test-tool.h tests/unit/fixture.h build/san/libdomprof.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests/tool -o $@ $(TT_SRC) build/san/libdomprof.a $(LIBS)

fixtures: build/san/test-tool
