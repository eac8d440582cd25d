#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Soak (fault test 7 of 7), kept out of `make check`: `make soak` (SOAK_MIN,
# default 30) or
#   vm/run --append fairq.soak_min=N --test-timeout $((N * 60 + 300)) tests/soak/soak.sh
# For SOAK_MIN minutes:
#  - fairq0 over vdb with ext4: three fio jobs verify what they write
#    (crc32c, verify_backlog): 4-64 KiB direct random writes, buffered
#    random writes with fsync, 128 KiB buffered sequential writes;
#  - fairq1 over vdc raw: two fio jobs (random 4 KiB and 256 KiB writes,
#    verified as they go), one cycle a minute: at each cycle's end fairq1
#    is powered off and on again (power=0, power=1), and a 4 MiB region
#    written once at the start must read back unchanged every time;
#  - every 3 s both devices switch policy (cfq, sfq, fifo in turn), and
#    fairness and classify every other switch.
# At the end: zero verify errors and zero fio errors, e2fsck -fn clean,
# both devices destroyed, and the bio slab caches (fairq's bio_set draws
# from one) hold no more objects than before the soak (after a shrink;
# a small slack for per-CPU slabs).
DESCRIPTION="soak: ext4 + raw fio verify, policy switches, a power cycle a minute"
# shellcheck source=../vm/rc
. /fairq/tests/vm/rc
# shellcheck source=../vm/faultrc
. /fairq/tests/vm/faultrc

MIN=$(sed -n 's/.*fairq\.soak_min=\([0-9]*\).*/\1/p' /proc/cmdline)
MIN=${MIN:-${SOAK_MIN:-30}}
SECS=$((MIN * 60))
MNT=/tmp/soak-mnt
CFS=$FAIRQ_CONFIGFS
SLACK=512

bio_objs() {
	local c
	sync
	echo 3 >/proc/sys/vm/drop_caches
	for c in $(bio_caches); do
		echo 1 >"/sys/kernel/slab/$c/shrink" 2>/dev/null
	done
	# shellcheck disable=SC2046
	slab_objs $(bio_caches)
}

# switcher: policies every 3 s on both devices until stop exists
switcher() {
	local n=0 pols=(cfq sfq fifo) fr=(requests bytes) cl=(tgid pid) d
	while [ ! -e stop ]; do
		for d in fairq0 fairq1; do
			[ -d /sys/block/$d/fairq ] || continue
			fairq_set $d policy "${pols[n % 3]}" 2>/dev/null
			if ((n % 2)); then
				fairq_set $d fairness "${fr[n / 2 % 2]}" 2>/dev/null
				fairq_set $d classify "${cl[n / 2 % 2]}" 2>/dev/null
			fi
		done
		n=$((n + 1))
		sleep 3
	done
	echo $n >switches
}

fio_ext4() {
	fio --output-format=json --output=ext4.json --directory=$MNT \
		--time_based --runtime=$SECS --verify=crc32c --verify_backlog=256 \
		--verify_fatal=1 --size=48M --ioengine=libaio \
		--name=rnd --rw=randwrite --bsrange=4k-64k --direct=1 --iodepth=8 \
		--name=buf --rw=randwrite --bs=4k --fsync=32 \
		--name=seq --rw=write --bs=128k --fsync=8 >/dev/null 2>ext4.err
}

# raw_cycle N: one minute (or what is left) of verified writes on fairq1
raw_cycle() {
	local t=$1
	fio --output-format=json --output=raw."$2".json --filename=/dev/fairq1 \
		--direct=1 --ioengine=libaio --time_based --runtime="$t" \
		--verify=crc32c --verify_backlog=128 --verify_fatal=1 \
		--name=r4k --rw=randwrite --bs=4k --iodepth=16 --offset=8M --size=64M \
		--name=r256k --rw=randwrite --bs=256k --iodepth=4 --offset=80M --size=64M \
		>/dev/null 2>>raw.err
}

main() {
	local base0 base1 sw ext_pid t0 left cycle=0 rc e
	require_cmd fio mkfs.ext4 e2fsck
	log "soak: $MIN min"
	load_fairq
	base0=$(bio_objs)
	fairq_create fairq0 /dev/vdb
	fairq_create fairq1 /dev/vdc
	mkfs.ext4 -q -F /dev/fairq0 || fatal "mkfs.ext4"
	mkdir -p $MNT
	mount /dev/fairq0 $MNT || fatal "mount"
	dd if=/dev/urandom of=keep bs=1M count=4 status=none
	dd if=keep of=/dev/fairq1 bs=1M oflag=direct status=none || fatal "keep region"
	rm -f stop
	switcher &
	sw=$!
	fio_ext4 &
	ext_pid=$!
	t0=$(cut -d. -f1 /proc/uptime)
	while :; do
		left=$((SECS - ($(cut -d. -f1 /proc/uptime) - t0)))
		((left > 5)) || break
		((left > 60)) && left=60
		cycle=$((cycle + 1))
		raw_cycle "$left" "$cycle" || fatal "raw fio cycle $cycle failed: $(tail -c 300 raw.err)"
		e=$(fio_errs raw.$cycle.json)
		[ "$e" = 0 ] || fatal "raw cycle $cycle: $e errors"
		wait_idle fairq1 30
		echo 0 >"$CFS"/fairq1/power || fatal "power=0 of fairq1 (cycle $cycle)"
		echo 1 >"$CFS"/fairq1/power || fatal "power=1 of fairq1 (cycle $cycle)"
		wait_for_file /dev/fairq1 || fatal "/dev/fairq1 back"
		[ "$(region_sha /dev/fairq1 0 4096)" = "$(file_sha keep)" ] ||
			fatal "fairq1's kept region changed after power cycle $cycle"
		log "cycle $cycle: raw verify clean, fairq1 power-cycled, kept region intact"
	done
	wait $ext_pid
	rc=$?
	touch stop
	wait $sw
	[ $rc = 0 ] || fatal "ext4 fio verify failed (rc $rc): $(tail -c 300 ext4.err)"
	[ "$(fio_errs ext4.json)" = 0 ] || fatal "ext4 fio counted errors"
	umount $MNT || fatal "umount"
	e2fsck -fn /dev/fairq0 >fsck.out 2>&1 || fatal "e2fsck -fn: $(tail -n 5 fsck.out)"
	log "ext4: $(fio_ios ext4.json write) writes verified; e2fsck -fn clean; $(cat switches) policy rounds"
	log "fairq0 stats: $(tr '\n' ' ' </sys/block/fairq0/fairq/stats | cut -c1-400)"
	fairq_destroy fairq0
	fairq_destroy fairq1
	base1=$(bio_objs)
	log "bio slab objects: $base0 before, $base1 after destroy"
	((base1 <= base0 + SLACK)) || fatal "bio slab objects $base0 -> $base1 after destroy"
	unload_fairq
	log "soak of $MIN min passed: $cycle power cycles"
}

main
