#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Flows on demand: a device holds no flow until keys appear; a
# flow is allocated when its key's first bio is queued and freed when it
# drains; the table that finds flows by key grows with them (fairq.ko's
# table work item); max_flows is a bound, not a size.  fairq0 over a
# null_blk that serves 2 requests at a time in 8 ms each (250 IOPS, which
# a checker kernel drives too, so bios wait in fairq and every thread's
# flow exists while it runs), classify=pid, fio threads each reading
# 4 KiB at random, iodepth 1, for 12 s (time-based: not scaled).
# 1. At rest: flows 0, mem_bytes under 32 KiB (no pool up front: the
#    instance and a table of 64 chains).
# 2. NT threads: flows sampled during the run reach 3/4 of NT (each thread
#    its own flow), overflow_enq and flow_alloc_fails stay 0, mem_bytes
#    grows by at least 320 bytes per flow and flow_table_chains above 64;
#    flow_allocs grows by at most 1.5 x NT, not by a flow per read (a
#    drained flow that owes a debt is kept until its round comes, see
#    sched/README.md); afterwards flows 0,
#    flows_spare <= 32, and with no further bio flow_table_chains is back
#    at the fresh device's 64 (the table shrinks once pass-through
#    resumes, without waiting for a queued bio).  Asserted on the table's
#    own count, not on mem_bytes less the spares, which would tie the
#    test to the size of struct fq_flow.
# 3. Powered off, max_flows=64 (what a user sets as a bound), powered on,
#    the same run: flows never above 64 in any sample, overflow_enq > 0.
# 4. Powered off, max_flows back at 65536, powered on with a fixed
#    depth=8, idle_us=0 and boost_ms=0 (no depth=auto controller, no
#    anticipation: pass-through whenever the core is empty): the NT
#    threads' burst beside 6 RT-class threads that read on for 3 s after
#    it, whose bios pass through once the burst has drained, so passed
#    bios are below when the last scheduled one completes and every later
#    bio passes.  While it runs flows reach 3/4 of NT and the table grows;
#    once both runs are over, within 5 s: flows 0 (the drained flows were
#    freed) and flow_table_chains back at 64, with bios passed through
#    (fastpath_reqs grew).  Bad case aimed at: a pass-through completion
#    that never tells the core the passed bios it counted busy are gone,
#    so the core never sees the device idle.
# After each run: fio's jobs without error, and the reads fio made ==
# fairq's done_reqs delta == the lower device's completed reads delta,
# with nothing queued, in flight or failed.
DESCRIPTION="flows allocated per key and freed when drained, the flow table grows and shrinks, max_flows bounds them"
TIMEOUT=600
# shellcheck source=rc
. /fairq/tests/vm/rc

NB=nullb300
CFS=$FAIRQ_CONFIGFS
NT=$((256 / ${FAIRQ_SLOW:-1}))
[ "$NT" -ge 96 ] || NT=96
RUNTIME=12
FLOW_BYTES=320		# struct fq_flow, at least (sched/README.md)

require_cmd fio
cleanup_push "null_blk_destroy $NB"
cleanup_push "fairq_destroy fairq0"
null_blk_create "$NB" size=256 blocksize=4096 irqmode=2 completion_nsec=8000000 \
	submit_queues=1 hw_queue_depth=2
echo none >/sys/block/$NB/queue/scheduler 2>/dev/null
# one request per read: the lower device's count is fio's
echo 2 >/sys/block/$NB/queue/nomerges || fatal "nomerges=2 refused"
fairq_create fairq0 "/dev/$NB" classify=pid

flows0=$(stat_field fairq0 flows)
mem0=$(stat_field fairq0 mem_bytes)
chains0=$(stat_field fairq0 flow_table_chains)
log "at rest: flows $flows0, mem_bytes $mem0, flow_table_chains $chains0"
[ "$flows0" = 0 ] && [ "$mem0" -lt 32768 ] && [ "$chains0" = 64 ] &&
	ok "at rest: no flow, mem_bytes $mem0 < 32 KiB, 64 chains" ||
	fail "at rest: flows $flows0, mem_bytes $mem0, flow_table_chains $chains0 (want 0, < 32 KiB, 64)"

# lower_reads: reads the lower device completed (field 1 of its stat)
lower_reads() {
	awk '{ print $1 }' "/sys/block/$NB/stat"
}

# run TAG: NT threads for RUNTIME s; samples flows, mem_bytes and
# flow_table_chains (at most in FMAX, MMAX, CMAX), checks the counts
# afterwards; fio's reads in RUN_IOS
run() {
	local tag=$1 d0 l0 pid ios f m c n=0
	d0=$(stat_field fairq0 done_reqs)
	l0=$(lower_reads)
	fio --name=r --filename=/dev/fairq0 --direct=1 --ioengine=psync --rw=randread \
		--bs=4k --size=200M --numjobs="$NT" --thread --time_based \
		--runtime="$RUNTIME" --group_reporting --minimal \
		--output="/tmp/fio300-$tag.out" &
	pid=$!
	FMAX=0 MMAX=0 CMAX=0
	while kill -0 "$pid" 2>/dev/null; do
		read -r f m c < <(awk '$1 == "flows" { f = $2 }
			$1 == "mem_bytes" { m = $2 } $1 == "flow_table_chains" { c = $2 }
			END { print f, m, c }' /sys/block/fairq0/fairq/stats)
		[ "$f" -gt "$FMAX" ] && FMAX=$f
		[ "$m" -gt "$MMAX" ] && MMAX=$m
		[ "$c" -gt "$CMAX" ] && CMAX=$c
		n=$((n + 1))
		sleep 0.3
	done
	wait "$pid" || { cat "/tmp/fio300-$tag.out"; fatal "$tag: fio failed"; }
	# --minimal with group_reporting: one line; field 5 error, 6 read KiB
	ios=$(awk -F';' '{ if ($5 != 0) print "error"; else print $6 / 4 }' "/tmp/fio300-$tag.out")
	log "$tag: $n samples: flows at most $FMAX, mem_bytes at most $MMAX, flow_table_chains at most $CMAX; fio read $ios x 4 KiB"
	RUN_IOS=$ios
	[ "$ios" != error ] && [ "$ios" -gt 0 ] && ok "$tag: fio's $NT threads, no error" ||
		fail "$tag: fio reported an error or no I/O ($ios)"
	poll 50 0.1 stat_is fairq0 flows 0 ||
		fail "$tag: flows still $(stat_field fairq0 flows) at rest"
	local done_ low
	done_=$(($(stat_field fairq0 done_reqs) - d0))
	low=$(($(lower_reads) - l0))
	[ "$done_" = "$ios" ] && [ "$low" = "$ios" ] &&
		ok "$tag: $ios reads by fio, by fairq and by the lower device" ||
		fail "$tag: fio $ios, fairq done_reqs +$done_, lower device +$low"
	[ "$(stat_field fairq0 queued)/$(stat_field fairq0 inflight)/$(stat_field fairq0 errors)" = 0/0/0 ] &&
		ok "$tag: nothing queued or in flight, no error" ||
		fail "$tag: queued/inflight/errors not 0"
}

log "round 1: $NT threads, max_flows $(cat "$CFS/fairq0/max_flows")"
allocs0=$(stat_field fairq0 flow_allocs)
run r1
allocs=$(($(stat_field fairq0 flow_allocs) - allocs0))
[ "$allocs" -le $((NT * 3 / 2)) ] &&
	ok "r1: $allocs flows created for $NT threads and $RUN_IOS reads" ||
	fail "r1: $allocs flows created for $NT threads and $RUN_IOS reads (want <= $((NT * 3 / 2)))"
over=$(stat_field fairq0 overflow_enq)
fails=$(stat_field fairq0 flow_alloc_fails)
[ "$FMAX" -ge $((NT * 3 / 4)) ] && ok "r1: $FMAX flows at once (of $NT threads)" ||
	fail "r1: at most $FMAX flows at once for $NT threads"
[ "$over" = 0 ] && [ "$fails" = 0 ] && ok "r1: no bio shared the overflow flow, no allocation failed" ||
	fail "r1: overflow_enq $over, flow_alloc_fails $fails"
[ $((MMAX - mem0)) -ge $((FMAX * FLOW_BYTES)) ] &&
	ok "r1: mem_bytes grew by $((MMAX - mem0)) for $FMAX flows" ||
	fail "r1: mem_bytes grew by $((MMAX - mem0)) for $FMAX flows (want >= $FLOW_BYTES each)"
spare=$(stat_field fairq0 flows_spare)
log "r1 at rest: flows_spare $spare, mem_bytes $(stat_field fairq0 mem_bytes), flow_allocs $(stat_field fairq0 flow_allocs)"
[ "$spare" -le 32 ] && ok "r1 at rest: $spare spare flows" ||
	fail "r1 at rest: flows_spare $spare (want <= 32)"
[ "$CMAX" -gt "$chains0" ] && ok "r1: the table grew to $CMAX chains for $FMAX flows" ||
	fail "r1: flow_table_chains at most $CMAX for $FMAX flows (want > $chains0)"
# The burst is over and pass-through resumed: the table work item shrinks
# the table back to its least (64 chains) with no further bio.
poll 50 0.1 stat_is fairq0 flow_table_chains "$chains0" &&
	ok "r1: the table shrank back to $chains0 chains after the burst" ||
	fail "r1: flow_table_chains $(stat_field fairq0 flow_table_chains) at rest, fresh $chains0: the table did not shrink"

log "round 2: max_flows 64"
echo 0 >"$CFS/fairq0/power" || fatal "power=0 refused"
echo 64 >"$CFS/fairq0/max_flows" || fatal "max_flows=64 refused"
echo 1 >"$CFS/fairq0/power" || fatal "power=1 refused"
wait_for_file /dev/fairq0 || fatal "/dev/fairq0 did not come back"
over0=$(stat_field fairq0 overflow_enq)
run r2
over=$(($(stat_field fairq0 overflow_enq) - over0))
[ "$FMAX" -le 64 ] && [ "$FMAX" -ge 32 ] && ok "r2: flows at most $FMAX, within max_flows 64" ||
	fail "r2: flows reached $FMAX with max_flows 64"
[ "$over" -gt 0 ] && ok "r2: $over bios shared the overflow flow" ||
	fail "r2: overflow_enq +$over with $NT threads over 64 flows"

log "round 3: depth 8, a burst and 6 readers that outlast it by 3 s"
echo 0 >"$CFS/fairq0/power" || fatal "power=0 refused"
echo 65536 >"$CFS/fairq0/max_flows" || fatal "max_flows=65536 refused"
echo 1 >"$CFS/fairq0/power" || fatal "power=1 refused"
wait_for_file /dev/fairq0 || fatal "/dev/fairq0 did not come back"
fairq_set fairq0 depth 8 || fatal "depth=8 refused"
# no anticipation or boost: pass-through whenever the core is empty
fairq_set fairq0 idle_us 0 || fatal "idle_us=0 refused"
fairq_set fairq0 boost_ms 0 || fatal "boost_ms=0 refused"
[ "$(stat_field fairq0 depth)" = 8 ] || fatal "depth $(stat_field fairq0 depth), not 8"
fast0=$(stat_field fairq0 fastpath_reqs)
fio --name=bg --filename=/dev/fairq0 --direct=1 --ioengine=psync --rw=randread \
	--bs=4k --size=200M --numjobs=6 --thread --time_based --prioclass=1 \
	--runtime=$((RUNTIME + 3)) --group_reporting --minimal \
	--output=/tmp/fio300-bg.out &
bg=$!
fio --name=r --filename=/dev/fairq0 --direct=1 --ioengine=psync --rw=randread \
	--bs=4k --size=200M --numjobs="$NT" --thread --time_based \
	--runtime="$RUNTIME" --group_reporting --minimal \
	--output=/tmp/fio300-r3.out &
burst=$!
FMAX=0 CMAX=0
while kill -0 "$burst" 2>/dev/null; do
	read -r f c < <(awk '$1 == "flows" { f = $2 }
		$1 == "flow_table_chains" { c = $2 } END { print f, c }' \
		/sys/block/fairq0/fairq/stats)
	[ "$f" -gt "$FMAX" ] && FMAX=$f
	[ "$c" -gt "$CMAX" ] && CMAX=$c
	sleep 0.3
done
wait "$burst" || fatal "r3: fio (burst) failed"
log "r3: burst over: flows $(stat_field fairq0 flows), chains $(stat_field fairq0 flow_table_chains), fastpath_on $(stat_field fairq0 fastpath_on); the readers go on"
sleep 1
log "r3: 1 s later: flows $(stat_field fairq0 flows), fastpath_on $(stat_field fairq0 fastpath_on), fastpath_reqs $(stat_field fairq0 fastpath_reqs)"
wait "$bg" || fatal "r3: fio (readers) failed"
errs=$(awk -F';' '$5 != 0 { n++ } END { print n + 0 }' /tmp/fio300-r3.out /tmp/fio300-bg.out)
[ "$errs" = 0 ] && ok "r3: fio's burst and readers, no error" ||
	fail "r3: fio reported $errs errors"
[ "$FMAX" -ge $((NT * 3 / 4)) ] && [ "$CMAX" -gt "$chains0" ] &&
	ok "r3: $FMAX flows at once, the table grew to $CMAX chains" ||
	fail "r3: at most $FMAX flows, $CMAX chains (want >= $((NT * 3 / 4)), > $chains0)"
fast=$(($(stat_field fairq0 fastpath_reqs) - fast0))
[ "$fast" -gt 0 ] && ok "r3: $fast bios passed through" ||
	fail "r3: no bio passed through: the case was not made"
poll 50 0.1 stat_is fairq0 flows 0 &&
	ok "r3: the flows were freed once the device went idle (depth 8)" ||
	fail "r3: flows still $(stat_field fairq0 flows) at rest with depth 8"
poll 50 0.1 stat_is fairq0 flow_table_chains "$chains0" &&
	ok "r3: the table shrank back to $chains0 chains (depth 8)" ||
	fail "r3: flow_table_chains $(stat_field fairq0 flow_table_chains) at rest with depth 8, fresh $chains0"
at_rest fairq0 && [ "$(stat_field fairq0 errors)" = 0 ] &&
	ok "r3: nothing queued or in flight, no error" ||
	fail "r3: queued/inflight/errors not 0"
