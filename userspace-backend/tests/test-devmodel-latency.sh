#!/bin/bash
# test-devmodel-latency.sh - --latency-us 50000 --depth 1: requests are
# served one at a time and each takes 50 ms: 40 requests, the client
# keeping 16 queued, take 2 s.  Then --depth 8: latency overlaps, 320
# requests in 40 rounds of 8 also take 2 s (8x the IOPS).  With 16
# queued the client has a whole round of 50 ms to send the next
# requests, so a late client (a busy host) rarely leaves the model idle;
# the model absorbs its own engine's lateness (model time, devmodel.c);
# and the fastest of 3 runs is taken (bench_best).  Bounds, per
# request: 47.5..62.5 ms at depth 1 and 5.94..7.81 ms at depth 8 (the
# model may not serve early: -5 %; a loaded host adds: up to +25 %).
source "$(dirname "$0")/functions.sh"
requires qemu-img --version

start_server --size 64M --latency-us 50000 --depth 1 "$disk"
s1=$(bench_best 3 -c 40 -d 16 -s 4096)
stop_server
per1=$(awk -v s="$s1" 'BEGIN { printf "%.2f", s * 1000 / 40 }')
echo "figure: --latency-us 50000 --depth 1: ${per1} ms per request (best of 3; bound 47.5..62.5)"
within "$per1" 47.5 62.5 || fatal "depth 1: $per1 ms per request outside 47.5..62.5"

start_server --size 64M --latency-us 50000 --depth 8 "$disk"
s8=$(bench_best 3 -c 320 -d 16 -s 4096)
stop_server
per8=$(awk -v s="$s8" 'BEGIN { printf "%.2f", s * 1000 / 320 }')
ratio=$(awk -v a="$s1" -v b="$s8" 'BEGIN { printf "%.1f", (320 / b) / (40 / a) }')
echo "figure: --latency-us 50000 --depth 8: ${per8} ms per request, ${ratio}x depth 1's IOPS (best of 3; bound 5.94..7.81 ms, ideal 6.25, 8x)"
within "$per8" 5.94 7.81 || fatal "depth 8: $per8 ms per request outside 5.94..7.81"
