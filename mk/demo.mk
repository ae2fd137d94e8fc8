# SPDX-License-Identifier: MIT
# `make demo` (report engineer): install deps, build, record the
# threefuncs workload and print its report with an explanation.
demo:
	@./scripts/demo.sh
