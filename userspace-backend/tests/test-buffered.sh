#!/bin/bash
# test-buffered.sh - --buffered (the old name of --cache=page, the
# default): data through the page cache, byte-granular.
source "$(dirname "$0")/functions.sh"
requires qemu-io --version

start_server --size 16M --buffered "$disk"
grep -q "cache=page dio_align=1 block_size=1/4096/33554432" "$log" || fatal "not buffered: $(grep export "$log")"
qio_ok "write -P 0x21 3 5" "write -P 0x22 1M 1M" "flush" "read -P 0x21 3 5" \
       "read -P 0 0 3" "read -P 0x22 1M 1M"
qemu-img bench -f raw -w -c 1000 -d 16 -s 4096 -o 4M --pattern=0x23 "$uri" >/dev/null || fatal bench
stop_server
[ "$(od -An -tx1 -j 3 -N 5 "$disk" | tr -d ' ')" = 2121212121 ] || fatal "bytes 3..7 in the file"
[ "$(od -An -tx1 -j $((4 << 20)) -N 2 "$disk" | tr -d ' ')" = 2323 ] || fatal "bench data in the file"
echo "buffered mode verified"
