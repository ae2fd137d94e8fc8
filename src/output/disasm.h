/* SPDX-License-Identifier: MIT */
/*
 * capstone, the disassembler annotate uses, loaded with dlopen(3) on the
 * first use instead of linked: a linked libcapstone cost every command
 * ~3 MB of resident memory before main (the dynamic loader reads and
 * applies its ~1.8 MB of relocations to ~1.3 MB of tables), a third of
 * what `domprof export` of a perf.data needs. Only annotate disassembles.
 * The library is the one whose header this was built with
 * (libcapstone.so.CS_API_MAJOR).
 */
#ifndef DOMPROF_OUTPUT_DISASM_H
#define DOMPROF_OUTPUT_DISASM_H

#include <capstone.h>
#include <stdbool.h>

/* capstone's functions that annotate calls, as in capstone.h. */
struct disasm_api {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*option)(csh handle, cs_opt_type type, size_t value);
	void (*free)(cs_insn *insn, size_t count);
	cs_err (*close)(csh *handle);
	cs_insn *(*insn_new)(csh handle);   /* cs_malloc */
	bool (*iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
		     cs_insn *insn);        /* cs_disasm_iter */
};

/* The library's functions, loaded on the first call (later calls give the
 * same answer); NULL when it cannot be loaded, with *why a one-line reason
 * (a static string). */
const struct disasm_api *disasm_api(const char **why);

#endif
