#!/bin/bash
# Create and destroy fairq over virtio-blk, memory-backed null_blk and nbd
# (the project's fairq-nbd served inside the guest, Debian's nbd-server
# when it is missing).  After power=1 the fairq disk must have the lower
# device's size and queue limits; a pattern written through fairq must be
# on the lower device afterwards; power=0 must remove /dev/NAME.
DESCRIPTION="create/destroy over virtio, null_blk, nbd; limits match"
TIMEOUT=600
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
		[ "$a" = "$b" ] || fail "$upper/$attr is '$b', lower $lower has '$a'"
	done
	# always a write cache with FUA, whatever the lower has (210-write-cache)
	[ "$(cat /sys/block/$upper/queue/write_cache)" = "write back" ] &&
		[ "$(cat /sys/block/$upper/queue/fua)" = 1 ] ||
		fail "$upper: write_cache '$(cat /sys/block/$upper/queue/write_cache)', fua $(cat /sys/block/$upper/queue/fua)"
	echo "$upper over $lower: limits match ($(cat /sys/block/$upper/size) sectors)"
}

# round_trip LOWER: write 4 MiB of pattern through fairq0 at 1 MiB, read
# it back through fairq0, then power off and read it from the lower disk
round_trip() {
	local lower=$1 want got
	dd if=/dev/urandom of=/tmp/pattern bs=1M count=4 status=none
	want=$(sha256sum </tmp/pattern | cut -d' ' -f1)
	dd if=/tmp/pattern of=/dev/fairq0 bs=1M seek=1 oflag=direct status=none ||
		fail "write through fairq0 over $lower failed"
	got=$(dd if=/dev/fairq0 bs=1M skip=1 count=4 iflag=direct status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "fairq0 over $lower: read back $got, wrote $want"
	fairq_destroy fairq0
	[ ! -e /dev/fairq0 ] || fail "/dev/fairq0 still exists after power=0"
	got=$(dd if="/dev/$lower" bs=1M skip=1 count=4 iflag=direct status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "$lower after destroy: $got, wrote $want"
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
		fail "fairq0 over a 4 KiB null_blk has logical block size $(cat /sys/block/fairq0/queue/logical_block_size)"
	round_trip nullb1
	null_blk_destroy nullb1
}

start_nbd_server() {
	truncate -s 256M /tmp/010-nbd.img
	ip link set lo up 2>/dev/null || true
	if command -v fairq-nbd >/dev/null; then
		fairq-nbd --unix /tmp/010-nbd.sock /tmp/010-nbd.img >/tmp/010-nbd.log 2>&1 &
		NBD_PID=$!
		wait_for test -S /tmp/010-nbd.sock
		nbd-client -unix /tmp/010-nbd.sock /dev/nbd0 -N "" -b 4096 >/dev/null ||
			fail "nbd-client could not connect to fairq-nbd: $(cat /tmp/010-nbd.log)"
		echo "nbd0 served by fairq-nbd"
	else
		printf '[generic]\n[export]\nexportname = /tmp/010-nbd.img\n' >/tmp/010-nbd.conf
		nbd-server -C /tmp/010-nbd.conf 10809 >/tmp/010-nbd.log 2>&1
		nbd-client 127.0.0.1 10809 /dev/nbd0 -N export -b 4096 >/dev/null ||
			fail "nbd-client could not connect to nbd-server"
		echo "nbd0 served by Debian's nbd-server (fairq-nbd not built)"
	fi
	wait_for nbd0_sized
}

nbd0_sized() {
	[ "$(cat /sys/block/nbd0/size)" -gt 0 ]
}

stop_nbd_server() {
	nbd-client -d /dev/nbd0 >/dev/null 2>&1 || true
	[ -n "${NBD_PID:-}" ] && kill "$NBD_PID" 2>/dev/null
	killall nbd-server 2>/dev/null || true
	rm -f /tmp/010-nbd.img
}

test_nbd() {
	modprobe nbd nbds_max=2 || skip "no nbd module"
	start_nbd_server
	fairq_create fairq0 /dev/nbd0 policy=cfq
	compare_limits nbd0 fairq0
	round_trip nbd0
	stop_nbd_server
}

load_fairq
test_virtio
test_null_blk
test_nbd
unload_fairq
