#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fairq's trace events (drivers/fairq_trace.h, fairq(4) TRACEPOINTS),
# enabled through tracefs (events/fairq/enable), each kind provoked and
# its records checked against what fairq's stats count over the same
# window.  fairq0 over a memory-backed null_blk that serves 2 requests at
# a time in 2 ms each.  A window starts and ends with fairq0 at rest
# (nothing queued or in flight); the ring buffer must not overrun in it.
# In every window: the queued events equal the stats' enq_reqs delta,
# the completed ones done_reqs (their bytes enq_bytes and done_bytes),
# the dispatched ones disp_reqs less the fast path's, all with error=0.
# 1. fast path: a dd of READS 4 KiB direct reads on the idle device (the
#    defaults: fastpath on).  Its flow (dd's tgid) has READS queued and
#    completed events, their bytes what dd read; the path=pass ones equal
#    the stats' fastpath_reqs delta, and their svc_ns is above 0.
# 2. scheduled (fastpath=off, depth=4): a fio random reader at iodepth 8
#    and, beside it, a dd of READS sequential 4 KiB direct reads (a sync
#    reader with think time, boosted as a new flow), then a dd writing
#    one block.  dd's flow: READS queued, dispatched and completed
#    events, bytes what dd read, its boost started, anticipation waited
#    for it (fairq_antic, wait_ns in (0, 10 x idle_us]).  The boost
#    events equal the stats: starts, and the ends by reason; the
#    writer's ended by kind.  The fio reader's end is not asserted: by
#    depth only with more than 4 of its requests in fairq at once, which
#    a guest under TCG, short of CPU, often never submits.
# 3. depth: depth written 4 -> 3 (one event, why=set), then auto and a
#    random reader at iodepth 16 for LOAD_S s: the controller's moves
#    (why=try or hold) equal the stats' depth_changes (which "auto"
#    reset to 0), at least one, and the last one's new depth is
#    depth_now.
DESCRIPTION="trace events: each kind appears, and the records add up to fairq's stats"
TIMEOUT=600
# shellcheck source=rc
. /fairq/tests/vm/rc

NB=nullb330
READS=$(scaled 400)
LOAD_S=$(scaled 6)
BUF_KB=8192		# ring buffer per CPU: a window writes about 1 MiB

require_cmd fio
require_cmd dd

cleanup_push "null_blk_destroy $NB"
cleanup_push "fairq_destroy fairq0"
null_blk_create "$NB" memory_backed=1 size=256 blocksize=4096 irqmode=2 \
	completion_nsec=2000000 submit_queues=1 hw_queue_depth=2
echo none >/sys/block/$NB/queue/scheduler 2>/dev/null
fairq_create fairq0 "/dev/$NB"
# tracefs (rc: mounted for the test unless it is), all fairq's events on
trace_setup fairq "$BUF_KB"
[ -d "$T/events/fairq" ] || fatal "no $T/events/fairq after loading fairq"
for e in queue dispatch complete depth boost_start boost_end antic; do
	[ -e "$T/events/fairq/fairq_$e/enable" ] || fail "no event fairq_$e"
done

# stats_snap FILE: the counters a window compares, "key value" lines
stats_snap() {
	awk '$1 ~ /^(enq|disp|done)_(reqs|bytes)$|^fastpath_reqs$|^errors$|^boost_|^depth_changes$|^depth_now$/' \
		/sys/block/fairq0/fairq/stats >"$1"
}

# delta TAG KEY: KEY's growth over window TAG
delta() {
	echo $(($(awk -v k="$2" '$1 == k { print $2 }' "$TMPDIR/$1.after") -
		$(awk -v k="$2" '$1 == k { print $2 }' "$TMPDIR/$1.before")))
}

# window_begin TAG: fairq0 at rest, counters noted, an empty buffer, on
window_begin() {
	poll 100 0.1 at_rest fairq0 || fatal "$1: fairq0 not at rest before the window"
	stats_snap "$TMPDIR/$1.before"
	: >"$T/trace"
	echo 1 >"$T/tracing_on"
}

# window_end TAG: at rest, tracing off, counters noted; $TMPDIR/TAG.ev has
# the window's events, one a line: "EVENT DEVICE key=value..."
window_end() {
	local over
	poll 100 0.1 at_rest fairq0 || fail "$1: fairq0 not at rest after the window"
	echo 0 >"$T/tracing_on"
	stats_snap "$TMPDIR/$1.after"
	over=$(trace_overruns)
	[ "$over" = 0 ] || fatal "$1: the ring buffer overran ($over events lost): raise BUF_KB"
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^fairq_[a-z_]+:$/) {
			sub(":$", "", $i); out = $i
			for (j = i + 1; j <= NF; j++) out = out " " $j
			print out; break } }' "$T/trace" >"$TMPDIR/$1.ev"
	log "$1: $(wc -l <"$TMPDIR/$1.ev") events:" \
		"$(awk '{ n[$1]++ } END { for (e in n) printf "%s %d ", e, n[e] }' "$TMPDIR/$1.ev")"
}

# ev TAG EVENT FIELD [KEY=VALUE...]: "count sum" of FIELD over the EVENT
# records of window TAG whose fields match every KEY=VALUE
ev() {
	local tag=$1 e=$2 field=$3
	shift 3
	awk -v e="$e" -v field="$field" -v conds="$*" '
		BEGIN { nc = split(conds, c, " ") }
		$1 == e {
			split("", v)
			for (i = 3; i <= NF; i++) {
				p = index($i, "=")
				if (p) v[substr($i, 1, p - 1)] = substr($i, p + 1)
			}
			for (i = 1; i <= nc; i++) {
				p = index(c[i], "=")
				if (v[substr(c[i], 1, p - 1)] != substr(c[i], p + 1)) next
			}
			n++; s += v[field]
		}
		END { printf "%d %.0f\n", n, s }' "$TMPDIR/$tag.ev"
}

# totals TAG: every window's sums against the stats' deltas
totals() {
	local tag=$1 n s passed
	read -r n s <<<"$(ev "$tag" fairq_queue bytes)"
	[ "$n" = "$(delta "$tag" enq_reqs)" ] && [ "$s" = "$(delta "$tag" enq_bytes)" ] &&
		ok "$tag: $n queued events, $s bytes: the stats' enq_reqs and enq_bytes" ||
		fail "$tag: $n queued events, $s bytes; enq_reqs +$(delta "$tag" enq_reqs), enq_bytes +$(delta "$tag" enq_bytes)"
	read -r n s <<<"$(ev "$tag" fairq_complete bytes)"
	[ "$n" = "$(delta "$tag" done_reqs)" ] && [ "$s" = "$(delta "$tag" done_bytes)" ] &&
		ok "$tag: $n completed events, $s bytes: the stats' done_reqs and done_bytes" ||
		fail "$tag: $n completed events, $s bytes; done_reqs +$(delta "$tag" done_reqs), done_bytes +$(delta "$tag" done_bytes)"
	passed=$(delta "$tag" fastpath_reqs)
	read -r n s <<<"$(ev "$tag" fairq_dispatch bytes)"
	[ "$n" = $(($(delta "$tag" disp_reqs) - passed)) ] &&
		ok "$tag: $n dispatched events: disp_reqs less the fast path's" ||
		fail "$tag: $n dispatched events; disp_reqs +$(delta "$tag" disp_reqs), fastpath_reqs +$passed"
	read -r n _ <<<"$(ev "$tag" fairq_complete error error=0)"
	[ "$n" = "$(ev "$tag" fairq_complete error | cut -d' ' -f1)" ] &&
		[ "$(delta "$tag" errors)" = 0 ] && ok "$tag: every completion error=0" ||
		fail "$tag: completions with an error, or errors +$(delta "$tag" errors)"
}

# dd_read TAG ARGS...: dd reading fairq0 direct; DD_PID, DD_BYTES
dd_read() {
	local tag=$1
	shift
	dd if=/dev/fairq0 of=/dev/null iflag=direct "$@" 2>"$TMPDIR/$tag.dd" &
	DD_PID=$!
	wait "$DD_PID" || fatal "$tag: dd failed: $(cat "$TMPDIR/$tag.dd")"
	DD_BYTES=$(awk '/bytes/ { print $1; exit }' "$TMPDIR/$tag.dd")
}

# flow_io TAG FLOW N BYTES [EVENT...]: FLOW has N records of each EVENT
# (default queued, completed) in window TAG, of BYTES in all
flow_io() {
	local tag=$1 flow=$2 want=$3 bytes=$4 e n s events
	shift 4
	events=("$@")
	[ $# -gt 0 ] || events=(fairq_queue fairq_complete)
	for e in "${events[@]}"; do
		read -r n s <<<"$(ev "$tag" "$e" bytes "flow=$flow")"
		[ "$n" = "$want" ] && [ "$s" = "$bytes" ] &&
			ok "$tag: flow $flow: $n $e events, $s bytes" ||
			fail "$tag: flow $flow: $n $e events, $s bytes; want $want, $bytes"
	done
}

# 1. the fast path on an idle device
window_begin pass
dd_read pass bs=4k count="$READS"
window_end pass
totals pass
flow_io pass "$DD_PID" "$READS" "$DD_BYTES"
read -r n _ <<<"$(ev pass fairq_queue bytes path=pass)"
[ "$n" = "$(delta pass fastpath_reqs)" ] && [ "$n" -gt 0 ] &&
	ok "pass: $n queued events path=pass: the stats' fastpath_reqs" ||
	fail "pass: $n queued events path=pass, fastpath_reqs +$(delta pass fastpath_reqs)"
read -r m s <<<"$(ev pass fairq_complete svc_ns path=pass)"
[ "$m" = "$n" ] && [ "$s" -gt 0 ] &&
	ok "pass: $m completed events path=pass, svc_ns $((s / (m > 0 ? m : 1))) on average" ||
	fail "pass: $m completed events path=pass (want $n), svc_ns sum $s"

# 2. scheduled: a sync reader beside a deeper one, then a writer
fairq_set fairq0 fastpath off || fatal "fastpath=off refused"
fairq_set fairq0 depth 4 || fatal "depth=4 refused"
idle_us=$(cat /sys/block/fairq0/fairq/idle_us)
window_begin sched
fio --name=bg --filename=/dev/fairq0 --direct=1 --ioengine=libaio --iodepth=8 \
	--rw=randread --bs=4k --offset=128M --size=64M --time_based --runtime=600 \
	--minimal --output="$TMPDIR/bg.out" >/dev/null 2>&1 &
bg=$!
cleanup_push "kill -INT $bg 2>/dev/null; wait $bg 2>/dev/null; true"
sleep 1
dd_read sched bs=4k count="$READS"
reader=$DD_PID reader_bytes=$DD_BYTES
kill -INT "$bg"
wait "$bg"
awk -F';' '$5 == 0 && $6 > 0 { ok = 1 } END { exit !ok }' "$TMPDIR/bg.out" ||
	fail "sched: the fio reader read nothing or reported an error"
dd if=/dev/zero of=/dev/fairq0 bs=4k count=1 seek=1000 oflag=direct 2>"$TMPDIR/w.dd" &
writer=$!
wait "$writer" || fatal "sched: the writing dd failed: $(cat "$TMPDIR/w.dd")"
window_end sched
log "sched: queued per flow: $(awk '$1 == "fairq_queue" { n[$3]++ } END { for (f in n) printf "%s %d ", f, n[f] }' "$TMPDIR/sched.ev")"
grep '^fairq_boost' "$TMPDIR/sched.ev"
log "sched: most outstanding per flow: $(awk '$1 == "fairq_queue" { o[$3]++; if (o[$3] > m[$3]) m[$3] = o[$3] }
	$1 == "fairq_complete" { o[$3]-- } END { for (f in m) printf "%s %d ", f, m[f] }' "$TMPDIR/sched.ev")"
totals sched
flow_io sched "$reader" "$READS" "$reader_bytes" fairq_queue fairq_dispatch fairq_complete
read -r n _ <<<"$(ev sched fairq_boost_start flow flow="$reader")"
[ "$n" = 1 ] && ok "sched: the reader's boost started" ||
	fail "sched: $n fairq_boost_start events for the reader's flow $reader"
read -r n _ <<<"$(ev sched fairq_boost_start flow)"
[ "$n" = "$(delta sched boost_starts)" ] &&
	ok "sched: $n fairq_boost_start events: the stats' boost_starts" ||
	fail "sched: $n fairq_boost_start events, boost_starts +$(delta sched boost_starts)"
for why in time budget kind size depth; do
	read -r n _ <<<"$(ev sched fairq_boost_end served why=$why)"
	[ "$n" = "$(delta sched "boost_end_$why")" ] &&
		ok "sched: $n fairq_boost_end why=$why: the stats' boost_end_$why" ||
		fail "sched: $n fairq_boost_end why=$why, boost_end_$why +$(delta sched "boost_end_$why")"
done
read -r n _ <<<"$(ev sched fairq_boost_end served why=kind flow="$writer")"
[ "$n" = 1 ] && ok "sched: the writer's boost ended by kind" ||
	fail "sched: $n fairq_boost_end why=kind for the writer's flow $writer"
read -r n s <<<"$(ev sched fairq_antic wait_ns flow="$reader")"
most=$(awk -v f="flow=$reader" '$1 == "fairq_antic" && $3 == f {
		sub("wait_ns=", "", $4); if ($4 + 0 > m) m = $4 + 0 } END { print m + 0 }' \
	"$TMPDIR/sched.ev")
[ "$n" -ge 1 ] && [ "$most" -le $((10 * idle_us * 1000)) ] &&
	ok "sched: anticipation waited for the reader $n times, $((s / (n > 0 ? n : 1))) ns on average, at most $most" ||
	fail "sched: $n fairq_antic events for the reader (longest $most ns, cap $((10 * idle_us * 1000)))"

# 3. depth: written, then auto under load
window_begin depth
fairq_set fairq0 depth 3 || fatal "depth=3 refused"
fairq_set fairq0 depth auto || fatal "depth=auto refused"
stats_snap "$TMPDIR/depth.before"
fio --name=deep --filename=/dev/fairq0 --direct=1 --ioengine=libaio --iodepth=16 \
	--rw=randread --bs=4k --size=64M --time_based --runtime="$LOAD_S" \
	--minimal --output="$TMPDIR/deep.out" >/dev/null 2>&1 ||
	fail "depth: fio failed"
window_end depth
totals depth
read -r n _ <<<"$(ev depth fairq_depth new old=4 new=3 why=set)"
[ "$n" = 1 ] && ok "depth: depth 4 -> 3 written: one event why=set" ||
	fail "depth: $n events old=4 new=3 why=set"
read -r t _ <<<"$(ev depth fairq_depth new why=try)"
read -r h _ <<<"$(ev depth fairq_depth new why=hold)"
changes=$(delta depth depth_changes)
[ $((t + h)) = "$changes" ] && [ "$changes" -ge 1 ] &&
	ok "depth: $t try and $h hold events: the stats' depth_changes" ||
	fail "depth: $t try and $h hold events, depth_changes +$changes"
last=$(awk '$1 == "fairq_depth" { n = $4 } END { sub("new=", "", n); print n }' "$TMPDIR/depth.ev")
now=$(awk '$1 == "depth_now" { print $2 }' "$TMPDIR/depth.after")
[ "$last" = "$now" ] && ok "depth: the last event's new depth $last is depth_now" ||
	fail "depth: the last event's new depth ${last:-none}, depth_now $now"
awk '$1 == "fairq_depth"' "$TMPDIR/depth.ev" | head -n 20
