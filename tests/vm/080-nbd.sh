#!/bin/bash
# fairq0 over /dev/nbd0 served by the project's fairq-nbd inside the guest
# (unix socket), with its device model making a slow disk (2 ms per
# request, 4 at once).  fio write+verify through fairq0; the export file,
# read directly, must hold what fairq0 returned.  Then the server is
# killed mid-I/O: I/O through fairq0 must fail (EIO), not hang, fairq0
# must power off, and nbd0 must reconnect to a new server.
DESCRIPTION="fairq over nbd (fairq-nbd): verify, server killed under I/O"
TIMEOUT=600
. /fairq/tests/vm/rc

# names of its own: other tests in the same boot use /tmp too
SOCK=/tmp/080-nbd.sock
IMG=/tmp/080-nbd.img
LOG=/tmp/080-nbd.log

start_server() {
	rm -f "$SOCK"
	fairq-nbd --unix "$SOCK" --size 128M --latency-us 2000 --depth 4 \
		"$IMG" >>"$LOG" 2>&1 &
	NBD_PID=$!
	wait_for server_listening
	nbd-client -unix "$SOCK" /dev/nbd0 -b 4096 -t 5 >/dev/null ||
		fail "nbd-client could not connect: $(cat "$LOG")"
	wait_for nbd0_sized
}

server_listening() {
	[ -S "$SOCK" ] && return 0
	kill -0 "$NBD_PID" 2>/dev/null || fail "fairq-nbd exited: $(cat "$LOG")"
	return 1
}

nbd0_sized() {
	[ "$(cat /sys/block/nbd0/size)" -gt 0 ]
}

region_sum() {
	dd if="$1" bs=1M count=16 iflag="$2" status=none | sha256sum | cut -d' ' -f1
}

require_cmd fairq-nbd nbd-client
modprobe nbd nbds_max=2 || skip "no nbd module"
ip link set lo up 2>/dev/null || true
load_fairq
start_server
fairq_create fairq0 /dev/nbd0 policy=sfq depth=8

fio --minimal --output=/tmp/fio.out --filename=/dev/fairq0 --direct=1 \
	--ioengine=libaio --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--size=8M --name=a --rw=randwrite --bs=4k --iodepth=8 --offset=0 \
	--name=b --rw=write --bs=128k --iodepth=2 --offset=8M ||
	{ cat /tmp/fio.out; fail "fio verify over nbd failed"; }
upper=$(region_sum /dev/fairq0 direct)
fairq_destroy fairq0
nbd-client -d /dev/nbd0 >/dev/null
wait_for_gone_size() { [ "$(cat /sys/block/nbd0/size)" = 0 ]; }
wait_for wait_for_gone_size
lower=$(region_sum "$IMG" fullblock)
[ "$upper" = "$lower" ] || fail "fairq0 read $upper, the export file holds $lower"
echo "fio verify over fairq0/nbd0/fairq-nbd passed; export file matches"

# kill the server while fio runs; the nbd timeout (5 s) fails the I/O
nbd-client -unix "$SOCK" /dev/nbd0 -b 4096 -t 5 >/dev/null || fail "reconnect failed"
wait_for nbd0_sized
fairq_create fairq0 /dev/nbd0
fio --minimal --output=/tmp/fio2.out --filename=/dev/fairq0 --direct=1 \
	--ioengine=libaio --rw=randread --bs=4k --iodepth=16 --size=8M \
	--time_based --runtime=60 --name=busy >/dev/null 2>&1 &
FIO_PID=$!
wait_for stat_above fairq0 done_reqs 100
kill -9 "$NBD_PID"
wait "$FIO_PID" && fail "fio succeeded although its server was killed"
echo "fio failed as it should once the server died"
if dd if=/dev/fairq0 of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null; then
	fail "read through fairq0 succeeded with the server dead"
fi
[ "$(stat_field fairq0 queued)" = 0 ] || fail "requests stuck in fairq0"
[ "$(stat_field fairq0 inflight)" = 0 ] || fail "requests stuck in flight"
[ "$(stat_field fairq0 errors)" -gt 0 ] || fail "no errors counted"
fairq_destroy fairq0
nbd-client -d /dev/nbd0 >/dev/null 2>&1 || true
wait_for wait_for_gone_size
start_server
[ "$(region_sum /dev/nbd0 direct)" = "$lower" ] || fail "data changed across the server restart"
nbd-client -d /dev/nbd0 >/dev/null
kill "$NBD_PID"
wait "$NBD_PID" || fail "fairq-nbd did not exit 0 on SIGTERM"
rm -f "$IMG"
echo "server killed under I/O: errors reported, nothing stuck, data intact after restart"
unload_fairq
