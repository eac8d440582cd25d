#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Write cache and FUA (duty of a stacked driver 2).  fairq0 always says
# "write back" with FUA, so PREFLUSH and FUA from above always reach the
# lower device, whatever cache it had at power-on; a lower without a
# cache drops them at no cost.  Under a null_blk with a write cache
# (cache_size) switched between write through and write back after
# fairq0 is up, an fsync through fairq0 must:
#  - write through: pass the flush down (fairq0's passthrough_reqs grows)
#    and cost the lower nothing (its flush count, field 16 of
#    /sys/block/DEV/stat, stays);
#  - write back: flush the lower (its flush count grows);
#  - write through again: as the first time.
DESCRIPTION="write cache/FUA advertised; fsync through fairq0 flushes a lower that gains a cache"
TIMEOUT=120
# shellcheck source=rc
. /fairq/tests/vm/rc

NB=nullb210
WC=/sys/block/$NB/queue/write_cache

# flushes DEV: flush requests DEV completed (diskstats field 16)
flushes() {
	awk '{ print $16 }' "/sys/block/$1/stat"
}

passthrough() {
	awk '$1 == "passthrough_reqs" { print $2 }' /sys/block/fairq0/fairq/stats
}

# fsync_through MODE: set the lower's cache to MODE, write 64 KiB through
# fairq0 and fsync it; sets F (lower flushes added), P (passthrough added)
fsync_through() {
	local f0 f1 p0 p1
	echo "$1" >$WC || fatal "$WC: '$1' refused"
	[ "$(cat $WC)" = "$1" ] || fatal "$WC reads '$(cat $WC)' after '$1'"
	f0=$(flushes $NB)
	p0=$(passthrough)
	dd if=/dev/urandom of=/dev/fairq0 bs=4k count=16 conv=fsync status=none ||
		fatal "write+fsync through fairq0 (lower $1) failed"
	f1=$(flushes $NB)
	p1=$(passthrough)
	F=$((f1 - f0))
	P=$((p1 - p0))
	log "lower $1: fsync through fairq0: passthrough +$P, lower flushes +$F"
}

null_blk_create $NB memory_backed=1 size=64 cache_size=16
cleanup_push null_blk_destroy $NB
cleanup_push fairq_destroy fairq0
[ "$(cat $WC)" = "write back" ] || skip_all "null_blk cache_size gives no write cache here"
[ "$(wc -w </sys/block/$NB/stat)" -ge 17 ] || skip_all "no flush fields in /sys/block/$NB/stat"
echo "write through" >$WC || fatal "$WC: 'write through' refused"

fairq_create fairq0 /dev/$NB
q=/sys/block/fairq0/queue
[ "$(cat $q/write_cache)" = "write back" ] ||
	fatal "fairq0 write_cache is '$(cat $q/write_cache)' over a write-through lower, want 'write back'"
[ "$(cat $q/fua)" = 1 ] || fatal "fairq0 fua is $(cat $q/fua), want 1"

fsync_through "write through"
[ "$P" -ge 1 ] || fatal "write through: the fsync's flush did not reach fairq0 (passthrough +$P)"
[ "$F" = 0 ] || fatal "write through: $NB counted $F flushes, a lower without a cache should count none"

fsync_through "write back"
[ "$F" -ge 1 ] || fatal "write back: $NB counted no flush after an fsync through fairq0 (passthrough +$P)"

fsync_through "write through"
[ "$P" -ge 1 ] || fatal "write through again: the flush did not reach fairq0 (passthrough +$P)"
[ "$F" = 0 ] || fatal "write through again: $NB counted $F flushes"
