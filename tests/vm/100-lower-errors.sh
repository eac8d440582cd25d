#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lower-device errors (fault test 1 of 7).  fairq0 sits on a dm device over
# a 64 MiB memory-backed null_blk whose table is swapped under fairq0
# (dmsetup suspend/load/resume) to:
#  - flakey error_writes (always down): every write fails; the submitter
#    (dd, fio) must see EIO for each one, fairq's stats must count exactly
#    as many errors as fio saw, reads keep working and return the old data;
#  - flakey drop_writes: the lower device acks writes it throws away; fairq
#    must pass the success up, count no error, and the old data stays;
#  - flakey corrupt_bio_byte on writes: fairq must store and return
#    exactly what the lower device made of each bio (one corrupted byte
#    per 4 KiB bio, at the same offset);
#  - flakey error_writes in 1 s windows while fio writes: the errors fio
#    counts equal the errors fairq counts, some writes succeed;
#  - `error` swapped in mid-run under fio verify: fio fails in bounded
#    time with EIO, nothing stays queued or in flight;
# and after each fault the table goes back to linear and fairq0 must serve
# again: data written before the faults and after them verifies.
DESCRIPTION="lower-device errors: dm-flakey error/drop/corrupt, table switched to error"
TIMEOUT=300
# shellcheck source=rc
. /fairq/tests/vm/rc
# shellcheck source=faultrc
. /fairq/tests/vm/faultrc

NB=nullb100
DM=fq100
FQ=fairq0
SECTORS=$((64 * 2048))
LINEAR="0 $SECTORS linear /dev/$NB 0"

# flakey UP DOWN FEATURES...: a flakey table over the null_blk
flakey() {
	local up=$1 down=$2
	shift 2
	echo "0 $SECTORS flakey /dev/$NB 0 $up $down $# $*"
}

setup() {
	require_cmd dmsetup fio
	require_module dm-mod dm-flakey
	null_blk_create $NB memory_backed=1 size=64
	cleanup_push null_blk_destroy $NB
	dmsetup create $DM --table "$LINEAR" || fatal "dmsetup create $DM"
	cleanup_push dmsetup remove --force $DM
	wait_for_file /dev/mapper/$DM || fatal "/dev/mapper/$DM missing"
	fairq_create $FQ /dev/mapper/$DM depth=8
	cleanup_push fairq_destroy $FQ
	# 4 MiB of known data at 0: must survive every fault below
	dd if=/dev/urandom of=base bs=1M count=4 status=none
	dd if=base of=/dev/$FQ bs=64k oflag=direct status=none || fatal "base write failed"
	[ "$(region_sha /dev/$FQ 0 4096)" = "$(file_sha base)" ] || fatal "base data did not read back"
	log "base 4 MiB written through $FQ over dm linear"
}

# serves_again TAG: linear again; base intact, a fresh write reads back
serves_again() {
	local off_kb=$((8192 + RANDOM % 64 * 64))
	dm_swap $DM "$LINEAR"
	[ "$(region_sha /dev/$FQ 0 4096)" = "$(file_sha base)" ] ||
		fatal "$1: base data changed"
	dd if=/dev/urandom of=fresh bs=64k count=16 status=none
	dd if=fresh of=/dev/$FQ bs=64k seek=$((off_kb / 64)) oflag=direct status=none ||
		fatal "$1: write after recovery failed"
	[ "$(region_sha /dev/$FQ "$off_kb" 1024)" = "$(file_sha fresh)" ] ||
		fatal "$1: data written after recovery did not read back"
	assert_idle $FQ
	log "$1: $FQ serves again, base data intact"
}

# fio_errwrite OUT SECS: 4k random writes in 4-8 MiB, errors counted, not fatal
fio_errwrite() {
	fio --output-format=json --output="$1" --filename=/dev/$FQ --direct=1 \
		--ioengine=libaio --rw=randwrite --bs=4k --iodepth=8 --offset=4M \
		--size=4M --continue_on_error=io --time_based --runtime="$2" \
		--name=errw 2>"$1.err" >/dev/null
}

test_error_writes() {
	local e0 e1 ferr
	dm_swap $DM "$(flakey 0 1 error_writes)"
	e0=$(stat_field $FQ errors)
	expect_eio dd if=/dev/zero of=/dev/$FQ bs=4k seek=1024 count=1 oflag=direct status=none
	fio_errwrite fio-ew.json 3
	ferr=$(fio_errs fio-ew.json)
	e1=$(stat_field $FQ errors)
	[ "$ferr" -gt 0 ] || fatal "error_writes: fio saw no errors"
	[ "$(fio_first_err fio-ew.json)" = 5 ] ||
		fatal "error_writes: fio's first error is errno '$(fio_first_err fio-ew.json)', not EIO (5)"
	[ $((e1 - e0)) = $((ferr + 1)) ] ||
		fatal "error_writes: fairq counted $((e1 - e0)) errors, dd+fio saw $((ferr + 1))"
	# reads are not failed by error_writes: old data comes back
	[ "$(region_sha /dev/$FQ 0 4096)" = "$(file_sha base)" ] ||
		fatal "error_writes: reads of the base data changed"
	assert_idle $FQ
	log "error_writes: dd EIO, fio $ferr EIO, fairq errors +$((e1 - e0))"
	serves_again error_writes
}

test_drop_writes() {
	local e0
	dd if=/dev/urandom of=drop bs=64k count=16 status=none
	dd if=drop of=/dev/$FQ bs=64k seek=$((16384 / 64)) oflag=direct status=none ||
		fatal "drop_writes: setup write failed"
	dm_swap $DM "$(flakey 0 1 drop_writes)"
	e0=$(stat_field $FQ errors)
	dd if=/dev/zero of=/dev/$FQ bs=64k seek=$((16384 / 64)) count=16 oflag=direct status=none ||
		fatal "drop_writes: a write the lower device acked failed through fairq"
	[ "$(stat_field $FQ errors)" = "$e0" ] || fatal "drop_writes: fairq counted errors"
	[ "$(region_sha /dev/$FQ 16384 1024)" = "$(file_sha drop)" ] ||
		fatal "drop_writes: dropped writes reached the disk"
	log "drop_writes: writes acked (as the lower device said), data unchanged, no errors"
	serves_again drop_writes
}

test_corrupt() {
	local n off bad
	# byte 32 of every written bio becomes 0x01
	dm_swap $DM "$(flakey 0 1 corrupt_bio_byte 32 w 1 0)"
	dd if=/dev/zero of=/dev/$FQ bs=4k seek=$((20480 / 4)) count=64 oflag=direct status=none ||
		fatal "corrupt: write failed"
	dm_swap $DM "$LINEAR"
	dd if=/dev/$FQ of=corrupt bs=4k skip=$((20480 / 4)) count=64 iflag=direct status=none ||
		fatal "corrupt: read back failed"
	n=$(tr -d '\000' <corrupt | wc -c)
	[ "$n" = 64 ] || fatal "corrupt: $n corrupted bytes in 64 bios, want 64"
	# all at the same place in their 4 KiB block
	bad=$(cmp -l /dev/zero corrupt 2>/dev/null | awk '{ print ($1 - 1) % 4096 }' | sort -u)
	[ "$bad" = 31 ] || fatal "corrupt: corrupted offsets within blocks: $bad"
	off=$(dd if=/dev/mapper/$DM bs=4k skip=$((20480 / 4)) count=64 iflag=direct status=none |
		sha256sum | cut -d' ' -f1)
	[ "$off" = "$(file_sha corrupt)" ] || fatal "corrupt: fairq and the lower device disagree"
	log "corrupt_bio_byte: one byte per 4 KiB bio, fairq returns the lower device's bytes"
	serves_again corrupt
}

test_windows() {
	local e0 e1 ferr wios
	dm_swap $DM "$(flakey 1 1 error_writes)"
	e0=$(stat_field $FQ errors)
	fio_errwrite fio-win.json 5
	e1=$(stat_field $FQ errors)
	ferr=$(fio_errs fio-win.json)
	wios=$(fio_ios fio-win.json write)
	[ "$ferr" -gt 0 ] || fatal "windows: fio saw no errors in 5 s of 1 s down windows"
	[ "$wios" -gt "$ferr" ] || fatal "windows: no write succeeded ($wios ios, $ferr errors)"
	[ $((e1 - e0)) = "$ferr" ] || fatal "windows: fairq counted $((e1 - e0)) errors, fio saw $ferr"
	assert_idle $FQ
	log "1 s windows: fio $wios writes, $ferr EIO, fairq errors +$((e1 - e0))"
	serves_again windows
}

test_switch_to_error() {
	local pid t0 t1 rc
	fio --output=fio-sw.out --filename=/dev/$FQ --direct=1 --ioengine=libaio \
		--rw=randrw --bs=4k --iodepth=16 --offset=24M --size=8M \
		--verify=crc32c --time_based --runtime=60 --name=sw >/dev/null 2>fio-sw.err &
	pid=$!
	wait_for stat_above $FQ done_reqs 300
	t0=$(cut -d. -f1 /proc/uptime)
	dm_swap $DM "0 $SECTORS error"
	wait $pid
	rc=$?
	t1=$(cut -d. -f1 /proc/uptime)
	[ "$rc" != 0 ] || fatal "switch to error: fio succeeded"
	[ $((t1 - t0)) -le 30 ] || fatal "switch to error: fio took $((t1 - t0)) s to fail"
	grep -q "Input/output error" fio-sw.err fio-sw.out ||
		fatal "switch to error: fio failed without EIO: $(tail -c 300 fio-sw.err)"
	expect_eio dd if=/dev/$FQ of=/dev/null bs=4k count=1 iflag=direct status=none
	wait_idle $FQ
	log "table switched to error under fio: EIO after $((t1 - t0)) s, nothing stuck"
	serves_again switch-to-error
}

setup
test_error_writes
test_drop_writes
test_corrupt
test_windows
test_switch_to_error
log "errors counted by fairq: $(stat_field $FQ errors)"
