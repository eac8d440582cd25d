# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# functions.sh - shared setup for the fairq-nbd host tests (sourced by bash).
#
# Each test-*.sh is one test (tests/lib.sh with TLIB_CASE=1): it sources
# this file, calls requires/start_server and asserts; fatal MSG fails it
# and stops it, skip_all WHY skips it (exit 77), fail MSG counts a failure
# and goes on (the test then exits 1).  cleanup runs from an EXIT trap: it
# kills every server the test started and removes $tmp.

set -u
set -e

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
TLIB_CASE=1
# shellcheck source=../../tests/lib.sh
. "$srcdir/../tests/lib.sh"
server=$srcdir/fairq-nbd
# shellcheck disable=SC2034 # for the test-*.sh that source this file
badclient=$here/nbd-badclient
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fairq-nbd-test.XXXXXX")
sock=$tmp/nbd.sock
# shellcheck disable=SC2034 # for the test-*.sh that source this file
disk=$tmp/disk.img
log=$tmp/server.log
uri="nbd+unix:///?socket=$sock"
server_pids=""

cleanup()
{
	status=$(tlib_case_status $?)
	for p in $server_pids; do
		kill -KILL "$p" 2>/dev/null || :
		wait "$p" 2>/dev/null || :
	done
	if [ "$status" -ne 0 ] && [ "$status" -ne 77 ] && [ -f "$log" ]; then
		echo "--- server log ($log) ---"
		tail -n 30 "$log"
	fi
	rm -rf "$tmp"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# requires CMD...: skip the test unless CMD runs
requires()
{
	"$@" >/dev/null 2>&1 || skip_all "requires: $*"
}

# start_server ARGS...: fairq-nbd on $sock over $disk; sets $pid
start_server()
{
	rm -f "$sock"
	"$server" -u "$sock" "$@" >>"$log" 2>&1 &
	pid=$!
	server_pids="$server_pids $pid"
	for _ in $(seq 100); do
		[ -S "$sock" ] && return 0
		kill -0 "$pid" 2>/dev/null || fatal "server exited at startup: $(tail -n 3 "$log")"
		sleep 0.05
	done
	fatal "server did not create $sock"
}

# stop_server: SIGTERM, wait, the exit status must be 0
stop_server()
{
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	local p rest=""
	for p in $server_pids; do
		[ "$p" = "$pid" ] || rest="$rest $p"
	done
	server_pids=$rest
	[ "$rc" -eq 0 ] || fatal "server exit status=$rc after SIGTERM (want 0)"
}

# qio CMD...: one qemu-io session on $uri, each argument one -c command
qio()
{
	local a=() c
	for c in "$@"; do
		a+=(-c "$c")
	done
	qemu-io -f raw "${a[@]}" "$uri"
}

# qio_ok CMD...: like qio, but fail on "Pattern verification failed" etc.
qio_ok()
{
	out=$(qio "$@" 2>&1) || fatal "qemu-io $* exited $?: $out"
	case $out in
	*failed*|*error*|*Error*|*Permission*)
		fatal "qemu-io $*: $out" ;;
	esac
}

# now_ms: monotonic-enough wall clock in ms
now_ms()
{
	date +%s%3N
}

# bench_secs ARGS...: run qemu-img bench on $uri, print its run time [s]
bench_secs()
{
	local out
	out=$(qemu-img bench -f raw "$@" "$uri" 2>&1) || fatal "qemu-img bench $*: $out"
	awk '/Run completed in/ { print $4 }' <<<"$out"
}

# bench_best N ARGS...: the shortest run time [s] of N qemu-img bench runs.
# A busy shared host only ever makes a run slower than the model (late
# client refills, a descheduled engine), never faster, so the fastest of
# a few runs is the one closest to the model: the device-model tests
# assert on it, with bounds no wider than +-25 %.
bench_best()
{
	local n=$1 i s best=""
	shift
	for ((i = 0; i < n; i++)); do
		s=$(bench_secs "$@")
		best=$(awk -v a="$s" -v b="$best" 'BEGIN { print (b == "" || a < b) ? a : b }')
	done
	echo "$best"
}

# within VALUE LOW HIGH: LOW <= VALUE <= HIGH (decimals)
within()
{
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'
}

# capped VALUE TARGET: a rate limiter's measured VALUE is at most 15%
# above its setting TARGET (it must never run faster) and at least 75 %
# of it (the limit is in the right place, within 25 %; the callers
# measure with bench_best, so host noise only lowers VALUE a little).
capped()
{
	within "$1" "$(awk -v t="$2" 'BEGIN { print t * 0.75 }')" \
		"$(awk -v t="$2" 'BEGIN { print t * 1.15 }')"
}

# nbdcheck CMD ARGS...: the libnbd data checks (tests/nbdcheck.py); needs
# Debian's python3-libnbd, which only the system python has
nbdcheck()
{
	/usr/bin/python3 "$here/nbdcheck.py" "$@"
}

requires_libnbd()
{
	requires /usr/bin/python3 -c "import nbd"
}

# nbdsh runs "python3 -mnbd": make that the system python (python3-libnbd)
nbdsh()
{
	PATH=/usr/bin:$PATH command nbdsh "$@"
}
