// SPDX-License-Identifier: MIT
/*
 * Renders one annotated function (see annotate.h). The samples of each
 * address are put on the instruction that starts there; samples on an
 * address that is no instruction start (the code read differs from the
 * code run, or a mis-placed skid) are counted on one line below the
 * listing, never dropped. Branches with an immediate target name it as
 * symbol+offset; targets inside the function are marked on the target's
 * line, so loops read as in perf annotate.
 */
#include <capstone.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "output/annotate.h"
#include "output/disasm.h"
#include "output/escape.h"
#include "util/xalloc.h"

/* an immediate branch or call target, 0 when none */
static uint64_t branch_target(const cs_insn *in)
{
	if (!in->detail)
		return 0;
	bool br = false;
	for (uint8_t g = 0; g < in->detail->groups_count; g++)
		if (in->detail->groups[g] == CS_GRP_JUMP || in->detail->groups[g] == CS_GRP_CALL)
			br = true;
	const cs_x86 *x = &in->detail->x86;
	if (!br || x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return 0;
	return (uint64_t)x->operands[0].imm;
}

/* One instruction as annotate prints it: capstone's cs_insn with its
 * detail is ~1.7 KB, so a function's worth of them (cs_disasm's array)
 * was most of annotate's fresh memory and its page faults; these are
 * 24 bytes and the text. */
struct dis {
	uint64_t addr;
	uint64_t target;        /* branch_target */
	uint32_t mn, op;        /* offsets of the mnemonic and operands in the text */
};

/* Disassemble code[0..n) at address start, up to the first byte that
 * starts no instruction (as cs_disasm). Returns the count (0 on none),
 * *out and *text malloc'd, the caller's to free. */
static size_t disassemble(const struct disasm_api *api, csh cs, const uint8_t *code, size_t n,
			  uint64_t start, struct dis **out, char **text)
{
	size_t ni = 0, cap = 0, nt = 0, capt = 0;
	struct dis *d = NULL;
	char *t = NULL;
	cs_insn *in = api->insn_new(cs);
	if (!in)
		return 0;
	/* each step consumes at least one byte of the bounded code */
	while (api->iter(cs, &code, &n, &start, in)) {
		size_t lm = strnlen(in->mnemonic, sizeof(in->mnemonic)), lo = strnlen(in->op_str, sizeof(in->op_str));
		xgrow((void **)&d, &cap, ni + 1, sizeof(*d));
		xgrow((void **)&t, &capt, nt + lm + lo + 2, 1);
		d[ni] = (struct dis){ in->address, branch_target(in), (uint32_t)nt, (uint32_t)(nt + lm + 1) };
		memcpy(t + nt, in->mnemonic, lm);
		t[nt + lm] = 0;
		memcpy(t + nt + lm + 1, in->op_str, lo);
		t[nt + lm + 1 + lo] = 0;
		nt += lm + lo + 2;
		ni++;
	}
	api->free(in, 1);
	*out = d;
	*text = t;
	return ni;
}

/* The first of n elements (stride bytes apart, sorted by the u64 at
 * offset off) whose key is >= key: for hits and for instructions. */
static size_t lower_bound(const void *base, size_t n, size_t stride, size_t off, uint64_t key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, (const char *)base + mid * stride + off, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct profile_hit *hit_at(const struct profile_hit *h, size_t n, uint64_t a)
{
	size_t i = lower_bound(h, n, sizeof(*h), offsetof(struct profile_hit, addr), a);
	return i < n && h[i].addr == a ? &h[i] : NULL;
}

static void jstr(FILE *f, const char *s) { json_write_str(f, s, 0); }

/* Each instruction's source line's samples, in one sort (a line's
 * instructions need not be adjacent): tot[i] for instruction i. */
struct line_ix {
	const char *path;
	unsigned line;
	size_t i;
	uint64_t c;
};

static int cmp_line(const void *a, const void *b)
{
	const struct line_ix *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

static void line_totals(const char **path, const unsigned *line, const uint64_t *count, size_t n,
			uint64_t *tot)
{
	struct line_ix *v = xmalloc((n ? n : 1) * sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (path[i])
			v[m++] = (struct line_ix){ path[i], line[i], i, count[i] };
	qsort(v, m, sizeof(*v), cmp_line);
	for (size_t a = 0, b; a < m; a = b) {
		uint64_t s = 0;
		for (b = a; b < m && !cmp_line(&v[a], &v[b]); b++)
			s += v[b].c;
		for (size_t k = a; k < b; k++)
			tot[v[k].i] = s;
	}
	free(v);
}

/* The source files of one function in memory, each with its
 * lines' starts found in one pass when first read: code inlined from headers
 * switches between files every few lines, and with one file kept each
 * switch read the other again and each line was found by scanning from
 * the top. The last one asked for is the one the end notes name. */
#define SRC_MAX (8u << 20)
#define SRC_FILES 8
struct src_file {
	char path[4096];
	char *text;             /* NULL: not found */
	size_t len;
	size_t *starts;         /* starts[l - 1]: where line l begins (< len) */
	size_t nlines;
};
struct src {
	struct src_file f[SRC_FILES];
	size_t n, evict;
	const struct src_file *cur;
	unsigned missing;       /* lines asked for that the file does not hold */
};

static void src_read(struct src_file *e)
{
	FILE *f = fopen(e->path, "rb");
	if (!f)
		return;
	e->text = xmalloc(SRC_MAX + 1);
	e->len = fread(e->text, 1, SRC_MAX, f);
	e->text[e->len] = 0;
	fclose(f);
	size_t cap = 0;
	for (size_t at = 0; at < e->len;) {
		xgrow((void **)&e->starts, &cap, e->nlines + 1, sizeof(*e->starts));
		e->starts[e->nlines++] = at;
		const char *nl = memchr(e->text + at, '\n', e->len - at);
		if (!nl)
			break;
		at = (size_t)(nl - e->text) + 1;
	}
}

static void src_release(struct src *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->f[i].text);
		free(c->f[i].starts);
	}
}

/* The first max bytes of a source line for the text view, tabs expanded
 * (to 8 columns): the source is shown in its terminal-safe form, where a
 * tab would be \x09. malloc'd. */
static char *src_display(const char *text, size_t len, size_t max)
{
	if (len > max)
		len = max;
	char *out = xmalloc(len * 8 + 1);
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\t') {
			do
				out[n++] = ' ';
			while (n % 8);
		} else {
			out[n++] = text[i];
		}
	}
	out[n] = '\0';
	return out;
}

static const char *src_line(struct src *c, const struct annotate_opts *o, const char *path,
			    unsigned line, size_t *len)
{
	char want[4096];
	const char *rest = path;
	size_t sl = o->strip_prefix ? strlen(o->strip_prefix) : 0;
	if (sl && !strncmp(path, o->strip_prefix, sl))
		rest = path + sl;
	if (o->source_prefix)
		snprintf(want, sizeof(want), "%s/%s", o->source_prefix, rest);
	else
		snprintf(want, sizeof(want), "%s", rest);
	struct src_file *e = NULL;
	for (size_t i = 0; i < c->n && !e; i++)
		if (!strcmp(c->f[i].path, want))
			e = &c->f[i];
	if (!e) {
		e = c->n < SRC_FILES ? &c->f[c->n++] : &c->f[c->evict++ % SRC_FILES];
		free(e->text);
		free(e->starts);
		memset(e, 0, sizeof(*e));
		snprintf(e->path, sizeof(e->path), "%s", want);
		src_read(e);
	}
	c->cur = e;
	if (!e->text || !line)
		return NULL;
	if (line > e->nlines) {
		c->missing++;
		return NULL;
	}
	const char *p = e->text + e->starts[line - 1], *end = e->text + e->len;
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*len = (size_t)((nl ? nl : end) - p);
	return p;
}

/* the lines without instructions: each address with samples */
static void addresses_only(FILE *f, const struct profile_symbol *y, const struct profile_hit *h,
			   size_t n, uint64_t start, double tot, int json)
{
	for (size_t i = 0; i < n; i++) {
		double pct = 100.0 * (double)h[i].count / tot;
		if (json)
			fprintf(f, "%s{\"addr\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"samples\":%" PRIu64
				",\"percent\":%.4f}", i ? "," : "", h[i].addr, h[i].addr - start,
				h[i].count, pct);
		else {
			fprintf(f, "%8.2f %8" PRIu64 "  %#" PRIx64 "  <", pct, h[i].count, h[i].addr);
			text_put(f, y->symbol);
			fprintf(f, "+%#" PRIx64 ">\n", h[i].addr - start);
		}
	}
}

int annotate_symbol(FILE *f, const struct profile *p, uint32_t sym, int json,
		    const struct annotate_opts *o)
{
	const struct profile_symbol *y = &p->syms[sym];
	const struct profile_hit *h = NULL;
	uint64_t start = 0, end = 0;
	size_t nh = profile_symbol_hits(p, sym, &h, &start, &end);
	double tot = y->self ? (double)y->self : 1.0;
	uint8_t *code = NULL;
	long nc = -ENOENT;
	if (end > start) {
		size_t want = end - start < ANNOTATE_MAX_CODE ? (size_t)(end - start) : ANNOTATE_MAX_CODE;
		code = xmalloc(want ? want : 1);
		nc = profile_symbol_code(p, sym, code, want);
	}
	const char *why = nc > 0 ? NULL
		: nc == -ESTALE ? "the file changed since the recording"
		: nc == -ENOENT ? y->kernel ? "no code bytes for this kernel (a host kernel, or a guest function the recorder did not read at the end)"
				    : "no file for this image (a passive guest's user space, or not on this machine)"
		: end <= start ? "the symbol's size is not known"
		: "its code could not be read";
	/* the disassembler before the header, so the header says why not */
	const struct disasm_api *api = why ? NULL : disasm_api(&why);
	if (json) {
		fputs("{\"symbol\":", f);
		jstr(f, y->symbol);
		fputs(",\"image\":", f);
		jstr(f, y->image);
		fputs(",\"domain\":", f);
		jstr(f, y->domain_name);
		fprintf(f, ",\"samples\":%" PRIu64 ",\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"code\":",
			y->self, start, end);
		if (why)
			jstr(f, why);
		else
			fputs(y->kernel ? "\"guest memory\"" : "\"file\"", f);
	} else {
		/* names from the recording, the text of the source files and
		 * the targets' names in their terminal-safe form (escape.h) */
		struct text_tmp t = { 0 };
		fprintf(f, "# annotate: %s in %s (%s), %" PRIu64 " samples (%.2f%% of the shown)\n",
			text_tmp_safe(&t, y->symbol), text_tmp_safe(&t, y->image),
			text_tmp_safe(&t, y->domain_name), y->self,
			p->matched ? 100.0 * (double)y->self / (double)p->matched : 0.0);
		if (why)
			fprintf(f, "# no instructions: %s; samples per address:\n", why);
		else
			fprintf(f, "# %#" PRIx64 "..%#" PRIx64 " (%ld bytes) from %s\n", start, start + (uint64_t)nc,
				nc, y->kernel ? "the guest's memory, read at the end of the recording"
					      : text_tmp_safe(&t, y->image_path));
		text_tmp_free(&t);
	}
	csh cs;
	struct dis *ins = NULL;
	char *itext = NULL;
	size_t ni = 0;
	if (api && api->open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK) {
		api->option(cs, CS_OPT_DETAIL, CS_OPT_ON);
		api->option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
		ni = disassemble(api, cs, code, (size_t)nc, start, &ins, &itext);
		api->close(&cs);
	} else
		why = why ? why : "the disassembler did not start";
	if (why || !ni) {
		if (json)
			fputs(",\"instructions\":[", f);
		addresses_only(f, y, h, nh, start, tot, json);
		if (json)
			fputs("],\"unplaced\":0}", f);
		free(code);
		free(ins);
		free(itext);
		return ferror(f) ? -EIO : 0;
	}
	/* lines that are targets of a jump inside the function */
	uint8_t *target = xcalloc(ni, 1);
	uint64_t top = 0, placed = 0;
	uint64_t *icount = xcalloc(ni, sizeof(*icount)), *ltot = xcalloc(ni, sizeof(*ltot));
	const char **lpath = xcalloc(ni, sizeof(*lpath));
	unsigned *lno = xcalloc(ni, sizeof(*lno));
	bool any_line = false;
	for (size_t i = 0; i < ni; i++) {
		uint64_t t = ins[i].target;
		if (t >= start && t < start + (uint64_t)nc) {
			/* instructions are in address order */
			size_t j = lower_bound(ins, ni, sizeof(*ins), offsetof(struct dis, addr), t);
			if (j < ni && ins[j].addr == t)
				target[j] = 1;
		}
		const struct profile_hit *x = hit_at(h, nh, ins[i].addr);
		icount[i] = x ? x->count : 0;
		if (icount[i] > top)
			top = icount[i];
		/* each instruction's source line */
		if (!o->no_source)
			any_line |= profile_symbol_line_at(p, sym, ins[i].addr, &lpath[i], &lno[i]);
	}
	line_totals(lpath, lno, icount, ni, ltot);
	struct src sc = { 0 };
	if (json)
		fputs(",\"instructions\":[", f);
	else
		fprintf(f, "%8s %8s    %-16s %s\n", "percent", "samples", "address", "instruction");
	for (size_t i = 0; i < ni; i++) {
		const struct dis *in = &ins[i];
		const char *mnemonic = itext + in->mn, *op_str = itext + in->op;
		uint64_t c = icount[i];
		placed += c;
		double pct = 100.0 * (double)c / tot;
		uint64_t t = in->target;
		char tgt[300] = "", name[280];
		if (t >= start && t < start + (uint64_t)nc)
			snprintf(tgt, sizeof(tgt), " <%s+%#" PRIx64 ">", y->symbol, t - start);
		else if (t && profile_symbol_name_at(p, sym, t, name, sizeof(name)))
			snprintf(tgt, sizeof(tgt), " <%s>", name);
		/* a new source line: its text (or file:line) and its share */
		if (!json && lpath[i] && (i == 0 || !lpath[i - 1] || lno[i] != lno[i - 1] ||
					  strcmp(lpath[i], lpath[i - 1]))) {
			uint64_t lc = ltot[i];
			size_t tl = 0;
			const char *text = src_line(&sc, o, lpath[i], lno[i], &tl);
			const char *b = strrchr(lpath[i], '/');
			if (lc)
				fprintf(f, "   %5.2f %8" PRIu64, 100.0 * (double)lc / tot, lc);
			else
				fprintf(f, "%17s", "");
			char *ltext = text ? src_display(text, tl, 200) : NULL;
			struct text_tmp tt = { 0 };
			fprintf(f, "    %s:%u  %s\n", text_tmp_safe(&tt, b ? b + 1 : lpath[i]), lno[i],
				ltext ? text_tmp_safe(&tt, ltext) : "");
			text_tmp_free(&tt);
			free(ltext);
		}
		if (json) {
			fprintf(f, "%s\n{\"addr\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"text\":", i ? "," : "",
				in->addr, in->addr - start);
			char text[256];
			snprintf(text, sizeof(text), "%s %s", mnemonic, op_str);
			jstr(f, text);
			fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.4f,\"jump_target\":%s", c, pct,
				target[i] ? "true" : "false");
			if (lpath[i]) {
				char sl[300];
				const char *b = strrchr(lpath[i], '/');
				snprintf(sl, sizeof(sl), "%s:%u", b ? b + 1 : lpath[i], lno[i]);
				fputs(",\"srcline\":", f);
				jstr(f, sl);
			}
			if (t)
				fprintf(f, ",\"branch\":%" PRIu64 ",\"branch_inside\":%s", t, *tgt ? "true" : "false");
			fputc('}', f);
		} else {
			/* hot: the hottest instruction and any with >= 5% of the function */
			const char *mark = c && c == top ? "==>" : pct >= 5.0 ? " * " : "   ";
			fprintf(f, "%s", mark);
			if (c)
				fprintf(f, "%5.2f %8" PRIu64, pct, c);
			else
				fprintf(f, "%5s %8s", "", "");
			fprintf(f, "  %c %#-16" PRIx64 " %-7s %s", target[i] ? '>' : ' ',
				in->addr, mnemonic, op_str);
			text_put(f, tgt);
			fputc('\n', f);
		}
	}
	uint64_t unplaced = y->self > placed ? y->self - placed : 0;
	if (json)
		fprintf(f, "],\"unplaced\":%" PRIu64 "}", unplaced);
	else if (unplaced)
		fprintf(f, "# %" PRIu64 " samples on addresses that start no instruction of this code\n",
			unplaced);
	const char *last = sc.cur ? sc.cur->path : "";
	char *elast = text_escape(last);
	if (!json && any_line && !(sc.cur && sc.cur->text))
		fprintf(f, "# source %s not found (--source-prefix DIR, --strip-prefix PREFIX)\n", elast);
	else if (!json && sc.missing)
		fprintf(f, "# source %s has fewer lines than the line table names: changed since the build?\n",
			elast);
	free(elast);
	src_release(&sc);
	free(lpath);
	free(lno);
	free(icount);
	free(ltot);
	free(target);
	free(ins);
	free(itext);
	free(code);
	return ferror(f) ? -EIO : 0;
}
