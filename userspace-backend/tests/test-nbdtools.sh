#!/bin/bash
# test-nbdtools.sh - libnbd's command-line clients: nbdinfo sees the
# block sizes (1/4096/32M) and flags; nbdcopy (4 connections, 64
# requests in flight by default) copies 48 MiB of random data in and
# out, in both cache modes, and the checksums match; nbdsh writes and
# reads back an unaligned range.
source "$(dirname "$0")/functions.sh"
requires nbdinfo --version
requires nbdcopy --version
requires nbdsh --version

head -c $((48 << 20)) /dev/urandom >"$tmp/src"
want=$(sha256sum <"$tmp/src")
for mode in page none; do
	rm -f "$disk"
	start_server --size 64M --cache=$mode "$disk"
	nbdinfo --json "$uri" >"$tmp/info" || fatal "nbdinfo: $(cat "$tmp/info")"
	for kv in '"block_size_minimum": 1,' '"block_size_preferred": 4096,' \
		  '"block_size_maximum": 33554432,' '"can_multi_conn": true,' \
		  '"export-size": 67108864,'; do
		grep -qF "$kv" "$tmp/info" || fatal "$mode: nbdinfo lacks $kv: $(cat "$tmp/info")"
	done
	nbdcopy --flush "$tmp/src" "$uri" || fatal "$mode: nbdcopy in"
	nbdcopy "$uri" "$tmp/back" || fatal "$mode: nbdcopy out"
	got=$(head -c $((48 << 20)) "$tmp/back" | sha256sum)
	[ "$got" = "$want" ] || fatal "$mode: nbdcopy round trip checksum differs"
	nbdsh -u "$uri" -c '
h.pwrite(b"fairq" * 1000, 4093)
assert h.pread(5000, 4093) == b"fairq" * 1000
h.flush()' || fatal "$mode: nbdsh unaligned write/read"
	stop_server
	# the backing file: the source, but for the 5000 bytes nbdsh wrote
	cmp -n 4093 "$tmp/src" "$disk" ||
		fatal "$mode: backing file differs from what nbdcopy wrote"
	cmp -i 9093:9093 -n $(((48 << 20) - 9093)) "$tmp/src" "$disk" ||
		fatal "$mode: backing file differs from what nbdcopy wrote"
	[ "$(dd if="$disk" bs=1 skip=4093 count=5 2>/dev/null)" = fairq ] ||
		fatal "$mode: nbdsh bytes not in the backing file"
	: >"$log"
done
echo "nbdinfo, nbdcopy, nbdsh verified in both cache modes"
