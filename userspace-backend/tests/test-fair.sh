#!/bin/bash
# test-fair.sh - --fair cfq|sfq runs the sched/ core in the server, one
# flow per connection.  Data first: patterns round-trip through both
# policies.  Then fairness on a slow disk (--iops 1000 --depth 1): a
# heavy client (16 in flight) and a light one (1 in flight, 100 reads).
# FIFO serves the light client about 1 request in 17 (~1.7 s for 100);
# cfq with quantum=1 alternates flows, ~1 in 2 (~0.2 s).  Assert that
# cfq serves the light client at least 2.5x faster than FIFO.
source "$(dirname "$0")/functions.sh"
requires qemu-img --version
"$server" --help | grep -q -- --fair-set || fatal "--help lacks --fair-set"
"$server" --version | grep -q "fair=yes" ||
	skip_all "fairq-nbd built without ../sched (FAIR=no)"

for pol in cfq sfq; do
	start_server --size 32M --fair $pol "$disk"
	qio_ok "write -P 0x3c 0 4M" "write -P 0x3d 4M 4M" "flush" "discard 8M 1M" \
	       "read -P 0x3c 0 4M" "read -P 0x3d 4M 4M"
	qemu-img bench -f raw -w -c 2000 -d 16 -s 4096 -o 16M --pattern=0x44 "$uri" >/dev/null ||
		fatal "$pol: bench"
	qio_ok "read -P 0x44 16M 4k" "read -P 0x3d 4M 4M"
	stop_server
	! grep -q "WARN_ON_ONCE" "$log" || fatal "$pol: sched core warned: $(grep WARN "$log")"
done

# light_secs ARGS...: time for the light client while the heavy one runs;
# $heavy_io and $light_io shape their requests
heavy_io="-s 4096" light_io="-s 4096 -o 32M"
light_secs()
{
	local heavy secs
	start_server --size 64M --iops 1000 --depth 1 "$@" "$disk"
	# shellcheck disable=SC2086 # word splitting wanted
	qemu-img bench -f raw -c 100000 -d 16 $heavy_io "$uri" >/dev/null 2>&1 &
	heavy=$!
	sleep 0.3
	# shellcheck disable=SC2086
	secs=$(bench_secs -c 100 -d 1 $light_io)
	kill "$heavy" 2>/dev/null; wait "$heavy" 2>/dev/null || :
	stop_server
	echo "$secs"
}
fifo=$(light_secs)
cfq=$(light_secs --fair cfq --fair-set quantum=1)
echo "figure: light client, 100 reads beside a 16-deep one: fifo=${fifo}s cfq(quantum=1)=${cfq}s"
awk -v f="$fifo" -v c="$cfq" 'BEGIN { exit !(f >= 2.5 * c) }' ||
	fatal "cfq not fairer than fifo (fifo=${fifo}s cfq=${cfq}s)"

# The same with both clients at unaligned offsets and lengths under
# --cache=none: the heavy one writes (each a read-modify-write under the
# range lock), the light one reads; the shares hold.
heavy_io="-w -s 4099 -o 1001 -S 8195" light_io="-s 4097 -o 33554435"
fifo=$(light_secs --cache=none)
cfq=$(light_secs --cache=none --fair cfq --fair-set quantum=1)
echo "figure: unaligned, --cache=none: light client beside a 16-deep unaligned writer: fifo=${fifo}s cfq(quantum=1)=${cfq}s"
awk -v f="$fifo" -v c="$cfq" 'BEGIN { exit !(f >= 2.5 * c) }' ||
	fatal "unaligned: cfq not fairer than fifo (fifo=${fifo}s cfq=${cfq}s)"
if /usr/bin/python3 -c "import nbd" 2>/dev/null; then
	start_server --cache=none --fair cfq "$disk"
	nbdcheck interleave "$uri" 4 || fatal "cfq: interleaved unaligned writes"
	stop_server
fi
