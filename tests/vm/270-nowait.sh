#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# io_uring stays in the submitting task: fairq0 over a null_blk
# that takes REQ_NOWAIT advertises NOWAIT too, so io_uring issues its
# bios inline from the fio thread instead of punting every one to an
# io-wq worker (iou-wrk-N); and a REQ_NOWAIT bio never sleeps in fairq.
#
# fio (io_uring, iodepth 32, --thread so every task of it is under one
# /proc/PID/task) writes and verifies (crc32c) 4 KiB random blocks on
# fairq0 with classify=pid, which keys each flow by the submitting
# thread: while it runs, each flow key of fairq0's stats is looked up in
# /proc and must be the fio job thread, never an iou-wrk thread.  Without
# the NOWAIT advertisement (6.1: QUEUE_FLAG_NOWAIT; 6.11+: BLK_FEAT_NOWAIT)
# io_uring sends every request through io-wq and the flows are iou-wrk
# threads: the test fails.  Then the data: fio's verify, zero errors in
# fairq's stats, and the lower device holds what fairq0 reads.
DESCRIPTION="io_uring on fairq0 submits from the fio thread, not io-wq; verify crc32c"
TIMEOUT=300
# shellcheck source=rc
. /fairq/tests/vm/rc

NB=nullb270
SIZE_MB=$(scaled 64)

require_cmd fio
fio --enghelp 2>/dev/null | grep -qw io_uring || skip_all "fio has no io_uring engine"
[ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ] ||
	skip_all "io_uring is disabled (kernel.io_uring_disabled)"

cleanup_push "null_blk_destroy $NB"
cleanup_push "fairq_destroy fairq0"
null_blk_create "$NB" memory_backed=1 size=128 blocksize=4096
# fastpath=off: the flow keys are the evidence, and bios that bypass the
# scheduler have none (290-fastpath-switch runs io_uring on the fast path)
fairq_create fairq0 "/dev/$NB" classify=pid fastpath=off

# The disk says it takes REQ_NOWAIT where the kernel has queue/nowait
# (not Debian's 6.1 or 6.12).
if [ -r /sys/block/fairq0/queue/nowait ]; then
	check "fairq0 queue/nowait is 1" grep -qx 1 /sys/block/fairq0/queue/nowait
fi

declare -A KEY_COMM=()	# flow key seen in the stats -> its task's comm
declare -A WORKERS=()	# iou-wrk tasks seen in fio's process

# sample FIOPID: one look at fairq0's flows and fio's tasks (bash
# builtins only: a fork costs a good fraction of a second under TCG).
# A flow exists only while it has bios queued or in flight (the core
# frees drained flows once the device is idle), and fio under TCG spends
# most of its time making and checking data with nothing outstanding:
# up to STATS_TRIES snapshots per look, until one has a flow line.
# Each snapshot is one read (mapfile): a `while read` loop seeks back
# after every line, and each seek makes sysfs generate the file anew, so
# its lines would come from different snapshots, and a flow line would be
# missed whenever a line before it (queued, inflight, clones_pending...)
# changed its length meanwhile.
STATS_TRIES=20
sample() {
	local pid=$1 line key comm t try
	local -a lines
	for ((try = 0; try < STATS_TRIES; try++)); do
		mapfile -t lines </sys/block/fairq0/fairq/stats
		[[ "${lines[*]: -1}" == flow\ key=* ]] && break
	done
	for line in "${lines[@]}"; do
		[[ $line == flow\ key=* ]] || continue
		key=${line#flow key=}
		key=${key%% *}
		[ -n "${KEY_COMM[$key]:-}" ] && continue
		comm=gone
		read -r comm 2>/dev/null <"/proc/$key/comm" || true
		KEY_COMM[$key]=$comm
	done
	for t in /proc/"$pid"/task/*; do
		comm=""
		read -r comm 2>/dev/null <"$t/comm" || continue
		[[ $comm == iou-wrk* ]] && WORKERS[${t##*/}]=$comm
	done
	return 0
}

log "fio io_uring iodepth 32, write+verify ${SIZE_MB} MiB"
fio --output=/tmp/fio270.out --minimal --thread --name=uring \
	--filename=/dev/fairq0 --ioengine=io_uring --iodepth=32 --direct=1 \
	--rw=randwrite --bs=4k --size="${SIZE_MB}M" --randrepeat=0 \
	--verify=crc32c --do_verify=1 --verify_fatal=1 &
fiopid=$!
samples=0
while kill -0 "$fiopid" 2>/dev/null; do
	sample "$fiopid"
	samples=$((samples + 1))
	sleep 0.2
done
wait "$fiopid" || { cat /tmp/fio270.out; fatal "fio write+verify failed"; }
# minimal output: field 5 is the job's error code
awk -F';' '$5 != 0 { bad = 1; print "job " $3 " error " $5 } END { exit bad }' \
	/tmp/fio270.out || fatal "fio job reported an error"
ok "fio write+verify (crc32c) through fairq0: no error"

fio_keys=0
wrk_keys=0
for key in "${!KEY_COMM[@]}"; do
	echo "flow key $key: ${KEY_COMM[$key]}"
	case ${KEY_COMM[$key]} in
	fio) fio_keys=$((fio_keys + 1)) ;;
	iou-wrk*) wrk_keys=$((wrk_keys + 1)) ;;
	esac
done
echo "$samples samples, ${#KEY_COMM[@]} flow keys: $fio_keys fio, $wrk_keys iou-wrk;" \
	"${#WORKERS[@]} iou-wrk tasks seen in fio"
[ "$fio_keys" -ge 1 ] || fail "no flow keyed by the fio thread in $samples samples"
[ "$wrk_keys" = 0 ] ||
	fail "$wrk_keys flows keyed by io-wq workers: io_uring bounced the I/O to iou-wrk threads"
[ "$wrk_keys" = 0 ] && [ "$fio_keys" -ge 1 ] && ok "I/O submitted by the fio thread, not io-wq"

errors=$(stat_field fairq0 errors)
[ "$errors" = 0 ] || fail "fairq0 stats: errors $errors"
# fastpath=off took effect: every bio went through the scheduler
fast=$(stat_field fairq0 fastpath_reqs)
log "enq_reqs $(stat_field fairq0 enq_reqs), fastpath_reqs $fast"
[ "$fast" = 0 ] && ok "fastpath=off: no bio bypassed the scheduler" ||
	fail "fastpath=off, yet fastpath_reqs is $fast"
upper=$(dd if=/dev/fairq0 bs=1M count="$SIZE_MB" iflag=direct status=none | sha256sum)
fairq_destroy fairq0
lower=$(dd if="/dev/$NB" bs=1M count="$SIZE_MB" iflag=direct status=none | sha256sum)
[ "$upper" = "$lower" ] || fail "fairq0 read ${upper%% *}, the lower device holds ${lower%% *}"
