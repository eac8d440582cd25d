#!/bin/bash
# The demo (make demo, vm/demo boots the VM and runs this):
#
# 1. /dev/fairq0 over the virtio disk vdb, at its defaults: ext4 on it,
#    three writers, e2fsck, fairq's counters.
# 2. Fairness on vdc, the virtio disk QEMU throttles (vm/demo: the
#    benchmark's vm/throttle.conf unless DEMO_IOPS says otherwise), so the
#    disk, not the emulated CPU, sets the pace.  Two 4 KiB random direct
#    readers: "light", synchronous (psync, one read at a time), and
#    "heavy", libaio at iodepth 32 -- the benchmark's workload 2.  Three
#    configurations: the raw disk with mq-deadline, the raw disk with bfq
#    (both at their defaults), and fairq0 over vdc created with no tunable
#    written (vdc's own scheduler none, as in the benchmark).  In each,
#    light alone, heavy alone, then both together; a job's slowdown
#    s = its IOPS with the other / its IOPS alone, and G = min s / (1/2),
#    the benchmark's figures (bench/README.md).
#
# The run time of each fio run: fairq_demo_runtime=N on the kernel command
# line (vm/demo: DEMO_RUNTIME), else 5 s, after a 1 s ramp.
# shellcheck source=../tests/vm/rc
. /fairq/tests/vm/rc

RUNTIME=$(sed -n 's/.*fairq_demo_runtime=\([0-9]*\).*/\1/p' /proc/cmdline)
RUNTIME=${RUNTIME:-5}
RAMP=1
OUT=$TMPDIR/fio.out

step() { printf '\n== %s\n' "$*"; }

# set_sched DEV SCHED: the I/O scheduler of /dev/DEV, checked.
set_sched() {
	echo "$2" >"/sys/block/$1/queue/scheduler" 2>/dev/null ||
		fatal "$1: the kernel refused I/O scheduler $2 ($(cat "/sys/block/$1/queue/scheduler"))"
	grep -q "\[$2\]" "/sys/block/$1/queue/scheduler" ||
		fatal "$1: scheduler is $(cat "/sys/block/$1/queue/scheduler"), not $2"
}

# run DEV JOB...: one fio run of the named jobs (light, heavy) together on
# DEV; prints per job "NAME IOPS P99_US" (fio's read IOPS over its
# measured time, and its 99th percentile completion latency; for psync
# that is the whole read).
run() {
	local dev=$1 job args=()
	shift
	for job in "$@"; do
		case $job in
		light) args+=(--name=light --ioengine=psync --iodepth=1) ;;
		heavy) args+=(--name=heavy --ioengine=libaio --iodepth=32) ;;
		esac
	done
	fio --minimal --output="$OUT" --filename="$dev" --direct=1 \
		--rw=randread --bs=4k --size=256M --randrepeat=0 --norandommap \
		--time_based --runtime="$RUNTIME" --ramp_time="$RAMP" \
		--percentile_list=50:99 "${args[@]}" >"$TMPDIR/fio.err" 2>&1 ||
		fatal "fio failed on $dev ($*): $(tail -n 3 "$TMPDIR/fio.err" "$OUT" 2>/dev/null | tr '\n' ' ')"
	# terse v3: field 3 the job's name, 5 its error, 6 KiB read, 9 the
	# read runtime [ms], 18-37 the completion latency percentiles
	# ("99.000000%=N", microseconds)
	awk -F';' -v want="$#" '
		$5 != 0 { print "fio: job " $3 " error " $5 > "/dev/stderr"; bad = 1 }
		{
			iops = $9 > 0 ? $6 / 4 * 1000 / $9 : 0
			p99 = ""
			for (i = 18; i <= 37; i++)
				if ($i ~ /^99\.0*%=/) { p99 = $i; sub(/.*=/, "", p99) }
			printf "%s %.1f %s\n", $3, iops, p99
			n++
		}
		END { exit bad || n != want }' "$OUT" ||
		fatal "fio on $dev ($*) reported an error or too few jobs: $(cat "$OUT")"
}

# config LABEL DEV: light alone, heavy alone, both; one table row.
config() {
	local label=$1 dev=$2 out la lp ha pl plp ph
	log "$label: light alone"
	out=$(run "$dev" light) || exit 1
	read -r _ la lp <<<"$out"
	log "$label: heavy alone"
	out=$(run "$dev" heavy) || exit 1
	read -r _ ha _ <<<"$out"
	log "$label: light and heavy together"
	out=$(run "$dev" light heavy) || exit 1
	read -r _ pl plp <<<"$(grep '^light ' <<<"$out")"
	read -r _ ph _ <<<"$(grep '^heavy ' <<<"$out")"
	echo "$label|$la|$pl|$ha|$ph|$lp|$plp" >>"$TMPDIR/figures"
}

load_fairq
step "fairq0 over /dev/vdb at its defaults, ext4 on it"
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
grep -E '^(policy|depth|depth_now|fastpath_reqs|enq_reqs|done_reqs|errors) ' /sys/block/fairq0/fairq/stats
fairq_destroy fairq0

limit="not throttled"
[ -n "${FAIRQ_THROTTLE_IOPS:-}" ] && limit="throttled to $FAIRQ_THROTTLE_IOPS IOPS"
[ -n "${FAIRQ_THROTTLE_BPS:-}" ] && limit+=", $((FAIRQ_THROTTLE_BPS >> 10)) KiB/s"
step "fairness on vdc ($limit): light vs heavy, ${RUNTIME} s per run"
require_blockdev vdc
command -v fio >/dev/null || fatal "fio is not in the guest"
modprobe bfq 2>/dev/null
: >"$TMPDIR/figures"

set_sched vdc mq-deadline
config "mq-deadline" /dev/vdc
set_sched vdc bfq
config "bfq" /dev/vdc
set_sched vdc none
fairq_create fairq0 /dev/vdc
config "fairq (defaults)" /dev/fairq0
fairq_destroy fairq0
set_sched vdc mq-deadline

# the table, then what it says, from the same figures
awk -F'|' '{
	sl = $2 > 0 ? $3 / $2 : 0; sh = $4 > 0 ? $5 / $4 : 0
	g = (sl < sh ? sl : sh) / (1 / 2)
	row[NR] = sprintf("%-18s %6.0f %6.0f %5.2f   %6.0f %6.0f %5.2f  %5.2f   %7.1f %7.1f",
		$1, $2, $3, sl, $4, $5, sh, g, $6 / 1000, $7 / 1000)
	said[NR] = sprintf("  %-18s light kept %.0f %%, heavy %.0f %% of its speed alone; G %.2f",
		$1 ":", 100 * sl, 100 * sh, g)
	pl[$1] = $3; plp[$1] = $7
} END {
	printf "\n%-18s %20s   %20s  %5s   %15s\n", "", "light IOPS", "heavy IOPS", "", "light p99 [ms]"
	printf "%-18s %6s %6s %5s   %6s %6s %5s  %5s   %7s %7s\n",
		"config", "alone", "paired", "s", "alone", "paired", "s", "G", "alone", "paired"
	for (i = 1; i <= NR; i++) print row[i]
	print ""
	print "light: one 4 KiB read at a time (psync); heavy: 32 at a time (libaio)."
	print "alone: the job by itself; paired: the same job while the other runs;"
	print "s = paired / alone, the part of its own speed a job keeps beside the"
	print "other.  Two jobs with equal claims should each keep half: G is the"
	print "smaller s over 1/2, 1.00 when the worse-off job keeps its half.  p99:"
	print "the light reader'"'"'s 99th percentile read time, alone and paired."
	print ""
	print "In this run:"
	for (i = 1; i <= NR; i++) print said[i]
	f = "fairq (defaults)"; m = "mq-deadline"
	if (pl[m] > 0 && plp[m] > 0)
		printf "  paired, the light reader through fairq: %.1fx the reads it got under\n" \
			"  mq-deadline (%.0f against %.0f IOPS), p99 %.1f ms against %.1f ms\n",
			pl[f] / pl[m], pl[f], pl[m], plp[f] / 1000, plp[m] / 1000
}' "$TMPDIR/figures"
cat <<'TXT'

mq-deadline and bfq are the kernel's schedulers on the raw disk, at
their defaults; fairq is /dev/fairq0 over the same disk, created with
nothing set.  mq-deadline orders requests, not processes: each light
read waits behind up to 32 of the heavy reader's.  fairq queues each
process apart above the disk, keeps the disk only as busy as it needs
to be (depth=auto), and takes turns between the processes by the disk
time each uses: each of two readers with equal claims is owed half.
The benchmark (make bench) measures more disks, workloads and
schedulers.
TXT
unload_fairq
