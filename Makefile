# SPDX-License-Identifier: GPL-2.0
#
# fairq top-level Makefile.
#
#   make            fairq.ko (against Debian's default kernel), fairqctl, fairq-nbd
#   make deps       install the Debian packages everything needs
#   make check      every host and VM test; ends with "N passed, N failed"
#   make demo       boot the VM, fairq0 over a virtio disk, ext4, a fairness table
#   make readme     README.md's results block from the run bench/RESULTS.md names
#   make sparse     the module under sparse (C=1) and W=1
#   make soak       tests/soak/soak.sh in the VM for SOAK_MIN minutes (30), then
#                   tests/vm/250-lifecycle-loop.sh for LOOP_CYCLES cycles (100);
#                   not in check (there 250 runs 10 cycles, LOOP_CYCLES=N to change)
#   make deb        build/deb/fairq-dkms_V_all.deb, fairq-tools_V_amd64.deb (packaging/)
#   make debug-kernel   Debian's 6.1 source with KASAN, lockdep, kmemleak, ... (cached)
#   make check-debug    the VM suite on that kernel, two guests at once (vm/run-split)
#   make check-rt       the VM suite on Debian's PREEMPT_RT kernel
#
# KVER picks the kernel: by default the one Debian's linux-image-amd64
# depends on (scripts/debian-kver), never "the newest in /lib/modules".

KVER ?= $(shell $(CURDIR)/scripts/debian-kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
# Each kernel builds in its own object tree; fairq.ko at the top is the
# module for Debian's default kernel (the one the tests boot by default).
KMOD = $(CURDIR)/build/kmod/$(KVER)
DEFAULT_KVER := $(shell $(CURDIR)/scripts/debian-kver 2>/dev/null)
# Debian's 6.12 LTS kernel (scripts/kernels, row lts): make check also
# builds and boots the module on it.
LTS_KVER := $(shell $(CURDIR)/scripts/debian-kver lts 2>/dev/null)
export KVER KDIR

.PHONY: all module module-lts tools nbd testtools deps check check-host check-vm demo readme soak sparse deb clean \
	debug-kernel check-debug check-rt

all: module tools nbd testtools

module:
	@test -d "$(KDIR)" || { echo "no kernel headers at '$(KDIR)' (run: make deps)" >&2; exit 1; }
	scripts/kmod-tree $(KMOD)
	$(MAKE) -C $(KDIR) M=$(KMOD) modules
	if [ "$(KVER)" = "$(DEFAULT_KVER)" ]; then cp $(KMOD)/fairq.ko fairq.ko; fi

# fairq.ko for the 6.12 LTS kernel too (build/kmod/LTS_KVER), if installed
module-lts:
	if [ -n "$(LTS_KVER)" ]; then $(MAKE) module KVER=$(LTS_KVER) KDIR=/lib/modules/$(LTS_KVER)/build; fi

sparse:
	scripts/kmod-tree $(KMOD)
	$(MAKE) -C $(KDIR) M=$(KMOD) W=1 C=2 modules

tools:
	$(MAKE) -C tools

nbd:
	$(MAKE) -C userspace-backend

# helpers the guest tests run (tests/tools/lwreplay)
testtools:
	$(MAKE) -C tests/tools

deps:
	scripts/install-deps

check: deps
	$(MAKE) all
	$(MAKE) module-lts
	tests/run

check-host: deps
	$(MAKE) tools nbd
	tests/run --host

check-vm: deps
	$(MAKE) all
	$(MAKE) module-lts
	tests/run --vm

demo: deps
	$(MAKE) all
	vm/demo

# the block between README.md's results markers (tests/host/doc-front.sh)
readme:
	bench/readme_results.py --write README.md

# the soak is out of make check: SOAK_MIN minutes plus boot and teardown,
# then the lifecycle loop's long run (its TIMEOUT is per 10 cycles)
SOAK_MIN ?= 30
LOOP_CYCLES ?= 100
soak: deps
	$(MAKE) all
	rc=0; \
	vm/run --append fairq.soak_min=$(SOAK_MIN) --test-timeout $$(( $(SOAK_MIN) * 60 + 300 )) tests/soak/soak.sh || rc=1; \
	LOOP_CYCLES=$(LOOP_CYCLES) vm/run --timeout-scale $$(( ($(LOOP_CYCLES) + 9) / 10 )) 250-lifecycle-loop || rc=1; \
	exit $$rc

bench: deps
	$(MAKE) all
	bench/run

# packaging/README.md; the packages build from their own copy of the sources
deb: deps
	packaging/build-deb

# The debug kernel is built once into /var/cache/fairq (vm/build-debug-kernel);
# it runs I/O ~35x slower, hence the long per-test timeout.
debug-kernel:
	scripts/install-deps --debug
	vm/build-debug-kernel

check-debug: deps debug-kernel
	$(MAKE) tools nbd
	k=$$(vm/build-debug-kernel --print-kver) && \
	$(MAKE) module KVER=$$k KDIR=/lib/modules/$$k/build && \
	vm/run-split --kver $$k --mem 2048 --logs build/vm/logs-debug

# Debian's PREEMPT_RT 6.1 kernel: spinlocks sleep, interrupts are threads
check-rt: deps
	scripts/install-deps --rt
	$(MAKE) tools nbd
	k=$$(scripts/debian-kver rt) && \
	$(MAKE) module KVER=$$k KDIR=/lib/modules/$$k/build && \
	vm/run --kver $$k

clean:
	rm -f fairq.ko
	-$(MAKE) -C tools clean
	-$(MAKE) -C tests/tools clean
	-$(MAKE) -C userspace-backend clean
	-$(MAKE) -C sched clean
	rm -rf build
