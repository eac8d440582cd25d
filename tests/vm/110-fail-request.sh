#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Injected request failures (fault test 2 of 7): fail_make_request on the
# lower disk (a memory-backed null_blk) at 5 %, while fio writes and then
# reads through fairq0 with errors counted, not fatal.  Every injected
# failure hits one of fairq's clones (nothing else does I/O on the lower
# disk meanwhile), so the failures the fault injector counts, the errors
# fairq counts and the EIOs fio saw must all be the same number; fairq0
# must drain (queued/inflight 0), and once injection stops the data written
# before it and a fresh verified fio run must be intact.
# Needs CONFIG_FAIL_MAKE_REQUEST (debugfs fail_make_request): Debian's
# kernel has none, so this skips there and runs on the debug kernel.
DESCRIPTION="fail_make_request at 5 % on the lower disk: errors only where injected, drains"
TIMEOUT=300
# shellcheck source=rc
. /fairq/tests/vm/rc
# shellcheck source=faultrc
. /fairq/tests/vm/faultrc

FI=/sys/kernel/debug/fail_make_request
NB=nullb110
FQ=fairq0
TIMES=100000000

[ -d $FI ] || skip_all "no $FI: kernel without CONFIG_FAIL_MAKE_REQUEST (runs on the debug kernel)"
require_cmd fio

inject_off() {
	echo 0 >/sys/block/$NB/make-it-fail 2>/dev/null
	echo 0 >$FI/probability
}

# fio_inject RW OUT: 3 s of 4 KiB RW in 4-12 MiB, errors counted; checks counts
fio_inject() {
	local rw=$1 out=$2 e0 e1 t0 t1 ferr ios
	e0=$(stat_field $FQ errors)
	t0=$(cat $FI/times)
	fio --output-format=json --output="$out" --filename=/dev/$FQ --direct=1 \
		--ioengine=libaio --rw="$rw" --bs=4k --iodepth=8 --offset=4M --size=8M \
		--continue_on_error=io --time_based --runtime=3 --name=fi >/dev/null 2>&1
	wait_idle $FQ
	t1=$(cat $FI/times)
	e1=$(stat_field $FQ errors)
	ferr=$(fio_errs "$out")
	ios=$(fio_ios "$out" "${rw#rand}")
	[ "$ferr" -gt 0 ] || fatal "$rw: no error seen at 5 % over $ios I/Os"
	[ "$ferr" -lt "$ios" ] || fatal "$rw: every I/O failed ($ferr of $ios)"
	[ "$(fio_first_err "$out")" = 5 ] || fatal "$rw: fio's first error is not EIO"
	[ $((t0 - t1)) = "$ferr" ] || fatal "$rw: $((t0 - t1)) failures injected, fio saw $ferr"
	[ $((e1 - e0)) = "$ferr" ] || fatal "$rw: fairq counted $((e1 - e0)) errors, fio saw $ferr"
	log "$rw: $ios I/Os, $ferr injected = fio EIO = fairq errors"
}

null_blk_create $NB memory_backed=1 size=64
cleanup_push null_blk_destroy $NB
fairq_create $FQ /dev/$NB depth=8
cleanup_push fairq_destroy $FQ
cleanup_push inject_off
dd if=/dev/urandom of=base bs=1M count=4 status=none
dd if=base of=/dev/$FQ bs=64k oflag=direct status=none || fatal "base write"

echo 5 >$FI/probability
echo 1 >$FI/interval
echo $TIMES >$FI/times
echo 0 >$FI/space
echo 0 >$FI/verbose
echo 1 >/sys/block/$NB/make-it-fail
fio_inject randwrite fi-w.json
fio_inject randread fi-r.json
inject_off

[ "$(region_sha /dev/$FQ 0 4096)" = "$(file_sha base)" ] || fatal "base data changed"
fio --output=fi-v.out --filename=/dev/$FQ --direct=1 --ioengine=libaio \
	--rw=randwrite --bs=4k --iodepth=8 --offset=4M --size=8M --verify=crc32c \
	--verify_fatal=1 --name=v >/dev/null 2>&1 || fatal "verify after injection stopped"
assert_idle $FQ
log "injection off: base data intact, fio verify clean"
