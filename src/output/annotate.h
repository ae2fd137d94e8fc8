/* SPDX-License-Identifier: MIT */
/*
 * `domprof annotate`: one function's instructions with the share of the
 * function's self samples on each (text, or one JSON object), from a
 * profile loaded with opts.hits. Disassembly is capstone's (x86-64, AT&T
 * syntax as objdump and perf annotate print it). Where the image has no
 * code bytes (a kernel table, a passive guest's user space, a file that
 * changed since the recording) the hot addresses are listed without
 * instructions, and the header says why. Nothing here reads options.
 */
#ifndef DOMPROF_OUTPUT_ANNOTATE_H
#define DOMPROF_OUTPUT_ANNOTATE_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/profile.h"

#define ANNOTATE_MAX_CODE (1u << 20)  /* bytes of one function disassembled */

/* Where the source files are: a path from the line table that starts
 * with strip_prefix loses it, and source_prefix (a directory) is put in
 * front (both may be NULL). no_source: no source lines at all. */
struct annotate_opts {
	const char *strip_prefix, *source_prefix;
	bool no_source;
};

/* Text for symbol sym (an index into p->syms). json: write one JSON
 * object instead (the caller writes the surrounding array). Returns 0,
 * or -EIO when writing failed. */
int annotate_symbol(FILE *f, const struct profile *p, uint32_t sym, int json,
		    const struct annotate_opts *o);

#endif
