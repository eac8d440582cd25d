#!/bin/bash
# Data integrity through fairq0 for every policy: several fio jobs at once
# write and verify (crc32c) random and sequential I/O with block sizes from
# 512 B to 1 MiB, each job in its own 12 MiB region; then fairq0 is
# powered off and the lower device, read directly, must hold exactly what
# was read through fairq0.  Run over virtio-blk and memory-backed null_blk.
DESCRIPTION="fio write+verify for fifo, cfq, sfq; lower device holds the data"
TIMEOUT=900
# shellcheck source=rc
. /fairq/tests/vm/rc

REGION_MB=12
JOBS=5

# fio_verify DEV: the five jobs below at once, each verifying what it wrote
fio_verify() {
	local dev=$1
	fio --output=/tmp/fio.out --minimal --direct=1 --ioengine=libaio \
		--filename="$dev" --size=${REGION_MB}M --verify=crc32c \
		--do_verify=1 --verify_fatal=1 --randrepeat=0 \
		--name=r512 --offset=0M --rw=randwrite --bs=512 --iodepth=8 --size=2M \
		--name=r4k --offset=$((REGION_MB * 1))M --rw=randwrite --bs=4k --iodepth=16 \
		--name=mixed --offset=$((REGION_MB * 2))M --rw=randwrite --bsrange=4k-256k \
			--iodepth=8 \
		--name=s64k --offset=$((REGION_MB * 3))M --rw=write --bs=64k --iodepth=4 \
		--name=s1m --offset=$((REGION_MB * 4))M --rw=write --bs=1m --iodepth=2 \
		|| { cat /tmp/fio.out; fatal "fio verify failed on $dev"; }
	# minimal output: field 5 is the job's error code
	awk -F';' '$5 != 0 { bad = 1; print "job " $3 " error " $5 } END { exit bad }' \
		/tmp/fio.out || fatal "fio job reported an error"
}

region_sum() {
	dd if="$1" bs=1M count=$((REGION_MB * JOBS)) iflag=direct status=none |
		sha256sum | cut -d' ' -f1
}

# check_policy LOWER POLICY
check_policy() {
	local lower=$1 policy=$2 upper_sum lower_sum
	fairq_create fairq0 "/dev/$lower" policy="$policy" depth=16
	fio_verify /dev/fairq0
	upper_sum=$(region_sum /dev/fairq0)
	stat_field fairq0 errors | grep -qx 0 || fatal "stats show errors"
	fairq_destroy fairq0
	lower_sum=$(region_sum "/dev/$lower")
	[ "$upper_sum" = "$lower_sum" ] ||
		fatal "$policy over $lower: fairq0 read $upper_sum, lower holds $lower_sum"
	echo "$policy over $lower: verify ok, lower device matches ($upper_sum)"
}

load_fairq
for policy in fifo cfq sfq; do
	check_policy vdb "$policy"
done
null_blk_create nullb1 memory_backed=1 size=128
check_policy nullb1 cfq
null_blk_destroy nullb1
unload_fairq
