#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lower device goes away (fault test 4 of 7).
#  - nbd: ext4 on fairq0 over /dev/nbd0 (fairq-nbd in the guest), a writer
#    busy in it; the server is SIGKILLed and `nbd-client -d` disconnects
#    nbd0 under the mounted fairq0.  The writer must get errors in bounded
#    time, the umount must finish, fairq0 must power off and be destroyed.
#  - virtio: fio on fairq0 over /dev/vdc while vdc's PCI function is
#    surprise-removed from inside the guest
#    (echo 1 > /sys/bus/pci/devices/ADDR/remove): virtio-blk sees the same
#    removal as after QEMU's device_del, without needing the monitor.  fio
#    must fail in bounded time with EIO, fairq0 must power off.
# Then a new fairq over a new lower device (null_blk) must work in the same
# boot, and a PCI rescan must bring vdc back (later tests use it).
DESCRIPTION="lower device vanishes: nbd killed+disconnected under ext4, virtio PCI removal"
TIMEOUT=300
# shellcheck source=rc
. /fairq/tests/vm/rc
# shellcheck source=faultrc
. /fairq/tests/vm/faultrc

MNT=/tmp/130-mnt

# elapsed_since T0: whole seconds of uptime since T0
elapsed_since() {
	echo $(($(cut -d. -f1 /proc/uptime) - $1))
}

test_nbd() {
	local pid t0 rc
	require_cmd fairq-nbd nbd-client mkfs.ext4
	nbd_create 130-nbd 64M
	fairq_create fairq0 /dev/nbd0 depth=8
	mkfs.ext4 -q -F /dev/fairq0 || fatal "mkfs.ext4 on fairq0 over nbd"
	mkdir -p $MNT
	mount /dev/fairq0 $MNT || fatal "mount fairq0"
	dd if=/dev/urandom of=$MNT/a bs=1M count=4 conv=fsync status=none || fatal "write before the kill"
	# a writer that syncs every MiB: it must see the device go
	(
		i=0
		while dd if=/dev/zero of=$MNT/w$i bs=1M count=1 conv=fsync status=none 2>/dev/null; do
			i=$((i + 1))
		done
		exit 3
	) &
	pid=$!
	wait_for stat_above fairq0 done_reqs 200
	t0=$(cut -d. -f1 /proc/uptime)
	kill -9 "$NBD_PID"
	wait "$NBD_PID" 2>/dev/null
	nbd-client -d /dev/nbd0 >/dev/null 2>&1
	wait $pid
	rc=$?
	[ $rc = 3 ] || fatal "nbd: writer ended with $rc"
	[ "$(elapsed_since "$t0")" -le 40 ] || fatal "nbd: writer took $(elapsed_since "$t0") s to fail"
	log "nbd: writer failed $(elapsed_since "$t0") s after kill + disconnect"
	wait_idle fairq0 30
	umount $MNT || fatal "umount of fairq0 over a dead nbd0"
	[ "$(stat_field fairq0 errors)" -gt 0 ] || fatal "nbd: no errors counted"
	fairq_destroy fairq0
	log "nbd: unmounted, fairq0 destroyed ($(elapsed_since "$t0") s after the kill)"
}

# the PCI function behind a virtio disk
pci_of() {
	basename "$(readlink -f "/sys/block/$1/device/..")"
}

test_pci_remove() {
	local pci pid t0 rc
	pci=$(pci_of vdc)
	[ -e "/sys/bus/pci/devices/$pci/remove" ] || skip_all "vdc is not a PCI device ($pci)"
	fairq_create fairq0 /dev/vdc depth=16
	fio --output=fio-pci.out --filename=/dev/fairq0 --direct=1 --ioengine=libaio \
		--rw=randrw --bs=4k --iodepth=16 --size=32M --time_based --runtime=60 \
		--name=pci >/dev/null 2>fio-pci.err &
	pid=$!
	wait_for stat_above fairq0 done_reqs 300
	t0=$(cut -d. -f1 /proc/uptime)
	echo 1 >"/sys/bus/pci/devices/$pci/remove" || fatal "PCI remove of $pci"
	wait $pid
	rc=$?
	[ $rc != 0 ] || fatal "pci: fio succeeded with vdc removed"
	[ "$(elapsed_since "$t0")" -le 30 ] || fatal "pci: fio took $(elapsed_since "$t0") s to fail"
	grep -q "Input/output error" fio-pci.err fio-pci.out ||
		fatal "pci: fio failed without EIO: $(tail -c 300 fio-pci.err)"
	[ ! -e /sys/block/vdc ] || fatal "vdc still registered after removal"
	expect_eio dd if=/dev/fairq0 of=/dev/null bs=4k count=1 iflag=direct status=none
	wait_idle fairq0
	fairq_destroy fairq0
	log "pci: vdc ($pci) removed under fio: EIO after $(elapsed_since "$t0") s, fairq0 destroyed"
}

rescan_vdc() {
	[ -e /sys/block/vdc ] && return 0
	echo 1 >/sys/bus/pci/rescan
	wait_for_file /dev/vdc 20 || echo "vdc did not come back after a PCI rescan" >&2
}

test_new_lower() {
	null_blk_create nullb130 memory_backed=1 size=32
	cleanup_push null_blk_destroy nullb130
	fairq_create fairq1 /dev/nullb130
	cleanup_push fairq_destroy fairq1
	dd if=/dev/urandom of=p bs=64k count=32 status=none
	dd if=p of=/dev/fairq1 bs=64k oflag=direct status=none || fatal "write to the new fairq"
	[ "$(region_sha /dev/fairq1 0 2048)" = "$(file_sha p)" ] || fatal "new fairq lost data"
	assert_idle fairq1
	log "a new fairq over a new null_blk works in the same boot"
}

cleanup_push rescan_vdc
load_fairq
test_nbd
test_pci_remove
test_new_lower
rescan_vdc
[ -b /dev/vdc ] || fatal "vdc did not come back after a PCI rescan"
[ "$(dev_size_mb /dev/vdc)" = "${FAIRQ_DISK_MB:-512}" ] || fatal "vdc back with $(dev_size_mb /dev/vdc) MiB"
log "vdc back after a PCI rescan"
