#!/bin/bash
# test-tcp.sh - TCP on 127.0.0.1 (and ::1 when the host has it) together
# with the unix socket: the same export through both.
source "$(dirname "$0")/functions.sh"
requires qemu-io --version

port=$(( 20000 + RANDOM % 20000 ))
start_server --size 16M -p "$port" "$disk"
qio_ok "write -P 0x71 0 1M"
qemu-io -f raw -c "read -P 0x71 0 1M" -c "write -P 0x72 1M 1M" \
	"nbd://127.0.0.1:$port" >"$tmp/out" 2>&1 || fatal "tcp: $(cat "$tmp/out")"
grep -q "failed" "$tmp/out" && fatal "tcp: $(cat "$tmp/out")"
qio_ok "read -P 0x72 1M 1M"
ss -ltn 2>/dev/null | grep -q ":$port " && {
	ss -ltn | grep ":$port " | grep -qv "127.0.0.1:$port" &&
		fatal "listening on something other than 127.0.0.1: $(ss -ltn | grep ":$port ")"
}
stop_server

if ip -6 addr show lo 2>/dev/null | grep -q "::1"; then
	start_server --size 16M -p "$port" -b ::1 "$disk"
	qemu-io -f raw -c "read -P 0x72 1M 1M" "nbd://[::1]:$port" >"$tmp/out" 2>&1 ||
		fatal "tcp ::1: $(cat "$tmp/out")"
	grep -q "failed" "$tmp/out" && fatal "tcp ::1: $(cat "$tmp/out")"
	stop_server
	echo "unix, 127.0.0.1 and ::1 verified"
else
	echo "unix and 127.0.0.1 verified (no ::1 on lo)"
fi
