#!/bin/bash
# test-size.sh - --size creates a sparse file of that size (suffixes),
# extends a shorter one, refuses to shrink a longer one; the export
# size clients see (qemu-img info) is the file size.
source "$(dirname "$0")/functions.sh"
requires qemu-img --version

start_server --size 1G "$disk"
[ "$(stat -c %s "$disk")" -eq $((1 << 30)) ] || fatal "size $(stat -c %s "$disk") != 1G"
blocks=$(stat -c %b "$disk")
[ "$blocks" -lt 2048 ] || fatal "--size file is not sparse ($blocks blocks)"
qemu-img info "$uri" | grep -q "virtual size: 1 GiB" || fatal "qemu-img info: $(qemu-img info "$uri")"
qio_ok "write -P 0x99 $(((1 << 30) - 4096)) 4096" "read -P 0x99 $(((1 << 30) - 4096)) 4096"
stop_server
start_server --size 2G "$disk"
[ "$(stat -c %s "$disk")" -eq $((2 << 30)) ] || fatal "not extended to 2G"
qio_ok "read -P 0x99 $(((1 << 30) - 4096)) 4096"
stop_server
rc=0
"$server" -u "$sock" --size 1M "$disk" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fatal "shrinking --size exit status=$rc (want 1)"
grep -q "larger than --size" "$tmp/out" || fatal "no message: $(cat "$tmp/out")"
[ "$(stat -c %s "$disk")" -eq $((2 << 30)) ] || fatal "file was shrunk"
# odd size under O_DIRECT: the last, partial block is written through
# the page cache (an O_DIRECT write of a whole block would grow the
# file); everything before it is read-modify-written
truncate -s 1000000 "$disk"
start_server --cache=none "$disk"
grep -q "size=1000000 cache=none dio_align=512 block_size=1/4096/" "$log" ||
	fatal "odd size: $(grep export "$log")"
qio_ok "write -P 0x12 999000 1000" "read -P 0x12 999000 1000" \
       "write -P 0x13 998000 300" "read -P 0x13 998000 300" "read -P 0x12 999000 1000" \
       "write -P 0x14 999999 1" "read -P 0x12 999000 999" "read -P 0x14 999999 1"
stop_server
[ "$(stat -c %s "$disk")" -eq 1000000 ] || fatal "odd-sized file changed size"
echo "sparse create, extend, no shrink, odd size"
