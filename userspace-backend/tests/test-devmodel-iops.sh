#!/bin/bash
# test-devmodel-iops.sh - --iops 500: 1500 4 KiB reads at queue depth
# 16 (32 ms of queued work hides client round trips on a busy host)
# should take 3 s: at most 575 IOPS (the model never runs faster than
# set), at least 375 (-25 %; the fastest of 3 runs, see bench_best).
# Then 64 KiB requests: IOPS, not size, limits, so 500 requests take
# about 1 s.
source "$(dirname "$0")/functions.sh"
requires qemu-img --version

start_server --size 128M --iops 500 "$disk"
secs=$(bench_best 3 -c 1500 -d 16 -s 4096 -S 12288)
iops=$(awk -v s="$secs" 'BEGIN { printf "%.0f", 1500 / s }')
echo "figure: --iops 500, 4 KiB: 1500 requests in ${secs}s (best of 3) = $iops IOPS (bound 375..575)"
capped "$iops" 500 || fatal "4 KiB IOPS $iops outside 375..575"
secs=$(bench_best 3 -c 500 -d 16 -s 65536)
iops=$(awk -v s="$secs" 'BEGIN { printf "%.0f", 500 / s }')
echo "figure: --iops 500, 64 KiB: 500 requests in ${secs}s (best of 3) = $iops IOPS (bound 375..575)"
capped "$iops" 500 || fatal "64 KiB IOPS $iops outside 375..575"
stop_server
