#!/bin/bash
# test-readonly.sh - --read-only: reads work, writes/trim/zeroes fail with
# EPERM (qemu-io refuses them: "Permission denied"; the raw client sees
# NBD_EPERM from the server itself), the file is unchanged.
source "$(dirname "$0")/functions.sh"
requires qemu-io --version

head -c $((4 << 20)) /dev/urandom > "$disk"
cp "$disk" "$tmp/orig.img"
start_server --read-only "$disk"
qemu-io -f raw -r -c "read 0 4M" "$uri" >"$tmp/out" 2>&1 || fatal "read: $(cat "$tmp/out")"
for cmd in "write -P 1 0 4k" "discard 0 64k" "write -z 0 64k"; do
	qemu-io -f raw -c "$cmd" "$uri" >"$tmp/out" 2>&1 || :
	grep -q "Operation not permitted\|Permission denied" "$tmp/out" ||
		fatal "$cmd on a read-only export: $(cat "$tmp/out")"
done
"$badclient" "$sock" $((4 << 20)) ro >"$tmp/bad" 2>&1 || fatal "badclient ro: $(grep -v '^ok' "$tmp/bad")"
grep -q "WRITE on read-only -> EPERM" "$tmp/bad" || fatal "no EPERM check ran"
stop_server
cmp "$disk" "$tmp/orig.img" || fatal "read-only export was modified"
echo "read-only export refuses writes with EPERM"
