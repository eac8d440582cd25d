#!/bin/bash
# test-write-errors.sh - WRITEs the file refuses (past the server's file
# size limit, RLIMIT_FSIZE: EFBIG) get NBD_ENOSPC and leave the
# connection usable, whether their payload was written by the reader
# (4 KiB), written behind by the connection's writer (64 KiB to 1 MiB in
# page mode) or taken in part (a WRITE across the limit); both cache
# modes.
source "$(dirname "$0")/functions.sh"
requires_libnbd

limit=$((8 << 20))
for mode in page none; do
	rm -f "$disk"
	truncate -s 16M "$disk"
	# SIGXFSZ would kill the server: ignored, the write fails with EFBIG
	trap '' XFSZ
	ulimit -S -f $((limit >> 10))
	start_server --cache=$mode "$disk"
	ulimit -S -f unlimited
	trap - XFSZ
	nbdcheck refused "$uri" $limit || fatal "$mode: refused writes"
	kill -0 "$pid" || fatal "$mode: server died"
	stop_server
	: >"$log"
done
echo "refused writes answered ENOSPC in both cache modes"
