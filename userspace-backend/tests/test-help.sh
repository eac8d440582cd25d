#!/bin/bash
# test-help.sh - --help, usage errors and their exit codes; a non-loopback
# --bind is refused without --allow-remote (nothing is ever bound there).
source "$(dirname "$0")/functions.sh"

out=$("$server" --help) || fatal "--help exit status $?"
for w in --unix --port --bind --size --read-only --cache --bw --iops \
	 --latency-us --depth --fair "Exit status"; do
	grep -q -- "$w" <<<"$out" || fatal "--help does not mention $w"
done

expect_usage()
{
	local rc=0
	"$server" "$@" >"$tmp/out" 2>&1 || rc=$?
	[ "$rc" -eq 2 ] || fatal "fairq-nbd $* exit status=$rc (want 2): $(cat "$tmp/out")"
}
expect_usage                                     # no FILE
expect_usage "$disk"                             # nothing to listen on
expect_usage -u "$sock" --bw 0 "$disk"
expect_usage -u "$sock" --iops abc "$disk"
expect_usage -u "$sock" --depth 0 "$disk"
expect_usage -u "$sock" --size 12Q "$disk"
expect_usage -u "$sock" --no-such-option "$disk"
expect_usage -u "$sock" --cache=writeback "$disk"
grep -q "page or none" "$tmp/out" || fatal "--cache refusal does not name the modes"
expect_usage -p 10809 -b 10.1.2.3 "$disk"        # needs --allow-remote
grep -q "allow-remote" "$tmp/out" || fatal "non-loopback refusal does not name --allow-remote"
[ ! -e "$disk" ] || fatal "a usage error created $disk"

rc=0
"$server" -u "$sock" "$tmp/missing" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fatal "missing FILE exit status=$rc (want 1)"
grep -q "missing" "$tmp/out" || fatal "open error does not name the file"
echo "usage errors exit 2, runtime errors exit 1"
