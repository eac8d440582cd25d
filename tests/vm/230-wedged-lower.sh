#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One wedged lower device stalls only its own fairq device (duty of a
# stacked driver 4).  fq0 sits on a dm-linear device that is suspended
# (dmsetup suspend: its I/O waits) while fq0 is being torn down; the
# wait belongs to fq0 alone, so meanwhile fq1, on its own null_blk, is
# configured, powered, used and powered off within seconds.  Two ways
# for fq0's teardown to wait:
#  - power=0 while the lower device's page cache holds 1 MiB another
#    opener wrote (closing it did not sync: fq0 still had it open):
#    releasing the lower device syncs it, and waits.  Meanwhile fq1 is
#    created and destroyed completely (mkdir to rmdir);
#  - rmdir fq0 while a direct 1 MiB write through it waits in the
#    suspended lower: the teardown waits for that clone.  configfs holds
#    its own subsystem mutex across rmdir, so fq1's mkdir and backing are
#    done before; its power=1, I/O and power=0 run while fq0 waits.
# Once the lower resumes, fq0's teardown completes, the lower is released
# and holds the data: nothing lost.
DESCRIPTION="a suspended lower stalls only its own device's power-off; fq1 configures meanwhile"
TIMEOUT=300
# fq0's teardown sits in D state on purpose while fq1 gets up to FQ1_LIMIT
# (30 s): vm/init's hung-task report (30 s by default) must not fire
# shellcheck disable=SC2034 # read by vm/init from this file
HUNG_TASK_SECS=120
# shellcheck source=rc
. /fairq/tests/vm/rc
# shellcheck source=faultrc
. /fairq/tests/vm/faultrc

CFS=/sys/kernel/config/fairq
NB0=nullb230a
NB1=nullb230b
DM=fq230
# how long fq1's whole sequence may take while fq0 waits [s]
FQ1_LIMIT=30

# fq1_round: power fq1 on, write and read back 1 MiB, power it off
fq1_round() {
	local sha
	echo 1 >$CFS/fq1/power || fatal "fq1: power=1"
	wait_for_file /dev/fq1 || fatal "/dev/fq1 did not appear"
	dd if=/dev/urandom of=fq1.pat bs=64k count=16 status=none
	dd if=fq1.pat of=/dev/fq1 bs=64k oflag=direct status=none || fatal "fq1: write"
	sha=$(dd if=/dev/fq1 bs=64k count=16 iflag=direct status=none | sha256sum)
	[ "$sha" = "$(sha256sum <fq1.pat)" ] || fatal "fq1: read back other data"
	echo 0 >$CFS/fq1/power || fatal "fq1: power=0"
}

# fq1_whole: fq1 from mkdir to rmdir
fq1_whole() {
	mkdir $CFS/fq1 || fatal "mkdir fq1"
	echo /dev/$NB1 >$CFS/fq1/backing || fatal "fq1: backing"
	fq1_round
	rmdir $CFS/fq1 || fatal "rmdir fq1"
}

# while_fq0_waits WHAT CMD...: run CMD in the background; it must end
# with status 0 within FQ1_LIMIT s, while fq0 (the background job PID0)
# still waits for the suspended lower
while_fq0_waits() {
	local what=$1 pid t0 n
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@" &
	pid=$!
	for ((n = FQ1_LIMIT * 10; n > 0; n--)); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $pid 2>/dev/null; then
		dmsetup resume $DM
		wait $pid
		fatal "$what did not finish in ${FQ1_LIMIT}s while fq0's teardown waited for its lower device"
	fi
	wait $pid || fatal "$what failed while fq0's teardown waited"
	kill -0 "$PID0" 2>/dev/null || fatal "fq0's teardown did not wait for the suspended lower"
	log "$what: done in $(awk -v t0="$t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime) s while fq0 waits"
}

# fq0_done: resume the lower; fq0's teardown (job PID0) must then end
# with status 0 and release the lower device
fq0_done() {
	dmsetup resume $DM || fatal "dmsetup resume"
	wait "$PID0" || fatal "fq0's teardown failed once the lower resumed"
	[ ! -e /sys/block/fq0 ] || fatal "fq0 still registered"
	local dm
	dm=$(dmsetup info -c --noheadings -o blkdevname $DM)
	[ -d "/sys/block/$dm/holders" ] || fatal "no /sys/block/$dm/holders for $DM"
	[ -z "$(ls "/sys/block/$dm/holders")" ] || fatal "$DM ($dm) is still held"
}

test_power_off() {
	local want
	fairq_create fq0 /dev/mapper/$DM
	dmsetup suspend $DM || fatal "dmsetup suspend"
	dd if=/dev/urandom of=a.pat bs=64k count=16 status=none
	want=$(sha256sum <a.pat)
	# a second opener's buffered write: its close does not sync (fq0 holds it)
	dd if=a.pat of=/dev/mapper/$DM bs=64k seek=32 status=none || fatal "buffered write to $DM"
	(echo 0 >$CFS/fq0/power) &
	PID0=$!
	sleep 1
	while_fq0_waits "fq1 mkdir/power=1/I/O/power=0/rmdir" fq1_whole
	fq0_done
	rmdir $CFS/fq0 || fatal "rmdir fq0"
	[ "$(dd if=/dev/mapper/$DM bs=64k skip=32 count=16 iflag=direct status=none | sha256sum)" = "$want" ] ||
		fatal "the 1 MiB in $DM's page cache did not reach it"
	log "power=0 of fq0 waited for its suspended lower and finished after resume; data on $DM"
}

test_rmdir() {
	local want dd_pid
	mkdir $CFS/fq1 || fatal "mkdir fq1"
	echo /dev/$NB1 >$CFS/fq1/backing || fatal "fq1 backing"
	fairq_create fq0 /dev/mapper/$DM
	dmsetup suspend $DM || fatal "dmsetup suspend"
	dd if=/dev/urandom of=b.pat bs=1M count=1 status=none
	want=$(sha256sum <b.pat)
	# one write(2): every bio of it is accepted before rmdir starts
	dd if=b.pat of=/dev/fq0 bs=1M seek=4 oflag=direct status=none &
	dd_pid=$!
	wait_for stat_above fq0 inflight 0
	rmdir $CFS/fq0 &
	PID0=$!
	sleep 1
	while_fq0_waits "fq1 power=1/I/O/power=0" fq1_round
	fq0_done
	wait $dd_pid || fatal "the direct write accepted before rmdir failed"
	[ "$(region_sha /dev/mapper/$DM 4096 1024)" = "${want%% *}" ] ||
		fatal "the direct write in flight at rmdir did not reach $DM"
	rmdir $CFS/fq1 || fatal "rmdir fq1"
	log "rmdir of fq0 waited for its in-flight write; it completed after resume and is on $DM"
}

require_cmd dmsetup
require_module dm-mod
null_blk_create $NB0 memory_backed=1 size=64
cleanup_push null_blk_destroy $NB0
null_blk_create $NB1 memory_backed=1 size=16
cleanup_push null_blk_destroy $NB1
dmsetup create $DM --table "0 $((64 * 2048)) linear /dev/$NB0 0" || fatal "dmsetup create"
cleanup_push "dmsetup remove --force $DM"
wait_for_file /dev/mapper/$DM || fatal "/dev/mapper/$DM missing"
cleanup_push "fairq_destroy fq1; fairq_destroy fq0"
cleanup_push "dmsetup resume $DM 2>/dev/null; true"
load_fairq
test_power_off
test_rmdir
