/* SPDX-License-Identifier: MIT */
/*
 * The merge algorithm behind `domprof merge` (docs/merge-diff.md): join
 * recordings made separately into one multi-domain stream. HOST's domains
 * keep their ids and DOMAIN records; each domain of a guest input gets
 * the next free id and the name NAME (its domain 0) or NAME.SUB; events
 * with the same definition share an id, others keep theirs or get a free
 * one (the SAMPLEs that use it are rewritten); every domain-scoped record
 * is copied raw under its new domain id; LOST records are copied (a
 * domain id in `where` remapped), and one STATS sums the inputs.
 *
 * The module never prints and does not open files: the command opens the
 * readers and the output (util/outfile.h), and reports damage and
 * incomplete inputs from each input's meta after merge_write.
 */
#ifndef DOMPROF_ANALYSIS_MERGE_H
#define DOMPROF_ANALYSIS_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "format/scan.h"

/* One input. The caller sets path, name and r (an open reader, owned by
 * the input from then on: merge_input_release frees it); the rest is
 * filled by merge_plan. in[0] is the host file (name NULL). Further
 * inputs with name NULL, before the guests, continue it: the later files
 * of the same recording (a `record --switch-output` series) or of the
 * same machine. Their domains keep their ids and are HOST's (a domain id
 * HOST lacks gets its own DOMAIN record), their records follow HOST's in
 * the order given, their wall times add up, the last one's exit status
 * is the output's, and a SYMTAB record that repeats one already copied
 * byte for byte (each file's kallsyms) is copied once. */
struct merge_input {
	const char *path;
	const char *name;         /* NULL for the host file */
	struct dp_reader *r;
	struct dp_meta m;         /* pass 1: domains, events, samples, lost, stats */
	/* parallel to m.domains: the output's id and (guests) name */
	uint32_t *dom_new_id;
	char **dom_new_name;
	size_t *order;            /* indices of m.domains in the order they are written */
	uint32_t *ev_new_id;      /* parallel to m.events */
};

#define MERGE_ERR_NAME   1   /* an output domain name is used twice (a usage error) */
#define MERGE_ERR_EVENTS 2   /* event ids beyond the sample's u16 */

/* The plan of one merge; zero it before merge_plan. */
struct merge {
	struct merge_input *in;
	size_t nin;
	struct dp_event *evs;    /* the output's events, names borrowed from the inputs */
	size_t nevs;
	/* after merge_write */
	uint64_t samples, lost;
	size_t ndomains;
	struct hmap host_ids;    /* private: domain ids of the host files */
};

/*
 * Pass 1 over every input, then the output's domain ids and names and
 * its events. Returns 0, or MERGE_ERR_* with a one-line reason in msg.
 */
int merge_plan(struct merge *mg, struct merge_input *in, size_t nin, char *msg, size_t msglen);

/*
 * Write the merged stream into w (opened by the caller with the header
 * it wants; not finished here): EVENTs, DOMAINs, pass 2 over every input,
 * and the STATS record. Returns 0 or the writer's negative errno.
 */
int merge_write(struct merge *mg, struct dp_writer *w);

/* Frees what merge_plan allocated in mg (not the inputs). */
void merge_release(struct merge *mg);
/* Frees an input's tables and its reader. */
void merge_input_release(struct merge_input *in);

#endif
