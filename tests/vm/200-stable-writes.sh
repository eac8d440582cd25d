#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stable writes (duty of a stacked driver 1).  A lower device that needs
# pages left alone while they are under I/O (T10 DIF/DIX, checksumming
# targets; here a null_blk whose queue/stable_writes is set by hand) makes
# fairq0 need them too, or a file system above would modify pages in
# flight and the lower's checksums would no longer match the data.  On
# 6.1 it is a queue flag disk_stack_limits() does not copy; on 6.12 a
# feature stacking inherits.  A lower without the need leaves fairq0
# without it (no needless waits on writeback).
DESCRIPTION="stable_writes of the lower device carried to fairq0"
TIMEOUT=120
# shellcheck source=rc
. /fairq/tests/vm/rc

NB=nullb200
SW=/sys/block/$NB/queue/stable_writes

# stable_on LOWER_VALUE: fairq0 over $NB with stable_writes=LOWER_VALUE
# must show the same value, and carry a pattern to the lower device
stable_on() {
	local want=$1 got sha
	echo "$want" >$SW 2>/dev/null || skip_all "$SW is not writable on $(uname -r)"
	[ "$(cat $SW)" = "$want" ] || fatal "$SW reads $(cat $SW) after writing $want"
	fairq_create fairq0 /dev/$NB
	got=$(cat /sys/block/fairq0/queue/stable_writes)
	[ "$got" = "$want" ] ||
		fatal "fairq0 stable_writes is $got over $NB with stable_writes $want"
	dd if=/dev/urandom of=pattern bs=64k count=16 status=none
	dd if=pattern of=/dev/fairq0 bs=64k seek=16 conv=fsync status=none ||
		fatal "buffered write through fairq0 failed"
	fairq_destroy fairq0
	sha=$(dd if=/dev/$NB bs=64k skip=16 count=16 iflag=direct status=none | sha256sum)
	[ "$sha" = "$(sha256sum <pattern)" ] || fatal "$NB does not hold what was written (stable_writes $want)"
	log "lower stable_writes $want -> fairq0 $got; 1 MiB buffered write landed"
}

null_blk_create $NB memory_backed=1 size=64
cleanup_push null_blk_destroy $NB
cleanup_push fairq_destroy fairq0
[ -e $SW ] || skip_all "no queue/stable_writes on $(uname -r)"
stable_on 1
stable_on 0
