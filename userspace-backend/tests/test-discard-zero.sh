#!/bin/bash
# test-discard-zero.sh - TRIM punches a hole (the backing file's allocated
# blocks shrink, data reads as zeroes), WRITE_ZEROES with and without
# NO_HOLE (qemu-io write -z / -z -u) read back as zeroes.
source "$(dirname "$0")/functions.sh"
requires qemu-io --version

start_server --size 32M "$disk"
qio_ok "write -P 0xee 0 16M" "flush"
before=$(stat -c %b "$disk")
qio_ok "discard 0 8M" "flush" "read -P 0xee 8M 8M"
after=$(stat -c %b "$disk")
echo "figure: allocated 512-byte blocks before=$before after_trim=$after"
[ "$after" -lt "$before" ] || fatal "TRIM did not free blocks ($before -> $after)"
# TRIM leaves the contents unspecified; on a sparse file they read as 0
qio_ok "read -P 0 0 8M"
qio_ok "write -z 8M 1M" "read -P 0 8M 1M" "read -P 0xee 9M 7M"
qio_ok "write -z -u 10M 1M" "read -P 0 10M 1M"
qio_ok "write -P 0x33 20M 1M" "write -z -f 20M 4096" "read -P 0 20M 4096" \
       "read -P 0x33 20975616 1020k"
stop_server
cmp -n 1048576 -i $((8 << 20)):0 "$disk" /dev/zero || fatal "backing file not zero after WRITE_ZEROES"
od -An -tx1 -j $((9 << 20)) -N 16 "$disk" | grep -q "ee ee" || fatal "WRITE_ZEROES touched its neighbour"
echo "trim and write-zeroes verified"
