#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Allocation failures (fault test 3 of 7): failslab with task-filter, so
# only the tasks this test marks (/proc/PID/make-it-fail) see failures,
# at 10 % and for sleeping allocations too (ignore-gfp-wait=N):
#  - create: mkdir, backing=, power=1, power=0 40 times, each step in its
#    own marked child (a marked shell that loops dies of its own failed
#    mallocs); rmdir and the checks run unmarked: every step either
#    works or fails, and after a failed step the state is
#    consistent (power reads 0 and no disk exists after a failed power=1,
#    no entry after a failed mkdir), the lower device is released;
#  - policy switch: marked children switch policy/fairness/buckets in a
#    loop during an unmarked fio verify: writes may fail with ENOMEM, the
#    policy always reads a valid word, fio verifies;
#  - I/O: with cache-filter as well, limited to the bio-N slabs (bio_set
#    slabs; fairq's clones come from one of them): a marked dd writes
#    through fairq0 and the data must read back: the clone comes from
#    the mempool when the slab fails, so no bio may be lost or failed.
#    6.1's /sys/kernel/slab/*/failslab is read-only, so the bio slabs are
#    marked at boot (slub_debug=A,bio-*, which vm/run adds on a kernel
#    with CONFIG_FAILSLAB); fairq's slab may be shared with another
#    bio_set of its size, so the same marked dd first writes to the
#    lower device itself: through fairq0 more failures must be injected
#    (fairq's clone allocations failed too);
#  - flows: with cache-filter limited to fairq's flow cache (fairq_flow,
#    marked at boot the same way), 16 threads of a marked fio, each its
#    own flow (classify=pid, fastpath=off: every bio needs its flow),
#    write and verify their own 1 MiB.  A flow that cannot be allocated
#    (GFP_NOWAIT under the device lock) must not cost a bio: its requests
#    go to the shared overflow flow.  Asserted: fio verifies,
#    flow_alloc_fails and overflow_enq above 0, enq_reqs == done_reqs,
#    no error, the lower device holds what fairq0 reads.
# Every phase asserts that failures were injected: failslab's own count
# (its "times" budget, counted down by each injected failure) above 0,
# and the create and switch phases each saw fairq refuse a step with
# ENOMEM; an injector that does nothing fails the test.
# Needs CONFIG_FAILSLAB (debugfs failslab): Debian's kernel has none, so
# this skips there and runs on the debug kernel (whose kmemleak scan
# then catches anything an error path leaked).
DESCRIPTION="failslab (task/cache filter) during create, policy switch, I/O and flow allocation"
TIMEOUT=400
# shellcheck source=rc
. /fairq/tests/vm/rc
# shellcheck source=faultrc
. /fairq/tests/vm/faultrc

FS=/sys/kernel/debug/failslab
NB=nullb120
FQ=fairq0
CFS=$FAIRQ_CONFIGFS

[ -d $FS ] || skip_all "no $FS: kernel without CONFIG_FAILSLAB (runs on the debug kernel)"
require_cmd fio

BUDGET=1000000	# failslab's "times": injected failures = BUDGET - times

failslab_off() {
	echo 0 >$FS/probability
	echo N >$FS/cache-filter 2>/dev/null
	return 0
}

failslab_on() {
	echo "$1" >$FS/probability
	echo 1 >$FS/interval
	echo $BUDGET >$FS/times
	echo 0 >$FS/space
	echo 0 >$FS/verbose
	echo Y >$FS/task-filter
	echo N >$FS/ignore-gfp-wait
}

# injected: the failures failslab injected since failslab_on
injected() {
	local t
	read -r t <$FS/times
	echo $((BUDGET - t))
}

# marked CMD...: run CMD in a child whose slab allocations may fail.  Each
# step is its own short-lived marked process: a long-lived marked shell
# dies as soon as one of its own mallocs fails (brk/mmap need slab objects
# too) and takes the loop with it.  Any exit but 0 is a failed step.  The
# exec of CMD is itself marked, so most such steps fail in exec.
marked() {
	bash -c 'echo 1 >/proc/self/make-it-fail || exit 9; exec "$@"' _ "$@" 2>>steps.err
}

# marked_write FILE VALUE: printf VALUE >FILE from a child marked after
# its exec: only the open and the write itself (fairq's store) may fail;
# its errors go to writes.err
marked_write() {
	bash -c 'echo 1 >/proc/self/make-it-fail || exit 9; printf %s "$2" >"$1"' \
		_ "$1" "$2" 2>>writes.err
}

# create_loop N: create/destroy steps by marked children, checked by this
# unmarked shell; leaves a tally
create_loop() {
	local i ok=0 failed=0 mkdirs=0 d=$CFS/$FQ p
	for ((i = 0; i < $1; i++)); do
		if ! marked busybox mkdir "$d"; then
			failed=$((failed + 1))
			if [ -e "$d" ]; then
				echo "mkdir failed but $d exists" >>create.bad
				busybox rmdir "$d"
			fi
			# go on unmarked, so backing= and power=1 run every round
			busybox mkdir "$d" || { echo "unmarked mkdir failed" >>create.bad; continue; }
		else
			mkdirs=$((mkdirs + 1))
		fi
		if marked_write "$d/backing" /dev/$NB; then
			if marked_write "$d/power" 1; then
				ok=$((ok + 1))
				if ! marked_write "$d/power" 0; then
					failed=$((failed + 1))
					printf 0 >"$d/power" || echo "power=0 refused unmarked" >>create.bad
				fi
			else
				failed=$((failed + 1))
				read -r p <"$d/power"
				[ "$p" = 0 ] || echo "failed power=1 left power '$p'" >>create.bad
				[ ! -e /sys/block/$FQ ] || echo "failed power=1 left a disk" >>create.bad
			fi
		else
			failed=$((failed + 1))
		fi
		busybox rmdir "$d" || echo "rmdir $d failed" >>create.bad
	done
	echo "$ok $failed $mkdirs" >create.tally
}

test_create() {
	local ok failed mkdirs inj enomem
	: >create.bad
	: >steps.err
	: >writes.err
	failslab_on 10
	create_loop 40
	inj=$(injected)
	failslab_off
	read -r ok failed mkdirs <create.tally
	[ "$inj" -gt 0 ] || fatal "create: failslab injected no failure (times still $BUDGET)"
	enomem=$(grep -c "Cannot allocate memory" writes.err)
	[ "$enomem" -gt 0 ] ||
		fatal "create: $inj failures injected, yet no backing=/power= write failed with ENOMEM ($failed steps failed)"
	[ ! -s create.bad ] || fatal "create under failslab: $(head -n 3 create.bad)"
	cat steps.err writes.err | grep -v -e "Cannot allocate memory" -e "No such file or directory" |
		head -n 3 >create.odd
	[ ! -s create.odd ] || log "other errors seen: $(cat create.odd)"
	[ ! -e "$CFS"/$FQ ] && [ ! -e /sys/block/$FQ ] || fatal "create loop left $FQ behind"
	[ -z "$(ls /sys/block/$NB/holders)" ] || fatal "$NB still claimed after the create loop"
	fairq_create $FQ /dev/$NB
	fairq_destroy $FQ
	log "create under failslab: $inj failures injected; $ok powered on, $failed steps failed cleanly ($enomem attribute writes refused with ENOMEM), $mkdirs marked mkdirs worked"
}

# switch_loop: policy switches by marked children until stop exists
switch_loop() {
	local n=0 f=0 pols=(cfq sfq fifo) fr=(requests bytes) s=/sys/block/$FQ/fairq
	while [ ! -e stop ]; do
		marked_write $s/policy "${pols[n % 3]}" || f=$((f + 1))
		marked_write $s/fairness "${fr[n % 2]}" || f=$((f + 1))
		marked_write $s/buckets $((1 << (n % 8))) || f=$((f + 1))
		n=$((n + 1))
	done
	echo "$n $f" >switch.tally
}

test_switch() {
	local pid sw n f pol inj
	fairq_create $FQ /dev/$NB depth=16
	rm -f stop
	failslab_on 10
	switch_loop &
	sw=$!
	fio --output=fs-sw.out --filename=/dev/$FQ --direct=1 --ioengine=libaio \
		--rw=randwrite --bs=4k --iodepth=8 --size=8M --verify=crc32c \
		--verify_fatal=1 --name=sw >/dev/null 2>&1
	pid=$?
	touch stop
	wait $sw
	inj=$(injected)
	failslab_off
	[ $pid = 0 ] || fatal "fio verify during policy switches under failslab failed"
	read -r n f <switch.tally
	[ "$inj" -gt 0 ] || fatal "policy switch: failslab injected no failure in $n rounds"
	[ "$f" -gt 0 ] || fatal "policy switch: $inj failures injected, yet none of $((3 * n)) writes was refused"
	[ "$f" -lt $((3 * n)) ] || fatal "policy switch under failslab: all $f writes refused"
	read -r pol <"/sys/block/$FQ/fairq/policy"
	case $pol in cfq | sfq | fifo) ;; *) fatal "policy reads '$pol'" ;; esac
	wait_idle $FQ
	log "policy switch under failslab: $inj failures injected; $n rounds, $f writes refused, fio verified"
}

# marked_dd OF: the 8 MiB file io written to OF by a dd marked for
# failslab (marked before its exec: the exec's own allocations are not
# in a bio slab, cache-filter leaves them alone); sets INJ to the
# failures injected during it (not run in $(...): fatal must end the test)
marked_dd() {
	failslab_on 50
	echo Y >$FS/cache-filter
	(
		echo 1 >/proc/self/make-it-fail
		exec dd if=io of="$1" bs=64k oflag=direct status=none
	) || fatal "marked dd write to $1 failed with the bio slabs failing"
	INJ=$(injected)
	failslab_off
}

test_io() {
	local marked="" s raw fq
	fairq_destroy $FQ
	for s in /sys/kernel/slab/bio-*; do
		[ "$(cat "$s/failslab" 2>/dev/null)" = 1 ] && marked+=" ${s##*/}"
	done
	[ -n "$marked" ] ||
		fatal "no bio slab is marked for failslab's cache filter (6.1's slab failslab file is read-only: boot with slub_debug=A,bio-*, as vm/run does on a kernel with CONFIG_FAILSLAB)"
	dd if=/dev/urandom of=io bs=64k count=128 status=none
	# the same writes straight to the lower device: its own bios only
	marked_dd /dev/$NB
	raw=$INJ
	fairq_create $FQ /dev/$NB depth=16
	marked_dd /dev/$FQ
	fq=$INJ
	[ "$(region_sha /dev/$FQ 0 8192)" = "$(file_sha io)" ] ||
		fatal "data written while the bio slabs failed did not read back"
	wait_idle $FQ
	[ "$fq" -gt "$raw" ] ||
		fatal "I/O: $fq failures injected through $FQ, $raw on $NB alone: fairq's clone allocations were not failed"
	log "I/O with the bio slabs ($marked) failing at 50 %: 8 MiB by a marked dd: $raw failures injected on $NB alone, $fq through $FQ; verified"
}

# test_flows: fairq's flow cache failing under a marked fio of 16
# threads, one flow each
test_flows() {
	local rc inj fails ovf enq done_
	fairq_destroy $FQ
	[ "$(cat /sys/kernel/slab/fairq_flow/failslab 2>/dev/null)" = 1 ] ||
		fatal "fairq_flow is not marked for failslab's cache filter (boot with slub_debug=A,bio-*,fairq_flow, as vm/run does on a kernel with CONFIG_FAILSLAB)"
	fairq_create $FQ /dev/$NB classify=pid fastpath=off
	failslab_on 50
	echo Y >$FS/cache-filter
	(
		echo 1 >/proc/self/make-it-fail
		exec fio --output=flows.out --minimal --thread --filename=/dev/$FQ \
			--direct=1 --ioengine=libaio --iodepth=4 --rw=randwrite --bs=4k \
			--size=1M --numjobs=16 --offset_increment=1M --randrepeat=0 \
			--verify=crc32c --do_verify=1 --verify_fatal=1 --name=flows
	)
	rc=$?
	inj=$(injected)
	failslab_off
	[ "$rc" = 0 ] || fatal "fio (16 threads) write+verify with the flow cache failing: rc $rc"
	wait_idle $FQ
	fails=$(stat_field $FQ flow_alloc_fails)
	ovf=$(stat_field $FQ overflow_enq)
	enq=$(stat_field $FQ enq_reqs)
	done_=$(stat_field $FQ done_reqs)
	log "flows: $inj failures injected; flow_alloc_fails $fails, overflow_enq $ovf, enq_reqs $enq, done_reqs $done_"
	[ "$inj" -gt 0 ] || fatal "flows: failslab injected no failure"
	[ "${fails:-0}" -gt 0 ] || fatal "flows: $inj failures injected, flow_alloc_fails is ${fails:-missing}"
	[ "${ovf:-0}" -gt 0 ] || fatal "flows: $fails flows not allocated, yet no request went to the overflow flow"
	[ "$enq" = "$done_" ] || fatal "flows: enq_reqs $enq, done_reqs $done_"
	[ "$(stat_field $FQ errors)" = 0 ] || fatal "flows: errors $(stat_field $FQ errors)"
	[ "$(region_sha /dev/$FQ 0 16384)" = "$(region_sha /dev/$NB 0 16384)" ] ||
		fatal "flows: fairq0 and $NB read different data"
}

null_blk_create $NB memory_backed=1 size=64
cleanup_push null_blk_destroy $NB
cleanup_push failslab_off
load_fairq
test_create
test_switch
test_io
test_flows
fairq_destroy $FQ
