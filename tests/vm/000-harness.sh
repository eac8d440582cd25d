#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The harness itself, without fairq: the virtio test disks are there with
# the size vm/run gave them and keep what is written to them, a configfs
# null_blk (memory_backed) round-trips data, and the rc helpers behave.
# shellcheck disable=SC2034 # read by the harness and by people
DESCRIPTION="harness self-test: virtio disks, null_blk, rc helpers"
TIMEOUT=180

# shellcheck source=rc
. /fairq/tests/vm/rc

test_virtio_disks() {
	local d want=${FAIRQ_DISK_MB:-512}
	for d in /dev/vdb /dev/vdc; do
		[ -b "$d" ] || fatal "$d missing"
		[ "$(dev_size_mb "$d")" = "$want" ] ||
			fatal "$d is $(dev_size_mb "$d") MiB, expected $want"
	done
	log "vdb, vdc: $want MiB each"
}

# 8 MiB of random data at a 1 MiB offset, written and read back O_DIRECT
# so the page cache cannot answer for the disk.
test_virtio_roundtrip() {
	local want got
	dd if=/dev/urandom of=pattern bs=1M count=8 status=none
	want=$(sha256sum <pattern)
	dd if=pattern of=/dev/vdb bs=1M seek=1 oflag=direct conv=fsync status=none ||
		fatal "write to /dev/vdb failed"
	echo 3 >/proc/sys/vm/drop_caches
	got=$(dd if=/dev/vdb bs=1M skip=1 count=8 iflag=direct status=none | sha256sum)
	[ "$got" = "$want" ] || fatal "/dev/vdb read back $got, wrote $want"
	# The sectors around it are still zero (fresh sparse disk).
	got=$(dd if=/dev/vdb bs=1M count=1 iflag=direct status=none | tr -d '\0' | wc -c)
	[ "$got" = 0 ] || fatal "/dev/vdb first MiB not zero ($got non-zero bytes)"
	log "vdb: 8 MiB pattern round-trips"
}

test_null_blk() {
	local want got
	null_blk_create nullb_h memory_backed=1 size=64 blocksize=4096
	cleanup_push null_blk_destroy nullb_h
	[ "$(dev_size_mb /dev/nullb_h)" = 64 ] || fatal "nullb_h is $(dev_size_mb /dev/nullb_h) MiB, expected 64"
	[ "$(cat /sys/block/nullb_h/queue/logical_block_size)" = 4096 ] ||
		fatal "nullb_h logical block size is not 4096"
	dd if=/dev/urandom of=pattern2 bs=64k count=64 status=none
	want=$(sha256sum <pattern2)
	dd if=pattern2 of=/dev/nullb_h bs=64k seek=16 oflag=direct status=none ||
		fatal "write to nullb_h failed"
	got=$(dd if=/dev/nullb_h bs=64k skip=16 count=64 iflag=direct status=none | sha256sum)
	[ "$got" = "$want" ] || fatal "nullb_h read back $got, wrote $want"
	cmp -n 4194304 pattern2 <(dd if=/dev/nullb_h bs=64k skip=16 count=64 status=none) ||
		fatal "nullb_h buffered read differs"
	expect_errno EBUSY "echo 128 > $NULLB_CONFIGFS/nullb_h/size"
	null_blk_destroy nullb_h
	[ ! -e /dev/nullb_h ] || wait_for_gone /dev/nullb_h || fatal "/dev/nullb_h still there"
	log "null_blk: 4 MiB pattern round-trips"
}

test_rc_helpers() {
	expect_errno ENOENT 'echo x > /nonexistent/dir/file'
	expect_errno EINVAL 'echo bogus > /sys/block/vdb/queue/scheduler'
	( expect_errno EINVAL 'true' ) 2>/dev/null && fatal "expect_errno passed a command that succeeded"
	errno_text ERANGE && [ "$ERRNO_TEXT" = "Numerical result out of range" ] || fatal "errno_text ERANGE"
	errno_name "write error: Device or resource busy" && [ "$ERRNO_NAME" = EBUSY ] ||
		fatal "errno_name of EBUSY's text"
	log "rc helpers ok"
}

main() {
	test_virtio_disks
	test_virtio_roundtrip
	test_null_blk
	test_rc_helpers
}

main "$@"
