# perf.data reading (docs/perfdata.md): its benchmark against perf on
# perf's own file (bench/report-perfdata; needs root and perf).
.PHONY: bench-report-perfdata
bench-report-perfdata: build/domprof workloads
	@bench/report-perfdata
bench: bench-report-perfdata
