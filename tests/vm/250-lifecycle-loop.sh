#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole life of a fairq device, over and over, under background load,
# for what one pass of the other tests may miss: a teardown that leaves a
# bio, a reference or a work item behind, so that the guest stops making
# progress.  Each cycle:
#
#   a fresh null_blk (memory_backed) lower; fairq over it with the
#   cycle's policy (cfq, sfq, fifo in turn), classify (tgid, pid, cgroup,
#   uid), depth, and anticipation (idle_us 3000 every other cycle: the
#   dispatch timer then holds requests); mkfs.ext4; mount; two writers in two cgroups, one as
#   uid 0 with fsync and one as uid 1000, write files; checksums; umount,
#   e2fsck -fn, mount again, the checksums must match; then one of four
#   teardowns (the cycle number modulo 4):
#     0 clean: umount, power=0, rmdir, e2fsck -fn on the lower directly;
#     1 mounted, busy: a writer in the mounted file system, power=0 EBUSY,
#       rmdir tears down under it (as 140 does), the writer fails, umount;
#     2 raw, busy: umount, fio on the fairq disk, power=0 EBUSY, rmdir
#       under it: fio ends with errors within 20 s;
#     3 power=0 racing the last close: umount, a 2 s fio on the fairq
#       disk, power=0 retried every 10 ms until it is accepted (only EBUSY
#       before that): the power-off lands as fio closes;
#   after each: no entry and no holder left; then 140's last step: two
#   racers create and destroy four devices over four more null_blks in
#   opposite orders (only EEXIST, ENOENT, EBUSY may fail a step), nothing
#   may be left; rmmod fairq works, and the null_blks are destroyed.
#   The background load, all the time: fio random read/write on /dev/vdc
#   (raw, not through fairq, so that rmmod can work every cycle).
#
# Cycles: fairq.loop_cycles=N on the kernel command line (make soak:
# LOOP_CYCLES, 100), else FAIRQ_LOOP_CYCLES, else 10 (make check).
# TIMEOUT is for 10 cycles; make soak scales it (vm/run --timeout-scale).
# A cycle that hangs is caught by vm/init's stall watchdog, whose dump
# (blocked tasks, fairq's state) is in this test's log.
DESCRIPTION="lifecycle loop: create/mkfs/mount/write/verify/umount/power-off/rmmod x N, 4 teardowns, under load"
TIMEOUT=1200
# shellcheck source=rc
. /fairq/tests/vm/rc
# shellcheck source=faultrc
. /fairq/tests/vm/faultrc

CYCLES=$(sed -n 's/.*fairq\.loop_cycles=\([0-9]*\).*/\1/p' /proc/cmdline)
CYCLES=${CYCLES:-${FAIRQ_LOOP_CYCLES:-10}}
CFS=$FAIRQ_CONFIGFS
NB=nullb250
FQ=fq250
MNT=/tmp/250-mnt
CG=/sys/fs/cgroup
POLS=(cfq sfq fifo)
CLS=(tgid pid cgroup uid)
TEARDOWNS=(clean mounted-busy raw-busy power-race)

# rmmod_fairq CYCLE: the unload must work once the cycle's device is gone
# (a leaked module reference, or a device left behind, fails here)
rmmod_fairq() {
	local i
	for ((i = 0; i < 20; i++)); do
		rmmod fairq 2>/dev/null && return 0
		sleep 0.1
	done
	fatal "cycle $1: rmmod fairq refused: $(rmmod fairq 2>&1) (refcnt $(cat /sys/module/fairq/refcnt))"
}

# not_held CYCLE: no fairq entry or disk left, the lower released
not_held() {
	[ -z "$(ls "$CFS" 2>/dev/null)" ] || fatal "cycle $1: configfs entries left: $(ls "$CFS")"
	[ ! -e /sys/block/$FQ ] || fatal "cycle $1: $FQ still registered"
	[ -z "$(ls /sys/block/$NB/holders)" ] || fatal "cycle $1: $NB still held by $(ls /sys/block/$NB/holders)"
}

# writer DIR N SYNC: N files of 64-512 KiB in DIR (conv=fsync when SYNC=1)
writer() {
	local dir=$1 n=$2 sync=$3 i conv=notrunc
	[ "$sync" = 1 ] && conv=fsync
	mkdir -p "$dir" || return 1
	for ((i = 0; i < n; i++)); do
		dd if=/dev/urandom of="$dir/f$i" bs=64k count=$((i % 8 + 1)) conv=$conv status=none ||
			return 1
	done
}

# in_cgroup CG CMD...: CMD in cgroup CG (the shell moves itself, then execs)
in_cgroup() {
	local cg=$CG/$1
	shift
	# shellcheck disable=SC2016 # expanded by the child shell
	bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$cg" "$@"
}

manifest() {
	(cd "$MNT" && find . -type f -name 'f*' | sort | xargs sha256sum)
}

# busy_writer: write with fsync until the file system fails it (exit 3)
busy_writer() {
	local i=0
	while dd if=/dev/zero of="$MNT/busy$((i % 4))" bs=128k count=4 conv=fsync status=none 2>/dev/null; do
		i=$((i + 1))
	done
	exit 3
}

teardown_clean() {
	local c=$1
	umount $MNT || fatal "cycle $c: umount"
	wait_idle $FQ
	echo 0 >"$CFS/$FQ/power" || fatal "cycle $c: power=0 after umount refused"
	rmdir "$CFS/$FQ" || fatal "cycle $c: rmdir"
	wait_for_gone /dev/$FQ || fatal "cycle $c: /dev/$FQ still there"
	e2fsck -fn /dev/$NB >fsck.out 2>&1 || { cat fsck.out; fatal "cycle $c: e2fsck of the lower not clean"; }
}

teardown_mounted_busy() {
	local c=$1 pid rc done0
	done0=$(stat_field $FQ done_reqs)
	busy_writer &
	pid=$!
	wait_for stat_above $FQ done_reqs $((done0 + 20))
	expect_errno EBUSY "echo 0 > $CFS/$FQ/power"
	rmdir "$CFS/$FQ" || fatal "cycle $c: rmdir while mounted and busy"
	wait $pid
	rc=$?
	[ $rc = 3 ] || fatal "cycle $c: the busy writer ended with $rc, not by failing"
	umount $MNT || fatal "cycle $c: umount after rmdir"
}

# raw_fio NAME SECS: fio random read/write on the fairq disk, in the background
raw_fio() {
	fio --output="$1.out" --filename=/dev/$FQ --direct=1 --ioengine=libaio \
		--rw=randrw --bs=4k --iodepth=8 --size=16M --time_based --runtime="$2" \
		--name="$1" >/dev/null 2>&1 &
}

teardown_raw_busy() {
	local c=$1 pid t0 rc done0
	umount $MNT || fatal "cycle $c: umount"
	# done_reqs counts the whole cycle: wait for fio's own requests
	done0=$(stat_field $FQ done_reqs)
	raw_fio "raw$c" 60
	pid=$!
	wait_for stat_above $FQ done_reqs $((done0 + 100))
	expect_errno EBUSY "echo 0 > $CFS/$FQ/power"
	t0=$SECONDS
	rmdir "$CFS/$FQ" || fatal "cycle $c: rmdir under fio"
	wait $pid
	rc=$?
	[ $rc != 0 ] || fatal "cycle $c: fio succeeded although $FQ was removed under it"
	[ $((SECONDS - t0)) -le 20 ] || fatal "cycle $c: fio took $((SECONDS - t0)) s to end after rmdir"
}

teardown_power_race() {
	local c=$1 pid n=0 out done0
	umount $MNT || fatal "cycle $c: umount"
	done0=$(stat_field $FQ done_reqs)
	raw_fio "race$c" 2
	pid=$!
	wait_for stat_above $FQ done_reqs $((done0 + 50))
	until out=$( (echo 0 >"$CFS/$FQ/power") 2>&1); do
		case $out in
		*"Device or resource busy"*) ;;
		*) fatal "cycle $c: power=0 as fio closes: '$out', expected EBUSY or success" ;;
		esac
		n=$((n + 1))
		[ $n -lt 3000 ] || fatal "cycle $c: power=0 still refused after 3000 tries (fio runs 2 s)"
		sleep 0.01
	done
	wait $pid || fatal "cycle $c: fio failed although power=0 waited for its close"
	rmdir "$CFS/$FQ" || fatal "cycle $c: rmdir"
	RACE_TRIES=$n
}

# racers CYCLE: two racers over four devices, opposite orders
racers() {
	local c=$1 i p1 p2 bad
	: >racer.err
	config_racer fq250 "$NB" 1 0 1 2 3 &
	p1=$!
	config_racer fq250 "$NB" 1 3 2 1 0 &
	p2=$!
	wait $p1 $p2
	bad=$(grep -v -e "File exists" -e "No such file or directory" \
		-e "Device or resource busy" racer.err | head -n 3)
	[ -z "$bad" ] || fatal "cycle $c: racers: unexpected errors: $bad"
	[ -z "$(ls "$CFS")" ] || fatal "cycle $c: racers left entries: $(ls "$CFS")"
	for i in 0 1 2 3; do
		[ -z "$(ls /sys/block/${NB}_$i/holders)" ] || fatal "cycle $c: ${NB}_$i still claimed"
	done
	RACES=$(wc -l <racer.err)
}

cycle() {
	local c=$1 pol=${POLS[$1 % 3]} cls=${CLS[$1 / 3 % 4]} td=${TEARDOWNS[$1 % 4]} t0=$SECONDS
	local nfiles w1 w2 i
	RACE_TRIES=""
	null_blk_create $NB memory_backed=1 size=96
	for i in 0 1 2 3; do
		null_blk_create ${NB}_$i size=16
	done
	fairq_create $FQ /dev/$NB policy="$pol" classify="$cls" depth=$((c % 3 * 8 + 4)) \
		idle_us=$((c % 2 * 3000))
	mkfs.ext4 -q -F /dev/$FQ || fatal "cycle $c: mkfs.ext4"
	mount -t ext4 /dev/$FQ $MNT || fatal "cycle $c: mount"
	mkdir -p $MNT/u1000 && chown 1000:1000 $MNT/u1000 || fatal "cycle $c: mkdir u1000"
	in_cgroup l250-a bash -c "$(declare -f writer); writer $MNT/u0 12 1" &
	w1=$!
	in_cgroup l250-b setpriv --reuid=1000 --regid=1000 --clear-groups \
		bash -c "$(declare -f writer); writer $MNT/u1000 12 0" &
	w2=$!
	wait $w1 || fatal "cycle $c: writer (uid 0, fsync) failed"
	wait $w2 || fatal "cycle $c: writer (uid 1000) failed"
	manifest >before
	nfiles=$(wc -l <before)
	[ "$nfiles" = 24 ] || fatal "cycle $c: $nfiles files written, expected 24"
	umount $MNT || fatal "cycle $c: umount"
	e2fsck -fn /dev/$FQ >fsck.out 2>&1 || { cat fsck.out; fatal "cycle $c: e2fsck -fn not clean"; }
	mount -t ext4 /dev/$FQ $MNT || fatal "cycle $c: remount"
	manifest >after
	cmp -s before after || { diff before after | head -n 4; fatal "cycle $c: checksums differ after remount"; }
	[ "$(stat_field $FQ classify)" = "$cls" ] || fatal "cycle $c: classify is $(stat_field $FQ classify), set $cls"
	"teardown_${td//-/_}" "$c"
	not_held "$c"
	racers "$c"
	rmmod_fairq "$c"
	for i in 3 2 1 0; do
		null_blk_destroy ${NB}_$i
	done
	null_blk_destroy $NB
	log "cycle $c: $pol/$cls, $td${RACE_TRIES:+ ($RACE_TRIES EBUSY before the power-off)}: $nfiles files verified; racers: $RACES lost races; $((SECONDS - t0)) s"
	echo $((SECONDS - t0)) >>cycle.secs
}

# the background load: fio on vdc raw for the whole test
load_start() {
	fio --output=load.out --filename=/dev/vdc --direct=1 --ioengine=libaio \
		--rw=randrw --bs=16k --iodepth=4 --size=128M --time_based --runtime=86400 \
		--name=load >/dev/null 2>&1 &
	LOAD_FIO=$!
	stall_ignore "$LOAD_FIO" vdc
}

load_stop() {
	kill -0 "$LOAD_FIO" 2>/dev/null || fatal "the background fio on vdc ended early: $(tail -c 300 load.out)"
	kill "$LOAD_FIO"
	wait "$LOAD_FIO" 2>/dev/null
}

require_cmd fio mkfs.ext4 e2fsck setpriv sha256sum
mkdir -p $MNT "$CG/l250-a" "$CG/l250-b" || fatal "mkdir"
cleanup_push rmdir "$CG/l250-a" "$CG/l250-b"
cleanup_push null_blk_destroy $NB
for i in 0 1 2 3; do
	cleanup_push null_blk_destroy ${NB}_$i
	cleanup_push fairq_destroy fq250-$i
done
cleanup_push fairq_destroy $FQ
cleanup_push "! mountpoint -q $MNT || umount $MNT"
rm -f cycle.secs
load_fairq
log "$CYCLES cycles; background: fio randrw on vdc"
load_start
for ((c = 0; c < CYCLES; c++)); do
	cycle "$c"
done
load_stop
sort -n cycle.secs | awk '{ s[NR] = $1; t += $1 } END {
	printf "250: %d cycles in %d s: min %d s, median %d s, max %d s\n", NR, t, s[1], s[int((NR + 1) / 2)], s[NR] }'
