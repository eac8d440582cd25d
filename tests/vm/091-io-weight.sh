#!/bin/bash
# The weights a machine already states, followed: with classify=cgroup
# and `fairqctl weights sync --follow` running, two cgroups whose io.weight
# says what systemd writes for IOWeight=100 and IOWeight=400 ("default
# 100", "default 400") share fairq0 1:4 with no fairqctl weight command;
# io.weight changed at run time is in force within the follower's
# interval plus one pass; a weight set with fairqctl overrides the
# follower and survives its passes, and removing it hands the cgroup back.
#
# Lower device: null_blk mbps=8, no elevator, no wbt; fairq: cfq,
# fairness=bytes, depth=4, quantum_bytes=128K (090's set-up: the device,
# not the TCG guest, is the bottleneck).  A direct reader (fio, 64 KiB,
# iodepth 16) in each cgroup; bytes per cgroup: rbytes of fairq0's
# MAJ:MIN in each cgroup's io.stat over a 10 s window after 4 s of
# warm-up.  Bounds: heavy/light within 10 % of 4 (3.6..4.4), then of 2
# (1.8..2.2) after the heavy cgroup's io.weight goes to 200; not asserted
# on a checker kernel (FAIRQ_DEBUG_KERNEL, where the guest's CPU sets the
# pace), which ends as a counted skip naming the ratios.
#
# What the kernel does with per-device lines: "MAJ:MIN W" naming fairq0
# in io.weight (what systemd's IODeviceWeight=/dev/fairq0 writes) is
# tried and its answer logged; if iocost can be enabled on fairq0
# (io.cost.qos) the line is written again and the follower must honour
# it; a line naming the lower disk in io.bfq.weight (bfq on the lower
# disk) must be honoured too.  Then 10,000 cgroups (100 parents of 99):
# one pass's time, and the latency from an io.weight change to the entry
# in cgroup_weights with the follower running over them.
DESCRIPTION="weights sync: IOWeight=100/400 share 1:4 with no weight command; change, override, per-device lines, 10,000 cgroups"
TIMEOUT=600
# shellcheck source=rc
. /fairq/tests/vm/rc
unload_at_end

CG=/sys/fs/cgroup
NB=nullb91
FQ=fairq0
CFS=$FAIRQ_CONFIGFS/$FQ
SYS=/sys/block/$FQ/fairq
INTERVAL=1
WARMUP=$((4 * ${FAIRQ_SLOW:-1}))
WINDOW=$((10 * ${FAIRQ_SLOW:-1}))
MANY=$CG/fq091many
STATE=/run/fairq/weights/$FQ

setup_cgroups() {
	[ -e $CG/cgroup.controllers ] || skip_all "no cgroup v2 at $CG"
	grep -qw io $CG/cgroup.controllers || skip_all "cgroup v2 has no io controller"
	echo "+io" >$CG/cgroup.subtree_control || fatal "cannot enable +io in $CG/cgroup.subtree_control"
	mkdir -p $CG/fq091a $CG/fq091b $CG/fq091c || fatal "mkdir cgroups"
	cleanup_push rmdir $CG/fq091a $CG/fq091b $CG/fq091c
	[ -e $CG/fq091a/io.weight ] || skip_all "no io.weight (a kernel without iocost)"
	# as systemd writes IOWeight=100 and IOWeight=400
	echo "default 100" >$CG/fq091a/io.weight || fatal "io.weight 'default 100' refused"
	echo "default 400" >$CG/fq091b/io.weight || fatal "io.weight 'default 400' refused"
	AID=$(stat -c %i $CG/fq091a)
	BID=$(stat -c %i $CG/fq091b)
	CID=$(stat -c %i $CG/fq091c)
}

setup_device() {
	null_blk_create $NB mbps=8 size=256 hw_queue_depth=64 irqmode=0
	cleanup_push null_blk_destroy $NB
	echo none >/sys/block/$NB/queue/scheduler
	[ -e /sys/block/$NB/queue/wbt_lat_usec ] && echo 0 >/sys/block/$NB/queue/wbt_lat_usec
	fairq_create $FQ /dev/$NB policy=cfq classify=cgroup fairness=bytes \
		depth=4 quantum_bytes=131072
	cleanup_push fairq_destroy $FQ
	FQDEV=$(cat /sys/block/$FQ/dev)
	NBDEV=$(cat /sys/block/$NB/dev)
}

# weight_in_table ID: the weight cgroup_weights holds for ID, or nothing
# (bash builtins only: a fork costs a good part of a second under TCG)
weight_in_table() {
	local id w
	while read -r id w; do
		[ "$id" = "$1" ] && { echo "$w"; return; }
	done <"$CFS/cgroup_weights"
}

# table_is ID W: cgroup_weights holds W for ID ("" = no entry)
table_is() {
	[ "$(weight_in_table "$1")" = "$2" ]
}

now() {
	echo "${EPOCHREALTIME/,/.}"
}

# latency_until T0 ID W [SECS]: LAT, the seconds from T0 until
# cgroup_weights holds W for ID, polled every 50 ms; fatal after SECS (30)
latency_until() {
	local t0=$1 id=$2 w=$3 n=0 t1
	until table_is "$id" "$w"; do
		n=$((n + 1))
		[ "$n" -lt $((${4:-30} * 20)) ] ||
			fatal "cgroup_weights did not hold $id=$w within ${4:-30} s: $(tr '\n' ' ' <"$CFS/cgroup_weights")"
		sleep 0.05
	done
	t1=$(now)
	LAT=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}

start_follower() {
	[ -d /run/fairq ] || cleanup_push "rm -rf /run/fairq"
	fairqctl weights sync --follow --interval $INTERVAL >>follow.out 2>>follow.err &
	FPID=$!
	cleanup_push stop_follower
}

stop_follower() {
	[ -n "${FPID:-}" ] || return 0
	kill -TERM "$FPID" 2>/dev/null
	wait "$FPID"
	FRC=$?
	FPID=
}

# flow_weight KEY: weight= of the flow with key KEY in the stats (up to
# 2 s of retries: a flow that drained for a moment is gone), or nothing
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

# iostat_rbytes CGROUP: rbytes of fairq0 in the group's io.stat (0: none yet)
iostat_rbytes() {
	local v
	v=$(awk -v d="$FQDEV" '$1 == d { for (i = 2; i <= NF; i++) { split($i, kv, "=");
		if (kv[1] == "rbytes") v = kv[2] } } END { print v + 0 }' "$CG/$1/io.stat" 2>/dev/null)
	echo "${v:-0}"
}

# reader G OFFSET: a direct reader of fairq0 in cgroup fq091G, in the background
reader() {
	sh -c "echo \$\$ >$CG/fq091$1/cgroup.procs && exec fio --name=$1 --filename=/dev/$FQ \
		--rw=read --bs=64k --size=128M --offset=$2 --ioengine=libaio --direct=1 \
		--iodepth=16 --time_based --runtime=900 --output=/dev/null" &
}

start_load() {
	reader a 0
	APID=$!
	reader b 128M
	BPID=$!
	cleanup_push stop_load
}

stop_load() {
	kill "$APID" "$BPID" 2>/dev/null
	wait "$APID" "$BPID" 2>/dev/null
	return 0
}

# measure LABEL WANT_B: bytes of each group over the window; fails unless
# b/a is within 10 % of WANT (not asserted on a checker kernel)
measure() {
	local label=$1 want=$2 a0 b0 a1 b1 a b ratio wa wb n
	for ((n = 0; n < 300 * ${FAIRQ_SLOW:-1}; n++)); do
		[ "$(iostat_rbytes fq091a)" -gt 0 ] && [ "$(iostat_rbytes fq091b)" -gt 0 ] && break
		sleep 0.1
	done
	sleep "$WARMUP"
	a0=$(iostat_rbytes fq091a)
	b0=$(iostat_rbytes fq091b)
	sleep "$WINDOW"
	a1=$(iostat_rbytes fq091a)
	b1=$(iostat_rbytes fq091b)
	wa=$(flow_weight "$AID")
	wb=$(flow_weight "$BID")
	a=$((a1 - a0))
	b=$((b1 - b0))
	kill -0 "$APID" 2>/dev/null && kill -0 "$BPID" 2>/dev/null || fatal "$label: fio died"
	[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fatal "$label: no read bytes of $FQ in a group's io.stat (a $a, b $b)"
	ratio=$(awk -v x="$b" -v y="$a" 'BEGIN { printf "%.2f", x / y }')
	printf '%-34s a %6.1f MiB (flow weight %s)  b %6.1f MiB (flow weight %s)  b/a %s\n' \
		"$label" "$(awk -v x="$a" 'BEGIN { print x / 1048576 }')" "${wa:-gone}" \
		"$(awk -v x="$b" 'BEGIN { print x / 1048576 }')" "${wb:-gone}" "$ratio"
	[ "$wa" = 100 ] || fatal "$label: stats show group a ($AID) at weight '${wa:-no flow}', want 100"
	[ "$wb" = $((want * 100)) ] || fatal "$label: stats show group b ($BID) at weight '${wb:-no flow}', want $((want * 100))"
	if [ "${FAIRQ_DEBUG_KERNEL:-0}" = 1 ]; then
		NOT_ASSERTED+="${NOT_ASSERTED:+, }$label $ratio"
		return 0
	fi
	awk -v x="$ratio" -v w="$want" 'BEGIN { exit !(x >= 0.9 * w && x <= 1.1 * w) }' ||
		fatal "$label: b/a bytes $ratio, want $want +- 10% ($(awk -v w="$want" 'BEGIN { print 0.9 * w ".." 1.1 * w }'))"
}

test_follow_and_shares() {
	local t0 lat
	start_follower
	# the first pass: b at 400 from io.weight, a (100) without an entry
	poll 200 0.05 table_is "$BID" 400 || fatal "the follower did not write $BID 400: $(cat "$CFS/cgroup_weights")"
	table_is "$AID" "" || fatal "a cgroup at 100 got an entry: $(cat "$CFS/cgroup_weights")"
	grep -qx "$BID 400" "$STATE" || fatal "$STATE does not list $BID 400: $(cat "$STATE")"
	log "first pass: cgroup_weights '$(tr '\n' ' ' <"$CFS/cgroup_weights")', no fairqctl weight command"
	echo 1 >/proc/sys/vm/drop_caches
	start_load
	measure "IOWeight=100 vs IOWeight=400" 4

	# io.weight changed at run time
	t0=$(now)
	echo "default 200" >$CG/fq091b/io.weight || fatal "io.weight 'default 200' refused"
	latency_until "$t0" "$BID" 200
	lat=$LAT
	log "io.weight 'default 400' -> 'default 200': in cgroup_weights after $lat s (interval $INTERVAL s)"
	LAT_CHANGE=$lat
	awk -v l="$lat" -v i="$INTERVAL" -v p="$PASS_BOUND" 'BEGIN { exit !(l <= i + p) }' ||
		fatal "io.weight change took $lat s to be in force, more than interval $INTERVAL + pass bound $PASS_BOUND s"
	measure "after IOWeight=200" 2

	# a weight set with fairqctl wins, pass after pass
	fairqctl set $FQ cgroup-weight $CG/fq091b=50 || fatal "set cgroup-weight fq091b=50"
	[ -e "$STATE" ] && grep -q "^$BID " "$STATE" && fatal "$STATE still lists $BID after a set by hand"
	echo "default 300" >$CG/fq091b/io.weight || fatal "io.weight 'default 300' refused"
	sleep $((3 * INTERVAL + 1))
	table_is "$BID" 50 || fatal "the override did not survive 3 passes: $BID is '$(weight_in_table "$BID")'"
	grep -q "fq091b=50 set by hand, io.weight says 300: left as it is" follow.out ||
		fatal "the follower did not say it left the override: $(tail -n 3 follow.out)"
	[ "$(flow_weight "$BID")" = 50 ] || fatal "stats show b at '$(flow_weight "$BID")', want the override 50"
	log "override b=50 kept over 3 passes while io.weight says 300"

	# the override removed: the follower takes over again
	t0=$(now)
	fairqctl set $FQ cgroup-weight $CG/fq091b=0 || fatal "remove the override"
	latency_until "$t0" "$BID" 300
	lat=$LAT
	grep -qx "$BID 300" "$STATE" || fatal "$STATE does not list $BID 300 again"
	log "override removed: $BID=300 from io.weight after $lat s"
	stop_load
}

# the kernel and per-device lines; the follower honours what it keeps
test_device_lines() {
	local out t0 lat
	if out=$( (echo "$FQDEV 250" >$CG/fq091a/io.weight) 2>&1); then
		log "io.weight '$FQDEV 250' (fairq0) accepted as it is: $(tr '\n' ' ' <$CG/fq091a/io.weight)"
		KERNEL_LINE="accepted"
	else
		log "io.weight '$FQDEV 250' (fairq0, no iocost on it): refused: ${out##*: }"
		KERNEL_LINE="refused (${out##*: })"
		grep -q "^$FQDEV " $CG/fq091a/io.weight && fatal "a refused line shows in io.weight"
		if out=$( (echo "$FQDEV enable=1" >$CG/io.cost.qos) 2>&1); then
			cleanup_push "echo '$FQDEV enable=0' >$CG/io.cost.qos"
			if out=$( (echo "$FQDEV 250" >$CG/fq091a/io.weight) 2>&1); then
				KERNEL_LINE+="; with io.cost.qos '$FQDEV enable=1': accepted"
			else
				KERNEL_LINE+="; with io.cost.qos '$FQDEV enable=1': refused (${out##*: })"
			fi
		else
			KERNEL_LINE+="; io.cost.qos '$FQDEV enable=1' refused (${out##*: })"
		fi
	fi
	log "per-device line for fairq0: $KERNEL_LINE"
	if grep -q "^$FQDEV 250$" $CG/fq091a/io.weight; then
		t0=$(now)
		latency_until "$t0" "$AID" 250
		lat=$LAT
		grep -q "fq091a=250 (io.weight $FQDEV)" follow.out ||
			fatal "the follower did not name the line: $(tail -n 2 follow.out)"
		log "io.weight line '$FQDEV 250' followed after $lat s"
		echo "$FQDEV default" >$CG/fq091a/io.weight || fatal "'$FQDEV default' refused"
		poll 100 0.1 table_is "$AID" "" || fatal "$AID kept an entry after its line went"
	fi
	# a line for the lower disk in io.bfq.weight (bfq on the lower disk)
	modprobe bfq 2>/dev/null
	if ! echo bfq >/sys/block/$NB/queue/scheduler 2>/dev/null; then
		log "no bfq for $NB: the lower-disk line is not tried"
		return
	fi
	cleanup_push "echo none >/sys/block/$NB/queue/scheduler"
	[ -e $CG/fq091c/io.bfq.weight ] || fatal "bfq loaded, no io.bfq.weight"
	t0=$(now)
	echo "$NBDEV 350" >$CG/fq091c/io.bfq.weight || fatal "io.bfq.weight '$NBDEV 350' refused with bfq on $NB"
	latency_until "$t0" "$CID" 350
	lat=$LAT
	grep -q "fq091c=350 (io.bfq.weight $NBDEV)" follow.out ||
		fatal "the follower did not name the lower disk's line: $(tail -n 2 follow.out)"
	log "io.bfq.weight '$NBDEV 350' (the lower disk, bfq) followed after $lat s"
	echo none >/sys/block/$NB/queue/scheduler
	# bfq's per-device weights go with bfq: so does the follower's entry
	if poll 50 0.1 table_is "$CID" ""; then
		log "bfq off $NB: the line is gone from io.bfq.weight, and $CID from cgroup_weights"
	else
		log "bfq off $NB: io.bfq.weight still says '$(tr '\n' ' ' <$CG/fq091c/io.bfq.weight)', $CID=$(weight_in_table "$CID")"
	fi
}

# 10,000 cgroups: 100 parents of 99, io enabled down to them, 1 in 100 at
# a weight of its own (a checker kernel: PARENTS scaled down)
PARENTS=$(scaled 100)
NMANY=$((PARENTS * 100))
make_many() {
	local p n t0
	t0=$(now)
	mkdir $MANY || fatal "mkdir $MANY"
	cleanup_push remove_many
	echo "+io" >$MANY/cgroup.subtree_control || fatal "+io in $MANY"
	(cd $MANY && eval "mkdir p{0..$((PARENTS - 1))}") || fatal "mkdir $PARENTS parents"
	for ((p = 0; p < PARENTS; p++)); do
		echo "+io" >$MANY/p$p/cgroup.subtree_control || fatal "+io in p$p"
		(cd $MANY/p$p && mkdir c{0..98}) || fatal "mkdir 99 children of p$p"
		echo "default $((200 + p))" >$MANY/p$p/c7/io.weight || fatal "io.weight of p$p/c7"
	done
	n=$(find $MANY -mindepth 1 -type d | wc -l)
	[ "$n" = $NMANY ] || fatal "$n cgroups under $MANY, want $NMANY"
	log "$NMANY cgroups made in $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
}

remove_many() {
	[ -d $MANY ] || return 0
	find $MANY -mindepth 1 -depth -type d -exec rmdir {} + && rmdir $MANY
}

test_many() {
	local out ms t0 lat total before
	stop_follower
	# the follower's entries so far (b's): kept as they are by the passes below
	before=$(grep -cv '^\(#\|entry \)' "$STATE")
	make_many
	total=$(find $CG -type d | wc -l)
	out=$(FAIRQ_WEIGHTS_TIMING=1 fairqctl weights sync $FQ 2>&1) || fatal "weights sync: $out"
	echo "$out"
	echo "$out" | grep -qE "^$FQ: $total cgroups, $PARENTS changed, [0-9]+ removed, " ||
		fatal "one pass over $total cgroups: '$(echo "$out" | tail -n 2 | head -n 1)'"
	ms=$(echo "$out" | sed -n 's/.*pass \([0-9.]*\) ms.*/\1/p')
	PASS_MANY=$ms
	log "one pass over $total cgroups (real cgroupfs, TCG): $ms ms"
	out=$(FAIRQ_WEIGHTS_TIMING=1 fairqctl weights sync $FQ 2>&1) || fatal "weights sync: $out"
	ms=$(echo "$out" | sed -n 's/.*pass \([0-9.]*\) ms.*/\1/p')
	PASS_MANY2=$ms
	echo "$out" | grep -qE "^$FQ: $total cgroups, 0 changed, 0 removed, $((PARENTS + before)) as they were" ||
		fatal "a second pass changed something: $out"
	log "a second pass, nothing to change: $ms ms"
	# the follower over them: an io.weight change to its entry, within
	# the wait between passes (the interval, or ten passes' time when a
	# pass takes more than a tenth of it) and one pass
	local id wait
	id=$(stat -c %i $MANY/p$((PARENTS / 2))/c7)
	wait=$(awk -v i="$INTERVAL" -v m="$PASS_MANY2" 'BEGIN { w = 10 * m / 1000; if (w < i) w = i; printf "%.2f", w + 2 * m / 1000 + 0.5 }')
	start_follower
	sleep 2
	t0=$(now)
	echo "default 777" >$MANY/p$((PARENTS / 2))/c7/io.weight || fatal "io.weight of p$((PARENTS / 2))/c7"
	latency_until "$t0" "$id" 777 120
	lat=$LAT
	LAT_MANY=$lat
	log "with $total cgroups: io.weight change in force after $lat s (interval $INTERVAL s, a pass $PASS_MANY2 ms: bound $wait s)"
	awk -v l="$lat" -v w="$wait" 'BEGIN { exit !(l <= w) }' ||
		fatal "with $total cgroups a change took $lat s, more than $wait s"
	stop_follower
	remove_many || fatal "removing the 10,000 cgroups"
	out=$(fairqctl weights sync $FQ) || fatal "weights sync after the cgroups went: $out"
	echo "$out" | grep -qE "^$FQ: [0-9]+ cgroups, 0 changed, $PARENTS removed, " ||
		fatal "the entries of removed cgroups were not removed: $(echo "$out" | tail -n 1)"
}

pass_bound() {
	# the time one pass takes here, with the margin a loaded TCG guest
	# needs between its reads (polling 50 ms, a fork for awk)
	local out ms
	out=$(FAIRQ_WEIGHTS_TIMING=1 fairqctl weights sync --dry-run $FQ 2>&1) || fatal "weights sync --dry-run: $out"
	ms=$(echo "$out" | sed -n 's/.*pass \([0-9.]*\) ms.*/\1/p')
	PASS_FEW=$ms
	PASS_BOUND=$(awk -v m="$ms" 'BEGIN { printf "%.2f", m / 1000 + 0.5 }')
	log "one pass over $(find $CG -type d | wc -l) cgroups: $ms ms; a change must be in force within $INTERVAL + $PASS_BOUND s"
}

require_cmd fio fairqctl
setup_cgroups
setup_device
pass_bound
test_follow_and_shares
test_device_lines
test_many
[ "${FRC:-0}" = 0 ] || fatal "the follower exited $FRC on SIGTERM"
echo "--- the follower's output ---"
cat follow.out
[ -s follow.err ] && { echo "--- its stderr ---"; cat follow.err; }
log "per-device line for fairq0: $KERNEL_LINE"
log "latency: io.weight change to cgroup_weights $LAT_CHANGE s (interval $INTERVAL s, pass $PASS_FEW ms); with $NMANY cgroups $LAT_MANY s (pass $PASS_MANY ms, again $PASS_MANY2 ms)"
[ -z "${NOT_ASSERTED:-}" ] ||
	skip_all "shares not asserted on a checker kernel: $NOT_ASSERTED; the rest passed"
log "io.weight followed: 1:4, 1:2, override, per-device lines, $NMANY cgroups"
