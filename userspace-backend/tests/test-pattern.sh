#!/bin/bash
# test-pattern.sh - write patterns with qemu-io, read them back (qemu-io
# -P verifies every byte), flush, and check the backing file's bytes.
source "$(dirname "$0")/functions.sh"
requires qemu-io --version

start_server --size 64M "$disk"
qio_ok "write -P 0xab 0 1M" "write -P 0xcd 1M 64k" "write -P 0x5a 63M 1M" \
       "flush" \
       "read -P 0xab 0 1M" "read -P 0xcd 1M 64k" "read -P 0 2M 1M" \
       "read -P 0x5a 63M 1M"
# FUA writes (qemu-io -f) and small, unaligned writes (qemu does RMW)
qio_ok "write -f -P 0x77 8M 128k" "write -P 0x11 513 1000" \
       "read -P 0x77 8M 128k" "read -P 0x11 513 1000" "read -P 0xab 0 513" \
       "read -P 0xab 1513 1000"
stop_server

[ "$(stat -c %s "$disk")" -eq $((64 << 20)) ] || fatal "backing file size changed"
check_bytes()	# offset length byte
{
	local got
	got=$(od -An -v -tx1 -j "$1" -N "$2" "$disk" | tr -s ' \n' '\n' | grep . | sort -u)
	[ "$got" = "$3" ] || fatal "backing file at $1+$2: bytes '$got' (want $3)"
}
check_bytes 0 512 ab
check_bytes 513 1000 11
check_bytes 1513 $((1048576 - 1513)) ab
check_bytes 1048576 65536 cd
check_bytes $((2 << 20)) 65536 00
check_bytes $((8 << 20)) 131072 77
check_bytes $((63 << 20)) 1048576 5a
echo "patterns verified through NBD and in the backing file"
