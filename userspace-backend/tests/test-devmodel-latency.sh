#!/bin/bash
# test-devmodel-latency.sh - --latency-us 5000 --depth 1: requests are
# served one at a time and each takes 5 ms more than without the model.
# The round trip through client and server is measured first (same
# load, --depth 1, no latency) and subtracted, so a busy host adds noise
# to both runs rather than to the assertion: per-request extra time
# must be at least 4.25 ms (the model may not serve early) and at most
# 20 ms (a loaded host only adds).  Then --depth 8: latency overlaps,
# at least 2x the requests per second (8x ideal).
source "$(dirname "$0")/functions.sh"
requires qemu-img --version

start_server --size 64M --depth 1 "$disk"
s0=$(bench_secs -c 300 -d 4 -s 4096)
stop_server
start_server --size 64M --latency-us 5000 --depth 1 "$disk"
s1=$(bench_secs -c 300 -d 4 -s 4096)
stop_server
per=$(awk -v a="$s1" -v b="$s0" 'BEGIN { printf "%.2f", (a - b) * 1000 / 300 }')
echo "figure: --latency-us 5000 --depth 1: +${per} ms per request over the bare round trip ($(awk -v b="$s0" 'BEGIN { printf "%.2f", b * 1000 / 300 }') ms) (bound 4.25..20)"
awk -v v="$per" 'BEGIN { exit !(v >= 4.25 && v <= 20) }' ||
	fatal "added latency $per ms outside 4.25..20"

start_server --size 64M --latency-us 5000 --depth 8 "$disk"
s8=$(bench_secs -c 1200 -d 16 -s 4096)
stop_server
ratio=$(awk -v a="$s1" -v b="$s8" 'BEGIN { printf "%.1f", (1200 / b) / (300 / a) }')
echo "figure: --depth 8 vs --depth 1 at 5 ms: ${ratio}x the IOPS (want >= 2, ideal 8)"
awk -v r="$ratio" 'BEGIN { exit !(r >= 2) }' || fatal "depth 8 only ${ratio}x depth 1"
