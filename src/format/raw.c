// SPDX-License-Identifier: MIT
/*
 * Raw record framing for relaying code (format/raw.h).
 */
#include <errno.h>

#include "format/raw.h"
#include "format/wire.h"

_Static_assert(DP_FILE_HEADER_MIN == DP_FILE_HDR_FIXED, "raw.h's header size is wire.h's");

int dp_raw_next(const uint8_t *buf, size_t len, size_t *off, uint16_t *type, uint32_t *rlen)
{
	size_t o = *off;
	if (o >= len)
		return o == len ? 0 : -EPROTO;
	if (len - o < DP_REC_HDR)
		return -EPROTO;
	uint32_t n = get32(buf + o + 4);
	if (n < DP_REC_HDR || n > len - o)
		return -EPROTO;
	*type = get16(buf + o);
	*rlen = n;
	*off = o + n;
	return 1;
}

bool dp_raw_sample_time(const uint8_t *rec, size_t len, uint64_t *time)
{
	/* SAMPLE: the header, then u64 time first (docs/file-format.md) */
	if (len < DP_REC_HDR + 8 || get16(rec) != DP_REC_SAMPLE)
		return false;
	*time = get64(rec + DP_REC_HDR);
	return true;
}
