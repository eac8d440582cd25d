#!/bin/bash
# Policy and tunable switches every ~100 ms while a verified fio run goes
# on through fairq0: no I/O error, fio's crc32c verify passes, every
# request the core accepted is completed (enq_reqs == done_reqs at the
# end) and nothing is left queued or in flight.
DESCRIPTION="switch policy/tunables every 100 ms under verified I/O"
TIMEOUT=600
# shellcheck source=rc
. /fairq/tests/vm/rc

SETTINGS="policy=sfq depth=4 policy=fifo fairness=bytes policy=cfq quantum=2
buckets=16 idle_us=500 policy=sfq perturb_ms=50 depth=32 fairness=requests
classify=pid quantum=8 idle_us=0 classify=tgid buckets=64 policy=cfq
fifo_expire_sync_ms=50 fifo_expire_async_ms=100 idle_grace_ms=10
depth=auto fairness=time depth_max=8 quantum_us=200 policy=sfq depth_max=256
depth=16 depth=auto fairness=requests quantum_us=1000"

switcher() {
	local kv n=0
	while [ ! -e /tmp/switch.stop ]; do
		for kv in $SETTINGS; do
			fairq_set fairq0 "${kv%%=*}" "${kv#*=}" || echo "set $kv failed" >>/tmp/switch.err
			n=$((n + 1))
			sleep 0.1
		done
	done
	echo "$n" >/tmp/switch.count
}

load_fairq
fairq_create fairq0 /dev/vdb
rm -f /tmp/switch.stop /tmp/switch.err
switcher &
fio --minimal --output=/tmp/fio.out --filename=/dev/fairq0 --direct=1 \
	--ioengine=libaio --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--size=24M --name=a --rw=randwrite --bs=4k --iodepth=16 --offset=0 \
	--name=b --rw=randwrite --bsrange=4k-128k --iodepth=8 --offset=24M \
	--name=c --rw=write --bs=256k --iodepth=4 --offset=48M
rc=$?
touch /tmp/switch.stop
wait
[ "$rc" = 0 ] || { cat /tmp/fio.out; fatal "fio verify failed while switching"; }
[ ! -s /tmp/switch.err ] && echo "no valid setting was refused" ||
	fatal "a valid setting was refused: $(cat /tmp/switch.err)"
count=$(cat /tmp/switch.count)
[ "$count" -ge 20 ] || fatal "only $count switches happened"
enq=$(stat_field fairq0 enq_reqs)
done_=$(stat_field fairq0 done_reqs)
[ "$enq" = "$done_" ] || fatal "enq_reqs $enq != done_reqs $done_"
[ "$(stat_field fairq0 queued)" = 0 ] || fatal "requests left queued"
[ "$(stat_field fairq0 inflight)" = 0 ] || fatal "requests left in flight"
[ "$(stat_field fairq0 errors)" = 0 ] || fatal "errors counted"
echo "$count switches during verified I/O, $enq requests, all completed"
fairq_destroy fairq0
unload_fairq
