#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench.sh - fairq-nbd (--cache=page and --cache=none) against nbdkit's
# file plugin and qemu-nbd, all serving the same image over a unix
# socket, measured with fio's nbd engine (libnbd, one connection per fio
# job); and fio on the file itself with O_DIRECT (what --cache=none can
# reach).  Not part of "make test": it takes minutes and wants a quiet
# machine.
#
# Usage: bench.sh [-d DIR] [-r ROUNDS] [-t SECONDS] [-s SIZE] [-j CONNS]
#                 [-S SERVERS] [-W WORKLOADS]
#   -d DIR      where the image goes; must be a real file system, not
#               tmpfs (default /var/tmp)
#   -r ROUNDS   rounds; each runs every (workload, server) pair once,
#               servers interleaved, the first one rotating (default 3)
#   -t SECONDS  fio runtime per run (default 10)
#   -s SIZE     image size (default 1G)
#   -j CONNS    connections of the read-mc and write-mc workloads
#               (default 4)
#   -S SERVERS  a subset of: fairq-page fairq-none nbdkit qemu-nbd
#               fio-direct (default all), e.g. -S "fairq-page nbdkit"
#   -W WORKLOADS  a subset of: randread randwrite read write read-mc
#               write-mc (default all)
#   FAIRQ_NBD=PATH  the fairq-nbd binary (default ./fairq-nbd here)
#
# Workloads: 4k randread and randwrite at iodepth 32 on one connection;
# 1M sequential read and write at iodepth 8 on one connection, and on
# CONNS connections (read-mc, write-mc: CONNS fio jobs, each its own
# connection and its own 1/CONNS of the image).  Prints one line per
# run, then a table: the median of the rounds and, in brackets, their
# lowest and highest; IOPS for 4k, MiB/s for 1M (the sum of the jobs).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=/var/tmp rounds=3 runtime=10 size=1G conns=4
servers=(fairq-page fairq-none nbdkit qemu-nbd fio-direct)
workloads=(randread randwrite read write read-mc write-mc)
fairq=${FAIRQ_NBD:-$here/fairq-nbd}
while getopts d:r:t:s:j:S:W:h o; do
	case $o in
	d) dir=$OPTARG ;;
	r) rounds=$OPTARG ;;
	t) runtime=$OPTARG ;;
	s) size=$OPTARG ;;
	j) conns=$OPTARG ;;
	S) read -r -a servers <<<"$OPTARG" ;;
	W) read -r -a workloads <<<"$OPTARG" ;;
	*) sed -n '3,31p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
for c in fio nbdkit qemu-nbd numfmt "$fairq"; do
	command -v "$c" >/dev/null || { echo "bench.sh: needs $c" >&2; exit 2; }
done
fio --enghelp=nbd >/dev/null 2>&1 || { echo "bench.sh: fio lacks the nbd engine" >&2; exit 2; }
[ "$(stat -f -c %T "$dir")" != tmpfs ] || { echo "bench.sh: $dir is tmpfs" >&2; exit 2; }
bytes=$(numfmt --from=iec "$size")

work=$(mktemp -d "$dir/fairq-nbd-bench.XXXXXX")
img=$work/disk.img
sock=$work/nbd.sock
res=$work/results
spid=""
cleanup()
{
	[ -z "$spid" ] || { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null || :; }
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# the image holds data (not a sparse file), written once
fio --name=fill --filename="$img" --size="$size" --rw=write --bs=1M \
    --ioengine=libaio --direct=1 --iodepth=8 --refill_buffers \
    --output=/dev/null
sync

# Every run starts from the same state: no dirty pages left by the run
# before, the whole image in the page cache (else the first server of a
# round reads from the disk and the later ones from memory).
start()
{
	sync
	cat "$img" >/dev/null
	rm -f "$sock"
	case $1 in
	fairq-page) "$fairq" -u "$sock" --cache=page "$img" 2>"$work/log" & ;;
	fairq-none) "$fairq" -u "$sock" --cache=none "$img" 2>"$work/log" & ;;
	nbdkit) nbdkit -f -U "$sock" file "$img" 2>"$work/log" & ;;
	qemu-nbd) qemu-nbd -f raw -t -e 64 -k "$sock" "$img" 2>"$work/log" & ;;
	fio-direct) spid=""; return 0 ;;
	*) echo "bench.sh: unknown server $1" >&2; exit 2 ;;
	esac
	spid=$!
	for _ in $(seq 100); do
		[ -S "$sock" ] && return 0
		sleep 0.05
	done
	echo "bench.sh: $1 did not start: $(cat "$work/log")" >&2
	exit 1
}

stop()
{
	[ -n "$spid" ] || return 0
	kill "$spid"
	wait "$spid" 2>/dev/null || :
	spid=""
}

# run SERVER WORKLOAD: one fio run, prints IOPS (4k) or MiB/s (1M)
run()
{
	local bs=4k qd=32 jobs=1 rw=${2%-mc} target out
	case $2 in
	read|write) bs=1M qd=8 ;;
	*-mc) bs=1M qd=8 jobs=$conns ;;
	esac
	if [ "$1" = fio-direct ]; then
		target=(--ioengine=libaio --direct=1 --filename="$img")
	else
		target=(--ioengine=nbd --uri="nbd+unix:///?socket=$sock")
	fi
	out=$(fio --name=b "${target[@]}" --rw="$rw" --bs="$bs" \
		--iodepth="$qd" --numjobs="$jobs" --group_reporting \
		--size=$((bytes / jobs)) --offset_increment=$((bytes / jobs)) \
		--time_based --runtime="$runtime" --ramp_time=1 --norandommap \
		--output-format=terse --terse-version=3 | grep "^3;")
	# terse v3: field 8 read IOPS, 7 read KiB/s; 49 write IOPS, 48 KiB/s
	awk -F';' -v w="$2" '{
		if (w == "randread") print $8;
		else if (w == "randwrite") print $49;
		else if (w ~ /^read/) printf "%.0f\n", $7 / 1024;
		else printf "%.0f\n", $48 / 1024 }' <<<"$out"
}

echo "host: $(nproc) CPUs; $(uptime)"
echo "image: $size on $(stat -f -c %T "$dir") ($dir); $rounds rounds x ${runtime}s; multi-connection cases: $conns"
echo "fairq-nbd: $("$fairq" --version); $(nbdkit --version); $(qemu-nbd --version | head -n 1); $(fio --version)"
ns=${#servers[@]}
for r in $(seq "$rounds"); do
	for w in "${workloads[@]}"; do
		for i in $(seq 0 $((ns - 1))); do
			s=${servers[$(( (i + r - 1) % ns ))]}
			start "$s"
			v=$(run "$s" "$w")
			stop
			echo "$r $w $s $v" | tee -a "$res"
		done
	done
done
echo "after: $(uptime)"

# cell WORKLOAD SERVER: "median (min-max)" of the rounds
cell()
{
	awk -v w="$1" -v s="$2" '$2 == w && $3 == s { print $4 }' "$res" |
		sort -n | awk '{ v[NR] = $1 } END {
			if (!NR) { print "-"; exit }
			if (NR % 2) m = v[(NR + 1) / 2];
			else m = (v[NR / 2] + v[NR / 2 + 1]) / 2;
			printf "%.0f (%s-%s)\n", m, v[1], v[NR] }'
}

echo
printf '| %-30s |' "median (min-max) of $rounds"
for s in "${servers[@]}"; do printf ' %23s |' "$s"; done
echo
printf '|%s|' "--------------------------------"
for _ in "${servers[@]}"; do printf '%s|' "------------------------:"; done
echo
for w in "${workloads[@]}"; do
	case $w in
	randread|randwrite) label="$w 4k QD32 [IOPS]" ;;
	read|write) label="$w 1M QD8 [MiB/s]" ;;
	*) label="${w%-mc} 1M QD8 x$conns conns [MiB/s]" ;;
	esac
	printf '| %-30s |' "$label"
	for s in "${servers[@]}"; do printf ' %23s |' "$(cell "$w" "$s")"; done
	echo
done
