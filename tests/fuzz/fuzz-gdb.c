// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: everything a GDB stub sends is hostile. The first
 * byte picks a parser; the rest is its input:
 *   0: a byte stream cut into packets as rsp_recv does (framing, RLE,
 *      escapes, checksums, acks), each payload then parsed as a stop
 *      reply, a thread list, register hex and memory hex;
 *   1: a target description whose xi:includes fetch the same input
 *      again (nesting and include limits);
 *   2: kallsyms / System.map text for the KASLR image.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/gdb_rsp.h"
#include "collect/kaslr.h"

static const uint8_t *g_data;
static size_t g_size;

static int fetch_same(void *ctx, const char *annex, char **data, size_t *len)
{
	(void)ctx;
	(void)annex;
	*data = malloc(g_size + 1);
	memcpy(*data, g_data, g_size);
	*len = g_size;
	return 0;
}

static void payload_parsers(const char *p, size_t n)
{
	char tid[RSP_MAX_TID];
	static char tids[RSP_MAX_THREADS][RSP_MAX_TID];
	size_t nt = 0;
	uint64_t v;
	uint8_t mem[64];

	(void)rsp_parse_stop(p, n, tid, sizeof(tid));
	(void)rsp_parse_threads(p, n, tids, &nt, RSP_MAX_THREADS);
	(void)rsp_hex_le(p, n, 8, &v);
	(void)rsp_hex_le(p, n, 4, &v);
	(void)rsp_hex_bytes(p, n, mem, sizeof(mem));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t mode = data[0] % 3;
	data++;
	size--;
	if (mode == 0) {
		static uint8_t out[RSP_MAX_PAYLOAD + 1];
		size_t pos = 0;
		while (pos < size) {
			size_t used = 0, ol = 0;
			int r = rsp_parse(data + pos, size - pos, &used, out, RSP_MAX_PAYLOAD, &ol);
			if (r <= 0 || used == 0)
				break;
			if (ol > RSP_MAX_PAYLOAD)
				abort();
			out[ol] = 0;
			payload_parsers((const char *)out, ol);
			pos += used;
		}
	} else if (mode == 1) {
		struct rsp_tdesc td = { 0 };
		g_data = data;
		g_size = size;
		if (rsp_tdesc_parse(&td, (const char *)data, size, fetch_same, NULL) == 0 &&
		    rsp_tdesc_finish(&td) == 0) {
			(void)rsp_tdesc_find(&td, "rip");
			(void)strlen(td.arch);   /* always terminated */
		}
		rsp_tdesc_release(&td);
	} else {
		struct kaslr_image img;
		(void)kaslr_image_from_symtext((const char *)data, size, &img);
	}
	return 0;
}
