#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fairq.ko smoke test, the driver author's own: fairq0 over a 256 MiB
# memory-backed null_blk made in configfs; a pattern written through
# fairq0 reads back through fairq0 and, after power-off, straight from the
# null_blk; stats counted it; sysfs tunables switch; rmmod is refused
# while a configfs entry exists and works once it is gone.
DESCRIPTION="driver smoke: configfs, data through fairq0, stats, rmmod refusal"
QUICK=1
TIMEOUT=300

. "$(dirname "$0")/rc"

NB=nullb_s
FQ=fairq0
SYS=/sys/block/$FQ/fairq

stat_of() {
	awk -v k="$1" '$1 == k { print $2 }' "$SYS/stats"
}

test_create() {
	null_blk_create $NB memory_backed=1 size=256 blocksize=512
	cleanup_push null_blk_destroy $NB
	load_fairq
	fairq_create $FQ /dev/$NB depth=8
	cleanup_push fairq_destroy $FQ
	[ "$(dev_size_mb /dev/$FQ)" = 256 ] || fail "$FQ is $(dev_size_mb /dev/$FQ) MiB, want 256"
	[ -d "$SYS" ] || fail "$SYS missing"
	[ "$(cat $SYS/depth)" = 8 ] || fail "depth not 8 in sysfs"
	[ "$(cat $SYS/backing)" = /dev/$NB ] || fail "sysfs backing is '$(cat $SYS/backing)'"
	log "$FQ: $(dev_size_mb /dev/$FQ) MiB over /dev/$NB"
}

# 32 MiB in mixed sizes at an odd offset, O_DIRECT both ways.
test_data() {
	local want got
	dd if=/dev/urandom of=pattern bs=1M count=32 status=none
	want=$(sha256sum <pattern | cut -d' ' -f1)
	dd if=pattern of=/dev/$FQ bs=256k seek=12 oflag=direct status=none ||
		fail "write through $FQ failed"
	dd if=/dev/zero of=/dev/$FQ bs=4k count=1 oflag=direct,dsync status=none ||
		fail "dsync write through $FQ failed"
	sync
	got=$(dd if=/dev/$FQ bs=64k skip=48 count=512 iflag=direct status=none |
		sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "$FQ read back $got, wrote $want"
	got=$(dd if=/dev/$FQ bs=1M skip=3 count=32 status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "$FQ buffered read back $got, wrote $want"
	log "32 MiB round-trip through $FQ"
}

test_stats() {
	local n
	n=$(stat_of enq_reqs)
	[ -n "$n" ] && [ "$n" -gt 0 ] || fail "stats enq_reqs is '$n'"
	[ "$(stat_of queued)" = 0 ] || fail "stats queued is $(stat_of queued) when idle"
	[ "$(stat_of inflight)" = 0 ] || fail "stats inflight is $(stat_of inflight) when idle"
	[ "$(stat_of done_reqs)" = "$(stat_of disp_reqs)" ] || fail "done_reqs != disp_reqs"
	[ "$(stat_of errors)" = 0 ] || fail "stats errors $(stat_of errors)"
	log "stats: enq_reqs $n, passthrough $(stat_of passthrough_reqs)"
}

# Flows exist only while they have work: sample stats under a reader.
test_flow_lines() {
	local pid i seen=0
	dd if=/dev/$FQ of=/dev/null bs=4k iflag=direct status=none &
	pid=$!
	for i in $(seq 50); do
		if grep -q "^flow key=$pid class=be level=[0-7] " "$SYS/stats"; then
			seen=1
			break
		fi
		sleep 0.05
	done
	cat "$SYS/stats"
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	[ $seen = 1 ] || fail "no flow line for reader pid $pid in stats"
	log "flow line for the reader seen"
}

# Switch policies and depth while a reader runs: every read completes.
test_switch() {
	local pid p got
	dd if=/dev/$FQ of=/dev/null bs=64k iflag=direct status=none &
	pid=$!
	for p in sfq fifo cfq sfq cfq; do
		echo $p >$SYS/policy || fail "policy=$p refused"
		echo $((RANDOM % 16 + 1)) >$SYS/depth || fail "depth refused"
		sleep 0.2
	done
	wait $pid || fail "reader through $FQ failed during switches"
	[ "$(cat $SYS/policy)" = cfq ] || fail "policy reads '$(cat $SYS/policy)'"
	expect_errno EINVAL "echo bogus > $SYS/policy"
	expect_errno ERANGE "echo 0 > $SYS/depth"
	expect_errno EINVAL "echo 4x > $SYS/depth"
	got=$(cat $SYS/depth)
	[ "$got" -ge 1 ] || fail "depth changed by a failed write: $got"
	log "policy/depth switches under I/O ok"
}

test_power_off_rules() {
	local want got
	exec 9</dev/$FQ
	expect_errno EBUSY "echo 0 > $FAIRQ_CONFIGFS/$FQ/power"
	exec 9<&-
	expect_errno EBUSY "echo 64 > $FAIRQ_CONFIGFS/$FQ/max_flows"
	expect_errno EBUSY "echo /dev/$NB > $FAIRQ_CONFIGFS/$FQ/backing"
	echo 0 >$FAIRQ_CONFIGFS/$FQ/power || fail "power=0 refused"
	wait_for_gone /dev/$FQ || fail "/dev/$FQ still there after power=0"
	want=$(sha256sum <pattern | cut -d' ' -f1)
	got=$(dd if=/dev/$NB bs=1M skip=3 count=32 iflag=direct status=none |
		sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "$NB holds $got, wrote $want through $FQ"
	echo 128 >$FAIRQ_CONFIGFS/$FQ/max_flows || fail "max_flows refused while off"
	log "power-off rules ok, data on $NB"
}

test_rmmod() {
	if rmmod fairq 2>/dev/null; then
		fail "rmmod fairq succeeded while $FAIRQ_CONFIGFS/$FQ exists"
	fi
	[ -d /sys/module/fairq ] || fail "fairq unloaded"
	fairq_destroy $FQ
	unload_fairq
	[ ! -d /sys/module/fairq ] || fail "fairq still loaded"
	log "rmmod refused with an entry, works without"
}

main() {
	test_create
	test_data
	test_stats
	test_flow_lines
	test_switch
	test_power_off_rules
	test_rmmod
}

main "$@"
