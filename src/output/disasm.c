// SPDX-License-Identifier: MIT
/*
 * capstone through dlopen (why and the contract: disasm.h).
 */
#include "output/disasm.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>

#define STR_(x) #x
#define STR(x) STR_(x)
#define CAPSTONE_SONAME "libcapstone.so." STR(CS_API_MAJOR)

const struct disasm_api *disasm_api(const char **why)
{
	static bool tried;
	static const char *fail;
	static struct disasm_api api;
	static char msg[256];
	if (!tried) {
		tried = true;
		void *lib = dlopen(CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
		if (!lib) {
			const char *e = dlerror();
			snprintf(msg, sizeof(msg), "%s cannot be loaded (%.120s; Debian: apt-get install "
				 "libcapstone%d)", CAPSTONE_SONAME, e ? e : "not found", CS_API_MAJOR);
			fail = msg;
		} else {
			/* kept loaded until exit: instructions point into nothing of
			 * it, but a later annotate uses it again */
			api.open = (__typeof__(api.open))dlsym(lib, "cs_open");
			api.option = (__typeof__(api.option))dlsym(lib, "cs_option");
			api.free = (__typeof__(api.free))dlsym(lib, "cs_free");
			api.close = (__typeof__(api.close))dlsym(lib, "cs_close");
			api.insn_new = (__typeof__(api.insn_new))dlsym(lib, "cs_malloc");
			api.iter = (__typeof__(api.iter))dlsym(lib, "cs_disasm_iter");
			if (!api.open || !api.option || !api.free || !api.close ||
			    !api.insn_new || !api.iter)
				fail = CAPSTONE_SONAME " lacks a cs_* function";
		}
	}
	if (fail && why)
		*why = fail;
	return fail ? NULL : &api;
}
