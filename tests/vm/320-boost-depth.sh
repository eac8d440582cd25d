#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# depth=auto goes down behind a throttle while a boosted reader is waited
# for (sched/fq_depth.h, fq_depth_reserved()).  fairq0 at its defaults
# over /dev/vdc, which vm/run throttles (--throttle-iops: QEMU serves it
# one request after another; tests/run runs this with vm/throttle.conf's
# 500 IOPS and 4 MiB/s, as the benchmark's virtio disk).  Skipped, and
# counted, without it.
#
# Two new processes (fio, thread=0): a 4 KiB random reader at queue
# depth 1 (boosted: a new flow, one request at a time) and one at queue
# depth 32 (its boost ends at once: too many outstanding).  While the
# light reader is waited for, the other keeps out of its reserve of
# slots, so the depth is never full: depth=auto must judge those epochs
# too (reserved epochs), or it sits at its seed of 4 for the whole boost
# (boost_ms, 3 s), and behind a disk that serves one request at a time
# each of the light reader's reads waits for the others' in the disk.
# depth_now is sampled every 0.2 s with the boosts that ended by time or
# budget (the light reader's: the deep one ends by depth).
# Asserted:
#  - depth_now reached 2 or less while the light reader was still boosted
#    (no boost ended by time or budget at that sample; a controller that
#    judges no epoch while the depth is not full fails this: its depth
#    comes down only after the boost ended);
#  - the controller judged reserved epochs (depth_reserved_epochs > 0)
#    and never went above its seed of 4 before that;
#  - fio's reads ended without error, and afterwards fairq0 is at rest
#    with enq_reqs == done_reqs and no error.
# Timing is printed, not asserted (the benchmark measures the light
# reader's share: bench/RESULTS.md, virtio w2).
DESCRIPTION="depth=auto comes down behind a throttle while a boosted reader is waited for"
TIMEOUT=300
# shellcheck source=rc
. /fairq/tests/vm/rc

SECS=8

[ -n "${FAIRQ_THROTTLE_IOPS:-}" ] ||
	skip_all "vm/run without --throttle-iops (tests/run's vm-throttled suite runs this throttled)"
require_cmd fio
require_blockdev vdc
echo none >/sys/block/vdc/queue/scheduler 2>/dev/null

load_fairq
fairq_create fairq0 /dev/vdc
cleanup_push "fairq_destroy fairq0"
[ "$(cat /sys/block/fairq0/fairq/depth)" = auto ] || fatal "depth is not auto by default"

# sample: "depth_now ended served reserved" from one read of the stats
sample() {
	awk '$1 == "depth_now" { d = $2 } $1 == "boost_end_time" || $1 == "boost_end_budget" { e += $2 }
		$1 == "boost_served" { s = $2 } $1 == "depth_reserved_epochs" { r = $2 }
		END { print d, e + 0, s, r }' /sys/block/fairq0/fairq/stats
}

fio --filename=/dev/fairq0 --direct=1 --rw=randread --bs=4k --size=256M \
	--randrepeat=0 --time_based --runtime="$SECS" --minimal \
	--output=/tmp/fio320.out \
	--name=light --ioengine=psync --iodepth=1 \
	--name=heavy --ioengine=libaio --iodepth=32 &
pid=$!
t0=$(date +%s%N)
low="" most=0 traj=""
while kill -0 "$pid" 2>/dev/null; do
	read -r d ended served reserved <<<"$(sample)"
	ms=$((($(date +%s%N) - t0) / 1000000))
	traj+=" $ms:$d"
	[ "$d" -gt "$most" ] && [ -z "$low" ] && most=$d
	if [ -z "$low" ] && [ "$d" -le 2 ]; then
		low="$ms ms: depth $d, boosts ended by time or budget $ended, boost_served $served, reserved epochs $reserved"
		low_ended=$ended
	fi
	sleep 0.2
done
wait "$pid"
rc=$?
log "depth_now [ms:depth]:$traj"
log "first at 2 or less: ${low:-never}"
log "fio: light $(awk -F';' '$3 == "light" { print $8 }' /tmp/fio320.out) IOPS," \
	"heavy $(awk -F';' '$3 == "heavy" { print $8 }' /tmp/fio320.out) IOPS"

[ "$rc" = 0 ] && awk -F';' '$5 != 0 { bad = 1 } END { exit bad }' /tmp/fio320.out &&
	ok "fio's reads ended without error" || fail "fio failed (rc $rc) or a job reported an error"
if [ -z "$low" ]; then
	fail "depth_now never came to 2 or less in $SECS s"
elif [ "$low_ended" = 0 ]; then
	ok "depth_now at 2 or less while the light reader was boosted ($low)"
else
	fail "depth_now came to 2 or less only after the light reader's boost ended ($low)"
fi
[ "$most" -le 4 ] && ok "depth_now at most its seed 4 before that ($most)" ||
	fail "depth_now went to $most above its seed 4 before it came down"
reserved=$(stat_field fairq0 depth_reserved_epochs)
[ "${reserved:-0}" -gt 0 ] && ok "reserved epochs judged: $reserved" ||
	fail "no reserved epoch judged (depth_reserved_epochs ${reserved:-missing})"
poll 50 0.1 at_rest fairq0 || fail "fairq0 not at rest: $(stat_field fairq0 queued) queued, $(stat_field fairq0 inflight) in flight"
enq=$(stat_field fairq0 enq_reqs) done_=$(stat_field fairq0 done_reqs)
[ "$enq" = "$done_" ] && [ "$(stat_field fairq0 errors)" = 0 ] &&
	ok "enq_reqs == done_reqs ($enq), no error" ||
	fail "enq_reqs $enq, done_reqs $done_, errors $(stat_field fairq0 errors)"
