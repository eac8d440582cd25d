#!/bin/bash
# Crash consistency: fairq honours flush/FUA ordering.
#
# Stack: /dev/vdb (data) + /dev/vdc (log) -> dm-log-writes "lw" -> fairq0
# -> ext4.  Four processes run create/write/rename/append/unlink
# operations on ext4, each ending in fsync of the file and/or its
# directory (tests/tools/lwreplay work), while a switcher changes fairq0's
# policy (cfq/sfq/fifo) and depth (1..32) every 0.2 s.  After each fsync
# returns, a process appends "P J OP NAME ... SUM SIZE" to a record on
# tmpfs (not on fairq0), then sends "mark pP.J" to lw.  Then everything is
# torn down and the log is replayed onto a zeroed null_blk up to a sample
# of its flush/FUA entries, each taken together with the marks that follow
# it directly (same content, the most claims: a crash right at the last of
# those marks); at each, a transient dm snapshot of the replay is mounted
# (ext4 recovers its journal, as after a power cut), checked against the
# record, unmounted and e2fsck -fn'd (must exit 0).
#
# Why a mark proves "this fsync had returned before log entry X":
# dm-log-writes appends an entry to its logging list when a FLUSH or FUA
# bio completes (the FLUSH preceded by every write that had completed
# before the FLUSH was issued), and a mark when the mark message arrives;
# the log is written in list order.  fsync returns only after ext4 saw
# its FLUSH/FUA bios complete - through fairq0, which must not complete
# them before the lower device did, nor drop PREFLUSH/FUA, nor complete a
# write before it completed below.  The process sends its mark after
# fsync returned, so if fairq0 keeps those duties the mark lies after
# every entry that made the operation durable.  Replaying the entries
# before X therefore must show every operation whose mark is before X.
# Conversely, whatever a process changes after sending mark J can only
# reach the log after that mark (a write is logged after it completes,
# hence after it was issued), so at X, with mark J the process's last one
# before X, operation J+1 may be partly there and J+2 not at all.  The
# checker (lwreplay check) requires exactly that: the state after op J,
# with only op J+1's names (old or new content, atomic rename: one of the
# two names, an in-flight append: anything) left open, and no other file.
# A fairq0 that acked a FLUSH/FUA early or lost the flag puts the mark
# before the entries that make the operation durable, and a checkpoint
# between them shows a durable file missing - if one is sampled there:
# every Nth flush/FUA point plus the last, N chosen for MAX_POINTS.
#
# Self-checks, so that the checker is not vacuous (both at the middle
# checkpoint): the same state checked as if every process were 2 ops
# further along (files fsync'd after the mark) must fail; and a replay
# that leaves out the last write of a verified file's first block before
# that checkpoint must fail naming that file.  At the end the whole log,
# replayed, must equal the data device byte for byte (the replayer).
DESCRIPTION="dm-log-writes under fairq0: ext4 fsync workload replayed to flush/FUA points"
TIMEOUT=900
# shellcheck source=rc
. /fairq/tests/vm/rc

LW=$FAIRQ_SRC/tests/tools/lwreplay
DATA=/dev/vdb
LOGDEV=/dev/vdc
FS_MB=256
SECTORS=$((FS_MB * 2048))
NPROC=4
# CRASH_* override these in a `vm/run --shell` session; the debug kernel
# (FAIRQ_SLOW=8) runs 1/8 of the ops and checkpoints
NOPS=${CRASH_NOPS:-$(scaled 600)}
SEED=${CRASH_SEED:-160}
MAX_POINTS=${CRASH_POINTS:-$(scaled 48)}
MNT=/mnt/crash
RMNT=/mnt/replay
REC=/tmp/crash.record
SNAP="0 $SECTORS snapshot /dev/nullb0 /dev/nullb1 N 8"

dm_gone() {
	[ ! -e "/dev/mapper/$1" ] || dmsetup remove --force "$1"
}

unmount() {
	! mountpoint -q "$1" || umount "$1"
}

switcher() {
	local n=0 pol
	while [ ! -e /tmp/crash.stop ]; do
		for pol in cfq sfq fifo; do
			fairq_set fairq0 policy $pol || echo "policy $pol" >>/tmp/crash.switch.err
			fairq_set fairq0 depth $((RANDOM % 32 + 1)) || echo "depth" >>/tmp/crash.switch.err
			n=$((n + 2))
			sleep 0.2
		done
	done
	echo "$n" >/tmp/crash.switches
}

# record: the workload on ext4 on fairq0 over lw, logged to $LOGDEV
record() {
	local n st
	blkdiscard -z -l $((FS_MB << 20)) "$DATA" || fatal "zeroing $DATA failed"
	dd if=/dev/zero of="$LOGDEV" bs=4k count=1 conv=fsync status=none
	dmsetup create lw --table "0 $SECTORS log-writes $DATA $LOGDEV" || fatal "dmsetup create lw"
	cleanup_push dm_gone lw
	fairq_create fairq0 /dev/mapper/lw policy=cfq depth=8
	cleanup_push fairq_destroy fairq0
	st=$(cat /sys/block/fairq0/queue/write_cache)
	[ "$st" = "write back" ] ||
		fatal "fairq0 write_cache '$st': flushes would stop above fairq0, nothing to prove"
	mkfs.ext4 -q -F -b 4096 -N 4096 -J size=8 \
		-E nodiscard,lazy_itable_init=0,lazy_journal_init=0 /dev/fairq0 ||
		fatal "mkfs.ext4 on fairq0 failed"
	dmsetup message lw 0 mark mkfs || fatal "dmsetup message lw mark failed"
	mkdir -p "$MNT" "$RMNT"
	mount -t ext4 -o nodiscard /dev/fairq0 "$MNT" || fatal "mount fairq0 failed"
	cleanup_push unmount "$MNT"
	for ((n = 0; n < NPROC; n++)); do
		mkdir "$MNT/p$n"
	done
	sync
	dmsetup message lw 0 mark ready || fatal "dmsetup message lw mark failed"
	rm -f /tmp/crash.stop /tmp/crash.switch.err
	switcher &
	log "workload: $NPROC processes x $NOPS ops, seed $SEED, switching policy and depth"
	"$LW" work "$MNT" "$NPROC" "$NOPS" "$SEED" lw "$REC" || {
		touch /tmp/crash.stop
		wait
		fatal "the workload failed"
	}
	touch /tmp/crash.stop
	wait
	[ ! -s /tmp/crash.switch.err ] || fatal "a switch was refused: $(cat /tmp/crash.switch.err)"
	n=$(wc -l <"$REC")
	[ "$n" = $((NPROC * NOPS)) ] || fatal "record has $n lines, expected $((NPROC * NOPS))"
	umount "$MNT" || fatal "umount fairq0 failed"
	log "$(cat /tmp/crash.switches) policy/depth switches; fairq0:" \
		"$(stat_field fairq0 enq_reqs) requests, $(stat_field fairq0 passthrough_reqs) passed through," \
		"$(stat_field fairq0 errors) errors"
	[ "$(stat_field fairq0 errors)" = 0 ] || fatal "fairq0 counted errors"
	[ "$(stat_field fairq0 enq_reqs)" = "$(stat_field fairq0 done_reqs)" ] ||
		fatal "fairq0: enq_reqs != done_reqs"
	fairq_destroy fairq0
	st=$(dmsetup status lw)
	case $st in *logging_disabled*) fatal "dm-log-writes stopped logging: $st" ;; esac
	dmsetup remove lw || fatal "dmsetup remove lw failed"
}

# snap_up / snap_down: a transient snapshot of the replay device
snap_up() {
	dmsetup create lwsnap --table "$SNAP" || fatal "dmsetup create lwsnap"
}

snap_down() {
	dmsetup remove lwsnap || fatal "dmsetup remove lwsnap failed"
}

# checkpoint TO [self]: the replay device holds entries 0..TO-1: mount a
# snapshot, check it against the record, umount, e2fsck; "self" adds the
# two self-checks
checkpoint() {
	local to=$1 x=$(($1 - 1)) out rc victim="" sector entry
	snap_up
	mount -t ext4 /dev/mapper/lwsnap "$RMNT" || fatal "entry $x: mount (journal recovery) failed"
	out=$("$LW" check "$LOGDEV" "$to" "$REC" "$RMNT" ${2:+-v}) ||
		{ echo "$out"; fatal "through entry $x: a file fsync'd before this point is wrong or missing"; }
	echo "${out##*$'\n'}"
	CHECKED=$((CHECKED + 1))
	if [ -n "${2:-}" ]; then
		victim=$(awk '$1 == "victim" { print $2 }' <<<"$out")
		[ -n "$victim" ] || fatal "entry $x: no verified file to corrupt"
		sector=$("$LW" fiemap "$RMNT/$victim") || fatal "fiemap $victim failed"
		out=$("$LW" check "$LOGDEV" "$to" "$REC" "$RMNT" -a 2)
		rc=$?
		echo "self-check 1, as if 2 more ops per process were durable: exit $rc," \
			"$(grep -c '^MISMATCH' <<<"$out") mismatches, e.g."
		grep -m 2 '^MISMATCH' <<<"$out"
		[ "$rc" = 1 ] || fatal "self-check: files fsync'd after the marks went unnoticed (exit $rc)"
	fi
	umount "$RMNT" || fatal "entry $x: umount failed"
	e2fsck -fn /dev/mapper/lwsnap >/tmp/crash.fsck 2>&1 ||
		{ cat /tmp/crash.fsck; fatal "through entry $x: e2fsck -fn not clean"; }
	snap_down
	[ -n "$victim" ] || return 0
	# the same replay without the last write of $victim's first block
	entry=$("$LW" find "$LOGDEV" "$to" "$sector") || fatal "no log entry writes sector $sector"
	snap_up
	"$LW" replay "$LOGDEV" /dev/mapper/lwsnap 0 "$to" -s "$entry" -c "$entry" ||
		fatal "corrupted replay failed"
	mount -t ext4 /dev/mapper/lwsnap "$RMNT" || fatal "entry $x: mount of the corrupted replay failed"
	out=$("$LW" check "$LOGDEV" "$to" "$REC" "$RMNT")
	rc=$?
	umount "$RMNT"
	snap_down
	echo "self-check 2, replay without entry $entry (last write of $victim's sector $sector): exit $rc"
	grep -m 2 '^MISMATCH' <<<"$out"
	if [ "$rc" != 1 ] || ! grep -q "^MISMATCH through entry $x $victim: " <<<"$out"; then
		fatal "self-check: a replay missing a write of $victim before entry $x went unnoticed"
	fi
}

# points: for each flush/FUA entry after the 'ready' mark, the prefix
# length that takes it and the marks right after it (same content, the
# most claims)
points() {
	awk -v r="$1" '
		$1 <= r { next }
		$2 ~ /[FU]/ { if (open) print to; open = 1; to = $1 + 1; next }
		$2 == "M" && open { to = $1 + 1; next }
		open { print to; open = 0 }
		END { if (open) print to }' /tmp/crash.list
}

main() {
	local n step mid to prev=0 t0
	require_cmd dmsetup mkfs.ext4 e2fsck blkdiscard cmp mountpoint
	[ -x "$LW" ] || skip_all "tests/tools/lwreplay not built (make -C tests/tools)"
	require_module dm-mod dm-log-writes dm-snapshot
	load_fairq
	[ "$(dev_size_mb $DATA)" -ge $FS_MB ] || skip_all "$DATA smaller than $FS_MB MiB"
	t0=$SECONDS
	record
	log "recorded in $((SECONDS - t0)) s"
	"$LW" list "$LOGDEV" >/tmp/crash.list || fatal "cannot read the log on $LOGDEV"
	n=$(awk '$5 == "ready" { print $1; exit }' /tmp/crash.list)
	[ -n "$n" ] || fatal "no 'ready' mark in the log"
	points "$n" >/tmp/crash.points
	n=$(wc -l </tmp/crash.points)
	[ "$n" -ge $((NOPS / 2)) ] || fatal "only $n flush/FUA entries for $((NPROC * NOPS)) fsync'd ops"
	[ "$(grep -c ' M 0 0 p[0-9]*\.[0-9]*$' /tmp/crash.list)" = $((NPROC * NOPS)) ] ||
		fatal "the log does not hold one mark per operation"
	step=$(((n + MAX_POINTS - 1) / MAX_POINTS))
	awk -v s="$step" -v n="$n" 'NR % s == 0 || NR == n' /tmp/crash.points >/tmp/crash.sample
	mid=$(sed -n "$((($(wc -l </tmp/crash.sample) + 1) / 2))p" /tmp/crash.sample)
	log "$n flush/FUA entries after the 'ready' mark; checking 1 in $step and the last:" \
		"$(wc -l </tmp/crash.sample) checkpoints (self-checks at the one through entry $((mid - 1)))"

	null_blk_create nullb0 memory_backed=1 size=$FS_MB
	cleanup_push null_blk_destroy nullb0
	null_blk_create nullb1 memory_backed=1 size=128
	cleanup_push null_blk_destroy nullb1
	cleanup_push dm_gone lwsnap
	cleanup_push unmount "$RMNT"
	CHECKED=0
	t0=$SECONDS
	while read -r to; do
		"$LW" replay "$LOGDEV" /dev/nullb0 "$prev" "$to" 2>/dev/null ||
			fatal "replay of entries $prev..$((to - 1)) failed"
		prev=$to
		if [ "$to" = "$mid" ]; then
			checkpoint "$to" self
		else
			checkpoint "$to"
		fi
	done </tmp/crash.sample
	n=$(wc -l </tmp/crash.list)
	"$LW" replay "$LOGDEV" /dev/nullb0 "$prev" "$n" || fatal "replay of the rest failed"
	blockdev --flushbufs /dev/nullb0 "$DATA"
	cmp -n $((FS_MB << 20)) /dev/nullb0 "$DATA" ||
		fatal "the whole log replayed differs from $DATA: the replayer is wrong"
	log "$CHECKED checkpoints checked in $((SECONDS - t0)) s; the whole log replayed equals $DATA"
	echo "crash consistency: $((NPROC * NOPS)) fsync'd ops, $CHECKED flush/FUA points replayed and checked, both self-checks caught"
	unload_fairq
}

main
