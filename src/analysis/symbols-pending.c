// SPDX-License-Identifier: MIT
/*
 * TEMPORARY (report engineer): weak placeholders for the symbol session
 * API until src/symbols/ implements it, so the tree links meanwhile.
 * Strong definitions in src/symbols/ replace these at link time; this
 * file is deleted as soon as they all exist. sym_session_new() returning
 * NULL makes `domprof report` fail with a clear message.
 */
#include <stddef.h>

#include "symbols/symbols.h"

#define W __attribute__((weak))

W struct sym_session *sym_session_new(void) { return NULL; }
W void sym_session_free(struct sym_session *s) { (void)s; }
W void sym_set_domain(struct sym_session *s, uint32_t d, uint8_t k, const char *n, uint64_t o)
{ (void)s; (void)d; (void)k; (void)n; (void)o; }
W void sym_add_symtab(struct sym_session *s, uint32_t d, const struct dp_symtab *st) { (void)s; (void)d; (void)st; }
W void sym_add_task(struct sym_session *s, uint32_t d, const struct dp_task *t) { (void)s; (void)d; (void)t; }
W void sym_add_mmap(struct sym_session *s, uint32_t d, const struct dp_mmap *m) { (void)s; (void)d; (void)m; }
W const struct sym_map *sym_find_map(struct sym_session *s, uint32_t d, uint32_t pid, uint8_t mode,
				    bool has_asid, uint64_t asid, uint64_t ip)
{ (void)s; (void)d; (void)pid; (void)mode; (void)has_asid; (void)asid; (void)ip; return NULL; }
W void sym_resolve(struct sym_session *s, const struct sym_map *m, uint64_t ip, struct sym_result *out)
{ (void)s; (void)m; (void)ip; (void)out; }
W const char *sym_comm(struct sym_session *s, uint32_t d, uint32_t pid) { (void)s; (void)d; (void)pid; return "[unknown]"; }
W size_t sym_warnings(const struct sym_session *s, const char *const **out) { (void)s; *out = NULL; return 0; }
