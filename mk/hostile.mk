# SPDX-License-Identifier: MIT
# Hostile recordings for the report-side bounds tests (decompression
# bombs, many domains, FIFOs as mapped paths): tests/e2e/hostile-*.sh.
build/hostile/gen-hostile: tests/hostile/gen-hostile.c build/libdomprof.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< build/libdomprof.a $(LIBS)

fixtures: build/hostile/gen-hostile
