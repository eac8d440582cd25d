#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lock-free fast path and its switch to scheduling: while
# the disk has room a bio bypasses the core; the first that finds the
# depth full switches the device to scheduling, which lasts until the
# core is empty.  This hammers that boundary and counts every bio in and
# out.  fairq0 over a dm-linear device over a memory-backed null_blk
# that completes each request after 100 us (so bursts stay in flight),
# with fio jobs on their own regions, each writing and verifying
# (crc32c):
#   qd1    libaio, iodepth 1 (the fast path, mostly);
#   burst  libaio, iodepth 64 in bursts of 64 then 3 ms of think time
#          (crosses the depth, drains, crosses again);
#   uring  io_uring (REQ_NOWAIT inline; libaio if fio lacks it), iodepth 4;
#   big    libaio 64 KiB sequential writes, iodepth 2.
# 1. depth=8: both modes used (fastpath_reqs > 0, bios scheduled too,
#    fastpath_stops > 0); never more than 8 below: fairq's inflight_max,
#    and the dm device's own in-flight count sampled all along, an
#    observation independent of fairq's bookkeeping.  dm counts a bio
#    in flight from after fairq sent it until before its completion
#    reaches fairq (dm's end_io_acct precedes the bio_endio of fairq's
#    clone), so it never shows more than fairq holds slots for: the bound
#    is the depth itself (a blk-mq lower's count would lag by up to one
#    request per CPU: lower_inflight_bound in rc).
# 2. The same jobs plus an IDLE-class writer (always scheduled) while a
#    loop rewrites depth (1 2 4 8 16 auto, depth_max 32), policy,
#    fastpath, idle_us and fairness: nothing refused, never more than 32
#    below.
# Each round is judged on its own: fairq0 is powered off and on before
# round 2 (inflight_max starts again from 0), and the counters are taken
# as differences from the round's start.  After each: fio's verify,
# enq_reqs == disp_reqs == done_reqs and the same for bytes, nothing
# queued or in flight, no error, and the lower device holds what fairq0
# reads.
# 3. rmdir while the jobs run (forced teardown, the drain): fio ends with
#    errors in bounded time, fairq0 is gone and the lower device released.
# 0. First, on the idle device: 16 direct reads of 96 KiB, one at a time
#    (above FAIRQ_PASS_MAX_BYTES, 64 KiB, and below null_blk's largest
#    request, so not split), take no fast path (fastpath_reqs unchanged,
#    enq_reqs up by 16: the core must charge them); then 16 of 4 KiB take
#    it (fastpath_reqs up by 16).
DESCRIPTION="fast path <-> scheduling under bursts across the depth, tunable changes, IDLE; verify; no slip past depth"
TIMEOUT=600
# shellcheck source=rc
. /fairq/tests/vm/rc

NB=nullb290
DM=fq290
CFS=$FAIRQ_CONFIGFS
MB=$(scaled 6)		# per job
DEPTH=8
DEPTH_MAX=32

require_cmd fio dmsetup
require_module dm-mod
ENGINE=io_uring
fio --enghelp 2>/dev/null | grep -qw io_uring &&
	[ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ] ||
	ENGINE=libaio

cleanup_push "null_blk_destroy $NB"
null_blk_create "$NB" memory_backed=1 size=128 blocksize=4096 irqmode=2 \
	completion_nsec=100000 hw_queue_depth=64
echo none >/sys/block/$NB/queue/scheduler 2>/dev/null
dmsetup create $DM --table "0 $((128 * 2048)) linear /dev/$NB 0" || fatal "dmsetup create $DM"
cleanup_push "dmsetup remove --force $DM"
wait_for_file /dev/mapper/$DM || fatal "/dev/mapper/$DM missing"
DMBLK=$(dmsetup info -c --noheadings -o blkdevname $DM | tr -d ' ')
cleanup_push "fairq_destroy fairq0"
fairq_create fairq0 /dev/mapper/$DM depth=$DEPTH depth_max=$DEPTH_MAX
check "fastpath defaults to on" grep -qx on /sys/block/fairq0/fairq/fastpath

# fio_args ROUND "GLOBAL OPTIONS" [MORE JOBS...]: the fio command line of
# the round's jobs, one region of MB each (region 5: the IDLE writer).
fio_args() {
	local r=$1 g=$2
	shift 2
	# shellcheck disable=SC2086
	echo --output="/tmp/fio290-$r.out" --minimal --filename=/dev/fairq0 \
		--direct=1 --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--size="${MB}M" --randrepeat=0 $g \
		--name=qd1 --offset=0 --ioengine=libaio --iodepth=1 --rw=randwrite --bs=4k \
		--name=burst --offset="$MB"M --ioengine=libaio --iodepth=64 \
		--iodepth_batch_submit=64 --thinktime=3000 --thinktime_blocks=64 \
		--rw=randwrite --bs=4k \
		--name=uring --offset=$((2 * MB))M --ioengine=$ENGINE --iodepth=4 \
		--rw=randwrite --bs=4k \
		--name=big --offset=$((3 * MB))M --ioengine=libaio --iodepth=2 --rw=write \
		--bs=64k "$@"
}

# job_ok ROUND: fio's minimal output has no job error (field 5)
job_ok() {
	awk -F';' '$5 != 0 { bad = 1; print "job " $3 " error " $5 } END { exit bad }' \
		"/tmp/fio290-$1.out"
}

LOWMAX=0
# watch PID: sample the dm device's in-flight bios until PID ends
watch() {
	local r w n=0
	LOWMAX=0
	while kill -0 "$1" 2>/dev/null; do
		read -r r w </sys/block/"$DMBLK"/inflight
		[ $((r + w)) -gt "$LOWMAX" ] && LOWMAX=$((r + w))
		n=$((n + 1))
	done
	log "$n samples of $DM's in-flight bios, at most $LOWMAX"
}

# The counters settle_ok judges, as differences from the round's start.
COUNTERS="enq_reqs disp_reqs done_reqs enq_bytes disp_bytes done_bytes fastpath_reqs fastpath_stops"
declare -A BASE=()
# round_start: take the counters' values now as the round's zero
round_start() {
	local k
	for k in $COUNTERS; do
		BASE[$k]=$(stat_field fairq0 "$k")
	done
}

# delta KEY: how much counter KEY grew since round_start
delta() {
	echo $(($(stat_field fairq0 "$1") - ${BASE[$1]}))
}

# settle_ok ROUND BOUND: the accounting at rest after a round
settle_ok() {
	local r=$1 bound=$2 s=/sys/block/fairq0/fairq/stats
	local enq disp done_ eb db fb fast stops imax
	enq=$(delta enq_reqs)
	disp=$(delta disp_reqs)
	done_=$(delta done_reqs)
	eb=$(delta enq_bytes)
	db=$(delta disp_bytes)
	fb=$(delta done_bytes)
	fast=$(delta fastpath_reqs)
	stops=$(delta fastpath_stops)
	imax=$(stat_field fairq0 inflight_max)
	log "$r: enq_reqs $enq, fastpath_reqs $fast, fastpath_stops $stops," \
		"inflight_max $imax, lower in flight at most $LOWMAX"
	[ "$enq" = "$disp" ] && [ "$disp" = "$done_" ] &&
		ok "$r: enq_reqs == disp_reqs == done_reqs ($enq)" ||
		fail "$r: enq_reqs $enq, disp_reqs $disp, done_reqs $done_"
	[ "$eb" = "$db" ] && [ "$db" = "$fb" ] &&
		ok "$r: enq_bytes == disp_bytes == done_bytes ($eb)" ||
		fail "$r: enq_bytes $eb, disp_bytes $db, done_bytes $fb"
	[ "$(stat_field fairq0 queued)/$(stat_field fairq0 inflight)/$(stat_field fairq0 errors)/$(stat_field fairq0 clones_pending)" = 0/0/0/0 ] &&
		ok "$r: nothing queued, in flight or pending; no error" ||
		{ cat "$s"; fail "$r: queued/inflight/errors/clones_pending not 0"; }
	[ "$fast" -gt 0 ] && ok "$r: the fast path was used ($fast bios)" ||
		fail "$r: fastpath_reqs is $fast"
	[ "$enq" -gt "$fast" ] && ok "$r: scheduling was used ($((enq - fast)) bios)" ||
		fail "$r: every bio took the fast path ($fast of $enq)"
	[ "$stops" -gt 0 ] && ok "$r: the fast path stopped $stops times" ||
		fail "$r: fastpath_stops is $stops"
	[ "$imax" -le "$bound" ] && [ "$imax" -gt 1 ] &&
		ok "$r: inflight_max $imax within the depth $bound" ||
		fail "$r: inflight_max $imax (want 2..$bound)"
	[ "$LOWMAX" -le "$bound" ] && [ "$LOWMAX" -gt 1 ] &&
		ok "$r: $DM at most $LOWMAX in flight (depth $bound)" ||
		fail "$r: $DM had $LOWMAX bios in flight (want 2..$bound)"
}

# same_data: fairq0 and the lower device read the same (6 regions)
same_data() {
	local upper lower
	upper=$(dd if=/dev/fairq0 bs=1M count=$((6 * MB)) iflag=direct status=none | sha256sum)
	lower=$(dd if="/dev/$NB" bs=1M count=$((6 * MB)) iflag=direct status=none | sha256sum)
	[ "$upper" = "$lower" ] && ok "$1: the lower device holds what fairq0 reads" ||
		fail "$1: fairq0 read ${upper%% *}, the lower device holds ${lower%% *}"
}

# 1. The boundary at a fixed depth.
# reads_delta BS: 16 direct reads of BS one at a time; prints how much
# fastpath_reqs and enq_reqs grew
reads_delta() {
	local f0 e0
	f0=$(stat_field fairq0 fastpath_reqs)
	e0=$(stat_field fairq0 enq_reqs)
	dd if=/dev/fairq0 of=/dev/null bs="$1" count=16 iflag=direct status=none ||
		fatal "dd bs=$1 from fairq0 failed"
	echo "$(($(stat_field fairq0 fastpath_reqs) - f0)) $(($(stat_field fairq0 enq_reqs) - e0))"
}

log "round 0: large bios are scheduled, small ones take the fast path"
maxkb=$(cat /sys/block/fairq0/queue/max_sectors_kb)
[ "$maxkb" -ge 96 ] || fatal "fairq0's max_sectors_kb is $maxkb: a 96 KiB read would be split"
read -r fast enq <<<"$(reads_delta 96k)"
[ "$fast" = 0 ] && [ "$enq" = 16 ] &&
	ok "r0: 16 reads of 96 KiB: all scheduled (fastpath_reqs +0, enq_reqs +16)" ||
	fail "r0: 16 reads of 96 KiB: fastpath_reqs +$fast, enq_reqs +$enq (want +0, +16)"
read -r fast enq <<<"$(reads_delta 4k)"
[ "$fast" = 16 ] && [ "$enq" = 16 ] &&
	ok "r0: 16 reads of 4 KiB: all took the fast path" ||
	fail "r0: 16 reads of 4 KiB: fastpath_reqs +$fast, enq_reqs +$enq (want +16, +16)"

log "round 1: depth $DEPTH, $MB MiB per job, $ENGINE"
round_start
# shellcheck disable=SC2046
fio $(fio_args r1 "") &
pid=$!
watch "$pid"
wait "$pid" || { cat /tmp/fio290-r1.out; fail "r1: fio write+verify failed"; }
job_ok r1 && ok "r1: fio write+verify (crc32c): no error" || fail "r1: a job reported an error"
settle_ok r1 "$DEPTH"
same_data r1

# 2. The same, an IDLE-class writer, and the tunables rewritten meanwhile.
churn() {
	local i=0 v
	local -a sets=(depth=1 policy=sfq depth=2 fastpath=off depth=4 idle_us=0
		policy=fifo depth=16 fastpath=on fairness=requests depth=auto
		policy=cfq idle_us=2000 depth=8 fairness=time)
	while [ ! -e /tmp/290-stop ]; do
		v=${sets[i % ${#sets[@]}]}
		printf '%s' "${v#*=}" >"/sys/block/fairq0/fairq/${v%%=*}" ||
			echo "refused: $v" >>/tmp/290-refused
		i=$((i + 1))
		sleep 0.1
	done
	echo "$i" >/tmp/290-churn
}
rm -f /tmp/290-stop /tmp/290-refused /tmp/290-churn
log "round 2: tunables rewritten during the jobs and an IDLE-class writer"
# a power cycle: inflight_max counts from 0 again, round 1's maximum
# cannot stand in for this round's
echo 0 >"$CFS/fairq0/power" || fatal "r2: power=0"
echo 1 >"$CFS/fairq0/power" || fatal "r2: power=1"
wait_for_file /dev/fairq0 || fatal "r2: /dev/fairq0 did not come back"
[ "$(stat_field fairq0 inflight_max)" = 0 ] || fatal "r2: inflight_max not 0 after the power cycle"
round_start
churn &
cpid=$!
# shellcheck disable=SC2046
fio $(fio_args r2 "" --name=idle --offset=$((5 * MB))M --size=$((MB / 2 + 1))M \
	--ioengine=libaio --iodepth=4 --rw=randwrite --bs=4k --prioclass=3 --prio=0) &
pid=$!
watch "$pid"
wait "$pid" || { cat /tmp/fio290-r2.out; fail "r2: fio write+verify failed"; }
touch /tmp/290-stop
wait "$cpid"
job_ok r2 && ok "r2: fio write+verify (crc32c): no error" || fail "r2: a job reported an error"
[ ! -e /tmp/290-refused ] && ok "r2: $(cat /tmp/290-churn) tunable writes, none refused" ||
	fail "r2: $(cat /tmp/290-refused)"
fairq_set fairq0 depth "$DEPTH"
fairq_set fairq0 fastpath on
settle_ok r2 "$DEPTH_MAX"
same_data r2

# 3. Forced teardown under the jobs (no verify: the disk goes away).
log "round 3: rmdir under the jobs"
# shellcheck disable=SC2046
fio $(fio_args r3 "--time_based --runtime=60 --do_verify=0") >/dev/null 2>&1 &
pid=$!
wait_for stat_above fairq0 fastpath_reqs "$(stat_field fairq0 fastpath_reqs)"
wait_for stat_above fairq0 fastpath_stops "$(stat_field fairq0 fastpath_stops)"
t0=$(cut -d. -f1 /proc/uptime)
rmdir "$CFS"/fairq0 || fatal "rmdir under fio"
wait "$pid"
rc=$?
[ "$rc" != 0 ] && ok "r3: fio ended with errors (rc $rc) after the removal" ||
	fail "r3: fio succeeded although fairq0 was removed under it"
[ $(($(cut -d. -f1 /proc/uptime) - t0)) -le 20 ] && ok "r3: fio ended within 20 s" ||
	fail "r3: fio took $(($(cut -d. -f1 /proc/uptime) - t0)) s to end"
[ ! -e /sys/block/fairq0 ] && [ -z "$(ls /sys/block/"$DMBLK"/holders)" ] &&
	ok "r3: fairq0 gone, $DM released" || fail "r3: fairq0 or its hold on $DM remains"
