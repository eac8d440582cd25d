#!/bin/bash
# Discards are scheduled: a discard storm from one process leaves a random
# reader its share, never has more than depth requests below, is counted
# by fairq's stats, and leaves the data around it intact.
#
# Lower device: a memory-backed null_blk with discard=1 (null_blk ignores
# discard without memory backing) capped at mbps=1, 4 KiB blocks.  The
# cap charges every request its range, a 4 KiB discard as much as a 4 KiB
# read (about 4 ms each, 256 a second), so the device, not the TCG guest,
# is the bottleneck, and a discard really costs what fairq charges it (a
# 4 KiB write, sched/fq_sched.h FQ_NODATA_BYTES) under every fairness.
# null_blk's throttle grants mbps / 50 bytes a tick (20,971 at mbps=1) and
# never lets a larger request through: every I/O here is 16 KiB or less,
# and discards stay 4 KiB on nullb1 too (no merging into larger ones).
# discard_max_bytes=4096 on the disk blkdiscard is run against makes each
# `blkdiscard -l 1M` submit 256 bios at once: a storm from one process
# (one blkdiscard at a time, in a loop).
#
# Reader: fio 4 KiB random reads, iodepth 4, 12 s, alone and against the
# storm; its share = IOPS with the storm / IOPS alone, straight on nullb1
# (scheduler none) and through fairq0 cfq depth=4 quantum=2, then
# fairness=bytes quantum_bytes=8192 (two 4 KiB requests a turn).  Bound for
# fairq0: >= 0.35 (ideal 0.5).  KNOWN LIMIT: on this device the storm
# does not crowd the reader out even straight down (the raw row shows
# it), so the share alone cannot tell scheduled discards from discards
# passed straight down; the counters below can.  On a checker kernel
# with the reader alone under 200 IOPS (CPU-bound) a share miss is a
# counted skip (see the verdicts).  No device is known here where a
# storm straight down starves a reader.
# During the fairq storm /sys/block/nullb1/inflight is sampled: never more
# than depth=4, plus one per CPU (lower_inflight_bound in rc).  A weak
# check: requests the throttle holds back are not counted as in flight,
# so straight down it reads low as well.
#
# Counters and data, quiet device: a 4 MiB pattern is written, 2 MiB in
# its middle discarded (512 bios of 4 KiB): enq_reqs and done_reqs grow
# by exactly 512, passthrough_reqs not at all; the discarded range reads
# back as zeros (null_blk frees discarded sectors and reads freed sectors
# as zeros) and the pattern around it is unchanged.
DESCRIPTION="a discard storm from one process leaves a reader its share; discards within depth, counted, data intact"
TIMEOUT=400
# shellcheck source=rc
. /fairq/tests/vm/rc

require_cmd fio blkdiscard
RUNTIME=12
DEPTH=4
MIN_SHARE=0.35
STORM_OFF=$((128 << 20))
STORM_LEN=$((1 << 20))

# reader DEV: the 4 KiB random reader's IOPS on the first 64 MiB of DEV
reader() {
	fio --minimal --output=/tmp/reader.out --filename="$1" --direct=1 \
		--ioengine=libaio --rw=randread --bs=4k --iodepth=4 \
		--time_based --runtime=$RUNTIME --size=64M --name=reader >/dev/null ||
		return 1
	# minimal (terse v3) format: field 8 read IOPS
	awk -F';' '{ print $8 }' /tmp/reader.out
}

# storm DEV: blkdiscard 1 MiB ranges of DEV in a loop until /tmp/storm.stop
# exists; writes the number of calls to /tmp/storm.count
storm() {
	local n=0
	while [ ! -e /tmp/storm.stop ]; do
		# -f: no signature check; it says so on stderr every time
		blkdiscard -f -o $STORM_OFF -l $STORM_LEN "$1" 2>/tmp/storm.err || {
			cat /tmp/storm.err >&2
			exit 1
		}
		n=$((n + 1))
	done
	echo "$n" >/tmp/storm.count
}

# sample_inflight DEV: the largest reads+writes in flight on DEV, sampled
# every 0.05 s until /tmp/storm.stop exists, into /tmp/inflight.max
sample_inflight() {
	local r w max=0
	while [ ! -e /tmp/storm.stop ]; do
		read -r r w <"/sys/block/$1/inflight"
		[ $((r + w)) -le "$max" ] || max=$((r + w))
		sleep 0.05
	done
	echo "$max" >/tmp/inflight.max
}

# against_storm READ_DEV DISCARD_DEV: the reader while the storm runs on
# DISCARD_DEV; sets STORM_IOPS (the reader's), STORM_CALLS (blkdiscard
# calls done) and INFLIGHT_MAX (nullb1's largest in-flight sample)
against_storm() {
	local spid ipid
	rm -f /tmp/storm.stop /tmp/storm.count /tmp/inflight.max
	storm "$2" &
	spid=$!
	sample_inflight nullb1 &
	ipid=$!
	sleep 1
	STORM_IOPS=$(reader "$1") || fail "fio reader failed on $1 against the storm"
	touch /tmp/storm.stop
	wait "$spid" || fatal "blkdiscard failed on $2"
	wait "$ipid"
	STORM_CALLS=$(cat /tmp/storm.count)
	INFLIGHT_MAX=$(cat /tmp/inflight.max)
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print 0; else printf "%.3f\n", a / b }'
}

load_fairq
null_blk_create nullb1 memory_backed=1 discard=1 blocksize=4096 mbps=1 \
	size=256 hw_queue_depth=64 irqmode=0
echo none >/sys/block/nullb1/queue/scheduler || fatal "nullb1: no scheduler none"
[ "$(cat /sys/block/nullb1/queue/discard_max_bytes)" -gt 0 ] ||
	skip_all "null_blk did not enable discard"

# raw: the reader alone and against the storm, straight on nullb1
echo 4096 >/sys/block/nullb1/queue/discard_max_bytes ||
	fatal "nullb1: discard_max_bytes=4096 refused"
raw_alone=$(reader /dev/nullb1) || fatal "fio reader failed on nullb1"
against_storm /dev/nullb1 /dev/nullb1
raw_storm=$STORM_IOPS raw_calls=$STORM_CALLS raw_inflight=$INFLIGHT_MAX
raw_share=$(ratio "$raw_storm" "$raw_alone")

fairq_create fairq0 /dev/nullb1 policy=cfq depth=$DEPTH quantum=2 fairness=requests
echo 4096 >/sys/block/fairq0/queue/discard_max_bytes ||
	fatal "fairq0: discard_max_bytes=4096 refused"

# counters and data around a discard, on the quiet device
head -c $((4 << 20)) /dev/urandom >/tmp/pattern
dd if=/tmp/pattern of=/dev/fairq0 bs=16k seek=512 oflag=direct status=none ||
	fatal "writing the pattern failed"
enq0=$(stat_field fairq0 enq_reqs) pass0=$(stat_field fairq0 passthrough_reqs)
blkdiscard -f -o $((9 << 20)) -l $((2 << 20)) /dev/fairq0 2>/tmp/bd.err ||
	fatal "blkdiscard of 2 MiB failed: $(cat /tmp/bd.err)"
enq1=$(stat_field fairq0 enq_reqs) done1=$(stat_field fairq0 done_reqs)
pass1=$(stat_field fairq0 passthrough_reqs)
[ $((enq1 - enq0)) = 512 ] ||
	fail "2 MiB discard in 4 KiB bios: enq_reqs grew by $((enq1 - enq0)), expected 512"
[ "$done1" = "$enq1" ] || fail "after the discard: done_reqs $done1 != enq_reqs $enq1"
[ "$pass1" = "$pass0" ] ||
	fail "passthrough_reqs grew by $((pass1 - pass0)) for a discard (it must be scheduled)"
dd if=/dev/fairq0 of=/tmp/back bs=16k skip=512 count=256 iflag=direct status=none ||
	fatal "reading back failed"
cmp -s -n $((1 << 20)) /tmp/pattern /tmp/back ||
	fail "the pattern before the discarded range changed"
cmp -s -n $((2 << 20)) -i $((1 << 20)):0 /tmp/back /dev/zero ||
	fail "the discarded range does not read back as zeros"
cmp -s -i $((3 << 20)) /tmp/pattern /tmp/back ||
	fail "the pattern after the discarded range changed"
log "2 MiB discard: enq_reqs +$((enq1 - enq0)), passthrough_reqs +$((pass1 - pass0)); range zeros, pattern around it intact"

# the reader alone and against the storm through fairq0
fq_alone=$(reader /dev/fairq0) || fatal "fio reader failed on fairq0"
against_storm /dev/fairq0 /dev/fairq0
req_storm=$STORM_IOPS req_calls=$STORM_CALLS req_inflight=$INFLIGHT_MAX
req_share=$(ratio "$req_storm" "$fq_alone")
fairq_set fairq0 fairness bytes
fairq_set fairq0 quantum_bytes 8192
against_storm /dev/fairq0 /dev/fairq0
byt_storm=$STORM_IOPS byt_calls=$STORM_CALLS byt_inflight=$INFLIGHT_MAX
byt_share=$(ratio "$byt_storm" "$fq_alone")

enq=$(stat_field fairq0 enq_reqs) disp=$(stat_field fairq0 disp_reqs)
done_=$(stat_field fairq0 done_reqs)
queued=$(stat_field fairq0 queued) inflight=$(stat_field fairq0 inflight)

printf '%-34s %8s %8s %8s %14s %13s\n' config alone storm share blkdiscard_1M lower_inflight
printf '%-34s %8s %8s %8s %14s %13s\n' "nullb1 none (straight down)" "$raw_alone" "$raw_storm" "$raw_share" "$raw_calls" "$raw_inflight"
printf '%-34s %8s %8s %8s %14s %13s\n' "fairq0 cfq d=4 q=2 requests" "$fq_alone" "$req_storm" "$req_share" "$req_calls" "$req_inflight"
printf '%-34s %8s %8s %8s %14s %13s\n' "fairq0 cfq d=4 bytes q_bytes=8192" "$fq_alone" "$byt_storm" "$byt_share" "$byt_calls" "$byt_inflight"
echo "fairq0 after the runs: enq_reqs $enq disp_reqs $disp done_reqs $done_ queued $queued inflight $inflight"

fairq_destroy fairq0
null_blk_destroy nullb1

# On the stock kernel the reader alone comes near the device's 256 reads a
# second; a checker kernel sharing the host's cores drives fewer, its CPU
# setting the pace, and then the shares fall for none straight down as
# well: there a share under the bound with the reader alone under 200 is
# a counted skip, saying so.
cpu_bound=""
for row in "requests $req_share $req_inflight $req_calls" "bytes $byt_share $byt_inflight $byt_calls"; do
	read -r name share infl calls <<<"$row"
	if ! awk -v s="$share" -v m=$MIN_SHARE 'BEGIN { exit !(s >= m) }'; then
		if [ "${FAIRQ_DEBUG_KERNEL:-0}" = 1 ] && [ "$fq_alone" -lt 200 ]; then
			cpu_bound+="fairness=$name: share $share < $MIN_SHARE with the reader alone at $fq_alone of 256 IOPS (none straight down: $raw_share): CPU-bound on a checker kernel, not device-bound; "
		else
			fail "fairness=$name: the reader kept $share of its IOPS against the storm (< $MIN_SHARE)"
		fi
	fi
	[ "$infl" -le "$(lower_inflight_bound $DEPTH)" ] ||
		fail "fairness=$name: $infl requests in flight on nullb1 during the storm (depth $DEPTH, bound $(lower_inflight_bound $DEPTH))"
	[ "$calls" -ge 1 ] || fail "fairness=$name: no blkdiscard call completed during the storm"
done
[ "$done_" = "$enq" ] && [ "$disp" = "$enq" ] ||
	fail "after the runs: enq_reqs $enq, disp_reqs $disp, done_reqs $done_ differ"
[ "$queued" = 0 ] && [ "$inflight" = 0 ] ||
	fail "after the runs: queued $queued, inflight $inflight (expected 0, 0)"
unload_fairq
[ -z "$cpu_bound" ] || [ "$TLIB_FAILED" != 0 ] || skip_all "$cpu_bound"
