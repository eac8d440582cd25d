#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fairq benchmark, guest side. bench/run boots the VM once (vm/run) and
# runs this script in it; it measures every configuration x workload of
# the plan (bench/README.md) on the same lower devices, interleaved (for
# each repetition, every configuration in turn: A B C A B C ...), and
# prints one line per measurement on stdout:
#
#   BENCH {"dev":..,"cfg":..,"wl":..,"rep":..,"win":{..},"fio":[<fio json>]}
#
# "fio" is fio's own --output-format=json(+) output, one element per fio
# process tree (workload 5 runs two, one per cgroup); "win" is what a
# sampler saw on the lower device and in /proc/stat during the measured
# window (after the ramp). bench/analyze.py on the host turns these lines
# into tables and plots. Progress goes to the serial console as
# "fairq-bench: ..." lines (bench/run shows them).
#
# Settings come from /fairq/build/bench/guest.env (written by bench/run);
# every one has a default below.
# vm/run's per-test limit (this line wins over --test-timeout); bench/run
# sets the whole VM's timeout from the plan (the full run with the write
# family plans five to six hours).
# shellcheck disable=SC2034
TIMEOUT=28800
# The kernel's hung-task report after this long in D state (vm/init). The
# write family keeps tasks there on purpose: on virtio at the kernel's
# dirty limits hundreds of MiB of writeback sit queued at 4 MiB/s, and
# jbd2, an fdatasync, the teardown's rm wait a minute and more for them
# under every configuration (jbd2/vdc-8 61 s under none); the figures
# (fsync p99, teardown s) say how long.
# shellcheck disable=SC2034
HUNG_TASK_SECS=300

set -u

BENCH_ENV=${BENCH_ENV:-/fairq/build/bench/guest.env}
# shellcheck disable=SC1090
[ -r "$BENCH_ENV" ] && . "$BENCH_ENV"

MODE=${BENCH_MODE:-full}		# full | quick | tune | writes
REPS=${BENCH_REPS:-2}
RUNTIME=${BENCH_RUNTIME:-3}		# measured seconds per measurement
RAMP=${BENCH_RAMP:-1}			# unmeasured seconds before that
ONLY=${BENCH_ONLY:-}			# regexp on "dev/wl/cfg": run only those
# The device-bound null_blk: timer completions after a fixed service
# time, a small hardware queue: at most NB_QD I/Os in service, each
# NB_NSEC long, so NB_QD / NB_NSEC requests per second whatever the CPU
# does -- as long as that is well under what the guest's CPU can drive
# under TCG (a few thousand 4 KiB IOPS, less when the host is busy).
# (null_blk's mbps cap is not used: its 1 ms refill timer loses ticks
# under TCG, and the cap then follows the CPU load, not the setting.)
NB_NSEC=${BENCH_NB_NSEC:-4000000}	# completion latency [ns], irqmode=2
NB_QD=${BENCH_NB_QD:-2}			# hw_queue_depth
NB_SIZE=${BENCH_NB_SIZE:-1024}		# MiB
# fairq-nbd's device model for nbd over /dev/vdb: the same two servers
# of 4 ms each, and a bandwidth cap.
NBD_BW=${BENCH_NBD_BW:-4}		# MiB/s
NBD_DEPTH=${BENCH_NBD_DEPTH:-2}
NBD_LAT=${BENCH_NBD_LAT:-4000}		# us
# The tunables recommended for fairness (the "-rec" configurations).
# Chosen on the tuning set only (workloads 1 and 2 on nullb-lat, see
# bench/README.md); analyze.py marks those rows and scores -rec on the rest.
FAIRQ_REC=${BENCH_FAIRQ_REC:-depth=2 fairness=bytes quantum_bytes=32768 idle_us=5000 fifo_expire_sync_ms=2000}
# The kernel schedulers' "-nr" configurations: nr_requests raised to at
# least any workload's total outstanding I/O (workload 1: 4 x 32 = 128).
# At the default (2 x the hardware queue depth: 4 on nullb-lat) a
# scheduler has 4 requests to order; the rest wait unsorted in the tag
# allocator.
NR_REQ=${BENCH_NR_REQUESTS:-256}
# "alone" runs: each job spec by itself on the same disk and
# configuration, one repetition, a shorter window (the reference of the
# slowdown s_i = throughput with the others / throughput alone).
ALONE_RUNTIME=${BENCH_ALONE_RUNTIME:-2}
# The depth sweeps (sweep()): fairq-cfq at each fixed depth.
SWEEP_DEPTHS=${BENCH_SWEEP_DEPTHS:-1 2 3 4 6 8 16 32 64}
SWEEP_REPS=${BENCH_SWEEP_REPS:-1}
# Plan only (bench/run, on the host): print "PLAN dev wl cfg rep est_s"
# per measurement, touch nothing.
PLAN_ONLY=${BENCH_PLAN_ONLY:-0}
# Seconds a measurement costs on top of its fio runtime under TCG (fio's
# start and exit, set-up, teardown); cgroup workloads and workload 7 more.
OVH_S=${BENCH_OVH_S:-7}
SCALE_N=${BENCH_SCALE_N:-16 1024}	# 256: BENCH_SCALE_N="16 256 1024"
# fio 3.33 runs at most 4,094 jobs in one process (REAL_MAX_JOBS 4096
# less its own); workload 7 is one fio process, so N stops there.
SCALE_N_MAX=4000
SCALE_QD=${BENCH_SCALE_QD:-32}		# hw_queue_depth of the scale disk
SCALE_RUNTIME=${BENCH_SCALE_RUNTIME:-10}
SCALE_BIG_REPS=${BENCH_SCALE_BIG_REPS:-1}	# repetitions at >= 256 flows
# Workload 8, the scheduler engaged: N threads on nullb-fast, fairq with
# its fast path off, so that every bio goes through its scheduler.  Not
# 1,024: that many CPU-bound threads stall a TCG guest for minutes
# (workload 7 engages the scheduler with 1,024 flows on a slower disk).
ENGAGED_N=${BENCH_ENGAGED_N:-4 64}
# The write family (write_family(), bench/README.md "The write family"):
# a longer window than the readers' (the writeback of a bulk copy comes
# in 1 MiB requests, 4 a second on virtio), and the copy's writeback
# must have reached the disk before the other jobs start: WF_START_MB
# written on the lower device since the copy began (at the kernel's
# dirty limits that is once the copy's dirty pages passed the background
# threshold), at most WF_START_S seconds.
WF_RAMP=${BENCH_WF_RAMP:-2}
WF_RUNTIME=${BENCH_WF_RUNTIME:-8}
WF_START_MB=${BENCH_WF_START_MB:-4}
WF_START_S=${BENCH_WF_START_S:-90}
WF_RFILE_MB=${BENCH_WF_RFILE_MB:-32}	# the direct reader's file
WF_LOG_MB=${BENCH_WF_LOG_MB:-128}	# the commit log's file (it wraps)
WF_COPY_MB=1024				# the copy's file, per disk (write_family)
WF_FS=ext4				# the family's file system, per disk
WF_TRIM=0				# fstrim after each measurement (memory-backed null_blk)
WF_NB_SIZE=${BENCH_WF_NB_SIZE:-1024}	# MiB, the family's memory-backed null_blk
# file systems of the family on virtio: bench/run --writes ext4 and xfs
# (when the guest has mkfs.xfs), the full run ext4 (its budget)
WF_FSLIST=${BENCH_WF_FS:-ext4}
[ -z "${BENCH_WF_FS:-}" ] && [ "$MODE" = writes ] && WF_FSLIST="ext4 xfs"
WF_CFGS="none mq-deadline bfq kyber iocost"
# What held in the current measurement (wf_prepare, run_wf, wf_finish).
WF_LOWER="" WF_DIRTY="" WF_SYSCTL="" WF_QUEUE="" WF_CGIDS=""
WF_START_MS=-1 WF_RM_MS=-1 WF_DRAIN_MS=-1
declare -A WF_ALONE=()	# cfg -> the family's specs measured under it on this disk
WF_ALONE_CFGS=""

FAIRQ_CONFIGFS=/sys/kernel/config/fairq
NULLB_CONFIGFS=/sys/kernel/config/nullb
FQNAME=bq0
DMNAME=benchlin
W=/tmp/bench
[ "$PLAN_ONLY" = 1 ] && W=$(mktemp -d /tmp/fairq-bench-plan.XXXXXX)
NMEAS=0
NFAILED=0
W5_CG=""
SAMPLE_NJOBS=0		# > 0: the sampler waits for that many fio threads
SAMPLE_NPROCS=0		# > 0: ... for that many fio processes (cgroup workloads)
SAMPLE_CGS=""		# the cgroup workloads' job names (cgroup bench-NAME)
SAMPLE_GO=""		# a file the sampler waits for before its window (the write family)
T0=${EPOCHREALTIME%.*}
# Workload 7 runs 1,024 fio threads in one process, each with its own
# descriptor of the target: more than the default limit of 1,024.
[ "$PLAN_ONLY" = 1 ] || ulimit -n 65536
mkdir -p "$W"
rm -f "$W/pause"
mkfifo "$W/pause"
exec {PAUSE_FD}<>"$W/pause"

say() {
	[ "$PLAN_ONLY" = 1 ] && return 0
	local t=$((${EPOCHREALTIME%.*} - T0))
	printf 'fairq-bench: [%02d:%02d] %s\n' $((t / 60)) $((t % 60)) "$*" >/dev/console
	echo "# [$t s] $*"
}

# ---- lower devices ----

# nullb_make NAME k=v...: a configfs null_blk /dev/NAME.
nullb_make() {
	local name=$1 kv d=$NULLB_CONFIGFS/$1
	shift
	[ "$PLAN_ONLY" = 1 ] && return 0
	[ -d "$NULLB_CONFIGFS" ] || modprobe null_blk nr_devices=0 || return 1
	mkdir "$d" || return 1
	for kv in "$@"; do
		echo "${kv#*=}" >"$d/${kv%%=*}" || { say "null_blk $name: $kv refused"; return 1; }
	done
	echo 1 >"$d/power" || return 1
	local i
	for i in $(seq 50); do [ -b "/dev/$name" ] && return 0; sleep 0.1; done
	return 1
}

nullb_drop() {
	[ "$PLAN_ONLY" = 1 ] && return 0
	[ -d "$NULLB_CONFIGFS/$1" ] || return 0
	echo 0 >"$NULLB_CONFIGFS/$1/power"
	rmdir "$NULLB_CONFIGFS/$1"
}

# nb_bound_args [QD]: the device-bound null_blk's null_blk attributes.
nb_bound_args() {
	echo "size=$NB_SIZE blocksize=4096 submit_queues=1 irqmode=2" \
		"completion_nsec=$NB_NSEC hw_queue_depth=${1:-$NB_QD}"
}

NBD_PID=""
# nbd_up: fairq-nbd with its device model over /dev/vdb, as /dev/nbd0.
nbd_up() {
	[ "$PLAN_ONLY" = 1 ] && return 0
	command -v fairq-nbd >/dev/null || { say "nbd: no fairq-nbd"; return 1; }
	[ -b /dev/vdb ] || { say "nbd: no /dev/vdb"; return 1; }
	modprobe nbd nbds_max=2 || return 1
	fairq-nbd --unix "$W/nbd.sock" --bw "$NBD_BW" --depth "$NBD_DEPTH" \
		--latency-us "$NBD_LAT" /dev/vdb >"$W/nbd.log" 2>&1 &
	NBD_PID=$!
	local i
	for i in $(seq 50); do [ -S "$W/nbd.sock" ] && break; sleep 0.1; done
	timeout 20 nbd-client -u "$W/nbd.sock" /dev/nbd0 -b 4096 >"$W/nbd-client.log" 2>&1 || {
		say "nbd: nbd-client failed: $(tail -n 2 "$W/nbd-client.log" | tr '\n' ' ')"
		nbd_down
		return 1
	}
	for i in $(seq 50); do
		[ "$(cat /sys/block/nbd0/size 2>/dev/null || echo 0)" != 0 ] && return 0
		sleep 0.1
	done
	say "nbd: /dev/nbd0 has no size"
	nbd_down
	return 1
}

nbd_down() {
	[ "$PLAN_ONLY" = 1 ] && return 0
	nbd-client -d /dev/nbd0 >/dev/null 2>&1
	[ -n "$NBD_PID" ] && kill "$NBD_PID" 2>/dev/null && wait "$NBD_PID" 2>/dev/null
	NBD_PID=""
}

# ---- configurations over a lower device ----

set_sched() {
	local cur
	echo "$2" >"/sys/block/$1/queue/scheduler" 2>/dev/null || return 1
	read -r cur <"/sys/block/$1/queue/scheduler"
	[[ $cur == *"[$2]"* ]]
}

fairq_available() {
	[ -d /sys/module/fairq ] && return 0
	modprobe fairq 2>/dev/null || return 1
	local i
	for i in $(seq 50); do [ -d "$FAIRQ_CONFIGFS" ] && return 0; sleep 0.1; done
	return 1
}

# The cgroups of the cgroup workloads: one per job, /sys/fs/cgroup/bench-NAME,
# with the weight CG_WEIGHT[NAME] (io.weight, io.bfq.weight and fairq's
# cgroup_weights all get it). Workload 4 as cgroups takes fairq's level
# weights 25 x (8 - level) (be0 200, be4 100, be7 25) and 1 for the
# idle-class reader: the cgroup analogue of its I/O priorities.
# The write family: copy, commit and reader at 100, workload wd's two
# copies at 1:4 (bulk1 100, bulk4 400).
declare -A CG_WEIGHT=([be0]=200 [be4]=100 [be7]=25 [idle]=1 [writer]=100 [reader]=100 [solo]=100
	[copy]=100 [commit]=100 [bulk1]=100 [bulk4]=400)
CG_ROOT=/sys/fs/cgroup

cg_id() {	# cg_id NAME: the cgroup id (its directory's inode number)
	stat -c %i "$CG_ROOT/bench-$1"
}

cg_setup() {	# the cgroups and their weights (once, at start)
	local n
	for n in "${!CG_WEIGHT[@]}"; do
		mkdir -p "$CG_ROOT/bench-$n" || return 1
		echo "default ${CG_WEIGHT[$n]}" >"$CG_ROOT/bench-$n/io.weight" 2>/dev/null ||
			say "cgroup bench-$n: io.weight refused"
		[ -e "$CG_ROOT/bench-$n/io.bfq.weight" ] &&
			echo "${CG_WEIGHT[$n]}" >"$CG_ROOT/bench-$n/io.bfq.weight"
	done
	return 0
}

# iocost_set LOWER 0|1: io.cost on or off for /dev/LOWER (its model and
# QoS at the kernel's defaults: "ctrl=auto", the built-in linear model for
# the device's rotational flag).
iocost_set() {
	local mm
	read -r mm <"/sys/block/$1/dev"
	echo "$mm enable=$2" >"$CG_ROOT/io.cost.qos"
}

# cfg_up LOWER CFG [k=v...]: set CFG up over /dev/LOWER; sets TARGET and
# CFG_NOTE (what was really set, read back).
# CFG: none | SCHED[-nr[-thru]] | iocost | dm-linear |
#      fairq-POLICY[-rec][@KEY][:k=v,k=v...]
#  SCHED: mq-deadline, bfq or kyber; -nr: nr_requests=NR_REQ; -thru
#  (bfq): low_latency=0 slice_idle=0, bfq's throughput settings;
#  iocost: io.cost on the raw device (scheduler none), io.weight per cgroup;
#  fairq: -rec the recommended tunables, @KEY classify=KEY (with @cgroup
#  the cgroups' weights go in cgroup_weights), :k=v more tunables.
cfg_up() {
	local lower=$1 cfg=$2 kv d=$FAIRQ_CONFIGFS/$FQNAME i sched q=/sys/block/$1/queue n
	shift 2
	CFG_NOTE=""
	TARGET=/dev/$lower
	case $cfg in
	*:*)
		kv=${cfg#*:}
		# shellcheck disable=SC2086
		set -- "$@" ${kv//,/ }
		cfg=${cfg%%:*} ;;
	esac
	case $cfg in
	*@*) set -- "classify=${cfg#*@}" "$@"; cfg=${cfg%@*} ;;
	esac
	case $cfg in
	none|mq-deadline*|bfq*|kyber*)
		sched=${cfg%%-nr*}
		set_sched "$lower" "$sched" || return 1
		case $cfg in
		*-nr*) echo "$NR_REQ" >"$q/nr_requests" || return 1 ;;
		esac
		case $cfg in
		*-thru) echo 0 >"$q/iosched/low_latency" && echo 0 >"$q/iosched/slice_idle" || return 1 ;;
		esac
		read -r n <"$q/nr_requests"
		CFG_NOTE="nr_requests=$n"
		[ "$sched" = bfq ] && CFG_NOTE+=" low_latency=$(cat "$q/iosched/low_latency") slice_idle=$(cat "$q/iosched/slice_idle")"
		;;
	iocost)
		set_sched "$lower" none || return 1
		iocost_set "$lower" 1 || return 1
		CFG_NOTE="io.cost.qos: $(grep "^$(cat "/sys/block/$lower/dev") " "$CG_ROOT/io.cost.qos") model: $(grep "^$(cat "/sys/block/$lower/dev") " "$CG_ROOT/io.cost.model")"
		;;
	dm-linear)
		set_sched "$lower" none || return 1
		dmsetup create "$DMNAME" --noudevsync --table \
			"0 $(blockdev --getsz "/dev/$lower") linear /dev/$lower 0" || return 1
		dmsetup mknodes "$DMNAME" >/dev/null 2>&1
		TARGET=/dev/mapper/$DMNAME
		[ -b "$TARGET" ] || return 1
		;;
	fairq-*)
		fairq_available || return 1
		set_sched "$lower" none || return 1
		mkdir "$d" || return 1
		echo "/dev/$lower" >"$d/backing" || return 1
		kv=${cfg#fairq-}
		set -- "policy=${kv%-rec}" "$@"
		# shellcheck disable=SC2086
		[[ $cfg == *-rec ]] && set -- "$@" $FAIRQ_REC
		for kv in "$@"; do
			echo "${kv#*=}" >"$d/${kv%%=*}" || { say "fairq: $kv refused"; return 1; }
		done
		if [ "$*" != "${*/classify=cgroup/}" ]; then
			for n in "${!CG_WEIGHT[@]}"; do
				echo "$(cg_id "$n") ${CG_WEIGHT[$n]}" >"$d/cgroup_weights" || return 1
			done
		fi
		echo 1 >"$d/power" || return 1
		for i in $(seq 50); do [ -b "/dev/$FQNAME" ] && break; sleep 0.1; done
		TARGET=/dev/$FQNAME
		[ -b "$TARGET" ] || return 1
		CFG_NOTE="$*"
		;;
	*)
		return 1 ;;
	esac
	return 0
}

cfg_down() {
	local d=$FAIRQ_CONFIGFS/$FQNAME p lower=$1
	if [ -b "/dev/mapper/$DMNAME" ]; then
		dmsetup remove --noudevsync "$DMNAME" || dmsetup remove --noudevsync -f "$DMNAME"
	fi
	if [ -d "$d" ]; then
		read -r p <"$d/power"
		[ "$p" = 1 ] && echo 0 >"$d/power"
		rmdir "$d"
	fi
	grep -q "^$(cat "/sys/block/$lower/dev") enable=1" "$CG_ROOT/io.cost.qos" 2>/dev/null &&
		iocost_set "$lower" 0
	# Back to none: the next configuration starts from the device's own
	# nr_requests and a fresh scheduler instance (bfq's tunables reset).
	set_sched "$lower" none
	return 0
}

# ---- workloads: fio command lines ----

# fio_common [EXTRA_S [RUNTIME_S]]: FIO_COMMON for the current RUNTIME.
# fio runs 1 s (+ EXTRA_S) longer than the sampler's window, so that every
# job is still running when the window closes, even when the sampler is
# late; RUNTIME_S: exactly that runtime (the alone runs, no window).
FIO_COMMON=""
fio_common() {
	FIO_COMMON="--ioengine=libaio --direct=1 --time_based --runtime=${2:-$((RUNTIME + 1 + ${1:-0}))}
		--ramp_time=$RAMP --randrepeat=0 --norandommap --thread=0
		--group_reporting=0 --percentile_list=1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.99"
}

# spec_opts SPEC: the fio options of one job spec. A workload is a list
# of jobs, each a spec (plus options that do not change what the job does
# alone, such as its I/O priority); the "alone-SPEC" runs measure each
# spec by itself, the reference of the job's slowdown.
spec_opts() {
	case $1 in
	r4k-qd32) echo "--rw=randread --bs=4k --iodepth=32" ;;
	r4k-qd16) echo "--rw=randread --bs=4k --iodepth=16" ;;
	r4k-qd8) echo "--rw=randread --bs=4k --iodepth=8" ;;
	r4k-qd4) echo "--rw=randread --bs=4k --iodepth=4 --invalidate=0" ;;
	r4k-qd1) echo "--rw=randread --bs=4k --iodepth=1" ;;
	r4k-psync) echo "--rw=randread --bs=4k --ioengine=psync --iodepth=1" ;;
	seq1m-qd4) echo "--rw=read --bs=1M --iodepth=4" ;;
	# buffered 1 MiB writes to a file on the mounted ext4 (workload 5)
	wbuf1m) echo "--rw=write --bs=1M --direct=0 --ioengine=psync --size=256M" ;;
	# The write family. A bulk copy: buffered sequential 1 MiB writes of
	# a new file, as cp does (no fallocate, no fsync at the end); -lo:
	# the same under lowered dirty limits (the spec names the limits, so
	# that its alone run has them too).
	wcopy|wcopy-lo) echo "--rw=write --bs=1M --direct=0 --ioengine=psync" \
		"--fallocate=none --end_fsync=0 --size=${WF_COPY_MB}M" ;;
	# A commit log: buffered 4 KiB appends, each followed by fdatasync.
	wsync4k) echo "--rw=write --bs=4k --direct=0 --ioengine=psync --iodepth=1" \
		"--fdatasync=1 --fallocate=none --size=${WF_LOG_MB}M" ;;
	# A small synchronous random reader of a file written beforehand.
	r4k-file) echo "--rw=randread --bs=4k --ioengine=psync --iodepth=1 --direct=1" \
		"--size=${WF_RFILE_MB}M" ;;
	esac
}

# wl_jobs WL: the jobs of workload WL, one line each: "NAME SPEC [fio
# options]".
wl_jobs() {
	local i
	case $1 in
	w1)	# four random 4 KiB readers, iodepth 32 each
		for i in 1 2 3 4; do echo "r$i r4k-qd32"; done ;;
	w2)	# a synchronous reader against a reader at iodepth 32
		echo "light r4k-psync"
		echo "heavy r4k-qd32" ;;
	w3)	# 4 KiB random against 1 MiB sequential: byte fairness
		echo "rand4k r4k-qd16"
		echo "seq1m seq1m-qd4" ;;
	w4)	# best-effort 0, 4, 7 and one idle-class reader
		echo "be0 r4k-qd8 --prioclass=2 --prio=0"
		echo "be4 r4k-qd8 --prioclass=2 --prio=4"
		echo "be7 r4k-qd8 --prioclass=2 --prio=7"
		echo "idle r4k-qd8 --prioclass=3 --prio=7" ;;
	w4cg)	# workload 4 with cgroups instead of I/O priorities: each
		# reader in its own cgroup, weights as CG_WEIGHT
		for i in be0 be4 be7 idle; do echo "$i r4k-qd8"; done ;;
	w5)	# buffered writer on ext4 against a direct reader of the device
		echo "writer wbuf1m"
		echo "reader r4k-qd4" ;;
	w6qd1) echo "qd1 r4k-qd1" ;;
	w6qd32) echo "qd32 r4k-qd32" ;;
	w6p4)	# four fio processes (four flows by tgid)
		echo "p r4k-qd8 --numjobs=4" ;;
	w6qd1u) echo "qd1 r4k-qd1 --ioengine=io_uring" ;;
	w6qd32u) echo "qd32 r4k-qd32 --ioengine=io_uring" ;;
	w6p4u) echo "p r4k-qd8 --numjobs=4 --ioengine=io_uring" ;;
	w7-* | w8-*)	# N threads, one random 4 KiB reader each (iodepth 1): fio
		# processes take minutes to start under TCG (a few hundred of
		# them), threads start at once; fairq keys flows by
		# pid for this workload (@pid), bfq gives each thread its own
		# queue anyway (a thread has its own io_context).
		echo "p r4k-qd1 --numjobs=$(wl_threads "$1") --thread=1 --clat_percentiles=0" ;;
	alone)	# every spec in ALONE_LIST, one after the other
		for i in $ALONE_LIST; do echo "$i $i --stonewall"; done ;;
	# The write family, each job its own fio in cgroup bench-NAME.
	wa)	# a commit log beside a bulk copy
		echo "copy wcopy"
		echo "commit wsync4k" ;;
	wa-lo)	# the same under lowered dirty limits
		echo "copy wcopy-lo"
		echo "commit wsync4k" ;;
	wb)	# a small synchronous random reader beside a bulk copy
		echo "copy wcopy"
		echo "reader r4k-file" ;;
	wd)	# two bulk copies in cgroups weighted 1:4
		echo "bulk1 wcopy"
		echo "bulk4 wcopy" ;;
	alone-*)	# one write-family spec alone, under its job's name
		i=${1#alone-}
		case $i in
		wcopy*) echo "copy $i" ;;
		wsync4k) echo "commit $i" ;;
		r4k-file) echo "reader $i" ;;
		esac ;;
	esac
}

# wl_family WL: true for the write family's workloads and alone runs.
wl_family() {
	case $1 in wa|wa-lo|wb|wd|alone-w*|alone-r4k-file) return 0 ;; esac
	return 1
}

# wl_cgroups WL: true when WL runs each job as its own fio process in
# its own cgroup (bench-NAME).
wl_cgroups() {
	case $1 in w4cg|w5) return 0 ;; esac
	wl_family "$1"
}

# wl_mount WL: true when WL needs a file system mounted on the target.
wl_mount() {
	wl_family "$1" && return 0
	case $1 in
	w5) return 0 ;;
	alone) [[ " $ALONE_LIST " == *" wbuf1m "* ]] && return 0 ;;
	esac
	return 1
}

# job_args TARGET LINE: fio's options for one wl_jobs line.
job_args() {
	local f=$1 name spec extra
	read -r name spec extra <<<"$2"
	case $spec in
	wbuf1m) f=/mnt/bench/wfile ;;
	wcopy*) f=/mnt/bench/bulk-$name ;;
	wsync4k) f=/mnt/bench/log-$name ;;
	r4k-file) f=/mnt/bench/rfile ;;
	esac
	echo "--name=$name --filename=$f $(spec_opts "$spec") $extra"
}

# wl_specs WL: "NAME:SPEC ..." for the BENCH line.
wl_specs() {
	local name spec _x out=""
	while read -r name spec _x; do out+="$name:$spec "; done < <(wl_jobs "$1")
	echo "${out% }"
}

# ---- the measured window ----

# snap DEV: SNAP="time_us busy_jiffies reads rsect writes wsect" for
# /dev/DEV. Bash builtins only, no subshell: the sampler must not fork
# while it measures (forks are slow under TCG).
snap() {
	local t _c u n s _i _io irq sirq st r1 r3 w1 w3 _rest
	t=${EPOCHREALTIME/./}
	read -r _c u n s _i _io irq sirq st _rest </proc/stat
	read -r r1 _ r3 _ w1 _ w3 _rest <"/sys/block/$1/stat"
	SNAP="$((10#$t)) $((u + n + s + irq + sirq + st)) $r1 $r3 $w1 $w3"
}

# procio: PROCIO, every fio process's (and, with threads, every fio
# thread's) I/O counters from /proc: "pid:tid:read_bytes:write_bytes ..."
# (bash only). Workloads with jobs that start or stop at different times
# (a starved idle-class reader) get their shares from these, over the
# same window for every job, instead of fio's per-job windows.
procio() {
	local d t comm k v rb wb
	PROCIO=""
	for d in /proc/[0-9]*; do
		read -r comm <"$d/comm" 2>/dev/null || continue
		[ "$comm" = fio ] || continue
		for t in "$d"/task/[0-9]*; do
			rb="" wb=""
			while read -r k v; do
				case $k in
				read_bytes:) rb=$v ;;
				write_bytes:) wb=$v ;;
				esac
			done <"$t/io" 2>/dev/null
			# A task that is exiting has no io to read: leave it out
			# rather than count it as 0 bytes.
			if [ -z "$rb" ] || [ -z "$wb" ]; then continue; fi
			PROCIO+="${d#/proc/}:${t##*/}:$rb:$wb "
		done
	done
}

# procio_grab PID FILE: the I/O counters of every task of fio process PID
# at one instant: one grep over /proc/PID/task/*/io (a single exec, a
# few ms; bash reading a thousand files one by one takes tens of seconds
# under TCG with the threads busy), raw into FILE.
procio_grab() {
	grep -H -E '^(read|write)_bytes:' /proc/"$1"/task/[0-9]*/io >"$2" 2>/dev/null
}

# procio_parse FILE: PROCIO from procio_grab's FILE (after the window).
procio_parse() {
	local l p t k v rb=""
	PROCIO=""
	while IFS= read -r l; do
		# /proc/PID/task/TID/io:read_bytes: N
		p=${l#/proc/}
		t=${p#*/task/}
		p=${p%%/*}
		t=${t%%/*}
		k=${l##*:}
		v=${k# }
		case $l in
		*:read_bytes:*) rb=$v ;;
		*:write_bytes:*) [ -n "$rb" ] && PROCIO+="$p:$t:$rb:$v "; rb="" ;;
		esac
	done <"$1"
}

# pause_until US: sleep until the guest clock reads US, without forking.
pause_until() {
	local t left
	while :; do
		t=${EPOCHREALTIME/./}
		left=$(($1 - 10#$t))
		[ "$left" -le 0 ] && return 0
		[ "$left" -gt 200000 ] && left=200000
		read -r -t "0.$(printf '%06d' "$left")" -u "$PAUSE_FD" _ 2>/dev/null
	done
}

# cgio MM: CGIO, one snapshot of each SAMPLE_CGS cgroup (bash only, no
# fork, all within a few ms): "NAME:rb:wb:dirty:writeback:srb:swb ...":
# rb, wb: read_bytes and write_bytes (/proc/PID/io, each process's whole
# thread group) summed over the processes in cgroup.procs; dirty,
# writeback: file_dirty and file_writeback of its memory.stat (bytes);
# srb, swb: rbytes and wbytes of its io.stat on the device MM
# ("major:minor"). A buffered writer's wb counts the pages it dirtied;
# what of them reached the disk is that less the growth of its dirty and
# writeback pages (its memcg holds its page cache). io.stat counts bios
# when they are submitted (before any scheduler's queue) and with the
# submitter's cgroup (under data=ordered, jbd2 writes a writer's data as
# root), so it is kept for what was submitted, not for rates.
cgio() {
	local n d rest kv rb wb dt wt srb swb p k v
	CGIO=""
	for n in $SAMPLE_CGS; do
		rb=0 wb=0 dt=0 wt=0 srb=0 swb=0
		while read -r p; do
			while read -r k v; do
				case $k in
				read_bytes:) rb=$((rb + v)) ;;
				write_bytes:) wb=$((wb + v)) ;;
				esac
			done <"/proc/$p/io" 2>/dev/null
		done <"$CG_ROOT/bench-$n/cgroup.procs" 2>/dev/null
		while read -r k v; do
			case $k in
			file_dirty) dt=$v ;;
			file_writeback) wt=$v ;;
			esac
		done <"$CG_ROOT/bench-$n/memory.stat" 2>/dev/null
		while read -r d rest; do
			[ "$d" = "$1" ] || continue
			for kv in $rest; do
				case $kv in
				rbytes=*) srb=${kv#*=} ;;
				wbytes=*) swb=${kv#*=} ;;
				esac
			done
		done <"$CG_ROOT/bench-$n/io.stat" 2>/dev/null
		CGIO+="$n:$rb:$wb:$dt:$wt:$srb:$swb "
	done
}

# vmdirty: VMD, "nr_dirty nr_writeback nr_dirty_threshold
# nr_dirty_background_threshold" (pages) from /proc/vmstat (bash only).
vmdirty() {
	local k v d=0 w=0 t=0 b=0
	while read -r k v; do
		case $k in
		nr_dirty) d=$v ;;
		nr_writeback) w=$v ;;
		nr_dirty_threshold) t=$v ;;
		nr_dirty_background_threshold) b=$v ;;
		esac
	done </proc/vmstat
	VMD="$d $w $t $b"
}

# flow_names FILE: FQN, "KEY=comm;..." for each fairq flow line of the
# stats in FILE whose key is a running task's id (classify=tgid or
# pid: the flusher is a kworker, the journal jbd2/DEV); bash only.
flow_names() {
	local l k c
	FQN=""
	[ -s "$1" ] || return 0
	while IFS= read -r l; do
		case $l in "flow key="*) ;; *) continue ;; esac
		k=${l#flow key=}
		k=${k%% *}
		c=""
		[ -r "/proc/$k/comm" ] && read -r c <"/proc/$k/comm" 2>/dev/null
		c=${c//[\"; ]/_}
		[ -n "$c" ] && FQN+="$k=$c;"
	done <"$1"
}

# sampler LOWER OUT: wait for I/O to start on LOWER, let the ramp pass,
# then record a snapshot at the start and at the end of the measured
# window (RUNTIME long) in OUT; fio runs on for another ~0.7 s, so the
# window holds only steady-state I/O; fairq's stats and slabinfo at its
# end.
sampler() {
	local lower=$1 out=$2 r0 w0 r w _rest i t0 a b pa
	read -r r0 _ _ _ w0 _rest <"/sys/block/$lower/stat"
	for ((i = 0; i < 1200; i++)); do
		read -r r _ _ _ w _rest <"/sys/block/$lower/stat"
		# A few reads are a partition scan, not fio.
		[ "$((r + w - r0 - w0))" -ge 16 ] && break
		read -r -t 0.05 -u "$PAUSE_FD" _ 2>/dev/null
	done
	# Many threads (workload 7): fio creates them one by one, which takes
	# seconds under TCG; the window starts only when all of them exist
	# (and have had a second to open the file and start), so that every
	# thread runs through the whole window.
	FIO_PID="" FIO_STOP=""
	# The write family: the other jobs start only once the copy's
	# writeback reaches the disk (run_wf), which says so in SAMPLE_GO.
	if [ -n "$SAMPLE_GO" ]; then
		for ((i = 0; i < (WF_START_S + 60) * 20; i++)); do
			[ -e "$SAMPLE_GO" ] && break
			read -r -t 0.05 -u "$PAUSE_FD" _ 2>/dev/null
		done
	fi
	[ "$SAMPLE_NJOBS" -gt 0 ] && wait_threads "$SAMPLE_NJOBS" && pause_until $((FIO_T + 1000000))
	# The cgroup workloads' fio runs (one per job) are started apart, and
	# under TCG one of them could start seconds after another (in the run
	# of 09:23 workload 5's reader started after the writer had finished,
	# in 4 of 15): the window opens only when all are up (a main and a job
	# process each).
	[ "$SAMPLE_NPROCS" -gt 0 ] && wait_procs "$SAMPLE_NPROCS" && pause_until $((FIO_T + 1000000))
	t0=${EPOCHREALTIME/./}
	t0=$((10#$t0))
	pause_until $((t0 + RAMP * 1000000 + 300000))
	local mm=""
	[ -n "$SAMPLE_CGS" ] && read -r mm <"/sys/block/$lower/dev"
	snap "$lower"
	a=$SNAP
	if [ -n "$SAMPLE_CGS" ]; then
		cgio "$mm"
		vmdirty
		printf '%s\n%s\n' "$CGIO" "$VMD" >"$out.cg0"
	fi
	local l
	if [ -d "/sys/block/$FQNAME/fairq" ]; then
		while IFS= read -r l; do echo "$l"; done <"/sys/block/$FQNAME/fairq/stats" >"$out.fq0"
	fi
	if [ -n "$FIO_PID" ]; then
		procio_grab "$FIO_PID" "$out.pa"
	else
		procio
		pa=$PROCIO
	fi
	pause_until $((t0 + (RAMP + RUNTIME) * 1000000 + 300000))
	if [ -n "$FIO_PID" ]; then
		procio_grab "$FIO_PID" "$out.pb"
		snap "$lower"
		b=$SNAP
		procio_parse "$out.pa"
		pa=$PROCIO
		procio_parse "$out.pb"
	else
		snap "$lower"
		b=$SNAP
		if [ -n "$SAMPLE_CGS" ]; then
			cgio "$mm"
			vmdirty
			printf '%s\n%s\n' "$CGIO" "$VMD" >"$out.cg1"
		fi
		procio
	fi
	printf '%s\n%s\n' "$a" "$b" >"$out"
	printf '%s\n%s\n' "$pa" "$PROCIO" >"$out.pio"
	local n p cgs=""
	for n in $SAMPLE_CGS; do
		cgs+="$n:"
		while read -r p; do cgs+="$p,"; done <"$CG_ROOT/bench-$n/cgroup.procs"
		cgs+=" "
	done
	[ -n "$cgs" ] && echo "$cgs" >"$out.cg"
	if [ -d "/sys/block/$FQNAME/fairq" ]; then
		while IFS= read -r l; do echo "$l"; done <"/sys/block/$FQNAME/fairq/stats" >"$out.fq"
		flow_names "$out.fq"
		[ -n "$FQN" ] && echo "$FQN" >"$out.fqn"
	fi
	while IFS= read -r l; do
		case $l in fairq*|fq_*) echo "$l" ;; esac
	done </proc/slabinfo >"$out.slab"
	# Workload 7's fio runs far longer than the window (reading a
	# thousand /proc/TID/io files takes seconds): stop it now. fio
	# still writes its JSON on SIGINT.
	FIO_STOP+=" $FIO_PID"
	if [ -n "${FIO_STOP// /}" ]; then
		echo 1 >"$out.int"
		# shellcheck disable=SC2086
		kill -INT $FIO_STOP 2>/dev/null
	fi
	return 0
}

# wait_procs N: FIO_STOP, the pids of the fio processes once there are
# at least N of them, and FIO_T, when; waits at most 2 minutes.
wait_procs() {
	local d comm i pids n
	for ((i = 0; i < 600; i++)); do
		pids="" n=0
		for d in /proc/[0-9]*; do
			read -r comm <"$d/comm" 2>/dev/null || continue
			[ "$comm" = fio ] || continue
			pids+=" ${d#/proc/}"
			n=$((n + 1))
		done
		if [ "$n" -ge "$1" ]; then
			FIO_STOP=$pids
			FIO_T=${EPOCHREALTIME/./}
			FIO_T=$((10#$FIO_T))
			return 0
		fi
		read -r -t 0.2 -u "$PAUSE_FD" _ 2>/dev/null
	done
	return 1
}

# wait_threads N: FIO_PID, the fio process with at least N + 1 tasks (its
# N job threads and the main one), and FIO_T, when it was seen; waits at
# most 5 minutes and N/4 s more.
wait_threads() {
	local d comm ts t end
	t=${EPOCHREALTIME%.*}
	# fio starts its threads one by one: ~n/8 s under TCG
	end=$((t + 300 + $1 / 4))
	while [ "${EPOCHREALTIME%.*}" -lt "$end" ]; do
		for d in /proc/[0-9]*; do
			read -r comm <"$d/comm" 2>/dev/null || continue
			[ "$comm" = fio ] || continue
			ts=("$d"/task/[0-9]*)
			if [ "${#ts[@]}" -gt "$1" ]; then
				FIO_PID=${d#/proc/}
				FIO_T=${EPOCHREALTIME/./}
				FIO_T=$((10#$FIO_T))
				return 0
			fi
		done
		read -r -t 0.2 -u "$PAUSE_FD" _ 2>/dev/null
	done
	return 1
}

# win_json OUT: WIN, the sampler's window as a JSON object; WIN_IOPS.
win_json() {
	local a b
	WIN="{}" WIN_IOPS="?"
	[ -s "$1" ] || return 0
	{ read -r -a a; read -r -a b; } <"$1"
	[ "${#b[@]}" -ge 6 ] || return 0
	local us=$((b[0] - a[0])) n=$((b[2] - a[2] + b[4] - a[4]))
	WIN=$(printf '{"ms":%d.%d,"cpu_ms":%d,"reads":%d,"rsect":%d,"writes":%d,"wsect":%d}' \
		$((us / 1000)) $((us % 1000 / 100)) $(((b[1] - a[1]) * 10)) \
		$((b[2] - a[2])) $((b[3] - a[3])) $((b[4] - a[4])) $((b[5] - a[5])))
	[ "$us" -gt 0 ] && WIN_IOPS=$((n * 1000000 / us))
	return 0
}

# stats_json FILE: STATS, fairq's stats (totals only) as a JSON object.
stats_json() {
	local k v rest sep=""
	STATS="{"
	if [ -s "$1" ]; then
		local flows="" fsep=""
		while read -r k v rest; do
			if [ "$k" = flow ]; then
				flows+="$fsep\"$v $rest\""
				fsep=,
				continue
			fi
			if [ -z "$k" ] || [ -n "$rest" ]; then continue; fi
			[[ $v =~ ^[0-9]+$ ]] || v="\"$v\""
			STATS+="$sep\"$k\":$v"
			sep=,
		done <"$1"
		STATS+="$sep\"flow_lines\":[$flows]"
	fi
	STATS+="}"
}

# slurp FILE: TEXT, the last 300 characters of the small text FILE on
# one line, quotes and backslashes dropped; bash only, no exec.
slurp() {
	TEXT=""
	[ -s "$1" ] || return 0
	IFS= read -r -d '' TEXT <"$1"
	TEXT=${TEXT: -2000}
	TEXT=${TEXT//$'\n'/ }
	TEXT=${TEXT//$'\t'/ }
	TEXT=${TEXT//$'\r'/}
	TEXT=${TEXT//\"/}
	TEXT=${TEXT//\\/}
	TEXT=${TEXT: -300}
}

# wl_threads WL: the threads of a workload of N threads (w7-N, w8-N), or 0.
wl_threads() {
	case $1 in
	w7-* | w8-*) echo "${1#w?-}" ;;
	*) echo 0 ;;
	esac
}

# fio_limit WL: seconds after which a fio run counts as stuck.
fio_limit() {
	local n
	n=$(wl_threads "$1")
	echo $((RAMP + RUNTIME + 60 + n / 2))
}

# stuck_report WHAT: fio did not finish in time: say so, and leave what
# the driver and the stuck tasks look like in the log.
stuck_report() {
	local p
	say "$1: fio did not finish in time (killed); state in the log"
	echo "# ---- stuck: $1 ----"
	[ -r "/sys/block/$FQNAME/fairq/stats" ] && cat "/sys/block/$FQNAME/fairq/stats"
	for p in /proc/[0-9]*; do
		read -r st <"$p/stat" 2>/dev/null || continue
		case $st in *" D "*) echo "# D-state: $st"; head -n 12 "$p/stack" 2>/dev/null ;; esac
	done 2>/dev/null | head -n 80
	echo "# ---- end stuck ----"
}

# est_s WL: the seconds one measurement of WL is expected to take under
# TCG (bench/run adds them up for the planned time). OVH_S (fio's start
# and exit, set-up, teardown) is on the safe side: a plain measurement
# takes RAMP + RUNTIME + 1 + 3 to 7 s, so a run ends before its plan.
est_s() {
	local n x=0 s
	n=$(wl_threads "$1")
	if [ "$1" = alone ]; then
		for s in $ALONE_LIST; do x=$((x + RAMP + ALONE_RUNTIME)); done
		echo $((x + OVH_S))
		return 0
	fi
	wl_cgroups "$1" && x=6
	# the write family: the copy's start (5-15 s at the kernel's limits),
	# fio's exit (a commit's fdatasync in flight finishes first: up to a
	# minute) and the teardown (the writeback already queued completes:
	# on virtio 20 s to 2 minutes); ~75 s a measurement on virtio
	wl_family "$1" && x=$((x + 50))
	echo $((RAMP + RUNTIME + 1 + OVH_S + x + n / 8))
}

# setup_failed DEV WL CFG REP LOWER WHY: a measurement whose set-up (WHY:
# setup, mount) failed: said, a BENCH_ERR line, the lower disk back to
# none, counted as failed.
setup_failed() {
	say "$1 $2 $3 rep $4: $6 failed"
	echo "BENCH_ERR {\"dev\":\"$1\",\"cfg\":\"$3\",\"wl\":\"$2\",\"rep\":$4,\"why\":\"$6\"}"
	cfg_down "$5"
	NFAILED=$((NFAILED + 1))
}

# measure DEV LOWER CFG WL REP [fairq k=v...]: one measurement, one BENCH line.
measure() {
	local dev=$1 lower=$2 cfg=$3 wl=$4 rep=$5 fmt=json+ rc=0 out=$W/m
	shift 5
	# (an alone run is there because a measurement --only chose needs it)
	if [ -n "$ONLY" ] && [[ $wl != alone* ]] && ! [[ "$dev/$wl/$cfg" =~ $ONLY ]]; then
		return 0
	fi
	NMEAS=$((NMEAS + 1))
	if [ "$PLAN_ONLY" = 1 ]; then
		echo "PLAN $dev $wl $cfg $rep $(est_s "$wl")"
		return 0
	fi
	local f
	for f in "$out".*; do [ -e "$f" ] && rm -f "$f"; done
	if ! cfg_up "$lower" "$cfg" "$@"; then
		setup_failed "$dev" "$wl" "$cfg" "$rep" "$lower" setup
		return 0
	fi
	# Many threads: plain json (json+ would carry every thread's histogram).
	[ "$(wl_threads "$wl")" = 0 ] || fmt=json
	if wl_mount "$wl" && ! mount_prepare "$wl"; then
		setup_failed "$dev" "$wl" "$cfg" "$rep" "$lower" mount
		return 0
	fi
	SAMPLE_NJOBS=0 SAMPLE_NPROCS=0 SAMPLE_CGS="" SAMPLE_GO=""
	wl_family "$wl" && SAMPLE_GO=$out.win.go
	SAMPLE_NJOBS=$(wl_threads "$wl")
	local lines=() l name
	mapfile -t lines < <(wl_jobs "$wl")
	if wl_cgroups "$wl"; then
		# each job's fio: a main process and a job process
		SAMPLE_NPROCS=$((2 * ${#lines[@]}))
		for l in "${lines[@]}"; do SAMPLE_CGS+="${l%% *} "; done
	fi
	local spid="" t0=${EPOCHREALTIME/./} t1
	# The alone runs need no window: fio's own figures are right there.
	[ "$wl" = alone ] || { sampler "$lower" "$out.win" & spid=$!; }
	if wl_family "$wl"; then
		run_wf "$out" "$lower" "${lines[@]}" || rc=$?
	elif wl_cgroups "$wl"; then
		run_cg "$out" "${lines[@]}" || rc=$?
	elif [ "$wl" = alone ]; then
		run_alone "$out" "${lines[@]}" || rc=$?
	else
		local args=()
		for l in "${lines[@]}"; do
			# shellcheck disable=SC2207
			args+=($(job_args "$TARGET" "$l"))
		done
		# --foreground: fio stays in this process group, so vm/init's
		# stall watchdog sees its CPU time while it starts thousands of
		# threads (minutes under TCG, with no I/O yet)
		# shellcheck disable=SC2086
		timeout --foreground -k 10 "$(fio_limit "$wl")" fio $FIO_COMMON --output-format=$fmt \
			--output="$out.fio0" "${args[@]}" >"$out.err" 2>&1 || rc=$?
	fi
	[ "$rc" = 124 ] || [ "$rc" = 137 ] && stuck_report "$dev $wl $cfg"
	t1=${EPOCHREALTIME/./}
	[ -n "$spid" ] && wait "$spid"
	# Stopped by the sampler on purpose (SIGINT after the window): fine.
	if [ -s "$out.win.int" ] && [ "$rc" != 124 ] && [ "$rc" != 137 ] &&
		[ -s "$out.fio0" ]; then
		rc=0
	fi
	wl_mount "$wl" && mount_finish "$wl"
	local fiojs="" wall=$(((10#$t1 - 10#$t0) / 100000))
	for f in "$out".fio[0-9]; do
		[ -s "$f" ] || continue
		# tr, not bash: bash's ${x//a/b} is far too slow on the
		# megabytes of JSON that hundreds of jobs make.
		# fio puts "fio: terminating on signal 2" before its JSON.
		fiojs+=${fiojs:+,}$(sed '/^fio: /d' "$f" | tr -d '\n\t\r' | tr -s ' ')
	done
	win_json "$out.win"
	stats_json "$out.win.fq0"
	local stats0=$STATS
	stats_json "$out.win.fq"
	printf 'BENCH {"dev":"%s","cfg":"%s","wl":"%s","rep":%d,"rc":%d,"wall_s":%d.%d,"lower":"%s","target":"%s","args":"%s","specs":"%s","win":%s,"fairq0":%s,"fairq":%s,' \
		"$dev" "$cfg" "$wl" "$rep" "$rc" $((wall / 10)) $((wall % 10)) \
		"$lower" "$TARGET" "$CFG_NOTE" "$(wl_specs "$wl")" "$WIN" "$stats0" "$STATS"
	slurp "$out.win.slab"
	printf '"slab":"%s",' "$TEXT"
	local pio=() cgp=""
	[ -s "$out.win.pio" ] && mapfile -t pio <"$out.win.pio"
	printf '"procio":["%s","%s"],' "${pio[0]:-}" "${pio[1]:-}"
	[ -s "$out.win.cg" ] && read -r cgp <"$out.win.cg"
	printf '"cgprocs":"%s",' "$cgp"
	wl_mount "$wl" && printf '"w5_cgroups":"%s",' "$W5_CG"
	wl_family "$wl" && wf_json "$out.win"
	slurp "$out.err"
	printf '"err":"%s","fio":[%s]}\n' "$TEXT" "$fiojs"
	cfg_down "$lower"
	[ "$rc" != 0 ] && NFAILED=$((NFAILED + 1))
	say "#$NMEAS $dev $wl $cfg rep $rep: lower $WIN_IOPS IO/s, fio rc $rc, $((wall / 10)).$((wall % 10)) s"
}

# run_alone OUT LINE...: the alone run: one fio, its jobs one after the
# other, in cgroup bench-solo (so that a cgroup-keyed configuration sees
# a cgroup as it does in the workload).
run_alone() {
	local out=$1 l args=()
	shift
	for l in "$@"; do
		# shellcheck disable=SC2207
		args+=($(job_args "$TARGET" "$l"))
	done
	(
		echo "$BASHPID" >"$CG_ROOT/bench-solo/cgroup.procs"
		fio_common 0 "$ALONE_RUNTIME"
		# shellcheck disable=SC2086
		exec timeout -k 10 $((($# + 1) * (RAMP + ALONE_RUNTIME) + 60)) fio $FIO_COMMON \
			--output-format=json+ --output="$out.fio0" "${args[@]}"
	) >"$out.err" 2>&1
}

# mount_prepare WL: mount the file system on $TARGET and set WL's dirty
# limits, before the sampler starts (the mount's own reads must not look
# like fio's). Workload 5: ext4 and small limits. The write family
# (wf_prepare): its own file system, the kernel's limits or, for a -lo
# spec, workload 5's.
mount_prepare() {
	mkdir -p /mnt/bench
	sync
	echo 3 >/proc/sys/vm/drop_caches
	if wl_family "$1"; then
		wf_prepare "$1"
		return
	fi
	mount -o noinit_itable "$TARGET" /mnt/bench || return 1
	# What cgroup writeback needs: io and memory enabled for the
	# cgroups (the flusher's bios then carry the writer's blkcg), and
	# the cgroup ids fairq's classify=cgroup uses as flow keys (on
	# 64-bit, a cgroup's id is its directory's inode number).
	local sc=""
	read -r sc <"$CG_ROOT/cgroup.subtree_control"
	W5_CG="subtree_control=$sc writer_cgroup_id=$(cg_id writer) reader_cgroup_id=$(cg_id reader)"
	# Small dirty limits: the writer is throttled to what writeback
	# achieves within a second, so writeback runs all through the window.
	wf_dirty_lo
}

mount_finish() {
	wl_family "$1" && wf_finish
	# Writing the ratios clears the byte limits.
	echo 20 >/proc/sys/vm/dirty_ratio
	echo 10 >/proc/sys/vm/dirty_background_ratio
	wl_family "$1" && return 0
	umount /mnt/bench 2>/dev/null || { sync; sleep 1; umount /mnt/bench; }
}

wf_dirty_lo() {	# workload 5's dirty limits: 8 MiB, background 4 MiB
	echo $((4 << 20)) >/proc/sys/vm/dirty_background_bytes
	echo $((8 << 20)) >/proc/sys/vm/dirty_bytes
}

# ---- the write family ----

wf_mkfs() {	# wf_mkfs DEV: WF_FS on DEV (no discard: it is slow, and fresh)
	case $WF_FS in
	xfs) mkfs.xfs -q -f -K "$1" ;;
	*) mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 "$1" ;;
	esac
}

wf_mount() {	# wf_mount DEV [mount options]: WF_FS from DEV on /mnt/bench
	local dev=$1
	shift
	case $WF_FS in
	xfs) mount "$@" "$dev" /mnt/bench ;;
	# noinit_itable: no lazy inode-table zeroing behind the measurement
	*) mount -o noinit_itable "$@" "$dev" /mnt/bench ;;
	esac
}

# wf_prepare WL: mount the family's file system; the dirty limits: the
# kernel's (untouched), or workload 5's for a -lo spec; WF_SYSCTL and
# WF_QUEUE say what held.
wf_prepare() {
	local q=/sys/block/${TARGET#/dev/}/queue l=/sys/block/$WF_LOWER/queue k v
	wf_mount "$TARGET" || return 1
	WF_DIRTY=default
	if [[ " $(wl_specs "$1") " == *-lo" "* ]]; then
		WF_DIRTY=lo
		wf_dirty_lo
	fi
	WF_SYSCTL=""
	for k in dirty_ratio dirty_background_ratio dirty_bytes dirty_background_bytes \
		dirty_expire_centisecs dirty_writeback_centisecs; do
		read -r v <"/proc/sys/vm/$k"
		WF_SYSCTL+="$k=$v "
	done
	WF_QUEUE=""
	for k in scheduler wbt_lat_usec write_cache max_sectors_kb nr_requests; do
		v=""
		[ -r "$l/$k" ] && read -r v <"$l/$k"
		WF_QUEUE+="$k=${v// /,} "
	done
	[ "$q" != "$l" ] && [ -r "$q/max_sectors_kb" ] && read -r v <"$q/max_sectors_kb" &&
		WF_QUEUE+="target_max_sectors_kb=$v"
	WF_START_MS=-1 WF_RM_MS=-1 WF_DRAIN_MS=-1
	return 0
}

# wf_finish: the copies' and the log's files removed (their dirty pages
# go with them: a sync of hundreds of MiB at 4 MiB/s would take minutes;
# what is already under writeback must still complete, and WF_RM_MS says
# how long that took), fstrim on a memory-backed null_blk (its memory
# back), unmounted; WF_DRAIN_MS from the fio runs' end to the unmount.
wf_finish() {
	local t0 t1 t2
	t0=${EPOCHREALTIME/./}
	rm -f /mnt/bench/bulk-* /mnt/bench/log-*
	t1=${EPOCHREALTIME/./}
	[ "$WF_TRIM" = 1 ] && fstrim /mnt/bench 2>/dev/null
	sync
	umount /mnt/bench 2>/dev/null || { sync; sleep 1; umount /mnt/bench; }
	t2=${EPOCHREALTIME/./}
	WF_RM_MS=$(((10#$t1 - 10#$t0) / 1000))
	WF_DRAIN_MS=$(((10#$t2 - 10#$t0) / 1000))
}

# wf_start OUT LINE [LIMIT]: one wl_jobs LINE as its own fio in cgroup
# bench-NAME, output OUT, in the background ($! its pid); killed after
# LIMIT seconds (default: well past the window).
wf_start() {
	local out=$1 l=$2 lim=${3:-$((WF_START_S + RAMP + RUNTIME + 120))}
	(
		echo "$BASHPID" >"$CG_ROOT/bench-${l%% *}/cgroup.procs"
		# shellcheck disable=SC2046,SC2086
		exec timeout -k 10 "$lim" fio $FIO_COMMON \
			--output-format=json+ --output="$out" $(job_args "$TARGET" "$l")
	) >>"${out%.fio*}.err" 2>&1 &
}

# wf_wait_copy LOWER W0 T0: wait until LOWER has written WF_START_MB
# since it had written W0 sectors at T0 (us), at most WF_START_S
# seconds; WF_START_MS, how long from T0 (-1: it never did).
wf_wait_copy() {
	local w t
	WF_START_MS=-1
	while :; do
		read -r _ _ _ _ _ _ w _ <"/sys/block/$1/stat"
		t=${EPOCHREALTIME/./}
		if [ $((w - $2)) -ge $((WF_START_MB * 2048)) ]; then
			WF_START_MS=$(((10#$t - $3) / 1000))
			return 0
		fi
		[ $((10#$t - $3)) -gt $((WF_START_S * 1000000)) ] && break
		read -r -t 0.1 -u "$PAUSE_FD" _ 2>/dev/null
	done
	say "write family: the copy's writeback did not reach $1 in $WF_START_S s"
	return 1
}

# run_wf OUT LOWER LINE...: the write family's jobs, each its own fio in
# cgroup bench-NAME (OUT.fio0, OUT.fio1, ...): the copies first; once
# their writeback reaches the disk (wf_wait_copy), the other jobs, and
# the sampler's go (OUT.win.go): its window opens a second after every
# fio is up, plus the ramp. The sampler stops them all after it.
run_wf() {
	local out=$1 lower=$2 rc=0 i=0 l pids=() p w0 t0 spec copies=0
	shift 2
	fio_common $((WF_START_S + 30))
	: >"$out.err"
	read -r _ _ _ _ _ _ w0 _ <"/sys/block/$lower/stat"
	t0=${EPOCHREALTIME/./}
	for l in "$@"; do
		read -r _ spec _ <<<"$l"
		[[ $spec == wcopy* ]] || continue
		wf_start "$out.fio$i" "$l"
		pids+=($!)
		i=$((i + 1))
		copies=$((copies + 1))
	done
	[ "$copies" -gt 0 ] && wf_wait_copy "$lower" "$w0" "$((10#$t0))"
	for l in "$@"; do
		read -r _ spec _ <<<"$l"
		[[ $spec == wcopy* ]] && continue
		wf_start "$out.fio$i" "$l"
		pids+=($!)
		i=$((i + 1))
	done
	: >"$out.win.go"
	for p in "${pids[@]}"; do wait "$p" || rc=$?; done
	fio_common
	return "$rc"
}

# wf_json OUT: the write family's part of the BENCH line: the file
# system, the dirty limits, the lower queue's settings, how long the
# copy took to reach the disk and the teardown, each cgroup's io.stat on
# the lower device and the dirty pages at the window's ends (OUT.cg0,
# OUT.cg1: sampler()), the cgroups' ids, the names of fairq's flows.
wf_json() {
	local a=() b=() fqn=""
	[ -s "$1.cg0" ] && mapfile -t a <"$1.cg0"
	[ -s "$1.cg1" ] && mapfile -t b <"$1.cg1"
	[ -s "$1.fqn" ] && read -r fqn <"$1.fqn"
	printf '"wf":{"fs":"%s","dirty":"%s","sysctl":"%s","queue":"%s","start_ms":%d,"rm_ms":%d,"drain_ms":%d,"cgio":["%s","%s"],"vm":["%s","%s"],"cgids":"%s","flow_names":"%s"},' \
		"$WF_FS" "$WF_DIRTY" "${WF_SYSCTL% }" "${WF_QUEUE% }" "$WF_START_MS" "$WF_RM_MS" \
		"$WF_DRAIN_MS" "${a[0]:-}" "${b[0]:-}" "${a[1]:-}" "${b[1]:-}" "$WF_CGIDS" "$fqn"
}

# run_cg OUT LINE...: each wl_jobs LINE as its own fio process in cgroup
# bench-NAME, outputs OUT.fio0, OUT.fio1, ... Workload 5's reader runs
# with invalidate=0 (spec r4k-qd4): fio's default drops the target's
# cache first, which on a block device is BLKFLSBUF, and with ext4
# mounted on it that syncs the filesystem: the reader then waited for
# the writer's writeback, often for the writer's whole run.
run_cg() {
	local out=$1 rc=0 i=0 l pids=() p
	shift
	# All run well past the window; the sampler stops them after it.
	fio_common 30
	: >"$out.err"
	for l in "$@"; do
		(
			echo "$BASHPID" >"$CG_ROOT/bench-${l%% *}/cgroup.procs"
			# shellcheck disable=SC2046,SC2086
			exec timeout -k 10 "$(fio_limit w5)" fio $FIO_COMMON --output-format=json+ \
				--output="$out.fio$i" $(job_args "$TARGET" "$l")
		) >>"$out.err" 2>&1 &
		pids+=($!)
		i=$((i + 1))
	done
	for p in "${pids[@]}"; do wait "$p" || rc=$?; done
	fio_common
	return "$rc"
}

# ---- interactive start-up ----

# Start-up (on the memory-backed device-bound null_blk): the time to
# read a hundred small files cold from ext4
# (what starting a program does), alone and while STARTUP_READERS direct
# sequential readers stream from the same disk. Per configuration the
# file system is made once; each repetition then mounts it with a cold
# cache and reads every file with cat, once alone and once under load.
# The figure is loaded / alone (target <= 1.5).
# The configuration "readers-elsewhere" is a control, not a scheduler:
# the file system on the raw disk (none), the readers on a twin disk
# (STARTUP_TWIN, the same null_blk settings): what is left is what the
# readers cost the guest's CPUs (under TCG a memory-backed null_blk copies
# every byte they read), which no scheduler of this disk can remove.
STARTUP_FILES=${BENCH_STARTUP_FILES:-100}
STARTUP_TWIN=nbt
STARTUP_READERS=${BENCH_STARTUP_READERS:-10}

startup_populate() {	# startup_populate: mkfs (WF_FS) and the files on $TARGET
	local i d data
	wf_mkfs "$TARGET" || return 1
	mkdir -p /mnt/bench && mount "$TARGET" /mnt/bench || return 1
	# bash builtins only: one process writes every file
	data=$(head -c 16384 /dev/urandom | base64 -w 0)
	for d in $(seq 0 9); do mkdir "/mnt/bench/d$d" || break; done
	for i in $(seq "$STARTUP_FILES"); do
		printf '%s' "${data:0:$((4096 * (1 + i % 4)))}" >"/mnt/bench/d$((i % 10))/f$i" || break
	done
	umount /mnt/bench && [ "$i" = "$STARTUP_FILES" ]
}

startup_read_ms() {	# startup_read_ms: mount cold, read every file; STARTUP_MS
	local t0 t1 rc=0
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mount -o ro "$TARGET" /mnt/bench || return 1
	t0=${EPOCHREALTIME/./}
	find /mnt/bench -type f -exec cat {} + >/dev/null || rc=1
	t1=${EPOCHREALTIME/./}
	umount /mnt/bench || rc=1
	STARTUP_MS=$(((10#$t1 - 10#$t0) / 1000))
	return "$rc"
}

# startup_streaming N: wait until N fio processes have read from a disk
# (read_bytes in /proc/PID/io: counted as each bio is submitted), at most
# 60 s.  Under TCG ten fio processes take seconds to start, longer on a
# loaded host: a read timed after a fixed ramp of 1 s can begin before
# most readers have issued their first read.
startup_streaming() {
	local want=$1 i n d comm k v
	for ((i = 0; i < 300; i++)); do
		n=0
		for d in /proc/[0-9]*; do
			read -r comm 2>/dev/null <"$d/comm" || continue
			[ "$comm" = fio ] || continue
			while read -r k v; do
				[ "$k" = read_bytes: ] && [ "$v" -gt 0 ] && n=$((n + 1))
			done 2>/dev/null <"$d/io"
		done
		[ "$n" -ge "$want" ] && return 0
		sleep 0.2
	done
	say "startup: $n of $want readers streaming after 60 s"
	return 1
}

# startup_one DEV LOWER CFG REP: one BENCH_STARTUP line.
startup_one() {
	local dev=$1 lower=$2 cfg=$3 rep=$4 alone loaded pids=() p rc=0 lower_r0 lower_r1
	local fs_cfg=$cfg streams stats0 WF_FS=ext4
	NMEAS=$((NMEAS + 1))
	if [ "$PLAN_ONLY" = 1 ]; then
		echo "PLAN $dev startup $cfg $rep $((RUNTIME * 4 + OVH_S * 2))"
		return 0
	fi
	[ "$cfg" = readers-elsewhere ] && fs_cfg=none
	if ! cfg_up "$lower" "$fs_cfg" || ! startup_populate; then
		setup_failed "$dev" startup "$cfg" "$rep" "$lower" setup
		return 0
	fi
	startup_read_ms || rc=1
	alone=$STARTUP_MS
	streams=$TARGET
	[ "$cfg" = readers-elsewhere ] && streams=/dev/$STARTUP_TWIN
	for p in $(seq "$STARTUP_READERS"); do
		timeout -k 5 $((RUNTIME * 20 + 60)) fio --name="seq$p" --filename="$streams" \
			--ioengine=psync --direct=1 --rw=read --bs=1M --time_based \
			--runtime=$((RUNTIME * 20 + 30)) --offset=$(((p - 1) * 10))% --size=10% \
			--output=/dev/null >/dev/null 2>&1 &
		pids+=($!)
	done
	startup_streaming "$STARTUP_READERS" || rc=1
	sleep "$RAMP"
	: >"$W/startup.fq0"
	[ -r "/sys/block/$FQNAME/fairq/stats" ] && cat "/sys/block/$FQNAME/fairq/stats" >"$W/startup.fq0"
	read -r _ _ lower_r0 _ </sys/block/"$lower"/stat
	startup_read_ms || rc=1
	read -r _ _ lower_r1 _ </sys/block/"$lower"/stat
	loaded=$STARTUP_MS
	: >"$W/startup.fq"
	[ -r "/sys/block/$FQNAME/fairq/stats" ] && cat "/sys/block/$FQNAME/fairq/stats" >"$W/startup.fq"
	stats_json "$W/startup.fq0"
	stats0=$STATS
	stats_json "$W/startup.fq"
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	cfg_down "$lower"
	[ "$rc" = 0 ] || NFAILED=$((NFAILED + 1))
	printf 'BENCH_STARTUP {"dev":"%s","cfg":"%s","rep":%d,"rc":%d,"files":%d,"readers":%d,"alone_ms":%d,"loaded_ms":%d,"lower_sectors_read_loaded":%d,"args":"%s","fairq0":%s,"fairq":%s}\n' \
		"$dev" "$cfg" "$rep" "$rc" "$STARTUP_FILES" "$STARTUP_READERS" "$alone" "$loaded" \
		$((lower_r1 - lower_r0)) "$CFG_NOTE" "$stats0" "$STATS"
	say "#$NMEAS $dev startup $cfg rep $rep: ${alone} ms alone, ${loaded} ms under $STARTUP_READERS readers"
}

# startup DEV LOWER CFG...: REPS interleaved rounds of startup_one.
startup() {
	local dev=$1 lower=$2 rep cfg
	shift 2
	for rep in $(seq "$REPS"); do
		for cfg in "$@"; do
			[ -n "$ONLY" ] && ! [[ "$dev/startup/$cfg" =~ $ONLY ]] && continue
			startup_one "$dev" "$lower" "$cfg" "$rep"
		done
	done
}

# wc_read_ms: STARTUP_MS, the time to read the start-up's files cold
# from the file system mounted rw on /mnt/bench (workload wc: a copy
# writes to it meanwhile, so neither sync nor a remount: the caches are
# dropped, which leaves the copy's dirty pages alone). At most WC_MAX_S
# seconds: WC_CUT=1 when it was cut there (the figure is then a lower
# bound).
WC_MAX_S=${BENCH_WC_MAX_S:-300}
WC_CUT=0
wc_read_ms() {
	local t0 t1 rc=0
	echo 3 >/proc/sys/vm/drop_caches
	t0=${EPOCHREALTIME/./}
	timeout "$WC_MAX_S" find /mnt/bench/d0 /mnt/bench/d1 /mnt/bench/d2 /mnt/bench/d3 \
		/mnt/bench/d4 /mnt/bench/d5 /mnt/bench/d6 /mnt/bench/d7 /mnt/bench/d8 \
		/mnt/bench/d9 -type f -exec cat {} + >/dev/null || rc=$?
	t1=${EPOCHREALTIME/./}
	STARTUP_MS=$(((10#$t1 - 10#$t0) / 1000))
	[ "$rc" = 124 ] && WC_CUT=1
	return "$rc"
}

# wc_one DEV LOWER CFG REP: workload wc, application start-up beside a
# bulk copy: the start-up's files on a fresh WF_FS, read cold alone, then
# again while a bulk copy (spec wcopy, cgroup bench-copy) writes to the
# same file system, once its writeback reaches the disk and the ramp has
# passed. The lower device's counters, the copy's io.stat and fairq's
# stats over the timed read; one BENCH_STARTUP line with "wl":"wc".
wc_one() {
	local dev=$1 lower=$2 cfg=$3 rep=$4 wl=wc rc=0 alone loaded pid a b w0 t0 mm stats0
	[ -n "$ONLY" ] && ! [[ "$dev/$wl/$cfg" =~ $ONLY ]] && return 0
	NMEAS=$((NMEAS + 1))
	if [ "$PLAN_ONLY" = 1 ]; then
		echo "PLAN $dev $wl $cfg $rep $((RAMP + 80 + OVH_S * 2))"
		return 0
	fi
	rm -f "$W/wc".*
	if ! cfg_up "$lower" "$cfg" || ! startup_populate; then
		setup_failed "$dev" "$wl" "$cfg" "$rep" "$lower" setup
		return 0
	fi
	if ! wf_prepare wc; then
		setup_failed "$dev" "$wl" "$cfg" "$rep" "$lower" mount
		return 0
	fi
	WC_CUT=0
	wc_read_ms || rc=1
	alone=$STARTUP_MS
	SAMPLE_CGS=copy
	read -r mm <"/sys/block/$lower/dev"
	# the copy runs on until it is stopped after the timed read
	fio_common $((WF_START_S + WC_MAX_S + 60))
	read -r _ _ _ _ _ _ w0 _ <"/sys/block/$lower/stat"
	t0=${EPOCHREALTIME/./}
	: >"$W/wc.err"
	wf_start "$W/wc.fio0" "copy wcopy" $((WF_START_S + WC_MAX_S + 180))
	pid=$!
	fio_common
	wf_wait_copy "$lower" "$w0" "$((10#$t0))" || rc=1
	pause_until $((${EPOCHREALTIME/./} + RAMP * 1000000))
	: >"$W/wc.fq0"
	[ -r "/sys/block/$FQNAME/fairq/stats" ] && cat "/sys/block/$FQNAME/fairq/stats" >"$W/wc.fq0"
	cgio "$mm"
	a=$CGIO
	snap "$lower"
	local sa=$SNAP
	wc_read_ms || [ "$WC_CUT" = 1 ] || rc=1
	snap "$lower"
	local sb=$SNAP
	cgio "$mm"
	b=$CGIO
	loaded=$STARTUP_MS
	: >"$W/wc.fq"
	[ -r "/sys/block/$FQNAME/fairq/stats" ] && cat "/sys/block/$FQNAME/fairq/stats" >"$W/wc.fq"
	flow_names "$W/wc.fq"
	kill -INT "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	printf '%s\n%s\n' "$sa" "$sb" >"$W/wc.win"
	win_json "$W/wc.win"
	wf_finish
	echo 20 >/proc/sys/vm/dirty_ratio
	echo 10 >/proc/sys/vm/dirty_background_ratio
	SAMPLE_CGS=""
	stats_json "$W/wc.fq0"
	stats0=$STATS
	stats_json "$W/wc.fq"
	cfg_down "$lower"
	[ "$rc" = 0 ] || NFAILED=$((NFAILED + 1))
	printf 'BENCH_STARTUP {"dev":"%s","wl":"%s","cfg":"%s","rep":%d,"rc":%d,"files":%d,"readers":0,"alone_ms":%d,"loaded_ms":%d,"cut":%d,"win":%s,"args":"%s","fairq0":%s,"fairq":%s,' \
		"$dev" "$wl" "$cfg" "$rep" "$rc" "$STARTUP_FILES" "$alone" "$loaded" "$WC_CUT" "$WIN" \
		"$CFG_NOTE" "$stats0" "$STATS"
	printf '"wf":{"fs":"%s","dirty":"%s","sysctl":"%s","queue":"%s","start_ms":%d,"rm_ms":%d,"drain_ms":%d,"cgio":["%s","%s"],"cgids":"%s","flow_names":"%s"}}\n' \
		"$WF_FS" "$WF_DIRTY" "${WF_SYSCTL% }" "${WF_QUEUE% }" "$WF_START_MS" "$WF_RM_MS" \
		"$WF_DRAIN_MS" "$a" "$b" "$WF_CGIDS" "$FQN"
	say "#$NMEAS $dev wc $cfg rep $rep: ${alone} ms alone, ${loaded} ms beside a copy (at the disk after ${WF_START_MS} ms)"
}

# write_family DEV LOWER [FS]: the write family (bench/README.md) on
# /dev/LOWER: FS (default ext4) made once on the raw disk with the
# reader's file; workloads wa, wb, wd and wa-lo in interleaved rounds
# over WF_CFGS and fairq's configurations, RAMP and RUNTIME set to
# WF_RAMP and WF_RUNTIME; then each job spec alone under every
# configuration it was measured with (a window of the same length: the
# copy's rate alone must be its writeback's, not its first seconds into
# the page cache); then workload wc, which makes its own file systems.
write_family() {
	local dev=$1 lower=$2 rp=$RAMP rt=$RUNTIME w c n cfgs
	WF_FS=${3:-ext4}
	WF_LOWER=$lower
	# shellcheck disable=SC2046
	cfgs="$WF_CFGS $(fq_cfgs fairq-cfq fairq-cfq@cgroup)"
	if [ -n "$ONLY" ]; then
		n=0
		for w in wa wb wd wa-lo wc; do
			for c in $cfgs; do [[ "$dev/$w/$c" =~ $ONLY ]] && n=1; done
		done
		[ "$n" = 1 ] || return 0
	fi
	if [ "$PLAN_ONLY" != 1 ]; then
		WF_CGIDS=""
		for n in copy commit reader bulk1 bulk4; do WF_CGIDS+="$n=$(cg_id "$n") "; done
		WF_CGIDS=${WF_CGIDS% }
		set_sched "$lower" none
		if ! wf_mkfs "/dev/$lower" || ! mkdir -p /mnt/bench || ! wf_mount "/dev/$lower"; then
			say "write family on $dev: no $WF_FS"
			return 0
		fi
		# the reader's file, written (a fallocated one reads as zeros
		# without any I/O)
		dd if=/dev/zero of=/mnt/bench/rfile bs=1M count="$WF_RFILE_MB" oflag=direct status=none ||
			say "write family on $dev: the reader's file was not written"
		sync
		umount /mnt/bench
	fi
	RAMP=$WF_RAMP RUNTIME=$WF_RUNTIME
	for w in wa wb wd wa-lo; do
		# shellcheck disable=SC2086
		round "$dev" "$lower" "$w" $cfgs
		# shellcheck disable=SC2086
		wf_alone_note "$dev" "$w" $cfgs
	done
	# shellcheck disable=SC2086
	wf_alone_note "$dev" wc $cfgs
	for c in $WF_ALONE_CFGS; do
		for n in ${WF_ALONE[$c]}; do measure "$dev" "$lower" "$c" "alone-$n" 1; done
	done
	WF_ALONE=() WF_ALONE_CFGS=""
	for n in $(seq "$REPS"); do
		for c in $cfgs; do wc_one "$dev" "$lower" "$c" "$n"; done
	done
	RAMP=$rp RUNTIME=$rt
}

# wf_alone_note DEV WL CFG...: the family's specs of WL (wc: the copy)
# to be measured alone under each CFG that --only lets through.
wf_alone_note() {
	local dev=$1 wl=$2 cfg _n spec _x specs
	shift 2
	if [ "$wl" = wc ]; then
		specs=wcopy
	else
		specs=$(while read -r _n spec _x; do echo "$spec"; done < <(wl_jobs "$wl"))
	fi
	for cfg in "$@"; do
		[ -n "$ONLY" ] && ! [[ "$dev/$wl/$cfg" =~ $ONLY ]] && continue
		[[ " $WF_ALONE_CFGS " == *" $cfg "* ]] || WF_ALONE_CFGS+=" $cfg"
		for spec in $specs; do
			[[ " ${WF_ALONE[$cfg]:-} " == *" $spec "* ]] || WF_ALONE[$cfg]+=" $spec"
		done
	done
}

# flip DEV LOWER WL CFG A B: one fio run of WL on fairq configured as CFG,
# its depth written A and B in turn (A B B A, FLIP_ROUNDS times), the
# lower device's completed reads and the time counted over each window of
# FLIP_WIN_S seconds: one BENCH_FLIP line. Windows a second apart meet
# the same host; the separate runs of round() spread by tens of percent
# under TCG, far more than the 1 % the W6 target asks of depth=auto
# against a fixed depth. Each write stops the fast path once, in both directions alike
# (fastpath_stops counts them), and "auto" restarts the controller from
# the depth in force, as a user's write would.
FLIP_ROUNDS=${BENCH_FLIP_ROUNDS:-5}
FLIP_WIN_S=${BENCH_FLIP_WIN_S:-1}
flip() {
	local dev=$1 lower=$2 wl=$3 cfg=$4 da=$5 db=$6 out=$W/flip rc=0 fpid
	local n=$((FLIP_ROUNDS * 4)) i v t0 t1 r0 r1 wins="" order=() lines=() l args=()
	[ -n "$ONLY" ] && ! [[ "$dev/flip-$wl/$cfg" =~ $ONLY ]] && return 0
	NMEAS=$((NMEAS + 1))
	if [ "$PLAN_ONLY" = 1 ]; then
		echo "PLAN $dev flip-$wl $cfg 1 $((n * FLIP_WIN_S + RAMP + OVH_S))"
		return 0
	fi
	if ! cfg_up "$lower" "$cfg" "depth=$da"; then
		setup_failed "$dev" "flip-$wl" "$cfg" 1 "$lower" setup
		return 0
	fi
	mapfile -t lines < <(wl_jobs "$wl")
	for l in "${lines[@]}"; do
		# shellcheck disable=SC2207
		args+=($(job_args "$TARGET" "$l"))
	done
	fio_common 0 $((n * FLIP_WIN_S + RAMP + 2))
	# shellcheck disable=SC2086
	timeout --foreground -k 10 $((n * FLIP_WIN_S + RAMP + 60)) fio $FIO_COMMON \
		--output-format=json --output="$out.fio0" "${args[@]}" >"$out.err" 2>&1 &
	fpid=$!
	sleep "$RAMP"
	for ((i = 0; i < FLIP_ROUNDS; i++)); do order+=("$da" "$db" "$db" "$da"); done
	for v in "${order[@]}"; do
		echo "$v" >"/sys/block/$FQNAME/fairq/depth" || { say "flip: depth=$v refused"; rc=1; }
		read -r r0 _ </sys/block/"$lower"/stat
		t0=${EPOCHREALTIME/./}
		sleep "$FLIP_WIN_S"
		read -r r1 _ </sys/block/"$lower"/stat
		t1=${EPOCHREALTIME/./}
		wins+=${wins:+,}"{\"depth\":\"$v\",\"ios\":$((r1 - r0)),\"us\":$((10#$t1 - 10#$t0))}"
	done
	: >"$out.fq"
	cat "/sys/block/$FQNAME/fairq/stats" >"$out.fq" 2>/dev/null
	wait "$fpid" || rc=1
	stats_json "$out.fq"
	cfg_down "$lower"
	[ "$rc" = 0 ] || { NFAILED=$((NFAILED + 1)); say "flip: fio: $(head -c 300 "$out.err")"; }
	printf 'BENCH_FLIP {"dev":"%s","wl":"%s","cfg":"%s","rc":%d,"a":"%s","b":"%s","win_s":%d,"args":"%s","windows":[%s],"fairq":%s}\n' \
		"$dev" "$wl" "$cfg" "$rc" "$da" "$db" "$FLIP_WIN_S" "$CFG_NOTE" "$wins" "$STATS"
	say "#$NMEAS $dev flip-$wl $cfg: depth $da and $db in turn, $n windows of $FLIP_WIN_S s, fio rc $rc"
}

# ---- the plan ----

# round DEV LOWER WL CFG...: REPS rounds, each over every CFG in turn.
round() {
	local dev=$1 lower=$2 wl=$3 rep cfg
	shift 3
	for rep in $(seq "$REPS"); do
		for cfg in "$@"; do
			measure "$dev" "$lower" "$cfg" "$wl" "$rep"
		done
	done
}

# The alone runs: every job spec measured on a disk, by itself, under each
# configuration it was measured with (the reference of the job's slowdown
# s_i = throughput with the others / throughput alone). One fio run per
# disk and configuration, the specs one after the other (stonewall), each
# RAMP + ALONE_RUNTIME seconds: fio's per-job figures are right here, as
# each job runs alone for its whole runtime.
declare -A ALONE_SPECS=()
ALONE_CFGS=""
ALONE_LIST=""

alone_note() {	# alone_note DEV WL CFG...: remember WL's specs for each CFG
	local dev=$1 wl=$2 cfg _n spec _x
	shift 2
	for cfg in "$@"; do
		[ -n "$ONLY" ] && ! [[ "$dev/$wl/$cfg" =~ $ONLY ]] && continue
		[[ " $ALONE_CFGS " == *" $cfg "* ]] || ALONE_CFGS+=" $cfg"
		while read -r _n spec _x; do
			[[ " ${ALONE_SPECS[$cfg]:-} " == *" $spec "* ]] || ALONE_SPECS[$cfg]+=" $spec"
		done < <(wl_jobs "$wl")
	done
}

alone_flush() {	# alone_flush DEV LOWER: the alone runs of the disk
	local cfg
	for cfg in $ALONE_CFGS; do
		ALONE_LIST=${ALONE_SPECS[$cfg]}
		measure "$1" "$2" "$cfg" alone 1
	done
	ALONE_CFGS="" ALONE_LIST=""
	ALONE_SPECS=()
}

# bench_wl DEV LOWER WL CFG...: the interleaved rounds; the alone runs
# follow when the disk is done (alone_flush).
bench_wl() {
	round "$@"
	alone_note "$1" "${@:3}"
}

# sweep DEV LOWER [WL]: workload WL (default 2) under fairq-cfq at each
# fixed depth (SWEEP_DEPTHS), SWEEP_REPS rounds: total throughput, G and
# (workload 2) the light reader's p99 against the depth.
sweep() {
	local d cfgs=() reps=$REPS
	[ "$HAVE_FAIRQ" = 1 ] || return 0
	for d in $SWEEP_DEPTHS; do cfgs+=("fairq-cfq:depth=$d"); done
	REPS=$SWEEP_REPS
	round "$1" "$2" "${3:-w2}" "${cfgs[@]}"
	REPS=$reps
}

# The configurations. Kernel schedulers at their defaults and at their
# best (-nr: nr_requests raised; bfq-nr-thru: also low_latency=0
# slice_idle=0); fairq's defaults (fairq-cfq, the headline) and the
# recommended set (-rec), each compared as itself.
# The full set on nullb-lat; the other disks get fewer (the 60-minute
# budget): the defaults and the best settings seen on nullb-lat.
COMP_ALL="mq-deadline mq-deadline-nr bfq bfq-nr bfq-nr-thru kyber kyber-nr"
COMP_BEST="mq-deadline mq-deadline-nr bfq bfq-nr-thru kyber-nr"
FQ_ALL="fairq-fifo fairq-cfq fairq-sfq fairq-cfq-rec"
FQ_MAIN="fairq-cfq fairq-cfq-rec"

setup_info() {
	modprobe bfq 2>/dev/null || say "bfq does not load"
	modprobe kyber-iosched 2>/dev/null || say "kyber does not load"
	modprobe dm-mod 2>/dev/null
	fairq_available && HAVE_FAIRQ=1 || HAVE_FAIRQ=0
	printf 'BENCH_INFO {"kernel":"%s","cpus":%d,"mem_mb":%d,"mode":"%s","reps":%d,"runtime":%s,"ramp":%s,' \
		"$(uname -r)" "$(nproc)" "$(awk '/MemTotal/{print int($2 / 1024)}' /proc/meminfo)" \
		"$MODE" "$REPS" "$RUNTIME" "$RAMP"
	printf '"fairq":%d,"fairq_srcversion":"%s","fio":"%s","nb_nsec":%s,"nb_qd":%s,' \
		"$HAVE_FAIRQ" "$(cat /sys/module/fairq/srcversion 2>/dev/null)" "$(fio --version)" \
		"$NB_NSEC" "$NB_QD"
	printf '"nbd_bw":%s,"nbd_depth":%s,"nbd_lat_us":%s,"throttle_iops":"%s","throttle_bps":"%s","fairq_rec":"%s","cpu_model":"%s",' \
		"$NBD_BW" "$NBD_DEPTH" "$NBD_LAT" "${FAIRQ_THROTTLE_IOPS:-}" "${FAIRQ_THROTTLE_BPS:-}" \
		"$FAIRQ_REC" "$(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
	printf '"nr_requests":%s,"alone_runtime":%s,"wf_ramp":%s,"wf_runtime":%s,"cg_weights":"%s","iocost_default":"%s"}\n' \
		"$NR_REQ" "$ALONE_RUNTIME" "$WF_RAMP" "$WF_RUNTIME" "$(for n in "${!CG_WEIGHT[@]}"; do printf '%s=%s ' "$n" "${CG_WEIGHT[$n]}"; done)" \
		"$([ -e "$CG_ROOT/io.cost.qos" ] && echo "io.cost: model and QoS at the kernel's defaults (ctrl=auto)" || echo "no io.cost in this kernel")"
	cg_setup || say "cgroups: set-up failed"
}

fq_cfgs() {	# the fairq configurations among "$@", if the module is there
	local c
	[ "$HAVE_FAIRQ" = 1 ] || return 0
	for c in "$@"; do echo "$c"; done
}

# wf_virtio: the write family on the throttled virtio disk, once per
# file system in WF_FSLIST (device label virtio, virtio-xfs); the copy's
# file is 1 GiB (half the disk at most), well past the dirty threshold
# at the kernel's limits (a fifth of some 2.6 GiB of free memory).
wf_virtio() {
	local fs mb=2048
	[ "$PLAN_ONLY" = 1 ] || mb=$(($(blockdev --getsize64 /dev/vdc) >> 20))
	WF_COPY_MB=$((mb / 2 < 1024 ? mb / 2 : 1024))
	WF_TRIM=0
	for fs in $WF_FSLIST; do
		if [ "$PLAN_ONLY" != 1 ] && [ "$fs" = xfs ] &&
			! { command -v mkfs.xfs >/dev/null && modprobe xfs 2>/dev/null; }; then
			say "write family: no mkfs.xfs or xfs module in the guest: xfs skipped"
			continue
		fi
		write_family "virtio$([ "$fs" = ext4 ] || echo "-$fs")" vdc "$fs"
	done
}

# wf_nullb: the write family on a memory-backed twin of the device-bound
# null_blk (label nullb-lat-mem, like workload 5's disk, but WF_NB_SIZE
# MiB and discard, so that fstrim gives its memory back after each
# measurement); the copy's file 640 MiB.
wf_nullb() {
	# shellcheck disable=SC2046
	nullb_make nbw $(nb_bound_args | sed "s/size=[0-9]*/size=$WF_NB_SIZE/") \
		memory_backed=1 discard=1 || return 0
	WF_COPY_MB=$((WF_NB_SIZE * 5 / 8))
	WF_TRIM=1
	write_family nullb-lat-mem nbw ext4
	WF_TRIM=0
	nullb_drop nbw
}

# plan_writes: only the write family (bench/run --writes).
plan_writes() {
	wf_virtio
	wf_nullb
}

plan_quick() {
	local q
	q=$(fq_cfgs fairq-cfq)
	# shellcheck disable=SC2086
	bench_wl virtio vdc w2 mq-deadline mq-deadline-nr $q
	alone_flush virtio vdc
}

plan_full() {
	local m w n rt

	# Calibration: the device-bound disks' throughput tracks their
	# setting (hw_queue_depth 1, 2, 4 at the same service time); the
	# unthrottled null_blk shows what the guest's CPU drives.
	for m in 1 2 4; do
		# shellcheck disable=SC2046,SC2086
		nullb_make "nbc$m" $(nb_bound_args "$m") || continue
		measure "calib-nullb-qd$m" "nbc$m" none w1 1
		nullb_drop "nbc$m"
	done
	measure "calib-virtio" vdc none w1 1
	if nullb_make nbcf size="$NB_SIZE" blocksize=4096 submit_queues=1 irqmode=0 hw_queue_depth=64; then
		measure "calib-nullb-fast" nbcf none w1 1
		nullb_drop nbcf
	fi

	# The device-bound null_blk: every workload but 5-7, every
	# competitor; workload 4 also as cgroups (io.cost's and bfq's
	# weights are per cgroup); then the depth sweep.
	# shellcheck disable=SC2046,SC2086
	if nullb_make nbl $(nb_bound_args); then
		# shellcheck disable=SC2046,SC2086
		bench_wl nullb-lat nbl w1 $COMP_ALL dm-linear $(fq_cfgs $FQ_ALL)
		# shellcheck disable=SC2046,SC2086
		bench_wl nullb-lat nbl w2 $COMP_ALL dm-linear $(fq_cfgs $FQ_MAIN)
		for w in w3 w4; do
			# shellcheck disable=SC2046,SC2086
			bench_wl nullb-lat nbl "$w" $COMP_ALL $(fq_cfgs $FQ_MAIN)
		done
		# shellcheck disable=SC2046,SC2086
		bench_wl nullb-lat nbl w4cg bfq iocost $(fq_cfgs fairq-cfq@cgroup)
		alone_flush nullb-lat nbl
		sweep nullb-lat nbl
		nullb_drop nbl
	else
		say "no device-bound null_blk"
	fi

	# Scale (before the other disks: its fio runs are the longest): a
	# wider device-bound null_blk (32 in service), so that each
	# of 1,024 flows completes enough I/Os for a fairness figure, and a
	# longer window. 1,024 threads take ~2 minutes to start and stop
	# under TCG: one repetition of those.
	# shellcheck disable=SC2046,SC2086
	if nullb_make nbs $(nb_bound_args "$SCALE_QD"); then
		rt=$RUNTIME
		RUNTIME=$SCALE_RUNTIME
		for n in $SCALE_N; do
			if [ "$n" -gt "$SCALE_N_MAX" ]; then
				say "w7-$n: more threads than one fio process runs ($SCALE_N_MAX); skipped"
				continue
			fi
			local reps=$REPS
			[ "$n" -ge 256 ] && REPS=$SCALE_BIG_REPS
			# fio runs on well past the window (the threads start over
			# seconds, reading a thousand /proc/TID/io files takes
			# seconds); the sampler stops it after the window.
			fio_common $((30 + RUNTIME + n / 6))
			# shellcheck disable=SC2046,SC2086
			round nullb-lat32 nbs "w7-$n" mq-deadline $(fq_cfgs fairq-cfq@pid)
			REPS=$reps
		done
		RUNTIME=$rt
		fio_common
		nullb_drop nbs
	fi

	# Workload 5: ext4 on a memory-backed twin of the device-bound disk.
	# shellcheck disable=SC2046,SC2086
	if nullb_make nbm $(nb_bound_args | sed 's/size=[0-9]*/size=512/') memory_backed=1; then
		[ "$PLAN_ONLY" = 1 ] ||
			mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 /dev/nbm
		# shellcheck disable=SC2046,SC2086
		bench_wl nullb-lat-mem nbm w5 mq-deadline bfq iocost \
			$(fq_cfgs fairq-cfq fairq-cfq@cgroup)
		alone_flush nullb-lat-mem nbm
		# (after workload 5: each start-up configuration makes its own ext4)
		# shellcheck disable=SC2046,SC2086
		local twin=""
		# shellcheck disable=SC2046
		nullb_make "$STARTUP_TWIN" $(nb_bound_args | sed 's/size=[0-9]*/size=512/') \
			memory_backed=1 && twin=readers-elsewhere
		# shellcheck disable=SC2046,SC2086
		startup nullb-lat-mem nbm mq-deadline bfq kyber $(fq_cfgs $FQ_MAIN) $twin
		nullb_drop "$STARTUP_TWIN"
		nullb_drop nbm
	fi
	# The write family on its memory-backed null_blk.
	wf_nullb

	# The throttled virtio disk.
	# shellcheck disable=SC2046,SC2086
	bench_wl virtio vdc w1 mq-deadline-nr bfq-nr-thru $(fq_cfgs $FQ_MAIN)
	# shellcheck disable=SC2046,SC2086
	bench_wl virtio vdc w2 $COMP_BEST dm-linear $(fq_cfgs $FQ_MAIN)
	# shellcheck disable=SC2046,SC2086
	bench_wl virtio vdc w3 mq-deadline-nr bfq bfq-nr-thru $(fq_cfgs $FQ_MAIN)
	alone_flush virtio vdc
	sweep virtio vdc
	# The write family on the same disk (it makes its file systems there).
	wf_virtio

	# nbd over fairq-nbd's device model.
	if nbd_up; then
		# shellcheck disable=SC2046,SC2086
		bench_wl nbd nbd0 w1 mq-deadline-nr bfq-nr-thru $(fq_cfgs $FQ_MAIN)
		# shellcheck disable=SC2046,SC2086
		bench_wl nbd nbd0 w2 mq-deadline-nr bfq-nr-thru $(fq_cfgs $FQ_MAIN)
		alone_flush nbd nbd0
		sweep nbd nbd0
		sweep nbd nbd0 w1
		nbd_down
	fi

	# Overhead: unthrottled (CPU-bound) null_blk.
	if nullb_make nfast size="$NB_SIZE" blocksize=4096 submit_queues=1 irqmode=0 hw_queue_depth=64; then
		# shellcheck disable=SC2046,SC2086
		round nullb-fast nfast w6qd1 none dm-linear $(fq_cfgs fairq-cfq)
		# shellcheck disable=SC2046,SC2086
		round nullb-fast nfast w6qd32 none dm-linear $(fq_cfgs fairq-cfq fairq-cfq:depth=32)
		flip nullb-fast nfast w6qd32 fairq-cfq auto 32
		for w in w6p4 w6qd1u w6qd32u w6p4u; do
			# shellcheck disable=SC2046,SC2086
			round nullb-fast nfast $w none dm-linear $(fq_cfgs fairq-cfq)
		done
		# Workload 8: the cost of scheduling when it is engaged (W6
		# runs on the fast path): N threads at iodepth 1, the kernel's
		# schedulers on the disk itself against fairq over it with its
		# fast path off (every bio scheduled; flows by thread, @pid).
		engaged nullb-fast nfast
		nullb_drop nfast
	fi
}

# engaged DEV LOWER: workload 8 on the disk, ENGAGED_N threads each.
engaged() {
	local n reps=$REPS
	for n in $ENGAGED_N; do
		[ "$n" -ge 256 ] && REPS=$SCALE_BIG_REPS
		fio_common $((30 + RUNTIME + n / 6))
		# shellcheck disable=SC2046
		round "$1" "$2" "w8-$n" mq-deadline kyber bfq $(fq_cfgs fairq-cfq@pid:fastpath=off)
		REPS=$reps
	done
	fio_common
}

# plan_tune: BENCH_TUNE="k=v ...|k=v ...|..." variants of the recommended
# tunables, each measured as fairq-cfq-rec (and fairq-sfq-rec) on the
# workloads BENCH_TUNE_WLS of nullb-lat and virtio; the device label
# carries the variant's number ("nullb-lat#t2").
plan_tune() {
	local variants=() v i w
	IFS='|' read -r -a variants <<<"${BENCH_TUNE:-$FAIRQ_REC}"
	# shellcheck disable=SC2046,SC2086
	nullb_make nbl $(nb_bound_args) || return 0
	for w in ${BENCH_TUNE_WLS:-w2}; do
		for i in "${!variants[@]}"; do
			FAIRQ_REC=${variants[i]}
			say "variant t$i: $FAIRQ_REC"
			# shellcheck disable=SC2086
			round "nullb-lat#t$i" nbl "$w" ${BENCH_TUNE_CFGS:-fairq-cfq-rec}
			# shellcheck disable=SC2086
			round "virtio#t$i" vdc "$w" ${BENCH_TUNE_CFGS:-fairq-cfq-rec}
		done
	done
	nullb_drop nbl
}

main() {
	if [ "$PLAN_ONLY" = 1 ]; then
		HAVE_FAIRQ=1
		fio_common
		case $MODE in quick) plan_quick ;; tune) plan_tune ;; writes) plan_writes ;; *) plan_full ;; esac
		rm -rf "$W"
		return 0
	fi
	say "start: mode $MODE, $REPS rep(s), ${RUNTIME}s + ${RAMP}s ramp per measurement"
	fio_common
	setup_info
	[ "$HAVE_FAIRQ" = 1 ] || say "fairq.ko not available: kernel schedulers and dm-linear only"
	if [ "$MODE" = quick ]; then
		plan_quick
	elif [ "$MODE" = tune ]; then
		plan_tune
	elif [ "$MODE" = writes ]; then
		plan_writes
	else
		plan_full
	fi
	say "done: $NMEAS measurements, $NFAILED failed"
	echo "BENCH_DONE {\"measurements\":$NMEAS,\"failed\":$NFAILED}"
	return 0
}

main "$@"
