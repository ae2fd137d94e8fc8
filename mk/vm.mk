# SPDX-License-Identifier: MIT
# VM test guest (tests/vm/): static guest workloads and the busybox
# initramfs the VM tests, `make demo-vm` and bench/passive-overhead boot.
# The guest kernel is not built here: tests/vm/lib.sh takes it from
# Debian's linux-image package and caches it outside the repo.

VM_BUSYBOX  ?= /bin/busybox
VM_GUEST    := $(patsubst tests/vm/guest/%.c,build/vm/guest/%,$(wildcard tests/vm/guest/*.c))

.PHONY: vm-guest demo-vm bench-passive

vm-guest: build/vm/initramfs.gz

# Statically linked: the initramfs holds no C library.
build/vm/guest/%: tests/vm/guest/%.c
	@mkdir -p $(dir $@)
	$(CC) -static -O2 -g -Wall -Wextra -o $@ $<

build/vm/initramfs.gz: tests/vm/guest/init $(VM_GUEST) mk/vm.mk
	@file -L $(VM_BUSYBOX) | grep -q 'statically linked' || \
	  { echo "vm-guest: $(VM_BUSYBOX) is not a static busybox (apt-get install busybox-static)"; exit 1; }
	@rm -rf build/vm/rootfs && mkdir -p build/vm/rootfs/bin build/vm/rootfs/proc build/vm/rootfs/sys build/vm/rootfs/dev
	cp $(VM_BUSYBOX) build/vm/rootfs/bin/busybox
	cp $(VM_GUEST) build/vm/rootfs/bin/
	install -m 755 tests/vm/guest/init build/vm/rootfs/init
	cd build/vm/rootfs && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 | gzip -9 >../initramfs.gz.tmp
	mv $@.tmp $@

# Boots the test guest looping dd, records the host (-a) and the guest
# together for a few seconds and prints the whole-system report.
demo-vm: build/domprof vm-guest
	@DOMPROF=$(CURDIR)/build/domprof DOMPROF_TOP=$(CURDIR) bash tests/vm/demo.sh

bench-passive: build/domprof vm-guest
	@DOMPROF=$(CURDIR)/build/domprof bench/passive-overhead
