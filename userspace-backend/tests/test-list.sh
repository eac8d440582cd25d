#!/bin/bash
# test-list.sh - NBD_OPT_LIST and NBD_OPT_INFO as qemu-nbd --list sees
# them: the export name, size, transmission flags and block sizes.
source "$(dirname "$0")/functions.sh"
requires qemu-nbd --version

start_server --size 8M --name fq0 "$disk"
qemu-nbd --list -k "$sock" >"$tmp/out" 2>&1 || fatal "qemu-nbd --list: $(cat "$tmp/out")"
sed -n '1,20p' "$tmp/out"
grep -q "export: 'fq0'" "$tmp/out" || fatal "no export fq0"
grep -q "size:  *8388608" "$tmp/out" || fatal "size"
grep -q "flush" "$tmp/out" && grep -q "fua" "$tmp/out" && grep -q "trim" "$tmp/out" &&
	grep -q "zeroes" "$tmp/out" && grep -q "multi" "$tmp/out" || fatal "flags"
grep -q "min block: 1$" "$tmp/out" && grep -q "opt block: 4096" "$tmp/out" && grep -q "max block: 33554432" "$tmp/out" ||
	fatal "block sizes"
# the named export and the default "" both work
qemu-io -f raw -c "write -P 0x5 0 4k" "nbd+unix:///fq0?socket=$sock" >/dev/null || fatal "named export"
qio_ok "read -P 0x5 0 4k"
qemu-io -f raw -c "read 0 4k" "nbd+unix:///other?socket=$sock" >"$tmp/out" 2>&1 &&
	fatal "unknown export name accepted"
stop_server

# Debian's nbd-client (the one the VM uses for /dev/nbd0) lists it too;
# that needs no kernel module
if command -v nbd-client >/dev/null; then
	start_server --size 8M --name fq0 "$disk"
	nbd-client -l -unix "$sock" >"$tmp/out" 2>&1 || fatal "nbd-client -l: $(cat "$tmp/out")"
	grep -qx "fq0" "$tmp/out" || fatal "nbd-client -l: $(cat "$tmp/out")"
	stop_server
	echo "qemu-nbd --list and nbd-client -l see export fq0"
fi
