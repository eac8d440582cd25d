#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Background writeback yields to synchronous I/O (writeback=yield, the
# default; sched/fq_writes.c).  fairq0 at its defaults over /dev/vdc,
# which vm/run throttles (tests/run's vm-throttled suite: vm/throttle.conf's
# 500 IOPS and 4 MiB/s, a device that charges per byte); skipped, and
# counted, without the throttle.  ext4 on fairq0.
#
# fastpath=off: every bio is scheduled, so the completions the cost model
# is fitted from are all seen (the fast path leaves epochs unfitted, and
# a model takes longer to form); a warm-up of direct writes of 4 KiB to
# 128 KiB forms it before the rounds.
# Each round copies 24 MiB of random data from memory into a file with
# dd (buffered: with vm.dirty_background_bytes at 2 MiB and
# vm.dirty_bytes at 16 MiB for the test, the page cache's writeback sends
# it down as async writes while dd runs) beside a commit log (fio, 4 KiB
# writes, each followed by fdatasync: synchronous I/O) for SECS seconds,
# then syncs.  After both rounds the page cache is dropped and each copy
# compared with its source.
# A first round runs on the fresh device, before the warm-up, while no
# cost model exists (cost_write_ns and cost_write_ps_per_byte both 0;
# skipped, and counted, if one formed during mkfs and mount).
# Asserted:
#  - fresh device: async writes were cut all the same (async_cut grew:
#    pieces of one to eight pages until the model forms);
#  - writeback=yield: the rule acted: async writes were refused room
#    while the commit log was active (async_held grew); how many were
#    cut (async_cut) is printed, with the model's per-byte price after
#    the warm-up: a cut needs that price above the fit's noise at the
#    moment a write arrives, which a loaded host does not always give;
#  - writeback=fair: neither counter moved;
#  - each copy read back from the disk equals its source (cut pieces and
#    their chaining, where there were any, lose nothing), dd and fio
#    ended without error, and
#    fairq0 is at rest with enq_reqs == done_reqs and no error.
# The commit log's rate in each round is printed, not asserted (the
# benchmark's write family measures it).
DESCRIPTION="writeback=yield holds background writeback back while sync I/O is active"
TIMEOUT=420
# shellcheck source=rc
. /fairq/tests/vm/rc

SECS=8
MNT=/mnt/t340

[ -n "${FAIRQ_THROTTLE_IOPS:-}" ] ||
	skip_all "vm/run without --throttle-iops (tests/run's vm-throttled suite runs this throttled)"
require_cmd fio
require_cmd mkfs.ext4
require_blockdev vdc
echo none >/sys/block/vdc/queue/scheduler 2>/dev/null

load_fairq
fairq_create fairq0 /dev/vdc
cleanup_push "fairq_destroy fairq0"
[ "$(cat /sys/block/fairq0/fairq/writeback)" = yield ] ||
	fatal "writeback is not yield by default: $(cat /sys/block/fairq0/fairq/writeback)"
mkfs.ext4 -q -F /dev/fairq0 || fatal "mkfs.ext4 on fairq0 failed"
mkdir -p "$MNT"
mount /dev/fairq0 "$MNT" || fatal "mount of fairq0 failed"
cleanup_push "umount $MNT"

# the kernel's limits are ratios here (a ratio written clears the bytes)
dirty_bg=$(cat /proc/sys/vm/dirty_background_ratio)
dirty=$(cat /proc/sys/vm/dirty_ratio)
cleanup_push "echo $dirty >/proc/sys/vm/dirty_ratio; echo $dirty_bg >/proc/sys/vm/dirty_background_ratio"
echo $((2 << 20)) >/proc/sys/vm/dirty_background_bytes
echo $((16 << 20)) >/proc/sys/vm/dirty_bytes

# round NAME: the copy beside the commit log; prints "held cut iops rc"
round() {
	local held0 cut0 pid rc=0
	held0=$(stat_field fairq0 async_held)
	cut0=$(stat_field fairq0 async_cut)
	head -c $((24 << 20)) /dev/urandom >"/tmp/src.$1"
	fio --minimal --output="/tmp/fio340.$1" --time_based --runtime="$SECS" \
		--name=commit --filename="$MNT/log.$1" --rw=write --bs=4k \
		--size=16M --ioengine=psync --fdatasync=1 >/dev/null &
	pid=$!
	sleep 1
	dd if="/tmp/src.$1" of="$MNT/copy.$1" bs=1M status=none || rc=1
	wait "$pid" || rc=1
	sync
	echo "$(($(stat_field fairq0 async_held) - held0))" \
		"$(($(stat_field fairq0 async_cut) - cut0))" \
		"$(awk -F';' '$3 == "commit" { print $49 }' "/tmp/fio340.$1")" "$rc"
}

fairq_set fairq0 fastpath off
model0="$(stat_field fairq0 cost_write_ns) $(stat_field fairq0 cost_write_ps_per_byte)"
read -r held cut iops rc <<<"$(round fresh)"
log "fresh device (write model before: $model0): async_held +$held, async_cut +$cut, commit log $iops write IOPS"
[ "$rc" = 0 ] && awk -F';' '$5 != 0 { bad = 1 } END { exit bad }' /tmp/fio340.fresh &&
	ok "fresh device: dd and fio ended without error" ||
	fail "fresh device: dd or fio failed, or a job reported an error"
if [ "$model0" != "0 0" ]; then
	skip "fresh device: a write model formed during mkfs and mount ($model0)"
elif [ "$cut" -gt 0 ]; then
	ok "fresh device: async writes cut before the model formed (+$cut)"
else
	fail "fresh device: nothing cut while no model existed"
fi

fio --minimal --output=/tmp/fio340.warm --name=warm --filename="$MNT/warm" \
	--rw=randwrite --bsrange=4k-128k --size=32M --direct=1 \
	--ioengine=libaio --iodepth=4 --time_based --runtime=6 >/dev/null ||
	fail "warm-up fio failed"
log "after the warm-up: cost_write_ps_per_byte $(stat_field fairq0 cost_write_ps_per_byte)," \
	"cost_epochs $(stat_field fairq0 cost_epochs)"

for wb in yield fair; do
	fairq_set fairq0 writeback "$wb"
	read -r held cut iops rc <<<"$(round "$wb")"
	log "writeback=$wb: async_held +$held, async_cut +$cut, commit log $iops write IOPS"
	[ "$rc" = 0 ] && awk -F';' '$5 != 0 { bad = 1 } END { exit bad }' "/tmp/fio340.$wb" &&
		ok "writeback=$wb: dd and fio ended without error" ||
		fail "writeback=$wb: dd or fio failed, or a job reported an error"
	if [ "$wb" = yield ]; then
		[ "$held" -gt 0 ] && ok "yield: async writes held while the commit log ran (+$held)" ||
			fail "yield: async_held did not grow"
	else
		[ "$held" = 0 ] && [ "$cut" = 0 ] && ok "fair: nothing held or cut" ||
			fail "fair: async_held +$held, async_cut +$cut"
	fi
done
# the copies, read back past the page cache
echo 3 >/proc/sys/vm/drop_caches
for wb in fresh yield fair; do
	cmp -s "/tmp/src.$wb" "$MNT/copy.$wb" &&
		ok "round $wb: the copy read back from the disk equals its source" ||
		fail "round $wb: the copy differs from its source"
	rm -f "/tmp/src.$wb"
done

poll 50 0.1 at_rest fairq0 || fail "fairq0 not at rest: $(stat_field fairq0 queued) queued, $(stat_field fairq0 inflight) in flight"
enq=$(stat_field fairq0 enq_reqs) done_=$(stat_field fairq0 done_reqs)
[ "$enq" = "$done_" ] && [ "$(stat_field fairq0 errors)" = 0 ] &&
	ok "enq_reqs == done_reqs ($enq), no error" ||
	fail "enq_reqs $enq, done_reqs $done_, errors $(stat_field fairq0 errors)"
