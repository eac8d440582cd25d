#!/bin/bash
# tests/host/known-splats.sh - vm/known-splats.awk lets through only the
# splats it names (host suite "splats").
#
# The fixture is the console of a guest that hit null_blk's throttle
# timer race with no fairq module loaded (vm/known-splats.awk says how).
# With the host's awk and with busybox awk (the guest's):
# 1. that splat is replaced by one "known defect" line, so vm/kpattern
#    finds nothing in the filtered log, and the lines around it stay;
# 2. the same WARNING with another first frame (fairq's timer), a
#    different WARNING with nullb_bwtimer_fn first, and the known splat
#    cut off before its end trace are all still found;
# 3. a fairq WARNING after a known splat is still found.
# Ends with "N passed, N failed, N skipped" (tests/lib.sh).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib.sh
. "$top/tests/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fix=$top/tests/host/fixtures/nullb-bwtimer-warn.log
read -r KPATTERN <"$top/vm/kpattern"

# hits AWK FILE: the kpattern lines left after the filter
hits() {
	$1 -f "$top/vm/known-splats.awk" "$2" | grep -cE -- "$KPATTERN"
}

# expect AWK NAME FILE N: the filtered FILE has N kpattern lines
expect() {
	local n
	n=$(hits "$1" "$3")
	if [ "$n" = "$4" ]; then
		ok "$1: $2: $n kernel-log hit(s)"
	else
		fail "$1: $2: $n kernel-log hit(s), expected $4"
	fi
}

raw=$(grep -cE -- "$KPATTERN" "$fix")
[ "$raw" -gt 0 ] || fail "fixture: no kpattern line in $fix"

{ echo "[   70.000000] before"; cat "$fix"; echo "[   75.000000] after"; } >"$tmp/known.log"
sed 's/nullb_bwtimer_fn+0x5d/fairq_timer_fn+0x5d/' "$fix" >"$tmp/other-frame.log"
sed 's/hrtimer_forward+0x7b/hrtimer_start_range_ns+0x7b/; s/hrtimer\.c:1056/hrtimer.c:1300/' \
	"$fix" >"$tmp/other-warning.log"
grep -v 'end trace' "$fix" >"$tmp/cut-off.log"
{ cat "$fix"; sed 's/nullb_bwtimer_fn+0x5d/fairq_timer_fn+0x5d/' "$fix"; } >"$tmp/then-fairq.log"

awks="awk"
if command -v busybox >/dev/null; then
	awks="$awks busybox-awk"
	printf '#!/bin/sh\nexec busybox awk "$@"\n' >"$tmp/busybox-awk"
	chmod +x "$tmp/busybox-awk"
	PATH=$tmp:$PATH
else
	skip "busybox awk: no busybox here (the guest's awk)"
fi

for a in $awks; do
	expect "$a" "known splat" "$tmp/known.log" 0
	out=$($a -f "$top/vm/known-splats.awk" "$tmp/known.log")
	if [ "$(grep -c 'known defect outside fairq' <<<"$out")" = 1 ] &&
		grep -q before <<<"$out" && grep -q after <<<"$out"; then
		ok "$a: known splat: one line says so, the lines around it kept"
	else
		fail "$a: known splat: expected one 'known defect' line and the lines around it"
	fi
	expect "$a" "same WARNING, fairq's frame first" "$tmp/other-frame.log" "$raw"
	expect "$a" "other WARNING, nullb_bwtimer_fn first" "$tmp/other-warning.log" "$raw"
	expect "$a" "known splat without its end" "$tmp/cut-off.log" "$raw"
	expect "$a" "fairq's WARNING after a known one" "$tmp/then-fairq.log" "$raw"
done
summary
