// SPDX-License-Identifier: MIT
/*
 * Passive domain sampler over the GDB remote serial protocol (placeholder
 * while the sampler is written: every start fails with a clear reason).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collect/gdb_source.h"

struct gdb_source { int unused; };

struct gdb_source *gdb_source_start(const char *spec, uint32_t domain_id,
				    const struct domain_source_opts *o,
				    char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: gdb domains are not implemented yet", spec);
	return NULL;
}
int gdb_source_write_meta(struct gdb_source *s, struct dp_writer *w) { return -ENOSYS; }
int gdb_source_drain(struct gdb_source *s, struct dp_writer *w) { return 0; }
bool gdb_source_ended(const struct gdb_source *s) { return true; }
const char *gdb_source_message(const struct gdb_source *s) { return NULL; }
const char *gdb_source_info(const struct gdb_source *s) { return NULL; }
const char *gdb_source_name(const struct gdb_source *s) { return NULL; }
uint64_t gdb_source_samples(const struct gdb_source *s) { return 0; }
void gdb_source_stop(struct gdb_source *s) { }
void gdb_source_free(struct gdb_source *s) { }
