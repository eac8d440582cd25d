#!/bin/bash
# Bad input gets a clear errno and changes nothing.  Tried here:
#  - configfs: bad names for mkdir; for each tunable words, empty strings,
#    negative numbers, trailing garbage, out-of-range and overflowing
#    numbers, a non-power-of-two bucket count; backing "" / a missing path
#    / a directory / a character device; power values other than 0 and 1;
#    power=1 without a backing device.  Every failed write must leave the
#    attribute as it was and log one kernel warning naming the attribute.
#  - the same tunable writes through /sys/block/fairq0/fairq/ while powered,
#    plus backing and max_flows, which need power-off (EBUSY).
#  - power=0 while mounted and while held open (EBUSY, data intact).
#  - a second fairq device over a lower device already claimed (EBUSY),
#    over a mounted fairq device (EBUSY), a device naming itself (ENOENT:
#    it has no disk until powered), and a legal fairq-over-fairq stack.
#  - the lower device vanishing under fairq0 (I/O fails with EIO, fairq0
#    still powers off cleanly), and rmdir of fairq0 while fio runs on it.
DESCRIPTION="invalid writes, busy removal, vanishing lower device, stacking"
TIMEOUT=900
# shellcheck source=rc
. /fairq/tests/vm/rc

CFS=/sys/kernel/config/fairq

# bad_tunables_sample DIR: one of each kind of invalid value, for the
# sysfs files (they call the same core function as configfs, which gets
# the full matrix below)
bad_tunables_sample() {
	local d=$1
	write_fails EINVAL "$d/policy" bogus
	write_fails EINVAL "$d/classify" ""
	write_fails EINVAL "$d/quantum" abc
	write_fails EINVAL "$d/depth" -1
	write_fails EINVAL "$d/idle_us" 8x
	write_fails ERANGE "$d/depth" 0
	write_fails ERANGE "$d/perturb_ms" 184467440737095516150
	write_fails EINVAL "$d/buckets" 48
}

# bad_tunables DIR: every invalid value of every tunable in DIR
bad_tunables() {
	local d=$1 attr
	for attr in policy fairness classify; do
		write_fails EINVAL "$d/$attr" bogus
		write_fails EINVAL "$d/$attr" ""
	done
	for attr in quantum quantum_bytes buckets perturb_ms depth idle_us \
		    idle_grace_ms fifo_expire_sync_ms fifo_expire_async_ms; do
		write_fails EINVAL "$d/$attr" abc
		write_fails EINVAL "$d/$attr" -1
		write_fails EINVAL "$d/$attr" 8x
		write_fails EINVAL "$d/$attr" ""
		write_fails ERANGE "$d/$attr" 99999999999
		write_fails ERANGE "$d/$attr" 184467440737095516150
	done
	for attr in quantum quantum_bytes buckets depth fifo_expire_sync_ms fifo_expire_async_ms; do
		write_fails ERANGE "$d/$attr" 0
	done
	write_fails ERANGE "$d/quantum" 1025
	write_fails ERANGE "$d/depth" 4097
	write_fails ERANGE "$d/quantum_bytes" 4095
	write_fails EINVAL "$d/buckets" 48
	write_fails ERANGE "$d/idle_us" 100001
}

test_configfs_offline() {
	local d=$CFS/fairq0
	mkdir_fails "$CFS/Bad Name"
	mkdir_fails "$CFS/$(printf 'x%.0s' $(seq 1 40))"
	mkdir "$d" || fatal "mkdir fairq0"
	bad_tunables "$d"
	write_fails EINVAL "$d/backing" ""
	write_fails ENOENT "$d/backing" /dev/does-not-exist
	write_fails ENOTBLK "$d/backing" /tmp
	write_fails ENOTBLK "$d/backing" /dev/null
	write_fails EINVAL "$d/power" 2
	write_fails EINVAL "$d/power" on1
	printf 1 >"$d/power" 2>/dev/null && fatal "power=1 without backing succeeded"
	[ "$(cat "$d/power")" = 0 ] || fatal "power changed after a failed power=1"
	[ ! -e /dev/fairq0 ] || fatal "/dev/fairq0 exists after a failed power=1"
	rmdir "$d"
	echo "configfs offline: every bad write refused, nothing changed"
}

test_sysfs_online() {
	fairq_create fairq0 /dev/vdb
	bad_tunables_sample /sys/block/fairq0/fairq
	write_fails EBUSY "$CFS/fairq0/backing" /dev/vdc
	write_fails EBUSY "$CFS/fairq0/max_flows" 16
	echo "sysfs online: every bad write refused"
}

test_busy_removal() {
	local sum
	mkfs.ext4 -q -F /dev/fairq0
	mkdir -p /mnt/f
	mount /dev/fairq0 /mnt/f
	dd if=/dev/urandom of=/mnt/f/data bs=1M count=4 status=none
	sum=$(sha256sum </mnt/f/data)
	write_fails EBUSY "$CFS/fairq0/power" 0
	[ -e /dev/fairq0 ] || fatal "fairq0 vanished after a refused power=0"
	# fairq1 over a mounted fairq0: exclusively claimed by the mount
	mkdir "$CFS/fairq1"
	printf /dev/fairq0 >"$CFS/fairq1/backing"
	write_fails EBUSY "$CFS/fairq1/power" 1
	rmdir "$CFS/fairq1"
	sync
	[ "$(sha256sum </mnt/f/data)" = "$sum" ] || fatal "data changed"
	umount /mnt/f
	exec 3<>/dev/fairq0
	write_fails EBUSY "$CFS/fairq0/power" 0
	exec 3>&-
	echo "power=0 refused while mounted and while open"
}

test_stacking() {
	local want got
	# vdb is claimed by fairq0: a second claim must fail
	mkdir "$CFS/fairq1"
	printf /dev/vdb >"$CFS/fairq1/backing"
	write_fails EBUSY "$CFS/fairq1/power" 1
	rmdir "$CFS/fairq1"
	# a device naming itself: it has no disk until powered
	mkdir "$CFS/fairq2"
	write_fails ENOENT "$CFS/fairq2/backing" /dev/fairq2
	rmdir "$CFS/fairq2"
	# fairq1 over fairq0 is a legal stack
	fairq_create fairq1 /dev/fairq0 policy=sfq
	dd if=/dev/urandom of=/tmp/p bs=64k count=16 status=none
	want=$(sha256sum </tmp/p | cut -d' ' -f1)
	dd if=/tmp/p of=/dev/fairq1 bs=64k oflag=direct status=none
	write_fails EBUSY "$CFS/fairq0/power" 0
	fairq_destroy fairq1
	got=$(dd if=/dev/fairq0 bs=64k count=16 iflag=direct status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fatal "fairq1 over fairq0 lost data"
	fairq_destroy fairq0
	echo "stacking: second claim EBUSY, self ENOENT, fairq-over-fairq works"
}

test_vanishing_lower() {
	null_blk_create nullb1 memory_backed=1 size=64
	fairq_create fairq0 /dev/nullb1
	dd if=/dev/zero of=/dev/fairq0 bs=64k count=16 oflag=direct status=none ||
		fatal "write before removal failed"
	printf 0 >/sys/kernel/config/nullb/nullb1/power
	if dd if=/dev/fairq0 of=/dev/null bs=64k count=4 iflag=direct status=none 2>/tmp/dd.err; then
		fatal "read from fairq0 succeeded after its lower device vanished"
	fi
	fairq_destroy fairq0
	rmdir /sys/kernel/config/nullb/nullb1
	echo "vanishing lower device: I/O fails ($(tr -d '\n' </tmp/dd.err)), power-off clean"
}

test_rmdir_under_io() {
	fairq_create fairq0 /dev/vdb
	fio --minimal --output=/tmp/fio.out --filename=/dev/fairq0 --direct=1 \
		--ioengine=libaio --rw=randrw --bs=4k --iodepth=32 --size=32M \
		--time_based --runtime=20 --name=busy >/dev/null 2>&1 &
	local pid=$!
	wait_for stat_above fairq0 enq_reqs 64
	write_fails EBUSY "$CFS/fairq0/power" 0
	rmdir "$CFS/fairq0" || fatal "rmdir while busy failed"
	wait "$pid" 2>/dev/null
	[ ! -e /sys/block/fairq0 ] || fatal "fairq0 still registered after rmdir"
	# the lower device must be released: claim it again
	fairq_create fairq0 /dev/vdb
	fairq_destroy fairq0
	echo "rmdir while fio runs: fio ended, lower device released"
}

load_fairq
test_configfs_offline
test_sysfs_online
test_busy_removal
test_stacking
test_vanishing_lower
test_rmdir_under_io
unload_fairq
