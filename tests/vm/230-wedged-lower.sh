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
#    suspended lower: the teardown waits for that clone, in a work item,
#    so rmdir itself returns within RMDIR_LIMIT (it waits a second for
#    the teardown) and leaves configfs's locks free.  Then, with fq0's teardown still holding the lower open,
#    fq2 is made, listed and removed, each step within CFS_LIMIT; fq1's
#    power=1, I/O and power=0 run; a new fq0 is made and its power=1
#    waits (the old fq0 still holds the name) until the lower resumes.
#    A driver that tears down inside rmdir holds configfs's subsystem
#    mutex and the parent directory's lock until the lower resumes: the
#    rmdir (and the mkdir and listing after it) exceed their bounds.
# Once the lower resumes, fq0's teardown completes, the lower is released
# and holds the data: nothing lost; the new fq0 powers on; fairq unloads
# at the end (faultrc), so the teardown left no reference behind.
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
# how long rmdir of the wedged fq0, and each mkdir, listing or rmdir of
# fq2 after it, may take [s]: one fork and exec of mkdir, ls or rmdir
# takes 0.1-0.4 s in the TCG guest, and rmdir waits 1 s for a teardown
# before it leaves it to the background (fairq(4)); a teardown under
# configfs's locks takes until the lower resumes (forever here)
RMDIR_LIMIT=3
CFS_LIMIT=1

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

# dm_opens: how many hold $DM open
dm_opens() {
	dmsetup info -c --noheadings -o open $DM | tr -d ' '
}

# fq0_waiting: fq0's teardown has not ended: its power=0 (the background
# job PID0) still runs; after an rmdir (PID0 empty), fq0 still holds $DM
fq0_waiting() {
	if [ -n "$PID0" ]; then
		kill -0 "$PID0" 2>/dev/null
	else
		[ "$(dm_opens)" -gt 0 ]
	fi
}

# within LIMIT WHAT CMD...: run CMD in the background; it must end with
# status 0 within LIMIT s (else the lower is resumed and the test fails),
# while fq0's teardown still waits for the suspended lower
within() {
	local limit=$1 what=$2 pid t0 n
	shift 2
	t0=$EPOCHREALTIME
	"$@" &
	pid=$!
	for ((n = limit * 20; n > 0; n--)); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 $pid 2>/dev/null; then
		dmsetup resume $DM
		wait $pid
		fatal "$what did not finish in ${limit}s while fq0's teardown waited for its lower device"
	fi
	wait $pid || fatal "$what failed while fq0's teardown waited"
	fq0_waiting || fatal "fq0's teardown did not wait for the suspended lower"
	log "$what: done in $(awk -v t0="$t0" -v t1="$EPOCHREALTIME" 'BEGIN { printf "%.2f", t1 - t0 }') s while fq0 waits"
}

# while_fq0_waits WHAT CMD...: within FQ1_LIMIT s
while_fq0_waits() {
	within "$FQ1_LIMIT" "$@"
}

# fq0_done: resume the lower; fq0's teardown (job PID0, or the work item
# of rmdir) must then end (with status 0) and release the lower device
fq0_done() {
	dmsetup resume $DM || fatal "dmsetup resume"
	if [ -n "$PID0" ]; then
		wait "$PID0" || fatal "fq0's teardown failed once the lower resumed"
		[ ! -e /sys/block/fq0 ] || fatal "fq0 still registered"
	fi
	poll 100 0.1 test "$(dm_opens)" = 0 || fatal "fq0's teardown did not release $DM after resume"
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

# list_cfs: the entries of $CFS must be listed, fq2 among them
list_cfs() {
	ls $CFS >cfs.list && grep -qx fq2 cfs.list
}

test_rmdir() {
	local want dd_pid pid_on
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
	PID0=""
	within "$RMDIR_LIMIT" "rmdir fq0" rmdir $CFS/fq0
	within "$CFS_LIMIT" "mkdir fq2" mkdir $CFS/fq2
	within "$CFS_LIMIT" "listing $CFS" list_cfs
	within "$CFS_LIMIT" "rmdir fq2 (powered off)" rmdir $CFS/fq2
	while_fq0_waits "fq1 power=1/I/O/power=0" fq1_round
	kill -0 $dd_pid 2>/dev/null || fatal "the direct write ended while $DM was suspended"
	# a new fq0: its power=1 waits until the old fq0 is gone
	mkdir $CFS/fq0 || fatal "mkdir fq0 (the new one)"
	echo /dev/$NB1 >$CFS/fq0/backing || fatal "new fq0: backing"
	(echo 1 >$CFS/fq0/power) &
	pid_on=$!
	sleep 1
	kill -0 $pid_on 2>/dev/null ||
		fatal "the new fq0 powered on while the old fq0's teardown still held the name"
	fq0_waiting || fatal "fq0's teardown did not wait for the suspended lower"
	fq0_done
	wait $dd_pid || fatal "the direct write accepted before rmdir failed"
	[ "$(region_sha /dev/mapper/$DM 4096 1024)" = "${want%% *}" ] ||
		fatal "the direct write in flight at rmdir did not reach $DM"
	wait $pid_on || fatal "the new fq0's power=1 failed after the old one was gone"
	wait_for_file /dev/fq0 || fatal "the new fq0 has no /dev/fq0"
	[ "$(cat /sys/block/fq0/slaves/*/dev 2>/dev/null)" = "$(cat /sys/block/$NB1/dev)" ] ||
		fatal "the new fq0 is not on $NB1"
	fairq_destroy fq0
	rmdir $CFS/fq1 || fatal "rmdir fq1"
	log "rmdir of fq0 returned while its lower was suspended; its in-flight write completed after resume and is on $DM"
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
