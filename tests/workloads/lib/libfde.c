// SPDX-License-Identifier: MIT
/*
 * The shared library of the `fdework` workload (mk/symbols-fde.mk builds
 * it -O2 and strips it with `strip --strip-all`, keeping an unstripped
 * copy libfde-full.so for the tests' `nm`). Its only exported function,
 * fde_work(), calls three static functions 5, 3 and 2 times a round,
 * each running the same fixed loop, so their CPU time splits
 * 50% / 30% / 20%. Stripped, no symbol names them: only their
 * .eh_frame FDEs (tests/e2e/report-fde-names.sh). They are noipa so gcc
 * neither inlines nor folds them into one; the multipliers differ so
 * identical-code folding has nothing to fold either.
 */
volatile unsigned long fde_sink;

#define BODY(mul)                                     \
	unsigned long x = seed;                       \
	for (unsigned i = 0; i < 1000000u; i++)       \
		x = x * (mul) + i;                    \
	fde_sink += x;

__attribute__((noipa)) static void fde_a(unsigned long seed) { BODY(6364136223846793005ul) }
__attribute__((noipa)) static void fde_b(unsigned long seed) { BODY(2862933555777941757ul) }
__attribute__((noipa)) static void fde_c(unsigned long seed) { BODY(3202034522624059733ul) }

void fde_work(long rounds)
{
	for (long r = 0; r < rounds; r++) {
		for (int k = 0; k < 5; k++)
			fde_a((unsigned long)(r + k));
		for (int k = 0; k < 3; k++)
			fde_b((unsigned long)(r + k));
		for (int k = 0; k < 2; k++)
			fde_c((unsigned long)(r + k));
	}
}
