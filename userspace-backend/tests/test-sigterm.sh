#!/bin/bash
# test-sigterm.sh - SIGTERM while a slow (--bw 4) transfer is in flight:
# the server drains the requests it accepted, exits 0 quickly, and every
# 64 KiB block of the backing file is either fully written or untouched;
# a client that never reads its replies cannot hold the shutdown.
source "$(dirname "$0")/functions.sh"
requires qemu-img --version

start_server --size 16M --bw 4 --depth 4 "$disk"
# 256 x 64 KiB = 16 MiB at 4 MiB/s: about 4 s; we stop it after 1 s
qemu-img bench -f raw -w -c 256 -d 4 -s 65536 --pattern=0x61 "$uri" >"$tmp/out" 2>&1 &
client=$!
sleep 1
t0=$(now_ms)
stop_server
t1=$(now_ms)
wait "$client" || :
# at most depth=4 requests of 64 KiB wait at 4 MiB/s: 62 ms, plus slack
echo "figure: exit after SIGTERM took $((t1 - t0)) ms"
[ $((t1 - t0)) -lt 3000 ] || fatal "SIGTERM drain took $((t1 - t0)) ms"
grep -q "exit: clean" "$log" || fatal "no clean exit line"
head -c 65536 /dev/zero | tr '\0' 'a' > "$tmp/pat"
written=0
for i in $(seq 0 255); do
	if cmp -s -n 65536 -i $((i * 65536)):0 "$disk" "$tmp/pat"; then
		written=$((written + 1))
	elif ! cmp -s -n 65536 -i $((i * 65536)):0 "$disk" /dev/zero; then
		fatal "block $i is torn"
	fi
done
echo "figure: $written of 256 blocks written before SIGTERM"
[ "$written" -ge 4 ] && [ "$written" -lt 256 ] || fatal "written=$written (want 4..255)"

# a client that sends 64 MiB of reads and never takes a reply: SIGTERM
# still ends the server (after --drain-timeout 1), with exit status 0
start_server --size 64M --drain-timeout 1 "$disk"
"$badclient" "$sock" $((64 << 20)) stall >"$tmp/stall" 2>&1 &
stuck=$!
server_pids="$server_pids $stuck"
for _ in $(seq 50); do grep -q stalling "$tmp/stall" && break; sleep 0.1; done
sleep 0.5
t0=$(now_ms)
stop_server
t1=$(now_ms)
kill "$stuck" 2>/dev/null || :
echo "figure: exit with a client not reading replies took $((t1 - t0)) ms (--drain-timeout 1)"
[ $((t1 - t0)) -lt 5000 ] || fatal "stuck client held shutdown for $((t1 - t0)) ms"
grep -q "still busy after 1 s; cutting" "$log" || fatal "no log line for cutting the stuck client"
