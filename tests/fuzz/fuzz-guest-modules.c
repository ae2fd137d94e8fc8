// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: guest memory is hostile, and so is the layout (it
 * comes from the guest's own BTF). The input is
 *   12 little-endian u16: module.list, .name, the name's size, .kallsyms,
 *       core text base, core text size, mod_kallsyms.symtab, .num_symtab,
 *       .strtab, .typetab, the read chunk (0: default), flags (bit 0: no
 *       core text fields);
 *   then a memory image mapped at FUZZ_BASE, whose first 16 bytes are the
 *   `modules` list head.
 * guest_modules_read walks it with a 1 MiB read budget; the result must be
 * consistent (text NUL-terminated at len, one line per symbol, every line
 * ending in "]\n").
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

#include "guest/modules.h"

#define FUZZ_BASE 0xffffffffc0000000ull


static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 24)
		return 0;
	struct guest_layout l;
	memset(&l, 0xff, sizeof(l));
	l.mod_list = u16(data);
	l.mod_name = u16(data + 2);
	l.mod_name_len = u16(data + 4);
	l.mod_kallsyms = u16(data + 6);
	l.mod_core_base = u16(data + 8);
	l.mod_core_size = u16(data + 10);
	l.mks_symtab = u16(data + 12);
	l.mks_num_symtab = u16(data + 14);
	l.mks_strtab = u16(data + 16);
	l.mks_typetab = u16(data + 18);
	if (data[22] & 1)
		l.mod_core_base = l.mod_core_size = GUEST_NO_OFFSET;
	l.modules = FUZZ_BASE;
	struct guest_image im = { .r = { { FUZZ_BASE, size - 24, data + 24 } }, .n = 1 };
	struct guest_mem m = { .read = guest_image_read, .ctx = &im, .chunk = u16(data + 20), .budget = 1u << 20 };
	struct guest_modsyms k;
	size_t skipped;
	char why[256];
	int r = guest_modules_read(&m, &l, &k, &skipped, why, sizeof(why));
	if (m.bytes > m.budget)
		__builtin_trap();
	if (r == 0) {
		if (!k.text || k.text[k.len] || strlen(k.text) != k.len)
			__builtin_trap();
		size_t lines = 0;
		for (size_t i = 0; i < k.len; i++)
			if (k.text[i] == '\n') {
				if (i == 0 || k.text[i - 1] != ']')
					__builtin_trap();
				lines++;
			}
		if (lines != k.nsyms || k.nmodules > GUEST_MODULES_MAX)
			__builtin_trap();
	} else if (k.text || !why[0]) {
		__builtin_trap();
	}
	guest_modsyms_free(&k);
	return 0;
}
