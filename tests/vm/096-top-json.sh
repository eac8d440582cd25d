#!/bin/bash
# fairqctl top --once and stats --json against the real fairq.ko while
# fio reads /dev/fqt: top names the busy flow by its process ("fio") with
# a non-zero IOPS figure and shows the device totals; stats --json parses
# (jq) with the documented members and types, and its counters agree
# with the text stats.  With a fairq.ko that has cgroup_weights: set, get
# (the path resolved back), remove, the errno messages, and the weights
# in the JSON.  Lower disk: /dev/vdb behind dm-delay (20 ms).
DESCRIPTION="fairqctl top --once and stats --json under fio; cgroup-weight set/get"
QUICK=1
TIMEOUT=300
. "$(dirname "$0")/rc"

CFS=$FAIRQ_CONFIGFS

requires() {
	require_cmd fairqctl fio jq dmsetup blockdev
	[ -b /dev/vdb ] || skip "no /dev/vdb"
	require_module dm-delay
}

stop_fio() {
	[ -n "${FIO_PID:-}" ] && kill "$FIO_PID" 2>/dev/null
	[ -n "${FIO_PID:-}" ] && wait "$FIO_PID" 2>/dev/null
	FIO_PID=
}

test_top() {
	fio --name=reader --filename=/dev/fqt --rw=randread --bs=4k --direct=1 \
		--ioengine=libaio --iodepth=16 --time_based --runtime=60 --numjobs=1 \
		--output=/dev/null >/dev/null 2>&1 &
	FIO_PID=$!
	cleanup_push stop_fio
	# until fio's reads show in the stats (fio starts slowly under TCG)
	local n=300
	until [ "$(stat_field fqt done_reqs)" -gt 100 ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "fio's reads did not show in the stats in 30 s"
		sleep 0.1
	done

	fairqctl top fqt --once --interval 1 >top.out 2>top.err ||
		fail "top --once: exit $? ($(cat top.err))"
	cat top.out
	grep -qE "^fqt  [0-9:]+  policy cfq  classify tgid  depth 32" top.out ||
		fail "top: no header line"
	grep -qE "^total: [0-9.]+ IOPS" top.out || fail "top: no totals line"
	grep -qE "^KEY +NAME +CLASS +WEIGHT +IOPS +MiB/s +QUEUED +INFL +WAIT_MS +MAX_MS$" top.out ||
		fail "top: no column header"
	# the busiest flow is fio's, by name, with reads going on
	row=$(sed -n '/^KEY/{n;p}' top.out)
	echo "$row" | grep -qE "^[0-9]+ +fio +be/[0-7] " || fail "top: first row is not fio: '$row'"
	iops=$(echo "$row" | awk '{print $5}')
	awk -v v="$iops" 'BEGIN { exit !(v > 0) }' || fail "top: fio's IOPS is '$iops'"
	total=$(sed -n 's/^total: \([0-9.]*\) IOPS.*/\1/p' top.out)
	awk -v v="$total" 'BEGIN { exit !(v > 0) }' || fail "top: total IOPS is '$total'"

	fairqctl top fqt --once --interval 0.5 -n 1 >top1.out || fail "top -n 1"
	[ "$(sed -n '/^KEY/,$p' top1.out | wc -l)" = 2 ] || fail "top -n 1: not one row"
}

test_json() {
	fairqctl stats fqt --json >stats.json || fail "stats --json: exit $?"
	fairqctl stats fqt >stats.txt || fail "stats: exit $?"
	jq . stats.json >/dev/null || fail "stats --json does not parse: $(head -c 400 stats.json)"
	jq -e '.format == 1 and .device == "fqt" and (.monotonic_ns | type) == "number"
	       and (.totals | type) == "object" and (.flows | type) == "array"
	       and (.cgroup_weights | type) == "array"' stats.json >/dev/null ||
		fail "stats --json: format/device/monotonic_ns/totals/flows/cgroup_weights"
	jq -e '.totals.policy == "cfq" and .totals.classify == "tgid"
	       and (.totals.done_reqs | type) == "number" and .totals.done_reqs > 0
	       and .totals.flows_max == 4096' stats.json >/dev/null ||
		fail "stats --json: totals: $(jq -c .totals stats.json)"
	jq -e '.flows | length > 0 and all(.[]; (.key | type) == "number"
	       and (.class | type) == "string" and (.weight | type) == "number"
	       and (.reqs | type) == "number" and has("name"))' stats.json >/dev/null ||
		fail "stats --json: flows: $(jq -c .flows stats.json)"
	jq -e 'any(.flows[]; .name == "fio")' stats.json >/dev/null ||
		fail "stats --json: no flow named fio: $(jq -c .flows stats.json)"
	# every total of the text form is in the JSON, with the same value
	# (fio keeps going between the two reads: counters only grow)
	while read -r k v; do
		[ "$k" = flow ] && continue
		j=$(jq -r --arg k "$k" '.totals[$k]' stats.json)
		[ "$j" != null ] || fail "stats --json lacks total '$k'"
	done <stats.txt
	[ "$(jq '.totals | length' stats.json)" = "$(grep -vc '^flow ' stats.txt)" ] ||
		fail "stats --json: not one member per total"
}

test_cgroup_weight() {
	if [ ! -e "$CFS/fqt/cgroup_weights" ]; then
		log "fairq.ko has no cgroup_weights: cgroup-weight not tested"
		return
	fi
	local cg=/sys/fs/cgroup/fqctl-test out
	mkdir -p "$cg" || fail "mkdir $cg"
	cleanup_push "rmdir $cg"
	fairqctl set fqt cgroup-weight "$cg=300" || fail "set cgroup-weight $cg=300"
	out=$(fairqctl get fqt cgroup-weight) || fail "get cgroup-weight"
	[ "$out" = "$cg=300" ] || fail "get cgroup-weight: '$out', want '$cg=300'"
	grep -qx "$(stat -c %i "$cg") 300" "$CFS/fqt/cgroup_weights" ||
		fail "cgroup_weights: $(cat "$CFS/fqt/cgroup_weights")"
	fairqctl stats fqt --json >w.json || fail "stats --json"
	jq -e --arg p "$cg" '.cgroup_weights == [{"id": .cgroup_weights[0].id, "path": $p, "weight": 300}]' \
		w.json >/dev/null || fail "stats --json cgroup_weights: $(jq -c .cgroup_weights w.json)"
	fairqctl set fqt cgroup-weight fqctl-test=1001 2>err && fail "weight 1001 accepted"
	grep -q "weight must be 0..1000" err || fail "weight 1001: $(cat err)"
	fairqctl set fqt cgroup-weight fqctl-test=0 || fail "remove the weight"
	[ -z "$(fairqctl get fqt cgroup-weight)" ] || fail "weight still there after =0"
	fairqctl set fqt cgroup-weight fqctl-test=0 2>err && fail "removing an unset weight succeeded"
	grep -q "no weight set for this cgroup" err || fail "remove unset: $(cat err)"
	fairqctl set fqt cgroup-weight /tmp=5 2>err && fail "a non-cgroup directory accepted"
	grep -q "not a cgroup v2 directory" err || fail "/tmp: $(cat err)"
}

main() {
	requires
	load_fairq
	# a slow lower disk (every read 20 ms late, dm-delay), so that fio's
	# reads stay in flight: a cfq flow is listed only while it has I/O
	# queued or in flight
	dmsetup create fqt-slow --table "0 $(blockdev --getsz /dev/vdb) delay /dev/vdb 0 20" ||
		fail "dmsetup create fqt-slow"
	cleanup_push "dmsetup remove fqt-slow"
	fairqctl create /dev/mapper/fqt-slow --name fqt >/dev/null || fail "create fqt"
	cleanup_push "fairq_destroy fqt"
	test_top
	test_json
	stop_fio
	test_cgroup_weight
	log "top/json: all checks passed"
}

main
