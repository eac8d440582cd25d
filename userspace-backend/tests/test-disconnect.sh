#!/bin/bash
# test-disconnect.sh - clients that vanish (after the greeting, inside an
# option, with 64 reads pending and a write payload cut short, with a
# reset instead of a close; a 1 MiB write cut after 700,000 bytes) while
# another client keeps reading and checking data the whole time: it is
# served throughout, sees no wrong byte (no byte of a cut write reaches
# the file), and the server exits cleanly afterwards.  Both cache modes.
source "$(dirname "$0")/functions.sh"
requires_libnbd

for mode in page none; do
	start_server --size 16M --cache=$mode "$disk"
	nbdcheck reads "$uri" 4 >"$tmp/reads" 2>&1 &
	reader=$!
	sleep 0.5
	nbdcheck abandon "$sock" 20 || fatal "$mode: abandoning clients"
	wait "$reader" || fatal "$mode: the steady client: $(cat "$tmp/reads")"
	cat "$tmp/reads"
	kill -0 "$pid" || fatal "$mode: server died"
	stop_server
	grep -q "client vanished inside write payload" "$log" ||
		fatal "$mode: no log line for a cut write"
	grep -q "exit: clean" "$log" || fatal "$mode: no clean exit"
	: >"$log"
done
echo "vanishing clients did not disturb the steady one"
