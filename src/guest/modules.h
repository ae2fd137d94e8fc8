/* SPDX-License-Identifier: MIT */
/*
 * The guest's loaded modules and their symbols, read from guest memory.
 *
 * Walks the kernel's `modules` list (bounded: GUEST_MODULES_MAX, and
 * revisits) with the offsets of guest/layout.h and reads each module's own
 * symbol table (struct mod_kallsyms: Elf64_Sym symtab[num_symtab] and
 * strtab), so samples in module text are named. Output is
 * /proc/kallsyms-style text with a " [module]" suffix per line, the form
 * the symbols module already reads for a kallsyms copy.
 */
#ifndef DOMPROF_GUEST_MODULES_H
#define DOMPROF_GUEST_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "guest/layout.h"
#include "guest/mem.h"

#define GUEST_MODULES_MAX      4096u
#define GUEST_MODULE_MAX_SYMS  (1u << 20)   /* per module */
#define GUEST_MODULE_MAX_STRTAB (16u << 20) /* bytes per module */
/* Bytes of text made in all (many symbols may share one long name). */
#define GUEST_MODULES_MAX_TEXT (64u << 20)

struct guest_modsyms {
	char *text;             /* "%016lx t name\t[module]\n" lines, in the
				 * kernel's order; malloc'd, NUL-terminated
				 * (also when empty), caller frees */
	size_t len;             /* without the NUL */
	size_t nmodules, nsyms;
};

/* Returns 0 (also with no modules loaded), -ENOENT (layout lacks the
 * module fields or the `modules` address: *why says which), -EINVAL (a
 * layout value out of range), -EBADMSG (the list was broken before any
 * module was named), or the read error of the list head, with *why set.
 * A module whose table does not validate is skipped and counted in
 * *skipped (may be NULL). A list that breaks (a pointer outside the
 * kernel half, a revisit, more than GUEST_MODULES_MAX entries, the read
 * budget or GUEST_MODULES_MAX_TEXT reached) ends the walk: the modules
 * named so far are kept. On 0, *why is empty unless a module was skipped
 * or the walk was cut; it then names the cause (the cut's, if any). */
int guest_modules_read(struct guest_mem *m, const struct guest_layout *l,
		       struct guest_modsyms *out, size_t *skipped,
		       char *why, size_t whylen);

void guest_modsyms_free(struct guest_modsyms *k);

#endif
