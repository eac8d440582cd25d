#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Size and read-only state follow the lower device (duty of a stacked
# driver 3).  fairq0 sits on a dm-linear device over a 256 MiB
# memory-backed null_blk; the dm table is reloaded under fairq0:
#  - grown 64 -> 128 MiB under a mounted ext4: fairq0 grows (sysfs size,
#    lsblk), an online resize2fs on fairq0 works, files written before
#    and after (past the old end) read back, e2fsck finds nothing;
#  - made read-only while fairq0 is open, by blockdev --setro and by a
#    read-only table: direct and buffered writes fail with EIO, the lower
#    device keeps its old data, fairq0 reports read-only (blockdev
#    --getro), reads still work; back to read-write, writes work again;
#  - writes queued in fairq (depth 1, lower suspended) while a read-only
#    table is loaded fail with EIO when they go down (queued_case);
#  - shrunk 128 -> 32 MiB while fairq0 is open: a write past the new end
#    fails (EIO from the lower device; or, once fairq0 has shrunk, ENOSPC
#    from the write or EINVAL from dd's seek past the end), fairq0
#    shrinks, the data below the new end is intact.
DESCRIPTION="dm-linear lower grown, shrunk, made read-only under an open/mounted fairq0"
TIMEOUT=300
# shellcheck source=rc
. /fairq/tests/vm/rc
# shellcheck source=faultrc
. /fairq/tests/vm/faultrc

NB=nullb220
DM=fq220
MNT=/tmp/220-mnt

# linear MIB: a dm-linear table of MIB MiB over the null_blk
linear() {
	echo "0 $(($1 * 2048)) linear /dev/$NB 0"
}

size_is() {
	[ "$(cat "/sys/block/$1/size")" = "$2" ]
}

ro_is() {
	[ "$(blockdev --getro "/dev/$1")" = "$2" ]
}

test_grow() {
	local sha_a sha_b blocks0 blocks1
	mkfs.ext4 -q -F /dev/fairq0 || fatal "mkfs.ext4 on fairq0"
	mkdir -p $MNT
	mount /dev/fairq0 $MNT || fatal "mount fairq0"
	cleanup_push "umount $MNT 2>/dev/null; true"
	dd if=/dev/urandom of=$MNT/a bs=1M count=8 conv=fsync status=none || fatal "write a"
	sha_a=$(file_sha $MNT/a)
	blocks0=$(stat -f -c %b $MNT)

	dm_swap $DM "$(linear 128)"
	wait_for size_is fairq0 $((128 * 2048))
	[ "$(lsblk -bdno SIZE /dev/fairq0)" = $((128 << 20)) ] ||
		fatal "lsblk sees fairq0 as $(lsblk -bdno SIZE /dev/fairq0) bytes after the grow"
	resize2fs /dev/fairq0 >resize2fs.out 2>&1 || fatal "online resize2fs on fairq0: $(tail -n 2 resize2fs.out)"
	blocks1=$(stat -f -c %b $MNT)
	[ "$blocks1" -gt $((blocks0 * 3 / 2)) ] || fatal "ext4 has $blocks1 blocks after resize2fs, $blocks0 before"
	# 80 MiB more than fit in the old 64 MiB
	dd if=/dev/urandom of=$MNT/b bs=1M count=80 conv=fsync status=none ||
		fatal "writing 80 MiB into the grown ext4 failed"
	sha_b=$(file_sha $MNT/b)
	umount $MNT || fatal "umount"
	e2fsck -fn /dev/fairq0 >e2fsck.out 2>&1 || fatal "e2fsck after the grow: $(tail -n 3 e2fsck.out)"
	mount /dev/fairq0 $MNT || fatal "remount fairq0"
	[ "$(file_sha $MNT/a)" = "$sha_a" ] || fatal "a changed across the grow"
	[ "$(file_sha $MNT/b)" = "$sha_b" ] || fatal "b does not read back"
	umount $MNT || fatal "umount"
	log "grow 64 -> 128 MiB under ext4: fairq0 followed, resize2fs $blocks0 -> $blocks1 blocks, e2fsck clean"
}

# write_refused: a direct write to fairq0 must fail: EIO from fairq's
# check of the lower, or EPERM once fairq0 itself is read-only (the
# block layer's check in write(2))
write_refused() {
	local out
	if out=$(dd if=/dev/urandom of=/dev/fairq0 bs=4k count=64 seek=256 oflag=direct 2>&1); then
		fatal "a direct write to fairq0 over a read-only lower succeeded"
	fi
	case $out in
	*"Input/output error"*) echo EIO ;;
	*"Operation not permitted"*) echo EPERM ;;
	*) fatal "a direct write over a read-only lower: '$out', expected EIO or EPERM" ;;
	esac
}

# ro_case HOW: the lower became read-only (HOW says how) after 256 KiB
# were written to fairq0's page cache; their writeback (an fsync) must
# fail with EIO, direct writes fail, nothing changes below, fairq0 turns
# read-only and still reads
ro_case() {
	local how=$1 before direct
	before=$(region_sha /dev/mapper/$DM 1024 256)
	expect_eio dd if=/dev/null of=/dev/fairq0 conv=fsync status=none
	direct=$(write_refused)
	wait_for ro_is fairq0 1
	write_refused >/dev/null
	[ "$(region_sha /dev/fairq0 1024 256)" = "$before" ] || fatal "$how: fairq0 reads other data than before"
	[ "$(region_sha /dev/mapper/$DM 1024 256)" = "$before" ] || fatal "$how: the lower device changed"
	log "$how: writeback EIO, direct write $direct, fairq0 read-only, lower unchanged"
}

# dirty: 256 KiB at 1 MiB into fairq0's page cache, not written back (fd 3
# holds fairq0 open, so dd's close does not sync)
dirty() {
	dd if=/dev/urandom of=/dev/fairq0 bs=4k count=64 seek=256 status=none || fatal "buffered write"
}

# queued_case: writes queued in fairq while the lower turns read-only
# fail when they go down.  depth=1 and the dm device suspended: the first
# of four direct 4 KiB writes (one dd each, blocks 2048-2051) waits in dm,
# three wait in fairq's queue; a read-only table is loaded and resumed.
# The first then completes (dm maps what it took while read-write; fairq
# checked it when the lower was read-write too); the three queued ones
# must fail with EIO and leave their blocks unchanged: without the check
# at dispatch they went down to the read-only device (the block layer
# only warns, "Trying to write to read-only block-device").
queued_case() {
	local i pids=() ok=0 eio=0 changed=0 before=()
	for i in 0 1 2 3; do
		before[i]=$(region_sha /dev/mapper/$DM $(((2048 + i) * 4)) 4)
	done
	fairq_set fairq0 depth 1 || fatal "depth=1 refused"
	dmsetup suspend --nolockfs $DM || fatal "dmsetup suspend"
	for i in 0 1 2 3; do
		dd if=/dev/urandom of=/dev/fairq0 bs=4k count=1 seek=$((2048 + i)) \
			oflag=direct status=none 2>/tmp/queued.$i &
		pids[i]=$!
	done
	wait_for stat_above fairq0 queued 2
	dmsetup load --readonly $DM --table "$(linear 128)" || fatal "dmsetup load --readonly"
	dmsetup resume $DM || fatal "dmsetup resume"
	for i in 0 1 2 3; do
		if wait "${pids[i]}"; then
			ok=$((ok + 1))
		elif grep -q "Input/output error" /tmp/queued.$i; then
			eio=$((eio + 1))
		else
			fatal "queued write $i: '$(cat /tmp/queued.$i)', expected EIO"
		fi
		[ "$(region_sha /dev/mapper/$DM $(((2048 + i) * 4)) 4)" = "${before[i]}" ] ||
			changed=$((changed + 1))
	done
	[ $ok = 1 ] && [ $eio = 3 ] ||
		fatal "4 writes across the switch, 1 below and 3 queued: $ok succeeded, $eio EIO (expected 1 and 3)"
	[ $changed = 1 ] ||
		fatal "4 writes across the switch: $changed blocks of the read-only lower changed (expected 1: the one dm held)"
	dm_swap $DM "$(linear 128)"
	wait_for ro_is fairq0 0
	fairq_set fairq0 depth auto || fatal "depth=auto refused"
	log "writes queued across the switch to read-only: 1 below completed, 3 queued failed with EIO, their blocks unchanged"
}

test_ro() {
	# the cases' dirty pages must stay dirty until their fsync: no
	# periodic writeback (on a slow kernel it can write them back before
	# the switch, and the fsync then has nothing to fail)
	local wb
	wb=$(cat /proc/sys/vm/dirty_writeback_centisecs)
	echo 0 >/proc/sys/vm/dirty_writeback_centisecs || fatal "vm.dirty_writeback_centisecs"
	cleanup_push "echo $wb >/proc/sys/vm/dirty_writeback_centisecs"
	dirty
	blockdev --setro /dev/mapper/$DM || fatal "blockdev --setro"
	ro_case "blockdev --setro"
	blockdev --setrw /dev/mapper/$DM || fatal "blockdev --setrw"
	wait_for ro_is fairq0 0
	dd if=/dev/urandom of=/dev/fairq0 bs=4k count=64 seek=256 oflag=direct status=none ||
		fatal "write after setrw"

	dirty
	dmsetup suspend --nolockfs $DM || fatal "dmsetup suspend"
	dmsetup load --readonly $DM --table "$(linear 128)" || fatal "dmsetup load --readonly"
	dmsetup resume $DM || fatal "dmsetup resume"
	ro_case "read-only dm table"
	dm_swap $DM "$(linear 128)"
	wait_for ro_is fairq0 0
	dd if=/dev/urandom of=/dev/fairq0 bs=4k count=64 seek=256 oflag=direct status=none ||
		fatal "write after the read-write table"
	log "read-write again: writes work"
	echo "$wb" >/proc/sys/vm/dirty_writeback_centisecs || fatal "restoring vm.dirty_writeback_centisecs"
	queued_case
}

test_shrink() {
	local keep out
	keep=$(region_sha /dev/fairq0 0 8192)
	dm_swap $DM "$(linear 32)"
	if out=$(dd if=/dev/zero of=/dev/fairq0 bs=4k count=16 seek=$((48 * 256)) oflag=direct 2>&1); then
		fatal "a write at 48 MiB succeeded after the lower shrank to 32 MiB"
	fi
	case $out in
	*"Input/output error"*) out=EIO ;;
	*"No space left on device"*) out=ENOSPC ;;
	*"cannot seek: Invalid argument"*) out="EINVAL from the seek: fairq0 had shrunk already" ;;
	*) fatal "a write past the new end: '$out', expected EIO, ENOSPC or EINVAL" ;;
	esac
	wait_for size_is fairq0 $((32 * 2048))
	[ "$(lsblk -bdno SIZE /dev/fairq0)" = $((32 << 20)) ] || fatal "lsblk: fairq0 not 32 MiB"
	[ "$(region_sha /dev/fairq0 0 8192)" = "$keep" ] || fatal "the first 8 MiB changed across the shrink"
	log "shrink 128 -> 32 MiB: past-end write refused ($out), fairq0 shrank, data below intact"
}

require_cmd dmsetup mkfs.ext4 resize2fs e2fsck lsblk blockdev
require_module dm-mod
null_blk_create $NB memory_backed=1 size=256
cleanup_push null_blk_destroy $NB
dmsetup create $DM --table "$(linear 64)" || fatal "dmsetup create $DM"
cleanup_push "dmsetup remove --force $DM"
wait_for_file /dev/mapper/$DM || fatal "/dev/mapper/$DM missing"
fairq_create fairq0 /dev/mapper/$DM
cleanup_push fairq_destroy fairq0
test_grow
# held open from here on, as a user of the device would
exec 3</dev/fairq0
cleanup_push "exec 3<&-"
test_ro
test_shrink
exec 3<&-
