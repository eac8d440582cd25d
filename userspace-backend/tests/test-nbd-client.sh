#!/bin/bash
# test-nbd-client.sh - the kernel client (nbd-client, /dev/nbdN) writes
# and reads unaligned-free data through fairq-nbd.  It needs the nbd
# module loaded and a free /dev/nbdN, which a build host usually lacks:
# then it is skipped (VM test 080-nbd covers the kernel client).
source "$(dirname "$0")/functions.sh"
requires nbd-client -h
[ -d /sys/module/nbd ] || skip_all "kernel nbd module not loaded (VM test 080-nbd covers nbd-client)"
[ "$(id -u)" -eq 0 ] || skip_all "nbd-client needs root"
dev=""
for s in /sys/block/nbd*; do
	[ -e "$s/pid" ] && continue
	dev=/dev/${s##*/}
	break
done
{ [ -n "$dev" ] && [ -b "$dev" ]; } || skip_all "no free /dev/nbdN"

start_server --size 32M "$disk"
nbd-client -unix "$sock" "$dev" -b 4096 >"$tmp/out" 2>&1 || fatal "nbd-client: $(cat "$tmp/out")"
trap 'nbd-client -d "$dev" >/dev/null 2>&1; cleanup' EXIT
head -c $((8 << 20)) /dev/urandom >"$tmp/src"
dd if="$tmp/src" of="$dev" bs=1M oflag=direct status=none || fatal "write $dev"
cmp -n $((8 << 20)) "$tmp/src" "$dev" || fatal "read back $dev"
nbd-client -d "$dev" >/dev/null 2>&1
stop_server
cmp -n $((8 << 20)) "$tmp/src" "$disk" || fatal "backing file"
echo "nbd-client on $dev verified"
