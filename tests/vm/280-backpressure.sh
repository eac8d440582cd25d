#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Back-pressure: fairq0 holds at most max_queued requests
# waiting in the core; a submitter beyond that waits.  fairq0 over a slow
# null_blk (200 us per request, depth 1, so fairq queues whatever comes
# faster), with two writers at once: a direct libaio writer at iodepth
# 4096 and a buffered writer at iodepth 4096 (its pages go down from the
# flusher).  stats' queued is read while they run:
#  - with max_queued=65536 the direct writer alone must push queued past
#    64 (so the bound below is what holds it, not the workload);
#  - with max_queued=64 (set live) queued never exceeds 64 and reaches at
#    least half of it;
#  - nothing is lost: each region is verified (crc32c; the buffered one
#    read back with O_DIRECT after fsync), fairq counts no error, and the
#    lower device holds what fairq0 reads.
DESCRIPTION="max_queued bounds fairq's queue under an iodepth 4096 direct + buffered writer; verify"
TIMEOUT=420
# shellcheck source=rc
. /fairq/tests/vm/rc

NB=nullb280
BOUND=64
MB=$(scaled 8)	# per writer

require_cmd fio
cleanup_push "null_blk_destroy $NB"
cleanup_push "fairq_destroy fairq0"
null_blk_create "$NB" memory_backed=1 size=128 blocksize=4096 irqmode=2 completion_nsec=200000
fairq_create fairq0 "/dev/$NB" depth=1
check "max_queued defaults to 1024" grep -qx 1024 /sys/kernel/config/fairq/fairq0/max_queued

# fio_job NAME OFFSET_MB [fio options]: one writer of its own region
fio_job() {
	local name=$1 off=$2
	shift 2
	fio --output="/tmp/$name.out" --minimal --name="$name" --filename=/dev/fairq0 \
		--offset="${off}M" --size="${MB}M" --bs=4k --rw=randwrite \
		--verify=crc32c --verify_fatal=1 "$@"
}

# job_ok NAME: fio's minimal output has no job error (field 5)
job_ok() {
	awk -F';' '$5 != 0 { bad = 1; print "job " $3 " error " $5 } END { exit bad }' \
		"/tmp/$1.out"
}

MAXQ=0
# watch PID...: sample queued until every PID ended; max in MAXQ.
watch() {
	local line alive pid n=0
	MAXQ=0
	while :; do
		alive=0
		for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
		[ "$alive" = 1 ] || break
		while read -r line; do
			case $line in
			"queued "*)
				[ "${line#queued }" -gt "$MAXQ" ] && MAXQ=${line#queued }
				break ;;
			esac
		done </sys/block/fairq0/fairq/stats
		n=$((n + 1))
	done
	log "$n samples, queued at most $MAXQ"
}

# 1. No effective bound: the direct writer alone piles up requests.
fairq_set fairq0 max_queued 65536 || fatal "max_queued=65536 refused"
fio_job free 0 --direct=1 --ioengine=libaio --iodepth=4096 --do_verify=1 &
p1=$!
watch "$p1"
wait "$p1" || { cat /tmp/free.out; fatal "unbounded writer failed"; }
job_ok free || fatal "unbounded writer reported an error"
if [ "$MAXQ" -le "$BOUND" ] && [ "${FAIRQ_DEBUG_KERNEL:-0}" = 1 ]; then
	# a checker kernel (KASAN) may submit too slowly to pile bios up
	skip_all "without a bound queued reached only $MAXQ (<= $BOUND) on a checker kernel: the bound cannot be shown here"
fi
[ "$MAXQ" -gt "$BOUND" ] ||
	fatal "without a bound queued reached only $MAXQ (<= $BOUND): the test cannot tell"
ok "max_queued=65536: queued reached $MAXQ"

# 2. The bound, set live, under both writers.
fairq_set fairq0 max_queued "$BOUND" || fatal "max_queued=$BOUND refused"
fio_job direct "$MB" --direct=1 --ioengine=libaio --iodepth=4096 --do_verify=1 &
p1=$!
fio_job buffered $((2 * MB)) --direct=0 --ioengine=libaio --iodepth=4096 \
	--do_verify=0 --end_fsync=1 &
p2=$!
watch "$p1" "$p2"
wait "$p1" || { cat /tmp/direct.out; fail "direct writer failed"; }
wait "$p2" || { cat /tmp/buffered.out; fail "buffered writer failed"; }
job_ok direct || fail "direct writer reported an error"
job_ok buffered || fail "buffered writer reported an error"
if [ "$MAXQ" -le "$BOUND" ] && [ "$MAXQ" -ge $((BOUND / 2)) ]; then
	ok "max_queued=$BOUND: queued at most $MAXQ"
else
	fail "max_queued=$BOUND: queued reached $MAXQ (want $((BOUND / 2))..$BOUND)"
fi

# The buffered region, read back past the page cache.
fio_job buffered $((2 * MB)) --direct=1 --ioengine=libaio --iodepth=16 \
	--verify_only=1 || { cat /tmp/buffered.out; fail "buffered region does not verify"; }
job_ok buffered || fail "buffered region: verify error"

errors=$(stat_field fairq0 errors)
[ "$errors" = 0 ] || fail "fairq0 stats: errors $errors"
upper=$(dd if=/dev/fairq0 bs=1M count=$((3 * MB)) iflag=direct status=none | sha256sum)
fairq_destroy fairq0
lower=$(dd if="/dev/$NB" bs=1M count=$((3 * MB)) iflag=direct status=none | sha256sum)
[ "$upper" = "$lower" ] || fail "fairq0 read ${upper%% *}, the lower device holds ${lower%% *}"
