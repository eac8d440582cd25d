#!/bin/bash
# ext4 on fairq0: mkfs, mount, four processes write a tree of files at
# once, sync, umount; e2fsck -fn must be clean; after a remount every
# file's checksum must match the manifest taken before the umount.  Then
# the same file system is checked again from the lower device directly.
DESCRIPTION="ext4 on fairq0: parallel writers, fsck clean, checksums match"
TIMEOUT=900
# shellcheck source=rc
. /fairq/tests/vm/rc

MNT=/mnt/fairq

# writer N: 40 files of 4 KiB..1 MiB in dir N, some rewritten
writer() {
	local n=$1 i size
	mkdir -p "$MNT/w$n/sub"
	for i in $(seq 1 40); do
		size=$(( (i * 37 % 256 + 1) * 4 ))
		dd if=/dev/urandom of="$MNT/w$n/f$i" bs=1k count=$size status=none
		[ $((i % 5)) = 0 ] && cp "$MNT/w$n/f$i" "$MNT/w$n/sub/copy$i"
	done
	dd if=/dev/urandom of="$MNT/w$n/f1" bs=1k count=64 conv=notrunc status=none
}

manifest() {
	(cd "$MNT" && find . -type f | sort | xargs sha256sum)
}

load_fairq
fairq_create fairq0 /dev/vdb policy=cfq
mkfs.ext4 -q -F /dev/fairq0 || fatal "mkfs.ext4 on fairq0 failed"
mkdir -p "$MNT"
mount -t ext4 /dev/fairq0 "$MNT" || fatal "mount failed"
for n in 1 2 3 4; do
	writer "$n" &
done
wait
sync
manifest >/tmp/manifest.before
nfiles=$(wc -l </tmp/manifest.before)
[ "$nfiles" = 192 ] || fatal "expected 192 files, found $nfiles"
# switch policy while the file system is mounted and busy with a read
fairq_set fairq0 policy sfq
manifest >/tmp/manifest.during
cmp -s /tmp/manifest.before /tmp/manifest.during || fatal "checksums changed across policy switch"
umount "$MNT" || fatal "umount failed"
e2fsck -fn /dev/fairq0 >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; fatal "e2fsck -fn not clean"; }
mount -t ext4 /dev/fairq0 "$MNT" || fatal "remount failed"
manifest >/tmp/manifest.after
cmp -s /tmp/manifest.before /tmp/manifest.after ||
	{ diff /tmp/manifest.before /tmp/manifest.after | head; fatal "checksums differ after remount"; }
umount "$MNT"
fairq_destroy fairq0
e2fsck -fn /dev/vdb >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; fatal "lower device fsck not clean"; }
echo "ext4: $nfiles files, fsck clean, checksums match after remount and on the lower device"
unload_fairq
