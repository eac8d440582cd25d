#!/bin/bash
# test-unaligned.sh - byte-granular I/O in both cache modes through
# libnbd: 3000 random reads and writes at odd offsets and lengths across
# 512- and 4096-byte boundaries, 64 in flight, every byte compared with
# a model, then the backing file with the model; four connections
# writing disjoint 9-byte pieces that share every block (under
# --cache=none a read-modify-write that is not serialised loses pieces:
# without the range lock this check finds ~170 torn pieces); FLUSH, FUA,
# TRIM, WRITE_ZEROES (unaligned, NO_HOLE) and the block sizes 1/4096/32M;
# WRITEs of 64 KiB to 1 MiB whose payload comes in many small sends
# (page mode: written behind by the connection's writer once all in).
source "$(dirname "$0")/functions.sh"
requires_libnbd

for mode in page none; do
	rm -f "$disk"
	start_server --size 64M --cache=$mode "$disk"
	grep -q "cache=$mode " "$log" || fatal "$mode: $(grep export "$log")"
	nbdcheck unaligned "$uri" "$tmp/model" || fatal "$mode: unaligned"
	stop_server
	cmp -n $((4 << 20)) "$tmp/model" "$disk" ||
		fatal "$mode: backing file differs from the model"
	start_server --cache=$mode "$disk"
	nbdcheck interleave "$uri" 4 || fatal "$mode: interleave"
	nbdcheck commands "$uri" || fatal "$mode: commands"
	stop_server
	: >"$log"
	start_server --cache=$mode "$disk"
	nbdcheck pieces "$sock" || fatal "$mode: pieces"
	stop_server
	: >"$log"
done
echo "unaligned I/O verified with --cache=page and --cache=none"
