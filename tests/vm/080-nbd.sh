#!/bin/bash
# fairq0 over /dev/nbd0 served by the project's fairq-nbd inside the guest
# (unix socket), with its device model making a slow disk (2 ms per
# request, 4 at once).  fio write+verify through fairq0; the export file,
# read directly, must hold what fairq0 returned.  Then the server is
# killed mid-I/O: I/O through fairq0 must fail (EIO), not hang, fairq0
# must power off, and nbd0 must reconnect to a new server.
DESCRIPTION="fairq over nbd (fairq-nbd): verify, server killed under I/O"
TIMEOUT=600
# shellcheck source=rc
. /fairq/tests/vm/rc

# nbd_create's names are /tmp/080-nbd.*: other tests in the same boot
# use /tmp too
NBD_ARGS=(--latency-us 2000 --depth 4)

region_sum() {
	dd if="$1" bs=1M count=16 iflag="$2" status=none | sha256sum | cut -d' ' -f1
}

require_cmd fairq-nbd nbd-client
load_fairq
nbd_create 080-nbd 128M "${NBD_ARGS[@]}"
fairq_create fairq0 /dev/nbd0 policy=sfq depth=8

fio --minimal --output=/tmp/fio.out --filename=/dev/fairq0 --direct=1 \
	--ioengine=libaio --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--size=8M --name=a --rw=randwrite --bs=4k --iodepth=8 --offset=0 \
	--name=b --rw=write --bs=128k --iodepth=2 --offset=8M ||
	{ cat /tmp/fio.out; fatal "fio verify over nbd failed"; }
upper=$(region_sum /dev/fairq0 direct)
fairq_destroy fairq0
nbd_disconnect
lower=$(region_sum "$NBD_IMG" fullblock)
[ "$upper" = "$lower" ] || fatal "fairq0 read $upper, the export file holds $lower"
echo "fio verify over fairq0/nbd0/fairq-nbd passed; export file matches"

# kill the server while fio runs; the nbd timeout (5 s) fails the I/O
nbd_connect
fairq_create fairq0 /dev/nbd0
fio --minimal --output=/tmp/fio2.out --filename=/dev/fairq0 --direct=1 \
	--ioengine=libaio --rw=randread --bs=4k --iodepth=16 --size=8M \
	--time_based --runtime=60 --name=busy >/dev/null 2>&1 &
FIO_PID=$!
wait_for stat_above fairq0 done_reqs 100
kill -9 "$NBD_PID"
wait "$FIO_PID" && fatal "fio succeeded although its server was killed"
echo "fio failed as it should once the server died"
if dd if=/dev/fairq0 of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null; then
	fatal "read through fairq0 succeeded with the server dead"
fi
[ "$(stat_field fairq0 queued)" = 0 ] || fatal "requests stuck in fairq0"
[ "$(stat_field fairq0 inflight)" = 0 ] || fatal "requests stuck in flight"
[ "$(stat_field fairq0 errors)" -gt 0 ] || fatal "no errors counted"
fairq_destroy fairq0
nbd_disconnect
nbd_serve 080-nbd 128M "${NBD_ARGS[@]}"
nbd_connect
[ "$(region_sum /dev/nbd0 direct)" = "$lower" ] || fatal "data changed across the server restart"
nbd_destroy
echo "server killed under I/O: errors reported, nothing stuck, data intact after restart"
unload_fairq
