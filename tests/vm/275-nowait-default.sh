#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REQ_NOWAIT in fairq's default configuration (the fast path on,
# depth=auto); 270-nowait checks io_uring's submitter with fastpath=off.
#
# 1. EAGAIN at max_queued.  fairq1 (max_queued 64, the rest default)
#    over a null_blk with one server at 100 ms a request; two libaio
#    writers (two processes: two flows, since a flow alone holds at most
#    half of max_queued) at iodepth 128 fill the core to max_queued
#    (queued reaches 64 and the writers' next bios wait in fairq).  A
#    preadv2(RWF_NOWAIT) read of fairq1 from another process must then
#    fail with EAGAIN at once (within PROBE_LIMIT s; a bio that waited
#    for room, or was queued, would return data after the ~6 s the lower
#    needs for the queue ahead).  Each dispatch opens one place that the
#    waiting writers take a moment later; a read that comes in that
#    moment is queued, rightly: up to PROBE_TRIES reads, one must see
#    EAGAIN.  Once the writers have gone and fairq1 is idle,
#    the same read reads.  A fairq that sleeps on REQ_NOWAIT, or lets
#    it past max_queued, never returns EAGAIN there.
#
# 2. REQ_NOWAIT follows the lower device.  fairq0 sits on a dm device
#    whose table is reloaded between dm-linear, which takes REQ_NOWAIT,
#    and dm-crypt, which does not (cipher_null-ecb, key "-": the bytes
#    stay as they are, so data written through one table reads back
#    through the other).
#  - Probe: one 4 KiB preadv2(RWF_NOWAIT) read of fairq0 (fio pvsync2
#    nowait=1) on each table, after the lower watch had a second to
#    look.  On linear it reads.  On crypt it fails with EOPNOTSUPP in
#    the block layer above fairq (the disk no longer says it takes
#    REQ_NOWAIT) and never reaches fairq: its stats' enq_reqs,
#    fastpath_reqs and errors stay as they were.  Back on linear it
#    reads again.  Where the kernel has queue/nowait (not Debian's 6.1
#    or 6.12), it reads 1, 0, 1.
#  - Load: fio io_uring (iodepth 32, the fio thread submits with
#    REQ_NOWAIT) writes and verifies (crc32c) 4 KiB random blocks
#    through fairq0 while the table flips every 0.5 s.  A clone that
#    carries REQ_NOWAIT to dm-crypt is failed by it with
#    BLK_STS_NOTSUPP: a lower error in fairq's stats.  Between a reload
#    and the disk following, fairq must drop the flag on the clones; a
#    dm device suspended for the table swap answers REQ_NOWAIT with
#    BLK_STS_AGAIN, which io_uring retries and which is no error
#    either.  Asserted: fio without error (verify included), fairq's
#    errors and passthrough_errors 0, at least 2 flips to crypt during
#    the load, and fairq0 reads what the lower device holds.
#  A fairq that keeps REQ_NOWAIT on clones fails the probe's error count
#  and the load's (thousands of errors under io_uring).
#  Part 2 is a counted skip where dm-crypt or cipher_null is missing.
DESCRIPTION="REQ_NOWAIT, default config: EAGAIN at max_queued; follows a lower reloaded linear <-> crypt under io_uring"
TIMEOUT=400
# shellcheck source=rc
. /fairq/tests/vm/rc
# shellcheck source=faultrc
. /fairq/tests/vm/faultrc

NB=nullb275
NBS=nullb275s
DM=fq275
# how long a refused preadv2(RWF_NOWAIT) may take, fio's start included
# [s]: fio starts in 1-2 s in the TCG guest; a read that waited behind
# 64 queued requests at 100 ms each would take about 6.5 s
PROBE_LIMIT=4
PROBE_TRIES=3
SIZE_MB=$(scaled 64)
SECTORS=$((128 * 2048))
LINEAR="0 $SECTORS linear /dev/$NB 0"
CRYPT="0 $SECTORS crypt cipher_null-ecb - 0 /dev/$NB 0"

require_cmd fio
fio --enghelp=pvsync2 2>/dev/null | grep -qw nowait || skip_all "fio's pvsync2 has no nowait option"

# table TABLE: load TABLE into $DM and resume it with it
table() {
	dmsetup reload $DM --table "$1" && dmsetup resume $DM
}

# probe [DEV]: one 4 KiB preadv2(RWF_NOWAIT) O_DIRECT read of DEV
# (fairq0); sets PROBE_ERR to the errno fio saw (0: it read)
probe() {
	fio --minimal --output=probe.out --name=probe --filename="/dev/${1:-fairq0}" \
		--ioengine=pvsync2 --nowait=1 --direct=1 --rw=read --bs=4k \
		--size=4k >/dev/null 2>&1
	# minimal output: field 5 is the job's error code
	PROBE_ERR=$(awk -F';' '{ print $5; exit }' probe.out)
}

# counters DEV: DEV's enq_reqs, fastpath_reqs and errors
counters() {
	local d=$1
	echo "enq $(stat_field "$d" enq_reqs) fast $(stat_field "$d" fastpath_reqs)" \
		"errors $(stat_field "$d" errors)"
}

# again_probe: one probe of fairq1 at max_queued; true if it saw EAGAIN
# within PROBE_LIMIT s (a read that was queued would return data, after
# the queue ahead of it)
again_probe() {
	local t0 took
	t0=$EPOCHREALTIME
	probe fairq1
	took=$(awk -v t0="$t0" -v t1="$EPOCHREALTIME" 'BEGIN { printf "%.2f", t1 - t0 }')
	log "at max_queued: preadv2(RWF_NOWAIT) errno $PROBE_ERR in $took s; queued $(stat_field fairq1 queued)"
	[ "$PROBE_ERR" = 11 ] && awk -v t="$took" -v l="$PROBE_LIMIT" 'BEGIN { exit !(t <= l) }'
}

# 1. EAGAIN at max_queued
test_max_queued() {
	local wpid n
	null_blk_create $NBS size=128 blocksize=4096 irqmode=2 \
		completion_nsec=100000000 hw_queue_depth=1
	cleanup_push null_blk_destroy $NBS
	fairq_create fairq1 /dev/$NBS max_queued=64
	cleanup_push "fairq_destroy fairq1"
	check "fairq1: fastpath on, depth auto (the defaults)" \
		test "$(cat /sys/block/fairq1/fairq/fastpath)/$(cat /sys/block/fairq1/fairq/depth)" = on/auto
	fio --minimal --output=fill.out --name=fill --filename=/dev/fairq1 \
		--ioengine=libaio --iodepth=128 --direct=1 --rw=randwrite --bs=4k \
		--size=64M --time_based --runtime=120 --numjobs=2 >/dev/null 2>&1 &
	wpid=$!
	stall_ignore "$wpid"
	poll 300 0.1 stat_is fairq1 queued 64 ||
		fatal "fairq1 never held max_queued (queued $(stat_field fairq1 queued))"
	for ((n = 1; n <= PROBE_TRIES; n++)); do
		again_probe && break
	done
	check "at max_queued: preadv2(RWF_NOWAIT) failed with EAGAIN within $PROBE_LIMIT s (try $n of $PROBE_TRIES)" \
		test "$n" -le "$PROBE_TRIES"
	kill "$wpid"
	wait "$wpid"
	wait_idle fairq1 30
	probe fairq1
	check "idle: preadv2(RWF_NOWAIT) reads (errno ${PROBE_ERR:-none})" test "$PROBE_ERR" = 0
	fairq_destroy fairq1
}

# nowait_shown WANT WHAT: queue/nowait of fairq0 reads WANT, where the
# kernel has that file
nowait_shown() {
	[ -r /sys/block/fairq0/queue/nowait ] || return 0
	check "$2: fairq0 queue/nowait is $1" grep -qx "$1" /sys/block/fairq0/queue/nowait
}

test_probe() {
	local before
	probe
	check "linear: preadv2(RWF_NOWAIT) reads (errno ${PROBE_ERR:-none})" test "$PROBE_ERR" = 0
	nowait_shown 1 linear
	table "$CRYPT" || fatal "reload $DM onto dm-crypt"
	# the lower watch looks once a second
	sleep 2
	nowait_shown 0 crypt
	before=$(counters fairq0)
	probe
	check "crypt: preadv2(RWF_NOWAIT) fails with EOPNOTSUPP (errno ${PROBE_ERR:-none})" \
		test "$PROBE_ERR" = 95
	check "crypt: the refused read never reached fairq ($before -> $(counters fairq0))" \
		test "$before" = "$(counters fairq0)"
	table "$LINEAR" || fatal "reload $DM onto dm-linear"
	sleep 2
	nowait_shown 1 "linear again"
	probe
	check "linear again: preadv2(RWF_NOWAIT) reads (errno ${PROBE_ERR:-none})" test "$PROBE_ERR" = 0
}

# flipper PID: flip $DM's table crypt/linear every 0.5 s while PID runs;
# writes the number of flips to crypt into flips.n; ends on linear
flipper() {
	local n=0
	while kill -0 "$1" 2>/dev/null; do
		table "$CRYPT" || { echo "reload onto dm-crypt failed"; return 1; }
		n=$((n + 1))
		sleep 0.5
		table "$LINEAR" || { echo "reload onto dm-linear failed"; return 1; }
		sleep 0.5
	done
	echo "$n" >flips.n
}

test_load() {
	local fiopid flpid flips upper lower
	log "fio io_uring iodepth 32, write+verify ${SIZE_MB} MiB while $DM flips"
	fio --output-format=json --output=fio275.json --thread --name=uring \
		--filename=/dev/fairq0 --ioengine=io_uring --iodepth=32 --direct=1 \
		--rw=randwrite --bs=4k --size="${SIZE_MB}M" --randrepeat=0 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 &
	fiopid=$!
	flipper "$fiopid" &
	flpid=$!
	wait "$fiopid"
	check "fio io_uring write+verify through the flips exits 0" test $? = 0
	wait "$flpid" || fatal "table flips failed"
	flips=$(cat flips.n)
	log "$flips flips to dm-crypt during fio; $(counters fairq0)," \
		"passthrough_errors $(stat_field fairq0 passthrough_errors)"
	check "fio: no I/O error (first: $(fio_first_err fio275.json))" test "$(fio_errs fio275.json)" = 0
	check "at least 2 flips to dm-crypt during the load ($flips)" test "$flips" -ge 2
	check "fairq0 counted no lower error" test "$(stat_field fairq0 errors)" = 0
	check "fairq0 counted no passthrough error" test "$(stat_field fairq0 passthrough_errors)" = 0
	upper=$(dd if=/dev/fairq0 bs=1M count="$SIZE_MB" iflag=direct status=none | sha256sum)
	lower=$(dd if="/dev/$NB" bs=1M count="$SIZE_MB" iflag=direct status=none | sha256sum)
	check "fairq0 reads what $NB holds" test "$upper" = "$lower"
}

test_max_queued

if ! command -v dmsetup >/dev/null || ! modprobe dm-crypt 2>/dev/null; then
	skip "REQ_NOWAIT following a dm-crypt lower: no dmsetup or dm-crypt"
	exit 0
fi
if ! fio --enghelp 2>/dev/null | grep -qw io_uring ||
	[ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ]; then
	skip "REQ_NOWAIT following a dm-crypt lower: no io_uring"
	exit 0
fi
null_blk_create $NB memory_backed=1 size=128 blocksize=4096
cleanup_push null_blk_destroy $NB
dmsetup create $DM --table "$LINEAR" || fatal "dmsetup create $DM (linear)"
cleanup_push "dmsetup remove --force $DM"
wait_for_file /dev/mapper/$DM || fatal "/dev/mapper/$DM missing"
# the crypt table must load here, or the flips below test nothing
table "$CRYPT" || fatal "dm-crypt table '$CRYPT' refused"
table "$LINEAR" || fatal "back to the linear table"
cleanup_push "fairq_destroy fairq0"
fairq_create fairq0 /dev/mapper/$DM
test_probe
test_load
fairq_destroy fairq0
