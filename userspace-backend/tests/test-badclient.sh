#!/bin/bash
# test-badclient.sh - malformed input (bad magic, unknown flags, truncated
# handshake, oversized lengths, past-end offsets, unknown options and
# commands, a client vanishing mid-request) gets the protocol's answer or
# a closed connection; the server survives and qemu-io still works.
source "$(dirname "$0")/functions.sh"
requires qemu-io --version
[ -x "$badclient" ] || fatal "$badclient not built"

start_server --size 16M "$disk"
"$badclient" "$sock" $((16 << 20)) >"$tmp/bad" 2>&1 || fatal "$(grep -v '^ok' "$tmp/bad")"
tail -n 1 "$tmp/bad"
qio_ok "write -P 0x42 0 64k" "read -P 0x42 0 64k"
kill -0 "$pid" || fatal "server died"
grep -q "past end size=" "$log" || fatal "no log line for past-end requests"
grep -q "bad request magic=" "$log" || fatal "no log line for bad magic"
stop_server
