// SPDX-License-Identifier: MIT
/*
 * `domprof import PERF.DATA -o OUT`: a perf.data (file or pipe form,
 * docs/perfdata.md) written as a domprof recording, so `merge` can join
 * it with others and a report needs perf's file no more. The records
 * are the ones every command reads from the perf.data (format/perfdata.c
 * translates them); format/convert.c writes them through the writer.
 * When the perf.data was recorded on this machine, its kernel symbols
 * (this machine's /proc/kallsyms and /proc/modules, as `record` embeds
 * them) are embedded too, so the output names kernel samples anywhere.
 * The output follows util/outfile.h as `record -o` and `merge` do.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/blocks.h"
#include "commands.h"
#include "output/escape.h"
#include "analysis/options.h"
#include "collect/sideband.h"
#include "format/format.h"
#include "format/scan.h"
#include "util/outfile.h"
#include "util/xalloc.h"


struct imp {
	struct sideband *sb;
	bool embed;             /* the host's kernel tables go in */
	size_t kbytes;
};

/* The host DOMAIN record of a perf.data of this machine: its kernel
 * tables follow it, and it says they are embedded. */
static int on_record(void *ctx, struct dp_writer *w, const struct dp_record *rec)
{
	struct imp *im = ctx;
	if (rec->type != DP_REC_DOMAIN || rec->u.domain.id != DP_HOST_DOMAIN ||
	    !rec->u.domain.symsrc || strcmp(rec->u.domain.symsrc, DP_SYMSRC_PERF_LOCAL))
		return 0;
	struct dp_domain d = rec->u.domain;
	d.symsrc = "embedded (this host's /proc/kallsyms, at import)";
	int r = dp_write_domain(w, &d);
	if (!r && im->embed)
		r = sideband_write_kernel(im->sb, w, 0, &im->kbytes);
	return r < 0 ? r : 1;
}

struct import_args {
	const char *out;
	bool force, quiet;
	struct perf_guest_args guests;
};

static const struct opt import_opts[] = {
	OPT_STR('o', "output", "OUT", struct import_args, out, "file to write; an existing OUT is renamed OUT.old"),
	OPT_BOOL('f', "force", struct import_args, force, "overwrite OUT instead of keeping OUT.old"),
	OPT_BOOL('q', "quiet", struct import_args, quiet, "no summary line"),
	OPT_INCLUDE(opts_perf_guest, struct import_args, guests),
	OPT_TABLE_END,
};

const struct cmd_spec spec_import = {
	.name = "import",
	.summary = "write a perf.data as a domprof recording (for merge)",
	.synopsis = "[-f] [-q] PERF.DATA -o OUT [--guest-name PID=NAME]...\n"
		    " [--guest-kallsyms [PID=]FILE]...",
	.description =
		"Write a perf.data (made by `perf record`, to a file or a pipe, or by\n"
		"`perf kvm record`) as a domprof recording, for `merge` and for reports\n"
		"where perf's file is not at hand. Every command reads a perf.data as it\n"
		"is; import is needed only to merge it. A perf.data recorded on this\n"
		"machine gets this machine's kernel symbols embedded. Damage and what was\n"
		"not understood are reported; what could be read is written.\n",
	.opts = import_opts,
};

int cmd_import(int argc, char **argv)
{
	struct import_args ia = { 0 };
	char *ops[argc + 1];
	int nops, rc = opt_parse(&spec_import, argc, argv, &ia, ops, &nops);
	if (rc != OPT_CONTINUE) {
		perf_guest_args_release(&ia.guests);
		return rc;
	}
	rc = 1;
	const char *out = ia.out, *in = nops > 0 ? ops[0] : NULL;
	bool force = ia.force, quiet = ia.quiet;
	struct perf_guest_args guests = ia.guests;
	if (!in || !out || nops > 1) {
		perf_guest_args_release(&guests);
		return usage_error("import", !in ? "needs a perf.data to read" : !out ?
				   "needs an output file (-o OUT)" : "unexpected argument '%s'",
				   nops > 1 ? ops[1] : "");
	}
	char msg[PATH_MAX * 2 + 256] = "";
	int err = 0;
	struct dp_reader *r = dp_reader_open(in, &err, msg, sizeof(msg));
	if (!r) {
		cli_error_text("import", in, *msg ? msg : strerror(-err));
		perf_guest_args_release(&guests);
		return 1;
	}
	if (!dp_reader_is_perf(r)) {
		cli_say("import", "%s is already a domprof recording (import reads perf.data)", in);
		goto done;
	}
	perf_guest_args_apply(&guests, r);
	struct dp_header hdr = *dp_reader_header(r);
	struct outfile of;
	int oerr = outfile_open(&of, out, force ? OUTFILE_FORCE : 0);
	if (oerr < 0) {
		cli_say("import", "%s", outfile_strerror(&of, out, oerr, msg, sizeof(msg)));
		goto done;
	}
	int werr = 0, wfd = fcntl(of.fd, F_DUPFD_CLOEXEC, 3);
	struct dp_writer_opts wo = { .zstd_level = 3, .ustack_delta = dp_ustack_delta_wanted() };
	struct dp_writer *w = wfd < 0 ? NULL : dp_writer_new(wfd, &hdr, &wo, &werr);
	if (!w) {
		cli_say("import", "cannot write '%s': %s", of.tmp,
			strerror(wfd < 0 ? errno : -werr));
		outfile_discard(&of);
		goto done;
	}
	struct imp im = { .sb = sideband_new(), .embed = true };
	struct dp_convert_hooks hooks = { on_record, &im };
	struct dp_meta m = { 0 };
	int ret = dp_convert(r, w, &hooks, &m);
	int fret = dp_writer_finish(w);
	sideband_free(im.sb);
	if (!ret)
		ret = fret;
	if (ret || (oerr = outfile_commit(&of)) < 0) {
		if (ret)
			cli_say("import", "writing '%s' failed: %s", of.tmp, strerror(-ret));
		else
			cli_say("import", "%s", outfile_strerror(&of, out, oerr, msg, sizeof(msg)));
		outfile_discard(&of);
		dp_meta_release(&m);
		goto done;
	}
	outfile_release(&of);
	for (size_t i = 0; i < m.ndamage; i++) {
		char at[4096];
		snprintf(at, sizeof(at), "%s: offset %" PRIu64, in, m.damage[i].offset);
		cli_warn_text("import", at, m.damage[i].what);
	}
	if (m.incomplete) {
		cli_warn_text("import", in, m.incomplete);
	}
	if (dp_reader_note(r)) {
		cli_warn_text("import", in, dp_reader_note(r));
	}
	if (!quiet)
		cli_say("import", "wrote %s: %" PRIu64 " samples, %" PRIu64 " lost, %zu "
			"domains, from %s%s", out, m.samples, m.lost, m.ndomains, hdr.source,
			im.kbytes ? "; this host's kernel symbols embedded" : "");
	dp_meta_release(&m);
	rc = 0;  /* a damaged input is imported as far as it reads, with warnings */
done:
	dp_reader_free(r);
	perf_guest_args_release(&guests);
	return rc;
}
