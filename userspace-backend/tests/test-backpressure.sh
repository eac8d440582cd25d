#!/bin/bash
# test-backpressure.sh - --fair holds the core to its max_queued: four
# libnbd clients keep 128 requests in flight each (writes, every 7th FUA,
# a FLUSH after every 64, then reads checked by SHA-256) on a slow disk
# (--iops 4000 --depth 4) with max_queued=16.  The server's -v exit line
# must show at most 16 requests ever waiting in the core and readers
# paused, each connection's close line that its reader was paused, every
# checksum must match and the backing file must hold what was written.
# The same load at the default max_queued (1024) must queue more than 16
# (else this load could not catch a server that ignores the bound).
source "$(dirname "$0")/functions.sh"
requires_libnbd
"$server" --version | grep -q "fair=yes" ||
	skip_all "fairq-nbd built without ../sched (FAIR=no)"

nconn=4 bound=16

# run_clients: $nconn pipelining clients at once, each on its own region
run_clients()
{
	local i pids=()
	for ((i = 0; i < nconn; i++)); do
		timeout 60 /usr/bin/python3 "$here/nbdcheck.py" pipeline "$uri" \
			"$i" "$tmp/model.$i" >"$tmp/c$i.out" 2>&1 &
		pids+=($!)
	done
	for ((i = 0; i < nconn; i++)); do
		wait "${pids[$i]}" || fatal "$1: client $i: $(cat "$tmp/c$i.out")"
	done
}

# figures: "MAX_QUEUED PEAK PAUSES PAUSED_MS" from the server's exit line
figures()
{
	sed -n 's/.*sched: max_queued=\([0-9]*\) queued_peak=\([0-9]*\) reader_pauses=\([0-9]*\) paused_ms=\([0-9]*\)$/\1 \2 \3 \4/p' "$log"
}

for run in "cfq page" "sfq none"; do
	read -r pol mode <<<"$run"
	rm -f "$disk"
	: >"$log"
	start_server -v --size 16M --cache="$mode" --iops 4000 --depth 4 \
		--fair "$pol" --fair-set max_queued=$bound "$disk"
	run_clients "$pol"
	stop_server
	! grep -q "WARN_ON_ONCE" "$log" || fatal "$pol: sched core warned: $(grep WARN "$log")"
	read -r maxq peak pauses ms <<<"$(figures)"
	[ "${maxq:-}" = "$bound" ] || fatal "$pol: no exit line with max_queued=$bound"
	echo "figure: $pol --cache=$mode max_queued=$bound: queued peak $peak, readers paused $pauses times, $ms ms in all"
	[ "$peak" -le "$bound" ] || fail "$pol: $peak requests waited in the core (max_queued=$bound)"
	[ "$pauses" -gt 0 ] || fail "$pol: no reader was ever paused"
	paused=$(grep -c "closed (reader paused [1-9][0-9]* times" "$log" || :)
	[ "$paused" -eq "$nconn" ] ||
		fail "$pol: $paused of $nconn connections were paused: $(grep "closed (" "$log")"
	for ((i = 0; i < nconn; i++)); do
		cmp -n $((2 << 20)) -i 0:$((i * 2 << 20)) "$tmp/model.$i" "$disk" ||
			fail "$pol: region $i of the backing file differs from what was written"
	done
done

# the control: without the small bound this load queues more than it
: >"$log"
start_server -v --size 16M --iops 4000 --depth 4 --fair cfq "$disk"
run_clients "default max_queued"
stop_server
read -r maxq peak pauses ms <<<"$(figures)"
echo "figure: cfq at the default max_queued=$maxq: queued peak $peak, readers paused $pauses times"
[ "$peak" -gt "$bound" ] ||
	fail "the load queued only $peak at max_queued=$maxq: it cannot show a bound of $bound"
cat "$tmp"/c*.out

# SIGTERM while every reader is paused: they are resumed, the requests
# already read are served and replied, and the server exits 0
: >"$log"
start_server -v --size 16M --iops 1000 --depth 2 --fair cfq \
	--fair-set max_queued=4 "$disk"
for ((i = 0; i < nconn; i++)); do
	/usr/bin/python3 "$here/nbdcheck.py" pipeline "$uri" "$i" \
		"$tmp/model.$i" >/dev/null 2>&1 &
done
sleep 0.5
t0=$(now_ms)
stop_server
read -r maxq peak pauses ms <<<"$(figures)"
echo "figure: SIGTERM with paused readers (max_queued=$maxq): exit after $(($(now_ms) - t0)) ms, queued peak $peak, readers paused $pauses times"
[ "$pauses" -gt 0 ] || fail "SIGTERM case: no reader was paused before the signal"
[ "$peak" -le 4 ] || fail "SIGTERM case: $peak requests waited in the core (max_queued=4)"
wait
