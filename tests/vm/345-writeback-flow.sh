#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Writeback's flow (fairq_io.c, fairq_flow_key(); sched/fq_writes.c):
# at the default classify=tgid, the writes the kernel's flusher threads
# submit are one flow keyed 2^32 plus the bio's blkcg id (the root group
# here: no cgroup writes), whichever kworker submits them; under
# writeback=yield (the default, written anyway) a flow queues at most two
# turns' worth of async writes (at least depth_now while no sync I/O is
# active) and its submitter waits beyond that.
#
# fairq0 over a memory-backed null_blk that serves 2 requests at a time
# in 40 ms each; fastpath=off and depth=2, so every bio is scheduled and
# traced; writeback=yield.  ext4 on fairq0.  A 32 MiB file of random data is written
# with dd (buffered), then the page cache's writeback is left to send it
# down: vm.dirty_writeback_centisecs and dirty_expire_centisecs at 1 s
# for the test, then sync.  The trace events of the window
# (events/fairq/fairq_queue) are read.
# Asserted:
#  - the writes of flows keyed at or above 2^32 carry at least the
#    file's 32 MiB, and they are one flow: 2^32 + the root cgroup's id;
#    under the old keying (the kworker's tgid) no write had such a key;
#  - async_held grew: the flusher was held at its flow's bound (two
#    turns' worth, or depth_now while no sync I/O is about), so yield acted
#    (fastpath=off, depth 2: the flusher submits far faster than 2
#    requests each 40 ms drain, even under TCG);
#  - the file read back past the page cache equals its source;
#  - fairq0 at rest, enq_reqs == done_reqs, no error.
DESCRIPTION="writeback is one flow per cgroup; yield holds it at its flow's bound"
TIMEOUT=300
# shellcheck source=rc
. /fairq/tests/vm/rc

NB=nullb345
MNT=/mnt/t345
MB=32
WB_KEY=4294967296

require_cmd mkfs.ext4
require_cmd dd

cleanup_push "null_blk_destroy $NB"
null_blk_create "$NB" memory_backed=1 size=256 blocksize=4096 irqmode=2 \
	completion_nsec=40000000 submit_queues=1 hw_queue_depth=2
echo none >/sys/block/$NB/queue/scheduler 2>/dev/null
load_fairq
fairq_create fairq0 "/dev/$NB"
cleanup_push "fairq_destroy fairq0"
[ "$(cat /sys/block/fairq0/fairq/classify)" = tgid ] ||
	fatal "classify is not tgid by default: $(cat /sys/block/fairq0/fairq/classify)"
fairq_set fairq0 fastpath off
fairq_set fairq0 depth 2
fairq_set fairq0 writeback yield
mkfs.ext4 -q -F /dev/fairq0 || fatal "mkfs.ext4 on fairq0 failed"
mkdir -p "$MNT"
mount /dev/fairq0 "$MNT" || fatal "mount of fairq0 failed"
cleanup_push "umount $MNT"

wb_cs=$(cat /proc/sys/vm/dirty_writeback_centisecs)
exp_cs=$(cat /proc/sys/vm/dirty_expire_centisecs)
cleanup_push "echo $wb_cs >/proc/sys/vm/dirty_writeback_centisecs; echo $exp_cs >/proc/sys/vm/dirty_expire_centisecs"
echo 100 >/proc/sys/vm/dirty_writeback_centisecs
echo 100 >/proc/sys/vm/dirty_expire_centisecs

# tracefs (rc: mounted for the test unless it is), the queued events on
trace_setup fairq/fairq_queue 8192

# little_dirty: under 1 MiB dirty or under writeback
little_dirty() {
	[ "$(awk '/^(Dirty|Writeback):/ { s += $2 } END { print s }' /proc/meminfo)" -lt 1024 ]
}

head -c $((MB << 20)) /dev/urandom >/tmp/src345
cleanup_push "rm -f /tmp/src345"
held0=$(stat_field fairq0 async_held)
: >"$T/trace"
echo 1 >"$T/tracing_on"
dd if=/tmp/src345 of="$MNT/copy" bs=1M status=none || fail "dd failed"
# the flusher's own pass: the expiry above, then whatever is left
poll 100 0.1 little_dirty ||
	log "dirty data left after 10 s: $(grep -E '^(Dirty|Writeback):' /proc/meminfo | tr -s ' ' | tr '\n' ' ')"
sync
echo 0 >"$T/tracing_on"
held=$(($(stat_field fairq0 async_held) - held0))
over=$(trace_overruns)
[ "$over" = 0 ] || fatal "the ring buffer overran ($over events lost)"

# "flow bytes" of every queued write
awk '/fairq_queue:/ {
	f = ""; b = 0; w = 0
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^flow=/) f = substr($i, 6)
		if ($i ~ /^bytes=/) b = substr($i, 7)
		if ($i ~ /^op=W/) w = 1
	}
	if (w) print f, b }' "$T/trace" >/tmp/w345
nwb=$(awk -v k=$WB_KEY '$1 >= k { print $1 }' /tmp/w345 | sort -u | wc -l)
wb_bytes=$(awk -v k=$WB_KEY '$1 >= k { s += $2 } END { printf "%.0f", s }' /tmp/w345)
wb_keys=$(awk -v k=$WB_KEY '$1 >= k { print $1 }' /tmp/w345 | sort -u | tr '\n' ' ')
log "$(wc -l </tmp/w345) writes queued; writeback flows: $wb_keys($wb_bytes bytes);" \
	"others: $(awk -v k=$WB_KEY '$1 < k { n[$1] += $2 } END { for (f in n) printf "%s:%d ", f, n[f] }' /tmp/w345)"
root_id=$(stat -c %i /sys/fs/cgroup 2>/dev/null || echo 1)
[ "$wb_bytes" -ge $((MB << 20)) ] &&
	ok "writeback flows carried $wb_bytes bytes, at least the file's $((MB << 20))" ||
	fail "writeback flows carried $wb_bytes bytes, less than the file's $((MB << 20))"
[ "$nwb" = 1 ] && [ "$wb_keys" = "$((WB_KEY + root_id)) " ] &&
	ok "one writeback flow, key 2^32 + the root cgroup's id ($root_id)" ||
	fail "writeback flows: '$wb_keys' ($nwb), expected $((WB_KEY + root_id))"
[ "$held" -gt 0 ] && ok "async writes held at their flow's bound (async_held +$held)" ||
	fail "async_held did not grow: yield's bounds never acted"

echo 3 >/proc/sys/vm/drop_caches
cmp -s /tmp/src345 "$MNT/copy" && ok "the file read back from the disk equals its source" ||
	fail "the file differs from its source"

poll 50 0.1 at_rest fairq0 || fail "fairq0 not at rest: $(stat_field fairq0 queued) queued, $(stat_field fairq0 inflight) in flight"
enq=$(stat_field fairq0 enq_reqs) done_=$(stat_field fairq0 done_reqs)
[ "$enq" = "$done_" ] && [ "$(stat_field fairq0 errors)" = 0 ] &&
	ok "enq_reqs == done_reqs ($enq), no error" ||
	fail "enq_reqs $enq, done_reqs $done_, errors $(stat_field fairq0 errors)"
