#!/bin/bash
# test-multiconn.sh - eight clients at once, each writing its own region
# and verifying it, then one client verifies everything; the backing file
# matches.  NBD_FLAG_CAN_MULTI_CONN is advertised, so one flush covers all.
source "$(dirname "$0")/functions.sh"
requires qemu-io --version

start_server --size 64M "$disk"
pids=()
for i in 0 1 2 3 4 5 6 7; do
	qio "write -P $((0x10 + i)) $((i * 8))M 8M" "read -P $((0x10 + i)) $((i * 8))M 8M" \
		>"$tmp/c$i.out" 2>&1 &
	pids+=($!)
done
for i in 0 1 2 3 4 5 6 7; do
	wait "${pids[$i]}" || fatal "client $i: $(cat "$tmp/c$i.out")"
	! grep -q -i "fail\|error" "$tmp/c$i.out" || fatal "client $i: $(cat "$tmp/c$i.out")"
done
cmds=("flush")
for i in 0 1 2 3 4 5 6 7; do
	cmds+=("read -P $((0x10 + i)) $((i * 8))M 8M")
done
qio_ok "${cmds[@]}"
grep -q "conn 8" "$log" 2>/dev/null || : # ids are only logged with -v
stop_server
for i in 0 1 2 3 4 5 6 7; do
	b=$(od -An -tx1 -j $((i * 8 << 20)) -N 1 "$disk" | tr -d ' ')
	e=$(od -An -tx1 -j $(((i * 8 + 8 << 20) - 1)) -N 1 "$disk" | tr -d ' ')
	[ "$b$e" = "$(printf '%02x%02x' $((0x10 + i)) $((0x10 + i)))" ] ||
		fatal "region $i in the backing file: first=$b last=$e"
done
echo "8 concurrent connections verified"
