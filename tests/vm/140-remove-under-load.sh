#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Removal and control under load (fault test 5 of 7).  Tried here:
#  - power=0 and rmmod while fio runs on fairq0 (both refused: EBUSY and
#    "in use"), then rmdir while fio runs (configfs cannot refuse: the disk
#    is torn down, fio ends with errors in bounded time, the lower device
#    is released and holds what fio had completed);
#  - the same while ext4 is mounted on fairq0 with a writer in it: power=0
#    EBUSY, rmmod refused, rmdir tears down, the writer fails, umount
#    works, rmmod is refused until the umount and works after it;
#  - 16 devices created and destroyed in a loop by two processes at once,
#    in opposite orders (each step may lose the race: only EEXIST, ENOENT
#    and EBUSY - backing written while the other racer has the entry
#    powered - are acceptable), ending with no entry, no disk and no lower
#    device still claimed;
#  - every tunable and the policy rewritten with random valid values by
#    two writers in tight loops, one per vCPU, during a fio write+verify
#    (crc32c, verify_backlog) with one job per vCPU: no refusal, zero
#    verify errors.
DESCRIPTION="power=0/rmdir/rmmod under fio and mounted; 16 devs x 2 racers; tunable storm under verify"
TIMEOUT=420
# shellcheck source=rc
. /fairq/tests/vm/rc
# shellcheck source=faultrc
. /fairq/tests/vm/faultrc

CFS=$FAIRQ_CONFIGFS
NB=nullb140
MNT=/tmp/140-mnt

rmmod_refused() {
	local out
	if out=$(rmmod fairq 2>&1); then
		fatal "rmmod fairq succeeded $1"
	fi
	[ -d /sys/module/fairq ] || fatal "fairq gone after a refused rmmod"
	case $out in
	*"in use"*) ;;
	*) fatal "rmmod $1: '$out', expected 'in use'" ;;
	esac
}

test_under_fio() {
	local pid t0 rc
	fairq_create fairq0 /dev/$NB depth=8
	fio --output=fio-rm.out --filename=/dev/fairq0 --direct=1 --ioengine=libaio \
		--rw=randrw --bs=4k --iodepth=16 --size=32M --time_based --runtime=60 \
		--name=rm >/dev/null 2>&1 &
	pid=$!
	wait_for stat_above fairq0 done_reqs 200
	expect_errno EBUSY "echo 0 > $CFS/fairq0/power"
	rmmod_refused "while fio runs on fairq0"
	[ "$(cat "$CFS"/fairq0/power)" = 1 ] || fatal "fairq0 off after refusals"
	t0=$(cut -d. -f1 /proc/uptime)
	rmdir "$CFS"/fairq0 || fatal "rmdir under fio"
	wait $pid
	rc=$?
	[ $rc != 0 ] || fatal "fio succeeded although fairq0 was removed under it"
	[ $(($(cut -d. -f1 /proc/uptime) - t0)) -le 20 ] || fatal "fio took too long to end"
	[ ! -e /sys/block/fairq0 ] || fatal "fairq0 still registered"
	[ -z "$(ls /sys/block/$NB/holders)" ] || fatal "$NB still held: $(ls /sys/block/$NB/holders)"
	log "fio: power=0 EBUSY, rmmod refused, rmdir tore down; fio ended (rc $rc)"
}

test_mounted() {
	local pid rc
	fairq_create fairq0 /dev/$NB
	mkfs.ext4 -q -F /dev/fairq0 || fatal "mkfs.ext4"
	mkdir -p $MNT
	mount /dev/fairq0 $MNT || fatal "mount"
	(
		i=0
		while dd if=/dev/zero of=$MNT/f$((i % 8)) bs=256k count=4 conv=fsync status=none 2>/dev/null; do
			i=$((i + 1))
		done
		exit 3
	) &
	pid=$!
	wait_for stat_above fairq0 done_reqs 100
	expect_errno EBUSY "echo 0 > $CFS/fairq0/power"
	rmmod_refused "while fairq0 is mounted"
	rmdir "$CFS"/fairq0 || fatal "rmdir while mounted"
	wait $pid
	rc=$?
	[ $rc = 3 ] || fatal "mounted: writer ended with $rc"
	rmmod_refused "while a removed fairq0 is still mounted"
	umount $MNT || fatal "umount after rmdir"
	[ -z "$(ls /sys/block/$NB/holders)" ] || fatal "$NB still held after umount"
	rmmod fairq || fatal "rmmod after umount"
	load_fairq
	log "mounted: power=0 EBUSY, rmmod refused, rmdir ok, writer failed, umount, rmmod ok"
}

test_racers() {
	local i bad
	for i in $(seq 0 15); do
		null_blk_create ${NB}_"$i" size=16
		cleanup_push null_blk_destroy ${NB}_"$i"
	done
	: >racer.err
	config_racer fq140 "$NB" 2 $(seq 0 15) &
	local p1=$!
	config_racer fq140 "$NB" 2 $(seq 15 -1 0) &
	local p2=$!
	wait $p1 $p2
	bad=$(grep -v -e "File exists" -e "No such file or directory" \
		-e "Device or resource busy" racer.err | head -n 3)
	[ -z "$bad" ] || fatal "racers: unexpected errors: $bad"
	[ -z "$(ls "$CFS")" ] || fatal "racers left entries: $(ls "$CFS")"
	for i in $(seq 0 15); do
		[ ! -e /sys/block/fq140-"$i" ] || fatal "fq140-$i still registered"
		[ -z "$(ls /sys/block/${NB}_"$i"/holders)" ] || fatal "${NB}_$i still claimed"
	done
	fairq_create fq140-3 /dev/${NB}_3
	dd if=/dev/zero of=/dev/fq140-3 bs=64k count=16 oflag=direct status=none || fatal "fq140-3 I/O"
	fairq_destroy fq140-3
	log "16 devices x 2 racers x 2 rounds: $(wc -l <racer.err) lost races, all EEXIST/ENOENT/EBUSY, nothing left"
}

# storm SEED: random valid tunable writes to fairq0 until stop exists
storm() {
	local n=0 refused=0 a v s=/sys/block/fairq0/fairq
	local pols=(cfq sfq fifo) fair=(requests bytes) cls=(tgid pid uid cgroup)
	RANDOM=$1
	while [ ! -e stop ]; do
		case $((RANDOM % 12)) in
		0) a=policy v=${pols[RANDOM % 3]} ;;
		1) a=fairness v=${fair[RANDOM % 2]} ;;
		2) a=classify v=${cls[RANDOM % 4]} ;;
		3) a=quantum v=$((RANDOM % 64 + 1)) ;;
		4) a=quantum_bytes v=$((4096 + RANDOM * 32)) ;;
		5) a=buckets v=$((1 << (RANDOM % 7))) ;;
		6) a=perturb_ms v=$((RANDOM % 100)) ;;
		7) a=depth v=$((RANDOM % 64 + 1)) ;;
		8) a=idle_us v=$((RANDOM % 2000)) ;;
		9) a=idle_grace_ms v=$((RANDOM % 200)) ;;
		10) a=fifo_expire_sync_ms v=$((RANDOM % 500 + 1)) ;;
		11) a=fifo_expire_async_ms v=$((RANDOM % 500 + 1)) ;;
		esac
		printf '%s' "$v" >"$s/$a" 2>>storm.err || refused=$((refused + 1))
		n=$((n + 1))
	done
	echo "$n $refused" >"storm.$1"
}

test_storm() {
	local seed1=$RANDOM seed2=$RANDOM pid w1 w2 verr ncpu
	ncpu=$(nproc)
	fairq_create fairq0 /dev/$NB depth=16
	rm -f stop storm.err
	log "storm seeds $seed1 $seed2 on $ncpu vCPUs"
	fio --output-format=json --output=fio-storm.json --filename=/dev/fairq0 \
		--direct=1 --ioengine=libaio --rw=randwrite --bs=4k --iodepth=8 \
		--verify=crc32c --verify_backlog=64 --verify_fatal=1 --size=8M \
		--numjobs=2 --offset_increment=8M --cpus_allowed=0-$((ncpu - 1)) \
		--cpus_allowed_policy=split --name=storm >/dev/null 2>fio-storm.err &
	pid=$!
	taskset -c 0 bash -c "$(declare -f storm); storm $seed1" &
	w1=$!
	taskset -c $((ncpu - 1)) bash -c "$(declare -f storm); storm $seed2" &
	w2=$!
	wait $pid
	verr=$?
	touch stop
	wait $w1 $w2
	[ $verr = 0 ] || fatal "fio verify under the storm failed (rc $verr): $(tail -c 300 fio-storm.err)"
	[ "$(fio_errs fio-storm.json)" = 0 ] || fatal "fio counted errors under the storm"
	read -r n1 r1 <storm.$seed1
	read -r n2 r2 <storm.$seed2
	[ "$r1" = 0 ] && [ "$r2" = 0 ] ||
		fatal "storm: valid writes refused ($r1, $r2): $(head -n 3 storm.err)"
	[ $((n1 + n2)) -gt 50 ] || fatal "storm: only $((n1 + n2)) writes"
	wait_idle fairq0
	fairq_destroy fairq0
	log "storm: $n1 + $n2 tunable writes during fio verify (2 x 8 MiB), 0 refused, 0 verify errors"
}

require_cmd fio mkfs.ext4 taskset
null_blk_create $NB memory_backed=1 size=64
cleanup_push null_blk_destroy $NB
load_fairq
test_under_fio
test_mounted
test_storm
test_racers
