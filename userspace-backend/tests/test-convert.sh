#!/bin/bash
# test-convert.sh - many requests in flight: qemu-img convert -W (out of
# order writes, 16 coroutines) of random data into the export, convert
# back out, and compare both with the source; qemu-img bench at depth 32.
source "$(dirname "$0")/functions.sh"
requires qemu-img --version

head -c $((48 << 20)) /dev/urandom > "$tmp/src.img"
start_server --size 48M "$disk"
qemu-img convert -n -W -m 16 -f raw -O raw "$tmp/src.img" "$uri" ||
	fatal "qemu-img convert into the export"
qemu-img convert -m 16 -f raw -O raw "$uri" "$tmp/back.img" ||
	fatal "qemu-img convert out of the export"
cmp "$tmp/src.img" "$tmp/back.img" || fatal "data read back through NBD differs"
qemu-img bench -f raw -c 4000 -d 32 -s 4096 "$uri" >"$tmp/bench" 2>&1 ||
	fatal "qemu-img bench read: $(cat "$tmp/bench")"
qemu-img bench -f raw -w -c 2000 -d 32 -s 4096 -S 8192 -o 16M --pattern=0x61 "$uri" >"$tmp/bench" 2>&1 ||
	fatal "qemu-img bench write: $(cat "$tmp/bench")"
stop_server
cmp -n $((16 << 20)) "$tmp/src.img" "$disk" || fatal "backing file differs from source"
# bench wrote 4 KiB of 0x61 at every 8 KiB from 16M; the gaps keep src
od -An -tx1 -j $((16 << 20)) -N 4096 "$disk" | tr -s ' \n' '\n' | grep . | sort -u | grep -qx 61 ||
	fatal "qemu-img bench pattern missing in the backing file"
cmp -n 4096 -i $(((16 << 20) + 4096)) "$tmp/src.img" "$disk" ||
	fatal "qemu-img bench wrote into a gap"
echo "48 MiB converted in and out with many requests in flight"
