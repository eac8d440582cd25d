#!/bin/bash
# test-devmodel-bw.sh - --bw 20: 60 MiB of 64 KiB reads, then writes, at
# queue depth 16 (50 ms of booked transfer hides client round trips on a
# busy host) should take 60 / 20 = 3 s each.  The figure is the fastest
# of 3 runs (bench_best: a loaded host only slows a run); the bound is
# 15..23 MiB/s: never faster than set (+15 %), at most 25 % slower.
# Reads use O_DIRECT; writes run with --buffered because O_DIRECT writes
# on a shared, busy host disk are at times slower than 20 MiB/s
# themselves (the real disk then bounds the rate, as it should) -- the
# model, not the host disk, is under test here.
source "$(dirname "$0")/functions.sh"
requires qemu-img --version

fallocate -l 128M "$disk" 2>/dev/null || head -c $((128 << 20)) /dev/zero > "$disk"
for mode in read write; do
	if [ $mode = read ]; then
		start_server --bw 20 "$disk"
		w=""
	else
		start_server --bw 20 --buffered "$disk"
		w=-w
	fi
	secs=$(bench_best 3 $w -c 960 -d 16 -s 65536)
	stop_server
	mibs=$(awk -v s="$secs" 'BEGIN { printf "%.1f", 60 / s }')
	echo "figure: --bw 20 $mode: 60 MiB in ${secs}s (best of 3) = $mibs MiB/s (bound 15..23)"
	capped "$mibs" 20 || fatal "$mode throughput $mibs MiB/s outside 15..23"
done
