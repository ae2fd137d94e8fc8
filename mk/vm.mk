# SPDX-License-Identifier: MIT
# VM test guest (tests/vm/): static guest workloads and the busybox
# initramfs the VM tests, `make demo-vm` and bench/passive-overhead boot.
# The guest kernel is not built here: tests/vm/lib.sh takes it from
# Debian's linux-image package and caches it outside the repo.

VM_BUSYBOX  ?= /bin/busybox
VM_GUEST    := $(patsubst tests/vm/guest/%.c,build/vm/guest/%,$(wildcard tests/vm/guest/*.c))

.PHONY: vm-guest demo-vm bench-passive-overhead

vm-guest: build/vm/initramfs.gz

# Statically linked: the initramfs holds no C library.
build/vm/guest/%: tests/vm/guest/%.c
	@mkdir -p $(dir $@)
	$(CC) -static -O2 -g -Wall -Wextra -o $@ $<

# Built in a private folder and renamed into place: several test runs in
# one tree may rebuild it at the same time.
build/vm/initramfs.gz: tests/vm/guest/init $(VM_GUEST) mk/vm.mk
	@file -L $(VM_BUSYBOX) | grep -q 'statically linked' || \
	  { echo "vm-guest: $(VM_BUSYBOX) is not a static busybox (apt-get install busybox-static)"; exit 1; }
	@set -e; r=$$(mktemp -d build/vm/rootfs.XXXXXX); \
	  chmod 755 $$r; mkdir -p $$r/bin $$r/proc $$r/sys $$r/dev; \
	  cp $(VM_BUSYBOX) $$r/bin/busybox; cp $(VM_GUEST) $$r/bin/; install -m 755 tests/vm/guest/init $$r/init; \
	  (cd $$r && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 | gzip -9) >$$r.gz; \
	  mv $$r.gz $@; rm -rf $$r
	@echo "vm-guest: $@ ($(notdir $(VM_GUEST)) + busybox)"

# Boots the test guest looping dd, records the host (-a) and the guest
# together for a few seconds and prints the whole-system report.
demo-vm: build/domprof vm-guest
	@DOMPROF=$(CURDIR)/build/domprof DOMPROF_TOP=$(CURDIR) bash tests/vm/demo.sh

# Guest slowdown, samples/s per vCPU and held time per tick at several -F,
# against the floor (bench/gdb-floor) and with and without -g.
bench: bench-passive-overhead
bench-passive-overhead: build/domprof build/bench/gdb-floor vm-guest
	@DOMPROF=$(CURDIR)/build/domprof bench/passive-overhead
