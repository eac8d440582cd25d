#!/bin/bash
# test-devmodel-bw.sh - --bw 20: 60 MiB of 64 KiB reads, then writes, at
# queue depth 8 should take 60 / 20 = 3 s each.  Benchmark-style: the
# figure is printed; the bound is +-35% of 20 MiB/s (13..27 MiB/s) so
# that a loaded host cannot fail it.
source "$(dirname "$0")/functions.sh"
requires qemu-img --version

# preallocated, so that block allocation on a busy host disk does not
# make the real writes slower than the model
fallocate -l 128M "$disk" 2>/dev/null || head -c $((128 << 20)) /dev/zero > "$disk"
start_server --bw 20 "$disk"
for mode in read write; do
	w=""; [ $mode = write ] && w=-w
	secs=$(bench_secs $w -c 960 -d 8 -s 65536)
	mibs=$(awk -v s="$secs" 'BEGIN { printf "%.1f", 60 / s }')
	echo "figure: --bw 20 $mode: 60 MiB in ${secs}s = $mibs MiB/s (bound 13..27)"
	within "$mibs" 20 35 || fail "$mode throughput $mibs MiB/s outside 20 +-35%"
done
stop_server
