#!/bin/bash
# Create and destroy fairq over virtio-blk, memory-backed null_blk and nbd
# (the project's fairq-nbd served inside the guest, Debian's nbd-server
# when it is missing).  After power=1 the fairq disk must have the lower
# device's size and queue limits; a pattern written through fairq must be
# on the lower device afterwards; power=0 must remove /dev/NAME.
DESCRIPTION="create/destroy over virtio, null_blk, nbd; limits match"
TIMEOUT=600
# shellcheck source=rc
. /fairq/tests/vm/rc

LIMITS="size queue/logical_block_size queue/physical_block_size
queue/max_sectors_kb queue/max_hw_sectors_kb queue/max_segments
queue/discard_max_bytes queue/discard_granularity
queue/write_zeroes_max_bytes queue/rotational
queue/io_min queue/io_opt queue/minimum_io_size queue/optimal_io_size"

# compare_limits LOWER UPPER: every limit above equal on both disks
compare_limits() {
	local lower=$1 upper=$2 attr a b
	for attr in $LIMITS; do
		[ -e "/sys/block/$lower/$attr" ] || continue
		a=$(cat "/sys/block/$lower/$attr")
		b=$(cat "/sys/block/$upper/$attr")
		[ "$a" = "$b" ] || fatal "$upper/$attr is '$b', lower $lower has '$a'"
	done
	# always a write cache with FUA, whatever the lower has (210-write-cache)
	[ "$(cat /sys/block/"$upper"/queue/write_cache)" = "write back" ] &&
		[ "$(cat /sys/block/"$upper"/queue/fua)" = 1 ] ||
		fatal "$upper: write_cache '$(cat /sys/block/"$upper"/queue/write_cache)', fua $(cat /sys/block/"$upper"/queue/fua)"
	echo "$upper over $lower: limits match ($(cat /sys/block/"$upper"/size) sectors)"
}

# round_trip LOWER: write 4 MiB of pattern through fairq0 at 1 MiB, read
# it back through fairq0, then power off and read it from the lower disk
round_trip() {
	local lower=$1 want got
	dd if=/dev/urandom of=/tmp/pattern bs=1M count=4 status=none
	want=$(sha256sum </tmp/pattern | cut -d' ' -f1)
	dd if=/tmp/pattern of=/dev/fairq0 bs=1M seek=1 oflag=direct status=none ||
		fatal "write through fairq0 over $lower failed"
	got=$(dd if=/dev/fairq0 bs=1M skip=1 count=4 iflag=direct status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fatal "fairq0 over $lower: read back $got, wrote $want"
	fairq_destroy fairq0
	[ ! -e /dev/fairq0 ] || fatal "/dev/fairq0 still exists after power=0"
	got=$(dd if="/dev/$lower" bs=1M skip=1 count=4 iflag=direct status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fatal "$lower after destroy: $got, wrote $want"
	echo "$lower: 4 MiB pattern round-trips through fairq0"
}

test_virtio() {
	fairq_create fairq0 /dev/vdb
	compare_limits vdb fairq0
	round_trip vdb
}

test_null_blk() {
	null_blk_create nullb1 memory_backed=1 size=256 blocksize=4096
	fairq_create fairq0 /dev/nullb1 policy=sfq
	compare_limits nullb1 fairq0
	[ "$(cat /sys/block/fairq0/queue/logical_block_size)" = 4096 ] ||
		fatal "fairq0 over a 4 KiB null_blk has logical block size $(cat /sys/block/fairq0/queue/logical_block_size)"
	round_trip nullb1
	null_blk_destroy nullb1
}

test_nbd() {
	nbd_create 010-nbd 256M
	fairq_create fairq0 /dev/nbd0 policy=cfq
	compare_limits nbd0 fairq0
	round_trip nbd0
	nbd_destroy
}

load_fairq
test_virtio
test_null_blk
test_nbd
unload_fairq
