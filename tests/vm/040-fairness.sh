#!/bin/bash
# Fairness smoke: a bandwidth-limited null_blk (mbps=4: 64 reads of 64 KiB
# a second, about 15 ms each, so the device and not the TCG guest's CPU
# is the bottleneck, and fio's time to resubmit is small against the
# service time even on a loaded host), two random-read fio processes of
# iodepth 4 and 32 for 12 s each run.
#
# Raw device with mq-deadline: the device serves what is queued, so the
# shares follow the queue depths: the light reader gets about 4/36 = 11%.
# fairq0 with cfq, depth=4, fairness=requests (turns counted in requests,
# not the default device time), quantum=2: the two flows alternate turns
# of 2 requests, and the light reader (4 outstanding) has 2 queued at nearly
# every turn, so it gets about half.  Asserted: its share >= 0.40 (ideal
# 0.5, minus the turns where all 4 of its requests are in flight), and
# the raw device's share below it (else the setup is not device-bound).
# On a checker kernel whose guest gets under 48 of the device's 64 reads
# a second through fairq (CPU-bound, not device-bound), a share under
# 0.40 is a counted skip saying so; on a stock kernel it fails.
# Printed, not asserted: cfq at the default quantum of 8 (measured 0.51
# on 6.1, tests/README.md).  Every fio run, the raw baseline included,
# must succeed: a failed run fails the test.
DESCRIPTION="cfq shares two unequal readers; mq-deadline does not"
TIMEOUT=600
# shellcheck source=rc
. /fairq/tests/vm/rc

RUNTIME=12

# read_pair DEV: sets PAIR to "light_iops heavy_iops" of the two readers.
# Not run in $(...): fatal there would end only the subshell.
read_pair() {
	local dev=$1
	fio --minimal --output=/tmp/fair.out --filename="$dev" --direct=1 \
		--ioengine=libaio --rw=randread --bs=64k --time_based \
		--runtime=$RUNTIME --size=64M \
		--name=light --iodepth=4 \
		--name=heavy --iodepth=32 || fatal "fio failed on $dev: $(head -c 300 /tmp/fair.out)"
	# minimal (terse v3) format: field 3 job name, field 8 read IOPS
	PAIR=$(awk -F';' '$3 == "light" { l = $8 } $3 == "heavy" { h = $8 }
		END { print l, h }' /tmp/fair.out)
	[[ $PAIR =~ ^[0-9.]+\ [0-9.]+$ ]] || fatal "fio on $dev: no IOPS of both readers in its output ('$PAIR')"
}

share() {
	awk -v l="$1" -v h="$2" 'BEGIN { if (l + h == 0) print 0; else printf "%.3f\n", l / (l + h) }'
}

load_fairq
null_blk_create nullb1 mbps=4 size=256 hw_queue_depth=64 irqmode=0
echo mq-deadline >/sys/block/nullb1/queue/scheduler || fatal "no mq-deadline"
read_pair /dev/nullb1
read -r rl rh <<<"$PAIR"
raw=$(share "$rl" "$rh")

echo none >/sys/block/nullb1/queue/scheduler
fairq_create fairq0 /dev/nullb1 policy=cfq depth=4 fairness=requests
read_pair /dev/fairq0
read -r dl dh <<<"$PAIR"
dq=$(share "$dl" "$dh")
fairq_set fairq0 quantum 2
read_pair /dev/fairq0
read -r fl fh <<<"$PAIR"
fq=$(share "$fl" "$fh")
fairq_destroy fairq0
null_blk_destroy nullb1
unload_fairq

printf '%-22s %10s %10s %12s\n' config light_iops heavy_iops light_share
printf '%-22s %10s %10s %12s\n' "nullb1 mq-deadline" "$rl" "$rh" "$raw"
printf '%-22s %10s %10s %12s\n' "fairq0 cfq depth=4 q=8" "$dl" "$dh" "$dq"
printf '%-22s %10s %10s %12s\n' "fairq0 cfq depth=4 q=2" "$fl" "$fh" "$fq"

# Through fairq the stock kernel does 49-51 reads a second here (the
# device's rate), the debug kernel 25-28: there the guest's CPU, not the
# device, sets the pace, and fio's resubmit time moves the shares (0.48-
# 0.50 on an idle host, 0.385 with three guests on the 2 cores).  Below
# 48 a miss is logged and counted as a skip; elsewhere it fails.
fq_total=$(awk -v l="$fl" -v h="$fh" 'BEGIN { printf "%d\n", l + h }')
if ! awk -v s="$fq" 'BEGIN { exit !(s >= 0.40) }'; then
	[ "${FAIRQ_DEBUG_KERNEL:-0}" = 1 ] && [ "$fq_total" -lt 48 ] &&
		skip_all "fairq cfq quantum=2: light reader's share $fq < 0.40 at $fq_total of 64 IOPS: CPU-bound on a checker kernel, not device-bound"
	fatal "fairq cfq quantum=2: light reader's share $fq < 0.40 ($fq_total IOPS)"
fi
awk -v s="$raw" -v f="$fq" 'BEGIN { exit !(s < f) }' ||
	fatal "raw mq-deadline share $raw not below fairq's $fq: the setup is not device-bound"
