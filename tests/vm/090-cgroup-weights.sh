#!/bin/bash
# Per-cgroup weights: with classify=cgroup, two cgroup v2 groups at
# weights 100 and 400 (set through cgroup_weights) share a device-bound
# fairq0 1:4 - one group a buffered writer (its bios come from the
# flusher, attributed to the group by cgroup writeback: +io +memory), the
# other a direct reader.  Then the weights are swapped live.
#
# Lower device: null_blk mbps=8 (8 MB/s; 040's setup), no wbt, no
# elevator, so the device and not the TCG guest is the bottleneck and
# what fairq dispatches is what the device serves.  fairq: cfq,
# fairness=bytes (the shares are asserted on bytes), depth=4 (what is
# below is served in dispatch order: little of it), quantum_bytes=128K
# (a round of 128K + 512K takes 80 ms at 8 MB/s, well inside the 250 ms
# sync expiry, so expiry does not distort the shares).  The writer keeps
# its flow backlogged: vm.dirty_bytes=24M is a queue of up to 3 s.
#
# Bytes per group: wbytes/rbytes of the lower device in each group's
# io.stat over a 10 s window after 4 s of warm-up (the clones carry the
# original bio's blkcg).  Bound: the heavy group's bytes over the light
# one's within 15% of 4, i.e. 3.4..4.6, asserted on every kernel but
# a checker kernel (FAIRQ_DEBUG_KERNEL: there the writer's flusher is
# CPU-bound), where the test ends, after all its other checks, as a
# counted skip naming the ratios it did not assert.  The stats
# must show both groups' ids as flow keys at their weights (writeback
# reaches fairq with the writer's cgroup).
#
# Attribute errors: garbage, out of range and id 0 -> EINVAL; removing
# an id that is not set -> ENOENT; the 257th id -> ENOSPC; read back in
# ascending id order from configfs and sysfs alike; kept across power
# off and on.
DESCRIPTION="cgroup_weights: 100 vs 400 share 1:4 (buffered writer, direct reader); errno cases"
TIMEOUT=420
# shellcheck source=rc
. /fairq/tests/vm/rc
unload_at_end

CG=/sys/fs/cgroup
NB=nullb90
FQ=fairq0
CFS=$FAIRQ_CONFIGFS/$FQ
SYS=/sys/block/$FQ/fairq
WARMUP=$((4 * ${FAIRQ_SLOW:-1}))	# longer on a checker kernel: the flusher starts later
WINDOW=$((10 * ${FAIRQ_SLOW:-1}))
MB=1048576

setup_cgroups() {
	[ -e $CG/cgroup.controllers ] || skip_all "no cgroup v2 at $CG"
	grep -qw io $CG/cgroup.controllers && grep -qw memory $CG/cgroup.controllers ||
		skip_all "cgroup v2 has no io or memory controller"
	echo "+io +memory" >$CG/cgroup.subtree_control ||
		fatal "cannot enable +io +memory in $CG/cgroup.subtree_control"
	mkdir -p $CG/fq090w $CG/fq090r || fatal "mkdir cgroups"
	cleanup_push rmdir $CG/fq090w $CG/fq090r
	grep -qw io $CG/fq090w/cgroup.controllers ||
		fatal "io controller not enabled in fq090w"
	WID=$(stat -c %i $CG/fq090w)
	RID=$(stat -c %i $CG/fq090r)
}

setup_device() {
	local old_bytes old_bg
	null_blk_create $NB mbps=8 size=256 hw_queue_depth=64 irqmode=0
	cleanup_push null_blk_destroy $NB
	echo none >/sys/block/$NB/queue/scheduler
	[ -e /sys/block/$NB/queue/wbt_lat_usec ] && echo 0 >/sys/block/$NB/queue/wbt_lat_usec
	fairq_create $FQ /dev/$NB policy=cfq classify=cgroup fairness=bytes \
		depth=4 quantum_bytes=131072
	cleanup_push fairq_destroy $FQ
	NBDEV=$(cat /sys/block/$NB/dev)
	read -r old_bytes </proc/sys/vm/dirty_bytes
	read -r old_bg </proc/sys/vm/dirty_background_bytes
	cleanup_push sysctl_restore "$old_bytes" "$old_bg" "$(cat /proc/sys/vm/dirty_ratio)" \
		"$(cat /proc/sys/vm/dirty_background_ratio)"
	echo $((24 * MB)) >/proc/sys/vm/dirty_bytes
	echo $((8 * MB)) >/proc/sys/vm/dirty_background_bytes
}

# sysctl_restore BYTES BG_BYTES RATIO BG_RATIO: the dirty limits as they were
sysctl_restore() {
	if [ "$1" != 0 ]; then echo "$1" >/proc/sys/vm/dirty_bytes; else echo "$3" >/proc/sys/vm/dirty_ratio; fi
	if [ "$2" != 0 ]; then echo "$2" >/proc/sys/vm/dirty_background_bytes; else echo "$4" >/proc/sys/vm/dirty_background_ratio; fi
}

# iostat_bytes CGROUP KEY: KEY (rbytes/wbytes) of the lower device in
# io.stat; 0 while the group has no line (or no io.stat) for it yet
iostat_bytes() {
	local v
	v=$(awk -v d="$NBDEV" -v k="$2" '$1 == d {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) v = kv[2] } }
		END { print v + 0 }' "$CG/$1/io.stat" 2>/dev/null)
	echo "${v:-0}"
}

# flow_weight KEY: weight= of the flow with key KEY in the stats (a flow
# that drained for a moment is gone: up to 2 s of retries), or nothing
flow_weight() {
	local i w
	for i in $(seq 20); do
		w=$(awk -v k="key=$1" '$1 == "flow" && $2 == k {
			for (i = 3; i <= NF; i++) if ($i ~ /^weight=/) { sub("weight=", "", $i); print $i; exit } }' $SYS/stats)
		[ -n "$w" ] && break
		sleep 0.1
	done
	echo "$w"
}

start_load() {
	# the writer loops over the first 128 MiB through the page cache,
	# the reader reads the second 128 MiB directly
	sh -c "echo \$\$ >$CG/fq090w/cgroup.procs && exec fio --name=w --filename=/dev/$FQ \
		--rw=write --bs=1M --size=128M --offset=0 --ioengine=psync --direct=0 \
		--time_based --runtime=600 --output=/dev/null" &
	WPID=$!
	sh -c "echo \$\$ >$CG/fq090r/cgroup.procs && exec fio --name=r --filename=/dev/$FQ \
		--rw=read --bs=64k --size=128M --offset=128M --ioengine=libaio --direct=1 \
		--iodepth=16 --time_based --runtime=600 --output=/dev/null" &
	RPID=$!
	cleanup_push stop_load
}

stop_load() {
	kill "$WPID" "$RPID" 2>/dev/null
	wait "$WPID" "$RPID" 2>/dev/null
	return 0
}

# measure LABEL HEAVY: bytes of each group over the window; HEAVY (w or
# r) is the group at weight 400.  Fails unless heavy/light is 3.4..4.6
# (not checked on a checker kernel).
measure() {
	local label=$1 heavy=$2 w0 r0 w1 r1 w r ratio ww wr n
	# both fio jobs doing I/O first: one that starts late (a loaded host)
	# would show 0 bytes in the window
	for ((n = 0; n < 300 * ${FAIRQ_SLOW:-1}; n++)); do
		[ "$(iostat_bytes fq090w wbytes)" -gt 0 ] &&
			[ "$(iostat_bytes fq090r rbytes)" -gt 0 ] && break
		sleep 0.1
	done
	sleep $WARMUP
	w0=$(iostat_bytes fq090w wbytes)
	r0=$(iostat_bytes fq090r rbytes)
	sleep $WINDOW
	w1=$(iostat_bytes fq090w wbytes)
	r1=$(iostat_bytes fq090r rbytes)
	ww=$(flow_weight "$WID")
	wr=$(flow_weight "$RID")
	w=$((w1 - w0))
	r=$((r1 - r0))
	kill -0 "$WPID" 2>/dev/null && kill -0 "$RPID" 2>/dev/null || fatal "$label: fio died"
	[ "$w" -gt 0 ] || fatal "$label: the writer's group has no write bytes on $NB (writeback not attributed)"
	[ "$r" -gt 0 ] || fatal "$label: the reader's group has no read bytes on $NB"
	if [ "$heavy" = w ]; then
		ratio=$(awk -v a="$w" -v b="$r" 'BEGIN { printf "%.2f", a / b }')
	else
		ratio=$(awk -v a="$r" -v b="$w" 'BEGIN { printf "%.2f", a / b }')
	fi
	printf '%-24s writer %6.1f MiB (weight %s)  reader %6.1f MiB (weight %s)  heavy/light %s\n' \
		"$label" "$(awk -v b="$w" 'BEGIN { print b / 1048576 }')" "${ww:-gone}" \
		"$(awk -v b="$r" 'BEGIN { print b / 1048576 }')" "${wr:-gone}" "$ratio"
	# the flows fairq saw are the two groups, at the weights set
	[ "$ww" = "$([ "$heavy" = w ] && echo 400 || echo 100)" ] ||
		fatal "$label: stats show the writer's group ($WID) at weight '${ww:-no flow}'"
	[ "$wr" = "$([ "$heavy" = r ] && echo 400 || echo 100)" ] ||
		fatal "$label: stats show the reader's group ($RID) at weight '${wr:-no flow}'"
	if [ "${FAIRQ_DEBUG_KERNEL:-0}" = 1 ]; then
		# KASAN makes the flusher CPU-bound: the writer cannot keep its
		# flow backlogged at 8 MB/s, and a work-conserving scheduler
		# gives the reader what the writer leaves (measured: 0.44).
		# The rest is checked; the test ends as a counted skip.
		NOT_ASSERTED+="${NOT_ASSERTED:+, }$label $ratio"
		return 0
	fi
	awk -v x="$ratio" 'BEGIN { exit !(x >= 3.4 && x <= 4.6) }' ||
		fatal "$label: heavy/light bytes $ratio, want 4 +- 15% (3.4..4.6)"
}

test_shares() {
	echo 1 >/proc/sys/vm/drop_caches
	echo "$WID 400" >"$CFS"/cgroup_weights || fatal "cgroup_weights '$WID 400' refused"
	echo "$RID 100" >$SYS/cgroup_weights || fatal "cgroup_weights '$RID 100' refused"
	start_load
	measure "writer 400, reader 100" w
	# live change, through sysfs this time
	echo "$WID 100" >$SYS/cgroup_weights || fatal "cgroup_weights '$WID 100' refused"
	echo "$RID 400" >$SYS/cgroup_weights || fatal "cgroup_weights '$RID 400' refused"
	measure "writer 100, reader 400" r
	stop_load
	echo "$WID 0" >"$CFS"/cgroup_weights || fatal "removing $WID refused"
	echo "$RID 0" >"$CFS"/cgroup_weights || fatal "removing $RID refused"
}

test_errors() {
	local f=$CFS/cgroup_weights i got want
	[ -z "$(cat "$f")" ] || fatal "cgroup_weights not empty at the start: $(cat "$f")"
	for v in "garbage" "123" "123 x" "x 100" "123 1001" "123 -1" "0 100" \
		"-5 100" "123 100 7" "99999999999999999999 100"; do
		write_fails EINVAL "$f" "$v"
	done
	# two entries in one write(2) (bash's echo writes line by line)
	expect_errno EINVAL "printf '123 100\\n456 100\\n' | dd of=$f bs=4k status=none"
	[ -z "$(cat "$f")" ] || fatal "a refused two-line write set '$(cat "$f")'"
	write_fails ENOENT "$f" "424242 0"
	# ascending id order, an update replaces, configfs and sysfs agree
	echo "30 300" >"$f" && echo "10 100" >"$f" && echo "20 200" >$SYS/cgroup_weights &&
		echo "10 1000" >"$f" || fatal "setting 10/20/30 refused"
	want=$'10 1000\n20 200\n30 300'
	[ "$(cat "$f")" = "$want" ] || fatal "configfs reads '$(cat "$f")', want '$want'"
	[ "$(cat $SYS/cgroup_weights)" = "$want" ] || fatal "sysfs reads '$(cat $SYS/cgroup_weights)'"
	# kept across power off and on
	echo 0 >"$CFS"/power && echo 1 >"$CFS"/power || fatal "power cycle refused"
	wait_for_file /dev/$FQ
	[ "$(cat "$f")" = "$want" ] || fatal "after power off/on: '$(cat "$f")', want '$want'"
	[ "$(cat $SYS/cgroup_weights)" = "$want" ] || fatal "sysfs after power off/on"
	# 256 entries fit, the 257th does not; an update still does
	for i in $(seq 1000 1252); do
		echo "$i 5" >"$f" || fatal "entry $i of 256 refused"
	done
	got=$(wc -l <"$f")
	[ "$got" = 256 ] || fatal "$got entries, want 256"
	write_fails ENOSPC "$f" "5000 5"
	echo "1252 6" >"$f" || fatal "update in a full table refused"
	for i in 10 20 30 $(seq 1000 1252); do
		echo "$i 0" >"$f" || fatal "removing $i refused"
	done
	[ -z "$(cat "$f")" ] || fatal "table not empty after removing all: $(head -n 3 "$f")"
	log "cgroup_weights errno cases ok (EINVAL x11, ENOENT, ENOSPC at 257), order, power cycle"
}

require_cmd fio
setup_cgroups
setup_device
test_errors
test_shares
# the ratio is asserted on every kernel but the checker kernel, where
# the test is a counted skip that says so (after every other check ran)
[ -z "${NOT_ASSERTED:-}" ] ||
	skip_all "heavy/light ratio not asserted on a checker kernel (KASAN: the writer's flusher is CPU-bound): $NOT_ASSERTED; errno cases and flow weights passed"
log "cgroup weights: 1:4 both ways"
