#!/bin/bash
# test-maxconns.sh - --max-conns 2: two idle clients hold both places, a
# third is closed at once (and logged), the server stays healthy, and
# once a place frees up a new client gets in.
source "$(dirname "$0")/functions.sh"
requires qemu-io --version

start_server --size 8M --max-conns 2 "$disk"
holders=()
for i in 1 2; do
	"$badclient" "$sock" $((8 << 20)) hold >"$tmp/h$i" 2>&1 &
	holders+=($!)
	server_pids="$server_pids $!"
done
for _ in $(seq 50); do
	grep -q holding "$tmp/h1" && grep -q holding "$tmp/h2" && break
	sleep 0.1
done
grep -q holding "$tmp/h2" || fatal "second holder did not get in"
rc=0
qemu-io -f raw -c "read 0 4k" "$uri" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fatal "third client was served despite --max-conns 2"
grep -q "too many connections (max_conns=2)" "$log" || fatal "no log line for the refusal"
kill "${holders[0]}"
wait "${holders[0]}" 2>/dev/null || :
ok=0
for _ in $(seq 50); do
	if qemu-io -f raw -c "write -P 0x9 0 4k" -c "read -P 0x9 0 4k" "$uri" >"$tmp/out" 2>&1 &&
	   ! grep -q failed "$tmp/out"; then
		ok=1
		break
	fi
	sleep 0.1
done
[ "$ok" = 1 ] || fatal "no place after a holder left: $(cat "$tmp/out")"
kill "${holders[1]}"
stop_server
echo "third connection refused, served after a place freed"
