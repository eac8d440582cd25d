#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fairq.ko smoke test, the driver author's own: fairq0 over a 256 MiB
# memory-backed null_blk made in configfs; a pattern written through
# fairq0 reads back through fairq0 and, after power-off, straight from the
# null_blk; stats counted it; sysfs tunables switch; a refused write
# (bad value, or EBUSY while powered/open) leaves the value as it was
# (read back); rmmod is refused while a configfs entry exists and works
# once it is gone.
DESCRIPTION="driver smoke: configfs, data through fairq0, stats, rmmod refusal"
TIMEOUT=300

# shellcheck source=rc
. /fairq/tests/vm/rc

NB=nullb_s
FQ=fairq0
SYS=/sys/block/$FQ/fairq

test_create() {
	null_blk_create $NB memory_backed=1 size=256 blocksize=512
	cleanup_push null_blk_destroy $NB
	load_fairq
	# fastpath=off: a QD1 reader must show as a flow (test_flow_lines)
	fairq_create $FQ /dev/$NB depth=8 fastpath=off
	cleanup_push fairq_destroy $FQ
	[ "$(dev_size_mb /dev/$FQ)" = 256 ] || fatal "$FQ is $(dev_size_mb /dev/$FQ) MiB, want 256"
	[ -d "$SYS" ] || fatal "$SYS missing"
	[ "$(cat $SYS/depth)" = 8 ] || fatal "depth not 8 in sysfs"
	[ "$(cat $SYS/backing)" = /dev/$NB ] || fatal "sysfs backing is '$(cat $SYS/backing)'"
	log "$FQ: $(dev_size_mb /dev/$FQ) MiB over /dev/$NB"
}

# 32 MiB in mixed sizes at an odd offset, O_DIRECT both ways.
test_data() {
	local want got
	dd if=/dev/urandom of=pattern bs=1M count=32 status=none
	want=$(sha256sum <pattern | cut -d' ' -f1)
	dd if=pattern of=/dev/$FQ bs=256k seek=12 oflag=direct status=none ||
		fatal "write through $FQ failed"
	dd if=/dev/zero of=/dev/$FQ bs=4k count=1 oflag=direct,dsync status=none ||
		fatal "dsync write through $FQ failed"
	sync
	got=$(dd if=/dev/$FQ bs=64k skip=48 count=512 iflag=direct status=none |
		sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fatal "$FQ read back $got, wrote $want"
	got=$(dd if=/dev/$FQ bs=1M skip=3 count=32 status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fatal "$FQ buffered read back $got, wrote $want"
	log "32 MiB round-trip through $FQ"
}

test_stats() {
	local n
	n=$(stat_field $FQ enq_reqs)
	[ -n "$n" ] && [ "$n" -gt 0 ] || fatal "stats enq_reqs is '$n'"
	[ "$(stat_field $FQ queued)" = 0 ] || fatal "stats queued is $(stat_field $FQ queued) when idle"
	[ "$(stat_field $FQ inflight)" = 0 ] || fatal "stats inflight is $(stat_field $FQ inflight) when idle"
	[ "$(stat_field $FQ done_reqs)" = "$(stat_field $FQ disp_reqs)" ] || fatal "done_reqs != disp_reqs"
	[ "$(stat_field $FQ errors)" = 0 ] || fatal "stats errors $(stat_field $FQ errors)"
	log "stats: enq_reqs $n, passthrough $(stat_field $FQ passthrough_reqs)"
}

# Flows exist only while they have work: sample stats under a reader.
test_flow_lines() {
	local pid i seen=0
	dd if=/dev/$FQ of=/dev/null bs=4k iflag=direct status=none &
	pid=$!
	for i in $(seq 50); do
		if grep -q "^flow key=$pid class=be level=[0-7] " "$SYS/stats"; then
			seen=1
			break
		fi
		sleep 0.05
	done
	cat "$SYS/stats"
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	[ $seen = 1 ] || fatal "no flow line for reader pid $pid in stats"
	log "flow line for the reader seen"
}

# Switch policies and depth while a reader runs: every read completes.
test_switch() {
	local pid p
	dd if=/dev/$FQ of=/dev/null bs=64k iflag=direct status=none &
	pid=$!
	for p in sfq fifo cfq sfq cfq; do
		echo $p >$SYS/policy || fatal "policy=$p refused"
		echo $((RANDOM % 16 + 1)) >$SYS/depth || fatal "depth refused"
		sleep 0.2
	done
	wait $pid || fatal "reader through $FQ failed during switches"
	[ "$(cat $SYS/policy)" = cfq ] || fatal "policy reads '$(cat $SYS/policy)'"
	# refused writes: the errno, the value read back unchanged, a
	# kernel warning naming the attribute
	write_fails EINVAL $SYS/policy bogus
	write_fails ERANGE $SYS/depth 0
	write_fails EINVAL $SYS/depth 4x
	log "policy/depth switches under I/O ok; refused writes left policy $(cat $SYS/policy), depth $(cat $SYS/depth)"
}

test_power_off_rules() {
	local want got
	# refused while powered (or open): errno, and the value unchanged
	exec 9</dev/$FQ
	write_refused EBUSY "$FAIRQ_CONFIGFS/$FQ/power" 0
	exec 9<&-
	write_refused EBUSY "$FAIRQ_CONFIGFS/$FQ/max_flows" 64
	write_refused EBUSY "$FAIRQ_CONFIGFS/$FQ/backing" /dev/vdb
	echo 0 >"$FAIRQ_CONFIGFS"/$FQ/power || fatal "power=0 refused"
	wait_for_gone /dev/$FQ || fatal "/dev/$FQ still there after power=0"
	want=$(sha256sum <pattern | cut -d' ' -f1)
	got=$(dd if=/dev/$NB bs=1M skip=3 count=32 iflag=direct status=none |
		sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fatal "$NB holds $got, wrote $want through $FQ"
	echo 128 >"$FAIRQ_CONFIGFS"/$FQ/max_flows || fatal "max_flows refused while off"
	log "power-off rules ok, data on $NB"
}

# Limits come from the lower device (the write cache is always on, see
# 210-write-cache); flushes and discards pass straight down and are
# counted as passthrough.
test_passthrough() {
	local q=/sys/block/fqs2/queue l=/sys/block/vdb/queue a p0 p1
	# fastpath=off: test_classify reads the flow keys of QD1 readers
	fairq_create fqs2 /dev/vdb fastpath=off
	for a in logical_block_size physical_block_size max_hw_sectors_kb \
		 discard_max_bytes rotational; do
		[ "$(cat $q/$a)" = "$(cat $l/$a)" ] ||
			fatal "fqs2 $a is '$(cat $q/$a)', vdb has '$(cat $l/$a)'"
	done
	p0=$(awk '$1 == "passthrough_reqs" { print $2 }' /sys/block/fqs2/fairq/stats)
	dd if=/dev/urandom of=/dev/fqs2 bs=4k count=16 oflag=direct conv=fsync status=none ||
		fatal "write+fsync through fqs2 failed"
	if [ "$(cat $q/discard_max_bytes)" != 0 ]; then
		blkdiscard -o 1048576 -l 1048576 /dev/fqs2 || fatal "blkdiscard on fqs2 failed"
	fi
	p1=$(awk '$1 == "passthrough_reqs" { print $2 }' /sys/block/fqs2/fairq/stats)
	if [ "$(cat $q/write_cache)" = "write back" ] || [ "$(cat $q/discard_max_bytes)" != 0 ]; then
		[ "$p1" -gt "$p0" ] || fatal "passthrough_reqs stayed at $p0 after fsync/discard"
	fi
	log "fqs2 limits match vdb; passthrough_reqs $p0 -> $p1"
}

# flow_key_seen CMD...: run CMD in the background, print the first flow
# key seen in stats while it runs.
flow_key_seen() {
	local pid i key=""
	"$@" &
	pid=$!
	for i in $(seq 60); do
		key=$(awk '$1 == "flow" { sub("key=", "", $2); print $2; exit }' "$SYS2/stats")
		[ -n "$key" ] && break
		sleep 0.05
	done
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	echo "$key"
}

# Each classify mode keys flows by what it says.
test_classify() {
	local key cg=/sys/fs/cgroup
	SYS2=/sys/block/fqs2/fairq
	echo pid >$SYS2/classify || fatal "classify=pid refused"
	key=$(flow_key_seen dd if=/dev/fqs2 of=/dev/null bs=4k iflag=direct status=none)
	[ -n "$key" ] && [ "$key" != 0 ] || fatal "classify=pid: flow key '$key'"
	echo uid >$SYS2/classify || fatal "classify=uid refused"
	# util-linux setpriv only (busybox's cannot change uid)
	if setpriv --help 2>&1 | grep -q -- --reuid; then
		# dd opens the device as uid 4321
		chmod 0666 /dev/fqs2
		key=$(flow_key_seen setpriv --reuid=4321 --regid=4321 --clear-groups \
			dd if=/dev/fqs2 of=/dev/null bs=4k iflag=direct status=none)
		chmod 0660 /dev/fqs2
		[ "$key" = 4321 ] || fatal "classify=uid: flow key '$key', want 4321"
	fi
	key=$(flow_key_seen dd if=/dev/fqs2 of=/dev/null bs=4k iflag=direct status=none)
	[ "$key" = 0 ] || fatal "classify=uid as root: flow key $key, want 0"
	echo cgroup >$SYS2/classify || fatal "classify=cgroup refused"
	if [ ! -e $cg/cgroup.controllers ]; then
		mount -t cgroup2 none $cg 2>/dev/null || true
	fi
	if grep -qw io $cg/cgroup.controllers 2>/dev/null; then
		echo +io >$cg/cgroup.subtree_control 2>/dev/null
		mkdir -p $cg/fq005
		key=$(flow_key_seen sh -c "echo \$\$ > $cg/fq005/cgroup.procs &&
			exec dd if=/dev/fqs2 of=/dev/null bs=4k iflag=direct status=none")
		[ "$key" = "$(stat -c %i $cg/fq005)" ] ||
			fatal "classify=cgroup: flow key $key, cgroup id $(stat -c %i $cg/fq005)"
		rmdir $cg/fq005
		log "classify pid/uid/cgroup keys ok (cgroup id $key)"
	else
		log "classify pid/uid keys ok (no cgroup2 io controller)"
	fi
	echo tgid >$SYS2/classify
}

# A lower device error reaches the original bio and the stats.
test_errors() {
	local s=/sys/block/fqe/fairq e
	null_blk_create nullb_e memory_backed=1 size=16
	cleanup_push null_blk_destroy nullb_e
	echo "+2048-2055" >$NULLB_CONFIGFS/nullb_e/badblocks 2>/dev/null ||
		{ log "null_blk has no badblocks: error test skipped"; return 0; }
	fairq_create fqe /dev/nullb_e
	dd if=/dev/fqe of=/dev/null bs=4k count=256 iflag=direct status=none ||
		fatal "read of good sectors through fqe failed"
	if dd if=/dev/fqe of=/dev/null bs=4k skip=256 count=1 iflag=direct status=none 2>/dev/null; then
		fatal "read of a bad block through fqe succeeded"
	fi
	e=$(awk '$1 == "errors" { print $2 }' $s/stats)
	[ "$e" -gt 0 ] || fatal "stats errors is $e after a failed read"
	[ "$(awk '$1 == "inflight" { print $2 }' $s/stats)" = 0 ] || fatal "inflight after error"
	fairq_destroy fqe
	null_blk_destroy nullb_e
	log "lower I/O error: EIO to the reader, errors $e in stats"
}

# An entry named like an existing disk cannot power on; nothing changes.
test_name_clash() {
	local d=$FAIRQ_CONFIGFS/vdc
	mkdir "$d" || fatal "mkdir $d failed"
	echo /dev/$NB >"$d"/backing || fatal "backing for vdc refused"
	expect_errno EEXIST "echo 1 > $d/power"
	[ "$(cat "$d"/power)" = 0 ] || fatal "vdc entry powered on"
	[ -b /dev/vdc ] || fatal "/dev/vdc gone"
	# the lower device was released again: another claim works
	exec 8</dev/$NB
	exec 8<&-
	rmdir "$d" || fatal "rmdir $d failed"
	log "name clash with /dev/vdc refused with EEXIST"
}

# Paths that wait on the hrtimer: anticipation, the IDLE class's grace,
# sfq perturbation.  Then rmdir while IDLE-class bios sit queued behind a
# 60 s grace: teardown must send them down at once, not wait.
test_timers() {
	local s=/sys/block/fqs2/fairq c=$FAIRQ_CONFIGFS/fqs2 p1 p2 t0 t1
	require_cmd ionice
	echo 2000 >$s/idle_us && echo 50 >$s/idle_grace_ms || fatal "idle tunables refused"
	ionice -c3 dd if=/dev/fqs2 of=/dev/null bs=4k count=1000 iflag=direct status=none &
	p1=$!
	dd if=/dev/fqs2 of=/dev/null bs=4k count=1000 skip=5000 iflag=direct status=none &
	p2=$!
	wait $p1 || fatal "idle-class reader failed"
	wait $p2 || fatal "best-effort reader failed"
	echo sfq >$s/policy && echo 20 >$s/perturb_ms || fatal "sfq tunables refused"
	dd if=/dev/fqs2 of=/dev/null bs=4k count=2000 iflag=direct status=none ||
		fatal "reader under sfq failed"
	[ "$(awk '$1 == "perturbations" { print $2 }' $s/stats)" -gt 0 ] ||
		fatal "no sfq perturbation counted"
	echo cfq >$s/policy && echo 0 >$s/idle_us && echo 60000 >$s/idle_grace_ms ||
		fatal "cfq tunables refused"
	dd if=/dev/fqs2 of=/dev/null bs=4k iflag=direct status=none 2>/dev/null &
	p2=$!
	sleep 0.5
	ionice -c3 dd if=/dev/fqs2 of=/dev/null bs=4k count=100 iflag=direct status=none 2>/dev/null &
	p1=$!
	sleep 1
	log "before rmdir: queued $(awk '$1 == "queued" { print $2 }' $s/stats)"
	t0=$(date +%s)
	rmdir "$c" || fatal "rmdir fqs2 under I/O failed"
	t1=$(date +%s)
	kill $p1 $p2 2>/dev/null
	wait $p1 $p2 2>/dev/null
	[ $((t1 - t0)) -le 10 ] || fatal "rmdir under I/O took $((t1 - t0)) s"
	[ ! -e /sys/block/fqs2 ] || fatal "fqs2 still registered after rmdir"
	log "timer paths ok; rmdir with queued idle-class I/O took $((t1 - t0)) s"
}

test_rmmod() {
	local out
	if out=$(rmmod fairq 2>&1); then
		fatal "rmmod fairq succeeded while $FAIRQ_CONFIGFS/$FQ exists"
	fi
	log "rmmod with an entry: $out"
	[ "$(cat /sys/module/fairq/refcnt)" -gt 0 ] || fatal "no module reference with an entry"
	[ -d /sys/module/fairq ] || fatal "fairq unloaded"
	fairq_destroy $FQ
	unload_fairq
	[ ! -d /sys/module/fairq ] || fatal "fairq still loaded"
	log "rmmod refused with an entry, works without"
}

main() {
	test_create
	test_data
	test_stats
	test_flow_lines
	test_switch
	test_power_off_rules
	test_passthrough
	test_classify
	test_errors
	test_name_clash
	test_timers
	test_rmmod
}

main "$@"
