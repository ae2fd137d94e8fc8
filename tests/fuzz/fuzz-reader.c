// SPDX-License-Identifier: MIT
/* libFuzzer target: the file reader must survive any bytes (also the
 * pointers it returns: chains, user registers and stacks, counter names,
 * table data are read; a kernel symbol index is opened and every block
 * decoded; user stacks in delta form are rebuilt and hashed whole), and
 * a read on 2 threads (dp_reader_set_threads), and one with
 * DP_READ_NO_CHAINS, must return the same records and damage as the read
 * on one (the flagged read: without any chain), and a read on 2 threads
 * with DP_READ_GROUPS must count the same samples (counted()); a read
 * with DP_READ_VERIFY_COUNTS (the counts parts checked against the
 * records) must give the same records, and with groups count the same
 * samples, damage aside (it may add some): any difference traps. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format/format.h"
#include "format/ksymidx.h"

static uint64_t fold(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* A kernel symbol index (SYMTAB kind 8): validated, then every block
 * decoded; what a valid block gives must keep its promises (addresses in
 * order and inside the block, names NUL-terminated at their length,
 * modules in the table), or the fuzzer traps. */
static uint64_t ksymidx(const uint8_t *data, size_t size)
{
	struct dp_ksymidx *ix;
	char why[160];
	uint64_t sink = 0;
	if (dp_ksymidx_open(data, size, &ix, why, sizeof(why)) < 0)
		return why[0];
	for (size_t i = 0; i < dp_ksymidx_nblocks(ix); i++) {
		const struct dp_ksymidx_block *e = dp_ksymidx_index(ix, i);
		const struct dp_ksymblk *b = dp_ksymidx_block(ix, i, why, sizeof(why));
		if (!b || dp_ksymidx_block(ix, i, why, sizeof(why)) != b)
			continue;
		if (b->n != e->count || b->addr[0] != e->first_addr)
			__builtin_trap();
		for (uint32_t k = 0; k < b->n; k++) {
			if ((k && b->addr[k] < b->addr[k - 1]) || b->mod[k] > dp_ksymidx_nmods(ix) ||
			    !b->namelen[k] || b->names[b->name[k] + b->namelen[k]] ||
			    strlen(b->names + b->name[k]) != b->namelen[k])
				__builtin_trap();
			sink += (uint8_t)b->type[k];
		}
		if (dp_ksymidx_block_of(ix, e->first_entry) != i)
			__builtin_trap();
	}
	for (size_t m = 0; m < dp_ksymidx_nmods(ix); m++) {
		size_t len;
		sink += (uint8_t)dp_ksymidx_mod(ix, m, &len)[len - 1];
	}
	dp_ksymidx_free(ix);
	return sink;
}

/* A reader over data on `threads` with reader flags `flags`. */
static struct dp_reader *open_read(const uint8_t *data, size_t size, unsigned threads,
				   unsigned flags)
{
	int err;
	struct dp_reader *r = dp_reader_open_mem(data, size, &err, NULL, 0);
	if (!r)
		return NULL;
	if (dp_reader_set_threads(r, threads))
		__builtin_trap();
	dp_reader_set_flags(r, flags);
	return r;
}

/* set while verifying reads are compared with others: damage is not folded */
static bool no_damage;

/* h with the read's damage folded in; the reader freed. */
static uint64_t damage_done(struct dp_reader *r, uint64_t h)
{
	const struct dp_damage *d;
	size_t nd = dp_reader_damage(r, &d);
	for (size_t i = 0; i < nd && !no_damage; i++)
		h = fold(h, d[i].what, strlen(d[i].what));
	dp_reader_free(r);
	return h;
}

/* Records (type, domain, bytes, whether a sample has a chain) and damage
 * of one pass on `threads` with reader flags `flags`: DP_READ_NO_CHAINS
 * must change nothing but the chains handed out, which it must hand out
 * none of. */
static uint64_t digest(const uint8_t *data, size_t size, unsigned threads, unsigned flags)
{
	struct dp_reader *r = open_read(data, size, threads, flags);
	if (!r)
		return 0;
	struct dp_record rec;
	uint64_t h = 0xcbf29ce484222325ull;
	while (dp_reader_next(r, &rec) > 0) {
		h = fold(h, &rec.type, sizeof(rec.type));
		h = fold(h, &rec.domain, sizeof(rec.domain));
		h = fold(h, rec.raw, rec.raw_len);
		if (rec.type == DP_REC_SAMPLE) {
			const struct dp_sample *s = &rec.u.sample;
			bool chain = s->nr_callchain || s->chain_omitted;
			if ((flags & DP_READ_NO_CHAINS) && (s->nr_callchain || s->callchain))
				__builtin_trap();
			h = fold(h, &chain, sizeof(chain));
		}
		/* a stack in delta form has no raw bytes: what the reader
		 * rebuilt must be the same on both reads */
		if (rec.type == DP_REC_SAMPLE && rec.u.sample.has_uregs) {
			h = fold(h, &rec.u.sample.ustack_ref, sizeof(rec.u.sample.ustack_ref));
			h = fold(h, &rec.u.sample.ustack_len, sizeof(rec.u.sample.ustack_len));
			if (rec.u.sample.ustack_len)
				h = fold(h, rec.u.sample.ustack, rec.u.sample.ustack_len);
		}
	}
	return damage_done(r, h);
}

/* A read as a counter sees it (DP_READ_GROUPS, format.h): records other
 * than plain samples and domain switches (they show in the keys'
 * domains) in order, each stretch of plain samples between
 * them as order-free sums of its samples' keys (times weight) and
 * periods, then the damage. A read with groups keyed by tid and cpu, on
 * 1 thread and on 2, must give what one sample by sample gives. */
static uint64_t counted(const uint8_t *data, size_t size, unsigned threads, unsigned flags)
{
	struct dp_reader *r = open_read(data, size, threads, flags);
	if (!r)
		return 0;
	struct dp_record rec;
	uint64_t h = 0xcbf29ce484222325ull, ksum = 0, psum = 0, n = 0;
	for (;;) {
		int got = dp_reader_next(r, &rec);
		const struct dp_sample *s = &rec.u.sample;
		bool plain = got > 0 && rec.type == DP_REC_SAMPLE && !s->has_uregs;
		if (got > 0 && rec.type == DP_REC_DOMAIN_SWITCH)
			continue;   /* it shows in the samples' keys after it */
		if (!plain && n) {
			h = fold(h, &ksum, sizeof(ksum));
			h = fold(h, &psum, sizeof(psum));
			h = fold(h, &n, sizeof(n));
			ksum = psum = n = 0;
		}
		if (got <= 0)
			break;
		if (!plain) {
			if (rec.weight != 1)
				__builtin_trap();
			h = fold(h, &rec.type, sizeof(rec.type));
			h = fold(h, rec.raw, rec.raw_len);
			continue;
		}
		uint64_t k = fold(0xcbf29ce484222325ull, &rec.domain, sizeof(rec.domain));
		k = fold(k, &rec.chunk_offset, sizeof(rec.chunk_offset));
		k = fold(k, &s->ip, sizeof(s->ip));
		k = fold(k, &s->pid, sizeof(s->pid));
		k = fold(k, &s->tid, sizeof(s->tid));
		k = fold(k, &s->cpu, sizeof(s->cpu));
		k = fold(k, &s->mode, sizeof(s->mode));
		k = fold(k, &s->event, sizeof(s->event));
		k = fold(k, &s->has_asid, sizeof(s->has_asid));
		k = fold(k, &s->asid, sizeof(s->asid));
		k = fold(k, s->callchain, 8 * (size_t)s->nr_callchain);
		ksum += k * rec.weight;
		psum += s->period;
		n += rec.weight;
	}
	return damage_done(r, h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t d = digest(data, size, 1, 0);
	if (d != digest(data, size, 2, 0) || d != digest(data, size, 1, DP_READ_NO_CHAINS))
		__builtin_trap();
	uint64_t c = counted(data, size, 1, 0);
	if (c != counted(data, size, 1, DP_READ_GROUPS | DP_READ_GROUP_TID | DP_READ_GROUP_CPU) ||
	    c != counted(data, size, 2, DP_READ_GROUPS | DP_READ_GROUP_TID | DP_READ_GROUP_CPU))
		__builtin_trap();
	no_damage = true;
	d = digest(data, size, 1, 0);
	c = counted(data, size, 1, 0);
	if (d != digest(data, size, 1, DP_READ_VERIFY_COUNTS) || d != digest(data, size, 2, DP_READ_VERIFY_COUNTS) ||
	    c != counted(data, size, 1, DP_READ_VERIFY_COUNTS | DP_READ_GROUPS | DP_READ_GROUP_TID | DP_READ_GROUP_CPU) ||
	    c != counted(data, size, 2, DP_READ_VERIFY_COUNTS | DP_READ_GROUPS | DP_READ_GROUP_TID | DP_READ_GROUP_CPU))
		__builtin_trap();
	no_damage = false;
	int err;
	char msg[128];
	struct dp_reader *r = dp_reader_open_mem(data, size, &err, msg, sizeof(msg));
	if (!r)
		return 0;
	struct dp_record rec;
	volatile uint64_t sink = 0;
	for (int pass = 0; pass < 2; pass++) {
		while (dp_reader_next(r, &rec) > 0) {
			sink += rec.type + rec.domain;
			if (rec.type == DP_REC_SAMPLE)
				for (uint32_t i = 0; i < rec.u.sample.nr_callchain; i++)
					sink += rec.u.sample.callchain[i];
			if (rec.type == DP_REC_SAMPLE && rec.u.sample.has_uregs) {
				const struct dp_sample *s = &rec.u.sample;
				for (uint32_t i = 0; i < dp_uregs_count(s->uregs_mask); i++)
					sink += s->uregs[i];
				if (s->ustack_len)  /* both ends of the stack */
					sink += s->ustack[0] + s->ustack[s->ustack_len - 1];
				if (s->ustack_ref > s->ustack_len || (!rec.raw) != (s->ustack_ref != 0))
					__builtin_trap();
				sink += s->ustack_len <= s->ustack_size && s->ustack_size <= DP_MAX_USTACK;
			}
			if (rec.type == DP_REC_COUNTERS)
				for (uint32_t i = 0; i < rec.u.counters.n; i++)
					sink += rec.u.counters.c[i].value +
						(uint8_t)rec.u.counters.c[i].name[strlen(rec.u.counters.c[i].name)];
			if (rec.type == DP_REC_SYMTAB && rec.u.symtab.size)
				sink += rec.u.symtab.data[rec.u.symtab.size - 1];
			if (rec.type == DP_REC_SYMTAB && rec.u.symtab.kind == DP_SYMTAB_KSYMIDX && !pass)
				sink += ksymidx(rec.u.symtab.data, rec.u.symtab.size);
		}
		dp_reader_rewind(r);
	}
	dp_reader_free(r);
	return 0;
}
