#!/bin/bash
# fairqctl top --once and stats --json against the real fairq.ko while
# fio reads /dev/fqt: top names the busy flow by its process ("fio") with
# a non-zero IOPS figure and shows the device totals; stats --json parses
# (jq) with the documented members and types, and its totals agree
# with the text stats: at rest every value equal (and numbers typed as
# numbers), under fio every value the text reads before and after it
# agree on; list --json and get --json (jq: members, types, the values
# the text forms print).  With a fairq.ko that has cgroup_weights: set,
# get (the path resolved back, and --json), remove, the errno messages,
# and the weights in the JSON.  Lower disk: /dev/vdb behind dm-delay
# (20 ms).
DESCRIPTION="fairqctl top --once and stats --json under fio; cgroup-weight set/get"
TIMEOUT=300
# shellcheck source=rc
. /fairq/tests/vm/rc
unload_at_end

CFS=$FAIRQ_CONFIGFS

stop_fio() {
	[ -n "${FIO_PID:-}" ] && kill "$FIO_PID" 2>/dev/null
	[ -n "${FIO_PID:-}" ] && wait "$FIO_PID" 2>/dev/null
	FIO_PID=
}

test_top() {
	# runs until stop_fio: a debug kernel takes minutes over top and the
	# JSON looks, and a 60 s fio had exited before them (flows [] there)
	fio --name=reader --filename=/dev/fqt --rw=randread --bs=4k --direct=1 \
		--ioengine=libaio --iodepth=16 --time_based --runtime=3600 --numjobs=1 \
		--output=/dev/null >/dev/null 2>&1 &
	FIO_PID=$!
	cleanup_push stop_fio
	# until fio's reads show in the stats (fio starts slowly under TCG)
	local n=300
	until [ "$(stat_field fqt done_reqs)" -gt 100 ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || fatal "fio's reads did not show in the stats in 30 s"
		sleep 0.1
	done

	fairqctl top fqt --once --interval 1 >top.out 2>top.err ||
		fatal "top --once: exit $? ($(cat top.err))"
	cat top.out
	grep -qE "^fqt  [0-9:]+  policy cfq  classify tgid  depth auto" top.out ||
		fatal "top: no header line"
	grep -qE "^depth: now [1-9][0-9]* \(auto\)  changes [0-9]+  epochs [0-9]+  latency floor [0-9.]+ ms$" top.out ||
		fatal "top: no depth line"
	grep -qE "^cost:  read (-|[0-9.]+ us \+ [0-9.]+ ns/B)  write (-|[0-9.]+ us \+ [0-9.]+ ns/B)  \(epochs [0-9]+\)$" top.out ||
		fatal "top: no cost line"
	grep -qE "^total: [0-9.]+ IOPS" top.out || fatal "top: no totals line"
	grep -qE "^KEY +NAME +CLASS +WEIGHT +IOPS +MiB/s +QUEUED +INFL +WAIT_MS +MAX_MS$" top.out ||
		fatal "top: no column header"
	# the busiest flow is fio's, by name, with reads going on
	row=$(sed -n '/^KEY/{n;p}' top.out)
	echo "$row" | grep -qE "^[0-9]+ +fio +be/[0-7] " || fatal "top: first row is not fio: '$row'"
	iops=$(echo "$row" | awk '{print $5}')
	awk -v v="$iops" 'BEGIN { exit !(v > 0) }' || fatal "top: fio's IOPS is '$iops'"
	total=$(sed -n 's/^total: \([0-9.]*\) IOPS.*/\1/p' top.out)
	awk -v v="$total" 'BEGIN { exit !(v > 0) }' || fatal "top: total IOPS is '$total'"

	fairqctl top fqt --once --interval 0.5 -r 1 >top1.out || fatal "top -r 1"
	[ "$(sed -n '/^KEY/,$p' top1.out | wc -l)" = 2 ] || fatal "top -r 1: not one row"
}

test_json() {
	# A flow exists only while it has I/O queued or in flight: on a slow
	# (debug) kernel fio sometimes has nothing outstanding at the very
	# moment of a read, and the flows list is empty then.  Up to 20
	# looks for one with fio's flow in it; the checks below judge the
	# last one.
	local looks=0
	while :; do
		looks=$((looks + 1))
		kill -0 "$FIO_PID" 2>/dev/null || fatal "fio exited before look $looks"
		fairqctl stats fqt >stats.txt || fatal "stats: exit $?"
		fairqctl stats fqt --json >stats.json || fatal "stats --json: exit $?"
		fairqctl stats fqt >stats2.txt || fatal "stats: exit $?"
		{ [ "$looks" -lt 20 ] &&
			! jq -e 'any(.flows[]; .name == "fio")' stats.json >/dev/null 2>&1; } || break
		sleep 0.2
	done
	log "stats --json under fio: fio's flow seen at look $looks of 20"
	jq . stats.json >/dev/null || fatal "stats --json does not parse: $(head -c 400 stats.json)"
	jq -e '.format == 1 and .device == "fqt" and (.monotonic_ns | type) == "number"
	       and (.totals | type) == "object" and (.flows | type) == "array"
	       and (.cgroup_weights | type) == "array"' stats.json >/dev/null ||
		fatal "stats --json: format/device/monotonic_ns/totals/flows/cgroup_weights"
	jq -e '.totals.policy == "cfq" and .totals.classify == "tgid"
	       and (.totals.done_reqs | type) == "number" and .totals.done_reqs > 0
	       and .totals.flows_max == 65536 and .totals.depth == "auto"
	       and .totals.depth_auto == 1 and .totals.depth_now >= 1
	       and (.totals.lat_floor_ns | type) == "number"
	       and (.totals.cost_read_ns | type) == "number"
	       and (.totals.cost_epochs | type) == "number"' stats.json >/dev/null ||
		fatal "stats --json: totals: $(jq -c .totals stats.json)"
	jq -e '.flows | length > 0 and all(.[]; (.key | type) == "number"
	       and (.class | type) == "string" and (.weight | type) == "number"
	       and (.reqs | type) == "number" and has("name"))' stats.json >/dev/null ||
		fatal "stats --json: flows: $(jq -c .flows stats.json); text before: $(grep -c '^flow ' stats.txt) flow line(s), $(wc -c <stats.txt) bytes: $(grep '^flow ' stats.txt | head -n 2)"
	jq -e 'any(.flows[]; .name == "fio")' stats.json >/dev/null ||
		fatal "stats --json: no flow named fio: $(jq -c .flows stats.json)"
	# while fio runs: the text stats read just before and just after
	# the JSON bracket it; every total the two text reads agree on
	# (policy, depth, flows_max, counters that did not move) has that
	# value in the JSON, and the JSON has one member per total.  Gauges
	# (queued, inflight, the depth in force, the timer, the cost model
	# ...) can leave a value and come back to it between the reads, so
	# only the totals that never go down are compared.
	json_totals stats.json >json.tot
	[ "$(wc -l <json.tot)" = "$(grep -vc '^flow ' stats.txt)" ] ||
		fatal "stats --json: $(wc -l <json.tot) totals, the text form has $(grep -vc '^flow ' stats.txt)"
	awk 'BEGIN { split("queued inflight flows depth_now timer_armed timer_in_ns work_pending clones_pending lat_floor_ns cost_read_ns cost_read_ps_per_byte cost_write_ns cost_write_ps_per_byte mem_bytes", g); for (i in g) gauge[g[i]] = 1 }
	     FILENAME == ARGV[1] { if (!($1 in gauge)) a[$1] = $2; next }
	     FILENAME == ARGV[2] { if ($1 in a && a[$1] == $2) same[$1] = $2; next }
	     $1 in same { n++; if ($2 != same[$1]) { print $1 ": text " same[$1] ", json " $2; bad = 1 } }
	     END { if (!bad) print n " totals compared"; exit bad }' \
		stats.txt stats2.txt json.tot >cmp.out ||
		fatal "stats --json under fio: $(head -n 3 cmp.out)"
	log "stats --json under fio: $(cat cmp.out)"
}

SYSFQT=/sys/block/fqt/fairq

# drained: nothing queued or in flight in fqt
drained() {
	[ "$(stat_field fqt queued)" = 0 ] && [ "$(stat_field fqt inflight)" = 0 ]
}

# json_totals FILE: the JSON's totals as "key value" lines, in the
# stats file's form (numbers as decimals, strings bare)
json_totals() {
	jq -r '.totals | to_entries[] | "\(.key) \(.value)"' "$1"
}

# at rest every total of the text form equals the JSON's, value and
# order; each decimal is a JSON number, the rest (policy, classify, and
# depth when it is "auto") strings
test_json_idle() {
	poll 100 0.1 drained || fatal "fqt did not drain: $(grep -E '^(queued|inflight) ' $SYSFQT/stats | tr '\n' ' ')"
	fairqctl stats fqt --json >idle.json || fatal "stats --json: exit $?"
	fairqctl stats fqt >idle.txt || fatal "stats: exit $?"
	grep -q '^flow ' idle.txt && fatal "flows listed at rest: $(grep '^flow ' idle.txt)"
	json_totals idle.json >idle.tot
	diff idle.txt idle.tot >idle.diff ||
		fatal "stats --json at rest differs from the text stats: $(head -n 6 idle.diff | tr '\n' ' ')"
	jq -e '.flows == [] and ([.totals | to_entries[] | select((.value | type) == "number")] | length)
	       == ([.totals | to_entries[] | select(.key != "policy" and .key != "classify"
	                                           and (.key != "depth" or .value != "auto"))] | length)
	       and (.totals.policy | type) == "string" and (.totals.classify | type) == "string"
	       and (.totals.depth == "auto" or (.totals.depth | type) == "number")' \
		idle.json >/dev/null || fatal "stats --json at rest: types: $(jq -c .totals idle.json)"
	[ "$(stat_field fqt done_reqs)" -gt 100 ] || fatal "done_reqs $(stat_field fqt done_reqs) at rest"
	log "stats --json at rest: $(wc -l <idle.tot) totals equal to the text stats ($(grep -E '^(done_reqs|done_bytes) ' idle.txt | tr '\n' ' '))"
}

# list --json and get --json: the values of the text forms, typed
test_list_get_json() {
	local key text
	fairqctl list >list.txt || fatal "list: exit $?"
	fairqctl list --json >list.json || fatal "list --json: exit $?"
	jq -e --arg b "$(cut -d' ' -f2 list.txt)" '.format == 1 and (.devices | length) == 1
	       and .devices[0] == {"name": "fqt", "backing": $b, "power": 1, "policy": "cfq"}' \
		list.json >/dev/null || fatal "list --json: $(jq -c . list.json); list: $(cat list.txt)"
	for key in depth quantum policy classify fairness max_flows; do
		text=$(fairqctl get fqt $key) || fatal "get fqt $key: exit $?"
		fairqctl get fqt $key --json >get.json || fatal "get fqt $key --json: exit $?"
		jq -e --arg k $key --arg v "$text" '.format == 1 and .device == "fqt" and .key == $k
		       and (.value | tostring) == $v
		       and ((.value | type) == (if ($k == "policy" or $k == "classify" or ($v | test("^[0-9]+$") | not))
		                                then "string" else "number" end))' get.json >/dev/null ||
			fatal "get fqt $key --json: $(jq -c . get.json), text '$text'"
	done
	log "list --json and get --json: as the text forms, typed"
}

test_cgroup_weight() {
	if [ ! -e "$CFS/fqt/cgroup_weights" ]; then
		log "fairq.ko has no cgroup_weights: cgroup-weight not tested"
		return
	fi
	local cg=/sys/fs/cgroup/fqctl-test out
	mkdir -p "$cg" || fatal "mkdir $cg"
	cleanup_push "rmdir $cg"
	fairqctl set fqt cgroup-weight "$cg=300" || fatal "set cgroup-weight $cg=300"
	out=$(fairqctl get fqt cgroup-weight) || fatal "get cgroup-weight"
	[ "$out" = "$cg=300" ] || fatal "get cgroup-weight: '$out', want '$cg=300'"
	grep -qx "$(stat -c %i "$cg") 300" "$CFS/fqt/cgroup_weights" ||
		fatal "cgroup_weights: $(cat "$CFS/fqt/cgroup_weights")"
	fairqctl stats fqt --json >w.json || fatal "stats --json"
	jq -e --arg p "$cg" '.cgroup_weights == [{"id": .cgroup_weights[0].id, "path": $p, "weight": 300}]' \
		w.json >/dev/null || fatal "stats --json cgroup_weights: $(jq -c .cgroup_weights w.json)"
	fairqctl get fqt cgroup-weight --json >gw.json || fatal "get cgroup-weight --json"
	jq -e --arg p "$cg" --argjson id "$(stat -c %i "$cg")" '.key == "cgroup-weight"
	       and .value == [{"id": $id, "path": $p, "weight": 300}]' gw.json >/dev/null ||
		fatal "get cgroup-weight --json: $(jq -c . gw.json)"
	fairqctl set fqt cgroup-weight fqctl-test=1001 2>err && fatal "weight 1001 accepted"
	grep -q "weight must be 0..1000" err || fatal "weight 1001: $(cat err)"
	fairqctl set fqt cgroup-weight fqctl-test=0 || fatal "remove the weight"
	[ -z "$(fairqctl get fqt cgroup-weight)" ] || fatal "weight still there after =0"
	fairqctl set fqt cgroup-weight fqctl-test=0 2>err && fatal "removing an unset weight succeeded"
	grep -q "no weight set for this cgroup" err || fatal "remove unset: $(cat err)"
	fairqctl set fqt cgroup-weight /tmp=5 2>err && fatal "a non-cgroup directory accepted"
	grep -q "not a cgroup v2 directory" err || fatal "/tmp: $(cat err)"
}

main() {
	require_cmd fairqctl fio jq dmsetup blockdev
	require_blockdev vdb
	require_module dm-delay
	load_fairq
	# a slow lower disk (every read 20 ms late, dm-delay), so that fio's
	# reads stay in flight: a cfq flow is listed only while it has I/O
	# queued or in flight
	dmsetup create fqt-slow --table "0 $(blockdev --getsz /dev/vdb) delay /dev/vdb 0 20" ||
		fatal "dmsetup create fqt-slow"
	cleanup_push "dmsetup remove fqt-slow"
	# fastpath=off: fio's reads must show as a flow even once depth=auto
	# has room for all of them
	fairqctl create /dev/mapper/fqt-slow --name fqt --set fastpath=off >/dev/null ||
		fatal "create fqt"
	cleanup_push "fairq_destroy fqt"
	test_top
	test_json
	stop_fio
	test_json_idle
	test_list_get_json
	test_cgroup_weight
	log "top/json: all checks passed"
}

main
