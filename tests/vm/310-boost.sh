#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The interactive boost in a real kernel (sched/fq_boost.c): a program
# starting up -- cat reading 100 small files cold from ext4 -- while ten
# direct sequential readers stream from the same disk.  fairq0 at its
# defaults over a memory-backed null_blk that serves 2 requests at a time
# in 4 ms each (the benchmark's nullb-lat-mem); ext4 on fairq0.
# 1. The files (4-16 KiB, 10 directories) are written once; their md5
#    sums are the manifest.  Each read below must reproduce it.
# 2. Cold read alone (drop_caches, fresh ro mount): time and boost figures.
# 3. The same under the ten readers (1 MiB, psync, each its own process):
#    time and boost figures.  Asserted: the manifest matches, the cat's
#    flow was boosted (boost_starts grew) and the boost served requests
#    (boost_served grew by at least BOOST_MIN), and the reasons boosts
#    ended add up to no more than the boosts started.  The loaded/alone
#    ratio is printed, not asserted (timing; the benchmark's start-up
#    figure is the measurement).
#    Before it, a control: the same readers on a twin null_blk, not
#    through fairq0, so that its ratio is what they cost the guest's
#    CPUs (printed).
# 4. Afterwards nothing queued or in flight in fairq0, no error, every
#    reader read and reported no error.
DESCRIPTION="the interactive boost serves a program starting up under streaming readers; its stats add up"
TIMEOUT=600
# shellcheck source=rc
. /fairq/tests/vm/rc

NB=nullb310
TWIN=nullb310t
MNT=/mnt/t310
FILES=100
READERS=10
BOOST_MIN=50		# requests the boost must serve in the loaded read

require_cmd fio
require_cmd mkfs.ext4
mkdir -p "$MNT"
cleanup_push "null_blk_destroy $NB"
cleanup_push "null_blk_destroy $TWIN"
cleanup_push "fairq_destroy fairq0"
null_blk_create "$NB" size=512 blocksize=4096 irqmode=2 completion_nsec=4000000 \
	submit_queues=1 hw_queue_depth=2 memory_backed=1
fairq_create fairq0 "/dev/$NB"

mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 /dev/fairq0 ||
	fatal "mkfs.ext4 on fairq0 failed"
mount -t ext4 /dev/fairq0 "$MNT" || fatal "mount failed"
cleanup_push "umount $MNT 2>/dev/null; true"
data=$(head -c 16384 /dev/urandom | base64 -w 0)
for d in $(seq 0 9); do mkdir "$MNT/d$d" || fatal "mkdir failed"; done
for i in $(seq "$FILES"); do
	printf '%s' "${data:0:$((4096 * (1 + i % 4)))}" >"$MNT/d$((i % 10))/f$i" ||
		fatal "writing file $i failed"
done
(cd "$MNT" && find . -type f -exec md5sum {} + | sort -k2) >/tmp/t310.manifest
umount "$MNT" || fatal "umount after populate failed"
[ "$(wc -l </tmp/t310.manifest)" = "$FILES" ] || fatal "manifest has $(wc -l </tmp/t310.manifest) files"

# boost_figures: "starts served time budget kind size depth" now
boost_figures() {
	awk '$1 ~ /^boost_/ { v[$1] = $2 }
		END { print v["boost_starts"], v["boost_served"], v["boost_end_time"],
			v["boost_end_budget"], v["boost_end_kind"], v["boost_end_size"],
			v["boost_end_depth"] }' /sys/block/fairq0/fairq/stats
}

# cold_read TAG: READ_MS, the time to cat every file from a cold ro
# mount; the read must reproduce the manifest
cold_read() {
	local t0 t1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mount -o ro -t ext4 /dev/fairq0 "$MNT" || fatal "$1: mount failed"
	t0=${EPOCHREALTIME/./}
	(cd "$MNT" && find . -type f -exec cat {} + >/dev/null) || fail "$1: cat failed"
	t1=${EPOCHREALTIME/./}
	READ_MS=$(((10#$t1 - 10#$t0) / 1000))
	(cd "$MNT" && find . -type f -exec md5sum {} + | sort -k2) >/tmp/t310.read
	umount "$MNT" || fail "$1: umount failed"
	cmp -s /tmp/t310.manifest /tmp/t310.read &&
		ok "$1: $FILES files read back as written" ||
		fail "$1: files differ from the manifest"
}

read -r s0 v0 _ <<<"$(boost_figures)"
cold_read alone
alone=$READ_MS
read -r s1 v1 _ <<<"$(boost_figures)"
log "alone: $alone ms; boost_starts +$((s1 - s0)), boost_served +$((v1 - v0))"

pids=()
# stop_readers: after a fatal too, before fairq0 goes
stop_readers() {
	local p
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=()
	return 0
}
cleanup_push stop_readers

# readers TAG DEV: READERS direct sequential 1 MiB readers on DEV, each
# its own fio process, until stop_readers
readers() {
	local p
	for p in $(seq "$READERS"); do
		fio --name="seq$p" --filename="$2" --ioengine=psync --direct=1 \
			--rw=read --bs=1M --time_based --runtime=300 \
			--offset=$(((p - 1) * 10))% --size=10% --minimal \
			--output="/tmp/t310-$1-$p.out" >/dev/null 2>&1 &
		pids+=($!)
	done
	sleep 2
}

# readers_check TAG: every reader read something and reported no error
# (fio --minimal: field 5 is the error, field 6 the KiB read; fio exits
# non-zero when interrupted, so its status says nothing here)
readers_check() {
	local p bad=0
	for p in $(seq "$READERS"); do
		awk -F';' '$5 == 0 && $6 > 0 { ok = 1 } END { exit !ok }' \
			"/tmp/t310-$1-$p.out" 2>/dev/null || bad=$((bad + 1))
	done
	[ "$bad" = 0 ] && ok "$1: $READERS readers each read, no error" ||
		fail "$1: $bad of $READERS readers read nothing or reported an error"
}

# Control: the readers on a twin null_blk (not through fairq0): what they
# cost the guest's CPUs alone (each copies the bytes it reads).
null_blk_create "$TWIN" size=512 blocksize=4096 irqmode=2 completion_nsec=4000000 \
	submit_queues=1 hw_queue_depth=2 memory_backed=1
readers control "/dev/$TWIN"
cold_read control
control=$READ_MS
stop_readers
readers_check control
null_blk_destroy "$TWIN"

readers loaded /dev/fairq0
read -r s1 v1 _ <<<"$(boost_figures)"
cold_read loaded
loaded=$READ_MS
read -r s2 v2 et eb ek es ed <<<"$(boost_figures)"
stop_readers
readers_check loaded

log "control (the readers on another disk): $control ms" \
	"($(awk -v a="$alone" -v l="$control" 'BEGIN { printf "%.2f", l / a }')x alone)"
log "loaded: $loaded ms ($(awk -v a="$alone" -v l="$loaded" 'BEGIN { printf "%.2f", l / a }')x alone);" \
	"boost_starts +$((s2 - s1)), boost_served +$((v2 - v1));" \
	"ended (in all): time $et, budget $eb, kind $ek, size $es, depth $ed"
[ $((s2 - s1)) -ge 1 ] && [ $((v2 - v1)) -ge "$BOOST_MIN" ] &&
	ok "loaded: the boost served $((v2 - v1)) requests of $((s2 - s1)) boosted flows" ||
	fail "loaded: boost_starts +$((s2 - s1)), boost_served +$((v2 - v1)) (want >= 1, >= $BOOST_MIN)"
[ $((et + eb + ek + es + ed)) -le "$s2" ] &&
	ok "boost ends ($((et + eb + ek + es + ed))) within boosts started ($s2)" ||
	fail "boost ends $((et + eb + ek + es + ed)) above boosts started $s2"

poll 50 0.1 at_rest fairq0 ||
	fail "queued/inflight $(stat_field fairq0 queued)/$(stat_field fairq0 inflight) at rest"
[ "$(stat_field fairq0 errors)" = 0 ] && ok "no I/O error" ||
	fail "errors $(stat_field fairq0 errors)"
