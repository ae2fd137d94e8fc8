# SPDX-License-Identifier: MIT
# tests/tool/test-tool: the one helper binary for internals the shell
# tests need (git's test-tool pattern). Sanitized, like the binary the
# tests run.
build/san/test-tool: tests/tool/test-tool.c build/san/libdomprof.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -o $@ $< build/san/libdomprof.a $(LIBS)

fixtures: build/san/test-tool
