build/bench/format: bench/format.c build/libdomprof.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O3 -o $@ $< build/libdomprof.a $(LIBS)
