#!/bin/bash
# The demo (make demo): /dev/fairq0 over a virtio disk, ext4 on it, then
# a short fairness comparison on a throttled virtio disk (QEMU caps vdc's
# IOPS, so the disk, not the emulated CPU, is the bottleneck): a light
# reader (iodepth 2) against a heavy one (iodepth 32), first on the raw
# disk with mq-deadline, then through fairq0 with cfq at its default
# quantum and at quantum=1.
# shellcheck source=../tests/vm/rc
. /fairq/tests/vm/rc

RUNTIME=${DEMO_RUNTIME:-10}

step() { printf '\n== %s\n' "$*"; }

pair() {
	fio --minimal --output=/tmp/demo.out --filename="$1" --direct=1 \
		--ioengine=libaio --rw=randread --bs=4k --time_based \
		--runtime="$RUNTIME" --size=128M \
		--name=light --iodepth=2 --name=heavy --iodepth=32 >/dev/null ||
		fatal "fio failed on $1"
	# terse v3: field 3 job name, 8 read IOPS, and the completion
	# latency percentiles follow; print IOPS and mean clat [us]
	awk -F';' '$3 == "light" { l = $8; ll = $16 } $3 == "heavy" { h = $8 }
		END { printf "%d %d %.3f %.0f\n", l, h, (l + h) ? l / (l + h) : 0, ll }' /tmp/demo.out
}

load_fairq
step "fairq0 over /dev/vdb with ext4"
fairq_create fairq0 /dev/vdb
echo "created /dev/fairq0: $(cat /sys/block/fairq0/size) sectors over vdb"
mkfs.ext4 -q -F /dev/fairq0
mkdir -p /mnt/demo
mount /dev/fairq0 /mnt/demo
for n in 1 2 3; do
	dd if=/dev/urandom of=/mnt/demo/file$n bs=1M count=8 status=none &
done
wait
sync
df -h /mnt/demo | tail -n 1
umount /mnt/demo
e2fsck -fn /dev/fairq0 >/dev/null && echo "e2fsck: clean"
grep -E '^(policy|enq_reqs|done_reqs|flows) ' /sys/block/fairq0/fairq/stats
fairq_destroy fairq0

step "fairness on a throttled virtio disk (vdc): light iodepth 2 vs heavy iodepth 32, ${RUNTIME}s"
echo mq-deadline >/sys/block/vdc/queue/scheduler
read -r rl rh rs rlat <<<"$(pair /dev/vdc)"
echo none >/sys/block/vdc/queue/scheduler
fairq_create fairq0 /dev/vdc policy=cfq depth=4
read -r fl fh fs flat <<<"$(pair /dev/fairq0)"
fairq_set fairq0 quantum 1
read -r ql qh qs qlat <<<"$(pair /dev/fairq0)"
fairq_destroy fairq0

printf '\n%-24s %11s %11s %12s %16s\n' scheduler light_iops heavy_iops light_share light_clat_us
printf '%-24s %11s %11s %12s %16s\n' "vdc mq-deadline" "$rl" "$rh" "$rs" "$rlat"
printf '%-24s %11s %11s %12s %16s\n' "fairq0 cfq depth=4" "$fl" "$fh" "$fs" "$flat"
printf '%-24s %11s %11s %12s %16s\n' "fairq0 cfq depth=4 q=1" "$ql" "$qh" "$qs" "$qlat"
cat <<'TXT'

With the default quantum (8 requests a turn) a reader that never has 8
queued gets only what it has queued at each turn; quantum=1 alternates
one request per flow per turn, so the light reader gets about half.
TXT
unload_fairq
