#!/bin/bash
# test-devmodel-iops.sh - --iops 1000: 3000 random-ish 4 KiB reads at
# queue depth 16 should take 3 s; bound +-35% (650..1350 IOPS).  Then
# 64 KiB requests: IOPS, not size, limits, so 1000 requests still take
# about 1 s (64 MiB/s is far below what the host moves unthrottled).
source "$(dirname "$0")/functions.sh"
requires qemu-img --version

start_server --size 128M --iops 1000 "$disk"
secs=$(bench_secs -c 3000 -d 16 -s 4096 -S 12288)
iops=$(awk -v s="$secs" 'BEGIN { printf "%.0f", 3000 / s }')
echo "figure: --iops 1000, 4 KiB: 3000 requests in ${secs}s = $iops IOPS (bound 650..1350)"
within "$iops" 1000 35 || fail "4 KiB IOPS $iops outside 1000 +-35%"
secs=$(bench_secs -c 1000 -d 16 -s 65536)
iops=$(awk -v s="$secs" 'BEGIN { printf "%.0f", 1000 / s }')
echo "figure: --iops 1000, 64 KiB: 1000 requests in ${secs}s = $iops IOPS (bound 650..1350)"
within "$iops" 1000 35 || fail "64 KiB IOPS $iops outside 1000 +-35%"
stop_server
