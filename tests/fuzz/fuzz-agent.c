// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the agent protocol as either side receives it: a
 * byte stream is read frame by frame with ap_recv_max (magic resync,
 * lengths, zstd payloads bounded before allocation), and each payload
 * goes through every decoder the host and the agent apply (HELLO, HELLO_OK
 * with its features, START with its DWARF stack size, LOST, END, SYMTAB,
 * the relayed-record checks and raw record walk); a START that decodes
 * must encode back to the same bytes.
 * First input byte: the size limit's shift (small limits reach the
 * bound paths) and whether to resync.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/agent_proto.h"
#include "format/raw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 60000)   /* the whole stream fits a pipe's buffer */
		return 0;
	size_t max = (size_t)4096 << (data[0] & 7);
	bool resync = data[0] & 8;
	int p[2];
	if (pipe(p) < 0)
		return 0;
	if (write(p[1], data + 1, size - 1) != (ssize_t)(size - 1)) {
		close(p[0]);
		close(p[1]);
		return 0;
	}
	close(p[1]);
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	uint16_t type, flags;
	for (int n = 0; n < 64 && ap_recv_max(p[0], &type, &flags, &buf, &cap, &len, max, 1000, resync) == 0; n++) {
		struct ap_hello h;
		struct ap_start st;
		struct ap_end e;
		uint64_t lost;
		uint32_t kind;
		char name[256];
		(void)ap_hello_decode(buf, len, &h);
		/* a START the agent accepts is exactly what the host would
		 * encode for it (the DWARF stack size included): no byte of
		 * it is ignored */
		if (ap_start_decode(buf, len, &st) == 0) {
			uint8_t again[AP_START_MAX];
			if (ap_start_encode(&st, again) != len || memcmp(again, buf, len))
				abort();
		}
		(void)ap_lost_decode(buf, len, &lost);
		(void)ap_end_decode(buf, len, &e);
		const uint8_t *d;
		size_t dlen;
		(void)ap_symtab_decode(buf, len, &kind, name, sizeof(name), &d, &dlen);
		(void)ap_check_record(buf, len);
		size_t off = 0;
		uint16_t rt;
		uint32_t rl;
		for (int k = 0; k < 4096 && dp_raw_next(buf, len, &off, &rt, &rl) > 0; k++)
			;
	}
	free(buf);
	close(p[0]);
	return 0;
}
