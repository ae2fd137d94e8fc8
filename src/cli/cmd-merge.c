// SPDX-License-Identifier: MIT
/*
 * `domprof merge -o OUT HOST NAME=GUEST...`: join recordings made
 * separately (a host recording and `domprof record` runs inside guests,
 * copied out by hand) into one multi-domain file, as if the guests had
 * been active domains of the host's recording.
 *
 * The algorithm (domain ids and names, event unification, the copy, the
 * output's STATS) is src/analysis/merge.c, rules in docs/merge-diff.md;
 * this command parses options, opens the inputs and the output, and
 * prints the messages.
 * The output follows the rule of util/outfile.h (as `record -o` does):
 * written to .OUT.tmp-PID and renamed into place at the end, so an input
 * may be the output and a failure leaves OUT untouched; a symlink OUT is
 * followed, OUT.old kept unless -f, a non-regular OUT refused, and an OUT
 * a recorder is still writing is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "output/escape.h"
#include "format/format.h"
#include "analysis/inputs.h"
#include "analysis/merge.h"
#include "util/outfile.h"
#include "util/xalloc.h"


static void warn_damage(const struct merge_input *in)
{
	const struct dp_damage *dmg;
	size_t nd = dp_reader_damage(in->r, &dmg);
	uint64_t bytes = 0;
	for (size_t i = 0; i < nd; i++) {
		char at[4096];
		snprintf(at, sizeof(at), "%s: damaged at offset %" PRIu64, in->path, dmg[i].offset);
		cli_warn_text("merge", at, dmg[i].what);
		bytes += dmg[i].bytes_lost;
	}
	if (nd)
		cli_warn("merge", "%s is damaged: merged its %" PRIu64
				" readable samples, %" PRIu64 " bytes lost", in->path, in->m.samples, bytes);
	const char *inc = dp_reader_incomplete(in->r);
	if (inc) {
		char *e = text_escape(inc);
		cli_warn("merge", "%s: %s; the merged file says so too",
			in->path, e);
		free(e);
	}
}

struct merge_args {
	const char *out;
	bool force, quiet;
};

static const struct opt merge_opts[] = {
	OPT_STR('o', "output", "OUT", struct merge_args, out,
		"file to write; an existing OUT is renamed OUT.old"),
	OPT_BOOL('f', "force", struct merge_args, force, "overwrite OUT instead of keeping OUT.old"),
	OPT_BOOL('q', "quiet", struct merge_args, quiet, "no summary line"),
	OPT_TABLE_END,
};

const struct cmd_spec spec_merge = {
	.name = "merge",
	.summary = "join recordings made separately into one multi-domain file",
	.synopsis = "-o OUT [-f] HOST.data... [NAME=GUEST.data...]",
	.description =
		"Several HOST files (arguments, globs, A,B) are one recording continued:\n"
		"the files of a record --switch-output series, or of one machine, joined in\n"
		"the order given (same domains, samples added up, each file's kernel table\n"
		"kept once). One HOST file alone is copied (its user stacks stored in\n"
		"delta form, or whole with DOMPROF_USTACK_DELTA=0).\n"
		"\n"
		"Join recordings made separately into one multi-domain file: HOST.data\n"
		"keeps its domains (the host is domain 0); each NAME=GUEST.data (a\n"
		"recording made with `domprof record` inside a guest and copied out)\n"
		"becomes a new active domain NAME with the next free id, carrying its\n"
		"samples, processes, mappings and embedded symbol tables (its kallsyms).\n"
		"A guest file with several domains gives NAME, NAME.SUB, ...\n"
		"Damaged inputs are merged as far as they can be read, with a warning; an\n"
		"incomplete input (its recorder was killed) is merged with a warning and\n"
		"makes the output incomplete too.\n",
	.opts = merge_opts,
};

int cmd_merge(int argc, char **argv)
{
	struct merge_args ma = { 0 };
	char *ops[argc + 1];
	int nops, orc = opt_parse(&spec_merge, argc, argv, &ma, ops, &nops);
	if (orc != OPT_CONTINUE)
		return orc;
	const char *out = ma.out;
	bool force = ma.force, quiet = ma.quiet;
	if (!out)
		return usage_error("merge", "needs an output file (-o OUT)");
	if (nops < 1)
		return usage_error("merge", "needs a host recording");

	/* The command line for the header, before NAME=FILE are split below. */
	struct dp_header local;
	char **hargv = xcalloc((size_t)argc + 1, sizeof(char *));
	hargv[0] = "domprof";
	memcpy(hargv + 1, argv, (size_t)argc * sizeof(char *));
	dp_header_fill_local(&local, argc + 1, hargv);
	free(hargv);

	/* HOST files first (the first argument, and every later one that is
	 * not NAME=FILE: an existing file, or a name without '='), expanded
	 * (analysis/inputs.h), then the guests in their order */
	struct inputs hosts = { 0 };
	size_t nguests = 0;
	char ierr[PATH_MAX + 64];
	struct stat hst;
	for (int i = 0; i < nops; i++) {
		bool guest = i > 0 && strchr(ops[i], '=') && stat(ops[i], &hst) != 0;
		if (guest) {
			nguests++;
		} else if (nguests) {
			inputs_free(&hosts);
			return usage_error("merge", "host file '%s' after a NAME=GUEST: give the host files first",
					   ops[i]);
		} else if (inputs_add(&hosts, ops[i], ierr, sizeof(ierr))) {
			inputs_free(&hosts);
			return cli_error("merge", "%s", ierr);
		}
	}
	if (hosts.n + nguests < 1) {
		inputs_free(&hosts);
		return usage_error("merge", "needs a host recording");
	}
	size_t nin = hosts.n + nguests;
	struct merge mg = { 0 };
	struct merge_input *in = xcalloc(nin, sizeof(*in));
	int rc = 1;
	for (size_t i = 0; i < hosts.n; i++)
		in[i].path = hosts.paths[i];
	for (size_t i = hosts.n; i < nin; i++) {
		char *arg = ops[nops - (int)(nin - i)];
		char *eq = strchr(arg, '=');
		if (!eq || eq == arg || !eq[1]) {
			rc = usage_error("merge", "'%s' is not NAME=FILE", arg);
			goto done;
		}
		*eq = '\0';
		in[i].name = arg;
		in[i].path = eq + 1;
		if (strchr(in[i].name, '|') || strchr(in[i].name, ',') || strchr(in[i].name, ' ')) {
			rc = usage_error("merge", "domain name '%s' may not hold '|', ',' or spaces", in[i].name);
			goto done;
		}
	}

	/* Open everything first: an unreadable input stops before OUT is touched. */
	for (size_t i = 0; i < nin; i++) {
		char msg[256] = "";
		int err = 0;
		in[i].r = dp_reader_open(in[i].path, &err, msg, sizeof(msg));
		if (!in[i].r) {
			if (*msg && strstr(msg, in[i].path)) {
				cli_error_text("merge", NULL, msg);
			} else {
				cli_error_text("merge", in[i].path, *msg ? msg : err > -1000 ? strerror(-err) : "not a domprof file");
			}
			goto done;
		}
		if (dp_reader_is_perf(in[i].r)) {
			/* its records have no domprof bytes to copy */
			cli_say("merge", "%s is a perf.data: convert it first with "
				"`domprof import %s -o FILE.data`", in[i].path, in[i].path);
			goto done;
		}
		/* tables are copied as stored, never decompressed; the records
		 * are copied, so a counts part that disagrees with them is
		 * damage to warn of (as in info) */
		dp_reader_set_flags(in[i].r, DP_READ_SYMTAB_STORED | DP_READ_VERIFY_COUNTS);
	}

	char why[320];
	int prc = merge_plan(&mg, in, nin, why, sizeof(why));
	if (prc == MERGE_ERR_NAME) {
		char *e = text_escape(why);
		rc = usage_error("merge", "%s", e);
		free(e);
		goto done;
	}
	if (prc) {
		cli_error_text("merge", NULL, why);
		goto done;
	}

	/* Header: the host's machine, this command line. */
	struct dp_header hdr = *dp_reader_header(in[0].r);
	hdr.cmdline = local.cmdline;

	struct outfile of;
	char msg[PATH_MAX * 2 + 256];
	int oerr = outfile_open(&of, out, force ? OUTFILE_FORCE : 0);
	if (oerr < 0) {
		cli_say("merge", "%s", outfile_strerror(&of, out, oerr, msg, sizeof(msg)));
		goto done;
	}
	int werr = 0, wfd = fcntl(of.fd, F_DUPFD_CLOEXEC, 3);
	struct dp_writer_opts wo = { .zstd_level = 3, .ustack_delta = dp_ustack_delta_wanted() };
	struct dp_writer *w = wfd < 0 ? NULL : dp_writer_new(wfd, &hdr, &wo, &werr);
	if (!w) {
		cli_say("merge", "cannot write '%s': %s", of.tmp,
			strerror(wfd < 0 ? errno : -werr));
		outfile_discard(&of);
		goto done;
	}
	int ret = merge_write(&mg, w);
	int fret = dp_writer_finish(w);
	if (!ret)
		ret = fret;
	if (ret) {
		cli_say("merge", "writing '%s' failed: %s", of.tmp, strerror(-ret));
		outfile_discard(&of);
		goto done;
	}
	if ((oerr = outfile_commit(&of)) < 0) {
		cli_say("merge", "%s", outfile_strerror(&of, out, oerr, msg, sizeof(msg)));
		outfile_discard(&of);
		goto done;
	}
	outfile_release(&of);
	for (size_t k = 0; k < nin; k++)
		warn_damage(&in[k]);
	if (!quiet) {
		cli_say("merge", "wrote %s: %zu domains, %" PRIu64 " samples, %" PRIu64
				" lost, from %zu files", out, mg.ndomains, mg.samples, mg.lost, nin);
	}
	rc = 0;
done:
	merge_release(&mg);
	for (size_t k = 0; k < nin; k++)
		merge_input_release(&in[k]);
	free(in);
	inputs_free(&hosts);
	return rc;
}
